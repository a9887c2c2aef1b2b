//! Reading dropped or picked files in the browser: each `File` is read in slices
//! (`Blob.slice` + `arrayBuffer`) and fed to the streaming [`Loader`], so a large dump is
//! never held twice and the page can show progress between slices. Dropped folders are
//! walked with the File and Directory Entries API (`webkitGetAsEntry`).
//!
//! Owns: turning what the user gave (a drop, a pick, a folder) into [`Picked`] files, the
//! choice of which of them to read ([`select`]), and the sliced, cancellable reading
//! ([`read_files`]). What is shown, and when, is [`super`]'s business.

use bufscope::parse::{Behind, DeferredUses};
use bufscope::Loader;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DataTransfer, File, FileList, FileSystemDirectoryEntry, FileSystemEntry, FileSystemFileEntry,
};

use super::tasks::let_paint;

mod tail;

/// Bytes per slice handed to the loader. Each slice is parsed in one go between two
/// awaits, about 10 ms in the browser; each slice also costs about 1 ms of waiting for the
/// browser, so 2 MiB rather than 1 MiB saved a tenth of the load time at 1 GB.
const CHUNK: f64 = 2.0 * 1024.0 * 1024.0;
/// Slices of a gzipped file: dumps compress about tenfold, so this is ~2 MiB of text.
const GZ_CHUNK: f64 = 256.0 * 1024.0;
/// The first slice of every file, small enough to be cheap even when it is gzip.
const FIRST_CHUNK: f64 = 64.0 * 1024.0;
/// Slices asked for ahead of the one being parsed.
const AHEAD: usize = 2;
/// Most reads under way at once in one read of files: the slice waited for and [`AHEAD`]
/// more forward, and those of the search for a skipped body's end ([`tail`]).
const MOST_ASKED: usize = 1 + AHEAD + tail::MOST_ASKED;

/// A file to read and the name it is read under (its path inside a folder, if any).
#[derive(Clone)]
pub struct Picked {
    pub name: String,
    pub file: File,
    /// Found inside a folder (picked or dropped) rather than chosen one by one.
    pub in_folder: bool,
    /// One of a folder's other texts, read only for an out-of-memory message
    /// ([`bufscope::parse::FolderPlan::texts`], `Loader::search_only`).
    pub searched: bool,
}

/// The files of a `FileList` (from an `<input type=file>`, or a drop without folders).
pub fn files_of(list: Option<FileList>) -> Vec<Picked> {
    let Some(list) = list else { return Vec::new() };
    (0..list.length())
        .filter_map(|i| list.get(i))
        .map(|file| {
            // `webkitRelativePath` is set for files of a folder picked with `webkitdirectory`.
            let path = js_sys::Reflect::get(&file, &JsValue::from_str("webkitRelativePath"))
                .ok()
                .and_then(|v| v.as_string())
                .filter(|s| !s.is_empty());
            let in_folder = path.is_some();
            Picked {
                name: path.unwrap_or_else(|| file.name()),
                file,
                in_folder,
                searched: false,
            }
        })
        .collect()
}

/// What was dropped. Must be called during the `drop` event: its `DataTransfer` is
/// emptied once the event is over, while the entries taken from it stay usable.
pub enum Dropped {
    Files(Vec<Picked>),
    /// At least one folder: the entries, walked by [`walk`].
    Entries(Vec<FileSystemEntry>),
}

pub fn dropped(dt: &DataTransfer) -> Dropped {
    let items = dt.items();
    let entries: Vec<FileSystemEntry> = (0..items.length())
        .filter_map(|i| items.get(i))
        .filter(|item| item.kind() == "file")
        .filter_map(|item| item.webkit_get_as_entry().ok().flatten())
        .collect();
    if entries.iter().any(|e| e.is_directory()) {
        Dropped::Entries(entries)
    } else {
        Dropped::Files(files_of(dt.files()))
    }
}

/// Every file under the dropped entries, folders walked depth first, in name order.
pub async fn walk(entries: Vec<FileSystemEntry>) -> Result<Vec<Picked>, String> {
    let mut out = Vec::new();
    let mut stack: Vec<(FileSystemEntry, bool)> =
        entries.into_iter().rev().map(|e| (e, false)).collect();
    while let Some((entry, in_folder)) = stack.pop() {
        if entry.is_directory() {
            let reader = entry
                .unchecked_into::<FileSystemDirectoryEntry>()
                .create_reader();
            let mut children = Vec::new();
            // `readEntries` gives at most ~100 entries per call; an empty batch ends it.
            loop {
                let batch = callback_promise(|ok, err| {
                    reader.read_entries_with_callback_and_callback(ok, err)
                })
                .await?
                .unchecked_into::<js_sys::Array>();
                if batch.length() == 0 {
                    break;
                }
                children.extend(batch.iter().map(|e| e.unchecked_into::<FileSystemEntry>()));
            }
            children.sort_by_key(|e| std::cmp::Reverse(e.name()));
            stack.extend(children.into_iter().map(|e| (e, true)));
        } else if entry.is_file() {
            let name = entry.full_path().trim_start_matches('/').to_string();
            let file_entry = entry.unchecked_into::<FileSystemFileEntry>();
            let file = callback_promise(|ok, err| {
                file_entry.file_with_callback_and_callback(ok, err);
                Ok(())
            })
            .await?
            .unchecked_into::<File>();
            out.push(Picked {
                name,
                file,
                in_folder,
                searched: false,
            });
        }
    }
    Ok(out)
}

/// A callback-style browser call as a future.
async fn callback_promise(
    call: impl FnOnce(&js_sys::Function, &js_sys::Function) -> Result<(), JsValue>,
) -> Result<JsValue, String> {
    let mut call = Some(call);
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
        if let Some(call) = call.take() {
            if let Err(e) = call(&resolve, &reject) {
                let _ = reject.call1(&JsValue::NULL, &e);
            }
        }
    });
    JsFuture::from(promise).await.map_err(js_error)
}

/// Files chosen one by one are always read; of those found in folders, what the CLI reads
/// of a folder ([`bufscope::parse::folder_plan`]: the ones named like dumps and `.error.txt`,
/// else the `.txt` files, such as renamed TPU dumps; XLA's other output skipped). HLO texts
/// (`*after_optimizations.txt`, [`bufscope::parse::is_hlo_text`]) apart, to be read after
/// the diagrams. A folder's other texts (a `compile.log`, up to
/// [`bufscope::parse::MAX_SEARCHED_TEXT`]) come after its dumps, marked `searched`. Returns
/// the files to read (sorted by path when folders are involved), the HLO texts, and how
/// many were skipped.
pub fn select(mut files: Vec<Picked>) -> (Vec<Picked>, Vec<Picked>, usize) {
    if files.iter().any(|p| p.in_folder) {
        // Browsers list a folder in no particular order.
        files.sort_by(|a, b| a.name.cmp(&b.name));
    }
    let in_folders: Vec<&str> = files
        .iter()
        .filter(|p| p.in_folder)
        .map(|p| p.name.as_str())
        .collect();
    let plan = bufscope::parse::folder_plan(&in_folders);
    let (mut dumps, mut hlo, mut texts) = (Vec::new(), Vec::new(), Vec::new());
    let mut skipped = plan.skipped;
    let mut folder_index = 0;
    for p in files {
        let is_hlo = bufscope::parse::is_hlo_text(&p.name);
        if p.in_folder {
            let k = folder_index;
            folder_index += 1;
            if plan.hlo.contains(&k) {
                hlo.push(p);
            } else if plan.dumps.contains(&k) {
                dumps.push(p);
            } else if plan.texts.contains(&k) {
                if p.file.size() <= bufscope::parse::MAX_SEARCHED_TEXT as f64 {
                    texts.push(Picked { searched: true, ..p });
                } else {
                    skipped += 1;
                }
            }
        } else if is_hlo {
            // Picked one by one: always read, an HLO text after the dumps.
            hlo.push(p);
        } else {
            dumps.push(p);
        }
    }
    dumps.append(&mut texts);
    (dumps, hlo, skipped)
}

/// The files fed to a [`Loader`], not yet finished: joining and checking
/// ([`Loader::finishing`]) is left to the caller, who does it in pieces.
pub struct Fed {
    pub loader: Loader,
    /// Milliseconds spent in [`Loader::feed`] (parsing), the rest of reading being waits.
    pub parse_ms: f64,
    /// Files the browser could not read (one sentence each), for `Load::errors`.
    pub errors: Vec<String>,
}

/// Feeds every file, slice by slice, to one [`Loader`]. Each slice is awaited, so the page
/// handles events and repaints between slices; the next [`AHEAD`] slices are asked for
/// before this one is parsed, so reading (in a worker, see [`Reader`]) overlaps parsing,
/// and at most `AHEAD + 1` slices are in memory (the buffer is reused, the browser's copies
/// dropped once fed). Gzipped files go in smaller slices, so that what one slice inflates
/// to is about the size of a plain slice. With `defer`, the loader leaves the bodies of
/// `Used values` for later ([`Loader::defer_uses`], read by [`drive`]). `progress`
/// gets the fraction of bytes read (0.0 ..= 1.0) after each slice. When `cancelled` turns
/// true (Cancel, or a newer read), reading stops at the next slice and `None` is returned.
/// `jumped(body)` is told each body jumped over.
pub async fn read_files(
    files: &[Picked],
    defer: bool,
    progress: impl Fn(f64),
    cancelled: impl Fn() -> bool,
    mut jumped: impl FnMut(&DeferredUses),
) -> Option<Fed> {
    let total: f64 = files.iter().map(|p| p.file.size()).sum();
    let mut fed = Fed {
        loader: Loader::new(),
        parse_ms: 0.0,
        errors: Vec::new(),
    };
    fed.loader.defer_uses(defer);
    let mut buf: Vec<u8> = Vec::new();
    let mut done = 0.0;
    let reader = Reader::new();
    let mut advanced = |bytes: f64| {
        done += bytes;
        if total > 0.0 {
            progress(done / total);
        }
    };
    progress(0.0);
    for picked in files {
        fed.loader.begin_file(&picked.name);
        fed.loader.search_only(picked.searched);
        let size = picked.file.size();
        let mut from = 0.0;
        // A `Used values` body being skipped: its end is looked for once from the file's end.
        let mut look = defer;
        let mut tail = tail::Tail::new(defer);
        loop {
            let mut slices = Slices::new(from, size);
            let (loader, parse_ms) = (&mut fed.loader, &mut fed.parse_ms);
            let feed = |bytes: &[u8]| {
                tail.first_slice(&reader, &picked.file, bytes);
                let t = js_sys::Date::now();
                loader.feed(bytes);
                *parse_ms += js_sys::Date::now() - t;
                look && loader.skipping().is_some()
            };
            let read = read_slices(
                picked,
                &mut slices,
                &reader,
                &mut buf,
                feed,
                &mut advanced,
                &cancelled,
            );
            match read.await {
                None => return None,
                Some(Err(e)) => {
                    fed.errors.push(e);
                    break;
                }
                Some(Ok(None)) => break,
                Some(Ok(Some(stopped))) => {
                    look = false;
                    from = stopped;
                    let found = tail::body_end(picked, &reader, stopped, &cancelled, &mut tail);
                    let Some((to, at_end)) = found.await? else {
                        continue;
                    };
                    if fed.loader.jump(to as u64, at_end) {
                        advanced(to - stopped);
                        from = to;
                        if let Some(d) = fed.loader.deferred().last() {
                            jumped(d);
                        }
                    }
                }
            }
        }
        fed.loader.end_file();
    }
    progress(1.0);
    Some(fed)
}

/// Drives `behind` (the read behind the diagram): the bytes it asks for read from `files`
/// slice by slice as [`read_files`] reads and fed in, until it asks for none; `advanced`
/// gets the bytes of each slice. A file it asks for that is not among `files`, or that the
/// browser cannot read, fails what it was asked for ([`Behind::fail`]). `None` when
/// cancelled.
pub async fn drive(
    behind: &mut Behind,
    files: &[Picked],
    advanced: &mut impl FnMut(f64),
    cancelled: &impl Fn() -> bool,
) -> Option<()> {
    let (reader, mut buf) = (Reader::new(), Vec::new());
    while let Some(ask) = behind.next() {
        let Some(picked) = files.iter().find(|p| p.name == ask.file) else {
            behind.fail(format!("{} is not among the files read", ask.file));
            continue;
        };
        let end = (ask.bytes.end as f64).min(picked.file.size());
        let mut slices = Slices::new(ask.bytes.start as f64, end);
        let feed = |bytes: &[u8]| {
            behind.feed(bytes);
            false
        };
        let read = read_slices(picked, &mut slices, &reader, &mut buf, feed, advanced, cancelled);
        if let Err(e) = read.await? {
            behind.fail(e);
        }
    }
    Some(())
}

/// Feeds the bytes `slices` covers of `picked` to `feed`, slice by slice (see
/// [`read_files`]); `advanced` gets the bytes of each slice fed. When `feed` says to stop,
/// the offset where it stopped (the end of the bytes fed). A file the browser cannot read
/// is one sentence. `None` when cancelled.
async fn read_slices(
    picked: &Picked,
    slices: &mut Slices,
    reader: &Reader,
    buf: &mut Vec<u8>,
    mut feed: impl FnMut(&[u8]) -> bool,
    advanced: &mut impl FnMut(f64),
    cancelled: &impl Fn() -> bool,
) -> Option<Result<Option<f64>, String>> {
    let Picked { name, file, .. } = picked;
    let mut start = slices.start;
    while start < slices.end {
        let Some((end, slice)) = slices.next(reader, file, start) else {
            break;
        };
        let read = slice.finish(buf).await;
        if cancelled() {
            return None;
        }
        match read {
            Ok(()) => {
                if start == 0.0 {
                    slices.size_by(buf);
                }
                slices.ask_ahead(reader, file);
                if feed(buf) {
                    advanced(end - start);
                    return Some(Ok(Some(end)));
                }
            }
            Err(_) if reader.fall_back() => {
                // The worker could not start (its script missing, say): read this slice
                // again, and the rest, on the page's own thread.
                slices.ahead.clear();
                continue;
            }
            Err(e) => {
                return Some(Err(format!(
                    "{name}: the browser could not read this file ({e})."
                )));
            }
        }
        advanced(end - start);
        start = end;
        let_paint().await;
        if cancelled() {
            return None;
        }
    }
    Some(Ok(None))
}

/// The slices of one file asked for and not yet parsed, in order: the browser reads them
/// while the page parses the one before.
struct Slices {
    /// The bytes to read: `start .. end` of the file.
    start: f64,
    end: f64,
    /// Each slice's end and its read under way.
    ahead: VecDeque<(f64, Slice)>,
    /// The end of the last slice asked for.
    asked: f64,
    /// Bytes per slice: [`FIRST_CHUNK`], then [`CHUNK`] or [`GZ_CHUNK`].
    chunk: f64,
}

impl Slices {
    fn new(start: f64, end: f64) -> Slices {
        Slices {
            start,
            end,
            ahead: VecDeque::new(),
            asked: start,
            // From the file's start, a small first slice tells what the file is.
            chunk: if start > 0.0 { CHUNK } else { FIRST_CHUNK },
        }
    }

    /// The next slice, from `start` (asked for now when none is ahead).
    fn next(&mut self, reader: &Reader, file: &File, start: f64) -> Option<(f64, Slice)> {
        if self.ahead.is_empty() {
            self.asked = (start + self.chunk).min(self.end);
            self.ahead
                .push_back((self.asked, reader.start(file, start, self.asked)));
        }
        self.ahead.pop_front()
    }

    /// Sizes the slices after the first by what it holds: gzip (known by its magic bytes,
    /// as the loader knows it) goes in smaller slices.
    fn size_by(&mut self, first: &[u8]) {
        self.chunk = if bufscope::parse::is_gzip(first) {
            GZ_CHUNK
        } else {
            CHUNK
        };
    }

    /// Asks for slices until [`AHEAD`] are under way (or the file is all asked for).
    fn ask_ahead(&mut self, reader: &Reader, file: &File) {
        while self.ahead.len() < AHEAD && self.asked < self.end {
            let from = self.asked;
            self.asked = (from + self.chunk).min(self.end);
            self.ahead
                .push_back((self.asked, reader.start(file, from, self.asked)));
        }
    }
}

/// The app's reading worker (`reader.js`), started with the page ([`start_worker`]) so
/// that no request is made once a file is given. Chromium copies a Blob's bytes on the
/// thread that reads them; the worker takes that copy off the thread that parses (at 1 GB:
/// 0.8 s of waiting between slices instead of 1.7 s).
struct ReadWorker {
    worker: web_sys::Worker,
    /// Set by the worker's `error` event (e.g. `reader.js` could not be loaded).
    failed: Cell<bool>,
    /// The resolvers of the last requests, answered with an error if the worker fails
    /// (answers come in order and at most `AHEAD + 1` are pending, so a few suffice).
    waiting: RefCell<VecDeque<js_sys::Function>>,
}

thread_local! {
    static WORKER: Option<Rc<ReadWorker>> = ReadWorker::start();
}

/// Starts the reading worker (once; later calls do nothing).
pub fn start_worker() {
    WORKER.with(|_| ());
}

impl ReadWorker {
    fn start() -> Option<Rc<ReadWorker>> {
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
            if waiting.len() > MOST_ASKED {
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

/// Where the slices of one read are read: by the worker while it works, else on the
/// page's own thread (a worker that cannot start, or a page opened from `file://`).
struct Reader {
    worker: Option<Rc<ReadWorker>>,
    /// Whether this read already went over to the page's thread.
    fell_back: Cell<bool>,
}

impl Reader {
    fn new() -> Reader {
        Reader {
            worker: WORKER.with(Clone::clone),
            fell_back: Cell::new(false),
        }
    }

    /// After a read failed: whether it was the worker's failure, seen for the first time,
    /// so that reading goes over to the page's thread (true once at most).
    fn fall_back(&self) -> bool {
        self.worker.as_ref().is_some_and(|w| w.failed.get()) && !self.fell_back.replace(true)
    }

    /// Asks for bytes `start .. end` of `file`; they are read while the page goes on.
    fn start(&self, file: &File, start: f64, end: f64) -> Slice {
        if let Some(worker) = self.worker.as_ref().filter(|w| !w.failed.get()) {
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
    /// Waits for the bytes and puts them into `buf` (replacing its contents).
    async fn finish(self, buf: &mut Vec<u8>) -> Result<(), String> {
        let mut answer = self.read?.await.map_err(js_error)?;
        if let Some(event) = answer.dyn_ref::<web_sys::MessageEvent>() {
            answer = event.data();
        }
        let array: js_sys::ArrayBuffer = match answer.dyn_into() {
            Ok(array) => array,
            Err(other) => return Err(js_error(other)),
        };
        let bytes = js_sys::Uint8Array::new(&array);
        buf.clear();
        buf.resize(bytes.length() as usize, 0);
        bytes.copy_to(buf);
        Ok(())
    }
}

/// A JavaScript error (or any thrown value) in words.
pub(super) fn js_error(e: JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}
