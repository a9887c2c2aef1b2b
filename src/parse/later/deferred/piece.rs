//! A `Used values` body cut into pieces read apart (on as many threads or workers as a
//! driver has) and joined in order into what one reader of the whole body gives.
//!
//! A body is cut at nominal byte offsets ([`cut`]); the cut itself falls on the first entry
//! line (`<ID NAME …>`, at a line start) at or after each offset, which the reader of the
//! piece before and the reader of the piece after both find by the same rule: piece k reads
//! from its nominal start (the byte before it, to know whether it starts a line), skips to
//! its first entry line and reads up to, not including, the first entry line at or after
//! the next piece's nominal start. The pieces thus share no line, and a [`Piece`] is only a
//! byte range and a few numbers: a driver can send it anywhere ([`PieceReader`] asks for
//! its bytes, in order, in chunks of any size, and does no I/O).
//!
//! The one state a cut does not carry is whether the piece's first entry belongs to the
//! same instruction as the entry before it (one pass reads only the first such entry's
//! `from instruction:`): [`join`] drops the facts a piece read for its first entry when
//! the piece before ended with an entry of the same name. What a piece warns about, a line
//! given back, an entry left open, or line counts that differ from the first read's make
//! the join an error: the files are then read in one pass, as for [`super::UsesReader`].
//!
//! Owns: where a body is cut, the read of one piece, and the join of pieces in order.

use super::{base_name, lines, DeferredUses, UsedPart};
use crate::parse::dump::assemble::Builder;
use crate::parse::dump::lex;
use crate::parse::dump::section::{Cx, Flow, Notes, SectionReader};
use crate::parse::dump::used_values::UsedValues;
use crate::model::Str;
use crate::parse::later::Ask;
use hashbrown::HashMap;
use std::ops::Range;

mod wire;
pub use wire::PieceWire;

/// One piece of a body: which bytes, and where it stands among the body's pieces.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Piece {
    /// The file, as the body names it.
    pub file: String,
    /// The whole body's bytes.
    pub body: Range<u64>,
    /// The piece's nominal bytes (its reader reads a little past the end, to the next
    /// entry line; the last piece's end is the body's).
    pub nominal: Range<u64>,
    /// Its place among the body's pieces (0: the first, which starts at the body's start).
    pub index: usize,
}

/// `d`'s body cut into `pieces` pieces of at least `least` bytes each (fewer when the body
/// is short; one, the whole body, at least).
pub fn cut(d: &DeferredUses, pieces: usize, least: u64) -> Vec<Piece> {
    let len = d.bytes.end.saturating_sub(d.bytes.start);
    let n = (len / least.max(1)).clamp(1, pieces.max(1) as u64);
    let at = |k: u64| d.bytes.start + (u128::from(len) * u128::from(k) / u128::from(n)) as u64;
    (0..n)
        .map(|k| Piece {
            file: d.file.clone(),
            body: d.bytes.clone(),
            nominal: at(k)..at(k + 1),
            index: k as usize,
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before the piece's first entry line: the bytes are the piece before's.
    Before,
    Reading,
    /// Past the next piece's first entry line (or at the body's end).
    Done,
}

/// The reader of one [`Piece`] (see the module's doc).
pub struct PieceReader {
    piece: Piece,
    chunk: u64,
    /// The next byte to ask for, and the offset in the file of `carry`'s first byte.
    at: u64,
    line_start: u64,
    carry: Vec<u8>,
    /// The first byte fed is the one before the nominal start: only whether it ends a line.
    skip_first: bool,
    phase: Phase,
    builder: Builder,
    reader: UsedValues,
    notes: Notes,
    read: PieceTally,
}

/// What a piece's reader counted besides its module part.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct PieceTally {
    lines: u64,
    /// The name of the piece's first entry, and that of the last entry opened.
    first_name: Option<Vec<u8>>,
    last_name: Vec<u8>,
    inexact: Option<String>,
}

/// What one piece read (to be [`join`]ed with the body's other pieces, in order).
pub struct PieceRead {
    pub piece: Piece,
    builder: Builder,
    tally: PieceTally,
}

impl std::fmt::Debug for PieceRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (values, lines) = (self.builder.used.len(), self.tally.lines);
        write!(f, "PieceRead({:?}: {values} values, {lines} lines)", self.piece)
    }
}

impl PieceReader {
    /// The reader of `piece`, asking for at most `chunk` bytes at a time.
    pub fn new(piece: Piece, chunk: u64) -> PieceReader {
        let first = piece.index == 0;
        let at = if first { piece.body.start } else { piece.nominal.start.saturating_sub(1) };
        let mut r = PieceReader {
            notes: Notes::new(base_name(&piece.file).to_string()),
            chunk: chunk.max(1),
            at,
            line_start: at,
            carry: Vec::new(),
            skip_first: !first,
            phase: if first { Phase::Reading } else { Phase::Before },
            builder: Builder::new("", 0),
            reader: UsedValues::default(),
            read: PieceTally::default(),
            piece,
        };
        let mut cx = Cx { module: Some(&mut r.builder), notes: &mut r.notes, line_no: 0 };
        r.reader.start(b"Used values:", None, &mut cx);
        r
    }

    /// The piece it reads.
    pub fn piece(&self) -> &Piece {
        &self.piece
    }

    /// The bytes to feed next (then ask again), or none once the piece is read.
    pub fn next(&mut self) -> Option<Ask> {
        if self.phase == Phase::Done || self.at >= self.piece.body.end {
            return None;
        }
        let end = self.piece.body.end.min(self.at.saturating_add(self.chunk));
        let ask = Ask { file: self.piece.file.clone(), bytes: self.at..end };
        Some(ask)
    }

    /// More of the bytes asked for, in order, in chunks of any size.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        if self.skip_first {
            let Some((&before, after)) = rest.split_first() else { return };
            self.skip_first = false;
            self.at += 1;
            self.line_start = self.at;
            if before != b'\n' {
                // Not a line start: the bytes up to the next line end are the piece before's.
                self.carry.push(b'x');
            }
            rest = after;
        }
        let base = self.at;
        self.at += rest.len() as u64;
        let mut carry = std::mem::take(&mut self.carry);
        lines(&mut carry, rest, |line, end| {
            if self.phase == Phase::Done {
                return false;
            }
            self.line(line);
            self.line_start = base + end as u64;
            true
        });
        self.carry = carry;
    }

    /// One whole line, starting at `line_start`.
    fn line(&mut self, raw: &[u8]) {
        let entry = raw.first() == Some(&b'<');
        let last = self.piece.nominal.end >= self.piece.body.end;
        if entry && !last && self.line_start >= self.piece.nominal.end {
            // The next piece's first entry line (a line start at or past its start).
            self.end();
            return;
        }
        if self.phase == Phase::Before {
            let ours = entry && self.line_start >= self.piece.nominal.start;
            if !ours {
                return;
            }
            self.phase = Phase::Reading;
            let name = lex::all(lex::short_value(raw)).map(|v| v.name.to_vec());
            if name.is_none() {
                self.read.inexact.get_or_insert("a piece starts at no entry".into());
            }
            self.read.first_name = name;
        }
        self.read.lines += 1;
        if self.read.inexact.is_some() {
            return;
        }
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        let mut cx = Cx { module: Some(&mut self.builder), notes: &mut self.notes, line_no: 0 };
        if self.reader.line(line, &mut cx) != Flow::Read {
            self.read.inexact = Some("a line of a piece is no `Used values` line".into());
        }
    }

    /// The piece ends: what its reader left open.
    fn end(&mut self) {
        if self.phase == Phase::Reading {
            let mut cx = Cx { module: Some(&mut self.builder), notes: &mut self.notes, line_no: 0 };
            self.reader.end(false, &mut cx);
            self.read.last_name = self.reader.last_name().to_vec();
        }
        self.phase = Phase::Done;
    }

    /// The bytes asked for could not be read (`why`): the piece fails, and its body's join.
    pub fn fail(&mut self, why: String) {
        self.read.inexact.get_or_insert(why);
        self.phase = Phase::Done;
    }

    /// What the piece read (every byte asked for fed).
    pub fn finish(mut self) -> PieceRead {
        if self.phase != Phase::Done && self.at < self.piece.body.end {
            self.read.inexact.get_or_insert("a piece's bytes were cut short".into());
        }
        if self.phase != Phase::Done && !self.carry.is_empty() {
            // The body's last line, without a line end.
            let last = std::mem::take(&mut self.carry);
            self.line(&last);
        }
        self.end();
        if super::warned(&self.builder, &self.notes) {
            self.read.inexact.get_or_insert("a piece has warnings".into());
        }
        PieceRead { piece: self.piece, builder: self.builder, tally: self.read }
    }
}

/// The bodies of one module, each with its pieces' reads in order, joined into the part
/// one reader of the whole bodies gives ([`super::UsesReader`]); `first` is the module's
/// first body (its parts' files). An error says why not: the files must then be read in
/// one pass. The first piece's reads become the part's; the others' positions and uses
/// text is moved after them, not copied ([`Strings::append`](crate::model::Strings::append)).
pub fn join(first: &DeferredUses, bodies: Vec<(&DeferredUses, Vec<PieceRead>)>) -> Result<UsedPart, String> {
    let mut b: Option<Builder> = None;
    for (d, reads) in bodies {
        let mut lines = 0;
        let mut before: Option<Vec<u8>> = None;
        for read in reads {
            if let Some(why) = &read.tally.inexact {
                return Err(why.clone());
            }
            lines += read.tally.lines;
            let again = before.is_some() && before == read.tally.first_name;
            if !read.tally.last_name.is_empty() {
                before = Some(read.tally.last_name.clone());
            }
            match b.as_mut() {
                Some(to) => append(to, read.builder, again)?,
                None if !again => b = Some(read.builder),
                None => append(b.insert(Builder::new("", 0)), read.builder, again)?,
            }
        }
        if !d.jumped && lines != d.lines {
            return Err(format!("{lines} lines read, {} skipped", d.lines));
        }
    }
    let mut b = b.unwrap_or_else(|| Builder::new("", 0));
    super::fit(&mut b);
    Ok(UsedPart::new(b, first.parts.clone()))
}

/// A piece's reads after those in `to`; with `again`, its first entry is of the
/// instruction the entry before it was of, and the facts it read for it are dropped.
fn append(to: &mut Builder, piece: Builder, again: bool) -> Result<(), String> {
    let first_id = piece.used.first().map(|&(id, _)| id);
    let drop_id = first_id.filter(|_| again);
    if let Some(id) = drop_id {
        if piece.used.iter().filter(|&&(i, _)| i == id).count() > 1 {
            return Err("a piece holds its first value twice".into());
        }
    }
    match to.module.uses_strings.append(piece.module.uses_strings) {
        Ok(shift) => to.used.extend(piece.used.iter().map(|&(id, s)| (id, s.shifted(shift)))),
        Err(uses) => {
            for &(id, s) in &piece.used {
                let s = to.module.uses_strings.push(uses.get(s));
                to.used.push((id, s));
            }
        }
    }
    // A piece's names are interned: each handle is looked up here once.
    let names = &piece.module.strings;
    let mut here: HashMap<Str, Str> = HashMap::new();
    for &(id, mut info) in &piece.infos {
        if Some(id) == drop_id {
            continue;
        }
        for s in [&mut info.opcode, &mut info.op_name, &mut info.source_file] {
            *s = *here.entry(*s).or_insert_with(|| to.module.strings.intern_bytes(names.bytes(*s)));
        }
        to.infos.push((id, info));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries of one instruction in a row (a tuple's), one without metadata on its first
    /// line, and an instruction text over two lines.
    const BODY: &str = r#"<7 Arg_1.2 @0>
 positions:
  Arg_1.2
 uses:
  t, operand 0
 from instruction: %Arg_1.2 = f32[8]{0} parameter(1), metadata={op_name="y"}
<8 t{0} @0>
 positions:
  t {0}
 uses:
 from instruction: %t = (f32[8]{0}, f32[8]{0}) tuple(%Arg_1.2, %c), metadata={op_name="t"}
<9 t{1} @0>
 positions:
  t {1}
 uses:
 from instruction: %t = (f32[8]{0}, f32[8]{0}) tuple(%Arg_1.2, %c), metadata={op_name="t"}
<10 k @0>
 positions:
  k
 uses:
 from instruction: %k = f32[8]{0} custom-call(), backend_config={"a":
"b"}, metadata={op_name="kernel" source_file="k.py" source_line=3}
<11 c @0>
 positions:
  c
 uses:
  t, operand 1
 from instruction: %c = f32[8]{0} constant({...})

"#;

    /// What a part holds, as text: each value's positions and uses, each fact.
    fn held(part: &UsedPart) -> (Vec<String>, Vec<String>) {
        let b = &part.builder;
        let used = b.used.iter().map(|&(id, s)| format!("{id}: {}", b.module.uses_strings.get(s)));
        let str = |s| b.module.strings.get(s).to_string();
        let info = |&(id, i): &(u32, crate::model::Instruction)| {
            format!("{id}: {} {} {} {}", str(i.opcode), str(i.op_name), str(i.source_file), i.source_line)
        };
        (used.collect(), b.infos.iter().map(info).collect())
    }

    /// The body read in the pieces `cuts` (nominal starts after the first) make, each fed
    /// in asks of `chunk` bytes.
    fn read(d: &DeferredUses, cuts: &[u64], chunk: u64) -> Result<UsedPart, String> {
        let mut starts = vec![d.bytes.start];
        starts.extend_from_slice(cuts);
        starts.push(d.bytes.end);
        let mut reads = Vec::new();
        for (index, w) in starts.windows(2).enumerate() {
            let piece = Piece { file: d.file.clone(), body: d.bytes.clone(), nominal: w[0]..w[1], index };
            let mut r = PieceReader::new(piece, chunk);
            while let Some(ask) = r.next() {
                r.feed(&BODY.as_bytes()[ask.bytes.start as usize..ask.bytes.end as usize]);
            }
            reads.push(r.finish());
        }
        join(d, vec![(d, reads)])
    }

    #[test]
    fn pieces_cut_anywhere_join_into_the_whole() {
        let lines = BODY.lines().count() as u64;
        let d = DeferredUses {
            file: "f.txt".into(),
            module: "m".into(),
            bytes: 0..BODY.len() as u64,
            first_line: 1,
            lines,
            at_file_end: true,
            jumped: false,
            parts: Vec::new(),
        };
        // The whole body as the one-pass reader reads it; one piece reads it the same.
        let mut one_pass = super::super::UsesReader::new(&d);
        one_pass.feed(BODY.as_bytes());
        let whole = held(&one_pass.finish().unwrap());
        assert_eq!(held(&read(&d, &[], 1 << 20).unwrap()), whole, "one piece");
        assert_eq!(whole.0.len(), 5);
        // One fact for the tuple's two values, as one pass reads it; the kernel's from its
        // text's second line.
        assert_eq!(whole.1.len(), 4, "{:?}", whole.1);
        assert!(whole.1.contains(&"10: custom-call kernel k.py 3".to_string()), "{:?}", whole.1);
        let n = BODY.len() as u64;
        for a in 1..n {
            for chunk in [1, 7, 1 << 20] {
                let one = read(&d, &[a], chunk).unwrap();
                assert_eq!(held(&one), whole, "cut at {a}, asks of {chunk} B");
            }
            let b = (a * 7 + 3) % n;
            let two = read(&d, &[a.min(b), a.max(b)], 5).unwrap();
            assert_eq!(held(&two), whole, "cut at {a} and {b}");
        }
        let every: Vec<u64> = (1..n).collect();
        assert_eq!(held(&read(&d, &every, 3).unwrap()), whole, "a piece per byte");
    }

    #[test]
    fn a_piece_with_a_bad_line_or_a_wrong_count_fails_the_join() {
        let d = DeferredUses {
            file: "f.txt".into(),
            module: "m".into(),
            bytes: 0..BODY.len() as u64,
            first_line: 1,
            lines: BODY.lines().count() as u64 + 1,
            at_file_end: true,
            jumped: false,
            parts: Vec::new(),
        };
        assert!(read(&d, &[100], 64).is_err(), "a line count that differs");
        let mut cut_short = PieceReader::new(cut(&d, 2, 1)[0].clone(), 64);
        cut_short.fail("gone".into());
        assert!(join(&d, vec![(&d, vec![cut_short.finish()])]).is_err(), "a piece failed");
    }
}
