//! The sweep's real compilations for the tests that read them (tests/sweep.rs,
//! tests/sweep_svg.rs): one compilation read by stem, as `bufscope sweep` reads a dump file
//! with the files of its run beside it, and the batch sweep of `../shared/dumps/tpu-aot`.
#![allow(dead_code)]

use std::path::Path;

use bufscope::answers::sweep::{self, Point};
use bufscope::pipeline::{default_module, open_files, Loaded};

/// The compilation `stem` of `dir`: its dump files and HLO text (maybe gzipped).
pub fn load(dir: &Path, stem: &str) -> Loaded {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for part in ["buffer-assignment", "buffer-assignment-values", "live-range", "after_optimizations", "error"] {
        for name in [format!("{stem}.{part}.txt"), format!("{stem}.{part}.txt.gz")] {
            if let Ok(bytes) = std::fs::read(dir.join(&name)) {
                files.push((name, bytes));
            }
        }
    }
    assert!(!files.is_empty(), "no files for {stem} in {}", dir.display());
    open_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())))
}

pub fn points(loads: &[Loaded]) -> Vec<Point<'_>> {
    (loads.iter())
        .map(|l| {
            let i = default_module(l.modules.iter().map(|a| &a.module)).expect("a module");
            let names: Vec<&str> = l.modules.iter().map(|a| a.module.name.as_str()).collect();
            // An out-of-memory message beside the dump (`.error.txt`) paired with it: the
            // compile failed (the command line's and the page's rule).
            let (a, failed) = (&l.modules[i], sweep::failed(&names, &l.oom)[i]);
            Point { module: &a.module, analysis: &a.analysis, failed }
        })
        .collect()
}

/// The batch sweep's compilations in batch order (8, 16, 32, 48, 64).
pub fn batch_sweep(dumps: &Path) -> Vec<Loaded> {
    let aot = dumps.join("tpu-aot");
    vec![
        load(&aot.join("remat-ladder"), "tpu_v5e_lm_scan_remat_b8"),
        load(&aot.join("jax0.12-libtpu0.0.50"), "tpu_v5e_lm_scan_remat"),
        load(&aot.join("remat-ladder"), "tpu_v5e_lm_scan_remat_b32"),
        load(&aot.join("turn4"), "tpu_v5e_lm_scan_remat_b48"),
        load(&aot.join("turn4"), "tpu_v5e_lm_scan_remat_b64"),
    ]
}
