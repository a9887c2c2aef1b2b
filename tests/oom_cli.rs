//! Out-of-memory messages through the loader, the pipeline and `bufscope summary`: the
//! loader finds them in files that are not dumps whatever the chunks (and gzip), the CLI
//! prints the reader's figures, as text and as `oom_messages` in the JSON, a log of another
//! error is one sentence naming both things looked for, and a cut message warns.

mod common;

use bufscope::answers::oom::{coverage, group_by_op_name, group_by_source};
use bufscope::model::oom::{OomLog, OomMessage};
use bufscope::parse::oom::{read_oom, read_oom_bytes};
use bufscope::pipeline::open_files;
use bufscope::units::human_bytes;
use bufscope::{load_files, Loader};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture_path(name: &str) -> PathBuf {
    common::fixtures_dir().join("oom").join(name)
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixture_path(name)).unwrap()
}

const LOGS: [&str; 4] = [
    "gpu_glog_twice.log",
    "gpu_worker_wrapped.log",
    "tpu_compile_two_messages.log",
    "tpu_reserve_prefixed.log",
];

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// What a loader reading `bytes` as file `name` in chunks of `chunk` bytes found.
fn load_chunked(name: &str, bytes: &[u8], chunk: usize) -> bufscope::Load {
    let mut loader = Loader::new();
    loader.begin_file(name);
    for c in bytes.chunks(chunk) {
        loader.feed(c);
    }
    loader.end_file();
    loader.finish()
}

// ------------------------------------------------------------------ the loader

#[test]
fn the_loader_finds_the_readers_messages_in_any_chunks_and_in_gzip() {
    let mut sizes: Vec<usize> = (1..=64).collect();
    sizes.extend([97, 128, 255, 256, 1000, 1021, 2048, 4095, 4096]);
    for name in LOGS {
        let bytes = fixture(name);
        let expected = read_oom_bytes(&bytes).unwrap();
        for (what, input) in [("text", bytes.clone()), ("gzip", gzip(&bytes))] {
            for &chunk in &sizes {
                let load = load_chunked(name, &input, chunk);
                assert!(load.errors.is_empty(), "{name} {what}: {:?}", load.errors);
                assert!(load.modules.is_empty());
                assert_eq!(load.oom.len(), 1, "{name} {what} in chunks of {chunk}");
                assert_eq!(load.oom[0].file, name);
                assert_eq!(
                    load.oom[0].log, expected,
                    "{name} {what} in chunks of {chunk}"
                );
                assert!(load.oom[0].warnings.is_empty());
            }
        }
    }
}

#[test]
fn the_loader_searches_the_files_text_as_it_is() {
    let gpu = fixture("gpu_worker_wrapped.log");
    let no_end = gpu.strip_suffix(b"\n").unwrap_or(&gpu).to_vec();
    let crlf = String::from_utf8(gpu.clone())
        .unwrap()
        .replace('\n', "\r\n")
        .into_bytes();
    let mut bad_utf8 = b"\xff\xfe noise \xc3\n".to_vec();
    bad_utf8.extend(&fixture("tpu_compile_two_messages.log"));
    let cut_mid_line = gpu[..gpu.len() * 2 / 3].to_vec();
    for bytes in [no_end, crlf, bad_utf8, cut_mid_line] {
        let direct = read_oom_bytes(&bytes).unwrap();
        for chunk in [1, 3, 4096] {
            let load = load_chunked("x.log", &bytes, chunk);
            assert_eq!(load.oom[0].log, direct, "chunks of {chunk}");
        }
    }
}

#[test]
fn a_message_after_a_long_log_is_found_and_its_lines_count_from_the_files_start() {
    // More lines than the dump reader reads before it gives up on a file.
    let mut log = "step 1: loss 2.3026\n".repeat(5000).into_bytes();
    log.extend(fixture("gpu_glog_twice.log"));
    let load = load_files([("train.log", &log[..])]);
    let alone = read_oom_bytes(&fixture("gpu_glog_twice.log")).unwrap();
    let found = &load.oom[0].log;
    assert_eq!(found.messages.len(), alone.messages.len());
    for (a, b) in found.messages.iter().zip(&alone.messages) {
        assert_eq!(a.first_line, b.first_line + 5000);
        assert_eq!(a.buffers.len(), b.buffers.len());
    }
}

#[test]
fn a_dump_that_also_holds_a_message_is_read_as_a_dump() {
    let dir = common::fixtures_dir().join("cpu").join("jax0.10.2");
    let dump = std::fs::read(dir.join("cpu_mlp_train.buffer-assignment.txt")).unwrap();
    for log in [
        [fixture("gpu_glog_twice.log"), dump.clone()].concat(),
        [dump.clone(), fixture("gpu_glog_twice.log")].concat(),
    ] {
        let load = load_files([("both.txt", &log[..])]);
        assert_eq!(load.modules.len(), 1);
        assert!(load.oom.is_empty());
        assert!(load.errors.is_empty(), "{:?}", load.errors);
    }
}

#[test]
fn the_pipeline_carries_the_messages_next_to_the_modules() {
    let dir = common::fixtures_dir().join("cpu").join("jax0.10.2");
    let dump = std::fs::read(dir.join("cpu_mlp_train.buffer-assignment.txt")).unwrap();
    let tpu = fixture("tpu_compile_two_messages.log");
    let other = fixture("other_error.log");
    let loaded = open_files([
        ("cpu_mlp_train.buffer-assignment.txt", &dump[..]),
        ("tpu.log", &tpu[..]),
        ("other_error.log", &other[..]),
    ]);
    assert_eq!(loaded.modules.len(), 1);
    assert_eq!(loaded.oom.len(), 1);
    assert_eq!(loaded.oom[0].file, "tpu.log");
    assert_eq!(loaded.oom[0].log.messages.len(), 2);
    assert_eq!(loaded.errors.len(), 1);
    assert!(loaded.errors[0].starts_with("other_error.log is not an XLA buffer-assignment dump"));
}

// ------------------------------------------------------------------ the CLI

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_bufscope"))
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn cli(args: &[&str], path: &Path) -> Run {
    let out = Command::new(bin()).args(args).arg(path).output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn no_control(s: &str) -> bool {
    !s.chars().any(char::is_control)
}

/// Every figure of `m` that the text shows, found in `text` (the message's own block).
fn check_text(file: &str, text: &str, m: &OomMessage) {
    let has = |s: &str, what: &str| {
        assert!(
            !no_control(s) || text.contains(s),
            "{file}: {what} `{s}` is not in:\n{text}"
        );
    };
    if let Some(c) = &m.capacity {
        for (s, what) in [(&c.used, "used"), (&c.capacity, "capacity")] {
            if let Some(s) = s {
                has(&format!("{what} {}", s.text), what);
            }
        }
        if let Some(x) = &c.exceeded_by {
            has(&format!("exceeded by {}", x.text), "exceeded by");
        }
    }
    for s in &m.sections {
        has(&s.title, "section title");
        for st in &s.stats {
            if let Some(size) = &st.size {
                has(&format!("{}: {}", st.label, size.text), "stat");
            }
        }
    }
    for b in &m.buffers {
        let size = b.size.as_ref().map_or("?", |s| s.text.as_str());
        has(&format!("    {}. {size}", b.rank), "buffer size");
        if let Some(s) = &b.shape {
            has(s, "shape");
        }
        if let Some(u) = &b.unpadded_size {
            has(&format!("unpadded {}", u.text), "unpadded");
        }
        if let Some(p) = &b.padding {
            has(&format!("padding {}", p.text), "padding");
        }
        if let Some(t) = &b.allocation_type {
            has(&format!("({t})"), "allocation type");
        }
        if let Some(l) = &b.xla_label {
            has(&format!("XLA label {l}"), "XLA label");
        }
        if let Some(op) = &b.operator {
            if let Some(n) = &op.op_name {
                has(&format!("op_name {n}"), "op_name");
            }
            if let (Some(f), Some(l)) = (&op.source_file, op.source_line) {
                has(&format!("source {f}:{l}"), "source");
            }
        }
    }
    for g in group_by_op_name(&m.buffers)
        .iter()
        .chain(&group_by_source(&m.buffers))
    {
        if let Some(k) = &g.key {
            let n = g.buffers.len();
            let count = format!("{n} buffer{}", if n == 1 { "" } else { "s" });
            let row = text
                .lines()
                .find(|l| l.ends_with(&format!("  {k}")) && l.contains(&count));
            let row = row.unwrap_or_else(|| panic!("{file}: no group row for {k}:\n{text}"));
            assert!(
                row.trim_start().starts_with(&human_bytes(g.bytes as u64)),
                "{file}: group {k}: {row}"
            );
        }
    }
    for w in &m.warnings {
        has(&format!("warning: {w}"), "warning");
    }
}

/// The text of `summary LOG` agrees with the reader's figures; returns the number of
/// messages.
fn check_summary(name: &str, path: &Path, log: &OomLog) {
    let run = cli(&["summary"], path);
    assert_eq!(run.code, 0, "{name}: {}", run.stderr);
    let n = log.messages.len();
    let text = format!("\n{}", run.stdout);
    let blocks: Vec<&str> = text.split("\nout-of-memory message ").skip(1).collect();
    assert_eq!(blocks.len(), n, "{name}:\n{}", run.stdout);
    for (i, (block, m)) in blocks.iter().zip(&log.messages).enumerate() {
        let head = format!(
            "{} of {n} in {name}, lines {}-{}",
            i + 1,
            m.first_line,
            m.last_line
        );
        assert!(block.starts_with(&head), "{name}: {block}");
        check_text(name, block, m);
    }
    assert!(run.stdout.contains("no time axis"), "{name}");
    assert!(
        run.stdout.contains("`XLA_FLAGS=--xla_dump_to=DIR`"),
        "{name}"
    );

    let run = cli(&["summary", "--json"], path);
    assert_eq!(run.code, 0, "{name}: {}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["modules"], serde_json::json!([]));
    let msgs = v["oom_messages"].as_array().expect("oom_messages");
    assert_eq!(msgs.len(), n, "{name}");
    for (j, m) in msgs.iter().zip(&log.messages) {
        assert_eq!(j["file"], name);
        assert_eq!(j["first_line"], m.first_line);
        let sizes: Vec<Option<i64>> = j["buffers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["size"]["bytes"].as_i64())
            .collect();
        let expected: Vec<Option<i64>> = m
            .buffers
            .iter()
            .map(|b| b.size.as_ref().map(|s| s.bytes))
            .collect();
        assert_eq!(sizes, expected, "{name}");
        assert_eq!(
            j["by_op_name"].as_array().unwrap().len(),
            group_by_op_name(&m.buffers).len()
        );
        if let Some(c) = j["coverage"].as_object() {
            let total: i64 = c["total"]["bytes"].as_i64().unwrap();
            let total_text = c["total"]["text"].as_str().unwrap();
            // The total is one of the message's printed figures.
            let printed = m
                .sections
                .iter()
                .flat_map(|s| {
                    s.total
                        .iter()
                        .chain(s.stats.iter().filter_map(|x| x.size.as_ref()))
                })
                .chain(m.capacity.iter().filter_map(|c| c.used.as_ref()))
                .any(|s| s.bytes == total && s.text == total_text);
            assert!(printed, "{name}: coverage of {total_text}");
            let expected = m
                .buffers
                .iter()
                .filter_map(|b| b.size.as_ref())
                .map(|s| s.bytes)
                .sum::<i64>();
            assert_eq!(c["listed"].as_i64(), Some(expected), "{name}");
        }
    }
}

#[test]
fn summary_prints_the_readers_figures_for_each_fixture() {
    for name in LOGS {
        let log = read_oom_bytes(&fixture(name)).unwrap();
        check_summary(name, &fixture_path(name), &log);
    }
}

#[test]
fn summary_shows_the_tpu_verdict_and_coverage_as_printed() {
    // Figures read off the fixture by hand.
    let run = cli(&["summary"], &fixture_path("tpu_compile_two_messages.log"));
    assert!(run
        .stdout
        .contains("capacity: used 21.50G · capacity 15.48G hbm · exceeded by 6.02G"));
    // 4.00G + 4.00G + 1.50G + 768.0K of the 19.25G program requirement.
    let listed = (9.5f64 * 1024.0 * 1024.0 * 1024.0) + 768.0 * 1024.0;
    let pct = listed / (19.25 * 1024.0 * 1024.0 * 1024.0) * 100.0;
    let line = format!(
        "listed buffers (4): 9.5 GiB listed, {pct:.1}% of Program hbm requirement (19.25G):"
    );
    assert!(run.stdout.contains(&line), "{line}\n{}", run.stdout);
    assert!(run
        .stdout
        .contains("unpadded 160.00M · padding 1.34G (9.6x expansion)"));
    assert!(run.stdout.contains("`*memory-usage-report.txt`"));
}

#[test]
fn another_error_is_one_sentence_naming_both_things_looked_for_and_exit_1() {
    let run = cli(&["summary"], &fixture_path("other_error.log"));
    assert_eq!(run.code, 1);
    assert!(run.stdout.is_empty());
    let first = run.stderr.lines().next().unwrap();
    assert!(
        first.contains("other_error.log is not an XLA buffer-assignment dump"),
        "{first}"
    );
    assert!(first.contains("section header"), "{first}");
    assert!(first.contains("no XLA out-of-memory message"), "{first}");
}

#[test]
fn a_message_cut_in_the_middle_warns_and_shows_what_was_read() {
    let text = String::from_utf8(fixture("tpu_compile_two_messages.log")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let second = lines.iter().position(|l| l.contains("  2. Size:")).unwrap();
    let cut = lines[..second + 3].join("\n");
    let dir = std::env::temp_dir().join(format!("bufscope-oom-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cut.log");
    std::fs::write(&path, &cut).unwrap();
    let log = read_oom(&cut).unwrap();
    assert!(log.messages[0]
        .warnings
        .iter()
        .any(|w| w.contains("buffer 2 is cut")));
    check_summary("cut.log", &path, &log);
    let run = cli(&["summary"], &path);
    assert!(
        run.stdout.contains("warning: buffer 2 is cut"),
        "{}",
        run.stdout
    );
    assert!(run
        .stdout
        .contains("    1. 4.00G  f32[16,16,2048,2048]{3,2,1,0:T(8,128)}  (HLO temp)"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn summary_of_a_dump_has_no_oom_key() {
    let dir = common::fixtures_dir().join("cpu").join("jax0.10.2");
    let run = cli(
        &["summary", "--json"],
        &dir.join("cpu_mlp_train.buffer-assignment.txt"),
    );
    assert_eq!(run.code, 0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(v.get("oom_messages").is_none());
}

#[test]
fn summary_reads_every_real_message() {
    let Some(files) = common::shared_oom_or_skip("summary_reads_every_real_message") else {
        return;
    };
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let log = read_oom_bytes(&std::fs::read(&path).unwrap()).unwrap();
        for m in &log.messages {
            if let Some(c) = m
                .sections
                .iter()
                .flat_map(|s| &s.stats)
                .find(|s| s.label == "total allocation")
            {
                assert!(coverage(m, c.size.as_ref().unwrap()).is_some());
            }
        }
        check_summary(&name, &path, &log);
    }
}
