//! `Used values` read in a worker with a wasm instance of its own (`uses_worker.js`), so
//! that a big dump uses two cores: while the page joins, analyses and draws what the first
//! read gave, the worker reads the skipped bodies ([`UsesRead`], fed by the worker's
//! script) and hands back what it read as buffers ([`Handoff`]), which the page turns into the
//! [`UsedPart`] that completes the module (`load/complete.rs`).
//!
//! Owns both sides: the worker's reader ([`UsesRead`], exported to the worker's script) and the page's jobs ([`UsesJobs`]: one worker per read, started with the read so
//! that its instance is ready; one job per module, posted as soon as the page jumps over
//! the module's body, or once the read is over for a module with several bodies; the
//! worker ended with the read). Where no worker can start (the single file opened from
//! disk has no script URL to give it, or the browser has no module workers) or a job
//! fails, the page reads the bodies on its own thread as before; where a body does not read
//! as one pass would (the worker says so), the files are read again in one pass.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use bufscope::parse::{DeferredUses, Handoff, Unpack, UsedPart, UsesReader};
use js_sys::{Array, ArrayBuffer, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{MessageChannel, MessageEvent, MessagePort, Worker, WorkerOptions, WorkerType};

use super::read::{js_error, Picked};
use super::tasks::next_task;

/// The worker's side (`uses_worker.js` drives it): a module's bodies (JSON of its
/// [`DeferredUses`], in order), whose bytes the script reads from the files (reading ahead
/// while this parses) and feeds, body after body.
#[wasm_bindgen(js_name = UsesRead)]
pub struct UsesRead {
    bodies: Vec<DeferredUses>,
    reader: Option<UsesReader>,
}

#[wasm_bindgen(js_class = UsesRead)]
impl UsesRead {
    #[wasm_bindgen(constructor)]
    pub fn new(bodies: String) -> Result<UsesRead, JsValue> {
        let bodies: Vec<DeferredUses> =
            serde_json::from_str(&bodies).map_err(|e| JsValue::from(e.to_string()))?;
        let first = bodies
            .first()
            .ok_or_else(|| JsValue::from("no body to read"))?;
        Ok(UsesRead {
            reader: Some(UsesReader::new(first)),
            bodies,
        })
    }

    /// How many bodies there are; body `i`'s file name and byte range.
    pub fn count(&self) -> usize {
        self.bodies.len()
    }
    pub fn file(&self, i: usize) -> Option<String> {
        Some(self.bodies.get(i)?.file.clone())
    }
    pub fn start(&self, i: usize) -> f64 {
        self.bodies.get(i).map_or(0.0, |d| d.bytes.start as f64)
    }
    pub fn end(&self, i: usize) -> f64 {
        self.bodies.get(i).map_or(0.0, |d| d.bytes.end as f64)
    }

    /// The bytes fed next are body `i`'s (body 0's are fed from the start).
    pub fn begin(&mut self, i: usize) {
        if let (Some(r), Some(d)) = (self.reader.as_mut(), self.bodies.get(i)) {
            if i > 0 {
                r.body(d);
            }
        }
    }

    /// More bytes of the current body, in order.
    pub fn feed(&mut self, bytes: &[u8]) {
        if let Some(r) = self.reader.as_mut() {
            r.feed(bytes);
        }
    }

    /// The bodies are fed: `["ok", used, infos, names, uses chunk…, wasm bytes]` (the
    /// [`Handoff`]'s buffers, each an
    /// `ArrayBuffer`, to be transferred), or `["inexact", why]` when they do not read as
    /// one pass reads them.
    pub fn finish(&mut self) -> Result<Array, JsValue> {
        let reader = self
            .reader
            .take()
            .ok_or_else(|| JsValue::from("finished"))?;
        let out = Array::new();
        match reader.finish() {
            Ok(part) => {
                let Handoff {
                    used,
                    infos,
                    names,
                    uses,
                } = part.into_handoff();
                out.push(&"ok".into());
                for buffer in [used, infos, names] {
                    out.push(&Uint8Array::from(&buffer[..]).buffer());
                }
                for chunk in &uses {
                    out.push(&Uint8Array::from(chunk.as_bytes()).buffer());
                }
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

/// The size of this instance's memory (it only grows: the peak of its work).
fn wasm_bytes() -> f64 {
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .map_or(0.0, |m| {
            m.buffer()
                .dyn_into::<ArrayBuffer>()
                .map_or(0.0, |b| f64::from(b.byte_length()))
        })
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

/// The jobs of one read: a worker of its own, ended when the jobs are dropped.
pub struct UsesJobs {
    worker: Worker,
    /// The app's glue and wasm, for the worker to start its instance from.
    glue: String,
    wasm: String,
    /// Each module's job: the bodies posted, the answer under way, the port it comes on.
    jobs: HashMap<String, Job>,
    /// Jobs are posted while the page still reads and draws ([`EARLY_CORES`]).
    early: bool,
    /// The jobs' answers still to come: a worker that fails (its script missing, say) gives
    /// each an error instead (`_on_error`), so that the page reads those bodies itself.
    /// (None once it failed: no job is posted to it then.)
    waiting: Rc<RefCell<Option<Vec<js_sys::Function>>>>,
    _on_error: Closure<dyn FnMut()>,
    /// Counts the bytes the worker has read and tells `progress` the fraction of those
    /// posted.
    _on_read: Closure<dyn FnMut(MessageEvent)>,
    posted: Rc<Cell<f64>>,
}

/// Logical processors from which the worker reads while the page reads and draws: with
/// fewer, the two compete for one core's time and the diagrams come later (on this
/// project's 2-core machine, 0.8–1.0 s after the pick instead of 0.6–0.7 s for a 94 MB dump),
/// so jobs wait for the diagrams.
const EARLY_CORES: f64 = 4.0;

struct Job {
    bodies: Vec<DeferredUses>,
    answer: JsFuture,
    _port: MessagePort,
}

impl Drop for UsesJobs {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}

impl UsesJobs {
    /// Starts a worker for a read, which starts its wasm instance while the page reads.
    /// None where no worker can start (see the module's doc).
    pub fn new(progress: impl Fn(f64) + 'static) -> Option<UsesJobs> {
        let (glue, wasm) = app_urls()?;
        let options = WorkerOptions::new();
        options.set_type(WorkerType::Module);
        let worker = Worker::new_with_options("uses_worker.js", &options).ok()?;
        let cores = web_sys::window().map_or(1.0, |w| w.navigator().hardware_concurrency());
        let waiting = Rc::new(RefCell::new(Some(Vec::<js_sys::Function>::new())));
        let failed = waiting.clone();
        let on_error = Closure::<dyn FnMut()>::new(move || {
            let error = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&error, &"error".into(), &"the worker failed".into());
            let pending = failed.borrow_mut().take().unwrap_or_default();
            for resolve in pending {
                let event = web_sys::MessageEventInit::new();
                event.set_data(&error);
                let message = MessageEvent::new_with_event_init_dict("message", &event);
                if let Ok(message) = message {
                    let _ = resolve.call1(&JsValue::NULL, &message);
                }
            }
        });
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        let (posted, read) = (Rc::new(Cell::new(0.0)), Cell::new(0.0));
        let total = posted.clone();
        let on_read = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            read.set(read.get() + e.data().as_f64().unwrap_or(0.0));
            if total.get() > 0.0 {
                progress((read.get() / total.get()).min(1.0));
            }
        });
        worker.set_onmessage(Some(on_read.as_ref().unchecked_ref()));
        let jobs = UsesJobs {
            worker,
            glue,
            wasm,
            jobs: HashMap::new(),
            early: cores >= EARLY_CORES || test_hooks::early(),
            waiting,
            _on_error: on_error,
            _on_read: on_read,
            posted,
        };
        let start = jobs.request().ok()?;
        jobs.worker.post_message(&start).ok()?;
        Some(jobs)
    }

    /// The body just jumped over: read at once, while the page reads the rest of the
    /// file. A module with a second body waits for [`UsesJobs::read`].
    pub fn jumped(&mut self, files: &[Picked], body: &DeferredUses) {
        if !self.early {
            return;
        }
        if self.jobs.remove(&body.module).is_none() {
            self.post(files, vec![body.clone()]);
        }
    }

    /// The read is over: `deferred` lists every body skipped. With jobs posted early, a
    /// module whose job reads other bodies (or none) gets one for these now.
    pub fn read(&mut self, files: &[Picked], deferred: &[DeferredUses]) {
        if self.early {
            self.settle(files, deferred);
        }
    }

    /// The diagrams are on screen: every module whose job does not read the bodies
    /// `deferred` lists for it gets one for these.
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
                self.jobs.remove(module);
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

    /// The request that starts the worker's instance; a job's adds to it.
    fn request(&self) -> Result<js_sys::Object, JsValue> {
        let request = js_sys::Object::new();
        js_sys::Reflect::set(&request, &"glue".into(), &self.glue.as_str().into())?;
        js_sys::Reflect::set(&request, &"wasm".into(), &self.wasm.as_str().into())?;
        Ok(request)
    }

    fn job(&self, files: &[Picked], bodies: Vec<DeferredUses>) -> Result<Job, JsValue> {
        if self.waiting.borrow().is_none() {
            return Err("the worker failed".into());
        }
        let json = serde_json::to_string(&bodies).map_err(|e| JsValue::from(e.to_string()))?;
        let (handed, names) = (Array::new(), Array::new());
        for p in files
            .iter()
            .filter(|p| bodies.iter().any(|d| d.file == p.name))
        {
            handed.push(&p.file);
            names.push(&p.name.as_str().into());
        }
        let channel = MessageChannel::new()?;
        let port = channel.port1();
        let promise = js_sys::Promise::new(&mut |resolve, _| {
            port.set_onmessage(Some(&resolve));
            if let Some(waiting) = self.waiting.borrow_mut().as_mut() {
                waiting.push(resolve);
            }
        });
        let request = self.request()?;
        for (key, value) in [
            ("files", handed.into()),
            ("names", names.into()),
            ("bodies", json.into()),
        ] {
            js_sys::Reflect::set(&request, &JsValue::from_str(key), &value)?;
        }
        self.worker
            .post_message_with_transfer(&request, &Array::of1(&channel.port2()))?;
        Ok(Job {
            bodies,
            answer: JsFuture::from(promise),
            _port: port,
        })
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
        let data = match job.answer.await {
            Ok(event) => event.unchecked_into::<MessageEvent>().data(),
            Err(e) => return Answer::Failed(js_error(e)),
        };
        let Ok(out) = data.clone().dyn_into::<Array>() else {
            let why = js_sys::Reflect::get(&data, &"error".into()).unwrap_or(data);
            return Answer::Failed(js_error(why));
        };
        match out.get(0).as_string().as_deref() {
            Some("ok") => decode(&out, first).await,
            Some("inexact") => Answer::Inexact(out.get(1).as_string().unwrap_or_default()),
            _ => Answer::Failed("the worker's answer is not one".into()),
        }
    }
}

/// Bytes of records taken back in one task (a few ms).
const UNPACK_PIECE: u32 = 4 << 20;

/// A part from the worker's `["ok", used, infos, names, uses chunk…, wasm bytes]`: each
/// buffer copied once into this instance's memory, in pieces of whole records or a chunk
/// at a time, a task each (a 1 GB dump's are hundreds of MB).
async fn decode(out: &Array, first: &DeferredUses) -> Answer {
    match unpack(out).await {
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

async fn unpack(out: &Array) -> Result<Unpack, String> {
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
    for i in 4..out.length().saturating_sub(1) {
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
    let document = web_sys::window()?.document()?;
    let script = document
        .query_selector("script[data-js][data-wasm]")
        .ok()??;
    let base = document.base_uri().ok()??;
    let url = |attr: &str| {
        let rel = script.get_attribute(attr)?;
        web_sys::Url::new_with_base(&rel, &base)
            .ok()
            .map(|u| u.href())
    };
    Some((url("data-js")?, url("data-wasm")?))
}

/// Browser tests post jobs early whatever the cores (`window.__bufscope_early_uses`), to
/// test that path on a machine with few.
mod test_hooks {
    #[cfg(feature = "test-hooks")]
    pub fn early() -> bool {
        let key = wasm_bindgen::JsValue::from_str("__bufscope_early_uses");
        web_sys::window()
            .and_then(|w| js_sys::Reflect::get(&w, &key).ok())
            .is_some_and(|v| v.is_truthy())
    }

    #[cfg(not(feature = "test-hooks"))]
    pub fn early() -> bool {
        false
    }
}
