//! The read's lanes on threads of their own ([`read`]): the first read on the calling
//! thread, the read behind on a second, each piece lane on one more; the lanes' notes
//! carried by channels, the read behind's routed by the core ([`route`]).
//!
//! Owns: the threads and channels of the read.

use super::files::Files;
use bufscope::parse::{route, BehindLane, Bodies, FirstLane, Next, Note, PieceLane, Post, Reading};
use bufscope::pipeline::{Loaded, Pipeline};
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};

/// The lanes on threads of their own, the first read's analysed meanwhile.
pub fn read(reading: Reading, files: &[PathBuf]) -> Option<(Option<Loaded>, Bodies)> {
    let (first, behind, pieces) = reading.into_lanes();
    let (to_behind, inbox) = channel();
    let (to_first, bounds) = channel();
    let mut lanes = Vec::new();
    for (k, lane) in pieces.into_iter().enumerate() {
        let (to_lane, jobs) = channel();
        let (paths, back) = (files.to_vec(), to_behind.clone());
        let name = format!("piece lane {k}");
        let spawned = std::thread::Builder::new().name(name);
        spawned.spawn(move || read_pieces(lane, &paths, jobs, back)).ok()?;
        lanes.push(To(to_lane));
    }
    let paths = files.to_vec();
    let worker = std::thread::Builder::new()
        .name("read behind".into())
        .spawn(move || read_behind(behind, &paths, inbox, (To(to_first), lanes)))
        .ok()?;
    let loader = read_first(first, files, &bounds, &to_behind);
    drop(to_behind);
    let loaded = loader.ok().map(|loader| Pipeline::from(loader).finish());
    Some((loaded, worker.join().ok()?.finish()))
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

/// A lane's channel as [`route`] takes it. A lane may be over and its receiver gone: what
/// it is sent is then unneeded.
struct To(Sender<Note>);

impl Post for To {
    fn post(&mut self, note: Note) {
        drop(self.0.send(note));
    }
}

/// The second thread: the read behind, waiting for the first read's notes and the pieces
/// read when it has nothing to read (the first read's end, or its thread's, is
/// [`Note::Over`]); its notes routed to the first read and the piece lanes (`to`).
fn read_behind(
    mut lane: BehindLane,
    paths: &[PathBuf],
    inbox: Receiver<Note>,
    (mut first, mut pieces): (To, Vec<To>),
) -> BehindLane {
    let (mut files, mut gone) = (Files::new(paths), false);
    loop {
        let next = lane.next();
        // Pieces handed out go before this lane reads on.
        lane.mail().into_iter().for_each(|n| route(n, &mut first, &mut pieces));
        match next {
            Next::Fetch(ask) => {
                if let Err(e) = files.fetch(&ask.file, ask.bytes, |b| lane.feed(b)) {
                    lane.fail(format!("{}: {e}", ask.file));
                }
            }
            Next::Wait => match inbox.recv() {
                Ok(note) => lane.post(note),
                // Every sender gone twice: nothing more comes (a piece not read back makes
                // the completion refuse).
                Err(_) if gone => return lane,
                Err(_) => {
                    gone = true;
                    lane.post(Note::Over);
                }
            },
            Next::Done => return lane,
        }
    }
}

/// A piece lane's thread: the pieces it is handed read, each sent back (`back`).
fn read_pieces(mut lane: PieceLane, paths: &[PathBuf], jobs: Receiver<Note>, back: Sender<Note>) {
    let mut files = Files::new(paths);
    loop {
        let next = lane.next();
        lane.mail().into_iter().for_each(|n| drop(back.send(n)));
        match next {
            Next::Fetch(ask) => {
                if let Err(e) = files.fetch(&ask.file, ask.bytes, |b| lane.feed(b)) {
                    lane.fail(format!("{}: {e}", ask.file));
                }
            }
            Next::Wait => lane.post(jobs.recv().unwrap_or(Note::PiecesOver)),
            Next::Done => return,
        }
    }
}
