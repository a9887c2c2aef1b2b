//! The table of values live at one step (`#peak-table`): the step the answers panel is
//! about ([`Focus::step`]; each space's peak by default), one memory space at a time (tabs),
//! largest first; sortable by any column (click a header, again to reverse), groupable by
//! op_name (`#group-op`), limited to an icicle frame's values when [`Focus::subset`] is set
//! (a chip clears it, [`filter`]). Below it, the space's values without a live range, which
//! the diagrams cannot draw ([`timeless`]). Clicking a row selects the value and asks the
//! diagrams to reveal it ([`rows`]).
//!
//! Owns the table's state ([`Table`]) and its layout; the live set comes from
//! [`bufscope::answers::live_set`], the figures (sorting, grouping, flattening, totals) from
//! [`bufscope::query`]. The rows are one list of lines (groups with their opened members
//! flattened), of which only the lines scrolled to are in the DOM ([`list`]): the largest
//! dumps have 25,000 values live at the peak.

mod filter;
mod header;
mod list;
mod rows;
mod timeless;

use std::collections::HashSet;
use std::sync::Arc;

use bufscope::answers::LiveSet;
use bufscope::export;
use bufscope::model::{memory_space_name, Str};
use bufscope::query::{self, Column, Group, TableRow};
use bufscope::units;
use leptos::prelude::*;

use super::space_label;
use crate::ui::export::{csv_button, download_text};
use crate::ui::swatch;
use crate::ui::state::Focus;
pub use filter::frame_subset;
use timeless::Timeless;

/// The table's lines, and a number that changes whenever they are computed again (a group
/// line's view depends on the groups it was made from, so its key carries it).
#[derive(Clone, Debug, Default, PartialEq)]
struct Lines {
    generation: u64,
    rows: Vec<TableRow>,
}

/// The table's state, shared by its parts; `Copy`, so handlers capture it freely.
#[derive(Clone, Copy)]
struct Table {
    focus: Focus,
    /// The memory space shown (its colour).
    space: RwSignal<u32>,
    /// The step shown: the chosen one, else the space's peak (within the program); `None`
    /// when neither is known (no value of the space has a live range).
    step: Memo<Option<u32>>,
    /// The column sorted by, and whether descending.
    sort: RwSignal<(Column, bool)>,
    /// Grouped by op_name.
    grouped: RwSignal<bool>,
    /// The op_names of the groups opened.
    expanded: RwSignal<HashSet<Str>>,
    /// The space's values live at the step, each with its share of the occupied bytes.
    live: Memo<Arc<LiveSet>>,
    /// The live values in the table (limited to the subset, if any), sorted.
    rows: Memo<Arc<Vec<u32>>>,
    /// The rows grouped by op_name, sorted (empty when not grouped).
    groups: Memo<Arc<Vec<Group>>>,
    /// What the table lists, line by line.
    lines: Memo<Arc<Lines>>,
}

impl Table {
    fn new(focus: Focus) -> Table {
        let shown = focus.shown();
        let space = RwSignal::new(super::fullest_space(&shown.analysis.spaces));
        let sort = RwSignal::new((Column::Size, true));
        let grouped = RwSignal::new(false);
        let expanded = RwSignal::new(HashSet::new());
        let step = Memo::new(move |_| focus.step_in(space.get()));
        let live = Memo::new(move |_| match step.get() {
            Some(t) => focus.shown().live_set(space.get(), t),
            None => Arc::new(LiveSet::default()),
        });
        let rows = Memo::new(move |_| {
            let shown = focus.shown();
            let (column, descending) = sort.get();
            let mut rows = live.with(|l| l.indices());
            focus.subset.with(|s| {
                if let Some(s) = s {
                    query::keep_only(&mut rows, &s.values);
                }
            });
            query::sort_values(&shown.module, &mut rows, column, descending);
            Arc::new(rows)
        });
        let groups = Memo::new(move |_| {
            if !grouped.get() {
                return Arc::new(Vec::new());
            }
            let shown = focus.shown();
            let (column, descending) = sort.get();
            let mut groups = rows.with(|r| query::group_by_op_name(&shown.module, r));
            query::sort_groups(&shown.module, &mut groups, column, descending);
            Arc::new(groups)
        });
        let generation = StoredValue::new(0u64);
        let lines = Memo::new(move |_| {
            let rows = if grouped.get() {
                groups.with(|g| {
                    expanded.with(|e| query::flatten_groups(g, |g| e.contains(&g.op_name)))
                })
            } else {
                rows.with(|r| r.iter().map(|&v| TableRow::Value(v)).collect())
            };
            generation.update_value(|g| *g += 1);
            Arc::new(Lines {
                generation: generation.get_value(),
                rows,
            })
        });
        Table {
            focus,
            space,
            step,
            sort,
            grouped,
            expanded,
            live,
            rows,
            groups,
            lines,
        }
    }

    /// Whether the step shown is the space's peak.
    fn at_peak(self) -> bool {
        let shown = self.focus.shown();
        let peak = shown
            .analysis
            .space(self.space.get())
            .and_then(|s| s.peak_time);
        peak.is_some() && self.step.get() == peak
    }
}

/// Computes ahead what the table shows first (the fullest space's live set at its step,
/// which [`Shown::live_set`](crate::ui::state::Shown::live_set) keeps), so that the task
/// that makes the table does less.
pub fn prepare_table(focus: Focus) {
    untrack(|| {
        let shown = focus.shown_untracked();
        let space = super::fullest_space(&shown.analysis.spaces);
        if let Some(step) = focus.step_in(space) {
            shown.live_set(space, step);
        }
    });
}

#[component]
pub fn LiveSetTable(focus: Focus) -> impl IntoView {
    let t = Table::new(focus);
    filter::follow(t);
    // The Export menu's "Live-set table as CSV".
    focus.export_live_csv.on(move |()| {
        let (name, text) = csv(t);
        download_text(&name, "text/csv", &text);
    });
    let grouped = t.grouped;
    let title = move || match t.step.get() {
        Some(_) if t.at_peak() => "Live at the peak".to_string(),
        Some(step) => format!("Live at step {}", units::group_digits(u64::from(step))),
        None => "Live at the peak".to_string(),
    };
    view! {
        <section class="peak-panel" aria-label="Values live at the chosen step">
            <h3 class="peak-title">{title}</h3>
            <div class="space-tabs" role="tablist" aria-label="Memory space">{space_tabs(t)}</div>
            {move || peak_summary(t)}
            <div class="table-tools">
                <label class="toggle">
                    <input id="group-op" type="checkbox" prop:checked=move || grouped.get()
                        on:change=move |e| grouped.set(event_target_checked(&e)) />
                    " Group by op_name"
                </label>
                {move || filter::chip(t)}
                {csv_button("live-csv", "the live-set table", move || csv(t))}
            </div>
            {list::table(t)}
            {move || view! { <Timeless focus=focus color=t.space.get() /> }}
        </section>
    }
}

/// One tab per memory space: its name, peak and number of values live there.
fn space_tabs(t: Table) -> impl IntoView {
    let shown = t.focus.shown();
    shown
        .analysis
        .spaces
        .iter()
        .map(|s| {
            let c = s.color;
            let swatch = swatch::class(c);
            let peak = units::human_bytes(s.peak_bytes);
            // The values live at the table's step (the peak's until one is chosen); the
            // module read through the focus, never kept (completion replaces it in place).
            let live = move || {
                let shown = t.focus.shown();
                let n = match t.step.get() {
                    Some(step) => (shown.analysis.space(c))
                        .map_or(0, |s| s.live_at(&shown.module, step).count()),
                    None => (shown.analysis.space(c)).map_or(0, |s| s.live_at_peak.len()),
                };
                format!("{peak} · {} live", units::group_digits(n as u64))
            };
            let title = move || match t.step.get() {
                Some(step) => format!(
                    "peak · values live at step {}",
                    units::group_digits(u64::from(step))
                ),
                None => "peak · values live at the peak".to_string(),
            };
            view! {
                <button type="button" role="tab" class="space-tab" data-color=c.to_string()
                    aria-selected=move || (t.space.get() == c).to_string()
                    title=title
                    on:click=move |_| {
                        if t.space.get_untracked() != c {
                            t.space.set(c);
                            t.expanded.set(HashSet::new());
                        }
                    }>
                    <span class=swatch></span>
                    <span class="tab-name">{space_label(c, &shown.module)}</span>
                    <span class="tab-note">{live}</span>
                </button>
            }
        })
        .collect_view()
}

/// The line above the table: the step and whether it is the peak, how many values are live
/// there, the occupied bytes and what the values' sizes add to.
fn peak_summary(t: Table) -> Option<impl IntoView> {
    let shown = t.focus.shown();
    let s = shown.analysis.space(t.space.get())?;
    let m = &shown.module;
    let live = t.live.get();
    let count = live.values.len();
    let step = t.step.get();
    let text = match step {
        Some(step) => format!(
            "{} live at step {}{} — {} occupied; their sizes add to {} (aliases count once in the occupied bytes).",
            units::count(count, "value"),
            super::step_label(m, step),
            match s.peak_time {
                Some(p) if p == step => ", this space's peak".to_string(),
                Some(p) => format!(", not the peak (step {})", units::group_digits(u64::from(p))),
                None => String::new(),
            },
            units::exact_bytes(live.occupied_bytes),
            units::exact_bytes(live.value_bytes)
        ),
        None => "No value of this memory space has a live range: nothing is live at any step.".to_string(),
    };
    Some(view! {
        <p class="peak-summary" data-count=count.to_string()
            data-step=step.map(|t| t.to_string()).unwrap_or_default()
            data-peak=t.at_peak().to_string()
            data-occupied=live.occupied_bytes.to_string()
            data-bytes=live.value_bytes.to_string()>{text}</p>
    })
}

/// The table as CSV, every row (not only those scrolled to), with its file name: the values
/// in the table's order, or one line per op_name group when grouped.
fn csv(t: Table) -> (String, String) {
    let shown = t.focus.shown();
    let m = &shown.module;
    let grouped = t.grouped.get_untracked();
    let text = if grouped {
        t.groups.with_untracked(|g| export::op_groups_csv(m, g))
    } else {
        t.rows.with_untracked(|r| export::values_csv(m, r))
    };
    let color = t.space.get_untracked();
    let step = t
        .step
        .get_untracked()
        .map_or_else(|| "nostep".to_string(), |s| format!("step{s}"));
    let space = memory_space_name(color);
    let by = if grouped { "by_op_name" } else { "" };
    (
        export::file_name(&m.name, &["live", &step, &space, by], "csv"),
        text,
    )
}
