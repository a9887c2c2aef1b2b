//! Format eras and rules of the grammar (docs/format.md) that the real dumps do not show,
//! each as a small dump written by hand from it. Every test checks the
//! model's fields, not only that reading survives. The split layout, the memory-usage
//! report and the files beside a dump are tests/synthetic_files.rs.

mod common;
#[path = "common/synthetic.rs"]
mod synthetic;

use bufscope::model::{Module, Warning};
use synthetic::*;

#[test]
fn base_reads_clean() {
    let m = one(&[("m.buffer-assignment.txt", BASE)]);
    no_warnings(&m);
    check_base_model(&m);
    let peak = m.schedule.as_ref().unwrap().peak.as_ref().unwrap();
    assert_eq!(peak.time, 2);
    assert_eq!(peak.entries.len(), 3);
    assert!(peak
        .entries
        .iter()
        .all(|e| e.bytes == 64 && e.index.is_empty()));
}

#[test]
fn old_pointer_header() {
    // Before 2022-09-07: `allocation %d: %p, size %d`.
    let text = BASE
        .replace(
            "allocation 0: size 64,",
            "allocation 0: 0x55d1c2a0, size 64,",
        )
        .replace(
            "allocation 1: size 64,",
            "allocation 1: 0x55d1c2e0, size 64,",
        )
        .replace(
            "allocation 2: size 128,",
            "allocation 2: 0x7f00deadbeef, size 128,",
        );
    let m = one(&[("m.buffer-assignment.txt", &text)]);
    no_warnings(&m);
    check_base_model(&m);
    assert_eq!(
        m.allocations.iter().map(|a| a.size).collect::<Vec<_>>(),
        [64, 64, 128]
    );
    assert_eq!(m.allocations[1].parameter.map(|p| p.number), Some(0));
    assert!(m.allocations[2].flags.preallocated_temp);
}

#[test]
fn from_instruction_without_space() {
    // 2021-09 .. 2024-01: ` from instruction:%add = ...`.
    let text = BASE.replace(" from instruction: %", " from instruction:%");
    let m = one(&[("m.buffer-assignment.txt", &text)]);
    no_warnings(&m);
    check_base_model(&m);
    assert_eq!(m.str(m.instruction(value(&m, 1)).opcode), "parameter");
}

#[test]
fn glued_from_lines_2024() {
    // 2024-01-16 .. 2024-11-01: no `\n` after the instruction text, so the next `<id ...>`
    // is glued to it, and one blank line less before HloLiveRange.
    let text = BASE
        .replace("parameter(0)\n<2 mul.2 @0>", "parameter(0)<2 mul.2 @0>")
        .replace(
            "multiply(%p.0, %p.0)\n<3 add.1 @0>",
            "multiply(%p.0, %p.0)<3 add.1 @0>",
        )
        .replace(
            "add(%mul.2, %mul.2)\n\n\nHloLiveRange",
            "add(%mul.2, %mul.2)\n\nHloLiveRange",
        );
    assert!(text.contains("parameter(0)<2 mul.2 @0>\n positions:"));
    let m = one(&[("m.buffer-assignment.txt", &text)]);
    no_warnings(&m);
    check_base_model(&m);
    // Every value got its own instruction text and uses.
    assert_eq!(m.str(m.instruction(value(&m, 1)).opcode), "parameter");
    assert_eq!(m.str(m.instruction(value(&m, 2)).opcode), "multiply");
    assert_eq!(m.str(m.instruction(value(&m, 3)).opcode), "add");
    assert_eq!(m.positions_and_uses(value(&m, 3)).unwrap().0, ["add.1"]);
}

#[test]
fn glued_from_line_with_tuple_phi_value() {
    // The glued token can carry an index, `(phi)` and a colour.
    let text = "\
BufferAssignment:
allocation 0: size 16, preallocated-temp:
 value: <4 w.1{} (phi) @0> (size=16,offset=0): (f32[2]{0}, s32[])
 value: <5 w.1{1} (phi) @0> (size=4,offset=8): s32[]

Total bytes used: 16 (16B)

Used values:
<4 w.1{} (phi) @0>
 positions:
  w.1 {}
 uses:
 from instruction: %w.1 = (f32[2]{0}, s32[]) while(%t), condition=%c, body=%b<5 w.1{1} (phi) @0>
 positions:
  w.1 {1}
 uses:
  gte.3, operand 0 {1}
 from instruction: %w.1 = (f32[2]{0}, s32[]) while(%t), condition=%c, body=%b

HloLiveRange (max 2):
  InstructionSequence:
    0:w.1
    1:gte.3
  BufferLiveRange:
    w.1{}:0-2
    w.1{1}:0-1
  Live ranges at 0 (peak):
    w.1: 16 bytes
    w.1: 16 bytes
";
    let m = one(&[("m.buffer-assignment.txt", text)]);
    no_warnings(&m);
    let (v4, v5) = (value(&m, 4), value(&m, 5));
    assert!(v4.phi && v5.phi);
    assert_eq!((m.str(v4.index), m.str(v5.index)), ("{}", "{1}"));
    assert_eq!(v4.live.map(|r| (r.start, r.end)), Some((0, 2)));
    assert_eq!(v5.live.map(|r| (r.start, r.end)), Some((0, 1)));
    assert_eq!(v4.logical_size, Some(16), "tuple of 2: 8 bytes per element");
    assert_eq!(v5.logical_size, Some(4));
    assert_eq!(
        m.positions_and_uses(v5).unwrap().1,
        ["gte.3, operand 0 {1}"]
    );
    assert_eq!(m.str(m.instruction(v4).opcode), "while");
    // Old peak form: name only, duplicates kept.
    let peak = m.schedule.as_ref().unwrap().peak.as_ref().unwrap();
    assert_eq!(peak.entries.len(), 2);
    for e in &peak.entries {
        assert_eq!(m.str(m.instructions[e.instruction as usize].name), "w.1");
        assert_eq!(e.bytes, 16);
        assert!(e.index.is_empty());
    }
}

#[test]
fn uses_are_not_initialized_yet() {
    // From 2024-01-14.
    let text = BASE.replace(
        " uses:\n  mul.2, operand 0\n",
        " uses are not initialized yet.\n",
    );
    let m = one(&[("m.buffer-assignment.txt", &text)]);
    no_warnings(&m);
    check_base_model(&m);
    let p = value(&m, 1);
    let (pos, uses) = m.positions_and_uses(p).unwrap();
    assert_eq!(pos, ["p.0"]);
    assert!(uses.is_empty());
    assert_eq!(m.str(m.instruction(p).opcode), "parameter");
}

#[test]
fn uses_none() {
    // From 2026-06-02: `  (none)` for no uses (and it is not a position or a use).
    let text = BASE.replace(
        " uses:\n from instruction: %add.1",
        " uses:\n  (none)\n from instruction: %add.1",
    );
    let m = one(&[("m.buffer-assignment.txt", &text)]);
    no_warnings(&m);
    check_base_model(&m);
    let (pos, uses) = m.positions_and_uses(value(&m, 3)).unwrap();
    assert_eq!(pos, ["add.1"]);
    assert!(uses.is_empty(), "{uses:?}");
}

#[test]
fn reused_by_buffers_of_a_different_color() {
    // From 2026-06-17: the two-space `  value:` lines repeat values listed above.
    let text = "\
BufferAssignment:
allocation 0: size 256, color 1, preallocated-temp:
 value: <1 a.1 @1> (size=128,offset=0): f32[32]{0:S(1)}
 value: <2 b.2 @0> (size=64,offset=128): f32[16]{0}
 reused by buffers of a different color:
  value: <2 b.2 @0> (color=0)
allocation 1: size 64, preallocated-temp:
 value: <3 c.3 @0> (size=64,offset=0): f32[16]{0}
";
    let values = values_file(
        320,
        &[
            (1, "a.1 @1", "%a.1 = f32[32]{0:S(1)} exponential(%x)"),
            (2, "b.2 @0", "%b.2 = f32[16]{0} negate(%y)"),
            (3, "c.3 @0", "%c.3 = f32[16]{0} negate(%b.2)"),
        ],
    );
    let m = one(&[
        ("m.buffer-assignment.txt", text),
        ("m.buffer-assignment-values.txt", &values),
        ("m.live-range.txt", NO_LIVE_RANGE),
    ]);
    no_warnings(&m);
    assert_eq!(m.values.len(), 3, "the repeated value is not a new one");
    assert_eq!(m.allocations.len(), 2);
    assert_eq!(m.allocations[0].color, 1);
    assert_eq!(m.allocations[0].values.len(), 2);
    assert_eq!(m.allocations[1].values.len(), 1);
    let b = value(&m, 2);
    assert_eq!((b.allocation, b.offset, b.color), (0, 128, Some(0)));
    assert_eq!(m.value_color(b), 0);
    assert_eq!(name_of(&m, 3), "c.3");
    // The analysis puts b.2 in colour 0 space, on allocation 0 of colour 1.
    let an = bufscope::analysis::analyze(&m);
    let space0 = an.space(0).unwrap();
    assert_eq!(space0.value_count, 2);
    assert_eq!(space0.allocated_bytes, 64);
    assert!(space0.base(0).is_some());
}

#[test]
fn page_in_header() {
    // From 2026-08-10: `, page N` after colour.
    let text = BASE
        .replace(
            "allocation 2: size 128, preallocated-temp:",
            "allocation 2: size 128, color 3, page 7, preallocated-temp:",
        )
        .replace("<2 mul.2 @0>", "<2 mul.2 @3>")
        .replace(
            "(size=64,offset=64): f32[16]{0}",
            "(size=64,offset=64): f32[16]{0:S(3)}",
        );
    let m = one(&[("m.buffer-assignment.txt", &text)]);
    no_warnings(&m);
    check_base_model(&m);
    let a = &m.allocations[2];
    assert_eq!((a.color, a.page), (3, Some(7)));
    assert!(a.flags.preallocated_temp);
    assert_eq!(m.allocations[0].page, None);
    assert_eq!(value(&m, 2).color, Some(3));
}

#[test]
fn peak_could_not_be_determined() {
    // From 2026-08-05: the peak list is replaced by one line.
    let text = BASE.replace(
        "  Live ranges at 2 (peak):\n    p.0: 64 bytes\n    mul.2: 64 bytes\n    add.1: 64 bytes\n",
        "  Peak memory could not be determined due to unbounded dynamic shape.\n",
    );
    let m = one(&[("m.buffer-assignment.txt", &text)]);
    no_warnings(&m);
    check_base_model(&m);
    let s = m.schedule.as_ref().unwrap();
    assert!(s.peak_undetermined);
    assert!(s.peak.is_none());
}

/// The `-buffer-assignment-values.txt` of the split layout for values `(id, token, text)`:
/// each with its own position, no uses, and `from instruction: text`.
fn values_file(total: u64, values: &[(u32, &str, &str)]) -> String {
    let mut out = format!("\nTotal bytes used: {total} ({total}B)\n\nUsed values:\n");
    for (id, token, text) in values {
        let name = token.split(['{', ' ']).next().unwrap();
        out.push_str(&format!(
            "<{id} {token}>\n positions:\n  {name}\n uses:\n  (none)\n from instruction: {text}\n"
        ));
    }
    out
}

const NO_LIVE_RANGE: &str = "HloLiveRange not available (finalized or constructed from proto)";

fn warning_at(m: &Module, line: u64) -> Option<&Warning> {
    m.warnings.iter().find(|w| w.line == line)
}

#[test]
fn value_outside_its_allocation_is_warned() {
    let text = BASE.replace(
        " value: <2 mul.2 @0> (size=64,offset=64)",
        " value: <2 mul.2 @0> (size=64,offset=100)",
    );
    let l = load(&[("m.buffer-assignment.txt", &text)]);
    let m = &l.modules[0];
    common::check_sane(m, "outside");
    assert!(
        warning_at(m, 7).is_some(),
        "line 7 holds the value: {:?}",
        m.warnings
    );
}

#[test]
fn total_disagreeing_with_allocations_is_warned() {
    let text = BASE.replace(
        "Total bytes used: 256 (256B)",
        "Total bytes used: 300 (300B)",
    );
    let m = one(&[("m.buffer-assignment.txt", &text)]);
    assert!(!m.warnings.is_empty());
}

#[test]
fn max_disagreeing_with_the_sequence_is_warned() {
    let text = BASE.replace("HloLiveRange (max 3):", "HloLiveRange (max 4):");
    let m = one(&[("m.buffer-assignment.txt", &text)]);
    assert!(!m.warnings.is_empty());
}

#[test]
fn dynamic_shapes_and_odd_layouts() {
    // Bounded and unbounded dynamic dimensions, tiles, element sizes.
    let text = "\
BufferAssignment:
allocation 0: size 40, preallocated-temp:
 value: <1 d.1 @0> (size=40,offset=0): f32[<=8]{0}
allocation 1: size 64, preallocated-temp:
 value: <2 u.2 @0> (size=64,offset=0): f32[?,4]{1,0}
allocation 2: size 4096, preallocated-temp:
 value: <3 t.3 @0> (size=4096,offset=0): bf16[8,128]{1,0:T(8,128)(2,1)}
allocation 3: size 4, preallocated-temp:
 value: <4 e.4 @0> (size=4,offset=0): s4[8]{0:E(4)}
";
    let values = values_file(
        4204,
        &[
            (1, "d.1 @0", "%d.1 = f32[<=8]{0} parameter(0)"),
            (2, "u.2 @0", "%u.2 = f32[?,4]{1,0} parameter(1)"),
            (
                3,
                "t.3 @0",
                "%t.3 = bf16[8,128]{1,0:T(8,128)(2,1)} parameter(2)",
            ),
            (4, "e.4 @0", "%e.4 = s4[8]{0:E(4)} parameter(3)"),
        ],
    );
    let m = one(&[
        ("m.buffer-assignment.txt", text),
        ("m.buffer-assignment-values.txt", &values),
        ("m.live-range.txt", NO_LIVE_RANGE),
    ]);
    no_warnings(&m);
    assert_eq!(
        value(&m, 1).logical_size,
        Some(32),
        "bounded: the bound counts"
    );
    assert_eq!(value(&m, 2).logical_size, None, "unbounded: unknown");
    assert_eq!(value(&m, 3).logical_size, Some(2048), "tiling ignored");
    assert_eq!(
        value(&m, 4).logical_size,
        Some(4),
        "E(4): 4 bits per element"
    );
}
