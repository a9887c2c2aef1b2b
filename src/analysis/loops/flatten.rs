//! XLA's flattening of a scheduled module (`HloLiveRange::FlattenSchedule` in
//! `hlo_live_range.cc`) re-run on the HLO text's printed order, and its check against the
//! dump's `InstructionSequence`.
//!
//! The flattening walks the entry computation's sequence; before a `call`, `conditional` or
//! `async-start` it flattens the computations the instruction calls, before a `while` its
//! condition and then its body; each computation once. Fusions', reducers' and custom calls'
//! computations are not flattened (they have no steps of their own).

use hashbrown::HashMap;

use crate::model::hlo::{CallRole, HloInstruction, HloText};
use crate::model::Module;

/// One printed instruction in flattened order: (computation, instruction) indices into
/// [`HloText::computations`] and its `instructions`.
pub type Flat = (u32, u32);

/// The execution thread an `async-start` runs its computation on (`async_execution_thread=
/// "sparsecore"`; `main` when not printed).
fn async_thread<'a>(hlo: &'a HloText, i: &HloInstruction) -> &'a str {
    hlo.attr(i, "async_execution_thread").map_or("main", |v| v.trim_matches('"'))
}

/// The computations an instruction has flattened before it, in XLA's order.
fn flattened_callees<'a>(hlo: &'a HloText, i: &HloInstruction) -> Vec<&'a str> {
    let calls = hlo.calls(i);
    let by = |role: CallRole| {
        calls
            .iter()
            .filter(move |c| c.role == role)
            .map(|c| hlo.str(c.computation))
    };
    match hlo.opcode(i) {
        "while" => by(CallRole::Condition).chain(by(CallRole::Body)).collect(),
        "conditional" => by(CallRole::TrueComputation)
            .chain(by(CallRole::FalseComputation))
            .chain(by(CallRole::Branch))
            .collect(),
        "call" | "async-start" => calls.iter().map(|c| hlo.str(c.computation)).collect(),
        _ => Vec::new(),
    }
}

/// The printed instructions in flattened order, from the entry computation (none without
/// one). Iterative, so a deep chain of calls cannot overflow the stack; a computation called
/// again (or a cycle, which valid HLO never has) is not walked twice. An `async-start` on
/// another execution thread than the computation it is in (`async_execution_thread=
/// "sparsecore"` in the main program) has its computations flattened before the first
/// `async-update` or `async-done` that follows from it, as the dumps show, not before the
/// start.
pub fn flatten(hlo: &HloText) -> Vec<Flat> {
    // Another thread's async-start (or an update of one) → its computations and thread.
    let mut deferred: HashMap<&str, (Vec<&str>, &str)> = HashMap::new();
    let Some(entry) = hlo.entry.filter(|&e| (e as usize) < hlo.computations.len()) else {
        return Vec::new();
    };
    struct Frame<'a> {
        comp: u32,
        at: usize,
        /// The execution thread the computation runs on.
        thread: &'a str,
        /// The callees of instruction `at` still to flatten before it (with their thread),
        /// once asked.
        waiting: Option<(Vec<u32>, usize, &'a str)>,
    }
    let mut seen = vec![false; hlo.computations.len()];
    seen[entry as usize] = true;
    let mut stack = vec![Frame { comp: entry, at: 0, thread: "main", waiting: None }];
    let mut out = Vec::new();
    while let Some(top) = stack.last_mut() {
        let comp = &hlo.computations[top.comp as usize];
        let Some(instr) = comp.instructions.get(top.at) else {
            stack.pop();
            continue;
        };
        let frame_thread = top.thread;
        let (callees, next, thread) = top.waiting.get_or_insert_with(|| {
            let mut names = flattened_callees(hlo, instr);
            let mut thread = frame_thread;
            let opcode = hlo.opcode(instr);
            if opcode == "async-start" && async_thread(hlo, instr) != frame_thread {
                deferred.insert(hlo.name(instr), (std::mem::take(&mut names), async_thread(hlo, instr)));
            } else if matches!(opcode, "async-update" | "async-done") {
                if let Some((d, t)) = hlo.operand(instr, 0).and_then(|o| deferred.remove(o)) {
                    if opcode == "async-update" {
                        // A later update or the done of this one finds nothing left.
                        deferred.insert(hlo.name(instr), (Vec::new(), t));
                    }
                    names.extend(d);
                    thread = t;
                }
            }
            let c = names
                .into_iter()
                .filter_map(|n| hlo.computation_index(n))
                .collect();
            (c, 0, thread)
        });
        if let Some(&c) = callees.get(*next) {
            *next += 1;
            let thread = *thread;
            if !std::mem::replace(&mut seen[c as usize], true) {
                stack.push(Frame { comp: c, at: 0, thread, waiting: None });
            }
            continue;
        }
        out.push((top.comp, top.at as u32));
        top.at += 1;
        top.waiting = None;
    }
    out
}

/// Each schedule step's computation, and the step of each flattened instruction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Assigned {
    /// Per step of `InstructionSequence`, an index into [`HloText::computations`]
    /// (`u32::MAX` only for a sequence with no printed step around it).
    pub computations: Vec<u32>,
    /// Per entry of the flattening, its step.
    pub steps: Vec<u32>,
}

/// Each schedule step's computation (index into [`HloText::computations`]), or why the
/// flattening and the dump's `InstructionSequence` disagree.
///
/// The two are walked side by side by name. A step whose instruction the text does not
/// print anywhere (a TPU's `get-tuple-element.799`, printed only as `%wide.param.39#0`)
/// takes the computation around it: that of the matched steps on both sides when they
/// agree, else the earlier one's unless that was the last flattened instruction of its
/// computation. A printed name out of place, or either list left over, is a disagreement.
pub fn step_computations(module: &Module, hlo: &HloText, flat: &[Flat]) -> Result<Assigned, String> {
    let schedule = module
        .schedule
        .as_ref()
        .filter(|s| !s.sequence.is_empty())
        .ok_or_else(|| "the dump has no InstructionSequence to check the HLO text against".to_string())?;
    let name = |f: &Flat| hlo.name(&hlo.computations[f.0 as usize].instructions[f.1 as usize]);
    const UNSET: u32 = u32::MAX;
    let mut comps = vec![UNSET; schedule.sequence.len()];
    // The flat index matched at each step (UNSET for an unprinted step).
    let mut matched = vec![UNSET; schedule.sequence.len()];
    let mut at = 0usize;
    let mut steps = Vec::with_capacity(flat.len());
    for (step, &id) in schedule.sequence.iter().enumerate() {
        let Some(instr) = module.instructions.get(id as usize) else {
            continue;
        };
        let n = module.str(instr.name);
        if let Some(f) = flat.get(at).filter(|f| name(f) == n) {
            comps[step] = f.0;
            matched[step] = at as u32;
            steps.push(step as u32);
            at += 1;
        } else if hlo.position(n).is_some() {
            let expected = flat.get(at).map_or("the end of the flattened text", |f| name(f));
            return Err(format!(
                "step {step} runs {n} where the HLO text's flattened schedule has {expected}"
            ));
        }
    }
    if let Some(f) = flat.get(at) {
        return Err(format!(
            "the HLO text's flattened schedule goes on past InstructionSequence's end ({} more, the first {})",
            flat.len() - at,
            name(f)
        ));
    }
    if at == 0 {
        return Err("no step of InstructionSequence is printed in the HLO text".to_string());
    }
    // The last flattened instruction of each computation.
    let mut last_of: HashMap<u32, usize> = HashMap::new();
    for (i, f) in flat.iter().enumerate() {
        last_of.insert(f.0, i);
    }
    let mut step = 0;
    while step < comps.len() {
        if comps[step] != UNSET {
            step += 1;
            continue;
        }
        let run_end = (step..comps.len()).find(|&s| comps[s] != UNSET).unwrap_or(comps.len());
        let before = step.checked_sub(1).map(|s| (comps[s], matched[s]));
        let after = comps.get(run_end).copied();
        let c = match (before, after) {
            (Some((b, _)), Some(a)) if a == b => b,
            (Some((b, m)), Some(a)) => {
                if last_of.get(&b) == Some(&(m as usize)) {
                    a
                } else {
                    b
                }
            }
            (Some((b, _)), None) => b,
            (None, Some(a)) => a,
            (None, None) => UNSET,
        };
        comps[step..run_end].fill(c);
        step = run_end;
    }
    Ok(Assigned { computations: comps, steps })
}
