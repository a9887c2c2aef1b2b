//! Summary (being written).
