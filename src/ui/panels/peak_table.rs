//! The table of values live at the peak (`#peak-table`), one memory space at a time (tabs),
//! largest first; sortable by any column (click a header, again to reverse), groupable by
//! op_name (`#group-op`). Below it, the space's values without a live range, which the
//! diagrams cannot draw ([`timeless`]). Clicking a row selects the value and asks the
//! diagrams to reveal it ([`rows`]).
//!
//! Owns the table's state ([`Table`]) and its layout; the figures (sorting, grouping, totals)
//! come from [`bufscope::query`]. Only the first [`FIRST`] rows (or groups) are in the DOM,
//! with a "show more" button: the largest dumps have 25,000 values live at the peak.

mod header;
mod rows;
mod timeless;

use std::collections::HashSet;
use std::sync::Arc;

use bufscope::model::Str;
use bufscope::query::{self, Column, Group};
use leptos::prelude::*;

use super::space_label;
use crate::ui::fmt;
use crate::ui::state::Focus;
use timeless::Timeless;

/// Rows (or groups) in the DOM at first: a few screens. Mounting and laying out 500 rows
/// took about 190 ms of the first frame after a load.
const FIRST: usize = 100;
/// Rows (or groups) each "Show more" adds.
const PAGE: usize = 500;

/// The table's state, shared by its parts; `Copy`, so handlers capture it freely.
#[derive(Clone, Copy)]
struct Table {
    focus: Focus,
    /// The memory space shown (its colour).
    space: RwSignal<u32>,
    /// The column sorted by, and whether descending.
    sort: RwSignal<(Column, bool)>,
    /// Grouped by op_name.
    grouped: RwSignal<bool>,
    /// Rows (or groups) in the DOM.
    limit: RwSignal<usize>,
    /// The op_names of the groups opened.
    expanded: RwSignal<HashSet<Str>>,
    /// The space's values live at the peak, sorted.
    rows: Memo<Arc<Vec<u32>>>,
    /// The rows grouped by op_name, sorted (empty when not grouped).
    groups: Memo<Arc<Vec<Group>>>,
}

impl Table {
    fn new(focus: Focus) -> Table {
        let shown = focus.shown();
        let space = RwSignal::new(super::fullest_space(&shown.analysis.spaces));
        let sort = RwSignal::new((Column::Size, true));
        let grouped = RwSignal::new(false);
        let rows = Memo::new(move |_| {
            let shown = focus.shown();
            let (column, descending) = sort.get();
            let mut rows = shown
                .analysis
                .space(space.get())
                .map(|s| s.live_at_peak.clone())
                .unwrap_or_default();
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
        Table {
            focus,
            space,
            sort,
            grouped,
            limit: RwSignal::new(FIRST),
            expanded: RwSignal::new(HashSet::new()),
            rows,
            groups,
        }
    }

    /// A value selected elsewhere (a block clicked, a search) that is in the table but past
    /// the rows shown: show rows down to it.
    fn follow_selection(self) {
        Effect::new(move |_| {
            let Some(v) = self.focus.selected.get() else {
                return;
            };
            if self.grouped.get_untracked() {
                return;
            }
            let at = self
                .rows
                .with_untracked(|rows| rows.iter().position(|&r| r == v));
            if let Some(at) = at.filter(|&at| at >= self.limit.get_untracked()) {
                self.limit.set((at / FIRST + 1) * FIRST);
            }
        });
    }
}

#[component]
pub fn PeakTable(focus: Focus) -> impl IntoView {
    let t = Table::new(focus);
    t.follow_selection();
    let grouped = t.grouped;
    view! {
        <section class="peak-panel" aria-label="Values live at the peak">
            <h3>"Live at the peak"</h3>
            <div class="space-tabs" role="tablist" aria-label="Memory space">{space_tabs(t)}</div>
            {move || peak_summary(t)}
            <div class="table-tools">
                <label class="toggle">
                    <input id="group-op" type="checkbox" prop:checked=move || grouped.get()
                        on:change=move |e| {
                            t.limit.set(FIRST);
                            grouped.set(event_target_checked(&e));
                        } />
                    " Group by op_name"
                </label>
            </div>
            <div class="table-scroll">
                <table id="peak-table" class="values" class:grouped=move || grouped.get()>
                    <thead><tr>{header::headers(t)}</tr></thead>
                    <tbody>{move || table_body(t)}</tbody>
                </table>
            </div>
            {move || more_line(t)}
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
            let swatch = format!("swatch c{}", c % 8);
            let note = format!(
                "{} · {} live",
                fmt::human(s.peak_bytes),
                fmt::grouped(s.live_at_peak.len() as u64)
            );
            view! {
                <button type="button" role="tab" class="space-tab" data-color=c.to_string()
                    aria-selected=move || (t.space.get() == c).to_string()
                    on:click=move |_| {
                        if t.space.get_untracked() != c {
                            t.space.set(c);
                            t.limit.set(FIRST);
                            t.expanded.set(HashSet::new());
                        }
                    }>
                    <span class=swatch></span>
                    <span class="tab-name">{space_label(c, &shown.module)}</span>
                    <span class="tab-note">{note}</span>
                </button>
            }
        })
        .collect_view()
}

/// The line above the table: how many values are live at the peak step, the occupied
/// bytes there and what the values' sizes add to.
fn peak_summary(t: Table) -> Option<impl IntoView> {
    let shown = t.focus.shown();
    let s = shown.analysis.space(t.space.get())?;
    let m = &shown.module;
    let count = s.live_at_peak.len();
    let text = match s.peak_time {
        Some(step) => format!(
            "{} value{} live at step {} — {} occupied; their sizes add to {} (aliases count once in the occupied bytes).",
            fmt::grouped(count as u64),
            if count == 1 { "" } else { "s" },
            super::step_label(m, step),
            fmt::bytes(s.peak_bytes),
            fmt::bytes(query::total_size(m, &s.live_at_peak))
        ),
        None => "No value of this memory space has a live range: nothing is live at any step.".to_string(),
    };
    Some(view! {
        <p class="peak-summary" data-count=count.to_string()
            data-step=s.peak_time.map(|t| t.to_string()).unwrap_or_default()>{text}</p>
    })
}

/// The rows in the DOM: the first values, or the first groups (with their open members).
fn table_body(t: Table) -> AnyView {
    let shown = t.focus.shown();
    let limit = t.limit.get();
    if t.grouped.get() {
        t.groups.with(|groups| {
            groups
                .iter()
                .take(limit)
                .map(|g| rows::group_rows(t.focus, &shown, g, t.expanded))
                .collect_view()
                .into_any()
        })
    } else {
        t.rows.with(|rows| {
            rows.iter()
                .take(limit)
                .map(|&v| rows::value_row(t.focus, &shown.module, v, false))
                .collect_view()
                .into_any()
        })
    }
}

/// "Showing N of M" with buttons for more and for all, when some rows are not shown.
fn more_line(t: Table) -> Option<impl IntoView> {
    let grouped = t.grouped.get();
    let total = if grouped {
        t.groups.with(|g| g.len())
    } else {
        t.rows.with(|r| r.len())
    };
    let shown_now = t.limit.get().min(total);
    (total > shown_now).then(|| {
        let what = if grouped { "groups" } else { "values" };
        let limit = t.limit;
        view! {
            <p class="more-line">
                {format!("Showing {} of {} {what}. ", fmt::grouped(shown_now as u64), fmt::grouped(total as u64))}
                <button type="button" class="show-more" on:click=move |_| limit.update(|l| *l += PAGE)>
                    {format!("Show {} more", fmt::grouped(PAGE.min(total - shown_now) as u64))}
                </button>
                <button type="button" class="show-all" on:click=move |_| limit.set(usize::MAX)>
                    "Show all"
                </button>
            </p>
        }
    })
}
