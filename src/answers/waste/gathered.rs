//! The waste answer's gathered weights: per all-gather traced to an entry parameter
//! ([`crate::answers::categories::gathered`] finds and traces them), the parameter's pytree
//! path, the gathered bytes, and whether it is live at the peak of its memory space.
//!
//! Owns: that answer and the bytes gathered at the peak.

use serde::Serialize;

use super::{Params, NEEDS_AFTER};
use crate::analysis::Analysis;
use crate::answers::categories::gathered::{gathers, holding, ByName};
use crate::model::Module;

/// The answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Gathered {
    /// Per gathering instruction, largest first.
    pub values: Vec<GatheredValue>,
    /// The bytes of those live at the peak of their memory space.
    pub bytes_at_peak: u64,
    /// The all-gathers of the program (an asynchronous one counted once, at its start),
    /// traced to a parameter or not: `values` are those traced.
    pub total: u32,
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

/// The gathered values of `module`.
pub fn gathered(module: &Module, analysis: &Analysis, params: &Params) -> Gathered {
    let Some(hlo) = module.hlo.as_deref() else {
        return Gathered { needs: Some(NEEDS_AFTER.to_string()), ..Gathered::default() };
    };
    let list = gathers(hlo);
    let mut out = Gathered { total: list.len() as u32, ..Gathered::default() };
    let by_name = ByName::new(module, &list);
    for g in &list {
        let Some(from) = g.parameter.and_then(|n| params.get(n)) else { continue };
        // The gathered value is the gather's, or its start's and done's for an async one.
        let values = by_name.of(g);
        // Live when a value of its start or done holding the array is.
        let live_at_peak = holding(module, g, &values).into_iter().any(|v| at_its_peak(module, analysis, v));
        out.bytes_at_peak += if live_at_peak { g.bytes } else { 0 };
        let instruction = g.done.unwrap_or(g.name).to_string();
        out.values.push(GatheredValue { instruction, from: Some(from.path.clone()), bytes: g.bytes, live_at_peak, values });
    }
    out.values.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.instruction.cmp(&b.instruction)));
    out
}

/// Whether value `v` is live at the peak of its memory space.
fn at_its_peak(module: &Module, analysis: &Analysis, v: u32) -> bool {
    let value = &module.values[v as usize];
    let color = module.allocations.get(value.allocation as usize).map_or(0, |a| a.color);
    (analysis.spaces.iter().find(|s| s.color == color)).is_some_and(|s| s.live_at_peak.contains(&v))
}
