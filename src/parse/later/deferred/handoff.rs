//! A [`UsedPart`] handed from one wasm instance to another: the page's worker reads a
//! module's `Used values` bodies ([`crate::parse::Behind`]) while the page's own instance reads
//! the rest and draws, then hands what it read back as buffers ([`Handoff`]), each moved
//! between the instances, not copied twice: the positions and uses text as it is, one
//! buffer per chunk of its arena; the value ids with their uses' handles, and the
//! instruction facts, as fixed-size records of little-endian 32-bit words, so that the page
//! can take them a slice of whole records at a time ([`Unpack`]: on a 1 GB dump they are
//! about 120 MB, too much for one task); the arena of the facts' strings (small: a module's
//! distinct op_names, opcodes and source files) in one buffer.
//!
//! Owns that layout. A buffer that does not read as one is an error, never a panic; a
//! handle that fits no string of its arena reads as "" as everywhere else.

use super::super::assemble::Builder;
use super::{DeferredUses, UsedPart};
use crate::model::{Instruction, Str, Strings};

/// Marks the layout (the first word of [`Handoff::names`]), so that buffers of another
/// build's layout are refused.
const MAGIC: u32 = u32::from_le_bytes(*b"BSU2");

/// A [`UsedPart`] as buffers ([`UsedPart::into_handoff`], [`Unpack`]).
pub struct Handoff {
    /// `(value id, uses)` records ([`USED_RECORD`] bytes each).
    pub used: Vec<u8>,
    /// `(value id, instruction facts)` records ([`INFO_RECORD`] bytes each).
    pub infos: Vec<u8>,
    /// The facts' strings: the magic word, the arena's chunk count and lengths, its text.
    pub names: Vec<u8>,
    /// The positions and uses text ([`crate::model::Module::uses_strings`]), chunk by chunk.
    pub uses: Vec<String>,
}

impl Handoff {
    /// Bytes of a record of [`Handoff::used`]: value id, uses text's handle.
    pub const USED_RECORD: usize = 12;
    /// Bytes of a record of [`Handoff::infos`]: value id, opcode, op_name and source file
    /// handles, source line, whether a stack frame id follows, the id.
    pub const INFO_RECORD: usize = 40;
}

const USED_RECORD: usize = Handoff::USED_RECORD;
const INFO_RECORD: usize = Handoff::INFO_RECORD;

impl UsedPart {
    /// The part as buffers, for another wasm instance ([`Unpack`]).
    pub fn into_handoff(self) -> Handoff {
        builder_handoff(self.builder)
    }

    /// The part `h` holds, for the module whose first skipped body is `first` (the same
    /// [`DeferredUses`] the reader started from): [`Unpack`] at once.
    pub fn from_handoff(h: Handoff, first: &DeferredUses) -> Result<UsedPart, String> {
        Ok(Unpack::at_once(h)?.finish(first))
    }
}

/// A builder's reads of `Used values` (its uses and facts, their strings) as buffers: the
/// one layout of [`UsedPart::into_handoff`] and of a piece's read
/// ([`super::PieceRead::into_wire`]).
pub(super) fn builder_handoff(b: Builder) -> Handoff {
    let mut used = Words(Vec::with_capacity(b.used.len() * USED_RECORD));
    for &(value, uses) in &b.used {
        used.put(value);
        used.str(uses);
    }
    let mut infos = Words(Vec::with_capacity(b.infos.len() * INFO_RECORD));
    for (value, i) in &b.infos {
        infos.put(*value);
        infos.str(i.opcode);
        infos.str(i.op_name);
        infos.str(i.source_file);
        infos.put(i.source_line);
        infos.put(u32::from(i.stack_frame_id.is_some()));
        infos.put(i.stack_frame_id.unwrap_or(0));
    }
    let chunks = b.module.strings.into_chunks();
    let mut names = Words(Vec::new());
    names.put(MAGIC);
    names.count(chunks.len());
    for c in &chunks {
        names.count(c.len());
    }
    for c in &chunks {
        names.0.extend_from_slice(c.as_bytes());
    }
    Handoff {
        used: used.0,
        infos: infos.0,
        names: names.0,
        uses: b.module.uses_strings.into_chunks(),
    }
}

/// A [`Handoff`] taken back a piece at a time: the names first, then the records of
/// [`Handoff::used`] and [`Handoff::infos`] in slices of whole records, in order, and the
/// uses chunks in order.
pub struct Unpack {
    names: Strings,
    used: Vec<(u32, Str)>,
    infos: Vec<(u32, Instruction)>,
    uses: Vec<String>,
}

impl Unpack {
    /// Starts from [`Handoff::names`].
    pub fn new(names: &[u8]) -> Result<Unpack, String> {
        let mut r = Read(names);
        if r.word()? != MAGIC {
            return Err("the handed-over uses are not of this build's layout".into());
        }
        let n = r.count()?;
        let lens = (0..n).map(|_| r.word()).collect::<Result<Vec<u32>, _>>()?;
        let mut chunks = Vec::with_capacity(n);
        for l in lens {
            chunks.push(r.text(l as usize)?);
        }
        if !r.0.is_empty() {
            return Err("the handed-over names have bytes after their end".into());
        }
        Ok(Unpack {
            names: Strings::from_chunks(chunks),
            used: Vec::new(),
            infos: Vec::new(),
            uses: Vec::new(),
        })
    }

    /// More records of [`Handoff::used`] (whole records only).
    pub fn used(&mut self, records: &[u8]) -> Result<(), String> {
        let mut r = Read::records(records, USED_RECORD)?;
        self.used.reserve(records.len() / USED_RECORD);
        while !r.0.is_empty() {
            self.used.push((r.word()?, r.str()?));
        }
        Ok(())
    }

    /// More records of [`Handoff::infos`] (whole records only).
    pub fn infos(&mut self, records: &[u8]) -> Result<(), String> {
        let mut r = Read::records(records, INFO_RECORD)?;
        self.infos.reserve(records.len() / INFO_RECORD);
        while !r.0.is_empty() {
            let value = r.word()?;
            let [opcode, op_name, source_file] = [r.str()?, r.str()?, r.str()?];
            let source_line = r.word()?;
            let (has_frame, frame) = (r.word()?, r.word()?);
            let instruction = Instruction {
                name: Str::EMPTY,
                opcode,
                op_name,
                source_file,
                source_line,
                stack_frame_id: (has_frame != 0).then_some(frame),
            };
            self.infos.push((value, instruction));
        }
        Ok(())
    }

    /// The next chunk of [`Handoff::uses`].
    pub fn uses(&mut self, chunk: String) {
        self.uses.push(chunk);
    }

    /// All of `h` at once.
    pub fn at_once(h: Handoff) -> Result<Unpack, String> {
        let mut u = Unpack::new(&h.names)?;
        u.used(&h.used)?;
        u.infos(&h.infos)?;
        for chunk in h.uses {
            u.uses(chunk);
        }
        Ok(u)
    }

    /// The part, for the module whose first skipped body is `first`.
    pub fn finish(self, first: &DeferredUses) -> UsedPart {
        UsedPart::new(self.into_builder(), first.parts.clone())
    }

    /// What was taken back, as the builder it came from held it.
    pub(super) fn into_builder(self) -> Builder {
        let (mut used, mut infos) = (self.used, self.infos);
        used.shrink_to_fit();
        infos.shrink_to_fit();
        let mut builder = Builder::new("", 0);
        builder.module.strings = self.names;
        builder.module.uses_strings = Strings::from_chunks(self.uses);
        builder.used = used;
        builder.infos = infos;
        builder
    }
}

/// The words being written.
struct Words(Vec<u8>);

impl Words {
    fn put(&mut self, w: u32) {
        self.0.extend_from_slice(&w.to_le_bytes());
    }
    fn count(&mut self, n: usize) {
        self.put(u32::try_from(n).unwrap_or(u32::MAX));
    }
    fn str(&mut self, s: Str) {
        let [start, len] = s.to_raw();
        self.put(start);
        self.put(len);
    }
}

/// The bytes not read yet.
struct Read<'a>(&'a [u8]);

const CUT: &str = "the handed-over uses are cut short";

impl<'a> Read<'a> {
    /// Records of `size` bytes: refused unless whole.
    fn records(bytes: &'a [u8], size: usize) -> Result<Read<'a>, String> {
        if bytes.len() % size != 0 {
            return Err(CUT.into());
        }
        Ok(Read(bytes))
    }
    fn word(&mut self) -> Result<u32, String> {
        let (w, rest) = self.0.split_first_chunk::<4>().ok_or(CUT)?;
        self.0 = rest;
        Ok(u32::from_le_bytes(*w))
    }
    /// A count of words to follow: no more than the bytes left can hold.
    fn count(&mut self) -> Result<usize, String> {
        let n = self.word()? as usize;
        if n > self.0.len() / 4 {
            return Err(CUT.into());
        }
        Ok(n)
    }
    fn str(&mut self) -> Result<Str, String> {
        Ok(Str::from_raw([self.word()?, self.word()?]))
    }
    fn text(&mut self, len: usize) -> Result<String, String> {
        if len > self.0.len() {
            return Err(CUT.into());
        }
        let (text, rest) = self.0.split_at(len);
        self.0 = rest;
        String::from_utf8(text.to_vec())
            .map_err(|_| "the handed-over uses are not UTF-8 text".to_string())
    }
}
