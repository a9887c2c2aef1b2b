//! A piece's read moved as bytes (`PieceRead::into_wire` / `from_wire`, the way a page's
//! workers hand pieces back) is the read it was made of, on every real dump (tests/fixtures
//! and ../shared; in a debug build, files up to 3 MB): each `Used values` body cut into
//! pieces by the read behind the page drives (`BehindLane::alone_in_pieces`), each piece read
//! twice, the one through its bytes equal to the other; and the pieces joined from their
//! bytes complete the modules into what one pass reads.

mod common;

use bufscope::parse::{BehindLane, Next, Note, PieceRead, PieceReader};
use common::*;

/// Reads `m`'s bodies in pieces of at least `least` bytes for `lanes` lanes, every piece
/// handed out passed through its bytes; checks the completed load against one pass.
/// Returns how many pieces went through their bytes.
fn check(m: &ModuleFiles, lanes: usize, least: u64) -> usize {
    let files = m.inputs();
    let what = format!("{} ({lanes} lanes, pieces ≥ {least} B)", m.label);
    let mut load = fed_deferring(&files).finish();
    let deferred = std::mem::take(&mut load.deferred);
    let bytes_of = |file: &str, r: std::ops::Range<u64>| {
        let b = files.iter().find(|(n, _)| *n == file).map(|&(_, b)| b).expect("a file");
        &b[r.start as usize..r.end as usize]
    };
    let mut lane = BehindLane::alone_in_pieces(lanes, least, 65_536);
    deferred.iter().for_each(|d| lane.post(Note::Body(d.clone())));
    lane.post(Note::Over);
    let (mut jobs, mut moved) = (Vec::new(), 0);
    loop {
        let next = lane.next();
        for note in lane.mail() {
            if let Note::Piece { job, .. } = note {
                jobs.push(job);
            }
        }
        match next {
            Next::Fetch(ask) => lane.feed(bytes_of(&ask.file, ask.bytes)),
            Next::Wait => {
                assert!(!jobs.is_empty(), "{what}: the read behind waits for no piece");
                for job in jobs.drain(..) {
                    let read = || {
                        let mut r = PieceReader::new(job.piece.clone(), 4096);
                        while let Some(ask) = r.next() {
                            r.feed(bytes_of(&ask.file, ask.bytes));
                        }
                        r.finish()
                    };
                    let back = PieceRead::from_wire(read().into_wire()).expect("bytes of a read");
                    assert!(back == read(), "{what}: {:?} through its bytes", job.piece);
                    lane.post(Note::PieceRead(job.body, Box::new(back)));
                    moved += 1;
                }
            }
            Next::Done => break,
        }
    }
    let one = bufscope::load_files(files.iter().copied());
    let modules = load.modules.iter_mut().collect();
    match lane.finish().complete(modules, &deferred, &mut load.errors) {
        Ok(()) => assert_same_load(&one, &load, &what),
        Err(why) => {
            let plain = load_deferred(&files, 1 << 20, false).0.is_some();
            assert!(!plain, "{what}: the pieces did not complete ({why}) where one reader does");
        }
    }
    moved
}

#[test]
fn pieces_through_their_bytes_read_the_fixtures_as_one_pass() {
    let mut moved = 0;
    for m in fixture_modules() {
        for (lanes, least) in [(1, 1), (3, 97), (7, 4096)] {
            moved += check(&m, lanes, least);
        }
    }
    assert!(moved >= 50, "only {moved} pieces went through their bytes");
}

#[test]
fn pieces_through_their_bytes_read_the_shared_dumps_as_one_pass() {
    let test = "pieces_through_their_bytes_read_the_shared_dumps_as_one_pass";
    let Some(dir) = shared_dumps_or_skip(test) else { return };
    let most = if cfg!(debug_assertions) { 3 << 20 } else { usize::MAX };
    let (mut read, mut left, mut moved) = (0, 0, 0);
    for m in modules_under(&dir, |folder, _| !folder.starts_with("oom")) {
        if m.files.iter().any(|(_, b)| b.len() > most) {
            left += 1;
            continue;
        }
        moved += check(&m, 3, 4096);
        read += 1;
    }
    assert!(read >= 20 && moved >= read, "{read} shared modules read, {moved} pieces moved");
    if left > 0 {
        skip_in_debug(test, &format!("{left} modules with files over 3 MB"));
    }
}
