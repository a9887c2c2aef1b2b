//! One file being read: its lines routed to section readers. Follows the `*** Begin/End ***`
//! wrappers of stdout dumps (each wrapped file is a virtual file of its own), chooses the
//! section by its header line, routes each section to its module by file name (so split
//! files join), and turns the lines a reader gives back into warnings.

use super::dump::assemble::Builder;
use super::dump::buffer_assignment::Allocations;
use super::dump::headers::{header_section, is_wrapper, Section};
use super::dump::lex::text;
use super::dump::live_range::LiveRanges;
use super::dump::report::Report;
use super::dump::section::{Cx, Flow, Notes, SectionReader};
use super::dump::used_values::{self, UsedValues};
use super::hlo::{self, HloRead, HloReader};
use super::input::Input;
use super::names;
use super::oom::search::{OomFile, OomSearch};
use super::{DeferredUses, Part};

/// Lines read before the first section header before a file is judged not a dump.
const MAX_PREAMBLE_LINES: u64 = 1000;

/// One reader per section.
#[derive(Default)]
struct Readers {
    allocations: Allocations,
    used_values: UsedValues,
    live_range: LiveRanges,
    report: Report,
}

impl Readers {
    fn get(&mut self, section: Section) -> Option<&mut dyn SectionReader> {
        match section {
            Section::Preamble | Section::Skip | Section::Total(_) => None,
            Section::Allocations => Some(&mut self.allocations),
            Section::UsedValues => Some(&mut self.used_values),
            Section::LiveRange => Some(&mut self.live_range),
            Section::Report => Some(&mut self.report),
        }
    }
}

/// A file being read: its bytes ([`Input`]) and where its lines go: to the dump's
/// sections, and while no section header is seen, to the search for an OOM message.
pub(super) struct File {
    input: Input,
    lines: Lines,
    oom: OomSearch,
    /// The file's first two bytes (gzip or text).
    head: Vec<u8>,
    /// Bytes fed so far (or, after a [`File::jump`], the offset of the next byte to feed).
    fed: u64,
    /// An HLO module text (its first line `HloModule …`) goes to its own reader.
    hlo: Hlo,
    /// Only searched for an out-of-memory message ([`super::Loader::search_only`]).
    pub search_only: bool,
}

/// Whether a file is an HLO module text, told by its first line.
enum Hlo {
    Undecided,
    No,
    Reading(Box<HloReader>),
}

impl File {
    /// A file named `name`; with `defer`, the bodies of its `Used values` sections are
    /// skipped and listed ([`File::finish`]) when it is plain text.
    pub fn new(name: &str, defer: bool) -> Self {
        let mut lines = Lines::new(name);
        lines.defer = defer;
        File {
            input: Input::new(),
            lines,
            oom: OomSearch::default(),
            head: Vec::new(),
            fed: 0,
            hlo: Hlo::Undecided,
            search_only: false,
        }
    }

    /// The offset of the `Used values` body being skipped, while one is.
    pub fn skipping(&self) -> Option<u64> {
        self.lines.skip.as_ref().map(|s| s.start)
    }

    /// The `Used values` bodies of this file skipped so far.
    pub fn deferred(&self) -> &[DeferredUses] {
        &self.lines.deferred
    }

    /// While skipping a `Used values` body: the bytes fed next start at `to`, a line that
    /// opens another section (or the end of the file, `at_end`), found by
    /// [`super::last_header`]; the body is `skipping()..to`, its lines not
    /// counted. False (and nothing changes) when not skipping or `to` was fed already.
    pub fn jump(&mut self, to: u64, at_end: bool, builders: &mut [Builder]) -> bool {
        if self.lines.skip.is_none() || to < self.fed || !self.lines.plain {
            return false;
        }
        self.input.discard_carry();
        self.lines.offset = to;
        self.lines.end_skip(builders, at_end);
        if let Some(d) = self.lines.deferred.last_mut() {
            d.jumped = true;
            d.lines = 0;
        }
        self.fed = to;
        true
    }

    pub fn feed(&mut self, chunk: &[u8], builders: &mut Vec<Builder>) {
        self.fed += chunk.len() as u64;
        if self.head.len() < 2 {
            let n = chunk.len().min(2 - self.head.len());
            self.head.extend_from_slice(&chunk[..n]);
            // Byte offsets are the text's only in a plain-text file.
            self.lines.plain = self.head.len() == 2 && !super::is_gzip(&self.head);
        }
        let (lines, oom, hlo) = (&mut self.lines, &mut self.oom, &mut self.hlo);
        self.input.feed(chunk, &mut |line: &[u8]| {
            both(lines, oom, hlo, line, builders)
        });
    }

    /// The end of the file; the `Used values` bodies it skipped go to `deferred`, an HLO
    /// text read to `hlos`. True when it was only searched and held nothing: skipped.
    pub fn finish(
        mut self,
        builders: &mut Vec<Builder>,
        errors: &mut Vec<String>,
        ooms: &mut Vec<OomFile>,
        deferred: &mut Vec<DeferredUses>,
        hlos: &mut Vec<HloRead>,
    ) -> bool {
        let (lines, oom, hlo) = (&mut self.lines, &mut self.oom, &mut self.hlo);
        if let Some(last) = self
            .input
            .finish(&mut |line: &[u8]| both(lines, oom, hlo, line, builders))
        {
            lines.last_line_open = true;
            both(lines, oom, hlo, &last, builders);
            oom.unterminated();
        }
        if let Hlo::Reading(reader) = std::mem::replace(&mut self.hlo, Hlo::No) {
            let mut read = reader.finish();
            if self.input.gz_failed() {
                read.warnings.push(crate::model::Warning {
                    file: self.lines.notes.file.clone(),
                    line: 0,
                    message: "the gzip data is corrupt or cut short; what came before was read"
                        .into(),
                });
            }
            hlos.push(read);
            return false;
        }
        if self.input.gz_failed() {
            lines.warn_file(
                builders,
                "the gzip data is corrupt or cut short; what came before was read".into(),
            );
        }
        lines.end_skip(builders, true);
        lines.end_virtual_file(builders);
        deferred.append(&mut lines.deferred);
        if !lines.recognised {
            match std::mem::take(&mut self.oom).finish(&lines.notes.file) {
                Ok(found) => ooms.push(found),
                Err(_) if self.search_only => return true,
                Err(no_oom) => errors.push(self.input.not_a_dump(&lines.notes.file, no_oom)),
            }
        } else if lines.notes.suppressed > 0 {
            let msg = format!(
                "{} more warnings in this file were not listed",
                lines.notes.suppressed
            );
            lines.notes.suppressed = 0;
            lines.warn_file(builders, msg);
        }
        false
    }
}

/// One line to the dump reader (until it gives up on the file) and to the OOM search
/// (until a section header is seen), or, in an HLO module text, to its reader; whether
/// either wants more.
fn both(
    lines: &mut Lines,
    oom: &mut OomSearch,
    hlo: &mut Hlo,
    line: &[u8],
    builders: &mut Vec<Builder>,
) -> bool {
    match hlo {
        Hlo::Reading(reader) => {
            reader.line(line);
            return true;
        }
        Hlo::Undecided if hlo::is_hlo_start(line) => {
            let mut reader = HloReader::new(&lines.name);
            reader.line(line);
            *hlo = Hlo::Reading(Box::new(reader));
            return true;
        }
        Hlo::Undecided => *hlo = Hlo::No,
        Hlo::No => {}
    }
    let dump = !lines.given_up && lines.line(line, builders);
    oom.line(line, lines.recognised) || dump
}

/// The lines of a file: which module and section they go to.
struct Lines {
    notes: Notes,
    /// The name the current module is keyed on (the file's, or a `*** Begin` name).
    virtual_name: String,
    /// The file's name as given (a path is fine).
    name: String,
    /// Position in `builders` of the current module, once a section header was seen.
    module: Option<usize>,
    line_no: u64,
    /// `true` while the last line handed over had no `\n` (only at the end of a file).
    last_line_open: bool,
    section: Section,
    readers: Readers,
    /// A section header was recognised somewhere in the physical file.
    recognised: bool,
    /// Preamble lines skipped before the current virtual file's first header.
    preamble_lines: u64,
    given_up: bool,
    /// Skip and list `Used values` bodies (in a plain-text file).
    defer: bool,
    plain: bool,
    /// Bytes of the file's lines handed over so far (their `\n`s included).
    offset: u64,
    /// The `Used values` body being skipped.
    skip: Option<Skipping>,
    deferred: Vec<DeferredUses>,
}

/// Where a skipped `Used values` body started.
struct Skipping {
    start: u64,
    first_line: u64,
    module: usize,
}

impl Lines {
    fn new(name: &str) -> Self {
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name).to_string();
        let section = if names::is_report(&base) {
            Section::Report
        } else {
            Section::Preamble
        };
        Lines {
            notes: Notes::new(base.clone()),
            virtual_name: base,
            name: name.to_string(),
            module: None,
            line_no: 0,
            last_line_open: false,
            section,
            readers: Readers::default(),
            recognised: false,
            preamble_lines: 0,
            given_up: false,
            defer: false,
            plain: false,
            offset: 0,
            skip: None,
            deferred: Vec::new(),
        }
    }

    /// One line, without its `\n`; false once the file is given up on.
    fn line(&mut self, raw: &[u8], builders: &mut Vec<Builder>) -> bool {
        self.line_no += 1;
        let with_end = raw.len() as u64 + u64::from(!self.last_line_open);
        self.offset += with_end;
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if self.skip.is_some() {
            if used_values::may_be_body(line) {
                return true;
            }
            // A header or a wrapper: the body ends before it.
            self.offset -= with_end;
            self.line_no -= 1;
            self.end_skip(builders, false);
            self.offset += with_end;
            self.line_no += 1;
        }
        if is_wrapper(line) && self.wrapper(line, builders) {
            return true;
        }
        match self.section {
            Section::Skip => return true,
            Section::Preamble => {
                self.preamble(line, builders);
                return !self.given_up;
            }
            Section::Report if self.module.is_none() => {
                // A report file's first line claims its module.
                if line.is_empty() {
                    return true;
                }
                self.enter(builders, Part::Report);
            }
            _ => {}
        }
        let mut cx = Cx {
            module: self.module.and_then(|m| builders.get_mut(m)),
            notes: &mut self.notes,
            line_no: self.line_no,
        };
        let r = &mut self.readers;
        let flow = match self.section {
            Section::Skip | Section::Preamble => Flow::Read,
            Section::Total(_) if line.is_empty() => Flow::Read,
            Section::Total(_) => Flow::Other("`Used values:` after `Total bytes used:`"),
            Section::Allocations => r.allocations.line(line, &mut cx),
            Section::UsedValues => r.used_values.line(line, &mut cx),
            Section::LiveRange => r.live_range.line(line, &mut cx),
            Section::Report => r.report.line(line, &mut cx),
        };
        match flow {
            Flow::Read => {}
            Flow::Other(expected) => {
                if !self.top_header(line, builders) {
                    self.malformed(builders, expected);
                }
            }
            Flow::Malformed(expected) => self.malformed(builders, expected),
        }
        true
    }

    /// Stdout dumps: `*** Begin NAME ***` ... `*** End NAME ***`. Returns whether `line`
    /// was one of those.
    fn wrapper(&mut self, line: &[u8], builders: &mut [Builder]) -> bool {
        if let Some(name) = line
            .strip_prefix(b"*** Begin ")
            .and_then(|l| l.strip_suffix(b" ***"))
        {
            self.end_virtual_file(builders);
            self.virtual_name = text(name).into_owned();
            self.section = if !names::is_ours(&self.virtual_name) {
                Section::Skip
            } else if names::is_report(&self.virtual_name) {
                Section::Report
            } else {
                Section::Preamble
            };
            return true;
        }
        if line.starts_with(b"*** End ") && line.ends_with(b" ***") {
            self.end_virtual_file(builders);
            self.section = Section::Skip;
            return true;
        }
        false
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
        let (section, part) = match header_section(line) {
            None => return false,
            Some(Section::Total(n)) => {
                self.end_section(builders);
                self.section = Section::Total(n);
                return true;
            }
            Some(Section::Allocations) => (Section::Allocations, Part::Allocations),
            Some(Section::UsedValues) => (Section::UsedValues, Part::Values),
            Some(Section::LiveRange) => (Section::LiveRange, Part::LiveRange),
            Some(_) => (Section::Report, Part::Report),
        };
        let total = match self.section {
            Section::Total(n) => Some(n),
            _ => None,
        };
        self.end_section(builders);
        self.enter(builders, part);
        self.section = section;
        if let Some(reader) = self.readers.get(section) {
            let mut cx = Cx {
                module: self.module.and_then(|m| builders.get_mut(m)),
                notes: &mut self.notes,
                line_no: self.line_no,
            };
            reader.start(line, total, &mut cx);
        }
        if section == Section::UsedValues && self.defer && self.plain {
            if let Some(module) = self.module {
                self.skip = Some(Skipping {
                    start: self.offset,
                    first_line: self.line_no + 1,
                    module,
                });
            }
        }
        true
    }

    /// The skipped body ends before the line being read (or at the end of the file): it
    /// is listed for reading later ([`DeferredUses`]).
    fn end_skip(&mut self, builders: &mut [Builder], at_file_end: bool) {
        let Some(skip) = self.skip.take() else {
            return;
        };
        let Some(b) = builders.get_mut(skip.module) else {
            return;
        };
        b.deferred = true;
        self.deferred.push(DeferredUses {
            file: self.name.clone(),
            module: b.module.name.clone(),
            bytes: skip.start..self.offset,
            first_line: skip.first_line,
            lines: self.line_no + 1 - skip.first_line,
            at_file_end,
            jumped: false,
            parts: b.part_files(),
        });
    }

    /// The current section ends: its reader reports what it left open.
    fn end_section_reader(&mut self, at_file_end: bool, builders: &mut [Builder]) {
        let mut cx = Cx {
            module: self.module.and_then(|m| builders.get_mut(m)),
            notes: &mut self.notes,
            line_no: self.line_no,
        };
        match self.readers.get(self.section) {
            Some(reader) => reader.end(at_file_end, &mut cx),
            None if at_file_end && matches!(self.section, Section::Total(_)) => {
                cx.warn("the Used values section is missing after `Total bytes used`".to_string())
            }
            None => {}
        }
    }

    /// Leaving a section for another.
    fn end_section(&mut self, builders: &mut [Builder]) {
        self.end_section_reader(false, builders);
    }

    /// End of a physical file or of a `*** Begin ***` section: what was left open.
    fn end_virtual_file(&mut self, builders: &mut [Builder]) {
        self.end_section_reader(true, builders);
        self.section = Section::Preamble;
        self.module = None;
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
            self.warn_file(builders, msg);
        } else {
            self.attach(builders, part);
        }
        self.recognised = true;
    }

    fn attach(&mut self, builders: &mut Vec<Builder>, part: Part) {
        let file_key = format!("{}\u{0}{}", self.notes.file, self.virtual_name);
        if let Some(b) = self.module.and_then(|m| builders.get_mut(m)) {
            if b.claim(part, &file_key) {
                b.module.warnings.append(&mut self.notes.pending);
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
        builders[idx]
            .module
            .warnings
            .append(&mut self.notes.pending);
        self.module = Some(idx);
    }

    /// The section's name in warnings.
    fn label(&mut self) -> &'static str {
        match self.section {
            Section::Preamble | Section::Skip => "file header",
            Section::Total(_) => "Total bytes used",
            s => self.readers.get(s).map_or("", |r| r.label()),
        }
    }

    /// A line that fits no rule of its section.
    fn malformed(&mut self, builders: &mut [Builder], expected: &str) {
        let section = self.label();
        let msg = if self.last_line_open {
            format!("the file ends in the middle of this line (in the {section} section)")
        } else {
            format!("malformed line in the {section} section: expected {expected}")
        };
        let line = self.line_no;
        self.warn_at(builders, line, msg);
    }

    /// A warning about the whole file.
    fn warn_file(&mut self, builders: &mut [Builder], message: String) {
        self.warn_at(builders, 0, message);
    }

    fn warn_at(&mut self, builders: &mut [Builder], line: u64, message: String) {
        let module = self.module.and_then(|m| builders.get_mut(m));
        self.notes.warn(module, line, message);
    }
}
