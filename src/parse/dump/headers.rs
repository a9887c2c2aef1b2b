//! The lines that open a section wherever they stand (`BufferAssignment:`, `Total bytes used:`,
//! `Used values:`, a live range's or a memory-usage report's first line) and a stdout dump's
//! `*** Begin/End ***` wrappers: the one rule of what a header is, for the file reader
//! (`file.rs`), the `Used values` reader's several-line instruction texts and the deferred
//! read's bounds alike. Each reader owns the grammar of its own header line.

use super::{buffer_assignment, live_range, report};

/// Which section the file reader is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::parse) enum Section {
    /// Nothing recognised yet in this (virtual) file.
    Preamble,
    /// Inside `*** Begin NAME ***` of a file that is not a buffer-assignment dump.
    Skip,
    /// A `Total bytes used:` line was read; the next header says whose it is.
    Total(u64),
    Allocations,
    UsedValues,
    LiveRange,
    Report,
}

/// Whether `line` opens a section wherever it stands.
pub(in crate::parse) fn is_header(line: &[u8]) -> bool {
    header_section(line).is_some()
}

/// A stdout dump's wrapper line, `*** Begin NAME ***` or `*** End NAME ***` (what
/// [`Lines::wrapper`] acts on); any other line starting `*** ` is an ordinary line of its
/// section.
pub(in crate::parse) fn is_wrapper(line: &[u8]) -> bool {
    let begin = line
        .strip_prefix(b"*** Begin ")
        .is_some_and(|l| l.ends_with(b" ***"));
    begin || (line.starts_with(b"*** End ") && line.ends_with(b" ***"))
}

/// The section a header line opens wherever it stands (`Total bytes used: N` opens the wait
/// for `Used values:`).
pub(in crate::parse) fn header_section(line: &[u8]) -> Option<Section> {
    if line == b"BufferAssignment:" {
        Some(Section::Allocations)
    } else if let Some(n) = buffer_assignment::total_line(line) {
        Some(Section::Total(n))
    } else if line == b"Used values:" {
        Some(Section::UsedValues)
    } else if live_range::opens(line) {
        Some(Section::LiveRange)
    } else if report::opens(line) {
        Some(Section::Report)
    } else {
        None
    }
}

