//! Building an [`HloText`] as it is read: interning its strings, pushing its instructions
//! part by part, and, once read, trimming it and making its name tables.
//!
//! Owns: how a text's flat lists and tables are filled; the reader (`parse::hlo`) and the
//! tests' hand-made texts both build through it.

use hashbrown::{HashMap, HashTable};

use super::{CallRole, Called, Computation, HloInstruction, HloText, Meta, Run};
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
    /// Where the instruction being pushed starts in the flat lists.
    mark: (u32, u32, u32),
}

/// The fixed parts of an instruction for [`HloBuilder::instruction`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Head {
    pub name: Str,
    pub opcode: Str,
    pub shape: Str,
    pub literal: Str,
    /// From [`HloBuilder::meta`] (0: none).
    pub meta: u32,
    pub line: u32,
    pub is_root: bool,
}

impl HloBuilder {
    pub fn new() -> HloBuilder {
        let mut b = HloBuilder::default();
        b.text.metas.push(Meta::default());
        b.metas.insert(Meta::default(), 0);
        b
    }

    /// The handle of `text` (invalid UTF-8 stored replaced), interned.
    pub fn intern(&mut self, text: &[u8]) -> Str {
        if text.is_empty() {
            return Str::EMPTY;
        }
        let h = TableHash::quick(text);
        let strings = &self.text.strings;
        let same = |&(s, eh): &(Str, TableHash)| eh == h && strings.bytes(s) == text;
        if let Some(&(s, _)) = self.interned.find(h.spread(), same) {
            return s;
        }
        let s = self.text.strings.push_bytes(text);
        (self.interned).insert_unique(h.spread(), (s, h), |&(_, h)| h.spread());
        s
    }

    /// Opens a computation; the instructions pushed next are its.
    pub fn computation(&mut self, name: &[u8], is_entry: bool) {
        let name = self.intern(name);
        if let Some(c) = self.text.computations.last_mut() {
            c.instructions.shrink_to_fit();
        }
        self.text.computations.push(Computation {
            name,
            is_entry,
            instructions: Vec::new(),
        });
        self.start();
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

    pub fn attr(&mut self, key: &[u8], value: &[u8]) {
        let kv = (self.intern(key), self.intern(value));
        self.text.attrs.push(kv);
    }

    /// Forgets the parts pushed since the last instruction.
    pub fn abandon(&mut self) {
        let (o, c, a) = self.mark;
        self.text.operands.truncate(o as usize);
        self.text.calls.truncate(c as usize);
        self.text.attrs.truncate(a as usize);
    }

    /// The index of metadata `m` in the text, interned (0 for none).
    pub fn meta(&mut self, m: Meta) -> u32 {
        let next = self.text.metas.len() as u32;
        let id = *self.metas.entry(m).or_insert(next);
        if id == next {
            self.text.metas.push(m);
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
            literal: head.literal,
            operands: run(o, t.operands.len()),
            calls: run(c, t.calls.len()),
            attrs: run(a, t.attrs.len()),
            meta,
            line: head.line,
            is_root: head.is_root,
        };
        match self.text.computations.last_mut() {
            Some(comp) => comp.instructions.push(ins),
            None => self.abandon(),
        }
        self.start();
    }

    /// The text read: lists trimmed, the arena's interning table dropped, the name tables
    /// made.
    pub fn finish(self) -> HloText {
        let mut t = self.text;
        let chunks = std::mem::take(&mut t.strings).into_chunks();
        let chunks = chunks.into_iter().map(|mut c| {
            c.shrink_to_fit();
            c
        });
        t.strings = Strings::from_chunks(chunks.collect());
        t.computations.shrink_to_fit();
        for c in &mut t.computations {
            c.instructions.shrink_to_fit();
        }
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
        t.index();
        t
    }
}

impl HloText {
    /// Makes the name tables (the first of a name is kept). Made at their size, they never
    /// grow: an entry is its position only, its hash made again from its name if they did.
    fn index(&mut self) {
        let n: usize = self.computations.iter().map(|c| c.instructions.len()).sum();
        let mut by_name = HashTable::with_capacity(n);
        let mut comps = HashTable::with_capacity(self.computations.len());
        let mut repeat = false;
        let comp_name = |k: u32| self.str(self.computations[k as usize].name);
        let ins_name = |(c, i): (u32, u32)| {
            self.str(self.computations[c as usize].instructions[i as usize].name)
        };
        let spread = |name: &str| TableHash::quick(name.as_bytes()).spread();
        for (ci, c) in self.computations.iter().enumerate() {
            let name = self.str(c.name);
            let at = comps.entry(
                spread(name),
                |&k| comp_name(k) == name,
                |&k| spread(comp_name(k)),
            );
            at.or_insert(ci as u32);
            for (ii, i) in c.instructions.iter().enumerate() {
                let name = self.str(i.name);
                let eq = |&k: &(u32, u32)| ins_name(k) == name;
                match by_name.entry(spread(name), eq, |&k| spread(ins_name(k))) {
                    hashbrown::hash_table::Entry::Occupied(_) => repeat = true,
                    hashbrown::hash_table::Entry::Vacant(v) => {
                        v.insert((ci as u32, ii as u32));
                    }
                }
            }
        }
        self.by_name = by_name;
        self.computations_by_name = comps;
        self.names_repeat = repeat;
    }
}
