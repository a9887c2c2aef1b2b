//! The read behind in pieces, in Web Workers: each `Used values` body the page reads
//! itself (once the diagrams are drawn) is cut by the core's read behind
//! ([`BehindLane::alone_in_pieces`]) into a piece per worker and one for the page; the page
//! reads its piece as before ([`super::drive`]) while each worker (a wasm instance of its
//! own, `uses_worker.js`) reads one ([`PieceWork`]) and hands it back as transferable
//! buffers (the core's one encoding, [`PieceWire`]); the page joins them in order as the
//! command line's threads do. A piece that fails (a worker that cannot start, read or
//! answer) fails the join, and the files are read again in one pass, as natively. No
//! `SharedArrayBuffer`: every buffer is moved, so no cross-origin isolation is needed; the
//! single file opened from disk has no script to start a worker from and reads alone.
//!
//! Owns: how many piece workers the page has ([`count`]), the worker's side of a piece
//! ([`PieceWork`]) and the page's ([`read_behind`]).

use std::collections::VecDeque;
use std::rc::Rc;

use bufscope::parse::{BehindLane, Job, Next, Note, PieceRead, PieceReader, PieceWire, Unpack};
use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::MessagePort;

use super::drive::{drive, Lane, BEHIND_SLICE};
use super::fetch::Fetch;
use super::uses_worker::{answer_array, ask_array, cores, handed, push_handoff, unpack, wasm_bytes, PageWorker};
use super::{Picked, Workers};

/// Most lanes of the read behind (the page's and its workers') by default.
const MOST: usize = 4;
/// Bytes a worker asks for at a time: a piece's reader reads up to this past its end (to
/// the next entry), and the worker reads one ask ahead.
const WORKER_CHUNK: u64 = 8 << 20;
/// Least bytes of a piece: a body shorter than two is read whole by the page.
const LEAST: u64 = 4 << 20;

/// The read behind for `workers`' piece workers ([`read_behind`]): with none, alone.
/// Pieces of at least [`LEAST`] bytes, or `window.__bufscope_piece_least` where it is set
/// (browser tests cut the small dumps of tests/fixtures).
pub(super) fn lane(workers: usize) -> BehindLane {
    let least = setting("__bufscope_piece_least").filter(|&n| n >= 1.0).map_or(LEAST, |n| n as u64);
    match workers {
        0 => BehindLane::alone(),
        n => BehindLane::alone_in_pieces(n, least, WORKER_CHUNK),
    }
}

/// A number set on the page's `window` before the app started, if any.
fn setting(key: &str) -> Option<f64> {
    let key = JsValue::from_str(key);
    web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w, &key).ok())
        .and_then(|v| v.as_f64())
}

/// How many piece workers to start: the lanes of the read behind but the page's own,
/// `window.__bufscope_workers` (1 to 16; 1, no worker) where it is set (the benchmark
/// sets 1, 2 or 4), else the logical processors up to [`MOST`] from [`LEAST_CORES`] on,
/// and none where the page has a `Used values` worker (`has_uses`), which reads the
/// bodies meanwhile.
pub(super) fn count(has_uses: bool) -> usize {
    match lanes_set() {
        Some(n) => n - 1,
        None if has_uses || cores() < LEAST_CORES => 0,
        None => (cores() as usize).clamp(1, MOST) - 1,
    }
}

/// The lanes `window.__bufscope_workers` sets (1 to 16), if it does: then the page reads
/// with them alone, the `Used values` worker not started ([`super::Workers::start`]).
pub(super) fn lanes_set() -> Option<usize> {
    setting("__bufscope_workers").filter(|n| (1.0..=16.0).contains(n)).map(|n| n as usize)
}

/// Logical processors from which the page has piece workers by default. On this project's
/// 2-core VM a worker did not make the read behind of the 1 GB dump shorter (2.8 s alone,
/// 2.9 s with one worker; docs/benchmarks.md, 2026-12-07) and its instance held 270 MB
/// more: the page's thread and the worker share the two cores with the slices' reader.
const LEAST_CORES: f64 = 3.0;

/// Starts `n` piece workers (fewer where they cannot start).
pub(super) fn start(n: usize) -> Vec<Rc<PageWorker>> {
    (0..n).map_while(|_| PageWorker::spawn()).collect()
}

/// The worker's side (`uses_worker.js` drives it as it drives `UsesRead`): one piece of a
/// body (JSON of the core's [`Job`]) read as it asks for its bytes.
#[wasm_bindgen(js_name = PieceWork)]
pub struct PieceWork {
    reader: Option<PieceReader>,
}

#[wasm_bindgen(js_class = PieceWork)]
impl PieceWork {
    #[wasm_bindgen(constructor)]
    pub fn new(job: String) -> Result<PieceWork, JsValue> {
        let job: Job = serde_json::from_str(&job).map_err(|e| JsValue::from(e.to_string()))?;
        Ok(PieceWork { reader: Some(PieceReader::new(job.piece, WORKER_CHUNK)) })
    }

    /// The bytes to read next, `[file name, start, end]`; none once the piece is read.
    pub fn next(&mut self) -> Option<Array> {
        Some(ask_array(self.reader.as_mut()?.next()?))
    }

    /// More of the bytes asked for, in order.
    pub fn feed(&mut self, bytes: &[u8]) {
        if let Some(r) = self.reader.as_mut() {
            r.feed(bytes);
        }
    }

    /// The piece is read: `["ok", used, infos, names, uses chunk…, head, wasm bytes]`
    /// ([`PieceWire`]'s buffers, each an `ArrayBuffer` to be transferred).
    pub fn finish(&mut self) -> Result<Array, JsValue> {
        let reader = self.reader.take().ok_or_else(|| JsValue::from("finished"))?;
        let PieceWire { head, part } = reader.finish().into_wire();
        let out = Array::new();
        push_handoff(&out, part);
        out.push(&Uint8Array::from(&head[..]).buffer());
        out.push(&JsValue::from(wasm_bytes()));
        Ok(out)
    }
}

/// A piece handed to a worker, its answer to come.
struct Out {
    worker: Rc<PageWorker>,
    id: u32,
    job: Job,
    answer: JsFuture,
    _port: MessagePort,
}

/// The pieces out, in the order handed; those still out when dropped (a newer read,
/// Cancel) are called off.
struct Outs(VecDeque<Out>);

impl Drop for Outs {
    fn drop(&mut self) {
        for out in &self.0 {
            out.worker.call_off(out.id);
        }
    }
}

/// The read behind as the driver sees it: the pieces it hands out posted to the workers
/// at once (piece lane `k` to worker `k`), before it reads on.
struct Handing<'a> {
    lane: &'a mut BehindLane,
    outs: &'a mut Outs,
    /// A piece that could not be posted, read as failed.
    unposted: Vec<(Job, String)>,
    workers: &'a [Rc<PageWorker>],
    files: &'a [Picked],
}

impl Lane for Handing<'_> {
    fn next(&mut self) -> Next {
        let next = self.lane.next();
        for note in self.lane.mail() {
            if let Note::Piece { lane, job } = note {
                match self.post(lane, &job) {
                    Ok(out) => self.outs.0.push_back(out),
                    Err(why) => self.unposted.push((job, why)),
                }
            }
        }
        next
    }
    fn feed(&mut self, bytes: &[u8]) {
        self.lane.feed(bytes)
    }
    fn fail(&mut self, why: String) {
        self.lane.fail(why)
    }
}

impl Handing<'_> {
    fn post(&self, lane: usize, job: &Job) -> Result<Out, String> {
        let worker = self.workers.get(lane).ok_or("no worker for a piece")?;
        let json = serde_json::to_string(job).map_err(|e| e.to_string())?;
        let (handed, names) = handed(self.files, |name| name == job.piece.file);
        let fields = vec![("files", handed.into()), ("names", names.into()), ("piece", json.into())];
        let (id, answer, port) = worker.post(fields).map_err(super::js_error)?;
        Ok(Out { worker: worker.clone(), id, job: job.clone(), answer, _port: port })
    }
}

/// Reads what `lane` ([`Workers::behind_lane`]) is posted, from `files`, until it is
/// done: its own pieces fetched and fed, the others read by `workers`' piece workers and
/// posted back as they come, in order. `advanced` gets the bytes of each slice or piece
/// read. Returns the largest piece worker's wasm memory (bytes; 0 without one), or `None`
/// when `cancelled` turned true (the pieces out are called off).
pub async fn read_behind(
    lane: &mut BehindLane,
    files: &[Picked],
    workers: &Workers,
    advanced: &mut impl FnMut(f64),
    cancelled: &impl Fn() -> bool,
) -> Option<f64> {
    let mut fetch = Fetch::new(files, workers.reader());
    let mut outs = Outs(VecDeque::new());
    let mut memory: f64 = 0.0;
    let live = workers.live_pieces();
    loop {
        let mut handing = Handing { lane: &mut *lane, outs: &mut outs, unposted: Vec::new(), workers: &live, files };
        drive(&mut handing, &mut fetch, BEHIND_SLICE, cancelled, |_, bytes, _| advanced(bytes)).await?;
        let unposted = std::mem::take(&mut handing.unposted);
        if !unposted.is_empty() {
            for (job, why) in unposted {
                lane.post(Note::PieceRead(job.body, Box::new(failed(job, why))));
            }
            continue;
        }
        // The lane is done, or waits for the pieces out.
        let Some(out) = outs.0.pop_front() else { return Some(memory) };
        let answer = out.answer.await;
        out.worker.done(out.id);
        if cancelled() {
            return None;
        }
        let bytes = (out.job.piece.nominal.end - out.job.piece.nominal.start) as f64;
        let read = match piece_read(answer).await {
            Ok((read, worker)) => {
                memory = memory.max(worker);
                read
            }
            Err(why) => failed(out.job.clone(), why),
        };
        lane.post(Note::PieceRead(out.job.body, Box::new(read)));
        advanced(bytes);
    }
}

/// The read a worker's answer holds (`["ok", used, infos, names, uses chunk…, head, wasm
/// bytes]`), taken back a task at a time, and the worker's wasm memory.
async fn piece_read(answer: Result<JsValue, JsValue>) -> Result<(PieceRead, f64), String> {
    let out = answer_array(answer)?;
    let head_at = out.length().checked_sub(2).filter(|&h| h >= 4).ok_or("a piece's answer is short")?;
    let head = out.get(head_at).dyn_into::<js_sys::ArrayBuffer>().map_err(|_| "a piece's answer has no head")?;
    let part: Unpack = unpack(&out, 4..head_at).await?;
    let read = PieceRead::from_unpacked(&Uint8Array::new(&head).to_vec(), part)?;
    Ok((read, out.get(head_at + 1).as_f64().unwrap_or(0.0)))
}

/// The read of a piece that could not be read (`why`): it fails its body's join.
fn failed(job: Job, why: String) -> PieceRead {
    let mut reader = PieceReader::new(job.piece, 1);
    reader.fail(why);
    reader.finish()
}
