//! Where a skipped `Used values` body ends, found from its file's end backwards
//! ([`BodyEnd`]), with the slices the search looks at asked for ahead: its first ones while
//! the file is still read forward ([`Tail::first_slice`]), the rest a few at a time, so that the
//! search does not wait for one read after another.
//!
//! Owns: the reads of a file's last slices.

use std::collections::VecDeque;
use std::ops::Range;

use bufscope::parse::{is_gzip, BodyEnd};
use web_sys::File;

use super::{Picked, Reader, Slice, CHUNK};

/// Slices asked for from a file's end as soon as it is known to be plain text.
const FIRST: usize = 4;
/// Slices of the search under way at once.
const SEARCH_AHEAD: usize = 4;
/// Most reads this module has under way at once (those asked first, not all taken by the
/// search, beside the search's own).
pub(super) const MOST_ASKED: usize = FIRST + SEARCH_AHEAD;
/// Files smaller than this are searched without asking ahead (a slice or two).
const WORTH_IT: f64 = 4.0 * CHUNK;

/// A file's last slices, asked for before the search needs them.
pub(super) struct Tail {
    /// Whether the first slice of the file is still to come (and, with it, the asking).
    waiting: bool,
    asked: VecDeque<(Range<u64>, Slice)>,
}

impl Tail {
    /// Nothing asked for yet; with `ask`, the first slices are asked for once the file's
    /// first slice shows it is plain text (a gzipped file is read forward, no body skipped).
    pub(super) fn new(ask: bool) -> Tail {
        Tail {
            waiting: ask,
            asked: VecDeque::new(),
        }
    }

    /// Told each slice of `file` read forward: after the first, asks for the slices a
    /// search from the end of `file` looks at first (the same for any body starting before
    /// them), read while the page parses what comes before.
    pub(super) fn first_slice(&mut self, reader: &Reader, file: &File, bytes: &[u8]) {
        let size = file.size();
        if !std::mem::take(&mut self.waiting) || size < WORTH_IT || is_gzip(bytes) {
            return;
        }
        let search = BodyEnd::new(0, size as u64, CHUNK as u64);
        self.asked = search
            .ahead()
            .take(FIRST)
            .map(|r| (r.clone(), read(reader, file, &r)))
            .collect();
    }

    /// The read of `range` asked for already, if any (the others before it are dropped).
    fn take(&mut self, range: &Range<u64>) -> Option<Slice> {
        while let Some((r, _)) = self.asked.front() {
            if r == range {
                return self.asked.pop_front().map(|(_, s)| s);
            }
            if r.start < range.start {
                return None;
            }
            self.asked.pop_front();
        }
        None
    }
}

fn read(reader: &Reader, file: &File, r: &Range<u64>) -> Slice {
    reader.start(file, r.start as f64, r.end as f64)
}

/// Where the `Used values` body being skipped ends, looked for from the end of the file
/// ([`BodyEnd`]), `fed` bytes having been fed, with what `tail` asked for first:
/// `Some(None)` when no jump is to be made (or a slice could not be read); `None` once the
/// read is cancelled (no slice is asked for after).
pub(super) async fn body_end(
    picked: &Picked,
    reader: &Reader,
    fed: f64,
    cancelled: &impl Fn() -> bool,
    tail: &mut Tail,
) -> Option<Option<(f64, bool)>> {
    let file = &picked.file;
    let mut look = BodyEnd::new(fed as u64, file.size() as u64, CHUNK as u64);
    let mut plan: VecDeque<Range<u64>> = look.ahead().collect();
    let mut under_way: VecDeque<(Range<u64>, Slice)> = VecDeque::new();
    let mut buf = Vec::new();
    while let Some(r) = look.next() {
        if cancelled() {
            return None;
        }
        while under_way.len() < SEARCH_AHEAD {
            let Some(next) = plan.pop_front() else { break };
            let slice = tail
                .take(&next)
                .unwrap_or_else(|| read(reader, file, &next));
            under_way.push_back((next, slice));
        }
        let slice = match under_way.pop_front() {
            Some((asked, slice)) if asked == r => slice,
            // Not planned (cannot happen: `ahead` is what `next` gives): read it now.
            _ => read(reader, file, &r),
        };
        if slice.finish(&mut buf).await.is_err() {
            return Some(None);
        }
        look.look(&buf);
    }
    if cancelled() {
        return None;
    }
    Some(look.answer().map(|(to, at_end)| (to as f64, at_end)))
}
