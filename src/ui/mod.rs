//! The browser app (leptos, client-side rendering). Only compiled for wasm32.
//!
//! A page with a drop zone (the whole page) and file pickers. Dropped or picked files are
//! read in the browser, slice by slice, through [`bufscope::Loader`] ([`read`]); every module
//! read is analysed ([`bufscope::analysis::analyze`]) and shown as a summary: its size, its
//! memory spaces with their peaks, and the parser's warnings. Nothing leaves the machine.

mod canvas;
mod diagram;
mod fmt;
mod panels;
mod read;
mod state;
mod workspace;

use std::sync::Arc;

use bufscope::analysis::analyze;
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use state::Shown;
use web_sys::HtmlInputElement;

/// Mounts the app on `<body>`.
pub fn start() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}

/// What the last completed read produced.
struct Outcome {
    files: Vec<String>,
    /// Files in picked or dropped folders that were not read (not named like dumps).
    skipped: usize,
    modules: Vec<Arc<Shown>>,
    errors: Vec<String>,
}

/// The app's state; `Copy`, so handlers can capture it freely.
#[derive(Clone, Copy)]
struct AppState {
    /// `Some(fraction read)` while reading.
    progress: RwSignal<Option<f64>>,
    /// Bytes being read, for the progress line.
    reading: RwSignal<Option<(usize, u64)>>,
    outcome: RwSignal<Option<Arc<Outcome>>>,
    /// Bumped by every new read; a read whose number is no longer current stops.
    generation: StoredValue<u64>,
    dragging: RwSignal<bool>,
}

#[component]
fn App() -> impl IntoView {
    let st = AppState {
        progress: RwSignal::new(None),
        reading: RwSignal::new(None),
        outcome: RwSignal::new(None),
        generation: StoredValue::new(0),
        dragging: RwSignal::new(false),
    };

    // The whole page is the drop zone. Without `preventDefault` on `dragover` the browser
    // would open the dropped file instead.
    let _ = window_event_listener(ev::dragover, move |e: web_sys::DragEvent| {
        e.prevent_default();
        if let Some(dt) = e.data_transfer() {
            dt.set_drop_effect("copy");
        }
        if !st.dragging.get_untracked() {
            st.dragging.set(true);
        }
    });
    let _ = window_event_listener(ev::dragleave, move |e: web_sys::DragEvent| {
        // Leaving the window (not just moving between elements) has no related target.
        if e.related_target().is_none() {
            st.dragging.set(false);
        }
    });
    let _ = window_event_listener(ev::drop, move |e: web_sys::DragEvent| {
        e.prevent_default();
        st.dragging.set(false);
        let Some(dt) = e.data_transfer() else { return };
        match read::dropped(&dt) {
            read::Dropped::Files(files) => start_load(st, files),
            read::Dropped::Entries(entries) => spawn_local(async move {
                match read::walk(entries).await {
                    Ok(files) => start_load(st, files),
                    Err(e) => show_error(st, format!("The dropped folder could not be read: {e}")),
                }
            }),
        }
    });

    let on_pick = move |e: web_sys::Event| {
        let input: HtmlInputElement = event_target(&e);
        let files = read::files_of(input.files());
        // Cleared so that picking the same file again fires `change` again.
        input.set_value("");
        start_load(st, files);
    };

    view! {
        <div class="page" class:dragging=move || st.dragging.get()>
            <header class="top">
                <h1>"bufscope"</h1>
                <p class="tagline">"A viewer for XLA buffer-assignment dumps"</p>
            </header>
            <main>
                <section class="intake" aria-label="Open dumps">
                    <p class="lead">
                        "Drop "<code>"*buffer-assignment*.txt"</code>" files (or a whole dump "
                        "folder) anywhere on this page, or pick them:"
                    </p>
                    <div class="pickers">
                        <label class="button">
                            "Choose files…"
                            <input id="file-input" class="visually-hidden" type="file" multiple
                                on:change=on_pick />
                        </label>
                        <label class="button secondary">
                            "Choose a folder…"
                            <input id="dir-input" class="visually-hidden" type="file" multiple
                                prop:webkitdirectory=true on:change=on_pick />
                        </label>
                    </div>
                    <p class="note">"Files are read here, in your browser; nothing is uploaded."</p>
                </section>
                {move || st.progress.get().map(|p| view! {
                    <section class="progress" role="status">
                        <progress max="100" value=format!("{:.0}", p * 100.0)></progress>
                        <span class="percent">{format!("{:.0}%", p * 100.0)}</span>
                        <span class="what">{move || st.reading.get().map(|(n, bytes)| format!(
                            "Reading {n} file{} ({})", if n == 1 { "" } else { "s" }, fmt::human(bytes)
                        ))}</span>
                    </section>
                })}
                {move || st.outcome.get().map(|o| view! { <OutcomeView outcome=o /> })}
            </main>
            <div class="drop-overlay" aria-hidden="true"><p>"Drop to open"</p></div>
        </div>
    }
}

/// Shows one error in place of the last outcome.
fn show_error(st: AppState, message: String) {
    st.generation.update_value(|g| *g += 1);
    st.progress.set(None);
    st.reading.set(None);
    st.outcome.set(Some(Arc::new(Outcome {
        files: Vec::new(),
        skipped: 0,
        modules: Vec::new(),
        errors: vec![message],
    })));
}

/// Starts reading `files`; a read already under way is abandoned.
fn start_load(st: AppState, files: Vec<read::Picked>) {
    if files.is_empty() {
        show_error(
            st,
            "No files were found in what was dropped or picked.".into(),
        );
        return;
    }
    let (files, skipped) = read::select(files);
    let generation = st.generation.get_value() + 1;
    st.generation.set_value(generation);
    let current = move || st.generation.get_value() == generation;
    let names: Vec<String> = files.iter().map(|p| p.name.clone()).collect();
    let bytes = files.iter().map(|p| p.file.size() as u64).sum();
    st.reading.set(Some((files.len(), bytes)));
    st.progress.set(Some(0.0));
    spawn_local(async move {
        let load = read::read_files(
            &files,
            |p| {
                if current() {
                    st.progress.set(Some(p));
                }
            },
            move || !current(),
        )
        .await;
        let Some(load) = load else { return };
        let modules = load
            .modules
            .into_iter()
            .map(|module| {
                let analysis = analyze(&module);
                Arc::new(Shown { module, analysis })
            })
            .collect();
        if current() {
            st.outcome.set(Some(Arc::new(Outcome {
                files: names,
                skipped,
                modules,
                errors: load.errors,
            })));
            st.progress.set(None);
            st.reading.set(None);
        }
    });
}

#[component]
fn OutcomeView(outcome: Arc<Outcome>) -> impl IntoView {
    let n = outcome.files.len();
    let mut files_line = match n {
        0 => String::new(),
        1 => format!("Read {}", outcome.files[0]),
        _ => format!("Read {n} files"),
    };
    if outcome.skipped > 0 {
        files_line.push_str(&format!(
            " (skipped {} other file{} in the folder)",
            outcome.skipped,
            if outcome.skipped == 1 { "" } else { "s" }
        ));
    }
    let nothing = outcome.modules.is_empty() && outcome.errors.is_empty();
    let errors = (!outcome.errors.is_empty()).then(|| {
        let items = outcome
            .errors
            .iter()
            .map(|e| view! { <li>{e.clone()}</li> })
            .collect_view();
        view! {
            <div class="message error" role="alert">
                <p><strong>"Some files could not be read as buffer-assignment dumps:"</strong></p>
                <ul>{items}</ul>
            </div>
        }
    });
    // The module on screen: by default the one with the most allocated bytes.
    let default = outcome
        .modules
        .iter()
        .enumerate()
        .max_by_key(|(i, m)| (m.module.total_bytes(), std::cmp::Reverse(*i)))
        .map_or(0, |(i, _)| i);
    let chosen = RwSignal::new(default);
    let picker = (outcome.modules.len() > 1).then(|| {
        let options = outcome
            .modules
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let label = format!("{} — {}", m.module.name, fmt::human(m.module.total_bytes()));
                view! { <option value=i.to_string() selected=i == default>{label}</option> }
            })
            .collect_view();
        view! {
            <label class="module-picker">
                {format!("{} modules: ", outcome.modules.len())}
                <select id="module-picker" on:change=move |e| {
                    if let Ok(i) = event_target_value(&e).parse() {
                        chosen.set(i);
                    }
                }>{options}</select>
            </label>
        }
    });
    let all = outcome.modules.clone();
    let modules = move || {
        all.get(chosen.get())
            .map(|m| view! { <workspace::Workspace shown=m.clone() /> })
    };
    view! {
        <section class="outcome">
            <p class="files-line">{files_line}</p>
            {errors}
            {nothing.then(|| view! {
                <div class="message error" role="alert">
                    <p><strong>"No buffer-assignment module was found in these files."</strong></p>
                </div>
            })}
            {picker}
            {modules}
        </section>
    }
}
