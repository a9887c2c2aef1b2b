//! The command line's parallel read: dump files read with their `Used values` bodies left
//! for a second thread, which reads and parses them while the main thread reads the rest,
//! joins and analyses; the modules are then completed, and are those one pass reads.
//!
//! Owns: the only thread of the read (`std::thread`, natively only; the core stays free of
//! threads and I/O). The main thread feeds each file to a [`Loader`] told to
//! [`defer_uses`](Loader::defer_uses); once a body is being skipped, its end is looked for
//! from the file's end ([`BodyEnd`], as the page does) and the loader jumps there, so the
//! main thread never reads the body's bytes. Each body the loader lists
//! ([`Loader::deferred`]) goes to the second thread, a driver of the core's [`Behind`]: it
//! reads from the files the bytes the machine asks for and feeds them in. The second thread
//! does not wait for the first body to be listed: it reads the first file's first body
//! ahead, from the file's first `Used values:` line ([`BodyStart`]) to where [`BodyEnd`]
//! says it ends, and [`Behind::confirm`] checks it
//! against the first body listed (if it is another, it is read as listed). Whatever the
//! core says did not read as in one pass (a wrong guess, a warning, an unknown line
//! number), and any I/O error, gives `None`: the caller reads the files again in one pass,
//! which says what went wrong. HLO module texts are read on a third thread from the start
//! and joined to their modules once these are complete ([`hlo::join_texts`], as the
//! loader joins them).

use super::CHUNK;
use bufscope::parse::hlo::{self, HloRead, HloReader};
use bufscope::parse::{Behind, BodyEnd, BodyStart, DeferredUses, Later};
use bufscope::pipeline::{Loaded, Pipeline};
use bufscope::Loader;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, OnceLock};

/// A body to read: the loader's entry for it (its file by the name it was read under).
type Job = DeferredUses;

/// The first file's first body as the second thread found it before reading it ahead:
/// where it starts, where it ends and whether that is the file's end; the main thread
/// jumps there without looking for the end itself when its loader skips a body from there.
type Ahead = Arc<OnceLock<Bounds>>;

/// A body's start, its end and whether that is the file's end.
type Bounds = (u64, u64, bool);

/// Reads, joins and analyses `files` with the `Used values` bodies parsed on a second
/// thread meanwhile, then completes the modules. `None` when the files must be read again
/// in one pass (nothing is printed).
pub fn read(files: &[PathBuf], searched: &[PathBuf]) -> Option<Loaded> {
    // HLO texts are read on a thread of their own from the start, and joined to their
    // modules once these are analysed (nothing before needs them).
    let (texts, files): (Vec<PathBuf>, Vec<PathBuf>) =
        files.iter().cloned().partition(|p| is_hlo_text(p));
    let texts = match texts.is_empty() {
        true => None,
        false => std::thread::Builder::new()
            .name("hlo texts".into())
            .spawn(move || read_texts(&texts))
            .ok(),
    };
    let files = &files[..];
    let (jobs, received) = channel::<Job>();
    let ahead = Ahead::default();
    let worker = std::thread::Builder::new()
        .name("used values".into())
        .spawn({
            let first = files
                .first()
                .cloned()
                .map(|path| (path, Arc::clone(&ahead)));
            move || read_bodies(first, received)
        })
        .ok()?;
    let mut loader = Loader::new();
    loader.defer_uses(true);
    let mut buf = vec![0u8; CHUNK];
    let mut sent = 0;
    let mut fed = Ok(());
    for (i, path) in files.iter().enumerate() {
        let ahead = (i == 0).then_some(&*ahead);
        let only = searched.contains(path);
        fed = feed_file(&mut loader, (path, ahead, only), &mut buf, &mut sent, &jobs);
        if fed.is_err() {
            break;
        }
    }
    drop(jobs);
    let loaded = fed.ok().map(|()| Pipeline::from(loader).finish());
    let bodies = worker.join().ok()?;
    let mut loaded = loaded?;
    let deferred = std::mem::take(&mut loaded.deferred);
    let modules = loaded.modules.iter_mut().map(|a| &mut a.module);
    bodies.complete(modules, &deferred).ok()?;
    if let Some(texts) = texts {
        let reads = texts.join().ok()?.ok()?;
        let mut modules: Vec<_> = loaded.modules.iter_mut().map(|a| &mut a.module).collect();
        hlo::join_texts(&mut modules, reads, &mut loaded.errors, &mut loaded.skipped);
    }
    Some(loaded)
}

/// Whether `path` is a plain (not gzipped) HLO module text: its first line starts with
/// `HloModule ` ([`hlo::is_hlo_start`]).
fn is_hlo_text(path: &Path) -> bool {
    let mut head = [0u8; 10];
    let read = File::open(path).and_then(|mut f| f.read_exact(&mut head));
    read.is_ok() && hlo::is_hlo_start(&head)
}

/// The HLO texts read, in order, as the loader reads them: each streamed through one
/// buffer (a whole file read at once is as many fresh pages to fault in).
fn read_texts(paths: &[PathBuf]) -> std::io::Result<Vec<HloRead>> {
    let mut buf = vec![0u8; 256 << 10];
    let mut read = |p: &PathBuf| {
        let mut file = File::open(p)?;
        let size = file.metadata()?.len();
        let mut reader = HloReader::with_size(&p.to_string_lossy(), size as usize);
        super::stream(&mut file, &mut buf, |chunk| reader.feed(chunk))?;
        Ok(reader.finish())
    };
    paths.iter().map(&mut read).collect()
}

/// Streams one file into `loader`, jumping over the first `Used values` body it skips
/// (to where the body read ahead ends, when that is the one: `ahead`); the bodies it lists
/// go to `jobs` (`sent`: how many of the loader's went already); `search_only`: a folder's
/// other text, read only for an out-of-memory message.
fn feed_file(
    loader: &mut Loader,
    (path, ahead, search_only): (&Path, Option<&OnceLock<Bounds>>, bool),
    buf: &mut [u8],
    sent: &mut usize,
    jobs: &Sender<Job>,
) -> std::io::Result<()> {
    let mut file = File::open(path)?;
    let size = file.metadata()?.len();
    loader.begin_file(&path.to_string_lossy());
    loader.search_only(search_only);
    let mut fed = 0u64;
    let mut looked = false;
    let result = loop {
        match file.read(buf) {
            Ok(0) => break Ok(()),
            Ok(n) => {
                loader.feed(&buf[..n]);
                fed += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
        if !looked && loader.skipping().is_some() {
            // Once per file, as the page does: a second body's end is not the file's last
            // header's (the skip then reads on, counting lines).
            looked = true;
            let known = (ahead.and_then(OnceLock::get))
                .filter(|&&(from, ..)| loader.skipping() == Some(from))
                .map(|&(_, to, at_end)| (to, at_end));
            match jump(loader, &mut file, (fed, known), size) {
                Ok(to) => fed = to,
                Err(e) => break Err(e),
            }
        }
        send_new(loader, sent, jobs);
    };
    loader.end_file();
    send_new(loader, sent, jobs);
    result
}

/// Finds where the body being skipped ends (unless `known`) and makes `loader` jump
/// there; the offset in the file of the next byte to feed (`fed` when there is no jump).
fn jump(
    loader: &mut Loader,
    file: &mut File,
    (fed, known): (u64, Option<(u64, bool)>),
    size: u64,
) -> std::io::Result<u64> {
    let end = match known {
        Some(end) => Some(end),
        None => body_end(file, fed, size)?,
    };
    let to = match end {
        Some((to, at_end)) if loader.jump(to, at_end) => to,
        _ => fed,
    };
    file.seek(SeekFrom::Start(to))?;
    Ok(to)
}

/// Where a body that starts before `fed` ends ([`BodyEnd`], from the file's end backwards):
/// `(offset, at the file's end)`, none when a wrapper line says not to jump.
fn body_end(file: &mut File, fed: u64, size: u64) -> std::io::Result<Option<(u64, bool)>> {
    let mut look = BodyEnd::new(fed, size, CHUNK as u64);
    let mut slice = Vec::new();
    while let Some(range) = look.next() {
        slice.resize((range.end - range.start) as usize, 0);
        file.seek(SeekFrom::Start(range.start))?;
        file.read_exact(&mut slice)?;
        look.look(&slice);
    }
    Ok(look.answer())
}

/// The bodies the loader listed since the last call go to the second thread.
fn send_new(loader: &Loader, sent: &mut usize, jobs: &Sender<Job>) {
    for d in loader.deferred().skip(*sent) {
        *sent += 1;
        // The receiver lives until `jobs` is dropped; a send fails only if it panicked,
        // which `read` sees when joining it.
        let _ = jobs.send(d.clone());
    }
}

/// The second thread: the first file's first body, guessed ([`guess`]), then each body
/// the loader lists, its bytes read from its file as [`Behind`] asks for them.
fn read_bodies(first: Option<(PathBuf, Ahead)>, jobs: Receiver<Job>) -> Behind {
    let mut behind = Behind::default();
    let mut buf = vec![0u8; CHUNK];
    let mut guessed = match first.map(|(path, ahead)| guess(&path, &ahead, &mut behind)) {
        Some(Err(e)) => {
            behind.fail(format!("reading ahead: {e}"));
            false
        }
        Some(Ok(guessed)) => guessed,
        None => false,
    };
    drive(&mut behind, &mut buf);
    for d in jobs {
        if std::mem::take(&mut guessed) && behind.confirm(&d) {
            continue;
        }
        behind.push(Later::Uses(d));
        drive(&mut behind, &mut buf);
    }
    behind.forget_guess();
    behind
}

/// Reads what `behind` asks for, from its files, until it asks for nothing more.
fn drive(behind: &mut Behind, buf: &mut [u8]) {
    while let Some(ask) = behind.next() {
        let read = File::open(&ask.file).and_then(|mut file| {
            file.seek(SeekFrom::Start(ask.bytes.start))?;
            let mut left = ask.bytes.end.saturating_sub(ask.bytes.start);
            while left > 0 {
                let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                file.read_exact(&mut buf[..n])?;
                behind.feed(&buf[..n]);
                left -= n as u64;
            }
            Ok(())
        });
        if let Err(e) = read {
            behind.fail(format!("{}: {e}", ask.file));
        }
    }
}

/// Where the body that the first `Used values` header of `path` opens lies, found before
/// the main thread's loader reaches it ([`BodyStart`], [`BodyEnd`]): given to `behind` as a
/// guess ([`Behind::guess`], read ahead) and to the main thread (`ahead`); whether there
/// was one.
fn guess(path: &Path, ahead: &OnceLock<Bounds>, behind: &mut Behind) -> std::io::Result<bool> {
    let mut file = File::open(path)?;
    let size = file.metadata()?.len();
    let mut start = BodyStart::default();
    let mut buf = vec![0u8; CHUNK];
    let found = loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break None,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if let Some(found) = start.feed(&buf[..n]) {
            break Some(found);
        }
    };
    let Some((from, first_line)) = found else {
        return Ok(false);
    };
    let Some((to, at_end)) = body_end(&mut file, from, size)? else {
        return Ok(false);
    };
    let _ = ahead.set((from, to, at_end));
    Ok(behind.guess(&path.to_string_lossy(), from..to, first_line, at_end))
}
