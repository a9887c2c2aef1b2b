//! The several peaks of a space's occupied-bytes curve, navigation between them, and XLA's own
//! peak step.
//!
//! A peak is a local maximum of the curve: a run of equal values (one step or a plateau) with
//! lower values on both sides (or the curve's end), reported at the run's first step; only
//! peaks of at least `fraction` × the highest value are kept.

use serde::Serialize;

use crate::model::Module;

/// One local maximum of the curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Peak {
    pub step: u32,
    pub bytes: u64,
}

/// The fraction of the highest value a peak must reach by default.
pub const DEFAULT_FRACTION: f64 = 0.5;

/// Local maxima of `curve` of at least `fraction` of its highest value (and above 0),
/// sorted by step.
pub fn peaks(curve: &[u64], fraction: f64) -> Vec<Peak> {
    let highest = curve.iter().copied().max().unwrap_or(0);
    let fraction = if fraction.is_finite() {
        fraction.clamp(0.0, 1.0)
    } else {
        1.0
    };
    let floor = ((highest as f64) * fraction).ceil() as u64;
    let mut out = Vec::new();
    let mut i = 0usize;
    while i < curve.len() {
        let v = curve[i];
        let mut j = i;
        while j + 1 < curve.len() && curve[j + 1] == v {
            j += 1;
        }
        let left_lower = i == 0 || curve[i - 1] < v;
        let right_lower = j + 1 == curve.len() || curve[j + 1] < v;
        if left_lower && right_lower && v > 0 && v >= floor {
            out.push(Peak {
                step: i as u32,
                bytes: v,
            });
        }
        i = j + 1;
    }
    out
}

/// The first peak after `step`.
pub fn next_peak(peaks: &[Peak], step: u32) -> Option<Peak> {
    let at = peaks.partition_point(|p| p.step <= step);
    peaks.get(at).copied()
}

/// The last peak before `step`.
pub fn previous_peak(peaks: &[Peak], step: u32) -> Option<Peak> {
    let at = peaks.partition_point(|p| p.step < step);
    at.checked_sub(1).map(|i| peaks[i])
}

/// The step XLA printed as its peak (`Live ranges at N (peak):`), if the dump has one.
pub fn xla_peak_step(module: &Module) -> Option<u32> {
    module.schedule.as_ref()?.peak.as_ref().map(|p| p.time)
}

/// XLA's peak-list figure: the sum of the bytes of its entries (logical sizes of the values
/// live at its peak step, all memory spaces together).
pub fn xla_peak_bytes(module: &Module) -> Option<u64> {
    let peak = module.schedule.as_ref()?.peak.as_ref()?;
    Some(
        peak.entries
            .iter()
            .fold(0u64, |s, e| s.saturating_add(e.bytes)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_maxima_above_the_fraction() {
        //            0  1  2  3  4  5  6  7  8  9
        let curve = [1, 5, 3, 9, 9, 2, 8, 10, 4, 4];
        let p = peaks(&curve, 0.5);
        let steps: Vec<(u32, u64)> = p.iter().map(|p| (p.step, p.bytes)).collect();
        // 5 at 1 and the plateau 9 at 3..4 and 10 at 7; nothing below 5.
        assert_eq!(steps, [(1, 5), (3, 9), (7, 10)]);
        assert_eq!(peaks(&curve, 0.95).len(), 1);
        assert_eq!(peaks(&curve, 0.0).len(), 3);
        // A rising end and a flat curve.
        assert_eq!(peaks(&[1, 2, 3], 0.5), [Peak { step: 2, bytes: 3 }]);
        assert_eq!(peaks(&[4, 4, 4], 0.5), [Peak { step: 0, bytes: 4 }]);
        assert!(peaks(&[], 0.5).is_empty());
        assert!(peaks(&[0, 0], 0.5).is_empty());
        assert_eq!(peaks(&curve, f64::NAN).len(), 1);
    }

    #[test]
    fn navigation() {
        let p = peaks(&[1, 5, 3, 9, 9, 2, 8, 10, 4, 4], 0.5);
        assert_eq!(next_peak(&p, 0).map(|p| p.step), Some(1));
        assert_eq!(next_peak(&p, 1).map(|p| p.step), Some(3));
        assert_eq!(next_peak(&p, 7), None);
        assert_eq!(previous_peak(&p, 7).map(|p| p.step), Some(3));
        assert_eq!(previous_peak(&p, 1), None);
        assert_eq!(previous_peak(&p, 100).map(|p| p.step), Some(7));
    }
}
