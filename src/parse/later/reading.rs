//! The read of a set of files as one machine with no I/O: which bytes of which file are
//! read, in what order, and what they come to. Drivers (the command line's threads, the
//! page's slices, the tests' files in memory) only fetch the byte ranges it asks for and
//! feed them in.
//!
//! Owns the steps of the diagram-first read, once for every driver: feeding each file
//! forward to a [`Loader`] told to [`defer_uses`](Loader::defer_uses); once a `Used values`
//! body is being skipped, looking for its end from the file's end ([`BodyEnd`](super::BodyEnd))
//! and jumping there; setting HLO module texts apart (a file whose first line is
//! `HloModule`) to be read behind; reading ahead the first file's first body before the
//! loader lists it ([`BodyStart`](super::BodyStart), [`Behind::guess`]); reading the bodies
//! listed and the HLO texts behind ([`Behind`]); and, where that does not read as one
//! pass, the same files in one pass ([`Reading::one_pass`]).
//!
//! Two lanes, each asked in turn what to fetch ([`Reading::next`]: an [`Ask`], or to wait
//! for the other lane, or done) and fed it in order, in chunks of any size
//! ([`Reading::feed`]): [`Lane::First`], the first read ([`FirstLane`]), and
//! [`Lane::Behind`], the read behind ([`BehindLane`]). They pass [`Note`]s to each other:
//! the bodies listed and the texts set apart go behind, the bounds of the body read ahead
//! come back so that the first read jumps without looking. [`Reading`] passes them on
//! between calls; a driver with a thread per lane takes the lanes apart
//! ([`Reading::into_lanes`]) and passes the notes itself ([`FirstLane::mail`],
//! [`BehindLane::post`]). The results are the same in any lane order and any chunking
//! (tests/reading.rs). What the lanes read comes to a [`Loader`] (finished by the driver
//! its own way: at once, in pieces, with the analysis) and [`Bodies`], which complete its
//! modules into those one pass reads, or say why not: the files are then read in one
//! pass.

use super::behind::{Behind, Read};
use super::Ask;
use super::deferred::{DeferredUses, PieceRead, UsedPart};
use super::{hlo, Job, Loader};
use crate::model::Module;

mod behind_lane;
mod first;
mod piece_lane;
pub use behind_lane::BehindLane;
pub use first::FirstLane;
pub use piece_lane::PieceLane;

/// A file to read: its name (as its driver finds it again in an [`Ask`]), its size, and
/// whether it is only searched for an out-of-memory message ([`Loader::search_only`]).
#[derive(Clone, Debug)]
pub struct Input {
    pub name: String,
    pub size: u64,
    pub searched: bool,
}

/// One of the machine's lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// The first read: the files forward, bodies jumped over.
    First,
    /// The read behind: the bodies skipped, the HLO texts.
    Behind,
    /// A piece lane ([`PieceLane`]), from 0: pieces of the bodies the read behind cuts.
    Piece(usize),
}

/// What a lane wants next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// These bytes, all of them, in order (then ask again).
    Fetch(Ask),
    /// Nothing until the other lane has gone on (only [`Lane::Behind`] waits).
    Wait,
    /// Nothing more.
    Done,
}

/// What one lane tells another.
#[derive(Debug)]
pub enum Note {
    /// A body the first read skipped, to be read behind.
    Body(DeferredUses),
    /// An HLO text set apart, to be read behind, whole.
    Hlo { file: String, size: u64 },
    /// The first file's first body as read ahead: its start, its end, whether that is the
    /// file's end (the first read jumps there when it skips a body from that start).
    Bounds(u64, u64, bool),
    /// The first read is over: nothing more comes behind.
    Over,
    /// A piece of a body for piece lane `lane` to read (from the read behind).
    Piece { lane: usize, job: Job },
    /// A piece of body `.0` read (from a piece lane to the read behind).
    PieceRead(u64, Box<PieceRead>),
    /// No more pieces come (from the read behind to every piece lane).
    PiecesOver,
}

/// The read of a set of files (see the module's doc).
pub struct Reading {
    first: FirstLane,
    behind: BehindLane,
    pieces: Vec<PieceLane>,
}

impl Reading {
    /// The diagram-first read of `inputs`, in order, asking for at most `chunk` bytes at
    /// a time.
    pub fn new(inputs: Vec<Input>, chunk: u64) -> Reading {
        let guess = inputs.first().cloned();
        Reading {
            first: FirstLane::new(inputs, chunk, true),
            behind: BehindLane::new(guess, chunk),
            pieces: Vec::new(),
        }
    }

    /// [`Reading::new`] for `workers` threads or workers: beyond two, the read behind cuts
    /// each body into as many pieces (of at least `least` bytes) as there are workers but
    /// the first read's, and `workers - 2` piece lanes ([`Lane::Piece`]) read all pieces but
    /// each body's first.
    /// With one worker, the lanes are read one after the other: the first body is not
    /// read ahead.
    pub fn with_workers(inputs: Vec<Input>, chunk: u64, workers: usize, least: u64) -> Reading {
        let mut reading = Reading::new(inputs, chunk);
        if workers <= 1 {
            reading.behind = BehindLane::new(None, chunk);
        }
        let lanes = workers.saturating_sub(2);
        reading.behind.cut_bodies(lanes + 1, least, lanes);
        reading.pieces = (0..lanes).map(|_| PieceLane::new(chunk.max(1))).collect();
        reading
    }

    /// How many piece lanes it has ([`Lane::Piece`]).
    pub fn piece_lanes(&self) -> usize {
        self.pieces.len()
    }

    /// The same files in one pass: nothing skipped, nothing read behind.
    pub fn one_pass(inputs: Vec<Input>, chunk: u64) -> Reading {
        Reading {
            first: FirstLane::new(inputs, chunk, false),
            behind: BehindLane::idle(),
            pieces: Vec::new(),
        }
    }

    /// What `lane` wants next (the notes between the lanes passed on first).
    pub fn next(&mut self, lane: Lane) -> Next {
        for note in self.first.mail() {
            self.behind.post(note);
        }
        for note in self.pieces.iter_mut().flat_map(PieceLane::mail) {
            self.behind.post(note);
        }
        for note in self.behind.mail() {
            route(note, &mut self.first, &mut self.pieces);
        }
        match lane {
            Lane::First => self.first.next(),
            Lane::Behind => self.behind.next(),
            Lane::Piece(k) => self.pieces.get_mut(k).map_or(Next::Done, PieceLane::next),
        }
    }

    /// More of the bytes `lane` asked for last, in order.
    pub fn feed(&mut self, lane: Lane, bytes: &[u8]) {
        match lane {
            Lane::First => self.first.feed(bytes),
            Lane::Behind => self.behind.feed(bytes),
            Lane::Piece(k) => self.pieces.get_mut(k).into_iter().for_each(|p| p.feed(bytes)),
        }
    }

    /// The bytes `lane` asked for last could not be read (`why`).
    pub fn fail(&mut self, lane: Lane, why: String) {
        match lane {
            Lane::First => self.first.fail(why),
            Lane::Behind => self.behind.fail(why),
            Lane::Piece(k) => {
                if let Some(p) = self.pieces.get_mut(k) {
                    p.fail(why);
                }
            }
        }
    }

    /// The lanes, to be driven apart (their notes passed on by the driver: [`route`] says
    /// where the read behind's go).
    pub fn into_lanes(self) -> (FirstLane, BehindLane, Vec<PieceLane>) {
        (self.first, self.behind, self.pieces)
    }

    /// What the lanes read (both done): the first read's loader, to be finished, and the
    /// bodies and texts that complete its modules; an error when the first read failed.
    pub fn finish(self) -> Result<(Loader, Bodies), String> {
        Ok((self.first.finish()?, self.behind.finish()))
    }
}

/// Where a note of the read behind goes: to the first read, or to the piece lanes (one,
/// or all for [`Note::PiecesOver`]); `first` and `pieces` may be any stand-ins for the
/// lanes (a driver's channels), each taking a note.
pub fn route<P: Post>(note: Note, first: &mut impl Post, pieces: &mut [P]) {
    match note {
        Note::Piece { lane, job } => {
            if let Some(p) = pieces.get_mut(lane) {
                p.post(Note::Piece { lane, job });
            }
        }
        Note::PiecesOver => pieces.iter_mut().for_each(|p| p.post(Note::PiecesOver)),
        note => first.post(note),
    }
}

/// What takes a note ([`route`]).
pub trait Post {
    fn post(&mut self, note: Note);
}

impl Post for PieceLane {
    fn post(&mut self, note: Note) {
        PieceLane::post(self, note)
    }
}

impl Post for FirstLane {
    fn post(&mut self, note: Note) {
        FirstLane::post(self, note)
    }
}

/// What the read behind came to: the bodies that complete the first read's modules and
/// the HLO texts set apart.
#[derive(Default)]
pub struct Bodies {
    behind: Behind,
}

impl Bodies {
    /// Completes `modules` (the first read's, which listed `deferred`) into those one pass
    /// reads, and joins the HLO texts to them ([`hlo::join_texts`], its sentences to
    /// `errors`). An error says why they are not (the files must then be read in one pass).
    pub fn complete(self, modules: Vec<&mut Module>, deferred: &[DeferredUses], errors: &mut Vec<String>) -> Result<(), String> {
        self.complete_through(modules, deferred, errors, |part, _| Ok(part))
    }

    /// What the read behind read, for a driver that completes the modules its own way (in
    /// pieces, a module at a time): the parts and HLO texts, or why they are not those one
    /// pass reads ([`Behind::finish`]).
    pub fn into_read(self) -> Result<Read, String> {
        self.behind.finish()
    }

    /// [`Bodies::complete`], each module's part passed through `through` on its way
    /// ([`Behind::complete_through`]).
    pub fn complete_through(
        mut self,
        mut modules: Vec<&mut Module>,
        deferred: &[DeferredUses],
        errors: &mut Vec<String>,
        through: impl Fn(UsedPart, &DeferredUses) -> Result<UsedPart, String>,
    ) -> Result<(), String> {
        let (texts, failed) = self.behind.texts();
        let each = modules.iter_mut().map(|m| &mut **m);
        self.behind.complete_through(each, deferred, through)?;
        errors.extend(failed);
        hlo::join_texts(&mut modules, texts, errors);
        Ok(())
    }
}
