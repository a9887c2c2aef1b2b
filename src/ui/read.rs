//! The page's reading, a room of its own apart from the views: turning what the user gave
//! (a drop, a pick, a folder, walked with the File and Directory Entries API,
//! `webkitGetAsEntry`) into [`Picked`] files, the choice of which of them to read
//! ([`select`]), the driver of the core's read machine over them ([`drive`]: the byte
//! ranges it asks for fetched in slices, [`fetch`], cancellable, with progress), and the
//! page's two workers ([`Workers`]: the one that reads slices, `reader.js`, and the one
//! that reads `Used values` behind the diagrams, [`uses_worker`]). What is shown, and
//! when, is the loading flow's business (`ui/load`).
//!
//! Owns: the files of a read, and the workers, held by the app ([`Workers::start`], once,
//! in the app's state) and handed to each read.

use std::rc::Rc;

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DataTransfer, File, FileList, FileSystemDirectoryEntry, FileSystemEntry, FileSystemFileEntry,
};

mod drive;
mod fetch;
mod pieces;
pub mod uses_worker;

pub use drive::{read_files, Fed};
pub use pieces::read_behind;

/// The page's workers, started with the page (so that no request is made once a file is
/// given) and held by the app for its life; each read is handed them.
pub struct Workers {
    reader: Option<Rc<fetch::ReadWorker>>,
    uses: Option<Rc<uses_worker::PageWorker>>,
    /// The workers that read pieces of the bodies the page reads itself ([`pieces`]).
    pieces: Vec<Rc<uses_worker::PageWorker>>,
}

impl Workers {
    /// Starts the workers (each none where it cannot start: the single file opened from
    /// disk has no script to start them from; the `Used values` one only on
    /// [`uses_worker`]'s cores and when no lanes are set; the piece workers as [`pieces`]
    /// counts them).
    pub fn start() -> Rc<Workers> {
        // Lanes set for a measurement or a test are the piece workers alone: with the `Used
        // values` worker (4 cores and more) the bodies would be its, not the pieces'.
        let uses = pieces::lanes_set().is_none().then(uses_worker::PageWorker::start).flatten();
        Rc::new(Workers {
            reader: fetch::ReadWorker::start(),
            pieces: pieces::start(pieces::count(uses.is_some())),
            uses,
        })
    }

    /// A read behind of what its driver posts, its bodies cut into pieces for the piece
    /// workers that did not fail ([`read_behind`]); alone without any.
    pub fn behind_lane(&self) -> bufscope::parse::BehindLane {
        pieces::lane(self.live_pieces().len())
    }

    /// The piece workers that did not fail, in order (piece lane `k` is the `k`th).
    fn live_pieces(&self) -> Vec<Rc<uses_worker::PageWorker>> {
        self.pieces.iter().filter(|w| !w.failed()).cloned().collect()
    }

    fn reader(&self) -> Option<Rc<fetch::ReadWorker>> {
        self.reader.clone()
    }

    /// The `Used values` worker, unless there is none or it failed.
    pub fn uses(&self) -> Option<Rc<uses_worker::PageWorker>> {
        self.uses.clone()
    }
}

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

/// An element of the page's own static document by CSS selector: what its build wrote for
/// the app (the boot script's `data-js`/`data-wasm`, the single file's inline example,
/// `bufscope html`'s dump blocks), never a view's. One of the app's two lookups by id or
/// selector (the other: `hash.rs`'s scroll to a restored space): views reach each other
/// through state.
pub(crate) fn page_element(selector: &str) -> Option<web_sys::Element> {
    web_sys::window()?.document()?.query_selector(selector).ok()?
}

/// A JavaScript error (or any thrown value) in words.
pub(super) fn js_error(e: JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}
