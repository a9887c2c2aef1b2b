//! The search box (`#search`): a regular expression over value names (`name{index}`),
//! op_names and shapes (as printed, with layouts); the status says how many matched and in
//! which fields. Typing is debounced; the matches go to `focus.matches`; Enter selects the next
//! match (Shift+Enter the previous) and asks the diagrams to reveal it; Escape clears. An
//! invalid pattern shows its error inline and matches nothing.

use std::sync::Arc;
use std::time::Duration;

use bufscope::query;
use bufscope::units;
use leptos::ev;
use leptos::prelude::*;

use crate::ui::state::Focus;

/// Quiet time after the last keystroke before searching (177,800 names on the largest dump).
const DEBOUNCE: Duration = Duration::from_millis(150);

/// The search box's state; `Copy`, so handlers capture it freely.
#[derive(Clone, Copy)]
struct Search {
    focus: Focus,
    /// Why the pattern is invalid, if it is.
    error: RwSignal<Option<String>>,
    /// The text the current matches were computed for (`None`: a search is pending); also
    /// on the status as `data-searched`, so that a test can wait for a search to finish.
    searched: RwSignal<Option<String>>,
    /// Whether Enter has gone to a match since the last search: the first Enter goes to the
    /// first match, later ones move on.
    stepped: RwSignal<bool>,
    /// The debounce timer of the last keystroke.
    pending: StoredValue<Option<TimeoutHandle>>,
    /// The fields that matched, without and with their counts (`op_name, shape`,
    /// `op_name 3 · shape 40`).
    fields: RwSignal<(String, String)>,
}

impl Search {
    fn new(focus: Focus) -> Search {
        Search {
            focus,
            error: RwSignal::new(None),
            searched: RwSignal::new(Some(String::new())),
            stepped: RwSignal::new(false),
            pending: StoredValue::new(None),
            fields: RwSignal::new((String::new(), String::new())),
        }
    }

    fn cancel_pending(self) {
        if let Some(Some(h)) = self.pending.try_get_value() {
            h.clear();
        }
        let _ = self.pending.try_set_value(None);
    }

    /// Runs the search for the box's current text. Uses the `try_` accessors: it can run
    /// from a timer after the module was replaced.
    fn run(self) {
        self.cancel_pending();
        let focus = self.focus;
        let (Some(text), Some(shown)) = (
            focus.search.try_get_untracked(),
            focus.shown.try_get_untracked(),
        ) else {
            return;
        };
        let (matches, err) = match query::search_fields(&shown.module, &text) {
            Ok(m) => (m, None),
            Err(e) => (query::Matches::default(), Some(e)),
        };
        self.error.try_set(err);
        self.fields
            .try_set((matches.fields_short(), matches.fields_text()));
        let matches = matches.values;
        focus.matches.try_set(Arc::new(matches));
        focus.match_index.try_set(0);
        self.stepped.try_set(false);
        self.searched.try_set(Some(text));
    }

    /// The box's text changed: search once typing pauses.
    fn typed(self, text: String) {
        self.focus.search.set(text);
        self.searched.set(None);
        self.cancel_pending();
        match set_timeout_with_handle(move || self.run(), DEBOUNCE) {
            Ok(h) => self.pending.set_value(Some(h)),
            // No timer: search now.
            Err(_) => self.run(),
        }
    }

    /// Moves to the next (`forward`) or previous match and shows it.
    fn step(self, forward: bool) {
        let focus = self.focus;
        if self.searched.get_untracked().is_none() {
            self.run();
        }
        let matches = focus.matches.get_untracked();
        let n = matches.len();
        if n == 0 {
            return;
        }
        let current = focus.match_index.get_untracked().min(n - 1);
        let i = match (self.stepped.get_untracked(), forward) {
            (false, true) => current,
            (false, false) => n - 1,
            (true, true) => (current + 1) % n,
            (true, false) => (current + n - 1) % n,
        };
        self.stepped.set(true);
        focus.match_index.set(i);
        if let Some(&v) = matches.get(i) {
            focus.selected.set(Some(v));
            focus.reveal(v);
        }
    }

    fn clear(self) {
        self.cancel_pending();
        self.focus.search.set(String::new());
        self.run();
    }

    /// The status beside the box: pending, the pattern's error, a hint, or "k of n matches".
    fn status(self) -> AnyView {
        let focus = self.focus;
        if self.searched.get().is_none() {
            return view! { <span class="search-count pending">"…"</span> }.into_any();
        }
        if let Some(e) = self.error.get() {
            return view! {
                <span class="search-error" role="alert">{format!("Invalid regular expression: {e}")}</span>
            }
            .into_any();
        }
        let text = focus.search.get();
        if text.is_empty() {
            return view! { <span class="search-hint">"regex over names, op_names and shapes · Enter: next"</span> }.into_any();
        }
        let n = focus.matches.with(|m| m.len());
        let label = if n == 0 {
            "no matches".to_string()
        } else {
            let k = focus.match_index.get().min(n - 1) + 1;
            format!(
                "{} of {} {}",
                units::group_digits(k as u64),
                units::group_digits(n as u64),
                if n == 1 { "match" } else { "matches" }
            )
        };
        let (fields, counts) = self.fields.get();
        let title = (!counts.is_empty()).then(|| format!("matched in: {counts}"));
        let fields = (!fields.is_empty())
            .then(|| view! { <span class="search-fields">{format!(" in {fields}")}</span> });
        view! {
            <span class="search-count" data-count=n.to_string() title=title>{label}{fields}</span>
        }
        .into_any()
    }
}

#[component]
pub fn SearchBox(focus: Focus) -> impl IntoView {
    let s = Search::new(focus);
    let input = NodeRef::<leptos::html::Input>::new();
    focus.find.on(move |()| {
        if let Some(i) = input.get_untracked() {
            let _ = i.focus();
            i.select();
        }
    });
    // A search carried over (the URL hash, the module before) runs at once.
    if !focus.search.get_untracked().is_empty() {
        s.run();
    }
    let on_keydown = move |e: ev::KeyboardEvent| match e.key().as_str() {
        "Enter" => {
            e.prevent_default();
            s.step(!e.shift_key());
        }
        "Escape" => {
            e.prevent_default();
            s.clear();
        }
        _ => {}
    };
    // The module completed (its op_names read): the search runs again.
    Effect::watch(
        move || focus.shown.track(),
        move |_, _, _| {
            if !focus.search.get_untracked().is_empty() {
                s.run();
            }
        },
        false,
    );
    on_cleanup(move || s.cancel_pending());
    let has_matches = move || focus.matches.with(|m| !m.is_empty());
    let error = s.error;
    let searched = s.searched;

    view! {
        <div class="search" role="search">
            <label class="search-label" for="search">"Search"</label>
            <input node_ref=input id="search" type="search" placeholder="name, op_name or shape: fusion\\.1\\d, bf16\\[32,"
                autocomplete="off" spellcheck="false"
                aria-describedby="search-status"
                aria-invalid=move || error.with(|e| e.is_some()).to_string()
                prop:value=move || focus.search.get()
                on:input=move |e| s.typed(event_target_value(&e)) on:keydown=on_keydown />
            <button type="button" class="search-step" aria-label="Previous match"
                disabled=move || !has_matches() on:click=move |_| s.step(false)>"▲"</button>
            <button type="button" class="search-step" aria-label="Next match"
                disabled=move || !has_matches() on:click=move |_| s.step(true)>"▼"</button>
            <span id="search-status" class="search-status" aria-live="polite"
                data-searched=move || searched.get()>{move || s.status()}</span>
        </div>
    }
}
