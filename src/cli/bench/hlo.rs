//! `bufscope bench` on an HLO module text (`*after_optimizations.txt`): the time to read it
//! (median of N runs) and the heap its read text keeps, against the file's size (issue 24:
//! at most the file's size).
//!
//! Owns: these two figures; the whole-process figure (`bufscope summary --json` with and
//! without the text) is `tests/bench/hlo_bench.py`'s, which runs this for the heap.

use super::{median, ms, write_stdout, CmdResult, Failure};
use bufscope::parse::hlo::{read_hlo, HloRead};
use serde::Serialize;
use std::time::Instant;

/// The figures of one text, as `--json` prints them.
#[derive(Serialize)]
struct Figures<'a> {
    path: &'a str,
    bytes: usize,
    runs: u32,
    computations: usize,
    instructions: usize,
    read_ms: f64,
    /// Heap bytes the read text (`HloText`) keeps: every allocation made while reading that
    /// is still live, the file's name and the warnings excepted.
    kept_bytes: usize,
}

/// Times reading `bytes` as an HLO text and measures what the text keeps.
pub(super) fn bench(path: &str, bytes: &[u8], runs: u32, json: bool) -> CmdResult {
    let before = crate::heap::current();
    let HloRead { text, file, warnings } = read_hlo(path, bytes);
    drop((file, warnings));
    let kept = crate::heap::since(before, crate::heap::current());
    if text.computations.is_empty() {
        return Err(Failure(format!("{path}: no computation read from the HLO text")));
    }
    let instructions = text.instructions().count();
    let computations = text.computations.len();
    drop(text);
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        drop(std::hint::black_box(read_hlo(path, std::hint::black_box(bytes))));
        times.push(ms(t));
    }
    let us = |ms: f64| (ms * 1e3).round() / 1e3;
    let f = Figures {
        path,
        bytes: bytes.len(),
        runs,
        computations,
        instructions,
        read_ms: us(median(times)),
        kept_bytes: kept,
    };
    let out = if json {
        let mut j = serde_json::to_string(&f)
            .map_err(|e| Failure(format!("cannot write the figures: {e}")))?;
        j.push('\n');
        j
    } else {
        let ratio = f.kept_bytes as f64 / f.bytes.max(1) as f64;
        let verdict = if ratio <= 1.0 { "met" } else { "NOT met" };
        format!(
            "bufscope bench: {path} (an HLO module text)\n  input           {:>10.1} MB  {computations} computations, {instructions} instructions\n  runs            {runs:>10}     the time below is a median\n  read            {:>10.1} ms\n  text kept       {:>10.1} MB  {ratio:.2} × the file   target ≤ 1.0 ×   {verdict}\n",
            f.bytes as f64 / 1e6,
            f.read_ms,
            f.kept_bytes as f64 / 1e6,
        )
    };
    write_stdout(out.as_bytes())
}
