//! The live-set table's column headers: each column's DOM key (`data-col`) and caption, and the
//! sort button (a click sorts by the column, a second click reverses; `aria-sort` says
//! which way). What a column sorts by is [`bufscope::query::Column`]'s business.

use bufscope::query::Column;
use leptos::prelude::*;

use super::Table;

/// The table's columns, in order.
pub const COLUMNS: [Column; 8] = Column::ALL;

/// A stable identifier of a column (its `data-col`; the browser tests use it).
pub fn key(column: Column) -> &'static str {
    match column {
        Column::Name => "name",
        Column::Size => "size",
        Column::Logical => "logical",
        Column::Padding => "padding",
        Column::Shape => "shape",
        Column::OpName => "op_name",
        Column::Source => "source",
        Column::Kind => "kind",
    }
}

/// A column's caption.
pub fn label(column: Column) -> &'static str {
    match column {
        Column::Name => "Value",
        Column::Size => "Size",
        Column::Logical => "Logical",
        Column::Padding => "Padding",
        Column::Shape => "Shape",
        Column::OpName => "op_name",
        Column::Source => "Source",
        Column::Kind => "Kind",
    }
}

/// The header cells of every column.
pub(super) fn headers(t: Table) -> impl IntoView {
    COLUMNS.iter().map(|&col| header(t, col)).collect_view()
}

/// One column's header cell.
fn header(t: Table, col: Column) -> impl IntoView {
    let sort = t.sort;
    // `None` when the table is sorted by another column, else whether descending.
    let direction = move || {
        let (c, desc) = sort.get();
        (c == col).then_some(desc)
    };
    let aria = move || match direction() {
        None => "none",
        Some(true) => "descending",
        Some(false) => "ascending",
    };
    let arrow = move || match direction() {
        None => "",
        Some(true) => "▼",
        Some(false) => "▲",
    };
    let on_click = move |_| {
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
        <th scope="col" class=class data-col=key(col) aria-sort=aria>
            <button type="button" class="sort" on:click=on_click>
                {label(col)}<span class="arrow" aria-hidden="true">{arrow}</span>
            </button>
        </th>
    }
}
