//! [`Painter`]: a drawing area and its [`Style`], with the few primitives every part of a
//! drawing is made of (filled pixel rectangles, frames, text in the style's font, text
//! width estimates).

use super::geometry::PxRect;
use super::text::xml_safe;
use super::{DrawResult, Style};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The drawing area and style, with the drawing helpers.
pub(super) struct Painter<'a, DB: DrawingBackend> {
    pub(super) area: &'a DrawingArea<DB, Shift>,
    pub(super) style: &'a Style,
}

impl<DB: DrawingBackend> Painter<'_, DB> {
    pub(super) fn fill(&self, r: PxRect, color: impl Color) -> DrawResult<DB> {
        if r.is_empty() {
            return Ok(());
        }
        self.area.draw(&Rectangle::new(r.corners(), color.filled()))
    }

    fn font(&self, scale: f64, bold: bool) -> FontDesc<'static> {
        let size = self.style.font_size * scale;
        if bold {
            (self.style.font, size, FontStyle::Bold).into_font()
        } else {
            (self.style.font, size).into_font()
        }
    }

    fn put(
        &self,
        s: &str,
        at: (i32, i32),
        font: FontDesc<'static>,
        color: RGBColor,
        anchor: (HPos, VPos),
    ) -> DrawResult<DB> {
        let style = font.color(&color).pos(Pos::new(anchor.0, anchor.1));
        self.area.draw(&Text::new(xml_safe(s), at, style))
    }

    /// Text of `scale` × the base size.
    pub(super) fn text(
        &self,
        s: &str,
        at: (i32, i32),
        scale: f64,
        color: RGBColor,
        anchor: (HPos, VPos),
    ) -> DrawResult<DB> {
        self.put(s, at, self.font(scale, false), color, anchor)
    }

    pub(super) fn bold(
        &self,
        s: &str,
        at: (i32, i32),
        scale: f64,
        color: RGBColor,
        anchor: (HPos, VPos),
    ) -> DrawResult<DB> {
        self.put(s, at, self.font(scale, true), color, anchor)
    }

    /// Estimated width of a text in pixels.
    pub(super) fn text_width(&self, s: &str, scale: f64) -> i32 {
        let style = TextStyle::from(self.font(scale, false));
        match self.area.estimate_text_size(s, &style) {
            Ok((w, _)) => i32::try_from(w).unwrap_or(i32::MAX),
            Err(_) => (s.chars().count() as f64 * self.style.font_size * scale * 0.6) as i32,
        }
    }

    /// A one-pixel outline just inside `r`.
    pub(super) fn frame(&self, r: PxRect) -> DrawResult<DB> {
        if r.is_empty() {
            return Ok(());
        }
        let c = self.style.frame;
        self.fill(PxRect { y1: r.y0 + 1, ..r }, c)?;
        self.fill(PxRect { y0: r.y1 - 1, ..r }, c)?;
        self.fill(PxRect { x1: r.x0 + 1, ..r }, c)?;
        self.fill(PxRect { x0: r.x1 - 1, ..r }, c)
    }

    /// `r` filled with `color` inside a border of `border`, one pixel wide.
    pub(super) fn bordered(&self, r: PxRect, color: RGBColor, border: RGBColor) -> DrawResult<DB> {
        self.fill(r, border)?;
        self.fill(
            PxRect {
                x0: r.x0 + 1,
                y0: r.y0 + 1,
                x1: r.x1 - 1,
                y1: r.y1 - 1,
            },
            color,
        )
    }
}
