//! The module picker (`#module-picker`): a button naming the module on screen that opens
//! the list of the read's modules, filtered as you type. Each row has the module's name, its
//! peak (the highest occupied bytes of its fullest memory space) and its memory spaces.
//! Rows come largest peak first (file order among equals); a filter keeps the names that
//! contain it (ignoring case) first, then those that hold its characters in order. ↑/↓ move,
//! Enter or a click picks, Escape or a click elsewhere closes. Switching carries the search
//! and capacity to the new module ([`super::hash::carry`]).

use std::sync::Arc;

use bufscope::model::memory_space_name;
use bufscope::text::clip_middle;
use leptos::ev;
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::fmt;
use super::hash;
use super::panels::CELL_CHARS;
use super::state::Shown;

/// The most rows the open list shows; the filter narrows the rest.
const ROWS: usize = 200;

/// One module as the list shows it.
struct Entry {
    /// Its position in the read (what `chosen` holds).
    index: usize,
    name: String,
    /// The peak of its fullest memory space.
    peak: u64,
    /// Its memory spaces, `HBM · vmem · smem`.
    spaces: String,
}

/// The rows of `modules`, largest peak first (file order among equals).
fn entries(modules: &[Arc<Shown>]) -> Vec<Entry> {
    let mut rows: Vec<Entry> = modules
        .iter()
        .enumerate()
        .map(|(index, m)| {
            let backend = m.module.backend();
            let spaces = m.analysis.spaces.iter().map(|s| match (s.color, backend) {
                (0, Some(b)) => b.default_memory().to_string(),
                (c, _) => memory_space_name(c),
            });
            Entry {
                index,
                name: m.module.name.clone(),
                peak: m.analysis.spaces.iter().map(|s| s.peak_bytes).max().unwrap_or(0),
                spaces: spaces.collect::<Vec<_>>().join(" · "),
            }
        })
        .collect();
    rows.sort_by_key(|e| (std::cmp::Reverse(e.peak), e.index));
    rows
}

/// How well `name` fits the filter (`lower`, lower case): 0 contains it, 1 holds its
/// characters in order, `None` neither.
fn fit(name: &str, lower: &str) -> Option<u8> {
    if lower.is_empty() {
        return Some(0);
    }
    let name = name.to_lowercase();
    if name.contains(lower) {
        return Some(0);
    }
    let mut chars = name.chars();
    lower
        .chars()
        .all(|c| chars.any(|n| n == c))
        .then_some(1)
}

/// The positions in `all` of the rows the filter keeps, best fits first.
fn filtered(all: &[Entry], filter: &str) -> Vec<usize> {
    let lower = filter.trim().to_lowercase();
    let mut kept: Vec<(u8, usize)> = all
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some((fit(&e.name, &lower)?, i)))
        .collect();
    kept.sort_unstable();
    kept.into_iter().map(|(_, i)| i).collect()
}

#[component]
pub fn ModulePicker(modules: Vec<Arc<Shown>>, chosen: RwSignal<usize>) -> impl IntoView {
    let count = modules.len();
    let all = StoredValue::new(Arc::new(entries(&modules)));
    let open = RwSignal::new(false);
    let filter = RwSignal::new(String::new());
    // The highlighted row, a position in `shown`.
    let active = RwSignal::new(0usize);
    let shown = Memo::new(move |_| Arc::new(filter.with(|f| filtered(&all.get_value(), f))));
    let root = NodeRef::<html::Div>::new();
    let button = NodeRef::<html::Button>::new();
    let input = NodeRef::<html::Input>::new();

    let close = move |refocus: bool| {
        open.set(false);
        if refocus {
            if let Some(b) = button.get_untracked() {
                let _ = b.focus();
            }
        }
    };
    let pick = move |row: usize| {
        let Some(i) = shown.with_untracked(|s| s.get(row).copied()) else {
            return;
        };
        let index = all.with_value(|a| a[i].index);
        close(true);
        if index != chosen.get_untracked() {
            hash::carry();
            chosen.set(index);
        }
    };
    let on_key = move |e: ev::KeyboardEvent| {
        let n = shown.with_untracked(|s| s.len().min(ROWS));
        match e.key().as_str() {
            "ArrowDown" => active.update(|a| *a = (*a + 1).min(n.saturating_sub(1))),
            "ArrowUp" => active.update(|a| *a = a.saturating_sub(1)),
            "Enter" => pick(active.get_untracked()),
            "Escape" => close(true),
            _ => return,
        }
        e.prevent_default();
        e.stop_propagation();
    };
    let toggle = move |_| {
        let now = !open.get_untracked();
        if now {
            filter.set(String::new());
            active.set(0);
        }
        open.set(now);
    };
    // The filter box takes the keys as soon as the list opens.
    Effect::new(move |_| {
        if open.get() {
            if let Some(i) = input.get() {
                let _ = i.focus();
            }
        }
    });
    // The highlighted row stays in view.
    Effect::new(move |_| {
        let a = active.get();
        if let Some(r) = root.get_untracked() {
            if let Ok(Some(row)) = r.query_selector(&format!("[data-row=\"{a}\"]")) {
                let options = web_sys::ScrollIntoViewOptions::new();
                options.set_block(web_sys::ScrollLogicalPosition::Nearest);
                row.scroll_into_view_with_scroll_into_view_options(&options);
            }
        }
    });
    // A press outside the picker closes it.
    let outside = window_event_listener(ev::pointerdown, move |e: web_sys::PointerEvent| {
        let inside = match (root.get_untracked(), e.target()) {
            (Some(r), Some(t)) => t.dyn_ref::<web_sys::Node>().is_some_and(|t| r.contains(Some(t))),
            _ => false,
        };
        if !inside && open.get_untracked() {
            close(false);
        }
    });
    on_cleanup(move || outside.remove());

    let current = move || {
        let i = chosen.get();
        let all = all.get_value();
        let e = all.iter().find(|e| e.index == i);
        let name = e.map_or_else(String::new, |e| e.name.clone());
        let peak = e.map_or_else(String::new, |e| format!("peak {}", fmt::human(e.peak)));
        view! {
            <span class="picker-current" title=name.clone()>{clip_middle(&name, CELL_CHARS)}</span>
            <span class="picker-peak">{peak}</span>
        }
    };
    let rows = move || {
        let list = shown.get();
        let a = active.get();
        let at = chosen.get_untracked();
        let all = all.get_value();
        let items = list
            .iter()
            .take(ROWS)
            .enumerate()
            .map(|(row, &i)| {
                let e = &all[i];
                view! {
                    <li role="option" id=format!("module-option-{row}") data-row=row.to_string()
                        data-name=e.name.clone() aria-selected=(row == a).to_string()
                        class:current=e.index == at title=e.name.clone()
                        on:mousedown=|e| e.prevent_default()
                        on:click=move |_| pick(row)>
                        <span class="picker-name">{clip_middle(&e.name, CELL_CHARS)}</span>
                        <span class="picker-peak">{fmt::human(e.peak)}</span>
                        <span class="picker-spaces">{e.spaces.clone()}</span>
                    </li>
                }
            })
            .collect_view();
        let more = list.len().saturating_sub(ROWS);
        let note = match (list.len(), more) {
            (0, _) => Some("No module name fits.".to_string()),
            (_, 0) => None,
            (_, more) => Some(format!("… {more} more: type to narrow")),
        };
        view! {
            <ul id="module-list" role="listbox" aria-label="Modules">{items}</ul>
            {note.map(|n| view! { <p class="picker-note">{n}</p> })}
        }
    };
    let popup = move || {
        open.get().then(|| {
            view! {
                <div class="picker-popup">
                    <input node_ref=input id="module-filter" type="text" role="combobox"
                        autocomplete="off" spellcheck="false" aria-expanded="true"
                        aria-controls="module-list" aria-label="Filter modules"
                        aria-activedescendant=move || format!("module-option-{}", active.get())
                        placeholder=format!("Filter {count} modules…")
                        prop:value=move || filter.get()
                        on:input=move |e| {
                            filter.set(event_target_value(&e));
                            active.set(0);
                        }
                        on:keydown=on_key />
                    {rows}
                </div>
            }
        })
    };
    view! {
        <div class="module-picker" node_ref=root>
            <button node_ref=button id="module-picker" type="button" class="picker-button"
                aria-haspopup="listbox" aria-expanded=move || open.get().to_string()
                title=format!("{count} modules: switch (type to filter)")
                on:click=toggle>
                <span class="picker-count">{format!("{count} modules")}</span>
                {current}
                <span class="picker-caret" aria-hidden="true">"▾"</span>
            </button>
            {popup}
        </div>
    }
}
