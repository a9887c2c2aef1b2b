//! The HLO module text (`*after_optimizations.txt`) as XLA prints it beside a dump: the
//! module header, computations with their instructions in printed (= schedule) order, and
//! the four stack-frame tables of jax ≥ 0.9 (`FileNames`, `FunctionNames`, `FileLocations`,
//! `StackFrames`).
//!
//! Owns: the data only, what the text printed, plus pure look-ups of it. The reader is
//! `parse::hlo`; the flattening of the schedule and the loops are `analysis::loops`. Only
//! what the answers need is kept, not HLO's semantics: an instruction's attributes other
//! than those named here are kept as printed (`attrs`), for the details panel.

use hashbrown::HashMap;

/// One HLO module text.
#[derive(Clone, Debug, Default, PartialEq)]
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
}

/// One computation (`%region_1.6 (…) -> … {` … `}`, or `ENTRY %main.26 …`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Computation {
    /// Without the `%`.
    pub name: String,
    pub is_entry: bool,
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Called {
    pub role: CallRole,
    /// Without the `%`.
    pub computation: String,
}

/// One instruction line: `[ROOT] %name = SHAPE opcode(operands), attr=value, …`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HloInstruction {
    /// Without the `%`.
    pub name: String,
    pub opcode: String,
    /// The shape as printed, layouts included.
    pub shape: String,
    /// The operands' names without `%` (a TPU's `%wide.param.39#0` kept as printed, `#0`
    /// and all). For a `constant` or `parameter`, empty: its literal or number is in
    /// `literal`.
    pub operands: Vec<String>,
    /// A `constant`'s literal text as printed (`8`, `{1, 2}`), or a `parameter`'s number.
    pub literal: Option<String>,
    pub is_root: bool,
    pub calls: Vec<Called>,
    /// From `metadata={op_name="…"}`.
    pub op_name: Option<String>,
    /// From `metadata={source_file="…" source_line=N}`.
    pub source_file: Option<String>,
    pub source_line: Option<u32>,
    /// From `metadata={… stack_frame_id=N}` (jax ≥ 0.9).
    pub stack_frame_id: Option<u32>,
    /// `sharding={…}` as printed, braces included.
    pub sharding: Option<String>,
    /// `custom_call_target="…"`.
    pub custom_call_target: Option<String>,
    /// `backend_config={"known_trip_count":{"n":"8"}, …}` of a while.
    pub known_trip_count: Option<u64>,
    /// `direction=LT` of a compare.
    pub direction: Option<String>,
    /// Every other `key=value` attribute as printed, in order (metadata, backend_config,
    /// dimensions, …), for the details panel.
    pub attrs: Vec<(String, String)>,
    /// Line number in the text (1-based).
    pub line: u64,
}

/// A `FileLocations` row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileLocation {
    pub file_name_id: u32,
    pub function_name_id: u32,
    pub line: u32,
    pub end_line: u32,
    pub column: u32,
    pub end_column: u32,
}

/// A `StackFrames` row: `ID {file_location_id=N parent_frame_id=M}` as printed. XLA prints the
/// parent's id plus one: `parent_frame_id=1` is a root frame and `M` > 1 means frame `M - 1`
/// (XLA's own parser test prints `1 {… parent_frame_id=1}` for a root; on every real text
/// the parent `M - 1` then precedes its frame, and the walk from the innermost frame ends
/// on the program's `<module>` line). [`StackFrame::parent`] is the parent's id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StackFrame {
    pub file_location_id: u32,
    pub parent_frame_id: u32,
}

impl StackFrame {
    /// The parent frame's id (`None` for a root frame: printed `parent_frame_id` 0 or 1).
    pub fn parent(&self) -> Option<u32> {
        self.parent_frame_id.checked_sub(1).filter(|&p| p != 0)
    }
}

/// The four tables, by their printed ids (1-based, not always dense).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StackFrames {
    pub file_names: HashMap<u32, String>,
    pub function_names: HashMap<u32, String>,
    pub file_locations: HashMap<u32, FileLocation>,
    pub frames: HashMap<u32, StackFrame>,
}

/// One resolved frame: where a stack frame id points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFrame {
    pub file: String,
    pub line: u32,
    pub function: String,
}

impl StackFrames {
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The frame `id` itself (innermost), resolved; `None` for an unknown id or a frame whose
    /// location, file or function is missing.
    pub fn frame(&self, id: u32) -> Option<SourceFrame> {
        let f = self.frames.get(&id)?;
        let loc = self.file_locations.get(&f.file_location_id)?;
        Some(SourceFrame {
            file: self.file_names.get(&loc.file_name_id)?.clone(),
            line: loc.line,
            function: self.function_names.get(&loc.function_name_id).cloned().unwrap_or_default(),
        })
    }

    /// [`StackFrames::frame`] borrowed: file, line and function (empty when unknown).
    pub fn location(&self, id: u32) -> Option<(&str, u32, &str)> {
        let f = self.frames.get(&id)?;
        let loc = self.file_locations.get(&f.file_location_id)?;
        let file = self.file_names.get(&loc.file_name_id)?;
        let function = self.function_names.get(&loc.function_name_id).map_or("", String::as_str);
        Some((file.as_str(), loc.line, function))
    }

    /// The whole stack of `id`, innermost first, following [`StackFrame::parent`] to a
    /// root. Stops at an unknown id and at a frame already visited (a frame that is its own
    /// parent, or any cycle), so it always ends.
    pub fn stack(&self, id: u32) -> Vec<SourceFrame> {
        self.walk(id).0
    }

    /// [`StackFrames::stack`] and what made it stop early, if anything (an unknown id, a
    /// cycle, a location, file or function missing), as a sentence for a warning.
    pub fn walk(&self, id: u32) -> (Vec<SourceFrame>, Option<String>) {
        let mut out = Vec::new();
        let mut seen = Vec::new();
        let mut at = Some(id);
        while let Some(now) = at {
            if seen.contains(&now) || seen.len() >= 4096 {
                return (out, Some(format!("stack frame {now} is its own ancestor (a cycle in StackFrames)")));
            }
            seen.push(now);
            let Some(f) = self.frames.get(&now) else {
                return (out, Some(format!("stack frame {now} is not in the StackFrames table")));
            };
            match self.frame(now) {
                Some(sf) => out.push(sf),
                None => return (out, Some(format!("stack frame {now} names a file location, file or function the tables do not have"))),
            }
            at = f.parent();
        }
        (out, None)
    }
}

impl HloText {
    /// The computation named `name` (without `%`).
    pub fn computation(&self, name: &str) -> Option<&Computation> {
        self.computations.iter().find(|c| c.name == name)
    }

    /// The instruction named `name` (without `%`) and the computation it lives in; a
    /// linear search (for one selection at a time; a text holds some thousands).
    pub fn find(&self, name: &str) -> Option<(&Computation, &HloInstruction)> {
        self.computations
            .iter()
            .find_map(|c| c.instructions.iter().find(|i| i.name == name).map(|i| (c, i)))
    }

    /// How many devices run the program: partitions × replicas (each absent counts 1). Every
    /// figure of a dump is per device.
    pub fn devices(&self) -> u32 {
        self.num_partitions.unwrap_or(1).max(1) * self.replica_count.unwrap_or(1).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables() -> StackFrames {
        let mut t = StackFrames::default();
        t.file_names.insert(1, "a.py".into());
        t.function_names.insert(1, "f".into());
        t.function_names.insert(2, "g".into());
        t.file_locations.insert(1, FileLocation { file_name_id: 1, function_name_id: 1, line: 10, ..Default::default() });
        t.file_locations.insert(2, FileLocation { file_name_id: 1, function_name_id: 2, line: 20, ..Default::default() });
        t.frames.insert(1, StackFrame { file_location_id: 1, parent_frame_id: 1 });
        t.frames.insert(2, StackFrame { file_location_id: 2, parent_frame_id: 2 });
        // Printed parent 4 = frame 3 itself.
        t.frames.insert(3, StackFrame { file_location_id: 2, parent_frame_id: 4 });
        // Parent 9 = frame 8, not in the table.
        t.frames.insert(4, StackFrame { file_location_id: 2, parent_frame_id: 9 });
        t
    }

    #[test]
    fn stack_follows_parents_innermost_first() {
        let s = tables().stack(2);
        assert_eq!(s.iter().map(|f| f.line).collect::<Vec<_>>(), vec![20, 10]);
        assert_eq!(s[0].function, "g");
    }

    #[test]
    fn self_parented_and_unknown_frames_end() {
        let t = tables();
        assert_eq!(t.stack(3).len(), 1);
        assert!(t.walk(3).1.unwrap().contains("its own ancestor"));
        assert_eq!(t.walk(4).0.len(), 1);
        assert!(t.walk(4).1.unwrap().contains("frame 8 is not in"));
        assert_eq!(t.walk(2).1, None);
        assert!(t.stack(99).is_empty());
        assert!(t.frame(99).is_none());
    }
}
