//! Format eras and rules of the grammar (docs/format.md) that the real dumps do not show,
//! each as a small dump written by hand from it. Every test checks the
//! model's fields, not only that reading survives.

mod common;

use bufscope::model::{Module, Warning};
use bufscope::{load_files, Load};

fn load(files: &[(&str, &str)]) -> Load {
    load_files(files.iter().map(|(n, t)| (*n, t.as_bytes())))
}

fn one(files: &[(&str, &str)]) -> Module {
    let l = load(files);
    assert!(l.errors.is_empty(), "errors: {:?}", l.errors);
    assert_eq!(
        l.modules.len(),
        1,
        "modules: {:?}",
        l.modules.iter().map(|m| &m.name).collect::<Vec<_>>()
    );
    let m = l.modules.into_iter().next().unwrap();
    common::check_sane_and_analyze(&m, "synthetic");
    m
}

fn no_warnings(m: &Module) {
    assert!(m.warnings.is_empty(), "warnings: {:#?}", m.warnings);
}

fn value<'a>(m: &'a Module, id: u32) -> &'a bufscope::model::Value {
    m.values
        .iter()
        .find(|v| v.id == id)
        .unwrap_or_else(|| panic!("no value {id}"))
}

fn name_of(m: &Module, id: u32) -> String {
    m.value_name(value(m, id))
}

/// A complete small dump of the 2024-11 .. 2025-04 era (single file, `from instruction: `
/// with a space and a newline, peak list `name: N bytes`), to vary from.
const BASE: &str = "\
BufferAssignment:
allocation 0: size 64, output shape is |f32[16]|, maybe-live-out:
 value: <3 add.1 @0> (size=64,offset=0): f32[16]{0}
allocation 1: size 64, parameter 0, shape |f32[16]| at ShapeIndex {}:
 value: <1 p.0 @0> (size=64,offset=0): f32[16]{0}
allocation 2: size 128, preallocated-temp:
 value: <2 mul.2 @0> (size=64,offset=64): f32[16]{0}

Total bytes used: 256 (256B)

Used values:
<1 p.0 @0>
 positions:
  p.0
 uses:
  mul.2, operand 0
 from instruction: %p.0 = f32[16]{0} parameter(0)
<2 mul.2 @0>
 positions:
  mul.2
 uses:
  add.1, operand 0
 from instruction: %mul.2 = f32[16]{0} multiply(%p.0, %p.0)
<3 add.1 @0>
 positions:
  add.1
 uses:
 from instruction: %add.1 = f32[16]{0} add(%mul.2, %mul.2)


HloLiveRange (max 3):
  InstructionSequence:
    0:p.0
    1:mul.2
    2:add.1
  BufferLiveRange:
    p.0{}:0-3
    mul.2{}:1-2
    add.1{}:2-3
  Live ranges at 2 (peak):
    p.0: 64 bytes
    mul.2: 64 bytes
    add.1: 64 bytes
";

fn check_base_model(m: &Module) {
    assert_eq!(m.allocations.len(), 3);
    assert_eq!(m.values.len(), 3);
    assert_eq!(m.total_bytes(), 256);
    assert_eq!(m.total_bytes_line, Some(256));
    let mul = value(m, 2);
    assert_eq!((mul.allocation, mul.offset, mul.size), (2, 64, 64));
    assert_eq!(mul.live.map(|r| (r.start, r.end)), Some((1, 2)));
    assert_eq!(m.str(m.instruction(mul).opcode), "multiply");
    let (pos, uses) = m.positions_and_uses(mul).unwrap();
    assert_eq!(pos, ["mul.2"]);
    assert_eq!(uses, ["add.1, operand 0"]);
    let s = m.schedule.as_ref().unwrap();
    assert_eq!(s.max, 3);
    assert_eq!(s.sequence.len(), 3);
}

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

/// The split layout (2026-04-03 →): three files.
const SPLIT_BA: &str = "\
BufferAssignment:
allocation 0: size 64, output shape is |f32[16]|, maybe-live-out:
 value: <3 add.1 @0> (size=64,offset=0): f32[16]{0}
allocation 1: size 64, parameter 0, shape |f32[16]| at ShapeIndex {}:
 value: <1 p.0 @0> (size=64,offset=0): f32[16]{0}
";
const SPLIT_VALUES: &str = "
Total bytes used: 128 (128B)

Used values:
<1 p.0 @0>
 positions:
  p.0
 uses:
  add.1, operand 0
 from instruction: %p.0 = f32[16]{0} parameter(0)
<3 add.1 @0>
 positions:
  add.1
 uses:
  (none)
 from instruction: %add.1 = f32[16]{0} add(%p.0, %p.0)
";

#[test]
fn live_range_not_available_without_final_newline() {
    let m = one(&[
        ("mod.buffer-assignment.txt", SPLIT_BA),
        ("mod.buffer-assignment-values.txt", SPLIT_VALUES),
        (
            "mod.live-range.txt",
            "HloLiveRange not available (finalized or constructed from proto)",
        ),
    ]);
    no_warnings(&m);
    assert_eq!(m.name, "mod");
    assert_eq!(m.values.len(), 2);
    assert_eq!(m.total_bytes_line, Some(128));
    assert!(m.values.iter().all(|v| v.live.is_none()));
    assert!(m
        .schedule
        .as_ref()
        .is_none_or(|s| s.sequence.is_empty() && s.peak.is_none()));
    assert_eq!(m.str(m.instruction(value(&m, 3)).opcode), "add");
    let (_, uses) = m.positions_and_uses(value(&m, 3)).unwrap();
    assert!(uses.is_empty());
}

#[test]
fn split_with_live_range_and_report_format_b() {
    let live = "\
HloLiveRange (max 2):
  InstructionSequence:
    0:p.0
    1:add.1
  BufferLiveRange:
    p.0{}:0-2
    add.1{}:1-2
  Live ranges at 1 (peak):
    add.1{}: 64 bytes (cumulative: 64 bytes)
    p.0{}: 64 bytes (cumulative: 128 bytes)
  Stack trace breakdown for peak usage: 128 bytes
    main (100.0%, total: 128 bytes, current: 0 bytes, remaining: 128 bytes)
      ├── add (50.0%, total: 64 bytes, current: 64 bytes, remaining: 64 bytes)
      └── p (50.0%, total: 64 bytes, current: 64 bytes, remaining: 0 bytes)
";
    let report = "\
Memory Space: default (color=0)
Total bytes: 128 (128B)
  cumulative_size;       size;       offset; used_by_n_values; shapes_list
  ------------------------------------------------------------
       64B( 50%);        64B;            0;                1; f32[16]

  cumulative_size;       size;       offset; used_by_n_values; shapes_list
  ------------------------------------------------------------
       64B(100%);        64B;            0;                1; f32[16]


";
    let m = one(&[
        ("mod.live-range.txt", live),
        ("mod.memory-usage-report.txt", report),
        ("mod.buffer-assignment-values.txt", SPLIT_VALUES),
        ("mod.buffer-assignment.txt", SPLIT_BA),
    ]);
    no_warnings(&m);
    assert_eq!(m.files.len(), 4);
    assert_eq!(value(&m, 1).live.map(|r| (r.start, r.end)), Some((0, 2)));
    assert_eq!(value(&m, 3).live.map(|r| (r.start, r.end)), Some((1, 2)));
    let peak = m.schedule.as_ref().unwrap().peak.as_ref().unwrap();
    assert_eq!(peak.time, 1);
    assert_eq!(
        peak.entries
            .iter()
            .map(|e| m.str(e.index))
            .collect::<Vec<_>>(),
        ["{}", "{}"]
    );
    assert_eq!(m.stack_trace_total, Some(128));
    assert_eq!(m.stack_trace.len(), 3);
    assert_eq!(
        m.stack_trace.iter().map(|n| n.depth).collect::<Vec<_>>(),
        [0, 1, 1]
    );
    assert_eq!(m.str(m.stack_trace[2].name), "p");
    assert_eq!(
        (
            m.stack_trace[1].total,
            m.stack_trace[1].current,
            m.stack_trace[1].remaining
        ),
        (64, 64, 64)
    );
    let r = m.memory_report.as_ref().unwrap();
    assert_eq!(r.total_bytes, None);
    assert_eq!(r.spaces.len(), 1);
    assert_eq!(
        (
            m.str(r.spaces[0].name),
            r.spaces[0].color,
            r.spaces[0].total_bytes
        ),
        ("default", 0, 128)
    );
}

#[test]
fn report_format_b_several_spaces() {
    let ba = "\
BufferAssignment:
allocation 0: size 512, preallocated-temp:
 value: <1 a @0> (size=512,offset=0): f32[128]{0}
allocation 1: size 1024, color 1, preallocated-temp:
 value: <2 b @1> (size=1024,offset=0): f32[256]{0:S(1)}
allocation 2: size 4, color 6, preallocated-temp:
 value: <3 c @6> (size=4,offset=0): s32[]{:S(6)}
";
    let values = "\nTotal bytes used: 1540 (1.5KiB)\n\nUsed values:\n";
    let report = "\
Memory Space: default (color=0)
Total bytes: 512 (512B)

Memory Space: vmem (color=1)
Total bytes: 1024 (1.0KiB)

Memory Space: color_6 (color=6)
Total bytes: 4 (4B)

";
    let m = one(&[
        ("x.buffer-assignment.txt", ba),
        ("x.buffer-assignment-values.txt", values),
        ("x.memory-usage-report.txt", report),
    ]);
    let r = m.memory_report.as_ref().unwrap();
    let spaces: Vec<(&str, u32, u64)> = r
        .spaces
        .iter()
        .map(|s| (m.str(s.name), s.color, s.total_bytes))
        .collect();
    assert_eq!(
        spaces,
        [("default", 0, 512), ("vmem", 1, 1024), ("color_6", 6, 4)]
    );
    assert_eq!(m.total_bytes(), 1540);
}

#[test]
fn report_format_a() {
    let report = "\
Total bytes used: 256 (256B)

Allocations sorted by size:

cumulative_size; total_size - cumulative_size; allocation
------------------------------------------------------------------------------
     128B( 50%);       128B; allocation 2: size 128B, preallocated-temp:
     192B( 75%);        64B; allocation 0: size 64B, output shape is |f32[16]|, maybe-live-out:
     256B(100%);         0B; allocation 1: size 64B, parameter 0, shape |f32[16]| at ShapeIndex {}:


Allocations sorted by size with their values:
allocation 2: size 128B, preallocated-temp:
	cumulative_size;       size;       offset; used_by_n_values; shapes_list
	------------------------------------------------------------
	      64B( 50%);        64B;           64;                1; f32[16]
	The rest 0 values are less than 5% of the total size and not shown.

allocation 0: size 64B, output shape is |f32[16]|, maybe-live-out:
allocation 1: size 64B, parameter 0, shape |f32[16]| at ShapeIndex {}:
";
    let m = one(&[
        ("m.buffer-assignment.txt", BASE),
        ("m.memory-usage-report.txt", report),
    ]);
    no_warnings(&m);
    check_base_model(&m);
    // The report's `allocation N:` lines are not allocations.
    assert_eq!(m.allocations.len(), 3);
    let r = m.memory_report.as_ref().unwrap();
    assert_eq!(r.total_bytes, Some(256));
    assert!(r.spaces.is_empty());
}

#[test]
fn report_total_disagreeing_is_warned() {
    let report = "Total bytes used: 999 (999B)\n\nAllocations sorted by size:\n\n";
    let m = one(&[
        ("m.buffer-assignment.txt", BASE),
        ("m.memory-usage-report.txt", report),
    ]);
    assert!(
        !m.warnings.is_empty(),
        "a report total of 999 for 256 allocated bytes must be warned"
    );
}

#[test]
fn old_peak_list_with_duplicate_names() {
    // 2021-04-07 .. 2025-04-14: `name: N bytes`, whole instruction shape, value-id order.
    let text = "\
BufferAssignment:
allocation 0: size 24, output shape is |(f32[2], f32[2])|, maybe-live-out:
 value: <1 t.1{} @0> (size=16,offset=0): (f32[2]{0}, f32[2]{0})
allocation 1: size 8, maybe-live-out:
 value: <2 t.1{0} @0> (size=8,offset=0): f32[2]{0}
allocation 2: size 8, maybe-live-out:
 value: <3 t.1{1} @0> (size=8,offset=0): f32[2]{0}

Total bytes used: 40 (40B)

Used values:
<1 t.1{} @0>
 positions:
  t.1 {}
 uses:
 from instruction: %t.1 = (f32[2]{0}, f32[2]{0}) tuple(%a, %b)
<2 t.1{0} @0>
 positions:
  t.1 {0}
 uses:
 from instruction: %t.1 = (f32[2]{0}, f32[2]{0}) tuple(%a, %b)
<3 t.1{1} @0>
 positions:
  t.1 {1}
 uses:
 from instruction: %t.1 = (f32[2]{0}, f32[2]{0}) tuple(%a, %b)


HloLiveRange (max 1):
  InstructionSequence:
    0:t.1
  BufferLiveRange:
    t.1{}:0-1
    t.1{0}:0-1
    t.1{1}:0-1
  Live ranges at 0 (peak):
    t.1: 16 bytes
    t.1: 16 bytes
    t.1: 16 bytes
";
    let m = one(&[("m.buffer-assignment.txt", text)]);
    no_warnings(&m);
    assert_eq!(m.total_bytes(), 40);
    assert_eq!(m.values.len(), 3);
    assert_eq!(value(&m, 1).logical_size, Some(16));
    assert_eq!(value(&m, 2).logical_size, Some(8));
    let peak = m.schedule.as_ref().unwrap().peak.as_ref().unwrap();
    assert_eq!(peak.time, 0);
    assert_eq!(peak.entries.len(), 3, "duplicates kept");
    assert!(peak
        .entries
        .iter()
        .all(|e| e.bytes == 16 && e.index.is_empty()));
    assert_eq!(bufscope::analysis::live_at(&m, 0).len(), 3);
}

#[test]
fn orphan_live_range_and_thread_local_value() {
    // A BufferLiveRange entry with no allocation (docs/format.md, Live ranges) and a thread-local value with
    // no range.
    let text = BASE
        .replace(
            "\nTotal bytes used: 256 (256B)",
            "allocation 3: size 4, thread-local:\n value: <9 add.9 @0> (size=4,offset=0): f32[]\n\nTotal bytes used: 260 (260B)",
        )
        .replace(
            " from instruction: %add.1 = f32[16]{0} add(%mul.2, %mul.2)\n",
            " from instruction: %add.1 = f32[16]{0} add(%mul.2, %mul.2)\n<9 add.9 @0>\n positions:\n  add.9\n uses:\n from instruction: %add.9 = f32[] add(%x, %y)\n",
        )
        .replace("    add.1{}:2-3\n", "    add.1{}:2-3\n    constant.5{}:0-3\n")
        .replace("    add.1: 64 bytes\n", "    add.1: 64 bytes\n    constant.5: 64 bytes\n");
    assert!(
        text.contains("constant.5{}:0-3")
            && text.contains("<9 add.9 @0>\n positions:")
            && text.contains("allocation 3:")
    );
    let m = one(&[("m.buffer-assignment.txt", &text)]);
    no_warnings(&m);
    assert_eq!(m.values.len(), 4);
    assert_eq!(m.total_bytes(), 260);
    let tl = value(&m, 9);
    assert!(tl.live.is_none());
    assert!(m.allocation_of(tl).flags.thread_local);
    let s = m.schedule.as_ref().unwrap();
    assert_eq!(s.orphan_ranges.len(), 1);
    let o = s.orphan_ranges[0];
    assert_eq!(
        m.str(m.instructions[o.instruction as usize].name),
        "constant.5"
    );
    assert_eq!((o.live.start, o.live.end), (0, 3));
}

#[test]
fn stdout_wrapper_with_the_split_files() {
    let mut text = String::new();
    for (name, body) in [
        ("mod.buffer-assignment.txt", SPLIT_BA),
        ("mod.buffer-assignment-values.txt", SPLIT_VALUES),
    ] {
        text.push_str(&format!(
            "*** Begin {name} ***\n{body}\n*** End {name} ***\n"
        ));
    }
    let m = one(&[("log.txt", &text)]);
    no_warnings(&m);
    assert_eq!(m.name, "mod");
    assert_eq!(m.values.len(), 2);
    assert_eq!(m.total_bytes_line, Some(128));
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
