//! XLA's out-of-memory messages on the page: the paste target and the page-wide paste
//! (Ctrl+V anywhere outside a text field), and the view of an [`OomLog`] ([`OomPanel`]).
//!
//! Keeps its state in [`AppState::oom`](super::app::AppState::oom) ([`OomState`](super::app::OomState): the messages on screen, with where
//! they came from, and the sentence for a paste that held none). Pasted text is read with [`read_oom`]; the loading flow
//! calls [`show_oom`] for the messages found in dropped files. The OOM view sits between
//! the report of the last read and the module on screen, and is independent of both: a
//! paste never closes a module, and a read that opens one leaves the OOM view open until
//! it is closed (its Close button) or replaced by another message. A paste with no message
//! changes nothing but the sentence. Each message is laid out by [`message`]; its listed
//! buffers (table, bars, groups) by [`buffers`].

mod buffers;
mod message;

use std::sync::Arc;

use bufscope::model::oom::{ByteSize, OomLog};
use bufscope::parse::oom::{read_oom, NO_OOM_MESSAGE};
use bufscope::units;
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use super::app::{AppState, OomShown};
use super::tasks;

/// Shows the messages of `log` (read from `from`: a file's name, or `pasted text`) in
/// place of any shown before, and brings them into view.
pub(super) fn show_oom(st: AppState, log: OomLog, from: String) {
    show_oom_beside(st, log, from, Vec::new());
}

/// [`show_oom`] with, per message, what its dump says (`dumps`, by message).
pub(super) fn show_oom_beside(st: AppState, log: OomLog, from: String, dumps: Vec<Option<String>>) {
    st.oom.miss.set(None);
    st.oom.shown.set(Some(Arc::new(OomShown { from, log, dumps })));
    spawn_local(async {
        tasks::next_task().await;
        if let Ok(Some(view)) = document().query_selector(".oom") {
            view.scroll_into_view();
        }
    });
}

/// Reads pasted text: its messages shown, or the sentence saying none was found.
fn read_pasted(st: AppState, text: &str) {
    if text.trim().is_empty() {
        st.oom
            .miss
            .set(Some("The pasted text is empty: nothing was read.".into()));
        return;
    }
    match read_oom(text) {
        Some(log) => show_oom(st, log, "pasted text".into()),
        None => st
            .oom
            .miss
            .set(Some(format!("The pasted text has {NO_OOM_MESSAGE}."))),
    }
}

/// Paste anywhere on the page: read as an out-of-memory message, unless the paste goes
/// into a text field (the search box, the paste box, any input).
pub(super) fn listen_for_paste(st: AppState) {
    let _ = window_event_listener(ev::paste, move |e: web_sys::ClipboardEvent| {
        if into_text_field(e.target()) {
            return;
        }
        let Some(text) = e
            .clipboard_data()
            .and_then(|d| d.get_data("text/plain").ok())
        else {
            return;
        };
        e.prevent_default();
        read_pasted(st, &text);
    });
}

/// Whether an event's target takes text itself.
fn into_text_field(target: Option<web_sys::EventTarget>) -> bool {
    let Some(el) = target.and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) else {
        return false;
    };
    el.is_content_editable() || matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT")
}

/// The paste target of the intake: a box to paste (or type) a message into, read as soon
/// as text is pasted, or with its button; and the sentence when a paste held no message.
pub(super) fn paste_target(st: AppState) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let on_paste = move |e: web_sys::ClipboardEvent| {
        if let Some(pasted) = e
            .clipboard_data()
            .and_then(|d| d.get_data("text/plain").ok())
        {
            e.prevent_default();
            text.set(pasted.clone());
            read_pasted(st, &pasted);
        }
    };
    let miss = move || {
        st.oom.miss.get().map(|m| {
            view! { <p class="message error oom-miss" role="alert">{code_spans(&m)}</p> }
        })
    };
    view! {
        <details class="oom-paste">
            <summary>"Paste an out-of-memory message"</summary>
            <p class="note">
                "An XLA or runtime error with "<code>"RESOURCE_EXHAUSTED"</code>" ("
                <code>"E1000"</code>", "<code>"BufferAssignment OOM Debugging."</code>", "
                <code>"Ran out of memory"</code>", "<code>"Attempting to reserve"</code>", the GPU "
                "allocator's) or a whole log: paste it here, or press Ctrl+V anywhere on the page."
            </p>
            <textarea id="oom-text" rows="4" spellcheck="false" aria-label="Out-of-memory message"
                placeholder="RESOURCE_EXHAUSTED: …" prop:value=move || text.get()
                on:input=move |e| text.set(event_target_value(&e)) on:paste=on_paste></textarea>
            <button type="button" id="oom-read" class="button small"
                on:click=move |_| read_pasted(st, &text.get_untracked())>"Read message"</button>
        </details>
        {miss}
    }
}

/// Text with its `backquoted` parts in `<code>`.
fn code_spans(text: &str) -> impl IntoView {
    text.split('`')
        .enumerate()
        .map(|(i, part)| {
            let part = part.to_string();
            if i % 2 == 1 {
                view! { <code>{part}</code> }.into_any()
            } else {
                part.into_any()
            }
        })
        .collect_view()
}

/// A signed byte count for people: [`units::human_bytes`], with a minus sign when negative (a
/// shortfall).
fn signed(n: i64) -> String {
    if n < 0 {
        format!("−{}", units::human_bytes(n.unsigned_abs()))
    } else {
        units::human_bytes(n.unsigned_abs())
    }
}

/// A printed size for people ([`signed`]).
fn human(s: &ByteSize) -> String {
    signed(s.bytes)
}

/// A printed size for people, with the figure as XLA printed it in its title.
fn size_view(s: &ByteSize) -> impl IntoView {
    let title = if s.exact {
        let sign = if s.bytes < 0 { "−" } else { "" };
        format!(
            "{sign}{} bytes, printed as {}",
            units::group_digits(s.bytes.unsigned_abs()),
            s.text
        )
    } else {
        format!("printed as {} (rounded)", s.text)
    };
    view! { <span class="oom-size" title=title data-bytes=s.bytes>{human(s)}</span> }
}

/// The messages on screen, with where they came from and a Close button.
#[component]
pub(super) fn OomPanel(st: AppState) -> impl IntoView {
    move || {
        st.oom.shown.get().map(|shown| {
            let n = shown.log.messages.len();
            let heading = match n {
                0 => "Compiler notes on memory".to_string(),
                1 => "Out-of-memory message".to_string(),
                _ => format!("{n} out-of-memory messages"),
            };
            let messages = shown
                .log
                .messages
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let dump = shown.dumps.get(i).and_then(|d| d.as_deref());
                    message::view(m, i, n, dump)
                })
                .collect_view();
            let limits = (n > 0).then(|| message::limits(&shown.log.messages));
            view! {
                <section class="oom" aria-label="Out-of-memory messages">
                    <header class="oom-head">
                        <h2>{heading}</h2>
                        <span class="oom-from">{format!("from {}", shown.from)}</span>
                        <button type="button" class="button secondary small oom-close"
                            on:click=move |_| st.oom.shown.set(None)>"Close"</button>
                    </header>
                    {message::notes(&shown.log.compiler_notes)}
                    {messages}
                    {limits}
                </section>
            }
        })
    }
}
