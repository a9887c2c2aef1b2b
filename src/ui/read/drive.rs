//! The page's driver of the core's read machine ([`Reading`]): a lane is asked what to
//! fetch, the bytes are fetched ([`Fetch`]: in slices, the ones the
//! lane lists ahead already under way) and fed, and the page gets a task between slices
//! for its events and frames. Which bytes, and what they come to, is the machine's
//! business: here are only the slices, the waits, the progress and the cancelling.
//!
//! Owns: the slice sizes of the page's reads ([`FIRST_SLICE`], [`BEHIND_SLICE`],
//! [`GZ_SLICE`]), how many are under way ([`AHEAD`]) and how much is fed between two
//! awaits ([`FEED`]).

use std::collections::VecDeque;

use bufscope::parse::{Ask, BehindLane, DeferredUses, FirstLane, Input, Next, Note, Reading};
use bufscope::Loader;

use super::fetch::Fetch;
use super::{Picked, Workers};
use crate::ui::tasks::let_paint;

/// Bytes per slice of the first read (and per ask of its machine). Each slice costs the
/// browser a few ms whatever its size (2 MiB rather than 1 MiB saved a tenth of the load
/// time at 1 GB; `read_floor.mjs` reads the 1 GB dump in 2.2–2.7 s in 2 MiB slices, 1.5–2.1
/// s in 8 MiB ones), but the slices under way when the lane jumps are read for nothing: in
/// 8 MiB slices the 94 MB dump's first read was slower, and the 1 GB one's, one ahead, no
/// sooner (docs/benchmarks.md).
const FIRST_SLICE: u64 = 2 * 1024 * 1024;
/// Bytes per slice of the read behind, whose bodies are read straight through: 8 MiB
/// rather than 2 MiB took about 0.45 s off it at 1 GB (docs/benchmarks.md).
pub(super) const BEHIND_SLICE: u64 = 8 * 1024 * 1024;
/// Slices under way ahead of the one being fed (what the lane lists ahead,
/// [`FirstLane::ahead`], or the rest of a long ask).
const AHEAD: usize = 3;
/// Bytes fed between two awaits (a slice is fed in such windows): about 10 ms of parsing
/// in the browser, so that the page keeps painting.
const FEED: u32 = 2 * 1024 * 1024;
/// Bytes per slice of a gzipped file (or from the start of one not seen yet): dumps
/// compress about tenfold, so this is about 2 MiB of text, fed between two awaits as
/// [`FEED`] bytes of plain text are.
const GZ_SLICE: u64 = 256 * 1024;

/// A lane of the machine as the driver sees it.
pub(super) trait Lane {
    fn next(&mut self) -> Next;
    /// The asks that come after the last one, as far as the lane can tell.
    fn ahead(&self, _n: usize) -> Vec<Ask> {
        Vec::new()
    }
    fn feed(&mut self, bytes: &[u8]);
    fn fail(&mut self, why: String);
}

impl Lane for FirstLane {
    fn next(&mut self) -> Next {
        FirstLane::next(self)
    }
    fn ahead(&self, n: usize) -> Vec<Ask> {
        FirstLane::ahead(self, n)
    }
    fn feed(&mut self, bytes: &[u8]) {
        FirstLane::feed(self, bytes)
    }
    fn fail(&mut self, why: String) {
        FirstLane::fail(self, why)
    }
}

impl Lane for BehindLane {
    fn next(&mut self) -> Next {
        BehindLane::next(self)
    }
    fn feed(&mut self, bytes: &[u8]) {
        BehindLane::feed(self, bytes)
    }
    fn fail(&mut self, why: String) {
        BehindLane::fail(self, why)
    }
}

/// The files fed to a [`Loader`], not yet finished: joining and checking
/// ([`Loader::finishing`]) is left to the caller, who does it in pieces.
pub struct Fed {
    pub loader: Loader,
    /// Milliseconds spent feeding the machine (parsing), the rest of reading being waits.
    pub parse_ms: f64,
    /// Why the files could not be read (a sentence), for `Load::errors`.
    pub errors: Vec<String>,
    /// The files set apart as HLO module texts (their first line is `HloModule`), to be
    /// read behind.
    pub apart: Vec<String>,
}

/// The first read of `files` (with `defer`, the machine's: bodies of `Used values` jumped
/// over, [`Reading::new`]; else in one pass, [`Reading::one_pass`]), its first lane alone:
/// the read behind is the caller's, after the diagrams or in the `Used values` worker.
/// `progress` gets the fraction of the bytes the read is past (0.0 ..= 1.0), `jumped`
/// each body as the machine lists it. `None` when `cancelled` turned true.
pub async fn read_files(
    files: &[Picked],
    defer: bool,
    workers: &Workers,
    progress: impl Fn(f64),
    cancelled: impl Fn() -> bool,
    mut jumped: impl FnMut(&DeferredUses),
) -> Option<Fed> {
    let inputs: Vec<Input> = (files.iter())
        .map(|p| Input {
            name: p.name.clone(),
            size: p.file.size() as u64,
            searched: p.searched,
        })
        .collect();
    let total: u64 = inputs.iter().map(|i| i.size).sum();
    let reading = match defer {
        true => Reading::new(inputs, FIRST_SLICE),
        false => Reading::one_pass(inputs, FIRST_SLICE),
    };
    let (mut first, _, _) = reading.into_lanes();
    let mut fetch = Fetch::new(files, workers.reader());
    let (mut parse_ms, mut apart) = (0.0, Vec::new());
    progress(0.0);
    let fed = |lane: &mut FirstLane, _: f64, ms: f64| {
        parse_ms += ms;
        if total > 0 {
            progress(lane.read_to() as f64 / total as f64);
        }
        for note in lane.mail() {
            match note {
                Note::Body(d) => jumped(&d),
                Note::Hlo { file, .. } => apart.push(file),
                // The pieces' notes are the read behind's (the page reads no pieces).
                Note::Bounds(..) | Note::Over | Note::Piece { .. } | Note::PieceRead(..) | Note::PiecesOver => {}
            }
        }
    };
    drive(&mut first, &mut fetch, FIRST_SLICE, &cancelled, fed).await?;
    progress(1.0);
    match first.finish() {
        Ok(loader) => Some(Fed { loader, parse_ms, errors: Vec::new(), apart }),
        Err(why) => {
            // The read was cut short: nothing of it is kept, the sentence says why.
            let mut loader = Loader::new();
            loader.defer_uses(defer);
            Some(Fed { loader, parse_ms, errors: vec![why], apart })
        }
    }
}

/// Drives `lane` to its end (or to a wait: only a read behind waits, for notes its driver
/// posts before it drives it, so none come): each ask fetched in slices of `plain_slice`
/// bytes of plain text ([`Sizes`]) and fed [`FEED`] bytes at a time, the page given a task after
/// each; `fed` gets the lane, the bytes and the milliseconds of each piece fed. A slice the
/// browser cannot read fails what the lane asked for. `None` when `cancelled` turned true
/// (nothing is asked for after).
pub(super) async fn drive<L: Lane>(
    lane: &mut L,
    fetch: &mut Fetch<'_>,
    plain_slice: u64,
    cancelled: &impl Fn() -> bool,
    mut fed: impl FnMut(&mut L, f64, f64),
) -> Option<()> {
    let mut sizes = Sizes { plain_slice, ..Sizes::default() };
    while let Next::Fetch(ask) = lane.next() {
        let mut parts = sizes.slices(&ask);
        while let Some(slice) = parts.pop_front() {
            let listed = lane.ahead(AHEAD).iter().flat_map(|a| sizes.slices(a)).collect::<Vec<_>>();
            let ahead: Vec<Ask> = parts.iter().cloned().chain(listed).take(AHEAD).collect();
            let read = fetch.get(&slice, &ahead).await;
            if cancelled() {
                return None;
            }
            if let Err(why) = read {
                lane.fail(why);
                break;
            }
            // In windows of FEED bytes (an empty slice is fed as one empty window).
            for at in (0..fetch.got().max(1)).step_by(FEED as usize) {
                let piece = fetch.window(at, FEED);
                if slice.bytes.start == 0 && at == 0 {
                    sizes.known(&slice.file, piece);
                }
                let t = js_sys::Date::now();
                lane.feed(piece);
                fed(lane, piece.len() as f64, js_sys::Date::now() - t);
                let_paint().await;
                if cancelled() {
                    return None;
                }
            }
        }
    }
    Some(())
}

/// Each file's slice size, known from its first bytes: `plain_slice` for plain text,
/// [`GZ_SLICE`] for gzip (and from the start of a file not yet seen).
#[derive(Default)]
struct Sizes {
    plain_slice: u64,
    plain: Vec<String>,
    gzip: Vec<String>,
}

impl Sizes {
    /// `file` starts with `first`.
    fn known(&mut self, file: &str, first: &[u8]) {
        let (this, other) = match bufscope::parse::is_gzip(first) {
            true => (&mut self.gzip, &self.plain),
            false => (&mut self.plain, &self.gzip),
        };
        if !this.iter().chain(other).any(|f| f == file) {
            this.push(file.to_string());
        }
    }

    /// The slices of `ask`, in order.
    fn slices(&self, ask: &Ask) -> VecDeque<Ask> {
        let known = |files: &[String]| files.contains(&ask.file);
        // Not seen yet: from its start, small slices until it is; past it, plain text (a
        // body jumped over: a gzipped file is read forward, nothing skipped).
        let size = match (known(&self.plain), known(&self.gzip)) {
            (true, _) => self.plain_slice,
            (_, true) => GZ_SLICE,
            _ if ask.bytes.start > 0 => self.plain_slice,
            _ => GZ_SLICE,
        };
        let starts = (ask.bytes.start..ask.bytes.end).step_by(size as usize);
        let slice = |at: u64| Ask {
            file: ask.file.clone(),
            bytes: at..ask.bytes.end.min(at + size),
        };
        starts.map(slice).collect()
    }
}
