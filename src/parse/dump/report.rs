//! `*-memory-usage-report.txt` (`BufferAssignment::MemoryUsageReport`), both formats:
//! A (2024-10 … 2026-03: sorted allocation lists) and B (2026-03 on: one block per memory
//! space). Its grammar, and its reader ([`Report`]), which keeps the totals; every other
//! line is only recognised, so that a line that fits no rule gives a warning.

use super::lex::{all, u32, u64, In};
use super::section::{Cx, Flow, SectionReader};
use crate::model::{MemoryReport, ReportSpace};
use nom::bytes::complete::{tag, take_until};
use nom::sequence::{delimited, preceded, terminated};
use nom::Parser;

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ReportLine<'a> {
    /// `Total bytes used: N (human)` (format A).
    TotalUsed(u64),
    /// `Memory Space: NAME (color=N)` (format B).
    MemorySpace(&'a [u8], u32),
    /// `Total bytes: N (human)` (format B).
    SpaceTotal(u64),
    /// Any other line of the report's grammar.
    Known,
}

pub(crate) fn report_line(line: In) -> Option<ReportLine> {
    if let Some(n) = super::buffer_assignment::total_line(line) {
        return Some(ReportLine::TotalUsed(n));
    }
    if let Some((name, color)) = all(preceded(
        tag("Memory Space: "),
        (
            take_until(" (color="),
            delimited(tag(" (color="), u32, tag(")")),
        ),
    )
    .parse(line))
    {
        return Some(ReportLine::MemorySpace(name, color));
    }
    if let Some(n) = all(preceded(tag("Total bytes: "), terminated(u64, human_suffix)).parse(line))
    {
        return Some(ReportLine::SpaceTotal(n));
    }
    let body = line
        .strip_prefix(b"\t")
        .or_else(|| line.strip_prefix(b"  "))
        .unwrap_or(line);
    let known = body.is_empty()
        || body == b"Allocations sorted by size:"
        || body == b"Allocations sorted by size with their values:"
        || body.starts_with(b"cumulative_size;")
        || (body.len() >= 20 && body.iter().all(|&c| c == b'-'))
        || (body.starts_with(b"The rest ") && body.ends_with(b" of the total size and not shown."))
        || (body.starts_with(b"allocation ") && body.ends_with(b":"))
        || is_row(body);
    known.then_some(ReportLine::Known)
}

/// ` (human)` after a byte count.
fn human_suffix(i: In) -> super::lex::Res<()> {
    if i.starts_with(b" (") && i.ends_with(b")") {
        Ok((&i[i.len()..], ()))
    } else {
        Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Tag,
        )))
    }
}

/// A table row: `   4.0KiB( 33%);     8.0KiB; ...` (`%10s(%3.0f%%); ...`).
fn is_row(body: In) -> bool {
    let t = body.trim_ascii_start();
    let Some(p) = memchr::memmem::find(t, b"%); ") else {
        return false;
    };
    t[..p].contains(&b'(') && t[..p].first().is_some_and(u8::is_ascii_digit)
}

/// Whether `line` opens a report inside another file: `Memory Space: NAME (color=N)` or
/// `Allocations sorted by size:`.
pub(in crate::parse) fn opens(line: In) -> bool {
    line == b"Allocations sorted by size:"
        || (line.starts_with(b"Memory Space: ")
            && matches!(report_line(line), Some(ReportLine::MemorySpace(..))))
}

/// Reader of a memory-usage report.
#[derive(Default)]
pub(in crate::parse) struct Report;

impl SectionReader for Report {
    /// The header is a line of the report; `total` is its `Total bytes used` when the
    /// header is format A's `Allocations sorted by size:`.
    fn start(&mut self, header: &[u8], total: Option<u64>, cx: &mut Cx) {
        self.line(header, cx);
        if let Some(total) = total.filter(|_| header == b"Allocations sorted by size:") {
            if let Some(b) = cx.builder() {
                b.module
                    .memory_report
                    .get_or_insert_with(MemoryReport::default)
                    .total_bytes = Some(total);
            }
        }
    }

    fn line(&mut self, line: &[u8], cx: &mut Cx) -> Flow {
        let Some(r) = report_line(line) else {
            return Flow::Other("a line of the memory-usage report");
        };
        let Some(b) = cx.builder() else {
            return Flow::Read;
        };
        let s = &mut b.module.strings;
        let rep = b
            .module
            .memory_report
            .get_or_insert_with(MemoryReport::default);
        match r {
            ReportLine::TotalUsed(n) => rep.total_bytes = Some(n),
            ReportLine::MemorySpace(name, color) => {
                let name = s.intern_bytes(name);
                rep.spaces.push(ReportSpace {
                    name,
                    color,
                    total_bytes: 0,
                });
            }
            ReportLine::SpaceTotal(n) => {
                if let Some(sp) = rep.spaces.last_mut() {
                    sp.total_bytes = n;
                }
            }
            ReportLine::Known => {}
        }
        Flow::Read
    }

    fn label(&self) -> &'static str {
        "memory-usage report"
    }

    fn end(&mut self, _at_file_end: bool, _cx: &mut Cx) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(
            report_line(b"Total bytes used: 12288 (12.0KiB)"),
            Some(ReportLine::TotalUsed(12288))
        );
        assert_eq!(
            report_line(b"Memory Space: default (color=0)"),
            Some(ReportLine::MemorySpace(b"default", 0))
        );
        assert_eq!(
            report_line(b"Total bytes: 12288 (12.0KiB)"),
            Some(ReportLine::SpaceTotal(12288))
        );
        for known in [
            &b"     4.0KiB(100%);     4.0KiB;            0;                1; f32[8,128]"[..],
            b"  ------------------------------------------------------------",
            b"\tcumulative_size;       size;       offset; used_by_n_values; shapes_list",
            b"\tThe rest 235 values are less than 5% of the total size and not shown.",
            b"allocation 2: size 4.0KiB, parameter 0, shape |f32[8,128]| at ShapeIndex {}:",
            b"",
        ] {
            assert_eq!(
                report_line(known),
                Some(ReportLine::Known),
                "{}",
                String::from_utf8_lossy(known)
            );
        }
        assert_eq!(report_line(b"hello"), None);
    }

    /// `tests/fixtures/cpu/jax0.10.2/cpu_tiny.memory-usage-report.txt` (format B), with
    /// one line that is not the report's.
    #[test]
    fn reader() {
        let text = "Memory Space: default (color=0)
Total bytes: 12288 (12.0KiB)
  cumulative_size;       size;       offset; used_by_n_values; shapes_list
  ------------------------------------------------------------
     4.0KiB(100%);     4.0KiB;            0;                1; f32[8,128]
Total bytes: twelve

  cumulative_size;       size;       offset; used_by_n_values; shapes_list";
        let (b, said) = super::super::section::run(&mut Report, text);
        let r = b.module.memory_report.as_ref().unwrap();
        assert_eq!(r.total_bytes, None);
        assert_eq!(r.spaces.len(), 1);
        assert_eq!((r.spaces[0].color, r.spaces[0].total_bytes), (0, 12288));
        assert_eq!(b.module.str(r.spaces[0].name), "default");
        assert_eq!(said, ["6: other: a line of the memory-usage report"]);
    }
}
