//! `bufscope bench` run as a program: its heap figures come from the counting allocator,
//! which counts only when the command is `bench` (the other commands' threads no longer pay
//! its shared atomics). The figures are those of one parse on one thread, so they are more
//! than nothing, at least what the parse keeps of the file, and the same on every run.

use std::process::Command;

const DUMP: &str = "tests/fixtures/cpu/jax0.6.2/cpu_transformer_bf16.buffer-assignment.txt";

/// `bufscope [FIRST] bench DUMP --runs 1 --json`: its peak heap and its read behind's.
fn heap_figures(first: &[&str]) -> (u64, u64) {
    let out = Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .args(first)
        .args(["bench", DUMP, "--runs", "1", "--json"])
        .output()
        .expect("bufscope runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let figure = |key: &str| json[key].as_u64().unwrap_or_else(|| panic!("{key} in {json}"));
    (figure("peak_heap_bytes"), figure("deferred_peak_heap_bytes"))
}

#[test]
fn bench_counts_the_heap_of_a_parse() {
    let file = std::fs::metadata(DUMP).expect("the fixture").len();
    let first = heap_figures(&[]);
    // The module keeps the file's names, shapes and op_names, and the parse its lines'
    // parts: well over a tenth of the file (were nothing counted, both would be 0).
    assert!(first.0 > file / 10, "peak heap {} for a file of {file} bytes", first.0);
    assert!(first.1 > 0, "read behind's peak heap {}", first.1);
    assert_eq!(heap_figures(&[]), first, "one thread's parse allocates alike every run");
    // An option before the command changes nothing of a parse on one thread.
    assert_eq!(heap_figures(&["--workers", "2"]), first, "--workers 2 bench");
}
