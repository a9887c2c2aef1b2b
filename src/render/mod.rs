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
//!
//! Files by job: `kind.rs` (what a value is, and its colour), `paint.rs` (drawing
//! primitives), `frame.rs` (title row, legend, axes), `curve.rs` (the occupied-bytes curve
//! and the peak), `capacity.rs` (a capacity line on the curve), `idle.rs` (a value's idle
//! stretches), `loops.rs` (loop bands on the time axis and their hit test), `blocks.rs`
//! (allocation bands and value blocks), `page.rs` (the whole module
//! as one SVG, or one space at a view window), `svg.rs` (plotters' SVG backend with text
//! measured alike natively and in the page), `sweep.rs` (a sweep's peak against the varied
//! value), `text.rs` (clipping and XML-safe text); `geometry.rs`, `index.rs`,
//! `levels.rs`, `coverage.rs`, `marks.rs`, `raster.rs` and `ticks.rs` as ARCHITECTURE.md
//! says.

mod blocks;
mod capacity;
mod coverage;
mod curve;
mod curve_labels;
pub mod estimate;
pub mod diff;
mod frame;
mod geometry;
mod idle;
mod index;
pub mod interaction;
mod kind;
mod levels;
pub mod loops;
mod marks;
mod page;
mod paint;
mod raster;
mod svg;
pub mod sweep;
pub mod text;
mod ticks;

pub use capacity::{capacity_label, verdict_words};
pub use curve::curve_mapping;
pub use geometry::{wheel_zoom, Layout, Mapping, PxRect, Viewport};
pub use index::{IndexBuilder, Levels, SpaceIndex};
pub use kind::kind_color;
pub use marks::{draw_cursor, draw_marks, Marks};
pub use page::{panel_height, render_png_styled, render_space_svg, render_svg, render_svg_styled};
pub use raster::{NoError, Raster};

use crate::analysis::{Analysis, Space};
use crate::answers::capacity::Capacity;
use crate::model::Module;
use paint::Painter;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

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
    /// The capacity line on the curve, its label and a verdict that fits.
    pub capacity_line: RGBColor,
    /// The part of the curve over the capacity, and a verdict that does not fit.
    pub over_capacity: RGBColor,
    /// Write value names into blocks large enough to hold them.
    pub block_labels: bool,
    /// A capacity to hold the curve against: a line at its bytes, the part of the curve
    /// over it shaded, the verdict at the peak (`capacity.rs`); `None`, no line. Drawn on
    /// the memory space it is set on only ([`Capacity::holds`]).
    pub capacity: Option<Capacity>,
    /// The module's loop bands on the time axis (`loops.rs`); none drawn when empty.
    pub loop_bands: std::sync::Arc<Vec<loops::Band>>,
    /// The what-if's estimated curves, by memory space, dashed over the real ones
    /// (`estimate.rs`); none drawn when empty.
    pub estimates: std::sync::Arc<Vec<estimate::EstimateCurve>>,
    /// The estimated curve and its labels.
    pub estimate: RGBColor,
}

impl Style {
    /// The capacity drawn on memory space `color`, if it is set on that space.
    pub fn capacity_of(&self, color: u32) -> Option<&Capacity> {
        self.capacity.as_ref().filter(|c| c.holds(color))
    }
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
            capacity_line: RGBColor(0x6f, 0x3c, 0xc3),
            over_capacity: RGBColor(0xe0, 0x5d, 0x00),
            block_labels: true,
            capacity: None,
            loop_bands: Default::default(),
            estimates: Default::default(),
            estimate: RGBColor(0x00, 0x8a, 0x7a),
        }
    }
}

/// The error of a drawing on `DB`, and the result of a drawing step.
type DrawError<DB> = DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>;
type DrawResult<DB> = Result<(), DrawError<DB>>;

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
    let (layout, map) = placement(area, analysis, space, view, style);
    let view = map.view;
    let p = Painter { area, style };

    let axes = p.axes(&layout, &map, module, space);
    area.fill(&style.background)?;
    p.step_axis(&layout, &axes)?;
    p.curve(&layout, analysis, space, &view)?;
    p.bands(&layout, &map, module, space, index)?;
    let drawn = p.blocks(&map, module, index)?;
    p.loop_bands(&layout, &map, &style.loop_bands)?;
    p.peak(&layout, &map, space)?;
    p.byte_axis(&layout, &axes)?;
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
    p.title_row(&layout, module, space, &drawn.kinds)
}

/// Where the parts of a drawing into `area` go, and the mapping of its diagram for `view`
/// (the whole space when `view` is invalid).
fn placement<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    analysis: &Analysis,
    space: &Space,
    view: &Viewport,
    style: &Style,
) -> (Layout, Mapping) {
    let layout = Layout::new(area.dim_in_pixel(), style.font_size);
    let view = view.or(Viewport::full(analysis, space));
    (layout, Mapping::new(view, layout.diagram))
}

/// The labels of the diagram's axes that [`draw_space`] draws into `area` for `view`, each
/// with its box in pixels of `area`: the step ticks, the byte ticks, then the two axis
/// titles. No two boxes overlap.
pub fn axis_labels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    module: &Module,
    analysis: &Analysis,
    space: &Space,
    view: &Viewport,
    style: &Style,
) -> Vec<(String, PxRect)> {
    let (layout, map) = placement(area, analysis, space, view, style);
    let axes = Painter { area, style }.axes(&layout, &map, module, space);
    let ticks = axes.steps.into_iter().chain(axes.bytes);
    ticks
        .map(|t| (t.label, t.rect))
        .chain(axes.titles.map(|(t, r)| (t.to_string(), r)))
        .collect()
}

/// The curve strip's labels that [`draw_space`] draws into `area` for `view` (the peak's, a
/// capacity's and its verdict), each with its box in pixels of `area`: no two overlap, and
/// each is inside the strip (`curve_labels.rs`).
pub fn curve_labels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    analysis: &Analysis,
    space: &Space,
    view: &Viewport,
    style: &Style,
) -> Vec<(String, PxRect)> {
    let (layout, map) = placement(area, analysis, space, view, style);
    let texts = Painter { area, style }.curve_texts(&layout, &map, space);
    texts.into_iter().map(|(_, t, r)| (t, r)).collect()
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

#[cfg(test)]
mod tests;
