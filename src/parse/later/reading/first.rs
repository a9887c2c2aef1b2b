//! The first read's lane: each file fed forward to one [`Loader`]; with `defer`, a
//! `Used values` body being skipped is jumped over (its end looked for from the file's end,
//! [`BodyEnd`], once per file, or known from the body read ahead, [`Note::Bounds`]). Before
//! any file is read forward, each file's first bytes are looked at: a file whose first
//! line is `HloModule` is set apart for the read behind, which can then read it meanwhile.
//!
//! Owns: the order of the first read's byte ranges, and what of them the loader is fed.

use super::{Input, Next, Note};
use crate::parse::hlo::is_hlo_start;
use crate::parse::{Ask, BodyEnd, Loader};
use std::ops::Range;

/// Bytes of a file looked at before it is known whether it is an HLO text.
const HEAD: u64 = 10;

enum Step {
    /// The files' first bytes looked at, one file after another: those of the file
    /// [`FirstLane::file`] being gathered.
    Heads(Vec<u8>),
    /// The next file is to start.
    Idle,
    /// The file fed forward from [`FirstLane::at`].
    Forward,
    /// Where the body being skipped ends, looked for from the file's end: the slice asked
    /// for being gathered.
    Search(BodyEnd, Vec<u8>),
}

/// The first read (see the module's doc).
pub struct FirstLane {
    files: Vec<Input>,
    /// The file being read: its place in `files`.
    file: usize,
    loader: Loader,
    defer: bool,
    chunk: u64,
    step: Step,
    /// Offset in the current file of the next byte the loader takes.
    at: u64,
    /// A body's end was looked for in the current file already.
    looked: bool,
    /// Of each file whose first bytes were looked at, whether it is set apart.
    apart: Vec<bool>,
    /// The bytes asked for last, how many of them came, and whether the rest is unwanted.
    asked: Range<u64>,
    came: u64,
    unwanted: bool,
    /// The first file's first body as read ahead ([`Note::Bounds`]).
    known: Option<(u64, u64, bool)>,
    /// Notes for the read behind, and how many bodies the loader listed went already.
    mail: Vec<Note>,
    sent: usize,
    failed: Option<String>,
    over: bool,
}

impl FirstLane {
    pub(super) fn new(files: Vec<Input>, chunk: u64, defer: bool) -> FirstLane {
        let mut loader = Loader::new();
        loader.defer_uses(defer);
        FirstLane {
            files,
            file: 0,
            loader,
            defer,
            chunk: chunk.max(1),
            step: if defer { Step::Heads(Vec::new()) } else { Step::Idle },
            at: 0,
            looked: false,
            apart: Vec::new(),
            asked: 0..0,
            came: 0,
            unwanted: false,
            known: None,
            mail: Vec::new(),
            sent: 0,
            failed: None,
            over: false,
        }
    }

    /// The bytes to fetch next, or done (never waits).
    pub fn next(&mut self) -> Next {
        if !self.unwanted && self.came < self.asked.end - self.asked.start {
            self.fail("the bytes asked for were cut short".into());
        }
        (self.came, self.unwanted) = (0, false);
        if self.failed.is_some() {
            return self.over();
        }
        loop {
            let size = self.files.get(self.file).map_or(0, |f| f.size);
            match &mut self.step {
                Step::Heads(head) => {
                    if self.asked.end > 0 {
                        // The current file's head came.
                        let hlo = is_hlo_start(head);
                        head.clear();
                        self.set_apart(hlo);
                        continue;
                    }
                    self.file = self.apart.len();
                    match self.files.get(self.file).map(|f| f.size) {
                        None => (self.file, self.step) = (0, Step::Idle),
                        Some(0) => self.apart.push(false),
                        Some(size) => return self.ask(0..HEAD.min(size)),
                    }
                }
                Step::Search(look, _) => match look.next() {
                    Some(range) => return self.ask(range),
                    None => {
                        if let Some((to, at_end)) = look.answer() {
                            self.jump(to, at_end);
                        }
                        self.step = Step::Forward;
                    }
                },
                Step::Forward if self.at < size => {
                    let end = size.min(self.at.saturating_add(self.chunk));
                    return self.ask(self.at..end);
                }
                Step::Forward => {
                    self.loader.end_file();
                    self.send_new();
                    self.file += 1;
                    self.step = Step::Idle;
                }
                Step::Idle if self.file >= self.files.len() => return self.over(),
                Step::Idle if self.apart.get(self.file) == Some(&true) => self.file += 1,
                Step::Idle => {
                    let input = &self.files[self.file];
                    self.loader.begin_file(&input.name);
                    self.loader.search_only(input.searched);
                    (self.at, self.looked, self.step) = (0, false, Step::Forward);
                }
            }
        }
    }

    /// The current file's head is looked at: an HLO text (`hlo`) is set apart.
    fn set_apart(&mut self, hlo: bool) {
        if hlo {
            let Input { name, size, .. } = self.files[self.file].clone();
            self.mail.push(Note::Hlo { file: name, size });
        }
        self.apart.push(hlo);
        self.asked = 0..0;
    }

    fn ask(&mut self, bytes: Range<u64>) -> Next {
        self.asked = bytes.clone();
        let file = self.files[self.file].name.clone();
        Next::Fetch(Ask { file, bytes })
    }

    fn over(&mut self) -> Next {
        if !std::mem::replace(&mut self.over, true) {
            self.mail.push(Note::Over);
        }
        Next::Done
    }

    /// More of the bytes asked for last, in order.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.unwanted || self.failed.is_some() {
            return;
        }
        self.came += bytes.len() as u64;
        match &mut self.step {
            Step::Heads(head) => head.extend_from_slice(bytes),
            Step::Forward => self.forward(bytes),
            Step::Search(look, slice) => {
                slice.extend_from_slice(bytes);
                if slice.len() as u64 >= self.asked.end - self.asked.start {
                    look.look(slice);
                    slice.clear();
                }
            }
            Step::Idle => {}
        }
    }

    /// Bytes of the file fed forward; once a body is being skipped, the rest asked for is
    /// unwanted: the lane jumps over the body, or looks for its end first.
    fn forward(&mut self, bytes: &[u8]) {
        self.loader.feed(bytes);
        self.at += bytes.len() as u64;
        let skipping = self.loader.skipping();
        if self.defer && !self.looked && skipping.is_some() {
            // Once per file: a second body's end is not the file's last header's.
            (self.looked, self.unwanted) = (true, true);
            match self.known.filter(|&(from, ..)| Some(from) == skipping) {
                Some((_, to, at_end)) => self.jump(to, at_end),
                None => {
                    let size = self.files[self.file].size;
                    let look = BodyEnd::new(self.at, size, self.chunk);
                    self.step = Step::Search(look, Vec::new());
                }
            }
        }
        self.send_new();
    }

    fn jump(&mut self, to: u64, at_end: bool) {
        if self.loader.jump(to, at_end) {
            self.at = to;
        }
    }

    /// The bodies the loader listed since the last call go behind.
    fn send_new(&mut self) {
        let new: Vec<_> = self.loader.deferred().skip(self.sent).cloned().collect();
        self.sent += new.len();
        self.mail.extend(new.into_iter().map(Note::Body));
    }

    /// The bytes asked for last could not be read: the read fails ([`FirstLane::finish`]).
    pub fn fail(&mut self, why: String) {
        self.failed.get_or_insert(why);
    }

    /// A note from the read behind.
    pub fn post(&mut self, note: Note) {
        if let Note::Bounds(from, to, at_end) = note {
            self.known = Some((from, to, at_end));
        }
    }

    /// The notes for the read behind since the last call.
    pub fn mail(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.mail)
    }

    /// The loader fed (to be finished), or why the read failed.
    pub fn finish(self) -> Result<Loader, String> {
        match self.failed {
            Some(why) => Err(why),
            None => Ok(self.loader),
        }
    }
}
