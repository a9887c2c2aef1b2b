//! Donation: parameters whose buffers the program could have reused for its outputs.
//!
//! Owns: two findings from the header of the text after optimizations. *Left over*: a
//! parameter donated but not aliased: a `buffer_donor` XLA left unused, or a leaf of an
//! argument whose other leaves are aliased (JAX donates whole arguments and drops, with
//! "Some donated buffers were not usable", the leaves it cannot pair; it pairs same-shaped
//! buffers in order, so the leaf left over may not be the one whose output changed).
//! *Double buffered*: a parameter neither aliased nor donated with an output of the same
//! per-device shape and dtype computed from it (paired in order, as JAX pairs them): both
//! are live when the program ends, and donating the parameter would save its bytes. An
//! output the parameter does not flow into (a seed beside a step count set to 0) is no
//! new version of it.

use hashbrown::{HashMap, HashSet};
use serde::Serialize;

use super::{bare, Params, NEEDS_AFTER};
use crate::answers::loops::value_of_operand;
use crate::model::hlo::HloText;
use crate::model::Module;
use crate::shape::tuple_elements;

/// The answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Donation {
    /// Parameters aliased to an output (`input_output_alias`).
    pub aliased: u32,
    pub aliased_bytes: u64,
    pub left_over: Vec<DonationRow>,
    pub left_over_bytes: u64,
    /// Parameters aliased to an output of another index (`output` in the row): where JAX
    /// paired same-shaped buffers in order around a leaf it could not pair.
    pub moved: Vec<DonationRow>,
    pub double_buffered: Vec<DonationRow>,
    /// What donating them would save, per device.
    pub double_buffered_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs: Option<String>,
}

/// One parameter of a finding.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DonationRow {
    pub parameter: u32,
    pub path: String,
    /// Per device, without layout.
    pub shape: String,
    pub bytes: u64,
    /// Double buffered: the output of its shape; left over: how it is known.
    pub output: Option<u32>,
    pub why: String,
    #[serde(skip)]
    pub values: Vec<u32>,
}

/// The argument a pytree path belongs to (`opt_state[0].mu['w']` → `opt_state`).
fn argument(path: &str) -> &str {
    let end = path.find(['[', '.']).unwrap_or(path.len());
    &path[..end]
}

/// Both findings of `module`.
pub fn donation(module: &Module, params: &Params) -> Donation {
    let Some(hlo) = module.hlo.as_deref() else {
        return Donation { needs: Some(NEEDS_AFTER.to_string()), ..Donation::default() };
    };
    let aliased: Vec<u32> = hlo.aliases.iter().map(|a| a.parameter).collect();
    let out_aliased: Vec<u32> = (hlo.aliases.iter()).filter_map(|a| a.output.first().copied()).collect();
    let donors: Vec<u32> = hlo.buffer_donors.iter().map(|d| d.parameter).collect();
    let row = |p: &super::Param, output: Option<u32>, why: String| DonationRow {
        parameter: p.number,
        path: p.path.clone(),
        shape: p.shape.clone().unwrap_or_default(),
        bytes: p.bytes.unwrap_or(0),
        output,
        why,
        values: p.values.clone(),
    };
    let mut d = Donation::default();
    for p in params.list.iter().filter(|p| aliased.contains(&p.number)) {
        d.aliased += 1;
        d.aliased_bytes += p.bytes.unwrap_or(0);
    }
    for a in hlo.aliases.iter().filter(|a| a.output.first() != Some(&a.parameter)) {
        if let (Some(p), Some(&o)) = (params.get(a.parameter), a.output.first()) {
            d.moved.push(row(p, Some(o), format!("aliased to output {o}, not {}", p.number)));
        }
    }
    let arg_aliased = |p: &super::Param| {
        (params.list.iter()).any(|q| aliased.contains(&q.number) && argument(&q.path) == argument(&p.path) && !q.path.is_empty())
    };
    let mut outputs = outputs(hlo);
    let mut reach = Reach { hlo, from: HashMap::new() };
    for (k, o) in outputs.iter_mut().enumerate() {
        if out_aliased.contains(&(k as u32)) {
            o.clear();
        }
    }
    for p in params.list.iter().filter(|p| !aliased.contains(&p.number)) {
        if donors.contains(&p.number) {
            d.left_over.push(row(p, None, "a buffer_donor XLA left unused".into()));
        } else if arg_aliased(p) && p.path.contains(['[', '.']) {
            let why = format!("the other leaves of `{}` are aliased: donated, but no output could take it", argument(&p.path));
            d.left_over.push(row(p, None, why));
        } else if let Some(k) = (p.shape.as_deref())
            .and_then(|s| (0..outputs.len()).find(|&k| outputs[k] == s && reach.from(k).contains(&p.number)))
        {
            outputs[k].clear();
            let why = format!("output {k}, computed from it, has its shape and both are live when the program ends");
            d.double_buffered.push(row(p, Some(k as u32), why));
        }
    }
    d.left_over_bytes = d.left_over.iter().map(|r| r.bytes).sum();
    d.double_buffered_bytes = d.double_buffered.iter().map(|r| r.bytes).sum();
    d
}

/// The entry parameters each output is computed from, found when asked: an output that is
/// not (jit_init's step count, a constant, beside the seed of its shape) does not replace
/// the parameter, so keeping both is no double buffering.
struct Reach<'a> {
    hlo: &'a HloText,
    from: HashMap<usize, HashSet<u32>>,
}

impl Reach<'_> {
    /// The entry parameters output `k` is computed from: every one the entry computation's
    /// dataflow reaches going back from it (a loop or fusion from all its operands).
    fn from(&mut self, k: usize) -> &HashSet<u32> {
        let hlo = self.hlo;
        self.from.entry(k).or_insert_with(|| {
            let mut found = HashSet::new();
            let entry = hlo.computations.iter().find(|c| hlo.is_entry(c));
            let Some((entry, root)) = entry.zip(hlo.entry_root()) else { return found };
            let start = match hlo.opcode(root) {
                "tuple" => hlo.operand(root, k).and_then(|o| hlo.find_in(entry, value_of_operand(hlo, entry, o).0)),
                _ => Some(root),
            };
            let mut todo: Vec<_> = start.into_iter().collect();
            let mut seen: HashSet<&str> = HashSet::new();
            while let Some(i) = todo.pop() {
                if !seen.insert(hlo.name(i)) {
                    continue;
                }
                if hlo.opcode(i) == "parameter" {
                    found.extend(hlo.literal(i).and_then(|n| n.trim().parse::<u32>().ok()));
                }
                todo.extend(hlo.operands(i).filter_map(|o| hlo.find_in(entry, value_of_operand(hlo, entry, o).0)));
            }
            found
        })
    }
}

/// The entry root's shapes by output index, without layout (one for an array root).
fn outputs(hlo: &HloText) -> Vec<String> {
    let Some(root) = hlo.entry_root() else { return Vec::new() };
    let shape = hlo.shape(root);
    match tuple_elements(shape) {
        Some(es) => es.into_iter().map(|e| bare(e).to_string()).collect(),
        None => vec![bare(shape).to_string()],
    }
}
