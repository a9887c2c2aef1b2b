//! A `jax.checkpoint` policy by name, as edits of the compiled program: what each of a scan's
//! stacked per-iteration outputs ([`StackedOutput`]) becomes under it — saved, offloaded to
//! the host, or rematerialised.
//!
//! Owns: the policy names ([`Checkpoint::parse`]) and their mapping onto what the HLO text
//! shows ([`Checkpoint::fate`]); [`super::policy`] goes the other way (a plan's edits → the
//! least aggressive policy). A policy acts on JAX primitives, the what-if on compiled
//! buffers, so the mapping reads the stacked output's source as the policy would see it
//! ([`Stores`]):
//! * "dots" are dots and convolutions, alone or as the root of a fusion (a TPU prints a dot as
//!   a `convolution`);
//! * "no batch dims" is a `dot`'s empty `lhs_batch_dims`, else the op_name's einsum with no
//!   letter in both inputs and the output (`bsd,dhk->bshk`, not `bhst,bthk->bshk`);
//! * names are regular expressions over the op_name: `checkpoint_name`s do not survive
//!   compilation, so `save_only_these_names("q")` is written with what its op_name says
//!   (`bsd,dhk->bshk`);
//! * the scan body's input (the checkpointed function's argument) is saved by every policy.

use super::flops::{bodies, body_slice, flops_added, operand_shape};
use super::policy::{stores_of, Stores};
use super::{estimate, Edits, Estimate, Residual, StackedOutput};
use crate::analysis::Space;
use serde::Serialize;
use crate::answers::idle::ScheduleIndex;
use crate::model::hlo::{Computation, HloInstruction, HloText};
use crate::model::Module;
use crate::query::{compile, Matcher};
use crate::shape::logical_size;

/// A policy, as `jax.checkpoint_policies` names it.
#[derive(Clone, Debug)]
pub enum Checkpoint {
    NothingSaveable,
    DotsSaveable,
    DotsWithNoBatchDimsSaveable,
    OffloadDotWithNoBatchDims,
    /// Saves the outputs whose op_name matches.
    SaveOnlyTheseNames(Matcher, String),
    /// Offloads the outputs whose op_name matches; rematerialises the rest.
    SaveAndOffloadOnlyTheseNames(Matcher, String),
}

/// What a policy does with one stacked output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Save,
    Offload,
    Remat,
}

/// The policies `fit` tries: those that need no names.
pub const STOCK: [&str; 4] = [
    "dots_saveable",
    "dots_with_no_batch_dims_saveable",
    "offload_dot_with_no_batch_dims",
    "nothing_saveable",
];

/// Said where a policy is asked for by name.
pub const NAMES_HELP: &str = "nothing_saveable, dots_saveable, dots_with_no_batch_dims_saveable, offload_dot_with_no_batch_dims, save_only_these_names(REGEX), save_and_offload_only_these_names(REGEX); REGEX over the stored value's op_name (checkpoint names do not survive compilation: write what the op_name says, e.g. bsd,dhk->bshk)";

impl Checkpoint {
    /// A policy from its name (`jax.checkpoint_policies.` optional), the named ones with a
    /// regular expression in parentheses.
    pub fn parse(text: &str) -> Result<Checkpoint, String> {
        let t = text.trim();
        let t = t.strip_prefix("jax.checkpoint_policies.").unwrap_or(t);
        let (name, arg) = match t.split_once('(') {
            Some((n, rest)) => {
                let arg = rest.strip_suffix(')').ok_or_else(|| format!("{text}: no closing parenthesis"))?;
                (n.trim(), Some(arg.trim().trim_matches(['"', '\''])))
            }
            None => (t, None),
        };
        let named = |make: fn(Matcher, String) -> Checkpoint| -> Result<Checkpoint, String> {
            let arg = arg.filter(|a| !a.is_empty()).ok_or_else(|| format!("{name} takes a REGEX over op_name: {name}(REGEX)"))?;
            Ok(make(compile(arg)?, arg.to_string()))
        };
        match (name, arg) {
            ("nothing_saveable", None) => Ok(Checkpoint::NothingSaveable),
            ("dots_saveable" | "checkpoint_dots", None) => Ok(Checkpoint::DotsSaveable),
            ("dots_with_no_batch_dims_saveable" | "checkpoint_dots_with_no_batch_dims", None) => {
                Ok(Checkpoint::DotsWithNoBatchDimsSaveable)
            }
            ("offload_dot_with_no_batch_dims", _) => Ok(Checkpoint::OffloadDotWithNoBatchDims),
            ("save_only_these_names", _) => named(Checkpoint::SaveOnlyTheseNames),
            ("save_and_offload_only_these_names", _) => named(Checkpoint::SaveAndOffloadOnlyTheseNames),
            _ => Err(format!("{text}: not a policy bufscope knows ({NAMES_HELP})")),
        }
    }

    /// The policy's name as jax spells it, with its regular expression.
    pub fn name(&self) -> String {
        match self {
            Checkpoint::NothingSaveable => "nothing_saveable".into(),
            Checkpoint::DotsSaveable => "dots_saveable".into(),
            Checkpoint::DotsWithNoBatchDimsSaveable => "dots_with_no_batch_dims_saveable".into(),
            Checkpoint::OffloadDotWithNoBatchDims => "offload_dot_with_no_batch_dims".into(),
            Checkpoint::SaveOnlyTheseNames(_, r) => format!("save_only_these_names({r})"),
            Checkpoint::SaveAndOffloadOnlyTheseNames(_, r) => format!("save_and_offload_only_these_names({r})"),
        }
    }

    /// Whether the policy puts anything on the host.
    pub fn offloads(&self) -> bool {
        matches!(self, Checkpoint::OffloadDotWithNoBatchDims | Checkpoint::SaveAndOffloadOnlyTheseNames(..))
    }

    /// What the policy does with a value of what `stores` says and this op_name.
    fn fate_of(&self, stores: Stores, op_name: &str) -> Fate {
        if stores == Stores::BodyInput {
            return Fate::Save;
        }
        let flat_dot = stores == Stores::Dot { batch: false };
        let pick = |yes: bool, fate: Fate| if yes { fate } else { Fate::Remat };
        match self {
            Checkpoint::NothingSaveable => Fate::Remat,
            Checkpoint::DotsSaveable => pick(matches!(stores, Stores::Dot { .. }), Fate::Save),
            Checkpoint::DotsWithNoBatchDimsSaveable => pick(flat_dot, Fate::Save),
            Checkpoint::OffloadDotWithNoBatchDims => pick(flat_dot, Fate::Offload),
            Checkpoint::SaveOnlyTheseNames(m, _) => pick(m.is_match(op_name), Fate::Save),
            Checkpoint::SaveAndOffloadOnlyTheseNames(m, _) => pick(m.is_match(op_name), Fate::Offload),
        }
    }

    /// What the policy does with one stacked output.
    pub fn fate(&self, s: &StackedOutput) -> Fate {
        self.fate_of(s.stores, &s.op_name)
    }

    /// What the policy does with what instruction `i` of a forward body computes.
    pub fn fate_in(&self, hlo: &HloText, comp: &Computation, i: &HloInstruction) -> Fate {
        if matches!(hlo.opcode(i), "parameter" | "get-tuple-element") {
            return Fate::Remat;
        }
        self.fate_of(stores_of(hlo, comp, i), hlo.op_name(i).unwrap_or(""))
    }

    /// Whether the policy keeps what `i` computes (saved or offloaded), not recomputing it.
    pub fn saves(&self, hlo: &HloText, comp: &Computation, i: &HloInstruction) -> bool {
        self.fate_in(hlo, comp, i) != Fate::Remat
    }

    /// The policy over a module's stacked outputs ([`Applied`]).
    pub fn apply(&self, module: &Module, stacked: &[StackedOutput]) -> Applied {
        let (mut edits, mut saved) = (Edits::default(), 0);
        for s in stacked {
            match self.fate(s) {
                Fate::Save => saved += 1,
                Fate::Offload => edits.offload_loops.push(s.clone()),
                Fate::Remat => edits.loops.push(s.clone()),
            }
        }
        edits.saved = self.residuals(module, &edits, stacked);
        let saves = |h: &HloText, c: &Computation, i: &HloInstruction| self.saves(h, c, i);
        let flops = flops_added(module, &ScheduleIndex::new(module), &edits, stacked, &saves);
        Applied { edits, saved, flops_added: flops }
    }

    /// The policy over the stacked outputs with single values' edits (`values`: their remat and
    /// offload; its loop edits give way to the policy's), the FLOPs over both: what `bufscope
    /// whatif --policy P --remat V` estimates, and the page's policy chooser with its ticks.
    pub fn with_values(&self, module: &Module, index: &ScheduleIndex, stacked: &[StackedOutput], values: &Edits) -> Applied {
        let mut a = self.apply(module, stacked);
        if values.remat.is_empty() && values.offload.is_empty() {
            return a;
        }
        (a.edits.remat, a.edits.offload) = (values.remat.clone(), values.offload.clone());
        let saves = |h: &HloText, c: &Computation, i: &HloInstruction| self.saves(h, c, i);
        a.flops_added = flops_added(module, index, &a.edits, stacked, &saves);
        a
    }

    /// What the policy saves that the program stacks nowhere: for each forward body with
    /// outputs rematerialised, the values the recomputation's slice stops at (a dot the policy
    /// saves), and the body's input where no stacked output is it.
    fn residuals(&self, module: &Module, edits: &Edits, all: &[StackedOutput]) -> Vec<Residual> {
        let Some(hlo) = module.hlo.as_deref() else { return Vec::new() };
        let saves = |h: &HloText, c: &Computation, i: &HloInstruction| self.saves(h, c, i);
        let mut out = Vec::new();
        for b in bodies(&edits.loops) {
            let (Some(body), Some((slice, trips))) = (hlo.computations.get(b as usize), body_slice(hlo, b, edits, all, &saves)) else { continue };
            let of_body: Vec<&StackedOutput> = all.iter().filter(|s| s.forward_body.map(|f| f.0) == Some(b)).collect();
            let Some(first) = of_body.first() else { continue };
            let life = (first.forward_body.map_or(first.life.0, |f| f.1 .0), first.backward_body.map_or(first.life.1, |x| x.1));
            let residual = |what: String, bytes: u64, host: bool| Residual { what, color: first.color, bytes: bytes.saturating_mul(trips), trip_count: trips, life, host };
            for stop in &slice.stops {
                let name = stop.split('#').next().unwrap_or(stop);
                let Some(i) = hlo.find_in(body, name) else { continue };
                let bytes = operand_shape(hlo, body, stop).and_then(logical_size).unwrap_or(0);
                out.push(residual(stop.clone(), bytes, self.fate_in(hlo, body, i) == Fate::Offload));
            }
            if !of_body.iter().any(|s| s.stores == Stores::BodyInput) && first.carry_bytes > 0 {
                out.push(residual("carry".into(), first.carry_bytes, false));
            }
        }
        out
    }
}

/// A policy applied to a module: its edits, how many stacked outputs it saves, and the FLOPs
/// its recomputation adds.
#[derive(Clone, Debug, Default)]
pub struct Applied {
    pub edits: Edits,
    pub saved: usize,
    pub flops_added: u64,
}

/// One stock policy tried for a capacity.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tried {
    pub name: String,
    pub fits: bool,
    pub peak_after: u64,
    pub host_bytes_added: u64,
    pub flops_added: u64,
}

/// Each stock policy ([`STOCK`]; the offloading one only with `offload`) over the module's
/// stacked outputs, estimated on `space` against `capacity`, and the cheapest in FLOPs of
/// those that fit (ties: the lower peak), with its edits and estimate.
pub fn cheapest(
    module: &Module,
    space: &Space,
    index: &ScheduleIndex,
    stacked: &[StackedOutput],
    capacity: u64,
    offload: bool,
) -> (Vec<Tried>, Option<(Checkpoint, Applied, Estimate)>) {
    let mut tried = Vec::new();
    let mut best: Option<(Checkpoint, Applied, Estimate)> = None;
    if stacked.is_empty() {
        return (tried, None);
    }
    for name in STOCK {
        let Ok(p) = Checkpoint::parse(name) else { continue };
        if p.offloads() && !offload {
            continue;
        }
        let applied = p.apply(module, stacked);
        let est = estimate(module, space, index, &applied.edits);
        let fits = est.peak_after <= capacity;
        tried.push(Tried {
            name: p.name(),
            fits,
            peak_after: est.peak_after,
            host_bytes_added: est.host_bytes_added,
            flops_added: applied.flops_added,
        });
        let better = best.as_ref().is_none_or(|(_, a, e)| {
            (applied.flops_added, est.peak_after) < (a.flops_added, e.peak_after)
        });
        if fits && better {
            best = Some((p, applied, est));
        }
    }
    (tried, best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for n in STOCK {
            assert_eq!(Checkpoint::parse(n).map(|p| p.name()), Ok(n.to_string()));
        }
        let p = Checkpoint::parse("jax.checkpoint_policies.save_only_these_names(\"bsd,dhk->bshk\")").unwrap();
        assert_eq!(p.name(), "save_only_these_names(bsd,dhk->bshk)");
        let p = Checkpoint::parse("save_and_offload_only_these_names((bsd|bsf),d)").unwrap();
        assert!(p.offloads());
        assert!(Checkpoint::parse("save_only_these_names").is_err());
        assert!(Checkpoint::parse("everything_saveable").is_err());
        assert!(Checkpoint::parse("save_only_these_names(()").is_err());
    }
}
