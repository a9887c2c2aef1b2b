//! A plan in code terms: the `jax.checkpoint` policy (and MaxText `remat_policy`) that does
//! what a set of edits does, and the knob for the program's arguments.
//!
//! Owns: what a residual is to a policy ([`Stores`], from the HLO text: a dot or convolution,
//! with batch dimensions or not; the scan body's input; anything else), the mapping of edits
//! to a policy ([`policy`]) and its snippet.
//!
//! **A heuristic, said so in every `why`.** A policy acts on JAX primitives, the plan on the
//! compiled buffers; the mapping names the *least* aggressive stock policy that drops at
//! least what the plan drops, so it may free more than the plan:
//! * a rematerialised residual that is a dot without batch dimensions (a projection:
//!   `bsd,dhk->bshk`) → `nothing_saveable` (MaxText `full`);
//! * else a dot with batch dimensions (attention's `bhst,bthk->bshk`; a TPU prints dots as
//!   `convolution`, the einsum in the op_name tells the batch dimensions) →
//!   `dots_with_no_batch_dims_saveable` (MaxText `minimal`);
//! * else only non-dots → `dots_saveable` (no MaxText preset; `minimal` drops more);
//! * residuals offloaded (not arguments) → `offload_dot_with_no_batch_dims` (MaxText
//!   `minimal_offloaded`) when all are dots without batch dimensions, else
//!   `save_and_offload_only_these_names`, naming MaxText's `checkpoint_name`s where an op_name
//!   carries one;
//! * the scan body's input (stacked by every policy: the checkpointed function's own
//!   argument) rematerialised → offload it (`decoder_layer_input`) or checkpoint groups of
//!   layers, an extra line;
//! * parameters or optimizer state offloaded → no checkpoint policy: `jax.device_put(…,
//!   memory_kind="pinned_host")`, MaxText `optimizer_memory_host_offload` /
//!   `parameter_memory_host_offload`, an extra line.

use serde::Serialize;

use super::Edits;
use crate::answers::categories::{Categories, Category};
use crate::model::hlo::{CallRole, Computation, HloInstruction, HloText};
use crate::model::Module;

/// What a residual is, as a checkpoint policy sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stores {
    /// A dot or convolution; `batch`: with batch dimensions (unknown counts as without, so
    /// the policy named is at least as aggressive as needed).
    Dot { batch: bool },
    /// The loop body's input carried in, not computed by the iteration.
    BodyInput,
    #[default]
    Other,
}

/// MaxText's `checkpoint_name`s, as they would appear as an op_name's path segment.
pub const MAXTEXT_NAMES: [&str; 12] = [
    "query_proj",
    "key_proj",
    "value_proj",
    "qkv_proj",
    "out_proj",
    "context",
    "mlpwi",
    "mlpwi_0",
    "mlpwi_1",
    "mlpwo",
    "decoder_layer_input",
    "mlp",
];

/// Whether an einsum spec's dot has batch dimensions: a letter in both inputs and the output.
fn einsum_batch(spec: &str) -> Option<bool> {
    let (ins, out) = spec.split_once("->")?;
    let (a, b) = ins.split_once(',')?;
    let ok = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphabetic() || c == '.');
    if !(ok(a) && ok(b) && ok(out)) {
        return None;
    }
    Some(a.chars().any(|c| c != '.' && b.contains(c) && out.contains(c)))
}

/// What an op_name tells of a dot: the last einsum segment's batch dimensions, else
/// `dot_general` / `conv_general_dilated` as the last segment (batch unknown: without).
pub fn dot_in_op_name(op_name: &str) -> Option<Stores> {
    let segments: Vec<&str> = op_name.split('/').collect();
    if let Some(b) = segments.iter().rev().take(3).find_map(|s| einsum_batch(s)) {
        return Some(Stores::Dot { batch: b });
    }
    let last = segments.last().copied().unwrap_or("");
    matches!(last, "dot_general" | "conv_general_dilated").then_some(Stores::Dot { batch: false })
}

/// Whether `i` (or what it computes through a few layout-only steps, or a fusion's
/// computation) is a dot or convolution.
fn is_dot(hlo: &HloText, comp: &Computation, i: &HloInstruction, depth: u8) -> bool {
    if depth > 6 {
        return false;
    }
    match hlo.opcode(i) {
        "dot" | "convolution" => true,
        "fusion" => hlo.called(i, CallRole::Calls).and_then(|c| hlo.computation(c)).is_some_and(|c| {
            c.instructions.iter().any(|x| matches!(hlo.opcode(x), "dot" | "convolution"))
        }),
        "reduce-precision" | "convert" | "bitcast" | "copy" | "reshape" | "transpose" => hlo
            .operand(i, 0)
            .and_then(|o| hlo.find_in(comp, o.split('#').next().unwrap_or(o)))
            .is_some_and(|x| is_dot(hlo, comp, x, depth + 1)),
        _ => false,
    }
}

/// What instruction `i` of `comp` is to a policy: a dot from the text (batch dimensions from
/// a `dot`'s `lhs_batch_dims`, else the op_name's einsum), the body's input
/// (a parameter or an element of one), else other.
pub fn stores_of(hlo: &HloText, comp: &Computation, i: &HloInstruction) -> Stores {
    if matches!(hlo.opcode(i), "parameter" | "get-tuple-element") {
        return Stores::BodyInput;
    }
    let from_name = hlo.op_name(i).and_then(dot_in_op_name);
    if is_dot(hlo, comp, i, 0) {
        let batch = hlo.attr(i, "lhs_batch_dims").map(|b| b.trim_matches(['{', '}']).trim().is_empty());
        return match (batch, from_name) {
            (Some(none), _) => Stores::Dot { batch: !none },
            (None, Some(d)) => d,
            (None, None) => Stores::Dot { batch: false },
        };
    }
    from_name.unwrap_or_default()
}

/// What a value's defining instruction is to a policy (from the HLO text, else its name).
fn value_stores(module: &Module, v: u32) -> Stores {
    let Some(value) = module.values.get(v as usize) else { return Stores::Other };
    let name = module.str(module.instruction(value).name);
    match module.hlo.as_deref().and_then(|h| Some((h, h.find(name)?))) {
        Some((h, (c, i))) => stores_of(h, c, i),
        None => Stores::Other,
    }
}

/// The policy a set of edits maps to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Policy {
    /// `nothing_saveable`, `dots_with_no_batch_dims_saveable`, …; `host offload` when the
    /// edits only offload arguments.
    pub name: String,
    /// The JAX expression (`jax.checkpoint_policies.nothing_saveable`).
    pub jax: String,
    /// MaxText's setting (`remat_policy: full`).
    pub maxtext: String,
    /// A line to paste.
    pub snippet: String,
    /// What in the plan asks for it, and that the mapping is a heuristic.
    pub why: String,
    /// What no checkpoint policy does: the scan body's input, the arguments' offload.
    pub also: Vec<String>,
}

const HEURISTIC: &str = "A heuristic: the least aggressive stock policy that drops at least what the plan drops (it may free more); check with a recompile.";

fn checkpoint(name: &str, jax_args: &str, maxtext: &str, why: String) -> Policy {
    let jax = format!("jax.checkpoint_policies.{name}{jax_args}");
    Policy {
        name: name.to_string(),
        snippet: format!("jax.checkpoint(layer, policy={jax})"),
        jax,
        maxtext: maxtext.to_string(),
        why: format!("{why} {HEURISTIC}"),
        also: Vec::new(),
    }
}

/// A stock policy by name ([`super::checkpoint::STOCK`]) in code terms, `why` it was chosen.
pub fn stock(name: &str, why: String) -> Policy {
    let offload = "(offload_src=\"device\", offload_dst=\"pinned_host\")";
    let (args, maxtext) = match name {
        "nothing_saveable" => ("", "remat_policy: full"),
        "dots_with_no_batch_dims_saveable" => ("", "remat_policy: minimal"),
        "offload_dot_with_no_batch_dims" => (offload, "remat_policy: minimal_offloaded"),
        _ => ("", "remat_policy: minimal (it also drops the dots with batch dimensions)"),
    };
    let mut p = checkpoint(name, args, maxtext, why);
    p.why = p.why.replace(HEURISTIC, "An estimate of each stock policy on this compile; check with a recompile.");
    p
}

/// The MaxText `checkpoint_name`s in op_names, else None.
fn names_in(op_names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = op_names
        .iter()
        .flat_map(|o| o.split('/'))
        .filter(|s| MAXTEXT_NAMES.contains(s))
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The policy for residuals offloaded (`op_names`: theirs; `all_flat_dots`: every one a dot
/// without batch dimensions).
fn offload_policy(op_names: &[String], all_flat_dots: bool) -> Policy {
    let why = format!("The plan offloads {} activation(s) to the host.", op_names.len());
    if all_flat_dots {
        let args = "(offload_src=\"device\", offload_dst=\"pinned_host\")";
        return checkpoint("offload_dot_with_no_batch_dims", args, "remat_policy: minimal_offloaded", why);
    }
    let names = names_in(op_names);
    let listed = if names.is_empty() {
        "\"NAME\"".to_string()
    } else {
        names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
    };
    let args = format!(
        "(names_which_can_be_saved=[], names_which_can_be_offloaded=[{listed}], offload_src=\"device\", offload_dst=\"pinned_host\")"
    );
    let maxtext = if names.is_empty() {
        "remat_policy: custom (each offloaded name: offload)".to_string()
    } else {
        format!("remat_policy: custom ({}: offload)", names.join(", "))
    };
    let mut p = checkpoint("save_and_offload_only_these_names", &args, &maxtext, why);
    if names.is_empty() {
        p.why.push_str(" Name the offloaded values with jax.ad_checkpoint.checkpoint_name(x, \"NAME\"): their op_names carry no checkpoint name.");
    }
    p
}

/// Whether a value with this op_name is a residual of the forward pass, which a checkpoint
/// policy governs: under `jvp(` and not `transpose(` (JAX's backward pass); a value with no
/// op_name counts as one. Where the layers are a scan (`scan`: the module has stacked
/// outputs), its residuals are the stacked outputs and no single value is one.
fn is_residual(op_name: &str, scan: bool) -> bool {
    !scan && (op_name.is_empty() || (op_name.contains("jvp(") && !op_name.contains("transpose(")))
}

/// The policy that does what `edits` do (see the module's doc); `None` for no edit. `scan`:
/// the module's layers are a loop with stacked outputs.
pub fn policy(module: &Module, edits: &Edits, scan: bool) -> Option<Policy> {
    // Whether a value is an argument needs no dataflow: a parameter's category is its own.
    let cats = Categories::default();
    let arg = |v: &u32| {
        matches!(cats.of(module, *v), Category::ModelParameters | Category::OptimizerState | Category::Inputs | Category::Parameters)
    };
    let op_name = |v: u32| -> String {
        let hlo = module.hlo.as_deref();
        let name = module.values.get(v as usize).map(|x| module.str(module.instruction(x).name));
        let found = hlo.zip(name).and_then(|(h, n)| Some((h, h.find(n)?)));
        found.and_then(|(h, (_, i))| h.op_name(i).map(str::to_string)).unwrap_or_default()
    };
    let (args, acts): (Vec<u32>, Vec<u32>) = edits.offload.iter().partition(|v| arg(v));
    let (acts, acts_not): (Vec<u32>, Vec<u32>) = acts.iter().partition(|&&v| is_residual(&op_name(v), scan));
    let (remat, remat_not): (Vec<u32>, Vec<u32>) =
        edits.remat.iter().filter(|v| !arg(v)).partition(|&&v| is_residual(&op_name(v), scan));
    let mut dropped: Vec<Stores> = edits.loops.iter().map(|s| s.stores).collect();
    dropped.extend(remat.iter().map(|&v| value_stores(module, v)));
    let flat = |s: &Stores| *s == Stores::Dot { batch: false };
    let body_input = dropped.contains(&Stores::BodyInput);
    let recomputed: Vec<&Stores> = dropped.iter().filter(|s| **s != Stores::BodyInput).collect();
    let mut p = if !acts.is_empty() {
        let names: Vec<String> = acts.iter().map(|&v| op_name(v)).collect();
        offload_policy(&names, acts.iter().all(|&v| flat(&value_stores(module, v))))
    } else if recomputed.iter().any(|s| flat(s)) {
        let why = "The plan rematerialises dots without batch dimensions (projections):";
        checkpoint("nothing_saveable", "", "remat_policy: full", format!("{why} only saving nothing drops them."))
    } else if recomputed.iter().any(|s| matches!(s, Stores::Dot { .. })) {
        let why = "The plan rematerialises dots with batch dimensions (attention) and keeps the projections.";
        checkpoint("dots_with_no_batch_dims_saveable", "", "remat_policy: minimal", why.to_string())
    } else if !recomputed.is_empty() {
        let why = "The plan rematerialises no dot's output, only the residuals around them.";
        checkpoint("dots_saveable", "", "remat_policy: minimal (it also drops the dots with batch dimensions)", why.to_string())
    } else if body_input {
        let why = "The plan drops only the loop body's input, which every policy saves.".to_string();
        let args = "(names_which_can_be_saved=[], names_which_can_be_offloaded=[\"decoder_layer_input\"], offload_src=\"device\", offload_dst=\"pinned_host\")";
        checkpoint("save_and_offload_only_these_names", args, "remat_policy: custom (decoder_layer_input: offload)", why)
    } else if !args.is_empty() {
        Policy {
            name: "host offload".into(),
            jax: "jax.device_put(state, jax.sharding.NamedSharding(mesh, spec, memory_kind=\"pinned_host\"))".into(),
            maxtext: "optimizer_memory_host_offload: true (parameter_memory_host_offload: true for the parameters)".into(),
            snippet: "opt_state = jax.device_put(opt_state, sharding.with_memory_kind(\"pinned_host\"))".into(),
            why: "The plan's edits of residuals are none: it offloads the program's arguments (parameters, optimizer state), which no checkpoint policy does.".into(),
            also: Vec::new(),
        }
    } else if !remat_not.is_empty() || !acts_not.is_empty() {
        Policy {
            name: "no checkpoint policy".into(),
            jax: String::new(),
            maxtext: "none".into(),
            snippet: String::new(),
            why: "The plan edits no forward-pass residual: a checkpoint policy would not change it.".into(),
            also: Vec::new(),
        }
    } else {
        return None;
    };
    if body_input && (!recomputed.is_empty() || !acts.is_empty()) {
        p.also.push("The plan also drops the loop body's input, which every checkpoint policy saves: offload it (checkpoint_name(x, \"decoder_layer_input\") with names_which_can_be_offloaded=[\"decoder_layer_input\"]; MaxText decoder_layer_input: offload) or checkpoint groups of layers (a nested jax.checkpoint around each group).".into());
    }
    let others = remat_not.len() + acts_not.len();
    if others > 0 {
        p.also.push(format!("{others} of the plan's edits are no forward-pass residual (the backward pass's or the optimizer's temporaries, by their op_names): no checkpoint policy drops them; XLA's own rematerialisation may, or a smaller per-device batch (gradient accumulation)."));
    }
    if !args.is_empty() && p.name != "host offload" {
        p.also.push("It offloads parameters or optimizer state, which no checkpoint policy does: jax.device_put(x, sharding.with_memory_kind(\"pinned_host\")); MaxText optimizer_memory_host_offload: true (parameter_memory_host_offload: true).".into());
    }
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn einsum_batch_dimensions() {
        assert_eq!(einsum_batch("bhst,bthk->bshk"), Some(true));
        assert_eq!(einsum_batch("bsd,dhk->bshk"), Some(false));
        assert_eq!(einsum_batch("reduce_precision"), None);
        assert_eq!(dot_in_op_name("jit(f)/while/body/bsd,df->bsf/reduce_precision"), Some(Stores::Dot { batch: false }));
        assert_eq!(dot_in_op_name("jit(f)/bhst,bthk->bshk/dot_general"), Some(Stores::Dot { batch: true }));
        assert_eq!(dot_in_op_name("jit(f)/mul"), None);
    }
}
