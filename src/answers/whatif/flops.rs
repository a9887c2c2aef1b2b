//! The price of a what-if in FLOPs, from the HLO text: what an instruction computes, what one
//! step of the program computes (`step_flops`), and what rematerialising costs
//! (`flops_added`).
//!
//! Owns: the count, one rule per kind of instruction, said in [`RULE`]:
//! * a `dot`: 2 × the output's elements × the product of the lhs contracting dimensions;
//! * a `convolution` (a TPU prints dots so, with windows and padding that move a dimension):
//!   2 × output batch × output features × the rhs input features × the window taps that meet
//!   real input (per spatial dimension, summed over the output positions: padding and
//!   `lhs_dilate`'s holes count nothing), so `bsd,dhk->bshk` printed as a 1×8 window padded
//!   7_7 costs 2·b·s·h·k·d, not 8× that;
//! * arithmetic elementwise ops: one per output element; a `reduce`: one per input element;
//! * a fusion, call or async op: what its computation computes; a `while`: its body and
//!   condition × its trip count (unknown: once); a `conditional`: its dearest branch;
//! * anything else (moves, layout, slices, collectives, custom calls): nothing.
//!
//! A rematerialised loop output costs, once per iteration, the forward body's instructions it
//! depends on back to the body's inputs and to what the policy still saves (each counted once
//! for all the outputs dropped together); a rematerialised value costs its defining
//! instruction once per idle stretch freed. An offload costs no FLOPs (its price is the
//! copies' bytes).

use hashbrown::{HashMap, HashSet};

use super::{remat_gap, Edits, StackedOutput};
use crate::analysis::loops::trip::trip_count;
use crate::answers::idle::{value_uses, ScheduleIndex};
use crate::model::hlo::{CallRole, Computation, HloInstruction, HloText};
use crate::model::Module;
use crate::shape::{dimensions, tuple_elements};

/// How FLOPs are counted, for every place they are shown.
pub const RULE: &str = "FLOPs from the HLO text, per device: dots and convolutions 2 × multiply-adds by their shapes (a convolution's padded and dilated taps excluded), elementwise arithmetic one per output element, reduces one per input element, fusions and calls by their computations, loops × their trip count; moves, collectives and custom calls count nothing. A rematerialisation costs the forward instructions it needs again, once per iteration.";

/// Ops counted one FLOP per output element.
const ELEMENTWISE: [&str; 36] = [
    "add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "atan2",
    "negate", "abs", "sign", "exponential", "exponential-minus-one", "log", "log-plus-one",
    "logistic", "tanh", "sqrt", "rsqrt", "cbrt", "sine", "cosine", "tan", "erf", "floor", "ceil",
    "round-nearest-afz", "round-nearest-even", "compare", "select", "clamp", "and", "or", "xor",
    "not",
];

/// Elements of a shape (a tuple's summed); 0 when unknown.
fn elements(shape: &str) -> u64 {
    if let Some(parts) = tuple_elements(shape) {
        return parts.iter().map(|p| elements(p)).fold(0, u64::saturating_add);
    }
    dimensions(shape).map_or(0, |d| d.iter().fold(1u64, |a, &x| a.saturating_mul(x)))
}

/// Counts FLOPs of one text, each computation once.
pub struct Counter<'h> {
    hlo: &'h HloText,
    memo: HashMap<usize, u64>,
    /// Computations being counted (a text that calls itself counts the call as nothing).
    open: HashSet<usize>,
}

impl<'h> Counter<'h> {
    pub fn new(hlo: &'h HloText) -> Counter<'h> {
        Counter { hlo, memo: HashMap::new(), open: HashSet::new() }
    }

    /// One step of the program: its entry computation (`None` without one).
    pub fn step(&mut self) -> Option<u64> {
        let e = self.hlo.entry? as usize;
        Some(self.computation_at(e))
    }

    fn computation_at(&mut self, at: usize) -> u64 {
        if let Some(&f) = self.memo.get(&at) {
            return f;
        }
        if !self.open.insert(at) || self.open.len() > 64 {
            return 0;
        }
        let hlo = self.hlo;
        let comp = &hlo.computations[at];
        let total = (comp.instructions.iter()).fold(0u64, |a, i| a.saturating_add(self.instruction(comp, i)));
        self.open.remove(&at);
        self.memo.insert(at, total);
        total
    }

    fn called(&mut self, name: &str) -> u64 {
        self.hlo.computation_index(name).map_or(0, |c| self.computation_at(c as usize))
    }

    /// What instruction `i` of `comp` computes, what it calls included.
    pub fn instruction(&mut self, comp: &Computation, i: &HloInstruction) -> u64 {
        let hlo = self.hlo;
        let op = hlo.opcode(i);
        match op {
            "dot" => dot(hlo, comp, i),
            "convolution" => convolution(hlo, comp, i),
            "reduce" | "reduce-window" => {
                let n = hlo.operands(i).len() / 2;
                (hlo.operands(i).take(n.max(1)))
                    .map(|o| operand_shape(hlo, comp, o).map_or(0, elements))
                    .fold(0, u64::saturating_add)
            }
            "while" => {
                let (cond, body) = (hlo.called(i, CallRole::Condition), hlo.called(i, CallRole::Body));
                let (c, b) = (cond.and_then(|c| hlo.computation(c)), body.and_then(|b| hlo.computation(b)));
                let trips = trip_count(hlo, i, comp, c, b).0.unwrap_or(1);
                let each = body.map_or(0, |b| self.called(b)).saturating_add(cond.map_or(0, |c| self.called(c)));
                each.saturating_mul(trips)
            }
            "conditional" => {
                let branches: Vec<String> = hlo.calls(i).iter().map(|c| hlo.str(c.computation).to_string()).collect();
                branches.iter().map(|b| self.called(b)).max().unwrap_or(0)
            }
            "fusion" | "call" | "async-start" => {
                let callee = hlo.called(i, CallRole::Calls).or_else(|| hlo.called(i, CallRole::ToApply));
                callee.map_or(0, |c| self.called(c))
            }
            _ if ELEMENTWISE.contains(&op) => elements(hlo.shape(i)),
            _ => 0,
        }
    }
}

impl Counter<'_> {
    /// What recomputing instruction `i` of `comp` costs where a policy saves some of what it
    /// computes: a fusion that also computes a dot the policy saves (a TPU fuses a projection
    /// with the elementwise ops after it) costs its other instructions only.
    pub fn recomputed(&mut self, comp: &Computation, i: &HloInstruction, saves: Saves) -> u64 {
        let hlo = self.hlo;
        let fused = (hlo.opcode(i) == "fusion").then(|| hlo.called(i, CallRole::Calls).and_then(|c| hlo.computation(c))).flatten();
        let Some(fused) = fused else { return self.instruction(comp, i) };
        let dot = |x: &HloInstruction| matches!(hlo.opcode(x), "dot" | "convolution");
        if !fused.instructions.iter().any(|x| dot(x) && saves(hlo, fused, x)) {
            return self.instruction(comp, i);
        }
        (fused.instructions.iter())
            .filter(|x| !(dot(x) && saves(hlo, fused, x)))
            .fold(0u64, |a, x| a.saturating_add(self.instruction(fused, x)))
    }
}

/// The shape of `operand` (`name` or a TPU's `name#k`) of an instruction of `comp`.
pub fn operand_shape<'h>(hlo: &'h HloText, comp: &'h Computation, operand: &str) -> Option<&'h str> {
    let (name, element) = match operand.rsplit_once('#') {
        Some((n, k)) => (n, k.parse::<usize>().ok()),
        None => (operand, None),
    };
    let shape = hlo.shape(hlo.find_in(comp, name)?);
    match element {
        Some(k) => tuple_elements(shape)?.get(k).copied(),
        None => Some(shape),
    }
}

/// The numbers in `{1,2}` (or a bare `1`).
fn numbers(list: &str) -> Vec<usize> {
    list.trim_matches(['{', '}']).split(',').filter_map(|x| x.trim().parse().ok()).collect()
}

/// 2 × output elements × the product of the lhs contracting dimensions.
fn dot(hlo: &HloText, comp: &Computation, i: &HloInstruction) -> u64 {
    let lhs = hlo.operand(i, 0).and_then(|o| operand_shape(hlo, comp, o)).and_then(dimensions);
    let contracting = hlo.attr(i, "lhs_contracting_dims").map(numbers).unwrap_or_default();
    let k = lhs.map_or(1, |d| contracting.iter().filter_map(|&c| d.get(c)).fold(1u64, |a, &x| a.saturating_mul(x)));
    elements(hlo.shape(i)).saturating_mul(k).saturating_mul(2)
}

/// One spatial dimension of a convolution's window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Window {
    pub size: u64,
    pub stride: u64,
    pub pad_low: i64,
    pub lhs_dilate: u64,
    pub rhs_dilate: u64,
}

/// `window={size=1x8 pad=0_0x7_7 stride=… lhs_dilate=… rhs_dilate=…}` per spatial dimension.
pub fn windows(text: &str) -> Vec<Window> {
    let inner = text.trim_matches(['{', '}']);
    let field = |key: &str| -> Vec<&str> {
        (inner.split_whitespace())
            .find_map(|f| f.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
            .map_or_else(Vec::new, |v| v.split('x').collect())
    };
    let num = |v: &[&str], k: usize, d: u64| v.get(k).and_then(|x| x.parse().ok()).unwrap_or(d);
    let (size, stride, pad) = (field("size"), field("stride"), field("pad"));
    let (ld, rd) = (field("lhs_dilate"), field("rhs_dilate"));
    (0..size.len())
        .map(|k| Window {
            size: num(&size, k, 1),
            stride: num(&stride, k, 1).max(1),
            pad_low: pad.get(k).and_then(|p| p.split('_').next()?.parse().ok()).unwrap_or(0),
            lhs_dilate: num(&ld, k, 1).max(1),
            rhs_dilate: num(&rd, k, 1).max(1),
        })
        .collect()
}

/// The (output position, window tap) pairs of one spatial dimension that meet real input:
/// `input` positions, `lhs_dilate − 1` holes between them, padding outside.
pub fn taps(w: Window, input: u64, output: u64) -> u64 {
    if output.saturating_mul(w.size) > 1 << 26 {
        return output.saturating_mul(w.size);
    }
    // In i128: a text's strides and dilations may be any u64.
    let (stride, rd, ld) = (i128::from(w.stride), i128::from(w.rhs_dilate), i128::from(w.lhs_dilate.max(1)));
    let mut n = 0;
    for o in 0..i128::from(output) {
        for t in 0..i128::from(w.size) {
            let p = o * stride + t * rd - i128::from(w.pad_low);
            n += u64::from(p >= 0 && p % ld == 0 && p / ld < i128::from(input));
        }
    }
    n
}

/// See [`RULE`]: 2 × batch × features × rhs input features × the taps meeting real input.
fn convolution(hlo: &HloText, comp: &Computation, i: &HloInstruction) -> u64 {
    let dims = |k: usize| hlo.operand(i, k).and_then(|o| operand_shape(hlo, comp, o)).and_then(dimensions);
    let (Some(lhs), Some(rhs), Some(out)) = (dims(0), dims(1), dimensions(hlo.shape(i))) else { return 0 };
    let Some((ins, out_labels)) = hlo.attr(i, "dim_labels").and_then(|l| l.split_once("->")) else { return 0 };
    let Some((lhs_labels, rhs_labels)) = ins.split_once('_') else { return 0 };
    let at = |labels: &str, c: char, d: &[u64]| labels.chars().position(|x| x == c).and_then(|p| d.get(p).copied());
    let window = hlo.attr(i, "window").map(windows).unwrap_or_default();
    let mut macs = [at(out_labels, 'b', &out), at(out_labels, 'f', &out), at(rhs_labels, 'i', &rhs)]
        .iter()
        .fold(1u64, |a, x| a.saturating_mul(x.unwrap_or(1)));
    for (k, c) in out_labels.chars().filter(char::is_ascii_digit).enumerate() {
        let (input, output) = (at(lhs_labels, c, &lhs).unwrap_or(1), at(out_labels, c, &out).unwrap_or(1));
        let w = window.get(k).copied().unwrap_or(Window { size: 1, stride: 1, pad_low: 0, lhs_dilate: 1, rhs_dilate: 1 });
        macs = macs.saturating_mul(taps(w, input, output));
    }
    macs.saturating_mul(2)
}

/// One step of the module's program, per device (`None` without the HLO text).
pub fn step_flops(module: &Module) -> Option<u64> {
    Counter::new(module.hlo.as_deref()?).step()
}

/// What recomputing a forward body's dropped outputs needs, per iteration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Slice {
    pub flops: u64,
    /// The operands (`fusion.12`, `fusion.9#1`) where a value the policy saves cut the slice.
    pub stops: Vec<String>,
}

/// Whether a policy saves what an instruction of a body computes (never, for no policy).
pub type Saves<'a> = &'a dyn Fn(&HloText, &Computation, &HloInstruction) -> bool;

/// The body's instructions the outputs whose sources are `starts` depend on, back to the
/// body's inputs, to `kept` (sources of what stays stacked) and to what `saves`.
pub fn slice(hlo: &HloText, body: &Computation, starts: &[&str], kept: &HashSet<&str>, saves: Saves) -> Slice {
    let mut counter = Counter::new(hlo);
    let mut seen: HashSet<&str> = HashSet::new();
    let mut stack: Vec<(&str, bool)> = starts.iter().map(|s| (*s, true)).collect();
    let mut out = Slice::default();
    while let Some((operand, start)) = stack.pop() {
        let name = operand.split('#').next().unwrap_or(operand);
        if (!start && kept.contains(name)) || seen.contains(name) {
            continue;
        }
        let Some(i) = hlo.find_in(body, name) else { continue };
        if matches!(hlo.opcode(i), "parameter" | "constant") {
            continue;
        }
        if !start && saves(hlo, body, i) {
            // Each element of a multi-output fusion the slice reads is saved.
            if !out.stops.iter().any(|s| s == operand) {
                out.stops.push(operand.to_string());
            }
            continue;
        }
        seen.insert(name);
        out.flops = out.flops.saturating_add(counter.recomputed(body, i, saves));
        stack.extend(hlo.operands(i).map(|o| (o, false)));
    }
    out.stops.sort_unstable();
    out
}

/// The forward bodies (computation indices) of the dropped outputs.
pub fn bodies(dropped: &[StackedOutput]) -> Vec<u32> {
    let mut b: Vec<u32> = dropped.iter().filter_map(|s| Some(s.forward_body?.0)).collect();
    b.sort_unstable();
    b.dedup();
    b
}

/// The slice of one forward body `b` for the edits' rematerialised outputs (`all`: the
/// module's stacked outputs, those not rematerialised being kept).
pub fn body_slice(hlo: &HloText, b: u32, edits: &Edits, all: &[StackedOutput], saves: Saves) -> Option<(Slice, u64)> {
    let body = hlo.computations.get(b as usize)?;
    let of_body = |s: &&StackedOutput| s.forward_body.map(|f| f.0) == Some(b);
    let remat: HashSet<&str> = edits.loops.iter().map(|s| s.name.as_str()).collect();
    let starts: Vec<&str> = edits.loops.iter().filter(of_body).filter_map(|s| s.source.as_deref()).collect();
    // What stays stacked, on the device or offloaded, is saved: no need to recompute it.
    let kept: HashSet<&str> = (all.iter().filter(of_body))
        .filter(|s| !remat.contains(s.name.as_str()))
        .filter_map(|s| s.source.as_deref())
        .collect();
    let trips = edits.loops.iter().filter(of_body).map(|s| s.trip_count).max().unwrap_or(1);
    Some((slice(hlo, body, &starts, &kept, saves), trips))
}

/// The FLOPs the edits add: each forward body's slice for its rematerialised outputs × its
/// trip count, and each rematerialised value's defining instruction once per stretch freed.
pub fn flops_added(module: &Module, index: &ScheduleIndex, edits: &Edits, all: &[StackedOutput], saves: Saves) -> u64 {
    let Some(hlo) = module.hlo.as_deref() else { return 0 };
    let mut total = 0u64;
    for b in bodies(&edits.loops) {
        if let Some((s, trips)) = body_slice(hlo, b, edits, all, saves) {
            total = total.saturating_add(s.flops.saturating_mul(trips));
        }
    }
    let mut counter = Counter::new(hlo);
    for &v in &edits.remat {
        let Some(value) = module.values.get(v as usize) else { continue };
        let Some((comp, i)) = hlo.find(module.str(module.instruction(value).name)) else { continue };
        let times = value_uses(module, index, v).map_or(0, |u| u.stretches.iter().filter_map(remat_gap).count());
        total = total.saturating_add(counter.instruction(comp, i).saturating_mul(times as u64));
    }
    total
}

/// What no policy saves: the walk stops only at the body's inputs and what stays stacked.
pub fn no_policy(_: &HloText, _: &Computation, _: &HloInstruction) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dot_moved_into_a_padded_window_counts_once() {
        // bsd,dhk->bshk as a TPU prints it: h in a window of 8 padded 7_7 over an input of 1.
        let w = windows("{size=1x8 pad=0_0x7_7 rhs_reversal=0x1}");
        assert_eq!(w.len(), 2);
        assert_eq!((w[1].size, w[1].pad_low), (8, 7));
        assert_eq!(taps(w[1], 1, 8), 8);
        assert_eq!(taps(w[0], 8, 8), 8);
        // bshk,bthk->bhst: b in a window of 8, stride 7, lhs_dilate 8: one tap per output.
        let w = windows("{size=8x8 stride=7x7 lhs_dilate=8x8}");
        assert_eq!(taps(w[0], 8, 8), 8);
        // A plain 3-wide window over 5 positions, no padding: 3 outputs × 3 taps.
        assert_eq!(taps(Window { size: 3, stride: 1, pad_low: 0, lhs_dilate: 1, rhs_dilate: 1 }, 5, 3), 9);
    }

    #[test]
    fn hostile_windows_do_not_overflow() {
        let w = windows("{size=2x3 stride=18446744073709551615x1 pad=-9223372036854775808_0x0_0 lhs_dilate=0x1}");
        assert_eq!(w[0].stride, u64::MAX);
        assert_eq!(w[0].lhs_dilate, 1, "a dilation of 0 reads as 1");
        assert!(taps(w[0], 5, 4) <= 8);
        assert_eq!(windows("{garbage}"), Vec::new());
    }

    #[test]
    fn elements_of_shapes() {
        assert_eq!(elements("bf16[8,1024,8,64]{1,3,2,0:T(8,128)(2,1)}"), 8 * 1024 * 8 * 64);
        assert_eq!(elements("(f32[2,3]{1,0}, s32[])"), 7);
        assert_eq!(elements("token[]"), 1);
        assert_eq!(numbers("{0,2}"), vec![0, 2]);
    }
}
