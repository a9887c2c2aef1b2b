//! The browser app (leptos, client-side rendering). Only compiled for wasm32.
//!
//! Owns the page and its intake: a drop zone (the whole page) and file and folder pickers;
//! dropped or picked files are read in the browser, slice by slice, through
//! [`bufscope::Loader`] ([`read`]) with a progress bar and a Cancel button; every module read
//! is analysed in pieces ([`load`], the loading flow) and the largest is shown in a
//! [`workspace::Workspace`], with a picker for the others.
//!
//! Two things are on screen after a read: the report of the last read (which files, what
//! could not be read) and the last good view (the modules of the last read that produced
//! any). A read that produces no module (not a dump, empty, binary, cancelled) changes only
//! the report, so the module read before stays open below it; a read that produces modules
//! replaces both. Nothing leaves the machine: after the page has loaded, the only request is
//! for the example, when asked for ([`example`]).
//!
//! Pasted text (the intake's paste box, or Ctrl+V anywhere outside a text field) is read as
//! XLA out-of-memory messages, shown by [`oom`] between the report and the module.

mod canvas;
mod compare;
mod diagram;
mod example;
mod export;
mod fmt;
mod hash;
mod load;
mod oom;
mod panels;
mod picker;
mod read;
mod state;
mod tasks;
mod uses;
mod uses_worker;
mod workspace;

use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use load::{cancel, report_failure, start_load, start_load_into, Target};
use state::Shown;
use web_sys::HtmlInputElement;

/// Mounts the app on `<body>`.
pub fn start() {
    console_error_panic_hook::set_once();
    // In the worker that reads `Used values` (uses_worker.js), the instance only serves
    // `UsesRead`: there is no page.
    if web_sys::window().is_none() {
        return;
    }
    // Now, while the page loads: no request is made once a file is given.
    read::start_worker();
    uses_worker::start_worker();
    hash::start();
    #[cfg(feature = "test-hooks")]
    install_memory_hook();
    leptos::mount::mount_to_body(App);
}

/// Benchmark hook: `window.__bufscope_wasm_bytes()` is the size in bytes of the app's
/// WebAssembly memory now (`wasm_bindgen::memory()`'s buffer; it only grows, so after a
/// load it is the peak of that load). Read by `tests/bench/scale_bench.mjs`; costs one
/// closure, made once, and nothing unless called. Only with the `test-hooks` feature.
#[cfg(feature = "test-hooks")]
fn install_memory_hook() {
    use wasm_bindgen::{closure::Closure, JsValue};
    let Some(window) = web_sys::window() else {
        return;
    };
    let hook = Closure::<dyn Fn() -> JsValue>::new(|| JsValue::from_f64(wasm_bytes()));
    let _ = js_sys::Reflect::set(&window, &"__bufscope_wasm_bytes".into(), hook.as_ref());
    // Lives as long as the page.
    hook.forget();
}

/// The size in bytes of this instance's WebAssembly memory (`wasm_bindgen::memory()`'s
/// buffer; it only grows, so after a load it is the peak of that load): the page's, for the
/// benchmark hook, or the `Used values` worker's, for its report.
fn wasm_bytes() -> f64 {
    use wasm_bindgen::JsCast;
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .ok()
        .and_then(|m| m.buffer().dyn_into::<js_sys::ArrayBuffer>().ok())
        .map_or(0.0, |b| f64::from(b.byte_length()))
}

/// The modules of the last read that produced any: what the page shows below the report.
struct Outcome {
    /// What was read, in words: the file's name, or "N files".
    what: String,
    modules: Vec<Arc<Shown>>,
    /// The read that gave them (its generation): the views are made again for another
    /// read, not when its modules are replaced by their complete forms.
    read: u64,
}

/// What the last read (or attempt) came to, shown above the modules.
#[derive(Clone)]
struct Report {
    /// `Read NAME` / `Read N files`, with the files skipped in folders; or why nothing was read.
    line: String,
    /// One sentence per file that could not be read as a dump.
    errors: Vec<String>,
    /// This read opened no module, so the view below is an earlier one: what it showed.
    kept: Option<String>,
    /// The modules on screen came from this read (false when it opened none).
    opened: bool,
    /// How long the steps of this read took (none when it did not get that far).
    timings: Option<Timings>,
}

/// Milliseconds spent in each step of a read, shown as the report's tooltip and kept in
/// its `data-*-ms` attributes (the browser tests report them).
#[derive(Clone, Copy, Default)]
struct Timings {
    /// From the pick until the modules were complete, when their `Used values` were read
    /// after the diagrams (0 when nothing was left for later).
    complete: f64,
    /// The memory (bytes) of the worker that read the `Used values` (0 when the page read
    /// them itself): see `uses_worker.rs`.
    uses_worker: f64,
    /// Reading and feeding the slices (waits for the browser included).
    read: f64,
    /// Of `read`, the time spent parsing (the rest is waiting for the browser's reads).
    parse: f64,
    /// Joining and checking (all its pieces).
    join: f64,
    /// The longest analysis of one module (all its pieces).
    analyse: f64,
}

/// A read under way.
#[derive(Clone)]
struct Reading {
    files: usize,
    bytes: u64,
    /// Fraction of the bytes read, 0.0 ..= 1.0.
    fraction: f64,
    /// Set once every byte is read: joining, checking and analysing the modules.
    analysing: bool,
}

/// The app's state; `Copy`, so handlers can capture it freely.
#[derive(Clone, Copy)]
struct AppState {
    reading: RwSignal<Option<Reading>>,
    /// While the `Used values` of the modules on screen are read: the fraction read.
    details: RwSignal<Option<f64>>,
    report: RwSignal<Option<Arc<Report>>>,
    view: RwSignal<Option<Arc<Outcome>>>,
    /// The modules the ones on screen are compared with ([`compare`]), when comparing.
    compare: RwSignal<Option<Arc<Outcome>>>,
    /// Bumped by every new read and by Cancel; a read whose number is no longer current
    /// stops at its next slice (or step) and changes nothing on the page.
    generation: StoredValue<u64>,
    dragging: RwSignal<bool>,
    /// The out-of-memory messages on screen, and the sentence for a paste that held none.
    oom: oom::OomState,
    /// The intake (pickers, example, paste box) is open over the module on screen ("Open…").
    intake_open: RwSignal<bool>,
}

#[component]
fn App() -> impl IntoView {
    let st = AppState {
        reading: RwSignal::new(None),
        details: RwSignal::new(None),
        report: RwSignal::new(None),
        view: RwSignal::new(None),
        compare: RwSignal::new(None),
        generation: StoredValue::new(0),
        dragging: RwSignal::new(false),
        oom: oom::OomState::new(),
        intake_open: RwSignal::new(false),
    };
    listen_to_window(st);
    oom::listen_for_paste(st);
    // A page written by `bufscope html` opens on the dumps it carries.
    spawn_local(async move { example::open_embedded(st) });
    // Changes only when a read starts or ends (not with every slice).
    let busy = Memo::new(move |_| st.reading.with(Option::is_some));
    // A module on screen: the page is its workspace, one screen (style/workspace.css).
    let has_module = Memo::new(move |_| st.view.with(Option::is_some));
    let read = Memo::new(move |_| st.view.with(|o| o.as_ref().map(|o| o.read)));
    // A read that opens modules closes the intake.
    Effect::new(move |_| {
        read.track();
        st.intake_open.set(false);
    });
    view! {
        <div class="page" class:dragging=move || st.dragging.get()
            class:has-module=move || has_module.get()
            class:comparing=move || st.compare.with(Option::is_some)
            class:intake-open=move || st.intake_open.get()>
            <header class="top">
                <h1>"bufscope"</h1>
                <p class="tagline">"A viewer for XLA buffer-assignment dumps"</p>
            </header>
            <main>
                {intake_view(st)}
                {move || busy.get().then(|| progress_view(st))}
                {move || st.report.get().map(report_view)}
                {move || st.details.get().map(details_view)}
                <oom::OomPanel st=st />
                {move || read.get().map(|_| view! { <OutcomeView st=st /> })}
            </main>
            <div class="drop-overlay" aria-hidden="true"><p>"Drop to open"</p></div>
        </div>
    }
}

/// The window's listeners: the whole page is the drop zone, and Escape cancels a read
/// under way, as the Cancel button does.
fn listen_to_window(st: AppState) {
    // Without `preventDefault` on `dragover` the browser would open the dropped file
    // instead.
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
        if let Some(dt) = e.data_transfer() {
            on_drop(st, &dt, Target::Page);
        }
    });
    let _ = window_event_listener(ev::keydown, move |e: web_sys::KeyboardEvent| {
        if e.key() == "Escape" && st.reading.get_untracked().is_some() {
            cancel(st);
        } else if e.key() == "Escape" && st.intake_open.get_untracked() {
            st.intake_open.set(false);
        }
    });
}

/// Reads what was dropped, for `target`: files at once, folders once walked.
fn on_drop(st: AppState, dt: &web_sys::DataTransfer, target: Target) {
    match read::dropped(dt) {
        read::Dropped::Files(files) => start_load_into(st, files, target),
        read::Dropped::Entries(entries) => spawn_local(async move {
            match read::walk(entries).await {
                Ok(files) => start_load_into(st, files, target),
                Err(e) => report_failure(
                    st,
                    "Nothing was read.".into(),
                    vec![format!("The dropped folder could not be read: {e}.")],
                ),
            }
        }),
    }
}

/// The intake: what to drop, and the file and folder pickers. Over a module on screen it is
/// hidden until "Open…" ([`open_button`]) opens it (it stays in the page, with its inputs).
fn intake_view(st: AppState) -> impl IntoView {
    let on_pick = move |e: web_sys::Event| start_load(st, picked(&e));
    view! {
        <section id="intake" class="intake" aria-label="Open dumps">
            <button type="button" class="intake-close" aria-label="Close"
                on:click=move |_| st.intake_open.set(false)>"×"</button>
            <p class="lead">
                "Drop "<code>"*buffer-assignment*.txt"</code>" files (or "<code>".gz"</code>
                ", or a whole "<code>"--xla_dump_to"</code>" folder) anywhere on this "
                "page, or pick them:"
            </p>
            <div class="pickers">
                {pickers(["file-input", "dir-input"], ["Choose files…", "Choose a folder…"], "", on_pick)}
            </div>
            {example::example_view(st)}
            {oom::paste_target(st)}
            <p class="note">"Files are read here, in your browser; nothing is uploaded."</p>
        </section>
    }
}

/// "Open…": opens (or closes) the intake over the module on screen.
fn open_button(st: AppState) -> impl IntoView {
    view! {
        <button type="button" id="open-button" class="button small" aria-controls="intake"
            aria-expanded=move || st.intake_open.get().to_string()
            title="Open other dumps, the example, or an out-of-memory message"
            on:click=move |_| st.intake_open.update(|o| *o = !*o)>"Open…"</button>
    }
}

/// The files of a file input's `change` event; the input is cleared, so that picking the
/// same file again fires `change` again.
fn picked(e: &web_sys::Event) -> Vec<read::Picked> {
    let input: HtmlInputElement = event_target(e);
    let files = read::files_of(input.files());
    input.set_value("");
    files
}

/// A file picker and a folder picker, as buttons (`extra`: more classes of both), with
/// the input ids and labels given.
fn pickers(
    ids: [&'static str; 2],
    labels: [&'static str; 2],
    extra: &'static str,
    on_pick: impl Fn(web_sys::Event) + Copy + 'static,
) -> impl IntoView {
    view! {
        <label class=format!("button {extra}")>
            {labels[0]}
            <input id=ids[0] class="visually-hidden" type="file" multiple on:change=on_pick />
        </label>
        <label class=format!("button secondary {extra}")>
            {labels[1]}
            <input id=ids[1] class="visually-hidden" type="file" multiple
                prop:webkitdirectory=true on:change=on_pick />
        </label>
    }
}

/// The progress bar of a read under way, with its Cancel button. Made once per read (its
/// numbers update in place), so that a click on Cancel is never lost to a re-render.
fn progress_view(st: AppState) -> impl IntoView {
    let percent = move || {
        st.reading
            .with(|r| r.as_ref().map_or(100.0, |r| r.fraction * 100.0))
            .clamp(0.0, 100.0)
    };
    let what = move || {
        st.reading.with(|r| {
            r.as_ref().map(|r| {
                let files = if r.files == 1 { "file" } else { "files" };
                let verb = if r.analysing { "Analysing" } else { "Reading" };
                format!("{verb} {} {files} ({})", r.files, fmt::human(r.bytes))
            })
        })
    };
    view! {
        <section class="progress" role="status" aria-label="Reading">
            <progress max="100" prop:value=move || format!("{:.1}", percent())></progress>
            <span class="percent">{move || format!("{:.0}%", percent())}</span>
            <span class="what">{what}</span>
            <button type="button" class="button secondary small cancel" title="Stop reading (Esc)"
                on:click=move |_| cancel(st)>"Cancel"</button>
        </section>
    }
}

/// Brings the report of the last read into view when the page is scrolled past it, so
/// that its outcome (or the top of the new module) is seen.
fn reveal_report() {
    if let Ok(Some(report)) = document().query_selector(".report") {
        if report.get_bounding_client_rect().top() < 0.0 {
            report.scroll_into_view();
        }
    }
}

/// The report of the last read: what was read, what could not be, and (when this read
/// opened nothing) that the module below is the one read before.
/// While the modules' `Used values` are read after their diagrams: how far.
fn details_view(fraction: f64) -> impl IntoView {
    let percent = (fraction * 100.0).clamp(0.0, 100.0);
    view! {
        <p class="details-status" id="details-status" role="status">
            {format!("Reading op_names, source lines and uses… {percent:.0}%")}
        </p>
    }
}

fn report_view(report: Arc<Report>) -> impl IntoView {
    let errors =
        (!report.errors.is_empty()).then(|| {
            let heading = if report.opened {
                "Some files could not be read as buffer-assignment dumps"
            } else if report.errors.len() == 1 {
                "Nothing was opened:"
            } else {
                "Nothing was opened; none of these files could be read as a buffer-assignment dump:"
            };
            // With a module open, one line over the dock: the list folded, the message closable.
            let opened = report.opened;
            let count = opened.then(|| format!(" ({})", report.errors.len()));
            let closed = RwSignal::new(false);
            let list = report.errors.clone();
            move || {
                (!closed.get()).then(|| {
                let items = list.iter().map(|e| view! { <li>{e.clone()}</li> }).collect_view();
                view! {
                    <div class="message error" class:compact=opened role="alert">
                        <button type="button" class="message-close" aria-label="Close this message"
                            title="Close" on:click=move |_| closed.set(true)>"×"</button>
                        <details open=!opened>
                            <summary><strong>{heading}</strong>{count.clone()}</summary>
                            <ul>{items}</ul>
                        </details>
                    </div>
                }
            })
            }
        });
    let kept = report.kept.clone().map(|what| {
        view! {
            <p class="message kept">{format!("Still showing what was read before ({what}).")}</p>
        }
    });
    let t = report.timings;
    let ms = move |f: fn(&Timings) -> f64| t.map(|t| format!("{:.0}", f(&t)));
    let title = t.map(|t| {
        let complete = if t.complete > 0.0 {
            let by = if t.uses_worker > 0.0 { " (by a worker)" } else { "" };
            format!("; op_names, source lines and uses read after the diagrams{by}, all in {:.0} ms", t.complete)
        } else {
            String::new()
        };
        format!(
            "Read in {:.0} ms ({:.0} ms of it parsing), joined in {:.0} ms, analysed in {:.0} ms{complete}",
            t.read, t.parse, t.join, t.analyse
        )
    });
    view! {
        <section class="report" aria-live="polite" data-read-ms=ms(|t| t.read)
            data-parse-ms=ms(|t| t.parse)
            data-join-ms=ms(|t| t.join) data-analyse-ms=ms(|t| t.analyse)
            data-complete-ms=ms(|t| t.complete) data-uses-worker-bytes=ms(|t| t.uses_worker)>
            <p class="files-line" title=title>{report.line.clone()}</p>
            {errors}
            {kept}
        </section>
    }
}

#[component]
fn OutcomeView(st: AppState) -> impl IntoView {
    let Some(outcome) = st.view.get_untracked() else {
        return ().into_any();
    };
    // The module on screen: the one the URL hash names, else the one with the most
    // allocated bytes.
    let default = hash::wanted_module(&outcome.modules)
        .or_else(|| bufscope::pipeline::default_module(outcome.modules.iter().map(|m| &m.module)))
        .unwrap_or(0);
    let chosen = RwSignal::new(default);
    // The views keep no module: they read it here, so that its complete form replaces it.
    drop(outcome);
    let actions = move || {
        view! {
            <div class="page-actions">
                {open_button(st)}
                <button type="button" id="bar-example" class="button small secondary"
                    title="Open the example shipped with this page"
                    on:click=move |_| example::open_example(st)>"Example"</button>
                {compare::compare_control(st)}
            </div>
        }
        .into_any()
    };
    let modules = move || {
        let outcome = st.view.get_untracked()?;
        Some(match st.compare.get() {
            Some(other) => view! {
                <header class="workbar compare-bar">
                    <span class="brand">"bufscope"</span>
                    {module_picker(&outcome, chosen)}
                    {actions()}
                </header>
                {compare::compare_view(outcome.clone(), chosen, other)}
            }
            .into_any(),
            None => {
                let i = chosen.get();
                outcome.modules.get(i)?;
                let shown = Signal::derive(move || module_at(st, i));
                view! {
                    <workspace::Workspace shown=shown
                        picker=module_picker(&outcome, chosen).into_any() actions=actions() />
                }
                .into_any()
            }
        })
    };
    view! { <section class="outcome">{modules}</section> }.into_any()
}

/// Module `i` of the read on screen, as it is now (its complete form once completed).
fn module_at(st: AppState, i: usize) -> Arc<Shown> {
    st.view
        .with(|o| o.as_ref().and_then(|o| o.modules.get(i).cloned()))
        .unwrap_or_else(Shown::none)
}

/// The module picker ([`picker::ModulePicker`]), when the read gave several modules: it sets
/// `chosen`.
fn module_picker(outcome: &Outcome, chosen: RwSignal<usize>) -> Option<impl IntoView> {
    (outcome.modules.len() > 1)
        .then(|| view! { <picker::ModulePicker modules=outcome.modules.clone() chosen=chosen /> })
}
