//! The read behind with its bodies cut into pieces ([`crate::parse::deferred::cut`]): the
//! first piece of each body read by [`super::Behind`] itself, the others handed out as
//! [`Job`]s for other lanes to read, their reads given back ([`Pieced::done`]) and joined
//! per module, in body and piece order, when the modules are completed.
//!
//! Owns: which body each piece belongs to, the pieces still out, and their join.

use crate::parse::later::deferred::{cut, join, Piece, PieceRead, PieceReader};
use crate::parse::{DeferredUses, UsedPart};

/// A piece for another lane to read: the body it belongs to ([`Pieced`]'s number for it)
/// and its bytes. Serialisable, so that a page could hand it to a worker.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Job {
    pub body: u64,
    pub piece: Piece,
}

/// The bodies listed, each with its pieces' reads as they come back.
pub(super) struct Pieced {
    pieces: usize,
    least: u64,
    chunk: u64,
    bodies: Vec<(u64, DeferredUses, Vec<Option<PieceRead>>)>,
    /// Numbers bodies; never reused, so that a read of a forgotten body is known as such.
    next_id: u64,
    jobs: Vec<Job>,
}

impl Pieced {
    /// Bodies cut into up to `pieces` pieces of at least `least` bytes, each read in asks of
    /// `chunk` bytes.
    pub fn new(pieces: usize, least: u64, chunk: u64) -> Pieced {
        Pieced { pieces, least, chunk, bodies: Vec::new(), next_id: 0, jobs: Vec::new() }
    }

    /// Body `d` starts: its pieces after the first become jobs; the first one's reader, to
    /// be read at once, and the body's number.
    pub fn start(&mut self, d: DeferredUses) -> (u64, PieceReader) {
        let id = self.next_id;
        self.next_id += 1;
        let mut pieces = cut(&d, self.pieces, self.least).into_iter();
        let first = pieces.next().unwrap_or_else(|| whole(&d));
        let mut reads = vec![None];
        for piece in pieces {
            reads.push(None);
            self.jobs.push(Job { body: id, piece });
        }
        self.bodies.push((id, d, reads));
        (id, PieceReader::new(first, self.chunk))
    }

    /// A piece of body `body` is read (ignored when the body was forgotten).
    pub fn done(&mut self, body: u64, read: PieceRead) {
        let slot = (self.bodies.iter_mut())
            .find(|(id, ..)| *id == body)
            .and_then(|(_, _, reads)| reads.get_mut(read.piece.index));
        if let Some(slot) = slot {
            *slot = Some(read);
        }
    }

    /// The jobs made since the last call.
    pub fn jobs(&mut self) -> Vec<Job> {
        std::mem::take(&mut self.jobs)
    }

    /// Pieces handed out and not read back yet.
    pub fn out(&self) -> usize {
        let out = self.bodies.iter().flat_map(|(_, _, reads)| reads.iter().skip(1));
        out.filter(|r| r.is_none()).count()
    }

    /// The first body is the one `d` lists (its module and its parts' files named).
    pub fn name_first(&mut self, d: &DeferredUses) {
        if let Some((_, first, _)) = self.bodies.first_mut() {
            first.module.clone_from(&d.module);
            first.parts.clone_from(&d.parts);
        }
    }

    /// Everything forgotten (the bodies' numbers go on).
    pub fn clear(&mut self) {
        self.bodies.clear();
        self.jobs.clear();
    }

    /// The bodies of `module` joined ([`join`]), taken out; none when it has none.
    pub fn take(&mut self, module: &str) -> Option<Result<UsedPart, String>> {
        let (ours, rest) = std::mem::take(&mut self.bodies)
            .into_iter()
            .partition::<Vec<_>, _>(|(_, d, _)| d.module == module);
        self.bodies = rest;
        let first = ours.first()?.1.clone();
        let (mut bodies, mut reads) = (Vec::new(), Vec::new());
        for (_, d, pieces) in ours {
            let Some(pieces) = pieces.into_iter().collect::<Option<Vec<_>>>() else {
                return Some(Err("a piece of a body was not read".into()));
            };
            bodies.push(d);
            reads.push(pieces);
        }
        Some(join(&first, bodies.iter().zip(reads).collect()))
    }

    /// The modules of the bodies, in the order first listed.
    pub fn modules(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for (_, d, _) in &self.bodies {
            if !names.contains(&d.module) {
                names.push(d.module.clone());
            }
        }
        names
    }
}

/// The whole body as one piece.
fn whole(d: &DeferredUses) -> Piece {
    Piece { file: d.file.clone(), body: d.bytes.clone(), nominal: d.bytes.clone(), index: 0 }
}
