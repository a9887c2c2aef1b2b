//! The occupied-bytes curve above the diagram (one point per pixel column, scaled to the
//! space's peak, or to the capacity when one is drawn above it) and the peak: a line at its
//! step through curve and diagram, with a label. The capacity line itself is `capacity.rs`,
//! a what-if's estimate over the curve `estimate.rs`.

use super::capacity::bytes_row;
use super::geometry::{Layout, Mapping, PxRect, Viewport};
use super::{DrawResult, Painter};
use crate::analysis::{Analysis, Space};
use crate::units::human_bytes;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// The curve's mapping: the steps in view, bytes from 0 to a third above the peak, or
/// above `capacity` when that is higher (room for the labels).
pub fn curve_mapping(
    space: &Space,
    view: &Viewport,
    rect: PxRect,
    capacity: Option<u64>,
) -> Mapping {
    let top = space.peak_bytes.max(capacity.unwrap_or(0)).max(1) as f64 * 1.35;
    Mapping::new(
        Viewport {
            y0: 0.0,
            y1: top,
            ..*view
        },
        rect,
    )
}

/// The curve's polylines in `r`: per pixel column the maximum of the steps it covers (of
/// the first `steps`), flat stretches as one segment, broken where a column covers no step.
fn curve_pieces(space: &Space, cm: &Mapping, r: PxRect, steps: usize) -> Vec<Vec<(i32, i32)>> {
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
    pieces
}

impl<DB: DrawingBackend> Painter<'_, DB> {
    /// The occupied-bytes curve over the steps in view, one point per pixel column (the
    /// maximum of the steps that column covers), scaled to the space's peak.
    pub(super) fn curve(
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
        let capacity = self.style.capacity_of(space.color);
        let cm = curve_mapping(space, view, r, capacity.map(|c| c.bytes));
        let steps = space.curve.len().min(analysis.steps as usize);
        let pieces = curve_pieces(space, &cm, r, steps);
        for piece in &pieces {
            let (Some(first), Some(last)) = (piece.first().copied(), piece.last().copied()) else {
                continue;
            };
            let mut area = Vec::with_capacity(piece.len() + 2);
            area.push((first.0, r.y1));
            area.extend_from_slice(piece);
            area.push((last.0, r.y1));
            self.area
                .draw(&Polygon::new(area, self.style.curve.mix(0.22).filled()))?;
        }
        if let Some(c) = capacity {
            self.over_capacity(
                &pieces,
                (space, &cm, steps),
                c.bytes,
                bytes_row(&cm, r, c.bytes),
            )?;
        }
        for piece in pieces {
            self.area
                .draw(&PathElement::new(piece, self.style.curve.stroke_width(1)))?;
        }
        if let Some(e) = self.style.estimates.iter().find(|e| e.color == space.color) {
            self.estimate_curve(e, &cm, r)?;
        }
        if let Some(c) = capacity {
            self.capacity_line(layout, &cm, c)?;
        }
        self.curve_labels(layout, &cm, space)
    }

    /// The curve's axis: the peak's bytes and 0 at the left, "occupied" beside them.
    fn curve_labels(&self, layout: &Layout, cm: &Mapping, space: &Space) -> DrawResult<DB> {
        let r = layout.curve;
        let muted = self.style.muted;
        let peak_y = cm.y_px(space.peak_bytes as f64).round() as i32;
        // A peak far under a capacity drawn sits on the zero line: "0" says enough there.
        let row = (self.style.font_size * 1.1).round() as i32;
        if self.style.capacity_of(space.color).is_none() || r.y1 - peak_y >= row {
            self.tick_left(r.x0, peak_y)?;
            let peak = human_bytes(space.peak_bytes);
            self.text(
                &peak,
                (r.x0 - 7, peak_y),
                0.92,
                muted,
                (HPos::Right, VPos::Center),
            )?;
        }
        self.text(
            "0",
            (r.x0 - 7, r.y1 - 1),
            0.92,
            muted,
            (HPos::Right, VPos::Bottom),
        )?;
        let at = (layout.title.x0, (r.y0 + r.y1) / 2);
        self.text("occupied", at, 0.92, muted, (HPos::Left, VPos::Center))
    }

    /// The peak: a line through curve and diagram at its step; then the strip's labels (the
    /// peak's, a capacity's and its verdict, `curve_labels.rs`).
    pub(super) fn peak(&self, layout: &Layout, map: &Mapping, space: &Space) -> DrawResult<DB> {
        let (c, d) = (layout.curve, layout.diagram);
        let color = self.style.peak;
        let x = space
            .peak_time
            .map(|t| map.x_px(f64::from(t) + 0.5).round() as i32)
            .filter(|&x| x >= d.x0 && x < d.x1);
        if let Some(x) = x {
            let line = |r: PxRect| PxRect {
                x0: x,
                x1: x + 1,
                ..r
            };
            self.fill(line(c), color)?;
            self.fill(line(d), color.mix(0.55))?;
        }
        self.curve_label_texts(layout, map, space)
    }
}
