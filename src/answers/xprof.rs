//! XProf's Memory Viewer figures for a memory space, and the three peaks of a space (bufscope's
//! occupied peak, XLA's peak list, XProf's peak heap) each explained in one sentence.
//!
//! XProf (`hlo_proto_to_memory_visualization_utils.cc`) simulates the heap of the space's
//! temporary allocation from XLA's heap-simulator trace and adds every allocation whose
//! lifetime is the whole program. From the text dump, with the trace absent:
//! * **peak heap** = the highest occupied bytes inside the space's `preallocated-temp`
//!   allocation(s) (at one step, all of them together) + the size of every allocation of the
//!   space that is an entry parameter, `maybe-live-out` or constant (each once).
//!   Thread-local allocations are left out, and so is an allocation holding no value of
//!   non-zero size (XProf counts an allocation through its largest value). The space is the
//!   allocation's colour.
//! * **fragmentation** = (total − peak heap) / (total − parameter, maybe-live-out and
//!   constant bytes), where total is the sum of the space's allocation sizes, thread-local
//!   ones left out; 0 when the denominator is 0.
//!
//! The occupied bytes inside the temporary allocations are the space's curve less what its
//! other allocations occupy at each step (the allocations lie apart on the space's axis).

use serde::Serialize;

use crate::analysis::Space;
use crate::answers::peaks::{xla_peak_bytes, xla_peak_step};
use crate::model::{Allocation, Module};
use crate::units::{group_digits, human_bytes};

/// XProf's figures for one memory space.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct XprofFigures {
    pub color: u32,
    /// XProf's "peak heap": `temp_peak_bytes + indefinite_bytes`.
    pub xprof_peak_heap_bytes: u64,
    /// Highest occupied bytes inside the space's `preallocated-temp` allocation(s).
    pub temp_peak_bytes: u64,
    /// First step where it is reached.
    pub temp_peak_step: Option<u32>,
    /// Sizes of the entry-parameter, `maybe-live-out` and constant allocations.
    pub indefinite_bytes: u64,
    /// Sizes of the space's allocations, thread-local ones left out.
    pub total_bytes: u64,
    /// `(total − peak heap) / (total − indefinite)`.
    pub fragmentation: f64,
}

pub(crate) fn is_temp(a: &Allocation, color: u32) -> bool {
    a.color == color && a.flags.preallocated_temp
}

fn is_indefinite(module: &Module, a: &Allocation) -> bool {
    let held = module
        .values
        .get(a.values.start as usize..a.values.end as usize)
        .is_some_and(|vs| vs.iter().any(|v| v.size > 0));
    held && (a.parameter.is_some() || a.flags.maybe_live_out || a.flags.constant)
}

/// XProf's peak heap and fragmentation for `space`.
pub fn xprof_figures(module: &Module, space: &Space) -> XprofFigures {
    let color = space.color;
    let own = || module.allocations.iter().filter(move |a| a.color == color);
    let total_bytes = own()
        .filter(|a| !a.flags.thread_local)
        .fold(0u64, |s, a| s.saturating_add(a.size));
    let indefinite_bytes = own()
        .filter(|a| !a.flags.thread_local && is_indefinite(module, a))
        .fold(0u64, |s, a| s.saturating_add(a.size));
    let temp = temp_curve(module, space);
    let (temp_peak_step, temp_peak_bytes) = temp
        .iter()
        .enumerate()
        .rev()
        .max_by_key(|&(_, b)| *b)
        .filter(|&(_, b)| *b > 0)
        .map_or((None, 0), |(t, &b)| (Some(t as u32), b));
    let peak = temp_peak_bytes.saturating_add(indefinite_bytes);
    let spare = total_bytes.saturating_sub(indefinite_bytes);
    XprofFigures {
        color,
        xprof_peak_heap_bytes: peak,
        temp_peak_bytes,
        temp_peak_step,
        indefinite_bytes,
        total_bytes,
        fragmentation: if spare == 0 {
            0.0
        } else {
            total_bytes.saturating_sub(peak) as f64 / spare as f64
        },
    }
}

/// Occupied bytes inside the space's temporary allocations at each step: the curve less the
/// other allocations' occupied bytes.
fn temp_curve(module: &Module, space: &Space) -> Vec<u64> {
    let steps = space.curve.len();
    // The timed values of the space outside its temporary allocations, in value order:
    // an allocation's values are neighbours there, so each allocation's come together.
    let mut sweep = Sweep::default();
    let mut delta = vec![0i128; steps + 1];
    let mut group: Vec<Span> = Vec::new();
    let mut current = None;
    for &i in &space.timed {
        let v = &module.values[i as usize];
        if current != Some(v.allocation) {
            sweep.add(&mut group, &mut delta);
            group.clear();
            current = Some(v.allocation);
        }
        let Some(r) = v
            .live
            .filter(|_| !is_temp(module.allocation_of(v), space.color))
        else {
            continue;
        };
        let end = (r.end as usize).saturating_add(1).min(steps);
        if (r.start as usize) < end {
            group.push((
                r.start as usize,
                end,
                (v.offset, v.offset.saturating_add(v.size)),
            ));
        }
    }
    sweep.add(&mut group, &mut delta);
    let others = sweep.occupied(steps);
    let mut less = 0i128;
    space
        .curve
        .iter()
        .zip(&delta)
        .zip(&others)
        .map(|((&c, d), &o)| {
            less += d;
            (i128::from(c) - i128::from(o) - less).clamp(0, i128::from(u64::MAX)) as u64
        })
        .collect()
}

/// The most distinct byte ranges of an allocation's values [`Sweep`] takes; an allocation
/// with more is added up on its own ([`add_occupied`]).
const FEW_RANGES: usize = 32;

/// The occupied bytes of allocations whose values cover a few distinct byte ranges (a
/// parameter and the views of it over the program): one pass over the steps, where each
/// start or end counts its range in or out, and an allocation touched takes the union of
/// its ranges in use again. No sorting: the starts and ends are bucketed by step.
#[derive(Default)]
struct Sweep {
    /// The allocations' distinct byte ranges, each allocation's by `lo`.
    ranges: Vec<(u64, u64)>,
    /// The allocation (its number here) of each range.
    owner: Vec<u32>,
    /// Each allocation's ranges, `start .. end` in `ranges`.
    allocations: Vec<(u32, u32)>,
    /// Each value's steps `start .. end` and its range.
    spans: Vec<(usize, usize, u32)>,
}

impl Sweep {
    /// Takes the spans of one allocation, or adds them to `delta` when they have too many
    /// distinct byte ranges.
    fn add(&mut self, spans: &mut [Span], delta: &mut [i128]) {
        let mut distinct: Vec<(u64, u64)> = Vec::new();
        for s in spans.iter() {
            if !distinct.contains(&s.2) {
                if distinct.len() == FEW_RANGES {
                    add_occupied(spans, delta);
                    return;
                }
                distinct.push(s.2);
            }
        }
        if distinct.is_empty() {
            return;
        }
        distinct.sort_unstable();
        let first = self.ranges.len() as u32;
        let number = self.allocations.len() as u32;
        self.ranges.extend_from_slice(&distinct);
        self.owner.extend(distinct.iter().map(|_| number));
        self.allocations.push((first, self.ranges.len() as u32));
        self.spans.extend(spans.iter().map(|s| {
            let at = distinct.iter().position(|d| *d == s.2).unwrap_or(0);
            (s.0, s.1, first + at as u32)
        }));
    }

    /// The occupied bytes of the allocations taken, at each of `steps` steps.
    fn occupied(&self, steps: usize) -> Vec<u64> {
        // The ranges counted in and out at each step.
        let (starts, start_at) = bucket(self.spans.iter().map(|s| (s.0, s.2)), steps);
        let (ends, end_at) = bucket(self.spans.iter().map(|s| (s.1, s.2)), steps);
        let mut count = vec![0u32; self.ranges.len()];
        let mut union = vec![0u64; self.allocations.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut is_touched = vec![false; self.allocations.len()];
        let mut total = 0u64;
        let mut out = Vec::with_capacity(steps);
        for t in 0..steps {
            let ended = &ends[end_at[t] as usize..end_at[t + 1] as usize];
            let started = &starts[start_at[t] as usize..start_at[t + 1] as usize];
            let events = ended.iter().map(|&i| (i, false));
            for (r, more) in events.chain(started.iter().map(|&i| (i, true))) {
                let r = r as usize;
                count[r] = if more {
                    count[r] + 1
                } else {
                    count[r].saturating_sub(1)
                };
                let a = self.owner[r] as usize;
                if !is_touched[a] {
                    is_touched[a] = true;
                    touched.push(a as u32);
                }
            }
            for a in touched.drain(..) {
                is_touched[a as usize] = false;
                let (from, to) = self.allocations[a as usize];
                let span = from as usize..to as usize;
                let (mut now, mut reach) = (0u64, 0u64);
                for (&(lo, hi), &n) in self.ranges[span.clone()].iter().zip(&count[span]) {
                    let lo = lo.max(reach);
                    if n > 0 && hi > lo {
                        now += hi - lo;
                        reach = hi;
                    }
                }
                total = total.saturating_sub(union[a as usize]).saturating_add(now);
                union[a as usize] = now;
            }
            out.push(total);
        }
        out
    }
}

/// `items`' payloads grouped by key (each at most `steps`), and where each key's begin: key
/// `k`'s are `grouped[at[k] .. at[k + 1]]`.
fn bucket(items: impl Iterator<Item = (usize, u32)> + Clone, steps: usize) -> (Vec<u32>, Vec<u32>) {
    let mut at = vec![0u32; steps + 2];
    for (k, _) in items.clone() {
        at[k + 1] += 1;
    }
    for k in 1..at.len() {
        at[k] += at[k - 1];
    }
    let mut fill = at.clone();
    let mut grouped = vec![0u32; at[steps + 1] as usize];
    for (k, payload) in items {
        grouped[fill[k] as usize] = payload;
        fill[k] += 1;
    }
    (grouped, at)
}

/// A value's steps `start .. end + 1` and byte range in its allocation.
type Span = (usize, usize, (u64, u64));

/// Adds to `delta` (a difference array over steps) the occupied bytes of `spans`, all of one
/// allocation: between two consecutive starts or ends nothing changes, so the union of the
/// live byte ranges is taken once per such stretch, over the values live in it.
fn add_occupied(spans: &mut [Span], delta: &mut [i128]) {
    if spans.is_empty() {
        return;
    }
    if let [(start, end, (lo, hi))] = *spans {
        // One value: its own range, from its start to its end.
        let len = i128::from(hi - lo);
        delta[start] += len;
        delta[end] -= len;
        return;
    }
    let ranges = spans;
    ranges.sort_unstable_by_key(|r| r.0);
    let mut bounds: Vec<usize> = ranges.iter().flat_map(|r| [r.0, r.1]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    let (mut before, mut next) = (0u64, 0usize);
    let mut active: Vec<(usize, (u64, u64))> = Vec::new();
    let mut scratch: Vec<(u64, u64)> = Vec::new();
    for &b in &bounds {
        active.retain(|a| a.0 > b);
        while next < ranges.len() && ranges[next].0 <= b {
            active.push((ranges[next].1, ranges[next].2));
            next += 1;
        }
        scratch.clear();
        scratch.extend(active.iter().map(|a| a.1));
        let now = union_length(&mut scratch);
        delta[b] += i128::from(now) - i128::from(before);
        before = now;
    }
}

/// Length of the union of byte ranges.
fn union_length(ranges: &mut [(u64, u64)]) -> u64 {
    ranges.sort_unstable();
    let (mut total, mut reach) = (0u64, 0u64);
    for &(lo, hi) in ranges.iter() {
        let lo = lo.max(reach);
        if hi > lo {
            total += hi - lo;
            reach = hi;
        }
    }
    total
}

/// One of the three peak figures, with what it counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PeakFigure {
    pub bytes: Option<u64>,
    pub step: Option<u32>,
    /// One sentence: what the figure counts.
    pub sentence: String,
}

/// bufscope's occupied peak, XLA's peak list and XProf's peak heap of one memory space.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ThreePeaks {
    pub color: u32,
    pub occupied: PeakFigure,
    pub xla: PeakFigure,
    pub xprof: PeakFigure,
}

fn at(step: Option<u32>) -> String {
    step.map_or_else(String::new, |t| {
        format!(" at step {}", group_digits(u64::from(t)))
    })
}

/// The three peaks of `space`, each explained in one sentence; `f` is the space's
/// [`xprof_figures`].
pub fn three_peaks(module: &Module, space: &Space, f: &XprofFigures) -> ThreePeaks {
    ThreePeaks {
        color: space.color,
        occupied: occupied_peak(space),
        xla: xla_peak(module),
        xprof: xprof_peak(f),
    }
}

/// bufscope's occupied peak of `space`, with what it counts.
pub fn occupied_peak(space: &Space) -> PeakFigure {
    PeakFigure {
        bytes: Some(space.peak_bytes),
        step: space.peak_time,
        sentence: format!(
            "bufscope's peak, {}{}: the most bytes of this memory space covered at one step by live values, at their allocated sizes (padding included), bytes shared by several values counted once; thread-local values have no live range and are left out.",
            human_bytes(space.peak_bytes),
            at(space.peak_time)
        ),
    }
}

/// XLA's peak list of the module, with what it counts.
pub fn xla_peak(module: &Module) -> PeakFigure {
    let (xla_bytes, xla_step) = (xla_peak_bytes(module), xla_peak_step(module));
    PeakFigure {
        bytes: xla_bytes,
        step: xla_step,
        sentence: match xla_bytes {
            Some(b) => format!(
                "XLA's peak list, {}{}: the sum of the logical sizes (no padding) of the values live at the step where that sum is highest, every memory space together, a value sharing another's buffer counted again.",
                human_bytes(b),
                at(xla_step)
            ),
            None => "XLA's peak list: this dump prints none (the live-range section is missing, too old, or the peak was undetermined).".to_string(),
        },
    }
}

/// XProf's peak heap of a space whose [`xprof_figures`] are `f`, with what it counts.
pub fn xprof_peak(f: &XprofFigures) -> PeakFigure {
    PeakFigure {
        bytes: Some(f.xprof_peak_heap_bytes),
        step: f.temp_peak_step,
        sentence: format!(
            "XProf's peak heap, {}: the highest occupied bytes inside the temporary allocation(s), {}{}, plus every parameter, maybe-live-out and constant allocation whole, {}, as if all were live throughout; thread-local allocations left out.",
            human_bytes(f.xprof_peak_heap_bytes),
            human_bytes(f.temp_peak_bytes),
            at(f.temp_peak_step),
            human_bytes(f.indefinite_bytes)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::union_length;

    #[test]
    fn unions() {
        assert_eq!(union_length(&mut []), 0);
        assert_eq!(
            union_length(&mut [(0, 10), (5, 15), (20, 30), (22, 25)]),
            25
        );
        assert_eq!(union_length(&mut [(5, 5), (0, 1)]), 1);
    }
}
