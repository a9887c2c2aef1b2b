//! Where a `Used values` body lies in a file's bytes, found without reading the file
//! through the loader: its end from the file's end backwards ([`BodyEnd`], [`last_header`]:
//! the page and the command line jump there), and, for the command line's guess, the start
//! of a file's first body from its beginning ([`BodyStart`]).

use super::super::headers::{header_section, Section};
use super::super::used_values::{body_line, BodyLine};
use std::ops::Range;

/// What [`last_header`] found in a slice of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// The start of the slice's last whole line that opens a section.
    Header(usize),
    /// A `*** Begin/End` wrapper line after any such header: a stdout dump, read forward.
    Wrapper,
    Nothing,
}

/// Looks for where a skipped `Used values` body ends, from the end of a file backwards, one
/// slice at a time: the last line of `bytes` that opens a section (or a wrapper line, after
/// which no guess is made). Only lines that start inside `bytes` count (after a `\n`, or at
/// its start when `at_line_start`); a line running past the slice's end is cut there, so
/// callers read each slice a little longer than the part they ask about.
pub fn last_header(bytes: &[u8], at_line_start: bool) -> Found {
    let mut end = bytes.len();
    loop {
        let start = match memchr::memrchr(b'\n', &bytes[..end]) {
            Some(nl) => nl + 1,
            None if at_line_start => 0,
            None => return Found::Nothing,
        };
        let raw = &bytes[start..end];
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        match body_line(line) {
            BodyLine::Wrapper => return Found::Wrapper,
            BodyLine::Header => return Found::Header(start),
            BodyLine::Body => {}
        }
        if start == 0 {
            return Found::Nothing;
        }
        end = start - 1;
    }
}

/// Where to jump while skipping a `Used values` body ([`Loader::jump`](crate::Loader::jump)):
/// the last line of the file that opens a section, looked for from the end backwards, a
/// slice at a time ([`BodyEnd::next`], [`BodyEnd::look`]); when there is none after the
/// bytes fed, the end of the file. A wrapper line met first means a stdout dump (its
/// modules each end with their own sections): no jump, the file is read forward.
pub struct BodyEnd {
    /// Bytes fed so far: the guess must lie at or after them.
    fed: u64,
    size: u64,
    slice: u64,
    /// The part of the file looked at so far: `from..size`.
    from: u64,
    found: Option<Option<(u64, bool)>>,
}

/// Bytes read past each slice's own part, so that a line cut there is whole (section
/// header lines are short).
const OVERLAP: u64 = 4096;

impl BodyEnd {
    /// Looks in a file of `size` bytes, of which `fed` were fed, reading at most `slice`
    /// bytes at a time (each slice overlaps the one after it by a few KiB).
    pub fn new(fed: u64, size: u64, slice: u64) -> Self {
        BodyEnd {
            fed,
            size,
            slice: slice.max(1),
            from: size,
            found: None,
        }
    }

    /// The next bytes to look at (`look` them), or none once the answer is known.
    pub fn next(&self) -> Option<Range<u64>> {
        if self.found.is_some() {
            return None;
        }
        Some(self.range_before(self.from))
    }

    /// The bytes [`BodyEnd::next`] gives in turn from here while no header is found, the
    /// last reaching the bytes fed: what a reader may ask for before it looks at them. A
    /// search made as if nothing was fed (`fed` 0) gives the same ranges as any other until
    /// that one comes near the bytes fed.
    pub fn ahead(&self) -> impl Iterator<Item = Range<u64>> + '_ {
        let floor = self.fed.saturating_sub(1);
        let mut from = self.found.is_none().then_some(self.from);
        std::iter::from_fn(move || {
            let range = self.range_before(from?);
            from = (range.start > floor).then_some(range.start);
            Some(range)
        })
    }

    /// The slice to look at when the part looked at so far is `from..size`.
    fn range_before(&self, from: u64) -> Range<u64> {
        // From the byte before the first unfed one, so that a line starting right there is
        // seen to start after a line end.
        let own = (self.slice - self.overlap()).max(1);
        let start = from.saturating_sub(own).max(self.fed.saturating_sub(1));
        start..(from + self.overlap()).min(self.size)
    }

    /// Bytes each slice reads past its own part: [`OVERLAP`], or half a small slice.
    fn overlap(&self) -> u64 {
        (self.slice / 2).min(OVERLAP)
    }

    /// The bytes of the range [`BodyEnd::next`] gave.
    pub fn look(&mut self, bytes: &[u8]) {
        let Some(range) = self.next() else { return };
        let own = (self.from - range.start) as usize;
        let found = last_header(bytes, range.start == 0);
        self.from = range.start;
        match found {
            Found::Header(at) if at <= own && range.start + at as u64 >= self.fed => {
                self.found = Some(Some((range.start + at as u64, false)));
            }
            Found::Wrapper => self.found = Some(None),
            _ if self.from <= self.fed.saturating_sub(1) => {
                self.found = Some(Some((self.size, true)))
            }
            _ => {}
        }
    }

    /// Where to jump (`(offset, at the end)`), none for no jump; asked once `next` is none.
    pub fn answer(&self) -> Option<(u64, bool)> {
        self.found.flatten()
    }
}

/// Where the first `Used values` body of a plain-text file starts, looked for from the
/// file's beginning, a slice at a time ([`BodyStart::feed`]): the line after the first line
/// that opens `Used values` by the one header rule ([`header_section`]; its `\r`, which the
/// loader would strip, kept). A guess (the loader decides what is a section's header, in
/// context), made so that the body can be read before the loader reaches it and checked
/// against what the loader then lists.
#[derive(Default)]
pub struct BodyStart {
    /// The start of a line not yet ended.
    carry: Vec<u8>,
    /// The bytes and the line ends before `carry`.
    at: u64,
    lines: u64,
    found: Option<(u64, u64)>,
}

impl BodyStart {
    /// The file's next bytes; once found, the body's offset in the file (the line after the
    /// header) and its first line's number (from 1).
    pub fn feed(&mut self, chunk: &[u8]) -> Option<(u64, u64)> {
        let mut rest = chunk;
        while let (None, Some(nl)) = (self.found, memchr::memchr(b'\n', rest)) {
            let mut line = std::mem::take(&mut self.carry);
            line.extend_from_slice(&rest[..nl]);
            self.at += line.len() as u64 + 1;
            self.lines += 1;
            if header_section(&line) == Some(Section::UsedValues) {
                self.found = Some((self.at, self.lines + 1));
            }
            line.clear();
            self.carry = line;
            rest = &rest[nl + 1..];
        }
        if self.found.is_none() {
            self.carry.extend_from_slice(rest);
        }
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ahead` lists the ranges `next` gives in turn when no header is found, down to the
    /// bytes fed, for any sizes; a search as if nothing was fed agrees until near them.
    #[test]
    fn ahead_lists_what_next_gives() {
        for (fed, size, slice) in [
            (0, 100, 10),
            (37, 100, 10),
            (99, 100, 7),
            (0, 5, 64),
            (3, 9000, 8192),
            (100, 100, 16),
        ] {
            let mut look = BodyEnd::new(fed, size, slice);
            let planned: Vec<_> = look.ahead().collect();
            let mut given = Vec::new();
            while let Some(r) = look.next() {
                given.push(r.clone());
                look.look(&vec![b'x'; (r.end - r.start) as usize]);
            }
            assert_eq!(planned, given, "fed {fed}, size {size}, slice {slice}");
            let blind: Vec<_> = BodyEnd::new(0, size, slice).ahead().collect();
            let same = planned
                .iter()
                .zip(&blind)
                .take_while(|(a, b)| a == b)
                .count();
            assert!(
                same + 1 >= planned.len(),
                "fed {fed}, size {size}, slice {slice}: {planned:?} / {blind:?}"
            );
        }
    }

    /// The first `Used values:` line is found in any slicing, at the file's start too, with
    /// its body's offset and first line; a line that only contains it, or a CRLF header,
    /// is not one.
    #[test]
    fn the_first_body_start() {
        let text = b"BufferAssignment:\n x Used values:\nUsed values:\r\nUsed values:\n<0 a @0>\nUsed values:\n";
        let body = text.len() - "<0 a @0>\nUsed values:\n".len();
        // The bytes, and the body's offset and first line.
        type Case<'a> = (&'a [u8], Option<(u64, u64)>);
        let cases: [Case; 4] = [
            (text, Some((body as u64, 5))),
            (b"Used values:\n<0 a @0>\n", Some((13, 2))),
            (b"Used values:", None),
            (b"", None),
        ];
        for (bytes, expected) in cases {
            for size in [1, 2, 13, 14, 15, 1000] {
                let mut start = BodyStart::default();
                let found = bytes.chunks(size).find_map(|c| start.feed(c));
                assert_eq!(
                    found,
                    expected,
                    "{:?} in slices of {size}",
                    String::from_utf8_lossy(bytes)
                );
                if expected.is_some() {
                    assert_eq!(start.feed(b"Used values:\n"), expected, "found stays found");
                }
            }
        }
    }
}
