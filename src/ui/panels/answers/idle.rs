//! Idle stretches at the chosen step, the candidates for rematerialisation or offload
//! (`#answers-idle`): each live value's longest stretch without a use, ranked by bytes ×
//! idle steps; or, for a dump without `Used values`, what is needed
//! ([`idle::NEEDS_VALUES`]).
//!
//! Each row says what can be done to its value ([`idle::remedy`]: an input can only be
//! offloaded, a temporary also rematerialised); a click on a row selects the value.
//!
//! Ranked once asked for (`#answers-idle-open`, [`Ans::idle_open`]), not when the panel
//! opens: the first ranking places every use of the live values on the schedule (on the
//! 94 MB dump, 91,000 uses), and the module's schedule index is built for it. Later steps
//! look up only the values not met before.

use std::sync::Arc;

use bufscope::answers::idle;
use bufscope::text::clip_middle;
use bufscope::units;
use leptos::prelude::*;

use super::{show_more, whatif, Ans, Computed, FIRST_ROWS};
use crate::ui::panels::CELL_CHARS;
use crate::ui::uses;

const NAME_CHARS: usize = 60;

fn span(s: &idle::Stretch) -> String {
    format!(
        "{} → {}",
        units::group_digits(u64::from(s.from)),
        units::group_digits(u64::from(s.to))
    )
}

/// Why a row can be what it says.
fn remedy_title(r: idle::Remedy) -> &'static str {
    match r {
        idle::Remedy::OffloadOnly => {
            "an input (entry parameter), output or constant: the program cannot compute it again, it can only be moved to host memory and back"
        }
        idle::Remedy::RematOrOffload => {
            "a temporary: it can be computed again where it is next used (rematerialised, jax.checkpoint) or moved to host memory and back"
        }
    }
}

/// One candidate's row: a click selects its value.
fn idle_row(ans: Ans, row: &idle::IdleRow) -> impl IntoView {
    let name = ans.value_name(row.value);
    let value = row.value;
    let across = row.across_step.as_ref().map(span);
    let remedy = row.remedy;
    let selected = move || ans.focus.selected.get() == Some(value);
    view! {
        <tr class="idle-row" data-name=name.clone() data-byte-steps=row.idle_byte_steps.to_string()
            data-remedy=remedy.label() class:selected=selected
            aria-selected=move || selected().to_string()
            on:click=move |_| {
                // Selects the value (its details, its block), as a row of the live set.
                ans.focus.selected.set(Some(value));
                ans.focus.reveal(value);
            }>
            // An input can only be offloaded: no remat tick.
            {(remedy != idle::Remedy::OffloadOnly).then(|| whatif::tick(ans, value, false))
                .map_or_else(|| view! { <td></td> }.into_any(), IntoAny::into_any)}
            {whatif::tick(ans, value, true)}
            <td class="mono name" title=clip_middle(&name, CELL_CHARS)>{clip_middle(&name, NAME_CHARS)}</td>
            <td class=format!("remedy {}", if remedy == idle::Remedy::OffloadOnly { "offload" } else { "remat" })
                title=remedy_title(remedy)>{remedy.label()}</td>
            <td class="num" title=units::exact_bytes(row.size)>{units::human_bytes(row.size)}</td>
            <td class="num">{span(&row.longest)}</td>
            <td class="num">{units::group_digits(u64::from(row.longest.idle_steps))}</td>
            <td class="num">{units::group_digits(row.idle_byte_steps)}</td>
            <td class="num">{across}</td>
        </tr>
    }
}

#[component]
pub(super) fn IdleStretches(ans: Ans) -> impl IntoView {
    let needs_values = uses::needs_values(&ans.focus.shown());
    let el = NodeRef::<leptos::html::Div>::new();
    let live = ans.live_in(el, || false);
    let ranked = Memo::new(move |_| {
        if !needs_values && !ans.idle_open.get() {
            return None;
        }
        let live = live.get();
        let shown = ans.focus.shown();
        // The module's one index (`ui::uses`): built once per module, it keeps each value's
        // stretches, so another step looks up only the values it has not met.
        let index = uses::schedule_index(&shown);
        Some(Computed(Arc::new(idle::idle_ranking(
            &shown.module,
            &index,
            &live,
        ))))
    });
    let limit = RwSignal::new(FIRST_ROWS);
    let body = move || {
        let Some(r) = ranked.get() else {
            return Vec::new();
        };
        let n = limit.get().min(r.rows.len());
        r.rows[..n]
            .iter()
            .map(|row| idle_row(ans, row))
            .collect::<Vec<_>>()
    };
    let message = move || {
        ranked
            .get()
            .and_then(|r| r.message.clone())
            .map(|m| view! { <p class="note idle-message">{m}</p> })
    };
    let open = move || {
        (!needs_values && !ans.idle_open.get()).then(|| {
            view! {
                <button type="button" class="button" id="answers-idle-open"
                    on:click=move |_| ans.idle_open.set(true)>"Rank the values live here by idle bytes × steps"</button>
            }
        })
    };
    let total = move || ranked.with(|r| r.as_ref().map_or(0, |r| r.rows.len()));
    view! {
        <div class="answer" id="answers-idle" node_ref=el>
            <h4>"Idle stretches (remat / offload candidates)"</h4>
            {message}
            {open}
            <table class="answer-table">
                <thead><tr><th>"remat"</th><th>"offload"</th><th>"value"</th><th>"can be"</th><th class="num">"bytes"</th><th class="num">"longest idle"</th>
                    <th class="num">"idle steps"</th><th class="num">"bytes × steps"</th><th class="num">"idle across this step"</th></tr></thead>
                <tbody>{body}</tbody>
            </table>
            {show_more(limit, total)}
        </div>
    }
}
