//! Loops and calls on the time axis: every schedule step's computation, and each `while`
//! with the steps of its condition and body and its trip count, from the HLO module text
//! beside the dump ([`Module::hlo`]).
//!
//! Owns: the re-run of XLA's flattening of the schedule on the printed order
//! ([`flatten`]), its check against the dump's `InstructionSequence`, the loops' spans,
//! nesting, trip counts ([`trip`]) and names (from the op_name: `…/while` is a `lax.scan` or
//! `fori_loop`, `transpose(…)` the backward pass; other whiles are XLA's own, such as a
//! windowed einsum's).
//!
//! **Invariant:** a loop's steps are those the flattening gives and the dump's
//! `InstructionSequence` confirms name for name; where the two disagree there are no loops
//! and a warning says why, never a wrong span. Within one loop, condition, body and the
//! while itself are consecutive: `condition_steps.1 + 1 == body_steps.0` and
//! `body_steps.1 + 1 == step`.

pub mod flatten;
pub mod trip;

use hashbrown::HashMap;
use serde::Serialize;

use crate::model::hlo::{CallRole, HloText};
use crate::model::Module;
use crate::op_path::segments;
pub use trip::TripSource;

/// One `while` of the program, placed on the time axis.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Loop {
    /// The while instruction's name (`while.43`).
    #[serde(rename = "while")]
    pub while_name: String,
    /// Its own step, right after its body's last.
    pub step: u32,
    /// The computation it runs in.
    #[serde(rename = "in")]
    pub in_computation: String,
    pub condition: String,
    pub body: String,
    /// Inclusive.
    pub condition_steps: [u32; 2],
    /// Inclusive.
    pub body_steps: [u32; 2],
    pub trip_count: Option<u64>,
    pub trip_source: TripSource,
    /// What the loop is, from its op_name: `forward scan`, `backward scan`, `XLA loop of
    /// dot_general (forward)`.
    pub name: String,
    pub op_name: Option<String>,
    /// Loops it is inside (0: at the top).
    pub depth: u32,
    /// Index in [`Loops::loops`] of the innermost loop it is inside.
    pub parent: Option<u32>,
    /// Where it is in [`Module::hlo`]: the while's computation and instruction indices, its
    /// condition's and body's computation indices.
    #[serde(skip)]
    pub at: [u32; 4],
}

/// The loops of a module, or why there are none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Loops {
    /// In step order of their condition (outer before inner).
    pub loops: Vec<Loop>,
    /// Per step, the computation it runs in (index into the HLO text's computations);
    /// empty when there is no HLO text or the check failed.
    pub step_computation: Vec<u32>,
    /// Why there are no loops, or what was left out: no HLO text, a disagreement with
    /// `InstructionSequence`, a body flattened before for another while.
    pub warnings: Vec<String>,
}

/// Said when a module has no HLO text to read loops from.
pub const NEEDS_HLO: &str = "loops need the HLO text beside the dump: *after_optimizations.txt";

impl Loop {
    /// The band's label for the body: `while.43 body ×8 · steps 165–205`.
    pub fn body_label(&self) -> String {
        let trips = self
            .trip_count
            .map_or("×?".to_string(), |n| format!("×{n}"));
        format!(
            "{} body {trips} · steps {}–{}",
            self.while_name, self.body_steps[0], self.body_steps[1]
        )
    }

    /// The band's label for the condition: `while.43 cond · steps 161–164`.
    pub fn condition_label(&self) -> String {
        format!(
            "{} cond · steps {}–{}",
            self.while_name, self.condition_steps[0], self.condition_steps[1]
        )
    }

    /// All its steps: condition, body and the while itself.
    pub fn steps(&self) -> [u32; 2] {
        [self.condition_steps[0], self.step]
    }

    /// Whether `step` is in its condition or body (not the while's own step).
    pub fn runs_at(&self, step: u32) -> bool {
        self.condition_steps[0] <= step && step <= self.body_steps[1]
    }
}

impl Loops {
    /// The loops whose condition or body runs at `step`, outermost first.
    pub fn around(&self, step: u32) -> impl Iterator<Item = &Loop> {
        self.loops.iter().filter(move |l| l.runs_at(step))
    }
}

/// What a while's op_name says it is.
pub fn loop_name(op_name: Option<&str>) -> String {
    let Some(op) = op_name.filter(|o| !o.is_empty()) else {
        return "loop".to_string();
    };
    let segs = segments(op);
    let pass = if segs.iter().any(|s| s.starts_with("transpose(")) {
        "backward"
    } else if segs.iter().any(|s| s.starts_with("jvp(")) {
        "forward"
    } else {
        ""
    };
    let last = segs.last().copied().unwrap_or("");
    match (last, pass) {
        ("while", "") => "scan".to_string(),
        ("while", p) => format!("{p} scan"),
        (l, "") => format!("XLA loop of {l}"),
        (l, p) => format!("XLA loop of {l} ({p})"),
    }
}

/// The module's loops on its time axis ([`NEEDS_HLO`] without an HLO text).
pub fn loops(module: &Module) -> Loops {
    let Some(hlo) = module.hlo.as_deref() else {
        return Loops {
            warnings: vec![NEEDS_HLO.to_string()],
            ..Loops::default()
        };
    };
    let flat = flatten::flatten(hlo);
    let assigned = match flatten::step_computations(module, hlo, &flat) {
        Ok(a) => a,
        Err(e) => {
            return Loops {
                warnings: vec![format!(
                    "no loops drawn: the HLO text does not match the schedule: {e}"
                )],
                ..Loops::default()
            }
        }
    };
    let mut spans: HashMap<u32, [u32; 2]> = HashMap::new();
    for (step, &c) in assigned.computations.iter().enumerate() {
        let s = spans.entry(c).or_insert([step as u32; 2]);
        s[1] = step as u32;
    }
    let mut out = Loops {
        step_computation: assigned.computations.clone(),
        ..Loops::default()
    };
    for (&(c, i), &step) in flat.iter().zip(&assigned.steps) {
        let w = &hlo.computations[c as usize].instructions[i as usize];
        if hlo.opcode(w) != "while" {
            continue;
        }
        match while_loop(hlo, &spans, (c, i), step) {
            Ok(l) => out.loops.push(l),
            Err(e) => out.warnings.push(format!("{}: {e}", hlo.name(w))),
        }
    }
    nest(&mut out.loops);
    out
}

fn while_loop(
    hlo: &HloText,
    spans: &HashMap<u32, [u32; 2]>,
    (c, i): (u32, u32),
    step: u32,
) -> Result<Loop, String> {
    let outer = &hlo.computations[c as usize];
    let w = &outer.instructions[i as usize];
    let comp = |role| {
        let n = hlo.called(w, role).ok_or("no condition or body printed")?;
        hlo.computation_index(n)
            .map(|i| (n, i))
            .ok_or(format!("{n} is not printed"))
    };
    let (cond_name, cond) = comp(CallRole::Condition)?;
    let (body_name, body) = comp(CallRole::Body)?;
    let (Some(&cs), Some(&bs)) = (spans.get(&cond), spans.get(&body)) else {
        return Err("its condition or body has no step".to_string());
    };
    if cs[1] + 1 != bs[0] || bs[1] + 1 != step {
        return Err(format!(
            "its condition (steps {}–{}) and body (steps {}–{}) do not run just before it (step {step}): flattened for another while",
            cs[0], cs[1], bs[0], bs[1]
        ));
    }
    let (trip_count, trip_source) = trip::trip_count(
        hlo,
        w,
        outer,
        hlo.computations.get(cond as usize),
        hlo.computations.get(body as usize),
    );
    Ok(Loop {
        while_name: hlo.name(w).to_string(),
        step,
        in_computation: hlo.str(outer.name).to_string(),
        condition: cond_name.to_string(),
        body: body_name.to_string(),
        condition_steps: cs,
        body_steps: bs,
        trip_count,
        trip_source,
        name: loop_name(hlo.op_name(w)),
        op_name: hlo.op_name(w).map(str::to_string),
        depth: 0,
        parent: None,
        at: [c, i, cond, body],
    })
}

/// Orders the loops by their first step and sets each one's depth and innermost parent.
fn nest(loops: &mut [Loop]) {
    loops.sort_by_key(|l| (l.condition_steps[0], std::cmp::Reverse(l.step)));
    for k in 0..loops.len() {
        let [a, b] = loops[k].steps();
        let inside: Vec<u32> = (0..k)
            .filter(|&j| {
                let [pa, pb] = loops[j].steps();
                pa <= a && b <= pb && (pa, pb) != (a, b)
            })
            .map(|j| j as u32)
            .collect();
        loops[k].depth = inside.len() as u32;
        // Sorted by start, the last one it is inside is the innermost.
        loops[k].parent = inside.last().copied();
    }
}

#[cfg(test)]
pub(crate) mod tests;
