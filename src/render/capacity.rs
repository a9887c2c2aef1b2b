//! A capacity on the occupied-bytes curve ([`Style::capacity`](super::Style::capacity)): a
//! horizontal line at its bytes, the part of the curve over it shaded, and the texts of its
//! label (`TPU v5e · 16.0 GiB`) and of the verdict in words ("exceeds by 1.2 GiB" / "3.0 GiB
//! of headroom", from [`capacity::verdict`]), which `curve_labels.rs` places. The curve's byte range reaches the capacity when it
//! is above the peak ([`super::curve::curve_mapping`]).

use plotters::prelude::*;

use super::geometry::{Layout, Mapping, PxRect};
use super::{DrawResult, Painter};
use crate::analysis::Space;
use crate::answers::capacity::{self, Capacity};
use crate::units::human_bytes;

/// What the line is labelled: the device's name (or "capacity" for a size typed) and the
/// bytes ([`Capacity::shown`]: a typed size as typed).
pub fn capacity_label(c: &Capacity) -> String {
    let name = c.device.map_or("capacity", |d| d.name);
    format!("{name} · {}", c.shown())
}

/// The verdict at the peak in a few words: "exceeds by 1.2 GiB" or "3.0 GiB of headroom".
pub fn verdict_words(peak_bytes: u64, c: &Capacity) -> String {
    let v = capacity::verdict(peak_bytes, c);
    if v.fits {
        format!("{} of headroom", human_bytes(v.headroom_bytes))
    } else {
        format!("exceeds by {}", human_bytes(v.excess_bytes))
    }
}

/// The pixel row of `bytes` on the curve drawn with `cm` in `r` (the zero line is its last
/// row).
pub(super) fn bytes_row(cm: &Mapping, r: PxRect, bytes: u64) -> i32 {
    (cm.y_px(bytes as f64).round() as i32).clamp(r.y0, (r.y1 - 1).max(r.y0))
}

impl<DB: DrawingBackend> Painter<'_, DB> {
    /// Shades what of the curve's `pieces` (pairs of points, one flat segment each) is
    /// above the row `line` of `capacity`; a segment whose steps exceed the capacity by less
    /// than a pixel still gets a 1 px mark just above the line, so that no excess is
    /// invisible. `cm` is the curve's mapping and `steps` the steps it covers.
    pub(super) fn over_capacity(
        &self,
        pieces: &[Vec<(i32, i32)>],
        (space, cm, steps): (&Space, &Mapping, usize),
        capacity: u64,
        line: i32,
    ) -> DrawResult<DB> {
        let shade = self.style.over_capacity.mix(0.7);
        // Whether a step of the columns `[x0, x1)` is over the capacity (as `curve_pieces`
        // takes a column's steps).
        let exceeds = |x0: i32, x1: i32| {
            let lo = cm.step_at(f64::from(x0)).floor().max(0.0) as usize;
            let hi = (cm.step_at(f64::from(x1)).ceil() as usize).min(steps);
            space
                .curve
                .get(lo..hi)
                .is_some_and(|c| c.iter().any(|&b| b > capacity))
        };
        for piece in pieces {
            for seg in piece.chunks_exact(2) {
                let ((x0, y), (x1, _)) = (seg[0], seg[1]);
                let y0 = if y < line {
                    y
                } else if exceeds(x0, x1) {
                    line - 1
                } else {
                    continue;
                };
                self.fill(
                    PxRect {
                        x0,
                        y0,
                        x1,
                        y1: line,
                    },
                    shade,
                )?;
            }
        }
        Ok(())
    }

    /// The capacity line across the curve (its label and the verdict are placed with the
    /// strip's other labels, `curve_labels.rs`).
    pub(super) fn capacity_line(
        &self,
        layout: &Layout,
        cm: &Mapping,
        c: &Capacity,
    ) -> DrawResult<DB> {
        let r = layout.curve;
        let color = self.style.capacity_line;
        let y = bytes_row(cm, r, c.bytes);
        self.fill(
            PxRect {
                y0: y,
                y1: y + 1,
                ..r
            },
            color,
        )?;
        Ok(())
    }
}
