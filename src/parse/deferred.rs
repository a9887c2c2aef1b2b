//! `Used values` read after the rest of its module, so that a diagram can be drawn first.
//!
//! `Used values` is most of a dump's bytes (73 % of a 94 MB CPU dump) and feeds only the
//! instructions' facts (opcode, op_name, source line) and each value's positions and uses;
//! the diagram needs none of it. A [`Loader`](super::Loader) told to
//! [`defer_uses`](super::Loader::defer_uses) skips the body of each `Used values` section
//! of a plain-text file (counting its lines, so that line numbers stay those of the file)
//! and lists it as a [`DeferredUses`]: which file, which module, which bytes. The modules
//! it gives are joined to their live ranges and checked, but have no uses and no
//! instruction facts. Later, a [`UsesReader`] reads those bytes into a [`UsedPart`] of its
//! own (its strings in arenas of its own, so that the module stays untouched, on screen,
//! meanwhile), which [`UsedPart::complete`] gives to the module (interning the few distinct
//! op_names, opcodes and source files into the module's names; [`UsedPart::prepare`] finds
//! them beforehand, in pieces, with the module still untouched); [`Completing`] joins it
//! into the module one pass would have read.
//!
//! The skip is a guess (a body line starts with `<` or a space, or is blank) that the
//! later read checks: the body must read with no warning, no line given back and no entry
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
pub use bounds::{last_header, BodyEnd, BodyStart, Found};
pub use handoff::{Handoff, Unpack};

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
    /// The skip ended at another section's header (or the file's end); else one pass may
    /// have read on in `Used values` there, and completing refuses.
    pub(crate) exact: bool,
    /// The body was never fed ([`Loader::jump`](super::Loader::jump)): `lines` is unknown
    /// (0), and so are the numbers of the file's later lines.
    pub jumped: bool,
    /// Which file each of the module's parts came from (for the join's warnings).
    pub(crate) parts: Vec<(Part, String)>,
}

/// Reads the skipped bodies of one module.
pub struct UsesReader {
    builder: Builder,
    parts: Vec<(Part, String)>,
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
        if !d.exact && self.inexact.is_none() {
            self.inexact = Some(format!(
                "the `Used values` of {} go on after line {}",
                d.file,
                d.first_line + d.lines
            ));
        }
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
        let mut rest = chunk;
        while let Some(nl) = memchr::memchr(b'\n', rest) {
            if self.carry.is_empty() {
                self.line(&rest[..nl]);
            } else {
                self.carry.extend_from_slice(&rest[..nl]);
                let line = std::mem::take(&mut self.carry);
                self.line(&line);
                self.carry = line;
                self.carry.clear();
            }
            rest = &rest[nl + 1..];
        }
        self.carry.extend_from_slice(rest);
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
        let warned = !self.builder.module.warnings.is_empty()
            || !self.notes.pending.is_empty()
            || self.notes.suppressed > 0;
        match self.inexact {
            Some(why) => Err(why),
            None if warned => Err("the skipped `Used values` have warnings".into()),
            None => {
                // Kept until the module takes them: no room beyond their length.
                self.builder.infos.shrink_to_fit();
                self.builder.used.shrink_to_fit();
                Ok(UsedPart::new(self.builder, self.parts))
            }
        }
    }
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

/// The skipped bodies of any modules, read in the order they were listed (one
/// [`UsesReader`] per module): what [`complete`] reads from whole files, and what a reader
/// elsewhere (the command line's second thread) reads while the first read goes on.
#[derive(Default)]
pub struct Bodies {
    /// The bodies started, in order, as they were listed.
    listed: Vec<DeferredUses>,
    /// Each module's reader, in the order first listed.
    readers: Vec<(String, UsesReader)>,
    /// The reader of the body being fed.
    current: Option<usize>,
    /// Why a body could not be read (its bytes were not all there).
    failed: Option<String>,
    /// The only body so far is a guess ([`Bodies::guess`]) not yet confirmed.
    guessed: bool,
}

impl Bodies {
    /// The bytes fed next are the body `d` (a [`Loader::deferred`](super::Loader::deferred)
    /// entry), from its first byte.
    pub fn body(&mut self, d: &DeferredUses) {
        self.listed.push(d.clone());
        let at = match self.readers.iter().position(|(m, _)| *m == d.module) {
            Some(at) => {
                self.readers[at].1.body(d);
                at
            }
            None => {
                self.readers.push((d.module.clone(), UsesReader::new(d)));
                self.readers.len() - 1
            }
        };
        self.current = Some(at);
    }

    /// More bytes of the current body, in order, in chunks of any size.
    pub fn feed(&mut self, chunk: &[u8]) {
        if let Some(r) = self.current.and_then(|at| self.readers.get_mut(at)) {
            r.1.feed(chunk);
        }
    }

    /// The bytes fed next are a body the loader has not listed yet: the one a file's
    /// first `Used values` header opens ([`BodyStart`]), up to where [`BodyEnd`] says it
    /// ends, so that it is read while the loader reads the rest. It is taken to be what
    /// the loader will list on jumping over it but for its module and the files of its
    /// module's parts, which [`Bodies::confirm`] takes from the entry listed. Only as the
    /// first body: false (and the bytes are not to be fed) after another.
    pub fn guess(
        &mut self,
        file: &str,
        bytes: Range<u64>,
        first_line: u64,
        at_file_end: bool,
    ) -> bool {
        if !self.listed.is_empty() {
            return false;
        }
        self.body(&DeferredUses {
            file: file.to_string(),
            module: String::new(),
            bytes,
            first_line,
            lines: 0,
            at_file_end,
            exact: true,
            jumped: true,
            parts: Vec::new(),
        });
        self.guessed = true;
        true
    }

    /// `d`, the first entry the loader listed: whether it is the body guessed
    /// ([`Bodies::guess`], then read or being read: not to be fed again). Where it is not,
    /// the guess is forgotten and `d` is to be read as any other.
    pub fn confirm(&mut self, d: &DeferredUses) -> bool {
        let Some(guess) = self.listed.first().filter(|_| self.guessed) else {
            return false;
        };
        let same = guess.file == d.file
            && guess.bytes == d.bytes
            && (guess.first_line, guess.lines) == (d.first_line, d.lines)
            && (guess.at_file_end, guess.exact, guess.jumped) == (d.at_file_end, d.exact, d.jumped);
        if !same {
            self.forget_guess();
            return false;
        }
        self.guessed = false;
        self.listed[0] = d.clone();
        if let Some((module, reader)) = self.readers.first_mut() {
            module.clone_from(&d.module);
            reader.parts.clone_from(&d.parts);
        }
        true
    }

    /// The body guessed is not one the loader listed: forgotten.
    pub fn forget_guess(&mut self) {
        if std::mem::take(&mut self.guessed) {
            self.listed.clear();
            self.readers.clear();
            self.current = None;
        }
    }

    /// The current body's bytes could not all be fed: completing will refuse.
    pub fn fail(&mut self, why: String) {
        self.failed.get_or_insert(why);
    }

    /// Completes `modules` (read with [`Loader::defer_uses`](super::Loader::defer_uses),
    /// which listed `deferred`) from the bodies read: the modules become those one pass
    /// reads. An error says why not (the bodies read are not those `deferred` lists, a
    /// body did not read as in one pass, a warning's line is unknown): the files must then
    /// be read again in one pass, and the modules are left partly completed.
    pub fn complete<'m>(
        self,
        modules: impl IntoIterator<Item = &'m mut Module>,
        deferred: &[DeferredUses],
    ) -> Result<(), String> {
        self.complete_through(modules, deferred, |part, _| Ok(part))
    }

    /// [`Bodies::complete`], each module's part passed through `through` (with the module's
    /// first body) on its way: the tests pass it through the [`Handoff`] the page's worker
    /// uses.
    pub fn complete_through<'m>(
        self,
        modules: impl IntoIterator<Item = &'m mut Module>,
        deferred: &[DeferredUses],
        through: impl Fn(UsedPart, &DeferredUses) -> Result<UsedPart, String>,
    ) -> Result<(), String> {
        if let Some(why) = self.failed {
            return Err(why);
        }
        if self.listed != deferred {
            return Err("the bodies read are not those the first read skipped".into());
        }
        let modules: Vec<&mut Module> = modules.into_iter().collect();
        if !lines_known(modules.iter().map(|m| &**m), deferred) {
            return Err("a warning follows bytes that were not read: its line is unknown".into());
        }
        let mut readers = self.readers;
        for m in modules {
            let Some(at) = readers.iter().position(|(name, _)| *name == m.name) else {
                continue;
            };
            let (_, reader) = readers.swap_remove(at);
            let first = deferred.iter().find(|d| d.module == m.name);
            let part = match first {
                Some(first) => through(reader.finish()?, first)?,
                None => reader.finish()?,
            };
            if let Some(why) = part.refused(m) {
                return Err(why);
            }
            let mut completing = part.complete(std::mem::take(m));
            while !completing.step(usize::MAX) {}
            *m = completing.into_module();
        }
        // A body whose module is not read (its join failed) is not read in one pass either.
        Ok(())
    }
}

/// Completes `modules` (read with [`Loader::defer_uses`](super::Loader::defer_uses)) from
/// the `deferred` bodies in the bytes of their files, `bytes(file)` giving a file's bytes by
/// the name it was read under ([`Bodies::complete`]); the modules become those one pass
/// reads. An error says why a body did not read as in one pass (the files must then be read
/// again in one pass); the modules are then left partly completed.
pub fn complete<'a>(
    modules: &mut [Module],
    deferred: &[DeferredUses],
    bytes: impl Fn(&str) -> Option<&'a [u8]>,
) -> Result<(), String> {
    complete_through(modules, deferred, bytes, |part, _| Ok(part))
}

/// [`complete`], each module's part passed through `through` (with the module's first
/// body) on its way ([`Bodies::complete_through`]): the tests pass it through the
/// [`Handoff`] the page's worker uses.
pub fn complete_through<'a>(
    modules: &mut [Module],
    deferred: &[DeferredUses],
    bytes: impl Fn(&str) -> Option<&'a [u8]>,
    through: impl Fn(UsedPart, &DeferredUses) -> Result<UsedPart, String>,
) -> Result<(), String> {
    let mut bodies = Bodies::default();
    for d in deferred {
        let file = bytes(&d.file).ok_or_else(|| format!("{}: no bytes", d.file))?;
        let body = usize::try_from(d.bytes.start)
            .ok()
            .zip(usize::try_from(d.bytes.end).ok())
            .and_then(|(a, b)| file.get(a..b))
            .ok_or_else(|| format!("{}: the body is not in the file", d.file))?;
        bodies.body(d);
        bodies.feed(body);
    }
    bodies.complete_through(modules, deferred, through)
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

fn base_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}
