//! Number formatting for the page: the names the views use for [`bufscope::units`].

pub use bufscope::units::{
    count, exact_bytes as bytes, group_digits as grouped, human_bytes as human,
};
