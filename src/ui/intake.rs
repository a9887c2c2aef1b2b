//! The intake: how dumps come in. The whole page is a drop zone; the file and folder pickers,
//! the example and the paste box sit in the intake section, which "Open…" opens over a
//! module on screen; Escape cancels a read under way (or closes the intake). Everything
//! given goes to [`super::load`].

use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::HtmlInputElement;

use super::app::AppState;
use super::load::{cancel, report_failure, start_load, start_load_into, Target};
use super::{example, oom, read};

/// The window's listeners: the whole page is the drop zone, and Escape cancels a read
/// under way, as the Cancel button does.
pub fn listen_to_window(st: AppState) {
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
pub fn on_drop(st: AppState, dt: &web_sys::DataTransfer, target: Target) {
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
pub fn intake_view(st: AppState) -> impl IntoView {
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
pub fn open_button(st: AppState) -> impl IntoView {
    view! {
        <button type="button" id="open-button" class="button small" aria-controls="intake"
            aria-expanded=move || st.intake_open.get().to_string()
            title="Open other dumps, the example, or an out-of-memory message"
            on:click=move |_| st.intake_open.update(|o| *o = !*o)>"Open…"</button>
    }
}

/// The files of a file input's `change` event; the input is cleared, so that picking the
/// same file again fires `change` again.
pub fn picked(e: &web_sys::Event) -> Vec<read::Picked> {
    let input: HtmlInputElement = event_target(e);
    let files = read::files_of(input.files());
    input.set_value("");
    files
}

/// A file picker and a folder picker, as buttons (`extra`: more classes of both), with
/// the input ids and labels given.
pub fn pickers(
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
