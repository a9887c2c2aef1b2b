//! Command-line front end (being written).
pub fn main() -> i32 { 0 }
