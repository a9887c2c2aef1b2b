//! A while loop's trip count and the reading of its tuples: `known_trip_count` where XLA
//! prints it (CPU, GPU), else the canonical form the TPU prints, a condition `i < N` (or
//! `i <= N`) with `N` a constant, `i` element `k` of the loop's tuple, initialised to a
//! constant in the while's init tuple and stepped by a constant in the body's root tuple.

use serde::Serialize;

use crate::model::hlo::{Computation, HloInstruction, HloText};

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

/// The computation's root (the `ROOT` line, else its last instruction).
pub fn root(comp: &Computation) -> Option<&HloInstruction> {
    comp.instructions
        .iter()
        .find(|i| i.is_root)
        .or(comp.instructions.last())
}

/// The computation's tuple parameter (`parameter(0)`).
pub fn parameter<'a>(hlo: &HloText, comp: &'a Computation) -> Option<&'a HloInstruction> {
    comp.instructions
        .iter()
        .find(|i| hlo.opcode(i) == "parameter")
}

/// Which element of `comp`'s tuple parameter the operand `name` is: `wide.param.1#3` (the
/// TPU's unprinted get-tuple-element) or a printed `get-tuple-element(param), index=3`,
/// through `copy` and `bitcast` (at most 16).
pub fn parameter_element(hlo: &HloText, comp: &Computation, name: &str) -> Option<u32> {
    let p = hlo.name(parameter(hlo, comp)?);
    let mut at = name;
    for _ in 0..16 {
        if let Some((base, k)) = at.rsplit_once('#') {
            return (base == p).then(|| k.parse().ok()).flatten();
        }
        let i = hlo.find_in(comp, at)?;
        match hlo.opcode(i) {
            "copy" | "bitcast" => at = hlo.operand(i, 0)?,
            "get-tuple-element" if hlo.operand(i, 0) == Some(p) => {
                return hlo.attr(i, "index").and_then(|v| v.parse().ok());
            }
            _ => return None,
        }
    }
    None
}

/// The integer an operand holds, following `copy`, `bitcast` and `convert` within `comp`
/// to a `constant` (at most 16 steps).
fn constant_value(hlo: &HloText, comp: &Computation, name: &str) -> Option<i64> {
    let mut at = name;
    for _ in 0..16 {
        let i = hlo.find_in(comp, at)?;
        match hlo.opcode(i) {
            "constant" => return hlo.literal(i)?.trim().parse().ok(),
            "copy" | "bitcast" | "convert" => at = hlo.operand(i, 0)?,
            _ => return None,
        }
    }
    None
}

/// The trip count of `w`, a while in `outer`, with `condition` and `body` its computations.
pub fn trip_count(
    hlo: &HloText,
    w: &HloInstruction,
    outer: &Computation,
    condition: Option<&Computation>,
    body: Option<&Computation>,
) -> (Option<u64>, TripSource) {
    if let Some(n) = hlo.known_trip_count(w) {
        return (Some(n), TripSource::Printed);
    }
    let counted = condition
        .zip(body)
        .and_then(|(c, b)| canonical_count(hlo, w, outer, c, b));
    match counted {
        Some(n) => (Some(n), TripSource::Condition),
        None => (None, TripSource::Unknown),
    }
}

/// The two operands of `i` when it has exactly two.
fn two<'a>(hlo: &'a HloText, i: &HloInstruction) -> Option<(&'a str, &'a str)> {
    let mut o = hlo.operands(i);
    (o.len() == 2).then(|| (o.next().unwrap_or(""), o.next().unwrap_or("")))
}

/// The index `k` of the loop counter and the bound, from the condition's root `i < N`.
pub fn counter(hlo: &HloText, condition: &Computation) -> Option<(u32, i64, bool)> {
    let r = root(condition)?;
    if hlo.opcode(r) != "compare" {
        return None;
    }
    let (lhs, rhs) = two(hlo, r)?;
    let element = |o| parameter_element(hlo, condition, o);
    let constant = |o| constant_value(hlo, condition, o);
    let (k, n, inclusive) = match hlo.direction(r)? {
        "LT" => (element(lhs)?, constant(rhs)?, false),
        "LE" => (element(lhs)?, constant(rhs)?, true),
        "GT" => (element(rhs)?, constant(lhs)?, false),
        "GE" => (element(rhs)?, constant(lhs)?, true),
        _ => return None,
    };
    Some((k, n, inclusive))
}

/// The constant `s` when `name` in `body` is `add(element k, constant s)`.
fn step(hlo: &HloText, body: &Computation, name: &str, k: u32) -> Option<i64> {
    let next = hlo.find_in(body, name)?;
    if hlo.opcode(next) != "add" {
        return None;
    }
    let (a, b) = two(hlo, next)?;
    if parameter_element(hlo, body, a) == Some(k) {
        constant_value(hlo, body, b)
    } else if parameter_element(hlo, body, b) == Some(k) {
        constant_value(hlo, body, a)
    } else {
        None
    }
}

/// The element of a loop's tuple that counts its iterations: the `i` of the condition
/// `i < N`, else (a condition XLA fused, as the CPU's) the first element the body steps by
/// a constant (`add(i, 1)`).
pub fn counter_element(hlo: &HloText, condition: &Computation, body: &Computation) -> Option<u32> {
    if let Some((k, _, _)) = counter(hlo, condition) {
        return Some(k);
    }
    let r = root(body).filter(|r| hlo.opcode(r) == "tuple")?;
    (hlo.operands(r).enumerate())
        .find(|&(k, o)| step(hlo, body, o, k as u32).is_some())
        .map(|(k, _)| k as u32)
}

fn canonical_count(
    hlo: &HloText,
    w: &HloInstruction,
    outer: &Computation,
    condition: &Computation,
    body: &Computation,
) -> Option<u64> {
    let (k, n, inclusive) = counter(hlo, condition)?;
    // The init: element k of the while's operand tuple, a constant.
    let init = hlo.find_in(outer, hlo.operand(w, 0)?)?;
    if hlo.opcode(init) != "tuple" {
        return None;
    }
    let start = constant_value(hlo, outer, hlo.operand(init, k as usize)?)?;
    // The step: the body's root element k is `add(i, constant s)`.
    let r = root(body)?;
    if hlo.opcode(r) != "tuple" {
        return None;
    }
    let s = step(hlo, body, hlo.operand(r, k as usize)?, k)?;
    if s <= 0 {
        return None;
    }
    let span = n.checked_sub(start)?.checked_add(i64::from(inclusive))?;
    Some(if span <= 0 {
        0
    } else {
        (span as u64).div_ceil(s as u64)
    })
}
