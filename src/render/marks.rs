//! Marks drawn over a finished diagram: the blocks of the highlighted instruction, the
//! search matches (the rest dimmed, the current match strongest), the hovered and the
//! selected value (with its idle stretches and uses, `idle.rs`), and the time cursor. A view that redraws often keeps the diagram as a
//! picture and draws only these over it when they change.
//!
//! Outlines go around a block, outside it, so that a block one pixel wide still shows; like
//! the blocks, search matches too small to draw one by one go through the coverage raster.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::blocks::MIN_BLOCK_PX;
use super::coverage::Coverage;
use super::curve::curve_mapping;
use super::geometry::{Layout, Mapping, PxRect, Viewport};
use super::index::SpaceIndex;
use super::kind::{border_color, kind_color};
use super::{DrawResult, Painter, Style};
use crate::analysis::{Analysis, Space};
use crate::answers::idle::Stretch;
use crate::model::InstrId;
use crate::units::{group_digits, human_bytes};

/// What to mark on a diagram.
#[derive(Clone, Copy, Debug, Default)]
pub struct Marks<'a> {
    /// Outline every block of this instruction.
    pub instruction: Option<InstrId>,
    /// Search matches, in value order (values of other spaces are skipped): drawn over a
    /// dimmed diagram.
    pub matches: &'a [u32],
    /// The current search match: the strongest mark.
    pub current: Option<u32>,
    pub hovered: Option<u32>,
    pub selected: Option<u32>,
    /// The selected value's idle stretches: that part of its block faded and hatched.
    pub idle: &'a [Stretch],
    /// The steps of the selected value's uses: ticks across its block.
    pub uses: &'a [u32],
}

impl Marks<'_> {
    /// Whether there is anything to draw.
    pub fn is_empty(&self) -> bool {
        self.instruction.is_none()
            && self.matches.is_empty()
            && self.current.is_none()
            && self.hovered.is_none()
            && self.selected.is_none()
    }
}

/// Draws `marks` over a diagram drawn by [`super::draw_space`] into an area of the same
/// size with the same `view` and `style`.
pub fn draw_marks<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    index: &SpaceIndex,
    view: &Viewport,
    style: &Style,
    marks: &Marks,
) -> DrawResult<DB> {
    let layout = Layout::new(area.dim_in_pixel(), style.font_size);
    let d = layout.diagram;
    if d.is_empty() {
        return Ok(());
    }
    let map = Mapping::new(view.or(index.full()), d);
    let p = Painter { area, style };
    let px = |value: u32| index.block(value).and_then(|b| map.block_px(&b));

    if !marks.matches.is_empty() {
        // Everything else fades; the matches are drawn again on top, outlined.
        p.fill(d, style.background.mix(0.62))?;
        let mut small: Option<Coverage> = None;
        for &value in marks.matches {
            let (Some(r), Some(kind)) = (px(value), index.kind(value)) else {
                continue;
            };
            if r.width() >= MIN_BLOCK_PX && r.height() >= MIN_BLOCK_PX {
                let color = kind_color(kind);
                p.bordered(r, color, border_color(color))?;
                p.outline(r, 1, style.mark, d)?;
            } else {
                small
                    .get_or_insert_with(|| Coverage::new(d))
                    .paint(&grow(r, 1), 1);
            }
        }
        if let Some(cov) = &small {
            cov.for_each_rect(|r, _| p.fill(r, style.mark))?;
        }
    }
    if let Some(instruction) = marks.instruction {
        for b in index.of_instruction(instruction) {
            if let Some(r) = map.block_px(&b) {
                p.outline(r, 2, style.highlight, d)?;
            }
        }
    }
    if let Some(r) = marks.current.and_then(px) {
        p.outline(grow(r, 1), 1, style.background, d)?;
        p.outline(grow(r, 2), 3, style.mark, d)?;
    }
    if let Some(r) = marks.hovered.and_then(px) {
        p.outline(r, 1, style.text, d)?;
    }
    if let Some(b) = marks.selected.and_then(|v| index.block(v)) {
        p.idle_stretches(&map, &b, marks.idle, marks.uses, d)?;
    }
    if let Some(r) = marks.selected.and_then(px) {
        p.outline(r, 2, style.text, d)?;
        p.outline(grow(r, 2), 1, style.background, d)?;
    }
    Ok(())
}

/// Draws the time cursor at `step`: a line through curve and diagram, and above it the
/// step and the bytes occupied there.
pub fn draw_cursor<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    analysis: &Analysis,
    space: &Space,
    view: &Viewport,
    style: &Style,
    step: u32,
) -> DrawResult<DB> {
    let layout = Layout::new(area.dim_in_pixel(), style.font_size);
    let (c, d) = (layout.curve, layout.diagram);
    let view = view.or(Viewport::full(analysis, space));
    let map = Mapping::new(view, d);
    let x = map.x_px(f64::from(step) + 0.5).round() as i32;
    if x < d.x0 || x >= d.x1 {
        return Ok(());
    }
    let p = Painter { area, style };
    for r in [c, d] {
        p.fill(
            PxRect {
                x0: x,
                x1: x + 1,
                ..r
            },
            style.cursor,
        )?;
    }
    // The curve's value at the cursor, as a dot, and the label.
    let occupied = space.curve.get(step as usize).copied();
    if let Some(bytes) = occupied {
        let cm = curve_mapping(
            space,
            &view,
            c,
            style.capacity_of(space.color).map(|c| c.bytes),
        );
        let y = (cm.y_px(bytes as f64).round() as i32).min(c.y1 - 1);
        p.fill(
            PxRect {
                x0: x - 2,
                y0: y - 2,
                x1: x + 3,
                y1: y + 3,
            },
            style.cursor,
        )?;
    }
    let label = match occupied {
        Some(bytes) => format!(
            "step {} · {} occupied",
            group_digits(u64::from(step)),
            human_bytes(bytes)
        ),
        None => format!("step {}", group_digits(u64::from(step))),
    };
    let w = p.text_width(&label, 0.92);
    let h = (style.font_size * 1.25).round() as i32;
    let right = x + 6 + w + 6 <= c.x1;
    let x0 = if right { x + 1 } else { x - w - 12 };
    // Below the peak label's row, so the two never overlap.
    let y0 = c.y0 + h + 4;
    let bg = PxRect {
        x0,
        y0,
        x1: x0 + w + 11,
        y1: y0 + h,
    };
    p.fill(bg, style.background.mix(0.88))?;
    p.text(
        &label,
        (bg.x0 + 5, (bg.y0 + bg.y1) / 2),
        0.92,
        style.text,
        (HPos::Left, VPos::Center),
    )
}

impl<DB: DrawingBackend> Painter<'_, DB> {
    /// A frame `width` pixels wide around `r` (outside it), clipped to `clip`.
    fn outline(
        &self,
        r: PxRect,
        width: i32,
        color: impl Color + Copy,
        clip: PxRect,
    ) -> DrawResult<DB> {
        let o = grow(r, width);
        let sides = [
            PxRect { y1: r.y0, ..o },
            PxRect { y0: r.y1, ..o },
            PxRect {
                x1: r.x0,
                y0: r.y0,
                y1: r.y1,
                ..o
            },
            PxRect {
                x0: r.x1,
                y0: r.y0,
                y1: r.y1,
                ..o
            },
        ];
        for s in sides {
            self.fill(intersect(s, clip), color)?;
        }
        Ok(())
    }
}

fn grow(r: PxRect, by: i32) -> PxRect {
    PxRect {
        x0: r.x0 - by,
        y0: r.y0 - by,
        x1: r.x1 + by,
        y1: r.y1 + by,
    }
}

pub(super) fn intersect(a: PxRect, b: PxRect) -> PxRect {
    PxRect {
        x0: a.x0.max(b.x0),
        y0: a.y0.max(b.y0),
        x1: a.x1.min(b.x1),
        y1: a.y1.min(b.y1),
    }
}
