//! Comparing two compilations: which modules pair up, and per memory space how the peak
//! moved, which values live at the peaks were added, removed, grown or shrunk, which
//! op_names and source lines account for it, and whether the growth passes a limit.
//!
//! Owns: the comparison of two (module, analysis) pairs; pure functions, no I/O. The parts:
//! * [`pair`]: pairing the modules of two loads by name or by hand;
//! * [`curves`]: per colour the two peaks, their steps and both occupied-bytes curves on
//!   relative program position (schedules differ in length: the curves are aligned on
//!   position `0..1`, not on steps);
//! * [`values`]: the values live at each peak matched across the two (by op_name and shape,
//!   then name, then source line and shape) and classified;
//! * [`groups`]: the live bytes at each peak by op_name and by source line, as differences;
//! * [`gate`]: the growth limit (`64MiB`, `5%`) and the verdict;
//! * [`waste`]: the waste answers' totals and findings on both sides (with an HLO text).
//!
//! Every result derives `serde::Serialize`: `bufscope diff --json` prints a [`LoadDiff`],
//! each memory space with `color`, `base_peak_bytes`, `new_peak_bytes`, `delta_bytes` (the
//! curves are left out), then its matched `changes` and `groups`.

pub mod curves;
pub mod gate;
pub mod groups;
pub mod pair;
pub mod values;
pub mod waste;

use serde::Serialize;

use crate::analysis::Analysis;
use crate::model::{Backend, Module};

pub use curves::{resample_max, SpacePeaks, CURVE_POINTS};
pub use gate::{verdict, GateFailure, Limit, Verdict};
pub use groups::{GroupDelta, GroupDeltas};
pub use pair::{
    pair_by_hand, pair_by_name, pair_modules, stripped_name, ModulePair, PairRule, Pairing,
};
pub use values::{ChangeTotals, MatchRule, Matching, OneSide, PeakChanges, ValueChange, ValueInfo};

/// One side of a comparison: a module and its analysis.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    pub module: &'a Module,
    pub analysis: &'a Analysis,
}

impl<'a> Side<'a> {
    pub fn new(module: &'a Module, analysis: &'a Analysis) -> Side<'a> {
        Side { module, analysis }
    }
}

/// One memory space compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpaceDiff {
    /// `color`, the peaks, `delta_bytes`, steps (flattened into this object in JSON).
    #[serde(flatten)]
    pub peaks: SpacePeaks,
    /// The values live at the two peaks, matched and classified.
    pub changes: PeakChanges,
    pub groups: GroupDeltas,
    /// The values of the space found on one side only, anywhere in the program.
    pub one_side: OneSide,
}

/// Two paired modules compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModuleDiff {
    pub base_name: String,
    pub new_name: String,
    /// How the two were paired (`None` when [`diff_modules`] was called directly).
    pub paired_by: Option<PairRule>,
    /// One per colour present on either side, ascending.
    pub spaces: Vec<SpaceDiff>,
    /// The backend as the base (else the new) module tells it, for naming the spaces
    /// ([`crate::model::memory_space_label`]).
    #[serde(skip)]
    pub backend: Option<Backend>,
    /// The waste answers compared ([`waste`]); left out without any HLO text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waste: Option<waste::WasteDiff>,
}

/// Two loads compared: every pair of modules, and the modules without a partner.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LoadDiff {
    pub modules: Vec<ModuleDiff>,
    pub unpaired_base: Vec<String>,
    pub unpaired_new: Vec<String>,
}

impl LoadDiff {
    /// One JSON object, pretty-printed with a two-space indent (`bufscope diff --json`).
    pub fn to_json(&self) -> String {
        // Plain structs of strings, integers and finite floats always serialize.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// The gate's verdict over every paired module ([`gate::verdict`]).
    pub fn verdict(&self, limit: Limit) -> Verdict {
        verdict(&self.modules, limit)
    }
}

/// Compares two modules, every memory space of either.
pub fn diff_modules(base: Side, new: Side) -> ModuleDiff {
    let spaces = curves::colors(base.analysis, new.analysis)
        .into_iter()
        .map(|color| {
            let live = |a: &'_ Analysis| -> Vec<u32> {
                a.space(color)
                    .map_or(Vec::new(), |sp| sp.live_at_peak.clone())
            };
            let (bl, nl) = (live(base.analysis), live(new.analysis));
            SpaceDiff {
                peaks: curves::space_peaks(color, base.analysis, new.analysis),
                changes: values::peak_changes(&base, &bl, &new, &nl),
                groups: groups::group_deltas(&base, &bl, &new, &nl),
                one_side: values::one_side(&base, &new, color),
            }
        })
        .collect();
    ModuleDiff {
        base_name: base.module.name.clone(),
        new_name: new.module.name.clone(),
        paired_by: None,
        spaces,
        backend: base.module.backend().or_else(|| new.module.backend()),
        waste: waste::waste_diff(&base, &new),
    }
}

/// Compares the paired modules of two loads; positions in `pairing` that are out of range
/// are passed over.
pub fn diff_loads(base: &[Side], new: &[Side], pairing: &Pairing) -> LoadDiff {
    let names = |sides: &[Side], at: &[usize]| {
        at.iter()
            .filter_map(|&i| sides.get(i).map(|s| s.module.name.clone()))
            .collect()
    };
    LoadDiff {
        modules: pairing
            .pairs
            .iter()
            .filter_map(|p| {
                let mut d = diff_modules(*base.get(p.base)?, *new.get(p.new)?);
                d.paired_by = Some(p.rule);
                Some(d)
            })
            .collect(),
        unpaired_base: names(base, &pairing.unpaired_base),
        unpaired_new: names(new, &pairing.unpaired_new),
    }
}
