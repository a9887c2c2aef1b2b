//! What frames a memory space's plots: the title row (the space's name and figures on the
//! left, the legend of the kinds drawn on the right), the step axis with its grid lines and
//! the byte axis of the diagram.

use super::geometry::{Layout, Mapping, PxRect};
use super::kind::{border_color, kind_color, kind_index};
use super::ticks::{self, Fit, Tick};
use super::{DrawError, DrawResult, Painter};
use crate::analysis::Space;
use crate::analysis::ValueKind;
use crate::model::{memory_space_label, Module};
use crate::units::{count, group_digits, human_bytes};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// Axis labels' size, relative to the style's font.
const AXIS_SCALE: f64 = 0.92;
/// The axis titles: the step axis, and the byte axis (allocations stacked, offsets in them).
const STEP_TITLE: &str = "step";
const BYTE_TITLE: &str = "allocation + offset";

/// What the axes of one drawing show: the ticks of each, and each title with its box.
pub(super) struct Axes {
    pub(super) steps: Vec<Tick>,
    pub(super) bytes: Vec<Tick>,
    pub(super) titles: [(&'static str, PxRect); 2],
}

impl<DB: DrawingBackend> Painter<'_, DB> {
    /// Title left (the space's label, `1 vmem`, `0 default (HBM)`, and a few facts),
    /// legend right.
    pub(super) fn title_row(
        &self,
        layout: &Layout,
        module: &Module,
        space: &Space,
        kinds: &[bool; ValueKind::ALL.len()],
    ) -> DrawResult<DB> {
        let t = layout.title;
        let y = (t.y0 + t.y1) / 2;
        let title = memory_space_label(space.color, module.backend());
        let (text, muted) = (self.style.text, self.style.muted);
        self.bold(&title, (t.x0, y), 1.15, text, (HPos::Left, VPos::Center))?;
        let legend_x = self.legend(t.x1, y, kinds)?;

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
            self.text(&facts, (fx, y), 1.0, muted, (HPos::Left, VPos::Center))?;
        }
        Ok(())
    }

    /// The legend, ending at `right` and centred on `y`: a swatch and a label per kind drawn.
    /// Returns where it starts.
    fn legend(
        &self,
        right: i32,
        y: i32,
        kinds: &[bool; ValueKind::ALL.len()],
    ) -> Result<i32, DrawError<DB>> {
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
        let legend_x = right - total;
        let mut x = legend_x;
        for (k, w) in entries.iter().zip(&widths) {
            let sq = PxRect {
                x0: x,
                y0: y - swatch / 2,
                x1: x + swatch,
                y1: y - swatch / 2 + swatch,
            };
            let color = kind_color(*k);
            self.bordered(sq, color, border_color(color))?;
            let at = (x + swatch + 5, y);
            self.text(
                k.label(),
                at,
                1.0,
                self.style.text,
                (HPos::Left, VPos::Center),
            )?;
            x += swatch + 5 + w + 14;
        }
        Ok(legend_x)
    }

    /// The ticks of both axes of the diagram and the boxes of the axis titles, as
    /// [`Painter::step_axis`] and [`Painter::byte_axis`] draw them.
    pub(super) fn axes(
        &self,
        layout: &Layout,
        map: &Mapping,
        module: &Module,
        space: &Space,
    ) -> Axes {
        let d = layout.diagram;
        let width = |s: &str| self.text_width(s, AXIS_SCALE);
        let height = (self.style.font_size * AXIS_SCALE).round() as i32;
        let top = d.y1 + 4;
        let right = layout.title.x1.max(d.x1);
        let step_title = PxRect {
            x0: d.x0 - 12 - width(STEP_TITLE),
            y0: top,
            x1: d.x0 - 12,
            y1: top + height,
        };
        let step_fit = Fit {
            width: &width,
            height,
            gap: height,
            bounds: PxRect {
                x0: d.x0 - 6,
                y0: top,
                x1: right,
                y1: top + height,
            },
        };
        let steps = ticks::step_axis(map, &step_fit, top);
        let byte_title = PxRect {
            x0: layout.title.x0,
            y0: d.y0 - 8 - height,
            x1: layout.title.x0 + width(BYTE_TITLE),
            y1: d.y0 - 8,
        };
        let byte_fit = Fit {
            width: &width,
            height,
            gap: height / 2,
            bounds: PxRect {
                x0: layout.title.x0,
                y0: byte_title.y1 + 2,
                x1: d.x0 - 7,
                y1: step_title.y0 - 1,
            },
        };
        let alloc = |a: u32| {
            module
                .allocations
                .get(a as usize)
                .map(|a| (u64::from(a.index), a.size))
        };
        let bytes = ticks::byte_axis(map, &space.layout, &alloc, &byte_fit, d.x0 - 7);
        Axes {
            steps,
            bytes,
            titles: [(STEP_TITLE, step_title), (BYTE_TITLE, byte_title)],
        }
    }

    /// Grid lines at the step ticks through curve and diagram, labels under the diagram.
    pub(super) fn step_axis(&self, layout: &Layout, axes: &Axes) -> DrawResult<DB> {
        let d = layout.diagram;
        let muted = self.style.muted;
        for t in &axes.steps {
            for r in [layout.curve, d] {
                self.fill(
                    PxRect {
                        x0: t.px,
                        x1: t.px + 1,
                        ..r
                    },
                    self.style.grid,
                )?;
            }
            let tick = PxRect {
                x0: t.px,
                y0: d.y1,
                x1: t.px + 1,
                y1: d.y1 + 3,
            };
            self.fill(tick, self.style.frame)?;
            let at = (t.rect.x0, t.rect.y0);
            self.text(&t.label, at, AXIS_SCALE, muted, (HPos::Left, VPos::Top))?;
        }
        let (title, r) = axes.titles[0];
        self.text(
            title,
            (r.x1, r.y0),
            AXIS_SCALE,
            muted,
            (HPos::Right, VPos::Top),
        )
    }

    /// Byte ticks left of the diagram: allocation starts (`alloc 12`, in the text colour,
    /// with a longer tick) and offsets inside an allocation (`+1.5 MiB`).
    pub(super) fn byte_axis(&self, layout: &Layout, axes: &Axes) -> DrawResult<DB> {
        let d = layout.diagram;
        let (text, muted) = (self.style.text, self.style.muted);
        for t in &axes.bytes {
            self.tick_left(d.x0, t.px)?;
            if t.boundary {
                self.tick_left(d.x0 - 3, t.px)?;
            }
            let color = if t.boundary { text } else { muted };
            let at = (t.rect.x1, (t.rect.y0 + t.rect.y1) / 2);
            self.text(&t.label, at, AXIS_SCALE, color, (HPos::Right, VPos::Center))?;
        }
        let (title, r) = axes.titles[1];
        self.text(
            title,
            (r.x0, r.y1),
            AXIS_SCALE,
            muted,
            (HPos::Left, VPos::Bottom),
        )
    }

    /// A tick mark left of `x` at height `y`.
    pub(super) fn tick_left(&self, x: i32, y: i32) -> DrawResult<DB> {
        let tick = PxRect {
            x0: x - 4,
            y0: y,
            x1: x,
            y1: y + 1,
        };
        self.fill(tick, self.style.frame)
    }
}
