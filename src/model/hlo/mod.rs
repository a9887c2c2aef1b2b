//! The HLO module text (`*after_optimizations.txt`) as XLA prints it beside a dump: the
//! module header, computations with their instructions in printed (= schedule) order, and
//! the four stack-frame tables of jax ≥ 0.9 (`FileNames`, `FunctionNames`, `FileLocations`,
//! `StackFrames`).
//!
//! Owns: the data only, what the text printed, plus pure look-ups of it. The reader is
//! `parse::hlo`; the flattening of the schedule and the loops are `analysis::loops`. Only
//! what the answers need is kept, not HLO's semantics: an instruction's attributes other
//! than those named here are kept as printed, for the details panel.
//!
//! **Invariant:** a text keeps at most its file's size in memory (one under 2 KB, at most
//! 512 bytes more: the tables every text has). Every string of the instructions is
//! interned once in one arena ([`Strings`], its table dropped once read); an instruction
//! is a fixed record of 60 bytes, handles ([`Str`]) and ranges into the text's flat lists
//! of operands (a literal just after its instruction's), calls and attributes; metadata
//! are interned whole, 24 bytes each; names are found through one hash table of
//! instruction places (4 bytes a slot) and one of computations.

use hashbrown::HashTable;

mod build;
mod frames;
mod header;

pub use build::{Head, HloBuilder};
pub use frames::{FileLocation, SourceFrame, StackFrame, StackFrames};
pub use header::{BufferDonor, IoAlias, Tiling};

use super::{Str, Strings, TableHash};

/// One HLO module text. Its strings are read with [`HloText::str`], an instruction's parts
/// with [`HloText::operands`], [`HloText::calls`], [`HloText::attrs`], [`HloText::op_name`]
/// and the others.
#[derive(Clone, Default)]
pub struct HloText {
    /// `HloModule NAME, …` as printed (`jit_train_step`).
    pub name: String,
    /// `num_partitions=N` in the header (absent: 1).
    pub num_partitions: Option<u32>,
    /// `replica_count=N` in the header (absent: 1).
    pub replica_count: Option<u32>,
    /// In printed order.
    pub computations: Vec<Computation>,
    /// Index into `computations` of the one printed `ENTRY`.
    pub entry: Option<u32>,
    pub frames: StackFrames,
    /// The header's `input_output_alias={…}`, in printed order.
    pub aliases: Vec<IoAlias>,
    /// The header's `buffer_donor={…}`, in printed order.
    pub buffer_donors: Vec<BufferDonor>,
    strings: Strings,
    operands: Vec<Str>,
    calls: Vec<Called>,
    attrs: Vec<(Str, Str)>,
    /// `metas[0]` is "no metadata".
    metas: Vec<MetaRecord>,
    /// Instruction names → the instruction's place in the text ([`HloText::place`]), the
    /// first of a name.
    by_name: HashTable<u32>,
    /// Each computation's first instruction's place in the text, in order.
    starts: Vec<u32>,
    /// Computation names → computation, the first of a name.
    computations_by_name: HashTable<u32>,
    /// Whether two instructions share a name (valid HLO never has: names are the module's).
    names_repeat: bool,
}

/// One computation (`%region_1.6 (…) -> … {` … `}`, or `ENTRY %main.26 …`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Computation {
    /// Without the `%` ([`HloText::str`]).
    pub name: Str,
    /// In printed order, which for a scheduled module is the schedule's order.
    pub instructions: Vec<HloInstruction>,
}

/// What an instruction calls, by the attribute that names the computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallRole {
    /// `condition=` of a while.
    Condition,
    /// `body=` of a while.
    Body,
    /// `to_apply=` (reduce, map, sort, all-reduce, call).
    ToApply,
    /// `branch_computations={…}` of a conditional, one per branch in order.
    Branch,
    /// `true_computation=`.
    TrueComputation,
    /// `false_computation=`.
    FalseComputation,
    /// `calls=` (fusion, custom call, async start).
    Calls,
}

/// One called computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Called {
    pub role: CallRole,
    /// Without the `%` ([`HloText::str`]).
    pub computation: Str,
}

/// An instruction's `metadata={…}`: what the answers read of it, interned per text (many
/// instructions share one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Meta {
    /// `op_name="…"`, unescaped.
    pub op_name: Option<Str>,
    /// `source_file="…"` and `source_line=N`.
    pub source_file: Option<Str>,
    pub source_line: Option<u32>,
    /// `stack_frame_id=N` (jax ≥ 0.9).
    pub stack_frame_id: Option<u32>,
}

/// A [`Meta`] as a text keeps it: 24 bytes rather than 40, each absent part a value no
/// text prints ([`MetaRecord::NONE`], `u32::MAX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MetaRecord {
    op_name: Str,
    source_file: Str,
    source_line: u32,
    stack_frame_id: u32,
}

impl MetaRecord {
    /// The handle of an absent string: one no arena makes (it reads as "").
    const NONE: Str = Str::from_raw([u32::MAX, 0]);

    fn of(m: Meta) -> MetaRecord {
        MetaRecord {
            op_name: m.op_name.unwrap_or(Self::NONE),
            source_file: m.source_file.unwrap_or(Self::NONE),
            source_line: m.source_line.unwrap_or(u32::MAX),
            stack_frame_id: m.stack_frame_id.unwrap_or(u32::MAX),
        }
    }

    fn meta(self) -> Meta {
        let s = |s: Str| (s != Self::NONE).then_some(s);
        let n = |n: u32| (n != u32::MAX).then_some(n);
        Meta {
            op_name: s(self.op_name),
            source_file: s(self.source_file),
            source_line: n(self.source_line),
            stack_frame_id: n(self.stack_frame_id),
        }
    }
}

/// A run of a text's flat list (operands, calls, attributes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Run {
    start: u32,
    len: u32,
}

impl Run {
    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.start as usize + self.len as usize
    }
}

/// One instruction line: `[ROOT] %name = SHAPE opcode(operands), attr=value, …`, as
/// handles into its [`HloText`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HloInstruction {
    /// Without the `%`.
    pub name: Str,
    pub opcode: Str,
    /// The shape as printed, layouts included.
    pub shape: Str,
    /// The operands' names without `%` (a TPU's `%wide.param.39#0` kept as printed, `#0`
    /// and all); none for a `constant` or `parameter` ([`HloText::operands`]), whose
    /// literal is kept just after the run ([`HloText::literal`]).
    operands: Run,
    calls: Run,
    /// Every `key=value` after the operands but metadata and the calls, in order, as
    /// printed (`custom_call_target` unquoted) ([`HloText::attrs`]).
    attrs: Run,
    /// Index into the text's metadata (0: none).
    meta: u32,
    /// Line number in the text (1-based).
    pub line: u32,
    pub is_root: bool,
    /// A `constant`'s literal text as printed (`8`, `{1, 2}`) or a `parameter`'s number
    /// follows the operands ([`HloText::literal`]).
    has_literal: bool,
}

/// The attributes the details show apart from the others (and the calls and metadata).
pub const NAMED_ATTRS: [&str; 3] = ["sharding", "custom_call_target", "direction"];

impl HloText {
    /// The text of a handle of this text.
    pub fn str(&self, s: Str) -> &str {
        self.strings.get(s)
    }

    /// The computation named `name` (without `%`).
    pub fn computation(&self, name: &str) -> Option<&Computation> {
        self.computation_index(name)
            .map(|c| &self.computations[c as usize])
    }

    /// The index in `computations` of the one named `name`.
    pub fn computation_index(&self, name: &str) -> Option<u32> {
        let h = TableHash::quick(name.as_bytes());
        let found = (self.computations_by_name).find(h.spread(), |&c| {
            self.str(self.computations[c as usize].name) == name
        });
        found.copied()
    }

    /// The instruction named `name` (without `%`): its computation's and its own index.
    pub fn position(&self, name: &str) -> Option<(u32, u32)> {
        let h = TableHash::quick(name.as_bytes());
        // The place of the instruction the table gives, found once (`place` searches).
        let mut at = None;
        self.by_name.find(h.spread(), |&g| {
            let (c, i) = self.place(g);
            let same = self.str(self.computations[c as usize].instructions[i as usize].name) == name;
            at = same.then_some((c, i));
            same
        })?;
        at
    }

    /// The computation and index of the instruction at place `g` of the text (its
    /// instructions counted in printed order).
    fn place(&self, g: u32) -> (u32, u32) {
        let c = self.starts.partition_point(|&s| s <= g).saturating_sub(1);
        (c as u32, g - self.starts.get(c).copied().unwrap_or(0))
    }

    /// The instruction named `name` (without `%`) and the computation it lives in.
    pub fn find(&self, name: &str) -> Option<(&Computation, &HloInstruction)> {
        let (c, i) = self.position(name)?;
        let comp = &self.computations[c as usize];
        Some((comp, &comp.instructions[i as usize]))
    }

    /// The instruction named `name` if it is in `comp`.
    pub fn find_in<'a>(&'a self, comp: &'a Computation, name: &str) -> Option<&'a HloInstruction> {
        let (c, i) = self.position(name)?;
        let found = self
            .computations
            .get(c as usize)
            .filter(|c| std::ptr::eq(*c, comp));
        match found {
            Some(_) => comp.instructions.get(i as usize),
            // Another computation has the first of this name: look in `comp` itself.
            None if self.names_repeat => {
                comp.instructions.iter().find(|x| self.str(x.name) == name)
            }
            None => None,
        }
    }

    /// Whether `c` (one of this text's computations) is its entry.
    pub fn is_entry(&self, c: &Computation) -> bool {
        let entry = self.entry.and_then(|e| self.computations.get(e as usize));
        entry.is_some_and(|e| std::ptr::eq(e, c))
    }

    /// How many devices run the program: partitions × replicas (each absent counts 1). Every
    /// figure of a dump is per device.
    pub fn devices(&self) -> u32 {
        self.num_partitions.unwrap_or(1).max(1) * self.replica_count.unwrap_or(1).max(1)
    }

    /// The entry computation's parameters with their numbers, in printed order.
    pub fn entry_parameters(&self) -> Vec<(u32, &HloInstruction)> {
        let entry = self.entry.and_then(|e| self.computations.get(e as usize));
        (entry.into_iter().flat_map(|c| &c.instructions))
            .filter(|i| self.opcode(i) == "parameter")
            .filter_map(|i| Some((self.literal(i)?.trim().parse().ok()?, i)))
            .collect()
    }

    /// The entry computation's `ROOT` instruction.
    pub fn entry_root(&self) -> Option<&HloInstruction> {
        let entry = self.computations.get(self.entry? as usize)?;
        entry.instructions.iter().rev().find(|i| i.is_root)
    }

    /// Every instruction, computation by computation.
    pub fn instructions(&self) -> impl Iterator<Item = &HloInstruction> {
        self.computations.iter().flat_map(|c| &c.instructions)
    }

    pub fn name(&self, i: &HloInstruction) -> &str {
        self.str(i.name)
    }

    pub fn opcode(&self, i: &HloInstruction) -> &str {
        self.str(i.opcode)
    }

    pub fn shape(&self, i: &HloInstruction) -> &str {
        self.str(i.shape)
    }

    /// The operands' names, without `%`.
    pub fn operands<'a>(
        &'a self,
        i: &HloInstruction,
    ) -> impl ExactSizeIterator<Item = &'a str> + DoubleEndedIterator + Clone + 'a {
        self.operands[i.operands.range()]
            .iter()
            .map(|&s| self.str(s))
    }

    /// Operand `k`'s name.
    pub fn operand(&self, i: &HloInstruction, k: usize) -> Option<&str> {
        self.operands[i.operands.range()]
            .get(k)
            .map(|&s| self.str(s))
    }

    /// What `i` calls, in printed order.
    pub fn calls(&self, i: &HloInstruction) -> &[Called] {
        &self.calls[i.calls.range()]
    }

    /// The first computation `i` calls in `role`, by name.
    pub fn called(&self, i: &HloInstruction, role: CallRole) -> Option<&str> {
        self.calls(i)
            .iter()
            .find(|c| c.role == role)
            .map(|c| self.str(c.computation))
    }

    /// The attributes as printed (key, value), but metadata and the calls.
    pub fn attrs<'a>(
        &'a self,
        i: &HloInstruction,
    ) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.attrs[i.attrs.range()]
            .iter()
            .map(|&(k, v)| (self.str(k), self.str(v)))
    }

    /// The value of attribute `key` as printed.
    pub fn attr(&self, i: &HloInstruction, key: &str) -> Option<&str> {
        self.attrs(i).find(|&(k, _)| k == key).map(|(_, v)| v)
    }

    /// A `constant`'s literal or a `parameter`'s number as printed (`None` for any other).
    pub fn literal(&self, i: &HloInstruction) -> Option<&str> {
        let at = i.operands.start as usize + i.operands.len as usize;
        let literal = self.operands.get(at).filter(|_| i.has_literal);
        literal.map(|&s| self.str(s))
    }

    /// The instruction's metadata (all `None` without one).
    pub fn meta(&self, i: &HloInstruction) -> Meta {
        (self.metas.get(i.meta as usize)).map_or_else(Meta::default, |m| m.meta())
    }

    /// From `metadata={op_name="…"}`.
    pub fn op_name(&self, i: &HloInstruction) -> Option<&str> {
        self.meta(i).op_name.map(|s| self.str(s))
    }

    /// From `metadata={source_file="…"}`.
    pub fn source_file(&self, i: &HloInstruction) -> Option<&str> {
        self.meta(i).source_file.map(|s| self.str(s))
    }

    /// `sharding={…}` as printed, braces included.
    pub fn sharding(&self, i: &HloInstruction) -> Option<&str> {
        self.attr(i, "sharding")
    }

    /// `custom_call_target="…"`, unquoted.
    pub fn custom_call_target(&self, i: &HloInstruction) -> Option<&str> {
        self.attr(i, "custom_call_target")
    }

    /// `direction=LT` of a compare.
    pub fn direction(&self, i: &HloInstruction) -> Option<&str> {
        self.attr(i, "direction")
    }

    /// `backend_config={"known_trip_count":{"n":"8"}, …}` of a while.
    pub fn known_trip_count(&self, i: &HloInstruction) -> Option<u64> {
        let config = self.attr(i, "backend_config")?;
        let key = "\"known_trip_count\":{\"n\":\"";
        let rest = &config[config.find(key)? + key.len()..];
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        rest[..digits].parse().ok()
    }
}

impl PartialEq for HloText {
    /// The same text: everything but the name tables, which are made from the rest.
    fn eq(&self, o: &HloText) -> bool {
        let strings = |h: &HloText| {
            let all = (h.computations.iter())
                .flat_map(|c| {
                    std::iter::once(c.name).chain(
                        c.instructions
                            .iter()
                            .flat_map(|i| [i.name, i.opcode, i.shape]),
                    )
                })
                .chain(h.operands.iter().copied())
                .chain(h.calls.iter().map(|c| c.computation))
                .chain(h.attrs.iter().flat_map(|&(k, v)| [k, v]))
                .chain(
                    h.metas
                        .iter()
                        .flat_map(|m| [m.meta().op_name, m.meta().source_file])
                        .flatten(),
                );
            all.map(|s| h.str(s).to_string()).collect::<Vec<_>>()
        };
        (
            &self.name,
            self.num_partitions,
            self.replica_count,
            self.entry,
            &self.frames,
            (&self.aliases, &self.buffer_donors),
        ) == (
            &o.name,
            o.num_partitions,
            o.replica_count,
            o.entry,
            &o.frames,
            (&o.aliases, &o.buffer_donors),
        ) && self.computations == o.computations
            && (&self.operands, &self.calls, &self.attrs, &self.metas)
                == (&o.operands, &o.calls, &o.attrs, &o.metas)
            && strings(self) == strings(o)
    }
}

impl std::fmt::Debug for HloText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HloText")
            .field("name", &self.name)
            .field("computations", &self.computations.len())
            .field("instructions", &self.instructions().count())
            .field("entry", &self.entry)
            .finish_non_exhaustive()
    }
}
