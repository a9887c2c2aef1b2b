//! `check_module`: every figure of one real dump's model compared with what the independent
//! scanner (tests/common) reads from the same text, one function per fact. Used by
//! tests/real_dumps.rs, and `load_one` by tests/robustness*.rs (declared there by path, so
//! the other test binaries do not build it; each uses part of it).
#![allow(dead_code)]

use crate::common::*;
use crate::scan::*;
use bufscope::analysis::{self, Analysis};
use bufscope::model::{Module, Schedule};
use std::fmt::Debug;

/// Compares two lists as multisets, showing the first differences rather than everything.
pub fn assert_same_sorted<T: Ord + Debug + Clone>(label: &str, what: &str, got: &[T], want: &[T]) {
    let (mut g, mut w) = (got.to_vec(), want.to_vec());
    g.sort();
    w.sort();
    if g == w {
        return;
    }
    let only_got: Vec<&T> = g.iter().filter(|x| !w.contains(x)).take(5).collect();
    let only_want: Vec<&T> = w.iter().filter(|x| !g.contains(x)).take(5).collect();
    panic!(
        "{label}: {what} differ: parser has {} and the text has {}\n  only in the parser (first 5): {only_got:#?}\n  only in the text (first 5): {only_want:#?}",
        g.len(),
        w.len()
    );
}

pub fn load_one(m: &ModuleFiles) -> Module {
    let load = bufscope::load_files(m.inputs());
    assert!(
        load.errors.is_empty(),
        "{}: load errors: {:?}",
        m.label,
        load.errors
    );
    assert_eq!(
        load.modules.len(),
        1,
        "{}: expected exactly one module from {:?}, got {:?}",
        m.label,
        m.files.iter().map(|f| &f.0).collect::<Vec<_>>(),
        load.modules.iter().map(|m| &m.name).collect::<Vec<_>>()
    );
    load.modules.into_iter().next().unwrap()
}

/// Every check of the brief for one module. Returns the module and its analysis.
pub fn check_module(m: &ModuleFiles) -> (Module, Analysis) {
    let label = m.label.as_str();
    let scan = scan(m);
    let module = load_one(m);
    name_files_and_no_warnings(label, m, &module);
    let total = total_bytes(label, &scan, &module);
    allocation_headers(label, &scan, &module);
    values(label, &scan, &module);
    values_inside_their_allocations(label, &module);
    let sched = module
        .schedule
        .as_ref()
        .unwrap_or_else(|| panic!("{label}: no schedule"));
    let max = schedule_sequence(label, &scan, &module, sched);
    live_ranges(label, &scan, &module, sched);
    xla_peak(label, &scan, &module, sched);
    stack_trace(label, &scan, &module);
    memory_report(label, m, &scan, &module, total);
    let an = analysis_curves(label, &scan, &module, max);
    (module, an)
}

/// No warnings, the right name and files.
fn name_files_and_no_warnings(label: &str, m: &ModuleFiles, module: &Module) {
    assert!(
        module.warnings.is_empty(),
        "{label}: {} warnings, first ones: {:#?}",
        module.warnings.len(),
        &module.warnings[..module.warnings.len().min(10)]
    );
    assert_eq!(module.name, m.stem, "{label}: module name");
    assert_eq!(
        module.files.len(),
        m.files.len(),
        "{label}: files {:?}",
        module.files
    );
}

/// Total bytes: the sum of the allocations and the `Total bytes used` line. Returns it.
fn total_bytes(label: &str, scan: &Scan, module: &Module) -> u64 {
    let total = scan
        .total
        .unwrap_or_else(|| panic!("{label}: scanner found no Total line"));
    assert_eq!(
        module.total_bytes(),
        total,
        "{label}: sum of allocation sizes vs Total bytes used"
    );
    assert_eq!(
        module.total_bytes_line,
        Some(total),
        "{label}: total_bytes_line"
    );
    total
}

/// Allocations: count and every header field.
fn allocation_headers(label: &str, scan: &Scan, module: &Module) {
    assert_eq!(
        module.allocations.len(),
        scan.allocations.len(),
        "{label}: number of `allocation N:` headers in the buffer-assignment file"
    );
    for (a, s) in module.allocations.iter().zip(&scan.allocations) {
        let got = ScanAllocation {
            index: a.index,
            size: a.size,
            color: a.color,
            parameter: a.parameter.map(|p| p.number),
            has_output_shape: a.output_shape.is_some(),
            constant: a.flags.constant,
            thread_local: a.flags.thread_local,
            maybe_live_out: a.flags.maybe_live_out,
            preallocated_temp: a.flags.preallocated_temp,
        };
        assert_eq!(&got, s, "{label}: allocation {}", s.index);
        assert!(
            a.page.is_none(),
            "{label}: allocation {} has a page",
            a.index
        );
    }
}

/// Values: every ` value:` line (one leading space) is exactly one value.
fn values(label: &str, scan: &Scan, module: &Module) {
    let got: Vec<ScanValue> = module
        .values
        .iter()
        .map(|v| ScanValue {
            id: v.id,
            name: module.str(module.instruction(v).name).to_string(),
            index: module.str(v.index).to_string(),
            phi: v.phi,
            color: v.color,
            allocation: module.allocation_of(v).index,
            size: v.size,
            offset: v.offset,
            shape: module.str(v.shape).to_string(),
        })
        .collect();
    assert_eq!(
        got.len(),
        scan.values.len(),
        "{label}: number of ` value:` lines"
    );
    let ids = |vs: &[ScanValue]| -> Vec<(u32, String)> {
        vs.iter()
            .map(|v| (v.id, format!("{}{}", v.name, v.index)))
            .collect()
    };
    assert_same_sorted(
        label,
        "(id, name{index}) of values",
        &ids(&got),
        &ids(&scan.values),
    );
    assert_same_sorted(label, "values (all fields)", &got, &scan.values);
    for (i, v) in module.values.iter().enumerate() {
        assert_eq!(
            module.value_name(v),
            format!("{}{}", got[i].name, got[i].index)
        );
    }
}

/// Every value inside its allocation, and in its allocation's range of values.
fn values_inside_their_allocations(label: &str, module: &Module) {
    for (i, v) in module.values.iter().enumerate() {
        let a = module.allocation_of(v);
        assert!(
            v.offset + v.size <= a.size,
            "{label}: value {} at {}+{} outside allocation {} of size {}",
            module.value_name(v),
            v.offset,
            v.size,
            a.index,
            a.size
        );
        assert!(
            a.values.contains(&(i as u32)),
            "{label}: value {i} not in its allocation's range {:?}",
            a.values
        );
    }
    let covered: u32 = module
        .allocations
        .iter()
        .map(|a| a.values.end - a.values.start)
        .sum();
    assert_eq!(
        covered as usize,
        module.values.len(),
        "{label}: allocation value ranges"
    );
}

/// Schedule: `HloLiveRange` max and the `InstructionSequence`. Returns the max.
fn schedule_sequence(label: &str, scan: &Scan, module: &Module, sched: &Schedule) -> u32 {
    let max = scan.max.unwrap();
    assert_eq!(sched.max, max, "{label}: HloLiveRange (max N)");
    assert_eq!(
        scan.sequence.len(),
        max as usize,
        "{label}: the text's own max vs sequence"
    );
    assert_eq!(
        sched.sequence.len(),
        scan.sequence.len(),
        "{label}: InstructionSequence length"
    );
    for (i, (&id, name)) in sched.sequence.iter().zip(&scan.sequence).enumerate() {
        let got = module.str(module.instructions[id as usize].name);
        assert_eq!(got, name, "{label}: InstructionSequence {i}");
    }
    max
}

/// Live ranges: each value's is its BufferLiveRange entry (or none).
fn live_ranges(label: &str, scan: &Scan, module: &Module, sched: &Schedule) {
    let mut matched = std::collections::BTreeSet::new();
    for v in &module.values {
        let key = range_key(module.str(module.instruction(v).name), module.str(v.index));
        let want = scan.live_ranges.get(&key).copied();
        assert_eq!(
            v.live.map(|r| (r.start, r.end)),
            want,
            "{label}: live range of {key}"
        );
        if want.is_some() {
            matched.insert(key);
        }
    }
    let orphans_want: Vec<(String, (u32, u32))> = scan
        .live_ranges
        .iter()
        .filter(|(k, _)| !matched.contains(*k))
        .map(|(k, r)| (k.clone(), *r))
        .collect();
    let orphans_got: Vec<(String, (u32, u32))> = sched
        .orphan_ranges
        .iter()
        .map(|o| {
            let name = module.str(module.instructions[o.instruction as usize].name);
            (
                range_key(name, module.str(o.index)),
                (o.live.start, o.live.end),
            )
        })
        .collect();
    assert_same_sorted(
        label,
        "BufferLiveRange entries with no allocated value",
        &orphans_got,
        &orphans_want,
    );
    // Values without a range are the thread-local ones (docs/format.md, Live ranges), in these dumps.
    for v in module.values.iter().filter(|v| v.live.is_none()) {
        assert!(
            module.allocation_of(v).flags.thread_local,
            "{label}: {} has no live range but is not thread-local",
            module.value_name(v)
        );
    }
}

/// XLA's peak list vs the values live at its step, and the peak as the model keeps it.
fn xla_peak(label: &str, scan: &Scan, module: &Module, sched: &Schedule) {
    let peak_time = scan
        .peak_time
        .unwrap_or_else(|| panic!("{label}: no `Live ranges at`"));
    let new_format = scan
        .peak
        .iter()
        .all(|e| e.index.is_some() && e.cumulative.is_some());
    let old_format = scan
        .peak
        .iter()
        .all(|e| e.index.is_none() && e.cumulative.is_none());
    assert!(new_format || old_format, "{label}: mixed peak-list formats");
    let live_keys = live_at_peak(module, sched, peak_time);
    if new_format {
        peak_list_new_form(label, scan, module, peak_time, &live_keys);
    } else {
        // Old form: names only, duplicates for tuple elements.
        let got: Vec<String> = live_keys.into_iter().map(|(n, _)| n).collect();
        let want: Vec<String> = scan.peak.iter().map(|e| e.name.clone()).collect();
        assert_same_sorted(
            label,
            &format!("names live at XLA's peak {peak_time}"),
            &got,
            &want,
        );
    }
    peak_in_the_model(label, scan, module, sched, peak_time);
}

/// (name, index) of the values `analysis::live_at` finds at `peak_time`, plus the orphan
/// ranges live then.
fn live_at_peak(module: &Module, sched: &Schedule, peak_time: u32) -> Vec<(String, String)> {
    let live = analysis::live_at(module, peak_time);
    let mut live_keys: Vec<(String, String)> = live
        .iter()
        .map(|&i| {
            let v = &module.values[i as usize];
            let idx = module.str(v.index);
            let idx = if idx.is_empty() { "{}" } else { idx };
            (
                module.str(module.instruction(v).name).to_string(),
                idx.to_string(),
            )
        })
        .collect();
    for o in &sched.orphan_ranges {
        if o.live.start <= peak_time && peak_time <= o.live.end {
            let idx = module.str(o.index);
            let idx = if idx.is_empty() { "{}" } else { idx };
            let name = module.str(module.instructions[o.instruction as usize].name);
            live_keys.push((name.to_string(), idx.to_string()));
        }
    }
    live_keys
}

/// The new peak list's form: (name, index) pairs, a cumulative column, logical sizes.
fn peak_list_new_form(
    label: &str,
    scan: &Scan,
    module: &Module,
    peak_time: u32,
    live_keys: &[(String, String)],
) {
    let want: Vec<(String, String)> = scan
        .peak
        .iter()
        .map(|e| (e.name.clone(), e.index.clone().unwrap()))
        .collect();
    assert_same_sorted(
        label,
        &format!("values live at XLA's peak {peak_time}"),
        live_keys,
        &want,
    );
    // The cumulative column is the running sum (a check of the scanner and of the text).
    let mut sum = 0;
    for e in &scan.peak {
        sum += e.bytes;
        assert_eq!(e.cumulative, Some(sum), "{label}: cumulative");
    }
    // Logical sizes: XLA prints ByteSizeOf of the value's subshape.
    let by_key: std::collections::HashMap<String, usize> = module
        .values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            (
                range_key(module.str(module.instruction(v).name), module.str(v.index)),
                i,
            )
        })
        .collect();
    for e in &scan.peak {
        let idx = e.index.as_deref().unwrap();
        // (An orphan range has no value, hence no logical size here.)
        let Some(&vi) = by_key.get(&format!("{}{idx}", e.name)) else {
            continue;
        };
        let v = &module.values[vi];
        assert_eq!(
            v.logical_size,
            Some(e.bytes),
            "{label}: logical size of {}{idx} ({})",
            e.name,
            module.str(v.shape)
        );
    }
}

/// The model's XLA peak: its step and its entries, as the text lists them.
fn peak_in_the_model(label: &str, scan: &Scan, module: &Module, sched: &Schedule, peak_time: u32) {
    let peak = sched
        .peak
        .as_ref()
        .unwrap_or_else(|| panic!("{label}: no XLA peak in the model"));
    assert_eq!(peak.time, peak_time, "{label}: XLA peak time");
    assert!(!sched.peak_undetermined);
    assert_eq!(
        peak.entries.len(),
        scan.peak.len(),
        "{label}: XLA peak entries"
    );
    for (e, s) in peak.entries.iter().zip(&scan.peak) {
        let name = module.str(module.instructions[e.instruction as usize].name);
        assert_eq!(
            (name, module.str(e.index), e.bytes),
            (s.name.as_str(), s.index.as_deref().unwrap_or(""), s.bytes),
            "{label}: XLA peak entry"
        );
    }
}

/// Stack trace block (2025-07-23 .. 2026-04-03, and in -live-range.txt after).
fn stack_trace(label: &str, scan: &Scan, module: &Module) {
    assert_eq!(
        module.stack_trace_total, scan.stack_trace_total,
        "{label}: stack trace total"
    );
    assert_eq!(
        module.stack_trace.len(),
        scan.stack_trace_nodes,
        "{label}: stack trace nodes"
    );
    if let Some(first) = module.stack_trace.first() {
        assert_eq!(
            Some(first.total),
            scan.stack_trace_total,
            "{label}: stack trace root"
        );
    }
}

/// Memory-usage report, when the module has one.
fn memory_report(label: &str, m: &ModuleFiles, scan: &Scan, module: &Module, total: u64) {
    if m.report_file().is_none() {
        return;
    }
    let report = module
        .memory_report
        .as_ref()
        .unwrap_or_else(|| panic!("{label}: the memory-usage report was not read"));
    assert_eq!(
        report.total_bytes, scan.report_total,
        "{label}: report Total bytes used"
    );
    let spaces: Vec<(String, u32, u64)> = report
        .spaces
        .iter()
        .map(|s| (module.str(s.name).to_string(), s.color, s.total_bytes))
        .collect();
    assert_eq!(spaces, scan.report_spaces, "{label}: report memory spaces");
    if let Some(t) = scan.report_total {
        assert_eq!(
            t, total,
            "{label}: the report's total is the dump's (scanner check)"
        );
    }
}

/// Analysis: the time axis is the scanner's `max + 1`, the curve is the brute-force
/// reference's at every step, and occupied bytes never exceed allocated bytes.
fn analysis_curves(label: &str, scan: &Scan, module: &Module, max: u32) -> Analysis {
    let an = analysis::analyze(module);
    assert_eq!(an.steps, max + 1, "{label}: analysis steps");
    let t = std::time::Instant::now();
    let steps = occupied::check_curves(module, &an, label);
    println!(
        "{label}: occupied bytes = reference at {steps} steps (reference and comparison {:?})",
        t.elapsed()
    );
    for space in &an.spaces {
        assert_eq!(
            space.curve.len(),
            an.steps as usize,
            "{label}: curve length"
        );
        let allocated: u64 = scan
            .allocations
            .iter()
            .filter(|a| a.color == space.color)
            .map(|a| a.size)
            .sum();
        assert_eq!(
            space.allocated_bytes, allocated,
            "{label}: allocated bytes of colour {}",
            space.color
        );
        if scan.allocations.iter().any(|a| a.color == space.color) {
            for (t, &b) in space.curve.iter().enumerate() {
                assert!(
                    b <= space.allocated_bytes,
                    "{label}: colour {} occupies {b} B at step {t}, more than its {} allocated bytes",
                    space.color,
                    space.allocated_bytes
                );
            }
        }
    }
    an
}
