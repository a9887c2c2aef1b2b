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

#[path = "common/check.rs"]
mod check;
mod common;
#[path = "common/scan.rs"]
mod scan;

use bufscope::analysis;
use bufscope::model::Module;
use check::{check_module, load_one};
use common::*;
use scan::*;
use std::collections::BTreeMap;

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
