//! The occupied-bytes curve computed the slow, obvious way, as a reference for the sweep of
//! `bufscope::analysis` (runs of blocks apart in bytes, each swept with a segment tree).
//! Nothing here calls the analysis; [`check_curves`] compares its result with it.
//!
//! The definitions, from `src/analysis.rs`'s module doc, restated from the model alone:
//! * a value's memory space is its colour (`@N`), else its allocation's colour;
//! * a space's offset axis lays, in index order, every allocation of that colour and every
//!   allocation holding a value of that colour, each at the sum of the sizes before it;
//! * a value's byte range is `[base + offset, base + offset + size)`, clamped at
//!   `u64::MAX` (sums are done in `u128`); its steps are `start ..= end` (closed);
//! * occupied bytes at step `t` is the length of the union of the byte ranges of the values
//!   of the space live at `t`, for `t` in `0 .. steps`.
//!
//! `steps` (the time axis, with its cap against corrupt `max` values) is the one input taken
//! from the analysis: [`check_curves`] passes `Analysis::steps`.
//!
//! The union at each step is found by sorting the live ranges by start and merging: the
//! list of live ranges is kept sorted from one step to the next (ranges whose last step has
//! passed are dropped, those starting at `t` inserted), so a step costs O(values live).

use bufscope::analysis::Analysis;
use bufscope::model::Module;

/// One memory space, the reference's way.
#[derive(Debug, PartialEq, Eq)]
pub struct RefSpace {
    pub color: u32,
    /// `(allocation position, base)` in index order.
    pub layout: Vec<(u32, u64)>,
    pub curve: Vec<u64>,
    pub peak_bytes: u64,
    pub peak_time: Option<u32>,
    pub live_at_peak: Vec<u32>,
}

/// A value's place: steps `start ..= end` (end clipped to the axis), bytes `lo .. hi`.
#[derive(Clone, Copy, Debug)]
struct Range {
    start: u32,
    end: u32,
    lo: u64,
    hi: u64,
}

fn clamp(x: u128) -> u64 {
    u64::try_from(x).unwrap_or(u64::MAX)
}

/// Every memory space of `module` on a time axis of `steps` steps.
pub fn reference(module: &Module, steps: u32) -> Vec<RefSpace> {
    let color_of = |v: &bufscope::model::Value| {
        v.color
            .unwrap_or(module.allocations[v.allocation as usize].color)
    };
    let mut colors: Vec<u32> = module.allocations.iter().map(|a| a.color).collect();
    colors.extend(module.values.iter().map(color_of));
    colors.sort_unstable();
    colors.dedup();

    colors
        .into_iter()
        .map(|color| {
            // The layout: allocations of this colour or holding a value of it.
            let mut holds = vec![false; module.allocations.len()];
            for v in &module.values {
                if color_of(v) == color {
                    holds[v.allocation as usize] = true;
                }
            }
            let mut layout = Vec::new();
            let mut base = vec![None; module.allocations.len()];
            let mut height: u128 = 0;
            for (i, a) in module.allocations.iter().enumerate() {
                if a.color == color || holds[i] {
                    layout.push((i as u32, clamp(height)));
                    base[i] = Some(height);
                    height += u128::from(a.size);
                }
            }

            let mut ranges: Vec<Range> = Vec::new();
            for v in &module.values {
                let (Some(live), Some(b)) = (v.live, base[v.allocation as usize]) else {
                    continue;
                };
                if color_of(v) != color || live.start >= steps || live.start > live.end {
                    continue;
                }
                let lo = b + u128::from(v.offset);
                ranges.push(Range {
                    start: live.start,
                    end: live.end.min(steps - 1),
                    lo: clamp(lo),
                    hi: clamp(lo + u128::from(v.size)),
                });
            }
            let curve = union_curve(ranges, steps);

            let mut peak_bytes = 0;
            let mut peak_time = None;
            for (t, &b) in curve.iter().enumerate() {
                if b > peak_bytes {
                    peak_bytes = b;
                    peak_time = Some(t as u32);
                }
            }
            let live_at_peak = peak_time.map_or(Vec::new(), |t| {
                (0..module.values.len() as u32)
                    .filter(|&i| {
                        let v = &module.values[i as usize];
                        color_of(v) == color && v.live.is_some_and(|r| r.start <= t && t <= r.end)
                    })
                    .collect()
            });
            RefSpace {
                color,
                layout,
                curve,
                peak_bytes,
                peak_time,
                live_at_peak,
            }
        })
        .collect()
}

/// At each step, the length of the union of the live byte ranges.
fn union_curve(mut ranges: Vec<Range>, steps: u32) -> Vec<u64> {
    ranges.sort_by_key(|r| r.start);
    let mut next = 0;
    // Live at the current step, sorted by (lo, hi).
    let mut live: Vec<Range> = Vec::new();
    let mut curve = Vec::with_capacity(steps as usize);
    for t in 0..steps {
        live.retain(|r| r.end >= t);
        while next < ranges.len() && ranges[next].start == t {
            let r = ranges[next];
            let at = live.partition_point(|x| (x.lo, x.hi) < (r.lo, r.hi));
            live.insert(at, r);
            next += 1;
        }
        let mut total: u128 = 0;
        let mut run: Option<(u64, u64)> = None;
        for r in &live {
            run = match run {
                Some((lo, hi)) if r.lo <= hi => Some((lo, hi.max(r.hi))),
                Some((lo, hi)) => {
                    total += u128::from(hi - lo);
                    Some((r.lo, r.hi))
                }
                None => Some((r.lo, r.hi)),
            };
        }
        if let Some((lo, hi)) = run {
            total += u128::from(hi - lo);
        }
        curve.push(clamp(total));
    }
    curve
}

/// Compares the analysis's spaces (layout, whole curve, peak, peak step, values live at the
/// peak) with the reference; panics at the first difference. Returns the steps compared
/// (summed over spaces).
pub fn check_curves(module: &Module, analysis: &Analysis, label: &str) -> usize {
    let want = reference(module, analysis.steps);
    let colors = |s: &mut dyn Iterator<Item = u32>| s.collect::<Vec<_>>();
    assert_eq!(
        colors(&mut analysis.spaces.iter().map(|s| s.color)),
        colors(&mut want.iter().map(|s| s.color)),
        "{label}: memory spaces"
    );
    let mut checked = 0;
    for (got, want) in analysis.spaces.iter().zip(&want) {
        let c = want.color;
        let layout: Vec<(u32, u64)> = got.layout.iter().map(|s| (s.allocation, s.base)).collect();
        assert_eq!(layout, want.layout, "{label}, colour {c}: layout");
        assert_eq!(
            got.curve.len(),
            want.curve.len(),
            "{label}, colour {c}: curve length"
        );
        if let Some(t) = (0..want.curve.len()).find(|&t| got.curve[t] != want.curve[t]) {
            panic!(
                "{label}, colour {c}: occupied bytes at step {t}: analysis {}, reference {}",
                got.curve[t], want.curve[t]
            );
        }
        assert_eq!(got.peak_bytes, want.peak_bytes, "{label}, colour {c}: peak");
        assert_eq!(
            got.peak_time, want.peak_time,
            "{label}, colour {c}: peak step"
        );
        assert_eq!(
            got.live_at_peak, want.live_at_peak,
            "{label}, colour {c}: values live at the peak"
        );
        checked += want.curve.len();
    }
    checked
}
