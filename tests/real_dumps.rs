//! Every real dump, read exactly: each figure of the model is compared with what an
//! independent line scanner (tests/common) reads from the same text.
//!
//! Fixtures: tests/fixtures (copied from ../shared/dumps). Two larger dumps are read from
//! ../shared/dumps when it exists: `cpu_gpt2_small` (2 MB, always) and
//! `cpu_deep_unrolled_500` (94 MB, only in an optimised build: `cargo test --release`).
//! Without ../shared those tests print `SKIPPED: ...` and, under `CI=true`, fail.
//!
//! Every module's occupied-bytes curve is also compared, step by step, with the brute-force
//! reference of tests/common/occupied.rs.
//!
//! Values with a live range but no allocation (docs/format.md, Live ranges) are not in `module.values`, so
//! `analysis::live_at` cannot see them; the parser keeps them as `schedule.orphan_ranges`.
//! The peak check therefore compares XLA's list with `live_at(N)` plus the orphan ranges
//! live at `N` (and the orphan ranges themselves are checked against the BufferLiveRange
//! entries that match no ` value:` line). None of the real dumps has such a value today.

mod common;

use bufscope::analysis::{self, Analysis};
use bufscope::model::Module;
use common::*;
use std::collections::BTreeMap;
use std::fmt::Debug;

/// Compares two lists as multisets, showing the first differences rather than everything.
fn assert_same_sorted<T: Ord + Debug + Clone>(label: &str, what: &str, got: &[T], want: &[T]) {
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

fn load_one(m: &ModuleFiles) -> Module {
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
fn check_module(m: &ModuleFiles) -> (Module, Analysis) {
    let label = m.label.as_str();
    let scan = scan(m);
    let module = load_one(m);

    // No warnings, the right name and files.
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

    // Total bytes.
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

    // Allocations: count and every header field.
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

    // Values: every ` value:` line (one leading space) is exactly one value.
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

    // Every value inside its allocation, and in its allocation's range of values.
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

    // Schedule.
    let sched = module
        .schedule
        .as_ref()
        .unwrap_or_else(|| panic!("{label}: no schedule"));
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

    // Live ranges: each value's is its BufferLiveRange entry (or none).
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

    // XLA's peak list vs the values live at its step.
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
    let live = analysis::live_at(&module, peak_time);
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
    if new_format {
        let want: Vec<(String, String)> = scan
            .peak
            .iter()
            .map(|e| (e.name.clone(), e.index.clone().unwrap()))
            .collect();
        assert_same_sorted(
            label,
            &format!("values live at XLA's peak {peak_time}"),
            &live_keys,
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

    // Stack trace block (2025-07-23 .. 2026-04-03, and in -live-range.txt after).
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

    // Memory-usage report.
    if m.report_file().is_some() {
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

    // Analysis: the time axis is the scanner's `max + 1`, the curve is the brute-force
    // reference's at every step, and occupied bytes never exceed allocated bytes.
    let an = analysis::analyze(&module);
    assert_eq!(an.steps, max + 1, "{label}: analysis steps");
    let t = std::time::Instant::now();
    let steps = occupied::check_curves(&module, &an, label);
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
    (module, an)
}

#[test]
fn every_fixture_module_reads_exactly() {
    let mut failures = Vec::new();
    let modules = fixture_modules();
    for m in &modules {
        // Check all modules, then report every one that failed (not just the first).
        if let Err(e) = std::panic::catch_unwind(|| {
            check_module(m);
        }) {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!("{}: {msg}", m.label));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixture modules failed:\n\n{}",
        failures.len(),
        modules.len(),
        failures.join("\n\n")
    );
}

#[test]
fn fixture_grouping_is_as_expected() {
    // A check of the test itself: the modules and their file counts.
    let modules = fixture_modules();
    let count = |folder: &str| modules.iter().filter(|m| m.folder == folder).count();
    assert_eq!(count("tpu"), 5);
    assert_eq!(count("cpu/jax0.10.2"), 4);
    assert_eq!(count("cpu/jax0.4.38"), 3);
    assert_eq!(count("cpu/jax0.6.2"), 6);
    assert_eq!(count("cpu/jax0.7.2"), 2);
    assert_eq!(count("cpu/jax0.9.2"), 2);
    assert_eq!(count("cpu/tf"), 1);
    assert_eq!(count("edited"), 1);
    for m in &modules {
        let want = match (m.folder.as_str(), m.folder.starts_with("cpu")) {
            ("cpu/jax0.10.2" | "edited", _) => 4,
            (_, true) => 2,
            _ => 1,
        };
        assert_eq!(m.files.len(), want, "{}", m.label);
    }
}

#[test]
fn split_jax0_10_modules_have_live_ranges() {
    for m in fixture_modules()
        .iter()
        .filter(|m| m.folder == "cpu/jax0.10.2")
    {
        let module = load_one(m);
        assert!(!module.values.is_empty(), "{}: no values", m.label);
        let timed = module.values.iter().filter(|v| v.live.is_some()).count();
        let scan = scan(m);
        assert_eq!(
            timed,
            scan.live_ranges.len(),
            "{}: values with a live range",
            m.label
        );
        assert!(module.schedule.is_some(), "{}", m.label);
        assert!(
            module
                .values
                .iter()
                .any(|v| !module.str(module.instruction(v).opcode).is_empty()),
            "{}: no instruction text joined from -values.txt",
            m.label
        );
    }
}

#[test]
fn split_module_files_in_any_order() {
    // The three files of a jax0.10.2 module, given in reverse order, read the same.
    let m = fixture_module("cpu/jax0.10.2/cpu_mlp_train");
    let forward = load_one(&m);
    let mut rev = m.clone();
    rev.files.reverse();
    let backward = load_one(&rev);
    assert!(backward.warnings.is_empty(), "{:?}", backward.warnings);
    assert_eq!(forward.values.len(), backward.values.len());
    let key = |md: &Module| -> Vec<(u32, Option<(u32, u32)>, u64)> {
        md.values
            .iter()
            .map(|v| (v.id, v.live.map(|r| (r.start, r.end)), v.offset))
            .collect()
    };
    assert_eq!(key(&forward), key(&backward));
}

#[test]
fn cpu_logical_size_is_the_slice_size() {
    // On CPU (XLA's `CpuExecutable::ShapeSizeBytes`) the slice size is ByteSizeOf (static shapes),
    // so every CPU value's logical size must equal its printed size=. A check of shape.rs
    // on every value, not only the ones in the peak list.
    let mut bad = Vec::new();
    for m in fixture_modules()
        .iter()
        .filter(|m| m.folder.starts_with("cpu"))
    {
        let module = load_one(m);
        for v in &module.values {
            if v.logical_size != Some(v.size) {
                bad.push(format!(
                    "{}: {} {} logical {:?} size {}",
                    m.label,
                    module.value_name(v),
                    module.str(v.shape),
                    v.logical_size,
                    v.size
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad[..bad.len().min(20)].join("\n")
    );
}

fn shared_module(test: &str, stem: &str) -> Option<ModuleFiles> {
    let dir = shared_dumps_or_skip(test)?;
    let m = modules_under(&dir, |folder, s| folder == "cpu/jax0.6.2" && s == stem);
    assert_eq!(m.len(), 1, "{stem} in {}", dir.display());
    Some(m.into_iter().next().unwrap())
}

#[test]
fn shared_gpt2_small_reads_exactly() {
    if let Some(m) = shared_module("shared_gpt2_small_reads_exactly", "cpu_gpt2_small") {
        check_module(&m);
    }
}

/// The 94 MB dump, only in an optimised build.
const DEEP: &str = "cpu_deep_unrolled_500";

#[test]
fn shared_deep_unrolled_500_reads_exactly() {
    let test = "shared_deep_unrolled_500_reads_exactly";
    if cfg!(debug_assertions) {
        // Not a skip for want of ../shared: `./dev test` runs this file again in release.
        common::skip_in_debug(
            test,
            &format!("the 94 MB {DEEP} (`cargo test --release --test real_dumps` runs it)"),
        );
        return;
    }
    if let Some(m) = shared_module(test, DEEP) {
        let t = std::time::Instant::now();
        let (module, _) = check_module(&m);
        // The figures README.md gives for it (a check of the scanner as much as the parser).
        assert_eq!(module.allocations.len(), 46_594);
        assert_eq!(module.values.len(), 177_800);
        assert_eq!(module.schedule.as_ref().unwrap().max, 162_265);
        // Read with `Used values` deferred and completed after, it is the same module.
        load_both_ways(&m.inputs(), DEEP);
        println!("{DEEP} checked in {:?}", t.elapsed());
    }
}

/// Every module of every dump in ../shared/dumps but the 94 MB one (which
/// [`shared_deep_unrolled_500_reads_exactly`] checks): the occupied-bytes curve of each
/// memory space is the brute-force reference's at every step (tests/common/occupied.rs).
/// The fixtures are among them; so are dumps that are not fixtures (GPU, excerpts).
#[test]
fn shared_dumps_occupied_bytes_match_reference() {
    let Some(dir) = shared_dumps_or_skip("shared_dumps_occupied_bytes_match_reference") else {
        return;
    };
    let (mut modules, mut spaces, mut steps) = (0, 0, 0);
    for m in modules_under(&dir, |_, stem| stem != DEEP) {
        let load = bufscope::load_files(m.inputs());
        for module in &load.modules {
            let an = analysis::analyze(module);
            let label = format!("{} ({})", m.label, module.name);
            steps += occupied::check_curves(module, &an, &label);
            spaces += an.spaces.len();
            modules += usize::from(!module.values.is_empty());
        }
    }
    println!("{modules} modules with values, {spaces} memory spaces, {steps} steps checked");
    assert!(
        modules >= 30,
        "only {modules} modules with values in {}",
        dir.display()
    );
}

#[test]
fn shared_dumps_match_fixtures() {
    // The fixtures are copies of ../shared/dumps: tell when they drift apart.
    let Some(dir) = shared_dumps_or_skip("shared_dumps_match_fixtures") else {
        return;
    };
    let shared: BTreeMap<String, ModuleFiles> = modules_under(&dir, |_, _| true)
        .into_iter()
        .map(|m| (m.label.clone(), m))
        .collect();
    // tests/fixtures/edited holds real dumps edited on purpose (its README).
    for m in fixture_modules().into_iter().filter(|m| m.folder != "edited") {
        let s = shared
            .get(&m.label)
            .unwrap_or_else(|| panic!("{} not in ../shared", m.label));
        assert_eq!(s.files.len(), m.files.len(), "{}", m.label);
        for (a, b) in s.files.iter().zip(&m.files) {
            assert!(
                a.0 == b.0 && a.1 == b.1,
                "{}: {} differs from ../shared",
                m.label,
                a.0
            );
        }
    }
}

#[test]
fn scanner_counts_match_format_md() {
    // A check of the scanner against the counts the format notes (../shared/FORMAT.md, not
    // in the repo) made of the TPU dumps with their own checker: 65 allocation headers, 92 value lines, 5 Total lines, 60 sequence
    // entries, 65 BufferLiveRange entries, 40 peak entries.
    let scans: Vec<Scan> = fixture_modules()
        .iter()
        .filter(|m| m.folder == "tpu")
        .map(scan)
        .collect();
    let sum = |f: &dyn Fn(&Scan) -> usize| -> usize { scans.iter().map(f).sum() };
    assert_eq!(sum(&|s| s.allocations.len()), 65);
    assert_eq!(sum(&|s| s.values.len()), 92);
    assert_eq!(sum(&|s| s.total.is_some() as usize), 5);
    assert_eq!(sum(&|s| s.sequence.len()), 60);
    assert_eq!(sum(&|s| s.live_ranges.len()), 65);
    assert_eq!(sum(&|s| s.peak.len()), 40);
}

/// The cuBLAS workspaces of the public A100 dumps: the `s8[N]` outputs `{1}` of custom calls
/// (counted in the text with grep: in `module_1078.jit__sternheimer_core` ten
/// `custom-call.N.0{1}`; in `module_0037.jit__full_run` twelve and two
/// `cublas-batch-gemm.N.0{1}`) are custom-call scratch, and nothing else of those modules
/// is; and each module is named as XLA names it.
#[test]
fn public_a100_workspaces_are_custom_call_scratch() {
    let Some(dumps) = shared_dumps_or_skip("public_a100_workspaces_are_custom_call_scratch") else {
        return;
    };
    for (file, name, custom_calls, gemms) in [
        (
            "module_1078.jit__sternheimer_core",
            "jit__sternheimer_core",
            10,
            0,
        ),
        ("module_0037.jit__full_run", "jit__full_run", 12, 2),
    ] {
        let file = format!("{file}.sm_8.0_gpu_after_optimizations-buffer-assignment.txt");
        let bytes = std::fs::read(dumps.join("public/lorrax").join(&file)).unwrap();
        let load = bufscope::load_files([(file.as_str(), &bytes[..])]);
        let m = &load.modules[0];
        assert_eq!(bufscope::model::xla_module_name(&m.name), name);
        let scratch: Vec<(String, String)> = (m.values.iter())
            .filter(|v| analysis::value_kind(m, v) == analysis::ValueKind::Scratch)
            .map(|v| (m.value_name(v), m.str(v.shape).to_string()))
            .collect();
        let count = |p: &str| scratch.iter().filter(|(n, _)| n.starts_with(p)).count();
        assert_eq!(
            (
                count("custom-call."),
                count("cublas-batch-gemm."),
                scratch.len()
            ),
            (custom_calls, gemms, custom_calls + gemms),
            "{file}: {scratch:?}"
        );
        assert!(
            scratch
                .iter()
                .all(|(n, s)| n.ends_with("{1}") && s.starts_with("s8[")),
            "{scratch:?}"
        );
    }
}
