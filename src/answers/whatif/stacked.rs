//! A loop's stacked per-iteration outputs as the what-if rematerialises them: the elements
//! [`crate::answers::loops`] finds stacked along a leading dimension of the trip count
//! ([`Role::Stacked`], or a carry the body updates in place through one output of a
//! multi-output fusion), of the while's own values, that a later loop reads (the backward scan:
//! the residuals kept for the gradient). Loop-invariant carries, the scan's state and
//! stacked outputs no later loop reads (the backward scan's gradients) are not candidates.
//!
//! Owns: for the what-if only, the buffer such an output shares with the values before, in
//! and after the loops ([`buffer_chain`]), the loop that reads it, and what one iteration
//! stacks, by op_name (what `--keep` matches, as `jax.checkpoint` policies keep dots or
//! named values).

use serde::Serialize;

use super::policy::{stores_of, Stores};
use crate::analysis::loops::trip::root;
use crate::analysis::loops::{loops, Loop};
use crate::answers::idle::{use_instruction, ScheduleIndex};
use crate::answers::loops::{loop_holds, Role};
use crate::model::hlo::{CallRole, Computation, HloInstruction, HloText};
use crate::model::Module;
use crate::shape::dimensions;

/// One stacked output of a forward loop.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StackedOutput {
    /// The forward `while` and the output's tuple index: `while.103{2}`.
    pub name: String,
    /// The forward `while` (`while.103`).
    pub forward_while: String,
    pub index: u32,
    /// The output's value (index into [`Module::values`]).
    pub value: u32,
    pub color: u32,
    /// Its allocated bytes, every iteration's slice together.
    pub bytes: u64,
    pub trip_count: u64,
    /// The values sharing its buffer (same allocation slice, live ranges touching): the buffer
    /// allocated before the loop, the body's parameter and update, the output, the backward
    /// loop's operand.
    pub chain: Vec<u32>,
    /// First and last step any of them is live.
    pub life: (u32, u32),
    /// The later `while` that reads it, and the steps of its body in the schedule.
    pub backward_while: String,
    pub backward_body: Option<(u32, u32)>,
    /// What one iteration writes into it: the op_name of the instruction whose result the
    /// `dynamic-update-slice` stores (through bitcasts, converts, copies and fusion
    /// parameters), else the update's own.
    pub op_name: String,
    /// What that instruction is to a checkpoint policy (a dot, the body's input, other).
    pub stores: Stores,
    /// That instruction's name in the forward body (the fusion that stores, where what it
    /// stores is computed inside it): where the recomputation's slice starts ([`super::flops`]).
    #[serde(skip)]
    pub source: Option<String>,
    /// The forward loop's body: its computation's index in the HLO text and its steps.
    #[serde(skip)]
    pub forward_body: Option<(u32, (u32, u32))>,
    /// The bytes of one iteration's carry of the forward loop (its largest changing element
    /// that is no stack): what a checkpoint policy saves per iteration as the checkpointed
    /// function's input.
    #[serde(skip)]
    pub carry_bytes: u64,
}

impl StackedOutput {
    /// One iteration's slice.
    pub fn per_iteration_bytes(&self) -> u64 {
        self.bytes / self.trip_count.max(1)
    }

    /// The steps one iteration's worth of it is live when it is rematerialised: from the
    /// backward body's first step (the recomputation runs from the body's input, before the
    /// gradient that needs it) to the body's last read of the stored output in the dump's
    /// schedule (what read the stored slice reads the recomputed one; after it the
    /// recomputed value is dead). The whole body where the dump does not say where the body
    /// reads it (no `Used values`).
    pub fn recomputed_steps(&self, module: &Module, index: &ScheduleIndex) -> Option<(u32, u32)> {
        let (lo, hi) = self.backward_body?;
        Some((lo, self.last_read(module, index).unwrap_or(hi)))
    }

    /// The last step of the backward body at which an instruction reads a value of the
    /// output's buffer, its root tuple (which only passes the buffer on) left out.
    fn last_read(&self, module: &Module, index: &ScheduleIndex) -> Option<u32> {
        let (lo, hi) = self.backward_body?;
        let sequence = &module.schedule.as_ref()?.sequence;
        let opcode = |t: u32| {
            let id = *sequence.get(t as usize)?;
            module.instructions.get(id as usize).map(|i| module.str(i.opcode))
        };
        // The uses' steps as the schedule index places them (no use text copied).
        (self.chain.iter())
            .filter_map(|&c| module.positions_and_uses(module.values.get(c as usize)?).map(|(_, uses)| uses))
            .flatten()
            .filter_map(|u| index.step_of(module, use_instruction(u)))
            .filter(|&t| lo <= t && t <= hi && opcode(t).is_some_and(|o| o != "tuple"))
            .max()
    }
}

/// `name#3` → (`name`, Some(3)); a TPU dump's tuple element operands are printed so.
fn split_element(operand: &str) -> (&str, Option<u32>) {
    match operand.rsplit_once('#') {
        Some((n, i)) => (n, i.parse().ok()),
        None => (operand, None),
    }
}

fn called<'h>(hlo: &'h HloText, i: &HloInstruction, role: CallRole) -> Option<&'h Computation> {
    hlo.computation(hlo.called(i, role)?)
}

/// One computation of a text, where names are looked up.
#[derive(Clone, Copy)]
struct Scope<'h> {
    hlo: &'h HloText,
    comp: &'h Computation,
}

impl<'h> Scope<'h> {
    fn get(self, name: &str) -> Option<&'h HloInstruction> {
        self.hlo.find_in(self.comp, name)
    }

    fn op_name(self, i: &HloInstruction) -> Option<String> {
        self.hlo.op_name(i).map(str::to_string)
    }
}

/// Follows layout-only and copy instructions back from `name` in one computation: the first
/// instruction that computes something (or the last one found).
fn through_moves<'h>(
    at: Scope<'h>,
    mut name: &'h str,
) -> (Option<&'h HloInstruction>, Option<u32>) {
    let mut element = None;
    let mut last = None;
    for _ in 0..16 {
        let (n, e) = split_element(name);
        let Some(i) = at.get(n) else { break };
        last = Some(i);
        element = e;
        let moves = matches!(
            at.hlo.opcode(i),
            "bitcast"
                | "convert"
                | "copy"
                | "copy-done"
                | "copy-start"
                | "reshape"
                | "broadcast"
                | "transpose"
        );
        match at.hlo.operand(i, 0) {
            Some(o) if moves => name = o,
            _ => break,
        }
    }
    (last, element)
}

/// Whether `operand` of the body is element `k` of its parameter `param`.
fn is_param_element(at: Scope, operand: &str, param: &str, k: u32) -> bool {
    let (n, e) = split_element(operand);
    if n == param {
        return e == Some(k);
    }
    let hlo = at.hlo;
    at.get(n).is_some_and(|i| {
        hlo.opcode(i) == "get-tuple-element"
            && hlo.operand(i, 0) == Some(param)
            && hlo.attr(i, "index").and_then(|x| x.parse().ok()) == Some(k)
    })
}

/// The fused computation's parameter number of `name` (`param_3.730` → 3), from the
/// `parameter(N)` literal when the reader kept it, else the name.
fn fused_param_number(hlo: &HloText, i: &HloInstruction) -> Option<usize> {
    if let Some(n) = hlo.literal(i).and_then(|l| l.trim().parse().ok()) {
        return Some(n);
    }
    let rest = hlo.name(i).strip_prefix("param_")?;
    rest.split('.').next()?.parse().ok()
}

/// What one iteration stores into a stacked element: its op_name, what it is to a policy,
/// and the body's instruction that computes it.
type Stored = (String, Stores, Option<String>);

/// For element `k` of the body's root tuple: if it is a `dynamic-update-slice` into element
/// `k` of the body's parameter (alone or inside a fusion), what it stores ([`Stored`]).
fn stacked_update(body: Scope, param: &str, k: u32, operand: &str) -> Option<Stored> {
    let hlo = body.hlo;
    let (producer, element) = through_moves(body, operand);
    let producer = producer?;
    match hlo.opcode(producer) {
        "dynamic-update-slice" => {
            if !is_param_element(body, hlo.operand(producer, 0)?, param, k) {
                return None;
            }
            let (src, _) = through_moves(body, hlo.operand(producer, 1)?);
            let stores = src.map_or(Stores::Other, |s| stores_of(hlo, body.comp, s));
            let stores = converted(stores, hlo, producer, src);
            let op = src.and_then(|s| body.op_name(s)).or_else(|| body.op_name(producer));
            Some((op.unwrap_or_default(), stores, src.map(|s| hlo.name(s).to_string())))
        }
        "fusion" => {
            let fused = called(hlo, producer, CallRole::Calls)?;
            let inner = Scope { hlo, comp: fused };
            let root = fused.instructions.iter().find(|i| i.is_root)?;
            let out = if hlo.opcode(root) == "tuple" {
                hlo.operand(root, element.unwrap_or(0) as usize)?
            } else {
                hlo.name(root)
            };
            let (dus, _) = through_moves(inner, out);
            let dus = dus.filter(|d| hlo.opcode(d) == "dynamic-update-slice")?;
            // Its buffer operand is a parameter of the fusion fed element k of the body's.
            let (buffer, _) = through_moves(inner, hlo.operand(dus, 0)?);
            let n = fused_param_number(hlo, buffer.filter(|b| hlo.opcode(b) == "parameter")?)?;
            if !is_param_element(body, hlo.operand(producer, n)?, param, k) {
                return None;
            }
            let (src, _) = through_moves(inner, hlo.operand(dus, 1)?);
            let src = src?;
            let (op, stores, at) = if hlo.opcode(src) == "parameter" {
                // Computed outside the fusion: what feeds that operand in the body.
                let outside = hlo.operand(producer, fused_param_number(hlo, src)?)?;
                let fed = through_moves(body, outside).0;
                let stores = fed.map_or(Stores::Other, |i| stores_of(hlo, body.comp, i));
                let stores = converted(stores, hlo, dus, Some(src));
                (fed.and_then(|i| body.op_name(i)), stores, fed)
            } else {
                (inner.op_name(src), stores_of(hlo, fused, src), Some(producer))
            };
            let at = at.map(|i| hlo.name(i).to_string());
            Some((op.or_else(|| inner.op_name(dus)).unwrap_or_default(), stores, at))
        }
        _ => None,
    }
}

/// The body's input stored in another element type (`f32` of a `bf16` carry: a plain scan
/// keeps the f32 its first op computes) is a residual computed from it, not the input a
/// policy saves.
fn converted(stores: Stores, hlo: &HloText, dus: &HloInstruction, src: Option<&HloInstruction>) -> Stores {
    let kind = |shape: &str| shape.split('[').next().unwrap_or("").trim().to_string();
    let differs = src.is_some_and(|s| kind(hlo.shape(s)) != kind(hlo.shape(dus)));
    if stores == Stores::BodyInput && differs {
        Stores::Other
    } else {
        stores
    }
}

/// The loop after `fwd` at its depth, outside it, whose steps reach `last` (the last step of
/// the output's buffer): the loop that reads the output.
fn reader<'l>(all: &'l [Loop], fwd: &Loop, last: u32) -> Option<&'l Loop> {
    all.iter()
        .filter(|l| l.depth == fwd.depth && l.steps()[0] > fwd.step && l.steps()[0] <= last)
        .find(|l| l.steps()[1] >= last)
}

/// Every stacked output of the module's loops that a later loop reads; empty without the
/// HLO text or where its loops could not be placed.
pub fn stacked_outputs(module: &Module) -> Vec<StackedOutput> {
    let Some(hlo) = module.hlo.as_deref() else {
        return Vec::new();
    };
    let placed = loops(module);
    let mut out = Vec::new();
    for hold in loop_holds(module, &placed) {
        let l = &placed.loops[hold.loop_index as usize];
        let body = hlo.computations.get(l.at[3] as usize);
        // The largest changing element that is no stack (a scan's `h`, not the weights'
        // prefetch buffers nor a mask).
        let carry_bytes: u64 = (hold.elements.iter())
            .filter(|e| e.role == Role::Carry)
            .filter(|e| body.is_some_and(|b| what_is_stacked(hlo, b, e.index).is_none()))
            .map(|e| e.size)
            .max()
            .unwrap_or(0);
        for e in hold
            .elements
            .iter()
            .filter(|e| e.own && matches!(e.role, Role::Stacked | Role::Carry))
        {
            let Some(value) = e.value else { continue };
            // What one iteration stores, if the body updates the element in place; read here
            // too for a "carry" whose update is one output of a multi-output fusion
            // (`fusion.345#3`), which the roles do not follow.
            let stored = body.and_then(|b| what_is_stacked(hlo, b, e.index));
            if stored.is_none() && e.role != Role::Stacked {
                continue;
            }
            let chain = buffer_chain(module, value);
            let life = chain
                .iter()
                .filter_map(|&c| module.values[c as usize].live)
                .fold((u32::MAX, 0), |(lo, hi), r| {
                    (lo.min(r.start), hi.max(r.end))
                });
            let Some(back) = reader(&placed.loops, l, life.1) else {
                continue;
            };
            // The trip count the loop's own text gives, else the reading loop's (a scan's
            // backward loop runs as many times).
            let leading = dimensions(&e.shape).and_then(|d| d.first().copied());
            let Some(trip) = l
                .trip_count
                .or(back.trip_count)
                .filter(|&t| t > 1 && leading == Some(t))
            else {
                continue;
            };
            let v = &module.values[value as usize];
            out.push(StackedOutput {
                name: format!("{}{{{}}}", l.while_name, e.index),
                forward_while: l.while_name.clone(),
                index: e.index,
                value,
                color: module.value_color(v),
                bytes: v.size,
                trip_count: trip,
                chain,
                life,
                backward_while: back.while_name.clone(),
                backward_body: Some((back.body_steps[0], back.body_steps[1])),
                op_name: stored.as_ref().map(|s| s.0.clone()).unwrap_or_default(),
                stores: stored.as_ref().map_or(Stores::Other, |s| s.1),
                source: stored.and_then(|s| s.2),
                forward_body: Some((l.at[3], (l.body_steps[0], l.body_steps[1]))),
                carry_bytes,
            });
        }
    }
    out
}

/// What the body stores into element `k` each iteration ([`Stored`]).
fn what_is_stacked(hlo: &HloText, body: &Computation, k: u32) -> Option<Stored> {
    let param = body
        .instructions
        .iter()
        .find(|i| hlo.opcode(i) == "parameter")?;
    let operand = hlo.operand(root(body).filter(|r| hlo.opcode(r) == "tuple")?, k as usize)?;
    stacked_update(Scope { hlo, comp: body }, hlo.name(param), k, operand)
}

/// The values that share `value`'s buffer: in its allocation at its offset and size, whose
/// live ranges touch the chain's (share a step), grown from `value` outwards.
pub fn buffer_chain(module: &Module, value: u32) -> Vec<u32> {
    let v = &module.values[value as usize];
    let Some(r) = v.live else { return vec![value] };
    let a = module.allocation_of(v);
    let mut same: Vec<(u32, u32, u32)> = (a.values.start..a.values.end)
        .filter_map(|i| {
            let x = &module.values[i as usize];
            let l = x.live?;
            (x.offset == v.offset && x.size == v.size && i != value).then_some((l.start, l.end, i))
        })
        .collect();
    same.sort_unstable();
    let (mut lo, mut hi) = (r.start, r.end);
    let mut chain = vec![value];
    let mut taken = vec![false; same.len()];
    loop {
        let mut grew = false;
        for (j, &(s, e, i)) in same.iter().enumerate() {
            if !taken[j] && s <= hi && lo <= e {
                taken[j] = true;
                chain.push(i);
                lo = lo.min(s);
                hi = hi.max(e);
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    chain.sort_unstable();
    chain
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements() {
        assert_eq!(split_element("wide.param.0#12"), ("wide.param.0", Some(12)));
        assert_eq!(split_element("fusion.3"), ("fusion.3", None));
    }
}
