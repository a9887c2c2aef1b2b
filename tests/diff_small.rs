//! `bufscope::diff` on small dumps made by hand: values of one key paired in order of their
//! position, and values found on one side only anywhere in the schedule.

mod common;
#[path = "common/diff_fixture.rs"]
mod diff_fixture;

use bufscope::analysis::{analyze, Analysis};
use bufscope::diff::MatchRule;
use bufscope::model::Module;
use diff_fixture::d;

/// A small dump: two values of one op_name and shape, `(name, id, size, start)` each, live
/// to the end of a schedule of `max` steps.
fn synthetic(values: [(&str, u32, u64, u32); 2], max: u32) -> (Module, Analysis) {
    let values = values
        .map(|(name, id, size, start)| (name, id, size, "f32[4]{0}", (start, max), "jit(f)/layer"));
    small_dump(&values, max)
}

/// Several values with one key are paired in order of relative start, not of id or name:
/// `early` (step 0 of 10) with `first` (0 of 40), `late` (5 of 10) with `second` (30 of 40),
/// though the ids run the other way. `first` has the same shape but 16 bytes more (padding):
/// grown, by the first rule.
#[test]
fn values_with_one_key_pair_in_order_of_position() {
    let b = synthetic([("late", 1, 16, 5), ("early", 2, 16, 0)], 10);
    let n = synthetic([("first", 1, 32, 0), ("second", 2, 16, 30)], 40);
    let diff = d(&b, &n);
    let c = &diff.spaces[0].changes;
    let pair = |x: &bufscope::diff::ValueChange| {
        let side = |i: &Option<bufscope::diff::ValueInfo>| i.as_ref().unwrap().name.clone();
        (side(&x.base), side(&x.new), x.rule)
    };
    assert_eq!(
        c.grown.iter().map(pair).collect::<Vec<_>>(),
        [(
            "early".to_string(),
            "first".to_string(),
            Some(MatchRule::OpNameShape)
        )]
    );
    assert_eq!(c.grown[0].delta_bytes, 16);
    assert_eq!(
        c.unchanged.iter().map(pair).collect::<Vec<_>>(),
        [(
            "late".to_string(),
            "second".to_string(),
            Some(MatchRule::OpNameShape)
        )]
    );
    assert!(c.new.is_empty() && c.gone.is_empty() && c.shrunk.is_empty());
    assert_eq!(diff.spaces[0].peaks.delta_bytes, 16);
}

/// A small dump of `(name, id, size, shape, live steps, op_name)` values in one allocation,
/// over a schedule of `max` steps.
fn small_dump(values: &[(&str, u32, u64, &str, (u32, u32), &str)], max: u32) -> (Module, Analysis) {
    let total: u64 = values.iter().map(|v| v.2).sum();
    let mut t = format!("BufferAssignment:\nallocation 0: size {total}, maybe-live-out:\n");
    let mut offset = 0;
    for (name, id, size, shape, _, _) in values {
        t += &format!(" value: <{id} {name} @0> (size={size},offset={offset}): {shape}\n");
        offset += size;
    }
    t += &format!("\nTotal bytes used: {total} ({total}B)\n\nUsed values:\n");
    for (name, id, _, shape, _, op) in values {
        let instr = name.split('{').next().unwrap_or(name);
        t += &format!("<{id} {name} @0>\n positions:\n  {instr}\n uses:\n from instruction: %{instr} = {shape} fusion(), metadata={{op_name=\"{op}\"}}\n");
    }
    t += &format!("\n\nHloLiveRange (max {max}):\n  InstructionSequence:\n");
    for step in 0..max {
        t += &format!("    {step}:op.{step}\n");
    }
    t += "  BufferLiveRange:\n";
    for (name, _, _, _, (start, end), _) in values {
        let name = if name.contains('{') {
            name.to_string()
        } else {
            format!("{name}{{}}")
        };
        t += &format!("    {name}:{start}-{end}\n");
    }
    // XLA's peak list: the first step with the most bytes live, its values.
    let live = |step: u32| {
        values
            .iter()
            .filter(move |v| v.4 .0 <= step && step <= v.4 .1)
    };
    let bytes = |step: u32| live(step).map(|v| v.2).sum::<u64>();
    let peak = (0..max).rev().max_by_key(|&s| bytes(s)).unwrap_or(0);
    t += &format!("  Live ranges at {peak} (peak):\n");
    let mut cumulative = 0;
    for (name, _, size, _, _, _) in live(peak) {
        let name = if name.contains('{') {
            name.to_string()
        } else {
            format!("{name}{{}}")
        };
        cumulative += size;
        t += &format!("    {name}: {size} bytes (cumulative: {cumulative} bytes)\n");
    }
    let mut l = bufscope::load_files([("s.buffer-assignment.txt", t.as_bytes())]);
    let m = l.modules.remove(0);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let a = analyze(&m);
    (m, a)
}

/// A cuBLAS workspace (`s8[32]`, output 1 of a custom call) live at step 2 only, far from
/// the peak (steps 6 to 10: `a` and `c`, 80 bytes): the peak tables do not see it, the
/// values found on one side only do, as custom-call scratch; reversed, it is the base's.
#[test]
fn values_on_one_side_only_are_found_anywhere() {
    let a = ("a", 1, 16, "f32[4]{0}", (0, 10), "jit(f)/layer");
    let c = ("c", 2, 64, "f32[16]{0}", (6, 10), "jit(f)/other");
    let ws = (
        "custom-call.3{1}",
        3,
        32,
        "s8[32]{0}",
        (2, 2),
        "jit(f)/dot_general",
    );
    let base = small_dump(&[a, c], 11);
    let new = small_dump(&[a, c, ws], 11);
    let diff = d(&base, &new);
    let s = &diff.spaces[0];
    assert_eq!((s.peaks.base_peak_bytes, s.peaks.new_peak_bytes), (80, 80));
    let ch = &s.changes;
    assert!(ch.new.is_empty() && ch.gone.is_empty(), "{ch:?}");
    let o = &s.one_side;
    assert!(o.base_only.is_empty());
    let names: Vec<(&str, u64, &str)> = (o.new_only.iter())
        .map(|v| (v.name.as_str(), v.bytes, v.kind))
        .collect();
    assert_eq!(names, [("custom-call.3{1}", 32, "custom-call scratch")]);
    assert_eq!((o.base_only_bytes, o.new_only_bytes), (0, 32));
    let back = d(&new, &base);
    assert_eq!(back.spaces[0].one_side.base_only, o.new_only);
    // A program against itself has nothing on one side only.
    let same = d(&new, &new);
    assert!(
        same.spaces[0].one_side.new_only.is_empty() && same.spaces[0].one_side.base_only.is_empty()
    );
}
