//! The drawing colours of the page: [`bufscope::render`]'s own on a light page, darker
//! ones when the page follows a dark colour scheme (`prefers-color-scheme: dark`), matching
//! the page's style sheet.

use bufscope::render::Style;
use plotters::prelude::RGBColor;

/// The drawing colours: render's own on a light page, the page's on a dark one.
pub(crate) fn page_style() -> Style {
    let dark = web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches());
    if !dark {
        return Style::default();
    }
    Style {
        background: RGBColor(0x1f, 0x22, 0x26),
        text: RGBColor(0xe6, 0xe7, 0xe8),
        muted: RGBColor(0x9a, 0xa1, 0xa9),
        grid: RGBColor(0x2b, 0x2f, 0x34),
        frame: RGBColor(0x4a, 0x50, 0x58),
        band: RGBColor(0x26, 0x2a, 0x2f),
        boundary: RGBColor(0x3a, 0x40, 0x47),
        curve: RGBColor(0x7f, 0xa7, 0xd6),
        peak: RGBColor(0xff, 0x6b, 0x6b),
        highlight: RGBColor(0xff, 0x5c, 0xb0),
        mark: RGBColor(0xff, 0xc1, 0x2e),
        cursor: RGBColor(0xc9, 0xce, 0xd4),
        capacity_line: RGBColor(0xb9, 0x95, 0xff),
        over_capacity: RGBColor(0xff, 0x8a, 0x3d),
        ..Style::default()
    }
}
