//! Axis ticks: where they go and how they read. Steps take 1-2-5 steps; bytes take powers of
//! two so that labels come out as round KiB/MiB/GiB figures.

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

const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// A byte tick's label: in the unit of the largest tick, with as few decimals as the
/// spacing needs ("0", "256 KiB", "1.25 MiB").
pub(crate) fn byte_label(value: u64, step: u64, largest: u64) -> String {
    if value == 0 {
        return "0".into();
    }
    let unit_of = |n: u64| {
        (0..UNITS.len())
            .rev()
            .find(|&j| n >= 1u64 << (10 * j))
            .unwrap_or(0)
    };
    let mut j = unit_of(largest.max(step));
    let decimals_for = |j: usize| {
        let ratio = step as f64 / (1u64 << (10 * j)) as f64;
        (0..=3).find(|&d| {
            let scaled = ratio * 10f64.powi(d);
            (scaled - scaled.round()).abs() < 1e-6
        })
    };
    let decimals = match decimals_for(j) {
        Some(d) => d,
        None => {
            j = unit_of(step);
            decimals_for(j).unwrap_or(3)
        }
    };
    let scaled = value as f64 / (1u64 << (10 * j)) as f64;
    let mut text = format!("{scaled:.prec$}", prec = decimals as usize);
    if text.contains('.') {
        text = text.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    format!("{text} {}", UNITS[j])
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
        let labels: Vec<String> = ticks
            .iter()
            .map(|&t| byte_label(t, step, 1_048_576))
            .collect();
        assert_eq!(labels, ["0", "0.25 MiB", "0.5 MiB", "0.75 MiB", "1 MiB"]);
        assert_eq!(byte_label(768, 256, 768), "768 B");
        assert_eq!(byte_label(2048, 1024, 4096), "2 KiB");
        // A fine spacing under a big offset falls back to a smaller unit.
        assert_eq!(byte_label(1_048_578, 2, 1_048_578), "1048578 B");
        assert_eq!(byte_label(u64::MAX, 1 << 62, u64::MAX), "16 EiB");
    }
}
