//! The idle stretches of a block (the steps its value is live but not used, from
//! [`crate::answers::idle::value_uses`]): that part of the block faded and hatched, and
//! each use a tick across the block at its step. Drawn by [`super::draw_marks`] for the
//! selected value.

use plotters::prelude::*;

use super::geometry::{Mapping, PxRect};
use super::marks::intersect;
use super::{DrawResult, Painter};
use crate::analysis::Block;
use crate::answers::idle::Stretch;

/// Pixels between hatch lines, at the base text size of 14.
const HATCH_PX: f64 = 7.0;

/// The pixels of the idle steps of `s` (strictly between `from` and `to`) on block `b`.
pub(super) fn idle_px(map: &Mapping, b: &Block, s: &Stretch) -> Option<PxRect> {
    let x0 = s.from.saturating_add(1).max(b.x0);
    let x1 = s.to.min(b.x1);
    if x0 >= x1 {
        return None;
    }
    map.data_rect_px(f64::from(x0), f64::from(x1), b.y0 as f64, b.y1 as f64)
}

impl<DB: DrawingBackend> Painter<'_, DB> {
    /// Block `b`'s idle stretches faded and hatched, and ticks at its uses' steps, clipped
    /// to `clip`.
    pub(super) fn idle_stretches(
        &self,
        map: &Mapping,
        b: &Block,
        stretches: &[Stretch],
        uses: &[u32],
        clip: PxRect,
    ) -> DrawResult<DB> {
        let style = self.style;
        let gap = (HATCH_PX * style.font_size / 14.0).round().max(4.0) as i32;
        for s in stretches {
            let Some(r) = idle_px(map, b, s) else {
                continue;
            };
            self.fill(r, style.background.mix(0.6))?;
            for (a, z) in hatch(r, gap) {
                self.area
                    .draw(&PathElement::new(vec![a, z], style.muted.stroke_width(1)))?;
            }
        }
        let Some(block) = map.block_px(b) else {
            return Ok(());
        };
        let reach = (style.font_size * 0.35).round() as i32;
        for &u in uses {
            if u < b.x0 || u >= b.x1 {
                continue;
            }
            let x = map.x_px(f64::from(u) + 0.5).round() as i32;
            let tick = PxRect {
                x0: x - 1,
                y0: block.y0 - reach,
                x1: x + 1,
                y1: block.y1 + reach,
            };
            self.fill(intersect(tick, clip), style.text)?;
        }
        Ok(())
    }
}

/// Lines rising at 45° across `r`, `gap` pixels apart, each clipped to `r`.
fn hatch(r: PxRect, gap: i32) -> Vec<((i32, i32), (i32, i32))> {
    let h = r.height();
    let mut lines = Vec::new();
    // The line starting at (c, y1) reaches (c + h, y0); t runs along it.
    let mut c = r.x0 - h;
    while c < r.x1 {
        let lo = (r.x0 - c).max(0);
        let hi = (r.x1 - c).min(h);
        if lo < hi {
            lines.push(((c + lo, r.y1 - lo), (c + hi, r.y1 - hi)));
        }
        c += gap;
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hatch_lines_stay_inside_the_rectangle() {
        let r = PxRect {
            x0: 10,
            y0: 20,
            x1: 50,
            y1: 30,
        };
        let lines = hatch(r, 7);
        assert!(!lines.is_empty());
        for ((x0, y0), (x1, y1)) in lines {
            for (x, y) in [(x0, y0), (x1, y1)] {
                assert!(r.x0 <= x && x <= r.x1 && r.y0 <= y && y <= r.y1, "{x},{y}");
            }
            // 45°: as far up as across.
            assert_eq!(x1 - x0, y0 - y1);
        }
    }
}
