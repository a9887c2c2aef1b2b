//! The class of a memory space's colour swatch. (Numbers are written by
//! [`bufscope::units`], called by their own names everywhere.)

/// The CSS classes of memory space `color`'s swatch (`style/main.css` colours eight,
/// `.swatch.c0` to `.c7`, in turn).
pub fn class(color: u32) -> String {
    format!("swatch c{}", color % 8)
}
