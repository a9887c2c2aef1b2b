//! The interface between the file reader and the section readers.
//!
//! A dump is a run of sections, each opened by a header line (`BufferAssignment:`,
//! `Used values:`, `HloLiveRange (max N):`, a memory-usage report's first line). Each
//! section has one reader that owns both its line grammar and what its lines add to the
//! module ([`SectionReader`]); the file reader picks the reader by header line, hands it
//! every line until the next header, and warns about the lines it gives back ([`Flow`]).

use super::assemble::Builder;
use crate::model::Warning;

/// Warnings kept per file; the rest are counted.
const MAX_WARNINGS_PER_FILE: u32 = 100;

/// What a section reader made of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::parse) enum Flow {
    /// Read (or warned about by the reader).
    Read,
    /// Not a line of this section: the file reader looks for a section header in it and,
    /// when it is none, warns that the line is malformed (it `expected` this).
    Other(&'static str),
    /// A malformed line of this section; no header is looked for.
    Malformed(&'static str),
}

/// One dump section's reader: its line grammar and its actions on the module.
pub(in crate::parse) trait SectionReader {
    /// Starts the section at its header line, with the module's part claimed. `total` is
    /// a `Total bytes used: N` read just before the header, if any.
    fn start(&mut self, header: &[u8], total: Option<u64>, cx: &mut Cx);
    /// One line of the section after its header, without its line end.
    fn line(&mut self, line: &[u8], cx: &mut Cx) -> Flow;
    /// The section's name in warnings, for where the reader is in it.
    fn label(&self) -> &'static str;
    /// The section ends, at another section's header or (`at_file_end`) at the end of its
    /// file: warns about what was left open and forgets the section.
    fn end(&mut self, at_file_end: bool, cx: &mut Cx);
}

/// What a section reader may touch while it reads a line.
pub(in crate::parse) struct Cx<'a> {
    /// The module being read (none before the file's first header).
    pub module: Option<&'a mut Builder>,
    pub notes: &'a mut Notes,
    /// The line's number in its (physical) file.
    pub line_no: u64,
}

impl Cx<'_> {
    pub fn builder(&mut self) -> Option<&mut Builder> {
        self.module.as_deref_mut()
    }

    /// A warning about the current line.
    pub fn warn(&mut self, message: String) {
        self.notes
            .warn(self.module.as_deref_mut(), self.line_no, message);
    }
}

/// One file's warnings: at most [`MAX_WARNINGS_PER_FILE`] are kept and the rest counted;
/// those met before the file's module is known wait in `pending`.
#[derive(Default)]
pub(in crate::parse) struct Notes {
    /// The physical file's name, as warnings give it.
    pub file: String,
    kept: u32,
    pub suppressed: u64,
    pub pending: Vec<Warning>,
}

impl Notes {
    pub fn new(file: String) -> Self {
        Notes {
            file,
            ..Notes::default()
        }
    }

    /// A warning at `line` (0: about the whole file), given to `module` or kept pending.
    pub fn warn(&mut self, module: Option<&mut Builder>, line: u64, message: String) {
        if self.kept >= MAX_WARNINGS_PER_FILE {
            self.suppressed += 1;
            return;
        }
        self.kept += 1;
        let warning = Warning {
            file: self.file.clone(),
            line,
            message,
        };
        match module {
            Some(b) => b.module.warnings.push(warning),
            None => self.pending.push(warning),
        }
    }
}

/// Runs `reader` on real dump lines (its header first, as line 1), as the file reader
/// would: the module read and one text per warning or line given back
/// (`"LINE: message"`, `"LINE: other: expected"`, `"LINE: malformed: expected"`).
#[cfg(test)]
pub(in crate::parse) fn run<R: SectionReader>(reader: &mut R, text: &str) -> (Builder, Vec<String>) {
    let mut builder = Builder::new("m", 0);
    let mut notes = Notes::new("f".into());
    let mut said = Vec::new();
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default().as_bytes();
    let mut cx = Cx {
        module: Some(&mut builder),
        notes: &mut notes,
        line_no: 1,
    };
    reader.start(header, None, &mut cx);
    for line in lines {
        cx.line_no += 1;
        match reader.line(line.as_bytes(), &mut cx) {
            Flow::Read => {}
            Flow::Other(e) => said.push(format!("{}: other: {e}", cx.line_no)),
            Flow::Malformed(e) => said.push(format!("{}: malformed: {e}", cx.line_no)),
        }
    }
    reader.end(true, &mut cx);
    for w in std::mem::take(&mut builder.module.warnings) {
        said.push(format!("{}: {}", w.line, w.message));
    }
    said.sort_by_key(|s| s.split(':').next().and_then(|n| n.parse::<u64>().ok()));
    (builder, said)
}
