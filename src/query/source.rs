//! Where a value's instruction comes from: its source file and line as the dump printed them
//! (`source_file`/`source_line`), or, since jax 0.9, its `stack_frame_id` resolved through
//! the stack-frame tables of the HLO text beside the dump ([`Module::hlo`]); and the whole
//! call stack, library frames folded under the first user frame. An instruction with
//! neither gets the nearest source through the HLO text ([`super::nearest`]), marked
//! `inferred` wherever it is shown (`file:line (inferred)`).
//!
//! Owns: the one reading of a value's source location, for the answers' groupings, the
//! details panel, search and sort, the exports and the comparisons.

use super::nearest::{nearest_source, Nearest};
use crate::model::{Module, Value};

/// What an inferred location is suffixed with wherever it is shown.
pub const INFERRED: &str = " (inferred)";

/// What a frame id without the HLO text is shown as (instead of `stack frame 44`).
pub const NEEDS_HLO: &str =
    "source lines need the HLO text beside the dump: `*after_optimizations.txt`";

/// Where an instruction comes from. Ordered files first (by path, then line), then stack
/// frames the HLO text could not resolve (by id).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SourceLocation<'m> {
    /// `source_file` and `source_line` (0 when the dump gave no line), or a stack frame
    /// resolved; `function` is empty when unknown (the older metadata names none).
    /// `inferred`: the instruction names no source and this is the nearest one through the
    /// HLO text ([`super::nearest`]).
    File {
        file: &'m str,
        line: u32,
        function: &'m str,
        inferred: bool,
    },
    /// `stack_frame_id` with no HLO text to resolve it (or a frame its tables lack).
    StackFrame(u32),
}

impl std::fmt::Display for SourceLocation<'_> {
    /// `file:line` (`file` without a line), ` (inferred)` after an inferred one, or the
    /// sentence saying the HLO text is needed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            SourceLocation::File { file, line, inferred, .. } => {
                f.write_str(file)?;
                if line > 0 {
                    write!(f, ":{line}")?;
                }
                f.write_str(if inferred { INFERRED } else { "" })
            }
            SourceLocation::StackFrame(id) => write!(f, "stack frame {id}: {NEEDS_HLO}"),
        }
    }
}

/// Where the value's defining instruction comes from: its source file (and line), else its
/// stack frame resolved through the module's HLO text, else the bare frame id, else the
/// nearest source through the HLO text ([`nearest_of`], inferred); `None` when none is
/// found.
pub fn source_location<'m>(module: &'m Module, v: &Value) -> Option<SourceLocation<'m>> {
    let i = module.instructions.get(v.instruction as usize)?;
    let file = module.str(i.source_file);
    if !file.is_empty() {
        return Some(SourceLocation::File {
            file,
            line: i.source_line,
            function: "",
            inferred: false,
        });
    }
    // A loop's output element: what its body writes there, not the loop's call (a scan).
    if module.str(i.opcode) == "while" && !module.str(v.index).is_empty() {
        if let Some(n) = nearest_of(module, v) {
            return Some(SourceLocation::File {
                file: n.file,
                line: n.line,
                function: n.function,
                inferred: true,
            });
        }
    }
    let Some(id) = i.stack_frame_id else {
        let n = nearest_of(module, v)?;
        return Some(SourceLocation::File {
            file: n.file,
            line: n.line,
            function: n.function,
            inferred: n.from != module.str(i.name),
        });
    };
    let resolved = module.hlo.as_deref().and_then(|h| h.frames.location(id));
    Some(match resolved {
        Some((file, line, function)) => SourceLocation::File {
            file,
            line,
            function,
            inferred: false,
        },
        None => SourceLocation::StackFrame(id),
    })
}

/// The nearest source of the value's instruction through the HLO text
/// ([`nearest_source`]), for the tuple element the value is (`{2}`).
pub fn nearest_of<'m>(module: &'m Module, v: &Value) -> Option<Nearest<'m>> {
    let name = module.str(module.instructions.get(v.instruction as usize)?.name);
    let index = module.str(v.index).trim_matches(|c| c == '{' || c == '}');
    nearest_source(module, name, index.split(',').next().and_then(|k| k.trim().parse().ok()))
}

/// [`source_location`] as the panels show it: `file:line`, else the sentence.
pub fn source(module: &Module, v: &Value) -> Option<String> {
    source_location(module, v).map(|s| s.to_string())
}

/// Whether a file is a library's rather than the user's: installed packages
/// (`site-packages`, `dist-packages`), jax's own sources, Python's frozen modules.
pub fn is_library_file(file: &str) -> bool {
    file.contains("site-packages")
        || file.contains("dist-packages")
        || file.contains("/jax/")
        || file.contains("jax/_src")
        || file.starts_with("<frozen")
}

/// One row of a shown call stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackRow {
    pub file: String,
    pub line: u32,
    pub function: String,
    /// A library frame ([`is_library_file`]) folded under the user frame above it: hidden
    /// until the user unfolds it.
    pub folded: bool,
    /// For a user frame: how many library frames are folded right after it.
    pub folds: u32,
}

/// Folds the library frames of a stack (innermost first): the library frames before the
/// first user frame (jax's internals, where the op was made) stay shown, so that the
/// innermost frame is always visible; after the first user frame every run of library
/// frames is folded under the user frame above it (`folds`).
pub fn fold_library(stack: Vec<crate::model::hlo::SourceFrame>) -> Vec<StackRow> {
    let mut rows: Vec<StackRow> = Vec::with_capacity(stack.len());
    let mut seen_user = false;
    let mut owner: Option<usize> = None;
    for f in stack {
        let library = is_library_file(&f.file);
        let folded = library && seen_user;
        if !library {
            seen_user = true;
        }
        if folded {
            if let Some(o) = owner {
                rows[o].folds += 1;
            }
        } else {
            owner = Some(rows.len());
        }
        rows.push(StackRow {
            file: f.file,
            line: f.line,
            function: f.function,
            folded,
            folds: 0,
        });
    }
    rows
}

/// The value's whole call stack, innermost first, folded ([`fold_library`]); that of the
/// instruction its source is inferred from when its own names none; empty when there is
/// no stack frame or the module no HLO text.
pub fn source_stack(module: &Module, v: &Value) -> Vec<StackRow> {
    let Some(i) = module.instructions.get(v.instruction as usize) else {
        return Vec::new();
    };
    let printed = !module.str(i.source_file).is_empty();
    let frame = match i.stack_frame_id {
        None if !printed => nearest_of(module, v).and_then(|n| n.frame),
        id => id,
    };
    match (frame, module.hlo.as_deref()) {
        (Some(id), Some(hlo)) => fold_library(hlo.frames.stack(id)),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::hlo::{HloText, SourceFrame};
    use crate::parse::load_files;

    fn find(m: &Module, name: &str) -> usize {
        (m.values.iter())
            .position(|v| m.value_name(v) == name)
            .unwrap()
    }

    fn cpu_tiny() -> Module {
        let files = [
            (
                "cpu_tiny.buffer-assignment.txt",
                &include_bytes!(
                    "../../tests/fixtures/cpu/jax0.10.2/cpu_tiny.buffer-assignment.txt"
                )[..],
            ),
            (
                "cpu_tiny.buffer-assignment-values.txt",
                &include_bytes!(
                    "../../tests/fixtures/cpu/jax0.10.2/cpu_tiny.buffer-assignment-values.txt"
                )[..],
            ),
        ];
        load_files(files).modules.remove(0)
    }

    #[test]
    fn files_frames_and_the_hlo_text() {
        let tpu = &load_files([(
            "000_0cb419b3147a3cb6.txt",
            &include_bytes!("../../tests/fixtures/tpu/000_0cb419b3147a3cb6.txt")[..],
        )])
        .modules[0];
        let add = &tpu.values[find(tpu, "add.14")];
        // `source_file="/home/ptoulme/tpu.py" source_line=41` in the fixture.
        assert_eq!(
            source_location(tpu, add),
            Some(SourceLocation::File {
                file: "/home/ptoulme/tpu.py",
                line: 41,
                function: "",
                inferred: false
            })
        );
        // New XLA names a stack frame instead: `%broadcast_add_fusion = ... stack_frame_id=4`.
        let mut m = cpu_tiny();
        let fusion = m.values[find(&m, "broadcast_add_fusion")];
        assert_eq!(
            source_location(&m, &fusion),
            Some(SourceLocation::StackFrame(4))
        );
        assert_eq!(
            source(&m, &fusion).unwrap(),
            format!("stack frame 4: {NEEDS_HLO}")
        );
        assert!(source_stack(&m, &fusion).is_empty());
        // With an HLO text whose tables say frame 4 is `f` at a.py:7, called from b.py:3.
        let text = "HloModule m\n\nFileNames\n1 \"/u/a.py\"\n2 \"/u/b.py\"\n\nFunctionNames\n1 \"f\"\n2 \"<module>\"\n\nFileLocations\n1 {file_name_id=1 function_name_id=1 line=7 end_line=7 column=1 end_column=2}\n2 {file_name_id=2 function_name_id=2 line=3 end_line=3 column=1 end_column=2}\n\nStackFrames\n3 {file_location_id=2 parent_frame_id=1}\n4 {file_location_id=1 parent_frame_id=4}\n";
        m.hlo = Some(Box::new(
            crate::parse::hlo::read_hlo("x", text.as_bytes()).text,
        ));
        assert_eq!(
            source_location(&m, &fusion),
            Some(SourceLocation::File {
                file: "/u/a.py",
                line: 7,
                function: "f",
                inferred: false
            })
        );
        let stack = source_stack(&m, &fusion);
        assert_eq!(stack.iter().map(|r| r.line).collect::<Vec<_>>(), [7, 3]);
        // A frame the tables lack stays a frame id.
        m.hlo = Some(Box::new(HloText::default()));
        assert_eq!(
            source_location(&m, &fusion),
            Some(SourceLocation::StackFrame(4))
        );
        // Files sort before stack frames, files by path then line.
        let file = |file, line| SourceLocation::File {
            file,
            line,
            function: "",
            inferred: false,
        };
        assert!(file("b.py", 1) < SourceLocation::StackFrame(0));
        assert!(file("a.py", 9) < file("b.py", 1));
        assert!(file("a.py", 2) < file("a.py", 10));
        assert_eq!(file("a.py", 0).to_string(), "a.py");
    }

    #[test]
    fn library_frames_fold_under_the_first_user_frame() {
        let f = |file: &str, line| SourceFrame {
            file: file.into(),
            line,
            function: String::new(),
        };
        let stack = vec![
            f("/venv/lib/python3.12/site-packages/jax/_src/nn.py", 1),
            f("/home/u/model.py", 10),
            f("/venv/site-packages/flax/linen/module.py", 2),
            f("/venv/site-packages/flax/linen/module.py", 3),
            f("/home/u/train.py", 20),
            f("<frozen runpy>", 198),
        ];
        let rows = fold_library(stack);
        let shown: Vec<(u32, bool, u32)> =
            rows.iter().map(|r| (r.line, r.folded, r.folds)).collect();
        assert_eq!(
            shown,
            [
                (1, false, 0),
                (10, false, 2),
                (2, true, 0),
                (3, true, 0),
                (20, false, 1),
                (198, true, 0)
            ]
        );
        assert!(is_library_file("/x/jax/_src/core.py"));
        assert!(!is_library_file("/home/u/jaxmodel.py"));
    }
}
