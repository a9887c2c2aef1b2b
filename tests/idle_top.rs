//! `top_idle_ranking` (the summary's idle candidates, found without the stretches of most
//! live values) gives the first `top` rows of `idle_ranking` (every live value looked at),
//! row for row, at the peak and at steps across the program of every real dump with `Used
//! values`: the fixtures, and `../shared`'s CPU and TPU (ahead-of-time) dumps, their loops
//! and carries with them where an HLO text is beside the dump.

mod common;

use bufscope::analysis::analyze;
use bufscope::answers::idle::{idle_ranking, top_idle_ranking, ScheduleIndex};
use bufscope::answers::live_set;

/// How many rows the summary, the page and scripts ask for, and none and all.
const TOPS: [usize; 8] = [0, 1, 2, 3, 5, 10, 40, usize::MAX];

/// Compares the two rankings on each module of `modules`: (steps compared, rows ranked).
fn compare(modules: &[common::ModuleFiles]) -> (usize, usize) {
    let (mut steps, mut rows) = (0, 0);
    for files in modules {
        let load = bufscope::load_files(files.dump_files());
        for m in &load.modules {
            let a = analyze(m);
            for s in &a.spaces {
                let n = s.curve.len() as u32;
                let mut at: Vec<u32> = (0..8).map(|k| k * n / 8).collect();
                at.extend(s.peak_time);
                for t in at.into_iter().filter(|&t| t < n) {
                    let live = live_set(m, s, t);
                    let all = idle_ranking(m, &ScheduleIndex::new(m), &live);
                    for top in TOPS {
                        let got = top_idle_ranking(m, &ScheduleIndex::new(m), &live, top);
                        let mut want = all.clone();
                        want.rows.truncate(top);
                        assert_eq!(got, want, "{} color {} step {t} top {top}", files.label, s.color);
                    }
                    steps += 1;
                    rows += all.rows.len();
                }
            }
        }
    }
    (steps, rows)
}

#[test]
fn the_top_rows_are_the_rankings_first() {
    let (steps, rows) = compare(&common::fixture_modules());
    println!("fixtures: {steps} steps, {rows} rows ranked");
    assert!(steps > 100 && rows > 1000, "{steps} steps, {rows} rows");
}

#[test]
fn the_top_rows_are_the_rankings_first_on_shared_dumps() {
    let test = "the_top_rows_are_the_rankings_first_on_shared_dumps";
    let Some(dir) = common::shared_dumps_or_skip(test) else {
        return;
    };
    for folder in ["cpu", "tpu-aot"] {
        // The 94 MB dump is the benchmark's (tests/answers.rs reads it in release).
        let small = |f: &common::ModuleFiles| f.dump_files().all(|(_, b)| b.len() < 16 << 20);
        let modules: Vec<_> = (common::modules_under(&dir.join(folder), |_, _| true).into_iter())
            .filter(small)
            .collect();
        let (steps, rows) = compare(&modules);
        println!("{folder}: {} modules, {steps} steps, {rows} rows ranked", modules.len());
        assert!(rows > 1000, "{folder}: {steps} steps, {rows} rows");
    }
}
