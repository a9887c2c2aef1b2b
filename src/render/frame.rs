//! What frames a memory space's plots: the title row (the space's name and figures on the
//! left, the legend of the kinds drawn on the right), the step axis with its grid lines and
//! the byte axis of the diagram.

use super::geometry::{Layout, Mapping, PxRect};
use super::kind::{border_color, kind_color, kind_index};
use crate::analysis::ValueKind;
use super::{ticks, DrawError, DrawResult, Painter};
use crate::analysis::Space;
use crate::model::memory_space_name;
use crate::units::{axis_bytes, count, group_digits, human_bytes};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

impl<DB: DrawingBackend> Painter<'_, DB> {
    /// Title left ("vmem (color 1)" and a few facts), legend right.
    pub(super) fn title_row(
        &self,
        layout: &Layout,
        space: &Space,
        kinds: &[bool; 5],
    ) -> DrawResult<DB> {
        let t = layout.title;
        let y = (t.y0 + t.y1) / 2;
        let title = format!("{} (color {})", memory_space_name(space.color), space.color);
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
    fn legend(&self, right: i32, y: i32, kinds: &[bool; 5]) -> Result<i32, DrawError<DB>> {
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

    /// Grid lines at the step ticks through curve and diagram, labels under the diagram.
    pub(super) fn step_axis(&self, layout: &Layout, map: &Mapping) -> DrawResult<DB> {
        let d = layout.diagram;
        let max_ticks = (d.width() / 90).max(2) as usize;
        let y = d.y1 + 4;
        let muted = self.style.muted;
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
            let tick = PxRect {
                x0: x,
                y0: d.y1,
                x1: x + 1,
                y1: d.y1 + 3,
            };
            self.fill(tick, self.style.frame)?;
            let label = group_digits(t);
            self.text(&label, (x, y), 0.92, muted, (HPos::Center, VPos::Top))?;
        }
        self.text(
            "step",
            (d.x0 - 12, y),
            0.92,
            muted,
            (HPos::Right, VPos::Top),
        )
    }

    /// Byte ticks left of the diagram.
    pub(super) fn byte_axis(&self, layout: &Layout, map: &Mapping) -> DrawResult<DB> {
        let d = layout.diagram;
        let max_ticks = (d.height() / 42).max(2) as usize;
        let (ticks, step) = ticks::byte_ticks(map.view.y0, map.view.y1, max_ticks);
        let largest = ticks.last().copied().unwrap_or(0);
        let muted = self.style.muted;
        for t in ticks {
            let y = map.y_px(t as f64).round() as i32;
            if y < d.y0 || y > d.y1 {
                continue;
            }
            self.tick_left(d.x0, y)?;
            let label = axis_bytes(t, step, largest);
            self.text(
                &label,
                (d.x0 - 7, y),
                0.92,
                muted,
                (HPos::Right, VPos::Center),
            )?;
        }
        let at = (layout.title.x0, d.y0 - 8);
        self.text("offset", at, 0.92, muted, (HPos::Left, VPos::Bottom))
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
