//! The table of values live at the peak (`#peak-table`), one memory space at a time (tabs),
//! largest first; sortable by any column (click a header, again to reverse), groupable by
//! op_name (`#group-op`). Below it, the space's values without a live range, which the
//! diagrams cannot draw. Clicking a row selects the value and asks the diagrams to reveal it.
//!
//! Only the first [`FIRST`] rows (or groups) are in the DOM, with a "show more" button: the
//! largest dumps have 25,000 values live at the peak.

use std::collections::HashSet;
use std::sync::Arc;

use bufscope::model::{Module, Str};
use bufscope::query::{self, Column, Group};
use bufscope::analysis::{value_kind, ValueKind};
use leptos::ev;
use leptos::prelude::*;

use super::{clip_middle, space_label, CELL_CHARS};
use crate::ui::fmt;
use crate::ui::state::{Focus, Shown};

/// Rows (or groups) in the DOM at first: a few screens. Mounting and laying out 500 rows
/// took about 190 ms of the first frame after a load.
const FIRST: usize = 100;
/// Rows (or groups) each "Show more" adds.
const PAGE: usize = 500;
/// Columns of the table, in order.
const COLUMNS: [Column; 8] = Column::ALL;

#[component]
pub fn PeakTable(focus: Focus) -> impl IntoView {
    let shown = focus.shown();
    // The space shown first: the one with the highest peak (what fills memory most).
    let first = shown
        .analysis
        .spaces
        .iter()
        .max_by_key(|s| (s.peak_bytes, std::cmp::Reverse(s.color)))
        .map_or(0, |s| s.color);
    let space = RwSignal::new(first);
    let sort = RwSignal::new((Column::Size, true));
    let grouped = RwSignal::new(false);
    let limit = RwSignal::new(FIRST);
    let expanded = RwSignal::new(HashSet::<Str>::new());

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
    // A value selected elsewhere (a block clicked, a search) that is in the table but past
    // the rows shown: show rows down to it.
    Effect::new(move |_| {
        let Some(v) = focus.selected.get() else {
            return;
        };
        if grouped.get_untracked() {
            return;
        }
        let at = rows.with_untracked(|rows| rows.iter().position(|&r| r == v));
        if let Some(at) = at.filter(|&at| at >= limit.get_untracked()) {
            limit.set((at / FIRST + 1) * FIRST);
        }
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

    let tabs = shown
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
                    aria-selected=move || (space.get() == c).to_string()
                    on:click=move |_| {
                        if space.get_untracked() != c {
                            space.set(c);
                            limit.set(FIRST);
                            expanded.set(HashSet::new());
                        }
                    }>
                    <span class=swatch></span>
                    <span class="tab-name">{space_label(c)}</span>
                    <span class="tab-note">{note}</span>
                </button>
            }
        })
        .collect_view();

    let summary = {
        let shown = shown.clone();
        move || {
            let c = space.get();
            let s = shown.analysis.space(c)?;
            let m = &shown.module;
            let count = s.live_at_peak.len();
            let sum = s
                .live_at_peak
                .iter()
                .filter_map(|&v| m.values.get(v as usize))
                .fold(0u64, |t, v| t.saturating_add(v.size));
            let text = match s.peak_time {
                Some(t) => format!(
                    "{} value{} live at step {} — {} occupied; their sizes add to {} (aliases count once in the occupied bytes).",
                    fmt::grouped(count as u64),
                    if count == 1 { "" } else { "s" },
                    super::step_label(m, t),
                    fmt::bytes(s.peak_bytes),
                    fmt::bytes(sum)
                ),
                None => "No value of this memory space has a live range: nothing is live at any step.".to_string(),
            };
            Some(view! {
                <p class="peak-summary" data-count=count.to_string()
                    data-step=s.peak_time.map(|t| t.to_string()).unwrap_or_default()>{text}</p>
            })
        }
    };

    let headers = COLUMNS
        .iter()
        .map(|&col| {
            let aria = move || {
                let (c, desc) = sort.get();
                if c != col {
                    "none"
                } else if desc {
                    "descending"
                } else {
                    "ascending"
                }
            };
            let arrow = move || {
                let (c, desc) = sort.get();
                if c != col {
                    ""
                } else if desc {
                    "▼"
                } else {
                    "▲"
                }
            };
            let on_click = move |_| {
                limit.set(FIRST);
                sort.update(|(c, desc)| {
                    if *c == col {
                        *desc = !*desc;
                    } else {
                        *c = col;
                        *desc = col.default_descending();
                    }
                })
            };
            let class = if col.is_numeric() { "num" } else { "" };
            view! {
                <th scope="col" class=class data-col=col.key() aria-sort=aria>
                    <button type="button" class="sort" on:click=on_click>
                        {col.label()}<span class="arrow" aria-hidden="true">{arrow}</span>
                    </button>
                </th>
            }
        })
        .collect_view();

    let body = move || {
        let shown = focus.shown();
        let limit = limit.get();
        if grouped.get() {
            groups.with(|groups| {
                groups
                    .iter()
                    .take(limit)
                    .map(|g| group_rows(focus, &shown, g, expanded))
                    .collect_view()
                    .into_any()
            })
        } else {
            rows.with(|rows| {
                rows.iter()
                    .take(limit)
                    .map(|&v| value_row(focus, &shown.module, v, false))
                    .collect_view()
                    .into_any()
            })
        }
    };

    let more = move || {
        let total = if grouped.get() {
            groups.with(|g| g.len())
        } else {
            rows.with(|r| r.len())
        };
        let shown_now = limit.get().min(total);
        (total > shown_now).then(|| {
            let what = if grouped.get() { "groups" } else { "values" };
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
    };

    view! {
        <section class="peak-panel" aria-label="Values live at the peak">
            <h3>"Live at the peak"</h3>
            <div class="space-tabs" role="tablist" aria-label="Memory space">{tabs}</div>
            {summary}
            <div class="table-tools">
                <label class="toggle">
                    <input id="group-op" type="checkbox" prop:checked=move || grouped.get()
                        on:change=move |e| {
                            limit.set(FIRST);
                            grouped.set(event_target_checked(&e));
                        } />
                    " Group by op_name"
                </label>
            </div>
            <div class="table-scroll">
                <table id="peak-table" class="values" class:grouped=move || grouped.get()>
                    <thead><tr>{headers}</tr></thead>
                    <tbody>{body}</tbody>
                </table>
            </div>
            {more}
            {move || view! { <Timeless focus=focus color=space.get() /> }}
        </section>
    }
}

/// Selects a value and asks the diagrams to show it.
fn choose(focus: Focus, v: u32) {
    focus.selected.set(Some(v));
    focus.reveal(v);
}

/// One value as a table row. `member`: inside an expanded group (indented).
fn value_row(focus: Focus, m: &Module, v: u32, member: bool) -> impl IntoView + use<> {
    let value = m.values.get(v as usize).copied();
    let cells = value.map(|value| {
        let name = m.value_name(&value);
        let shape = m.str(value.shape).to_string();
        let op = query::op_name(m, &value).to_string();
        let source = query::source(m, &value).unwrap_or_default();
        let logical = value.logical_size;
        let padding = query::padding(&value);
        let opt_bytes = |b: Option<u64>| b.map_or_else(|| "—".to_string(), fmt::human);
        let opt_title = |b: Option<u64>| {
            b.map(|b| format!("{} B", fmt::grouped(b)))
                .unwrap_or_default()
        };
        let kind = value_kind(m, &value);
        // The whole text in the title, at most CELL_CHARS of it in the cell.
        let clip = |s: &str| clip_middle(s, CELL_CHARS);
        let (name_title, shape_title) = (name.clone(), shape.clone());
        let (op_title, source_title) = (op.clone(), source.clone());
        let (name, shape, op, source) = (clip(&name), clip(&shape), clip(&op), clip(&source));
        view! {
            <td class="name" title=name_title>{name}</td>
            <td class="num" data-bytes=value.size.to_string()
                title=format!("{} B", fmt::grouped(value.size))>{fmt::human(value.size)}</td>
            <td class="num" title=opt_title(logical)>{opt_bytes(logical)}</td>
            <td class="num" title=opt_title(padding)>{opt_bytes(padding)}</td>
            <td class="shape" title=shape_title>{shape}</td>
            <td class="op tail" title=op_title><bdi>{op}</bdi></td>
            <td class="source tail" title=source_title><bdi>{source}</bdi></td>
            <td class="kind" title=kind.label()>{short_kind(kind)}</td>
        }
    });
    let on_key = move |e: ev::KeyboardEvent| {
        if e.key() == "Enter" || e.key() == " " {
            e.prevent_default();
            choose(focus, v);
        }
    };
    view! {
        <tr class="value-row" class:member=member data-value=v.to_string()
            data-id=value.map(|x| x.id.to_string()).unwrap_or_default()
            tabindex="0"
            aria-selected=move || (focus.selected.get() == Some(v)).to_string()
            class:selected=move || focus.selected.get() == Some(v)
            class:match=move || focus.matches.with(|ms| ms.binary_search(&v).is_ok())
            on:click=move |_| choose(focus, v) on:keydown=on_key>
            {cells}
        </tr>
    }
}

/// The kind of a value in a narrow column (the full word is its title).
fn short_kind(kind: ValueKind) -> &'static str {
    match kind {
        ValueKind::Parameter => "param",
        ValueKind::Output => "output",
        ValueKind::Constant => "const",
        ValueKind::ThreadLocal => "local",
        ValueKind::Temporary => "temp",
    }
}

/// A group's header row and, when expanded, its members (the first [`PAGE`]).
fn group_rows(
    focus: Focus,
    shown: &Arc<Shown>,
    g: &Group,
    expanded: RwSignal<HashSet<Str>>,
) -> impl IntoView + use<> {
    let m = &shown.module;
    let key = g.op_name;
    let open = move || expanded.with(|e| e.contains(&key));
    let toggle = move |_| {
        expanded.update(|e| {
            if !e.remove(&key) {
                e.insert(key);
            }
        })
    };
    let name = if g.op_name.is_empty() {
        "(no op_name)".to_string()
    } else {
        m.str(g.op_name).to_string()
    };
    let name_title = name.clone();
    let name = clip_middle(&name, CELL_CHARS);
    let count = g.values.len();
    let padding = g.total.saturating_sub(g.logical);
    let members = {
        let shown = shown.clone();
        let values = g.values.clone();
        move || {
            open().then(|| {
                let rest = values.len().saturating_sub(PAGE);
                let rows = values
                    .iter()
                    .take(PAGE)
                    .map(|&v| value_row(focus, &shown.module, v, true))
                    .collect_view();
                let more = (rest > 0).then(|| {
                    view! {
                        <tr class="member more-members"><td colspan="8">
                            {format!("… and {} more values in this group", fmt::grouped(rest as u64))}
                        </td></tr>
                    }
                });
                view! { {rows}{more} }
            })
        }
    };
    view! {
        <tr class="group-row" data-count=count.to_string() data-bytes=g.total.to_string()
            aria-expanded=move || open().to_string()>
            <td class="name" colspan="1">
                <button type="button" class="group-toggle" on:click=toggle title=name_title>
                    <span class="chevron" aria-hidden="true">{move || if open() { "▾" } else { "▸" }}</span>
                    <span class="group-name">{name}</span>
                    <span class="group-count">{format!(" ×{}", fmt::grouped(count as u64))}</span>
                </button>
            </td>
            <td class="num" title=format!("{} B", fmt::grouped(g.total))>{fmt::human(g.total)}</td>
            <td class="num">{fmt::human(g.logical)}</td>
            <td class="num">{fmt::human(padding)}</td>
            <td colspan="4" class="group-note">{format!("{} value{}", fmt::grouped(count as u64), if count == 1 { "" } else { "s" })}</td>
        </tr>
        {members}
    }
}

/// The values of one memory space without a live range (thread-local ones), largest first:
/// not drawn on the time axis, so listed here.
#[component]
fn Timeless(focus: Focus, color: u32) -> impl IntoView {
    let shown = focus.shown();
    let m = &shown.module;
    let mut values = shown
        .analysis
        .space(color)
        .map(|s| s.timeless.clone())
        .unwrap_or_default();
    if values.is_empty() {
        return None;
    }
    query::sort_values(m, &mut values, Column::Size, true);
    let total = values
        .iter()
        .filter_map(|&v| m.values.get(v as usize))
        .fold(0u64, |t, v| t.saturating_add(v.size));
    let count = values.len();
    let limit = RwSignal::new(FIRST);
    let values = Arc::new(values);
    let items = {
        let shown = shown.clone();
        let values = values.clone();
        move || {
            let m = &shown.module;
            values
                .iter()
                .take(limit.get())
                .filter_map(|&v| {
                    let value = m.values.get(v as usize)?;
                    let name = clip_middle(&m.value_name(value), CELL_CHARS);
                    let shape = clip_middle(m.str(value.shape), CELL_CHARS);
                    Some(view! {
                        <li class="timeless-item" data-value=v.to_string()
                            class:selected=move || focus.selected.get() == Some(v)>
                            <button type="button" class="link" on:click=move |_| focus.selected.set(Some(v))>{name}</button>
                            <span class="size" title=format!("{} B", fmt::grouped(value.size))>{fmt::human(value.size)}</span>
                            <code class="shape">{shape}</code>
                        </li>
                    })
                })
                .collect_view()
        }
    };
    let more = move || {
        let shown_now = limit.get().min(count);
        (count > shown_now).then(|| {
            view! {
                <button type="button" class="show-more" on:click=move |_| limit.update(|l| *l += PAGE)>
                    {format!("Show more ({} of {})", fmt::grouped(shown_now as u64), fmt::grouped(count as u64))}
                </button>
            }
        })
    };
    Some(view! {
        <details class="timeless" data-color=color.to_string() data-count=count.to_string()>
            <summary>
                {format!(
                    "{} value{} without a live range in {} (thread-local; not drawn) — {}",
                    fmt::grouped(count as u64),
                    if count == 1 { "" } else { "s" },
                    space_label(color),
                    fmt::human(total)
                )}
            </summary>
            <ul class="timeless-list">{items}</ul>
            {more}
        </details>
    })
}
