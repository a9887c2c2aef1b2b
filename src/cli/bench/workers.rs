//! The read's scaling: the command line's own read of one file (from disk, on 1, 2 and 4
//! workers, [`super::super::bodies`]: the first read analysed, its `Used values` bodies
//! completed), timed as `bufscope summary` reads, and whether it read without falling back
//! to one pass.
//!
//! Owns: the workers figures of `bufscope bench`.

use super::super::bodies;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// The workers timed.
pub const WORKERS: [usize; 3] = [1, 2, 4];

/// One number of workers' figures.
#[derive(Serialize)]
pub struct Scale {
    pub workers: usize,
    /// Median of the runs.
    pub read_ms: f64,
    /// The machine's read completed the modules (no read again in one pass).
    pub completed: bool,
}

/// The CLI's read of `path` on each of [`WORKERS`], `runs` times each (in turns), medians.
pub fn scaling(path: &str, runs: u32) -> Vec<Scale> {
    let files = [PathBuf::from(path)];
    let mut times = vec![Vec::new(); WORKERS.len()];
    let mut completed = [true; WORKERS.len()];
    for _ in 0..runs {
        for (k, &n) in WORKERS.iter().enumerate() {
            bodies::set_workers(n);
            let t = Instant::now();
            let loaded = bodies::read(&files, &[]);
            times[k].push(t.elapsed().as_secs_f64() * 1e3);
            completed[k] &= loaded.is_some();
            drop(std::hint::black_box(loaded));
        }
    }
    bodies::set_workers(0);
    let scale = |(k, t): (usize, Vec<f64>)| Scale {
        workers: WORKERS[k],
        read_ms: super::median(t),
        completed: completed[k],
    };
    times.into_iter().enumerate().map(scale).collect()
}

/// The figures as the table's lines.
pub fn lines(scales: &[Scale], memchr_ms: f64) -> String {
    let mut r = String::new();
    for s in scales {
        let how = if s.completed { "" } else { ", fell back to one pass" };
        r += &format!(
            "  read on {} worker{}  {:>10.1} ms  {:.2} × memchr; the CLI's read from disk{how}\n",
            s.workers,
            if s.workers == 1 { " " } else { "s" },
            s.read_ms,
            s.read_ms / memchr_ms.max(1e-6)
        );
    }
    r
}
