//! The peaks of one memory space on both sides and the two occupied-bytes curves on one
//! axis.
//!
//! Two compilations of one program have schedules of different lengths, so their steps do
//! not correspond: both curves are put on **relative program position** `0..1`, step `t` of
//! a schedule of `n` steps covering `[t/n, (t+1)/n)`. [`resample_max`] cuts `0..1` into equal
//! bins and keeps the highest occupied bytes of the steps that overlap each bin, so each
//! resampled curve still reaches its side's peak.

use serde::Serialize;

use crate::analysis::{Analysis, Space};

/// Points per resampled curve in [`SpacePeaks`].
pub const CURVE_POINTS: usize = 1024;

/// One memory space's peaks on both sides (0 and `None` for a side without that colour).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpacePeaks {
    pub color: u32,
    /// Occupied bytes at the peak ([`Space::peak_bytes`]).
    pub base_peak_bytes: u64,
    pub new_peak_bytes: u64,
    /// `new_peak_bytes - base_peak_bytes`.
    pub delta_bytes: i64,
    /// `delta_bytes` in % of `base_peak_bytes`; `None` when that is 0.
    pub delta_percent: Option<f64>,
    /// First step at the peak.
    pub base_peak_step: Option<u32>,
    pub new_peak_step: Option<u32>,
    /// Schedule lengths as steps on the time axis ([`Analysis::steps`]).
    pub base_steps: u32,
    pub new_steps: u32,
    /// Relative position of each peak step's middle, `(t + 0.5) / steps`.
    pub base_peak_position: Option<f64>,
    pub new_peak_position: Option<f64>,
    /// Both curves on relative position: [`CURVE_POINTS`] bins each ([`resample_max`]).
    #[serde(skip)]
    pub base_curve: Vec<u64>,
    #[serde(skip)]
    pub new_curve: Vec<u64>,
}

/// Every colour present on either side, ascending.
pub fn colors(base: &Analysis, new: &Analysis) -> Vec<u32> {
    let mut c: Vec<u32> = base
        .spaces
        .iter()
        .chain(&new.spaces)
        .map(|s| s.color)
        .collect();
    c.sort_unstable();
    c.dedup();
    c
}

/// The peaks and curves of colour `color`.
pub fn space_peaks(color: u32, base: &Analysis, new: &Analysis) -> SpacePeaks {
    let (b, n) = (base.space(color), new.space(color));
    let peak = |s: Option<&Space>| s.map_or(0, |s| s.peak_bytes);
    let step = |s: Option<&Space>| s.and_then(|s| s.peak_time);
    let curve = |s: Option<&Space>| resample_max(s.map_or(&[][..], |s| &s.curve), CURVE_POINTS);
    let position = |s: Option<&Space>, steps: u32| {
        step(s).map(|t| (f64::from(t) + 0.5) / f64::from(steps.max(1)))
    };
    let (base_peak_bytes, new_peak_bytes) = (peak(b), peak(n));
    let delta_bytes = signed_delta(base_peak_bytes, new_peak_bytes);
    SpacePeaks {
        color,
        base_peak_bytes,
        new_peak_bytes,
        delta_bytes,
        delta_percent: (base_peak_bytes > 0)
            .then(|| delta_bytes as f64 * 100.0 / base_peak_bytes as f64),
        base_peak_step: step(b),
        new_peak_step: step(n),
        base_steps: base.steps,
        new_steps: new.steps,
        base_peak_position: position(b, base.steps),
        new_peak_position: position(n, new.steps),
        base_curve: curve(b),
        new_curve: curve(n),
    }
}

/// `new - base` as a signed number, saturated at `i64`'s bounds.
pub fn signed_delta(base: u64, new: u64) -> i64 {
    let d = i128::from(new) - i128::from(base);
    d.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// `curve` (one value per step) on `points` equal bins of relative position: bin `k` covers
/// `[k/points, (k+1)/points)` and holds the maximum over the steps that overlap it. An empty
/// curve gives zeros; `points == 0` gives nothing.
pub fn resample_max(curve: &[u64], points: usize) -> Vec<u64> {
    let (n, m) = (curve.len() as u128, points as u128);
    if n == 0 {
        return vec![0; points];
    }
    (0..m)
        .map(|k| {
            // Steps t with t/n < (k+1)/m and (t+1)/n > k/m.
            let lo = (k * n / m) as usize;
            let hi = ((k + 1) * n).div_ceil(m) as usize;
            curve[lo..hi.min(curve.len()).max(lo + 1)]
                .iter()
                .copied()
                .max()
                .unwrap_or(0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::resample_max;

    #[test]
    fn resampling_keeps_the_peak_and_the_shape() {
        assert_eq!(resample_max(&[1, 5, 2, 0], 2), [5, 2]);
        assert_eq!(resample_max(&[1, 5, 2], 6), [1, 1, 5, 5, 2, 2]);
        assert_eq!(resample_max(&[1, 5, 2], 2), [5, 5]);
        assert_eq!(resample_max(&[], 3), [0, 0, 0]);
        assert!(resample_max(&[7], 0).is_empty());
        let long: Vec<u64> = (0..10_007).map(|i| (i * 7919 % 1000) as u64).collect();
        assert_eq!(resample_max(&long, 1024).iter().max(), long.iter().max());
    }
}
