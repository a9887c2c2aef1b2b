//! Loops on hand-made HLO texts and schedules: the flattening's order, unprinted steps,
//! trip counts in each form, nesting, and disagreements.

use super::*;
use crate::model::hlo::{Head, HloBuilder, Meta};
use crate::model::{Instruction, Schedule};

/// An instruction as the tests write it; [`Text::build`] makes the text's form.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ins {
    pub name: String,
    pub opcode: String,
    pub shape: String,
    pub operands: Vec<String>,
    pub literal: Option<String>,
    pub is_root: bool,
    pub calls: Vec<(CallRole, String)>,
    pub op_name: Option<String>,
    pub known_trip_count: Option<u64>,
    pub direction: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Comp {
    pub name: String,
    pub is_entry: bool,
    pub instructions: Vec<Ins>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Text {
    pub computations: Vec<Comp>,
    pub entry: Option<u32>,
}

impl Text {
    /// The text as the reader would have made it of the same lines.
    pub(crate) fn build(&self) -> HloText {
        let mut b = HloBuilder::new();
        for c in &self.computations {
            b.computation(c.name.as_bytes(), c.is_entry);
            for i in &c.instructions {
                for o in &i.operands {
                    b.operand(o.as_bytes());
                }
                for (role, n) in &i.calls {
                    b.call(*role, n.as_bytes());
                }
                if let Some(d) = &i.direction {
                    b.attr(b"direction", d.as_bytes());
                }
                if let Some(n) = i.known_trip_count {
                    b.attr(
                        b"backend_config",
                        format!("{{\"known_trip_count\":{{\"n\":\"{n}\"}}}}").as_bytes(),
                    );
                }
                let op_name = i.op_name.as_ref().map(|o| b.intern(o.as_bytes()));
                let head = Head {
                    name: b.intern(i.name.as_bytes()),
                    opcode: b.intern(i.opcode.as_bytes()),
                    shape: b.intern(i.shape.as_bytes()),
                    literal: (i.literal.as_deref()).map(|l| b.intern(l.as_bytes())),
                    meta: b.meta(Meta {
                        op_name,
                        ..Meta::default()
                    }),
                    is_root: i.is_root,
                    line: 0,
                };
                b.instruction(head);
            }
        }
        b.text.entry = self.entry;
        b.finish()
    }
}

/// An instruction: `name = opcode(operands)`, with a shape.
pub(crate) fn ins(name: &str, opcode: &str, shape: &str, operands: &[&str]) -> Ins {
    Ins {
        name: name.into(),
        opcode: opcode.into(),
        shape: shape.into(),
        operands: operands.iter().map(|s| s.to_string()).collect(),
        ..Ins::default()
    }
}

pub(crate) fn constant(name: &str, v: i64) -> Ins {
    Ins {
        literal: Some(v.to_string()),
        ..ins(name, "constant", "s32[]", &[])
    }
}

pub(crate) fn comp(name: &str, mut instructions: Vec<Ins>) -> Comp {
    if let Some(l) = instructions.last_mut() {
        l.is_root = true;
    }
    Comp {
        name: name.into(),
        is_entry: false,
        instructions,
    }
}

pub(crate) fn calls(mut i: Ins, c: &[(CallRole, &str)]) -> Ins {
    i.calls = c.iter().map(|&(role, n)| (role, n.to_string())).collect();
    i
}

/// A while `name` over `init`, with its condition and body computations.
pub(crate) fn while_ins(name: &str, shape: &str, init: &str, cond: &str, body: &str) -> Ins {
    calls(
        ins(name, "while", shape, &[init]),
        &[(CallRole::Condition, cond), (CallRole::Body, body)],
    )
}

/// `cond_name (p) { n = constant(N); p = parameter(0); lt = compare(p#0, n), LT }`.
pub(crate) fn lt_condition(name: &str, p: &str, n: i64) -> Comp {
    let mut lt = ins(&format!("lt.{name}"), "compare", "pred[]", &[&format!("{p}#0"), &format!("n.{name}")]);
    lt.direction = Some("LT".into());
    comp(name, vec![constant(&format!("n.{name}"), n), ins(p, "parameter", "(s32[])", &[]), lt])
}

/// A module whose schedule is `names` and whose HLO text is `hlo`.
pub(crate) fn module(hlo: Text, names: &[&str]) -> Module {
    let mut m = Module::default();
    let mut seq = Vec::new();
    for n in names {
        let name = m.strings.intern(n);
        m.instructions.push(Instruction { name, ..Instruction::default() });
        seq.push(m.instructions.len() as u32 - 1);
    }
    m.schedule = Some(Schedule { max: names.len() as u32, sequence: seq, ..Schedule::default() });
    m.hlo = Some(Box::new(hlo.build()));
    m
}

pub(crate) fn text(mut computations: Vec<Comp>) -> Text {
    let entry = computations.len() - 1;
    computations[entry].is_entry = true;
    Text { computations, entry: Some(entry as u32) }
}

/// The scan: `while.1` of 8 trips, its counter in element 0 (init `copy(constant 0)`), the
/// TPU's form (no `known_trip_count`, GTEs printed as `bp#0`).
pub(crate) fn scan() -> (Text, Vec<&'static str>) {
    let body = comp(
        "body",
        vec![
            constant("one", 1),
            ins("bp", "parameter", "(s32[], f32[4], f32[8,4], f32[8,4])", &[]),
            ins("next", "add", "s32[]", &["bp#0", "one"]),
            ins("x", "negate", "f32[4]", &["bp#1"]),
            calls(ins("dus", "fusion", "f32[8,4]", &["bp#2", "x", "bp#0"]), &[(CallRole::Calls, "fused_dus")]),
            ins("root", "tuple", "(s32[], f32[4], f32[8,4], f32[8,4])", &["next", "x", "dus", "bp#3"]),
        ],
    );
    let fused = comp("fused_dus", vec![ins("fp", "parameter", "f32[8,4]", &[]), ins("u", "dynamic-update-slice", "f32[8,4]", &["fp"])]);
    let mut w = while_ins("while.1", "(s32[], f32[4], f32[8,4], f32[8,4])", "t", "cond", "body");
    w.op_name = Some("jit(f)/jvp(f)/while".into());
    let main = comp(
        "main",
        vec![
            ins("p", "parameter", "f32[4]", &[]),
            ins("w8", "parameter", "f32[8,4]", &[]),
            constant("zero", 0),
            ins("c0", "copy", "s32[]", &["zero"]),
            ins("buf", "broadcast", "f32[8,4]", &["zero"]),
            ins("t", "tuple", "(s32[], f32[4], f32[8,4], f32[8,4])", &["c0", "p", "buf", "w8"]),
            w,
            ins("out", "get-tuple-element", "f32[8,4]", &["while.1"]),
        ],
    );
    let hlo = text(vec![fused, lt_condition("cond", "cp", 8), body, main]);
    // The schedule as XLA flattens it; get-tuple-element.5/.6 are not printed.
    let names = vec![
        "p", "w8", "zero", "c0", "buf", "t", // 0..=5 main
        "n.cond", "cp", "get-tuple-element.5", "lt.cond", // 6..=9 cond
        "one", "bp", "get-tuple-element.6", "next", "x", "dus", "root", // 10..=16 body
        "while.1", "out", // 17, 18 main
    ];
    (hlo, names)
}

#[test]
fn flattening_puts_condition_then_body_before_the_while() {
    let (hlo, names) = scan();
    let flat = flatten::flatten(&hlo.build());
    let got: Vec<&str> = flat
        .iter()
        .map(|&(c, i)| hlo.computations[c as usize].instructions[i as usize].name.as_str())
        .collect();
    let printed: Vec<&str> = names.iter().copied().filter(|n| !n.starts_with("get-tuple")).collect();
    assert_eq!(got, printed);
}

#[test]
fn scan_spans_trip_count_and_name() {
    let (hlo, names) = scan();
    let l = loops(&module(hlo, &names));
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    assert_eq!(l.loops.len(), 1);
    let w = &l.loops[0];
    assert_eq!((w.while_name.as_str(), w.step, w.in_computation.as_str()), ("while.1", 17, "main"));
    assert_eq!(w.condition_steps, [6, 9]);
    assert_eq!(w.body_steps, [10, 16]);
    assert_eq!((w.trip_count, w.trip_source), (Some(8), TripSource::Condition));
    assert_eq!(w.name, "forward scan");
    assert_eq!(w.body_label(), "while.1 body ×8 · steps 10–16");
    // The unprinted GTEs take the computation around them: cond (2) at 8, body (3) at 12.
    assert_eq!(l.step_computation[8], 1);
    assert_eq!(l.step_computation[12], 2);
    assert_eq!(l.step_computation[17], 3);
}

#[test]
fn printed_trip_count_wins_and_other_forms_are_unknown() {
    let (mut hlo, names) = scan();
    let main = hlo.computations.len() - 1;
    hlo.computations[main].instructions[6].known_trip_count = Some(5);
    let l = loops(&module(hlo.clone(), &names));
    assert_eq!((l.loops[0].trip_count, l.loops[0].trip_source), (Some(5), TripSource::Printed));
    // The counter initialised from a parameter: unknown, and said so.
    hlo.computations[main].instructions[6].known_trip_count = None;
    hlo.computations[main].instructions[5].operands[0] = "p".into();
    let l = loops(&module(hlo, &names));
    assert_eq!((l.loops[0].trip_count, l.loops[0].trip_source), (None, TripSource::Unknown));
    assert_eq!(l.loops[0].body_label(), "while.1 body ×? · steps 10–16");
}

#[test]
fn a_start_and_step_other_than_zero_and_one() {
    let (mut hlo, names) = scan();
    let main = hlo.computations.len() - 1;
    hlo.computations[main].instructions[2].literal = Some("2".into());
    hlo.computations[2].instructions[0].literal = Some("3".into());
    // i = 2, 5, 8 < 8? no: 2 and 5 run, ceil((8 − 2) / 3) = 2.
    let l = loops(&module(hlo, &names));
    assert_eq!(l.loops[0].trip_count, Some(2));
}

#[test]
fn a_disagreement_is_a_warning_and_no_loops() {
    let (hlo, mut names) = scan();
    names.swap(10, 13); // "next" before "one": printed names out of the flattened order
    let l = loops(&module(hlo, &names));
    assert!(l.loops.is_empty());
    assert!(l.warnings[0].contains("step 10 runs next"), "{:?}", l.warnings);
    // A schedule longer than the text.
    let (hlo, mut names) = scan();
    names.truncate(17);
    let l = loops(&module(hlo, &names));
    assert!(l.loops.is_empty() && l.warnings[0].contains("goes on past"), "{:?}", l.warnings);
}

#[test]
fn without_hlo_text_loops_say_what_they_need() {
    let l = loops(&Module::default());
    assert_eq!(l.warnings, vec![NEEDS_HLO.to_string()]);
}

#[test]
fn nested_loops_and_calls() {
    // main: a, call(f) with f = { while.in(cond2, body2) }, then while.out(cond, body) whose
    // body holds while.in2.
    let inner_body = comp("ib", vec![ins("ibp", "parameter", "(s32[])", &[]), ins("ir", "tuple", "(s32[])", &["ibp#0"])]);
    let body = comp(
        "ob",
        vec![
            ins("obp", "parameter", "(s32[])", &[]),
            ins("it", "tuple", "(s32[])", &["obp#0"]),
            while_ins("while.in", "(s32[])", "it", "ic", "ib"),
            ins("or", "tuple", "(s32[])", &["obp#0"]),
        ],
    );
    let f = comp("f", vec![ins("fp", "parameter", "f32[]", &[]), ins("fn", "negate", "f32[]", &["fp"])]);
    let main = comp(
        "main",
        vec![
            ins("a", "parameter", "(s32[])", &[]),
            calls(ins("c", "call", "f32[]", &["a"]), &[(CallRole::ToApply, "f")]),
            while_ins("while.out", "(s32[])", "a", "oc", "ob"),
        ],
    );
    let hlo = text(vec![
        lt_condition("ic", "icp", 4),
        inner_body,
        lt_condition("oc", "ocp", 3),
        body,
        f,
        main,
    ]);
    let names = [
        "a", "fp", "fn", "c", // 0..=3
        "n.oc", "ocp", "lt.oc", // 4..=6
        "obp", "it", "n.ic", "icp", "lt.ic", "ibp", "ir", "while.in", "or", // 7..=15
        "while.out", // 16
    ];
    let l = loops(&module(hlo, &names));
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    let got: Vec<_> = l
        .loops
        .iter()
        .map(|w| (w.while_name.as_str(), w.condition_steps, w.body_steps, w.step, w.depth, w.parent))
        .collect();
    assert_eq!(
        got,
        vec![
            ("while.out", [4, 6], [7, 15], 16, 0, None),
            ("while.in", [9, 11], [12, 13], 14, 1, Some(0)),
        ]
    );
    assert_eq!(l.loops[1].in_computation, "ob");
    // The call's computation runs at steps 1 and 2.
    assert_eq!(l.step_computation[1], 4);
    assert_eq!(l.step_computation[2], 4);
}

#[test]
fn loop_names_from_op_names() {
    assert_eq!(loop_name(Some("jit(train_step)/jvp()/while")), "forward scan");
    assert_eq!(loop_name(Some("jit(train_step)/transpose(jvp())/while")), "backward scan");
    assert_eq!(
        loop_name(Some("jit(train_step)/jvp()/while/body/eval_jaxpr/dot_general")),
        "XLA loop of dot_general (forward)"
    );
    assert_eq!(loop_name(Some("jit(f)/while")), "scan");
    assert_eq!(loop_name(None), "loop");
}

#[test]
fn a_call_cycle_and_missing_computations_end() {
    // f calls itself (invalid HLO): flattened once, no hang; a while naming computations
    // that are not printed is left out with a warning.
    let f = comp("f", vec![calls(ins("self", "call", "f32[]", &[]), &[(CallRole::ToApply, "f")])]);
    let main = comp(
        "main",
        vec![
            calls(ins("c", "call", "f32[]", &[]), &[(CallRole::ToApply, "f")]),
            while_ins("while.9", "()", "c", "nope", "nada"),
        ],
    );
    let hlo = text(vec![f, main]);
    let flat = flatten::flatten(&hlo.build());
    assert_eq!(flat.len(), 3);
    let l = loops(&module(hlo, &["self", "c", "while.9"]));
    assert!(l.loops.is_empty());
    assert!(l.warnings[0].starts_with("while.9: nope is not printed"), "{:?}", l.warnings);
}
