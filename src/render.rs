//! Render (being written).
