//! Instruction names: the id of the instruction a name stands for in one module, the
//! instruction added on first sight.
//!
//! XLA makes a module's instruction names unique with a numeric suffix (`multiply.176354`,
//! `Arg_0.1`). The numbers are not unique across stems (`add.1501`, `copy.1501`), but most
//! names have one no earlier name has: in the 94 MB jax 0.6.2 dump, 112,435 of its 162,265
//! instructions. So a name is looked for first in a slot per suffix (an array index: no
//! hashing, no table probe, which were a third of the page's parse of that dump), and only
//! names without a suffix, with a suffix beyond [`MAX_SUFFIX`] or whose slot another name
//! holds go through a hash table.
//!
//! Owns the invariant that makes this exact: a name's instruction is in its suffix slot or
//! in the table, never both, and a slot, once taken, is never given to another name. So an
//! empty slot means the name is new.

use super::lex::text;
use crate::model::{InstrId, Instruction, Module, Str, TableHash};
use hashbrown::{DefaultHashBuilder, HashTable};

/// Suffixes below this have a slot (the slots array grows to the largest seen, at most
/// 16 MiB); larger ones go through the table.
const MAX_SUFFIX: usize = 1 << 22;

/// A suffix slot: the instruction and its name's handle, so that checking the name reads
/// the slot and the name, not the module's instruction too (a cache miss per name, the
/// largest cost of the lookup).
#[derive(Clone, Copy)]
struct Slot {
    id: InstrId,
    name: Str,
}

/// No instruction in a slot.
const EMPTY: Slot = Slot {
    id: InstrId::MAX,
    name: Str::EMPTY,
};

#[derive(Default)]
pub(crate) struct InstrNames {
    /// By numeric suffix: the instruction whose name ends with `.N`, the first seen.
    by_suffix: Vec<Slot>,
    /// The other names, compared through the arena (no second copy of the names), with
    /// each name's [`TableHash`] so that growing the table hashes no name again.
    table: HashTable<(Str, InstrId, TableHash)>,
    hasher: DefaultHashBuilder,
}

impl InstrNames {
    /// The instruction of `m` called `name`, added to `m` on first sight.
    pub fn id(&mut self, m: &mut Module, name: &[u8]) -> InstrId {
        let slot = suffix(name).filter(|&n| n < MAX_SUFFIX);
        if let Some(n) = slot {
            match self.by_suffix.get(n).copied().unwrap_or(EMPTY) {
                slot if slot.id == EMPTY.id => {
                    let (name, id) = add(m, name);
                    if n >= self.by_suffix.len() {
                        let len = (n + 1).next_power_of_two().clamp(1024, MAX_SUFFIX);
                        self.by_suffix.resize(len, EMPTY);
                    }
                    self.by_suffix[n] = Slot { id, name };
                    return id;
                }
                slot if m.strings.bytes(slot.name) == name => return slot.id,
                _ => {}
            }
        }
        let hash = TableHash::of(&self.hasher, name);
        let strings = &m.strings;
        if let Some(&(_, id, _)) = self.table.find(hash.spread(), |&(s, _, h)| {
            h == hash && strings.bytes(s) == name
        }) {
            return id;
        }
        let (s, id) = add(m, name);
        self.table
            .insert_unique(hash.spread(), (s, id, hash), |&(_, _, h)| h.spread());
        id
    }
}

/// The number after a name's last `.` (at most 9 digits), if it ends with one.
fn suffix(name: &[u8]) -> Option<usize> {
    let dot = memchr::memrchr(b'.', name)?;
    let digits = &name[dot + 1..];
    if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        digits
            .iter()
            .fold(0, |n, &d| n * 10 + usize::from(d - b'0')),
    )
}

/// A new instruction called `name` (names are unique in a module, so this table is their
/// interning): its name's handle and its id.
fn add(m: &mut Module, name: &[u8]) -> (Str, InstrId) {
    let s = m.strings.push(&text(name));
    let id = m.instructions.len() as InstrId;
    m.instructions.push(Instruction {
        name: s,
        ..Instruction::default()
    });
    (s, id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(names: &[&[u8]]) -> (Vec<InstrId>, Module) {
        let (mut n, mut m) = (InstrNames::default(), Module::default());
        let ids = names.iter().map(|name| n.id(&mut m, name)).collect();
        (ids, m)
    }

    #[test]
    fn suffixes() {
        assert_eq!(suffix(b"multiply.176354"), Some(176_354));
        assert_eq!(suffix(b"a.b.7"), Some(7));
        assert_eq!(suffix(b"add.007"), Some(7));
        assert_eq!(suffix(b"Arg_0"), None);
        assert_eq!(suffix(b"x."), None);
        assert_eq!(suffix(b"x.1a"), None);
        assert_eq!(suffix(b"x.1234567890"), None);
    }

    /// Names sharing a suffix, with none, with one past the slots, or with leading zeros
    /// each get their own id, the same on every lookup.
    #[test]
    fn every_name_one_id() {
        let names: [&[u8]; 9] = [
            b"add.5",
            b"multiply.5",
            b"add.05",
            b"Arg_0",
            b"fusion.4194304",
            b"fusion.999999999",
            b"tuple.",
            b"add.5.5",
            b"multiply.5",
        ];
        let (got, m) = ids(&[&names[..], &names[..]].concat());
        assert_eq!(got, [0, 1, 2, 3, 4, 5, 6, 7, 1, 0, 1, 2, 3, 4, 5, 6, 7, 1]);
        assert_eq!(m.instructions.len(), 8);
        assert_eq!(m.str(m.instructions[2].name), "add.05");
    }

    /// A name that is not UTF-8 is stored replaced, so it is never found again: each
    /// sight adds an instruction, as when every name went through the table.
    #[test]
    fn a_name_not_utf8_is_added_each_time() {
        let (got, m) = ids(&[b"a\xff.3", b"a\xff.3", b"b.3", b"b.3"]);
        assert_eq!(got, [0, 1, 2, 2]);
        assert_eq!(m.instructions.len(), 3);
    }
}
