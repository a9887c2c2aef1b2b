//! Assembly: one module's parts as they are read (allocations and values, `Used values`
//! entries, live ranges), then, once every file is in, the join and the checks:
//! values ↔ `BufferLiveRange` on instruction name + shape index (no index = `{}`),
//! values ↔ `Used values` on value id, and the dump's own totals against what was read.

use super::buffer_assignment::ValueLine;
use super::lex::text;
use super::used_values::InstrInfo;
use super::Part;
use crate::model::{
    InstrId, Instruction, LiveRange, Module, OrphanRange, Schedule, Str, TableHash, Value, Warning,
};
use hashbrown::{DefaultHashBuilder, HashMap, HashTable};

pub(crate) struct Builder {
    /// The module name without a ` (2)` suffix, for routing files.
    pub base_name: String,
    pub module: Module,
    /// Instructions by name (compared through the arena: no second copy of the names).
    /// (With each name's [`TableHash`], so that growing the table hashes no name again.)
    instr_ids: HashTable<(Str, InstrId, TableHash)>,
    hasher: DefaultHashBuilder,
    /// `(value id, positions and uses text)` from `Used values`.
    pub used: Vec<(u32, Str)>,
    /// What `from instruction:` lines said, by the id of the value they came with.
    pub infos: Vec<(u32, Instruction)>,
    /// `(instruction, index as printed, range, line)` from `BufferLiveRange`.
    pub ranges: Vec<(InstrId, Str, LiveRange, u64)>,
    shape_sizes: HashMap<Str, Option<u64>>,
    /// Which file each part came from (`file NUL virtual file`).
    parts: Vec<(Part, String)>,
    /// The line of each value's ` value:` line, for warnings.
    value_lines: Vec<u32>,
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
            instr_ids: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
            used: Vec::new(),
            infos: Vec::new(),
            ranges: Vec::new(),
            shape_sizes: HashMap::new(),
            parts: Vec::new(),
            value_lines: Vec::new(),
        }
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

    /// The instruction called `name`, added on first sight.
    pub fn instr(&mut self, name: &[u8]) -> InstrId {
        let hash = TableHash::of(&self.hasher, name);
        let m = &mut self.module;
        let strings = &m.strings;
        if let Some(&(_, id, _)) = self.instr_ids.find(hash.spread(), |&(s, _, h)| {
            h == hash && strings.get(s).as_bytes() == name
        }) {
            return id;
        }
        // Names are unique in a module, so the table above is their interning.
        let s = m.strings.push(&text(name));
        let id = m.instructions.len() as InstrId;
        m.instructions.push(Instruction {
            name: s,
            ..Instruction::default()
        });
        self.instr_ids
            .insert_unique(hash.spread(), (s, id, hash), |&(_, _, h)| h.spread());
        id
    }

    /// A ` value:` line of the last allocation.
    pub fn add_value(&mut self, v: &ValueLine, line: u64) {
        self.value_lines
            .push(u32::try_from(line).unwrap_or(u32::MAX));
        let instruction = self.instr(v.value.name);
        let strings = &mut self.module.strings;
        let index = strings.intern_bytes(v.value.index);
        let shape = strings.intern_bytes(v.shape);
        let logical_size = *self
            .shape_sizes
            .entry(shape)
            .or_insert_with(|| crate::shape::logical_size(strings.get(shape)));
        let allocation = self.module.allocations.len().saturating_sub(1) as u32;
        self.module.values.push(Value {
            id: v.value.id,
            instruction,
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

    pub fn start_schedule(&mut self, max: u32) {
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
            opcode: s.intern_bytes(info.opcode),
            op_name: info
                .op_name
                .as_deref()
                .map_or(Str::EMPTY, |t| s.intern_bytes(t)),
            source_file: info
                .source_file
                .as_deref()
                .map_or(Str::EMPTY, |t| s.intern_bytes(t)),
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
    fn warn(&mut self, part: Part, line: u64, message: String) {
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

    /// Starts joining and checking, to be done in pieces by [`Join::step`]; a module with
    /// nothing but a memory-usage report is an error.
    pub fn join(self) -> Result<Join, String> {
        let m = &self.module;
        if m.allocations.is_empty() && self.used.is_empty() && m.schedule.is_none() {
            let what = if m.memory_report.is_some() {
                "only a memory-usage report"
            } else {
                "no buffer assignment"
            };
            return Err(format!(
                "{}: {what} was found; drop the module's `-buffer-assignment.txt` too.",
                m.files.join(", ")
            ));
        }
        let mut b = self;
        let braces = b.module.strings.intern("{}");
        let (instructions, values) = (b.module.instructions.len(), b.module.values.len());
        Ok(Join {
            b,
            phase: Phase::Chain,
            done: 0,
            braces,
            first: vec![NONE; instructions],
            next: vec![NONE; values],
            duplicates: Vec::new(),
            orphans: Vec::new(),
            problems: Vec::new(),
            by_id: None,
            unknown: Vec::new(),
        })
    }

    /// XLA's peak list holds every value live at its step: fewer entries means it was cut.
    fn check_peak_list(&mut self) {
        let Some(s) = &self.module.schedule else {
            return;
        };
        let Some(peak) = &s.peak else { return };
        let t = peak.time;
        let covers = |r: &LiveRange| r.contains(t);
        let live = self
            .module
            .values
            .iter()
            .filter_map(|v| v.live)
            .filter(covers)
            .count()
            + s.orphan_ranges.iter().filter(|o| covers(&o.live)).count();
        if live != peak.entries.len() {
            let n = peak.entries.len();
            self.warn(Part::LiveRange, 0, format!(
                "XLA's peak list at step {t} has {n} entries but {live} values are live there: the list is incomplete"
            ));
        }
    }

    fn check_totals(&mut self) {
        let sum = self.module.total_bytes();
        if let Some(total) = self.module.total_bytes_line {
            if !self.module.allocations.is_empty() && total != sum {
                self.warn(Part::Allocations, 0, format!(
                    "the allocations add up to {sum} bytes but the dump says `Total bytes used: {total}`: \
                     the allocations are incomplete"
                ));
            }
        }
        let report_total = self.module.memory_report.as_ref().and_then(|r| {
            r.total_bytes.or_else(|| {
                (!r.spaces.is_empty()).then(|| r.spaces.iter().map(|s| s.total_bytes).sum())
            })
        });
        if let Some(total) = report_total {
            if !self.module.allocations.is_empty() && total != sum {
                self.warn(Part::Report, 0, format!("the memory-usage report says {total} bytes but the allocations add up to {sum}"));
            }
        }
    }
}

/// No value: the end of a chain in [`Join`].
const NONE: u32 = u32::MAX;

/// One module's join and checks, done in pieces so that the browser can paint between
/// them: each [`Join::step`] handles a given number of values, live ranges or `Used values`
/// entries. The result is the same however the work is cut.
pub(crate) struct Join {
    b: Builder,
    phase: Phase,
    /// Items of the current phase handled so far.
    done: usize,
    /// `{}`, the index of a value printed without one.
    braces: Str,
    /// The values of each instruction, chained (no hashing): its first value, and each
    /// value's next one of the same instruction.
    first: Vec<u32>,
    next: Vec<u32>,
    /// Values listed a second time (same instruction and index).
    duplicates: Vec<u32>,
    orphans: Vec<OrphanRange>,
    /// `(line, message)` about `BufferLiveRange` lines.
    problems: Vec<(u64, String)>,
    by_id: Option<IdIndex>,
    /// `Used values` ids in no allocation.
    unknown: Vec<u32>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Values, last to first, into the chains; duplicates noted.
    Chain,
    /// `BufferLiveRange` lines to their values.
    Ranges,
    /// What `from instruction:` lines said, to the instructions.
    Infos,
    /// Positions and uses to the values.
    Used,
    Done,
}

impl Join {
    /// Handles up to `work` items; true once everything is joined and checked.
    pub fn step(&mut self, work: usize) -> bool {
        let mut left = work.max(1);
        while left > 0 && self.phase != Phase::Done {
            let items = self.items();
            let n = left.min(items - self.done);
            let range = self.done..self.done + n;
            match self.phase {
                Phase::Chain => self.chain(range),
                Phase::Ranges => self.ranges(range),
                Phase::Infos => self.infos(range),
                Phase::Used => self.used(range),
                Phase::Done => {}
            }
            self.done += n;
            // Ending a phase counts as an item, so that empty phases take work too.
            left -= n.max(1).min(left);
            if self.done == items {
                self.end_phase();
            }
        }
        self.phase == Phase::Done
    }

    /// The joined and checked module (once [`Join::step`] said true).
    pub fn into_module(self) -> Module {
        self.b.module
    }

    /// How many items the current phase has.
    fn items(&self) -> usize {
        match self.phase {
            Phase::Chain => self.b.module.values.len(),
            Phase::Ranges => self.b.ranges.len(),
            Phase::Infos => self.b.infos.len(),
            Phase::Used => self.b.used.len(),
            Phase::Done => 0,
        }
    }

    fn norm(&self, index: Str) -> Str {
        if index.is_empty() {
            self.braces
        } else {
            index
        }
    }

    /// Chains values, walking backwards from the last: each chain ends up in value order
    /// and a value's later duplicates are found.
    fn chain(&mut self, range: std::ops::Range<usize>) {
        let values = &self.b.module.values;
        for done in range {
            let i = values.len() - 1 - done;
            let v = &values[i];
            let mut k = self.first[v.instruction as usize];
            while k != NONE {
                if self.norm(values[k as usize].index) == self.norm(v.index) {
                    self.duplicates.push(k);
                    break;
                }
                k = self.next[k as usize];
            }
            self.next[i] = self.first[v.instruction as usize];
            self.first[v.instruction as usize] = i as u32;
        }
    }

    fn ranges(&mut self, range: std::ops::Range<usize>) {
        let max = self.b.module.schedule.as_ref().map(|s| s.max);
        for r in range {
            let (instruction, index, live, line) = self.b.ranges[r];
            if max.is_some_and(|max| live.end > max) {
                self.problems.push((
                    line,
                    format!(
                        "live range {}-{} ends after the schedule's end",
                        live.start, live.end
                    ),
                ));
            }
            let values = &self.b.module.values;
            let mut k = self
                .first
                .get(instruction as usize)
                .copied()
                .unwrap_or(NONE);
            while k != NONE && self.norm(values[k as usize].index) != self.norm(index) {
                k = self.next[k as usize];
            }
            if k == NONE {
                self.orphans.push(OrphanRange {
                    instruction,
                    index,
                    live,
                });
            } else if self.b.module.values[k as usize]
                .live
                .replace(live)
                .is_some()
            {
                let name = self.b.module.value_name(&self.b.module.values[k as usize]);
                self.problems
                    .push((line, format!("a second live range for {name}")));
            }
        }
    }

    fn infos(&mut self, range: std::ops::Range<usize>) {
        let m = &mut self.b.module;
        let by_id = self.by_id.get_or_insert_with(|| IdIndex::new(&m.values));
        for &(value_id, info) in &self.b.infos[range] {
            let Some(v) = by_id.get(value_id) else {
                continue;
            };
            let instruction = m.values[v as usize].instruction;
            if let Some(i) = m.instructions.get_mut(instruction as usize) {
                if i.opcode.is_empty() {
                    *i = Instruction {
                        name: i.name,
                        ..info
                    };
                }
            }
        }
    }

    fn used(&mut self, range: std::ops::Range<usize>) {
        let m = &mut self.b.module;
        let by_id = self.by_id.get_or_insert_with(|| IdIndex::new(&m.values));
        for &(id, text) in &self.b.used[range] {
            match by_id.get(id) {
                Some(v) => m.values[v as usize].uses_text = text,
                None => self.unknown.push(id),
            }
        }
    }

    /// The warnings of the phase that ended, and the next phase.
    fn end_phase(&mut self) {
        self.done = 0;
        self.phase = match self.phase {
            Phase::Chain => {
                for k in std::mem::take(&mut self.duplicates).into_iter().rev() {
                    let line = self.b.value_lines.get(k as usize).copied().unwrap_or(0);
                    let name = self.b.module.value_name(&self.b.module.values[k as usize]);
                    self.b.warn(
                        Part::Allocations,
                        line.into(),
                        format!("value {name} is listed twice"),
                    );
                }
                Phase::Ranges
            }
            Phase::Ranges => {
                for (line, message) in std::mem::take(&mut self.problems) {
                    self.b.warn(Part::LiveRange, line, message);
                }
                let orphans = std::mem::take(&mut self.orphans);
                if let Some(s) = self.b.module.schedule.as_mut() {
                    s.orphan_ranges = orphans;
                }
                self.b.ranges = Vec::new();
                self.first = Vec::new();
                self.next = Vec::new();
                // Without `Used values`, nothing more is joined.
                if self.b.used.is_empty() {
                    self.checks();
                    Phase::Done
                } else {
                    Phase::Infos
                }
            }
            Phase::Infos => {
                self.b.infos = Vec::new();
                Phase::Used
            }
            Phase::Used => {
                self.used_warnings();
                self.b.used = Vec::new();
                self.by_id = None;
                self.checks();
                Phase::Done
            }
            Phase::Done => Phase::Done,
        };
    }

    fn used_warnings(&mut self) {
        let b = &mut self.b;
        if b.module.allocations.is_empty() {
            return;
        }
        let unknown = std::mem::take(&mut self.unknown);
        if !unknown.is_empty() {
            let first: Vec<String> = unknown.iter().take(5).map(u32::to_string).collect();
            b.warn(
                Part::Values,
                0,
                format!(
                    "{} values in `Used values` are in no allocation (ids {}{})",
                    unknown.len(),
                    first.join(", "),
                    if unknown.len() > 5 { ", ..." } else { "" }
                ),
            );
        }
        let missing = b
            .module
            .values
            .iter()
            .filter(|v| v.uses_text.is_empty())
            .count();
        if missing > 0 {
            b.warn(Part::Values, 0, format!(
                "`Used values` lacks {missing} of the {} allocated values: the section is incomplete",
                b.module.values.len()
            ));
        }
    }

    /// The dump's own totals and peak list, and whether only the allocations were read.
    fn checks(&mut self) {
        let b = &mut self.b;
        b.check_totals();
        b.check_peak_list();
        let m = &b.module;
        if !m.allocations.is_empty()
            && m.schedule.is_none()
            && m.values.iter().all(|v| v.uses_text.is_empty())
        {
            b.warn(
                Part::Allocations,
                0,
                "only the allocations were found: the `Used values` and `HloLiveRange` sections (in new XLA, \
                 the -buffer-assignment-values.txt and -live-range.txt files) are missing or cut off, so no value \
                 has a live range"
                    .into(),
            );
        }
    }
}

/// Value position by value id: an array when ids are dense (they are: XLA numbers values
/// from 0, and fusion-internal gaps are small), a hash map otherwise.
enum IdIndex {
    Dense(Vec<u32>),
    Sparse(HashMap<u32, u32>),
}

impl IdIndex {
    fn new(values: &[crate::model::Value]) -> Self {
        let max = values.iter().map(|v| v.id as usize).max().unwrap_or(0);
        if max <= values.len().saturating_mul(8).saturating_add(1024) {
            let mut dense = vec![u32::MAX; max + 1];
            for (i, v) in values.iter().enumerate() {
                dense[v.id as usize] = i as u32;
            }
            IdIndex::Dense(dense)
        } else {
            IdIndex::Sparse(
                values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (v.id, i as u32))
                    .collect(),
            )
        }
    }

    fn get(&self, id: u32) -> Option<u32> {
        match self {
            IdIndex::Dense(d) => d.get(id as usize).copied().filter(|&i| i != u32::MAX),
            IdIndex::Sparse(m) => m.get(&id).copied(),
        }
    }
}
