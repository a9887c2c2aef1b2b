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
use bufscope::units;
use leptos::ev;
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

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
    /// As the page shows it ([`Shown::label`]).
    label: String,
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
                label: m.label.clone(),
                peak: m
                    .analysis
                    .spaces
                    .iter()
                    .map(|s| s.peak_bytes)
                    .max()
                    .unwrap_or(0),
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
    lower.chars().all(|c| chars.any(|n| n == c)).then_some(1)
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

/// The picker's state; `Copy`, so handlers capture it freely.
#[derive(Clone, Copy)]
struct Picker {
    /// The module on screen (a position in the read).
    chosen: RwSignal<usize>,
    all: StoredValue<Arc<Vec<Entry>>>,
    open: RwSignal<bool>,
    filter: RwSignal<String>,
    /// The rows the filter keeps (positions in `all`), best first.
    shown: Memo<Arc<Vec<usize>>>,
    /// The highlighted row, a position in `shown`.
    active: RwSignal<usize>,
    root: NodeRef<html::Div>,
    button: NodeRef<html::Button>,
    input: NodeRef<html::Input>,
    /// The list's rows, the `a`-th the `a`-th row shown.
    list: NodeRef<html::Ul>,
}

impl Picker {
    fn new(modules: &[Arc<Shown>], chosen: RwSignal<usize>) -> Picker {
        let all = StoredValue::new(Arc::new(entries(modules)));
        let filter = RwSignal::new(String::new());
        Picker {
            chosen,
            all,
            open: RwSignal::new(false),
            filter,
            shown: Memo::new(move |_| Arc::new(filter.with(|f| filtered(&all.get_value(), f)))),
            active: RwSignal::new(0),
            root: NodeRef::new(),
            button: NodeRef::new(),
            input: NodeRef::new(),
            list: NodeRef::new(),
        }
    }

    fn close(self, refocus: bool) {
        self.open.set(false);
        if let Some(b) = self.button.get_untracked().filter(|_| refocus) {
            let _ = b.focus();
        }
    }

    fn toggle(self) {
        let now = !self.open.get_untracked();
        if now {
            self.filter.set(String::new());
            self.active.set(0);
        }
        self.open.set(now);
    }

    /// Shows the module of row `row`, carrying the search and capacity over.
    fn pick(self, row: usize) {
        let Some(i) = self.shown.with_untracked(|s| s.get(row).copied()) else {
            return;
        };
        let index = self.all.with_value(|a| a[i].index);
        self.close(true);
        if index != self.chosen.get_untracked() {
            hash::carry();
            self.chosen.set(index);
        }
    }

    /// ↑/↓ move the highlight, Enter picks, Escape closes.
    fn key(self, e: &ev::KeyboardEvent) {
        let n = self.shown.with_untracked(|s| s.len().min(ROWS));
        match e.key().as_str() {
            "ArrowDown" => self
                .active
                .update(|a| *a = (*a + 1).min(n.saturating_sub(1))),
            "ArrowUp" => self.active.update(|a| *a = a.saturating_sub(1)),
            "Enter" => self.pick(self.active.get_untracked()),
            "Escape" => self.close(true),
            _ => return,
        }
        e.prevent_default();
        e.stop_propagation();
    }

    /// The filter box takes the keys when the list opens; the highlighted row stays in view;
    /// a press outside the picker closes it.
    fn follow(self) {
        Effect::new(move |_| {
            if let Some(i) = self.input.get().filter(|_| self.open.get()) {
                let _ = i.focus();
            }
        });
        Effect::new(move |_| {
            let a = self.active.get();
            let row = (self.list.get_untracked()).and_then(|l| l.children().item(a as u32));
            if let Some(row) = row {
                let options = web_sys::ScrollIntoViewOptions::new();
                options.set_block(web_sys::ScrollLogicalPosition::Nearest);
                row.scroll_into_view_with_scroll_into_view_options(&options);
            }
        });
        let outside = window_event_listener(ev::pointerdown, move |e: web_sys::PointerEvent| {
            let inside = match (self.root.get_untracked(), e.target()) {
                (Some(r), Some(t)) => t
                    .dyn_ref::<web_sys::Node>()
                    .is_some_and(|t| r.contains(Some(t))),
                _ => false,
            };
            if !inside && self.open.get_untracked() {
                self.close(false);
            }
        });
        on_cleanup(move || outside.remove());
    }

    /// The button's text: the module on screen and its peak.
    fn current(self) -> impl IntoView {
        let i = self.chosen.get();
        let all = self.all.get_value();
        let e = all.iter().find(|e| e.index == i);
        let name = e.map_or_else(String::new, |e| e.name.clone());
        let label = e.map_or_else(String::new, |e| e.label.clone());
        let peak = e.map_or_else(String::new, |e| format!("peak {}", units::human_bytes(e.peak)));
        view! {
            <span class="picker-current" title=name>{clip_middle(&label, CELL_CHARS)}</span>
            <span class="picker-peak">{peak}</span>
        }
    }

    /// The rows the filter keeps (the first [`ROWS`]), and a note on the others.
    fn rows(self) -> impl IntoView {
        let list = self.shown.get();
        let a = self.active.get();
        let at = self.chosen.get_untracked();
        let all = self.all.get_value();
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
                        on:click=move |_| self.pick(row)>
                        <span class="picker-name">{clip_middle(&e.label, CELL_CHARS)}</span>
                        <span class="picker-peak" data-bytes=e.peak.to_string()>{units::human_bytes(e.peak)}</span>
                        <span class="picker-spaces">{e.spaces.clone()}</span>
                    </li>
                }
            })
            .collect_view();
        let note = match (list.len(), list.len().saturating_sub(ROWS)) {
            (0, _) => Some("No module name fits.".to_string()),
            (_, 0) => None,
            (_, more) => Some(format!("… {more} more: type to narrow")),
        };
        view! {
            <ul node_ref=self.list id="module-list" role="listbox" aria-label="Modules">{items}</ul>
            {note.map(|n| view! { <p class="picker-note">{n}</p> })}
        }
    }

    /// The open list: the filter box and the rows.
    fn popup(self, count: usize) -> impl IntoView {
        view! {
            <div class="picker-popup">
                <input node_ref=self.input id="module-filter" type="text" role="combobox"
                    autocomplete="off" spellcheck="false" aria-expanded="true"
                    aria-controls="module-list" aria-label="Filter modules"
                    aria-activedescendant=move || format!("module-option-{}", self.active.get())
                    placeholder=format!("Filter {count} modules…")
                    prop:value=move || self.filter.get()
                    on:input=move |e| {
                        self.filter.set(event_target_value(&e));
                        self.active.set(0);
                    }
                    on:keydown=move |e| self.key(&e) />
                {move || self.rows()}
            </div>
        }
    }
}

#[component]
pub fn ModulePicker(modules: Vec<Arc<Shown>>, chosen: RwSignal<usize>) -> impl IntoView {
    let count = modules.len();
    let p = Picker::new(&modules, chosen);
    p.follow();
    view! {
        <div class="module-picker" node_ref=p.root>
            <button node_ref=p.button id="module-picker" type="button" class="picker-button"
                aria-haspopup="listbox" aria-expanded=move || p.open.get().to_string()
                title=format!("{count} modules: switch (type to filter)")
                on:click=move |_| p.toggle()>
                <span class="picker-count">{format!("{count} modules")}</span>
                {move || p.current()}
                <span class="picker-caret" aria-hidden="true">"▾"</span>
            </button>
            {move || p.open.get().then(|| p.popup(count))}
        </div>
    }
}
