//! The `HloLiveRange` section (`HloLiveRange::ToString`, in `*-buffer-assignment.txt` until
//! 2026-04, then in `*-live-range.txt`) with the stack-trace breakdown that follows it
//! (2025-07 on): its grammar (the header, InstructionSequence, BufferLiveRange, both forms
//! of the peak list, the tree lines; one function per line kind) and its reader
//! ([`LiveRanges`]), which fills the module's schedule, its live ranges for the join, XLA's
//! peak list and the stack tree.

use super::lex::{all, is_shape_index, leading_u32, spaced_u64, u32, u64, In};
use super::section::{Cx, Flow, SectionReader};
use super::assemble::Target;
use crate::model::{InstrId, LiveRange, PeakEntry, StackNode, XlaPeak};
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
    let (n, rest) = leading_u32(line.strip_prefix(b"    ")?)?;
    let name = rest.strip_prefix(b":")?;
    (!name.is_empty() && memchr::memchr(b' ', name).is_none()).then_some((n, name))
}

/// `    NAME{INDEX}:START-END`, split at the last `:` (names contain `-` and `.`).
pub(crate) fn range_entry(line: In) -> Option<(In, In, u32, u32)> {
    let i = line.strip_prefix(b"    ")?;
    let colon = memchr::memrchr(b':', i)?;
    let (left, right) = (&i[..colon], &i[colon + 1..]);
    let (start, rest) = leading_u32(right)?;
    let (end, rest) = leading_u32(rest.strip_prefix(b"-")?)?;
    if !rest.is_empty() {
        return None;
    }
    let (name, index) = split_index(left)?;
    Some((name, index, start, end))
}

/// `NAME{1,2}` → (`NAME`, `{1,2}`); `NAME` → (`NAME`, ``).
fn split_index(left: In) -> Option<(In, In)> {
    let (name, index) = match memchr::memchr(b'{', left) {
        Some(b) => (&left[..b], Some(&left[b..]).filter(|i| is_shape_index(i))?),
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
/// depth 0, then `      ├── NODE (...)`, `      │   └── NODE (...)` and so on. (The real
/// dumps have four spaces before the root and six more before each child; docs/format.md.)
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

/// Whether `line` opens the section: `HloLiveRange (max N):` or `HloLiveRange not available`.
pub(in crate::parse) fn opens(line: In) -> bool {
    line.starts_with(b"HloLiveRange ")
        && (header(line).is_some() || line.starts_with(b"HloLiveRange not available"))
}

/// Where in the section the reader is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum At {
    /// After `HloLiveRange (max N):`.
    #[default]
    Header,
    Sequence,
    Ranges,
    Peak,
    PeakUndetermined,
    StackTrace,
    /// After `HloLiveRange not available`: nothing follows.
    Unavailable,
}

/// Reader of the `HloLiveRange` section.
#[derive(Default)]
pub(in crate::parse) struct LiveRanges {
    at: At,
    /// A `Live ranges at` peak list being read: running cumulative sum.
    cumulative: u64,
    /// Nesting of the stack tree: the node index at each depth.
    stack_path: Vec<usize>,
}

impl SectionReader for LiveRanges {
    fn start(&mut self, header_line: &[u8], _total: Option<u64>, cx: &mut Cx) {
        self.at = match header(header_line) {
            Some(max) => {
                if let Some(b) = cx.builder() {
                    b.start_schedule(max);
                }
                At::Header
            }
            None => At::Unavailable,
        };
    }

    fn line(&mut self, line: &[u8], cx: &mut Cx) -> Flow {
        if self.at == At::Unavailable {
            return if line.is_empty() {
                Flow::Read
            } else {
                Flow::Other("nothing after `HloLiveRange not available`")
            };
        }
        if line.starts_with(b"    ") {
            return match self.at {
                At::Sequence => sequence(line, cx),
                At::Ranges => range(line, cx),
                At::Peak => self.peak_entry(line, cx),
                At::StackTrace => self.stack_entry(line, cx),
                _ => Flow::Malformed(
                    "a section header (`  InstructionSequence:`, `  BufferLiveRange:`, ...)",
                ),
            };
        }
        match self.sub_header(line, cx) {
            Some(at) => {
                if at != At::Sequence && self.at == At::Sequence {
                    check_sequence(cx);
                }
                self.at = at;
                Flow::Read
            }
            None if line.is_empty() => Flow::Read,
            None => Flow::Other("an HloLiveRange line"),
        }
    }

    fn label(&self) -> &'static str {
        match self.at {
            At::Header | At::Unavailable => "HloLiveRange",
            At::Sequence => "HloLiveRange InstructionSequence",
            At::Ranges => "HloLiveRange BufferLiveRange",
            At::Peak | At::PeakUndetermined => "HloLiveRange peak list",
            At::StackTrace => "stack trace breakdown",
        }
    }

    fn end(&mut self, at_file_end: bool, cx: &mut Cx) {
        if let Some(b) = cx.builder() {
            b.look_up_later();
        }
        match self.at {
            At::Header => cx.warn(
                "the HloLiveRange section is cut short, before its InstructionSequence".into(),
            ),
            At::Sequence | At::Ranges => cx.warn(format!(
                "the {} section is cut short: no peak list follows",
                self.label()
            )),
            At::StackTrace if at_file_end => {
                if let Some(msg) = cx.builder().and_then(|b| b.check_stack_tree()) {
                    cx.warn(msg);
                }
            }
            _ => {}
        }
        self.at = At::Header;
        self.stack_path.clear();
    }
}

impl LiveRanges {
    /// A header inside the section (`  InstructionSequence:`, ...): where it leads.
    fn sub_header(&mut self, line: &[u8], cx: &mut Cx) -> Option<At> {
        if line == b"  InstructionSequence:" {
            Some(At::Sequence)
        } else if line == b"  BufferLiveRange:" {
            Some(At::Ranges)
        } else if let Some(time) = peak_header(line) {
            if let Some(b) = cx.builder() {
                b.look_up_later();
                b.schedule().peak = Some(XlaPeak {
                    time,
                    entries: Vec::new(),
                });
            }
            self.cumulative = 0;
            Some(At::Peak)
        } else if line == b"  Peak memory could not be determined due to unbounded dynamic shape." {
            if let Some(b) = cx.builder() {
                b.schedule().peak_undetermined = true;
            }
            Some(At::PeakUndetermined)
        } else if let Some(total) = stack_header(line) {
            if let Some(b) = cx.builder() {
                b.module.stack_trace_total = Some(total);
            }
            self.stack_path.clear();
            Some(At::StackTrace)
        } else {
            None
        }
    }

    /// `    NAME[{INDEX}]: N bytes[ (cumulative: N bytes)]`, checked against the running sum.
    fn peak_entry(&mut self, line: &[u8], cx: &mut Cx) -> Flow {
        let Some((name, index, bytes, cumulative)) = peak_entry(line) else {
            return Flow::Malformed("`    NAME{INDEX}: N bytes (cumulative: N bytes)`");
        };
        self.cumulative = self.cumulative.saturating_add(bytes);
        let running = self.cumulative;
        let Some(b) = cx.builder() else {
            return Flow::Read;
        };
        let index = b.index(index);
        // The peak header made the list this entry is under.
        if let Some(p) = b.schedule().peak.as_mut() {
            let at = p.entries.len() as u32;
            p.entries.push(PeakEntry {
                instruction: InstrId::MAX,
                index,
                bytes,
            });
            b.instr_later(name, Target::Peak(at));
        }
        if let Some(c) = cumulative.filter(|&c| c != running) {
            cx.warn(format!(
                "cumulative bytes {c} where the entries add up to {running}"
            ));
        }
        Flow::Read
    }

    /// A line of the stack tree: a node under the last one a level up.
    fn stack_entry(&mut self, line: &[u8], cx: &mut Cx) -> Flow {
        let Some(l) = stack_line(line) else {
            return Flow::Malformed(
                "a tree line `NAME (P%, total: N bytes, current: N bytes, remaining: N bytes)`",
            );
        };
        let Some(b) = cx.builder() else {
            return Flow::Read;
        };
        let depth = l.depth as usize;
        if depth > self.stack_path.len() {
            return Flow::Malformed("a tree line one level below its parent");
        }
        let name = b.module.strings.intern_bytes(l.name);
        self.stack_path.truncate(depth);
        self.stack_path.push(b.module.stack_trace.len());
        b.module.stack_trace.push(StackNode {
            depth: l.depth,
            name,
            total: l.total,
            current: l.current,
            remaining: l.remaining,
        });
        Flow::Read
    }
}

/// `    N:NAME`: the next step of the schedule.
fn sequence(line: &[u8], cx: &mut Cx) -> Flow {
    let Some((i, name)) = sequence_entry(line) else {
        return Flow::Malformed("`    N:NAME`");
    };
    let Some(b) = cx.builder() else {
        return Flow::Read;
    };
    let seq = &mut b.schedule().sequence;
    let expected = seq.len();
    seq.push(InstrId::MAX);
    b.instr_later(name, Target::Step(expected as u32));
    if i as usize != expected {
        cx.warn(format!(
            "InstructionSequence entry {i} where {expected} was expected"
        ));
    }
    Flow::Read
}

/// `    NAME{INDEX}:START-END`: a live range, joined to its value once everything is read.
fn range(line: &[u8], cx: &mut Cx) -> Flow {
    let Some((name, index, start, end)) = range_entry(line) else {
        return Flow::Malformed("`    NAME{INDEX}:START-END`");
    };
    let line_no = cx.line_no;
    let Some(b) = cx.builder() else {
        return Flow::Read;
    };
    let index = b.index(index);
    let at = b.ranges.len() as u32;
    b.ranges
        .push((InstrId::MAX, index, LiveRange { start, end }, line_no));
    b.instr_later(name, Target::Range(at));
    if start > end {
        cx.warn(format!("live range {start}-{end} ends before it starts"));
    }
    Flow::Read
}

/// The InstructionSequence has `max` steps.
fn check_sequence(cx: &mut Cx) {
    let Some(b) = cx.builder() else {
        return;
    };
    let s = b.schedule();
    if s.sequence.len() as u64 != u64::from(s.max) {
        let msg = format!(
            "InstructionSequence has {} instructions but HloLiveRange says max {}",
            s.sequence.len(),
            s.max
        );
        cx.warn(msg);
    }
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

    /// `tests/fixtures/cpu/jax0.10.2/cpu_tiny.live-range.txt`, with one sequence entry
    /// dropped, one range reversed, one cumulative sum changed and one tree line misplaced.
    #[test]
    fn reader() {
        let text = "HloLiveRange (max 3):
  InstructionSequence:
    0:x.1
    1:y.1
  BufferLiveRange:
    y.1{}:0-3
    x.1{}:3-0
    broadcast_add_fusion{}:2-3
  Live ranges at 2 (peak):
    broadcast_add_fusion{}: 4096 bytes (cumulative: 4096 bytes)
    x.1{}: 4096 bytes (cumulative: 8192 bytes)
    y.1{}: 4096 bytes (cumulative: 12280 bytes)
  Stack trace breakdown for peak usage: 12 288 bytes
    main.1 (100.0%, total: 12 288 bytes, current: 0 bytes, remaining: 12 288 bytes)
      ├── jit(tiny_elementwise)/add (33.3%, total: 4 096 bytes, current: 4 096 bytes, remaining: 8 192 bytes)
      ├── x (33.3%, total: 4 096 bytes, current: 4 096 bytes, remaining: 4 096 bytes)
              └── y (33.3%, total: 4 096 bytes, current: 4 096 bytes, remaining: 0 bytes)";
        let (b, said) = super::super::section::run(&mut LiveRanges::default(), text);
        let m = &b.module;
        let s = m.schedule.as_ref().unwrap();
        assert_eq!((s.max, s.sequence.len()), (3, 2));
        assert_eq!(b.ranges.len(), 3);
        assert_eq!(b.ranges[2].2, LiveRange { start: 2, end: 3 });
        let peak = s.peak.as_ref().unwrap();
        assert_eq!((peak.time, peak.entries.len()), (2, 3));
        assert_eq!(m.stack_trace.len(), 3);
        assert_eq!(m.stack_trace_total, Some(12288));
        assert_eq!(
            said,
            [
                "5: InstructionSequence has 2 instructions but HloLiveRange says max 3",
                "7: live range 3-0 ends before it starts",
                "12: cumulative bytes 12280 where the entries add up to 12288",
                "17: malformed: a tree line one level below its parent",
                "17: the stack trace breakdown is incomplete: its totals do not add up",
            ]
        );
    }
}
