//! The tables of one memory space of a comparison: the values live at the peaks in five
//! classes (new, gone, grown, shrunk, unchanged; each row with its bytes on both sides and
//! the rule that matched it, sorted by the change as the core sorts them), and the live
//! bytes at the peaks grouped by op_name and by source line as differences, largest change
//! first; then the values found on one side only, anywhere in the program. Each table puts the first [`FIRST_ROWS`] rows on the page and more on request, so
//! that a space with 100,000 values at its peak stays a small page. A click on a row
//! selects the value on both sides and brings it into view.

use std::sync::Arc;

use bufscope::diff::{GroupDelta, SpaceDiff, ValueChange, ValueInfo};
use bufscope::export::{file_name, group_deltas_csv, value_changes_csv};
use bufscope::text::clip_middle;
use bufscope::units::{self, signed_bytes};
use leptos::prelude::*;

use super::sync::{rule_name, select, Sides};
use crate::ui::export::download_text;

/// The name of a CSV of a table of one space of the comparison: both modules, the space and
/// the table.
fn csv_name(sides: Sides, color: u32, table: &str) -> String {
    let (base, new) = (sides.base.shown(), sides.new.shown());
    let space = format!("space{color}");
    file_name(
        &base.module.name,
        &["vs", &new.module.name, &space, table],
        "csv",
    )
}

/// Rows of a table on the page at first.
const FIRST_ROWS: usize = 20;
/// Rows each "show more" adds.
const MORE_ROWS: usize = 100;
/// Characters of a name, op_name or source line in a cell.
const CELL_CHARS: usize = 90;

fn bytes_of(i: &Option<ValueInfo>) -> String {
    i.as_ref()
        .map_or_else(|| "—".to_string(), |i| units::exact_bytes(i.bytes))
}

/// The "show more" button of a table of `total` rows, `shown` of them on the page.
fn more_button(shown: RwSignal<usize>, total: usize) -> impl IntoView {
    move || {
        let n = shown.get();
        (n < total).then(|| {
            let next = (total - n).min(MORE_ROWS);
            view! {
                <button type="button" class="button small secondary show-more"
                    on:click=move |_| shown.update(|s| *s += MORE_ROWS)>
                    {format!("Show {next} more (of {} not shown)", units::group_digits((total - n) as u64))}
                </button>
            }
        })
    }
}

/// A table of `total` rows with its header cells `head`, `shown` of its rows on the page,
/// a "show more" button under it and a CSV button above it that downloads every row
/// (`csv` gives the file's name and text).
fn bounded_table(
    head: impl IntoView,
    rows: impl IntoView,
    shown: RwSignal<usize>,
    total: usize,
    csv: impl Fn() -> (String, String) + 'static,
) -> impl IntoView {
    let download = move |_| {
        let (name, text) = csv();
        download_text(&name, "text/csv", &text);
    };
    view! {
        <button type="button" class="button small secondary csv-button compare-csv"
            title="Download every row of this table as CSV" on:click=download>"CSV"</button>
        <div class="table-scroll">
            <table class="compare-table">
                <thead><tr>{head}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        {more_button(shown, total)}
    }
}

/// The five classes of values at the peaks.
#[component]
pub(super) fn ChangeTables(sides: Sides, space: Arc<SpaceDiff>) -> impl IntoView {
    let c = &space.changes;
    let t = &c.totals;
    let classes: [(&str, &str, usize, i64, bool); 5] = [
        (
            "new",
            "New at the peak",
            c.new.len(),
            t.new_bytes as i64,
            true,
        ),
        (
            "gone",
            "Gone from the peak",
            c.gone.len(),
            -(t.gone_bytes as i64),
            true,
        ),
        ("grown", "Grown", c.grown.len(), t.grown_bytes as i64, true),
        (
            "shrunk",
            "Shrunk",
            c.shrunk.len(),
            -(t.shrunk_bytes as i64),
            true,
        ),
        ("unchanged", "Unchanged", c.unchanged.len(), 0, false),
    ];
    let tables = classes
        .into_iter()
        .map(|(class, title, count, change, open)| {
            let summary = if class == "unchanged" {
                format!("{title}: {} ({})", units::count(count, "value"), units::exact_bytes(t.unchanged_bytes))
            } else {
                format!("{title}: {}, {}", units::count(count, "value"), signed_bytes(change))
            };
            view! {
                <details class=format!("compare-class {class}") data-class=class open={open && count > 0}>
                    <summary>{summary}</summary>
                    {(count > 0).then(|| view! { <ClassTable sides=sides space=space.clone() class=class /> })}
                </details>
            }
        })
        .collect_view();
    view! {
        <div class="compare-changes">
            <h4>"Values live at the peaks, matched"</h4>
            {tables}
        </div>
    }
}

/// The values of the space found on one side only, anywhere in the program (not only at
/// the peaks: a workspace live one step is one), a table per side.
#[component]
pub(super) fn OneSideTables(sides: Sides, space: Arc<SpaceDiff>) -> impl IntoView {
    let o = &space.one_side;
    let tables = [
        ("base-only", "Only in the base", o.base_only.len(), o.base_only_bytes),
        ("new-only", "Only in the new", o.new_only.len(), o.new_only_bytes),
    ]
    .map(|(class, title, count, bytes)| {
        let summary = format!("{title}: {}, {}", units::count(count, "value"), units::exact_bytes(bytes));
        view! {
            <details class=format!("compare-class one-side {class}") data-class=class open=count > 0>
                <summary>{summary}</summary>
                {(count > 0).then(|| view! { <OneSideTable sides=sides space=space.clone() class=class /> })}
            </details>
        }
    });
    view! {
        <div class="compare-changes compare-one-side">
            <h4>"Values found on one side only, anywhere in the program"</h4>
            {tables.collect_view()}
        </div>
    }
}

#[component]
fn OneSideTable(sides: Sides, space: Arc<SpaceDiff>, class: &'static str) -> impl IntoView {
    let shown = RwSignal::new(FIRST_ROWS);
    let base = class == "base-only";
    let list = move || {
        let o = &space.one_side;
        if base {
            o.base_only.clone()
        } else {
            o.new_only.clone()
        }
    };
    let total = list().len();
    let rows = move || {
        list()
            .into_iter()
            .take(shown.get())
            .map(|i| {
                let v = i.value;
                let (b, n) = if base { (Some(v), None) } else { (None, Some(v)) };
                let focus = if base { sides.base } else { sides.new };
                let selected = move || focus.selected.get() == Some(v);
                view! {
                    <tr class="one-side-row" class:selected=selected data-name=i.name.clone()
                        data-kind=i.kind on:click=move |_| select(sides, b, n)>
                        <td class="num">{units::exact_bytes(i.bytes)}</td>
                        <td class="mono" title=i.name.clone()>{clip_middle(&i.name, CELL_CHARS)}</td>
                        <td>{i.kind}</td>
                        <td class="mono" title=i.op_name.clone()>{clip_middle(&i.op_name, CELL_CHARS)}</td>
                        <td class="mono">{i.shape.clone()}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <div class="table-scroll">
            <table class="compare-table">
                <thead><tr>
                    <th scope="col" class="num">"Bytes"</th>
                    <th scope="col">"Value"</th>
                    <th scope="col">"Kind"</th>
                    <th scope="col">"op_name"</th>
                    <th scope="col">"Shape"</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        {more_button(shown, total)}
    }
}

fn class_rows<'a>(space: &'a SpaceDiff, class: &str) -> &'a [ValueChange] {
    let c = &space.changes;
    match class {
        "new" => &c.new,
        "gone" => &c.gone,
        "grown" => &c.grown,
        "shrunk" => &c.shrunk,
        _ => &c.unchanged,
    }
}

#[component]
fn ClassTable(sides: Sides, space: Arc<SpaceDiff>, class: &'static str) -> impl IntoView {
    let shown = RwSignal::new(FIRST_ROWS);
    let total = class_rows(&space, class).len();
    let csv = {
        let space = space.clone();
        move || {
            let name = csv_name(sides, space.peaks.color, class);
            (name, value_changes_csv(class_rows(&space, class)))
        }
    };
    let rows = move || {
        class_rows(&space, class)
            .iter()
            .take(shown.get())
            .map(|row| change_row(sides, row))
            .collect_view()
    };
    let head = view! {
        <th scope="col" class="num">"Change"</th>
        <th scope="col" class="num">"Base"</th>
        <th scope="col" class="num">"New"</th>
        <th scope="col">"Value"</th>
        <th scope="col">"Matched by"</th>
        <th scope="col">"op_name"</th>
        <th scope="col">"Shape"</th>
    };
    bounded_table(head, rows, shown, total, csv)
}

fn change_row(sides: Sides, row: &ValueChange) -> impl IntoView {
    let (b, n) = (
        row.base.as_ref().map(|i| i.value),
        row.new.as_ref().map(|i| i.value),
    );
    let name = match (&row.base, &row.new) {
        (Some(x), Some(y)) if x.name != y.name => format!("{} → {}", x.name, y.name),
        _ => row.name().to_string(),
    };
    let info = row.base.as_ref().or(row.new.as_ref());
    let op = info.map_or(String::new(), |i| i.op_name.clone());
    let shape = match (&row.base, &row.new) {
        (Some(x), Some(y)) if x.shape != y.shape => format!("{} → {}", x.shape, y.shape),
        _ => info.map_or(String::new(), |i| i.shape.clone()),
    };
    let selected = move || {
        (b.is_some() && sides.base.selected.get() == b)
            || (n.is_some() && sides.new.selected.get() == n)
    };
    let on_click = move |_| {
        select(sides, b, n);
        match (b, n) {
            (Some(v), _) => sides.base.reveal(v),
            (None, Some(v)) => sides.new.reveal(v),
            _ => {}
        }
    };
    view! {
        <tr class="compare-row" class:selected=selected on:click=on_click
            data-base=row.base.as_ref().map(|i| i.name.clone())
            data-new=row.new.as_ref().map(|i| i.name.clone())
            data-delta=row.delta_bytes.to_string()>
            <td class="num delta">{signed_bytes(row.delta_bytes)}</td>
            <td class="num">{bytes_of(&row.base)}</td>
            <td class="num">{bytes_of(&row.new)}</td>
            <td class="mono" title=name.clone()>{clip_middle(&name, CELL_CHARS)}</td>
            <td class="rule">{rule_name(row.rule)}</td>
            <td class="mono" title=op.clone()>{clip_middle(&op, CELL_CHARS)}</td>
            <td class="mono">{clip_middle(&shape, CELL_CHARS)}</td>
        </tr>
    }
}

/// The live bytes at the peaks by op_name and by source line, as differences.
#[component]
pub(super) fn GroupTables(sides: Sides, space: Arc<SpaceDiff>) -> impl IntoView {
    let g = &space.groups;
    let changed = |v: &[GroupDelta]| v.iter().filter(|d| d.delta_bytes != 0).count();
    let (ops, lines) = (changed(&g.by_op_name), changed(&g.by_source));
    view! {
        <div class="compare-groups">
            <details class="compare-group" data-group="op_name" open={ops > 0}>
                <summary>{format!("By op_name: {} changed of {}", ops, g.by_op_name.len())}</summary>
                <GroupTable sides=sides space=space.clone() by_source=false key_title="op_name" />
            </details>
            <details class="compare-group" data-group="source" open={lines > 0}>
                <summary>{format!("By source line: {} changed of {}", lines, g.by_source.len())}</summary>
                <GroupTable sides=sides space=space.clone() by_source=true key_title="Source line" />
            </details>
        </div>
    }
}

#[component]
fn GroupTable(
    sides: Sides,
    space: Arc<SpaceDiff>,
    by_source: bool,
    key_title: &'static str,
) -> impl IntoView {
    let csv = {
        let space = space.clone();
        move || {
            let (rows, key) = if by_source {
                (&space.groups.by_source, "source_line")
            } else {
                (&space.groups.by_op_name, "op_name")
            };
            let name = csv_name(sides, space.peaks.color, &format!("by_{key}"));
            (name, group_deltas_csv(rows, key))
        }
    };
    let total = if by_source {
        space.groups.by_source.len()
    } else {
        space.groups.by_op_name.len()
    };
    let shown = RwSignal::new(FIRST_ROWS);
    let rows = move || {
        let all = if by_source {
            &space.groups.by_source
        } else {
            &space.groups.by_op_name
        };
        all.iter()
            .take(shown.get())
            .map(|d| {
                let key = if d.key.is_empty() {
                    if by_source { "(no source line)" } else { "(no op_name)" }.to_string()
                } else {
                    d.key.clone()
                };
                view! {
                    <tr data-key=d.key.clone() data-delta=d.delta_bytes.to_string()>
                        <td class="num delta">{signed_bytes(d.delta_bytes)}</td>
                        <td class="num">{format!("{} ({})", units::exact_bytes(d.base_bytes), d.base_values)}</td>
                        <td class="num">{format!("{} ({})", units::exact_bytes(d.new_bytes), d.new_values)}</td>
                        <td class="mono" title=key.clone()>{clip_middle(&key, CELL_CHARS)}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    let head = view! {
        <th scope="col" class="num">"Change"</th>
        <th scope="col" class="num">"Base (values)"</th>
        <th scope="col" class="num">"New (values)"</th>
        <th scope="col">{key_title}</th>
    };
    bounded_table(head, rows, shown, total, csv)
}
