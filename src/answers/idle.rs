//! Idle stretches, the candidates for rematerialisation or offload: every use of a value
//! placed on the schedule, and for the values live at a step the longest stretch in which
//! each is live but not used, ranked by idle bytes × steps.
//!
//! A use (`NAME, operand N` in `Used values`) is placed at the step of instruction `NAME` in
//! the flattened schedule (`InstructionSequence`); a use of an instruction the schedule does
//! not list stays unplaced. A value is *touched* where it is defined (the start of its live
//! range), at each placed use inside its live range, and at the end of its live range (for
//! parameters and outputs the end of the program). A stretch runs from one touch `a` to the
//! next `b`; the value sits idle at the `b − a − 1` steps between them. Dumps without
//! `Used values` (the `*-buffer-assignment-values.txt` file of new XLA) cannot answer.
//!
//! **Loops.** With the HLO text beside the dump ([`crate::analysis::loops`]), a use inside a
//! loop's condition or body runs on every iteration, so the value is also touched at the
//! loop's first step and at the while's own step (of every loop around the use), and no
//! stretch between those is idle: it is not idle across the loop. A loop's carries (the values a while defines but its stacked
//! outputs, and its condition's and body's parameters) are not offered as candidates: the
//! loop reads and rewrites them every iteration.

mod steps;

use std::sync::Mutex;

use hashbrown::{HashMap, HashSet};
use serde::Serialize;

use crate::answers::loops::{ModuleLoops, Role};
use crate::answers::{LiveSet, LiveValue};
use crate::model::{Module, Value};
use steps::StepsByName;

/// Instruction name → its step in the flattened schedule (the first, if listed twice), and
/// each value's idle stretches once found.
///
/// Owned (it keeps handles into the module's string arena, not borrowed names), so a caller
/// builds it once per module and reuses it for every step and memory space; every method
/// takes the module it was built from. A value's stretches do not depend on the step asked
/// about, so [`idle_ranking`] keeps those it finds: asked again at another step, it looks up
/// only the values it has not met.
pub struct ScheduleIndex {
    /// Instruction name → its first step.
    steps: StepsByName,
    /// Whether any value has its `Used values` entry (without, the table stays empty).
    has_uses: bool,
    /// Value → its idle stretches (`None`: no `Used values` entry).
    stretches: Mutex<HashMap<u32, Option<Box<[Stretch]>>>>,
    /// Each loop's steps: its first (condition) step, the end of its body, the while's step.
    loops: Vec<[u32; 3]>,
    /// Values that are loops' carries, sorted: never candidates.
    carries: Vec<u32>,
}

impl ScheduleIndex {
    pub fn new(module: &Module) -> ScheduleIndex {
        ScheduleIndex::with_loops(module, None)
    }

    /// [`ScheduleIndex::new`] with the module's loops and holds, when the caller has them
    /// already ([`ModuleLoops::new`] of the same module).
    pub fn with_loops(module: &Module, loops: Option<&ModuleLoops>) -> ScheduleIndex {
        let mut index = ScheduleIndex {
            steps: StepsByName::default(),
            has_uses: has_uses(module),
            stretches: Mutex::new(HashMap::new()),
            loops: Vec::new(),
            carries: Vec::new(),
        };
        if module.schedule.is_none() || !index.has_uses {
            return index;
        }
        index.set_loops(module, loops);
        index.steps = StepsByName::new(module);
        index
    }

    /// The loops' spans and carries, from the HLO text (none without it).
    fn set_loops(&mut self, module: &Module, given: Option<&ModuleLoops>) {
        if module.hlo.is_none() {
            return;
        }
        let made;
        let ModuleLoops { loops: l, holds } = match given {
            Some(m) => m,
            None => {
                made = ModuleLoops::new(module);
                &made
            }
        };
        self.loops = (l.loops.iter())
            .map(|w| [w.condition_steps[0], w.body_steps[1], w.step])
            .collect();
        let mut carry_names: HashSet<&str> = HashSet::new();
        for (w, h) in l.loops.iter().zip(holds) {
            for e in h.elements.iter().filter(|e| e.role != Role::Stacked) {
                // The while's own values only: an invariant's init operand is not a carry.
                if let Some(v) = e.value.filter(|_| e.own) {
                    self.carries.push(v);
                }
            }
            carry_names.insert(&w.while_name);
        }
        // The whole tuple a while defines (`while.43{}`) and the loops' parameters.
        let params: HashSet<&str> = match module.hlo.as_deref() {
            Some(hlo) => (l.loops.iter())
                .flat_map(|w| [w.at[2], w.at[3]])
                .filter_map(|c| hlo.computations.get(c as usize))
                .filter_map(|c| crate::analysis::loops::trip::parameter(hlo, c))
                .map(|p| hlo.name(p))
                .collect(),
            None => HashSet::new(),
        };
        for (i, v) in module.values.iter().enumerate() {
            let Some(ins) = module.instructions.get(v.instruction as usize) else {
                continue;
            };
            let n = module.str(ins.name);
            let whole_tuple = carry_names.contains(&n) && module.str(v.index) == "{}";
            if whole_tuple || params.contains(&n) {
                self.carries.push(i as u32);
            }
        }
        self.carries.sort_unstable();
        self.carries.dedup();
    }

    /// Whether value `v` is a loop's carry (never a candidate).
    pub fn is_carry(&self, v: u32) -> bool {
        self.carries.binary_search(&v).is_ok()
    }

    /// The idle stretches of `v` given the steps of its uses: a use inside a loop touches
    /// the value at the loop's first step and at the while's step too, and no stretch
    /// inside such a loop is idle (the loop uses it on every iteration).
    fn loop_stretches(&self, v: &Value, steps: impl Iterator<Item = u32>) -> Vec<Stretch> {
        let mut touches = Vec::new();
        let mut covered: Vec<[u32; 2]> = Vec::new();
        for s in steps {
            touches.push(s);
            for &[first, body_end, step] in &self.loops {
                if first <= s && s <= body_end {
                    touches.extend([first, step]);
                    covered.push([first, step]);
                }
            }
        }
        let mut out = stretches(v, touches.into_iter());
        out.retain(|st| !covered.iter().any(|&[a, b]| a <= st.from && st.to <= b));
        out
    }

    /// The idle stretches of value `v` from its uses (`None` without its `Used values` entry).
    fn find_stretches(&self, module: &Module, v: u32) -> Option<Box<[Stretch]>> {
        let value = &module.values[v as usize];
        let (_, uses) = module.positions_and_uses(value)?;
        let steps = uses.iter().filter_map(|u| self.step_of(module, use_instruction(u)));
        Some(self.loop_stretches(value, steps).into_boxed_slice())
    }

    /// The idle stretches of value `v` (none without its `Used values` entry), found once and
    /// kept, as [`idle_ranking`] keeps them.
    pub fn stretches_of(&self, module: &Module, v: u32) -> Vec<Stretch> {
        let mut known = self.stretches.lock().unwrap_or_else(|e| e.into_inner());
        let found = known.entry(v).or_insert_with(|| self.find_stretches(module, v));
        found.as_deref().map(<[Stretch]>::to_vec).unwrap_or_default()
    }

    /// The step of the instruction named `instruction` in `module` (the module the index
    /// was built from); `None` for a module without `Used values`.
    pub fn step_of(&self, module: &Module, instruction: &str) -> Option<u32> {
        self.steps.step_of(module, instruction)
    }
}

/// One use of a value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Use {
    /// The use as the dump printed it: `fusion.2, operand 1`.
    pub text: String,
    /// Its step; `None` when the schedule does not list the instruction.
    pub step: Option<u32>,
}

/// A stretch between two touches of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Stretch {
    /// The step where the value was defined or last used.
    pub from: u32,
    /// The step of the next use, or the end of the live range.
    pub to: u32,
    /// Whether `to` is a use (not the end of the live range).
    pub to_use: bool,
    /// Steps strictly between `from` and `to`.
    pub idle_steps: u32,
}

/// The uses of a value and its stretches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ValueUses {
    pub value: u32,
    pub uses: Vec<Use>,
    /// In step order, the idle ones only.
    pub stretches: Vec<Stretch>,
}

/// The instruction of a use line (`fusion.2, operand 1` → `fusion.2`; HLO names hold no
/// comma).
pub(crate) fn use_instruction(text: &str) -> &str {
    text.split(',').next().unwrap_or("").trim()
}

/// The uses of one value placed on the schedule; `None` when the dump has no `Used values`
/// entry for it.
pub fn value_uses(module: &Module, index: &ScheduleIndex, value: u32) -> Option<ValueUses> {
    let v = &module.values[value as usize];
    let (_, uses) = module.positions_and_uses(v)?;
    let uses: Vec<Use> = uses
        .iter()
        .map(|u| Use {
            text: u.trim().to_string(),
            step: index.step_of(module, use_instruction(u)),
        })
        .collect();
    let stretches = index.loop_stretches(v, uses.iter().filter_map(|u| u.step));
    Some(ValueUses {
        value,
        uses,
        stretches,
    })
}

/// The idle stretches of `v` given the steps of its uses.
fn stretches(v: &Value, use_steps: impl Iterator<Item = u32>) -> Vec<Stretch> {
    let Some(r) = v.live else {
        return Vec::new();
    };
    let mut touches: Vec<(u32, bool)> = use_steps
        .filter(|&s| r.start <= s && s <= r.end)
        .map(|s| (s, true))
        .collect();
    touches.push((r.start, false));
    touches.push((r.end, false));
    // Where a use and the definition or the live end fall on one step, the use is kept.
    touches.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    touches.dedup_by_key(|t| t.0);
    touches
        .windows(2)
        .filter(|w| w[1].0 > w[0].0 + 1)
        .map(|w| Stretch {
            from: w[0].0,
            to: w[1].0,
            to_use: w[1].1,
            idle_steps: w[1].0 - w[0].0 - 1,
        })
        .collect()
}

/// One candidate: a value live at the step, with its longest idle stretch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IdleRow {
    pub value: u32,
    pub size: u64,
    pub longest: Stretch,
    /// `size × longest.idle_steps` (saturating).
    pub idle_byte_steps: u64,
    /// The stretch the step falls in, if the value is idle there (what rematerialising or
    /// offloading it would free at this step).
    pub across_step: Option<Stretch>,
    /// What can be done to it ([`remedy`]).
    pub remedy: Remedy,
}

/// What can be done to free a value's idle bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Remedy {
    /// Moved to host memory and back: a parameter, an output or a constant, which the
    /// program cannot compute again.
    OffloadOnly,
    /// Computed again where it is used next (rematerialised), or offloaded: a temporary.
    RematOrOffload,
}

impl Remedy {
    pub fn label(self) -> &'static str {
        match self {
            Remedy::OffloadOnly => "offload only",
            Remedy::RematOrOffload => "remat or offload",
        }
    }
}

/// What can be done to value `v`: an input (an entry parameter), an output or a constant
/// can only be offloaded; a temporary (custom-call scratch included) can also be
/// rematerialised. By [`crate::analysis::value_kind`].
pub fn remedy(module: &Module, v: &Value) -> Remedy {
    use crate::analysis::ValueKind::*;
    match crate::analysis::value_kind(module, v) {
        Parameter | Output | Constant => Remedy::OffloadOnly,
        ThreadLocal | Scratch | Temporary => Remedy::RematOrOffload,
    }
}

/// The ranked candidates at a step, or why there are none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IdleAnswer {
    pub step: u32,
    /// `false` when the dump has no `Used values`; `message` says what is needed.
    pub available: bool,
    pub message: Option<String>,
    /// Largest `idle_byte_steps` first.
    pub rows: Vec<IdleRow>,
}

/// The message for dumps without `Used values`.
pub const NEEDS_VALUES: &str = "Idle stretches need the uses of each value: the `Used values` section, which new XLA writes to the *-buffer-assignment-values.txt file; load it with the dump.";

/// Whether any value of the module has its `Used values` entry.
pub fn has_uses(module: &Module) -> bool {
    module.values.iter().any(|v| !v.uses_text.is_empty())
}

/// The values live at `live.step`, ranked by idle bytes × steps of their longest stretch;
/// values never idle are left out.
pub fn idle_ranking(module: &Module, index: &ScheduleIndex, live: &LiveSet) -> IdleAnswer {
    let Some(mut answer) = unavailable_or_empty(index, live) else {
        return needs_values(live);
    };
    // A poisoned lock only means a panic elsewhere; what the map holds is still right.
    let mut known = index.stretches.lock().unwrap_or_else(|e| e.into_inner());
    answer.rows = (live.values.iter())
        .filter(|lv| !index.is_carry(lv.value))
        .filter_map(|lv| idle_row(module, index, &mut known, lv, live.step))
        .collect();
    drop(known);
    answer.rows.sort_by(ranked);
    answer
}

/// The first `top` rows of [`idle_ranking`], the same rows, found without the stretches of
/// most live values: a value's idle bytes × steps are at most its size × (the steps of its
/// live range − 1) (every touch lies in its live range), so the values are taken by that
/// bound, largest first, and once `top` rows are found, the values whose bound is below
/// the `top`-th row's figure cannot enter (a tie can: it is looked at). At the 94 MB
/// dump's peak, 25,066 values are live and the summary asks for 10.
pub fn top_idle_ranking(module: &Module, index: &ScheduleIndex, live: &LiveSet, top: usize) -> IdleAnswer {
    let Some(mut answer) = unavailable_or_empty(index, live) else {
        return needs_values(live);
    };
    let bound = |lv: &LiveValue| {
        let steps = (module.values.get(lv.value as usize))
            .and_then(|v| v.live)
            .map_or(0, |r| r.end.saturating_sub(r.start).saturating_sub(1));
        lv.size.saturating_mul(u64::from(steps))
    };
    let mut order: Vec<(u64, &LiveValue)> = (live.values.iter())
        .filter(|lv| !index.is_carry(lv.value))
        .map(|lv| (bound(lv), lv))
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.value.cmp(&b.1.value)));
    let mut known = index.stretches.lock().unwrap_or_else(|e| e.into_inner());
    // The `top` best figures so far, smallest first.
    let mut best: std::collections::BinaryHeap<std::cmp::Reverse<u64>> = Default::default();
    for (most, lv) in order {
        if top == 0 || (best.len() >= top && best.peek().is_some_and(|w| most < w.0)) {
            break;
        }
        let Some(row) = idle_row(module, index, &mut known, lv, live.step) else {
            continue;
        };
        best.push(std::cmp::Reverse(row.idle_byte_steps));
        if best.len() > top {
            best.pop();
        }
        answer.rows.push(row);
    }
    drop(known);
    answer.rows.sort_by(ranked);
    answer.rows.truncate(top);
    answer
}

/// The answer without rows when the module has the uses (`None` when it has not).
fn unavailable_or_empty(index: &ScheduleIndex, live: &LiveSet) -> Option<IdleAnswer> {
    index.has_uses.then(|| IdleAnswer {
        step: live.step,
        available: true,
        message: None,
        rows: Vec::new(),
    })
}

/// The answer for a module without `Used values`.
fn needs_values(live: &LiveSet) -> IdleAnswer {
    IdleAnswer {
        step: live.step,
        available: false,
        message: Some(NEEDS_VALUES.to_string()),
        rows: Vec::new(),
    }
}

/// The row of live value `lv` at step `t` (none without its `Used values` entry or when it
/// is never idle), its stretches found once and kept in `known`.
fn idle_row(
    module: &Module,
    index: &ScheduleIndex,
    known: &mut HashMap<u32, Option<Box<[Stretch]>>>,
    lv: &LiveValue,
    t: u32,
) -> Option<IdleRow> {
    let stretches = known
        .entry(lv.value)
        .or_insert_with(|| index.find_stretches(module, lv.value));
    let stretches = stretches.as_deref()?;
    let longest = *stretches
        .iter()
        .max_by(|a, b| a.idle_steps.cmp(&b.idle_steps).then(b.from.cmp(&a.from)))?;
    Some(IdleRow {
        value: lv.value,
        size: lv.size,
        idle_byte_steps: lv.size.saturating_mul(u64::from(longest.idle_steps)),
        longest,
        across_step: stretches.iter().copied().find(|s| s.from < t && t < s.to),
        remedy: remedy(module, &module.values[lv.value as usize]),
    })
}

/// The ranking's order: largest idle bytes × steps first, then by value.
fn ranked(a: &IdleRow, b: &IdleRow) -> std::cmp::Ordering {
    b.idle_byte_steps
        .cmp(&a.idle_byte_steps)
        .then(a.value.cmp(&b.value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_use_inside_the_body_is_a_use_on_every_iteration() {
        let mut m = crate::answers::loops::tests::scan_module();
        // w8{} (live 1–18) is used by x at step 14, in the body (steps 10–16 of the loop 6–17).
        let uses = format!("{}\nx, operand 0", crate::model::USES_MARK);
        m.values[3].uses_text = m.uses_strings.push(&uses);
        let index = ScheduleIndex::new(&m);
        let u = value_uses(&m, &index, 3).unwrap();
        let got: Vec<_> = u.stretches.iter().map(|s| (s.from, s.to, s.idle_steps)).collect();
        // Touched at 1 (defined), 6 (the loop's first step), 14 (the use), 17 (the while),
        // 18 (its end), nothing idle between 6 and 17 (used every iteration); without the
        // loop it would be idle 12 steps from 1 to 14.
        assert_eq!(got, vec![(1, 6, 4)]);
        // At step 18, the carry while.1{1} is no candidate, the stack while.1{2} is.
        for v in [1, 2] {
            m.values[v].uses_text = m.uses_strings.push(crate::model::USES_MARK);
        }
        let index = ScheduleIndex::new(&m);
        assert!(index.is_carry(1) && !index.is_carry(2) && !index.is_carry(3));
        let live = crate::answers::LiveSet {
            step: 18,
            values: [1u32, 2]
                .iter()
                .map(|&v| crate::answers::LiveValue { value: v, size: m.values[v as usize].size, bytes: 0 })
                .collect(),
            ..Default::default()
        };
        let rows: Vec<u32> = idle_ranking(&m, &index, &live).rows.iter().map(|r| r.value).collect();
        assert!(!rows.contains(&1), "{rows:?}");
    }
}
