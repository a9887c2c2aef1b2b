//! The join and the checks, once every file of a module is in, done in pieces
//! ([`Join::step`]): values ↔ `BufferLiveRange` on instruction name + shape index (no
//! index = `{}`), values ↔ `Used values` on value id, the `from instruction:` facts to the
//! instructions, and the dump's own totals and peak list against what was read.

use super::assemble::Builder;
use crate::parse::Part;
use crate::model::{Instruction, LiveRange, Module, OrphanRange, Str};
use hashbrown::HashMap;

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
    /// The fact each instruction takes (phase `Infos`).
    chosen: Option<Chosen>,
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

/// Whether `m` is no module one pass gives: no allocations, no live ranges and (`no_uses`)
/// no `Used values` entries. [`Join::new`] refuses it; a deferred read, which could not tell
/// before its bodies were read, refuses it then ([`super::UsedPart::refused`]).
pub(in crate::parse) fn nothing_to_join(m: &Module, no_uses: bool) -> bool {
    m.allocations.is_empty() && no_uses && m.schedule.is_none()
}

impl Join {
    /// Starts joining and checking `builder`'s module, to be done in pieces by
    /// [`Join::step`]; a module with nothing but a memory-usage report is an error.
    pub fn new(mut builder: Builder) -> Result<Join, String> {
        builder.look_up_later();
        let m = &builder.module;
        if nothing_to_join(m, builder.used.is_empty() && !builder.deferred) {
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
        let mut b = builder;
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
            chosen: None,
            unknown: Vec::new(),
        })
    }

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

    /// Joins a module read without its `Used values` body ([`Builder::deferred`], its
    /// live ranges joined and totals checked by an earlier [`Join`]) to that body, read
    /// into `builder` since ([`Builder::resume`]), with the facts `chosen` already (all
    /// of `builder`'s looked at: [`Chosen::step`]).
    pub fn resume(builder: Builder, chosen: Chosen) -> Join {
        let done = chosen.done;
        let mut join = Join {
            b: builder,
            phase: Phase::Infos,
            done,
            braces: Str::EMPTY,
            first: Vec::new(),
            next: Vec::new(),
            duplicates: Vec::new(),
            orphans: Vec::new(),
            problems: Vec::new(),
            by_id: None,
            chosen: Some(chosen),
            unknown: Vec::new(),
        };
        if join.b.used.is_empty() {
            join.check_only_allocations();
            join.phase = Phase::Done;
        }
        join
    }

    /// The joined and checked module (once [`Join::step`] said true).
    pub fn into_module(self) -> Module {
        let mut module = self.b.module;
        module.shrink_to_fit();
        module
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
        let m = &self.b.module;
        let chosen = self.chosen.get_or_insert_with(|| Chosen::new(m));
        chosen.step(m, &self.b.infos[..range.end], usize::MAX);
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
                self.check_totals();
                self.check_peak_list();
                // Without `Used values`, nothing more is joined (a skipped body is joined
                // by [`Join::resume`]).
                if self.b.deferred {
                    Phase::Done
                } else if self.b.used.is_empty() {
                    self.check_only_allocations();
                    Phase::Done
                } else {
                    Phase::Infos
                }
            }
            Phase::Infos => {
                let infos = std::mem::take(&mut self.b.infos);
                if let Some(chosen) = self.chosen.take() {
                    self.by_id = Some(chosen.apply(&mut self.b.module, &infos));
                }
                Phase::Used
            }
            Phase::Used => {
                self.used_warnings();
                self.b.used = Vec::new();
                self.by_id = None;
                self.check_only_allocations();
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

    /// Whether only the allocations were read.
    fn check_only_allocations(&mut self) {
        let b = &mut self.b;
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

    /// XLA's peak list holds every value live at its step: fewer entries means it was cut.
    fn check_peak_list(&mut self) {
        let b = &mut self.b;
        let Some(s) = &b.module.schedule else {
            return;
        };
        let Some(peak) = &s.peak else { return };
        let t = peak.time;
        let covers = |r: &LiveRange| r.contains(t);
        let live = b
            .module
            .values
            .iter()
            .filter_map(|v| v.live)
            .filter(covers)
            .count()
            + s.orphan_ranges.iter().filter(|o| covers(&o.live)).count();
        if live != peak.entries.len() {
            let n = peak.entries.len();
            b.warn(Part::LiveRange, 0, format!(
                "XLA's peak list at step {t} has {n} entries but {live} values are live there: the list is incomplete"
            ));
        }
    }

    fn check_totals(&mut self) {
        let b = &mut self.b;
        let sum = b.module.total_bytes();
        if let Some(total) = b.module.total_bytes_line {
            if !b.module.allocations.is_empty() && total != sum {
                b.warn(Part::Allocations, 0, format!(
                    "the allocations add up to {sum} bytes but the dump says `Total bytes used: {total}`: \
                     the allocations are incomplete"
                ));
            }
        }
        let report_total = b.module.memory_report.as_ref().and_then(|r| {
            r.total_bytes.or_else(|| {
                (!r.spaces.is_empty()).then(|| r.spaces.iter().map(|s| s.total_bytes).sum())
            })
        });
        if let Some(total) = report_total {
            if !b.module.allocations.is_empty() && total != sum {
                b.warn(Part::Report, 0, format!("the memory-usage report says {total} bytes but the allocations add up to {sum}"));
            }
        }
    }
}

/// Which `from instruction:` fact each instruction takes, as one pass gives them in turn to
/// an instruction whose opcode is still empty: the first fact with an opcode, else the last.
/// Chosen in pieces ([`Chosen::step`]) reading the module only, so that a module on screen
/// can have them chosen before it is completed; given in one pass over the instructions.
#[derive(Default)]
pub(crate) struct Chosen {
    by_id: IdIndex,
    /// By instruction: the fact it takes, or [`NONE`].
    chosen: Vec<u32>,
    /// The module's values when chosen.
    values: usize,
    /// Facts looked at so far.
    done: usize,
}

impl Chosen {
    /// Nothing chosen yet for the instructions of `m`.
    pub fn new(m: &Module) -> Chosen {
        Chosen {
            by_id: IdIndex::new(&m.values),
            chosen: vec![NONE; m.instructions.len()],
            values: m.values.len(),
            done: 0,
        }
    }

    /// Whether these choices are for module `m` (the same instructions and values).
    pub fn fits(&self, m: &Module) -> bool {
        self.chosen.len() == m.instructions.len() && self.values == m.values.len()
    }

    /// Looks at up to `work` more of `infos` (the facts by value id, in the order read);
    /// true once all are looked at.
    pub fn step(&mut self, m: &Module, infos: &[(u32, Instruction)], work: usize) -> bool {
        let to = infos.len().min(self.done.saturating_add(work.max(1)));
        for k in self.done..to {
            let Some(v) = self.by_id.get(infos[k].0) else {
                continue;
            };
            let instruction = m.values[v as usize].instruction as usize;
            if let Some(c) = self.chosen.get_mut(instruction) {
                let taken = infos.get(*c as usize).map(|(_, i)| i.opcode);
                if taken.is_none_or(|opcode| opcode.is_empty()) {
                    *c = k as u32;
                }
            }
        }
        self.done = to;
        to == infos.len()
    }

    /// Gives each instruction of `m` whose opcode is empty the fact chosen for it; the
    /// index by value id, for the join's next phase.
    fn apply(self, m: &mut Module, infos: &[(u32, Instruction)]) -> IdIndex {
        for (i, &c) in m.instructions.iter_mut().zip(&self.chosen) {
            if let Some((_, info)) = infos.get(c as usize) {
                if i.opcode.is_empty() {
                    *i = Instruction {
                        name: i.name,
                        ..*info
                    };
                }
            }
        }
        self.by_id
    }
}

/// Value position by value id: an array when ids are dense (they are: XLA numbers values
/// from 0, and fusion-internal gaps are small), a hash map otherwise.
enum IdIndex {
    Dense(Vec<u32>),
    Sparse(HashMap<u32, u32>),
}

/// No values.
impl Default for IdIndex {
    fn default() -> Self {
        IdIndex::Dense(Vec::new())
    }
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
