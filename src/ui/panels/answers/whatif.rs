//! What if (`#answers-whatif`): the values ticked in the idle stretches (remat or offload)
//! and the loops' stacked outputs, each memory space's estimated curve after them
//! ([`bufscope::answers::whatif`], drawn dashed over the real curve through
//! [`Focus::estimates`](crate::ui::state::Focus::estimates)), the new peak and the capacity
//! verdict, labelled an estimate; "Fit to capacity" ticks the plan of
//! [`fit`](bufscope::answers::whatif::fit); the plan exports as JSON.

use std::sync::Arc;

use bufscope::answers::capacity;
use bufscope::answers::whatif::fit::{fit, Action, FitOptions};
use bufscope::answers::whatif::stacked::{stacked_outputs, StackedOutput};
use bufscope::answers::whatif::{estimate, plan_json, ticked, Edits, Estimate, ASSUMPTIONS};
use bufscope::render::estimate::EstimateCurve;
use leptos::prelude::*;

use super::{Ans, Computed};
use crate::ui::export::download_text;
use crate::ui::fmt;
use crate::ui::state::{Shown, WhatIfTicks};
use crate::ui::uses;

/// The edits of the ticks.
fn edits_of(t: &WhatIfTicks, stacked: &[StackedOutput]) -> Edits {
    let remat: Vec<u32> = t.remat.iter().copied().collect();
    let offload: Vec<u32> = t.offload.iter().copied().collect();
    ticked(&remat, &offload, t.loops, stacked)
}

/// Every memory space's estimate after `edits`.
fn estimates(shown: &Arc<Shown>, edits: &Edits) -> Vec<Estimate> {
    let index = uses::schedule_index(shown);
    (shown.analysis.spaces.iter())
        .map(|s| estimate(&shown.module, s, &index, edits))
        .collect()
}

/// A tick box of an idle row: the value rematerialised (`offload` false) or offloaded.
pub(super) fn tick(ans: Ans, value: u32, offload: bool) -> impl IntoView {
    let focus = ans.focus;
    let checked = move || {
        focus.whatif.with(|t| if offload { t.offload.contains(&value) } else { t.remat.contains(&value) })
    };
    let on_change = move |e: leptos::ev::Event| {
        let on = event_target_checked(&e);
        focus.whatif.update(|t| {
            let t = Arc::make_mut(t);
            let (this, other) = if offload { (&mut t.offload, &mut t.remat) } else { (&mut t.remat, &mut t.offload) };
            if on {
                this.insert(value);
                other.remove(&value);
            } else {
                this.remove(&value);
            }
        });
    };
    let class = if offload { "whatif-tick tick-offload" } else { "whatif-tick tick-remat" };
    let label = if offload { "offload" } else { "remat" };
    view! {
        <td class="tick" on:click=|e| e.stop_propagation()>
            <input type="checkbox" class=class aria-label=label title=label prop:checked=checked on:change=on_change />
        </td>
    }
}

/// The ticks of the smallest plan that fits the capacity set on the panel's memory space
/// ([`fit`]); `None` without a capacity there.
fn planned_ticks(ans: Ans, stacked: &[StackedOutput]) -> Option<WhatIfTicks> {
    let focus = ans.focus;
    let shown = focus.shown_untracked();
    let color = ans.space.get_untracked();
    let cap = focus.capacity.with_untracked(|m| m.get(&color).cloned())?;
    let space = shown.analysis.space(color)?;
    let index = uses::schedule_index(&shown);
    let plan = fit(&shown.module, space, &index, stacked, &cap, FitOptions::default());
    let mut t = WhatIfTicks::default();
    for p in &plan.plan {
        match (p.action, p.value) {
            (Action::RematLoop, _) => t.loops = true,
            (Action::Remat, Some(v)) => {
                t.remat.insert(v);
            }
            (Action::Offload, Some(v)) => {
                t.offload.insert(v);
            }
            _ => {}
        }
    }
    Some(t)
}

/// "Estimate: peak 2.2 GiB at step 379 (real 7.5 GiB). …", with the capacity's verdict.
fn verdict_text(e: &Estimate, v: Option<&capacity::Verdict>) -> String {
    let step = e.step_after.map_or("-".to_string(), |t| fmt::grouped(u64::from(t)));
    let mut text = format!(
        "Estimate: peak {} at step {step} (real {}).",
        fmt::human(e.peak_after),
        fmt::human(e.peak_before)
    );
    if e.host_bytes_added > 0 {
        text.push_str(&format!(" The host holds {} more.", fmt::human(e.host_bytes_added)));
    }
    if let Some(v) = v {
        text.push_str(if v.fits { " Fits the capacity." } else { " Still exceeds the capacity." });
    }
    text
}

/// The tick of the loops' stacked outputs of the panel's memory space, where it has any.
fn loops_box(ans: Ans, stacked: Memo<Computed<Vec<StackedOutput>>>) -> impl IntoView {
    let focus = ans.focus;
    move || {
        let s = stacked.get();
        let space = ans.space.get();
        let mine: Vec<&StackedOutput> = s.iter().filter(|o| o.color == space).collect();
        (!mine.is_empty()).then(|| {
            let bytes: u64 = mine.iter().map(|o| o.bytes).sum();
            let label = format!(
                "Rematerialise the loops' stacked outputs: {} values, {} (one iteration kept while the backward loop runs)",
                mine.len(),
                fmt::human(bytes)
            );
            let checked = move || focus.whatif.with(|t| t.loops);
            let on_change = move |e: leptos::ev::Event| {
                let on = event_target_checked(&e);
                focus.whatif.update(|t| Arc::make_mut(t).loops = on);
            };
            view! {
                <label class="whatif-loops"><input type="checkbox" id="whatif-loops" prop:checked=checked on:change=on_change />" "{label}</label>
            }
        })
    }
}

#[component]
pub(super) fn WhatIf(ans: Ans) -> impl IntoView {
    let focus = ans.focus;
    let stacked = Memo::new(move |_| Computed(Arc::new(stacked_outputs(&focus.shown().module))));
    // Each space's estimate, whenever the ticks change; none without a tick.
    let result = Memo::new(move |_| {
        let t = focus.whatif.get();
        let shown = focus.shown();
        if *t == WhatIfTicks::default() {
            return None;
        }
        let edits = edits_of(&t, &stacked.get());
        Some(Computed(Arc::new((edits.clone(), estimates(&shown, &edits)))))
    });
    // Drawn where the estimate differs from the real curve (an unchanged space keeps its
    // curve without a second one and a label over it).
    Effect::new(move |_| {
        let shown = focus.shown_untracked();
        let differs = |e: &&Estimate| shown.analysis.space(e.color).is_none_or(|s| s.curve != e.curve);
        let curves: Vec<EstimateCurve> = result
            .get()
            .map_or_else(Vec::new, |r| r.1.iter().filter(differs).map(EstimateCurve::from).collect());
        focus.estimates.set(Arc::new(curves));
    });
    let loops_box = loops_box(ans, stacked);
    let verdict = move || {
        let r = result.get()?;
        let color = ans.space.get();
        let e = r.1.iter().find(|e| e.color == color)?.clone();
        let cap = focus.capacity.with(|m| m.get(&color).cloned());
        let v = cap.as_ref().map(|c| capacity::verdict(e.peak_after, c));
        let text = verdict_text(&e, v.as_ref());
        let fits = v.map_or(String::new(), |v| v.fits.to_string());
        Some(view! {
            <p class="whatif-verdict" id="whatif-verdict" data-peak=e.peak_after.to_string() data-fits=fits>{text}</p>
        })
    };
    let on_fit = move |_| {
        if let Some(t) = planned_ticks(ans, &stacked.get_untracked()) {
            ans.idle_open.set(true);
            focus.whatif.set(Arc::new(t));
        }
    };
    let has_capacity = move || focus.capacity.with(|m| m.contains_key(&ans.space.get()));
    let on_clear = move |_| focus.whatif.set(Arc::new(WhatIfTicks::default()));
    let on_export = move |_| {
        let Some(r) = result.get_untracked() else { return };
        let shown = focus.shown_untracked();
        let (edits, ests) = &*r.0;
        let json = plan_json(&shown.module, edits, ests);
        download_text(&format!("{}.whatif.json", shown.module.name), "application/json", &json);
    };
    let ticked_any = move || result.with(Option::is_some);
    view! {
        <div class="answer" id="answers-whatif">
            <h4>"What if (an estimate)"</h4>
            {loops_box}
            <p class="note">"Tick values in the idle stretches below to rematerialise or offload them."</p>
            {verdict}
            <div class="whatif-actions">
                <button type="button" class="button" id="whatif-fit" prop:disabled=move || !has_capacity()
                    title="Choose a capacity above first" on:click=on_fit>"Fit to capacity"</button>
                <button type="button" class="button" id="whatif-clear" prop:disabled=move || !ticked_any() on:click=on_clear>"Clear"</button>
                <button type="button" class="button" id="whatif-export" prop:disabled=move || !ticked_any() on:click=on_export>"Export plan (JSON)"</button>
            </div>
            <p class="note">{ASSUMPTIONS}" Drawn dashed over the space's curve."</p>
        </div>
    }
}
