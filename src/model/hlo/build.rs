//! Building an [`HloText`] as it is read: interning its strings, pushing its instructions
//! part by part, and, once read, trimming it and making its name tables.
//!
//! Owns: how a text's flat lists and tables are filled; the reader (`parse::hlo`) and the
//! tests' hand-made texts both build through it.

use hashbrown::{HashMap, HashTable};

use super::{CallRole, Called, Computation, HloInstruction, HloText, Meta, MetaRecord, Run};
use crate::model::{Str, Strings, TableHash};

/// Builds an [`HloText`] as it is read: strings interned, instructions pushed part by
/// part ([`HloBuilder::operand`], [`HloBuilder::call`], [`HloBuilder::attr`], then
/// [`HloBuilder::instruction`], or [`HloBuilder::abandon`] for a line that turned out
/// not to be one), and, at the end, the arena trimmed and the name tables made
/// ([`HloBuilder::finish`]).
#[derive(Default)]
pub struct HloBuilder {
    pub text: HloText,
    metas: HashMap<Meta, u32>,
    /// The text's interned strings by [`TableHash::quick`] (the arena's own table, by the
    /// slower [`TableHash::of`], stays empty): dropped once read.
    interned: HashTable<(Str, TableHash)>,
    /// Short strings met lately (opcodes, attribute keys, short values), direct-mapped by
    /// their bytes ([`ShortKey`]): most are looked up here without hashing. Dropped once read.
    short: Vec<(ShortKey, Str)>,
    /// The open computation's instructions so far, moved into it at its size when it ends
    /// ([`HloBuilder::end`]): no list per computation grows by doubling.
    open: Vec<HloInstruction>,
    /// Each instruction's name's hash, in order, for the name table ([`HloText::index`]).
    name_hashes: Vec<TableHash>,
    /// The name given to [`HloBuilder::name`] for the instruction being pushed, hashed.
    pending_name: Option<(TableHash, Str)>,
    /// Where the instruction being pushed starts in the flat lists.
    mark: (u32, u32, u32),
}

/// A string of at most 16 bytes as two words (its first and last eight, overlapping or
/// zero-filled) and its length: equal keys are equal strings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ShortKey([u64; 2], u32);

/// Entries of [`HloBuilder`]'s cache of short strings (a power of two).
const SHORT_SLOTS: usize = 256;

impl ShortKey {
    fn of(text: &[u8]) -> Option<ShortKey> {
        let n = text.len();
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
        let half = |b: &[u8]| u64::from(u32::from_le_bytes(b.try_into().unwrap_or_default()));
        let words = match n {
            0 => return None,
            8..=16 => [word(&text[..8]), word(&text[n - 8..])],
            4..=7 => [half(&text[..4]) | half(&text[n - 4..]) << 32, 0],
            1..=3 => [text.iter().fold(0, |w, &c| w << 8 | u64::from(c)), 0],
            _ => return None,
        };
        Some(ShortKey(words, n as u32))
    }

    fn slot(self) -> usize {
        let [a, b] = self.0;
        let h = (a ^ b.rotate_left(29) ^ u64::from(self.1)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> (64 - SHORT_SLOTS.trailing_zeros())) as usize
    }
}

/// The fixed parts of an instruction for [`HloBuilder::instruction`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Head {
    pub name: Str,
    pub opcode: Str,
    pub shape: Str,
    /// A `constant`'s literal or a `parameter`'s number (none for other opcodes).
    pub literal: Option<Str>,
    /// From [`HloBuilder::meta`] (0: none).
    pub meta: u32,
    pub line: u32,
    pub is_root: bool,
}

impl HloBuilder {
    pub fn new() -> HloBuilder {
        let mut b = HloBuilder::default();
        b.text.metas.push(MetaRecord::of(Meta::default()));
        b.metas.insert(Meta::default(), 0);
        b
    }

    /// A builder for a text of about `bytes` bytes: its lists and tables made at the size
    /// such a text needs, so that they are not copied as they grow (trimmed once read).
    pub fn with_size(bytes: usize) -> HloBuilder {
        let mut b = HloBuilder::new();
        b.text.strings.reserve(bytes / 4);
        b.interned.reserve(bytes / 100, |&(_, h)| h.spread());
        b.text.operands.reserve(bytes / 150);
        b.text.attrs.reserve(bytes / 150);
        b
    }

    /// [`HloBuilder::intern`] for strings that repeat among few (opcodes, attribute keys):
    /// those of at most 16 bytes are found in a small cache first.
    pub fn intern_short(&mut self, text: &[u8]) -> Str {
        let Some(key) = ShortKey::of(text) else {
            return self.intern(text);
        };
        if self.short.is_empty() {
            self.short = vec![(ShortKey::default(), Str::EMPTY); SHORT_SLOTS];
        }
        let slot = key.slot();
        if self.short[slot].0 == key {
            return self.short[slot].1;
        }
        let s = self.intern(text);
        self.short[slot] = (key, s);
        s
    }

    /// The handle of `text` (invalid UTF-8 stored replaced), interned.
    pub fn intern(&mut self, text: &[u8]) -> Str {
        self.intern_hashed(text).0
    }

    /// [`HloBuilder::intern`], with the string's hash.
    fn intern_hashed(&mut self, text: &[u8]) -> (Str, TableHash) {
        let h = TableHash::quick(text);
        if text.is_empty() {
            return (Str::EMPTY, h);
        }
        let strings = &self.text.strings;
        let same = |&(s, eh): &(Str, TableHash)| eh == h && strings.bytes(s) == text;
        if let Some(&(s, _)) = self.interned.find(h.spread(), same) {
            return (s, h);
        }
        let s = self.text.strings.push_bytes(text);
        (self.interned).insert_unique(h.spread(), (s, h), |&(_, h)| h.spread());
        (s, h)
    }

    /// An instruction's name, interned: the handle for [`Head::name`] (its hash kept for
    /// the name table).
    pub fn name(&mut self, text: &[u8]) -> Str {
        let (s, h) = self.intern_hashed(text);
        self.pending_name = Some((h, s));
        s
    }

    /// Opens a computation; the instructions pushed next are its. It is the entry when
    /// `is_entry` and no computation was before it.
    pub fn computation(&mut self, name: &[u8], is_entry: bool) {
        let name = self.intern(name);
        self.end();
        if is_entry && self.text.entry.is_none() {
            self.text.entry = u32::try_from(self.text.computations.len()).ok();
        }
        self.text.computations.push(Computation {
            name,
            instructions: Vec::new(),
        });
        self.start();
    }

    /// Ends the open computation (its instructions moved into it); nothing when none is open.
    pub fn end(&mut self) {
        if let Some(c) = self.text.computations.last_mut() {
            if !self.open.is_empty() {
                c.instructions.extend_from_slice(&self.open);
                c.instructions.shrink_to_fit();
                self.open.clear();
            }
        }
    }

    fn start(&mut self) {
        let t = &self.text;
        self.mark = (
            t.operands.len() as u32,
            t.calls.len() as u32,
            t.attrs.len() as u32,
        );
    }

    /// One operand of the instruction being pushed.
    pub fn operand(&mut self, name: &[u8]) {
        let s = self.intern(name);
        self.text.operands.push(s);
    }

    pub fn call(&mut self, role: CallRole, computation: &[u8]) {
        let computation = self.intern(computation);
        self.text.calls.push(Called { role, computation });
    }

    /// An attribute of the instruction being pushed; its key's and value's handles.
    pub fn attr(&mut self, key: &[u8], value: &[u8]) -> (Str, Str) {
        let kv = (self.intern_short(key), self.intern_short(value));
        self.text.attrs.push(kv);
        kv
    }

    /// An attribute of this text's (a key's and a value's handles), again.
    pub fn attr_again(&mut self, key: Str, value: Str) {
        self.text.attrs.push((key, value));
    }

    /// Forgets the parts pushed since the last instruction.
    pub fn abandon(&mut self) {
        let (o, c, a) = self.mark;
        self.text.operands.truncate(o as usize);
        self.text.calls.truncate(c as usize);
        self.text.attrs.truncate(a as usize);
        self.pending_name = None;
    }

    /// The index of metadata `m` in the text, interned (0 for none).
    pub fn meta(&mut self, m: Meta) -> u32 {
        let next = self.text.metas.len() as u32;
        let id = *self.metas.entry(m).or_insert(next);
        if id == next {
            self.text.metas.push(MetaRecord::of(m));
        }
        id
    }

    /// The instruction whose parts were pushed since the last, into the open computation
    /// (none open: forgotten).
    pub fn instruction(&mut self, head: Head) {
        let meta = head.meta;
        let t = &self.text;
        let (o, c, a) = self.mark;
        let run = |start: u32, end: usize| Run {
            start,
            len: end as u32 - start,
        };
        let ins = HloInstruction {
            name: head.name,
            opcode: head.opcode,
            shape: head.shape,
            operands: run(o, t.operands.len()),
            calls: run(c, t.calls.len()),
            attrs: run(a, t.attrs.len()),
            meta,
            line: head.line,
            is_root: head.is_root,
            has_literal: head.literal.is_some(),
        };
        if self.text.computations.is_empty() {
            self.abandon();
        } else {
            self.text.operands.extend(head.literal);
            let h = match self.pending_name.take() {
                Some((h, s)) if s == head.name => h,
                _ => TableHash::quick(self.text.strings.bytes(head.name)),
            };
            self.name_hashes.push(h);
            self.open.push(ins);
        }
        self.start();
    }

    /// The text read: lists trimmed, the arena's interning table dropped, the name tables
    /// made.
    pub fn finish(mut self) -> HloText {
        self.end();
        let mut t = self.text;
        let chunks = std::mem::take(&mut t.strings).into_chunks();
        let chunks = chunks.into_iter().map(|mut c| {
            c.shrink_to_fit();
            c
        });
        t.strings = Strings::from_chunks(chunks.collect());
        // Each computation's instructions were moved in at their size (`end`).
        t.computations.shrink_to_fit();
        t.operands.shrink_to_fit();
        t.calls.shrink_to_fit();
        t.attrs.shrink_to_fit();
        t.metas.shrink_to_fit();
        t.name.shrink_to_fit();
        let f = &mut t.frames;
        f.file_names.shrink_to_fit();
        f.function_names.shrink_to_fit();
        f.file_locations.shrink_to_fit();
        f.frames.shrink_to_fit();
        t.index(&self.name_hashes);
        t
    }
}

impl HloText {
    /// Makes the name tables (the first of a name is kept), with the instructions' name
    /// hashes in order (`hashes`, made again if they do not fit). Names are interned, so
    /// equal names are equal handles. Made at their size, the tables never grow: an entry
    /// is its position only, its hash made again from its name if they did.
    fn index(&mut self, hashes: &[TableHash]) {
        let mut starts = Vec::with_capacity(self.computations.len());
        let mut n = 0u32;
        for c in &self.computations {
            starts.push(n);
            n += c.instructions.len() as u32;
        }
        self.starts = starts;
        let mut by_name = HashTable::with_capacity(n as usize);
        let mut comps = HashTable::with_capacity(self.computations.len());
        let mut repeat = false;
        let comp_name = |k: u32| self.str(self.computations[k as usize].name);
        let ins = |g: u32| {
            let (c, i) = self.place(g);
            &self.computations[c as usize].instructions[i as usize]
        };
        let spread = |name: &str| TableHash::quick(name.as_bytes()).spread();
        let known = hashes.len() == n as usize;
        let mut hashes = hashes.iter();
        let mut g = 0u32;
        for (ci, c) in self.computations.iter().enumerate() {
            let name = self.str(c.name);
            let at = comps.entry(
                spread(name),
                |&k| comp_name(k) == name,
                |&k| spread(comp_name(k)),
            );
            at.or_insert(ci as u32);
            for i in &c.instructions {
                let h = match hashes.next() {
                    Some(h) if known => h.spread(),
                    _ => spread(self.str(i.name)),
                };
                let eq = |&k: &u32| ins(k).name == i.name;
                match by_name.entry(h, eq, |&k| spread(self.str(ins(k).name))) {
                    hashbrown::hash_table::Entry::Occupied(_) => repeat = true,
                    hashbrown::hash_table::Entry::Vacant(v) => {
                        v.insert(g);
                    }
                }
                g += 1;
            }
        }
        self.by_name = by_name;
        self.computations_by_name = comps;
        self.names_repeat = repeat;
    }

}
