//! The shipped read machine (`parse::Reading`), driven over files in memory with its
//! lanes taken in a seeded random order, asking for 64 B to 1 MiB at a time and fed in
//! seeded random pieces, reads what one pass reads, on every real dump (tests/fixtures and
//! ../shared, the 94 MB one in release only), HLO texts beside them included; so it does
//! with its `Used values` bodies cut into pieces read by piece lanes (`with_workers`: 3 to
//! 64 workers, pieces down to a byte, so that cuts fall between every pair of entries); a
//! read whose bytes are cut short fails rather than giving a wrong module.

mod common;

use bufscope::parse::{cut, Lane, Next, Reading};
use common::*;

/// Ask sizes the runs take in turn.
const CHUNKS: [u64; 5] = [64, 777, 4096, 65_536, 1 << 20];

/// Reads `files` `runs` times through the machine, each in an order and chunking of its
/// own, and checks each against one pass: the same load, the first read's analysis
/// already the complete one's, and completed without falling back wherever a plain run
/// (1 MiB asks, seed 0) completes.
fn check(files: &[(&str, &[u8])], label: &str, runs: u64) {
    let one = bufscope::load_files(files.iter().copied());
    let complete: Vec<String> = one.modules.iter().map(analysis_fingerprint).collect();
    let plain = load_deferred_seeded(files, 1 << 20, 0, |p, _| Ok(p)).0.is_some();
    for run in 0..runs {
        let seed = seed_of(label).wrapping_add(run);
        let chunk = CHUNKS[(seed % CHUNKS.len() as u64) as usize];
        let what = format!("{label} (seed {seed}, asks of {chunk} B)");
        let (first, load) = load_deferred_seeded(files, chunk, seed, |p, _| Ok(p));
        assert_same_load(&one, &load, &what);
        match first {
            Some(first) => assert_eq!(first, complete, "{what}: the first read's analysis"),
            None => assert!(!plain, "{what}: fell back to one pass where a plain run did not"),
        }
    }
}

#[test]
fn any_order_and_chunking_read_the_fixtures_as_one_pass() {
    for m in fixture_modules() {
        check(&m.inputs(), &m.label, 6);
    }
    let folder = modules_under(&fixtures_dir().join("folders"), |_, _| true);
    let files: Vec<(&str, &[u8])> = folder.iter().flat_map(|m| m.inputs()).collect();
    assert!(files.iter().any(|(n, _)| n.ends_with("after_optimizations.txt")));
    check(&files, "folders/mlp_train", 6);
}

/// Every module of ../shared/dumps (with its HLO text where there is one); in a debug
/// build, those of files up to 3 MB.
#[test]
fn any_order_and_chunking_read_the_shared_dumps_as_one_pass() {
    let test = "any_order_and_chunking_read_the_shared_dumps_as_one_pass";
    each_shared_module(test, |m, big| check(&m.inputs(), &m.label, if big { 2 } else { 4 }));
}

/// Gives `check` each module of ../shared/dumps but the oom ones, with whether a file of it
/// is over 1 MB (in a debug build, only those of files up to 3 MB); skips without
/// ../shared. Returns how many it gave.
fn each_shared_module(test: &str, mut check: impl FnMut(&ModuleFiles, bool)) -> usize {
    let Some(dir) = shared_dumps_or_skip(test) else {
        return 0;
    };
    let most = if cfg!(debug_assertions) { 3 << 20 } else { usize::MAX };
    let modules = modules_under(&dir, |folder, _| !folder.starts_with("oom"));
    let (mut read, mut left) = (0, 0);
    for m in &modules {
        if m.files.iter().any(|(_, b)| b.len() > most) {
            left += 1;
            continue;
        }
        check(m, m.files.iter().any(|(_, b)| b.len() > 1 << 20));
        read += 1;
    }
    assert!(read >= 20, "only {read} shared modules read");
    if left > 0 {
        skip_in_debug(test, &format!("{left} modules with files over 3 MB"));
    }
    read
}

/// A file whose bytes stop before the size it was given as: the first read fails (the
/// driver then reads the files again in one pass, which says what went wrong).
#[test]
fn bytes_cut_short_fail_the_read() {
    let m = fixture_module("cpu/jax0.6.2/cpu_tiny");
    let (name, bytes) = m.dump_files().next().unwrap();
    let mut reading = Reading::new(inputs_of(&[(name, bytes)]), 4096);
    while let Next::Fetch(ask) = reading.next(Lane::First) {
        let (from, to) = (ask.bytes.start as usize, ask.bytes.end as usize);
        reading.feed(Lane::First, &bytes[from..to.min(bytes.len() / 2).max(from)]);
    }
    assert!(reading.finish().is_err(), "a read cut short finished");
}

/// Reads `files` through [`Reading::with_workers`] `runs` times, each with workers, least
/// piece and chunking of its own, and checks each against one pass as [`check`] does;
/// returns how many bodies were cut into two pieces or more.
fn check_pieces(files: &[(&str, &[u8])], label: &str, runs: u64) -> usize {
    let one = bufscope::load_files(files.iter().copied());
    let complete: Vec<String> = one.modules.iter().map(analysis_fingerprint).collect();
    let plain = load_deferred_seeded(files, 1 << 20, 0, |p, _| Ok(p)).0.is_some();
    let bodies = deferred_bodies(files);
    let mut cut_bodies = 0;
    for run in 0..runs {
        let seed = seed_of(label).wrapping_add(run).wrapping_mul(31);
        let chunk = CHUNKS[(seed % CHUNKS.len() as u64) as usize];
        let workers = [3, 4, 5, 64][(seed / 7 % 4) as usize];
        let least = [1, 97, 4096, 1 << 16][(seed / 29 % 4) as usize];
        let what = format!("{label} (seed {seed}, {workers} workers, pieces ≥ {least} B, asks of {chunk} B)");
        let (first, load, on_pieces) = load_with_workers(files, (chunk, seed), workers, least);
        assert_same_load(&one, &load, &what);
        match first {
            Some(first) => assert_eq!(first, complete, "{what}: the first read's analysis"),
            None => assert!(!plain, "{what}: fell back to one pass where a plain run did not"),
        }
        let cut_here = bodies.iter().filter(|d| cut(d, workers - 1, least).len() > 1).count();
        // The pieces were read on their lanes, not by the read behind alone.
        assert!(cut_here == 0 || on_pieces > 0, "{what}: {cut_here} bodies cut, no byte fed on a piece lane");
        cut_bodies += cut_here;
    }
    cut_bodies
}

/// The `Used values` bodies the first read of `files` skips.
fn deferred_bodies(files: &[(&str, &[u8])]) -> Vec<bufscope::parse::DeferredUses> {
    fed_deferring(files).finish().deferred
}

#[test]
fn bodies_cut_into_pieces_read_the_fixtures_as_one_pass() {
    let mut cut_bodies = 0;
    for m in fixture_modules() {
        cut_bodies += check_pieces(&m.inputs(), &m.label, 8);
    }
    let folder = modules_under(&fixtures_dir().join("folders"), |_, _| true);
    let files: Vec<(&str, &[u8])> = folder.iter().flat_map(|m| m.inputs()).collect();
    cut_bodies += check_pieces(&files, "folders/mlp_train", 8);
    assert!(cut_bodies >= 50, "only {cut_bodies} bodies were cut into pieces");
}

/// Every module of ../shared/dumps, its bodies cut into pieces; in a debug build, those of
/// files up to 3 MB.
#[test]
fn bodies_cut_into_pieces_read_the_shared_dumps_as_one_pass() {
    let test = "bodies_cut_into_pieces_read_the_shared_dumps_as_one_pass";
    let mut cut_bodies = 0;
    let read = each_shared_module(test, |m, big| {
        cut_bodies += check_pieces(&m.inputs(), &m.label, if big { 2 } else { 3 });
    });
    assert!(cut_bodies >= read, "only {cut_bodies} bodies of {read} modules were cut into pieces");
}
