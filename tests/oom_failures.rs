//! One failure, one message (issue 34.8): the real GPU job logs of `../shared/dumps/oom/`
//! (read from there, never copied; skipped visibly without them) print one out-of-memory
//! failure three times, the BFC allocator's warning, the runtime's `RESOURCE_EXHAUSTED`
//! status with the `BufferAssignment OOM Debugging.` after it, and the Python exception
//! repeating both after its traceback: the reader, `bufscope summary` and its JSON give one
//! message. Two failures (two runs' logs one after the other) stay two. A folded message
//! is held against its dump by its request, never by the allocator's `InUse` (a figure of
//! the running process).
//!
//! Expected figures come from the text through plain string searches: the line numbers of
//! the warning and of the exception, the digits after `while trying to allocate `.

mod common;

use bufscope::answers::paired::{DumpFigure, Paired};
use bufscope::parse::load_files;
use bufscope::model::oom::{OomForm, OomLog};
use bufscope::parse::oom::read_oom;
use std::path::PathBuf;

/// The three job logs that print a BFC warning, a status and an exception.
const JOB_LOGS: [&str; 3] = [
    "TheDingodile__ML_final__16_01_0.md",
    "TheDingodile__ML_final__a80test_0.md",
    "TheDingodile__ML_final__v32test_0.md",
];

fn oom_dir(test: &str) -> Option<PathBuf> {
    let files = common::shared_oom_or_skip(test)?;
    Some(files[0].parent().unwrap().to_path_buf())
}

fn read(dir: &std::path::Path, name: &str) -> String {
    String::from_utf8_lossy(&std::fs::read(dir.join(name)).unwrap()).into_owned()
}

/// 1-based numbers of the lines holding `needle`.
fn lines_with(text: &str, needle: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect()
}

/// The bytes of the first `while trying to allocate N bytes`.
fn status_request(text: &str) -> i64 {
    let p = text.find("while trying to allocate ").unwrap() + "while trying to allocate ".len();
    text[p..].split(' ').next().unwrap().parse().unwrap()
}

/// `log` has one message per BFC warning, each starting at its warning, with the status's
/// exact request and the allocator's name, the exception's line kept as printed again.
fn check_failures(name: &str, text: &str, log: &OomLog) {
    let warnings = lines_with(text, "ran out of memory trying to allocate");
    let raised: Vec<usize> = lines_with(text, "Error: RESOURCE_EXHAUSTED");
    assert_eq!(log.messages.len(), warnings.len(), "{name}: {:#?}", log.messages.iter().map(|m| (m.form, m.first_line)).collect::<Vec<_>>());
    for (k, m) in log.messages.iter().enumerate() {
        assert_eq!(m.form, OomForm::GpuBufferAssignment, "{name}");
        assert_eq!(m.first_line, warnings[k], "{name}: starts at the allocator's warning");
        assert_eq!(m.allocator.as_deref(), Some("GPU_0_bfc"), "{name}");
        let r = m.request.as_ref().unwrap();
        let after: &str = &text.lines().skip(warnings[k]).collect::<Vec<_>>().join("\n");
        assert_eq!((r.bytes, r.exact), (status_request(after), true), "{name}: the status's request");
        assert!(m.notes.iter().any(|n| n.contains("Allocator (GPU_0_bfc) ran out of memory")), "{name}: {:?}", m.notes);
        assert!(!m.buffers.is_empty(), "{name}");
        // Its exception: the first one after its warning (and before the next warning).
        let next = warnings.get(k + 1).copied().unwrap_or(usize::MAX);
        let own: Vec<usize> = raised.iter().copied().filter(|&l| l > warnings[k] && l < next).collect();
        assert_eq!(m.printed_again, own, "{name}: printed again");
        assert_eq!(own.len(), 1, "{name}: one exception per failure in these logs");
    }
}

#[test]
fn a_bfc_warning_its_status_and_the_exception_are_one_message() {
    let Some(dir) = oom_dir("a_bfc_warning_its_status_and_the_exception_are_one_message") else {
        return;
    };
    for name in JOB_LOGS {
        let text = read(&dir, name);
        // What the log holds: one warning, the status twice (log line and exception).
        assert_eq!(lines_with(&text, "ran out of memory trying to allocate").len(), 1, "{name}");
        assert_eq!(lines_with(&text, "RESOURCE_EXHAUSTED: Out of memory").len(), 2, "{name}");
        let log = read_oom(&text).unwrap();
        check_failures(name, &text, &log);
    }
}

#[test]
fn two_failures_in_one_log_stay_two_messages() {
    let Some(dir) = oom_dir("two_failures_in_one_log_stay_two_messages") else {
        return;
    };
    // Two runs' logs one after the other: alike (a80test and v32test fail asking the same
    // 2,110,783,616 B with the same buffers) or not (16_01 asks 12,874,361,648 B).
    for pair in [[JOB_LOGS[1], JOB_LOGS[2]], [JOB_LOGS[0], JOB_LOGS[1]]] {
        let text = format!("{}\n{}", read(&dir, pair[0]), read(&dir, pair[1]));
        let log = read_oom(&text).unwrap();
        check_failures(&pair.join(" + "), &text, &log);
        assert_eq!(log.messages.len(), 2);
    }
    // t5x#870's excerpt: the end of a message, then an allocator warning with no status
    // after it (the excerpt is cut): two messages, the warning alone with its rounded request.
    let text = read(&dir, "issue__google-research__t5x__870__oom-excerpt.txt");
    let log = read_oom(&text).unwrap();
    let forms: Vec<OomForm> = log.messages.iter().map(|m| m.form).collect();
    assert_eq!(forms, [OomForm::GpuBufferAssignment, OomForm::GpuBfcAllocator]);
    assert_eq!(log.messages[1].request.as_ref().map(|r| r.bytes), Some(29_995_136_256));
    assert!(log.messages.iter().all(|m| m.printed_again.is_empty()));
}

#[test]
fn summary_gives_one_message_as_text_and_json() {
    let Some(dir) = oom_dir("summary_gives_one_message_as_text_and_json") else {
        return;
    };
    let path = dir.join(JOB_LOGS[1]);
    let text = read(&dir, JOB_LOGS[1]);
    let again = lines_with(&text, "Error: RESOURCE_EXHAUSTED")[0];
    let run = |json: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_bufscope"));
        cmd.arg("summary");
        if json {
            cmd.arg("--json");
        }
        let out = cmd.arg(&path).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let out = run(false);
    assert_eq!(out.lines().filter(|l| l.starts_with("out-of-memory message ")).count(), 1, "{out}");
    assert!(out.contains("out-of-memory message 1 of 1"), "{out}");
    assert!(out.contains(&format!("printed again at line {again} (the same failure, counted once)")), "{out}");
    assert!(out.contains("request: 2110783616 bytes"), "{out}");
    let json: serde_json::Value = serde_json::from_str(&run(true)).unwrap();
    let messages = json["oom_messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{json}");
    let m = &messages[0];
    assert_eq!(m["form"], "gpu_buffer_assignment", "{m}");
    assert_eq!(m["allocator"], "GPU_0_bfc");
    assert_eq!(m["printed_again"], serde_json::json!([again]));
    assert_eq!(m["request"]["bytes"], 2_110_783_616i64);
}

/// The real A100 dump of lorrax's `jit__full_run` and a log made here of one failure of it:
/// the BFC warning for its temp buffer (rounded up to 256 B), the allocator's stats (an
/// `InUse` that is no figure of the dump) and the status asking for the temp buffer.
#[test]
fn a_folded_message_is_held_against_its_dump_by_its_request() {
    let Some(shared) = common::shared_dumps_or_skip("a_folded_message_is_held_against_its_dump") else {
        return;
    };
    let name = "module_0037.jit__full_run.sm_8.0_gpu_after_optimizations-buffer-assignment.txt";
    let dump = std::fs::read(shared.join("public/lorrax").join(name)).unwrap();
    let temp: i64 = String::from_utf8_lossy(&dump)
        .lines()
        .find(|l| l.starts_with("allocation ") && l.contains("preallocated-temp"))
        .and_then(|l| l.split("size ").nth(1)?.split(',').next()?.parse().ok())
        .unwrap();
    let rounded = (temp + 255) / 256 * 256;
    let log = format!(
        "W bfc_allocator.cc:482] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.70GiB (rounded to {rounded})requested by op \n\
         Stats: \nLimit:                     3000000000\nInUse:                     2500000000\n\
         E pjrt_stream_executor_client.cc:2826] Execution of replica 0 failed: RESOURCE_EXHAUSTED: Out of memory while trying to allocate {temp} bytes.\n"
    );
    let load = load_files([(name, &dump[..]), ("run.log", log.as_bytes())]);
    assert_eq!(load.oom.len(), 1, "{:?}", load.errors);
    let [m] = load.oom[0].log.messages.as_slice() else { panic!("{:#?}", load.oom[0].log) };
    assert_eq!((m.form, m.allocator.as_deref()), (OomForm::GpuOutOfMemory, Some("GPU_0_bfc")));
    assert_eq!(m.capacity.as_ref().and_then(|c| c.used.as_ref()).map(|u| u.bytes), Some(2_500_000_000));
    let module = &load.modules[0];
    let analysis = bufscope::analysis::analyze(module);
    let paired = Paired::new(&[(module, &analysis)], &load.oom);
    let r = paired.pairs[0].reconciliation.as_ref().unwrap();
    assert_eq!((r.what.as_str(), r.message_bytes), ("request", temp), "{}", r.sentence);
    assert_eq!(r.figure, Some(DumpFigure::Temporaries), "{}", r.sentence);
    assert!(r.matches && !r.sentence.contains("another compilation"), "{}", r.sentence);
    assert!(r.checks.iter().all(|c| c.bytes != 2_500_000_000), "InUse held against the dump: {:?}", r.checks);
    assert_eq!(paired.pairs[0].capacity.as_ref().map(|c| c.bytes), Some(3_000_000_000));
}
