//! `bufscope generate`: a bigger, valid dump made from a real one, for scale tests.
//!
//! The program of a one-file dump (allocations, `Used values`, `HloLiveRange`) is repeated
//! K times inside one module, as if the compiled program ran its body K times in a row:
//! copy k gets fresh value ids (`id + k × span`), allocation indices, parameter numbers and
//! instruction names, and its schedule follows the previous copy's (`step + k × max`).
//! `Total bytes used` and `max` are recomputed; XLA's peak list and stack-trace breakdown are
//! copy 0's, which stay true because no other copy is live at that step. Only the native
//! binary has this; the core does no I/O.
//!
//! Names are renamed as XLA names instructions: a name ending in a number (`add.5`) keeps its
//! stem and gets a number of its own in copy k (`add.{5 + k × names}`, `names` being one more
//! than the largest such number in the source), so that a big generated module is named like
//! a big real one; a name without one (`Arg_0`, or `add.05`, whose number XLA would not
//! print) gets `.cK`. Copy 0 keeps the originals.

use bufscope::parse::numbered_name;
use std::io::{self, Write};

/// What a source dump must have, by header line, in this order.
const HEADERS: [&str; 7] = [
    "BufferAssignment:",
    "Total bytes used: ",
    "Used values:",
    "HloLiveRange (max ",
    "  InstructionSequence:",
    "  BufferLiveRange:",
    "  Live ranges at ",
];

/// The lines of each section of the source.
struct Sections<'a> {
    allocations: Vec<&'a [u8]>,
    total: u64,
    used: Vec<&'a [u8]>,
    max: u64,
    sequence: Vec<&'a [u8]>,
    ranges: Vec<&'a [u8]>,
    /// The peak header, its list and whatever follows (stack trace), as is.
    tail: Vec<&'a [u8]>,
}

fn split(src: &[u8]) -> Result<Sections<'_>, String> {
    let lines: Vec<&[u8]> = src
        .split(|&c| c == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect();
    let mut at = [usize::MAX; HEADERS.len()];
    let mut next = 0;
    for (i, l) in lines.iter().enumerate() {
        if next < HEADERS.len() && l.starts_with(HEADERS[next].as_bytes()) {
            at[next] = i;
            next += 1;
        }
    }
    if next < HEADERS.len() {
        return Err(format!(
            "the source needs every section of a one-file dump (XLA 2021-2026); `{}` is missing",
            HEADERS[next].trim()
        ));
    }
    let number = |line: &[u8], prefix: &str| -> Result<u64, String> {
        leading_number(&line[prefix.len()..]).0.ok_or_else(|| {
            format!(
                "cannot read the number in `{}`",
                String::from_utf8_lossy(line)
            )
        })
    };
    let non_empty = |r: std::ops::Range<usize>| -> Vec<&[u8]> {
        lines[r].iter().copied().filter(|l| !l.is_empty()).collect()
    };
    let mut tail = non_empty(at[6]..lines.len());
    while tail.last().is_some_and(|l| l.is_empty()) {
        tail.pop();
    }
    Ok(Sections {
        allocations: non_empty(at[0] + 1..at[1]),
        total: number(lines[at[1]], HEADERS[1])?,
        used: non_empty(at[2] + 1..at[3]),
        max: number(lines[at[3]], HEADERS[3])?,
        sequence: non_empty(at[4] + 1..at[5]),
        ranges: non_empty(at[5] + 1..at[6]),
        tail,
    })
}

/// How copy `k` renames and renumbers.
struct Copy {
    k: u64,
    id_span: u64,
    /// What copy k adds to the number a name ends in, per copy ([`Spans::names`]).
    name_span: u64,
    /// The largest number a name given to [`Copy::name`] ended in (how `name_span` is found).
    largest_suffix: std::cell::Cell<u64>,
    allocations: u64,
    parameters: u64,
    max: u64,
}

impl Copy {
    fn name(&self, out: &mut Vec<u8>, name: &[u8]) {
        let numbered = numbered_name(name).map(|(stem, n)| (stem, u64::from(n)));
        if let Some((_, n)) = numbered {
            self.largest_suffix.set(self.largest_suffix.get().max(n));
        }
        match numbered {
            _ if self.k == 0 => out.extend_from_slice(name),
            Some((stem, n)) => {
                out.extend_from_slice(stem);
                out.extend_from_slice((n + self.k * self.name_span).to_string().as_bytes());
            }
            None => {
                out.extend_from_slice(name);
                out.extend_from_slice(format!(".c{}", self.k).as_bytes());
            }
        }
    }

    /// Rewrites `<ID NAME...>` at the start of `s`; returns the bytes consumed.
    fn value_token(&self, out: &mut Vec<u8>, s: &[u8]) -> usize {
        let (id, digits) = leading_number(&s[1..]);
        let id = id.unwrap_or(0);
        let name_start = 1 + digits + 1;
        let name_len = s[name_start.min(s.len())..]
            .iter()
            .take_while(|&&c| !matches!(c, b'{' | b' ' | b'>'))
            .count();
        out.extend_from_slice(format!("<{} ", id + self.k * self.id_span).as_bytes());
        self.name(out, &s[name_start..name_start + name_len]);
        name_start + name_len
    }
}

fn name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-')
}

fn allocation_line(c: &Copy, out: &mut Vec<u8>, line: &[u8]) {
    if let Some(rest) = line.strip_prefix(b"allocation ") {
        let (index, digits) = leading_number(rest);
        let index = index.unwrap_or(0);
        out.extend_from_slice(format!("allocation {}", index + c.k * c.allocations).as_bytes());
        let rest = &rest[digits..];
        match find(rest, b", parameter ") {
            Some(p) => {
                let after = &rest[p + 12..];
                let (n, d) = leading_number(after);
                let n = n.unwrap_or(0);
                out.extend_from_slice(&rest[..p + 12]);
                out.extend_from_slice((n + c.k * c.parameters).to_string().as_bytes());
                out.extend_from_slice(&after[d..]);
            }
            None => out.extend_from_slice(rest),
        }
    } else if let Some(p) = find(line, b"<") {
        out.extend_from_slice(&line[..p]);
        let used = c.value_token(out, &line[p..]);
        out.extend_from_slice(&line[p + used..]);
    } else {
        out.extend_from_slice(line);
    }
}

fn used_line(c: &Copy, out: &mut Vec<u8>, line: &[u8]) {
    if line.starts_with(b"<") {
        let used = c.value_token(out, line);
        out.extend_from_slice(&line[used..]);
    } else if let Some(text) = line.strip_prefix(b" from instruction:") {
        // Every `%name` in the instruction text refers to an instruction of this copy.
        out.extend_from_slice(b" from instruction:");
        let mut i = 0;
        while i < text.len() {
            if text[i] == b'%' {
                let n = text[i + 1..].iter().take_while(|&&c| name_char(c)).count();
                out.push(b'%');
                c.name(out, &text[i + 1..i + 1 + n]);
                i += 1 + n;
            } else {
                let next = memchr::memchr(b'%', &text[i..]).map_or(text.len(), |p| i + p);
                out.extend_from_slice(&text[i..next]);
                i = next;
            }
        }
    } else if let Some(rest) = line.strip_prefix(b"  ") {
        // A position `NAME[ {i}]` or a use `NAME, operand N[ {i}]`.
        let n = rest.iter().take_while(|&&c| name_char(c)).count();
        out.extend_from_slice(b"  ");
        if rest == b"(none)" {
            out.extend_from_slice(rest);
        } else {
            c.name(out, &rest[..n]);
            out.extend_from_slice(&rest[n..]);
        }
    } else {
        out.extend_from_slice(line);
    }
}

fn sequence_line(c: &Copy, out: &mut Vec<u8>, line: &[u8]) {
    let rest = line.trim_ascii_start();
    let colon = rest.iter().position(|&b| b == b':').unwrap_or(0);
    let i: u64 = std::str::from_utf8(&rest[..colon])
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(0);
    out.extend_from_slice(format!("    {}:", i + c.k * c.max).as_bytes());
    c.name(out, rest.get(colon + 1..).unwrap_or_default());
}

fn range_line(c: &Copy, out: &mut Vec<u8>, line: &[u8]) {
    let rest = line.trim_ascii_start();
    let colon = memchr::memrchr(b':', rest).unwrap_or(0);
    let (left, right) = (&rest[..colon], &rest.get(colon + 1..).unwrap_or_default());
    let brace = memchr::memchr(b'{', left).unwrap_or(left.len());
    out.extend_from_slice(b"    ");
    c.name(out, &left[..brace]);
    out.extend_from_slice(&left[brace..]);
    let text = String::from_utf8_lossy(right);
    let (s, e) = text.split_once('-').unwrap_or(("0", "0"));
    let (s, e): (u64, u64) = (s.parse().unwrap_or(0), e.parse().unwrap_or(0));
    out.extend_from_slice(format!(":{}-{}", s + c.k * c.max, e + c.k * c.max).as_bytes());
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

/// Writes `copies` copies of `src`'s program as one dump; returns the bytes written.
pub fn generate(src: &[u8], copies: u64, out: &mut impl Write) -> Result<u64, String> {
    let s = split(src)?;
    let spans = Spans::of(&s);
    let mut w = Counting {
        inner: out,
        bytes: 0,
    };
    write_copies(&s, &spans, copies, &mut w).map_err(|e| e.to_string())?;
    Ok(w.bytes)
}

/// What each copy adds to value ids, allocation indices, parameter numbers and the numbers
/// names end in.
struct Spans {
    ids: u64,
    allocations: u64,
    parameters: u64,
    names: u64,
}

/// A line rewriter for copy k.
type Rewrite = fn(&Copy, &mut Vec<u8>, &[u8]);

impl Sections<'_> {
    /// Each section whose lines every copy rewrites, with its rewriter, in the dump's order.
    fn rewritten(&self) -> [(&[&[u8]], Rewrite); 4] {
        [
            (&self.allocations, allocation_line),
            (&self.used, used_line),
            (&self.sequence, sequence_line),
            (&self.ranges, range_line),
        ]
    }
}

impl Copy {
    fn new(k: u64, spans: &Spans, max: u64) -> Copy {
        Copy {
            k,
            id_span: spans.ids,
            name_span: spans.names,
            largest_suffix: Default::default(),
            allocations: spans.allocations,
            parameters: spans.parameters,
            max,
        }
    }
}

impl Spans {
    fn of(s: &Sections) -> Spans {
        let max_id = s
            .used
            .iter()
            .filter_map(|l| l.strip_prefix(b"<"))
            .filter_map(|rest| leading_number(rest).0)
            .max()
            .unwrap_or(0);
        let allocations = s
            .allocations
            .iter()
            .filter(|l| l.starts_with(b"allocation "))
            .count() as u64;
        let parameters = s
            .allocations
            .iter()
            .filter_map(|l| find(l, b", parameter ").map(|p| &l[p + 12..]))
            .filter_map(|rest| leading_number(rest).0)
            .max()
            .map_or(0, |m| m + 1);
        let mut spans = Spans {
            ids: max_id + 1,
            allocations,
            parameters,
            names: 0,
        };
        spans.names = name_span(s, &spans);
        spans
    }
}

/// One more than the largest number a renamed name ends in: copy 1's lines rewritten once,
/// for nothing, through the same [`Copy::name`] as the copies'.
fn name_span(s: &Sections, spans: &Spans) -> u64 {
    let c = Copy::new(1, spans, s.max);
    let mut buf = Vec::new();
    for (lines, rewrite) in s.rewritten() {
        for line in lines {
            buf.clear();
            rewrite(&c, &mut buf, line);
        }
    }
    c.largest_suffix.get() + 1
}

/// The dump: each section with every copy's lines, the totals recomputed, the tail as is.
fn write_copies(s: &Sections, spans: &Spans, copies: u64, w: &mut impl Write) -> io::Result<()> {
    let mut buf = Vec::with_capacity(1 << 16);
    let mut section = |w: &mut dyn Write, lines: &[&[u8]], f: Rewrite| {
        for k in 0..copies {
            let c = Copy::new(k, spans, s.max);
            for line in lines {
                f(&c, &mut buf, line);
                buf.push(b'\n');
                if buf.len() > 1 << 16 {
                    w.write_all(&buf)?;
                    buf.clear();
                }
            }
        }
        w.write_all(&buf)?;
        buf.clear();
        Ok::<(), io::Error>(())
    };
    w.write_all(b"BufferAssignment:\n")?;
    section(w, &s.allocations, allocation_line)?;
    let total = s.total.saturating_mul(copies);
    write!(
        w,
        "\nTotal bytes used: {total} ({})\n\nUsed values:\n",
        bufscope::units::tsl_human_bytes(total)
    )?;
    section(w, &s.used, used_line)?;
    write!(
        w,
        "\n\nHloLiveRange (max {}):\n  InstructionSequence:\n",
        s.max * copies
    )?;
    section(w, &s.sequence, sequence_line)?;
    w.write_all(b"  BufferLiveRange:\n")?;
    section(w, &s.ranges, range_line)?;
    for line in &s.tail {
        w.write_all(line)?;
        w.write_all(b"\n")?;
    }
    w.flush()
}

/// The number the decimal digits at the start of `s` spell (`None`: no digits, or too
/// big), and how many digits there are.
fn leading_number(s: &[u8]) -> (Option<u64>, usize) {
    let digits = s.iter().take_while(|c| c.is_ascii_digit()).count();
    let n = std::str::from_utf8(&s[..digits])
        .ok()
        .and_then(|d| d.parse().ok());
    (n, digits)
}

/// How many copies make at least `target` bytes from a source of `size` bytes.
pub fn copies_for(size: u64, target: u64) -> u64 {
    target.div_ceil(size.max(1)).max(1)
}

struct Counting<'a, W: Write> {
    inner: &'a mut W,
    bytes: u64,
}

impl<W: Write> Write for Counting<'_, W> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(b)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: &str =
        include_str!("../tests/fixtures/cpu/jax0.6.2/cpu_tiny.buffer-assignment.txt");
    const SCAN: &str =
        include_str!("../tests/fixtures/cpu/jax0.6.2/cpu_scan_layers.buffer-assignment.txt");

    fn read(bytes: &[u8]) -> bufscope::model::Module {
        let load = bufscope::load_files([("gen.buffer-assignment.txt", bytes)]);
        assert!(load.errors.is_empty(), "{:?}", load.errors);
        assert_eq!(load.modules.len(), 1);
        load.modules.into_iter().next().unwrap()
    }

    #[test]
    fn copies_read_as_one_valid_module() {
        for src in [TINY, SCAN] {
            let one = read(src.as_bytes());
            let mut out = Vec::new();
            generate(src.as_bytes(), 3, &mut out).unwrap();
            let m = read(&out);
            let w: Vec<String> = m.warnings.iter().map(|w| w.to_string()).collect();
            assert!(w.is_empty(), "{w:?}");
            assert_eq!(m.allocations.len(), 3 * one.allocations.len());
            assert_eq!(m.values.len(), 3 * one.values.len());
            // No two copies' names meet.
            assert_eq!(m.instructions.len(), 3 * one.instructions.len());
            assert_eq!(m.total_bytes(), 3 * one.total_bytes());
            let (s1, s3) = (one.schedule.as_ref().unwrap(), m.schedule.as_ref().unwrap());
            assert_eq!(s3.max, 3 * s1.max);
            assert_eq!(s3.sequence.len(), 3 * s1.sequence.len());
            // Every value has its live range, and copies do not overlap in time.
            let timed =
                |m: &bufscope::model::Module| m.values.iter().filter(|v| v.live.is_some()).count();
            assert_eq!(timed(&m), 3 * timed(&one));
            // The analysis sees each copy's peak: the same occupied bytes, three times over time.
            let (a1, a3) = (
                bufscope::analysis::analyze(&one),
                bufscope::analysis::analyze(&m),
            );
            assert_eq!(
                a3.spaces[0].allocated_bytes,
                3 * a1.spaces[0].allocated_bytes
            );
        }
    }

    /// Copy k numbers a numbered name past every copy before it; other names get `.cK`.
    #[test]
    fn names_are_numbered_as_xla_numbers_them() {
        let spans = Spans {
            ids: 0,
            allocations: 0,
            parameters: 0,
            names: 100,
        };
        let renamed = |k, name: &str| {
            let mut out = Vec::new();
            Copy::new(k, &spans, 0).name(&mut out, name.as_bytes());
            String::from_utf8(out).unwrap()
        };
        assert_eq!(renamed(0, "add.5"), "add.5");
        assert_eq!(renamed(2, "add.5"), "add.205");
        assert_eq!(renamed(1, "a.b.0"), "a.b.100");
        assert_eq!(renamed(1, "Arg_0"), "Arg_0.c1");
        assert_eq!(renamed(3, "add.05"), "add.05.c3");
        assert_eq!(renamed(1, "x.1234567890"), "x.1234567890.c1");
        // The span is one more than the largest number a source's names end in.
        let s = split(SCAN.as_bytes()).unwrap();
        let largest = s
            .sequence
            .iter()
            .filter_map(|l| numbered_name(l.rsplit(|&c| c == b':').next().unwrap()))
            .map(|(_, n)| u64::from(n))
            .max()
            .unwrap();
        assert!(Spans::of(&s).names > largest);
    }

    #[test]
    fn copies_for_target() {
        assert_eq!(copies_for(100, 250), 3);
        assert_eq!(copies_for(100, 50), 1);
        assert_eq!(copies_for(0, 50), 50);
    }

    #[test]
    fn rejects_split_files() {
        let values = include_str!("../tests/fixtures/cpu/jax0.10.2/cpu_tiny.buffer-assignment.txt");
        assert!(generate(values.as_bytes(), 2, &mut Vec::new()).is_err());
    }
}
