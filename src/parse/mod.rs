//! Parsing: bytes of dump files → [`Module`]s.
//!
//! Owns: reading. [`Loader`] takes files one after another, in chunks of any size (so a
//! 1 GB dump is never one string), cuts lines, un-gzips, follows `*** Begin/End ***`
//! wrappers of stdout dumps, and routes every file to its module by name, so the three
//! files of new XLA's split layout become one module. Which section a line belongs to is
//! decided by the section header lines, never by position; each section's grammar is a
//! module of its own ([`buffer_assignment`], [`used_values`], [`live_range`], [`report`]),
//! and [`assemble`] joins and checks once everything is read. A malformed line becomes a
//! [`Warning`](crate::model::Warning) with its line number and reading goes on; a file
//! that is not a dump becomes one sentence in [`Load::errors`]. Nothing here panics on
//! any input.

mod assemble;
mod buffer_assignment;
mod lex;
mod live_range;
mod names;
mod report;
mod used_values;

use crate::model::{
    AllocFlags, Allocation, EntryParameter, LiveRange, MemoryReport, Module, PeakEntry,
    ReportSpace, StackNode, Warning, XlaPeak, USES_MARK,
};
use assemble::Builder;
use lex::text;
use std::io::Write;

pub use names::{folder_selection, is_ours, module_name};

/// The result of reading a set of files.
#[derive(Default)]
pub struct Load {
    /// Every module read, in the order first seen.
    pub modules: Vec<Module>,
    /// One sentence per input that could not be read as a dump at all.
    pub errors: Vec<String>,
}

/// Warnings kept per file; the rest are counted.
const MAX_WARNINGS_PER_FILE: u32 = 100;
/// Lines read before the first section header before a file is judged not a dump.
const MAX_PREAMBLE_LINES: u64 = 1000;
/// Bytes at the start of a file's text that tell a binary file from text.
const SNIFF_BYTES: usize = 4096;

/// Streaming reader: files go in one after another, in chunks of any size.
#[derive(Default)]
pub struct Loader {
    builders: Vec<Builder>,
    errors: Vec<String>,
    file: Option<FileState>,
}

impl Loader {
    pub fn new() -> Self {
        Loader::default()
    }

    /// Starts a file. `name` is its file name (a path is fine); it names the module.
    pub fn begin_file(&mut self, name: &str) {
        self.end_file();
        self.file = Some(FileState::new(name));
    }

    /// More bytes of the current file. Gzip is recognised by its magic bytes.
    pub fn feed(&mut self, chunk: &[u8]) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        file.feed(chunk, &mut self.builders);
    }

    /// Ends the current file.
    pub fn end_file(&mut self) {
        if let Some(mut file) = self.file.take() {
            file.finish(&mut self.builders, &mut self.errors);
        }
    }

    /// All modules read, joined (values to live ranges) and checked.
    pub fn finish(self) -> Load {
        let mut finishing = self.finishing();
        while !finishing.step(usize::MAX) {}
        finishing.into_load()
    }

    /// [`Loader::finish`] to be done in pieces ([`Finishing::step`]).
    pub fn finishing(mut self) -> Finishing {
        self.end_file();
        Finishing {
            builders: self.builders.into_iter(),
            join: None,
            load: Load {
                modules: Vec::new(),
                errors: self.errors,
            },
        }
    }
}

/// Joining and checking what a [`Loader`] read, in pieces, so that the browser can paint
/// between them (a 1 GB dump's join takes a quarter of a second in wasm).
pub struct Finishing {
    builders: std::vec::IntoIter<Builder>,
    join: Option<assemble::Join>,
    load: Load,
}

impl Finishing {
    /// Does up to `work` items of joining (values, live ranges, `Used values` entries);
    /// true once every module is done. The result is the same however the work is cut.
    pub fn step(&mut self, work: usize) -> bool {
        loop {
            if let Some(join) = self.join.as_mut() {
                if !join.step(work) {
                    return false;
                }
                if let Some(join) = self.join.take() {
                    self.load.modules.push(join.into_module());
                }
                return self.builders.len() == 0;
            }
            match self.builders.next().map(Builder::join) {
                None => return true,
                Some(Ok(join)) => self.join = Some(join),
                Some(Err(e)) => self.load.errors.push(e),
            }
        }
    }

    /// What was read (every module once [`Finishing::step`] said true).
    pub fn into_load(self) -> Load {
        self.load
    }
}

/// Whether `bytes` start with gzip's magic bytes (`1f 8b`).
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// Reads whole files at once: `(file name, bytes)`.
pub fn load_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Load {
    let mut loader = Loader::new();
    for (name, bytes) in files {
        loader.begin_file(name);
        loader.feed(bytes);
        loader.end_file();
    }
    loader.finish()
}

/// Where in the dump the reader is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Section {
    /// Nothing recognised yet in this (virtual) file.
    Preamble,
    /// Inside `*** Begin NAME ***` of a file that is not a buffer-assignment dump.
    Skip,
    Allocations,
    CrossColor,
    /// After the allocations' closing blank line.
    AfterAllocations,
    /// A `Total bytes used:` line was read; the next header says whose it is.
    PendingTotal(u64),
    UsedValues,
    LiveRange,
    Sequence,
    Ranges,
    Peak,
    PeakUndetermined,
    StackTrace,
    LiveRangeUnavailable,
    Report,
}

impl Section {
    fn label(self) -> &'static str {
        match self {
            Section::Preamble | Section::Skip => "file header",
            Section::Allocations | Section::CrossColor => "BufferAssignment (allocations)",
            Section::AfterAllocations | Section::PendingTotal(_) => "Total bytes used",
            Section::UsedValues => "Used values",
            Section::LiveRange => "HloLiveRange",
            Section::Sequence => "HloLiveRange InstructionSequence",
            Section::Ranges => "HloLiveRange BufferLiveRange",
            Section::Peak | Section::PeakUndetermined => "HloLiveRange peak list",
            Section::StackTrace => "stack trace breakdown",
            Section::LiveRangeUnavailable => "HloLiveRange",
            Section::Report => "memory-usage report",
        }
    }
}

/// Which file of a module a section belongs to (a module gets each part from one file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Allocations,
    Values,
    LiveRange,
    Report,
}

/// Where a `Used values` entry is: between its `<id ...>` line and its `from instruction:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UsedState {
    /// Between entries.
    Idle,
    /// After `<id ...>`: ` positions:` comes next.
    Header,
    Positions,
    Uses,
    /// After ` uses are not initialized yet.`: the from line comes next.
    UsesUnknown,
}

struct UsedEntry {
    id: u32,
    /// Its instruction's `from instruction:` was read with an earlier value.
    known: bool,
    line: u64,
    state: UsedState,
}

struct FileState {
    /// The physical file's name, for warnings.
    name: String,
    /// The name the current module is keyed on (the file's, or a `*** Begin` name).
    virtual_name: String,
    /// Position in `builders` of the current module, once a section header was seen.
    module: Option<usize>,
    line_no: u64,
    carry: Vec<u8>,
    gz: Option<flate2::write::MultiGzDecoder<Vec<u8>>>,
    gz_failed: bool,
    /// The first bytes, until there are two to tell gzip from text.
    head: Option<Vec<u8>>,
    /// Bytes of the file as given (compressed, for gzip).
    raw: u64,
    /// Bytes of its text (after gzip).
    bytes: u64,
    /// The file starts with gzip's magic bytes.
    gzip: bool,
    /// Control bytes among the first [`SNIFF_BYTES`] of the text, and how many of those
    /// were seen: a file is judged binary on them whatever the chunks it came in.
    control: usize,
    sniffed: usize,
    section: Section,
    /// A section header was recognised somewhere in the physical file.
    recognised: bool,
    /// Preamble lines skipped before the current virtual file's first header.
    preamble_lines: u64,
    given_up: bool,
    warnings: u32,
    suppressed: u64,
    used: Option<UsedEntry>,
    /// Warnings met before the current module was known; they go to it when it is.
    pending: Vec<Warning>,
    scratch: String,
    /// Instruction name of the previous `Used values` entry: the values of one instruction
    /// follow each other, and only the first one's `from instruction:` is read.
    previous_used_name: Vec<u8>,
    /// `true` while the last line handed over had no `\n` (only at the end of a file).
    last_line_open: bool,
    /// A `Live ranges at` peak list being read: running cumulative sum.
    cumulative: u64,
    /// Nesting of the stack tree: the node index at each depth.
    stack_path: Vec<usize>,
}

impl FileState {
    fn new(name: &str) -> Self {
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name).to_string();
        let report = names::is_report(&base);
        FileState {
            name: base.clone(),
            virtual_name: base,
            module: None,
            line_no: 0,
            carry: Vec::new(),
            gz: None,
            gz_failed: false,
            head: Some(Vec::new()),
            raw: 0,
            bytes: 0,
            gzip: false,
            control: 0,
            sniffed: 0,
            section: if report {
                Section::Report
            } else {
                Section::Preamble
            },
            recognised: false,
            preamble_lines: 0,
            given_up: false,
            warnings: 0,
            suppressed: 0,
            used: None,
            pending: Vec::new(),
            scratch: String::new(),
            previous_used_name: Vec::new(),
            last_line_open: false,
            cumulative: 0,
            stack_path: Vec::new(),
        }
    }

    fn feed(&mut self, chunk: &[u8], builders: &mut Vec<Builder>) {
        if chunk.is_empty() || self.given_up {
            return;
        }
        self.raw += chunk.len() as u64;
        if let Some(mut head) = self.head.take() {
            head.extend_from_slice(chunk);
            if head.len() < 2 {
                self.head = Some(head);
                return;
            }
            if is_gzip(&head) {
                self.gzip = true;
                self.gz = Some(flate2::write::MultiGzDecoder::new(Vec::new()));
            }
            return self.decode(&head, builders);
        }
        self.decode(chunk, builders)
    }

    /// Un-gzips if needed and hands the bytes to the line cutter.
    fn decode(&mut self, chunk: &[u8], builders: &mut Vec<Builder>) {
        match self.gz.take() {
            Some(mut gz) => {
                if !self.gz_failed {
                    if gz.write_all(chunk).is_err() {
                        self.gz_failed = true;
                    }
                    let out = std::mem::take(gz.get_mut());
                    self.lines(&out, builders);
                    *gz.get_mut() = out;
                    gz.get_mut().clear();
                }
                self.gz = Some(gz);
            }
            None => self.lines(chunk, builders),
        }
    }

    /// Cuts `chunk` into lines, keeping an unfinished last line for the next chunk.
    fn lines(&mut self, chunk: &[u8], builders: &mut Vec<Builder>) {
        if self.sniffed < SNIFF_BYTES {
            let head = &chunk[..chunk.len().min(SNIFF_BYTES - self.sniffed)];
            self.control += head
                .iter()
                .filter(|&&c| c < 0x20 && !matches!(c, b'\n' | b'\r' | b'\t'))
                .count();
            self.sniffed += head.len();
        }
        self.bytes += chunk.len() as u64;
        let mut rest = chunk;
        if !self.carry.is_empty() {
            match memchr::memchr(b'\n', rest) {
                Some(p) => {
                    self.carry.extend_from_slice(&rest[..p]);
                    let line = std::mem::take(&mut self.carry);
                    self.line(&line, builders);
                    self.carry = line;
                    self.carry.clear();
                    rest = &rest[p + 1..];
                }
                None => {
                    self.carry.extend_from_slice(rest);
                    return;
                }
            }
        }
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', rest) {
            if self.given_up {
                return;
            }
            self.line(&rest[start..end], builders);
            start = end + 1;
        }
        self.carry.extend_from_slice(&rest[start..]);
    }

    fn finish(&mut self, builders: &mut Vec<Builder>, errors: &mut Vec<String>) {
        if let Some(head) = self.head.take() {
            self.decode(&head, builders);
        }
        if let Some(mut gz) = self.gz.take() {
            // `try_finish` hands over what the decoder still holds even when the stream
            // then proves corrupt or cut short (bad checksum, missing trailer): that text
            // is read, as it would have been had it come out with an earlier chunk.
            if gz.try_finish().is_err() {
                self.gz_failed = true;
            }
            let out = std::mem::take(gz.get_mut());
            self.lines(&out, builders);
        }
        if !self.carry.is_empty() && !self.given_up {
            let line = std::mem::take(&mut self.carry);
            self.last_line_open = true;
            self.line(&line, builders);
        }
        if self.gz_failed {
            self.warn_file(
                builders,
                "the gzip data is corrupt or cut short; what came before was read".into(),
            );
        }
        self.end_virtual_file(builders);
        if !self.recognised {
            errors.push(self.not_a_dump());
        } else if self.suppressed > 0 {
            let msg = format!(
                "{} more warnings in this file were not listed",
                self.suppressed
            );
            self.suppressed = 0;
            self.warn_file(builders, msg);
        }
    }

    /// Binary: more than a tenth control bytes at the start (a NUL in a dump line is a bad
    /// line, not a binary file).
    fn is_binary(&self) -> bool {
        self.control * 10 > self.sniffed
    }

    fn not_a_dump(&self) -> String {
        let name = &self.name;
        if self.raw == 0 {
            format!("{name} is empty.")
        } else if self.gzip && (self.bytes == 0 || self.gz_failed) {
            format!("{name} is gzip-compressed, but its gzip data is corrupt or cut short, so it holds no dump.")
        } else if self.is_binary() || self.gz_failed {
            format!("{name} is not a text file, so it is not an XLA buffer-assignment dump.")
        } else {
            format!(
                "{name} is not an XLA buffer-assignment dump: none of its lines is a section header such as \
                 `BufferAssignment:`, `Used values:` or `HloLiveRange (max N):`."
            )
        }
    }

    fn module<'b>(&self, builders: &'b mut [Builder]) -> Option<&'b mut Builder> {
        self.module.and_then(move |m| builders.get_mut(m))
    }

    fn warn(&mut self, builders: &mut [Builder], message: String) {
        let line = self.line_no;
        self.warn_at(builders, line, message);
    }

    fn warn_file(&mut self, builders: &mut [Builder], message: String) {
        self.warn_at(builders, 0, message);
    }

    fn warn_at(&mut self, builders: &mut [Builder], line: u64, message: String) {
        if self.warnings >= MAX_WARNINGS_PER_FILE {
            self.suppressed += 1;
            return;
        }
        self.warnings += 1;
        let warning = Warning {
            file: self.name.clone(),
            line,
            message,
        };
        match self.module(builders) {
            Some(b) => b.module.warnings.push(warning),
            None => self.pending.push(warning),
        }
    }

    /// A line that fits no rule of its section.
    fn malformed(&mut self, builders: &mut [Builder], expected: &str) {
        let section = self.section.label();
        let msg = if self.last_line_open {
            format!("the file ends in the middle of this line (in the {section} section)")
        } else {
            format!("malformed line in the {section} section: expected {expected}")
        };
        self.warn(builders, msg);
    }

    /// Switches to the module of `part`, creating it when the current virtual file has
    /// none yet. A module takes each part from one file: a second file with the same part
    /// under the same name starts another module.
    fn enter(&mut self, builders: &mut Vec<Builder>, part: Part) {
        if self.preamble_lines > 0 && self.module.is_none() {
            // Reported once the module exists.
            let n = self.preamble_lines;
            self.preamble_lines = 0;
            self.attach(builders, part);
            let msg = format!("{n} lines before the first section header were skipped");
            self.warn_at(builders, 0, msg);
        } else {
            self.attach(builders, part);
        }
        self.recognised = true;
    }

    fn attach(&mut self, builders: &mut Vec<Builder>, part: Part) {
        let file_key = format!("{}\u{0}{}", self.name, self.virtual_name);
        if let Some(b) = self.module.and_then(|m| builders.get_mut(m)) {
            if b.claim(part, &file_key) {
                b.module.warnings.append(&mut self.pending);
                return;
            }
        }
        let name = names::module_name(&self.virtual_name);
        let found = builders
            .iter()
            .position(|b| b.base_name == name && b.can_claim(part, &file_key));
        let idx = match found {
            Some(i) => i,
            None => {
                let copies = builders.iter().filter(|b| b.base_name == name).count();
                builders.push(Builder::new(&name, copies));
                builders.len() - 1
            }
        };
        builders[idx].claim(part, &file_key);
        builders[idx].add_file(&self.virtual_name);
        builders[idx].module.warnings.append(&mut self.pending);
        self.module = Some(idx);
    }

    /// End of a physical file or of a `*** Begin ***` section: what was left open.
    fn end_virtual_file(&mut self, builders: &mut [Builder]) {
        let open = match self.section {
            Section::UsedValues
                if self
                    .used
                    .as_ref()
                    .is_some_and(|u| u.state != UsedState::Idle) =>
            {
                let u = self
                    .used
                    .as_ref()
                    .map(|u| (u.id, u.line))
                    .unwrap_or_default();
                Some(format!("the Used values section is cut short: the entry of value {} (line {}) is incomplete", u.0, u.1))
            }
            Section::LiveRange => Some(
                "the HloLiveRange section is cut short, before its InstructionSequence".to_string(),
            ),
            Section::Sequence | Section::Ranges => Some(format!(
                "the {} section is cut short: no peak list follows",
                self.section.label()
            )),
            Section::PendingTotal(_) => {
                Some("the Used values section is missing after `Total bytes used`".to_string())
            }
            _ => None,
        };
        if let Some(msg) = open {
            self.warn(builders, msg);
        }
        let stack_msg = (self.section == Section::StackTrace)
            .then(|| self.module(builders).and_then(|b| b.check_stack_tree()))
            .flatten();
        if let Some(msg) = stack_msg {
            self.warn(builders, msg);
        }
        self.used = None;
        self.stack_path.clear();
        self.section = Section::Preamble;
        self.module = None;
    }

    /// One line, without its `\n`.
    fn line(&mut self, raw: &[u8], builders: &mut Vec<Builder>) {
        self.line_no += 1;
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);

        // Stdout dumps: `*** Begin NAME ***` ... `*** End NAME ***`.
        if line.starts_with(b"*** ") {
            if let Some(name) = line
                .strip_prefix(b"*** Begin ")
                .and_then(|l| l.strip_suffix(b" ***"))
            {
                self.end_virtual_file(builders);
                self.virtual_name = text(name).into_owned();
                self.section = if names::is_ours(&self.virtual_name) {
                    if names::is_report(&self.virtual_name) {
                        Section::Report
                    } else {
                        Section::Preamble
                    }
                } else {
                    Section::Skip
                };
                return;
            }
            if line.starts_with(b"*** End ") && line.ends_with(b" ***") {
                self.end_virtual_file(builders);
                self.section = Section::Skip;
                return;
            }
        }
        match self.section {
            Section::Skip => {}
            Section::Preamble => self.preamble(line, builders),
            Section::Allocations | Section::CrossColor => self.allocations(line, builders),
            Section::AfterAllocations => self.after_allocations(line, builders),
            Section::PendingTotal(n) => self.pending_total(n, line, builders),
            Section::UsedValues => self.used_values(line, builders),
            Section::LiveRange
            | Section::Sequence
            | Section::Ranges
            | Section::Peak
            | Section::PeakUndetermined
            | Section::StackTrace => self.live_range(line, builders),
            Section::LiveRangeUnavailable => {
                if !line.is_empty() && !self.top_header(line, builders) {
                    self.malformed(builders, "nothing after `HloLiveRange not available`");
                }
            }
            Section::Report => self.report(line, builders),
        }
    }

    fn preamble(&mut self, line: &[u8], builders: &mut Vec<Builder>) {
        if line.is_empty() || self.top_header(line, builders) {
            return;
        }
        self.preamble_lines += 1;
        if !self.recognised && self.preamble_lines >= MAX_PREAMBLE_LINES {
            self.given_up = true;
        }
    }

    /// Headers that may start a section anywhere. Returns whether `line` was one.
    fn top_header(&mut self, line: &[u8], builders: &mut Vec<Builder>) -> bool {
        if line == b"BufferAssignment:" {
            self.end_section(builders);
            self.enter(builders, Part::Allocations);
            self.section = Section::Allocations;
        } else if let Some(n) = buffer_assignment::total_line(line) {
            self.end_section(builders);
            self.section = Section::PendingTotal(n);
        } else if line == b"Used values:" {
            self.end_section(builders);
            self.enter(builders, Part::Values);
            self.section = Section::UsedValues;
        } else if let Some(max) = live_range::header(line) {
            self.end_section(builders);
            self.enter(builders, Part::LiveRange);
            if let Some(b) = self.module(builders) {
                b.start_schedule(max);
            }
            self.section = Section::LiveRange;
        } else if line.starts_with(b"HloLiveRange not available") {
            self.end_section(builders);
            self.enter(builders, Part::LiveRange);
            self.section = Section::LiveRangeUnavailable;
        } else if matches!(
            report::report_line(line),
            Some(report::ReportLine::MemorySpace(..))
        ) || line == b"Allocations sorted by size:"
        {
            self.end_section(builders);
            self.enter(builders, Part::Report);
            self.section = Section::Report;
            self.report(line, builders);
        } else {
            return false;
        }
        true
    }

    /// Checks on leaving a section for another.
    fn end_section(&mut self, builders: &mut [Builder]) {
        if matches!(
            self.section,
            Section::Sequence | Section::Ranges | Section::LiveRange | Section::UsedValues
        ) {
            // Same as at the end of a file: reports what was left open.
            let (module, section) = (self.module, self.section);
            self.end_virtual_file(builders);
            self.module = module;
            self.section = section;
        }
        self.used = None;
    }

    fn allocations(&mut self, line: &[u8], builders: &mut Vec<Builder>) {
        if line.first() == Some(&b'a') {
            match buffer_assignment::alloc_header(line) {
                Some(h) => {
                    self.section = Section::Allocations;
                    let expected = self
                        .module(builders)
                        .map_or(0, |b| b.module.allocations.len());
                    if h.index as usize != expected {
                        let msg = format!(
                            "allocation {} where {expected} was expected (XLA prints them in index order): \
                             a duplicated, missing or misplaced allocation",
                            h.index
                        );
                        self.warn(builders, msg);
                    }
                    let Some(b) = self.module(builders) else {
                        return;
                    };
                    let s = &mut b.module.strings;
                    let parameter = h.parameter.map(|(number, shape, index)| EntryParameter {
                        number,
                        shape: s.intern_bytes(shape),
                        shape_index: s.intern_bytes(index),
                    });
                    let output_shape = h.output_shape.map(|o| s.intern_bytes(o));
                    let at = b.module.values.len() as u32;
                    b.module.allocations.push(Allocation {
                        index: h.index,
                        size: h.size,
                        color: h.color,
                        page: h.page,
                        parameter,
                        output_shape,
                        flags: AllocFlags {
                            constant: h.constant,
                            thread_local: h.thread_local,
                            maybe_live_out: h.maybe_live_out,
                            preallocated_temp: h.preallocated_temp,
                        },
                        values: at..at,
                    });
                }
                None => self.malformed(builders, "`allocation N: size N[, flags]:`"),
            }
            return;
        }
        if line.starts_with(b" value: ") && self.section == Section::Allocations {
            let Some(v) = buffer_assignment::value_line(line) else {
                return self.malformed(builders, "` value: <ID NAME> (size=N,offset=N): SHAPE`");
            };
            let Some(b) = self.module(builders) else {
                return;
            };
            if b.module.allocations.is_empty() {
                return self.malformed(builders, "an `allocation N:` line before its values");
            }
            let inside = v
                .offset
                .checked_add(v.size)
                .is_some_and(|end| b.module.allocations.last().is_some_and(|a| end <= a.size));
            let previous = b.module.allocations.last().and_then(|a| {
                (a.values.end > a.values.start)
                    .then(|| b.module.values[a.values.end as usize - 1].id)
            });
            b.add_value(&v, self.line_no);
            if !inside {
                self.warn(
                    builders,
                    format!("value {} lies outside its allocation", v.value.id),
                );
            }
            if let Some(p) = previous.filter(|&p| p >= v.value.id) {
                let msg = format!(
                    "value {} follows value {p}: XLA prints an allocation's values in id order \
                     (a duplicated or misplaced line)",
                    v.value.id
                );
                self.warn(builders, msg);
            }
            return;
        }
        if line == b" reused by buffers of a different color:" {
            self.section = Section::CrossColor;
            return;
        }
        if self.section == Section::CrossColor && buffer_assignment::xcolor_value(line).is_some() {
            return; // Repeats of values listed above (XLA says so); not counted twice.
        }
        if line.is_empty() {
            self.section = Section::AfterAllocations;
            return;
        }
        if self.top_header(line, builders) {
            return;
        }
        if line.starts_with(b"  ")
            && memchr::memchr(b'[', line).is_some()
            && self.section == Section::Allocations
        {
            return self.warn(
                builders,
                "value line in the pre-2019-09 format, which bufscope does not read".into(),
            );
        }
        self.malformed(builders, "an `allocation` or ` value:` line")
    }

    fn after_allocations(&mut self, line: &[u8], builders: &mut Vec<Builder>) {
        if line.is_empty() || self.top_header(line, builders) {
            return;
        }
        if line.starts_with(b"allocation ") {
            // A blank line inside the allocations (a joined or edited file): go on reading.
            self.section = Section::Allocations;
            return self.allocations(line, builders);
        }
        self.malformed(builders, "`Total bytes used: N` or `Used values:`")
    }

    fn pending_total(&mut self, total: u64, line: &[u8], builders: &mut Vec<Builder>) {
        if line.is_empty() {
            return;
        }
        let report = line == b"Allocations sorted by size:";
        if line == b"Used values:" || report {
            let part = if report { Part::Report } else { Part::Values };
            self.enter(builders, part);
            let section = if report {
                Section::Report
            } else {
                Section::UsedValues
            };
            self.section = section;
            let file = self.name.clone();
            let line_no = self.line_no;
            if let Some(b) = self.module(builders) {
                if report {
                    b.module
                        .memory_report
                        .get_or_insert_with(MemoryReport::default)
                        .total_bytes = Some(total);
                } else if let Some(msg) = b.set_total(total) {
                    b.module.warnings.push(Warning {
                        file,
                        line: line_no,
                        message: msg,
                    });
                }
            }
            return;
        }
        if self.top_header(line, builders) {
            return;
        }
        self.malformed(builders, "`Used values:` after `Total bytes used:`")
    }

    fn used_values(&mut self, line: &[u8], builders: &mut Vec<Builder>) {
        let state = self.used.as_ref().map_or(UsedState::Idle, |u| u.state);
        match line.first() {
            Some(b'<') if state == UsedState::Idle => return self.used_header(line, builders),
            Some(b' ') => {}
            None if state == UsedState::Idle => return, // The blank line(s) after the section.
            _ => {
                if state == UsedState::Idle && self.top_header(line, builders) {
                    return;
                }
                return self.malformed(builders, "a `Used values` entry line");
            }
        }
        if let Some(rest) = line.strip_prefix(b" from instruction:") {
            if !matches!(state, UsedState::Uses | UsedState::UsesUnknown) {
                return self.malformed(builders, "` uses:` before ` from instruction:`");
            }
            let rest = rest.strip_prefix(b" ").unwrap_or(rest);
            let (instr_text, glued) = lex::split_glued(rest);
            self.close_used_entry(instr_text, builders);
            if let Some(v) = glued {
                self.open_used_entry(v.id, v.name);
            }
            return;
        }
        match (state, line) {
            (UsedState::Header, b" positions:") => self.set_used_state(UsedState::Positions),
            (UsedState::Positions, b" uses:") => {
                self.scratch.push_str(USES_MARK);
                self.scratch.push('\n');
                self.set_used_state(UsedState::Uses);
            }
            (UsedState::Positions, b" uses are not initialized yet.") => {
                self.set_used_state(UsedState::UsesUnknown)
            }
            (UsedState::Positions, l) if used_values::is_position(l) => self.push_used_line(l),
            (UsedState::Uses, b"  (none)") => {}
            (UsedState::Uses, l) if used_values::is_use(l) => self.push_used_line(l),
            _ => self.malformed(
                builders,
                match state {
                    UsedState::Header => "` positions:`",
                    UsedState::Positions => "a position `  NAME[ {INDEX}]` or ` uses:`",
                    UsedState::Uses => {
                        "a use `  NAME, operand N[ {INDEX}]` or ` from instruction:`"
                    }
                    UsedState::UsesUnknown => "` from instruction:`",
                    UsedState::Idle => "`<ID NAME>`",
                },
            ),
        }
    }

    fn set_used_state(&mut self, state: UsedState) {
        if let Some(u) = self.used.as_mut() {
            u.state = state;
        }
    }

    fn push_used_line(&mut self, line: &[u8]) {
        self.scratch.push_str(&text(&line[2..]));
        self.scratch.push('\n');
    }

    fn used_header(&mut self, line: &[u8], builders: &mut [Builder]) {
        match lex::all(lex::short_value(line)) {
            Some(v) => self.open_used_entry(v.id, v.name),
            None => self.malformed(builders, "`<ID NAME[{INDEX}][ (phi)][ @COLOR]>`"),
        }
    }

    fn open_used_entry(&mut self, id: u32, name: &[u8]) {
        if self.module.is_none() {
            return;
        }
        let known = self.previous_used_name == name;
        if !known {
            self.previous_used_name.clear();
            self.previous_used_name.extend_from_slice(name);
        }
        self.scratch.clear();
        self.used = Some(UsedEntry {
            id,
            known,
            line: self.line_no,
            state: UsedState::Header,
        });
    }

    fn close_used_entry(&mut self, instr_text: &[u8], builders: &mut [Builder]) {
        let Some(u) = self.used.take() else { return };
        let Some(b) = self.module.and_then(|m| builders.get_mut(m)) else {
            return;
        };
        let uses = b.module.uses_strings.push(&self.scratch);
        b.used.push((u.id, uses));
        self.scratch.clear();
        if !u.known {
            if let Some(info) = used_values::instruction(instr_text) {
                b.add_instruction_info(u.id, &info);
            }
        }
    }

    fn live_range(&mut self, line: &[u8], builders: &mut Vec<Builder>) {
        if line.starts_with(b"    ") {
            return self.live_range_entry(line, builders);
        }
        let section = if line == b"  InstructionSequence:" {
            Section::Sequence
        } else if line == b"  BufferLiveRange:" {
            Section::Ranges
        } else if let Some(t) = live_range::peak_header(line) {
            if let Some(b) = self.module(builders) {
                b.schedule().peak = Some(XlaPeak {
                    time: t,
                    entries: Vec::new(),
                });
            }
            self.cumulative = 0;
            Section::Peak
        } else if line == b"  Peak memory could not be determined due to unbounded dynamic shape." {
            if let Some(b) = self.module(builders) {
                b.schedule().peak_undetermined = true;
            }
            Section::PeakUndetermined
        } else if let Some(total) = live_range::stack_header(line) {
            if let Some(b) = self.module(builders) {
                b.module.stack_trace_total = Some(total);
            }
            self.stack_path.clear();
            Section::StackTrace
        } else if line.is_empty() {
            return;
        } else {
            if self.top_header(line, builders) {
                return;
            }
            return self.malformed(builders, "an HloLiveRange line");
        };
        if section != Section::Sequence && self.section == Section::Sequence {
            self.check_sequence(builders);
        }
        self.section = section;
    }

    fn check_sequence(&mut self, builders: &mut [Builder]) {
        let Some(b) = self.module(builders) else {
            return;
        };
        let s = b.schedule();
        if s.sequence.len() as u64 != u64::from(s.max) {
            let msg = format!(
                "InstructionSequence has {} instructions but HloLiveRange says max {}",
                s.sequence.len(),
                s.max
            );
            self.warn(builders, msg);
        }
    }

    fn live_range_entry(&mut self, line: &[u8], builders: &mut [Builder]) {
        let line_no = self.line_no;
        match self.section {
            Section::Sequence => match live_range::sequence_entry(line) {
                Some((i, name)) => {
                    let Some(b) = self.module(builders) else {
                        return;
                    };
                    let id = b.instr(name);
                    let seq = &mut b.schedule().sequence;
                    let expected = seq.len();
                    seq.push(id);
                    if i as usize != expected {
                        self.warn(
                            builders,
                            format!("InstructionSequence entry {i} where {expected} was expected"),
                        );
                    }
                }
                None => self.malformed(builders, "`    N:NAME`"),
            },
            Section::Ranges => match live_range::range_entry(line) {
                Some((name, index, start, end)) => {
                    let Some(b) = self.module(builders) else {
                        return;
                    };
                    let id = b.instr(name);
                    let index = b.module.strings.intern_bytes(index);
                    b.ranges
                        .push((id, index, LiveRange { start, end }, line_no));
                    if start > end {
                        self.warn(
                            builders,
                            format!("live range {start}-{end} ends before it starts"),
                        );
                    }
                }
                None => self.malformed(builders, "`    NAME{INDEX}:START-END`"),
            },
            Section::Peak => match live_range::peak_entry(line) {
                Some((name, index, bytes, cumulative)) => {
                    self.cumulative = self.cumulative.saturating_add(bytes);
                    let running = self.cumulative;
                    let Some(b) = self.module(builders) else {
                        return;
                    };
                    let instruction = b.instr(name);
                    let index = b.module.strings.intern_bytes(index);
                    if let Some(p) = b.schedule().peak.as_mut() {
                        p.entries.push(PeakEntry {
                            instruction,
                            index,
                            bytes,
                        });
                    }
                    if cumulative.is_some_and(|c| c != running) {
                        self.warn(
                            builders,
                            format!(
                                "cumulative bytes {} where the entries add up to {running}",
                                cumulative.unwrap_or(0)
                            ),
                        );
                    }
                }
                None => {
                    self.malformed(builders, "`    NAME{INDEX}: N bytes (cumulative: N bytes)`")
                }
            },
            Section::StackTrace => match live_range::stack_line(line) {
                Some(l) => {
                    let Some(b) = self.module(builders) else {
                        return;
                    };
                    let depth = l.depth as usize;
                    if depth > self.stack_path.len() {
                        return self.malformed(builders, "a tree line one level below its parent");
                    }
                    let name = b.module.strings.intern_bytes(l.name);
                    self.stack_path.truncate(depth);
                    self.stack_path.push(b.module.stack_trace.len());
                    b.module.stack_trace.push(StackNode {
                        depth: l.depth,
                        name,
                        total: l.total,
                        current: l.current,
                        remaining: l.remaining,
                    });
                }
                None => self.malformed(
                    builders,
                    "a tree line `NAME (P%, total: N bytes, current: N bytes, remaining: N bytes)`",
                ),
            },
            _ => self.malformed(
                builders,
                "a section header (`  InstructionSequence:`, `  BufferLiveRange:`, ...)",
            ),
        }
    }

    fn report(&mut self, line: &[u8], builders: &mut Vec<Builder>) {
        if self.module.is_none() {
            if line.is_empty() {
                return;
            }
            self.enter(builders, Part::Report);
        }
        match report::report_line(line) {
            Some(r) => {
                let Some(b) = self.module(builders) else {
                    return;
                };
                let s = &mut b.module.strings;
                let rep = b
                    .module
                    .memory_report
                    .get_or_insert_with(MemoryReport::default);
                match r {
                    report::ReportLine::TotalUsed(n) => rep.total_bytes = Some(n),
                    report::ReportLine::MemorySpace(name, color) => {
                        let name = s.intern_bytes(name);
                        rep.spaces.push(ReportSpace {
                            name,
                            color,
                            total_bytes: 0,
                        });
                    }
                    report::ReportLine::SpaceTotal(n) => {
                        if let Some(sp) = rep.spaces.last_mut() {
                            sp.total_bytes = n;
                        }
                    }
                    report::ReportLine::Known => {}
                }
            }
            None => {
                if !self.top_header(line, builders) {
                    self.malformed(builders, "a line of the memory-usage report");
                }
            }
        }
    }
}
