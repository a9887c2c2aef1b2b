//! Axis ticks: where they go. Steps take 1-2-5 steps; bytes take powers of two so that
//! their labels ([`crate::units::axis_bytes`]) come out as round KiB/MiB/GiB figures.

/// At most about `max_ticks` integer positions in `lo ..= hi`, at a 1-2-5 spacing.
pub(crate) fn step_ticks(lo: f64, hi: f64, max_ticks: usize) -> Vec<u64> {
    if !(lo.is_finite() && hi.is_finite()) || hi < lo {
        return Vec::new();
    }
    let raw = (hi - lo) / max_ticks.max(1) as f64;
    let mut step = 1u64;
    'search: for magnitude in 0..19u32 {
        let base = 10u64.pow(magnitude);
        for m in [1u64, 2, 5] {
            let candidate = base.saturating_mul(m);
            if candidate as f64 >= raw {
                step = candidate;
                break 'search;
            }
        }
        step = base.saturating_mul(10);
    }
    multiples(lo, hi, step)
}

/// At most about `max_ticks` byte offsets in `lo ..= hi`, a power of two apart, and that
/// spacing.
pub(crate) fn byte_ticks(lo: f64, hi: f64, max_ticks: usize) -> (Vec<u64>, u64) {
    if !(lo.is_finite() && hi.is_finite()) || hi < lo {
        return (Vec::new(), 1);
    }
    let raw = (hi - lo) / max_ticks.max(1) as f64;
    let mut step = 1u64;
    while (step as f64) < raw && step < (1 << 62) {
        step <<= 1;
    }
    (multiples(lo, hi, step), step)
}

/// Multiples of `step` in `lo ..= hi` (non-negative ones only).
fn multiples(lo: f64, hi: f64, step: u64) -> Vec<u64> {
    let step_f = step as f64;
    // Float to integer casts saturate (NaN becomes 0), so these are in range.
    let first = (lo.max(0.0) / step_f).ceil() as u64;
    let last = (hi.max(0.0) / step_f).floor() as u64;
    if first > last || last - first > 10_000 {
        return Vec::new();
    }
    (first..=last).map(|k| k.saturating_mul(step)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_ticks_are_round() {
        assert_eq!(step_ticks(0.0, 10.0, 5), vec![0, 2, 4, 6, 8, 10]);
        assert_eq!(
            step_ticks(0.0, 162_265.0, 10),
            (0..=8).map(|k| k * 20_000).collect::<Vec<_>>()
        );
        assert_eq!(step_ticks(3.2, 3.9, 5), Vec::<u64>::new());
        assert!(step_ticks(f64::NAN, 1.0, 5).is_empty());
    }

    #[test]
    fn byte_ticks_are_powers_of_two() {
        let (ticks, step) = byte_ticks(0.0, 1_300_000.0, 5);
        assert_eq!(step, 262_144);
        assert_eq!(ticks.len(), 5);
        assert_eq!(ticks, [0, 262_144, 524_288, 786_432, 1_048_576]);
        let (ticks, step) = byte_ticks(1000.0, 3000.0, 4);
        assert_eq!(step, 512);
        assert_eq!(ticks, [1024, 1536, 2048, 2560]);
        assert!(byte_ticks(f64::NAN, 1.0, 4).0.is_empty());
    }
}
