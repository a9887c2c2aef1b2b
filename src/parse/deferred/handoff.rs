//! A [`UsedPart`] handed from one wasm instance to another: the page's worker reads a
//! module's `Used values` bodies ([`super::UsesReader`]) while the page's own instance reads
//! the rest and draws, then hands what it read back as bytes. The positions and uses text
//! goes as it is, one buffer per chunk of its arena ([`Handoff::uses`], each moved between
//! the instances, not copied twice); the rest in one buffer ([`Handoff::meta`]): the value
//! ids with their uses' handles, the instruction facts, and the arena of the facts'
//! strings, as little-endian 32-bit words followed by that arena's text.
//!
//! Owns that layout. A buffer that does not read as one is an error, never a panic; a
//! handle that fits no string of its arena reads as "" as everywhere else.

use super::super::assemble::Builder;
use super::{DeferredUses, UsedPart};
use crate::model::{Instruction, Str, Strings};

/// Marks the layout, so that a buffer of another build's layout is refused.
const MAGIC: u32 = u32::from_le_bytes(*b"BSU1");

/// A [`UsedPart`] as buffers ([`UsedPart::into_handoff`], [`UsedPart::from_handoff`]).
pub struct Handoff {
    /// The value ids and their uses' handles, the instruction facts, the facts' strings.
    pub meta: Vec<u8>,
    /// The positions and uses text ([`crate::model::Module::uses_strings`]), chunk by chunk.
    pub uses: Vec<String>,
}

impl UsedPart {
    /// The part as buffers, for another wasm instance ([`UsedPart::from_handoff`]).
    pub fn into_handoff(self) -> Handoff {
        let b = self.builder;
        let mut w = Words(Vec::new());
        w.put(MAGIC);
        w.count(b.used.len());
        for &(value, uses) in &b.used {
            w.put(value);
            w.str(uses);
        }
        w.count(b.infos.len());
        for (value, i) in &b.infos {
            w.put(*value);
            w.str(i.name);
            w.str(i.opcode);
            w.str(i.op_name);
            w.str(i.source_file);
            w.put(i.source_line);
            w.put(u32::from(i.stack_frame_id.is_some()));
            w.put(i.stack_frame_id.unwrap_or(0));
        }
        let names = b.module.strings.into_chunks();
        w.count(names.len());
        for c in &names {
            w.count(c.len());
        }
        let mut meta = w.0;
        for c in &names {
            meta.extend_from_slice(c.as_bytes());
        }
        Handoff {
            meta,
            uses: b.module.uses_strings.into_chunks(),
        }
    }

    /// The part [`UsedPart::into_handoff`] gave, for the module whose first skipped body is
    /// `first` (the same [`DeferredUses`] the reader started from).
    pub fn from_handoff(
        meta: &[u8],
        uses: Vec<String>,
        first: &DeferredUses,
    ) -> Result<UsedPart, String> {
        let mut r = Read(meta);
        if r.word()? != MAGIC {
            return Err("the handed-over uses are not of this build's layout".into());
        }
        let n = r.count(3)?;
        let mut used = Vec::with_capacity(n);
        for _ in 0..n {
            used.push((r.word()?, r.str()?));
        }
        let n = r.count(12)?;
        let mut infos = Vec::with_capacity(n);
        for _ in 0..n {
            let value = r.word()?;
            let [name, opcode, op_name, source_file] = [r.str()?, r.str()?, r.str()?, r.str()?];
            let source_line = r.word()?;
            let (has_frame, frame) = (r.word()?, r.word()?);
            let instruction = Instruction {
                name,
                opcode,
                op_name,
                source_file,
                source_line,
                stack_frame_id: (has_frame != 0).then_some(frame),
            };
            infos.push((value, instruction));
        }
        let n = r.count(1)?;
        let lens = (0..n).map(|_| r.word()).collect::<Result<Vec<u32>, _>>()?;
        let mut names = Vec::with_capacity(n);
        for l in lens {
            names.push(r.text(l as usize)?);
        }
        if !r.0.is_empty() {
            return Err("the handed-over uses have bytes after their end".into());
        }
        let mut builder = Builder::new("", 0);
        builder.module.strings = Strings::from_chunks(names);
        builder.module.uses_strings = Strings::from_chunks(uses);
        builder.used = used;
        builder.infos = infos;
        Ok(UsedPart::new(builder, first.parts.clone()))
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

impl Read<'_> {
    fn word(&mut self) -> Result<u32, String> {
        let (w, rest) = self.0.split_first_chunk::<4>().ok_or(CUT)?;
        self.0 = rest;
        Ok(u32::from_le_bytes(*w))
    }
    /// A count of entries of `words` words each: no more than the bytes left can hold.
    fn count(&mut self, words: usize) -> Result<usize, String> {
        let n = self.word()? as usize;
        if n > self.0.len() / (4 * words) {
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
