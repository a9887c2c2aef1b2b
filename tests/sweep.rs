//! `bufscope::answers::sweep` and `bufscope sweep` on real TPU v5e compilations of one
//! program: the batch sweep of `../shared/dumps/tpu-aot` (batch 8, 16, 32, 48, 64: per-device
//! `tokens` dim 0 = 4 … 32), its sequence points (512, 1024), and the layers sweep (4 layers,
//! `fixtures/sweep/`, made by tests/bench/make_sweep.sh, beside the shared 8), and batch 272,
//! whose compile failed (`fixtures/sweep/`, with its `.error.txt`), and batch 264, which
//! compiled at 98 % of the capacity with the compiler's own rematerialisation. The varied
//! dimension is named, two varying dimensions are an error (exit 2), the fit predicts a
//! left-out point within 10 %, and a pinned peak is never extrapolated. MaxText's own
//! `train_compile` of llama3.1-8b at per-device batch 1 to 8 (`fixtures/sweep-maxtext/`): the
//! varied dimension is the batch and nothing above the real first failure is said to fit.

mod common;
#[path = "common/sweep.rs"]
mod sweep_points;

use std::path::PathBuf;
use std::process::Command;

use bufscope::answers::capacity::parse_capacity;
use bufscope::answers::sweep::fit::steepest_slope;
use bufscope::answers::sweep::{compiler_remats, sweep, Form, Options, Point};
use bufscope::pipeline::{open_files, Loaded};
use sweep_points::{batch_sweep, load, points};

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
    // The fit says up to 123 per device; past twice the largest compiled (32) nothing is
    // said to fit, so 64, and no first value that does not.
    assert_eq!((hbm.largest_fitting, hbm.first_not_fitting), (Some(64), None));
    assert!(hbm.sentence.contains("up to at least 64"), "{}", hbm.sentence);
    let largest = hbm.fit_says_largest.unwrap();
    let first = largest + 1;
    assert!(model.at(largest as f64) + model.max_residual_bytes <= capacity.bytes);
    // Beyond 32 the peak is taken to grow at the steepest growth measured (4 → 8 here).
    let measured: Vec<(f64, u64)> = hbm.points.iter().map(|p| (p.value as f64, p.peak_live_bytes)).collect();
    let slope = steepest_slope(&measured);
    assert!((slope - (peaks[1] - peaks[0]) as f64 / 4.0).abs() < 1.0, "{slope}");
    let grown = |v: u64| peaks[4] as f64 + slope * (v - 32) as f64 + model.max_residual_bytes as f64;
    assert!(grown(largest) <= capacity.bytes as f64 && grown(first) > capacity.bytes as f64);
    assert!(largest > 32 && largest < 400, "{largest}");
    // The categories at the peak: the model parameters and optimizer state do not grow.
    let params = hbm.categories.iter().find(|c| c.label == "model parameters").unwrap();
    assert_eq!(params.model.as_ref().unwrap().form, Form::Constant);
}

#[test]
fn a_failed_compile_is_a_point_that_does_not_fit() {
    let Some(dumps) = common::shared_dumps_or_skip("a_failed_compile_is_a_point_that_does_not_fit") else {
        return;
    };
    let mut loads = batch_sweep(&dumps);
    loads.push(load(&common::fixtures_dir().join("sweep"), "tpu_v5e_lm_scan_remat_b272"));
    let capacity = parse_capacity("v5e").unwrap();
    let s = sweep(&points(&loads), &Options { capacity: Some(capacity.clone()), at: Vec::new() }).unwrap();
    assert_eq!(s.varied.values, [4, 8, 16, 24, 32, 136]);
    let hbm = &s.spaces[0];
    let failed = &hbm.points[5];
    assert!(failed.failed && !failed.pinned, "{failed:?}");
    // XLA still wrote the dump: its peak is over the capacity (15.87G of temporaries, the error says).
    assert!(failed.peak_live_bytes > capacity.bytes);
    assert!(failed.compiler_remats > 0, "the compiler tried to rematerialise");
    // Left out of the fit: the same line as without it.
    let without = sweep(&points(&loads[..5]), &Options::default()).unwrap();
    assert_eq!(hbm.model, without.spaces[0].model);
    assert_eq!((hbm.largest_fitting, hbm.first_not_fitting), (Some(64), Some(136)));
    // From the points below alone, never above the real one: batch 272 (136) failed, so the
    // largest that fits is at most 135. The line alone (1.1 GiB + 107.5 MiB·v, plus its
    // worst residual) would say 138; the steepest growth measured between two points stops it.
    for k in 2..=5 {
        let s = sweep(&points(&loads[..k]), &Options { capacity: Some(capacity.clone()), at: Vec::new() }).unwrap();
        let said = s.spaces[0].largest_fitting.unwrap();
        assert!(said < 136, "from {k} points: {said}");
    }
}

#[test]
fn a_peak_pinned_near_the_capacity_is_not_extrapolated() {
    let Some(dumps) = common::shared_dumps_or_skip("a_peak_pinned_near_the_capacity_is_not_extrapolated") else {
        return;
    };
    let mut loads = batch_sweep(&dumps);
    let fixtures = common::fixtures_dir().join("sweep");
    loads.push(load(&fixtures, "tpu_v5e_lm_scan_remat_b264"));
    loads.push(load(&fixtures, "tpu_v5e_lm_scan_remat_b272"));
    let capacity = parse_capacity("v5e").unwrap();
    let s = sweep(&points(&loads), &Options { capacity: Some(capacity.clone()), at: vec![140] }).unwrap();
    assert_eq!(s.varied.values, [4, 8, 16, 24, 32, 132, 136]);
    let hbm = &s.spaces[0];
    // Batch 264 compiled at 98 % of 15.75 GiB with the compiler's own .remat clones: pinned.
    let b264 = &hbm.points[5];
    assert!(b264.pinned && !b264.failed && b264.compiler_remats > 0, "{b264:?}");
    assert!(b264.peak_live_bytes <= capacity.bytes && b264.peak_live_bytes as f64 > 0.97 * capacity.bytes as f64);
    assert!(hbm.pinned);
    assert!(hbm.sentence.starts_with("pinned: at 132"), "{}", hbm.sentence);
    assert!(hbm.sentence.contains(".remat"), "{}", hbm.sentence);
    // The measured points decide: 132 compiled, 136 failed; the fit leaves 264 out.
    assert_eq!((hbm.largest_fitting, hbm.first_not_fitting), (Some(132), Some(136)));
    let without = sweep(&points(&loads[..5]), &Options::default()).unwrap();
    assert_eq!(hbm.model, without.spaces[0].model);
    // Without the failed compile, still nothing above the pinned point is said to fit.
    let s = sweep(&points(&loads[..6]), &Options { capacity: Some(capacity), at: Vec::new() }).unwrap();
    assert_eq!((s.spaces[0].largest_fitting, s.spaces[0].first_not_fitting), (Some(132), None));
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
fn a_remat_ladder_is_no_sweep_though_its_batch_varies() {
    use bufscope::answers::sweep::is_sweep;
    let Some(dumps) = common::shared_dumps_or_skip("a_remat_ladder_is_no_sweep_though_its_batch_varies") else {
        return;
    };
    // The ladder's folder: one LM under several policies (per-device batch 8) and the remat
    // policy at batch 4 and 16. The shapes say batch varies; the programs at batch 8 differ.
    let ladder = dumps.join("tpu-aot/remat-ladder");
    let stems = ["tpu_v5e_lm_scan_plain", "tpu_v5e_lm_scan_remat_b8", "tpu_v5e_lm_scan_remat_b32", "tpu_v5e_lm_scan_dots"];
    let loads: Vec<Loaded> = stems.iter().map(|s| load(&ladder, s)).collect();
    let ladder_points = points(&loads);
    let e = sweep(&ladder_points, &Options::default()).unwrap_err();
    assert!(e.starts_with("compilations 1 and 4 have the same shapes (parameter tokens, dim 0 = 8) but are different programs"), "{e}");
    let modules: Vec<&bufscope::model::Module> = ladder_points.iter().map(|p| p.module).collect();
    assert!(!is_sweep(&modules), "the page would open it as a sweep");
    // One policy at three batches is a sweep; the same compilation twice is the same point.
    let aot = dumps.join("tpu-aot");
    let mut loads = batch_sweep(&dumps);
    loads.truncate(3);
    loads.push(load(&aot.join("jax0.12-libtpu0.0.50"), "tpu_v5e_lm_scan_remat"));
    assert!(sweep(&points(&loads), &Options::default()).is_ok());
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
    // A gzipped file brings its run's files, the `.error.txt` among them: a failed point.
    let b272 = path(common::fixtures_dir().join("sweep/tpu_v5e_lm_scan_remat_b272.buffer-assignment.txt.gz"));
    let out = bufscope(&["sweep", "--json", "--capacity", "v5e", &b8, &b16, &b272]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["varied"]["values"], serde_json::json!([4, 8, 136]));
    assert_eq!(json["spaces"][0]["points"][2]["failed"], true);
    assert!(json["spaces"][0]["first_not_fitting"].as_u64().unwrap() <= 136);
    // A file brings its run's files: the HLO text too (the trip count needs it).
    let out = bufscope(&["sweep", &b8, &b16, &s512]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("two dimensions vary") && err.contains("dim 0") && err.contains("dim 1"), "{err}");
    assert_eq!(bufscope(&["sweep", &b8]).status.code(), Some(2), "one compilation is no sweep");
}

#[test]
fn any_two_compilations_give_an_answer_or_a_sentence() {
    // Different programs, versions and backends side by side: never a panic, and where
    // something is said to fit, the capacity holds the form there.
    let loads: Vec<Loaded> = (common::fixture_modules().iter())
        .map(|f| open_files(f.inputs()))
        .filter(|l| !l.modules.is_empty())
        .collect();
    let capacity = parse_capacity("1MiB").unwrap();
    let (mut answers, mut sentences) = (0, 0);
    for pair in loads.windows(2) {
        let options = Options { capacity: Some(capacity.clone()), at: vec![0, 1, u64::MAX] };
        match sweep(&points(pair), &options) {
            Ok(s) => {
                answers += 1;
                for sp in s.spaces.iter().filter(|sp| sp.color == 0) {
                    if let (Some(l), Some(m)) = (sp.largest_fitting, &sp.model) {
                        let measured = sp.points.iter().any(|p| p.value == l);
                        assert!(measured || m.at(l as f64) <= capacity.bytes, "{}: {sp:?}", s.module);
                    }
                }
            }
            Err(e) => {
                sentences += 1;
                assert!(e.contains("vary"), "{e}");
            }
        }
    }
    assert!(answers + sentences == loads.len() - 1 && sentences > 0, "{answers} {sentences}");
}

/// MaxText's own `train_compile` of llama3.1-8b on v5e-16 at per-device batch 1 to 8
/// (`fixtures/sweep-maxtext`, made by tests/bench/make_maxtext_sweep.sh): 1 to 5 compiled, 6,
/// 7 and 8 failed (`CompileTimeHbmOom`, `.error.txt`).
fn maxtext_sweep() -> Vec<Loaded> {
    let dir = common::fixtures_dir().join("sweep-maxtext");
    (1..=8).map(|b| load(&dir, &format!("tpu_v5e-16_maxtext_llama3.1-8b_pdb{b}"))).collect()
}

#[test]
fn the_maxtext_batch_sweep_never_says_more_fits_than_compiled() {
    let loads = maxtext_sweep();
    let capacity = parse_capacity("v5e").unwrap();
    let options = Options { capacity: Some(capacity), at: Vec::new() };
    let all = points(&loads);
    // The scheduler swaps the backward scan and XLA's loop of a dot_general between per-device
    // batch 4 and 5: paired by place they were two trip counts varying.
    let s = sweep(&all, &options).unwrap();
    assert_eq!(s.varied.what, "parameter data['inputs'], dim 0");
    assert_eq!(s.varied.values, [1, 2, 3, 4, 5, 6, 7, 8]);
    let hbm = &s.spaces[0];
    let failed: Vec<u64> = hbm.points.iter().filter(|p| p.failed).map(|p| p.value).collect();
    assert_eq!(failed, [6, 7, 8], "the compiles whose .error.txt says CompileTimeHbmOom");
    assert_eq!((hbm.largest_fitting, hbm.first_not_fitting), (Some(5), Some(6)));
    // From the first k compiles that fit, never more than 5 is said to fit.
    for k in 2..=5 {
        let s = sweep(&all[..k], &options).unwrap();
        let said = s.spaces[0].largest_fitting.unwrap();
        assert!(said <= 5, "from per-device batch 1..{k}: {said} said to fit; 6 failed");
        assert!(said >= k as u64, "from 1..{k}: {said}, below a compile that fitted");
    }
}
