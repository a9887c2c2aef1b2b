//! Render: the block diagram of a memory space, drawn with plotters on any backend (SVG
//! natively and in tests, a `<canvas>` in the browser).
//!
//! Owns: how a module looks. A panel per memory space: a title row with a legend, the
//! occupied-bytes curve with its peak, and below it the diagram (x = program step, y = offset,
//! allocations as bands, one filled rectangle per value, coloured by [`ValueKind`]). Also the
//! pixel ↔ data mapping ([`Mapping`]) that drawing and [`hit_test`] share.
//!
//! Drawing cost follows pixels rather than values: blocks outside the [`Viewport`] are
//! culled, and blocks smaller than a few pixels are painted into a coverage raster that is
//! drawn as a few merged rectangles.

mod coverage;
mod geometry;
mod index;
pub mod interaction;
mod levels;
mod marks;
mod raster;
mod ticks;

pub use geometry::{wheel_zoom, Layout, Mapping, PxRect, Viewport};
use index::InView;
pub use index::{IndexBuilder, Levels, SpaceIndex};
pub use marks::{draw_cursor, draw_marks, Marks};
pub use raster::{NoError, Raster};

use crate::analysis::{Analysis, Space};
use crate::model::{memory_space_name, Allocation, Module, ValueKind};
use crate::summary::{group_digits, human_bytes};
use coverage::Coverage;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Colours and text of a drawing.
#[derive(Clone, Debug)]
pub struct Style {
    /// Font family, as CSS names it.
    pub font: &'static str,
    /// Base text size, as plotters counts it (its SVG backend writes `font-size` as this
    /// / 1.24, a canvas uses it as is).
    pub font_size: f64,
    pub background: RGBColor,
    pub text: RGBColor,
    /// Secondary text: axis labels, captions.
    pub muted: RGBColor,
    /// Vertical grid lines at the step ticks.
    pub grid: RGBColor,
    /// Plot frames and tick marks.
    pub frame: RGBColor,
    /// Background of every other allocation band.
    pub band: RGBColor,
    /// Lines between allocation bands.
    pub boundary: RGBColor,
    /// The occupied-bytes curve.
    pub curve: RGBColor,
    /// The peak marker.
    pub peak: RGBColor,
    /// Outline of the blocks of the highlighted instruction.
    pub highlight: RGBColor,
    /// Search matches.
    pub mark: RGBColor,
    /// The time cursor.
    pub cursor: RGBColor,
    /// Write value names into blocks large enough to hold them.
    pub block_labels: bool,
}

impl Default for Style {
    fn default() -> Style {
        Style {
            font: "sans-serif",
            font_size: 14.0,
            background: WHITE,
            text: RGBColor(0x1f, 0x23, 0x28),
            muted: RGBColor(0x5f, 0x67, 0x70),
            grid: RGBColor(0xec, 0xee, 0xf1),
            frame: RGBColor(0xa8, 0xaf, 0xb8),
            band: RGBColor(0xf5, 0xf6, 0xf8),
            boundary: RGBColor(0xd3, 0xd8, 0xde),
            curve: RGBColor(0x3e, 0x64, 0x8c),
            peak: RGBColor(0xd6, 0x45, 0x45),
            highlight: RGBColor(0xd0, 0x1f, 0x7c),
            mark: RGBColor(0xe8, 0x9a, 0x00),
            cursor: RGBColor(0x3b, 0x42, 0x4a),
            block_labels: true,
        }
    }
}

/// The fill colour of a value of this kind.
pub fn kind_color(kind: ValueKind) -> RGBColor {
    match kind {
        ValueKind::Parameter => RGBColor(0x5b, 0x8f, 0xd0),
        ValueKind::Output => RGBColor(0xf3, 0x9c, 0x45),
        ValueKind::Constant => RGBColor(0xb5, 0x8b, 0xc6),
        ValueKind::ThreadLocal => RGBColor(0xa9, 0x84, 0x67),
        ValueKind::Temporary => RGBColor(0x6d, 0xbe, 0x8c),
    }
}

/// The border of a block: its colour, darker.
fn border_color(c: RGBColor) -> RGBColor {
    let d = |v: u8| (f64::from(v) * 0.62).round() as u8;
    RGBColor(d(c.0), d(c.1), d(c.2))
}

/// A kind's position in [`ValueKind::ALL`] (how legends, coverage rasters and levels of
/// detail store it), and back.
fn kind_index(kind: ValueKind) -> usize {
    ValueKind::ALL.iter().position(|&k| k == kind).unwrap_or(0)
}

fn kind_at(index: usize) -> ValueKind {
    ValueKind::ALL[index.min(ValueKind::ALL.len() - 1)]
}

/// Blocks at least this many pixels wide and high are drawn one by one; smaller ones go
/// through the coverage raster.
const MIN_BLOCK_PX: i32 = 3;
/// Allocation bands at least this many pixels high are shaded and outlined.
const MIN_BAND_PX: i32 = 5;
/// Blocks at least this large get a darker border.
const BORDER_PX: i32 = 6;
/// At most this many value names per drawing.
const MAX_BLOCK_LABELS: usize = 400;

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Draws one memory space into `area`: title and legend, the occupied-bytes curve with its
/// peak, and the block diagram of what `view` shows (an invalid viewport means the whole
/// space). Where each part goes is [`Layout::new`] of the area's size.
pub fn draw_space<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    module: &Module,
    analysis: &Analysis,
    space: &Space,
    view: &Viewport,
    style: &Style,
) -> DrawResult<DB> {
    let index = SpaceIndex::new(module, analysis, space);
    draw_space_indexed(area, module, analysis, space, &index, view, style)
}

/// [`draw_space`] with the space's blocks worked out beforehand (`index` must be the
/// [`SpaceIndex`] of `space`): what a view that redraws often calls.
pub fn draw_space_indexed<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    module: &Module,
    analysis: &Analysis,
    space: &Space,
    index: &SpaceIndex,
    view: &Viewport,
    style: &Style,
) -> DrawResult<DB> {
    let layout = Layout::new(area.dim_in_pixel(), style.font_size);
    let view = view.or(Viewport::full(analysis, space));
    let map = Mapping::new(view, layout.diagram);
    let p = Painter { area, style };

    area.fill(&style.background)?;
    p.step_axis(&layout, &map)?;
    p.curve(&layout, analysis, space, &view)?;
    p.bands(&layout, &map, module, space, index)?;
    let drawn = p.blocks(&map, module, index)?;
    p.peak(&layout, &map, space)?;
    p.byte_axis(&layout, &map)?;
    p.frame(layout.curve)?;
    p.frame(layout.diagram)?;
    if drawn.count == 0 {
        let msg = if space.timed.is_empty() {
            "no values with a live range in this memory space"
        } else {
            "no values in view"
        };
        let d = layout.diagram;
        p.text(
            msg,
            ((d.x0 + d.x1) / 2, (d.y0 + d.y1) / 2),
            1.0,
            style.muted,
            (HPos::Center, VPos::Center),
        )?;
    }
    p.title_row(&layout, space, &drawn.kinds)
}

/// The value whose block is under pixel `(px, py)` of a diagram drawn in `plot_rect_px`
/// (the [`Layout::diagram`] of the drawing) with `view`; the smallest one when blocks
/// overlap there. Uses the same pixel mapping as [`draw_space`], so a block drawn one pixel
/// wide is found at that pixel.
pub fn hit_test(
    module: &Module,
    analysis: &Analysis,
    space: &Space,
    view: &Viewport,
    plot_rect_px: PxRect,
    px: i32,
    py: i32,
) -> Option<u32> {
    SpaceIndex::new(module, analysis, space).hit(view, plot_rect_px, px, py)
}

/// The whole module as one SVG, `width` pixels wide: a header, then one panel per memory
/// space, stacked, each showing its whole space. Deterministic.
pub fn render_svg(module: &Module, analysis: &Analysis, width: u32) -> String {
    let width = width.clamp(320, 16_384);
    let panel = panel_height(width);
    let header = 34u32;
    let panels = u32::try_from(analysis.spaces.len())
        .unwrap_or(u32::MAX)
        .max(1);
    let height = header.saturating_add(panel.saturating_mul(panels));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        // Writing into a String cannot fail; a failure would only truncate the picture.
        let _ = draw_module(&root, module, analysis, &Style::default(), header, panel);
        let _ = root.present();
    }
    svg
}

/// Height of one memory-space panel in [`render_svg`].
fn panel_height(width: u32) -> u32 {
    ((f64::from(width) * 0.5).round() as u32).clamp(380, 760)
}

fn draw_module<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    module: &Module,
    analysis: &Analysis,
    style: &Style,
    header: u32,
    panel: u32,
) -> DrawResult<DB> {
    root.fill(&style.background)?;
    let (head, body) = root.split_vertically(header);
    let p = Painter { area: &head, style };
    let name = if module.name.is_empty() {
        "(unnamed module)"
    } else {
        &module.name
    };
    let y = header as i32 / 2;
    p.bold(name, (8, y), 1.25, style.text, (HPos::Left, VPos::Center))?;
    let mut facts = format!(
        "{} · {} · {} allocated",
        count(module.allocations.len(), "allocation"),
        count(module.values.len(), "value"),
        human_bytes(
            module
                .allocations
                .iter()
                .fold(0u64, |s, a| s.saturating_add(a.size))
        ),
    );
    match &module.schedule {
        Some(s) => facts.push_str(&format!(" · schedule of {}", count(s.max as usize, "step"))),
        None => facts.push_str(" · no schedule"),
    }
    // Bold text runs wider than the estimate of the regular face.
    let x = 8 + p.text_width(name, 1.25) * 6 / 5 + 16;
    p.text(&facts, (x, y), 1.0, style.muted, (HPos::Left, VPos::Center))?;
    p.fill(
        PxRect {
            x0: 0,
            y0: header as i32 - 1,
            x1: head.dim_in_pixel().0 as i32,
            y1: header as i32,
        },
        style.boundary,
    )?;

    if analysis.spaces.is_empty() {
        let b = Painter { area: &body, style };
        return b.text(
            "no memory spaces: the module has no allocations",
            (8, 20),
            1.0,
            style.muted,
            (HPos::Left, VPos::Center),
        );
    }
    let mut rest = body;
    for (i, space) in analysis.spaces.iter().enumerate() {
        let (this, below) = rest.split_vertically(panel);
        draw_space(
            &this,
            module,
            analysis,
            space,
            &Viewport::full(analysis, space),
            style,
        )?;
        if i > 0 {
            let w = this.dim_in_pixel().0 as i32;
            Painter { area: &this, style }.fill(
                PxRect {
                    x0: 0,
                    y0: 0,
                    x1: w,
                    y1: 1,
                },
                style.boundary,
            )?;
        }
        rest = below;
    }
    Ok(())
}

/// `alloc 3 param 0`, `alloc 7 output`, `alloc 12 temp`, ...
fn allocation_label(a: &Allocation) -> String {
    let mut s = format!("alloc {}", a.index);
    let plain = s.len();
    if let Some(p) = &a.parameter {
        s.push_str(&format!(" param {}", p.number));
    }
    if a.output_shape.is_some() || a.flags.maybe_live_out {
        s.push_str(" output");
    }
    if a.flags.constant {
        s.push_str(" constant");
    }
    if a.flags.thread_local {
        s.push_str(" thread-local");
    }
    // Allocations with no flag are temp buffers too.
    if a.flags.preallocated_temp || s.len() == plain {
        s.push_str(" temp");
    }
    s
}

/// What the block pass drew.
struct Drawn {
    count: usize,
    /// Kinds present among the drawn blocks, in [`ValueKind::ALL`] order.
    kinds: [bool; 5],
}

/// The drawing area and style, with the drawing helpers.
struct Painter<'a, DB: DrawingBackend> {
    area: &'a DrawingArea<DB, Shift>,
    style: &'a Style,
}

impl<DB: DrawingBackend> Painter<'_, DB> {
    fn fill(&self, r: PxRect, color: impl Color) -> DrawResult<DB> {
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
    fn text(
        &self,
        s: &str,
        at: (i32, i32),
        scale: f64,
        color: RGBColor,
        anchor: (HPos, VPos),
    ) -> DrawResult<DB> {
        self.put(s, at, self.font(scale, false), color, anchor)
    }

    fn bold(
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
    fn text_width(&self, s: &str, scale: f64) -> i32 {
        let style = TextStyle::from(self.font(scale, false));
        match self.area.estimate_text_size(s, &style) {
            Ok((w, _)) => i32::try_from(w).unwrap_or(i32::MAX),
            Err(_) => (s.chars().count() as f64 * self.style.font_size * scale * 0.6) as i32,
        }
    }

    fn frame(&self, r: PxRect) -> DrawResult<DB> {
        if r.is_empty() {
            return Ok(());
        }
        let c = self.style.frame;
        self.fill(PxRect { y1: r.y0 + 1, ..r }, c)?;
        self.fill(PxRect { y0: r.y1 - 1, ..r }, c)?;
        self.fill(PxRect { x1: r.x0 + 1, ..r }, c)?;
        self.fill(PxRect { x0: r.x1 - 1, ..r }, c)
    }

    /// Title left ("vmem (color 1)" and a few facts), legend right.
    fn title_row(&self, layout: &Layout, space: &Space, kinds: &[bool; 5]) -> DrawResult<DB> {
        let t = layout.title;
        let y = (t.y0 + t.y1) / 2;
        let title = format!("{} (color {})", memory_space_name(space.color), space.color);
        self.bold(
            &title,
            (t.x0, y),
            1.15,
            self.style.text,
            (HPos::Left, VPos::Center),
        )?;

        // Legend, right-aligned: a swatch and a label per kind drawn.
        let swatch = (self.style.font_size * 0.85).round() as i32;
        let entries: Vec<ValueKind> = ValueKind::ALL
            .into_iter()
            .filter(|&k| kinds[kind_index(k)])
            .collect();
        let widths: Vec<i32> = entries
            .iter()
            .map(|k| self.text_width(k.label(), 1.0))
            .collect();
        let total: i32 = widths.iter().map(|w| swatch + 5 + w + 14).sum();
        let legend_x = t.x1 - total;
        let mut x = legend_x;
        for (k, w) in entries.iter().zip(&widths) {
            let sq = PxRect {
                x0: x,
                y0: y - swatch / 2,
                x1: x + swatch,
                y1: y - swatch / 2 + swatch,
            };
            self.fill(sq, border_color(kind_color(*k)))?;
            self.fill(
                PxRect {
                    x0: sq.x0 + 1,
                    y0: sq.y0 + 1,
                    x1: sq.x1 - 1,
                    y1: sq.y1 - 1,
                },
                kind_color(*k),
            )?;
            self.text(
                k.label(),
                (x + swatch + 5, y),
                1.0,
                self.style.text,
                (HPos::Left, VPos::Center),
            )?;
            x += swatch + 5 + w + 14;
        }

        // Facts after the title, when they fit before the legend.
        let mut facts = format!(
            "{} · {} · {} allocated",
            count(space.layout.len(), "allocation"),
            count(space.value_count as usize, "value"),
            human_bytes(space.allocated_bytes),
        );
        if !space.timeless.is_empty() {
            facts.push_str(&format!(
                " · {} without live range (not drawn)",
                group_digits(space.timeless.len() as u64)
            ));
        }
        let fx = t.x0 + self.text_width(&title, 1.15) * 6 / 5 + 14;
        if fx + self.text_width(&facts, 1.0) + 10 <= legend_x {
            self.text(
                &facts,
                (fx, y),
                1.0,
                self.style.muted,
                (HPos::Left, VPos::Center),
            )?;
        }
        Ok(())
    }

    /// Grid lines at the step ticks through curve and diagram, labels under the diagram.
    fn step_axis(&self, layout: &Layout, map: &Mapping) -> DrawResult<DB> {
        let d = layout.diagram;
        let max_ticks = (d.width() / 90).max(2) as usize;
        let y = d.y1 + 4;
        for t in ticks::step_ticks(map.view.x0, map.view.x1, max_ticks) {
            let x = map.x_px(t as f64).round() as i32;
            if x < d.x0 || x >= d.x1 {
                continue;
            }
            for r in [layout.curve, d] {
                self.fill(
                    PxRect {
                        x0: x,
                        x1: x + 1,
                        ..r
                    },
                    self.style.grid,
                )?;
            }
            self.fill(
                PxRect {
                    x0: x,
                    y0: d.y1,
                    x1: x + 1,
                    y1: d.y1 + 3,
                },
                self.style.frame,
            )?;
            self.text(
                &group_digits(t),
                (x, y),
                0.92,
                self.style.muted,
                (HPos::Center, VPos::Top),
            )?;
        }
        self.text(
            "step",
            (d.x0 - 12, y),
            0.92,
            self.style.muted,
            (HPos::Right, VPos::Top),
        )
    }

    /// Byte ticks left of the diagram.
    fn byte_axis(&self, layout: &Layout, map: &Mapping) -> DrawResult<DB> {
        let d = layout.diagram;
        let max_ticks = (d.height() / 42).max(2) as usize;
        let (ticks, step) = ticks::byte_ticks(map.view.y0, map.view.y1, max_ticks);
        let largest = ticks.last().copied().unwrap_or(0);
        for t in ticks {
            let y = map.y_px(t as f64).round() as i32;
            if y < d.y0 || y > d.y1 {
                continue;
            }
            self.fill(
                PxRect {
                    x0: d.x0 - 4,
                    y0: y,
                    x1: d.x0,
                    y1: y + 1,
                },
                self.style.frame,
            )?;
            let label = ticks::byte_label(t, step, largest);
            self.text(
                &label,
                (d.x0 - 7, y),
                0.92,
                self.style.muted,
                (HPos::Right, VPos::Center),
            )?;
        }
        self.text(
            "offset",
            (layout.title.x0, d.y0 - 8),
            0.92,
            self.style.muted,
            (HPos::Left, VPos::Bottom),
        )
    }

    /// The occupied-bytes curve over the steps in view, one point per pixel column (the
    /// maximum of the steps that column covers), scaled to the space's peak.
    fn curve(
        &self,
        layout: &Layout,
        analysis: &Analysis,
        space: &Space,
        view: &Viewport,
    ) -> DrawResult<DB> {
        let r = layout.curve;
        if r.is_empty() {
            return Ok(());
        }
        let cm = curve_mapping(space, view, r);
        let steps = space.curve.len().min(analysis.steps as usize);
        let mut points: Vec<(i32, i32)> = Vec::new();
        let mut pieces: Vec<Vec<(i32, i32)>> = Vec::new();
        for x in r.x0..r.x1 {
            // Saturating casts: a NaN would become 0 and an empty range.
            let lo = cm.step_at(f64::from(x)).floor().max(0.0) as usize;
            let hi = (cm.step_at(f64::from(x + 1)).ceil() as usize).min(steps);
            if lo >= hi {
                if !points.is_empty() {
                    pieces.push(std::mem::take(&mut points));
                }
                continue;
            }
            let max = space.curve[lo..hi].iter().copied().max().unwrap_or(0);
            // The last row of the strip is its zero line.
            let y = (cm.y_px(max as f64).round() as i32).min(r.y1 - 1);
            // A flat stretch is one segment: move its end instead of adding points.
            match points.as_mut_slice() {
                [.., (_, y0), (x1, y1)] if *y0 == y && *y1 == y => *x1 = x + 1,
                _ => points.extend([(x, y), (x + 1, y)]),
            }
        }
        if !points.is_empty() {
            pieces.push(points);
        }
        for piece in pieces {
            let (Some(first), Some(last)) = (piece.first().copied(), piece.last().copied()) else {
                continue;
            };
            let mut area = Vec::with_capacity(piece.len() + 2);
            area.push((first.0, r.y1));
            area.extend_from_slice(&piece);
            area.push((last.0, r.y1));
            self.area
                .draw(&Polygon::new(area, self.style.curve.mix(0.22).filled()))?;
            self.area
                .draw(&PathElement::new(piece, self.style.curve.stroke_width(1)))?;
        }
        let peak_y = cm.y_px(space.peak_bytes as f64).round() as i32;
        self.fill(
            PxRect {
                x0: r.x0 - 4,
                y0: peak_y,
                x1: r.x0,
                y1: peak_y + 1,
            },
            self.style.frame,
        )?;
        self.text(
            &human_bytes(space.peak_bytes),
            (r.x0 - 7, peak_y),
            0.92,
            self.style.muted,
            (HPos::Right, VPos::Center),
        )?;
        self.text(
            "0",
            (r.x0 - 7, r.y1 - 1),
            0.92,
            self.style.muted,
            (HPos::Right, VPos::Bottom),
        )?;
        self.text(
            "occupied",
            (layout.title.x0, (r.y0 + r.y1) / 2),
            0.92,
            self.style.muted,
            (HPos::Left, VPos::Center),
        )
    }

    /// The peak: a line through curve and diagram at its step, and its label.
    fn peak(&self, layout: &Layout, map: &Mapping, space: &Space) -> DrawResult<DB> {
        let Some(t) = space.peak_time else {
            return Ok(());
        };
        let (c, d) = (layout.curve, layout.diagram);
        let label = format!(
            "peak {} bytes ({}) @ step {}",
            group_digits(space.peak_bytes),
            human_bytes(space.peak_bytes),
            group_digits(u64::from(t)),
        );
        let x = map.x_px(f64::from(t) + 0.5).round() as i32;
        let color = self.style.peak;
        let y = c.y0 + 4;
        if x < d.x0 || x >= d.x1 {
            return self.text(
                &format!("{label} (out of view)"),
                (c.x1 - 6, y),
                0.92,
                color,
                (HPos::Right, VPos::Top),
            );
        }
        self.fill(
            PxRect {
                x0: x,
                y0: c.y0,
                x1: x + 1,
                y1: c.y1,
            },
            color,
        )?;
        self.fill(
            PxRect {
                x0: x,
                y0: d.y0,
                x1: x + 1,
                y1: d.y1,
            },
            color.mix(0.55),
        )?;
        let width = self.text_width(&label, 0.92);
        if x + 6 + width <= c.x1 - 2 {
            self.text(&label, (x + 6, y), 0.92, color, (HPos::Left, VPos::Top))
        } else {
            self.text(&label, (x - 6, y), 0.92, color, (HPos::Right, VPos::Top))
        }
    }

    /// Allocation bands: every other one shaded, lines between them, labels at the right.
    fn bands(
        &self,
        layout: &Layout,
        map: &Mapping,
        module: &Module,
        space: &Space,
        index: &SpaceIndex,
    ) -> DrawResult<DB> {
        let d = layout.diagram;
        // Bands smaller than this are never tall, whatever the rounding.
        let bytes_px = (map.view.y1 - map.view.y0) / f64::from(d.height().max(1));
        let short = ((f64::from(MIN_BAND_PX) - 1.5) * bytes_px).max(0.0) as u64;
        let labels = layout.labels;
        let font_px = self.style.font_size;
        let max_chars = (f64::from(labels.width()) / (font_px * 0.92 * 0.56)).max(4.0) as usize;
        let size_of = |allocation: u32| {
            module
                .allocations
                .get(allocation as usize)
                .map_or(0, |a| a.size)
        };
        let first = space.layout.partition_point(|s| {
            (s.base.saturating_add(size_of(s.allocation)) as f64) <= map.view.y0
        });
        let mut last_line = i32::MAX;
        let mut previous_tall = false;
        let mut last_label = i32::MAX;
        let mut next = first;
        while let Some(slot) = space.layout.get(next) {
            if slot.base as f64 >= map.view.y1 {
                break;
            }
            if !previous_tall {
                // A band after a short one draws nothing unless it is tall itself.
                let skip = index.next_slot_of(next, short);
                if skip != next {
                    next = skip;
                    continue;
                }
            }
            let i = next;
            next += 1;
            let Some(a) = module.allocations.get(slot.allocation as usize) else {
                continue;
            };
            let end = slot.base.saturating_add(a.size);
            let Some(px) = map.data_rect_px(map.view.x0, map.view.x1, slot.base as f64, end as f64)
            else {
                continue;
            };
            let tall = a.size > 0 && px.height() >= MIN_BAND_PX;
            if tall && i % 2 == 1 {
                self.fill(px, self.style.band)?;
            }
            // The line under the band (its base), when the band or the one below is tall
            // enough to tell apart (lines between sliver bands would only hatch the plot).
            let y = map.y_px(slot.base as f64).round() as i32;
            let below_tall = std::mem::replace(&mut previous_tall, tall);
            if (tall || below_tall) && y > d.y0 && y < d.y1 && (last_line - y).abs() >= 2 {
                self.fill(
                    PxRect {
                        x0: d.x0,
                        y0: y,
                        x1: d.x1,
                        y1: y + 1,
                    },
                    self.style.boundary,
                )?;
                last_line = y;
            }
            if !labels.is_empty() && f64::from(px.height()) >= font_px * 1.1 {
                let mid = (px.y0 + px.y1) / 2;
                if f64::from((last_label - mid).abs()) >= font_px * 1.25 {
                    let text = truncate(&allocation_label(a), max_chars);
                    let two_lines = f64::from(px.height()) >= font_px * 2.8;
                    let y_name = if two_lines {
                        mid - (font_px * 0.6) as i32
                    } else {
                        mid
                    };
                    self.text(
                        &text,
                        (labels.x0, y_name),
                        0.92,
                        self.style.text,
                        (HPos::Left, VPos::Center),
                    )?;
                    if two_lines {
                        let size = human_bytes(a.size);
                        self.text(
                            &size,
                            (labels.x0, mid + (font_px * 0.6) as i32),
                            0.92,
                            self.style.muted,
                            (HPos::Left, VPos::Center),
                        )?;
                    }
                    last_label = mid;
                }
            }
        }
        Ok(())
    }

    /// Every value's block in view: large ones one by one (with a border and, room allowing,
    /// their name), small ones through the coverage raster.
    fn blocks(
        &self,
        map: &Mapping,
        module: &Module,
        index: &SpaceIndex,
    ) -> Result<Drawn, DrawingAreaErrorKind<DB::ErrorType>> {
        let mut drawn = Drawn {
            count: 0,
            kinds: [false; 5],
        };
        let mut small: Option<Coverage> = None;
        let mut large: Vec<(PxRect, u32, ValueKind)> = Vec::new();
        index.for_each_in_view(map, |item| {
            let (px, kind, value) = match item {
                InView::Cells(px, kind) => (px, kind, None),
                InView::Block(b, kind) => match map.block_px(&b) {
                    Some(px) => (px, kind, Some(b.value)),
                    None => return,
                },
            };
            drawn.count += 1;
            drawn.kinds[kind_index(kind)] = true;
            match value {
                Some(value) if px.width() >= MIN_BLOCK_PX && px.height() >= MIN_BLOCK_PX => {
                    large.push((px, value, kind));
                }
                _ => small
                    .get_or_insert_with(|| Coverage::new(map.rect))
                    .paint(&px, kind_index(kind) as u8 + 1),
            }
        });
        if let Some(cov) = &small {
            cov.for_each_rect(|r, class| {
                let kind = kind_at(usize::from(class - 1));
                self.fill(r, kind_color(kind))
            })?;
        }
        let mut labels = 0;
        let label_px = (self.style.font_size * 0.92).round() as i32;
        for (r, value, kind) in large {
            let color = kind_color(kind);
            if r.width() >= BORDER_PX && r.height() >= BORDER_PX {
                self.fill(r, border_color(color))?;
                self.fill(
                    PxRect {
                        x0: r.x0 + 1,
                        y0: r.y0 + 1,
                        x1: r.x1 - 1,
                        y1: r.y1 - 1,
                    },
                    color,
                )?;
            } else {
                self.fill(r, color)?;
            }
            if self.style.block_labels
                && labels < MAX_BLOCK_LABELS
                && r.width() >= 30
                && r.height() >= label_px + 4
            {
                let Some(v) = module.values.get(value as usize) else {
                    continue;
                };
                let name = module.value_name(v);
                // Measuring is the costly part (the canvas measures the whole text): no
                // character is narrower than 0.3 em, so a name that long cannot fit.
                let at_least = name.chars().count() as f64 * self.style.font_size * 0.92 * 0.3;
                if at_least <= f64::from(r.width()) && self.text_width(&name, 0.92) + 8 <= r.width()
                {
                    self.text(
                        &name,
                        (r.x0 + 4, (r.y0 + r.y1) / 2),
                        0.92,
                        self.style.text,
                        (HPos::Left, VPos::Center),
                    )?;
                    labels += 1;
                }
            }
        }
        Ok(drawn)
    }
}

/// The curve's mapping: the steps in view, bytes from 0 to a third above the peak (room
/// for the peak's label).
fn curve_mapping(space: &Space, view: &Viewport, rect: PxRect) -> Mapping {
    let top = space.peak_bytes.max(1) as f64 * 1.35;
    Mapping::new(
        Viewport {
            y0: 0.0,
            y1: top,
            ..*view
        },
        rect,
    )
}

/// "1 value", "177,800 values".
fn count(n: usize, noun: &str) -> String {
    let plural = if n == 1 { "" } else { "s" };
    format!("{} {noun}{plural}", group_digits(n as u64))
}

/// `s` cut to `max` characters, with an ellipsis when cut.
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests;

/// `s` without the characters XML 1.0 forbids (control characters other than tab, line feed
/// and carriage return; U+FFFE, U+FFFF), which names from a dump may hold: each becomes
/// U+FFFD, so that an SVG stays well-formed. plotters escapes `< > & " '` itself.
fn xml_safe(s: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}')
    };
    if s.contains(bad) {
        s.chars()
            .map(|c| if bad(c) { '\u{FFFD}' } else { c })
            .collect::<String>()
            .into()
    } else {
        s.into()
    }
}
