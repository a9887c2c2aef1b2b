//! Grammar of `HloLiveRange::ToString` (in `*-buffer-assignment.txt` until 2026-04, then in
//! `*-live-range.txt`) and of the stack-trace breakdown that follows it (2025-07 on):
//! the header, InstructionSequence, BufferLiveRange, both forms of the peak list, and the
//! tree lines. One function per line kind; no state.

use super::lex::{all, shape_index, spaced_u64, u32, u64, In};
use nom::bytes::complete::{tag, take_while1};
use nom::combinator::opt;
use nom::sequence::{delimited, preceded};
use nom::Parser;

/// `HloLiveRange (max N):`
pub(crate) fn header(line: In) -> Option<u32> {
    all(delimited(tag("HloLiveRange (max "), u32, tag("):")).parse(line))
}

/// `    N:NAME`
pub(crate) fn sequence_entry(line: In) -> Option<(u32, In)> {
    let i = line.strip_prefix(b"    ")?;
    all((u32, preceded(tag(":"), take_while1(|c: u8| c != b' '))).parse(i))
}

/// `    NAME{INDEX}:START-END`, split at the last `:` (names contain `-` and `.`).
pub(crate) fn range_entry(line: In) -> Option<(In, In, u32, u32)> {
    let i = line.strip_prefix(b"    ")?;
    let colon = memchr::memrchr(b':', i)?;
    let (left, right) = (&i[..colon], &i[colon + 1..]);
    let (start, end) = all((u32, preceded(tag("-"), u32)).parse(right))?;
    let (name, index) = split_index(left)?;
    Some((name, index, start, end))
}

/// `NAME{1,2}` → (`NAME`, `{1,2}`); `NAME` → (`NAME`, ``).
fn split_index(left: In) -> Option<(In, In)> {
    let (name, index) = match memchr::memchr(b'{', left) {
        Some(b) => (&left[..b], all(shape_index(&left[b..]))?),
        None => (left, &b""[..]),
    };
    (!name.is_empty() && !name.contains(&b' ')).then_some((name, index))
}

/// `  Live ranges at N (peak):`
pub(crate) fn peak_header(line: In) -> Option<u32> {
    all(delimited(tag("  Live ranges at "), u32, tag(" (peak):")).parse(line))
}

/// `    NAME[{INDEX}]: N bytes[ (cumulative: N bytes)]`
pub(crate) fn peak_entry(line: In) -> Option<(In, In, u64, Option<u64>)> {
    let i = line.strip_prefix(b"    ")?;
    let colon = memchr::memmem::find(i, b": ")?;
    let (name, index) = split_index(&i[..colon])?;
    let (bytes, cumulative) = all((
        u64,
        preceded(
            tag(" bytes"),
            opt(delimited(tag(" (cumulative: "), u64, tag(" bytes)"))),
        ),
    )
        .parse(&i[colon + 2..]))?;
    Some((name, index, bytes, cumulative))
}

/// `  Stack trace breakdown for peak usage: 12 288 bytes`
pub(crate) fn stack_header(line: In) -> Option<u64> {
    all(delimited(
        tag("  Stack trace breakdown for peak usage: "),
        spaced_u64,
        tag(" bytes"),
    )
    .parse(line))
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct StackLine<'a> {
    pub depth: u32,
    pub name: &'a [u8],
    pub total: u64,
    pub current: u64,
    pub remaining: u64,
}

/// A tree line: `    ROOT (P%, total: N bytes, current: N bytes, remaining: N bytes)` at
/// depth 0, then `      ├── NODE (...)`, `      │   └── NODE (...)` and so on. (FORMAT.md
/// gives two spaces before the root; the real dumps have four, and children six more.)
pub(crate) fn stack_line(line: In) -> Option<StackLine> {
    let mut i = line.strip_prefix(b"    ")?;
    let mut depth = 0;
    if i.first() == Some(&b' ') {
        i = i.strip_prefix(b"  ")?;
        depth = 1;
        loop {
            if let Some(rest) = i
                .strip_prefix("├── ".as_bytes())
                .or_else(|| i.strip_prefix("└── ".as_bytes()))
            {
                i = rest;
                break;
            }
            i = i
                .strip_prefix("│   ".as_bytes())
                .or_else(|| i.strip_prefix(b"    "))?;
            depth += 1;
        }
    }
    // The name is raw op_name text (spaces and parentheses allowed): split at the last " (".
    let open = memchr::memmem::rfind(i, b" (")?;
    let (name, stats) = (&i[..open], &i[open + 2..]);
    let pct = take_while1(|c: u8| c.is_ascii_digit() || c == b'.');
    let (total, current, remaining) = all((
        preceded((pct, tag("%, total: ")), spaced_u64),
        preceded(tag(" bytes, current: "), spaced_u64),
        delimited(tag(" bytes, remaining: "), spaced_u64, tag(" bytes)")),
    )
        .parse(stats))?;
    (!name.is_empty()).then_some(StackLine {
        depth,
        name,
        total,
        current,
        remaining,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(header(b"HloLiveRange (max 7):"), Some(7));
        assert_eq!(
            sequence_entry(b"    6:tuple.10"),
            Some((6, &b"tuple.10"[..]))
        );
        assert_eq!(
            range_entry(b"    copy-start.1{0,1}:1-15"),
            Some((&b"copy-start.1"[..], &b"{0,1}"[..], 1, 15))
        );
        assert_eq!(range_entry(b"    a-b{}:0-"), None);
        assert_eq!(peak_header(b"  Live ranges at 6 (peak):"), Some(6));
        assert_eq!(
            peak_entry(b"    Arg_1.2: 4096 bytes"),
            Some((&b"Arg_1.2"[..], &b""[..], 4096, None))
        );
        assert_eq!(
            peak_entry(b"    x.1{}: 4096 bytes (cumulative: 8192 bytes)"),
            Some((&b"x.1"[..], &b"{}"[..], 4096, Some(8192)))
        );
        assert_eq!(peak_entry(b"    x.1{}: 4096 bytes (cumulative: 8192"), None);
        assert_eq!(
            stack_header("  Stack trace breakdown for peak usage: 12 288 bytes".as_bytes()),
            Some(12288)
        );
    }

    #[test]
    fn tree() {
        let l = stack_line(
            b"    main.1 (100.0%, total: 12 288 bytes, current: 0 bytes, remaining: 12 288 bytes)",
        )
        .unwrap();
        assert_eq!((l.depth, l.name, l.total), (0, &b"main.1"[..], 12288));
        let l = stack_line("      ├── jit(f)/add (33.3%, total: 4 096 bytes, current: 4 096 bytes, remaining: 8 192 bytes)".as_bytes()).unwrap();
        assert_eq!(
            (l.depth, l.name, l.current, l.remaining),
            (1, &b"jit(f)/add"[..], 4096, 8192)
        );
        let l = stack_line("      │       └── a b (c) (20.0%, total: 1 bytes, current: 1 bytes, remaining: 0 bytes)".as_bytes()).unwrap();
        assert_eq!((l.depth, l.name), (3, &b"a b (c)"[..]));
        assert!(stack_line("      ├── x (20.0%, total: 1 bytes".as_bytes()).is_none());
    }
}
