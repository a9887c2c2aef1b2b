//! The later read: what is read behind the diagram, and the whole read as one machine.
//!
//! Owns: [`deferred`], the `Used values` bodies the first read skipped and lists, read
//! after the rest of their module and joined into it; [`behind`], the one reader of what is
//! read behind the diagram (those bodies, the HLO module texts), a machine that asks for
//! bytes; [`reading`], the whole read as one machine with no I/O (the first read and the
//! read behind as two lanes), which every driver fetches bytes for.

mod behind;
mod deferred;
mod reading;

// What the files here reach through `super::` (they were `parse/`'s own before the readers
// had folders of their own), so that the move left their contents as they were.
use super::dump::{assemble, headers, join, section, used_values};
use super::{hlo, Loader, Part};

pub use behind::{complete, complete_through, Behind, Job, Later, Read};
pub use deferred::{
    cut, join, last_header, lines_known, BodyEnd, BodyStart, Completing, DeferredUses, Found,
    Handoff, Piece, PieceRead, PieceReader, PieceWire, Unpack, UsedPart,
};
pub use reading::{
    route, BehindLane, Bodies, FirstLane, Input, Lane, Next, Note, PieceLane, Post, Reading,
};

/// Bytes the read asks a driver for: `bytes` of the file named `file` (as it was read
/// under). Every lane and piece asks in these; the driver only fetches them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ask {
    pub file: String,
    pub bytes: std::ops::Range<u64>,
}
