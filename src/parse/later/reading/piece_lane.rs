//! A piece lane: reads the pieces of `Used values` bodies the read behind hands it
//! ([`Note::Piece`]), one after another, each by a [`PieceReader`], and sends each read back
//! ([`Note::PieceRead`]); over once the read behind says no more come ([`Note::PiecesOver`]).
//!
//! Owns: what one extra lane of the read (a thread natively, a worker in a page) reads.

use super::{Next, Note};
use crate::parse::{Job, PieceReader};
use std::collections::VecDeque;

/// One piece lane (see the module's doc).
pub struct PieceLane {
    chunk: u64,
    jobs: VecDeque<Job>,
    /// The piece being read, with its body's number.
    current: Option<(u64, PieceReader)>,
    over: bool,
    mail: Vec<Note>,
}

impl PieceLane {
    pub(super) fn new(chunk: u64) -> PieceLane {
        PieceLane { chunk, jobs: VecDeque::new(), current: None, over: false, mail: Vec::new() }
    }

    /// The bytes to fetch next, or to wait for pieces, or done.
    pub fn next(&mut self) -> Next {
        loop {
            if let Some((_, reader)) = self.current.as_mut() {
                if let Some(ask) = reader.next() {
                    return Next::Fetch(ask);
                }
            }
            if let Some((body, reader)) = self.current.take() {
                self.mail.push(Note::PieceRead(body, Box::new(reader.finish())));
            }
            match self.jobs.pop_front() {
                Some(Job { body, piece }) => {
                    self.current = Some((body, PieceReader::new(piece, self.chunk)));
                }
                None if self.over => return Next::Done,
                None => return Next::Wait,
            }
        }
    }

    /// More of the bytes asked for last, in order.
    pub fn feed(&mut self, bytes: &[u8]) {
        if let Some((_, reader)) = self.current.as_mut() {
            reader.feed(bytes);
        }
    }

    /// The bytes asked for last could not be read (`why`): the piece fails, and with it
    /// the read behind's completion (the files are then read in one pass).
    pub fn fail(&mut self, why: String) {
        if let Some((_, reader)) = self.current.as_mut() {
            reader.fail(why);
        }
    }

    /// A note from the read behind.
    pub fn post(&mut self, note: Note) {
        match note {
            Note::Piece { job, .. } => self.jobs.push_back(job),
            Note::PiecesOver => self.over = true,
            _ => {}
        }
    }

    /// The notes for the read behind since the last call.
    pub fn mail(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.mail)
    }
}
