//! What is read behind the diagram: the `Used values` bodies the first read skipped
//! ([`DeferredUses`]) and the HLO module texts beside a dump, read after the diagrams are
//! drawn. [`Behind`] is a state machine that does no I/O: it is told what to read
//! ([`Later`]), asks for the bytes it needs ([`Behind::next`]: bytes A..B of file F), takes
//! them in chunks of any size ([`Behind::feed`]), and says what they came to
//! ([`Behind::finish`]: each module's [`UsedPart`] and each HLO text read, or why the files
//! must be read again in one pass). The page's thread (Blob slices), its worker (worker
//! messages) and the command line's second thread (file reads) are loops that fetch what
//! it asks for their own way and feed it in.
//!
//! Owns: which bytes are read behind the diagram, and in what order; the check that the
//! bodies read are those the first read listed ([`Behind::complete`]).

use super::Ask;
use super::deferred::{lines_known, DeferredUses, PieceRead, PieceReader, UsedPart, UsesReader};
use super::hlo::{HloRead, HloReader};
use crate::model::Module;
use std::collections::VecDeque;
use std::ops::Range;

mod pieced;
pub use pieced::Job;
use pieced::Pieced;

/// One input to read behind the diagram.
#[derive(Clone, Debug)]
pub enum Later {
    /// A `Used values` body the first read skipped.
    Uses(DeferredUses),
    /// An HLO module text, whole (`size` bytes).
    Hlo { file: String, size: u64 },
}

/// What the inputs read came to ([`Behind::finish`]).
#[derive(Default)]
pub struct Read {
    /// Each module's `Used values`, by module name, in the order first listed.
    pub parts: Vec<(String, UsedPart)>,
    /// Each HLO text read whole, in the order given.
    pub hlo: Vec<HloRead>,
    /// One sentence per HLO text that could not be read ([`Behind::fail`]).
    pub errors: Vec<String>,
}

/// Where the bytes being fed go.
enum Sink {
    /// The reader of module `readers[i]`.
    Uses(usize),
    Hlo(Box<HloReader>),
    /// The first piece of body number `.0` ([`Behind::cut_bodies`]).
    Piece(u64, Box<PieceReader>),
}

/// The read behind the diagram (see the module's doc).
#[derive(Default)]
pub struct Behind {
    /// Inputs given and not yet asked for.
    queue: VecDeque<Later>,
    /// The bodies started, in order.
    listed: Vec<DeferredUses>,
    /// Each module's reader, in the order first listed.
    readers: Vec<(String, UsesReader)>,
    /// The input being fed: its file, the bytes still to come, where they go.
    current: Option<(String, u64, Sink)>,
    read: Read,
    /// Why a body could not be read (its bytes were not all there).
    failed: Option<String>,
    /// The only body so far is a guess ([`Behind::guess`]) not yet confirmed.
    guessed: bool,
    /// The bodies cut into pieces, read apart ([`Behind::cut_bodies`]); `readers` unused.
    pieced: Option<Pieced>,
    /// Each module's part, finished and prepared ahead ([`Behind::settle`]).
    settled: Vec<(String, Result<UsedPart, String>)>,
}

impl Behind {
    /// The machine for `inputs`, in order.
    pub fn new(inputs: impl IntoIterator<Item = Later>) -> Self {
        let mut b = Behind::default();
        b.queue.extend(inputs);
        b
    }

    /// Bodies are cut into up to `pieces` pieces of at least `least` bytes, read in asks
    /// of `chunk` bytes: the first read here, the others given out as [`Job`]s
    /// ([`Behind::jobs`]) and their reads given back ([`Behind::piece_read`]). Before any
    /// input is given; one piece reads the bodies whole, as without.
    pub fn cut_bodies(&mut self, pieces: usize, least: u64, chunk: u64) {
        if pieces > 1 {
            self.pieced = Some(Pieced::new(pieces, least, chunk));
        }
    }

    /// The pieces for other lanes to read, made since the last call.
    pub fn jobs(&mut self) -> Vec<Job> {
        self.pieced.as_mut().map(Pieced::jobs).unwrap_or_default()
    }

    /// A piece given out as a job of body `body` is read.
    pub fn piece_read(&mut self, body: u64, read: PieceRead) {
        if let Some(p) = self.pieced.as_mut() {
            p.done(body, read);
        }
    }

    /// How many pieces given out are not read back yet.
    pub fn out(&self) -> usize {
        self.pieced.as_ref().map_or(0, Pieced::out)
    }

    /// One more input, read after those given before.
    pub fn push(&mut self, later: Later) {
        self.queue.push_back(later);
    }

    /// The bytes to feed next (all of them, in order, then ask again); none once every
    /// input given is read. An input whose bytes were not all fed fails ([`Behind::fail`]).
    pub fn next(&mut self) -> Option<Ask> {
        if self.current.as_ref().is_some_and(|(_, left, _)| *left > 0) {
            self.fail("the bytes asked for were cut short".into());
        }
        if let Some((_, left, Sink::Piece(_, reader))) = self.current.as_mut() {
            if let Some(ask) = reader.next() {
                *left = ask.bytes.end.saturating_sub(ask.bytes.start);
                return Some(ask);
            }
        }
        self.close();
        loop {
            let (ask, into) = match self.queue.pop_front()? {
                Later::Uses(d) if self.pieced.is_some() => {
                    self.listed.push(d.clone());
                    let (id, mut reader) = self.pieced.as_mut().map(|p| p.start(d))?;
                    let Some(ask) = reader.next() else {
                        // Nothing to read: done at once.
                        self.piece_read(id, reader.finish());
                        continue;
                    };
                    (ask, Sink::Piece(id, Box::new(reader)))
                }
                Later::Uses(d) => {
                    let ask = Ask {
                        file: d.file.clone(),
                        bytes: d.bytes.clone(),
                    };
                    (ask, Sink::Uses(self.start_body(d)))
                }
                Later::Hlo { file, size } => {
                    let size_hint = usize::try_from(size).unwrap_or(0);
                    let reader = Box::new(HloReader::with_size(&file, size_hint));
                    (Ask { file, bytes: 0..size }, Sink::Hlo(reader))
                }
            };
            let left = ask.bytes.end.saturating_sub(ask.bytes.start);
            self.current = Some((ask.file.clone(), left, into));
            return Some(ask);
        }
    }

    /// A module's reader starts body `d`: its place in `readers`.
    fn start_body(&mut self, d: DeferredUses) -> usize {
        let at = match self.readers.iter().position(|(m, _)| *m == d.module) {
            Some(at) => {
                self.readers[at].1.body(&d);
                at
            }
            None => {
                self.readers.push((d.module.clone(), UsesReader::new(&d)));
                self.readers.len() - 1
            }
        };
        self.listed.push(d);
        at
    }

    /// More of the bytes [`Behind::next`] asked for, in order, in chunks of any size.
    pub fn feed(&mut self, chunk: &[u8]) {
        let Some((_, left, into)) = self.current.as_mut() else {
            return;
        };
        *left = left.saturating_sub(chunk.len() as u64);
        match into {
            Sink::Uses(at) => {
                if let Some((_, r)) = self.readers.get_mut(*at) {
                    r.feed(chunk);
                }
            }
            Sink::Hlo(reader) => reader.feed(chunk),
            Sink::Piece(_, reader) => reader.feed(chunk),
        }
    }

    /// The input being fed ends.
    fn close(&mut self) {
        match self.current.take() {
            Some((_, _, Sink::Hlo(reader))) => self.read.hlo.push(reader.finish()),
            Some((_, _, Sink::Piece(id, reader))) => self.piece_read(id, reader.finish()),
            _ => {}
        }
    }

    /// The bytes asked for could not all be read (`why`): for a body, completing will
    /// refuse; an HLO text is left out, `why` one of [`Read::errors`].
    pub fn fail(&mut self, why: String) {
        match self.current.take() {
            Some((file, _, Sink::Hlo(_))) => self
                .read
                .errors
                .push(format!("{file} could not be read: {why}")),
            other => {
                self.current = other;
                self.failed.get_or_insert(why);
            }
        }
    }

    /// The bytes fed next are a body the first read has not listed yet: the one a file's
    /// first `Used values` header opens ([`super::BodyStart`]), up to where
    /// [`super::BodyEnd`] says it ends, so that it is read while the first read goes on.
    /// It is taken to be what the loader will list on jumping over it but for its module
    /// and the files of its module's parts, which [`Behind::confirm`] takes from the entry
    /// listed. Only as the first input: false (and nothing is asked for) after another.
    pub fn guess(&mut self, file: &str, bytes: Range<u64>, first_line: u64, at_end: bool) -> bool {
        if !self.listed.is_empty() || self.current.is_some() {
            return false;
        }
        self.queue.push_front(Later::Uses(DeferredUses {
            file: file.to_string(),
            module: String::new(),
            bytes,
            first_line,
            lines: 0,
            at_file_end: at_end,
            jumped: true,
            parts: Vec::new(),
        }));
        self.guessed = true;
        true
    }

    /// `d`, the first entry the loader listed: whether it is the body guessed
    /// ([`Behind::guess`]: not to be given again). Where it is not, the guess is forgotten
    /// and `d` is to be given as any other.
    pub fn confirm(&mut self, d: &DeferredUses) -> bool {
        let Some(guess) = self.listed.first().filter(|_| self.guessed) else {
            self.forget_guess();
            return false;
        };
        let mut named = guess.clone();
        named.module.clone_from(&d.module);
        named.parts.clone_from(&d.parts);
        if named != *d {
            self.forget_guess();
            return false;
        }
        self.guessed = false;
        self.listed[0] = named;
        if let Some((module, reader)) = self.readers.first_mut() {
            module.clone_from(&d.module);
            reader.parts.clone_from(&d.parts);
        }
        if let Some(p) = self.pieced.as_mut() {
            p.name_first(d);
        }
        true
    }

    /// The body guessed is not one the loader listed: forgotten.
    pub fn forget_guess(&mut self) {
        if std::mem::take(&mut self.guessed) {
            if self.listed.is_empty() {
                // Not asked for yet: still first in the queue.
                self.queue.pop_front();
            }
            self.listed.clear();
            self.readers.clear();
            self.current = None;
            if let Some(p) = self.pieced.as_mut() {
                p.clear();
            }
        }
    }

    /// Every input read: each module's part finished (its pieces joined) and prepared
    /// ([`UsedPart::prepare`]) now, so that completing the modules, on another thread,
    /// has that much less to do. What the parts come to is the same.
    pub fn settle(&mut self) {
        self.close();
        let prepared = |part: Result<UsedPart, String>| {
            part.map(|mut p| {
                while !p.prepare(usize::MAX) {}
                p
            })
        };
        self.settled = (self.drain().into_iter()).map(|(module, part)| (module, prepared(part))).collect();
    }

    /// The HLO texts read so far and the sentences of those that could not be, taken out
    /// (the bodies stay, for [`Behind::complete`]).
    pub fn texts(&mut self) -> (Vec<HloRead>, Vec<String>) {
        self.close();
        let read = &mut self.read;
        (std::mem::take(&mut read.hlo), std::mem::take(&mut read.errors))
    }

    /// What the inputs came to (each asked for and fed, [`Behind::next`] having said none),
    /// or why the bodies did not read as one pass reads them (a body cut short, a warning,
    /// a line given back, an entry left open): the files must then be read again in one
    /// pass.
    pub fn finish(mut self) -> Result<Read, String> {
        self.close();
        if let Some(why) = self.failed {
            return Err(why);
        }
        for (module, part) in self.drain() {
            self.read.parts.push((module, part?));
        }
        Ok(self.read)
    }

    /// Completes `modules` (read with [`Loader::defer_uses`](super::Loader::defer_uses),
    /// which listed `deferred`) from the bodies read: the modules become those one pass
    /// reads. An error says why not (the bodies read are not those `deferred` lists, a
    /// body did not read as in one pass, a warning's line is unknown): the files must then
    /// be read again in one pass, and the modules are left partly completed.
    pub fn complete<'m>(
        self,
        modules: impl IntoIterator<Item = &'m mut Module>,
        deferred: &[DeferredUses],
    ) -> Result<(), String> {
        self.complete_through(modules, deferred, |part, _| Ok(part))
    }

    /// [`Behind::complete`], each module's part passed through `through` (with the
    /// module's first body) on its way: the tests pass it through the
    /// [`Handoff`](super::Handoff) the page's worker uses.
    pub fn complete_through<'m>(
        self,
        modules: impl IntoIterator<Item = &'m mut Module>,
        deferred: &[DeferredUses],
        through: impl Fn(UsedPart, &DeferredUses) -> Result<UsedPart, String>,
    ) -> Result<(), String> {
        if let Some(why) = self.failed {
            return Err(why);
        }
        if self.listed != deferred {
            return Err("the bodies read are not those the first read skipped".into());
        }
        let modules: Vec<&mut Module> = modules.into_iter().collect();
        if !lines_known(modules.iter().map(|m| &**m), deferred) {
            return Err("a warning follows bytes that were not read: its line is unknown".into());
        }
        let mut behind = self;
        for m in modules {
            let Some(part) = behind.take_part(&m.name) else {
                continue;
            };
            let part = part?;
            let part = match deferred.iter().find(|d| d.module == m.name) {
                Some(first) => through(part, first)?,
                None => part,
            };
            if let Some(why) = part.refused(m) {
                return Err(why);
            }
            let mut completing = part.complete(std::mem::take(m));
            while !completing.step(usize::MAX) {}
            *m = completing.into_module();
        }
        // A body whose module is not read (its join failed) is not read in one pass either.
        Ok(())
    }
}

impl Behind {
    /// Every module's part not taken yet, taken out in order: those settled, those read
    /// whole, then those read in pieces (joined now).
    fn drain(&mut self) -> Vec<(String, Result<UsedPart, String>)> {
        let mut out = std::mem::take(&mut self.settled);
        out.extend((std::mem::take(&mut self.readers).into_iter()).map(|(module, r)| (module, r.finish())));
        for module in self.pieced.as_ref().map(Pieced::modules).unwrap_or_default() {
            if let Some(part) = self.pieced.as_mut().and_then(|p| p.take(&module)) {
                out.push((module, part));
            }
        }
        out
    }

    /// What the bodies of `module` read, taken out; none when none was read.
    fn take_part(&mut self, module: &str) -> Option<Result<UsedPart, String>> {
        if let Some(at) = self.settled.iter().position(|(name, _)| name == module) {
            return Some(self.settled.swap_remove(at).1);
        }
        if let Some(at) = self.readers.iter().position(|(name, _)| name == module) {
            return Some(self.readers.swap_remove(at).1.finish());
        }
        self.pieced.as_mut().and_then(|p| p.take(module))
    }
}

/// Completes `modules` (read with [`Loader::defer_uses`](super::Loader::defer_uses)) from
/// the `deferred` bodies in the bytes of their files, `bytes(file)` giving a file's bytes by
/// the name it was read under ([`Behind::complete`], driven from whole files); the modules
/// become those one pass reads, or an error says why not (the files must then be read
/// again in one pass).
pub fn complete<'a>(
    modules: &mut [Module],
    deferred: &[DeferredUses],
    bytes: impl Fn(&str) -> Option<&'a [u8]>,
) -> Result<(), String> {
    complete_through(modules, deferred, bytes, |part, _| Ok(part))
}

/// [`complete`], each module's part passed through `through` (with the module's first
/// body) on its way ([`Behind::complete_through`]).
pub fn complete_through<'a>(
    modules: &mut [Module],
    deferred: &[DeferredUses],
    bytes: impl Fn(&str) -> Option<&'a [u8]>,
    through: impl Fn(UsedPart, &DeferredUses) -> Result<UsedPart, String>,
) -> Result<(), String> {
    let mut behind = Behind::new(deferred.iter().cloned().map(Later::Uses));
    while let Some(ask) = behind.next() {
        let file = bytes(&ask.file).ok_or_else(|| format!("{}: no bytes", ask.file))?;
        let body = usize::try_from(ask.bytes.start)
            .ok()
            .zip(usize::try_from(ask.bytes.end).ok())
            .and_then(|(a, b)| file.get(a..b))
            .ok_or_else(|| format!("{}: the body is not in the file", ask.file))?;
        behind.feed(body);
    }
    behind.complete_through(modules, deferred, through)
}
