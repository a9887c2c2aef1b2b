//! A while loop's trip count and the reading of its tuples: `known_trip_count` where XLA
//! prints it (CPU, GPU), else the canonical form the TPU prints, a condition `i < N` (or
//! `i <= N`) with `N` a constant, `i` element `k` of the loop's tuple, initialised to a
//! constant in the while's init tuple and stepped by a constant in the body's root tuple.

use serde::Serialize;

use crate::model::hlo::{Computation, HloInstruction};

/// Where a trip count comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TripSource {
    /// `backend_config={"known_trip_count":{"n":"8"}}`.
    Printed,
    /// The condition `i < N` with `i` initialised and stepped by constants.
    Condition,
    /// Neither: the count is unknown.
    Unknown,
}

/// An instruction of `comp` by name.
pub fn find<'a>(comp: &'a Computation, name: &str) -> Option<&'a HloInstruction> {
    comp.instructions.iter().find(|i| i.name == name)
}

/// The computation's root (the `ROOT` line, else its last instruction).
pub fn root(comp: &Computation) -> Option<&HloInstruction> {
    comp.instructions
        .iter()
        .find(|i| i.is_root)
        .or(comp.instructions.last())
}

/// The computation's tuple parameter (`parameter(0)`).
pub fn parameter(comp: &Computation) -> Option<&HloInstruction> {
    comp.instructions.iter().find(|i| i.opcode == "parameter")
}

/// Which element of `comp`'s tuple parameter the operand `name` is: `wide.param.1#3` (the
/// TPU's unprinted get-tuple-element) or a printed `get-tuple-element(param), index=3`.
pub fn parameter_element(comp: &Computation, name: &str) -> Option<u32> {
    let p = parameter(comp)?;
    if let Some((base, k)) = name.rsplit_once('#') {
        return (base == p.name).then(|| k.parse().ok()).flatten();
    }
    let i = find(comp, name)?;
    if i.opcode != "get-tuple-element" || i.operands.first().map(String::as_str) != Some(&p.name) {
        return None;
    }
    i.attrs
        .iter()
        .find(|(k, _)| k == "index")
        .and_then(|(_, v)| v.parse().ok())
}

/// The integer an operand holds, following `copy`, `bitcast` and `convert` within `comp`
/// to a `constant` (at most 16 steps).
fn constant_value(comp: &Computation, name: &str) -> Option<i64> {
    let mut at = name;
    for _ in 0..16 {
        let i = find(comp, at)?;
        match i.opcode.as_str() {
            "constant" => return i.literal.as_deref()?.trim().parse().ok(),
            "copy" | "bitcast" | "convert" => at = i.operands.first()?,
            _ => return None,
        }
    }
    None
}

/// The trip count of `w`, a while in `outer`, with `condition` and `body` its computations.
pub fn trip_count(
    w: &HloInstruction,
    outer: &Computation,
    condition: Option<&Computation>,
    body: Option<&Computation>,
) -> (Option<u64>, TripSource) {
    if let Some(n) = w.known_trip_count {
        return (Some(n), TripSource::Printed);
    }
    let counted = condition
        .zip(body)
        .and_then(|(c, b)| canonical_count(w, outer, c, b));
    match counted {
        Some(n) => (Some(n), TripSource::Condition),
        None => (None, TripSource::Unknown),
    }
}

/// The index `k` of the loop counter and the bound, from the condition's root `i < N`.
pub fn counter(condition: &Computation) -> Option<(u32, i64, bool)> {
    let r = root(condition)?;
    if r.opcode != "compare" || r.operands.len() != 2 {
        return None;
    }
    let (lhs, rhs) = (&r.operands[0], &r.operands[1]);
    let (k, n, inclusive) = match r.direction.as_deref()? {
        "LT" => (parameter_element(condition, lhs)?, constant_value(condition, rhs)?, false),
        "LE" => (parameter_element(condition, lhs)?, constant_value(condition, rhs)?, true),
        "GT" => (parameter_element(condition, rhs)?, constant_value(condition, lhs)?, false),
        "GE" => (parameter_element(condition, rhs)?, constant_value(condition, lhs)?, true),
        _ => return None,
    };
    Some((k, n, inclusive))
}

fn canonical_count(
    w: &HloInstruction,
    outer: &Computation,
    condition: &Computation,
    body: &Computation,
) -> Option<u64> {
    let (k, n, inclusive) = counter(condition)?;
    // The init: element k of the while's operand tuple, a constant.
    let init = find(outer, w.operands.first()?)?;
    if init.opcode != "tuple" {
        return None;
    }
    let start = constant_value(outer, init.operands.get(k as usize)?)?;
    // The step: the body's root element k is `add(i, constant s)`.
    let r = root(body)?;
    if r.opcode != "tuple" {
        return None;
    }
    let next = find(body, r.operands.get(k as usize)?)?;
    if next.opcode != "add" || next.operands.len() != 2 {
        return None;
    }
    let (a, b) = (&next.operands[0], &next.operands[1]);
    let s = if parameter_element(body, a) == Some(k) {
        constant_value(body, b)?
    } else if parameter_element(body, b) == Some(k) {
        constant_value(body, a)?
    } else {
        return None;
    };
    if s <= 0 {
        return None;
    }
    let span = n.checked_sub(start)?.checked_add(i64::from(inclusive))?;
    Some(if span <= 0 { 0 } else { (span as u64).div_ceil(s as u64) })
}
