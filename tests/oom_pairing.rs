//! The error beside its dump (issue 25): the real `tpu_v5e_lm_scan_remat_OOM` run of
//! `../shared/dumps/tpu-aot/jax0.12-libtpu0.0.50/` (its E1000 one-liner and the dump XLA
//! wrote anyway; skipped visibly without ../shared), read together by the library and by
//! `bufscope summary`, and the pairing rule on made-up names.
//!
//! Figures by hand: the message says 24.35G required and 15.75G available (15.75 × 2^30 =
//! 16,911,433,728 B). The older libtpu's verbose message for the same config
//! (`jax0.6.2-libtpu0.0.17/…_OOM.error.txt`) breaks 24.35G into `program 13.88G` and
//! `arguments 10.46G`; the dump's peak must print as 24.35G, its temporaries as 13.88G,
//! and what must go is peak − 16,911,433,728.

mod common;

use bufscope::answers::paired::{module_of, DumpFigure, Paired};
use bufscope::parse::oom::read_oom;
use bufscope::parse::load_files;
use bufscope::units::group_digits;
use std::path::PathBuf;

const STEM: &str = "tpu_v5e_lm_scan_remat_OOM";
const PARTS: [&str; 5] = [
    "buffer-assignment.txt",
    "buffer-assignment-values.txt",
    "live-range.txt",
    "memory-usage-report.txt",
    "error.txt",
];

fn run_dir(test: &str) -> Option<PathBuf> {
    let dir = common::shared_dumps_or_skip(test)?.join("tpu-aot/jax0.12-libtpu0.0.50");
    assert!(dir.join(format!("{STEM}.error.txt")).is_file(), "{}", dir.display());
    Some(dir)
}

/// `24.35G` and the like: (rounded bytes, lowest, highest) as `HumanReadableNumBytes`
/// prints them (two decimals of GiB: ± half a hundredth).
fn gib_range(printed: f64) -> (u64, u64) {
    let g = (1u64 << 30) as f64;
    (((printed - 0.005) * g) as u64, ((printed + 0.005) * g) as u64)
}

/// The dump's allocated total of HBM, summed from its `allocation N: size S, …` lines:
/// colour 0 (no `color` field), thread-local ones left out.
fn hbm_allocated(path: &std::path::Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| l.starts_with("allocation ") && !l.contains("color ") && !l.contains("thread-local"))
        .map(|l| {
            let size = l.split("size ").nth(1).unwrap().split(',').next().unwrap();
            size.trim().parse::<u64>().unwrap()
        })
        .sum()
}

/// The sizes of the dump's `preallocated-temp` allocations of HBM.
fn hbm_temp_allocated(path: &std::path::Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| l.starts_with("allocation ") && !l.contains("color ") && l.contains("preallocated-temp"))
        .map(|l| l.split("size ").nth(1).unwrap().split(',').next().unwrap().trim().parse::<u64>().unwrap())
        .sum()
}

#[test]
fn oom_the_verbose_message_is_the_allocated_total_and_its_hlo_temp_the_temporaries() {
    let Some(shared) = common::shared_dumps_or_skip("oom_the_verbose_message") else {
        return;
    };
    let dir = shared.join("tpu-aot/jax0.6.2-libtpu0.0.17");
    let load = common::load_parts(&dir, STEM, &["buffer-assignment.txt", "error.txt"]);
    let module = &load.modules[0];
    let analysis = bufscope::analysis::analyze(module);
    let paired = Paired::new(&[(module, &analysis)], &load.oom);
    let r = paired.pairs[0].reconciliation.as_ref().unwrap();
    let dump = dir.join(format!("{STEM}.buffer-assignment.txt"));
    // "Used 24.35G of 15.75G hbm": the allocated total; "HLO temp 13.88G": the
    // preallocated-temp allocation, to the byte as summed here.
    assert_eq!((r.what.as_str(), r.figure), ("used", Some(DumpFigure::AllocatedTotal)));
    assert_eq!(r.allocated_bytes, hbm_allocated(&dump));
    let temp = r.checks.iter().find(|c| c.label == "HLO temp").unwrap();
    assert_eq!(temp.figure, Some(DumpFigure::Temporaries));
    assert_eq!(temp.dump_bytes, Some(hbm_temp_allocated(&dump)));
    let (lo, hi) = gib_range(13.88);
    assert!((lo..=hi).contains(&hbm_temp_allocated(&dump)));
    assert!(r.sentence.contains("The error's 24.35G used = this dump's allocated total of HBM"), "{}", r.sentence);
    let temp_text = format!("Its HLO temp 13.88G = this dump's temporaries' allocations ({} B)", group_digits(hbm_temp_allocated(&dump)));
    assert!(r.sentence.contains(&temp_text), "{}", r.sentence);
}

#[test]
fn oom_the_error_of_another_compilation_is_none_of_its_figures() {
    let Some(dir) = run_dir("oom_the_error_of_another_compilation") else {
        return;
    };
    // The error of the OOM config beside the dump of the config that fits, kept under the
    // OOM run's name so that they pair: no figure of the smaller dump prints as 24.35G.
    let files = [
        (format!("{STEM}.buffer-assignment.txt"), std::fs::read(dir.join("tpu_v5e_lm_scan_remat.buffer-assignment.txt")).unwrap()),
        (format!("{STEM}.error.txt"), std::fs::read(dir.join(format!("{STEM}.error.txt"))).unwrap()),
    ];
    let load = load_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    let module = &load.modules[0];
    let analysis = bufscope::analysis::analyze(module);
    let paired = Paired::new(&[(module, &analysis)], &load.oom);
    let r = paired.pairs[0].reconciliation.as_ref().unwrap();
    assert!(!r.matches && r.figure.is_none(), "{r:?}");
    let (lo, _) = gib_range(24.35);
    assert!(r.allocated_bytes < lo && r.peak_bytes < lo, "{r:?}");
    assert!(r.sentence.contains("is none of this dump's figures of HBM"), "{}", r.sentence);
    assert!(r.sentence.contains("may be of another compilation"), "{}", r.sentence);
}

#[test]
fn oom_a_folder_pairs_the_error_with_the_dump_of_its_name() {
    let Some(shared) = common::shared_dumps_or_skip("oom_a_folder_pairs_the_error") else {
        return;
    };
    // Two runs in one folder; the message names jit_train_step, which neither file name
    // holds: the error pairs with the module of its own stem.
    let dir = shared.join("tpu-aot/jax0.6.2-libtpu0.0.17");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .args(["summary", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &json["oom_messages"][0];
    assert_eq!(m["dump"]["module_name"], STEM, "{m}");
    assert_eq!(m["dump"]["reconciliation"]["figure"], "allocated_total");
}

#[test]
fn the_e1000_message_opens_its_dump_with_its_capacity_and_reconciles() {
    let Some(dir) = run_dir("the_e1000_message_opens_its_dump") else {
        return;
    };
    let load = common::load_parts(&dir, STEM, &PARTS);
    assert_eq!(load.modules.len(), 1);
    assert_eq!(load.oom.len(), 1, "{:?}", load.errors);
    let module = &load.modules[0];
    let analysis = bufscope::analysis::analyze(module);
    let paired = Paired::new(&[(module, &analysis)], &load.oom);
    let [p] = paired.pairs.as_slice() else {
        panic!("{paired:?}")
    };
    // The message names jit_train_step; the files are named by their stem: one module, so
    // it is the one.
    assert_eq!(load.oom[0].log.messages[0].module.as_deref(), Some("jit_train_step"));
    assert_eq!(p.module_name, STEM);
    assert_eq!(p.color, 0);
    let c = p.capacity.as_ref().unwrap();
    assert_eq!((c.bytes, c.label.as_str()), (16_911_433_728, "15.75G"));
    assert_eq!(paired.space_capacity(0).map(|(k, c)| (k, c.bytes)), Some((0, 16_911_433_728)));

    let r = p.reconciliation.as_ref().unwrap();
    let (lo, hi) = gib_range(24.35);
    assert!((lo..=hi).contains(&r.peak_bytes), "peak {}", r.peak_bytes);
    assert!(r.matches);
    let (lo, hi) = gib_range(13.88);
    assert!((lo..=hi).contains(&r.temporaries_bytes), "temporaries {}", r.temporaries_bytes);
    // The arguments: 10.46G in the verbose message; the dump's parameter, maybe-live-out
    // and constant allocations come within 1 MiB of it.
    let (lo, hi) = gib_range(10.46);
    assert!(
        r.arguments_bytes + (1 << 20) >= lo && r.arguments_bytes <= hi + (1 << 20),
        "arguments {}",
        r.arguments_bytes
    );
    assert_eq!(r.must_go_bytes, Some(r.peak_bytes - 16_911_433_728));
    // E1000's figure is the dump's allocated total (every allocation of HBM, arguments and
    // outputs too), summed here from the dump's own lines.
    let total = hbm_allocated(&dir.join(format!("{STEM}.buffer-assignment.txt")));
    assert_eq!(r.allocated_bytes, total);
    assert_eq!(r.figure, Some(DumpFigure::AllocatedTotal));
    let text = format!(
        "The error's 24.35G required for HLO temporaries = this dump's allocated total of HBM, 24.35GiB ({} B,",
        group_digits(total)
    );
    assert!(r.sentence.contains(&text), "{}", r.sentence);
    assert!(!r.sentence.contains("another compilation"), "{}", r.sentence);
    assert!(r.sentence.contains("temporaries 13.9 GiB plus arguments and outputs 10.5 GiB"), "{}", r.sentence);
    assert!(r.sentence.contains("8.6 GiB must go"), "{}", r.sentence);
}

#[test]
fn summary_of_the_files_together_sets_the_capacity_in_the_json() {
    let Some(dir) = run_dir("summary_of_the_files_together") else {
        return;
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .arg("summary")
        .arg("--json")
        .args(PARTS.iter().map(|p| dir.join(format!("{STEM}.{p}"))))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let spaces = json["modules"][0]["memory_spaces"].as_array().unwrap();
    let hbm = spaces.iter().find(|s| s["color"] == 0).unwrap();
    assert_eq!(hbm["answers"]["capacity"]["capacity_bytes"], 16_911_433_728u64);
    assert_eq!(hbm["answers"]["capacity"]["fits"], false);
    // Only the space the message is about.
    for s in spaces.iter().filter(|s| s["color"] != 0) {
        assert!(s["answers"]["capacity"].is_null(), "{}", s["color"]);
    }
    let m = &json["oom_messages"][0];
    assert_eq!(m["form"], "tpu_compile_time_hbm_oom");
    assert_eq!(m["module"], "jit_train_step");
    assert_eq!(m["dump"]["module_name"], STEM);
    assert_eq!(m["dump"]["reconciliation"]["matches"], true);
    // Without the error the same files give no capacity.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .args(["summary", "--json"])
        .args(PARTS[..4].iter().map(|p| dir.join(format!("{STEM}.{p}"))))
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json["modules"][0]["memory_spaces"][0]["answers"]["capacity"].is_null());
}

#[test]
fn a_message_pairs_with_the_module_it_names_or_the_only_one() {
    let named = read_oom(
        "RESOURCE_EXHAUSTED: E1000: CompileTimeHbmOom: Ran out of memory on HBM, the total memory required for HLO temporaries (2.00G) exceeds available HBM (1.00G). HLO module: jit_f.",
    )
    .unwrap()
    .messages
    .remove(0);
    assert_eq!(module_of(&["jit_g", "jit_f"], &named), Some(1));
    assert_eq!(module_of(&["module_0001.jit_g", "module_0002.jit_f.cpu"], &named), Some(1));
    assert_eq!(module_of(&["only_one"], &named), Some(0));
    assert_eq!(module_of(&["a", "b"], &named), None);
    assert_eq!(module_of(&[], &named), None);
    let unnamed = read_oom("RESOURCE_EXHAUSTED: TPU TensorCore Hbm usage: 3.00G, SparseCore Hbm usage 1.00G, exceeding available bytes: 2.00G")
        .unwrap()
        .messages
        .remove(0);
    assert_eq!(module_of(&["x"], &unnamed), Some(0));
    assert_eq!(module_of(&["x", "y"], &unnamed), None);
}

#[test]
fn oom_a_folder_reads_its_compile_log_as_the_error() {
    let Some(dir) = run_dir("oom_a_folder_reads_its_compile_log") else {
        return;
    };
    // A temp folder: the OOM run's dump, its error copied as `compile.log`, and a log with
    // no message (skipped and counted, not an error).
    let tmp = std::env::temp_dir().join(format!("bufscope-oom-log-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for p in &PARTS[..3] {
        let name = format!("{STEM}.{p}");
        std::fs::copy(dir.join(&name), tmp.join(&name)).unwrap();
    }
    std::fs::copy(dir.join(format!("{STEM}.error.txt")), tmp.join("compile.log")).unwrap();
    std::fs::write(tmp.join("other.log"), "training started\nstep 1 loss 2.3\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .args(["summary", "--json"])
        .arg(&tmp)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("1 other file of the dump folder skipped"), "{stderr}");
    assert!(!stderr.contains("no XLA out-of-memory message"), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hbm = &json["modules"][0]["memory_spaces"][0];
    assert_eq!(hbm["answers"]["capacity"]["capacity_bytes"], 16_911_433_728u64);
    assert_eq!(hbm["answers"]["capacity"]["fits"], false);
    assert_eq!(json["oom_messages"][0]["dump"]["reconciliation"]["figure"], "allocated_total");
}
