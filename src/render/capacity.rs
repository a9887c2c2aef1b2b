//! A capacity on the occupied-bytes curve ([`Style::capacity`](super::Style::capacity)): a
//! horizontal line at its bytes with its label (`TPU v5e · 16.0 GiB`), the part of the curve
//! over it shaded, and at the peak the verdict in words ("exceeds by 1.2 GiB" / "3.0 GiB of
//! headroom", from [`capacity::verdict`]). The curve's byte range reaches the capacity when it
//! is above the peak ([`super::curve::curve_mapping`]).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

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

    /// The capacity line across the curve with its label, and the verdict beside the peak.
    pub(super) fn capacity_line(
        &self,
        layout: &Layout,
        map: &Mapping,
        cm: &Mapping,
        space: &Space,
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
        let row = (self.style.font_size * 1.2).round() as i32;
        let label = capacity_label(c);
        // Below the line (over the peak's label row, the line would meet it) when there is
        // room, else above it.
        let above = y + 3 + row > r.y1;
        let (ty, vpos) = if above {
            (y - 2, VPos::Bottom)
        } else {
            (y + 3, VPos::Top)
        };
        let w = self.text_width(&label, 0.92);
        let x = r.x0 + 6;
        let box_y = if above { ty - row + 2 } else { ty - 1 };
        let bg = PxRect {
            x0: x - 3,
            y0: box_y,
            x1: x + w + 3,
            y1: box_y + row,
        };
        self.fill(bg, self.style.background.mix(0.8))?;
        self.text(&label, (x, ty), 0.92, color, (HPos::Left, vpos))?;
        self.verdict_at_peak(r, map, cm, space, c, y)
    }

    /// The verdict in words beside the peak, halfway between the peak and the line; at the
    /// right of the curve when the peak is out of view.
    fn verdict_at_peak(
        &self,
        r: PxRect,
        map: &Mapping,
        cm: &Mapping,
        space: &Space,
        c: &Capacity,
        line: i32,
    ) -> DrawResult<DB> {
        let words = verdict_words(space.peak_bytes, c);
        let fits = space.peak_bytes <= c.bytes;
        let color = if fits {
            self.style.capacity_line
        } else {
            self.style.over_capacity
        };
        let peak_y = bytes_row(cm, r, space.peak_bytes);
        let row = (self.style.font_size * 1.2).round() as i32;
        // Below the peak label's row at the top of the strip; in a strip too low for both
        // rows, as low as it goes.
        let hi = (r.y1 - row / 2).max(r.y0);
        let y = ((peak_y + line) / 2).clamp((r.y0 + row + row / 2).min(hi), hi);
        let w = self.text_width(&words, 0.92);
        let x = space
            .peak_time
            .map(|t| map.x_px(f64::from(t) + 0.5).round() as i32)
            .filter(|&x| x >= r.x0 && x < r.x1);
        // On the side of the peak with room, the left one first (the peak's own label goes
        // to its right); `x0` is where the text starts.
        let (tx, hpos, x0) = match x {
            Some(x) if x - 8 - w >= r.x0 => (x - 8, HPos::Right, x - 8 - w),
            Some(x) => (x + 8, HPos::Left, x + 8),
            None => (r.x1 - 6, HPos::Right, r.x1 - 6 - w),
        };
        let bg = PxRect {
            x0: x0 - 3,
            y0: y - row / 2,
            x1: x0 + w + 3,
            y1: y - row / 2 + row,
        };
        self.fill(bg, self.style.background.mix(0.8))?;
        self.text(&words, (tx, y), 0.92, color, (hpos, VPos::Center))
    }
}
