//! What if: the occupied-bytes curve of one memory space estimated after edits the user
//! would make to the program — a value rematerialised, a value offloaded to the host, a
//! loop's stacked per-iteration outputs rematerialised — with its new peak and step.
//!
//! Owns: the edits ([`Edits`]) and the estimate ([`estimate`]); the candidates and the plan
//! for a capacity are [`fit`]'s, the loops' stacked outputs [`stacked`]'s, the page's ticks
//! and what a group's tick acts on [`ticks`]'.
//!
//! **An estimate, never a compile.** The estimated curve is the analysis's own sweep
//! ([`crate::analysis::occupied_curve`]) over the space's blocks with the edited values' blocks
//! cut where the edit frees them, plus the bytes an edit adds back; with no edit it is the real
//! curve step for step (tested). What it assumes ([`ASSUMPTIONS`]): XLA re-packs the freed
//! bytes (the estimate is the live bytes, not the fragmented layout a recompile would choose);
//! a recomputation's inputs are live anyway (it costs no bytes but its own result); the
//! schedule stays as it is.
//!
//! * A value **rematerialised** is gone over each of its idle stretches ([`idle`]) and back
//!   from the step before the touch that ends the stretch: for a stretch `from → to`, gone at
//!   `from + 1 ..= to − 2`.
//! * A value **offloaded** is copied out at `from + 1` and back in at `to − 1`, so it is gone
//!   from this space at `from + 2 ..= to − 2`; the host holds it at `from + 1 ..= to − 1`
//!   (both copies counted: two per stretch, its bytes each way).
//! * A loop's **stacked output** rematerialised ([`stacked::StackedOutput`]) is gone for the
//!   life of its buffer (every value sharing its slot from before the forward loop to the end
//!   of the backward one), and one iteration's worth (its bytes / the trip count) is live
//!   in the backward loop's body from its first step to the body's last read of the stored
//!   output ([`StackedOutput::recomputed_steps`]).
//! * A loop's stacked output **offloaded** (a jax offload policy, [`checkpoint`]) is gone from
//!   this space for the life of its buffer too, one iteration's worth live while the forward
//!   body runs (the copy out) and while the backward body runs (the copy in); the host holds
//!   all its bytes over that life, copied one iteration at a time each way.
//!
//! Each estimate's price is the recomputation's FLOPs ([`flops`]); the module's `step_flops`
//! beside it.

pub mod checkpoint;
pub mod fit;
pub mod flops;
pub mod policy;
pub mod stacked;
pub mod ticks;

use hashbrown::{HashMap, HashSet};
use serde::Serialize;

use crate::analysis::{occupied_curve, Block, Space};
use crate::answers::idle::{ScheduleIndex, Stretch};
use crate::model::Module;

pub use stacked::StackedOutput;

/// What the estimate assumes, for every place it is shown.
pub const ASSUMPTIONS: &str = "An estimate, not a compile: XLA is assumed to re-pack the freed bytes (the sum of the bytes still live, not the fragmented layout a recompile would give), a recomputation's inputs to be live anyway, and the schedule to stay as it is.";

/// The edits asked for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Edits {
    /// Values (indices into [`Module::values`]) rematerialised.
    pub remat: Vec<u32>,
    /// Values offloaded to the host.
    pub offload: Vec<u32>,
    /// Stacked per-iteration outputs of loops rematerialised.
    pub loops: Vec<StackedOutput>,
    /// Stacked per-iteration outputs of loops offloaded to the host.
    pub offload_loops: Vec<StackedOutput>,
    /// What a checkpoint policy saves that the compile stacks nowhere ([`checkpoint`]).
    pub saved: Vec<Residual>,
}

/// A residual a checkpoint policy saves that the dump's program does not stack (the scan
/// body's input where the program stacks an f32 copy of it; a dot the policy saves whose
/// result the program recomputed into what it stacks): its bytes, every iteration's, live
/// from the forward loop's body to the backward loop's end, on the device or the host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Residual {
    /// The forward body's instruction (`fusion.12`, `param.3#1`), or `carry`.
    pub what: String,
    pub color: u32,
    pub bytes: u64,
    pub trip_count: u64,
    /// First and last step.
    pub life: (u32, u32),
    /// Offloaded to the host (an offload policy's).
    pub host: bool,
}

/// The edits as a plan, in JSON, with each memory space's estimate (what the page exports):
/// `{"module", "estimate": true, "assumptions", "plan": [{"action", "what", "bytes"}],
/// "memory_spaces": [Estimate]}`.
pub fn plan_json(module: &Module, edits: &Edits, estimates: &[Estimate]) -> String {
    let name = |v: u32| module.values.get(v as usize).map(|x| module.value_name(x)).unwrap_or_default();
    let size = |v: u32| module.values.get(v as usize).map_or(0, |x| x.size);
    let mut plan: Vec<serde_json::Value> = Vec::new();
    for (action, loops) in [("remat_loop", &edits.loops), ("offload_loop", &edits.offload_loops)] {
        for s in loops {
            plan.push(serde_json::json!({"action": action, "what": s.name, "bytes": s.bytes, "op_name": s.op_name}));
        }
    }
    for (action, values) in [("remat", &edits.remat), ("offload", &edits.offload)] {
        for &v in values {
            plan.push(serde_json::json!({"action": action, "what": name(v), "bytes": size(v)}));
        }
    }
    let doc = serde_json::json!({
        "module": module.name,
        "estimate": true,
        "assumptions": ASSUMPTIONS,
        "plan": plan,
        "memory_spaces": estimates,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// The estimated curve of one memory space after the edits.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    pub color: u32,
    /// Occupied bytes at each step after the edits: an estimate.
    #[serde(skip)]
    pub curve: Vec<u64>,
    /// The real peak and its first step.
    pub peak_before: u64,
    pub step_before: Option<u32>,
    /// The estimated peak and its first step (`None`: the curve is 0 throughout).
    pub peak_after: u64,
    pub step_after: Option<u32>,
    /// Bytes the offloads add to the host at each step.
    #[serde(skip)]
    pub host_curve: Vec<u64>,
    /// The most bytes the offloads hold on the host at once.
    pub host_bytes_added: u64,
    /// Copies between this space and the host (two per offloaded stretch) and their bytes.
    pub copies: u32,
    pub copied_bytes: u64,
    /// Edited values of this space that freed nothing: no `Used values` entry, or no idle
    /// stretch long enough.
    pub unchanged: Vec<u32>,
}

/// The steps `lo ..= hi` at which an edit frees a value, for each edited value.
type Cuts = HashMap<u32, Vec<(u32, u32)>>;

/// Each edited value's idle stretches, found once ([`ScheduleIndex::stretches_of`]) and kept: a plan
/// estimates the same values round after round.
#[derive(Default)]
pub struct StretchCache(HashMap<u32, Vec<Stretch>>);

impl StretchCache {
    /// The stretches of `value` (none without its `Used values` entry).
    pub fn get(&mut self, module: &Module, index: &ScheduleIndex, value: u32) -> &[Stretch] {
        self.0.entry(value).or_insert_with(|| index.stretches_of(module, value))
    }
}

/// The steps a rematerialised value is gone over a stretch (`from + 1 ..= to − 2`).
pub fn remat_gap(s: &Stretch) -> Option<(u32, u32)> {
    let (lo, hi) = (s.from + 1, s.to.checked_sub(2)?);
    (lo <= hi).then_some((lo, hi))
}

/// The steps an offloaded value is gone over a stretch (`from + 2 ..= to − 2`).
pub fn offload_gap(s: &Stretch) -> Option<(u32, u32)> {
    let (lo, hi) = (s.from + 2, s.to.checked_sub(2)?);
    (lo <= hi).then_some((lo, hi))
}

/// Adds `bytes` over `lo ..= hi` to a difference array of `steps + 1` entries.
fn add_over(diff: &mut [i128], lo: u32, hi: u32, bytes: u64) {
    let last = diff.len().saturating_sub(1);
    let (lo, hi) = (lo as usize, (hi as usize).saturating_add(1).min(last));
    if lo < hi {
        diff[lo] += i128::from(bytes);
        diff[hi] -= i128::from(bytes);
    }
}

/// The running sums of a difference array, `steps` long.
fn running(diff: &[i128], steps: usize) -> Vec<u64> {
    let mut acc = 0i128;
    diff[..steps]
        .iter()
        .map(|d| {
            acc += d;
            u64::try_from(acc.max(0)).unwrap_or(u64::MAX)
        })
        .collect()
}

/// The first step of the highest value of a curve (`None` when it is 0 throughout).
pub fn first_peak(curve: &[u64]) -> (u64, Option<u32>) {
    curve
        .iter()
        .enumerate()
        .rev()
        .max_by_key(|&(_, b)| *b)
        .filter(|&(_, b)| *b > 0)
        .map_or((0, None), |(t, &b)| (b, Some(t as u32)))
}

/// The estimated curve of `space` after `edits` (`index` built from `module`). Edits of
/// values of other spaces are left to those spaces' estimates.
pub fn estimate(module: &Module, space: &Space, index: &ScheduleIndex, edits: &Edits) -> Estimate {
    estimate_with(module, space, index, edits, &mut StretchCache::default())
}

/// What the edits do to one space: the steps each value is gone, the values gone for good,
/// and the bytes added back (on the device and on the host).
struct Cutting {
    cuts: Cuts,
    dropped: HashSet<u32>,
    /// Difference arrays of `steps + 1` entries.
    extra: Vec<i128>,
    host: Vec<i128>,
    copies: u32,
    copied_bytes: u64,
    unchanged: Vec<u32>,
}

fn cutting(module: &Module, space: &Space, index: &ScheduleIndex, edits: &Edits, cache: &mut StretchCache) -> Cutting {
    let steps = space.curve.len();
    let of_space = |v: u32| {
        module
            .values
            .get(v as usize)
            .is_some_and(|x| module.value_color(x) == space.color)
    };
    let mut c = Cutting {
        cuts: HashMap::new(),
        dropped: HashSet::new(),
        extra: vec![0i128; steps + 1],
        host: vec![0i128; steps + 1],
        copies: 0,
        copied_bytes: 0,
        unchanged: Vec::new(),
    };
    for &v in edits.remat.iter().filter(|&&v| of_space(v)) {
        let gaps: Vec<(u32, u32)> = cache.get(module, index, v).iter().filter_map(remat_gap).collect();
        if gaps.is_empty() {
            c.unchanged.push(v);
        }
        c.cuts.entry(v).or_default().extend(gaps);
    }
    for &v in edits.offload.iter().filter(|&&v| of_space(v)) {
        let size = module.values[v as usize].size;
        let mut any = false;
        for s in cache.get(module, index, v).to_vec() {
            let Some(gap) = offload_gap(&s) else { continue };
            any = true;
            c.cuts.entry(v).or_default().push(gap);
            add_over(&mut c.host, s.from + 1, s.to - 1, size);
            c.copies += 2;
            c.copied_bytes = c.copied_bytes.saturating_add(size.saturating_mul(2));
        }
        if !any {
            c.unchanged.push(v);
        }
    }
    for s in edits.loops.iter().filter(|s| s.color == space.color) {
        c.dropped.extend(s.chain.iter().copied());
        if let Some((lo, hi)) = s.recomputed_steps(module, index) {
            add_over(&mut c.extra, lo, hi, s.per_iteration_bytes());
        }
    }
    for s in edits.offload_loops.iter().filter(|s| s.color == space.color) {
        offload_loop(&mut c, s);
    }
    for r in edits.saved.iter().filter(|r| r.color == space.color) {
        if r.host {
            add_over(&mut c.host, r.life.0, r.life.1, r.bytes);
            c.copies = c.copies.saturating_add(u32::try_from(r.trip_count.saturating_mul(2)).unwrap_or(u32::MAX));
            c.copied_bytes = c.copied_bytes.saturating_add(r.bytes.saturating_mul(2));
        } else {
            add_over(&mut c.extra, r.life.0, r.life.1, r.bytes);
        }
    }
    c
}

/// A loop's stacked output offloaded: gone for its buffer's life, one iteration's worth
/// live in each loop's body (the copy out in the forward one, the copy in in the backward
/// one), all its bytes on the host over its life, one copy each way per iteration.
fn offload_loop(c: &mut Cutting, s: &StackedOutput) {
    c.dropped.extend(s.chain.iter().copied());
    let slice = s.per_iteration_bytes();
    for (lo, hi) in [s.forward_body.map(|f| f.1), s.backward_body].into_iter().flatten() {
        add_over(&mut c.extra, lo, hi, slice);
    }
    add_over(&mut c.host, s.life.0, s.life.1, s.bytes);
    let trips = u32::try_from(s.trip_count).unwrap_or(u32::MAX);
    c.copies = c.copies.saturating_add(trips.saturating_mul(2));
    c.copied_bytes = c.copied_bytes.saturating_add(s.bytes.saturating_mul(2));
}

/// [`estimate`] with the stretches found before kept in `cache`.
///
/// Incremental: only the bytes the edited values' blocks cover, at the steps the edits free
/// them, can change, and where no other value's block shares those bytes at those steps the
/// curve falls by exactly the value's bytes; only the pieces that share bytes with other
/// blocks are swept ([`occupied_curve`]) with them ([`changed_curve`]). It equals the sweep of
/// every block after the edits ([`blocks_after`]; tested), at the cost of the edited values'
/// neighbours rather than a sweep of the whole space (the page's times:
/// `tests/bench/whatif_bench.mjs`, docs/benchmarks.md).
pub fn estimate_with(
    module: &Module,
    space: &Space,
    index: &ScheduleIndex,
    edits: &Edits,
    cache: &mut StretchCache,
) -> Estimate {
    estimate_searching(module, space, index, edits, cache, SEARCH_PASSES)
}

/// [`estimate`] that never falls back on one sweep of every block ([`changed_curve`]):
/// what the tests compare with that sweep, which the fallback is.
#[doc(hidden)]
pub fn estimate_incremental(module: &Module, space: &Space, index: &ScheduleIndex, edits: &Edits) -> Estimate {
    estimate_searching(module, space, index, edits, &mut StretchCache::default(), usize::MAX)
}

/// How many passes over every block the search for the blocks the cut pieces meet may cost
/// before one sweep of every block is cheaper ([`changed_curve`]).
const SEARCH_PASSES: usize = 16;

fn estimate_searching(
    module: &Module,
    space: &Space,
    index: &ScheduleIndex,
    edits: &Edits,
    cache: &mut StretchCache,
    passes: usize,
) -> Estimate {
    let steps = space.curve.len();
    let c = cutting(module, space, index, edits, cache);
    let mut curve = changed_curve(module, space, &c.cuts, &c.dropped, passes);
    for (x, e) in curve.iter_mut().zip(running(&c.extra, steps)) {
        *x = x.saturating_add(e);
    }
    let host_curve = running(&c.host, steps);
    let (peak_after, step_after) = first_peak(&curve);
    Estimate {
        color: space.color,
        peak_before: space.peak_bytes,
        step_before: space.peak_time,
        peak_after,
        step_after,
        host_bytes_added: host_curve.iter().copied().max().unwrap_or(0),
        host_curve,
        copies: c.copies,
        copied_bytes: c.copied_bytes,
        unchanged: c.unchanged,
        curve,
    }
}

/// Every block of `space` after the edits (without what they add back): the estimate's curve
/// is their occupied bytes plus the bytes added back.
pub fn blocks_after(module: &Module, space: &Space, index: &ScheduleIndex, edits: &Edits) -> Vec<Block> {
    let c = cutting(module, space, index, edits, &mut StretchCache::default());
    cut_blocks(space.blocks(module), &c.cuts, &c.dropped)
}

/// The pieces of the edited values' blocks that the edits take away: each value of `cuts`
/// over the steps it is gone (its gaps merged, within its block), each value of `dropped`
/// whole. Blocks the sweep would skip (no bytes, no steps) give none.
fn cut_pieces(module: &Module, space: &Space, cuts: &Cuts, dropped: &HashSet<u32>) -> Vec<Block> {
    let steps = space.curve.len() as u32;
    let mut out = Vec::new();
    // A value of the space's (an allocation of another colour may hold values of two), with
    // a block the sweep keeps.
    let block = |v: u32| {
        let of_space = module.values.get(v as usize).is_some_and(|x| module.value_color(x) == space.color);
        (space.block(module, v)).filter(|b| of_space && b.y1 > b.y0 && b.x0 < steps && b.x1 > b.x0)
    };
    for &v in dropped {
        out.extend(block(v));
    }
    for (&v, gaps) in cuts.iter().filter(|(v, _)| !dropped.contains(*v)) {
        let Some(b) = block(v) else { continue };
        let mut gaps: Vec<(u32, u32)> = gaps.iter().map(|&(lo, hi)| (lo, hi.saturating_add(1))).collect();
        gaps.sort_unstable();
        let mut open: Option<(u32, u32)> = None;
        for (lo, hi) in gaps.into_iter().chain([(u32::MAX, u32::MAX)]) {
            match &mut open {
                Some(o) if lo <= o.1 => o.1 = o.1.max(hi),
                _ => {
                    if let Some((x0, x1)) = open.take() {
                        let (x0, x1) = (x0.max(b.x0), x1.min(b.x1).min(steps));
                        if x0 < x1 {
                            out.push(Block { x0, x1, ..b });
                        }
                    }
                    open = Some((lo, hi));
                }
            }
        }
    }
    out
}

/// Whether two blocks of different values share bytes at some step.
fn overlap(a: &Block, b: &Block) -> bool {
    a.value != b.value && a.y0 < b.y1 && b.y0 < a.y1 && a.x0 < b.x1 && b.x0 < a.x1
}

/// The space's curve with the edited values cut (see [`estimate_with`]). At each step the
/// curve falls by the bytes the cut pieces ([`cut_pieces`]) cover that no block left covers.
/// A piece that shares no byte at any step with another value's block (the common case:
/// buffer assignment gives values live at once their own bytes) takes exactly its own bytes
/// over its steps, a difference array. The pieces that do (aliases, hand-offs) are swept with
/// what is left of the blocks they meet: their fall is the sweep of both less the sweep of
/// what is left. The blocks meeting a piece are found among the space's blocks sorted by
/// offset; when that search would cost more than `passes` passes over every block, one sweep
/// of every block after the edits is cheaper.
fn changed_curve(module: &Module, space: &Space, cuts: &Cuts, dropped: &HashSet<u32>, passes: usize) -> Vec<u64> {
    let n = space.curve.len() as u32;
    let mut pieces = cut_pieces(module, space, cuts, dropped);
    if pieces.is_empty() {
        return space.curve.clone();
    }
    // The space's blocks by size class (lengths in [2^k, 2^(k+1))), each sorted by offset:
    // those meeting a piece's bytes start less than their class's longest below it.
    let mut classes: Vec<(u64, Vec<Block>)> = vec![(0, Vec::new()); 64];
    let mut count = 0usize;
    for b in space.blocks(module).filter(|b| b.y1 > b.y0 && b.x1 > b.x0) {
        let c = &mut classes[(b.y1 - b.y0).ilog2() as usize];
        c.0 = c.0.max(b.y1 - b.y0);
        c.1.push(b);
        count += 1;
    }
    classes.retain(|c| !c.1.is_empty());
    for c in &mut classes {
        c.1.sort_unstable_by_key(|b| b.y0);
    }
    let mut budget = count.saturating_mul(passes);
    let mut fall = vec![0i128; n as usize + 1];
    let (mut tangled, mut met) = (Vec::new(), HashSet::new());
    // Pieces by offset, so that each class's first block that may meet one only moves on.
    pieces.sort_unstable_by_key(|p| p.y0);
    let mut firsts = vec![0usize; classes.len()];
    for p in pieces {
        let (mut seen, mut hit) = (0usize, false);
        for ((longest, blocks), first) in classes.iter().zip(&mut firsts) {
            while blocks.get(*first).is_some_and(|b| b.y0.saturating_add(*longest) <= p.y0) {
                *first += 1;
            }
            for b in blocks[*first..].iter().take_while(|b| b.y0 < p.y1) {
                seen += 1;
                if overlap(&p, b) {
                    met.insert(b.value);
                    hit = true;
                }
            }
        }
        budget = budget.saturating_sub(seen);
        if budget == 0 {
            return occupied_curve(cut_blocks(space.blocks(module), cuts, dropped), n);
        }
        if hit {
            tangled.push(p);
        } else {
            add_over(&mut fall, p.x0, p.x1 - 1, p.y1 - p.y0);
        }
    }
    let mut curve: Vec<u64> = (space.curve.iter().zip(running(&fall, n as usize)))
        .map(|(&real, f)| real.saturating_sub(f))
        .collect();
    if !tangled.is_empty() {
        let left = cut_blocks(met.iter().filter_map(|&v| space.block(module, v)), cuts, dropped);
        tangled.extend_from_slice(&left);
        let (with, without) = (occupied_curve(tangled, n), occupied_curve(left, n));
        for (x, (w, l)) in curve.iter_mut().zip(with.into_iter().zip(without)) {
            *x = x.saturating_sub(w.saturating_sub(l));
        }
    }
    curve
}

/// `blocks` with the values in `dropped` left out and each value of `cuts` split around the
/// steps it is gone.
fn cut_blocks(blocks: impl Iterator<Item = Block>, cuts: &Cuts, dropped: &HashSet<u32>) -> Vec<Block> {
    let mut out = Vec::new();
    for b in blocks {
        if dropped.contains(&b.value) {
            continue;
        }
        let Some(gaps) = cuts.get(&b.value) else {
            out.push(b);
            continue;
        };
        let mut gaps = gaps.clone();
        gaps.sort_unstable();
        // Steps x0 .. x1 minus each gap lo ..= hi.
        let mut from = b.x0;
        for &(lo, hi) in &gaps {
            if lo > from {
                out.push(Block { x0: from, x1: lo.min(b.x1), ..b });
            }
            from = from.max(hi.saturating_add(1));
            if from >= b.x1 {
                break;
            }
        }
        if from < b.x1 {
            out.push(Block { x0: from, ..b });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stretch(from: u32, to: u32) -> Stretch {
        Stretch { from, to, to_use: true, idle_steps: to - from - 1 }
    }

    #[test]
    fn gaps() {
        // Defined at 2, next used at 9: idle at 3..=8; recomputed at 8, so gone at 3..=7.
        assert_eq!(remat_gap(&stretch(2, 9)), Some((3, 7)));
        // Copied out at 3 and back in at 8: gone at 4..=7.
        assert_eq!(offload_gap(&stretch(2, 9)), Some((4, 7)));
        // One idle step: recomputing it frees nothing.
        assert_eq!(remat_gap(&stretch(2, 4)), None);
        assert_eq!(remat_gap(&stretch(2, 5)), Some((3, 3)));
        assert_eq!(offload_gap(&stretch(2, 5)), None);
    }

    #[test]
    fn a_plan_as_json() {
        let m = Module { name: "m".into(), ..Module::default() };
        let j: serde_json::Value = serde_json::from_str(&plan_json(&m, &Edits::default(), &[])).unwrap();
        assert_eq!(j["module"], "m");
        assert_eq!(j["estimate"], true);
        assert_eq!(j["plan"].as_array().map(Vec::len), Some(0));
    }

    #[test]
    fn difference_arrays_clip_at_the_end() {
        let mut d = vec![0i128; 6];
        add_over(&mut d, 1, 2, 10);
        add_over(&mut d, 4, 99, 5);
        assert_eq!(running(&d, 5), vec![0, 10, 10, 0, 5]);
        assert_eq!(first_peak(&[0, 3, 7, 7, 1]), (7, Some(2)));
        assert_eq!(first_peak(&[0, 0]), (0, None));
    }
}
