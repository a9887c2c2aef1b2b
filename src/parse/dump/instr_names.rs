//! Instruction names: the id of the instruction a name stands for in one module, the
//! instruction added on first sight.
//!
//! XLA makes a module's instruction names unique with a numeric suffix (`multiply.176354`,
//! `Arg_0.1`). The numbers repeat across stems (`add.1501`, `copy.1501`), but few are
//! shared by more than [`WAYS`] names: in the 94 MB jax 0.6.2 dump, 152,680 of its 162,265
//! instructions are among the first four with their suffix. So a name is looked for first
//! in a group of slots per suffix, and only names without a suffix as XLA prints one, with
//! a suffix beyond [`MAX_SUFFIX`], in a page of groups not made (below) or whose group is
//! full go through a hash table. A slot keeps the instruction and the id of its name's stem
//! (the name up to its suffix: `multiply.`), interned in a table of its own that stays
//! small and warm: a name is checked with its group alone, one cache line. The lookup was a
//! third of the page's parse of that dump and the most of it at 1 GB, most of that in
//! cache misses: three per name (slot, instruction, name), or two in the table and then
//! the name, where now there is one.
//!
//! Owns the invariant that makes this exact: a name's instruction is in its suffix group
//! or in the table, never both; a group's slots are taken in order and never given to
//! another name; and a page of groups is made or refused once, for good. So a free slot
//! after the ones that did not match means the name is new. A suffix has no leading zero
//! (`add.05` goes to the table), so a stem and a suffix are one name.

use super::lex::{numbered_name, text};
use crate::model::{InstrId, Instruction, Module, Str, TableHash};
use hashbrown::HashTable;

/// Suffixes below this have a group of slots; larger ones go through the table.
const MAX_SUFFIX: usize = 1 << 24;

/// How far ahead [`InstrNames::ids`] asks for groups, and how many at once.
const AHEAD: usize = 8;

/// Slots per suffix: the first names seen with it.
const WAYS: usize = 4;

/// Groups come in pages of this many (32 KiB), each made when a suffix in it is first
/// seen: no page is copied as suffixes grow.
const PAGE: usize = 1 << 10;

/// Pages that may be made however few the names are ([`pages_allowed`] adds one per 16
/// names); a page asked for beyond the allowance is refused.
const FREE_PAGES: usize = 16;

/// A slot: the instruction and its name's stem.
#[derive(Clone, Copy)]
struct Slot {
    id: InstrId,
    stem: u32,
}

/// No instruction in a slot.
const EMPTY: Slot = Slot {
    id: InstrId::MAX,
    stem: u32::MAX,
};

/// The slots of one suffix, aligned so that they are one cache line.
#[derive(Clone, Copy)]
#[repr(align(32))]
struct Group([Slot; WAYS]);

/// A page of groups: not decided yet, made, or refused (its suffixes go to the table).
#[derive(Default)]
enum Page {
    #[default]
    New,
    Made(Box<[Group]>),
    Refused,
}

#[derive(Default)]
pub(crate) struct InstrNames {
    /// By numeric suffix, in pages of [`PAGE`]: the instructions whose name ends with `.N`,
    /// the first [`WAYS`] seen.
    pages: Vec<Page>,
    /// How many pages are [`Page::Made`].
    made: usize,
    /// The stems of the names with a suffix (interned before their group is looked at), as
    /// ids into `stem_bytes`.
    stems: HashTable<(u32, TableHash)>,
    /// Each stem's bytes, by id.
    stem_bytes: Vec<Box<[u8]>>,
    /// The other names, compared through the arena (no second copy of the names), with
    /// each name's [`TableHash`] so that growing the table hashes no name again.
    table: HashTable<(Str, InstrId, TableHash)>,
}

impl InstrNames {
    /// The instruction of `m` called `name`, added to `m` on first sight.
    pub fn id(&mut self, m: &mut Module, name: &[u8]) -> InstrId {
        self.id_as(m, name, suffixed(name))
    }

    /// [`InstrNames::id`] with the name's [`suffixed`] given.
    fn id_as(&mut self, m: &mut Module, name: &[u8], suffix: Option<(&[u8], usize)>) -> InstrId {
        if let Some((stem, n)) = suffix {
            let stem = self.stem(stem);
            let names = m.instructions.len();
            if let Some(group) = self.group(n, names) {
                for slot in &mut group.0 {
                    if slot.id == EMPTY.id {
                        let id = add(m, name).1;
                        *slot = Slot { id, stem };
                        return id;
                    }
                    if slot.stem == stem {
                        return slot.id;
                    }
                }
            }
        }
        let hash = TableHash::of(name);
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

    /// [`InstrNames::id`] of each name in `names` (their bytes end to end, each ending at
    /// its offset in `ends`), in order, pushed to `ids`. The same ids
    /// as one lookup after the other; only the groups of the names [`AHEAD`] on are asked
    /// for from memory first ([`InstrNames::warm`]), so that their cache misses overlap
    /// (at 1 GB the groups are 77 MB, and one lookup at a time waited on each).
    pub fn ids(&mut self, m: &mut Module, names: &[u8], ends: &[u32], ids: &mut Vec<InstrId>) {
        let name = |i: usize| {
            let start = i.checked_sub(1).map_or(0, |p| ends[p] as usize);
            names.get(start..ends[i] as usize).unwrap_or_default()
        };
        // Each name's stem length and suffix (`usize::MAX`: none), parsed once, for the
        // names being looked up and the ones warmed ahead.
        let parse = |name: &[u8]| suffixed(name).map_or((0, usize::MAX), |(s, n)| (s.len(), n));
        let mut parsed = [(0, usize::MAX); 2 * AHEAD];
        for (i, p) in parsed.iter_mut().enumerate().take(ends.len()).take(AHEAD) {
            *p = parse(name(i));
        }
        for i in 0..ends.len() {
            if i % AHEAD == 0 {
                for j in i + AHEAD..ends.len().min(i + 2 * AHEAD) {
                    let p = parse(name(j));
                    parsed[j % (2 * AHEAD)] = p;
                    self.warm(p.1);
                }
            }
            let ((stem, n), name) = (parsed[i % (2 * AHEAD)], name(i));
            let suffix = (n != usize::MAX).then(|| (&name[..stem], n));
            ids.push(self.id_as(m, name, suffix));
        }
    }

    /// Asks for the group of suffix `n` (`usize::MAX`: none) to be brought into the cache,
    /// if it is made, where the processor takes such a hint (x86-64). Elsewhere nothing: in
    /// WebAssembly, which has no such hint, reading a slot ahead instead made the page's
    /// read no quicker (1 GB generated dump, 2026-12-07).
    #[allow(unused_variables)]
    fn warm(&self, n: usize) {
        #[cfg(target_arch = "x86_64")]
        if let Some(Page::Made(groups)) = self.pages.get(n / PAGE) {
            if let Some(group) = groups.get(n % PAGE) {
                // SAFETY: a prefetch is a hint; it reads nothing and faults on no address.
                unsafe {
                    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                    _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(group).cast());
                }
            }
        }
    }

    /// The id of a stem, given on first sight.
    fn stem(&mut self, stem: &[u8]) -> u32 {
        let hash = TableHash::of(stem);
        let bytes = &self.stem_bytes;
        let same = |&(id, h): &(u32, TableHash)| h == hash && *bytes[id as usize] == *stem;
        if let Some(&(id, _)) = self.stems.find(hash.spread(), same) {
            return id;
        }
        let id = self.stem_bytes.len() as u32;
        self.stem_bytes.push(stem.into());
        self.stems
            .insert_unique(hash.spread(), (id, hash), |&(_, h)| h.spread());
        id
    }

    /// Suffix `n`'s group (`n` below [`MAX_SUFFIX`]), its page made on first sight if the
    /// module's `names` so far allow one more ([`pages_allowed`]); none if it was refused.
    fn group(&mut self, n: usize, names: usize) -> Option<&mut Group> {
        let (page, at) = (n / PAGE, n % PAGE);
        if page >= self.pages.len() {
            self.pages.resize_with(page + 1, Page::default);
        }
        let entry = &mut self.pages[page];
        if let Page::New = entry {
            *entry = if self.made < pages_allowed(names) {
                self.made += 1;
                Page::Made(vec![Group([EMPTY; WAYS]); PAGE].into_boxed_slice())
            } else {
                Page::Refused
            };
        }
        match entry {
            Page::Made(groups) => groups.get_mut(at),
            _ => None,
        }
    }
}

/// Pages that may be made when a module has `names` instructions: [`FREE_PAGES`], and one
/// more per 16 names (a page holds 1,024 suffixes: XLA's suffixes are dense enough for
/// that, 0.73 names per suffix in the 94 MB dump and 0.04 in the sparsest GPU dump we
/// have). So scattered suffixes cannot make the groups outgrow the names (32 KiB a page).
fn pages_allowed(names: usize) -> usize {
    FREE_PAGES + names / 16
}

/// [`numbered_name`] with N below [`MAX_SUFFIX`]: the name up to and with the dot, and N.
fn suffixed(name: &[u8]) -> Option<(&[u8], usize)> {
    let (stem, n) = numbered_name(name)?;
    let n = n as usize;
    (n < MAX_SUFFIX).then_some((stem, n))
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
        let n = |name: &[u8]| suffixed(name).map(|(_, n)| n);
        assert_eq!(n(b"multiply.176354"), Some(176_354));
        assert_eq!(suffixed(b"a.b.7"), Some((&b"a.b."[..], 7)));
        assert_eq!(n(b"add.0"), Some(0));
        assert_eq!(n(b"add.007"), None);
        assert_eq!(n(b"Arg_0"), None);
        assert_eq!(n(b"x."), None);
        assert_eq!(n(b"x.1a"), None);
        assert_eq!(n(b"x.1234567890"), None);
        let at = |k: usize| format!("x.{k}").into_bytes();
        assert_eq!(n(&at(MAX_SUFFIX - 1)), Some(MAX_SUFFIX - 1));
        assert_eq!(n(&at(MAX_SUFFIX)), None);
    }

    /// Names sharing a suffix, with none, with one past the slots, with leading zeros or
    /// in different pages of slots each get their own id, the same on every lookup.
    #[test]
    fn every_name_one_id() {
        let names: [&[u8]; 14] = [
            b"add.5",
            b"multiply.5",
            b"add.05",
            b"Arg_0",
            b"fusion.4194304",
            b"fusion.999999999",
            b"tuple.",
            b"add.5.5",
            b"multiply.5",
            b"add.0",
            b"add.00",
            b"x.4095",
            b"x.4096",
            b"y.4096",
        ];
        let (got, m) = ids(&[&names[..], &names[..]].concat());
        let once = [0, 1, 2, 3, 4, 5, 6, 7, 1, 8, 9, 10, 11, 12];
        assert_eq!(got, [once, once].concat());
        assert_eq!(m.instructions.len(), 13);
        assert_eq!(m.str(m.instructions[2].name), "add.05");
        assert_eq!(m.str(m.instructions[12].name), "y.4096");
    }

    /// Looked up in a batch, every name gets the id one lookup after the other gives: for
    /// every batch length around the look-ahead, names with and without a suffix, in a
    /// full group, not UTF-8, empty.
    #[test]
    fn a_batch_as_one_at_a_time() {
        let pool: Vec<Vec<u8>> = (0..60)
            .map(|i| match i % 6 {
                0 => format!("add.{}", i / 2).into_bytes(),
                1 => format!("op{}.9", i % 7).into_bytes(),
                2 => format!("Arg_{}", i % 4).into_bytes(),
                3 => b"a\xff.3".to_vec(),
                4 => Vec::new(),
                _ => format!("x.{}", i * PAGE).into_bytes(),
            })
            .collect();
        for len in [0, 1, AHEAD - 1, AHEAD, AHEAD + 1, 2 * AHEAD + 3, 60] {
            let batch: Vec<&[u8]> = pool.iter().take(len).map(Vec::as_slice).collect();
            let (want, one) = ids(&[&batch[..], &batch[..]].concat());
            let (mut n, mut m) = (InstrNames::default(), Module::default());
            let (bytes, ends) = (batch.concat(), batch.iter().scan(0, |e, b| {
                *e += b.len() as u32;
                Some(*e)
            }));
            let ends: Vec<u32> = ends.collect();
            let mut got = Vec::new();
            for _ in 0..2 {
                n.ids(&mut m, &bytes, &ends, &mut got);
            }
            assert_eq!(got, want, "{len} names");
            assert_eq!(m.instructions.len(), one.instructions.len());
        }
    }

    /// A name that is not UTF-8 is stored replaced. In its group it is found by its stem;
    /// in the table, where names are compared as stored, it is never found again, so each
    /// sight adds an instruction.
    #[test]
    fn a_name_not_utf8() {
        let (got, m) = ids(&[b"a\xff.3", b"a\xff.3", b"b\xff", b"b\xff"]);
        assert_eq!(got, [0, 0, 1, 2]);
        assert_eq!(m.instructions.len(), 3);
    }

    /// The fifth stem with a suffix, and the ones after, go to the table; all are found
    /// again, before and after.
    #[test]
    fn a_full_group() {
        let names: Vec<Vec<u8>> = (0..7).map(|i| format!("op{i}.9").into_bytes()).collect();
        let names: Vec<&[u8]> = names.iter().map(Vec::as_slice).collect();
        let (got, m) = ids(&[&names[..], &names[..]].concat());
        assert_eq!(got, [0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(m.instructions.len(), 7);
    }

    /// Suffixes scattered over more pages than the names allow: the pages past the
    /// allowance are refused, their names go to the table, and every name keeps its id.
    #[test]
    fn scattered_suffixes() {
        let names: Vec<Vec<u8>> = (0..200)
            .map(|i| format!("op.{}", i * PAGE * 3 + i).into_bytes())
            .collect();
        let names: Vec<&[u8]> = names.iter().map(Vec::as_slice).collect();
        let mut n = InstrNames::default();
        let mut m = Module::default();
        let first: Vec<InstrId> = names.iter().map(|name| n.id(&mut m, name)).collect();
        assert_eq!(first, (0..200).collect::<Vec<_>>());
        assert!(n.made < 200 && n.made <= pages_allowed(200));
        assert!(n.pages.iter().any(|p| matches!(p, Page::Refused)));
        let again: Vec<InstrId> = names.iter().map(|name| n.id(&mut m, name)).collect();
        assert_eq!(again, first);
        assert_eq!(m.instructions.len(), 200);
    }
}
