//! Reading dropped or picked files in the browser: each `File` is read in slices
//! (`Blob.slice` + `arrayBuffer`) and fed to the streaming [`Loader`], so a large dump is
//! never held twice and the page can show progress between slices. Dropped folders are
//! walked with the File and Directory Entries API (`webkitGetAsEntry`).

use bufscope::{Load, Loader};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DataTransfer, File, FileList, FileSystemDirectoryEntry, FileSystemEntry, FileSystemFileEntry,
};

/// Bytes per slice handed to the loader.
const CHUNK: f64 = 4.0 * 1024.0 * 1024.0;

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

/// Of the files found in folders, only those named like dumps are read (a dump folder
/// holds many other files); files chosen one by one are always read. When nothing in the
/// folders is named like a dump, everything is read, so the page can say why it is not.
/// Returns the files to read (sorted by path when folders are involved) and how many
/// were skipped.
pub fn select(mut files: Vec<Picked>) -> (Vec<Picked>, usize) {
    if files.iter().any(|p| p.in_folder) {
        // Browsers list a folder in no particular order.
        files.sort_by(|a, b| a.name.cmp(&b.name));
    }
    let ours = |p: &Picked| !p.in_folder || bufscope::parse::is_ours(&p.name);
    if !files
        .iter()
        .any(|p| p.in_folder && bufscope::parse::is_ours(&p.name))
    {
        return (files, 0);
    }
    let total = files.len();
    let kept: Vec<Picked> = files.into_iter().filter(ours).collect();
    let skipped = total - kept.len();
    (kept, skipped)
}

/// Reads every file through one [`Loader`]. `progress` gets the fraction of bytes read
/// (0.0 ..= 1.0) after each slice; when `cancelled` turns true (a newer drop), reading stops
/// and `None` is returned. A file the browser cannot read is reported in `Load::errors`.
pub async fn read_files(
    files: &[Picked],
    progress: impl Fn(f64),
    cancelled: impl Fn() -> bool,
) -> Option<Load> {
    let total: f64 = files.iter().map(|p| p.file.size()).sum();
    let mut loader = Loader::new();
    let mut read_errors = Vec::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut done = 0.0;
    progress(0.0);
    for Picked { name, file, .. } in files {
        let size = file.size();
        loader.begin_file(name);
        let mut start = 0.0;
        while start < size {
            let end = (start + CHUNK).min(size);
            match read_slice(file, start, end, &mut buf).await {
                Ok(()) => loader.feed(&buf),
                Err(e) => {
                    read_errors.push(format!(
                        "{name}: the browser could not read this file ({e})"
                    ));
                    break;
                }
            }
            if cancelled() {
                return None;
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
    let mut load = loader.finish();
    load.errors.extend(read_errors);
    Some(load)
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
