//! Reading dropped or picked files in the browser: each `File` is read in slices
//! (`Blob.slice` + `arrayBuffer`) and fed to the streaming [`Loader`], so a large dump is
//! never held twice and the page can show progress between slices. Dropped folders are
//! walked with the File and Directory Entries API (`webkitGetAsEntry`).
//!
//! Owns: turning what the user gave (a drop, a pick, a folder) into [`Picked`] files, the
//! choice of which of them to read ([`select`]), and the sliced, cancellable reading
//! ([`read_files`]). What is shown, and when, is [`super`]'s business.

use bufscope::{Load, Loader};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DataTransfer, File, FileList, FileSystemDirectoryEntry, FileSystemEntry, FileSystemFileEntry,
};

/// Bytes per slice handed to the loader. Each slice is parsed in one go between two
/// awaits: 1 MiB keeps that under about 40 ms in the browser (4 MiB blocked the page for
/// about 85 ms per slice on the 94 MB dump) and costs no measurable reading time.
const CHUNK: f64 = 1024.0 * 1024.0;
/// Slices of a gzipped file: dumps compress about tenfold, so this is ~1 MiB of text.
const GZ_CHUNK: f64 = 128.0 * 1024.0;
/// The first slice of every file, small enough to be cheap even when it is gzip.
const FIRST_CHUNK: f64 = 64.0 * 1024.0;

/// A file to read and the name it is read under (its path inside a folder, if any).
pub struct Picked {
    pub name: String,
    pub file: File,
    /// Found inside a folder (picked or dropped) rather than chosen one by one.
    pub in_folder: bool,
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
/// of a folder ([`bufscope::parse::folder_selection`]: the ones named like dumps, else the
/// `.txt` files, such as renamed TPU dumps). Returns the files to read (sorted by path when folders are involved) and how many
/// were skipped.
pub fn select(mut files: Vec<Picked>) -> (Vec<Picked>, usize) {
    if files.iter().any(|p| p.in_folder) {
        // Browsers list a folder in no particular order.
        files.sort_by(|a, b| a.name.cmp(&b.name));
    }
    // Files picked one by one are always read; those of folders as the CLI reads a folder.
    let in_folders: Vec<&str> = files
        .iter()
        .filter(|p| p.in_folder)
        .map(|p| p.name.as_str())
        .collect();
    let mut chosen = bufscope::parse::folder_selection(&in_folders)
        .into_iter()
        .peekable();
    let total = files.len();
    let mut folder_index = 0;
    let kept: Vec<Picked> = files
        .into_iter()
        .filter(|p| {
            if !p.in_folder {
                return true;
            }
            let keep = chosen.next_if_eq(&folder_index).is_some();
            folder_index += 1;
            keep
        })
        .collect();
    let skipped = total - kept.len();
    (kept, skipped)
}

/// The files fed to a [`Loader`], not yet finished: [`Loader::finish`] (joining and
/// checking) is left to the caller, so that the page can repaint before that step.
pub struct Fed {
    pub loader: Loader,
    /// Files the browser could not read (one sentence each), for `Load::errors`.
    pub errors: Vec<String>,
}

/// Feeds every file, slice by slice, to one [`Loader`]. Each slice is awaited, so the page
/// handles events and repaints between slices; one slice is held at a time (the buffer is
/// reused, the browser's copy dropped once fed). Gzipped files go in smaller slices, so
/// that what one slice inflates to is about the size of a plain slice. `progress` gets the fraction of bytes read
/// (0.0 ..= 1.0) after each slice. When `cancelled` turns true (Cancel, or a newer read),
/// reading stops at the next slice and `None` is returned.
pub async fn read_files(
    files: &[Picked],
    progress: impl Fn(f64),
    cancelled: impl Fn() -> bool,
) -> Option<Fed> {
    let total: f64 = files.iter().map(|p| p.file.size()).sum();
    let mut loader = Loader::new();
    let mut errors = Vec::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut done = 0.0;
    progress(0.0);
    for Picked { name, file, .. } in files {
        let size = file.size();
        loader.begin_file(name);
        let mut start = 0.0;
        let mut chunk = FIRST_CHUNK;
        while start < size {
            let end = (start + chunk).min(size);
            let read = read_slice(file, start, end, &mut buf).await;
            if cancelled() {
                return None;
            }
            match read {
                Ok(()) => {
                    if start == 0.0 {
                        // Gzip is known by its magic bytes, as the loader knows it.
                        chunk = if buf.starts_with(&[0x1f, 0x8b]) {
                            GZ_CHUNK
                        } else {
                            CHUNK
                        };
                    }
                    loader.feed(&buf);
                }
                Err(e) => {
                    errors.push(format!(
                        "{name}: the browser could not read this file ({e})."
                    ));
                    break;
                }
            }
            done += end - start;
            start = end;
            if total > 0.0 {
                progress(done / total);
            }
        }
        loader.end_file();
    }
    progress(1.0);
    Some(Fed { loader, errors })
}

impl Fed {
    /// Joins and checks what was read ([`Loader::finish`]), with the browser's read errors.
    pub fn finish(self) -> Load {
        let mut load = self.loader.finish();
        load.errors.extend(self.errors);
        load
    }
}

/// Resolves in a later task of the event loop (`setTimeout(0)`), so that the browser can
/// handle input and paint before a long step.
pub async fn next_task() {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        let scheduled = web_sys::window()
            .and_then(|w| w.set_timeout_with_callback(&resolve).ok())
            .is_some();
        if !scheduled {
            let _ = resolve.call0(&JsValue::NULL);
        }
    });
    let _ = JsFuture::from(promise).await;
}

/// Bytes `start .. end` of `file` into `buf` (replacing its contents).
async fn read_slice(file: &File, start: f64, end: f64, buf: &mut Vec<u8>) -> Result<(), String> {
    let blob = file.slice_with_f64_and_f64(start, end).map_err(js_error)?;
    let array = JsFuture::from(blob.array_buffer())
        .await
        .map_err(js_error)?;
    let array: js_sys::ArrayBuffer = array.dyn_into().map_err(js_error)?;
    let bytes = js_sys::Uint8Array::new(&array);
    buf.clear();
    buf.resize(bytes.length() as usize, 0);
    bytes.copy_to(buf);
    Ok(())
}

fn js_error(e: JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}
