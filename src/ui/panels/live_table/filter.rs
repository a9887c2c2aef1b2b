//! The table limited to a set of values ([`Focus::subset`](crate::ui::state::Focus::subset)):
//! the subset an icicle frame stands for ([`frame_subset`]) and the chip above the table
//! that says it and clears it (`#table-filter`); a subset of another memory space's values
//! shows that space.

use std::sync::Arc;

use bufscope::answers::groups::OpNode;
use bufscope::text::clip_middle;
use bufscope::units;
use leptos::prelude::*;

use super::Table;
use crate::ui::panels::CELL_CHARS;
use crate::ui::state::Subset;

/// The values under the icicle frame at `path` (child indices from `root`), labelled with
/// the frame's op_name path (folded segments with their `×N`); `None` for the root (every
/// live value) or a path that leads nowhere.
pub fn frame_subset(root: &OpNode, path: &[usize]) -> Option<Subset> {
    let mut node = root;
    let mut label = Vec::with_capacity(path.len());
    for &c in path {
        node = node.children.get(c)?;
        label.push(if node.repeats > 1 {
            format!("{}×{}", node.label, node.repeats)
        } else {
            node.label.clone()
        });
    }
    (!path.is_empty()).then(|| Subset {
        label: label.join("/"),
        values: Arc::new(node.all_values()),
    })
}

/// "only LABEL · N values · ×" while the table is limited to a subset; N counts the rows.
pub(super) fn chip(t: Table) -> Option<impl IntoView> {
    let subset = t.focus.subset.get()?;
    let count = t.rows.with(|r| r.len());
    let clear = move |_| t.focus.subset.set(None);
    Some(view! {
        <span class="filter-chip" id="table-filter" data-count=count.to_string()>
            <span>"only"</span>
            <span class="filter-label" title=subset.label.clone()>{clip_middle(&subset.label, CELL_CHARS).into_owned()}</span>
            <span class="filter-count">{format!("· {}", units::count(count, "value"))}</span>
            <button type="button" class="filter-clear" aria-label="Show every live value"
                title="show every live value" on:click=clear>"×"</button>
        </span>
    })
}

/// Shows the memory space of a subset's values when one is set.
pub(super) fn follow(t: Table) {
    Effect::new(move |_| {
        let first = t
            .focus
            .subset
            .with(|s| s.as_ref().and_then(|s| s.values.first().copied()));
        let shown = t.focus.shown();
        let color = first
            .and_then(|v| shown.module.values.get(v as usize))
            .map(|v| shown.module.value_color(v));
        if let Some(c) = color.filter(|&c| c != t.space.get_untracked()) {
            t.space.set(c);
        }
    });
}
