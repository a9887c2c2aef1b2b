//! Shapes: the logical size of a shape printed by XLA (being written).
