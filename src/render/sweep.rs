//! A sweep drawn ([`draw_sweep`], [`sweep_svg`]): one memory space of
//! [`crate::answers::sweep`]'s answer as a chart of the peak against the varied value. The
//! measured points joined by a line (a compile that failed as a cross, one pinned near the
//! capacity as a ring), the fitted form dashed over the whole axis, under them the bytes of
//! each category at the peak stacked as areas, the capacity as a dashed line and the
//! predicted crossing marked: the largest value that fits and the first that does not, in
//! the title in words and on the axis; each value predicted at, a hollow diamond on the fit. Every number is the sweep's; this file only places
//! them. Backend-agnostic: `bufscope`'s tests write the SVG, the page draws it on a canvas
//! and finds a clicked point with [`point_at`] (the same layout as [`point_positions`]).

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::diff::ChartLayout;
use super::geometry::{Mapping, PxRect, Viewport};
use super::{DrawResult, Painter, Style};
use crate::answers::categories::Category;
use crate::answers::sweep::{SpaceSweep, Sweep};
use crate::units::human_bytes;

/// What the chart says besides the sweep's numbers.
#[derive(Clone, Copy, Debug, Default)]
pub struct SweepText<'a> {
    /// The varied dimension as the sweep names it (`parameter tokens, dim 0`).
    pub what: &'a str,
    /// The capacity's label (`TPU v5e · 15.75 GiB`), when the sweep holds one.
    pub capacity: Option<&'a str>,
}

/// The chart's height for a width, in pixels: two fifths of it within 280 to 440.
pub fn sweep_height(width: u32) -> u32 {
    (width * 2 / 5).clamp(280, 440)
}

/// Where the parts go in an area of `size`: [`ChartLayout`]'s, with a third title row
/// (the verdict).
pub fn sweep_layout(size: (u32, u32), font_size: f64) -> ChartLayout {
    let mut l = ChartLayout::new(size, font_size);
    let more = (font_size.clamp(6.0, 48.0) * 1.5).round() as i32;
    l.title.y1 += more;
    l.plot.y0 = (l.plot.y0 + more).min(l.plot.y1);
    l
}

/// The x axis's end: a tenth past the largest value the chart shows (points, crossing,
/// predictions).
fn x_end(s: &SpaceSweep) -> f64 {
    let values = s.points.iter().map(|p| p.value).chain(s.at.iter().map(|p| p.value));
    let most = values.chain(s.largest_fitting).chain(s.first_not_fitting).max().unwrap_or(1);
    most.max(1) as f64 * 1.1
}

/// The y axis's top: a seventh above the highest point, capacity or stack.
fn y_top(s: &SpaceSweep) -> f64 {
    let stacked = (0..s.points.len())
        .map(|i| s.categories.iter().map(|c| c.points.get(i).map_or(0, |p| p.peak_live_bytes)).sum::<u64>());
    let peaks = s.points.iter().map(|p| p.peak_live_bytes);
    let most = peaks.chain(stacked).chain(s.capacity_bytes).max().unwrap_or(0).max(1);
    most as f64 * 8.0 / 7.0
}

/// The chart's mapping: x = the varied value from 0, y = bytes from 0.
pub fn sweep_mapping(s: &SpaceSweep, layout: &ChartLayout) -> Mapping {
    let view = Viewport { x0: 0.0, x1: x_end(s), y0: 0.0, y1: y_top(s) };
    Mapping::new(view, layout.plot)
}

/// Each measured point's pixel position in a chart of `size` (the order of `s.points`).
pub fn point_positions(s: &SpaceSweep, size: (u32, u32), font_size: f64) -> Vec<(i32, i32)> {
    let map = sweep_mapping(s, &sweep_layout(size, font_size));
    (s.points.iter())
        .map(|p| (map.x_px(p.value as f64).round() as i32, map.y_px(p.peak_live_bytes as f64).round() as i32))
        .collect()
}

/// The point under pixel `at` (within a font size of it, the nearest), for a click.
pub fn point_at(s: &SpaceSweep, size: (u32, u32), font_size: f64, at: (i32, i32)) -> Option<usize> {
    let reach = font_size.max(8.0);
    (point_positions(s, size, font_size).into_iter().enumerate())
        .map(|(i, (x, y))| (i, f64::from(x - at.0).hypot(f64::from(y - at.1))))
        .filter(|&(_, d)| d <= reach)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// A category's colour in the stacked areas.
pub fn category_color(c: Category) -> RGBColor {
    match c {
        Category::ModelParameters => RGBColor(0x4e, 0x79, 0xa7),
        Category::OptimizerState => RGBColor(0x76, 0xb7, 0xb2),
        Category::Inputs => RGBColor(0x9c, 0x75, 0x5f),
        Category::Parameters => RGBColor(0x8c, 0xa2, 0xc0),
        Category::Outputs => RGBColor(0xed, 0xc9, 0x48),
        Category::Constants => RGBColor(0xba, 0xb0, 0xac),
        Category::Gradients => RGBColor(0xaf, 0x7a, 0xa1),
        Category::Activations => RGBColor(0xf2, 0x8e, 0x2b),
        Category::Gathered => RGBColor(0xe1, 0x57, 0x59),
        Category::Temporaries => RGBColor(0x59, 0xa1, 0x4f),
        Category::ThreadLocal => RGBColor(0xff, 0x9d, 0xa7),
    }
}

/// The verdict in a few words, as the title's second row says it.
pub fn verdict_line(s: &SpaceSweep) -> String {
    let pinned = if s.pinned { " (pinned: the compiler rematerialises near the capacity)" } else { "" };
    match (s.capacity_bytes, s.largest_fitting, s.first_not_fitting) {
        (None, ..) => "no capacity on this memory space: choose one to know what fits".to_string(),
        (Some(_), Some(l), Some(f)) => format!("largest that fits: {l} · {f} does not{pinned}"),
        (Some(_), Some(l), None) => format!("largest that fits: at least {l}{pinned}"),
        (Some(_), None, Some(f)) => format!("does not fit even at {f}{pinned}"),
        (Some(_), None, None) => "no verdict: nothing was fitted".to_string(),
    }
}

/// A sweep's memory spaces as one SVG `width` pixels wide, one chart ([`sweep_height`]
/// high) per space, stacked. Deterministic.
pub fn sweep_svg(sweep: &Sweep, capacity: Option<&str>, style: &Style, width: u32) -> String {
    let width = width.clamp(320, 8192);
    let each = sweep_height(width);
    super::svg::stacked_charts((width, each, sweep.spaces.len()), &style.background, |area, i| {
        let s = &sweep.spaces[i];
        let text = SweepText { what: &sweep.varied.what, capacity: s.capacity_bytes.and(capacity) };
        // Writing into a String cannot fail; a failure would only truncate the picture.
        let _ = draw_sweep(area, s, &text, style);
    })
}

/// Draws one memory space's sweep into `area` ([`sweep_layout`] of its size).
pub fn draw_sweep<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &SpaceSweep,
    text: &SweepText,
    style: &Style,
) -> DrawResult<DB> {
    let layout = sweep_layout(area.dim_in_pixel(), style.font_size);
    let map = sweep_mapping(s, &layout);
    let p = Painter { area, style };
    area.fill(&style.background)?;
    p.sweep_title(&layout, s, text)?;
    p.byte_grid(&layout, &map)?;
    p.stacked_categories(&map, s)?;
    p.fitted(&map, s)?;
    p.predicted(&map, s)?;
    p.measured(&map, s)?;
    if let (Some(bytes), Some(what)) = (s.capacity_bytes, text.capacity) {
        p.dashed_capacity(&layout, &map, bytes, what)?;
    }
    p.crossing(&layout, &map, s)?;
    p.value_axis(&layout, &map, s, text.what)?;
    p.frame(layout.plot)
}

impl<DB: DrawingBackend> Painter<'_, DB> {
    /// The space and what varies; the verdict; the categories' legend.
    fn sweep_title(&self, l: &ChartLayout, s: &SpaceSweep, text: &SweepText) -> DrawResult<DB> {
        let st = self.style;
        let row = (l.title.y1 - l.title.y0) / 6;
        let title = format!("memory space {}: peak against {}", s.label, text.what);
        self.bold(&title, (8, row), 1.0, st.text, (HPos::Left, VPos::Center))?;
        let color = match (s.capacity_bytes, s.largest_fitting) {
            (Some(_), Some(_)) => st.capacity_line,
            (Some(_), None) => st.over_capacity,
            _ => st.muted,
        };
        self.bold(&verdict_line(s), (8, row * 3), 1.15, color, (HPos::Left, VPos::Center))?;
        let mut x = 8;
        for c in &s.categories {
            let y = row * 5;
            self.fill(PxRect { x0: x, y0: y - 5, x1: x + 12, y1: y + 5 }, category_color(c.category).mix(0.55))?;
            self.text(c.label, (x + 16, y), 0.85, st.text, (HPos::Left, VPos::Center))?;
            x += 16 + self.text_width(c.label, 0.85) + 16;
        }
        Ok(())
    }

    /// The categories' bytes at the peak, stacked (largest first at the bottom), each
    /// joined from point to point.
    fn stacked_categories(&self, map: &Mapping, s: &SpaceSweep) -> DrawResult<DB> {
        let n = s.points.len();
        let mut below = vec![0u64; n];
        for c in &s.categories {
            let above: Vec<u64> = (0..n)
                .map(|i| below[i] + c.points.get(i).map_or(0, |p| p.peak_live_bytes))
                .collect();
            let at = |i: usize, bytes: u64| {
                let v = s.points[i].value as f64;
                (map.x_px(v).round() as i32, map.y_px(bytes as f64).round() as i32)
            };
            let mut outline: Vec<(i32, i32)> = (0..n).map(|i| at(i, above[i])).collect();
            outline.extend((0..n).rev().map(|i| at(i, below[i])));
            let color = category_color(c.category);
            self.area.draw(&Polygon::new(outline, color.mix(0.35)))?;
            below = above;
        }
        Ok(())
    }

    /// The fitted form, dashed, from the first point to the axis's end.
    fn fitted(&self, map: &Mapping, s: &SpaceSweep) -> DrawResult<DB> {
        let (Some(model), Some(first)) = (&s.model, s.points.first()) else { return Ok(()) };
        let (x0, x1) = (first.value as f64, map.view.x1);
        let top = map.view.y1;
        let points: Vec<(i32, i32)> = (0..=160)
            .map(|k| x0 + (x1 - x0) * f64::from(k) / 160.0)
            .map(|v| (v, (model.at(v) as f64).min(top)))
            .map(|(v, y)| (map.x_px(v).round() as i32, map.y_px(y).round() as i32))
            .collect();
        let style = self.style.curve.stroke_width(2);
        self.area.draw(&DashedPathElement::new(points, 7, 5, style))
    }

    /// Each prediction asked for (`--at`, "Predict at"): a hollow diamond on the fit at its
    /// value, labelled `V: BYTES predicted` (above the plot's top when the fit is).
    fn predicted(&self, map: &Mapping, s: &SpaceSweep) -> DrawResult<DB> {
        let st = self.style;
        for p in &s.at {
            let x = map.x_px(p.value as f64).round() as i32;
            let y = map.y_px((p.peak_live_bytes as f64).min(map.view.y1)).round() as i32;
            let diamond = vec![(x, y - 7), (x + 7, y), (x, y + 7), (x - 7, y), (x, y - 7)];
            self.area.draw(&PathElement::new(diamond, st.curve.stroke_width(2)))?;
            let label = format!("{}: {} predicted", p.value, human_bytes(p.peak_live_bytes));
            self.text(&label, (x - 9, y - 9), 0.85, st.text, (HPos::Right, VPos::Bottom))?;
        }
        Ok(())
    }

    /// The measured points joined by a line: a dot each, a cross for a compile that failed,
    /// a ring for one pinned near the capacity, and the peak beside the last one.
    fn measured(&self, map: &Mapping, s: &SpaceSweep) -> DrawResult<DB> {
        let st = self.style;
        let at: Vec<(i32, i32)> = (s.points.iter())
            .map(|p| (map.x_px(p.value as f64).round() as i32, map.y_px(p.peak_live_bytes as f64).round() as i32))
            .collect();
        self.area.draw(&PathElement::new(at.clone(), st.curve.stroke_width(2)))?;
        for (p, &(x, y)) in s.points.iter().zip(&at) {
            if p.failed {
                let red = st.over_capacity.stroke_width(3);
                self.area.draw(&PathElement::new(vec![(x - 6, y - 6), (x + 6, y + 6)], red))?;
                self.area.draw(&PathElement::new(vec![(x - 6, y + 6), (x + 6, y - 6)], red))?;
            } else if p.pinned {
                self.area.draw(&Circle::new((x, y), 8, st.over_capacity.stroke_width(3)))?;
                self.area.draw(&Circle::new((x, y), 4, st.curve.filled()))?;
            } else {
                self.area.draw(&Circle::new((x, y), 5, st.curve.filled()))?;
            }
        }
        if let (Some(p), Some(&(x, y))) = (s.points.last(), at.last()) {
            let label = human_bytes(p.peak_live_bytes);
            self.text(&label, (x + 9, y - 9), 0.85, st.text, (HPos::Left, VPos::Bottom))?;
        }
        Ok(())
    }

    /// The predicted crossing: a line up from the axis at the largest value that fits and
    /// one at the first that does not, each labelled at the foot of the plot (the
    /// capacity's label is at its top).
    fn crossing(&self, l: &ChartLayout, map: &Mapping, s: &SpaceSweep) -> DrawResult<DB> {
        let st = self.style;
        let marks = [
            (s.largest_fitting, st.capacity_line, HPos::Right, -4, "fits"),
            (s.first_not_fitting, st.over_capacity, HPos::Left, 4, "does not fit"),
        ];
        for (value, color, anchor, dx, words) in marks {
            let Some(v) = value else { continue };
            let x = map.x_px(v as f64).round() as i32;
            let mut y = l.plot.y0;
            while y < l.plot.y1 {
                self.fill(PxRect { x0: x - 1, y0: y, x1: x + 1, y1: (y + 6).min(l.plot.y1) }, color)?;
                y += 10;
            }
            self.bold(&format!("{v} {words}"), (x + dx, l.plot.y1 - 6), 0.9, color, (anchor, VPos::Bottom))?;
        }
        Ok(())
    }

    /// The measured values under the plot (those too close to the one before left out) and
    /// the caption naming the varied dimension.
    fn value_axis(&self, l: &ChartLayout, map: &Mapping, s: &SpaceSweep, what: &str) -> DrawResult<DB> {
        let st = self.style;
        let row = (l.axis.y1 - l.axis.y0) / 3;
        let mut last_end = i32::MIN;
        for p in &s.points {
            let x = map.x_px(p.value as f64).round() as i32;
            let label = p.value.to_string();
            let half = self.text_width(&label, 0.85) / 2 + 4;
            self.fill(PxRect { x0: x, y0: l.plot.y1, x1: x + 1, y1: l.plot.y1 + 4 }, st.frame)?;
            if x - half < last_end {
                continue;
            }
            self.text(&label, (x, l.axis.y0 + row), 0.85, st.muted, (HPos::Center, VPos::Center))?;
            last_end = x + half;
        }
        let caption = format!("{what} (each dot one compilation; dashed: the fit)");
        let mid = (l.plot.x0 + l.plot.x1) / 2;
        self.text(&caption, (mid, l.axis.y0 + row * 2 + 4), 0.85, st.muted, (HPos::Center, VPos::Center))
    }
}
