//! Gathered weights: arrays an all-gather makes from an entry parameter's data (FSDP's
//! gathered weights; XProf's memory view calls them "Gathered"), a category of their own.
//!
//! Owns: finding the program's all-gathers in the text after optimizations (an
//! `all-gather`, its async `all-gather-start`/`-done`, an `async-start` or TPU's fusion
//! calling one) and tracing each one's operand back to the entry parameter whose data it
//! holds, through moves of data ([`moves_data`]), fusions and loops' tuples; and which of the
//! module's values hold a gathered array.

use hashbrown::{HashMap, HashSet};

use super::flow::moves_data;
use crate::answers::loops::value_of_operand;
use crate::model::hlo::{CallRole, Computation, HloInstruction, HloText};
use crate::model::Module;
use crate::shape::logical_size;

/// The all-gather `i` is or starts: itself, or the root of the computation an async
/// start (or TPU's `async-collective-start` fusion) calls, directly or through an
/// `AsyncCollectiveStart` custom call.
fn gather_of<'a>(hlo: &'a HloText, i: &'a HloInstruction) -> Option<&'a HloInstruction> {
    match hlo.opcode(i) {
        "all-gather" | "all-gather-start" => Some(i),
        "async-start" | "fusion" => {
            let called = hlo.computation(hlo.called(i, CallRole::Calls)?)?;
            let root = called.instructions.iter().rev().find(|x| x.is_root)?;
            let root = match hlo.custom_call_target(root) {
                Some("AsyncCollectiveStart") => hlo.find_in(called, hlo.operand(root, 0)?)?,
                _ => root,
            };
            (hlo.opcode(root) == "all-gather").then_some(root)
        }
        _ => None,
    }
}

/// One all-gather of the program: the instruction that is or starts it, the `*-done` (or
/// TPU's done fusion) ending an asynchronous one, the gathered array's bytes and the entry
/// parameter (its number) it is traced to, when it is.
#[derive(Clone, Copy, Debug)]
pub struct Gather<'a> {
    pub name: &'a str,
    pub done: Option<&'a str>,
    pub bytes: u64,
    pub parameter: Option<u32>,
}

/// Every all-gather of the program's own computations (an asynchronous one once, at its
/// start; those inside a fusion or an async start are their caller's), in text order.
pub fn gathers(hlo: &HloText) -> Vec<Gather<'_>> {
    let inner = called_computations(hlo);
    let top = hlo.computations.iter().filter(|c| !inner.contains(hlo.str(c.name)));
    let mut out = Vec::new();
    for (comp, i) in top.flat_map(|c| c.instructions.iter().map(move |i| (c, i))) {
        let Some(gather) = gather_of(hlo, i) else { continue };
        let name = hlo.name(i);
        out.push(Gather {
            name,
            done: done_of(hlo, comp, name),
            bytes: logical_size(hlo.shape(gather)).unwrap_or(0),
            parameter: trace_gather(hlo, comp, i, gather),
        });
    }
    out
}

/// The values of a module defined by the gathers' instructions (and their dones), by
/// instruction name.
pub struct ByName<'m>(HashMap<&'m str, Vec<u32>>);

impl<'m> ByName<'m> {
    pub fn new(module: &'m Module, gathers: &[Gather]) -> ByName<'m> {
        let names: HashSet<&str> = gathers.iter().flat_map(|g| std::iter::once(g.name).chain(g.done)).collect();
        // Each instruction's name looked up once, not once per value (a start's tuple has many).
        let asked: Vec<bool> = (module.instructions.iter()).map(|i| names.contains(module.str(i.name))).collect();
        let mut map: HashMap<&str, Vec<u32>> = HashMap::new();
        for (k, v) in module.values.iter().enumerate() {
            if asked.get(v.instruction as usize) == Some(&true) {
                map.entry(module.str(module.instruction(v).name)).or_default().push(k as u32);
            }
        }
        ByName(map)
    }

    /// The values of `g`'s instruction and its done.
    pub fn of(&self, g: &Gather) -> Vec<u32> {
        (std::iter::once(g.name).chain(g.done))
            .flat_map(|n| self.0.get(n).into_iter().flatten().copied())
            .collect()
    }
}

/// The values of `g` that hold the gathered array: those whose shape holds at least its
/// logical bytes (an async start's tuple also holds the operand's shard, and a table whose
/// buffer TPU pads to the gathered array's size: `s32[2]` in 4,096 bytes of host memory).
pub fn holding(module: &Module, g: &Gather, values: &[u32]) -> Vec<u32> {
    let logical = |v: &crate::model::Value| v.logical_size.or_else(|| logical_size(module.str(v.shape)));
    (values.iter().copied())
        .filter(|&v| logical(&module.values[v as usize]).unwrap_or(0) >= g.bytes)
        .collect()
}

/// The values of `module` holding an array all-gathered from an entry parameter (the
/// categories' "gathered weights").
pub fn gathered_weights(module: &Module) -> HashSet<u32> {
    let Some(hlo) = module.hlo.as_deref() else { return HashSet::new() };
    let list = gathers(hlo);
    if !list.iter().any(|g| g.parameter.is_some()) {
        return HashSet::new();
    }
    let traced: Vec<Gather> = list.into_iter().filter(|g| g.parameter.is_some()).collect();
    let by_name = ByName::new(module, &traced);
    (traced.iter())
        .flat_map(|g| holding(module, g, &by_name.of(g)))
        .collect()
}

/// The computations another instruction runs as its own part (`calls=` of a fusion or an
/// async start): their all-gathers are their caller's, counted there.
fn called_computations(hlo: &HloText) -> HashSet<&str> {
    (hlo.instructions().flat_map(|i| hlo.calls(i)))
        .filter(|c| c.role == CallRole::Calls)
        .map(|c| hlo.str(c.computation))
        .collect()
}

/// The instruction that ends the asynchronous gather `start` in `comp`: an `*-done` of it,
/// or TPU's done fusion (`AsyncCollectiveDone`) at the end of the fusions that carry the
/// start's tuple on (each takes the previous one's elements first).
fn done_of<'a>(hlo: &'a HloText, comp: &'a Computation, start: &'a str) -> Option<&'a str> {
    let mut at = start;
    for _ in 0..16 {
        let next = (comp.instructions.iter())
            .find(|x| hlo.operand(x, 0).is_some_and(|o| value_of_operand(hlo, comp, o).0 == at))?;
        let root = (hlo.opcode(next) == "fusion")
            .then(|| hlo.computation(hlo.called(next, CallRole::Calls)?)?.instructions.iter().rev().find(|x| x.is_root))
            .flatten();
        let carries = root.is_some_and(|r| hlo.opcode(r) == "tuple");
        let done = hlo.opcode(next).ends_with("-done")
            || root.is_some_and(|r| hlo.custom_call_target(r) == Some("AsyncCollectiveDone"));
        match (done, carries) {
            (true, _) => return Some(hlo.name(next)),
            (false, true) => at = hlo.name(next),
            (false, false) => return None,
        }
    }
    None
}

/// The entry parameter the gather `gather` (started by `i` in `comp`: itself, or a fusion
/// or async start whose computation holds it) gathers.
fn trace_gather(hlo: &HloText, comp: &Computation, i: &HloInstruction, gather: &HloInstruction) -> Option<u32> {
    if std::ptr::eq(i, gather) {
        return Trace { hlo, calls: Vec::new(), steps: 0 }.from(comp, hlo.operand(i, 0)?);
    }
    let inside = hlo.computation(hlo.called(i, CallRole::Calls)?)?;
    Trace { hlo, calls: vec![(comp, i)], steps: 0 }.from(inside, hlo.operand(gather, 0)?)
}

/// A walk back from an operand to the entry parameter whose data it holds: through moves
/// of data ([`moves_data`], and `bitcast`, `convert`, `reshape`, `transpose`, `copy`), into
/// the computation of a fusion (its root) and out of it (its parameter k is the fusion's
/// operand k), into loops' tuples (a body's parameter element k is the loop's init element
/// k). A concatenation is traced when all its pieces come from one parameter.
struct Trace<'a> {
    hlo: &'a HloText,
    /// The fusions entered, innermost last, with the computation each is in.
    calls: Vec<(&'a Computation, &'a HloInstruction)>,
    /// Steps taken (at most 256 in all).
    steps: u32,
}

impl<'a> Trace<'a> {
    fn from(&mut self, comp: &'a Computation, operand: &'a str) -> Option<u32> {
        let hlo = self.hlo;
        let (mut comp, (mut base, mut k)) = (comp, node(hlo, comp, operand));
        loop {
            self.steps += 1;
            if self.steps > 256 {
                return None;
            }
            let i = hlo.find_in(comp, base)?;
            let next: &'a str = match (hlo.opcode(i), k) {
                ("parameter", None) if hlo.is_entry(comp) => return hlo.literal(i)?.trim().parse().ok(),
                ("parameter", _) if self.calls.last().is_some_and(|(_, f)| calls(hlo, f, comp)) => {
                    // A fusion's parameter n: the fusion's operand n, where it is called.
                    let (outer, f) = self.calls.pop()?;
                    let n: usize = hlo.literal(i)?.trim().parse().ok()?;
                    comp = outer;
                    hlo.operand(f, n)?
                }
                ("parameter", Some(e)) => {
                    // A loop body's tuple element e: the loop's init, element e.
                    let (outer, w) = while_of(hlo, comp)?;
                    let (init, _) = node(hlo, outer, hlo.operand(w, 0)?);
                    let t = hlo.find_in(outer, init)?;
                    comp = outer;
                    if hlo.opcode(t) != "tuple" {
                        (base, k) = (hlo.name(t), Some(e));
                        continue;
                    }
                    hlo.operand(t, e)?
                }
                ("tuple", Some(e)) => hlo.operand(i, e)?,
                ("fusion", _) => {
                    let inside = hlo.computation(hlo.called(i, CallRole::Calls)?)?;
                    let root = inside.instructions.iter().rev().find(|x| x.is_root)?;
                    self.calls.push((comp, i));
                    comp = inside;
                    match (k, hlo.opcode(root)) {
                        (None, _) => hlo.name(root),
                        (Some(e), "tuple") => hlo.operand(root, e)?,
                        _ => return None,
                    }
                }
                ("concatenate" | "custom-call", _) if moves_data(hlo, i) => return self.pieces(comp, i),
                ("bitcast" | "convert" | "reshape" | "transpose" | "copy", _) => hlo.operand(i, 0)?,
                _ if moves_data(hlo, i) => hlo.operand(i, 0)?,
                _ => return None,
            };
            (base, k) = node(hlo, comp, next);
        }
    }

    /// The parameter all the pieces of a concatenation come from.
    fn pieces(&mut self, comp: &'a Computation, i: &'a HloInstruction) -> Option<u32> {
        let mut found = None;
        for o in self.hlo.operands(i) {
            let mut piece = Trace { hlo: self.hlo, calls: self.calls.clone(), steps: self.steps };
            let p = piece.from(comp, o)?;
            self.steps = piece.steps;
            if found.is_some_and(|f| f != p) {
                return None;
            }
            found = Some(p);
        }
        found
    }
}

/// The instruction an operand names and the tuple element, if one (`while.4#2`: `while.4`, 2).
fn node<'a>(hlo: &'a HloText, comp: &'a Computation, operand: &'a str) -> (&'a str, Option<usize>) {
    let (base, index) = value_of_operand(hlo, comp, operand);
    (base, index.trim_matches(['{', '}']).parse().ok())
}

/// Whether fusion `f` runs computation `comp`.
fn calls(hlo: &HloText, f: &HloInstruction, comp: &Computation) -> bool {
    hlo.called(f, CallRole::Calls).is_some_and(|c| c == hlo.str(comp.name))
}

/// The computation and `while` instruction whose body is `body`.
fn while_of<'a>(hlo: &'a HloText, body: &Computation) -> Option<(&'a Computation, &'a HloInstruction)> {
    let name = hlo.str(body.name);
    (hlo.computations.iter())
        .flat_map(|c| c.instructions.iter().map(move |i| (c, i)))
        .find(|(_, i)| hlo.opcode(i) == "while" && hlo.called(i, CallRole::Body) == Some(name))
}
