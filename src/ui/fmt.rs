//! Number formatting for the page: the library's (same figures as the CLI), plus the
//! "exact (human)" form the summary shows.

pub use bufscope::summary::{group_digits as grouped, human_bytes as human};

/// Exact bytes with the human size after it: `"172,580 B (168.5 KiB)"`.
pub fn bytes(n: u64) -> String {
    if n < 1024 {
        format!("{n} B")
    } else {
        format!("{} B ({})", grouped(n), human(n))
    }
}
