//! The loops in `bufscope summary`: per module the loops on the time axis
//! ([`crate::analysis::loops`]) with what each one carries and stacks
//! ([`crate::answers::loops`]), and per memory space what each loop holds live at the peak.
//! Present only where the HLO text was read with the dump (the fields are left out
//! otherwise, so a summary without it is as it was).

use serde::Serialize;

use crate::analysis::loops::Loop;
use crate::analysis::Analysis;
use crate::answers::loops::{held_at, temporaries, Element, HeldAt, ModuleLoops, Role, Temporaries};
use crate::model::Module;
use crate::units::human_bytes;

/// One loop of the module with its tuple.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoopSummary {
    #[serde(flatten)]
    pub placed: Loop,
    /// The tuple's elements: counter, loop-invariant, stacked per iteration, carry.
    pub elements: Vec<Element>,
}

/// What one loop holds live at a space's peak, and its body's temporaries there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoopAtPeak {
    #[serde(flatten)]
    pub held: HeldAt,
    /// The body's per-iteration temporaries in this space: the most live at once.
    pub body_temporaries: Temporaries,
}

/// The module's loops (`None` without the HLO text).
pub fn module_loops(module: &Module) -> Option<ModuleLoops> {
    module.hlo.as_ref()?;
    Some(ModuleLoops::new(module))
}

/// Each loop with its tuple's elements.
pub fn summaries(m: &ModuleLoops) -> Vec<LoopSummary> {
    (m.loops.loops.iter().enumerate())
        .map(|(i, l)| LoopSummary {
            placed: l.clone(),
            elements: m.hold(i).map_or_else(Vec::new, |h| h.elements.clone()),
        })
        .collect()
}

/// What each loop holds at the peak of every space of `analysis`, in its order.
pub fn at_peaks(m: &ModuleLoops, module: &Module, analysis: &Analysis) -> Vec<Vec<LoopAtPeak>> {
    (analysis.spaces.iter())
        .map(|s| {
            let step = s.peak_time.unwrap_or(0);
            let held = held_at(module, &m.loops, &m.holds, s.color, step);
            (held.into_iter().zip(&m.holds))
                .map(|(held, h)| LoopAtPeak {
                    body_temporaries: temporaries(module, &m.loops.loops[h.loop_index as usize], h, s.color),
                    held,
                })
                .collect()
        })
        .collect()
}

/// The text lines of a module's loops (none without).
pub fn loops_block(loops: &[LoopSummary], warnings: &[String]) -> String {
    let mut out = String::new();
    if loops.is_empty() && warnings.is_empty() {
        return out;
    }
    out.push_str(&format!("  loops ({}):\n", loops.len()));
    for l in loops {
        let p = &l.placed;
        let indent = "  ".repeat(p.depth as usize + 2);
        out.push_str(&format!(
            "{indent}{} ({}) at step {} in {}: cond steps {}–{}, {}\n",
            p.while_name,
            p.name,
            p.step,
            p.in_computation,
            p.condition_steps[0],
            p.condition_steps[1],
            p.body_label().trim_start_matches(&*p.while_name).trim_start(),
        ));
        let mut parts = Vec::new();
        for role in [Role::Stacked, Role::Invariant, Role::Carry] {
            let of: Vec<&Element> = l.elements.iter().filter(|e| e.role == role).collect();
            if !of.is_empty() {
                let bytes: u64 = of.iter().map(|e| e.size).sum();
                parts.push(format!("{} {} ({})", of.len(), role.label(), human_bytes(bytes)));
            }
        }
        if !parts.is_empty() {
            out.push_str(&format!("{indent}  holds {}\n", parts.join(", ")));
        }
    }
    for w in warnings {
        out.push_str(&format!("    {}\n", crate::summary::printable(w)));
    }
    out
}

/// The text lines of what the loops hold at a space's peak (none when they hold nothing).
pub fn at_peak_block(rows: &[LoopAtPeak]) -> String {
    let rows: Vec<&LoopAtPeak> = (rows.iter())
        .filter(|r| r.held.stacked_bytes + r.held.carry_bytes + r.held.temporary_bytes > 0)
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = "    loops at the peak:\n".to_string();
    for r in rows {
        let h = &r.held;
        out.push_str(&format!(
            "      {} ({}): stacked {} · carries {} (invariant {}) · body temporaries {}\n",
            h.while_name,
            h.name,
            human_bytes(h.stacked_bytes),
            human_bytes(h.carry_bytes),
            human_bytes(h.invariant_bytes),
            human_bytes(h.temporary_bytes),
        ));
    }
    out
}
