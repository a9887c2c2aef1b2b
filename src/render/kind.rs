//! The palette that paints each [`ValueKind`] (worked out by [`crate::analysis::value_kind`]),
//! and a kind's index in the compact arrays of the index, levels and legends.

use crate::analysis::ValueKind;
use plotters::style::RGBColor;

/// The fill colour of a value of this kind.
pub fn kind_color(kind: ValueKind) -> RGBColor {
    match kind {
        ValueKind::Parameter => RGBColor(0x5b, 0x8f, 0xd0),
        ValueKind::Output => RGBColor(0xf3, 0x9c, 0x45),
        ValueKind::Constant => RGBColor(0xb5, 0x8b, 0xc6),
        ValueKind::ThreadLocal => RGBColor(0xa9, 0x84, 0x67),
        ValueKind::Scratch => RGBColor(0x8a, 0x93, 0x9c),
        ValueKind::Temporary => RGBColor(0x6d, 0xbe, 0x8c),
    }
}

/// The border of a block: its colour, darker.
pub(super) fn border_color(c: RGBColor) -> RGBColor {
    let d = |v: u8| (f64::from(v) * 0.62).round() as u8;
    RGBColor(d(c.0), d(c.1), d(c.2))
}

/// A kind's position in [`ValueKind::ALL`] (how legends, coverage rasters and levels of
/// detail store it), and back.
pub(super) fn kind_index(kind: ValueKind) -> usize {
    ValueKind::ALL.iter().position(|&k| k == kind).unwrap_or(0)
}

pub(super) fn kind_at(index: usize) -> ValueKind {
    ValueKind::ALL[index.min(ValueKind::ALL.len() - 1)]
}
