//! The what-if's estimated curve ([`crate::answers::whatif`]) over the real one: dashed (a
//! dash of 4 columns, a gap of 3), with its peak and, against a capacity drawn, its verdict,
//! every label saying it is an estimate.

use super::geometry::{Mapping, PxRect};
use super::{DrawResult, Painter};
use crate::answers::capacity::verdict;
use crate::units::{group_digits, human_bytes};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// One memory space's estimated curve, as the render draws it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EstimateCurve {
    pub color: u32,
    /// Occupied bytes per step, an estimate.
    pub curve: Vec<u64>,
    pub peak_bytes: u64,
    pub peak_step: Option<u32>,
}

impl From<&crate::answers::whatif::Estimate> for EstimateCurve {
    fn from(e: &crate::answers::whatif::Estimate) -> EstimateCurve {
        EstimateCurve {
            color: e.color,
            curve: e.curve.clone(),
            peak_bytes: e.peak_after,
            peak_step: e.step_after,
        }
    }
}

/// Whether column `x` (from the curve's left edge) is on a dash.
pub fn on_dash(x: i32) -> bool {
    x.rem_euclid(7) < 4
}

/// The dashes of `curve` in `r`: per pixel column on a dash, the row of the highest of the
/// steps it covers.
pub fn dash_columns(curve: &[u64], cm: &Mapping, r: PxRect) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    for x in r.x0..r.x1 {
        if !on_dash(x - r.x0) {
            continue;
        }
        let lo = cm.step_at(f64::from(x)).floor().max(0.0) as usize;
        let hi = (cm.step_at(f64::from(x + 1)).ceil() as usize).min(curve.len());
        if lo >= hi {
            continue;
        }
        let max = curve[lo..hi].iter().copied().max().unwrap_or(0);
        let y = (cm.y_px(max as f64).round() as i32).clamp(r.y0, r.y1 - 1);
        out.push((x, y));
    }
    out
}

/// The label of an estimate: `estimate: peak 1.99 GiB (2,133,518,848 B) @ step 575`, and
/// against a capacity, whether it fits.
pub fn estimate_label(e: &EstimateCurve, capacity: Option<&crate::answers::capacity::Capacity>) -> String {
    let mut label = format!(
        "estimate: peak {} ({} B) @ step {}",
        human_bytes(e.peak_bytes),
        group_digits(e.peak_bytes),
        e.peak_step.map_or("-".to_string(), |t| group_digits(u64::from(t)))
    );
    if let Some(c) = capacity {
        let v = verdict(e.peak_bytes, c);
        if v.fits {
            label.push_str(&format!(", fits {} with {} to spare", human_bytes(c.bytes), human_bytes(v.headroom_bytes)));
        } else {
            label.push_str(&format!(", exceeds {} by {}", human_bytes(c.bytes), human_bytes(v.excess_bytes)));
        }
    }
    label
}

impl<DB: DrawingBackend> Painter<'_, DB> {
    /// The estimate dashed over the curve in `r`, a mark at its peak, and its label under the
    /// real peak's.
    pub(super) fn estimate_curve(&self, e: &EstimateCurve, cm: &Mapping, r: PxRect) -> DrawResult<DB> {
        let color = self.style.estimate;
        for (x, y) in dash_columns(&e.curve, cm, r) {
            self.fill(PxRect { x0: x, x1: x + 1, y0: y, y1: y + 2 }, color)?;
        }
        if let Some(t) = e.peak_step {
            let x = cm.x_px(f64::from(t) + 0.5).round() as i32;
            let y = (cm.y_px(e.peak_bytes as f64).round() as i32).clamp(r.y0, r.y1 - 1);
            if r.x0 <= x && x < r.x1 {
                self.fill(PxRect { x0: x - 2, x1: x + 3, y0: y - 2, y1: y + 3 }, color)?;
            }
        }
        let label = estimate_label(e, self.style.capacity.as_ref());
        let row = (self.style.font_size * 1.1).round() as i32;
        self.text(&label, (r.x1 - 6, r.y0 + 4 + row), 0.92, color, (HPos::Right, VPos::Top))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answers::capacity::parse_capacity;
    use crate::render::geometry::Viewport;

    #[test]
    fn dashes_and_labels() {
        assert_eq!((0..14).filter(|&x| on_dash(x)).collect::<Vec<_>>(), [0, 1, 2, 3, 7, 8, 9, 10]);
        // Ten steps over ten columns, bytes 0..100 over rows 100..0.
        let r = PxRect { x0: 0, x1: 10, y0: 0, y1: 100 };
        let cm = Mapping::new(Viewport { x0: 0.0, x1: 10.0, y0: 0.0, y1: 100.0 }, r);
        let curve: Vec<u64> = (0..10).map(|t| t * 10).collect();
        let cols = dash_columns(&curve, &cm, r);
        assert_eq!(cols.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 1, 2, 3, 7, 8, 9]);
        assert_eq!(cols[0].1, 99, "0 bytes on the last row");
        assert_eq!(cols[6].1, 10, "90 bytes at row 10");
        let e = EstimateCurve { color: 0, curve, peak_bytes: 2 << 30, peak_step: Some(575) };
        assert_eq!(estimate_label(&e, None), "estimate: peak 2.0 GiB (2,147,483,648 B) @ step 575");
        let cap = parse_capacity("1GiB").unwrap();
        assert!(estimate_label(&e, Some(&cap)).ends_with(", exceeds 1.0 GiB by 1.0 GiB"));
    }
}
