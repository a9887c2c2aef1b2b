//! Waste compared (issue 35): per paired module, the waste answers' totals on both sides
//! ([`crate::answers::waste`]) and the findings (kind and pytree path) that appear or go.
//!
//! Owns: this comparison only; left out (`None`) when neither module has an HLO text.

use serde::Serialize;

use crate::answers::waste::{waste, Waste};
use crate::model::Module;

use super::Side;

/// Base and new of one figure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Both {
    pub base: u64,
    pub new: u64,
}

/// The waste of two modules compared.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WasteDiff {
    /// Per device: what cutting replicated values like their peers would save.
    pub replicated_saving_bytes: Both,
    pub gathered_at_peak_bytes: Both,
    pub left_over_bytes: Both,
    pub double_buffered_bytes: Both,
    /// Findings (`kind: path`) only the new side has, then only the base side.
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

impl WasteDiff {
    /// Whether anything differs.
    pub fn changed(&self) -> bool {
        let b = |x: Both| x.base != x.new;
        b(self.replicated_saving_bytes) || b(self.gathered_at_peak_bytes) || b(self.left_over_bytes)
            || b(self.double_buffered_bytes) || !self.added.is_empty() || !self.removed.is_empty()
    }
}

/// `kind: path` of every finding.
fn findings(w: &Waste) -> Vec<String> {
    let d = &w.donation;
    let rows = |kind: &str, list: &[crate::answers::waste::donation::DonationRow]| {
        list.iter().map(|r| format!("{kind}: {}", r.path)).collect::<Vec<_>>()
    };
    let mut out: Vec<String> = w.replicated.values.iter().map(|v| format!("replicated: {}", v.path)).collect();
    out.extend(w.gathered.values.iter().filter(|g| g.live_at_peak).filter_map(|g| Some(format!("gathered at the peak: {}", g.from.as_ref()?))));
    out.extend(rows("left over", &d.left_over));
    out.extend(rows("double buffered", &d.double_buffered));
    out.sort();
    out.dedup();
    out
}

fn has_texts(m: &Module) -> bool {
    m.hlo.is_some() || m.hlo_before.is_some()
}

/// The comparison, when either side has an HLO text.
pub fn waste_diff(base: &Side, new: &Side) -> Option<WasteDiff> {
    if !has_texts(base.module) && !has_texts(new.module) {
        return None;
    }
    let (b, n) = (waste(base.module, base.analysis), waste(new.module, new.analysis));
    let both = |f: fn(&Waste) -> u64| Both { base: f(&b), new: f(&n) };
    let (fb, fn_) = (findings(&b), findings(&n));
    Some(WasteDiff {
        replicated_saving_bytes: both(|w| w.replicated.saving_bytes),
        gathered_at_peak_bytes: both(|w| w.gathered.bytes_at_peak),
        left_over_bytes: both(|w| w.donation.left_over_bytes),
        double_buffered_bytes: both(|w| w.donation.double_buffered_bytes),
        added: fn_.iter().filter(|f| !fb.contains(f)).cloned().collect(),
        removed: fb.iter().filter(|f| !fn_.contains(f)).cloned().collect(),
    })
}
