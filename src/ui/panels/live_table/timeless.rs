//! The values of one memory space without a live range (thread-local ones), largest first,
//! below the live-set table: the diagrams cannot draw them on the time axis, so they are
//! listed here (`.timeless`), a page at a time.

use std::sync::Arc;

use bufscope::query::{self, Column};
use leptos::prelude::*;

use crate::ui::panels::{space_label, CELL_CHARS};
use crate::ui::state::Focus;
use bufscope::text::clip_middle;
use bufscope::units;

/// Values listed at first.
const FIRST: usize = 100;
/// Values each "Show more" adds.
const PAGE: usize = 500;

/// The values of space `color` without a live range, largest first, as a `<details>`
/// list (nothing when there are none).
#[component]
pub(super) fn Timeless(focus: Focus, color: u32) -> impl IntoView {
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
    let total = query::total_size(m, &values);
    let count = values.len();
    let limit = RwSignal::new(FIRST);
    // The list is made when it is first opened: closed, it costs the page nothing.
    let opened = RwSignal::new(false);
    let details = NodeRef::<leptos::html::Details>::new();
    let items = items(focus, Arc::new(values), limit, opened);
    let more = move || {
        if !opened.get() {
            return None;
        }
        let shown_now = limit.get().min(count);
        (count > shown_now).then(|| {
            view! {
                <button type="button" class="show-more" on:click=move |_| limit.update(|l| *l += PAGE)>
                    {format!("Show more ({} of {})", units::group_digits(shown_now as u64), units::group_digits(count as u64))}
                </button>
            }
        })
    };
    Some(view! {
        <details class="timeless" data-color=color.to_string() data-count=count.to_string()
            node_ref=details on:toggle=move |_| {
                if details.get_untracked().is_some_and(|d| d.open()) {
                    opened.set(true);
                }
            }>
            <summary>
                {format!(
                    "{} without a live range in {} (thread-local; not drawn) — {}",
                    units::count(count, "value"),
                    space_label(color, m),
                    units::human_bytes(total)
                )}
            </summary>
            <ul class="timeless-list">{items}</ul>
            {more}
        </details>
    })
}

/// The first `limit` of `values` as list items, once the list has been `opened`.
fn items(
    focus: Focus,
    values: Arc<Vec<u32>>,
    limit: RwSignal<usize>,
    opened: RwSignal<bool>,
) -> impl Fn() -> Option<AnyView> {
    move || {
        if !opened.get() {
            return None;
        }
        let shown = focus.shown();
        let m = &shown.module;
        let items = values
            .iter()
            .take(limit.get())
            .filter_map(|&v| {
                let value = m.values.get(v as usize)?;
                let name = clip_middle(&bufscope::query::display_name(m, value), CELL_CHARS);
                let shape = clip_middle(m.str(value.shape), CELL_CHARS);
                Some(view! {
                    <li class="timeless-item" data-value=v.to_string()
                        class:selected=move || focus.selected.get() == Some(v)>
                        <button type="button" class="link" on:click=move |_| focus.selected.set(Some(v))>{name}</button>
                        <span class="size" title=format!("{} B", units::group_digits(value.size))>{units::human_bytes(value.size)}</span>
                        <code class="shape">{shape}</code>
                    </li>
                })
            })
            .collect_view();
        Some(items.into_any())
    }
}
