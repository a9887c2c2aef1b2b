//! The split layout and the files beside a dump (docs/format.md), each as a small dump
//! written by hand from it: the three files of 2026-04-03 →, the memory-usage report in both
//! forms, live ranges with no allocated value, the old peak list and the stdout wrapper
//! around split files. Every test checks the model's fields, not only that reading
//! survives. The older single-file eras and the warnings are tests/synthetic_eras.rs.

mod common;
#[path = "common/synthetic.rs"]
mod synthetic;

use synthetic::*;

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
