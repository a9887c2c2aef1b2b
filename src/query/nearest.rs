//! The nearest source of a value whose instruction has none, found through the HLO text
//! beside the dump ([`Module::hlo`]): a walk back from the instruction over what makes it,
//! nearest first (breadth-first), to the first instruction whose metadata names a source
//! file or a stack frame the text resolves.
//!
//! Owns: the rule, kept in one place (the answers, panels and exports only show its
//! result, always marked inferred). From an instruction the walk goes to
//! - a `fusion`: its fused computation's root, then what that reads, back to the fusion's
//!   operands through the fused parameters;
//! - a `while`'s element `k`: what the body's root tuple puts there; an element written
//!   in place by a dynamic-update-slice (a scan's stacked output) goes to the update
//!   operand, the instruction in the body that makes one iteration's slice, never the
//!   scan call; an element the body passes through goes to the init tuple's operand;
//! - `get-tuple-element`, `tuple` and a TPU's `name#k`: the element's producer;
//! - a parameter of a fused computation: the fusion's operand; a loop body's parameter
//!   element: as the loop's element;
//! - anything else: its operands, in order.
//!
//! The instructions that only hand a value on (`get-tuple-element`, `tuple`, `bitcast`,
//! `copy`, `copy-start`/`-done`, `while`, `parameter`) are read past even where their
//! metadata names a line: that line is where the hand-over was written (the scan's call,
//! its stacking), not where the bytes were made; the first of them is taken when the walk
//! finds nothing else.
//!
//! At most [`DEPTH`] steps back and [`VISITS`] instructions, so that a value with no source
//! anywhere near costs little. An entry parameter has no producer: it stays with no source
//! (its parameter path names it).

use crate::analysis::loops::trip::{parameter_element, root};
use crate::model::hlo::{CallRole, HloInstruction, HloText};
use crate::model::Module;

/// How many steps back from the value's instruction the walk looks.
pub const DEPTH: u32 = 8;
/// How many instructions the walk visits at most.
pub const VISITS: usize = 256;

/// A source found through the HLO text: the location and the instruction whose metadata
/// names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nearest<'m> {
    pub file: &'m str,
    pub line: u32,
    pub function: &'m str,
    /// The instruction the source is read from (`fusion.12`, `dot.3`).
    pub from: &'m str,
    /// Its `stack_frame_id`, when the source is one (for the call stack).
    pub frame: Option<u32>,
}

/// One instruction of the walk: its computation and place, the tuple element wanted
/// (`None`: the whole output), the instruction that called its computation (a fusion or a
/// while, when the walk came in through it) and how many steps back it is.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Step {
    comp: u32,
    at: u32,
    index: Option<u32>,
    caller: Option<(u32, u32)>,
    depth: u32,
    /// The stack frame of the dynamic-update-slice the walk came through: the scan's
    /// stacking (`dynamic_update_index_in_dim`), which its update's cast and broadcast
    /// share; read past, as the scan's call is.
    stacking: Option<u32>,
}

/// The nearest source of instruction `name` through the HLO text, `None` when none is
/// within reach (or the module has no HLO text, or it lacks the instruction).
pub fn nearest_source<'m>(module: &'m Module, name: &str, index: Option<u32>) -> Option<Nearest<'m>> {
    let hlo = module.hlo.as_deref()?;
    let (comp, at) = hlo.position(name)?;
    let mut queue = vec![Step { comp, at, index, caller: None, depth: 0, stacking: None }];
    let mut next = 0;
    // The first source read past (a hand-over's, the stacking's): better than none.
    let mut fallback = None;
    while next < queue.len() && next < VISITS {
        let s = queue[next];
        next += 1;
        let i = instruction(hlo, s.comp, s.at)?;
        let own = own_source(hlo, i);
        match own {
            Some(found) if !forwards(hlo.opcode(i)) && (found.frame.is_none() || found.frame != s.stacking) => {
                return Some(found);
            }
            Some(found) if fallback.is_none() => fallback = Some(found),
            _ => {}
        }
        if s.depth >= DEPTH {
            continue;
        }
        for n in producers(hlo, s) {
            let seen = queue.iter().any(|q| (q.comp, q.at, q.index) == (n.comp, n.at, n.index));
            if !seen {
                queue.push(n);
            }
        }
    }
    fallback
}

/// Whether an instruction only hands on what another made (its own metadata, if any, names
/// where the hand-over was written: a scan's call, its slicing): the walk reads past it.
fn forwards(opcode: &str) -> bool {
    matches!(
        opcode,
        "get-tuple-element" | "tuple" | "bitcast" | "copy" | "copy-start" | "copy-done" | "while" | "parameter"
    )
}

fn instruction(hlo: &HloText, comp: u32, at: u32) -> Option<&HloInstruction> {
    hlo.computations.get(comp as usize)?.instructions.get(at as usize)
}

/// The source an instruction's own metadata names: its file and line, or its stack frame
/// resolved through the text's tables.
fn own_source<'m>(hlo: &'m HloText, i: &HloInstruction) -> Option<Nearest<'m>> {
    let meta = hlo.meta(i);
    let from = hlo.name(i);
    if let Some(file) = meta.source_file.map(|f| hlo.str(f)).filter(|f| !f.is_empty()) {
        let line = meta.source_line.unwrap_or(0);
        return Some(Nearest { file, line, function: "", from, frame: None });
    }
    let id = meta.stack_frame_id?;
    let (file, line, function) = hlo.frames.location(id)?;
    Some(Nearest { file, line, function, from, frame: Some(id) })
}

/// The instruction an operand names in `comp` and the tuple element it reads (`name#k`).
fn operand_step(hlo: &HloText, s: Step, operand: &str, index: Option<u32>) -> Option<Step> {
    let (base, index) = match operand.rsplit_once('#') {
        Some((b, k)) => (b, k.parse().ok()),
        None => (operand, index),
    };
    let comp = hlo.computations.get(s.comp as usize)?;
    let i = hlo.find_in(comp, base)?;
    let at = comp.instructions.iter().position(|x| std::ptr::eq(x, i))? as u32;
    Some(Step { at, index, depth: s.depth + 1, ..s })
}

/// The root of computation `name`, entered from the instruction of `s`.
fn root_step(hlo: &HloText, s: Step, name: &str, index: Option<u32>) -> Option<Step> {
    let c = hlo.computation_index(name)?;
    let r = root(&hlo.computations[c as usize])?;
    let at = hlo.computations[c as usize].instructions.iter().position(|x| std::ptr::eq(x, r))? as u32;
    Some(Step { comp: c, at, index, caller: Some((s.comp, s.at)), depth: s.depth + 1, ..s })
}

/// What the walk visits after the instruction of `s`, nearest first.
fn producers(hlo: &HloText, s: Step) -> Vec<Step> {
    let Some(i) = instruction(hlo, s.comp, s.at) else { return Vec::new() };
    let op = |k: usize, index: Option<u32>| hlo.operand(i, k).and_then(|o| operand_step(hlo, s, o, index));
    let all = || (0..hlo.operands(i).len()).filter_map(|k| op(k, None)).collect::<Vec<_>>();
    match hlo.opcode(i) {
        "get-tuple-element" => {
            let k = hlo.attr(i, "index").and_then(|k| k.parse().ok());
            op(0, k).into_iter().collect()
        }
        "tuple" => match s.index {
            Some(k) => op(k as usize, None).into_iter().collect(),
            None => all(),
        },
        "fusion" => {
            let fused = hlo.called(i, CallRole::Calls);
            let inside = fused.and_then(|f| root_step(hlo, s, f, s.index));
            inside.into_iter().chain(all()).collect()
        }
        "while" => while_element(hlo, s, i).into_iter().collect(),
        "parameter" => parameter_source(hlo, s, i).into_iter().collect(),
        _ => all(),
    }
}

/// Element `k` of a while's output: what the body's root puts there (the update of a
/// dynamic-update-slice writing it in place), or the init operand when the body passes it
/// through; the whole output: the body's root.
fn while_element(hlo: &HloText, s: Step, w: &HloInstruction) -> Option<Step> {
    let body_name = hlo.called(w, CallRole::Body)?;
    let Some(k) = s.index else {
        return root_step(hlo, s, body_name, None);
    };
    let body = hlo.computation(body_name)?;
    let r = root(body).filter(|r| hlo.opcode(r) == "tuple")?;
    let put = hlo.operand(r, k as usize)?;
    if parameter_element(hlo, body, put) == Some(k) {
        let init = hlo.operand(w, 0)?;
        return operand_step(hlo, s, init, Some(k));
    }
    let inside = Step { depth: s.depth, ..root_step(hlo, s, body_name, None)? };
    let written = operand_step(hlo, inside, put, None)?;
    Some(update_of(hlo, written).unwrap_or(written))
}

/// The update operand of a dynamic-update-slice at `s`, or of the one a fusion at `s`
/// ends in (inside its fused computation); the walk from there reads past the stack frame
/// of the slice's writing ([`Step::stacking`]).
fn update_of(hlo: &HloText, s: Step) -> Option<Step> {
    let i = instruction(hlo, s.comp, s.at)?;
    let s = Step { stacking: hlo.meta(i).stack_frame_id, ..s };
    match hlo.opcode(i) {
        "dynamic-update-slice" => operand_step(hlo, s, hlo.operand(i, 1)?, None),
        "fusion" => {
            let fused = root_step(hlo, s, hlo.called(i, CallRole::Calls)?, None)?;
            let r = instruction(hlo, fused.comp, fused.at)?;
            (hlo.opcode(r) == "dynamic-update-slice")
                .then(|| operand_step(hlo, fused, hlo.operand(r, 1)?, None))
                .flatten()
        }
        _ => None,
    }
}

/// A parameter of a computation the walk entered through its caller (else the fusion or
/// while that calls it, [`caller_of`]): the fusion's operand of that number, or the while's
/// element as the loop's output is read ([`while_element`]: what the body writes there,
/// else the init tuple's element).
fn parameter_source(hlo: &HloText, s: Step, p: &HloInstruction) -> Option<Step> {
    let (comp, at) = s.caller.or_else(|| caller_of(hlo, s.comp))?;
    let caller = instruction(hlo, comp, at)?;
    let back = Step { comp, at, index: None, caller: None, ..s };
    match hlo.opcode(caller) {
        "fusion" => {
            let n: usize = hlo.literal(p)?.trim().parse().ok()?;
            operand_step(hlo, back, hlo.operand(caller, n)?, s.index)
        }
        "while" => while_element(hlo, Step { index: s.index, ..back }, caller),
        _ => None,
    }
}

/// The instruction that calls computation `comp` as a fusion's or a while body's, when
/// one does (the first in printed order); the entry and a computation called otherwise
/// have none.
fn caller_of(hlo: &HloText, comp: u32) -> Option<(u32, u32)> {
    let name = hlo.str(hlo.computations.get(comp as usize)?.name);
    let calls = |i: &HloInstruction| {
        (hlo.calls(i).iter())
            .any(|c| matches!(c.role, CallRole::Calls | CallRole::Body) && hlo.str(c.computation) == name)
    };
    (hlo.computations.iter().enumerate()).find_map(|(c, x)| {
        let at = x.instructions.iter().position(|i| calls(i))?;
        Some((c as u32, at as u32))
    })
}
