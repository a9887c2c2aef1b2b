//! Browser app (being written).
pub fn start() {}
