//! Gathered weights: values an all-gather makes from an entry parameter (FSDP's gathered
//! weights), and which of them are live at the peak: a category of their own, as XProf's
//! memory view has "Gathered".
//!
//! Owns: finding them in the text after optimizations (an `all-gather`, its async
//! `all-gather-start`/`-done`, or an `async-start` calling one) and tracing its operand back
//! through moves of data (`copy`, `bitcast`, `convert`, `reshape`, `transpose`, `*-done`,
//! `get-tuple-element` of a loop's tuple) to a parameter.

use hashbrown::HashMap;
use serde::Serialize;

use super::{Params, NEEDS_AFTER};
use crate::analysis::Analysis;
use crate::answers::loops::value_of_operand;
use crate::model::hlo::{CallRole, Computation, HloInstruction, HloText};
use crate::model::Module;
use crate::shape::logical_size;

/// The answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Gathered {
    /// Per gathering instruction, largest first.
    pub values: Vec<GatheredValue>,
    /// The bytes of those live at the peak of their memory space.
    pub bytes_at_peak: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs: Option<String>,
}

/// One gathered value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GatheredValue {
    pub instruction: String,
    /// The parameter's path it is gathered from (when traced to one).
    pub from: Option<String>,
    pub bytes: u64,
    pub live_at_peak: bool,
    #[serde(skip)]
    pub values: Vec<u32>,
}

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

/// The gathered values of `module`.
pub fn gathered(module: &Module, analysis: &Analysis, params: &Params) -> Gathered {
    let Some(hlo) = module.hlo.as_deref() else {
        return Gathered { needs: Some(NEEDS_AFTER.to_string()), ..Gathered::default() };
    };
    let mut out = Gathered::default();
    let mut by_name: Option<HashMap<&str, Vec<u32>>> = None;
    for (comp, i) in hlo.computations.iter().flat_map(|c| c.instructions.iter().map(move |i| (c, i))) {
        let Some(gather) = gather_of(hlo, i) else { continue };
        let Some(from) = trace(hlo, comp, hlo.operand(i, 0)).and_then(|n| params.get(n)) else {
            continue;
        };
        // The gathered value is the gather's, or its start's and done's for an async one.
        let name = hlo.name(i);
        let done = (comp.instructions.iter())
            .find(|x| hlo.operand(x, 0) == Some(name) && (hlo.opcode(x).ends_with("-done") || hlo.name(x).contains("done")))
            .map(|x| hlo.name(x));
        let by_name = by_name.get_or_insert_with(|| {
            let mut map: HashMap<&str, Vec<u32>> = HashMap::new();
            for (k, v) in module.values.iter().enumerate() {
                map.entry(module.str(module.instruction(v).name)).or_default().push(k as u32);
            }
            map
        });
        let values: Vec<u32> = (std::iter::once(name).chain(done))
            .flat_map(|n| by_name.get(n).into_iter().flatten().copied())
            .collect();
        // The gathered array's bytes; live when a value of its start or done that big is.
        let bytes = logical_size(hlo.shape(gather)).unwrap_or(0);
        let big = |&v: &u32| module.values[v as usize].size >= bytes;
        let live_at_peak = values.iter().filter(|v| big(v)).any(|&v| at_its_peak(module, analysis, v));
        out.bytes_at_peak += if live_at_peak { bytes } else { 0 };
        let instruction = done.unwrap_or(name).to_string();
        out.values.push(GatheredValue { instruction, from: Some(from.path.clone()), bytes, live_at_peak, values });
    }
    out.values.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.instruction.cmp(&b.instruction)));
    out
}

/// The entry parameter `operand` comes from, through moves of data and into loops' tuples
/// (at most 64 steps).
fn trace(hlo: &HloText, comp: &Computation, operand: Option<&str>) -> Option<u32> {
    let (mut comp, mut name) = (comp, operand?.to_string());
    for _ in 0..64 {
        let (base, index) = value_of_operand(hlo, comp, &name);
        let i = hlo.find_in(comp, base)?;
        let k: Option<usize> = index.trim_matches(['{', '}']).parse().ok();
        match (hlo.opcode(i), k) {
            ("parameter", None) if hlo.is_entry(comp) => return hlo.literal(i)?.trim().parse().ok(),
            ("parameter", Some(k)) => {
                // A loop body's tuple element k: the loop's init, element k.
                let (outer, w) = while_of(hlo, comp)?;
                let init = hlo.operand(w, 0)?;
                let t = hlo.find_in(outer, value_of_operand(hlo, outer, init).0)?;
                name = match hlo.opcode(t) {
                    "tuple" => hlo.operand(t, k)?.to_string(),
                    _ => format!("{}#{k}", hlo.name(t)),
                };
                comp = outer;
            }
            ("tuple", Some(k)) => name = hlo.operand(i, k)?.to_string(),
            ("copy" | "bitcast" | "convert" | "reshape" | "transpose" | "copy-done" | "copy-start"
            | "async-done" | "async-start" | "dynamic-slice" | "fusion", _) => {
                name = hlo.operand(i, 0)?.to_string();
            }
            _ => return None,
        }
    }
    None
}

/// The computation and `while` instruction whose body is `body`.
fn while_of<'a>(hlo: &'a HloText, body: &Computation) -> Option<(&'a Computation, &'a HloInstruction)> {
    let name = hlo.str(body.name);
    (hlo.computations.iter())
        .flat_map(|c| c.instructions.iter().map(move |i| (c, i)))
        .find(|(_, i)| hlo.opcode(i) == "while" && hlo.called(i, CallRole::Body) == Some(name))
}

/// Whether value `v` is live at the peak of its memory space.
fn at_its_peak(module: &Module, analysis: &Analysis, v: u32) -> bool {
    let value = &module.values[v as usize];
    let color = module.allocations.get(value.allocation as usize).map_or(0, |a| a.color);
    (analysis.spaces.iter().find(|s| s.color == color)).is_some_and(|s| s.live_at_peak.contains(&v))
}
