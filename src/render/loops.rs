//! Loop bands on the time axis: each `while`'s condition and body
//! ([`crate::analysis::loops`]) as a band in the strip between the curve and the diagram,
//! nested loops in rows below their loop, labelled `while.43 body ×8 · steps 165–205` where
//! the label fits, and thin lines at the ends of each outer loop's body across the curve
//! and the diagram. Also where a band is ([`band_rects`]), which band a pixel is on
//! ([`band_at`]) and the view a click on one zooms to ([`band_view`]): plain functions the
//! canvas calls.
//!
//! **Invariant:** a band covers exactly the steps of its part (`[first, last + 1)` on the
//! step axis, the mapping of the diagram), and [`band_at`] finds a band at every pixel
//! [`band_rects`] gives it.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::geometry::{Layout, Mapping, PxRect, Viewport};
use super::{DrawResult, Painter};
use crate::analysis::loops::Loops;
use crate::text::clip_end;

/// Which part of a loop a band is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Condition,
    Body,
}

/// One band: a part of one loop on the step axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Band {
    /// Index into [`Loops::loops`].
    pub loop_index: u32,
    pub part: Part,
    /// Inclusive.
    pub steps: [u32; 2],
    /// The row: the loop's nesting depth.
    pub depth: u32,
    pub label: String,
}

/// The bands of a module's loops: per loop its condition, then its body.
pub fn bands(loops: &Loops) -> Vec<Band> {
    let mut out = Vec::new();
    for (i, l) in loops.loops.iter().enumerate() {
        let mut body_label = l.body_label();
        if !l.name.is_empty() {
            body_label = format!("{body_label} · {}", l.name);
        }
        out.push(Band {
            loop_index: i as u32,
            part: Part::Condition,
            steps: l.condition_steps,
            depth: l.depth,
            label: l.condition_label(),
        });
        out.push(Band {
            loop_index: i as u32,
            part: Part::Body,
            steps: l.body_steps,
            depth: l.depth,
            label: body_label,
        });
    }
    out
}

/// The strip the bands are drawn in: between the curve and the diagram, as wide as the
/// diagram (empty when there is no room).
pub fn band_strip(layout: &Layout) -> PxRect {
    let d = layout.diagram;
    PxRect {
        x0: d.x0,
        x1: d.x1,
        y0: layout.curve.y1 + 1,
        y1: (d.y0 - 1).max(layout.curve.y1 + 1),
    }
}

/// Each band's rectangle in view (band index, rectangle), for a diagram of `layout` showing
/// `view`: rows by depth share the strip's height.
pub fn band_rects(layout: &Layout, view: &Viewport, bands: &[Band]) -> Vec<(usize, PxRect)> {
    let strip = band_strip(layout);
    let rows = bands.iter().map(|b| b.depth + 1).max().unwrap_or(1) as i32;
    let row_h = strip.height() / rows;
    if row_h < 1 || strip.is_empty() {
        return Vec::new();
    }
    let map = Mapping::new(*view, PxRect { y0: strip.y0, y1: strip.y1, ..layout.diagram });
    bands
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            let r = map.data_rect_px(f64::from(b.steps[0]), f64::from(b.steps[1]) + 1.0, view.y0, view.y1)?;
            let y0 = strip.y0 + row_h * b.depth.min(rows as u32 - 1) as i32;
            Some((i, PxRect { y0, y1: y0 + row_h, ..r }))
        })
        .collect()
}

/// The band under pixel `at` (the deepest one there), for a diagram of `layout` showing
/// `view`.
pub fn band_at(layout: &Layout, view: &Viewport, bands: &[Band], at: (f64, f64)) -> Option<usize> {
    let (x, y) = (at.0.floor() as i32, at.1.floor() as i32);
    band_rects(layout, view, bands)
        .into_iter()
        .filter(|(_, r)| r.contains(x, y))
        .max_by_key(|&(i, _)| (bands[i].depth, std::cmp::Reverse(i)))
        .map(|(i, _)| i)
}

/// The view a click on `band` zooms to: its steps with a margin of a twentieth of their
/// span each side (at least one step), the bytes of `view` kept.
pub fn band_view(view: &Viewport, band: &Band) -> Viewport {
    let (a, b) = (f64::from(band.steps[0]), f64::from(band.steps[1]) + 1.0);
    let margin = ((b - a) / 20.0).max(1.0);
    Viewport { x0: a - margin, x1: b + margin, ..*view }
}

/// Body and condition colours.
const BODY: RGBColor = RGBColor(0x2a, 0x9d, 0x8f);
const CONDITION: RGBColor = RGBColor(0x8a, 0x6d, 0xb8);

impl<DB: DrawingBackend> Painter<'_, DB> {
    /// The loop bands of [`band_rects`], labelled where the label fits, and thin lines at
    /// the ends of each outer loop's body across the curve and the diagram.
    pub(super) fn loop_bands(&self, layout: &Layout, map: &Mapping, bands: &[Band]) -> DrawResult<DB> {
        if bands.is_empty() {
            return Ok(());
        }
        for b in bands.iter().filter(|b| b.depth == 0 && b.part == Part::Body) {
            for x in [f64::from(b.steps[0]), f64::from(b.steps[1]) + 1.0] {
                if x <= map.view.x0 || x >= map.view.x1 {
                    continue;
                }
                let px = map.x_px(x).round() as i32;
                for r in [layout.curve, layout.diagram] {
                    self.fill(PxRect { x0: px, x1: px + 1, ..r }, BODY.mix(0.45))?;
                }
            }
        }
        let rects = band_rects(layout, &map.view, bands);
        let Some(row_h) = rects.first().map(|(_, r)| r.height()) else {
            return Ok(());
        };
        let scale = (f64::from(row_h - 2) / self.style.font_size).min(0.8);
        for (i, r) in rects {
            let b = &bands[i];
            let color = if b.part == Part::Body { BODY } else { CONDITION };
            let inner = PxRect { y0: r.y0 + 1, y1: r.y1 - 1, ..r };
            self.fill(inner, color.mix(0.28))?;
            self.fill(PxRect { x1: inner.x0 + 1, ..inner }, color)?;
            self.fill(PxRect { x0: inner.x1 - 1, ..inner }, color)?;
            if scale < 0.55 || inner.width() < 24 {
                continue;
            }
            let room = inner.width() - 6;
            let per_char = (self.style.font_size * scale * 0.6).max(1.0);
            let text = clip_end(&b.label, (f64::from(room) / per_char) as usize);
            if text.chars().count() < 4 || self.text_width(&text, scale) > room {
                continue;
            }
            self.text(&text, (inner.x0 + 3, (inner.y0 + inner.y1) / 2), scale, self.style.text, (HPos::Left, VPos::Center))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::loops::{Loop, TripSource};

    fn lp(name: &str, cond: [u32; 2], body: [u32; 2], depth: u32, trips: Option<u64>) -> Loop {
        Loop {
            while_name: name.into(),
            step: body[1] + 1,
            in_computation: "main".into(),
            condition: "c".into(),
            body: "b".into(),
            condition_steps: cond,
            body_steps: body,
            trip_count: trips,
            trip_source: TripSource::Printed,
            name: "forward scan".into(),
            op_name: None,
            depth,
            parent: None,
            at: [0; 4],
        }
    }

    fn loops() -> Loops {
        Loops {
            loops: vec![lp("while.43", [161, 164], [165, 205], 0, Some(8)), lp("while.9", [170, 171], [172, 180], 1, None)],
            ..Loops::default()
        }
    }

    fn layout() -> Layout {
        Layout::new((1280, 400), 14.0)
    }

    #[test]
    fn bands_labelled_by_part() {
        let b = bands(&loops());
        assert_eq!(b.len(), 4);
        assert_eq!(b[1].label, "while.43 body ×8 · steps 165–205 · forward scan");
        assert_eq!(b[0].label, "while.43 cond · steps 161–164");
        assert_eq!((b[3].steps, b[3].depth), ([172, 180], 1));
    }

    #[test]
    fn rects_cover_their_steps_and_rows_by_depth() {
        let l = layout();
        let view = Viewport { x0: 0.0, x1: 932.0, y0: 0.0, y1: 1e9 };
        let b = bands(&loops());
        let rects = band_rects(&l, &view, &b);
        assert_eq!(rects.len(), 4);
        let map = Mapping::new(view, l.diagram);
        let body = rects[1].1;
        assert_eq!(body.x0, map.x_px(165.0).round() as i32);
        assert_eq!(body.x1, map.x_px(206.0).round() as i32);
        let strip = band_strip(&l);
        assert!(strip.height() >= 4, "{strip:?}");
        assert_eq!(body.y0, strip.y0);
        assert_eq!(rects[3].1.y0, strip.y0 + strip.height() / 2);
        // Every pixel of a band finds it or a deeper band there.
        for (i, r) in &rects {
            for (x, y) in [(r.x0, r.y0), (r.x1 - 1, r.y1 - 1), ((r.x0 + r.x1) / 2, r.y0)] {
                let got = band_at(&l, &view, &b, (f64::from(x), f64::from(y))).unwrap();
                assert!(got == *i || b[got].depth > b[*i].depth, "{i} at {x},{y}: {got}");
            }
        }
        // Outside the strip, and past the last band, nothing.
        assert_eq!(band_at(&l, &view, &b, (f64::from(body.x0 + 2), f64::from(l.diagram.y0 + 5))), None);
        assert_eq!(band_at(&l, &view, &b, (f64::from(map.x_px(600.0)), f64::from(body.y0))), None);
        // Zoomed past a band: not in view.
        let later = Viewport { x0: 300.0, x1: 400.0, ..view };
        assert!(band_rects(&l, &later, &b).is_empty());
    }

    #[test]
    fn a_click_zooms_to_the_band_steps_keeping_bytes() {
        let view = Viewport { x0: 0.0, x1: 932.0, y0: 10.0, y1: 20.0 };
        let b = &bands(&loops())[1];
        let v = band_view(&view, b);
        // 165 .. 206 with a margin of 41 / 20 = 2.05 steps.
        assert!((v.x0 - 162.95).abs() < 1e-9 && (v.x1 - 208.05).abs() < 1e-9, "{v:?}");
        assert_eq!((v.y0, v.y1), (10.0, 20.0));
    }

    #[test]
    fn drawing_bands_writes_the_label() {
        let l = Loops { loops: vec![lp("while.43", [161, 164], [165, 205], 0, Some(8))], ..Loops::default() };
        let style = super::super::Style { loop_bands: std::sync::Arc::new(bands(&l)), ..Default::default() };
        let mut svg = String::new();
        {
            let root = super::super::svg::Svg::with_string(&mut svg, (1280, 400)).into_drawing_area();
            let p = Painter { area: &root, style: &style };
            let layout = Layout::new((1280, 400), style.font_size);
            let map = Mapping::new(Viewport { x0: 150.0, x1: 220.0, y0: 0.0, y1: 1.0 }, layout.diagram);
            p.loop_bands(&layout, &map, &style.loop_bands).unwrap();
        }
        assert!(svg.contains("while.43 body ×8"), "{svg}");
    }
}
