//! `bufscope diff` run as a program: a fixture against itself, cpu_mlp_train from jax
//! 0.4.38 to 0.6.2 (its peak grows by 29,700 B; the peaks themselves are taken from
//! `bufscope summary --json`, a separate command) against byte and percentage limits, the
//! JSON names, whole folders paired by name, pairing by hand, and the exit code 2 of inputs
//! and arguments that cannot be read.

mod common;

use serde_json::Value;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .args(args)
        .output()
        .expect("bufscope runs")
}

fn fixture(rel: &str) -> String {
    common::fixtures_dir()
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn mlp(version: &str) -> String {
    fixture(&format!(
        "cpu/{version}/cpu_mlp_train.buffer-assignment.txt"
    ))
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("exited")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json(args: &[&str]) -> (i32, Value) {
    let out = run(args);
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stderr(&out)));
    (code(&out), v)
}

/// `summary --json`'s peak of colour 0 of the one module in `file`.
fn summary_peak(file: &str) -> u64 {
    let (c, v) = json(&["summary", "--json", file]);
    assert_eq!(c, 0);
    v["modules"][0]["memory_spaces"][0]["peak_live_bytes"]
        .as_u64()
        .unwrap()
}

#[test]
fn a_fixture_against_itself_passes_the_strictest_gate() {
    let dir = fixture("cpu/jax0.10.2");
    let (c, v) = json(&["diff", "--json", "--max-growth", "0", &dir, &dir]);
    assert_eq!(c, 0);
    let modules = v["modules"].as_array().unwrap();
    assert_eq!(modules.len(), 4);
    for m in modules {
        assert_eq!(m["base_name"], m["new_name"]);
        for s in m["spaces"].as_array().unwrap() {
            assert_eq!(s["delta_bytes"], 0, "{}", m["base_name"]);
            assert_eq!(s["base_peak_bytes"], s["new_peak_bytes"]);
            for class in ["new", "gone", "grown", "shrunk"] {
                assert!(s["changes"][class].as_array().unwrap().is_empty());
            }
        }
    }
    assert_eq!(v["verdict"]["passed"], true);
    let out = run(&["diff", "--max-growth", "0", &dir, &dir]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Gate passed"), "{text}");
    assert!(text.contains("0 new, 0 gone, 0 grown, 0 shrunk"), "{text}");
}

#[test]
fn the_gate_on_a_real_growth() {
    let (base, new) = (mlp("jax0.4.38"), mlp("jax0.6.2"));
    let (bp, np) = (summary_peak(&base), summary_peak(&new));
    assert_eq!(np - bp, 29_700);
    let gate = |limit: &str| {
        let out = run(&["diff", &base, &new, "--max-growth", limit]);
        (code(&out), stdout(&out))
    };
    assert_eq!(gate("29700").0, 0);
    assert_eq!(gate("29.7KB").0, 0);
    let (c, text) = gate("29699");
    assert_eq!(c, 1);
    assert!(text.contains("Gate FAILED"), "{text}");
    assert!(
        text.contains("cpu_mlp_train, memory space 0: +29,700 B, allowed +29,699 B"),
        "{text}"
    );
    // The real percentage: 29,700 B of the base peak.
    let pct = 29_700.0 * 100.0 / bp as f64;
    assert!(pct < 1.0);
    assert_eq!(gate("1%").0, 0);
    assert_eq!(gate(&format!("{}%", pct * 1.001)).0, 0);
    assert_eq!(gate(&format!("{}%", pct * 0.999)).0, 1);
    // Without a limit: printed, exit 0; the other way round the peak shrinks.
    let out = run(&["diff", &base, &new]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(text.contains("+29,700 B"), "{text}");
    assert!(text.contains(&format!("({:+.2}%)", pct)), "{text}");
    assert!(text.contains("relative program position"), "{text}");
    assert!(!text.contains("Gate"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    assert_eq!(code(&run(&["diff", &new, &base, "--max-growth", "0"])), 0);
}

#[test]
fn json_names_and_the_verdict() {
    let (base, new) = (mlp("jax0.4.38"), mlp("jax0.6.2"));
    let (c, v) = json(&["diff", "--json", &base, &new]);
    assert_eq!(c, 0);
    assert!(v.get("verdict").is_none());
    let m = &v["modules"][0];
    assert_eq!(m["paired_by"], "exact_name");
    let s = &m["spaces"][0];
    assert_eq!(s["color"], 0);
    assert_eq!(s["base_peak_bytes"], summary_peak(&base));
    assert_eq!(s["new_peak_bytes"], summary_peak(&new));
    assert_eq!(s["delta_bytes"], 29_700);
    for class in ["new", "gone", "grown", "shrunk", "unchanged"] {
        assert!(s["changes"][class].is_array(), "{class}");
    }
    let (c, v) = json(&["diff", "--json", &base, &new, "--max-growth", "1KiB"]);
    assert_eq!(c, 1);
    let verdict = &v["verdict"];
    assert_eq!(verdict["passed"], false);
    assert_eq!(verdict["limit"]["bytes"], 1024);
    assert_eq!(verdict["failures"][0]["delta_bytes"], 29_700);
    assert_eq!(v["modules"][0]["spaces"][0]["delta_bytes"], 29_700);
}

#[test]
fn folders_pair_by_name_and_list_the_unpaired() {
    let (old, new) = (fixture("cpu/jax0.6.2"), fixture("cpu/jax0.10.2"));
    let out = run(&["diff", &old, &new]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let only = text
        .split("Only in the base (2), not compared:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    let listed: Vec<&str> = only.lines().take(2).map(str::trim).collect();
    assert_eq!(listed, ["cpu_transformer_bf16", "cpu_tuple_consts"]);
    assert!(!text.contains("Only in the new"), "{text}");
    for name in [
        "cpu_cond_switch",
        "cpu_mlp_train",
        "cpu_scan_layers",
        "cpu_tiny",
    ] {
        assert!(
            text.contains(&format!("\n{name} (paired by name)\n")),
            "{name}: {text}"
        );
    }
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    let (_, v) = json(&["diff", "--json", &old, &new]);
    assert_eq!(v["unpaired_base"].as_array().unwrap().len(), 2);
    assert_eq!(v["modules"].as_array().unwrap().len(), 4);
}

#[test]
fn pairs_by_hand() {
    let tiny = fixture("cpu/jax0.6.2/cpu_tiny.buffer-assignment.txt");
    let new = fixture("cpu/jax0.10.2");
    let (c, v) = json(&[
        "diff",
        "--json",
        &tiny,
        &new,
        "--pair",
        "cpu_tiny=cpu_mlp_train",
    ]);
    assert_eq!(c, 0);
    let m = &v["modules"][0];
    assert_eq!(
        (&m["base_name"], &m["new_name"], &m["paired_by"]),
        (
            &Value::from("cpu_tiny"),
            &Value::from("cpu_mlp_train"),
            &Value::from("by_hand")
        )
    );
    assert_eq!(v["unpaired_new"].as_array().unwrap().len(), 3);
    let out = run(&["diff", &tiny, &new, "--pair", "cpu_tiny=nothing_like_it"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("no module named 'nothing_like_it'"));
    assert_eq!(code(&run(&["diff", &tiny, &new, "--pair", "cpu_tiny"])), 2);
}

#[test]
fn unreadable_inputs_and_wrong_arguments_exit_2() {
    let good = mlp("jax0.6.2");
    let missing = "/nonexistent/bufscope/base.txt";
    let out = run(&["diff", missing, &good]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains(missing), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    let out = run(&["diff", &good, missing, "--max-growth", "5%"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("the new"), "{}", stderr(&out));
    // A file that is no dump.
    let not_a_dump = common::manifest_dir().join("Cargo.toml");
    let out = run(&["diff", &good, &not_a_dump.to_string_lossy()]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("not an XLA buffer-assignment dump"));
    for limit in ["5 apples", "-5%", "%", ""] {
        let out = run(&["diff", &good, &good, &format!("--max-growth={limit}")]);
        assert_eq!(code(&out), 2, "{limit}");
        assert!(stderr(&out).contains("--max-growth"), "{limit}");
    }
    assert_eq!(code(&run(&["diff", &good])), 2);
    assert_eq!(code(&run(&["diff", &good, &good, &good])), 2);
}

/// A dump folder of a compile that ran out of memory holds the error beside the dump
/// (`*.error.txt`): the folders still compare, and the message is said, not compared.
#[test]
fn a_folder_with_an_error_beside_its_dump_compares() {
    let test = "a_folder_with_an_error_beside_its_dump_compares";
    let Some(dir) = common::shared_dumps_or_skip(test) else {
        return;
    };
    let base = dir.join("tpu-aot/jax0.6.2-libtpu0.0.17");
    let new = dir.join("tpu-aot/jax0.12-libtpu0.0.50");
    let out = run(&["diff", base.to_str().unwrap(), new.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // Both folders hold tpu_v5e_lm_scan_remat and its _OOM run.
    assert!(stdout(&out).contains("tpu_v5e_lm_scan_remat_OOM (paired by name)"), "{}", stdout(&out));
    assert!(stderr(&out).contains("also holds an out-of-memory message, not compared"), "{}", stderr(&out));
}
