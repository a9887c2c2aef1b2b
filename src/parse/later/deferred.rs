//! `Used values` read after the rest of its module, so that a diagram can be drawn first.
//!
//! `Used values` is most of a dump's bytes (73 % of a 94 MB CPU dump) and feeds only the
//! instructions' facts (opcode, op_name, source line) and each value's positions and uses;
//! the diagram needs none of it. A [`Loader`](super::Loader) told to
//! [`defer_uses`](super::Loader::defer_uses) skips the body of each `Used values` section
//! of a plain-text file (counting its lines, so that line numbers stay those of the file)
//! and lists it as a [`DeferredUses`]: which file, which module, which bytes. The modules
//! it gives are joined to their live ranges and checked, but have no uses and no
//! instruction facts. Later, a [`UsesReader`] (driven by [`super::Behind`], which asks for
//! those bytes) reads them into a [`UsedPart`] of its own (its strings in arenas of its
//! own, so that the module stays untouched, on screen, meanwhile), which
//! [`UsedPart::complete`] gives to the module (interning the few distinct
//! op_names, opcodes and source files into the module's names; [`UsedPart::prepare`] finds
//! them beforehand, in pieces, with the module still untouched); [`Completing`] joins it
//! into the module one pass would have read.
//!
//! The skip is a guess (`used_values::body_line`, the one rule of where a body ends) that
//! the later read checks: the body must read with no warning, no line given back and no entry
//! left open, else [`UsesReader::finish`] says why and the file must be read again in one
//! pass. Gzip files are read in one pass (their byte offsets are not the text's).

use super::assemble::Builder;
use super::join::{Chosen, Join};
use super::section::{Cx, Flow, Notes, SectionReader};
use super::used_values::UsedValues;
use super::Part;
use crate::model::{Module, Str};
use hashbrown::HashMap;
use std::ops::Range;

mod bounds;
mod handoff;
mod piece;
pub use bounds::{last_header, BodyEnd, BodyStart, Found};
pub use handoff::{Handoff, Unpack};
pub use piece::{cut, join, Piece, PieceRead, PieceReader, PieceWire};

/// The body of one `Used values` section, skipped by the first read. (Serialisable, so
/// that the page can hand it to the worker that reads the body.)
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DeferredUses {
    /// The file's name as it was given to [`Loader::begin_file`](super::Loader::begin_file).
    pub file: String,
    /// The module's name ([`Module::name`]).
    pub module: String,
    /// The body's bytes in the file: from the line after `Used values:` to the next
    /// section's header line (or the end of the file).
    pub bytes: Range<u64>,
    /// Line number (from 1) of the body's first line, and how many lines it has.
    pub first_line: u64,
    pub lines: u64,
    /// The body runs to the end of the file.
    pub at_file_end: bool,
    /// The body was never fed ([`Loader::jump`](super::Loader::jump)): `lines` is unknown
    /// (0), and so are the numbers of the file's later lines.
    pub jumped: bool,
    /// Which file each of the module's parts came from (for the join's warnings).
    pub(crate) parts: Vec<(Part, String)>,
}

/// Reads the skipped bodies of one module.
pub struct UsesReader {
    builder: Builder,
    pub(super) parts: Vec<(Part, String)>,
    reader: UsedValues,
    notes: Notes,
    /// The body being read: its line count (none when unknown) and whether it ends its file.
    body: Option<(Option<u64>, bool)>,
    line_no: u64,
    read: u64,
    carry: Vec<u8>,
    /// Why the bodies did not read as one pass would have read them.
    inexact: Option<String>,
}

impl UsesReader {
    /// Starts reading the bodies of the module [`DeferredUses::module`] names.
    pub fn new(first: &DeferredUses) -> Self {
        let mut r = UsesReader {
            builder: Builder::new("", 0),
            parts: first.parts.clone(),
            reader: UsedValues::default(),
            notes: Notes::new(String::new()),
            body: None,
            line_no: 0,
            read: 0,
            carry: Vec::new(),
            inexact: None,
        };
        r.body(first);
        r
    }

    /// Starts the next body of the same module (a file may hold two sections of one module).
    pub fn body(&mut self, d: &DeferredUses) {
        self.end_body();
        self.notes.file = base_name(&d.file).to_string();
        self.line_no = d.first_line.saturating_sub(1);
        self.read = 0;
        self.body = Some(((!d.jumped).then_some(d.lines), d.at_file_end));
        let mut cx = Cx {
            module: Some(&mut self.builder),
            notes: &mut self.notes,
            line_no: self.line_no,
        };
        self.reader.start(b"Used values:", None, &mut cx);
    }

    /// More bytes of the current body, in order, in chunks of any size.
    pub fn feed(&mut self, chunk: &[u8]) {
        let mut carry = std::mem::take(&mut self.carry);
        lines(&mut carry, chunk, |line, _| {
            self.line(line);
            true
        });
        self.carry = carry;
    }

    fn line(&mut self, raw: &[u8]) {
        self.read += 1;
        if self.inexact.is_some() {
            return;
        }
        self.line_no += 1;
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        let mut cx = Cx {
            module: Some(&mut self.builder),
            notes: &mut self.notes,
            line_no: self.line_no,
        };
        if self.reader.line(line, &mut cx) != Flow::Read {
            self.inexact = Some(format!("line {} is no `Used values` line", self.line_no));
        }
    }

    /// The current body ends: its last line (when the file ends without a line end) and
    /// what its reader left open.
    fn end_body(&mut self) {
        let Some((lines, at_file_end)) = self.body.take() else {
            return;
        };
        if !self.carry.is_empty() {
            let last = std::mem::take(&mut self.carry);
            self.line(&last);
        }
        if let Some(lines) = lines.filter(|&l| l != self.read) {
            if self.inexact.is_none() {
                self.inexact = Some(format!("{} lines read, {lines} skipped", self.read));
            }
        }
        let mut cx = Cx {
            module: Some(&mut self.builder),
            notes: &mut self.notes,
            line_no: self.line_no,
        };
        self.reader.end(at_file_end, &mut cx);
    }

    /// The bodies are read: what they hold, or why they did not read as in one pass (a
    /// warning, a line given back, an entry left open), in which case the module's files
    /// must be read again in one pass.
    pub fn finish(mut self) -> Result<UsedPart, String> {
        self.end_body();
        match self.inexact {
            Some(why) => Err(why),
            None if warned(&self.builder, &self.notes) => Err("the skipped `Used values` have warnings".into()),
            None => {
                fit(&mut self.builder);
                Ok(UsedPart::new(self.builder, self.parts))
            }
        }
    }
}

/// Whether reading a body (or a piece of one) warned, or left a warning pending: then it
/// did not read as the one pass reads it, which is read instead.
fn warned(builder: &Builder, notes: &Notes) -> bool {
    !builder.module.warnings.is_empty() || !notes.pending.is_empty() || notes.suppressed > 0
}

/// What was read, kept until the module takes it: no room beyond its length.
fn fit(builder: &mut Builder) {
    builder.infos.shrink_to_fit();
    builder.used.shrink_to_fit();
}

/// What the skipped bodies of one module hold, read and waiting for their module.
pub struct UsedPart {
    builder: Builder,
    parts: Vec<(Part, String)>,
    /// The distinct strings the instruction facts name (opcode, op_name, source file), in
    /// the order they are first named, the empty one first; with each one's place there.
    distinct: Vec<Str>,
    places: HashMap<Str, u32>,
    /// Each fact's three strings as places in `distinct` ([`UsedPart::prepare`]).
    named: Vec<[u32; 3]>,
    /// The fact each instruction of the module takes ([`UsedPart::choose`]).
    chosen: Chosen,
}

impl UsedPart {
    /// Why one pass would not have given `module` at all, if it would not: it has no
    /// allocations and no live ranges, so only `Used values` entries could keep it, and
    /// these bodies have none (the rule of `join::nothing_to_join`). The files must then be
    /// read again in one pass (which says so in an error).
    pub fn refused(&self, module: &Module) -> Option<String> {
        super::join::nothing_to_join(module, self.builder.used.is_empty())
            .then(|| format!("{}: one pass finds no buffer assignment in it", module.name))
    }

    fn new(builder: Builder, parts: Vec<(Part, String)>) -> UsedPart {
        UsedPart {
            builder,
            parts,
            distinct: vec![Str::EMPTY],
            places: HashMap::new(),
            named: Vec::new(),
            chosen: Chosen::default(),
        }
    }

    /// Finds the distinct strings of up to `work` instruction facts, so that
    /// [`UsedPart::complete`] interns each into the module once; true once every fact's
    /// are found. Touches only the part: its module may be on screen meanwhile.
    pub fn prepare(&mut self, work: usize) -> bool {
        let from = self.named.len();
        let to = self
            .builder
            .infos
            .len()
            .min(from.saturating_add(work.max(1)));
        let (distinct, places) = (&mut self.distinct, &mut self.places);
        let mut place = |s: Str| -> u32 {
            if s.is_empty() {
                return 0;
            }
            *places.entry(s).or_insert_with(|| {
                distinct.push(s);
                (distinct.len() - 1) as u32
            })
        };
        for (_, i) in &self.builder.infos[from..to] {
            let named = [place(i.opcode), place(i.op_name), place(i.source_file)];
            self.named.push(named);
        }
        self.named.len() == self.builder.infos.len()
    }

    /// Chooses, for up to `work` instruction facts, which instruction of `module` (the one
    /// to complete, only read: it may be on screen meanwhile) takes it, so that
    /// [`UsedPart::complete`] only gives them; true once all are looked at.
    pub fn choose(&mut self, module: &Module, work: usize) -> bool {
        if !self.chosen.fits(module) {
            self.chosen = Chosen::new(module);
        }
        self.chosen.step(module, &self.builder.infos, work)
    }

    /// Gives the bodies to `module` (the one [`DeferredUses::module`] names): the join that
    /// completes it.
    pub fn complete(mut self, module: Module) -> Completing {
        while !self.prepare(usize::MAX) {}
        while !self.choose(&module, usize::MAX) {}
        let UsedPart {
            builder: read,
            parts,
            distinct,
            named,
            chosen,
            ..
        } = self;
        let mut b = Builder::resume(module, parts);
        let names = &read.module.strings;
        let strings = &mut b.module.strings;
        // Interned in the order one pass meets them, so that the names' arena is the same.
        let in_module: Vec<Str> = distinct
            .iter()
            .map(|&s| {
                if s.is_empty() {
                    s
                } else {
                    strings.intern(names.get(s))
                }
            })
            .collect();
        let to_module = |place: u32| in_module.get(place as usize).copied().unwrap_or_default();
        let mut infos = read.infos;
        for ((_, i), [opcode, op_name, source_file]) in infos.iter_mut().zip(named) {
            i.opcode = to_module(opcode);
            i.op_name = to_module(op_name);
            i.source_file = to_module(source_file);
        }
        b.infos = infos;
        // Only `Used values` writes this arena: the module's is still empty.
        b.module.uses_strings = read.module.uses_strings;
        b.used = read.used;
        Completing {
            join: Join::resume(b, chosen),
        }
    }
}

/// The join of a module's `Used values`, read since, in pieces.
pub struct Completing {
    join: Join,
}

impl Completing {
    /// Joins up to `work` entries; true once done.
    pub fn step(&mut self, work: usize) -> bool {
        self.join.step(work)
    }

    /// The module as one pass reads it (once [`Completing::step`] said true).
    pub fn into_module(self) -> Module {
        self.join.into_module()
    }
}

/// Whether every warning's line number is known: none follows, in its file, a body that was
/// jumped over ([`DeferredUses::jumped`]: its lines were not counted).
pub fn lines_known<'a>(
    modules: impl Iterator<Item = &'a Module>,
    deferred: &[DeferredUses],
) -> bool {
    let jumped: Vec<(&str, u64)> = deferred
        .iter()
        .filter(|d| d.jumped)
        .map(|d| (base_name(&d.file), d.first_line))
        .collect();
    if jumped.is_empty() {
        return true;
    }
    !modules.flat_map(|m| &m.warnings).any(|w| {
        jumped
            .iter()
            .any(|&(file, first)| w.file == file && w.line >= first)
    })
}

/// Each whole line of `chunk` (the first one after the start of it `carry` holds, from
/// the chunk before) given to `line` with the offset in `chunk` after its line end, until
/// `line` says false; the unfinished last line is carried.
fn lines(carry: &mut Vec<u8>, chunk: &[u8], mut line: impl FnMut(&[u8], usize) -> bool) {
    let mut rest = chunk;
    while let Some(nl) = memchr::memchr(b'\n', rest) {
        let end = chunk.len() - rest.len() + nl + 1;
        let go_on = if carry.is_empty() {
            line(&rest[..nl], end)
        } else {
            carry.extend_from_slice(&rest[..nl]);
            let go_on = line(carry, end);
            carry.clear();
            go_on
        };
        if !go_on {
            return;
        }
        rest = &rest[nl + 1..];
    }
    carry.extend_from_slice(rest);
}

fn base_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}
