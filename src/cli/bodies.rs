//! The command line's driver of the core's read machine ([`Reading`]): the first read on
//! the main thread, the read behind (the `Used values` bodies it skips, the first one read
//! ahead, and the HLO module texts) on a second thread, each lane fetching from the files
//! the byte ranges the machine asks for, in [`CHUNK`]s. The modules are then analysed,
//! completed and given their HLO texts, and are those one pass reads.
//!
//! Owns: the only threads of the read (`std::thread`, natively only; the core stays free
//! of threads and I/O) and the channels that carry the lanes' [`Note`]s between them.
//! Whatever did not read as in one pass (a wrong guess, a warning, an unknown line
//! number) and any I/O error give `None`: the caller reads the files again in one pass,
//! which says what went wrong.

use super::CHUNK;
use bufscope::parse::{BehindLane, FirstLane, Input, Next, Note, Reading};
use bufscope::pipeline::{Loaded, Pipeline};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};

/// Reads, joins and analyses `files` with the `Used values` bodies and HLO texts read on a
/// second thread meanwhile, then completes the modules; those `searched` are only searched
/// for an out-of-memory message. `None` when the files must be read again in one pass
/// (nothing is printed).
pub fn read(files: &[PathBuf], searched: &[PathBuf]) -> Option<Loaded> {
    let input = |p: &PathBuf| {
        let size = std::fs::metadata(p).ok()?.len();
        let (name, searched) = (p.to_string_lossy().into_owned(), searched.contains(p));
        Some(Input { name, size, searched })
    };
    let inputs = files.iter().map(input).collect::<Option<Vec<_>>>()?;
    let (first, behind) = Reading::new(inputs, CHUNK as u64).into_lanes();
    let (to_behind, inbox) = channel();
    let (to_first, bounds) = channel();
    let paths = files.to_vec();
    let worker = std::thread::Builder::new()
        .name("read behind".into())
        .spawn(move || read_behind(behind, &paths, inbox, to_first))
        .ok()?;
    let loader = read_first(first, files, &bounds, &to_behind);
    drop(to_behind);
    let loaded = loader.ok().map(|loader| Pipeline::from(loader).finish());
    let bodies = worker.join().ok()?.finish();
    let mut loaded = loaded?;
    let deferred = std::mem::take(&mut loaded.deferred);
    let modules = loaded.modules.iter_mut().map(|a| &mut a.module).collect();
    bodies.complete(modules, &deferred, &mut loaded.errors).ok()?;
    Some(loaded)
}

/// The first read, on the calling thread: what the lane asks for read and fed, the notes
/// of the read behind taken in before each ask and its own sent after each.
fn read_first(
    mut lane: FirstLane,
    paths: &[PathBuf],
    bounds: &Receiver<Note>,
    to_behind: &Sender<Note>,
) -> Result<bufscope::Loader, String> {
    let mut files = Files::new(paths);
    loop {
        bounds.try_iter().for_each(|n| lane.post(n));
        let next = lane.next();
        if let Next::Fetch(ask) = &next {
            if let Err(e) = files.fetch(&ask.file, ask.bytes.clone(), |b| lane.feed(b)) {
                lane.fail(format!("{}: {e}", ask.file));
            }
        }
        // The receiver lives until this is over, unless it panicked (seen when joining it).
        lane.mail().into_iter().for_each(|n| drop(to_behind.send(n)));
        if next == Next::Done {
            return lane.finish();
        }
    }
}

/// The second thread: the read behind, waiting for the first read's notes when it has
/// nothing to read (the first read's end, or its thread's, is [`Note::Over`]).
fn read_behind(
    mut lane: BehindLane,
    paths: &[PathBuf],
    inbox: Receiver<Note>,
    to_first: Sender<Note>,
) -> BehindLane {
    let mut files = Files::new(paths);
    loop {
        match lane.next() {
            Next::Fetch(ask) => {
                if let Err(e) = files.fetch(&ask.file, ask.bytes, |b| lane.feed(b)) {
                    lane.fail(format!("{}: {e}", ask.file));
                }
            }
            Next::Wait => lane.post(inbox.recv().unwrap_or(Note::Over)),
            Next::Done => return lane,
        }
        // The first read may be over and its receiver gone: the bounds are then unneeded.
        lane.mail().into_iter().for_each(|n| drop(to_first.send(n)));
    }
}

/// The files of one read, each opened once, read through one buffer of [`CHUNK`] bytes.
struct Files<'a> {
    paths: &'a [PathBuf],
    open: Vec<Option<File>>,
    buf: Vec<u8>,
}

impl<'a> Files<'a> {
    fn new(paths: &'a [PathBuf]) -> Files<'a> {
        let open = paths.iter().map(|_| None).collect();
        Files { paths, open, buf: vec![0; CHUNK] }
    }

    /// Reads bytes `bytes` of the file named `name` (as [`Input::name`] names it), giving
    /// `feed` each piece.
    fn fetch(
        &mut self,
        name: &str,
        bytes: std::ops::Range<u64>,
        mut feed: impl FnMut(&[u8]),
    ) -> std::io::Result<()> {
        let at = (self.paths.iter().position(|p| p.to_string_lossy() == name))
            .ok_or_else(|| std::io::Error::other("not among the files read"))?;
        let file = match &mut self.open[at] {
            Some(file) => file,
            slot => slot.insert(File::open(&self.paths[at])?),
        };
        file.seek(SeekFrom::Start(bytes.start))?;
        let mut left = bytes.end.saturating_sub(bytes.start);
        while left > 0 {
            let n = self.buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            file.read_exact(&mut self.buf[..n])?;
            feed(&self.buf[..n]);
            left -= n as u64;
        }
        Ok(())
    }
}
