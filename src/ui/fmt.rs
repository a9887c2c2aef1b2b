//! How the page writes things: the names the views use for [`bufscope::units`]' number
//! formatting, and the class of a memory space's colour swatch.

pub use bufscope::units::{
    count, exact_bytes as bytes, group_digits as grouped, human_bytes as human,
};

/// The CSS classes of memory space `color`'s swatch (`style/main.css` colours eight,
/// `.swatch.c0` to `.c7`, in turn).
pub fn swatch(color: u32) -> String {
    format!("swatch c{}", color % 8)
}
