//! `bufscope::answers::sweep` and `bufscope sweep` on real TPU v5e compilations of one
//! program: the batch sweep of `../shared/dumps/tpu-aot` (batch 8, 16, 32, 48, 64: per-device
//! `tokens` dim 0 = 4 … 32), its sequence points (512, 1024), and the layers sweep (4 layers,
//! `fixtures/sweep/`, made by tests/bench/make_sweep.sh, beside the shared 8). The varied
//! dimension is named, two varying dimensions are an error (exit 2), the fit predicts a
//! left-out point within 10 %, and a pinned peak is never extrapolated.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use bufscope::answers::capacity::parse_capacity;
use bufscope::answers::sweep::{compiler_remats, sweep, Form, Options, Point};
use bufscope::pipeline::{open_files, Loaded};

/// The compilation `stem` of `dir`: its dump files and HLO text (maybe gzipped).
fn load(dir: &Path, stem: &str) -> Loaded {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for part in ["buffer-assignment", "buffer-assignment-values", "live-range", "after_optimizations"] {
        for name in [format!("{stem}.{part}.txt"), format!("{stem}.{part}.txt.gz")] {
            if let Ok(bytes) = std::fs::read(dir.join(&name)) {
                files.push((name, bytes));
            }
        }
    }
    assert!(!files.is_empty(), "no files for {stem} in {}", dir.display());
    open_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())))
}

fn points(loads: &[Loaded]) -> Vec<Point<'_>> {
    (loads.iter())
        .map(|l| {
            let a = l.default_module().expect("a module");
            Point { module: &a.module, analysis: &a.analysis, failed: false }
        })
        .collect()
}

/// The batch sweep's compilations in batch order (8, 16, 32, 48, 64).
fn batch_sweep(dumps: &Path) -> Vec<Loaded> {
    let aot = dumps.join("tpu-aot");
    vec![
        load(&aot.join("remat-ladder"), "tpu_v5e_lm_scan_remat_b8"),
        load(&aot.join("jax0.12-libtpu0.0.50"), "tpu_v5e_lm_scan_remat"),
        load(&aot.join("remat-ladder"), "tpu_v5e_lm_scan_remat_b32"),
        load(&aot.join("turn4"), "tpu_v5e_lm_scan_remat_b48"),
        load(&aot.join("turn4"), "tpu_v5e_lm_scan_remat_b64"),
    ]
}

#[test]
fn the_batch_sweep_is_linear_in_the_tokens_first_dimension() {
    let Some(dumps) = common::shared_dumps_or_skip("the_batch_sweep_is_linear_in_the_tokens_first_dimension") else {
        return;
    };
    let loads = batch_sweep(&dumps);
    let capacity = parse_capacity("v5e").unwrap();
    let options = Options { capacity: Some(capacity.clone()), at: vec![64] };
    let s = sweep(&points(&loads), &options).unwrap();
    assert_eq!(s.varied.what, "parameter tokens, dim 0");
    assert_eq!(s.varied.values, [4, 8, 16, 24, 32], "per-device batch: the global batch over data = 2");
    let hbm = &s.spaces[0];
    assert_eq!(hbm.color, 0);
    let model = hbm.model.as_ref().unwrap();
    assert_eq!(model.form, Form::Linear, "{model:?}");
    let peaks: Vec<u64> = hbm.points.iter().map(|p| p.peak_live_bytes).collect();
    assert_eq!(peaks[0], 1_651_259_392, "the remat ladder's README: b8");
    assert!(model.max_residual_bytes < peaks[4] / 50, "{model:?}");
    // No compiler rematerialisation here, so nothing is pinned, and the line crosses 15.75 GiB
    // above the largest point measured.
    assert!(hbm.points.iter().all(|p| !p.pinned && p.compiler_remats == 0));
    let (largest, first) = (hbm.largest_fitting.unwrap(), hbm.first_not_fitting.unwrap());
    assert_eq!(first, largest + 1);
    assert!(model.at(largest as f64) + model.max_residual_bytes <= capacity.bytes);
    assert!(model.at(first as f64) + model.max_residual_bytes > capacity.bytes);
    assert!(largest > 32 && largest < 400, "{largest}");
    // The categories at the peak: the model parameters and optimizer state do not grow.
    let params = hbm.categories.iter().find(|c| c.label == "model parameters").unwrap();
    assert_eq!(params.model.as_ref().unwrap().form, Form::Constant);
}

#[test]
fn a_left_out_point_is_predicted_within_ten_percent() {
    let Some(dumps) = common::shared_dumps_or_skip("a_left_out_point_is_predicted_within_ten_percent") else {
        return;
    };
    let loads = batch_sweep(&dumps);
    let all = points(&loads);
    for out in 1..all.len() - 1 {
        let kept: Vec<Point> = (all.iter().enumerate()).filter(|(k, _)| *k != out).map(|(_, p)| *p).collect();
        let real = all[out].analysis.spaces[0].peak_bytes;
        let value = [4, 8, 16, 24, 32][out];
        let s = sweep(&kept, &Options { capacity: None, at: vec![value] }).unwrap();
        let predicted = s.spaces[0].at[0].peak_live_bytes;
        let error = (predicted as f64 - real as f64).abs() / real as f64;
        assert!(error < 0.10, "value {value}: predicted {predicted}, real {real}");
    }
}

#[test]
fn the_layers_sweep_is_named_after_the_scans_trip_count() {
    let Some(dumps) = common::shared_dumps_or_skip("the_layers_sweep_is_named_after_the_scans_trip_count") else {
        return;
    };
    let loads = vec![
        load(&common::fixtures_dir().join("sweep"), "tpu_v5e_lm_scan_remat_l4"),
        load(&dumps.join("tpu-aot/jax0.12-libtpu0.0.50"), "tpu_v5e_lm_scan_remat"),
    ];
    let s = sweep(&points(&loads), &Options::default()).unwrap();
    assert!(s.varied.what.starts_with("trip count of while."), "{}", s.varied.what);
    assert_eq!(s.varied.values, [4, 8]);
    let hbm = &s.spaces[0];
    assert!(hbm.points[0].peak_live_bytes < hbm.points[1].peak_live_bytes);
    assert_eq!(hbm.model.as_ref().unwrap().form, Form::Linear);
    assert!(hbm.largest_fitting.is_none() && !hbm.pinned, "no capacity given");
}

#[test]
fn two_varying_dimensions_are_an_error_naming_both() {
    let Some(dumps) = common::shared_dumps_or_skip("two_varying_dimensions_are_an_error_naming_both") else {
        return;
    };
    let aot = dumps.join("tpu-aot");
    let loads = vec![
        load(&aot.join("remat-ladder"), "tpu_v5e_lm_scan_remat_b8"),
        load(&aot.join("jax0.12-libtpu0.0.50"), "tpu_v5e_lm_scan_remat"),
        load(&aot.join("turn4"), "tpu_v5e_lm_scan_remat_s512"),
    ];
    let e = sweep(&points(&loads), &Options::default()).unwrap_err();
    assert!(e.contains("parameter tokens, dim 0 (4, 8, 8)"), "{e}");
    assert!(e.contains("parameter tokens, dim 1 (1025, 1025, 513)"), "{e}");
    // The same compilation twice: nothing varies.
    let same = vec![load(&aot.join("turn4"), "tpu_v5e_lm_scan_remat_s512"), load(&aot.join("turn4"), "tpu_v5e_lm_scan_remat_s512")];
    assert!(sweep(&points(&same), &Options::default()).unwrap_err().contains("nothing varies"));
}

#[test]
fn the_compilers_own_rematerialisation_is_found_by_name() {
    let Some(dumps) = common::shared_dumps_or_skip("the_compilers_own_rematerialisation_is_found_by_name") else {
        return;
    };
    let dir = dumps.join("tpu-aot/jax0.12-libtpu0.0.50");
    let oom = load(&dir, "tpu_v5e_lm_scan_remat_OOM");
    let remats = compiler_remats(&oom.modules[0].module);
    assert!(!remats.is_empty());
    assert!(remats.iter().all(|n| n.contains(".remat")), "{remats:?}");
    // jax.checkpoint's own recomputation (rematted_computation in op_names) is not the compiler's.
    let plain = load(&dir, "tpu_v5e_lm_scan_remat");
    assert!(compiler_remats(&plain.modules[0].module).is_empty());
}

fn bufscope(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bufscope")).args(args).output().unwrap()
}

fn path(p: PathBuf) -> String {
    p.to_string_lossy().into_owned()
}

#[test]
fn the_command_prints_the_issues_json_and_exits_2_for_two_dimensions() {
    let Some(dumps) = common::shared_dumps_or_skip("the_command_prints_the_issues_json_and_exits_2_for_two_dimensions") else {
        return;
    };
    let aot = dumps.join("tpu-aot");
    let b8 = path(aot.join("remat-ladder/tpu_v5e_lm_scan_remat_b8.buffer-assignment.txt"));
    let b16 = path(aot.join("jax0.12-libtpu0.0.50/tpu_v5e_lm_scan_remat.buffer-assignment.txt"));
    let s512 = path(aot.join("turn4/tpu_v5e_lm_scan_remat_s512.buffer-assignment.txt"));
    let out = bufscope(&["sweep", "--json", "--capacity", "v5e", "--at", "64", &b8, &b16]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["varied"]["what"], "parameter tokens, dim 0");
    assert_eq!(json["varied"]["values"], serde_json::json!([4, 8]));
    let hbm = &json["spaces"][0];
    for key in ["points", "model", "at", "largest_fitting", "first_not_fitting", "pinned", "sentence"] {
        assert!(hbm.get(key).is_some(), "no {key} in {hbm}");
    }
    assert_eq!(hbm["points"][0]["peak_live_bytes"], 1_651_259_392u64);
    assert_eq!(hbm["model"]["form"], "linear");
    assert_eq!(hbm["at"][0]["value"], 64);
    assert_eq!(hbm["pinned"], false);
    // A file brings its run's files: the HLO text too (the trip count needs it).
    let out = bufscope(&["sweep", &b8, &b16, &s512]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("two dimensions vary") && err.contains("dim 0") && err.contains("dim 1"), "{err}");
    assert_eq!(bufscope(&["sweep", &b8]).status.code(), Some(2), "one compilation is no sweep");
}
