//! The read behind's lane: the first file's first `Used values` body read ahead, before
//! the first read lists it (its start from the file's beginning, [`BodyStart`], its end
//! from the file's end, [`BodyEnd`]; a guess [`Behind::confirm`] checks against the first
//! body listed), then each body the first read lists and each HLO text it sets apart, in
//! the order they come, read by one [`Behind`].
//!
//! Owns: the read ahead of the first body, and what the read behind is given.

use super::{Bodies, Input, Next, Note};
use crate::parse::hlo::is_hlo_start;
use crate::parse::{is_gzip, Ask, Behind, BodyEnd, BodyStart, Later};
use std::collections::VecDeque;
use std::ops::Range;

/// The read ahead of the first file's first body.
enum Guess {
    Off,
    /// Its start, looked for from the file's beginning; the offset of the next byte.
    Start(BodyStart, u64),
    /// Its end, looked for from the file's end: where it starts, its first line's number,
    /// and the slice asked for being gathered.
    End(u64, u64, BodyEnd, Vec<u8>),
}

/// The read behind (see the module's doc).
pub struct BehindLane {
    behind: Behind,
    /// The first file, while its first body is looked for.
    first: Option<Input>,
    guess: Guess,
    chunk: u64,
    /// The body read ahead was given to `behind` and no body was listed since.
    guessed: bool,
    inbox: VecDeque<Note>,
    /// The first read is over ([`Note::Over`]).
    over: bool,
    /// The bytes asked for last, how many came, whether the rest is unwanted, and whether
    /// they go to `behind` (else to the read ahead).
    asked: Range<u64>,
    came: u64,
    unwanted: bool,
    to_behind: bool,
    mail: Vec<Note>,
    /// How many piece lanes read the pieces of the bodies cut ([`BehindLane::cut_bodies`]),
    /// how many pieces were handed out, and whether they were told no more come.
    lanes: usize,
    handed: usize,
    pieces_over: bool,
}

impl BehindLane {
    pub(super) fn new(first: Option<Input>, chunk: u64) -> BehindLane {
        let guess = match first {
            Some(_) => Guess::Start(BodyStart::default(), 0),
            None => Guess::Off,
        };
        BehindLane {
            behind: Behind::default(),
            first,
            guess,
            chunk: chunk.max(1),
            guessed: false,
            inbox: VecDeque::new(),
            over: false,
            asked: 0..0,
            came: 0,
            unwanted: false,
            to_behind: false,
            mail: Vec::new(),
            lanes: 0,
            handed: 0,
            pieces_over: false,
        }
    }

    /// Bodies are cut into up to `pieces` pieces of at least `least` bytes, all but the
    /// first read by `lanes` piece lanes ([`super::PieceLane`]), handed out in turn.
    pub(super) fn cut_bodies(&mut self, pieces: usize, least: u64, lanes: usize) {
        if lanes > 0 {
            self.behind.cut_bodies(pieces, least, self.chunk);
            self.lanes = lanes;
        }
    }

    /// The pieces the read behind made since the last call, handed out.
    fn hand_out(&mut self) {
        for job in self.behind.jobs() {
            let lane = self.handed % self.lanes.max(1);
            self.handed += 1;
            self.mail.push(Note::Piece { lane, job });
        }
    }

    /// A read behind of only what its driver posts ([`BehindLane::post`]: bodies, HLO
    /// texts, then [`Note::Over`]), with no read ahead: for a driver that reads behind
    /// once the first read is over, or a part of what it listed.
    pub fn alone() -> BehindLane {
        BehindLane::new(None, 1)
    }

    /// [`BehindLane::alone`] with each body cut into pieces of at least `least` bytes, one
    /// per lane and one for itself: all but the first handed out ([`Note::Piece`], in
    /// turn to `lanes` lanes, numbered from 0) for its driver to have read elsewhere (the
    /// page's workers) and posted back ([`Note::PieceRead`]); asks of `chunk` bytes.
    pub fn alone_in_pieces(lanes: usize, least: u64, chunk: u64) -> BehindLane {
        let mut lane = BehindLane::new(None, chunk);
        lane.cut_bodies(lanes + 1, least, lanes);
        lane
    }

    /// A lane with nothing to read (a read in one pass).
    pub(super) fn idle() -> BehindLane {
        let mut lane = BehindLane::new(None, 1);
        lane.over = true;
        lane
    }

    /// The bytes to fetch next, or to wait for the first read's notes, or done.
    pub fn next(&mut self) -> Next {
        let cut = !self.unwanted && self.came < self.asked.end - self.asked.start;
        if cut && !self.to_behind {
            // The read ahead is only a help: without it, the bodies are read as listed.
            self.guess = Guess::Off;
        }
        (self.came, self.unwanted) = (0, false);
        if let Some(ask) = self.read_ahead() {
            self.asked = ask.bytes.clone();
            self.to_behind = false;
            return Next::Fetch(ask);
        }
        loop {
            let ask = self.behind.next();
            self.hand_out();
            if let Some(ask) = ask {
                self.asked = ask.bytes.clone();
                self.to_behind = true;
                return Next::Fetch(ask);
            }
            match self.inbox.pop_front() {
                Some(Note::Body(d)) => {
                    if std::mem::take(&mut self.guessed) && self.behind.confirm(&d) {
                        continue;
                    }
                    self.behind.push(Later::Uses(d));
                }
                Some(Note::Hlo { file, size }) => self.behind.push(Later::Hlo { file, size }),
                Some(Note::Over) => self.over = true,
                Some(Note::PieceRead(body, read)) => self.behind.piece_read(body, *read),
                Some(Note::Bounds(..) | Note::Piece { .. } | Note::PiecesOver) => {}
                None if self.over => {
                    self.behind.forget_guess();
                    if self.lanes > 0 && !std::mem::replace(&mut self.pieces_over, true) {
                        self.mail.push(Note::PiecesOver);
                    }
                    if self.behind.out() > 0 {
                        return Next::Wait;
                    }
                    // On this lane's thread, not on the one that completes the modules.
                    self.behind.settle();
                    return Next::Done;
                }
                None => return Next::Wait,
            }
        }
    }

    /// The read ahead's next bytes, if it is under way; once it knows the body's bounds,
    /// they are given to `behind` as a guess and to the first read.
    fn read_ahead(&mut self) -> Option<Ask> {
        let first = self.first.as_ref()?;
        let bytes = match &mut self.guess {
            Guess::Off => None,
            Guess::Start(_, at) if *at >= first.size => None,
            Guess::Start(_, at) => Some(*at..first.size.min(at.saturating_add(self.chunk))),
            Guess::End(from, first_line, look, _) => match look.next() {
                Some(range) => Some(range),
                None => {
                    if let Some((to, at_end)) = look.answer() {
                        self.mail.push(Note::Bounds(*from, to, at_end));
                        let range = *from..to;
                        self.guessed = self.behind.guess(&first.name, range, *first_line, at_end);
                    }
                    None
                }
            },
        };
        match bytes {
            Some(bytes) => Some(Ask {
                file: first.name.clone(),
                bytes,
            }),
            None => {
                (self.guess, self.first) = (Guess::Off, None);
                None
            }
        }
    }

    /// More of the bytes asked for last, in order.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.unwanted {
            return;
        }
        self.came += bytes.len() as u64;
        if self.to_behind {
            self.behind.feed(bytes);
            return;
        }
        let size = self.first.as_ref().map_or(0, |f| f.size);
        match &mut self.guess {
            Guess::Start(_, 0) if is_gzip(bytes) || is_hlo_start(bytes) => {
                // No body to skip in a gzipped file or an HLO text.
                (self.guess, self.unwanted) = (Guess::Off, true);
            }
            Guess::Start(start, at) => {
                *at += bytes.len() as u64;
                if let Some((from, first_line)) = start.feed(bytes) {
                    let look = BodyEnd::new(from, size, self.chunk);
                    self.guess = Guess::End(from, first_line, look, Vec::new());
                    self.unwanted = true;
                }
            }
            Guess::End(_, _, look, slice) => {
                slice.extend_from_slice(bytes);
                if slice.len() as u64 >= self.asked.end - self.asked.start {
                    look.look(slice);
                    slice.clear();
                }
            }
            Guess::Off => {}
        }
    }

    /// The bytes asked for last could not be read (`why`): for a body, completing will
    /// refuse; an HLO text is left out with a sentence; the read ahead is given up.
    pub fn fail(&mut self, why: String) {
        match self.to_behind {
            true => self.behind.fail(why),
            false => self.guess = Guess::Off,
        }
        self.unwanted = true;
    }

    /// A note from the first read.
    pub fn post(&mut self, note: Note) {
        self.inbox.push_back(note);
    }

    /// The notes for the first read since the last call.
    pub fn mail(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.mail)
    }

    /// What the read behind came to.
    pub fn finish(self) -> Bodies {
        Bodies {
            behind: self.behind,
        }
    }
}
