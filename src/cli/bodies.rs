//! The command line's driver of the core's read machine ([`Reading`]) on [`workers`]
//! threads: the first read on the main thread, the read behind (the `Used values` bodies it
//! skips, the first one read ahead, and the HLO module texts) on a second, and from three
//! workers on, piece lanes reading the pieces of each body but its first on the others;
//! each lane fetching from the files the byte ranges the machine asks for, in [`CHUNK`]s.
//! With one worker the lanes are read one after the other on the main thread. The modules
//! are then analysed, completed and given their HLO texts, and are those one pass reads.
//!
//! Owns: the only threads of the read (`std::thread`, natively only; the core stays free
//! of threads and I/O), the channels that carry the lanes' [`Note`]s between them, and the
//! number of workers (`--workers`, `BUFSCOPE_WORKERS`, else the machine's cores).
//! Whatever did not read as in one pass (a wrong guess, a warning, an unknown line
//! number) and any I/O error give `None`: the caller reads the files again in one pass,
//! which says what went wrong.

mod files;
mod threads;

use super::CHUNK;
use bufscope::parse::{Input, Lane, Next, Reading};
use bufscope::pipeline::{Loaded, Pipeline};
use files::Files;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The least bytes of a body's piece: below, a body is cut into fewer pieces.
const LEAST: u64 = 1 << 20;

/// Workers set by `--workers` (0: not set).
static WORKERS: AtomicUsize = AtomicUsize::new(0);

/// Sets the number of workers (`--workers`); 0 leaves the default.
pub fn set_workers(n: usize) {
    WORKERS.store(n, Ordering::Relaxed);
}

/// The workers the read runs on: `--workers`, else `BUFSCOPE_WORKERS`, else the cores.
pub fn workers() -> usize {
    let set = WORKERS.load(Ordering::Relaxed);
    let env = || std::env::var("BUFSCOPE_WORKERS").ok()?.parse().ok().filter(|&n| n > 0);
    let cores = || std::thread::available_parallelism().map_or(2, usize::from);
    if set > 0 { set } else { env().unwrap_or_else(cores) }
}

/// Reads, joins and analyses `files` with the `Used values` bodies and HLO texts read
/// meanwhile, then completes the modules; those `searched` are only searched for an
/// out-of-memory message. `None` when the files must be read again in one pass (nothing
/// is printed).
pub fn read(files: &[PathBuf], searched: &[PathBuf]) -> Option<Loaded> {
    let input = |p: &PathBuf| {
        let size = std::fs::metadata(p).ok()?.len();
        let (name, searched) = (p.to_string_lossy().into_owned(), searched.contains(p));
        Some(Input { name, size, searched })
    };
    let inputs = files.iter().map(input).collect::<Option<Vec<_>>>()?;
    let reading = Reading::with_workers(inputs, CHUNK as u64, workers(), LEAST);
    let (loaded, bodies) = if workers() <= 1 {
        let (loader, bodies) = read_alone(reading, files)?;
        (Some(Pipeline::from(loader).finish()), bodies)
    } else {
        threads::read(reading, files)?
    };
    let mut loaded = loaded?;
    let deferred = std::mem::take(&mut loaded.deferred);
    let modules = loaded.modules.iter_mut().map(|a| &mut a.module).collect();
    bodies.complete(modules, &deferred, &mut loaded.errors).ok()?;
    Some(loaded)
}

/// The lanes one after the other on this thread (one worker): the first read, then the
/// read behind, which then has all it is to read.
fn read_alone(mut reading: Reading, paths: &[PathBuf]) -> Option<(bufscope::Loader, bufscope::parse::Bodies)> {
    let mut files = Files::new(paths);
    for lane in [Lane::First, Lane::Behind] {
        while let Next::Fetch(ask) = reading.next(lane) {
            if let Err(e) = files.fetch(&ask.file, ask.bytes.clone(), |b| reading.feed(lane, b)) {
                reading.fail(lane, format!("{}: {e}", ask.file));
            }
        }
    }
    reading.finish().ok()
}
