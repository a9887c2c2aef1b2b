//! The page's exports, all made in the page (nothing leaves the browser): a diagram as PNG
//! (its canvas as drawn) or as SVG (the memory space at its view window, drawn by the CLI's
//! drawing code, [`bufscope::render::render_space_svg`]), a table as CSV
//! ([`bufscope::export`]), the summary as JSON (`bufscope summary --json`'s, for the module on
//! screen). The [`ExportMenu`] lists them; [`csv_button`] is a table's own "CSV" button.
//! A download is a `Blob`, an object URL and a click on an `<a download>`.
//!
//! Owns the downloads only: what a table holds is its component's, how it is written the
//! core's.

use bufscope::export::file_name;
use bufscope::model::{memory_space_label, memory_space_name};
use bufscope::render::{render_space_svg, Style};
use bufscope::summary::answers::SummaryOptions;
use bufscope::summary::Summary;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Blob, BlobPropertyBag, HtmlAnchorElement, Url};

use super::canvas::Diagrams;
use super::swatch;
use super::state::Focus;

/// How long an object URL is kept after its download started (ms).
const REVOKE_AFTER_MS: i32 = 60_000;

/// Starts the download of `blob` as a file named `name`.
pub fn download_blob(name: &str, blob: &Blob) -> Result<(), JsValue> {
    let window = web_sys::window().ok_or("no window")?;
    let document = window.document().ok_or("no document")?;
    let url = Url::create_object_url_with_blob(blob)?;
    let a: HtmlAnchorElement = document.create_element("a")?.dyn_into()?;
    a.set_href(&url);
    a.set_download(name);
    let body = document.body().ok_or("no body")?;
    body.append_child(&a)?;
    a.click();
    a.remove();
    let revoke = Closure::once_into_js(move || {
        let _ = Url::revoke_object_url(&url);
    });
    window.set_timeout_with_callback_and_timeout_and_arguments_0(
        revoke.unchecked_ref(),
        REVOKE_AFTER_MS,
    )?;
    Ok(())
}

/// Starts the download of `text` as a file named `name` of type `mime`.
pub fn download_text(name: &str, mime: &str, text: &str) {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    let done = Blob::new_with_str_sequence_and_options(&parts, &options)
        .and_then(|blob| download_blob(name, &blob));
    if let Err(e) = done {
        leptos::logging::warn!("bufscope: could not export {name}: {e:?}");
    }
}

/// The diagram of memory space `color` as a PNG of its canvas as drawn.
fn export_png(focus: Focus, diagrams: Diagrams, color: u32) {
    let shown = focus.shown();
    let name = file_name(
        &shown.module.name,
        &[&format!("space{color}"), &memory_space_name(color)],
        "png",
    );
    diagrams.with(Some(color), |d| {
        let callback = Closure::once_into_js(move |blob: JsValue| {
            let done = match blob.dyn_into::<Blob>() {
                Ok(blob) => download_blob(&name, &blob),
                Err(_) => Err(JsValue::from_str("the canvas gave no image")),
            };
            if let Err(e) = done {
                leptos::logging::warn!("bufscope: could not export the PNG: {e:?}");
            }
        });
        if let Err(e) = d.canvas().to_blob(callback.unchecked_ref()) {
            leptos::logging::warn!("bufscope: could not export the PNG: {e:?}");
        }
    });
}

/// The diagram of memory space `color` as an SVG: the space at the view window on screen,
/// the size of its canvas in CSS pixels, in the CLI's colours and the capacity line drawn.
fn export_svg(focus: Focus, diagrams: Diagrams, color: u32) {
    let shown = focus.shown();
    let Some((view, size)) = diagrams.with(Some(color), |d| {
        let c = d.canvas();
        let size = (
            c.client_width().max(0) as u32,
            c.client_height().max(0) as u32,
        );
        (d.view(), size)
    }) else {
        return;
    };
    let style = Style {
        capacity: focus.capacity.with_untracked(|c| c.get(&color).cloned()),
        ..Style::default()
    };
    let svg = render_space_svg(&shown.module, &shown.analysis, color, &view, size, &style);
    let name = file_name(
        &shown.module.name,
        &[&format!("space{color}"), &memory_space_name(color)],
        "svg",
    );
    download_text(&name, "image/svg+xml", &svg);
}

/// The summary of the module on screen as `bufscope summary --json` writes it (with
/// `--step` when a step is chosen).
fn export_json(focus: Focus) {
    let shown = focus.shown();
    let options = SummaryOptions {
        step: focus.step.get_untracked(),
        ..SummaryOptions::default()
    };
    let summary = Summary::with_options([(&shown.module, &*shown.analysis)], &options);
    let mut json = summary.to_json();
    json.push('\n');
    let name = file_name(&shown.module.name, &["summary"], "json");
    download_text(&name, "application/json", &json);
}

/// A table's "CSV" button (`id`): `make` gives the file's name and its text, every row of
/// the table as it is sorted, filtered and grouped now.
pub fn csv_button(
    id: &'static str,
    what: &'static str,
    make: impl Fn() -> (String, String) + 'static,
) -> impl IntoView {
    let on_click = move |_| {
        let (name, text) = make();
        download_text(&name, "text/csv", &text);
    };
    view! {
        <button type="button" class="button csv-button" id=id title=format!("Download {what} as CSV")
            on:click=on_click>"CSV"</button>
    }
}

/// The "Export" menu of a module: each diagram as PNG or SVG, the live-set table as CSV,
/// the summary as JSON.
#[component]
pub fn ExportMenu(focus: Focus, diagrams: Diagrams) -> impl IntoView {
    let menu = NodeRef::<leptos::html::Details>::new();
    let close = move || {
        if let Some(m) = menu.get_untracked() {
            let _ = m.remove_attribute("open");
        }
    };
    let shown = focus.shown();
    let spaces = shown
        .analysis
        .spaces
        .iter()
        .map(|s| {
            let c = s.color;
            let swatch = swatch::class(c);
            view! {
                <li class="export-space" data-color=c.to_string()>
                    <span class="export-space-name"><span class=swatch></span>{memory_space_label(c, shown.module.backend())}</span>
                    <button type="button" class="button" role="menuitem" id=format!("export-png-{c}")
                        on:click=move |_| { close(); export_png(focus, diagrams, c) }>"PNG"</button>
                    <button type="button" class="button" role="menuitem" id=format!("export-svg-{c}")
                        on:click=move |_| { close(); export_svg(focus, diagrams, c) }>"SVG"</button>
                </li>
            }
        })
        .collect_view();
    view! {
        <details class="export-menu" node_ref=menu>
            <summary class="button small secondary" id="export-menu">"Export"</summary>
            <div class="export-items" role="menu" aria-label="Export">
                <p class="export-heading">"Diagram (as on screen)"</p>
                <ul class="export-spaces">{spaces}</ul>
                <button type="button" class="button" role="menuitem" id="export-csv"
                    title="the live-set table, every row, as sorted, filtered and grouped"
                    on:click=move |_| { close(); focus.export_live_csv.emit(()) }>"Live-set table as CSV"</button>
                <button type="button" class="button" role="menuitem" id="export-json"
                    title="what bufscope summary --json writes for this module"
                    on:click=move |_| { close(); export_json(focus) }>"Summary as JSON"</button>
                <p class="export-note">"Made in the page: nothing leaves the browser."</p>
            </div>
        </details>
    }
}
