//! "Try an example": a small real dump shipped with the page, opened with one click, and,
//! beside it, how to get a dump of one's own.
//!
//! The example is `tests/fixtures/tpu/001_d4ec204070c56195.txt` (a TPU reference attention:
//! HBM, VMEM and SMEM), copied by Trunk to `example/` beside the page (index.html). The
//! single file `bufscope.html` carries it inline instead, in base64, in the element
//! `#bufscope-example` (src/web/dist.mjs), since a page opened from `file://` may fetch
//! nothing. Either way it becomes a `File` and goes through the same reading as a dropped
//! one; it is never compiled into the wasm.
//!
//! A page written by `bufscope html` (src/cli/html.rs) carries dumps the same way, in
//! `#bufscope-dump-0`, `#bufscope-dump-1`, … (gzipped, in base64, named by `data-name`):
//! [`open_embedded`] reads them as dropped files when the app starts, so that the page
//! opens straight on them.

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::load::{report_failure, start_load};
use super::read::{js_error, page_element, Picked};
use super::app::AppState;

/// Where the site keeps the example, relative to the page (index.html copies it there).
const EXAMPLE_URL: &str = "example/001_d4ec204070c56195.txt";
/// The id of the element that holds the example in base64 in the single file.
const INLINE_ID: &str = "bufscope-example";
/// The ids of the blocks `bufscope html` puts dumps in, followed by 0, 1, ….
const EMBEDDED_ID: &str = "bufscope-dump-";
/// The name the example is read under (the module's name on screen).
pub const EXAMPLE_NAME: &str = "tpu_reference_attention.buffer-assignment.txt";

/// Reads the example, as a dropped file would be.
pub fn open_example(st: AppState) {
    spawn_local(async move {
        match example_file().await {
            Ok(file) => start_load(
                st,
                vec![Picked {
                    name: EXAMPLE_NAME.into(),
                    file,
                    in_folder: false,
                    searched: false,
                }],
            ),
            Err(e) => report_failure(
                st,
                "Nothing was read.".into(),
                vec![format!("The example could not be loaded: {e}.")],
            ),
        }
    });
}

/// Opens the dumps `bufscope html` put in the page, if it holds any, as dropped files.
pub fn open_embedded(st: AppState) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let mut files = Vec::new();
    let mut errors = Vec::new();
    while let Some(block) = page_element(&format!("#{EMBEDDED_ID}{}", files.len() + errors.len())) {
        let name = block
            .get_attribute("data-name")
            .unwrap_or_else(|| "dump.txt".into());
        let file =
            inline_bytes(&window, &block.text_content().unwrap_or_default()).and_then(|bytes| {
                web_sys::File::new_with_buffer_source_sequence(&js_sys::Array::of1(&bytes), &name)
                    .map_err(js_error)
            });
        match file {
            Ok(file) => files.push(Picked {
                name,
                file,
                in_folder: false,
                searched: false,
            }),
            Err(e) => errors.push(format!("{name} could not be unpacked from the page: {e}.")),
        }
    }
    if !errors.is_empty() {
        report_failure(st, "Nothing was read.".into(), errors);
    } else if !files.is_empty() {
        start_load(st, files);
    }
}

/// The bytes of a base64 text in the page, as a `Uint8Array`.
fn inline_bytes(window: &web_sys::Window, b64: &str) -> Result<JsValue, String> {
    let text = window.atob(b64.trim()).map_err(js_error)?;
    // `atob` gives one char per byte.
    let bytes: Vec<u8> = text.chars().map(|c| c as u32 as u8).collect();
    Ok(js_sys::Uint8Array::from(bytes.as_slice()).into())
}

/// The "Try an example" button and the way to a dump of one's own.
pub fn example_view(st: AppState) -> impl IntoView {
    let open = move |_| open_example(st);
    view! {
        <div class="example">
            <button id="try-example" class="button" type="button" on:click=open>
                "Try an example"
            </button>
            <p class="how-to">
                "A TPU attention program, shipped with this page. To see your own: run it "
                "with "<code>"XLA_FLAGS=--xla_dump_to=DIR"</code>", then drop "<code>"DIR"</code>
                " here, or its "<code>"*-buffer-assignment.txt"</code>" files (newer XLA also "
                "writes "<code>"*-buffer-assignment-values.txt"</code>" and "
                <code>"*-live-range.txt"</code>": drop them together)."
            </p>
        </div>
    }
}

/// The example as a `File`: from the page itself in the single file, else fetched from
/// beside the page (same origin, which the Content-Security-Policy allows).
async fn example_file() -> Result<web_sys::File, String> {
    let window = web_sys::window().ok_or("no window")?;
    let inline = page_element(&format!("#{INLINE_ID}")).and_then(|e| e.text_content());
    let bytes: JsValue = match inline {
        Some(b64) => inline_bytes(&window, &b64)?,
        None => fetch_bytes(&window, EXAMPLE_URL).await?,
    };
    web_sys::File::new_with_buffer_source_sequence(&js_sys::Array::of1(&bytes), EXAMPLE_NAME)
        .map_err(js_error)
}

/// `fetch(url)` and the body as an `ArrayBuffer`, through the global `fetch` (web-sys's
/// `Request`/`Response` bindings are not among the crate's features).
async fn fetch_bytes(window: &web_sys::Window, url: &str) -> Result<JsValue, String> {
    let fetch: js_sys::Function = js_sys::Reflect::get(window, &"fetch".into())
        .map_err(js_error)?
        .dyn_into()
        .map_err(|_| "this browser has no fetch".to_string())?;
    let promise: js_sys::Promise = fetch
        .call1(window, &url.into())
        .map_err(js_error)?
        .dyn_into()
        .map_err(js_error)?;
    let response = JsFuture::from(promise).await.map_err(js_error)?;
    let ok = js_sys::Reflect::get(&response, &"ok".into()).map_err(js_error)?;
    if ok.as_bool() != Some(true) {
        let status = js_sys::Reflect::get(&response, &"status".into()).unwrap_or_default();
        return Err(format!("{url} answered {}", status.as_f64().unwrap_or(0.0)));
    }
    let body: js_sys::Function = js_sys::Reflect::get(&response, &"arrayBuffer".into())
        .map_err(js_error)?
        .dyn_into()
        .map_err(js_error)?;
    let promise: js_sys::Promise = body
        .call0(&response)
        .map_err(js_error)?
        .dyn_into()
        .map_err(js_error)?;
    JsFuture::from(promise).await.map_err(js_error)
}
