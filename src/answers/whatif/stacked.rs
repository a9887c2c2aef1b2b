//! A loop's stacked per-iteration outputs, as the what-if rematerialises them: from the HLO
//! module text beside the dump ([`Module::hlo`]), each output of a `while` whose body writes
//! one slice per iteration into it (a `dynamic-update-slice` into the same element of the
//! body's parameter, fused or not), whose leading dimension is the trip count, and which a
//! later `while` of the same computation reads (the backward loop of a scan: the residuals
//! kept for the gradient). Loop-invariant carries and outputs nothing later loops read are
//! not candidates.
//!
//! Owns: this reading of the loops for the what-if only (the buffer an output shares with
//! the values before, in and after the loops; what one iteration stacks, by op_name).

use hashbrown::HashMap;
use serde::Serialize;

use crate::answers::idle::ScheduleIndex;
use crate::model::hlo::{CallRole, Computation, HloInstruction, HloText};
use crate::model::Module;

/// One stacked output of a forward loop.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StackedOutput {
    /// The forward `while` and the output's tuple index: `while.103{2}`.
    pub name: String,
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
}

impl StackedOutput {
    /// One iteration's slice.
    pub fn per_iteration_bytes(&self) -> u64 {
        self.bytes / self.trip_count.max(1)
    }
}

/// `name#3` → (`name`, Some(3)); a TPU dump's tuple element operands are printed so.
fn split_element(operand: &str) -> (&str, Option<u32>) {
    match operand.rsplit_once('#') {
        Some((n, i)) => (n, i.parse().ok()),
        None => (operand, None),
    }
}

/// An attribute of an instruction as printed (`index=3`).
fn attr<'a>(i: &'a HloInstruction, key: &str) -> Option<&'a str> {
    i.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

fn called<'h>(hlo: &'h HloText, i: &HloInstruction, role: CallRole) -> Option<&'h Computation> {
    let c = i.calls.iter().find(|c| c.role == role)?;
    hlo.computation(&c.computation)
}

fn by_name(c: &Computation) -> HashMap<&str, &HloInstruction> {
    c.instructions.iter().map(|i| (i.name.as_str(), i)).collect()
}

/// Follows layout-only and copy instructions back from `name` in one computation: the first
/// instruction that computes something (or the last one found).
fn through_moves<'c>(
    map: &HashMap<&str, &'c HloInstruction>,
    mut name: &'c str,
) -> (Option<&'c HloInstruction>, Option<u32>) {
    let mut element = None;
    let mut last = None;
    for _ in 0..16 {
        let (n, e) = split_element(name);
        let Some(i) = map.get(n).copied() else { break };
        last = Some(i);
        element = e;
        let moves = matches!(
            i.opcode.as_str(),
            "bitcast" | "convert" | "copy" | "copy-done" | "copy-start" | "reshape" | "broadcast"
                | "transpose"
        );
        match i.operands.first() {
            Some(o) if moves => name = o,
            _ => break,
        }
    }
    (last, element)
}

/// Whether `operand` of the body is element `k` of its parameter `param`.
fn is_param_element(map: &HashMap<&str, &HloInstruction>, operand: &str, param: &str, k: u32) -> bool {
    let (n, e) = split_element(operand);
    if n == param {
        return e == Some(k);
    }
    map.get(n).is_some_and(|i| {
        i.opcode == "get-tuple-element"
            && i.operands.first().is_some_and(|o| o == param)
            && attr(i, "index").and_then(|x| x.parse().ok()) == Some(k)
    })
}

/// The fused computation's parameter number of `name` (`param_3.730` → 3), from the
/// `parameter(N)` literal when the reader kept it, else the name.
fn fused_param_number(i: &HloInstruction) -> Option<usize> {
    if let Some(n) = i.literal.as_deref().and_then(|l| l.trim().parse().ok()) {
        return Some(n);
    }
    let rest = i.name.strip_prefix("param_")?;
    rest.split('.').next()?.parse().ok()
}

/// For element `k` of the body's root tuple: if it is a `dynamic-update-slice` into element
/// `k` of the body's parameter (alone or inside a fusion), the op_name of what it stores.
fn stacked_update(
    hlo: &HloText,
    map: &HashMap<&str, &HloInstruction>,
    param: &str,
    k: u32,
    operand: &str,
) -> Option<String> {
    let (producer, element) = through_moves(map, operand);
    let producer = producer?;
    match producer.opcode.as_str() {
        "dynamic-update-slice" => {
            if !is_param_element(map, producer.operands.first()?, param, k) {
                return None;
            }
            let (src, _) = through_moves(map, producer.operands.get(1)?);
            Some(src.and_then(|s| s.op_name.clone()).or_else(|| producer.op_name.clone()).unwrap_or_default())
        }
        "fusion" => {
            let fused = called(hlo, producer, CallRole::Calls)?;
            let fmap = by_name(fused);
            let root = fused.instructions.iter().find(|i| i.is_root)?;
            let out = if root.opcode == "tuple" {
                root.operands.get(element.unwrap_or(0) as usize)?.as_str()
            } else {
                root.name.as_str()
            };
            let (dus, _) = through_moves(&fmap, out);
            let dus = dus.filter(|d| d.opcode == "dynamic-update-slice")?;
            // Its buffer operand is a parameter of the fusion fed element k of the body's.
            let (buffer, _) = through_moves(&fmap, dus.operands.first()?);
            let n = fused_param_number(buffer.filter(|b| b.opcode == "parameter")?)?;
            if !is_param_element(map, producer.operands.get(n)?, param, k) {
                return None;
            }
            let (src, _) = through_moves(&fmap, dus.operands.get(1)?);
            let src = src?;
            let op = if src.opcode == "parameter" {
                // Computed outside the fusion: what feeds that operand in the body.
                let outside = producer.operands.get(fused_param_number(src)?)?;
                through_moves(map, outside).0.and_then(|i| i.op_name.clone())
            } else {
                src.op_name.clone()
            };
            Some(op.or_else(|| dus.op_name.clone()).unwrap_or_default())
        }
        _ => None,
    }
}

/// Whether `operand` of the computation (after following copies) is element `k` of `w`.
fn is_output_of(map: &HashMap<&str, &HloInstruction>, operand: &str, w: &str, k: u32) -> bool {
    let mut name = operand;
    for _ in 0..16 {
        let (n, e) = split_element(name);
        if n == w {
            return e == Some(k);
        }
        let Some(i) = map.get(n) else { return false };
        if i.opcode == "get-tuple-element" && i.operands.first().is_some_and(|o| o == w) {
            return attr(i, "index").and_then(|x| x.parse().ok()) == Some(k);
        }
        match i.operands.first() {
            Some(o) if matches!(i.opcode.as_str(), "copy" | "copy-done" | "copy-start" | "bitcast") => name = o,
            _ => return false,
        }
    }
    false
}

/// The leading dimension of a printed shape (`f32[8,8,1024]{…}` → 8).
fn leading_dim(shape: &str) -> Option<u64> {
    let open = shape.find('[')?;
    let rest = &shape[open + 1..];
    let end = rest.find([',', ']'])?;
    rest[..end].trim().parse().ok()
}

/// Every stacked output of every loop of the module that a later loop reads; empty without
/// the HLO text, a schedule or the loops' trip counts.
pub fn stacked_outputs(module: &Module, index: &ScheduleIndex) -> Vec<StackedOutput> {
    let Some(hlo) = module.hlo.as_deref() else {
        return Vec::new();
    };
    // The values of every while instruction's outputs, by (name, index text).
    let whiles: hashbrown::HashSet<&str> = hlo
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter())
        .filter(|i| i.opcode == "while")
        .map(|i| i.name.as_str())
        .collect();
    let mut outputs: HashMap<(&str, &str), u32> = HashMap::new();
    for (n, v) in module.values.iter().enumerate() {
        let name = module.str(module.instruction(v).name);
        if whiles.contains(name) {
            outputs.insert((name, module.str(v.index)), n as u32);
        }
    }
    let mut out = Vec::new();
    for comp in &hlo.computations {
        let map = by_name(comp);
        for (at, w) in comp.instructions.iter().enumerate() {
            if w.opcode != "while" {
                continue;
            }
            let Some(trip) = w.known_trip_count.filter(|&t| t > 1) else { continue };
            let Some(body) = called(hlo, w, CallRole::Body) else { continue };
            let bmap = by_name(body);
            let Some(root) = body.instructions.iter().find(|i| i.is_root && i.opcode == "tuple") else {
                continue;
            };
            let Some(param) = body.instructions.iter().find(|i| i.opcode == "parameter") else {
                continue;
            };
            let later: Vec<&HloInstruction> =
                comp.instructions[at + 1..].iter().filter(|i| i.opcode == "while").collect();
            for (k, operand) in root.operands.iter().enumerate() {
                let k = k as u32;
                let Some(op_name) = stacked_update(hlo, &bmap, &param.name, k, operand) else {
                    continue;
                };
                let Some(&value) = outputs.get(&(w.name.as_str(), format!("{{{k}}}").as_str())) else {
                    continue;
                };
                let v = &module.values[value as usize];
                if leading_dim(module.str(v.shape)) != Some(trip) {
                    continue;
                }
                let Some(back) = later.iter().find(|b| {
                    b.operands.first().and_then(|t| map.get(t.as_str())).is_some_and(|t| {
                        t.opcode == "tuple" && t.operands.iter().any(|o| is_output_of(&map, o, &w.name, k))
                    })
                }) else {
                    continue;
                };
                let chain = buffer_chain(module, value);
                let life = chain
                    .iter()
                    .filter_map(|&c| module.values[c as usize].live)
                    .fold((u32::MAX, 0), |(lo, hi), r| (lo.min(r.start), hi.max(r.end)));
                let backward_body = called(hlo, back, CallRole::Body).and_then(|b| body_steps(module, index, b));
                out.push(StackedOutput {
                    name: format!("{}{{{k}}}", w.name),
                    index: k,
                    value,
                    color: module.value_color(v),
                    bytes: v.size,
                    trip_count: trip,
                    chain,
                    life,
                    backward_while: back.name.clone(),
                    backward_body,
                    op_name,
                });
            }
        }
    }
    out
}

/// First and last step of a computation's instructions in the schedule.
fn body_steps(module: &Module, index: &ScheduleIndex, body: &Computation) -> Option<(u32, u32)> {
    body.instructions
        .iter()
        .filter_map(|i| index.step_of(module, &i.name))
        .fold(None, |acc, s| match acc {
            None => Some((s, s)),
            Some((lo, hi)) => Some((lo.min(s), hi.max(s))),
        })
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
    fn shapes_and_elements() {
        assert_eq!(leading_dim("f32[8,8,1024,1024]{3,2,1,0:T(8,128)}"), Some(8));
        assert_eq!(leading_dim("s32[]"), None);
        assert_eq!(split_element("wide.param.0#12"), ("wide.param.0", Some(12)));
        assert_eq!(split_element("fusion.3"), ("fusion.3", None));
    }
}
