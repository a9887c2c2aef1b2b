//! Assembly: one module's parts as the section readers read them (allocations and values,
//! `Used values` entries, live ranges, instruction facts), kept in a [`Builder`] until
//! every file is in and [`join`](super::join) joins and checks them.

use super::instr_names::InstrNames;
use super::records::{InstrInfo, ValueLine};
use crate::parse::Part;
use crate::model::{
    InstrId, Instruction, LastInterned, LiveRange, Module, Schedule, Str, Value, Warning,
};
use hashbrown::HashMap;

pub(crate) struct Builder {
    /// The module name without a ` (2)` suffix, for routing files.
    pub base_name: String,
    pub module: Module,
    /// Instructions by name.
    instr_ids: InstrNames,
    /// `(value id, positions and uses text)` from `Used values`.
    pub used: Vec<(u32, Str)>,
    /// What `from instruction:` lines said, by the id of the value they came with.
    pub infos: Vec<(u32, Instruction)>,
    /// `(instruction, index as printed, range, line)` from `BufferLiveRange`.
    pub ranges: Vec<(InstrId, Str, LiveRange, u64)>,
    shape_sizes: HashMap<Str, Option<u64>>,
    /// Runs of equal strings in consecutive lines: a value's index and shape (with the
    /// shape's logical size), an instruction's opcode, op_name and source file.
    last_index: LastInterned,
    last_shape: (LastInterned, Option<u64>),
    last_opcode: LastInterned,
    last_op_name: LastInterned,
    last_source_file: LastInterned,
    /// Which file each part came from (`file NUL virtual file`).
    parts: Vec<(Part, String)>,
    /// The line of each value's ` value:` line, for warnings.
    pub value_lines: Vec<u32>,
    /// The body of its `Used values` was skipped, to be read later ([`super::deferred`]).
    pub deferred: bool,
    /// Names whose instruction is looked up later, a batch at a time ([`Builder::instr_later`]).
    later: Later,
}

/// Names read but not looked up yet, in the order read: their bytes end to end, where each
/// ends, and where its instruction's id goes; and their ids once looked up (kept, so that
/// a batch allocates nothing).
#[derive(Default)]
struct Later {
    names: Vec<u8>,
    ends: Vec<u32>,
    targets: Vec<Target>,
    ids: Vec<InstrId>,
}

/// Names looked up in one batch: few enough that their bytes stay in the first cache.
const LATER: usize = 512;

/// Whether names are looked up in batches: only where the processor takes a hint to fetch
/// memory ahead ([`InstrNames::ids`]); in WebAssembly, which has none, the batches made the
/// page's first read of the 1 GB generated dump 2–4 % slower (2026-12-07), so each name
/// is looked up as it is read.
const BATCHED: bool = cfg!(target_arch = "x86_64");

/// Puts instruction `id` where `target` says, in `m` or in the live ranges read.
fn put(m: &mut Module, ranges: &mut [(InstrId, Str, LiveRange, u64)], target: Target, id: InstrId) {
    let slot = match target {
        Target::Value(i) => m.values.get_mut(i as usize).map(|v| &mut v.instruction),
        Target::Range(i) => ranges.get_mut(i as usize).map(|r| &mut r.0),
        Target::Step(i) => m.schedule.as_mut().and_then(|s| s.sequence.get_mut(i as usize)),
        Target::Peak(i) => (m.schedule.as_mut())
            .and_then(|s| s.peak.as_mut()?.entries.get_mut(i as usize))
            .map(|e| &mut e.instruction),
    };
    if let Some(slot) = slot {
        *slot = id;
    }
}

/// Where an instruction's id, looked up later, goes: a value's, a step of the schedule's,
/// a `BufferLiveRange` line's, an entry of XLA's peak list's (each by position).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Target {
    Value(u32),
    Step(u32),
    Range(u32),
    Peak(u32),
}

impl Builder {
    pub fn new(name: &str, copies: usize) -> Self {
        let display = if copies == 0 {
            name.to_string()
        } else {
            format!("{name} ({})", copies + 1)
        };
        Builder {
            base_name: name.to_string(),
            module: Module {
                name: display,
                ..Module::default()
            },
            instr_ids: InstrNames::default(),
            used: Vec::new(),
            infos: Vec::new(),
            ranges: Vec::new(),
            shape_sizes: HashMap::new(),
            last_index: LastInterned::default(),
            last_shape: (LastInterned::default(), None),
            last_opcode: LastInterned::default(),
            last_op_name: LastInterned::default(),
            last_source_file: LastInterned::default(),
            parts: Vec::new(),
            value_lines: Vec::new(),
            deferred: false,
            later: Later::default(),
        }
    }

    /// A module read without its `Used values` body, to take that body now: `parts` are
    /// the files its parts came from ([`Builder::part_files`]).
    pub fn resume(module: Module, parts: Vec<(Part, String)>) -> Self {
        Builder {
            module,
            parts,
            ..Builder::new("", 0)
        }
    }

    /// Which file each part came from.
    pub fn part_files(&self) -> Vec<(Part, String)> {
        self.parts.clone()
    }

    pub fn can_claim(&self, part: Part, file: &str) -> bool {
        self.parts.iter().all(|(p, f)| *p != part || f == file)
    }

    /// Takes `part` from `file`, unless another file gave it already.
    pub fn claim(&mut self, part: Part, file: &str) -> bool {
        if !self.can_claim(part, file) {
            return false;
        }
        if !self.parts.iter().any(|(p, _)| *p == part) {
            self.parts.push((part, file.to_string()));
        }
        true
    }

    pub fn add_file(&mut self, name: &str) {
        if !self.module.files.iter().any(|f| f == name) {
            self.module.files.push(name.to_string());
        }
    }

    /// The instruction called `name`, added on first sight (after the names waiting to be
    /// looked up, so that ids are given in the order names are read).
    pub fn instr(&mut self, name: &[u8]) -> InstrId {
        self.look_up_later();
        self.instr_ids.id(&mut self.module, name)
    }

    /// The instruction called `name` for `target`, looked up with the next batch of names
    /// ([`InstrNames::ids`]: their memory is asked for ahead, which one lookup at a time
    /// cannot do); `target` holds a placeholder until then. The ids are those
    /// [`Builder::instr`] gives, in the same order; a section reader that defers names
    /// looks them up at its end ([`Builder::look_up_later`]), and so does the join.
    pub fn instr_later(&mut self, name: &[u8], target: Target) {
        if !BATCHED {
            let id = self.instr(name);
            put(&mut self.module, &mut self.ranges, target, id);
            return;
        }
        let l = &mut self.later;
        l.names.extend_from_slice(name);
        l.ends.push(u32::try_from(l.names.len()).unwrap_or(u32::MAX));
        l.targets.push(target);
        if l.targets.len() >= LATER || l.names.len() >= LATER * 256 {
            self.look_up_later();
        }
    }

    /// Looks up the names waiting ([`Builder::instr_later`]) and puts their ids in place.
    pub fn look_up_later(&mut self) {
        if self.later.targets.is_empty() {
            return;
        }
        let Later { names, ends, targets, ids } = &mut self.later;
        let (m, ranges) = (&mut self.module, &mut self.ranges);
        self.instr_ids.ids(m, names, ends, ids);
        for (&target, &id) in targets.iter().zip(ids.iter()) {
            put(m, ranges, target, id);
        }
        names.clear();
        ends.clear();
        targets.clear();
        ids.clear();
    }

    /// A shape index as printed (`{}`, `{0,1}`), interned (most are `{}`, in runs).
    pub fn index(&mut self, index: &[u8]) -> Str {
        self.last_index.intern(&mut self.module.strings, index)
    }

    /// A ` value:` line of the last allocation.
    pub fn add_value(&mut self, v: &ValueLine, line: u64) {
        self.value_lines
            .push(u32::try_from(line).unwrap_or(u32::MAX));
        let index = self.index(v.value.index);
        let strings = &mut self.module.strings;
        let (last_shape, logical_size) = &mut self.last_shape;
        let (shape, new_run) = last_shape.intern_run(strings, v.shape);
        if new_run {
            *logical_size = *self
                .shape_sizes
                .entry(shape)
                .or_insert_with(|| crate::shape::logical_size(strings.get(shape)));
        }
        let logical_size = *logical_size;
        let allocation = self.module.allocations.len().saturating_sub(1) as u32;
        self.module.values.push(Value {
            id: v.value.id,
            instruction: InstrId::MAX,
            index,
            phi: v.value.phi,
            color: v.value.color,
            allocation,
            offset: v.offset,
            size: v.size,
            shape,
            logical_size,
            live: None,
            uses_text: Str::EMPTY,
        });
        let at = self.module.values.len() - 1;
        self.instr_later(v.value.name, Target::Value(at as u32));
        if let Some(a) = self.module.allocations.last_mut() {
            a.values.end = self.module.values.len() as u32;
        }
    }

    /// `Total bytes used`; a second, different one is a warning.
    pub fn set_total(&mut self, total: u64) -> Option<String> {
        match self.module.total_bytes_line.replace(total) {
            Some(old) if old != total => Some(format!(
                "`Total bytes used: {total}` differs from the {old} read before"
            )),
            _ => None,
        }
    }

    /// The schedule being read (made on first need).
    pub fn schedule(&mut self) -> &mut Schedule {
        self.module.schedule.get_or_insert_with(Schedule::default)
    }

    /// A new schedule, of `HloLiveRange (max N)` (the names waiting are looked up first:
    /// some are the old schedule's steps).
    pub fn start_schedule(&mut self, max: u32) {
        self.look_up_later();
        self.module.schedule = Some(Schedule {
            max,
            ..Schedule::default()
        });
    }

    /// Keeps what the `from instruction:` line of value `value_id` said; it is given to
    /// the value's instruction when everything is read.
    pub fn add_instruction_info(&mut self, value_id: u32, info: &InstrInfo) {
        let s = &mut self.module.strings;
        let instruction = Instruction {
            name: Str::EMPTY,
            opcode: self.last_opcode.intern(s, info.opcode),
            op_name: info
                .op_name
                .as_deref()
                .map_or(Str::EMPTY, |t| self.last_op_name.intern(s, t)),
            source_file: info
                .source_file
                .as_deref()
                .map_or(Str::EMPTY, |t| self.last_source_file.intern(s, t)),
            source_line: info.source_line.unwrap_or(0),
            stack_frame_id: info.stack_frame_id,
        };
        self.infos.push((value_id, instruction));
    }

    /// Each tree node's total is its own bytes plus its children's totals.
    pub fn check_stack_tree(&self) -> Option<String> {
        let nodes = &self.module.stack_trace;
        let mut children_total = vec![0u64; nodes.len()];
        let mut path: Vec<usize> = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            path.truncate(n.depth as usize);
            if let Some(&parent) = path.last() {
                children_total[parent] = children_total[parent].saturating_add(n.total);
            }
            path.push(i);
        }
        let bad = nodes
            .iter()
            .zip(&children_total)
            .filter(|(n, &c)| n.total != n.current.saturating_add(c))
            .count();
        let root_total: u64 = nodes.iter().filter(|n| n.depth == 0).map(|n| n.total).sum();
        if bad > 0
            || self
                .module
                .stack_trace_total
                .is_some_and(|t| t != root_total)
        {
            Some("the stack trace breakdown is incomplete: its totals do not add up".into())
        } else {
            None
        }
    }

    /// A warning about `part`, in the file that part came from.
    pub fn warn(&mut self, part: Part, line: u64, message: String) {
        let file = self
            .parts
            .iter()
            .find(|(p, _)| *p == part)
            .and_then(|(_, key)| key.split('\0').next())
            .map(str::to_string)
            .or_else(|| self.module.files.first().cloned())
            .unwrap_or_default();
        self.module.warnings.push(Warning {
            file,
            line,
            message,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name gets one id, the same each time it is looked up, through the table's
    /// growths.
    #[test]
    fn instruction_ids() {
        let mut b = Builder::new("m", 0);
        let names: Vec<String> = (0..20_000).map(|i| format!("fusion.{i}")).collect();
        for (i, n) in names.iter().enumerate() {
            assert_eq!(b.instr(n.as_bytes()), i as InstrId);
        }
        for (i, n) in names.iter().enumerate().rev() {
            assert_eq!(b.instr(n.as_bytes()), i as InstrId);
            assert_eq!(b.module.str(b.module.instructions[i].name), n);
        }
        assert_eq!(b.instr(b"fusion.20000"), 20_000);
    }

    /// Names looked up later get the ids one lookup after the other gives, in the order
    /// they were read, whatever falls between: a lookup at once (which takes the waiting
    /// ones first), a batch filling up, the join.
    #[test]
    fn names_looked_up_later_keep_the_order_read() {
        let names: Vec<String> = (0..3 * LATER + 7)
            .map(|i| match i % 5 {
                0 => format!("add.{}", i / 3),
                1 => format!("Arg_{}", i % 11),
                2 => format!("multiply.{}", (i * 7919) % 5000),
                _ => format!("op{}.{}", i % 6, i / 40),
            })
            .collect();
        let mut at_once = Builder::new("m", 0);
        let want: Vec<InstrId> = names.iter().map(|n| at_once.instr(n.as_bytes())).collect();
        let mut b = Builder::new("m", 0);
        let mut direct = Vec::new();
        let range = LiveRange { start: 0, end: 0 };
        for (i, n) in names.iter().enumerate() {
            if i % 97 == 3 {
                direct.push((i, b.instr(n.as_bytes())));
                b.ranges.push((InstrId::MAX, Str::EMPTY, range, 0));
                continue;
            }
            b.ranges.push((InstrId::MAX, Str::EMPTY, range, 0));
            b.instr_later(n.as_bytes(), Target::Range(i as u32));
        }
        b.look_up_later();
        for (i, id) in direct {
            b.ranges[i].0 = id;
        }
        let got: Vec<InstrId> = b.ranges.iter().map(|r| r.0).collect();
        assert_eq!(got, want);
        let name = |m: &Module, i: usize| m.str(m.instructions[i].name).to_string();
        assert_eq!(b.module.instructions.len(), at_once.module.instructions.len());
        for i in 0..b.module.instructions.len() {
            assert_eq!(name(&b.module, i), name(&at_once.module, i));
        }
    }
}
