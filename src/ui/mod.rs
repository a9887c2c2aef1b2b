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

mod app;
mod canvas;
mod compare;
mod diagram;
mod example;
mod export;
mod hash;
mod intake;
mod load;
mod oom;
mod panels;
mod picker;
mod read;
mod report;
mod state;
mod swatch;
mod sweep;
mod tasks;
mod uses;
mod workspace;

use leptos::prelude::*;
use leptos::task::spawn_local;

use app::{AppState, Outcome};
use intake::{intake_view, listen_to_window, open_button};
use report::{details_view, progress_view, report_view};

/// Mounts the app on `<body>`.
pub fn start() {
    console_error_panic_hook::set_once();
    // In the worker that reads `Used values` (uses_worker.js), the instance only serves
    // `UsesRead`: there is no page.
    if web_sys::window().is_none() {
        return;
    }
    // Now, while the page loads: no request is made once a file is given.
    let workers = read::Workers::start();
    hash::start();
    #[cfg(feature = "test-hooks")]
    install_memory_hook();
    leptos::mount::mount_to_body(move || view! { <App workers=workers /> });
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
    let hook = Closure::<dyn Fn() -> JsValue>::new(|| JsValue::from_f64(read::uses_worker::wasm_bytes()));
    let _ = js_sys::Reflect::set(&window, &"__bufscope_wasm_bytes".into(), hook.as_ref());
    // Lives as long as the page.
    hook.forget();
}

#[component]
fn App(workers: std::rc::Rc<read::Workers>) -> impl IntoView {
    let st = AppState::new(workers);
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
            class:comparing=move || st.compare.with(Option::is_some) || st.sweep.with(Option::is_some)
            class:sweeping=move || st.sweep.with(Option::is_some)
            class:intake-open=move || st.intake_open.get()>
            <header class="top">
                <h1>"bufscope"</h1>
                <p class="tagline">"A viewer for XLA buffer-assignment dumps"</p>
            </header>
            <main>
                {intake_view(st)}
                {move || busy.get().then(|| progress_view(st))}
                {move || st.report.get().map(|r| report_view(st, r))}
                {move || st.completing.get().map(details_view)}
                <oom::OomPanel st=st />
                {move || read.get().map(|_| view! { <OutcomeView st=st /> })}
            </main>
            <div class="drop-overlay" aria-hidden="true"><p>"Drop to open"</p></div>
        </div>
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
                {sweep::sweep_control(st, chosen)}
            </div>
        }
        .into_any()
    };
    // Only entering or leaving a sweep remakes the view (not a configuration added).
    let sweeping = Memo::new(move |_| st.sweep.with(Option::is_some));
    let modules = move || {
        let outcome = st.view.get_untracked()?;
        if sweeping.get() {
            return Some(view! {
                <header class="workbar compare-bar sweep-bar">
                    <span class="brand">"bufscope"</span>
                    {actions()}
                </header>
                {sweep::sweep_view(st, chosen)}
            }
            .into_any());
        }
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
                let shown = Signal::derive(move || st.module_at(i));
                let modules = Signal::derive(move || {
                    st.view.with(|o| o.as_ref().map_or_else(Vec::new, |o| o.modules.clone()))
                });
                let read = state::ReadModules { modules, chosen };
                view! {
                    <workspace::Workspace shown=shown read=read answers_open=st.answers_open
                        picker=module_picker(&outcome, chosen).into_any() actions=actions() />
                }
                .into_any()
            }
        })
    };
    view! { <section class="outcome">{modules}</section> }.into_any()
}

/// The module picker ([`picker::ModulePicker`]), when the read gave several modules: it sets
/// `chosen`.
fn module_picker(outcome: &Outcome, chosen: RwSignal<usize>) -> Option<impl IntoView> {
    (outcome.modules.len() > 1)
        .then(|| view! { <picker::ModulePicker modules=outcome.modules.clone() chosen=chosen /> })
}
