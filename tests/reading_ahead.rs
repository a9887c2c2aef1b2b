//! The first read's guesses of what it asks next (`FirstLane::ahead`, which the page
//! fetches before it is asked) and its progress (`FirstLane::read_to`), driven as the page
//! drives them: the first lane alone, each ask fed whole. In one pass every guess is what
//! is then asked, in order; with `Used values` skipped, a guess is wasted only where a body
//! starts being skipped or its end is found; the progress never goes back and ends at the
//! files' size.

mod common;

use bufscope::parse::{Ask, Lane, Next, Reading};
use common::*;

/// Asks guessed at each step (the page's slices under way ahead of the one parsed).
const AHEAD: usize = 4;

/// What the first lane of `reading` asked for, each ask's guesses, and its progress after
/// each ask (the read behind left alone, as the page leaves it during the first read).
struct Trace {
    asks: Vec<Ask>,
    guesses: Vec<Vec<Ask>>,
    progress: Vec<u64>,
}

fn trace(reading: Reading, files: &[(&str, &[u8])]) -> Trace {
    let mut t = Trace { asks: Vec::new(), guesses: Vec::new(), progress: Vec::new() };
    // The lanes apart: the first one is what the page drives.
    let (mut first, _, _) = reading.into_lanes();
    while let Next::Fetch(ask) = first.next() {
        t.guesses.push(first.ahead(AHEAD));
        let bytes = files.iter().find(|(n, _)| *n == ask.file).map(|&(_, b)| b).unwrap();
        first.feed(&bytes[ask.bytes.start as usize..ask.bytes.end as usize]);
        t.asks.push(ask);
        t.progress.push(first.read_to());
    }
    t.progress.push(first.read_to());
    t
}

fn chunk_of(files: &[(&str, &[u8])]) -> u64 {
    // A few asks per file at least, so that there is something to guess.
    let most = files.iter().map(|(_, b)| b.len()).max().unwrap_or(0) as u64;
    (most / 9).clamp(64, 1 << 20)
}

fn small_modules() -> Vec<ModuleFiles> {
    let mut modules = fixture_modules();
    if let Some(dir) = shared_dumps_or_skip("the_first_reads_guesses_of_its_asks") {
        let most = if cfg!(debug_assertions) { 3 << 20 } else { 100 << 20 };
        let shared = modules_under(&dir, |folder, _| !folder.starts_with("oom"));
        modules.extend(shared.into_iter().filter(|m| m.files.iter().all(|(_, b)| b.len() <= most)));
    }
    modules
}

/// In one pass (nothing skipped) every guess is what the lane then asks, in order.
#[test]
fn in_one_pass_every_guess_is_asked_next() {
    let (mut guessed, mut modules) = (0, 0);
    for m in small_modules() {
        let files = m.inputs();
        let t = trace(Reading::one_pass(inputs_of(&files), chunk_of(&files)), &files);
        for (i, guess) in t.guesses.iter().enumerate() {
            let next = &t.asks[i + 1..(i + 1 + guess.len()).min(t.asks.len())];
            assert_eq!(guess.as_slice(), next, "{}: the guesses after ask {i}", m.label);
            guessed += guess.len();
        }
        modules += 1;
    }
    assert!(modules >= 10 && guessed > 100, "{modules} modules, {guessed} asks guessed");
}

/// With `Used values` skipped, a guess is wasted (never asked) only where a body starts
/// being skipped or its end is found: at most 2 × [`AHEAD`] per body skipped, none in a
/// file with no body skipped. And the guesses do come true: most asks were guessed.
#[test]
fn skipping_wastes_guesses_only_around_bodies() {
    let mut asked_guessed = (0, 0);
    for m in small_modules() {
        let files = m.inputs();
        let t = trace(Reading::new(inputs_of(&files), chunk_of(&files)), &files);
        let bodies = fed_deferring(&files).deferred().count();
        let mut guessed: Vec<&Ask> = t.guesses.iter().flatten().collect();
        guessed.sort_by_key(|a| (a.file.clone(), a.bytes.start, a.bytes.end));
        guessed.dedup();
        let wasted = guessed.iter().filter(|g| !t.asks.contains(g)).count();
        assert!(wasted <= 2 * AHEAD * bodies, "{}: {wasted} guesses wasted, {bodies} bodies", m.label);
        let hit = t.asks.iter().skip(1).filter(|a| guessed.contains(a)).count();
        asked_guessed.0 += t.asks.len().saturating_sub(1);
        asked_guessed.1 += hit;
    }
    let (asked, hit) = asked_guessed;
    println!("{hit} of {asked} asks after the first were guessed before they were asked");
    assert!(hit * 10 >= asked * 8, "only {hit} of {asked} asks were guessed before");
}

/// The progress never goes back, and ends at the files' size (bytes jumped over count).
#[test]
fn the_progress_goes_forward_to_the_files_size() {
    for m in small_modules() {
        let files = m.inputs();
        let total: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
        let t = trace(Reading::new(inputs_of(&files), chunk_of(&files)), &files);
        assert!(t.progress.windows(2).all(|w| w[0] <= w[1]), "{}: {:?}", m.label, t.progress);
        assert_eq!(t.progress.last(), Some(&total), "{}", m.label);
    }
}

/// The same Reading's first lane, driven through `Reading::next(Lane::First)`, asks for the
/// same bytes as the lane taken apart: the page's driver and the tests' see one machine.
#[test]
fn the_lane_apart_asks_as_the_reading_does() {
    let m = fixture_module("cpu/jax0.6.2/cpu_tiny");
    let files = m.inputs();
    let t = trace(Reading::new(inputs_of(&files), 256), &files);
    let mut reading = Reading::new(inputs_of(&files), 256);
    let mut asks = Vec::new();
    while let Next::Fetch(ask) = reading.next(Lane::First) {
        let bytes = files.iter().find(|(n, _)| *n == ask.file).map(|&(_, b)| b).unwrap();
        reading.feed(Lane::First, &bytes[ask.bytes.start as usize..ask.bytes.end as usize]);
        asks.push(ask);
    }
    assert_eq!(t.asks, asks);
}
