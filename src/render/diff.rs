//! Two compilations of one memory space drawn together ([`draw_comparison`],
//! [`comparison_svg`]): both occupied-bytes curves on one chart whose x axis is **relative
//! program position** (`0` = start, `1` = end; the two schedules differ in length, so steps
//! do not correspond), each side's peak marked with its size, the delta in the title, and
//! the capacity as a line when one is given. Backend-agnostic: the page shows the SVG,
//! `bufscope diff --svg` writes it.
//!
//! Also the rule that keeps two block diagrams in step ([`view_window`],
//! [`view_for_window`]): a diagram's view of steps `x0 .. x1` of a schedule of `n` steps is
//! the window `x0/n .. x1/n` of relative position, and the other diagram shows the same
//! window of its own schedule (its offsets left as they are). Step `t` covers
//! `[t/n, (t+1)/n)`, as in [`crate::diff::curves`].

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::geometry::{Mapping, PxRect, Viewport};
use super::{DrawResult, Painter, Style};
use crate::diff::SpacePeaks;
use crate::model::{memory_space_label, Backend};
use crate::text::clip_middle;
use crate::units::{group_digits, human_bytes, signed_bytes};

/// The base side's colour (the new side's is [`NEW_COLOR`]); the page's tables use the
/// same two.
pub const BASE_COLOR: RGBColor = RGBColor(0x3e, 0x7c, 0xc8);
/// The new side's colour.
pub const NEW_COLOR: RGBColor = RGBColor(0xe0, 0x7a, 0x10);

/// Height of the chart for a width, in pixels: a third of it within 220 to 360.
pub fn comparison_height(width: u32) -> u32 {
    (width / 3).clamp(220, 360)
}

/// What a comparison chart shows besides the two curves.
#[derive(Clone, Debug, Default)]
pub struct ChartText<'a> {
    /// What each side is (a file or module name), for the legend.
    pub base_label: &'a str,
    pub new_label: &'a str,
    /// The capacity line: bytes and what it is (`16.0 GiB`, `TPU v5e`).
    pub capacity: Option<(u64, &'a str)>,
    /// The backend, so a space is named as the diagram names it (`0 default (HBM)`).
    pub backend: Option<Backend>,
}

/// Where the parts of a comparison chart go in an area of `size` pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChartLayout {
    /// Title and legend rows.
    pub title: PxRect,
    /// The curves: x = relative position `0..1`, y = bytes from 0.
    pub plot: PxRect,
    /// Position labels and the axis caption, under the plot.
    pub axis: PxRect,
}

impl ChartLayout {
    pub fn new(size: (u32, u32), font_size: f64) -> ChartLayout {
        let w = i32::try_from(size.0).unwrap_or(i32::MAX);
        let h = i32::try_from(size.1).unwrap_or(i32::MAX);
        let font = font_size.clamp(6.0, 48.0);
        let title_h = (font * 3.6).round() as i32;
        let axis_h = (font * 3.4).round() as i32;
        let left = (font * 6.5).round() as i32;
        let right = (font * 1.5).round() as i32;
        let top = title_h + (font * 0.5).round() as i32;
        let bottom = (h - axis_h).max(top);
        ChartLayout {
            title: PxRect {
                x0: 0,
                y0: 0,
                x1: w,
                y1: title_h,
            },
            plot: PxRect {
                x0: left.min(w),
                y0: top,
                x1: (w - right).max(left.min(w)),
                y1: bottom,
            },
            axis: PxRect {
                x0: 0,
                y0: bottom,
                x1: w,
                y1: h,
            },
        }
    }

    /// The plot's mapping for a y axis from 0 to `top` bytes.
    pub fn mapping(&self, top: f64) -> Mapping {
        let view = Viewport {
            x0: 0.0,
            x1: 1.0,
            y0: 0.0,
            y1: top.max(1.0),
        };
        Mapping::new(view, self.plot)
    }
}

/// The top of the y axis: a seventh above the highest peak or capacity.
pub fn chart_top(peaks: &SpacePeaks, capacity: Option<u64>) -> f64 {
    let most = peaks
        .base_peak_bytes
        .max(peaks.new_peak_bytes)
        .max(capacity.unwrap_or(0))
        .max(1);
    most as f64 * 8.0 / 7.0
}

/// Memory spaces' comparisons as one SVG `width` pixels wide, one chart
/// ([`comparison_height`] high) per space, stacked. Deterministic.
pub fn comparison_svg(
    spaces: &[&SpacePeaks],
    text: &ChartText,
    style: &Style,
    width: u32,
) -> String {
    let width = width.clamp(320, 8192);
    let each = comparison_height(width);
    super::svg::stacked_charts((width, each, spaces.len()), &style.background, |area, i| {
        // Writing into a String cannot fail; a failure would only truncate the picture.
        let _ = draw_comparison(area, spaces[i], text, style);
    })
}

/// Draws one memory space's comparison into `area` ([`ChartLayout::new`] of its size).
pub fn draw_comparison<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    peaks: &SpacePeaks,
    text: &ChartText,
    style: &Style,
) -> DrawResult<DB> {
    let layout = ChartLayout::new(area.dim_in_pixel(), style.font_size);
    let map = layout.mapping(chart_top(peaks, text.capacity.map(|c| c.0)));
    let p = Painter { area, style };
    area.fill(&style.background)?;
    p.title_rows(&layout, peaks, text)?;
    p.byte_grid(&layout, &map)?;
    p.position_axis(&layout, &map, peaks)?;
    if let Some((bytes, what)) = text.capacity {
        p.dashed_capacity(&layout, &map, bytes, what)?;
    }
    let sides = [
        (
            &peaks.base_curve,
            peaks.base_peak_position,
            peaks.base_peak_bytes,
            BASE_COLOR,
            "base",
        ),
        (
            &peaks.new_curve,
            peaks.new_peak_position,
            peaks.new_peak_bytes,
            NEW_COLOR,
            "new",
        ),
    ];
    for (curve, _, _, color, _) in &sides {
        for piece in curve_points(curve, &map, layout.plot) {
            area.draw(&PathElement::new(piece, color.stroke_width(2)))?;
        }
    }
    for (i, (_, position, bytes, color, side)) in sides.into_iter().enumerate() {
        if let Some(position) = position {
            p.peak_mark(&map, position, bytes, color, side, i)?;
        }
    }
    p.frame(layout.plot)
}

/// A curve of bins on `0..1` as pixel points in `plot`: per pixel column the highest bin
/// that overlaps it, flat stretches as one segment.
fn curve_points(curve: &[u64], map: &Mapping, plot: PxRect) -> Vec<Vec<(i32, i32)>> {
    let n = curve.len();
    if n == 0 || plot.is_empty() {
        return Vec::new();
    }
    let width = f64::from(plot.width());
    let mut points: Vec<(i32, i32)> = Vec::new();
    for x in plot.x0..plot.x1 {
        let (a, b) = (
            f64::from(x - plot.x0) / width,
            f64::from(x - plot.x0 + 1) / width,
        );
        let lo = ((a * n as f64).floor() as usize).min(n - 1);
        let hi = ((b * n as f64).ceil() as usize).clamp(lo + 1, n);
        let max = curve[lo..hi].iter().copied().max().unwrap_or(0);
        let y = (map.y_px(max as f64).round() as i32).min(plot.y1 - 1);
        match points.as_mut_slice() {
            [.., (_, y0), (x1, y1)] if *y0 == y && *y1 == y => *x1 = x + 1,
            _ => points.extend([(x, y), (x + 1, y)]),
        }
    }
    vec![points]
}

/// A text's width in pixels, estimated from its length: measuring text in the page would
/// need an inline style, which the page's Content-Security-Policy forbids.
fn rough_width(s: &str, font_size: f64) -> i32 {
    (s.chars().count() as f64 * font_size * 0.55).round() as i32
}

/// The change of the peak: `-6,148 B (-0.05%)`, `+2,048 B`, `0 B` (no % without a base).
pub fn delta_text(peaks: &SpacePeaks) -> String {
    let percent = peaks
        .delta_percent
        .map_or(String::new(), |p| format!(" ({p:+.2}%)"));
    format!("{}{percent}", signed_bytes(peaks.delta_bytes))
}

impl<DB: DrawingBackend> Painter<'_, DB> {
    /// Title (the space, both peaks, the delta) and a legend row naming the sides.
    fn title_rows(&self, l: &ChartLayout, peaks: &SpacePeaks, text: &ChartText) -> DrawResult<DB> {
        let s = self.style;
        let row = (l.title.y1 - l.title.y0) / 4;
        let title = format!(
            "memory space {}: peak {} → {}, {}",
            memory_space_label(peaks.color, text.backend),
            human_bytes(peaks.base_peak_bytes),
            human_bytes(peaks.new_peak_bytes),
            delta_text(peaks)
        );
        self.bold(&title, (8, row), 1.0, s.text, (HPos::Left, VPos::Center))?;
        let mut x = 8;
        let room = (l.title.width() / 2 - 60).max(40) as usize / 7;
        for (label, color, side) in [
            (text.base_label, BASE_COLOR, "base"),
            (text.new_label, NEW_COLOR, "new"),
        ] {
            let y = row * 3;
            self.fill(
                PxRect {
                    x0: x,
                    y0: y - 1,
                    x1: x + 18,
                    y1: y + 2,
                },
                color,
            )?;
            let words = format!("{side}: {}", clip_middle(label, room));
            self.text(&words, (x + 24, y), 0.9, s.text, (HPos::Left, VPos::Center))?;
            x += 24 + rough_width(&words, self.style.font_size * 0.9) + 24;
        }
        Ok(())
    }

    /// Horizontal lines at quarters of the y axis, labelled in bytes on the left.
    pub(super) fn byte_grid(&self, l: &ChartLayout, map: &Mapping) -> DrawResult<DB> {
        let top = map.bytes_at(f64::from(l.plot.y0));
        for i in 0..=4 {
            let bytes = top * f64::from(i) / 4.0;
            let y = map.y_px(bytes).round() as i32;
            let line = PxRect {
                x0: l.plot.x0,
                y0: y,
                x1: l.plot.x1,
                y1: y + 1,
            };
            self.fill(line, self.style.grid)?;
            let label = human_bytes(bytes.round() as u64);
            let at = (l.plot.x0 - 6, y.min(l.plot.y1 - 1));
            self.text(
                &label,
                at,
                0.85,
                self.style.muted,
                (HPos::Right, VPos::Center),
            )?;
        }
        Ok(())
    }

    /// Position labels `0 … 1` under the plot and the caption saying what x is.
    fn position_axis(&self, l: &ChartLayout, map: &Mapping, peaks: &SpacePeaks) -> DrawResult<DB> {
        let s = self.style;
        let row = (l.axis.y1 - l.axis.y0) / 3;
        for (i, label) in ["0", "0.25", "0.5", "0.75", "1"].iter().enumerate() {
            let x = map.x_px(i as f64 / 4.0).round() as i32;
            self.fill(
                PxRect {
                    x0: x,
                    y0: l.plot.y1,
                    x1: x + 1,
                    y1: l.plot.y1 + 4,
                },
                s.frame,
            )?;
            self.text(
                label,
                (x, l.axis.y0 + row),
                0.85,
                s.muted,
                (HPos::Center, VPos::Center),
            )?;
        }
        let caption = format!(
            "relative program position (0 = start, 1 = end): the schedules differ in length, base {} steps, new {}",
            group_digits(u64::from(peaks.base_steps)),
            group_digits(u64::from(peaks.new_steps)),
        );
        let mid = (l.plot.x0 + l.plot.x1) / 2;
        self.text(
            &caption,
            (mid, l.axis.y0 + row * 2 + 4),
            0.85,
            s.muted,
            (HPos::Center, VPos::Center),
        )
    }

    /// A dashed horizontal line at the capacity, labelled at its right end, in the colour of
    /// the single view's capacity line ([`Style::capacity_line`]).
    pub(super) fn dashed_capacity(
        &self,
        l: &ChartLayout,
        map: &Mapping,
        bytes: u64,
        what: &str,
    ) -> DrawResult<DB> {
        let y = map.y_px(bytes as f64).round() as i32;
        let mut x = l.plot.x0;
        while x < l.plot.x1 {
            let line = PxRect {
                x0: x,
                y0: y,
                x1: (x + 8).min(l.plot.x1),
                y1: y + 2,
            };
            self.fill(line, self.style.capacity_line)?;
            x += 14;
        }
        let label = format!("capacity {what}");
        let at = (l.plot.x1 - 6, y - 4);
        self.text(
            &label,
            at,
            0.85,
            self.style.capacity_line,
            (HPos::Right, VPos::Bottom),
        )
    }

    /// A side's peak: a dot on its curve at the peak's position and its size beside it
    /// (the base's label above-left, the new side's above-right, so that close peaks stay
    /// readable).
    fn peak_mark(
        &self,
        map: &Mapping,
        position: f64,
        bytes: u64,
        color: RGBColor,
        side: &str,
        i: usize,
    ) -> DrawResult<DB> {
        let at = (
            map.x_px(position.clamp(0.0, 1.0)).round() as i32,
            map.y_px(bytes as f64).round() as i32,
        );
        self.area.draw(&Circle::new(at, 5, color.filled()))?;
        let label = format!("{side} peak {}", human_bytes(bytes));
        let (dx, anchor) = if i == 0 {
            (-8, HPos::Right)
        } else {
            (8, HPos::Left)
        };
        self.bold(
            &label,
            (at.0 + dx, at.1 - 8),
            0.85,
            color,
            (anchor, VPos::Bottom),
        )
    }
}

/// The window of relative program position that `view` shows of a schedule of `steps`
/// steps: `(x0 / steps, x1 / steps)`.
pub fn view_window(view: &Viewport, steps: u32) -> (f64, f64) {
    let n = f64::from(steps.max(1));
    (view.x0 / n, view.x1 / n)
}

/// `view` showing `window` (relative position) of a schedule of `steps` steps: its time
/// range becomes `window × steps`, its offsets stay. An invalid window leaves `view` as it is.
pub fn view_for_window(view: &Viewport, window: (f64, f64), steps: u32) -> Viewport {
    let (lo, hi) = window;
    if !(lo.is_finite() && hi.is_finite() && hi > lo) {
        return *view;
    }
    let n = f64::from(steps.max(1));
    Viewport {
        x0: lo * n,
        x1: hi * n,
        ..*view
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(x0: f64, x1: f64) -> Viewport {
        Viewport {
            x0,
            x1,
            y0: 5.0,
            y1: 50.0,
        }
    }

    #[test]
    fn windows_carry_relative_position_across_schedules() {
        // Steps 20..40 of 100 are 0.2..0.4; on a schedule of 97 steps that is 19.4..38.8.
        let w = view_window(&view(20.0, 40.0), 100);
        assert_eq!(w, (0.2, 0.4));
        let other = view_for_window(&view(0.0, 97.0), w, 97);
        assert!((other.x0 - 19.4).abs() < 1e-9 && (other.x1 - 38.8).abs() < 1e-9);
        // Offsets are the other diagram's own.
        assert_eq!((other.y0, other.y1), (5.0, 50.0));
        // And back: the window is the same.
        let back = view_window(&other, 97);
        assert!((back.0 - 0.2).abs() < 1e-12 && (back.1 - 0.4).abs() < 1e-12);
        // The whole of one is the whole of the other.
        assert_eq!(
            view_for_window(&view(3.0, 4.0), view_window(&view(0.0, 100.0), 100), 97).x1,
            97.0
        );
        // Nonsense leaves the view alone; an empty schedule counts as one step.
        assert_eq!(
            view_for_window(&view(1.0, 2.0), (0.5, 0.5), 9),
            view(1.0, 2.0)
        );
        assert_eq!(
            view_for_window(&view(1.0, 2.0), (f64::NAN, 1.0), 9),
            view(1.0, 2.0)
        );
        assert_eq!(view_window(&view(0.0, 1.0), 0), (0.0, 1.0));
    }

    #[test]
    fn deltas_read_with_their_sign() {
        let mut p = SpacePeaks {
            color: 0,
            base_peak_bytes: 12_000,
            new_peak_bytes: 5_852,
            delta_bytes: -6_148,
            delta_percent: Some(-51.2333),
            base_peak_step: None,
            new_peak_step: None,
            base_steps: 1,
            new_steps: 1,
            base_peak_position: None,
            new_peak_position: None,
            base_curve: vec![],
            new_curve: vec![],
        };
        assert_eq!(delta_text(&p), "-6,148 B (-51.23%)");
        p.delta_bytes = 0;
        p.delta_percent = None;
        assert_eq!(delta_text(&p), "0 B");
    }

    #[test]
    fn curve_points_keep_each_column_highest_bin() {
        let l = ChartLayout::new((400, 300), 14.0);
        let map = l.mapping(10.0);
        let mut curve = vec![0u64; 1024];
        curve[512] = 10;
        let pieces = curve_points(&curve, &map, l.plot);
        let top = map.y_px(10.0).round() as i32;
        let at_top: Vec<_> = pieces[0].iter().filter(|p| p.1 == top).collect();
        // One column, in the middle of the plot, reaches the top.
        assert_eq!(at_top.len(), 2);
        let mid = f64::from(l.plot.x0) + f64::from(l.plot.width()) * 0.5;
        assert!(
            (f64::from(at_top[0].0) - mid).abs() <= 1.0,
            "{at_top:?} vs {mid}"
        );
        assert!(curve_points(&[], &map, l.plot).is_empty());
    }

    #[test]
    fn the_capacity_is_a_line_with_its_name() {
        let p = SpacePeaks {
            color: 1,
            base_peak_bytes: 3 << 20,
            new_peak_bytes: 5 << 20,
            delta_bytes: 2 << 20,
            delta_percent: Some(66.67),
            base_peak_step: Some(1),
            new_peak_step: Some(2),
            base_steps: 4,
            new_steps: 4,
            base_peak_position: Some(0.375),
            new_peak_position: Some(0.625),
            base_curve: vec![1 << 20, 3 << 20, 0, 0],
            new_curve: vec![0, 0, 5 << 20, 0],
        };
        let mut text = ChartText {
            base_label: "a<b",
            new_label: "new",
            capacity: None,
            backend: None,
        };
        let plain = comparison_svg(&[&p], &text, &Style::default(), 800);
        text.capacity = Some((4 << 20, "4.0 MiB"));
        let with = comparison_svg(&[&p], &text, &Style::default(), 800);
        assert!(!plain.contains("capacity") && with.contains("capacity 4.0 MiB"));
        assert!(with.contains("memory space 1 vmem") && with.contains("a&lt;b"));
        // The top of the axis leaves room above the highest of peaks and capacity.
        assert_eq!(chart_top(&p, Some(7 << 20)), f64::from(8 << 20));
    }
}
