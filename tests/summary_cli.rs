//! `bufscope summary` run as a program: the answers of issue 10 in its JSON and its table,
//! `--capacity`, `--top` and `--step`, and the exit code of a capacity it cannot read; and
//! its parallel read (`Used values` on a second thread) printing what one pass gives.
//! The expected figures come from elsewhere: XProf 2.24.2's peak heap for the same
//! compilations, and the padding of TPU dump 000 added up by hand (tests/answers.rs).

mod common;

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .args(args)
        .output()
        .expect("bufscope runs")
}

/// The dump files (not the memory-usage report) of a fixture module, as arguments.
fn fixture_files(folder: &str, stem: &str) -> Vec<String> {
    let dir: PathBuf = common::fixtures_dir().join(folder);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("{stem}.")) && !n.contains("memory-usage-report"))
        .map(|n| dir.join(n).to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{folder}/{stem}");
    files
}

/// `summary --json` with `extra` arguments.
fn summary_json(files: &[String], extra: &[&str]) -> Value {
    let mut args = vec!["summary", "--json"];
    args.extend(extra);
    args.extend(files.iter().map(String::as_str));
    let out = run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `summary --json` with `extra` arguments: the one memory space of colour `color`.
fn space_json(files: &[String], extra: &[&str], color: u64) -> Value {
    let json = summary_json(files, extra);
    let modules = json["modules"].as_array().unwrap();
    assert_eq!(modules.len(), 1);
    modules[0]["memory_spaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["color"] == color)
        .cloned()
        .unwrap_or_else(|| panic!("no memory space {color}"))
}

#[test]
fn xprof_peak_heap_is_what_xprof_reported() {
    for (stem, expected) in [
        ("cpu_mlp_train", 12_902_240u64),
        ("cpu_scan_layers", 27_879_532),
    ] {
        let s = space_json(&fixture_files("cpu/jax0.10.2", stem), &[], 0);
        assert_eq!(s["xprof_peak_heap_bytes"], expected, "{stem}");
        assert_eq!(s["three_peaks"]["xprof"]["bytes"], expected, "{stem}");
        let f = s["xprof_fragmentation"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&f), "{stem}: {f}");
        // XLA's figure beside bufscope's own, each with its sentence.
        assert_eq!(s["xla_peak_bytes"], s["three_peaks"]["xla"]["bytes"]);
        assert_eq!(s["xla_peak_time"], s["three_peaks"]["xla"]["step"]);
        assert!(s["xla_peak_bytes"].is_u64(), "{stem}");
        assert_eq!(s["three_peaks"]["occupied"]["bytes"], s["peak_live_bytes"]);
        // The listed peaks, by time, hold the space's peak and none above it.
        let peaks = s["peaks"].as_array().unwrap();
        assert!(
            peaks
                .iter()
                .any(|p| p["time"] == s["peak_time"] && p["bytes"] == s["peak_live_bytes"]),
            "{stem}: {peaks:?}"
        );
        let times: Vec<u64> = peaks.iter().map(|p| p["time"].as_u64().unwrap()).collect();
        assert!(times.windows(2).all(|w| w[0] < w[1]), "{stem}: {times:?}");
        assert!(peaks
            .iter()
            .all(|p| p["bytes"].as_u64() <= s["peak_live_bytes"].as_u64()));
        // The ranked lists keep to the default five rows and add up to at most the step.
        let a = &s["answers"];
        assert_eq!(a["step"], s["peak_time"]);
        assert_eq!(a["occupied_bytes"], s["peak_live_bytes"]);
        for list in ["source_lines", "op_name_groups", "top_padded_values"] {
            let rows = a[list].as_array().unwrap();
            assert!(
                !rows.is_empty() || list == "top_padded_values",
                "{stem}: {list}"
            );
            assert!(rows.len() <= 5, "{stem}: {list}");
        }
        let sum: u64 = (a["categories"].as_array().unwrap().iter())
            .map(|c| c["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(sum, a["occupied_bytes"].as_u64().unwrap(), "{stem}");
        // The new jax dumps come with their values file: idle stretches can be answered.
        assert_eq!(a["idle"]["available"], true, "{stem}");
        assert!(a["capacity"].is_null());
    }
}

#[test]
fn new_fields_follow_the_existing_ones() {
    let files = fixture_files("cpu/jax0.10.2", "cpu_tiny");
    let mut args = vec!["summary", "--json"];
    args.extend(files.iter().map(String::as_str));
    let text = String::from_utf8(run(&args).stdout).unwrap();
    let at = |key: &str| {
        text.find(&format!("\"{key}\":"))
            .unwrap_or_else(|| panic!("no {key}"))
    };
    let order = [
        "color",
        "allocated_bytes",
        "values",
        "peak_live_bytes",
        "peak_time",
        "xprof_peak_heap_bytes",
        "xprof_fragmentation",
        "peak_padding_bytes",
        "padding_bytes_all_values",
        "xla_peak_bytes",
        "xla_peak_time",
        "three_peaks",
        "answers",
        "peaks",
    ];
    let memory_spaces = at("memory_spaces");
    let positions: Vec<usize> = order
        .iter()
        .map(|k| memory_spaces + text[memory_spaces..].find(&format!("\"{k}\":")).unwrap())
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    assert!(at("warnings") > positions[12]);
}

#[test]
fn peak_padding_of_tpu_000_is_what_was_added_by_hand() {
    let files = fixture_files("tpu", "000_0cb419b3147a3cb6");
    let s = space_json(&files, &[], 0);
    assert_eq!(s["peak_padding_bytes"], 34_816);
    // Over all colour-0 values: tests/answers.rs adds them up from the dump text.
    assert_eq!(s["padding_bytes_all_values"], 34_816 + 8 + 8 + 16 + 9 * 508);
    let a = &s["answers"];
    assert_eq!(a["padding_bytes"], 34_816);
    let names: Vec<&str> = (a["top_padded_values"].as_array().unwrap().iter())
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names[..3], ["Arg_1.2", "Arg_2.3", "fusion"]);
    // `--top 2` keeps two rows; `--step 6` answers at step 6, the peak padding stays.
    let s = space_json(&files, &["--top", "2", "--step", "6"], 0);
    let a = &s["answers"];
    assert_eq!(a["step"], 6);
    assert_eq!(a["top_padded_values"].as_array().unwrap().len(), 2);
    assert_eq!(s["peak_padding_bytes"], 34_816);
}

#[test]
fn capacity_gives_a_verdict_with_the_headroom() {
    let files = fixture_files("cpu/jax0.10.2", "cpu_mlp_train");
    let s = space_json(&files, &["--capacity", "16GiB"], 0);
    let v = &s["answers"]["capacity"];
    let peak = s["peak_live_bytes"].as_u64().unwrap();
    assert_eq!(v["capacity_bytes"], 16u64 << 30);
    assert_eq!(v["peak_bytes"], peak);
    assert_eq!(v["fits"], true);
    assert_eq!(v["headroom_bytes"], (16u64 << 30) - peak);
    assert_eq!(v["excess_bytes"], 0);
    // A capacity below the peak: the excess.
    let s = space_json(&files, &["--capacity", "1MiB"], 0);
    let v = &s["answers"]["capacity"];
    assert_eq!(v["fits"], false);
    assert_eq!(v["excess_bytes"], peak - (1 << 20));
    // A device name, and the text table says the verdict.
    let mut args = vec!["summary", "--capacity", "v5e"];
    args.extend(files.iter().map(String::as_str));
    let out = run(&args);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("    capacity: 15.7 GiB of headroom on 15.75 GiB (TPU v5e"), "{text}");
    // A TPU's name is the HBM its compiler can use, and the table says so (its lines joined).
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("on 15.75 GiB (TPU v5e: 15.75 GiB usable by XLA of 16 GiB HBM) at the peak"),
        "{text}"
    );
    let json = summary_json(&files, &["--capacity", "v5e"]);
    let cap = &json["modules"][0]["memory_spaces"][0]["answers"]["capacity"];
    assert_eq!(cap["capacity_bytes"], 16_911_433_728u64, "{cap}");
}

#[test]
fn the_help_says_what_a_tpu_name_means_and_a_typed_size_is_printed_as_typed() {
    let help = String::from_utf8(run(&["summary", "--help"]).stdout).unwrap();
    assert!(help.contains("TPU v5e: 15.75 GiB usable by XLA of 16 GiB HBM"), "{help}");
    let help = String::from_utf8(run(&["fit", "--help"]).stdout).unwrap();
    assert!(help.contains("TPU v5e: 15.75 GiB usable by XLA of 16 GiB HBM"), "{help}");
    // The same bytes typed three ways: each printed as typed, none as "15.8 GiB".
    let files = fixture_files("cpu/jax0.10.2", "cpu_mlp_train");
    for typed in ["15.75G", "15.75GiB", "16911433728"] {
        let mut args = vec!["summary", "--capacity", typed];
        args.extend(files.iter().map(String::as_str));
        let text = String::from_utf8(run(&args).stdout).unwrap();
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains(&format!("of headroom on {typed} at the peak")), "{typed}: {text}");
    }
}

/// Every memory space's `answers.capacity` of `summary --json` with `extra` arguments, by
/// colour.
fn capacities(files: &[String], extra: &[&str]) -> Vec<(u64, Value)> {
    let json = summary_json(files, extra);
    (json["modules"][0]["memory_spaces"]
        .as_array()
        .unwrap()
        .iter())
    .map(|s| {
        (
            s["color"].as_u64().unwrap(),
            s["answers"]["capacity"].clone(),
        )
    })
    .collect()
}

#[test]
fn a_capacity_holds_its_own_space_and_a_typed_size_is_shown_as_typed() {
    // TPU dump 000: spaces 0 (HBM, peak 65,536 B), 1 (VMEM, 41,472 B), 2 (SMEM, 4 B).
    let files = vec![common::fixtures_dir()
        .join("tpu/000_0cb419b3147a3cb6.txt")
        .to_string_lossy()
        .into_owned()];
    let hbm = capacities(&files, &["--capacity", "15.75GiB"]);
    assert_eq!(hbm.iter().map(|(c, _)| *c).collect::<Vec<_>>(), [0, 1, 2]);
    let v = &hbm[0].1;
    // 15.75 × 2^30 exactly, and the headroom to the byte.
    assert_eq!(v["capacity_bytes"], 16_911_433_728u64);
    assert_eq!(v["headroom_bytes"], 16_911_433_728u64 - 65_536);
    let sentence = v["sentence"].as_str().unwrap();
    assert!(
        sentence.contains("on 15.75GiB at the peak of 64.0 KiB"),
        "{sentence}"
    );
    assert!(hbm[1].1.is_null() && hbm[2].1.is_null(), "{hbm:?}");
    // Named: VMEM only.
    let vmem = capacities(&files, &["--capacity", "40KiB", "--capacity-space", "vmem"]);
    assert!(vmem[0].1.is_null() && vmem[2].1.is_null(), "{vmem:?}");
    assert_eq!(vmem[1].1["excess_bytes"], 41_472 - 40_960);
    assert_eq!(
        capacities(&files, &["--capacity", "1KiB", "--capacity-space", "2"])[2].1["fits"],
        true
    );
}

#[test]
fn a_v6e_capacity_judges_hbm_alone() {
    let Some(dumps) = common::shared_dumps_or_skip("a_v6e_capacity_judges_hbm_alone") else {
        return;
    };
    let dir = dumps.join("tpu-aot/jax0.12-libtpu0.0.50");
    let files: Vec<String> = [
        "buffer-assignment.txt",
        "buffer-assignment-values.txt",
        "live-range.txt",
    ]
    .iter()
    .map(|s| {
        dir.join(format!("tpu_v6e_lm_scan_remat.{s}"))
            .to_string_lossy()
            .into_owned()
    })
    .collect();
    let all = capacities(&files, &["--capacity", "v5e"]);
    // Colours 0, 1, 2, 6, 7, 8: only HBM is judged (the issue: SMEM and colours 6 to 8
    // each got "16.0 GiB of headroom").
    assert_eq!(
        all.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
        [0, 1, 2, 6, 7, 8]
    );
    assert_eq!(all[0].1["fits"], true);
    assert!(all[1..].iter().all(|(_, v)| v.is_null()), "{all:?}");
}

#[test]
fn a_capacity_it_cannot_read_exits_2_with_a_message() {
    let files = fixture_files("cpu/jax0.10.2", "cpu_tiny");
    for (bad, says) in [
        ("TPU v5x", "close names: TPU v5e, TPU v5p"),
        ("12 parsecs", "not a size"),
        ("a100", "fits several devices"),
    ] {
        let mut args = vec!["summary", "--capacity", bad];
        args.extend(files.iter().map(String::as_str));
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--capacity") && stderr.contains(says),
            "{bad}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{bad}");
    }
}

#[test]
fn the_table_has_a_block_per_memory_space_within_100_columns() {
    let files = fixture_files("tpu", "000_0cb419b3147a3cb6");
    let mut args = vec!["summary", "--capacity", "16GiB"];
    args.extend(files.iter().map(String::as_str));
    let out = run(&args);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for color in ["0 (default)", "1 (vmem)", "2 (smem)"] {
        assert!(
            text.contains(&format!("  memory space {color} at step")),
            "{text}"
        );
    }
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "{line:?}");
    }
    for part in [
        "three peaks:",
        "      - bufscope's peak, 64.0 KiB at step 13",
        "XProf: peak heap",
        "padding: 34.0 KiB at the peak",
        "    peaks (",
        "prominence at least 5 % of the highest): step 13: 64.0 KiB (100 %)",
        "source line",
        "op_name group (folded)",
        "category",
        "most padding",
        "remat/offload candidate",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
}

/// Whether `bufscope summary --json PATHS` prints what the library's one-pass read of the
/// same files gives, on each of 1, 2 and 4 workers (false when neither prints anything: no
/// module, no message; the command then exits 1).
fn prints_one_pass(paths: &[String], label: &str) -> bool {
    use bufscope::answers::in_turn;
    use bufscope::summary::answers::SummaryOptions;
    use bufscope::summary::oom::{summary_json_paired, summary_with_messages};
    let bytes: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let files = paths
        .iter()
        .zip(&bytes)
        .map(|(p, b)| (p.as_str(), b.as_slice()));
    let loaded = bufscope::pipeline::open_files(files);
    let outs = ["1", "2", "4"].map(|workers| {
        let mut args = vec!["summary", "--json", "--workers", workers];
        args.extend(paths.iter().map(String::as_str));
        (workers, run(&args))
    });
    if loaded.modules.is_empty() && loaded.oom.is_empty() {
        for (workers, out) in &outs {
            assert_eq!(out.status.code(), Some(1), "{label} on {workers} workers");
        }
        return false;
    }
    // An error message beside its dump sets its capacity on that module (answers::paired).
    let modules: Vec<_> = loaded.modules.iter().map(|a| (&a.module, &a.analysis)).collect();
    let (summary, paired) =
        summary_with_messages(&modules, &loaded.oom, &SummaryOptions::default(), in_turn);
    let expected = summary_json_paired(&summary, &loaded.oom, &paired) + "\n";
    for (workers, out) in outs {
        assert!(out.status.success(), "{label} on {workers} workers");
        assert!(
            out.stdout == expected.as_bytes(),
            "{label}: the command line's summary on {workers} workers differs from one pass"
        );
    }
    true
}

/// The command line reads `Used values` on a second thread (src/cli/bodies.rs), from 3
/// workers on its bodies over 2 MiB in pieces: what it prints on 1, 2 and 4 workers is
/// what the library's one-pass read gives, on every fixture and shared dump (the 94 MB one
/// in an optimised build only).
#[test]
fn the_parallel_read_prints_what_one_pass_gives() {
    let test = "the_parallel_read_prints_what_one_pass_gives";
    let mut sets = vec![(common::fixtures_dir(), common::fixture_modules())];
    if let Some(dir) = common::shared_dumps_or_skip(test) {
        let big = !cfg!(debug_assertions);
        let modules = common::modules_under(&dir, |_, stem| big || stem != "cpu_deep_unrolled_500");
        sets.push((dir, modules));
    }
    let mut compared = 0;
    for (root, modules) in &sets {
        for m in modules {
            let paths: Vec<String> = (m.files.iter())
                .map(|(n, _)| root.join(&m.folder).join(n).to_string_lossy().into_owned())
                .collect();
            compared += usize::from(prints_one_pass(&paths, &m.label));
        }
    }
    assert!(compared > 20, "{compared} modules compared");
}

/// A dump big enough for the command line to jump over its `Used values` body (past its
/// first 4 MiB read) and, on 4 workers, to cut it into 3 pieces, as is and with lines that
/// make the parallel read refuse: a warning after the body (its line unknown after the
/// jump), a line in the body that is no `Used values` line. The command line then reads
/// the file again in one pass and prints what one pass gives, warnings and their line
/// numbers included.
#[test]
fn the_parallel_read_falls_back_to_one_pass_where_it_must() {
    let dir = std::env::temp_dir().join(format!("bufscope-parallel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = fixture_files("cpu/jax0.6.2", "cpu_mlp_train").remove(0);
    let big = dir.join("big.buffer-assignment.txt");
    let out = run(&[
        "generate",
        &src,
        "--size",
        "9MB",
        "--out",
        big.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&big).unwrap();
    let body = text.find("\nUsed values:\n").unwrap() + 1;
    let after = text.find("\nHloLiveRange").unwrap() + 1;
    assert!(
        body < 4 << 20 && after > 4 << 20,
        "the body spans the first read"
    );
    let line_end = |at: usize| at + text[at..].find('\n').unwrap() + 1;
    let variants = [
        ("as generated", text.clone()),
        (
            "a warning after the body",
            [
                &text[..line_end(after)],
                "  garbage here\n",
                &text[line_end(after)..],
            ]
            .concat(),
        ),
        (
            "no Used values line in the body",
            [
                &text[..line_end(after - 200)],
                " garbage\n",
                &text[line_end(after - 200)..],
            ]
            .concat(),
        ),
    ];
    for (what, variant) in variants {
        let path = dir.join("variant.buffer-assignment.txt");
        std::fs::write(&path, &variant).unwrap();
        let paths = [path.to_string_lossy().into_owned()];
        assert!(prints_one_pass(&paths, what), "{what}: nothing printed");
        let out = run(&["summary", "--json", &paths[0]]);
        let warned = String::from_utf8_lossy(&out.stdout).contains(": malformed line in the");
        assert_eq!(warned, what != "as generated", "{what}: the warning");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
