//! The `Used values:` section (`HloValue::ToString`): its grammar (position and use lines,
//! and what bufscope keeps of a `from instruction:` line: the opcode and the metadata's
//! op_name, source file and line, stack frame id; the rest of that line, which can be
//! 300,000 characters, is skipped, never copied) and its reader ([`UsedValues`]), which
//! keeps each value's positions and uses and its instruction's facts for the join.
//!
//! The instruction's text may span several lines: a Pallas kernel's `backend_config` or
//! `frontend_attributes` can hold a newline (MaxText's splash attention). While the text
//! read so far leaves a brace or a string open ([`Open`]), a line that is neither an entry
//! line (`<…`, ` …`) nor a section's header is the rest of it ([`body_line`] is the
//! context-free rule the deferred read's skip keeps to); its metadata is looked for there
//! when the first line had none.

use super::lex::{self, In};
use super::records::InstrInfo;
use super::section::{Cx, Flow, SectionReader};
use crate::model::{Warning, USES_MARK};

/// `  NAME[ {INDEX}]` (HloPosition::ToString).
pub(crate) fn is_position(line: In) -> bool {
    let Some(i) = line.strip_prefix(b"  ") else {
        return false;
    };
    let n = lex::name_len(i);
    n > 0 && is_index_tail(&i[n..])
}

/// `  NAME, operand N[ {INDEX}]` (HloUse::ToString).
pub(crate) fn is_use(line: In) -> bool {
    let Some(i) = line.strip_prefix(b"  ") else {
        return false;
    };
    let n = lex::name_len(i);
    let operand = i[n..]
        .strip_prefix(b", operand ")
        .and_then(lex::leading_u32);
    matches!(operand, Some((_, rest)) if n > 0 && is_index_tail(rest))
}

/// Nothing, or ` {INDEX}`: what may end a position or a use.
fn is_index_tail(i: In) -> bool {
    match i.strip_prefix(b" ") {
        Some(index) => lex::is_shape_index(index),
        None => i.is_empty(),
    }
}

/// Whether `line` may be a line of a `Used values` body: an entry line (`<…`, ` …`), a blank
/// line, or the rest of a several-line instruction text (any line that opens no section and
/// is no stdout dump's wrapper). The deferred read's skip and its bounds keep to this rule.
pub(crate) fn may_be_body(line: In) -> bool {
    body_line(line) == BodyLine::Body
}

/// What a line is to a `Used values` body skipped unread: part of it, or where it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyLine {
    /// An entry line, a blank one, or what goes on an instruction's text.
    Body,
    /// A line that opens another section.
    Header,
    /// A stdout dump's `*** Begin/End` wrapper.
    Wrapper,
}

/// The one rule of where a skipped body ends, for the first read's skip (`file.rs`) and
/// the search from a file's end (`deferred/bounds.rs`).
pub(crate) fn body_line(line: In) -> BodyLine {
    if matches!(line.first(), None | Some(b'<' | b' ')) {
        BodyLine::Body
    } else if super::headers::is_wrapper(line) {
        BodyLine::Wrapper
    } else if super::headers::is_header(line) {
        BodyLine::Header
    } else {
        BodyLine::Body
    }
}

/// A line that goes on a `from instruction:` text: not an entry line, not blank, no header.
fn is_continuation(line: In) -> bool {
    !matches!(line.first(), None | Some(b'<' | b' ')) && body_line(line) == BodyLine::Body
}

/// Whether an instruction's text read so far leaves a brace or a string open: `{…}`
/// nesting outside strings, `"…"` strings with `\` escapes (op_name's `CEscape`, a
/// `backend_config`'s JSON).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Open {
    depth: u32,
    in_string: bool,
}

impl Open {
    /// The state after `text` (found with `memchr`: only braces, quotes and escapes are
    /// looked at).
    pub(crate) fn after(mut self, text: In) -> Open {
        let mut k = 0;
        while k < text.len() {
            let rest = &text[k..];
            if self.in_string {
                let Some(p) = memchr::memchr2(b'"', b'\\', rest) else {
                    break;
                };
                if rest[p] == b'"' {
                    self.in_string = false;
                    k += p + 1;
                } else {
                    k += p + 2;
                }
                continue;
            }
            let Some(p) = memchr::memchr3(b'{', b'}', b'"', rest) else {
                break;
            };
            match rest[p] {
                b'{' => self.depth = self.depth.saturating_add(1),
                b'}' => self.depth = self.depth.saturating_sub(1),
                _ => self.in_string = true,
            }
            k += p + 1;
        }
        self
    }

    pub(crate) fn is_open(self) -> bool {
        self.depth > 0 || self.in_string
    }
}

static METADATA: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();

/// Where `, metadata={` ends in `text`.
fn metadata_start(text: In) -> Option<usize> {
    let finder = METADATA.get_or_init(|| memchr::memmem::Finder::new(b", metadata={"));
    finder.find(text).map(|m| m + 12)
}

/// `%NAME = SHAPE opcode(operands), attr=..., metadata={...}, ...` on one line (the reader
/// looks for the metadata in the lines after it too).
#[cfg(test)]
pub(crate) fn instruction(text: In) -> Option<InstrInfo> {
    let (mut info, tail) = instruction_head(text)?;
    if let Some(m) = metadata_start(tail) {
        metadata(&tail[m..], &mut info);
    }
    Some(info)
}

/// The name and opcode of an instruction's text, and the text after the opcode.
fn instruction_head(text: In) -> Option<(InstrInfo, In)> {
    let text = text.strip_prefix(b"%")?;
    // Names have no spaces: the first one is the one of ` = `.
    let sp = memchr::memchr(b' ', text)?;
    let (name, rest) = (&text[..sp], text[sp..].strip_prefix(b" = ")?);
    let after_shape = skip_shape(rest)?;
    let opcode_len = after_shape
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.'))
        .unwrap_or(after_shape.len());
    let (opcode, tail) = after_shape.split_at(opcode_len);
    if opcode.is_empty() || tail.first() != Some(&b'(') {
        return None;
    }
    let info = InstrInfo {
        name,
        opcode,
        ..InstrInfo::default()
    };
    Some((info, tail))
}

/// Skips `SHAPE ` (brackets balanced; tuples and layouts nest), returning what follows.
fn skip_shape(i: In) -> Option<In> {
    let mut depth: i32 = 0;
    for (k, &c) in i.iter().enumerate() {
        if c == b' ' && depth == 0 {
            return Some(&i[k + 1..]);
        }
        depth += i32::from(lex::BRACKETS[usize::from(c)]);
        if depth < 0 {
            return None;
        }
    }
    None
}


/// `key=value key="quoted" ...}`: fills the fields bufscope keeps; stops at the closing
/// brace or at anything it does not understand.
fn metadata<'a>(mut i: In<'a>, info: &mut InstrInfo<'a>) {
    loop {
        i = trim_start(i);
        let Some(eq) = i.iter().position(|&c| c == b'=' || c == b'}' || c == b' ') else {
            return;
        };
        if i[eq] != b'=' {
            return;
        }
        let key = &i[..eq];
        i = &i[eq + 1..];
        let raw: In;
        let quoted = i.first() == Some(&b'"');
        if quoted {
            let Some(end) = closing_quote(&i[1..]) else {
                return;
            };
            raw = &i[1..1 + end];
            i = &i[end + 2..];
        } else {
            let end = i
                .iter()
                .position(|&c| c == b' ' || c == b'}')
                .unwrap_or(i.len());
            raw = &i[..end];
            i = &i[end..];
        }
        let string = || -> std::borrow::Cow<'a, [u8]> {
            if quoted && memchr::memchr(b'\\', raw).is_some() {
                unescape(raw).into()
            } else {
                raw.into()
            }
        };
        let number = || std::str::from_utf8(raw).ok().and_then(|s| s.parse().ok());
        match key {
            b"op_name" => info.op_name = Some(string()),
            b"source_file" => info.source_file = Some(string()),
            b"source_line" => info.source_line = number(),
            b"stack_frame_id" => info.stack_frame_id = number(),
            _ => {}
        }
    }
}

fn trim_start(i: In) -> In {
    let n = i.iter().take_while(|&&c| c == b' ').count();
    &i[n..]
}

/// Position of the quote that closes a string starting at `i[0]` (escapes skipped).
fn closing_quote(i: In) -> Option<usize> {
    let mut k = 0;
    loop {
        k += memchr::memchr2(b'"', b'\\', &i[k..])?;
        if i[k] == b'"' {
            return Some(k);
        }
        k += 2;
        if k > i.len() {
            return None;
        }
    }
}

/// Undoes `CEscape`: `\n \t \r \" \' \\`, octal `\ooo`, hex `\xHH`.
fn unescape(i: In) -> Vec<u8> {
    let mut out = Vec::with_capacity(i.len());
    let mut k = 0;
    while k < i.len() {
        if i[k] != b'\\' || k + 1 >= i.len() {
            out.push(i[k]);
            k += 1;
            continue;
        }
        let c = i[k + 1];
        k += 2;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                let mut digits = 1;
                while digits < 3 && k < i.len() && (b'0'..=b'7').contains(&i[k]) {
                    v = v * 8 + u32::from(i[k] - b'0');
                    k += 1;
                    digits += 1;
                }
                out.push(v as u8);
            }
            b'x' if k + 2 <= i.len() => {
                match std::str::from_utf8(&i[k..k + 2])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(v) => {
                        out.push(v);
                        k += 2;
                    }
                    None => out.push(b'x'),
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Where a `Used values` entry is: between its `<id ...>` line and its `from instruction:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EntryAt {
    /// After `<id ...>`: ` positions:` comes next.
    Header,
    Positions,
    Uses,
    /// After ` uses are not initialized yet.`: the from line comes next.
    UsesUnknown,
}

/// The entry being read.
struct Entry {
    id: u32,
    /// Its instruction's `from instruction:` was read with an earlier value.
    known: bool,
    line: u64,
    at: EntryAt,
}

/// Reader of the `Used values:` section.
#[derive(Default)]
pub(in crate::parse) struct UsedValues {
    entry: Option<Entry>,
    /// The entry's positions and uses, as the dump's lines joined by `\n` (bytes as read:
    /// they are checked as UTF-8 once, when the entry is stored).
    scratch: Vec<u8>,
    /// Instruction name of the previous entry: the values of one instruction follow each
    /// other, and only the first one's `from instruction:` is read.
    previous_name: Vec<u8>,
    /// The last line read was a `from instruction:` line or the rest of its text, and it
    /// left the text open.
    in_instruction: bool,
    open: Open,
    /// The value and opcode of an instruction whose first line had no metadata: its
    /// facts wait for the rest of its text.
    pending: Option<(u32, Vec<u8>)>,
}

impl SectionReader for UsedValues {
    /// `total` is the module's `Total bytes used`, printed just before this section.
    fn start(&mut self, _header: &[u8], total: Option<u64>, cx: &mut Cx) {
        self.entry = None;
        self.previous_name.clear();
        let (Some(total), file, line) = (total, cx.notes.file.clone(), cx.line_no) else {
            return;
        };
        if let Some(b) = cx.builder() {
            if let Some(message) = b.set_total(total) {
                b.module.warnings.push(Warning {
                    file,
                    line,
                    message,
                });
            }
        }
    }

    fn line(&mut self, line: &[u8], cx: &mut Cx) -> Flow {
        if self.in_instruction && is_continuation(line) {
            self.open = self.open.after(line);
            self.in_instruction = self.open.is_open();
            self.rest_of_instruction(line, cx);
            return Flow::Read;
        }
        self.in_instruction = false;
        self.flush(cx);
        let at = self.entry.as_ref().map(|e| e.at);
        match line.first() {
            Some(b'<') if at.is_none() => return self.header(line, cx),
            Some(b' ') => {}
            None if at.is_none() => return Flow::Read, // The blank line(s) after the section.
            _ if at.is_none() => return Flow::Other("a `Used values` entry line"),
            _ => return Flow::Malformed("a `Used values` entry line"),
        }
        if let Some(rest) = line.strip_prefix(b" from instruction:") {
            if !matches!(at, Some(EntryAt::Uses | EntryAt::UsesUnknown)) {
                return Flow::Malformed("` uses:` before ` from instruction:`");
            }
            let rest = rest.strip_prefix(b" ").unwrap_or(rest);
            let (instr_text, glued) = lex::split_glued(rest);
            self.close(instr_text, cx);
            match glued {
                Some(v) => self.open(v.id, v.name, cx),
                None => {
                    self.open = Open::default().after(instr_text);
                    self.in_instruction = self.open.is_open();
                }
            }
            return Flow::Read;
        }
        let Some(at) = at else {
            return Flow::Malformed("`<ID NAME>`");
        };
        self.entry_line(at, line)
    }

    fn label(&self) -> &'static str {
        "Used values"
    }

    fn end(&mut self, _at_file_end: bool, cx: &mut Cx) {
        self.in_instruction = false;
        self.flush(cx);
        if let Some(e) = self.entry.take() {
            cx.warn(format!(
                "the Used values section is cut short: the entry of value {} (line {}) is incomplete",
                e.id, e.line
            ));
        }
    }
}

impl UsedValues {
    /// The name of the last entry opened (a body's piece ends with it, `deferred/piece.rs`).
    pub(in crate::parse) fn last_name(&self) -> &[u8] {
        &self.previous_name
    }

    /// A line of the open entry, after its `<id ...>` line.
    fn entry_line(&mut self, at: EntryAt, line: &[u8]) -> Flow {
        match (at, line) {
            (EntryAt::Header, b" positions:") => self.set(EntryAt::Positions),
            (EntryAt::Positions, b" uses:") => {
                self.scratch.extend_from_slice(USES_MARK.as_bytes());
                self.scratch.push(b'\n');
                self.set(EntryAt::Uses);
            }
            (EntryAt::Positions, b" uses are not initialized yet.") => {
                self.set(EntryAt::UsesUnknown)
            }
            (EntryAt::Positions, l) if is_position(l) => self.push(l),
            (EntryAt::Uses, b"  (none)") => {}
            (EntryAt::Uses, l) if is_use(l) => self.push(l),
            _ => {
                return Flow::Malformed(match at {
                    EntryAt::Header => "` positions:`",
                    EntryAt::Positions => "a position `  NAME[ {INDEX}]` or ` uses:`",
                    EntryAt::Uses => "a use `  NAME, operand N[ {INDEX}]` or ` from instruction:`",
                    EntryAt::UsesUnknown => "` from instruction:`",
                })
            }
        }
        Flow::Read
    }

    fn set(&mut self, at: EntryAt) {
        if let Some(e) = self.entry.as_mut() {
            e.at = at;
        }
    }

    fn push(&mut self, line: &[u8]) {
        self.scratch.extend_from_slice(&line[2..]);
        self.scratch.push(b'\n');
    }

    /// `<ID NAME[{INDEX}][ (phi)][ @COLOR]>`: an entry starts.
    fn header(&mut self, line: &[u8], cx: &mut Cx) -> Flow {
        match lex::all(lex::short_value(line)) {
            Some(v) => {
                self.open(v.id, v.name, cx);
                Flow::Read
            }
            None => Flow::Malformed("`<ID NAME[{INDEX}][ (phi)][ @COLOR]>`"),
        }
    }

    fn open(&mut self, id: u32, name: &[u8], cx: &mut Cx) {
        if cx.module.is_none() {
            return;
        }
        let known = self.previous_name == name;
        if !known {
            self.previous_name.clear();
            self.previous_name.extend_from_slice(name);
        }
        self.scratch.clear();
        self.entry = Some(Entry {
            id,
            known,
            line: cx.line_no,
            at: EntryAt::Header,
        });
    }

    /// The entry's `from instruction:` line: the entry is kept for the join.
    fn close(&mut self, instr_text: &[u8], cx: &mut Cx) {
        let Some(e) = self.entry.take() else { return };
        let Some(b) = cx.builder() else {
            return;
        };
        // Invalid UTF-8 is replaced as it would be line by line: `\n` ends any sequence.
        let uses = b.module.uses_strings.push_bytes(&self.scratch);
        b.used.push((e.id, uses));
        self.scratch.clear();
        if !e.known {
            if let Some((mut info, tail)) = instruction_head(instr_text) {
                match metadata_start(tail) {
                    Some(m) => {
                        metadata(&tail[m..], &mut info);
                        b.add_instruction_info(e.id, &info);
                    }
                    None => self.pending = Some((e.id, info.opcode.to_vec())),
                }
            }
        }
    }

    /// A line of a several-line instruction text: its metadata, when the first line had
    /// none and this line has it (`…}}, metadata={op_name="…" …}, backend_config=…`).
    fn rest_of_instruction(&mut self, line: &[u8], cx: &mut Cx) {
        let start = match line.strip_prefix(b"metadata={") {
            Some(_) => Some(10),
            None => metadata_start(line),
        };
        let (Some(start), Some((id, opcode))) = (start, self.pending.as_ref()) else {
            return;
        };
        let mut info = InstrInfo {
            opcode,
            ..InstrInfo::default()
        };
        metadata(&line[start..], &mut info);
        if let Some(b) = cx.builder() {
            b.add_instruction_info(*id, &info);
        }
        self.pending = None;
    }

    /// The facts of an instruction whose text ended without metadata.
    fn flush(&mut self, cx: &mut Cx) {
        let Some((id, opcode)) = self.pending.take() else {
            return;
        };
        let info = InstrInfo {
            opcode: &opcode,
            ..InstrInfo::default()
        };
        if let Some(b) = cx.builder() {
            b.add_instruction_info(id, &info);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_and_uses_read_as_nom_does() {
        use super::super::lex::{shape_index, u32};
        use nom::bytes::complete::{tag, take_while1};
        use nom::combinator::opt;
        use nom::sequence::preceded;
        use nom::Parser;
        fn name(i: In) -> lex::Res<In> {
            take_while1(|c: u8| lex::name_len(&[c]) == 1)(i)
        }
        let position = |line: In| match line.strip_prefix(b"  ") {
            Some(i) => matches!(
                (name, opt(preceded(tag(" "), shape_index))).parse(i),
                Ok((rest, _)) if rest.is_empty()
            ),
            None => false,
        };
        let use_ = |line: In| match line.strip_prefix(b"  ") {
            Some(i) => matches!(
                (name, tag(", operand "), u32, opt(preceded(tag(" "), shape_index))).parse(i),
                Ok((rest, _)) if rest.is_empty()
            ),
            None => false,
        };
        let (mut positions, mut uses) = (0, 0);
        for s in lex::tests::token_soup(50_000) {
            let text = String::from_utf8_lossy(&s);
            assert_eq!(is_position(&s), position(&s), "{text:?}");
            assert_eq!(is_use(&s), use_(&s), "{text:?}");
            positions += usize::from(is_position(&s));
            uses += usize::from(is_use(&s));
        }
        assert!(
            positions > 5000 && uses > 5000,
            "{positions} positions, {uses} uses"
        );
    }

    /// The table-driven [`skip_shape`] against the `match` it stands for, on strings of
    /// brackets, spaces and letters.
    #[test]
    fn shapes_skipped_as_by_a_match() {
        fn by_match(i: In) -> Option<In> {
            let mut depth: i32 = 0;
            for (k, &c) in i.iter().enumerate() {
                match c {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth -= 1,
                    b' ' if depth == 0 => return Some(&i[k + 1..]),
                    _ => {}
                }
                if depth < 0 {
                    return None;
                }
            }
            None
        }
        let alphabet = b"([{)]} f3,";
        let mut seed = 0x2545_f491_u64;
        let (mut skipped, mut refused) = (0, 0);
        for _ in 0..20_000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (seed >> 59) as usize;
            let s: Vec<u8> = (0..len)
                .map(|k| alphabet[((seed >> (k * 3 % 56)) % alphabet.len() as u64) as usize])
                .collect();
            assert_eq!(
                skip_shape(&s),
                by_match(&s),
                "{:?}",
                String::from_utf8_lossy(&s)
            );
            skipped += usize::from(skip_shape(&s).is_some());
            refused += usize::from(skip_shape(&s).is_none());
        }
        assert!(
            skipped > 1000 && refused > 1000,
            "{skipped} skipped, {refused} refused"
        );
        assert_eq!(
            skip_shape(b"(f32[2]{0}, s32[]) tuple("),
            Some(&b"tuple("[..])
        );
    }

    #[test]
    fn open_texts() {
        let open = |t: &str| Open::default().after(t.as_bytes()).is_open();
        assert!(open(
            "%a = f32[] custom-call(), frontend_attributes={kernel_metadata={"
        ));
        assert!(open(
            r#"%a = f32[] custom-call(), backend_config={"body":"a"#
        ));
        assert!(!open(
            r#"%a = f32[2]{0} add(%b), metadata={op_name="a{\"b" source_line=3}"#
        ));
        assert!(!open("%a = f32[] parameter(0)"));
        let first = Open::default().after(b"x={k={");
        let second = first.after(br#""m":"{\"q\": 5}""#);
        assert!(second.is_open());
        assert!(!second.after(br#"}}, metadata={op_name="x"}"#).is_open());
    }

    #[test]
    fn positions_and_uses() {
        assert!(is_position(b"  slice_reduce_fusion {0}"));
        assert!(is_position(b"  get-tuple-element"));
        assert!(!is_position(b"  a, operand 0"));
        assert!(is_use(b"  get-tuple-element.1, operand 0 {}"));
        assert!(is_use(b"  tuple.10, operand 3"));
        assert!(!is_use(b"  tuple.10, operand"));
    }

    #[test]
    fn instruction_text() {
        let i = instruction(br#"%add.257 = f32[] add(f32[] %Arg_0.255, f32[] %Arg_1.256), metadata={op_name="jit(f)/reduce_sum" source_file="/opt/a \"b\".py" source_line=398}"#).unwrap();
        assert_eq!(i.name, b"add.257");
        assert_eq!(i.opcode, b"add");
        assert_eq!(i.op_name.as_deref(), Some(&b"jit(f)/reduce_sum"[..]));
        assert_eq!(i.source_file.as_deref(), Some(&b"/opt/a \"b\".py"[..]));
        assert_eq!(i.source_line, Some(398));
        let i = instruction(b"%t = (u32[2]{0:T(128)}, /*index=5*/u32[2]{0:T(128)}) fusion(%a), kind=kLoop, metadata={op_name=\"x\" stack_frame_id=4}").unwrap();
        assert_eq!((i.opcode, i.stack_frame_id), (&b"fusion"[..], Some(4)));
        let i =
            instruction(br#"%c = f32[] constant(1), metadata={op_name="caf\303\251"}"#).unwrap();
        assert_eq!(i.op_name.as_deref(), Some("café".as_bytes()));
        assert!(instruction(b"%c = f32[").is_none());
        assert!(instruction(b"garbage").is_none());
    }

    /// Lines of `tests/fixtures/cpu/jax0.6.2/cpu_tiny.buffer-assignment.txt`, one
    /// ` positions:` line dropped (so the entry of value 8 takes the next one's lines, the
    /// `<9 ...>` line being out of place) and the section cut short.
    #[test]
    fn reader() {
        let text = r#"Used values:
<7 Arg_1.2 @0>
 positions:
  Arg_1.2
 uses:
  broadcast_add_fusion, operand 0
 from instruction: %Arg_1.2 = f32[8,128]{1,0} parameter(1), metadata={op_name="y"}
<8 Arg_0.1 @0>
  Arg_0.1
<9 broadcast_add_fusion @0>
 positions:
  broadcast_add_fusion
 uses:"#;
        let (b, said) = super::super::section::run(&mut UsedValues::default(), text);
        assert_eq!(b.used.len(), 1);
        assert_eq!(b.used[0].0, 7);
        assert_eq!(
            b.module.uses_strings.get(b.used[0].1),
            format!("Arg_1.2\n{USES_MARK}\nbroadcast_add_fusion, operand 0\n")
        );
        assert_eq!(b.infos.len(), 1);
        let (id, info) = &b.infos[0];
        assert_eq!(
            (*id, b.module.str(info.opcode), b.module.str(info.op_name)),
            (7, "parameter", "y")
        );
        assert_eq!(
            said,
            [
                "9: malformed: ` positions:`",
                "10: malformed: a `Used values` entry line",
                "13: the Used values section is cut short: the entry of value 8 (line 8) is incomplete",
            ]
        );
    }
}
