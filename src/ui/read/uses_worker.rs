//! `Used values` read in a worker with a wasm instance of its own (`uses_worker.js`), so
//! that a big dump uses two cores: while the page joins, analyses and draws what the first
//! read gave, the worker reads the skipped bodies ([`UsesRead`]: the core's [`Behind`], fed by
//! the worker's script) and hands back what it read as buffers ([`Handoff`]), which the page turns into the
//! [`UsedPart`] that completes the module (`load/complete.rs`).
//!
//! Owns both sides: the worker's reader ([`UsesRead`], exported to the worker's script) and
//! the page's jobs ([`UsesJobs`]). The worker is started with the page (held by the app's
//! [`Workers`]), and only on a
//! machine of [`CORES`] or more logical processors: there it reads each body as soon as the
//! first read lists it, while the page reads the rest and draws. With fewer, the two
//! would share one core (on this project's 2-core machine the diagrams came later, 0.8–1.0 s
//! after the pick of a 94 MB dump instead of 0.6–0.7 s) and the worker's instance would
//! hold memory of its own besides, so the page reads the bodies itself once the diagrams
//! are drawn, as it does where no worker can start (the single file opened from disk has
//! no script URL to give it) or a job fails. Where a body does not read as one pass would
//! (the worker says so), the files are read again in one pass.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use bufscope::parse::{Behind, DeferredUses, Handoff, Later, Unpack, UsedPart};
use js_sys::{Array, ArrayBuffer, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{MessageChannel, MessageEvent, MessagePort, Worker, WorkerOptions, WorkerType};

use super::{js_error, page_element, Picked, Workers};
use crate::ui::tasks::next_task;

/// The worker's side (`uses_worker.js` drives it): the core's [`Behind`] for a module's
/// bodies (JSON of its [`DeferredUses`], in order), whose bytes the script reads from the
/// files as it asks for them (reading ahead while this parses) and feeds.
#[wasm_bindgen(js_name = UsesRead)]
pub struct UsesRead {
    behind: Option<Behind>,
}

#[wasm_bindgen(js_class = UsesRead)]
impl UsesRead {
    #[wasm_bindgen(constructor)]
    pub fn new(bodies: String) -> Result<UsesRead, JsValue> {
        let bodies: Vec<DeferredUses> =
            serde_json::from_str(&bodies).map_err(|e| JsValue::from(e.to_string()))?;
        if bodies.is_empty() {
            return Err("no body to read".into());
        }
        Ok(UsesRead {
            behind: Some(Behind::new(bodies.into_iter().map(Later::Uses))),
        })
    }

    /// The bytes to read next, `[file name, start, end]` (all of them, fed in order, then
    /// ask again); none once every body is read.
    pub fn next(&mut self) -> Option<Array> {
        Some(ask_array(self.behind.as_mut()?.next()?))
    }

    /// More of the bytes asked for, in order.
    pub fn feed(&mut self, bytes: &[u8]) {
        if let Some(b) = self.behind.as_mut() {
            b.feed(bytes);
        }
    }

    /// The bodies are fed: `["ok", used, infos, names, uses chunk…, wasm bytes]` (the
    /// [`Handoff`]'s buffers, each an
    /// `ArrayBuffer`, to be transferred), or `["inexact", why]` when they do not read as
    /// one pass reads them.
    pub fn finish(&mut self) -> Result<Array, JsValue> {
        let behind = self
            .behind
            .take()
            .ok_or_else(|| JsValue::from("finished"))?;
        let out = Array::new();
        let part = behind.finish().and_then(|read| {
            let part = read.parts.into_iter().next().map(|(_, part)| part);
            part.ok_or_else(|| "no body was read".to_string())
        });
        match part {
            Ok(part) => {
                push_handoff(&out, part.into_handoff());
                out.push(&JsValue::from(wasm_bytes()));
            }
            Err(why) => {
                out.push(&"inexact".into());
                out.push(&why.into());
            }
        }
        Ok(out)
    }
}

/// An ask as a worker's script takes it: `[file name, start, end]`.
pub(super) fn ask_array(ask: bufscope::parse::Ask) -> Array {
    let (start, end) = (ask.bytes.start as f64, ask.bytes.end as f64);
    Array::of3(&ask.file.into(), &start.into(), &end.into())
}

/// `"ok"` and `h`'s buffers onto `out`: `used, infos, names, uses chunk…`, each an
/// `ArrayBuffer` to be transferred.
pub(super) fn push_handoff(out: &Array, h: Handoff) {
    let Handoff { used, infos, names, uses } = h;
    out.push(&"ok".into());
    for buffer in [used, infos, names] {
        out.push(&Uint8Array::from(&buffer[..]).buffer());
    }
    for chunk in &uses {
        out.push(&Uint8Array::from(chunk.as_bytes()).buffer());
    }
}

/// What a job came to.
pub enum Answer {
    /// The module's part, and the worker's wasm memory (bytes) after reading it.
    Part(UsedPart, f64),
    /// The bodies do not read as one pass reads them: read the files again in one pass.
    Inexact(String),
    /// The worker could not do it: the page reads the bodies itself.
    Failed(String),
}

/// The page's one worker for `Used values`, started with the page, as the reading worker
/// is: its script, the app's glue and wasm are fetched while the page loads, so that no
/// request is made once a file is given. It stays for the page's life and its instance is
/// reused (its memory is the largest of the reads it did).
pub struct PageWorker {
    worker: Worker,
    /// The answers still to come, of any read, by job: a worker that fails (its script
    /// missing, say) gives each an error instead, so that the page reads those bodies
    /// itself. A job leaves when it is answered or called off ([`PageWorker::done`]).
    waiting: RefCell<Vec<(u32, js_sys::Function)>>,
    failed: Cell<bool>,
    /// The last job's number.
    jobs: Cell<u32>,
}

impl PageWorker {
    /// Starts the worker; none with fewer than [`CORES`] (see the module's doc) or where it
    /// cannot start.
    pub(super) fn start() -> Option<Rc<PageWorker>> {
        if cores() < CORES && !test_hooks::forced() {
            return None;
        }
        PageWorker::spawn()
    }

    /// Starts a worker of this script whatever the cores (the piece workers,
    /// [`super::pieces`]); none where it cannot start.
    pub(super) fn spawn() -> Option<Rc<PageWorker>> {
        let (glue, wasm) = app_urls()?;
        let options = WorkerOptions::new();
        options.set_type(WorkerType::Module);
        let worker = Worker::new_with_options("uses_worker.js", &options).ok()?;
        let me = Rc::new(PageWorker {
            worker,
            waiting: RefCell::default(),
            failed: Cell::new(false),
            jobs: Cell::new(0),
        });
        let weak = Rc::downgrade(&me);
        let on_error = Closure::<dyn FnMut()>::new(move || {
            let Some(me) = weak.upgrade() else { return };
            me.failed.set(true);
            let error = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&error, &"error".into(), &"the worker failed".into());
            for (_, resolve) in me.waiting.borrow_mut().drain(..) {
                let event = web_sys::MessageEventInit::new();
                event.set_data(&error);
                if let Ok(message) = MessageEvent::new_with_event_init_dict("message", &event) {
                    let _ = resolve.call1(&JsValue::NULL, &message);
                }
            }
        });
        me.worker
            .set_onerror(Some(on_error.as_ref().unchecked_ref()));
        // Lives as long as the page, as the worker does.
        on_error.forget();
        let start = js_sys::Object::new();
        js_sys::Reflect::set(&start, &"glue".into(), &glue.into()).ok()?;
        js_sys::Reflect::set(&start, &"wasm".into(), &wasm.into()).ok()?;
        me.worker.post_message(&start).ok()?;
        test_hooks::install_waiting(&me);
        Some(me)
    }

    /// Whether the worker failed (its answers to come are errors).
    pub(super) fn failed(&self) -> bool {
        self.failed.get()
    }

    /// Posts a job of `fields` (an `id` added) with a port to answer on: its number, the
    /// answer to come and the port, kept until it comes.
    pub(super) fn post(&self, fields: Vec<(&str, JsValue)>) -> Result<(u32, JsFuture, MessagePort), JsValue> {
        if self.failed.get() {
            return Err("the worker failed".into());
        }
        let channel = MessageChannel::new()?;
        let port = channel.port1();
        let id = self.jobs.get() + 1;
        self.jobs.set(id);
        let promise = js_sys::Promise::new(&mut |resolve, _| {
            port.set_onmessage(Some(&resolve));
            self.waiting.borrow_mut().push((id, resolve));
        });
        let request = js_sys::Object::new();
        js_sys::Reflect::set(&request, &"id".into(), &id.into())?;
        for (key, value) in fields {
            js_sys::Reflect::set(&request, &JsValue::from_str(key), &value)?;
        }
        self.worker.post_message_with_transfer(&request, &Array::of1(&channel.port2()))?;
        Ok((id, JsFuture::from(promise), port))
    }

    /// Job `id` is answered or called off: no error is to be passed on to it.
    pub(super) fn done(&self, id: u32) {
        self.waiting.borrow_mut().retain(|(job, _)| *job != id);
    }

    /// Calls off job `id`: the worker drops it (or its answer, if it is done).
    pub(super) fn call_off(&self, id: u32) {
        let cancel = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&cancel, &"cancel".into(), &id.into());
        let _ = self.worker.post_message(&cancel);
        self.done(id);
    }
}

/// The jobs of one read, in the page's worker; those still under way when they are dropped
/// (a newer read, Cancel) are called off.
pub struct UsesJobs {
    worker: Rc<PageWorker>,
    /// Each module's job: the bodies posted, the answer under way, the port it comes on.
    jobs: HashMap<String, Job>,
    /// The bytes of the bodies posted, which the progress is a fraction of.
    posted: Rc<Cell<f64>>,
    /// The worker's progress messages, for this read: the worker's handler while it is
    /// the newest read's.
    on_read: Closure<dyn FnMut(MessageEvent)>,
}

/// Logical processors from which the page has a `Used values` worker (see the module's doc).
const CORES: f64 = 4.0;

struct Job {
    id: u32,
    bodies: Vec<DeferredUses>,
    answer: JsFuture,
    _port: MessagePort,
}

impl Drop for UsesJobs {
    fn drop(&mut self) {
        for job in self.jobs.values() {
            self.worker.call_off(job.id);
        }
        // Unhooked before it is dropped, unless a newer read's has replaced it: a message
        // still to come (a called-off job's last progress) then finds no handler.
        let ours: &js_sys::Function = self.on_read.as_ref().unchecked_ref();
        let worker = &self.worker.worker;
        if worker
            .onmessage()
            .is_some_and(|f| js_sys::Object::is(&f, ours))
        {
            worker.set_onmessage(None);
        }
    }
}

impl UsesJobs {
    /// The jobs of a read in `workers`' `Used values` worker, `progress` told the fraction
    /// of the bodies posted that the worker has read. None where no worker could start
    /// (see the module's doc) or it failed.
    pub fn new(workers: &Workers, progress: impl Fn(f64) + 'static) -> Option<UsesJobs> {
        let worker = workers.uses().filter(|w| !w.failed.get())?;
        let first_job = worker.jobs.get() + 1;
        let (posted, read) = (Rc::new(Cell::new(0.0)), Cell::new(0.0));
        let total = posted.clone();
        // The worker's own messages: `[job, bytes]` for each slice it has read.
        let on_read = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let Ok(m) = e.data().dyn_into::<Array>() else {
                return;
            };
            let (job, bytes) = (
                m.get(0).as_f64().unwrap_or(0.0),
                m.get(1).as_f64().unwrap_or(0.0),
            );
            if job >= f64::from(first_job) && total.get() > 0.0 {
                read.set(read.get() + bytes);
                progress((read.get() / total.get()).min(1.0));
            }
        });
        // The newest read's replaces the last one's.
        worker
            .worker
            .set_onmessage(Some(on_read.as_ref().unchecked_ref()));
        Some(UsesJobs {
            worker,
            jobs: HashMap::new(),
            posted,
            on_read,
        })
    }

    /// A body the first read just listed (skipped): read at once, while the page reads the
    /// rest of the file. A module with a second body waits for [`UsesJobs::read`].
    pub fn jumped(&mut self, files: &[Picked], body: &DeferredUses) {
        match self.jobs.remove(&body.module) {
            Some(job) => self.worker.call_off(job.id),
            None => self.post(files, vec![body.clone()]),
        }
    }

    /// The read is over: `deferred` lists every body skipped. Every module whose job does
    /// not read the bodies listed for it (a second body, one found without a jump) gets one
    /// for these.
    pub fn settle(&mut self, files: &[Picked], deferred: &[DeferredUses]) {
        let mut modules: Vec<&str> = deferred.iter().map(|d| d.module.as_str()).collect();
        modules.dedup();
        for module in modules {
            let bodies: Vec<DeferredUses> = deferred
                .iter()
                .filter(|d| d.module == module)
                .cloned()
                .collect();
            if self.jobs.get(module).is_none_or(|j| j.bodies != bodies) {
                if let Some(job) = self.jobs.remove(module) {
                    self.worker.call_off(job.id);
                }
                self.post(files, bodies);
            }
        }
    }

    /// Posts one module's job (none when it cannot be posted: the page reads it itself).
    fn post(&mut self, files: &[Picked], bodies: Vec<DeferredUses>) {
        let Some(module) = bodies.first().map(|d| d.module.clone()) else {
            return;
        };
        let size: u64 = bodies.iter().map(|d| d.bytes.end - d.bytes.start).sum();
        match self.job(files, bodies) {
            Ok(job) => {
                self.posted.set(self.posted.get() + size as f64);
                self.jobs.insert(module, job);
            }
            Err(e) => leptos::logging::warn!("bufscope: no worker for the uses: {}", js_error(e)),
        }
    }

    fn job(&self, files: &[Picked], bodies: Vec<DeferredUses>) -> Result<Job, JsValue> {
        let json = serde_json::to_string(&bodies).map_err(|e| JsValue::from(e.to_string()))?;
        let (handed, names) = handed(files, |name| bodies.iter().any(|d| d.file == name));
        let fields = vec![("files", handed.into()), ("names", names.into()), ("bodies", json.into())];
        let (id, answer, port) = self.worker.post(fields)?;
        Ok(Job { id, bodies, answer, _port: port })
    }

    /// Whether a job reads `bodies` (a module's, in order).
    pub fn has(&self, bodies: &[&DeferredUses]) -> bool {
        let module = bodies.first().map_or("", |d| d.module.as_str());
        self.jobs.get(module).is_some_and(|j| {
            j.bodies.len() == bodies.len() && j.bodies.iter().zip(bodies).all(|(a, b)| a == *b)
        })
    }

    /// The answer of the job that reads `bodies` (see [`UsesJobs::has`]).
    pub async fn answer(&mut self, bodies: &[&DeferredUses]) -> Answer {
        let Some(first) = bodies.first() else {
            return Answer::Failed("no body".into());
        };
        let Some(job) = self.jobs.remove(&first.module) else {
            return Answer::Failed(format!("no job for {}", first.module));
        };
        let answer = job.answer.await;
        self.worker.done(job.id);
        let out = match answer_array(answer) {
            Ok(out) => out,
            Err(why) => return Answer::Failed(why),
        };
        match out.get(0).as_string().as_deref() {
            Some("ok") => decode(&out, first).await,
            Some("inexact") => Answer::Inexact(out.get(1).as_string().unwrap_or_default()),
            _ => Answer::Failed("the worker's answer is not one".into()),
        }
    }
}

/// The files of `files` that `wanted` names, and their names (a job's `files`, `names`).
pub(super) fn handed(files: &[Picked], wanted: impl Fn(&str) -> bool) -> (Array, Array) {
    let (handed, names) = (Array::new(), Array::new());
    for p in files.iter().filter(|p| wanted(&p.name)) {
        handed.push(&p.file);
        names.push(&p.name.as_str().into());
    }
    (handed, names)
}

/// The logical processors the browser says the machine has.
pub(super) fn cores() -> f64 {
    web_sys::window().map_or(1.0, |w| w.navigator().hardware_concurrency())
}

/// A job's answer as the array the worker posted, or the error it posted or met.
pub(super) fn answer_array(answer: Result<JsValue, JsValue>) -> Result<Array, String> {
    let data = answer.map_err(js_error)?.unchecked_into::<MessageEvent>().data();
    data.clone().dyn_into::<Array>().map_err(|_| {
        js_error(js_sys::Reflect::get(&data, &"error".into()).unwrap_or(data))
    })
}

/// Bytes of records taken back in one task (a few ms).
const UNPACK_PIECE: u32 = 4 << 20;

/// A part from the worker's `["ok", used, infos, names, uses chunk…, wasm bytes]`: each
/// buffer copied once into this instance's memory, in pieces of whole records or a chunk
/// at a time, a task each (a 1 GB dump's are hundreds of MB).
async fn decode(out: &Array, first: &DeferredUses) -> Answer {
    match unpack(out, 4..out.length().saturating_sub(1)).await {
        Ok(u) => {
            let worker_bytes = out
                .get(out.length().saturating_sub(1))
                .as_f64()
                .unwrap_or(0.0);
            Answer::Part(u.finish(first), worker_bytes)
        }
        Err(why) => Answer::Failed(why),
    }
}

/// What `out` (`["ok", used, infos, names, …]`, its uses chunks at `uses`) holds, taken
/// back a task at a time.
pub(super) async fn unpack(out: &Array, uses: std::ops::Range<u32>) -> Result<Unpack, String> {
    let buffer = |i: u32| {
        out.get(i)
            .dyn_into::<ArrayBuffer>()
            .map(|b| Uint8Array::new(&b))
            .map_err(|_| "the worker's answer lacks a buffer".to_string())
    };
    let mut u = Unpack::new(&buffer(3)?.to_vec())?;
    for (i, record) in [(1, Handoff::USED_RECORD), (2, Handoff::INFO_RECORD)] {
        let records = buffer(i)?;
        let piece = UNPACK_PIECE / record as u32 * record as u32;
        let mut at = 0;
        while at < records.length() {
            let end = records.length().min(at + piece);
            let bytes = records.subarray(at, end).to_vec();
            if i == 1 {
                u.used(&bytes)?
            } else {
                u.infos(&bytes)?
            }
            at = end;
            next_task().await;
        }
    }
    for i in uses {
        let text = String::from_utf8(buffer(i)?.to_vec())
            .map_err(|_| "the worker's uses are not text".to_string())?;
        u.uses(text);
        next_task().await;
    }
    Ok(u)
}

/// The URLs of the app's wasm-bindgen glue and wasm module, as the page's boot script
/// names them (the site's `<script data-js data-wasm>`; the single file has none).
fn app_urls() -> Option<(String, String)> {
    let script = page_element("script[data-js][data-wasm]")?;
    let base = web_sys::window()?.document()?.base_uri().ok()??;
    let url = |attr: &str| {
        let rel = script.get_attribute(attr)?;
        web_sys::Url::new_with_base(&rel, &base)
            .ok()
            .map(|u| u.href())
    };
    Some((url("data-js")?, url("data-wasm")?))
}

/// Browser tests have the worker whatever the cores (`window.__bufscope_early_uses`, set
/// before the app starts), to test it on a machine with few, and can count the jobs whose
/// answers are awaited (`window.__bufscope_uses_waiting()`).
mod test_hooks {
    #[cfg(feature = "test-hooks")]
    pub fn install_waiting(worker: &std::rc::Rc<super::PageWorker>) {
        use wasm_bindgen::closure::Closure;
        use wasm_bindgen::JsCast;
        let weak = std::rc::Rc::downgrade(worker);
        let hook = Closure::<dyn Fn() -> f64>::new(move || {
            weak.upgrade()
                .map_or(0.0, |w| w.waiting.borrow().len() as f64)
        });
        if let Some(window) = web_sys::window() {
            let key = wasm_bindgen::JsValue::from_str("__bufscope_uses_waiting");
            let _ = js_sys::Reflect::set(&window, &key, hook.as_ref().unchecked_ref());
        }
        hook.forget();
    }

    #[cfg(not(feature = "test-hooks"))]
    pub fn install_waiting(_: &std::rc::Rc<super::PageWorker>) {}

    #[cfg(feature = "test-hooks")]
    pub fn forced() -> bool {
        let key = wasm_bindgen::JsValue::from_str("__bufscope_early_uses");
        web_sys::window()
            .and_then(|w| js_sys::Reflect::get(&w, &key).ok())
            .is_some_and(|v| v.is_truthy())
    }

    #[cfg(not(feature = "test-hooks"))]
    pub fn forced() -> bool {
        false
    }
}

/// The size in bytes of this instance's WebAssembly memory (`wasm_bindgen::memory()`'s
/// buffer; it only grows, so after a load it is the peak of that load): the page's, for the
/// benchmark hook, or the `Used values` worker's, for its report.
pub(crate) fn wasm_bytes() -> f64 {
    use wasm_bindgen::JsCast;
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .ok()
        .and_then(|m| m.buffer().dyn_into::<js_sys::ArrayBuffer>().ok())
        .map_or(0.0, |b| f64::from(b.byte_length()))
}
