//! A piece's read ([`PieceRead`]) as bytes that can be moved between wasm instances (a
//! page's workers read pieces; the page joins them): the builder's reads in the layout of
//! [`Handoff`] (records of little-endian words, the strings' arenas as text), and a head,
//! the piece and what its reader counted, as JSON. Natively nothing is moved, and the
//! tests check that the bytes give back the read they were made of.
//!
//! Owns that encoding. Bytes that do not read as one are an error, never a panic.

use super::super::handoff::builder_handoff;
use super::{Piece, PieceRead, PieceTally};
use crate::parse::later::deferred::{Handoff, Unpack};

/// A [`PieceRead`] as buffers: [`PieceWire::head`] and the [`Handoff`] of what it read.
pub struct PieceWire {
    /// The piece and its reader's counts, as JSON.
    pub head: Vec<u8>,
    pub part: Handoff,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Head {
    piece: Piece,
    tally: PieceTally,
}

impl PieceRead {
    /// The read as buffers ([`PieceRead::from_wire`] gives it back).
    pub fn into_wire(self) -> PieceWire {
        let head = Head { piece: self.piece, tally: self.tally };
        // A `Piece` and counts: nothing that JSON cannot write.
        let head = serde_json::to_vec(&head).unwrap_or_default();
        PieceWire { head, part: builder_handoff(self.builder) }
    }

    /// The read `wire` holds, at once.
    pub fn from_wire(wire: PieceWire) -> Result<PieceRead, String> {
        PieceRead::from_unpacked(&wire.head, Unpack::at_once(wire.part)?)
    }

    /// The read of `head` ([`PieceWire::head`]) and its part, taken back a slice at a time
    /// by its driver ([`Unpack`]).
    pub fn from_unpacked(head: &[u8], part: Unpack) -> Result<PieceRead, String> {
        let head: Head = serde_json::from_slice(head)
            .map_err(|e| format!("a piece's head does not read: {e}"))?;
        Ok(PieceRead { piece: head.piece, builder: part.into_builder(), tally: head.tally })
    }

    /// What the read holds, its strings as text (two reads are equal when these are).
    #[allow(clippy::type_complexity)]
    fn held(&self) -> (Vec<(u32, &str)>, Vec<(u32, [&str; 3], u32, Option<u32>)>) {
        let m = &self.builder.module;
        let used = self.builder.used.iter().map(|&(id, s)| (id, m.uses_strings.get(s)));
        let fact = |&(id, i): &(u32, crate::model::Instruction)| {
            let names = [i.opcode, i.op_name, i.source_file].map(|s| m.strings.get(s));
            (id, names, i.source_line, i.stack_frame_id)
        };
        (used.collect(), self.builder.infos.iter().map(fact).collect())
    }
}

impl PartialEq for PieceRead {
    /// The same piece, the same counts, the same uses and facts (as text: the arenas'
    /// handles may differ).
    fn eq(&self, other: &PieceRead) -> bool {
        self.piece == other.piece && self.tally == other.tally && self.held() == other.held()
    }
}

#[cfg(test)]
mod tests {
    use super::super::PieceReader;
    use super::*;

    const BODY: &[u8] = b"<7 a @0>\n positions:\n  a\n uses:\n  t, operand 0\n from instruction: %a = f32[8]{0} parameter(1), metadata={op_name=\"y\" source_file=\"k.py\" source_line=3}\n<8 b @0>\n positions:\n  b\n uses:\n from instruction: %b = f32[8]{0} add(%a, %a)\n";

    fn read(nominal: std::ops::Range<u64>, index: usize) -> PieceRead {
        let body = 0..BODY.len() as u64;
        let piece = Piece { file: "f.txt".into(), body, nominal, index };
        let mut r = PieceReader::new(piece, 5);
        while let Some(ask) = r.next() {
            r.feed(&BODY[ask.bytes.start as usize..ask.bytes.end as usize]);
        }
        r.finish()
    }

    #[test]
    fn a_piece_read_through_its_bytes_is_the_same_read() {
        let n = BODY.len() as u64;
        for (nominal, index) in [(0..n, 0), (0..40, 0), (40..n, 1)] {
            let back = PieceRead::from_wire(read(nominal.clone(), index).into_wire()).unwrap();
            assert_eq!(back, read(nominal.clone(), index), "{nominal:?}");
            assert!(back != read(0..n, 0) || nominal == (0..n), "reads of other pieces differ");
        }
    }

    #[test]
    fn bytes_that_are_no_piece_read_are_an_error() {
        let mut wire = read(0..10, 0).into_wire();
        wire.head.truncate(wire.head.len() / 2);
        assert!(PieceRead::from_wire(wire).is_err());
        let mut wire = read(0..10, 0).into_wire();
        wire.part.used.pop();
        assert!(PieceRead::from_wire(wire).is_err());
    }
}
