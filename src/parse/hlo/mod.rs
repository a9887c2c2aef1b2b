//! The HLO module text XLA writes beside a dump (`*after_optimizations.txt`): the module
//! header, the four stack-frame tables and every computation with its instructions in
//! printed (= schedule) order, into [`HloText`].
//!
//! Owns: this file format's reading, line by line, in chunks of any size (gzip too), and
//! joining read texts to their modules by file stem ([`place_texts`], [`join_texts`]). It reads what the answers
//! need, not HLO's semantics ([`instruction`] owns an instruction line's grammar, [`tables`]
//! the header and the tables, [`scan`] the bracket depth). A line that fits no rule is a
//! [`Warning`] with its line number and reading goes on; a text cut short keeps what was
//! read and warns naming the computation left open. Nothing here panics on any input.

mod instruction;
mod scan;
mod seen;
mod sharding;
mod tables;

use super::input::Input;
use crate::model::hlo::{HloBuilder, HloText};
use crate::model::{Module, Warning};
use instruction::Parsed;
use seen::Seen;
pub use sharding::tiling;
use tables::Table;

/// Warnings kept per text; the rest are counted.
const MAX_WARNINGS: usize = 100;
/// The most lines one instruction may span (a string or bracket left open on its line).
const MAX_CONTINUATION_LINES: u32 = 1000;

/// What reading one HLO text gave.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HloRead {
    /// The file's name as given.
    pub file: String,
    pub text: HloText,
    pub warnings: Vec<Warning>,
}

/// Where the reader is in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    /// Before the `HloModule` line.
    Start,
    /// Between tables and computations.
    Between,
    Table(Table),
    /// Inside the last computation of `hlo.computations`.
    Computation,
}

/// Reads one HLO module text, line by line ([`HloReader::line`]) or in chunks
/// ([`HloReader::feed`]).
pub struct HloReader {
    file: String,
    b: HloBuilder,
    warnings: Vec<Warning>,
    seen: Seen,
    at: At,
    line_no: u64,
    /// An instruction printed over several lines: its text so far, first line, lines.
    pending: Option<(Vec<u8>, u64, u32)>,
    suppressed: u64,
    input: Input,
}

/// Whether `line` is an HLO module text's first line.
pub fn is_hlo_start(line: &[u8]) -> bool {
    line.starts_with(b"HloModule ")
}

impl HloReader {
    /// A reader for the file named `file` (a path is fine).
    pub fn new(file: &str) -> Self {
        Self::with_size(file, 0)
    }

    /// [`HloReader::new`] for a file of about `bytes` bytes (its lists are made at the size
    /// it needs).
    pub fn with_size(file: &str, bytes: usize) -> Self {
        HloReader {
            file: file.to_string(),
            b: HloBuilder::with_size(bytes),
            warnings: Vec::new(),
            seen: Seen::default(),
            at: At::Start,
            line_no: 0,
            pending: None,
            suppressed: 0,
            input: Input::new(),
        }
    }

    /// This reader, reading every attribute even where it was printed lately (not looked
    /// up, [`seen::Pieces`]): what the tests compare the look-up with.
    #[doc(hidden)]
    pub fn reading_every_attribute(mut self) -> Self {
        self.seen.pieces.off = true;
        self
    }

    /// More bytes of the file (gzip is recognised by its magic bytes).
    pub fn feed(&mut self, chunk: &[u8]) {
        let mut input = std::mem::replace(&mut self.input, Input::new());
        input.feed(chunk, &mut |line: &[u8]| {
            self.line(line);
            true
        });
        self.input = input;
    }

    fn warn(&mut self, line: u64, message: String) {
        if self.warnings.len() >= MAX_WARNINGS {
            self.suppressed += 1;
            return;
        }
        let file = self.file.rsplit(['/', '\\']).next().unwrap_or_default();
        self.warnings.push(Warning {
            file: file.to_string(),
            line,
            message,
        });
    }

    /// One line, without its line end.
    pub fn line(&mut self, raw: &[u8]) {
        self.line_no += 1;
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if let Some((mut text, first, lines)) = self.pending.take() {
            if line.starts_with(b"  %")
                || line.starts_with(b"  ROOT ")
                || line.starts_with(b"}") && !line.starts_with(b"}}")
            {
                // A new instruction or the computation's end: the open line was malformed.
                self.instruction(&text, first);
                self.line_no -= 1;
                return self.line(raw);
            }
            text.push(b'\n');
            text.extend_from_slice(line);
            let (depth, in_str) = scan::open_at_end(&text);
            if (depth > 0 || in_str) && lines < MAX_CONTINUATION_LINES {
                self.pending = Some((text, first, lines + 1));
            } else {
                self.instruction(&text, first);
            }
            return;
        }
        match self.at {
            At::Start => {
                if tables::header(line, &mut self.b.text) {
                    self.at = At::Between;
                } else if !line.is_empty() {
                    self.warn(
                        self.line_no,
                        "malformed line in the HLO text: expected `HloModule NAME, …`".into(),
                    );
                }
            }
            At::Computation => {
                // `}` or, for a computation run elsewhere, `}, execution_thread="sparsecore"`.
                if line == b"}" || line.starts_with(b"}, ") {
                    self.end_computation();
                } else if line.starts_with(b"  ") {
                    // Read at once; only a line that is no whole instruction is scanned for
                    // what it leaves open.
                    let (b, seen) = (&mut self.b, &mut self.seen);
                    match instruction::instruction(line, self.line_no, b, seen, true) {
                        Parsed::Whole => {}
                        Parsed::Open => self.pending = Some((line.to_vec(), self.line_no, 1)),
                        Parsed::Not => {
                            let (depth, in_str) = scan::open_at_end(line);
                            if depth > 0 || in_str {
                                self.pending = Some((line.to_vec(), self.line_no, 1));
                            } else {
                                self.instruction(line, self.line_no);
                            }
                        }
                    }
                } else if !line.is_empty() {
                    self.malformed("an instruction `  %name = shape opcode(operands), …` or `}`");
                }
            }
            At::Between | At::Table(_) => self.outside(line),
        }
    }

    /// A line outside computations: a table's title or row, a computation's start.
    fn outside(&mut self, line: &[u8]) {
        if line.is_empty() {
            if matches!(self.at, At::Table(_)) {
                self.at = At::Between;
            }
            return;
        }
        if let Some(t) = tables::opens(line) {
            self.at = At::Table(t);
            return;
        }
        if let At::Table(t) = self.at {
            if tables::row(t, line, &mut self.b.text.frames) {
                return;
            }
        }
        if let Some((is_entry, name)) = instruction::computation_start(line) {
            if is_entry && self.b.text.entry.is_some() {
                let name = crate::model::utf8_lossy(name);
                let msg =
                    format!("a second ENTRY computation `{name}`; the first is kept as the entry");
                self.warn(self.line_no, msg);
            }
            self.b.computation(name, is_entry);
            self.at = At::Computation;
            return;
        }
        let expected = match self.at {
            At::Table(Table::FileNames | Table::FunctionNames) => "a table row `ID \"text\"`",
            At::Table(_) => "a table row `ID {key=N …}`",
            _ => "a table title or a computation `%name (…) -> … {`",
        };
        self.malformed(expected);
    }

    /// The open computation is complete.
    fn end_computation(&mut self) {
        self.b.end();
        self.at = At::Between;
    }

    fn malformed(&mut self, expected: &str) {
        self.warn(
            self.line_no,
            format!("malformed line in the HLO text: expected {expected}"),
        );
    }

    fn instruction(&mut self, text: &[u8], line_no: u64) {
        let read = instruction::instruction(text, line_no, &mut self.b, &mut self.seen, false);
        if read == Parsed::Not {
            self.b.abandon();
            let msg = "malformed line in the HLO text: expected an instruction `  %name = shape opcode(operands), …`";
            self.warn(line_no, msg.into());
        }
    }

    /// The end of the file: what was read, with a warning for what was left open.
    pub fn finish(mut self) -> HloRead {
        let mut input = std::mem::replace(&mut self.input, Input::new());
        let mut lines = Vec::new();
        let last = input.finish(&mut |line: &[u8]| {
            lines.push(line.to_vec());
            true
        });
        lines.extend(last);
        for l in lines {
            self.line(&l);
        }
        if input.gz_failed() {
            self.warn(
                0,
                "the gzip data is corrupt or cut short; what came before was read".into(),
            );
        }
        if let Some((_, first, _)) = self.pending.take() {
            self.warn(
                first,
                "the HLO text ends inside this instruction (a bracket or string is left open)"
                    .into(),
            );
        }
        self.b.end();
        if self.at == At::Computation {
            let text = &self.b.text;
            let name = (text.computations.last())
                .map(|c| text.str(c.name).to_string())
                .unwrap_or_default();
            let msg = format!("the HLO text ends inside computation `{name}` (its closing `}}` is missing); what came before was read");
            self.warn(self.line_no, msg);
        }
        self.check_frames();
        if self.at == At::Start {
            self.warn(
                0,
                "no `HloModule` line: this is not an HLO module text".into(),
            );
        }
        if self.suppressed > 0 {
            let n = self.suppressed;
            self.warnings.push(Warning {
                file: self.warnings[0].file.clone(),
                line: 0,
                message: format!("{n} more warnings in this HLO text were not listed"),
            });
        }
        HloRead {
            file: self.file,
            text: self.b.finish(),
            warnings: self.warnings,
        }
    }
}

impl HloReader {
    /// Warns about stack frames that do not resolve: a frame that is its own parent (or
    /// ancestor), a parent or location missing from the tables, an instruction's
    /// `stack_frame_id` not in `StackFrames`. Never more than a few lines.
    fn check_frames(&mut self) {
        let text = &self.b.text;
        let frames = &text.frames;
        let mut ids: Vec<u32> = frames.frames.keys().copied().collect();
        ids.sort_unstable();
        let mut problems: Vec<String> = Vec::new();
        let mut good = hashbrown::HashSet::new();
        for id in ids {
            if let Some(why) = frames.problem(id, &mut good) {
                if !problems.contains(&why) {
                    problems.push(why);
                }
            }
        }
        let mut unknown = 0u64;
        let mut example = None;
        if !frames.frames.is_empty() {
            for c in &text.computations {
                for ins in &c.instructions {
                    let id = text.meta(ins).stack_frame_id;
                    if let Some(id) = id.filter(|id| !frames.frames.contains_key(id)) {
                        unknown += 1;
                        example.get_or_insert((id, u64::from(ins.line)));
                    }
                }
            }
        }
        let n = problems.len();
        for why in problems.into_iter().take(5) {
            self.warn(0, format!("{why}; its stack is shown up to there"));
        }
        if n > 5 {
            self.warn(0, format!("{} more stack frames do not resolve", n - 5));
        }
        if let Some((id, line)) = example {
            let msg = format!("{unknown} instructions name a stack_frame_id that is not in the StackFrames table (the first, {id}, here)");
            self.warn(line, msg);
        }
    }
}

/// Reads a whole HLO text at once.
pub fn read_hlo(file: &str, bytes: &[u8]) -> HloRead {
    let mut r = HloReader::with_size(file, bytes.len());
    r.feed(bytes);
    r.finish()
}

/// Which of `modules` (by name) an HLO text named `file` belongs to, by file stem
/// ([`super::names::hlo_module_names`]); `taken(k)` says a module has its text already. The
/// sentence saying that no module of that name was read, else ([`unjoined`]).
pub fn module_for<'a>(
    names: impl IntoIterator<Item = &'a str>,
    taken: impl Fn(usize) -> bool,
    file: &str,
) -> Result<usize, String> {
    let stems = super::names::hlo_module_names(file);
    let found = (names.into_iter().enumerate())
        .position(|(k, name)| stems.iter().any(|s| s == name) && !taken(k));
    found.ok_or_else(|| unjoined(file))
}

/// The sentence for an HLO text no module read takes: what it is and what is lost.
fn unjoined(file: &str) -> String {
    let stems = super::names::hlo_module_names(file);
    let base = file.rsplit(['/', '\\']).next().unwrap_or_default();
    let stem = stems.last().map_or("", String::as_str);
    match super::names::is_before_text(file) {
        true => format!(
            "{base} is an HLO module text before optimizations, but no dump of its module ({stem}) was read beside it: its shardings are not used."
        ),
        false => format!("{base} is an HLO module text, but no dump of its module ({stem}) was read beside it."),
    }
}

/// Where each of `reads` goes, in the order they are joined (texts after optimizations
/// first: a text before them may be joined by their `HloModule` name): `(read, module)`, or
/// the sentence saying that none takes it. The page and [`join_texts`] both follow it.
pub fn place_texts(modules: &[&Module], reads: &[HloRead]) -> Vec<(usize, Result<usize, String>)> {
    let mut before: Vec<bool> = modules.iter().map(|m| m.hlo_before.is_some()).collect();
    let mut after: Vec<bool> = modules.iter().map(|m| m.hlo.is_some()).collect();
    let mut after_name: Vec<&str> = modules.iter().map(|m| m.hlo.as_ref().map_or("", |h| h.name.as_str())).collect();
    let is_before = |r: usize| super::names::is_before_text(&reads[r].file);
    let order = (0..reads.len()).filter(|&r| !is_before(r)).chain((0..reads.len()).filter(|&r| is_before(r)));
    let mut out = Vec::with_capacity(reads.len());
    for r in order.collect::<Vec<_>>() {
        let read = &reads[r];
        let names = modules.iter().map(|m| m.name.as_str());
        let taken = |k: usize| if is_before(r) { before[k] } else { after[k] };
        let found = match module_for(names, taken, &read.file) {
            Err(e) if is_before(r) => same_jit(modules, &before, &after_name, read).ok_or(e),
            found => found,
        };
        if let Ok(k) = found {
            match is_before(r) {
                true => before[k] = true,
                false => (after[k], after_name[k]) = (true, read.text.name.as_str()),
            }
        }
        out.push((r, found));
    }
    out
}

/// Gives `module` its HLO text: `hlo` set (`hlo_before` for a text before the passes), the
/// text's file listed and its warnings added.
pub fn attach_to(module: &mut Module, read: HloRead) {
    let base = read.file.rsplit(['/', '\\']).next().unwrap_or_default();
    module.files.push(base.to_string());
    module.warnings.extend(read.warnings);
    match super::names::is_before_text(&read.file) {
        true => module.hlo_before = Some(Box::new(read.text)),
        false => module.hlo = Some(Box::new(read.text)),
    }
}

/// Joins read HLO texts to their modules as a dump folder's reading does ([`place_texts`],
/// [`attach_to`]); a text no module takes gives its sentence in `errors` (one before
/// optimizations too: its shardings are then not used).
pub fn join_texts(modules: &mut [&mut Module], reads: Vec<HloRead>, errors: &mut Vec<String>) {
    let placed = place_texts(&modules.iter().map(|m| &**m).collect::<Vec<_>>(), &reads);
    let mut reads: Vec<Option<HloRead>> = reads.into_iter().map(Some).collect();
    for (r, to) in placed {
        match (to, reads[r].take()) {
            (Ok(k), Some(read)) => attach_to(modules[k], read),
            (Err(e), _) => errors.push(e),
            (Ok(_), None) => {}
        }
    }
}

/// The one module without a text before optimizations whose text after them has the
/// `HloModule` name of `read` and whose name is the text's but for XLA's module number
/// (XLA numbers a module's text before its passes apart from its dump when it compiles it
/// again: `module_0000.jit_init…before_optimizations.txt` beside
/// `module_0003.jit_init…after_optimizations*`); none when two or none have it.
fn same_jit(modules: &[&Module], before: &[bool], after_name: &[&str], read: &HloRead) -> Option<usize> {
    let name = read.text.name.as_str();
    let stems = super::names::hlo_module_names(&read.file);
    let renumbered = |m: &Module| stems.iter().any(|s| unnumbered(s) == unnumbered(&m.name));
    let mut found = (0..before.len())
        .filter(|&k| !before[k] && !name.is_empty() && after_name[k] == name && renumbered(modules[k]));
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// A dump file's stem without XLA's `module_NNNN.` in front.
fn unnumbered(stem: &str) -> &str {
    let rest = stem.strip_prefix("module_").unwrap_or("");
    match rest.split_once('.') {
        Some((n, tail)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => tail,
        _ => stem,
    }
}
