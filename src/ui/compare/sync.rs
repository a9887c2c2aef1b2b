//! The two sides of a comparison kept together: each side has its own [`Focus`] (its
//! diagrams, selection and hover), and this file couples them.
//! * **Selection**: selecting a value on one side (a block, or a row of the tables) selects
//!   its matched partner on the other (none when it has no partner at the peaks).
//! * **View**: a diagram moved by the user publishes the window of relative program
//!   position it shows ([`Focus::window`]); the other side's diagram of the same memory
//!   space follows it ([`Focus::follow`]), which it does not publish back, so the two never
//!   chase each other. The rule is [`bufscope::render::diff::view_window`].

use std::collections::HashMap;
use std::sync::Arc;

use bufscope::diff::{MatchRule, ModuleDiff};
use bufscope::units;
use leptos::prelude::*;

use crate::ui::state::Focus;

/// The two sides' shared state.
#[derive(Clone, Copy)]
pub(super) struct Sides {
    pub(super) base: Focus,
    pub(super) new: Focus,
}

/// A value's partner on the other side, and the rule that matched them.
type Partners = HashMap<u32, (Option<u32>, Option<MatchRule>)>;

/// Every value live at either peak, by side: its partner and the rule.
fn partners(diff: &ModuleDiff) -> (Partners, Partners) {
    let (mut base, mut new) = (Partners::new(), Partners::new());
    for s in &diff.spaces {
        let c = &s.changes;
        for row in c
            .new
            .iter()
            .chain(&c.gone)
            .chain(&c.grown)
            .chain(&c.shrunk)
            .chain(&c.unchanged)
        {
            let (b, n) = (
                row.base.as_ref().map(|i| i.value),
                row.new.as_ref().map(|i| i.value),
            );
            if let Some(b) = b {
                base.insert(b, (n, row.rule));
            }
            if let Some(n) = n {
                new.insert(n, (b, row.rule));
            }
        }
    }
    (base, new)
}

/// The matches of the values at the peaks, for [`SelectionLine`].
#[derive(Clone)]
struct Matches(Arc<(Partners, Partners)>);

/// Couples the two sides' selections and diagram windows (see the module doc).
pub(super) fn keep_in_step(sides: Sides, diff: &ModuleDiff) {
    let matches = Arc::new(partners(diff));
    provide_context(Matches(matches.clone()));
    for (from, to, base_side) in [
        (sides.base, sides.new, true),
        (sides.new, sides.base, false),
    ] {
        let matches = matches.clone();
        Effect::new(move |_| {
            let Some(v) = from.selected.get() else { return };
            let table = if base_side { &matches.0 } else { &matches.1 };
            let partner = table.get(&v).and_then(|p| p.0);
            if to.selected.get_untracked() != partner {
                to.selected.set(partner);
            }
        });
        Effect::new(move |_| {
            if let Some(w) = from.window.get() {
                to.follow.set(Some(w));
            }
        });
    }
}

/// Selects a matched row on both sides (either may be `None`).
pub(super) fn select(sides: Sides, base: Option<u32>, new: Option<u32>) {
    // The base first: its effect sets the same partner on the new side.
    for (focus, v) in [(sides.base, base), (sides.new, new)] {
        if focus.selected.get_untracked() != v {
            focus.selected.set(v);
        }
    }
}

/// The name of the rule, as the tables say it.
pub(super) fn rule_name(rule: Option<MatchRule>) -> &'static str {
    rule.map_or("—", MatchRule::label)
}

/// What is selected, on both sides, and by which rule they were matched.
#[component]
pub(super) fn SelectionLine(sides: Sides) -> impl IntoView {
    let matches = use_context::<Matches>();
    let describe = move |focus: Focus| {
        let v = focus.selected.get()?;
        let shown = focus.shown();
        let value = shown.module.values.get(v as usize)?;
        Some(format!(
            "{} ({})",
            shown.module.value_name(value),
            units::exact_bytes(value.size)
        ))
    };
    let text = move || {
        let (b, n) = (describe(sides.base), describe(sides.new));
        if b.is_none() && n.is_none() {
            return "Click a row or a block to select a value on both sides.".to_string();
        }
        let rule = matches.as_ref().and_then(|m| {
            let v = sides.base.selected.get()?;
            m.0 .0.get(&v).map(|p| p.1)
        });
        let how = match (b.is_some() && n.is_some(), rule.flatten()) {
            (true, Some(r)) => format!(", matched by {}", rule_name(Some(r))),
            (true, None) => String::new(),
            (false, _) => ", no partner at the other side's peak".to_string(),
        };
        format!(
            "Selected: base {} ↔ new {}{how}",
            b.unwrap_or_else(|| "—".into()),
            n.unwrap_or_else(|| "—".into())
        )
    };
    view! { <p class="compare-selection" aria-live="polite">{text}</p> }
}
