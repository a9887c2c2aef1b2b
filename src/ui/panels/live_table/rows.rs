//! The live-set table's rows: a value's row (name, sizes, padding, shape, op_name, source,
//! kind; the whole text in each cell's title, at most [`CELL_CHARS`] of it in the cell) and
//! an op_name group's row, which opens and closes the group. A click (or Enter) on a value
//! selects it and asks the diagrams to reveal it.

use std::collections::HashSet;

use bufscope::analysis::ValueKind;
use bufscope::model::{Module, Str};
use bufscope::query::{self, Group};
use leptos::ev;
use leptos::prelude::*;

use crate::ui::panels::CELL_CHARS;
use crate::ui::state::Focus;
use bufscope::text::{clip_middle, clip_source};
use bufscope::units;

/// Selects a value and asks the diagrams to show it.
fn choose(focus: Focus, v: u32) {
    focus.selected.set(Some(v));
    focus.reveal(v);
}

/// A source cell's text at most (the file name whole, [`clip_source`]).
const SOURCE_CHARS: usize = 40;

/// A source cell's text: where it names a file, its directory and the rest (function,
/// `(inferred)`) shrink to the column's width (style/panels.css) and the file name and
/// line never do.
fn source_cell(source: &str) -> AnyView {
    match bufscope::text::source_parts(source) {
        Some((dir, file, rest)) => view! {
            <span class="source-parts">
                <span class="source-dir">{dir.to_string()}</span>
                <span class="source-file">{file.to_string()}</span>
                <span class="source-rest">{rest.to_string()}</span>
            </span>
        }
        .into_any(),
        None => source.to_string().into_any(),
    }
}

/// One value as a table row. `member`: inside an expanded group (indented).
pub(super) fn value_row(focus: Focus, m: &Module, v: u32, member: bool) -> impl IntoView + use<> {
    let value = m.values.get(v as usize).copied();
    let cells = value.map(|value| {
        let name = query::display_name(m, &value);
        let shape = m.str(value.shape).to_string();
        let op = query::op_name(m, &value).to_string();
        let source = query::source(m, &value).unwrap_or_default();
        let logical = value.logical_size;
        let padding = query::padding(&value);
        let opt_bytes = |b: Option<u64>| b.map_or_else(|| "—".to_string(), units::human_bytes);
        let opt_title = |b: Option<u64>| {
            b.map(|b| format!("{} B", units::group_digits(b)))
                .unwrap_or_default()
        };
        let kind = bufscope::analysis::value_kind(m, &value);
        // The whole text in the title, at most CELL_CHARS of it in the cell.
        let clip = |s: &str| clip_middle(s, CELL_CHARS);
        let (name_title, shape_title) = (name.clone(), shape.clone());
        let (op_title, source_title) = (op.clone(), source.clone());
        // The source's directory folded, its file name whole and first (the cell cuts its end).
        let inferred = source.ends_with(bufscope::query::INFERRED);
        let (name, shape, op, source) = (clip(&name), clip(&shape), clip(&op), clip_source(&source, SOURCE_CHARS));
        view! {
            <td class="name" title=name_title>{name}</td>
            <td class="num" data-bytes=value.size.to_string()
                title=format!("{} B", units::group_digits(value.size))>{units::human_bytes(value.size)}</td>
            <td class="num" title=opt_title(logical)>{opt_bytes(logical)}</td>
            <td class="num" title=opt_title(padding)>{opt_bytes(padding)}</td>
            <td class="shape" title=shape_title>{shape}</td>
            <td class="op tail" title=op_title><bdi>{op}</bdi></td>
            <td class="source" class:inferred=inferred title=source_title><bdi>{source_cell(&source)}</bdi></td>
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
        ValueKind::Scratch => "scratch",
        ValueKind::Temporary => "temp",
    }
}

/// A group's row (its members, when it is opened, are lines of their own).
pub(super) fn group_row(
    m: &Module,
    g: &Group,
    expanded: RwSignal<HashSet<Str>>,
) -> impl IntoView + use<> {
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
    let padding = g.padding();
    view! {
        <tr class="group-row" data-count=count.to_string() data-bytes=g.total.to_string()
            aria-expanded=move || open().to_string()>
            <td class="name" colspan="1">
                <button type="button" class="group-toggle" on:click=toggle title=name_title>
                    <span class="chevron" aria-hidden="true">{move || if open() { "▾" } else { "▸" }}</span>
                    <span class="group-name">{name}</span>
                    <span class="group-count">{format!(" ×{}", units::group_digits(count as u64))}</span>
                </button>
            </td>
            <td class="num" title=format!("{} B", units::group_digits(g.total))>{units::human_bytes(g.total)}</td>
            <td class="num">{units::human_bytes(g.logical)}</td>
            <td class="num">{units::human_bytes(padding)}</td>
            <td colspan="4" class="group-note">{units::count(count, "value")}</td>
        </tr>
    }
}
