//! Parsing: bytes of dump files → [`Module`]s.
//!
//! Owns: reading. [`Loader`] takes files one after another, in chunks of any size (so a
//! 1 GB dump is never one string). [`input`] un-gzips and cuts lines; [`file`] follows the
//! `*** Begin/End ***` wrappers of stdout dumps, routes every file to its module by name
//! ([`names`]: so the three files of new XLA's split layout become one module) and to its
//! reader by its header line, never by position. A folder per reader: [`dump`], the dump's
//! sections (one reader per section owning its grammar and its actions), assembled and
//! joined; [`later`], what is read behind the diagram (the `Used values` bodies left for
//! later, the HLO texts) and the whole read as one machine with no I/O, which every driver
//! fetches bytes for; [`hlo`], the HLO module text; [`oom`], XLA's out-of-memory messages
//! in a log (`oom::search` keeps a file's text for that search, up to a cap).
//! A malformed line becomes a [`Warning`](crate::model::Warning) with its line number and
//! reading goes on. A file with no section header is searched for out-of-memory messages;
//! those found are in [`Load::oom`], and a file with neither becomes one sentence in
//! [`Load::errors`]. A file with a section header is read as a dump only, whatever else it
//! holds. Nothing here panics on any input.

mod dump;
mod file;
pub mod hlo;
mod input;
mod later;
mod names;
pub mod oom;

use crate::model::Module;
use dump::assemble::Builder;
use dump::join;
use file::File;

pub use dump::lex::numbered_name;
pub use input::is_gzip;
pub use later::{
    complete, complete_through, cut, join, last_header, lines_known, route, Ask, Behind, BehindLane,
    Bodies, BodyEnd, BodyStart, Completing, DeferredUses, FirstLane, Found, Handoff, Input, Job,
    Lane, Later, Next, Note, Piece, PieceLane, PieceRead, PieceReader, PieceWire, Post, Read, Reading, Unpack,
    UsedPart,
};
pub use names::{
    folder_plan, folder_selection, hlo_module_names, is_before_text, is_error_text, is_hlo_text, is_ours,
    is_other_text, module_name, skipped_sentence, FolderPlan, MAX_SEARCHED_TEXT,
};
pub use oom::search as oom_search;
pub use oom::search::OomFile;

/// The result of reading a set of files.
#[derive(Default)]
pub struct Load {
    /// Every module read, in the order first seen.
    pub modules: Vec<Module>,
    /// The out-of-memory messages of every file that is not a dump, in the order read.
    pub oom: Vec<OomFile>,
    /// One sentence per input that is neither a dump nor holds an out-of-memory message.
    pub errors: Vec<String>,
    /// The `Used values` bodies left for later ([`Loader::defer_uses`]), in file order.
    pub deferred: Vec<DeferredUses>,
    /// Files of a dump folder skipped as XLA's other output ([`FolderPlan::skipped`],
    /// counted by [`Loader::skipped_files`]): said once, never an error.
    pub skipped: usize,
}

/// Streaming reader: files go in one after another, in chunks of any size.
#[derive(Default)]
pub struct Loader {
    builders: Vec<Builder>,
    errors: Vec<String>,
    oom: Vec<OomFile>,
    file: Option<File>,
    defer: bool,
    deferred: Vec<DeferredUses>,
    hlo: Vec<hlo::HloRead>,
    skipped: usize,
}

impl Loader {
    pub fn new() -> Self {
        Loader::default()
    }

    /// From the next file on, the bodies of `Used values` sections in plain-text files are
    /// skipped and listed in [`Load::deferred`], to be read by a [`Behind`].
    pub fn defer_uses(&mut self, on: bool) {
        self.defer = on;
    }

    /// Starts a file. `name` is its file name (a path is fine); it names the module.
    pub fn begin_file(&mut self, name: &str) {
        self.end_file();
        self.file = Some(File::new(name, self.defer));
    }

    /// More bytes of the current file. Gzip is recognised by its magic bytes.
    pub fn feed(&mut self, chunk: &[u8]) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        file.feed(chunk, &mut self.builders);
    }

    /// The offset in the current file of the `Used values` body being skipped, while one is
    /// ([`Loader::defer_uses`]).
    pub fn skipping(&self) -> Option<u64> {
        self.file.as_ref().and_then(File::skipping)
    }

    /// The `Used values` bodies skipped so far ([`Loader::defer_uses`]), in file order:
    /// those of the files ended, then the current file's. An entry is listed once its body
    /// has ended (at the next section's header, the file's end, or a [`Loader::jump`]) and
    /// is then as [`Load::deferred`] will list it.
    pub fn deferred(&self) -> impl Iterator<Item = &DeferredUses> {
        let current = self.file.as_ref().map(File::deferred).unwrap_or_default();
        self.deferred.iter().chain(current)
    }

    /// While [`Loader::skipping`]: the bytes fed next start at offset `to` of the file, the
    /// start of a line that opens another section (or its end, `at_end`), so that the body's
    /// bytes need not be fed at all; its lines are then not counted, and completing refuses
    /// when a warning after it has a line number ([`lines_known`]). False (and
    /// nothing changes) when not skipping or `to` was fed already.
    pub fn jump(&mut self, to: u64, at_end: bool) -> bool {
        match self.file.as_mut() {
            Some(file) => file.jump(to, at_end, &mut self.builders),
            None => false,
        }
    }

    /// Whether the current file is one of a folder's other texts ([`FolderPlan::texts`]),
    /// read only for an out-of-memory message: with none (and no dump section), it is
    /// skipped and counted ([`Load::skipped`]) rather than an error.
    pub fn search_only(&mut self, only: bool) {
        if let Some(file) = self.file.as_mut() {
            file.search_only = only;
        }
    }

    /// Ends the current file.
    pub fn end_file(&mut self) {
        if let Some(file) = self.file.take() {
            self.skipped += usize::from(file.finish(
                &mut self.builders,
                &mut self.errors,
                &mut self.oom,
                &mut self.deferred,
                &mut self.hlo,
            ));
        }
    }

    /// `n` more files of a dump folder were skipped (XLA's other output, [`FolderPlan`]).
    pub fn skipped_files(&mut self, n: usize) {
        self.skipped += n;
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
            hlo: self.hlo,
            load: Load {
                modules: Vec::new(),
                oom: self.oom,
                errors: self.errors,
                deferred: self.deferred,
                skipped: self.skipped,
            },
        }
    }
}

/// Joining and checking what a [`Loader`] read, in pieces, so that the browser can paint
/// between them (a 1 GB dump's join takes a quarter of a second in wasm).
pub struct Finishing {
    builders: std::vec::IntoIter<Builder>,
    join: Option<join::Join>,
    /// HLO texts read, joined to their modules once every module is ([`hlo::join_texts`]).
    hlo: Vec<hlo::HloRead>,
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
            match self.builders.next().map(join::Join::new) {
                None => return true,
                Some(Ok(join)) => self.join = Some(join),
                Some(Err(e)) => self.load.errors.push(e),
            }
        }
    }

    /// What was read (every module once [`Finishing::step`] said true), the HLO texts
    /// joined to their modules.
    pub fn into_load(mut self) -> Load {
        let load = &mut self.load;
        let mut modules: Vec<&mut Module> = load.modules.iter_mut().collect();
        let reads = std::mem::take(&mut self.hlo);
        hlo::join_texts(&mut modules, reads, &mut load.errors);
        self.load
    }
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

/// Which file of a module a section belongs to (a module gets each part from one file).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Part {
    Allocations,
    Values,
    LiveRange,
    Report,
}
