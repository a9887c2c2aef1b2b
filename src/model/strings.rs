//! The string arena of a module or an HLO text: [`Strings`], its handles ([`Str`]), the
//! look-up of runs of equal strings ([`LastInterned`]) and bytes read as text
//! ([`utf8_lossy`]).
//!
//! Owns: where every string of a dump lives, once, in chunks that never move.

use hashbrown::HashTable;

use super::TableHash;

/// A handle to a string in a module's [`Strings`] arena. `Str::EMPTY` is the empty string.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Str {
    start: u32,
    len: u32,
}

impl Str {
    pub const EMPTY: Str = Str { start: 0, len: 0 };
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// The handle as two numbers (its start and length in its arena), to be handed to
    /// another wasm instance with the arena's chunks ([`Strings::into_chunks`]).
    pub(crate) fn to_raw(self) -> [u32; 2] {
        [self.start, self.len]
    }

    /// The handle of the same string in an arena this one's was appended to at `shift`
    /// ([`Strings::append`]).
    pub(crate) fn shifted(self, shift: u32) -> Str {
        Str { start: self.start.saturating_add(shift), len: self.len }
    }

    /// A handle from [`Str::to_raw`]'s numbers. One that fits no string of its arena reads
    /// as "" ([`Strings::get`]), never panics.
    pub(crate) const fn from_raw([start, len]: [u32; 2]) -> Str {
        Str { start, len }
    }
}

/// The string arena of one module. `intern` deduplicates (names, op_names, shapes, files);
/// `push` appends without deduplicating (per-value text such as positions and uses).
///
/// The text lives in chunks of at most [`Strings::CHUNK`] bytes, so that growing the arena
/// of a 1 GB dump never copies hundreds of MB at once (one such copy held the page for
/// over 100 ms); a handle's start tells its chunk (`start / CHUNK`).
#[derive(Default, Clone)]
pub struct Strings {
    chunks: Vec<String>,
    /// Interned handles with their [`TableHash`], so that growing the table does not hash
    /// every string again (that took 200 ms at once in wasm on a 1 GB dump).
    table: HashTable<(Str, TableHash)>,
}

/// Bytes as text, invalid UTF-8 replaced (`String::from_utf8_lossy`, with the fast check of
/// valid text first: dumps are ASCII but for stack-trace names).
pub(crate) fn utf8_lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    if bytes.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8 (`is_ascii` is the quicker check of the two on
        // the short names that make most of a dump).
        return std::borrow::Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// The last string given to [`Strings::intern_bytes`] through it, with its handle: equal
/// strings often come in runs (a value's shape, an op_name), and a run is then hashed and
/// looked up once.
#[derive(Default, Clone)]
pub struct LastInterned {
    /// None before the first string.
    bytes: Option<Vec<u8>>,
    handle: Str,
}

impl LastInterned {
    /// `strings.intern_bytes(text)`, without the lookup when `text` is the last one.
    pub fn intern(&mut self, strings: &mut Strings, text: &[u8]) -> Str {
        self.intern_run(strings, text).0
    }

    /// [`LastInterned::intern`], and whether `text` starts a new run (differs from the
    /// last one, or is the first).
    pub fn intern_run(&mut self, strings: &mut Strings, text: &[u8]) -> (Str, bool) {
        match &mut self.bytes {
            Some(last) if last.as_slice() == text => (self.handle, false),
            last => {
                self.handle = strings.intern_bytes(text);
                let bytes = last.get_or_insert_with(Vec::new);
                bytes.clear();
                bytes.extend_from_slice(text);
                (self.handle, true)
            }
        }
    }
}

impl Strings {
    /// Bytes per chunk (a longer text gets a chunk of its own, and the handles after it
    /// skip as many chunks as it spans).
    pub const CHUNK: usize = 1 << 24;

    pub fn get(&self, s: Str) -> &str {
        // Handles are only made by this arena, at char boundaries; `Str::EMPTY` is "".
        let (chunk, at) = Self::place(s);
        self.chunks.get(chunk).and_then(|c| c.get(at)).unwrap_or("")
    }

    /// The bytes of `s` ([`Strings::get`] without the check of char boundaries).
    pub fn bytes(&self, s: Str) -> &[u8] {
        let (chunk, at) = Self::place(s);
        self.chunks
            .get(chunk)
            .and_then(|c| c.as_bytes().get(at))
            .unwrap_or(b"")
    }

    /// Where `s` is: its chunk and its byte range in that chunk.
    fn place(s: Str) -> (usize, std::ops::Range<usize>) {
        let at = s.start as usize % Self::CHUNK;
        (s.start as usize / Self::CHUNK, at..at + s.len as usize)
    }

    /// The handle of `text`, adding it once.
    pub fn intern(&mut self, text: &str) -> Str {
        self.intern_bytes(text.as_bytes())
    }

    /// [`Strings::intern`] for bytes (invalid UTF-8 is stored replaced).
    pub fn intern_bytes(&mut self, text: &[u8]) -> Str {
        if text.is_empty() {
            return Str::EMPTY;
        }
        let hash = TableHash::of(text);
        let found = self
            .table
            .find(hash.spread(), |&(s, h)| h == hash && self.bytes(s) == text);
        if let Some(&(s, _)) = found {
            return s;
        }
        let s = self.push_bytes(text);
        self.table
            .insert_unique(hash.spread(), (s, hash), |&(_, h)| h.spread());
        s
    }

    /// [`Strings::push`] for bytes (invalid UTF-8 is stored replaced).
    pub fn push_bytes(&mut self, text: &[u8]) -> Str {
        self.push(&utf8_lossy(text))
    }

    /// The chunks past the last one that its text spans (a text longer than a chunk runs
    /// on into them): where the next chunk starts, for [`Strings::push`] and
    /// [`Strings::append`] alike.
    fn spanned(&self) -> usize {
        self.chunks.last().map_or(0, |c| c.len().div_ceil(Self::CHUNK).max(1) - 1)
    }

    /// Appends `text` without interning it.
    pub fn push(&mut self, text: &str) -> Str {
        let fits = self
            .chunks
            .last()
            .is_some_and(|c| c.len() + text.len() <= Self::CHUNK);
        if !fits {
            // A new chunk, after the ones the last chunk's text spans.
            let spanned = self.spanned();
            for _ in 0..spanned {
                self.chunks.push(String::new());
            }
            self.chunks.push(String::new());
        }
        let index = self.chunks.len() - 1;
        let chunk = &mut self.chunks[index];
        let start = index * Self::CHUNK + chunk.len();
        chunk.push_str(text);
        Str {
            start: start as u32,
            len: text.len() as u32,
        }
    }

    /// `other`'s chunks moved after this arena's, none of their text copied: the number to
    /// add to the start of each of `other`'s handles ([`Str::shifted`]) to read it here.
    /// `other` given back (nothing moved) where the handles would not fit 32 bits. Its
    /// strings are not interned here: for arenas that are pushed to.
    pub fn append(&mut self, other: Strings) -> Result<u32, Strings> {
        let spanned = self.spanned();
        let shift = (self.chunks.len() + spanned) * Self::CHUNK;
        let end = (other.chunks.len().saturating_add(1)).saturating_mul(Self::CHUNK).saturating_add(shift);
        let Some(shift) = u32::try_from(shift).ok().filter(|_| end <= u32::MAX as usize) else {
            return Err(other);
        };
        self.chunks.extend((0..spanned).map(|_| String::new()));
        self.chunks.extend(other.chunks);
        Ok(shift)
    }

    /// Room for `additional` more bytes in the last chunk (at most a chunk's worth), so that
    /// an arena whose size is known ahead is not copied as it grows.
    pub fn reserve(&mut self, additional: usize) {
        let additional = additional.min(Self::CHUNK);
        match self.chunks.last_mut() {
            Some(c) if c.len() + additional <= Self::CHUNK => c.reserve(additional),
            _ => self.chunks.push(String::with_capacity(additional)),
        }
    }

    /// The arena's text, chunk by chunk (its interning table is dropped), so that it can be
    /// handed to another wasm instance and rebuilt there by [`Strings::from_chunks`].
    pub fn into_chunks(self) -> Vec<String> {
        self.chunks
    }

    /// An arena of the chunks [`Strings::into_chunks`] gave: its handles read as they did.
    /// It has no interning table: [`Strings::intern`] would add a second copy of a string
    /// that is already there, so it is for arenas that are only read or pushed to.
    pub fn from_chunks(chunks: Vec<String>) -> Strings {
        Strings {
            chunks,
            ..Strings::default()
        }
    }

    /// Bytes held by the arena (for memory accounting).
    pub fn heap_bytes(&self) -> usize {
        self.chunks.iter().map(String::capacity).sum::<usize>()
            + self.chunks.capacity() * std::mem::size_of::<String>()
            + self.table.capacity() * std::mem::size_of::<(Str, TableHash)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arena_appended_reads_its_strings_shifted_and_pushes_on() {
        for long in [0, Strings::CHUNK + 5] {
            let mut a = Strings::default();
            let x = a.push("x");
            let big = a.push(&"b".repeat(long));
            let mut b = Strings::default();
            let (y, z) = (b.push("yy"), b.push("zzz"));
            let shift = a.append(b).ok().unwrap();
            assert_eq!((a.get(x), a.get(big).len()), ("x", long));
            assert_eq!((a.get(y.shifted(shift)), a.get(z.shifted(shift))), ("yy", "zzz"));
            let w = a.push("w");
            assert_eq!((a.get(w), a.get(z.shifted(shift))), ("w", "zzz"));
        }
    }
}
