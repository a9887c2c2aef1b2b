//! `bufscope whatif` and `bufscope fit` run as programs: the JSON shapes of issue 29, the
//! figures of tests/whatif.rs's hand-worked fixture through the command line, and the exit
//! codes (`fit` exits 1 when no plan fits).

mod common;

use serde_json::Value;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .args(args)
        .output()
        .expect("bufscope runs")
}

fn tpu_000() -> String {
    common::fixtures_dir()
        .join("tpu/000_0cb419b3147a3cb6.txt")
        .to_string_lossy()
        .into_owned()
}

fn json(out: &Output) -> Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn whatif_json_on_the_hand_worked_fixture() {
    let f = tpu_000();
    let j = json(&run(&["whatif", &f, "--remat", "copy-start.1{0}", "--json"]));
    assert_eq!(j["estimate"], true);
    assert!(j["assumptions"].as_str().unwrap().starts_with("An estimate, not a compile"));
    let spaces = j["modules"][0]["memory_spaces"].as_array().unwrap();
    let vmem = spaces.iter().find(|s| s["color"] == 1).unwrap();
    // tests/whatif.rs: vmem peaks at 41472 bytes at step 5, before the value is idle.
    for key in ["peak_before", "peak_after"] {
        assert_eq!(vmem[key], 41472, "{key}");
    }
    assert_eq!((vmem["step_after"].as_u64(), vmem["host_bytes_added"].as_u64()), (Some(5), Some(0)));
    // Offloaded: the host holds its 16384 bytes, two copies.
    let j = json(&run(&["whatif", &f, "--offload", "copy-start.1{0}", "--json"]));
    let vmem = &j["modules"][0]["memory_spaces"].as_array().unwrap()[1];
    assert_eq!((vmem["color"].as_u64(), vmem["host_bytes_added"].as_u64(), vmem["copies"].as_u64()), (Some(1), Some(16384), Some(2)));
    // The table says it is an estimate.
    let out = run(&["whatif", &f, "--remat", "copy-start.1{0}"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("estimated peak after") && text.contains("An estimate"), "{text}");
}

#[test]
fn exit_codes() {
    let f = tpu_000();
    // A value no module has, --keep without --remat-loops: nothing to show (1).
    assert_eq!(run(&["whatif", &f, "--remat", "no.such{0}"]).status.code(), Some(1));
    assert_eq!(run(&["whatif", &f, "--keep", "dot"]).status.code(), Some(1));
    // Wrong arguments (2): no capacity, a capacity that reads as nothing.
    assert_eq!(run(&["fit", &f]).status.code(), Some(2));
    assert_eq!(run(&["fit", &f, "--capacity", "12 parsecs"]).status.code(), Some(2));
    assert_eq!(run(&["whatif", &f, "--remat-loops", "--keep", "("]).status.code(), Some(2));
    // tpu/000's default memory space peaks at 65,536 bytes at step 13 (Arg_1.2 32768,
    // Arg_2.3 16384, Arg_0.1 8192, the output fusion 8192): it fits 1 GiB with an empty plan,
    // and nothing fits 1 byte (arguments used at the last step, and the output).
    let j = json(&run(&["fit", &f, "--capacity", "1GiB", "--json"]));
    assert_eq!((j["fits"].as_bool(), j["plan"].as_array().map(Vec::len)), (Some(true), Some(0)));
    assert_eq!((j["peak_before"].as_u64(), j["peak_after"].as_u64()), (Some(65536), Some(65536)));
    let out = run(&["fit", &f, "--capacity", "1", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["fits"], false);
    for key in ["module", "plan", "peak_before", "peak_after", "fits", "remains", "estimate"] {
        assert!(!j[key].is_null() || key == "remains", "{key}");
    }
}

#[test]
fn fit_on_lm_scan_remat_oom() {
    let Some(dumps) = common::shared_dumps_or_skip("fit_on_lm_scan_remat_oom") else { return };
    let base = dumps.join("tpu-aot/jax0.12-libtpu0.0.50/tpu_v5e_lm_scan_remat_OOM");
    let files: Vec<String> = [".buffer-assignment.txt", ".buffer-assignment-values.txt", ".live-range.txt", ".after_optimizations.txt"]
        .iter()
        .map(|s| format!("{}{s}", base.display()))
        .collect();
    let mut args: Vec<&str> = vec!["fit", "--capacity", "v5e", "--json"];
    args.extend(files.iter().map(String::as_str));
    let j = json(&run(&args));
    assert_eq!(j["module"], "tpu_v5e_lm_scan_remat_OOM");
    assert_eq!(j["fits"], true);
    let plan = j["plan"].as_array().unwrap();
    assert_eq!((plan[0]["action"].as_str(), plan[0]["what"].as_str()), (Some("remat_loop"), Some("while.43{2}")));
    assert!(plan.iter().any(|p| p["offload_only"] == true));
    args.push("--no-offload");
    let out = run(&args);
    assert_eq!(out.status.code(), Some(1), "no plan fits without offloading");
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sentence = j["remains"]["sentence"].as_str().unwrap();
    assert!(sentence.contains("shard or offload the optimizer state"), "{sentence}");
}

#[test]
fn whatif_svg_draws_each_estimate_dashed_with_its_label() {
    let f = tpu_000();
    let out = std::env::temp_dir().join(format!("bufscope-whatif-{}.svg", std::process::id()));
    let o = out.to_string_lossy().into_owned();
    let r = run(&["whatif", &f, "--remat", "copy-start.1{0}", "--svg", &o, "--capacity", "40000"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let svg = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    // One label per memory space (tpu/000 has three), each saying it is an estimate; vmem's
    // (tests/whatif.rs) peaks at 41472 bytes at step 5 and exceeds 40000 bytes by 1472.
    assert_eq!(svg.matches("estimate: peak").count(), 3);
    assert!(svg.contains("estimate: peak 40.5 KiB (41,472 B) @ step 5, exceeds 39.1 KiB by 1.4 KiB"), "vmem's label");
    // Dashes in the estimate's colour.
    assert!(svg.matches("fill=\"#008A7A\"").count() > 20);
}

/// The four files of a real run, for `fit`.
fn run_files(base: &std::path::Path) -> Vec<String> {
    [".buffer-assignment.txt", ".buffer-assignment-values.txt", ".live-range.txt", ".after_optimizations.txt"]
        .iter()
        .map(|s| format!("{}{s}", base.display()))
        .collect()
}

/// How aggressive a policy is (the ladder's order), to compare with the real recompiles.
fn rank(name: &str) -> u8 {
    match name {
        "dots_saveable" => 1,
        "dots_with_no_batch_dims_saveable" => 2,
        "save_only_these_names" => 3,
        // Offload policies drop from HBM what nothing_saveable drops (to the host).
        "nothing_saveable" | "offload_dot_with_no_batch_dims" | "save_and_offload_only_these_names" => 4,
        _ => 0,
    }
}

#[test]
fn fit_plan_names_a_policy_on_the_remat_ladder() {
    let Some(dumps) = common::shared_dumps_or_skip("fit_plan_names_a_policy_on_the_remat_ladder") else { return };
    let ladder = dumps.join("tpu-aot/remat-ladder");
    // The README's real peaks: dots_with_no_batch_dims 2.63 GiB, save_only_these_names 2.21
    // GiB, nothing_saveable 2.03 GiB. Under each capacity the plan for the no-remat compile
    // names a policy at least as aggressive as the least one whose real peak meets it.
    for (cap, least) in [("2.1GiB", "nothing_saveable"), ("2.3GiB", "save_only_these_names"), ("2.7GiB", "dots_with_no_batch_dims_saveable")] {
        let files = run_files(&ladder.join("tpu_v5e_lm_scan_plain"));
        let mut args: Vec<&str> = vec!["fit", "--capacity", cap, "--json"];
        args.extend(files.iter().map(String::as_str));
        let j = json(&run(&args));
        let name = j["policy"]["name"].as_str().unwrap_or("");
        assert!(rank(name) >= rank(least), "{cap}: {name} is weaker than {least}");
        let snippet = j["policy"]["snippet"].as_str().unwrap();
        assert!(snippet.contains(&format!("jax.checkpoint_policies.{name}")), "{snippet}");
        // Named by the heuristic from the greedy plan, or a stock policy's own estimate.
        let why = j["policy"]["why"].as_str().unwrap();
        assert!(why.contains("heuristic") || why.contains("cheapest in FLOPs"), "{why}");
    }
}

#[test]
fn fit_plan_devices_needed_on_the_real_oom() {
    let Some(dumps) = common::shared_dumps_or_skip("fit_plan_devices_needed_on_the_real_oom") else { return };
    let files = run_files(&dumps.join("tpu-aot/jax0.12-libtpu0.0.50/tpu_v5e_lm_scan_remat_OOM"));
    let mut args: Vec<&str> = vec!["fit", "--capacity", "v5e", "--no-offload", "--json"];
    args.extend(files.iter().map(String::as_str));
    let out = run(&args);
    assert_eq!(out.status.code(), Some(1));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &j["devices_needed"];
    let (now, state, rest, cap) = (d["now"].as_u64().unwrap(), d["state_bytes"].as_u64().unwrap(), d["rest_bytes"].as_u64().unwrap(), j["capacity_bytes"].as_u64().unwrap());
    assert_eq!(now, 4, "the 2×2 mesh");
    let needed = d["needed"].as_u64().unwrap();
    // The smallest N' with rest + now × state / N' within the capacity.
    assert!(needed > now && rest + now * state / needed <= cap, "{d}");
    assert!(rest + now * state / (needed - 1) > cap, "{d}: not the smallest");
    assert!(d["sentence"].as_str().unwrap().contains(&format!("{needed} devices")));
    // A capacity below the rest alone: no number of devices fits.
    args[2] = "4GiB";
    let j: Value = serde_json::from_slice(&run(&args).stdout).unwrap();
    assert!(j["devices_needed"]["needed"].is_null());
    assert!(j["devices_needed"]["sentence"].as_str().unwrap().starts_with("No number of devices"));
}

#[test]
fn whatif_policy_json_and_help() {
    // --help says that checkpoint names do not survive compilation.
    let help = run(&["whatif", "--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("do not survive compilation") && text.contains("save_and_offload_only_these_names(REGEX)"), "{text}");
    // A name that is no policy, a named policy without its REGEX: wrong arguments (2).
    let f = tpu_000();
    assert_eq!(run(&["whatif", &f, "--policy", "everything_saveable"]).status.code(), Some(2));
    assert_eq!(run(&["whatif", &f, "--policy", "save_only_these_names"]).status.code(), Some(2));
    assert_eq!(run(&["whatif", &f, "--policy", "nothing_saveable", "--remat-loops"]).status.code(), Some(2));
    let Some(dumps) = common::shared_dumps_or_skip("whatif_policy_json_and_help") else { return };
    let files = run_files(&dumps.join("tpu-aot/remat-ladder/tpu_v5e_lm_scan_plain"));
    let mut args: Vec<&str> = vec!["whatif", "--json", "--policy", "offload_dot_with_no_batch_dims"];
    args.extend(files.iter().map(String::as_str));
    let j = json(&run(&args));
    let m = &j["modules"][0];
    assert_eq!(m["policy"], "offload_dot_with_no_batch_dims");
    let (added, step) = (m["flops_added"].as_u64().unwrap(), m["step_flops"].as_u64().unwrap());
    assert!(added > 0 && added < step / 10, "{added} of {step}");
    let hbm = m["memory_spaces"].as_array().unwrap().iter().find(|s| s["color"] == 0).unwrap();
    // The offloaded outputs' bytes (576 MiB, the real offload compile's colour 5) on the host.
    let offloaded: u64 = m["loop_outputs_offloaded"].as_array().unwrap().iter().map(|l| l["bytes"].as_u64().unwrap()).sum();
    assert_eq!(hbm["host_bytes_added"].as_u64(), Some(576 << 20));
    assert!(offloaded > 0 && offloaded <= 576 << 20);
    assert_eq!(hbm["copied_bytes"].as_u64(), Some(2 * (576 << 20)));
}
