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

use super::behind::{Ask, Behind};
use super::deferred::{DeferredUses, UsedPart};
use super::{hlo, Loader};
use crate::model::Module;

mod behind_lane;
mod first;
pub use behind_lane::BehindLane;
pub use first::FirstLane;

/// A file to read: its name (as its driver finds it again in an [`Ask`]), its size, and
/// whether it is only searched for an out-of-memory message ([`Loader::search_only`]).
#[derive(Clone, Debug)]
pub struct Input {
    pub name: String,
    pub size: u64,
    pub searched: bool,
}

/// One of the machine's two lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// The first read: the files forward, bodies jumped over.
    First,
    /// The read behind: the bodies skipped, the HLO texts.
    Behind,
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

/// What one lane tells the other.
#[derive(Clone, Debug)]
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
}

/// The read of a set of files (see the module's doc).
pub struct Reading {
    first: FirstLane,
    behind: BehindLane,
}

impl Reading {
    /// The diagram-first read of `inputs`, in order, asking for at most `chunk` bytes at
    /// a time.
    pub fn new(inputs: Vec<Input>, chunk: u64) -> Reading {
        let guess = inputs.first().cloned();
        Reading {
            first: FirstLane::new(inputs, chunk, true),
            behind: BehindLane::new(guess, chunk),
        }
    }

    /// The same files in one pass: nothing skipped, nothing read behind.
    pub fn one_pass(inputs: Vec<Input>, chunk: u64) -> Reading {
        Reading {
            first: FirstLane::new(inputs, chunk, false),
            behind: BehindLane::idle(),
        }
    }

    /// What `lane` wants next (the notes between the lanes passed on first).
    pub fn next(&mut self, lane: Lane) -> Next {
        for note in self.first.mail() {
            self.behind.post(note);
        }
        for note in self.behind.mail() {
            self.first.post(note);
        }
        match lane {
            Lane::First => self.first.next(),
            Lane::Behind => self.behind.next(),
        }
    }

    /// More of the bytes `lane` asked for last, in order.
    pub fn feed(&mut self, lane: Lane, bytes: &[u8]) {
        match lane {
            Lane::First => self.first.feed(bytes),
            Lane::Behind => self.behind.feed(bytes),
        }
    }

    /// The bytes `lane` asked for last could not be read (`why`).
    pub fn fail(&mut self, lane: Lane, why: String) {
        match lane {
            Lane::First => self.first.fail(why),
            Lane::Behind => self.behind.fail(why),
        }
    }

    /// The two lanes, to be driven apart (their notes passed on by the driver).
    pub fn into_lanes(self) -> (FirstLane, BehindLane) {
        (self.first, self.behind)
    }

    /// What the lanes read (both done): the first read's loader, to be finished, and the
    /// bodies and texts that complete its modules; an error when the first read failed.
    pub fn finish(self) -> Result<(Loader, Bodies), String> {
        Ok((self.first.finish()?, self.behind.finish()))
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
