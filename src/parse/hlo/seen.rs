//! What an HLO text's reader has seen already, so that what is printed again is looked up,
//! not read again: metadata by their printed text ([`Metas`]) and the attributes printed
//! lately, whole, by key ([`Pieces`]).
//!
//! Owns: these look-ups only; the reader's own, dropped with it. A piece found again is
//! exactly what reading it would give: it is the same bytes, read from the same state (at
//! the top level, outside any bracket or string).

use crate::model::{Str, TableHash};
use hashbrown::HashTable;

/// What the reader has seen ([`Metas`], [`Pieces`]).
#[derive(Default)]
pub(super) struct Seen {
    pub metas: Metas,
    pub pieces: Pieces,
}

/// The metadata read so far, by their printed text, so that a text printed again (most
/// are: a layer's instructions share their op_name and frame) is looked up, not read again.
/// The reader's own: dropped with it.
#[derive(Default)]
pub(super) struct Metas {
    raw: Vec<u8>,
    /// (hash, start and length in `raw`, index in the text's metadata).
    table: HashTable<(TableHash, u32, u32, u32)>,
}

impl Metas {
    /// The index in the text of the metadata printed as `value`, if read already; else
    /// its hash, for [`Metas::add`].
    pub(super) fn find(&self, value: &[u8]) -> Result<u32, TableHash> {
        let h = TableHash::quick(value);
        let raw = &self.raw;
        let same = |&(eh, s, l, _): &(TableHash, u32, u32, u32)| {
            eh == h && raw.get(s as usize..(s + l) as usize) == Some(value)
        };
        self.table.find(h.spread(), same).map(|e| e.3).ok_or(h)
    }

    /// Metadata printed as `value` (hashed `h`) is the text's `id`.
    pub(super) fn add(&mut self, value: &[u8], h: TableHash, id: u32) {
        let (Ok(start), Ok(len)) = (u32::try_from(self.raw.len()), u32::try_from(value.len()))
        else {
            return;
        };
        self.raw.extend_from_slice(value);
        (self.table).insert_unique(h.spread(), (h, start, len, id), |e| e.0.spread());
    }
}

/// What an attribute read into the text: its key's and value's handles.
pub(super) type Kept = (Str, Str);

/// Slots of [`Pieces`] (keys met at once; a power of two) and values kept per key.
const SLOTS: usize = 64;
const WAYS: usize = 4;
/// The values kept: shorter ones are read about as fast as they are compared, longer ones
/// are rare.
const VALUE_LENGTHS: std::ops::RangeInclusive<usize> = 24..=16 << 10;

/// The attributes printed lately (`backend_config={…}`: most are printed again and
/// again), the last few values of each key, each with what it read into. Metadata are
/// looked up by their text ([`Metas`]).
#[derive(Default)]
pub(super) struct Pieces {
    slots: Vec<Slot>,
    /// The first bytes of the keys kept (bit `c` of word `c / 64`): most attributes (every
    /// `metadata`) are passed over on their first byte.
    firsts: [u64; 4],
    /// Nothing is kept (so nothing found): every attribute is read.
    pub off: bool,
}

#[derive(Clone, Default)]
struct Slot {
    key: Vec<u8>,
    values: Vec<(Vec<u8>, Kept)>,
    next: usize,
}

/// `key=` at the start of `text`: the key's length (letters, digits, `_`).
fn key_len(text: &[u8]) -> Option<usize> {
    let k = text.iter().position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'))?;
    (k > 0 && text[k] == b'=').then_some(k)
}

fn slot_of(key: &[u8]) -> usize {
    (TableHash::quick(key).spread() >> (64 - SLOTS.trailing_zeros())) as usize
}

impl Pieces {
    /// The attribute at the start of `text` (trimmed of leading spaces), if it is one seen
    /// lately followed by a comma or the text's end (spaces aside): its length and what it
    /// read into.
    pub(super) fn find(&self, text: &[u8]) -> Option<(usize, Kept)> {
        let &first = text.first()?;
        if self.firsts[usize::from(first / 64)] & 1 << (first % 64) == 0 {
            return None;
        }
        let k = key_len(text)?;
        let slot = self.slots.get(slot_of(&text[..k]))?;
        if slot.key != text[..k] {
            return None;
        }
        let value = &text[k + 1..];
        slot.values.iter().find_map(|(v, kept)| {
            let rest = value.strip_prefix(v.as_slice())?;
            let next = rest.iter().find(|&&c| c != b' ');
            matches!(next, None | Some(b',')).then_some((k + 1 + v.len(), *kept))
        })
    }

    /// Keeps attribute `key=value`, read whole from the top level, and what it read into.
    pub(super) fn keep(&mut self, key: &[u8], value: &[u8], kept: Kept) {
        let plain = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
        if self.off || !VALUE_LENGTHS.contains(&value.len()) || key.is_empty() || !key.iter().all(plain) {
            return;
        }
        if self.slots.is_empty() {
            self.slots = vec![Slot::default(); SLOTS];
        }
        self.firsts[usize::from(key[0] / 64)] |= 1 << (key[0] % 64);
        let slot = &mut self.slots[slot_of(key)];
        if slot.key != key {
            *slot = Slot {
                key: key.to_vec(),
                ..Slot::default()
            };
        }
        if slot.values.len() < WAYS {
            slot.values.push((value.to_vec(), kept));
        } else {
            slot.values[slot.next] = (value.to_vec(), kept);
            slot.next = (slot.next + 1) % WAYS;
        }
    }
}
