//! Fetching the byte ranges a read asks for from the picked files: `Blob.slice` +
//! `arrayBuffer`, in the reading worker (`reader.js`) while it works, else on the page's
//! own thread, with the next ranges' reads under way while the page parses one.
//!
//! Owns: the reading worker ([`ReadWorker`], held by the app's [`super::Workers`]), the
//! reads under way of one read ([`Fetch`]) and falling back to the page's thread when the
//! worker fails.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use bufscope::parse::Ask;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::File;

use super::{js_error, Picked};

/// Most reads under way at once in one [`Fetch`] (those of a worker that fails are
/// answered with an error; a few more than a read keeps are remembered).
const MOST_UNDER_WAY: usize = 8;

/// The app's reading worker (`reader.js`), started with the page so that no request is
/// made once a file is given. Chromium copies a Blob's bytes on the thread that reads them;
/// the worker takes that copy off the thread that parses (at 1 GB: 0.8 s of waiting
/// between slices instead of 1.7 s).
pub struct ReadWorker {
    worker: web_sys::Worker,
    /// Set by the worker's `error` event (e.g. `reader.js` could not be loaded).
    failed: Cell<bool>,
    /// The resolvers of the last requests, answered with an error if the worker fails
    /// (answers come in order and only a few are pending).
    waiting: RefCell<VecDeque<js_sys::Function>>,
}

impl ReadWorker {
    /// Starts the worker; none where it cannot start.
    pub fn start() -> Option<Rc<ReadWorker>> {
        // Relative to the page, beside boot.js: the page's origin, which its CSP allows.
        let worker = web_sys::Worker::new("reader.js").ok()?;
        let me = Rc::new(ReadWorker {
            worker,
            failed: Cell::new(false),
            waiting: RefCell::default(),
        });
        let weak = Rc::downgrade(&me);
        let on_error = Closure::<dyn FnMut()>::new(move || {
            if let Some(me) = weak.upgrade() {
                me.failed.set(true);
                for resolve in me.waiting.borrow_mut().drain(..) {
                    let _ = resolve.call1(&JsValue::NULL, &"the reading worker failed".into());
                }
            }
        });
        me.worker
            .set_onerror(Some(on_error.as_ref().unchecked_ref()));
        // Lives as long as the page, as the worker does.
        on_error.forget();
        Some(me)
    }

    /// Asks the worker for bytes `start .. end` of `file`.
    fn ask(&self, file: &File, start: f64, end: f64) -> Result<Slice, JsValue> {
        let channel = web_sys::MessageChannel::new()?;
        let answer = channel.port1();
        let promise = js_sys::Promise::new(&mut |resolve, _reject| {
            answer.set_onmessage(Some(&resolve));
            let mut waiting = self.waiting.borrow_mut();
            if waiting.len() > MOST_UNDER_WAY {
                waiting.pop_front();
            }
            waiting.push_back(resolve);
        });
        let request = js_sys::Object::new();
        js_sys::Reflect::set(&request, &"file".into(), file)?;
        js_sys::Reflect::set(&request, &"start".into(), &start.into())?;
        js_sys::Reflect::set(&request, &"end".into(), &end.into())?;
        let port = channel.port2();
        self.worker
            .post_message_with_transfer(&request, &js_sys::Array::of1(&port))?;
        Ok(Slice {
            read: Ok(JsFuture::from(promise)),
            _port: Some(answer),
        })
    }
}

/// The reads of one read of `files`, the next ones under way while one is parsed.
pub(super) struct Fetch<'a> {
    files: &'a [Picked],
    worker: Option<Rc<ReadWorker>>,
    /// Whether this read already went over to the page's thread.
    fell_back: bool,
    under_way: VecDeque<(Ask, Slice)>,
    /// The bytes of the last slice read, in the browser's memory.
    got: js_sys::Uint8Array,
    /// A window of them copied into the page's memory ([`Fetch::window`]).
    buf: Vec<u8>,
}

impl<'a> Fetch<'a> {
    pub(super) fn new(files: &'a [Picked], worker: Option<Rc<ReadWorker>>) -> Fetch<'a> {
        Fetch {
            files,
            worker,
            fell_back: false,
            under_way: VecDeque::new(),
            got: js_sys::Uint8Array::new_with_length(0),
            buf: Vec::new(),
        }
    }

    /// How many bytes the last slice read has.
    pub(super) fn got(&self) -> u32 {
        self.got.length()
    }

    /// Bytes `at .. at + most` of the last slice read (fewer at its end), copied into the
    /// page's memory over the window before.
    pub(super) fn window(&mut self, at: u32, most: u32) -> &[u8] {
        let end = self.got.length().min(at.saturating_add(most));
        let at = at.min(end);
        self.buf.clear();
        self.buf.resize((end - at) as usize, 0);
        self.got.subarray(at, end).copy_to(&mut self.buf);
        &self.buf
    }

    /// The bytes `ask` names, kept for [`Fetch::window`]: from the read under way for it, if one is (those
    /// before it, no longer wanted, dropped), else read now; then reads of `ahead` started
    /// (those not under way). A file the browser cannot read is one sentence.
    pub(super) async fn get(&mut self, ask: &Ask, ahead: &[Ask]) -> Result<(), String> {
        loop {
            let slice = match self.under_way.iter().position(|(a, _)| a == ask) {
                Some(at) => {
                    self.under_way.drain(..at);
                    self.under_way.pop_front().map(|(_, s)| s)
                }
                None => {
                    self.under_way.clear();
                    None
                }
            };
            let slice = slice.unwrap_or_else(|| self.start(ask));
            for next in ahead {
                if !self.under_way.iter().any(|(a, _)| a == next) {
                    let read = self.start(next);
                    self.under_way.push_back((next.clone(), read));
                }
            }
            match slice.finish().await {
                Ok(got) => {
                    self.got = got;
                    return Ok(());
                }
                Err(_) if self.fall_back() => {
                    // The worker could not start (its script missing, say): read this
                    // again, and the rest, on the page's own thread.
                    self.under_way.clear();
                }
                Err(e) => {
                    return Err(format!(
                        "{}: the browser could not read this file ({e}).",
                        ask.file
                    ))
                }
            }
        }
    }

    /// After a read failed: whether it was the worker's failure, seen for the first time,
    /// so that reading goes over to the page's thread (true once at most).
    fn fall_back(&mut self) -> bool {
        let failed = self.worker.as_ref().is_some_and(|w| w.failed.get());
        failed && !std::mem::replace(&mut self.fell_back, true)
    }

    /// Starts reading the bytes `ask` names; they are read while the page goes on.
    fn start(&self, ask: &Ask) -> Slice {
        let Some(picked) = self.files.iter().find(|p| p.name == ask.file) else {
            let why = format!("{} is not among the files read", ask.file);
            return Slice { read: Err(why), _port: None };
        };
        let (file, start) = (&picked.file, ask.bytes.start as f64);
        let end = (ask.bytes.end as f64).min(file.size());
        let worker = self.worker.as_ref().filter(|w| !w.failed.get() && !self.fell_back);
        if let Some(worker) = worker {
            return worker.ask(file, start, end).unwrap_or_else(|e| Slice {
                read: Err(js_error(e)),
                _port: None,
            });
        }
        let read = file
            .slice_with_f64_and_f64(start, end)
            .map(|blob| JsFuture::from(blob.array_buffer()))
            .map_err(js_error);
        Slice { read, _port: None }
    }
}

/// A read of some bytes of a file, under way.
struct Slice {
    /// Resolves to an `ArrayBuffer`, or (from the worker) to a `MessageEvent` whose data is
    /// the `ArrayBuffer` or a string saying why it could not be read.
    read: Result<JsFuture, String>,
    /// The port the worker answers on, kept open until the answer came.
    _port: Option<web_sys::MessagePort>,
}

impl Slice {
    /// Waits for the bytes.
    async fn finish(self) -> Result<js_sys::Uint8Array, String> {
        let mut answer = self.read?.await.map_err(js_error)?;
        if let Some(event) = answer.dyn_ref::<web_sys::MessageEvent>() {
            answer = event.data();
        }
        let array: js_sys::ArrayBuffer = match answer.dyn_into() {
            Ok(array) => array,
            Err(other) => return Err(js_error(other)),
        };
        Ok(js_sys::Uint8Array::new(&array))
    }
}
