//! The several peaks of a space's occupied-bytes curve, navigation between them, and XLA's own
//! peak step.
//!
//! A peak is a local maximum of the curve: a run of equal values (one step or a plateau) with
//! lower values on both sides (or the curve's end), reported at the run's first step; only
//! peaks of at least `fraction` × the highest value are kept ([`peaks`]).
//!
//! **The module's peaks as a list** ([`prominent_peaks`]) keeps, of those, the peaks that
//! stand out: a peak's *prominence* is how far the curve must descend from it before it
//! reaches a higher value (topographic prominence): on each side, walk from the peak until
//! a value strictly higher than the peak (or the end of the curve, the curve being 0 before
//! its first step and after its last); the lowest value met on that side is its col; the
//! prominence is the peak's height less the higher of its two cols. A value equal to the
//! peak stops the walk to the left but not to the right: of equal peaks the first is the
//! summit, and a later one is as prominent as the dip between them is deep. The (first)
//! highest peak's prominence is its height, so it is always listed. By default ([`DEFAULT_FRACTION`],
//! [`DEFAULT_PROMINENCE`]) a listed peak reaches half the highest value and its prominence
//! is at least 5 % of the highest value: a 782 MB curve lists peaks that stand at least
//! 39 MB above the valleys around them, not the 20,271 local maxima of a saw-toothed
//! schedule.

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

/// A listed peak's prominence must reach this fraction of the highest value by default.
pub const DEFAULT_PROMINENCE: f64 = 0.05;

/// `fraction` (clamped to 0..=1, 1 when not a number) of `highest`, rounded up.
fn share_of(highest: u64, fraction: f64) -> u64 {
    let fraction = if fraction.is_finite() {
        fraction.clamp(0.0, 1.0)
    } else {
        1.0
    };
    ((highest as f64) * fraction).ceil() as u64
}

/// Local maxima of `curve` of at least `fraction` of its highest value (and above 0),
/// sorted by step.
pub fn peaks(curve: &[u64], fraction: f64) -> Vec<Peak> {
    local_maxima(curve, fraction)
        .into_iter()
        .map(|(p, _)| p)
        .collect()
}

/// The peaks of [`peaks`] whose prominence (see the module's documentation) is at least
/// `prominence` of the curve's highest value, sorted by step; the highest is always one.
pub fn prominent_peaks(curve: &[u64], fraction: f64, prominence: f64) -> Vec<Peak> {
    let highest = curve.iter().copied().max().unwrap_or(0);
    let least = share_of(highest, prominence);
    let maxima = local_maxima(curve, fraction);
    let n = curve.len();
    let left = cols(
        curve.iter().copied(),
        true,
        maxima.iter().map(|(p, _)| p.step as usize),
    );
    // The right cols, walking the curve backwards, at the runs' last steps (last peak first).
    let right = cols(
        curve.iter().rev().copied(),
        false,
        maxima.iter().rev().map(|&(_, last)| n - 1 - last),
    );
    maxima
        .iter()
        .zip(&left)
        .zip(right.iter().rev())
        .filter(|&((&(p, _), &l), &r)| p.bytes - l.max(r).min(p.bytes) >= least)
        .map(|((&(p, _), _), _)| p)
        .collect()
}

/// At each of the points `at` of `values` (ascending), the lowest value between it and the
/// nearest higher value before it (itself included; with `equal_stops`, a value equal to it
/// counts as higher), or 0 when none is (the curve is 0 beyond its ends). A stack of the
/// values not yet overtaken, each with the lowest value met since it.
fn cols(
    values: impl Iterator<Item = u64>,
    equal_stops: bool,
    at: impl Iterator<Item = usize>,
) -> Vec<u64> {
    let mut at = at.peekable();
    let mut out = Vec::new();
    let mut stack: Vec<(u64, u64)> = Vec::new();
    for (i, v) in values.enumerate() {
        if at.peek().is_none() {
            break;
        }
        let mut low = v;
        while let Some(&(height, since)) = stack.last() {
            if height > v || (equal_stops && height == v) {
                break;
            }
            low = low.min(height).min(since);
            stack.pop();
        }
        let col = match stack.last_mut() {
            Some(top) => {
                top.1 = top.1.min(low);
                top.1
            }
            None => 0,
        };
        while at.next_if_eq(&i).is_some() {
            out.push(col);
        }
        stack.push((v, v));
    }
    out
}

/// The local maxima of [`peaks`], each with the last step of its run.
fn local_maxima(curve: &[u64], fraction: f64) -> Vec<(Peak, usize)> {
    let highest = curve.iter().copied().max().unwrap_or(0);
    let floor = share_of(highest, fraction);
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
            let peak = Peak {
                step: i as u32,
                bytes: v,
            };
            out.push((peak, j));
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

    /// Prominence as the module's documentation words it, walked out step by step.
    fn prominence_by_walking(curve: &[u64], first: usize, last: usize) -> u64 {
        let h = curve[first];
        let mut col_left = 0;
        let mut low = h;
        for &v in curve[..first].iter().rev() {
            if v >= h {
                col_left = low;
                break;
            }
            low = low.min(v);
        }
        let mut col_right = 0;
        let mut low = h;
        for &v in &curve[last + 1..] {
            if v > h {
                col_right = low;
                break;
            }
            low = low.min(v);
        }
        h - col_left.max(col_right)
    }

    #[test]
    fn prominence_by_hand() {
        //            0  1  2  3  4  5  6  7   8  9
        let curve = [1, 5, 3, 9, 9, 2, 8, 10, 4, 4];
        // 5 at 1: down to 3 before 9, so 2; the plateau 9: down to 2 before 10, so 7; 10 is
        // the highest, its height.
        let at = |prominence| -> Vec<u32> {
            prominent_peaks(&curve, 0.0, prominence)
                .iter()
                .map(|p| p.step)
                .collect()
        };
        assert_eq!(at(0.2), [1, 3, 7]);
        assert_eq!(at(0.21), [3, 7]);
        assert_eq!(at(0.7), [3, 7]);
        assert_eq!(at(0.71), [7]);
        assert_eq!(at(1.0), [7]);
        // The height fraction still applies: 5 is below 0.6 × 10.
        assert_eq!(
            prominent_peaks(&curve, 0.6, 0.0),
            [Peak { step: 3, bytes: 9 }, Peak { step: 7, bytes: 10 }]
        );
    }

    #[test]
    fn prominence_of_plateaus_equal_peaks_and_edges() {
        // Of two equal peaks the first is the summit; the second is as prominent as the dip
        // between them is deep (5 − 1).
        let equal = [0, 5, 1, 5, 0];
        assert_eq!(
            prominent_peaks(&equal, 0.5, 1.0),
            [Peak { step: 1, bytes: 5 }]
        );
        assert_eq!(prominent_peaks(&equal, 0.5, 0.8).len(), 2);
        assert_eq!(prominent_peaks(&equal, 0.5, 0.81).len(), 1);
        // A plateau, reported at its first step, is one peak; a dip of 1 in 10 is not one.
        assert_eq!(
            prominent_peaks(&[2, 10, 10, 10, 9, 10, 3], 0.5, 0.2),
            [Peak { step: 1, bytes: 10 }]
        );
        // Monotone curves: the peak is at the high end.
        assert_eq!(
            prominent_peaks(&[1, 2, 3, 4], 0.5, 0.05),
            [Peak { step: 3, bytes: 4 }]
        );
        assert_eq!(
            prominent_peaks(&[4, 3, 2, 1], 0.5, 0.05),
            [Peak { step: 0, bytes: 4 }]
        );
        // A single step, a flat curve, an empty one, zeros.
        assert_eq!(
            prominent_peaks(&[7], 0.5, 0.05),
            [Peak { step: 0, bytes: 7 }]
        );
        assert_eq!(
            prominent_peaks(&[4, 4, 4], 0.5, 0.05),
            [Peak { step: 0, bytes: 4 }]
        );
        assert!(prominent_peaks(&[], 0.5, 0.05).is_empty());
        assert!(prominent_peaks(&[0, 0], 0.5, 0.05).is_empty());
        // Not a number: the highest only.
        let curve = [1, 5, 3, 9, 9, 2, 8, 10, 4, 4];
        assert_eq!(prominent_peaks(&curve, 0.0, f64::NAN).len(), 1);
    }

    #[test]
    fn prominence_agrees_with_walking_on_random_curves() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..500 {
            let n = (next() % 40) as usize;
            let curve: Vec<u64> = (0..n).map(|_| next() % 12).collect();
            let highest = curve.iter().copied().max().unwrap_or(0);
            for prominence in [0.0, 0.1, 0.3, 0.6] {
                let least = share_of(highest, prominence);
                let expected: Vec<Peak> = local_maxima(&curve, 0.0)
                    .into_iter()
                    .filter(|&(p, last)| {
                        prominence_by_walking(&curve, p.step as usize, last) >= least
                    })
                    .map(|(p, _)| p)
                    .collect();
                assert_eq!(
                    prominent_peaks(&curve, 0.0, prominence),
                    expected,
                    "{curve:?} at {prominence}"
                );
            }
        }
    }
}
