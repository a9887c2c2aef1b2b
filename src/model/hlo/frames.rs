//! The four stack-frame tables of an HLO text (jax ≥ 0.9): `FileNames`, `FunctionNames`,
//! `FileLocations` and `StackFrames`, and the walk from a frame to its root.
//!
//! Owns: the tables as printed and their look-ups; a walk always ends (an unknown id or a
//! cycle stops it and says so).

use hashbrown::HashMap;

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
            function: self
                .function_names
                .get(&loc.function_name_id)
                .cloned()
                .unwrap_or_default(),
        })
    }

    /// [`StackFrames::frame`] borrowed: file, line and function (empty when unknown).
    pub fn location(&self, id: u32) -> Option<(&str, u32, &str)> {
        let f = self.frames.get(&id)?;
        let loc = self.file_locations.get(&f.file_location_id)?;
        let file = self.file_names.get(&loc.file_name_id)?;
        let function = self
            .function_names
            .get(&loc.function_name_id)
            .map_or("", String::as_str);
        Some((file.as_str(), loc.line, function))
    }

    /// The whole stack of `id`, innermost first, following [`StackFrame::parent`] to a
    /// root. Stops at an unknown id and at a frame already visited (a frame that is its own
    /// parent, or any cycle), so it always ends.
    pub fn stack(&self, id: u32) -> Vec<SourceFrame> {
        self.walk(id).0
    }

    /// What [`StackFrames::walk`] says made the stack of `id` stop early, if anything,
    /// without making the stack; `good` holds frames known to walk to a root without a
    /// problem (a walk stops there) and gets this walk's frames when it has none.
    pub fn problem(&self, id: u32, good: &mut hashbrown::HashSet<u32>) -> Option<String> {
        let mut seen = Vec::new();
        let mut at = Some(id);
        while let Some(now) = at.filter(|now| !good.contains(now)) {
            if seen.contains(&now) || seen.len() >= 4096 {
                return Some(format!(
                    "stack frame {now} is its own ancestor (a cycle in StackFrames)"
                ));
            }
            seen.push(now);
            let Some(f) = self.frames.get(&now) else {
                return Some(format!("stack frame {now} is not in the StackFrames table"));
            };
            if self.location(now).is_none() {
                return Some(format!("stack frame {now} names a file location, file or function the tables do not have"));
            }
            at = f.parent();
        }
        good.extend(seen);
        None
    }

    /// [`StackFrames::stack`] and what made it stop early, if anything (an unknown id, a
    /// cycle, a location, file or function missing), as a sentence for a warning.
    pub fn walk(&self, id: u32) -> (Vec<SourceFrame>, Option<String>) {
        let mut out = Vec::new();
        let mut seen = Vec::new();
        let mut at = Some(id);
        while let Some(now) = at {
            if seen.contains(&now) || seen.len() >= 4096 {
                return (
                    out,
                    Some(format!(
                        "stack frame {now} is its own ancestor (a cycle in StackFrames)"
                    )),
                );
            }
            seen.push(now);
            let Some(f) = self.frames.get(&now) else {
                return (
                    out,
                    Some(format!("stack frame {now} is not in the StackFrames table")),
                );
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tables() -> StackFrames {
        let mut t = StackFrames::default();
        t.file_names.insert(1, "a.py".into());
        t.function_names.insert(1, "f".into());
        t.function_names.insert(2, "g".into());
        t.file_locations.insert(
            1,
            FileLocation {
                file_name_id: 1,
                function_name_id: 1,
                line: 10,
                ..Default::default()
            },
        );
        t.file_locations.insert(
            2,
            FileLocation {
                file_name_id: 1,
                function_name_id: 2,
                line: 20,
                ..Default::default()
            },
        );
        t.frames.insert(
            1,
            StackFrame {
                file_location_id: 1,
                parent_frame_id: 1,
            },
        );
        t.frames.insert(
            2,
            StackFrame {
                file_location_id: 2,
                parent_frame_id: 2,
            },
        );
        // Printed parent 4 = frame 3 itself.
        t.frames.insert(
            3,
            StackFrame {
                file_location_id: 2,
                parent_frame_id: 4,
            },
        );
        // Parent 9 = frame 8, not in the table.
        t.frames.insert(
            4,
            StackFrame {
                file_location_id: 2,
                parent_frame_id: 9,
            },
        );
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
