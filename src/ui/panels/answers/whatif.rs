//! What if (`#answers-whatif`): the values ticked (remat or offload) in the idle stretches,
//! a category or an icicle frame (each value of the group the core can act on,
//! [`actionable`]) and the loops' stacked outputs (each loop's, or all); each memory space's
//! estimated curve after them ([`bufscope::answers::whatif`], drawn dashed over the real curve through
//! [`Focus::estimates`](crate::ui::state::Focus::estimates)), the new peak and the capacity
//! verdict, labelled an estimate; "Fit to capacity" ticks the plan of
//! [`fit`](bufscope::answers::whatif::fit) and says it in code terms (the checkpoint policy,
//! how many devices) while the ticks are the plan's; the plan exports as JSON. A jax
//! checkpoint policy chosen by name ([`Checkpoint`]) takes the loops' stacked outputs instead
//! of their ticks, its estimate shown the same way with its price in FLOPs; Fit tries the
//! stock policies first, as `bufscope fit` does, and chooses the one it picks.

use std::sync::Arc;

use bufscope::answers::capacity;
use bufscope::answers::whatif::checkpoint::{Checkpoint, NAMES_HELP, STOCK};
use bufscope::answers::whatif::fit::{fit, FitOptions};
use bufscope::answers::whatif::flops::step_flops;
use bufscope::answers::whatif::stacked::StackedOutput;
use bufscope::answers::whatif::ticks::{actionable, Tick, TickState};
use bufscope::answers::whatif::{estimate, plan_json, Edits, Estimate, ASSUMPTIONS};
use bufscope::render::estimate::EstimateCurve;
use bufscope::units;
use leptos::prelude::*;

use super::{Ans, Computed};
use crate::ui::export::download_text;
use crate::ui::state::{Shown, WhatIfTicks};
use crate::ui::uses;

/// Every memory space's estimate after `edits`.
fn estimates(shown: &Arc<Shown>, edits: &Edits) -> Vec<Estimate> {
    let index = uses::schedule_index(shown);
    (shown.analysis.spaces.iter())
        .map(|s| estimate(&shown.module, s, &index, edits))
        .collect()
}

/// The policies named with a REGEX (the text field beside the chooser).
const NAMED: [&str; 2] = ["save_only_these_names", "save_and_offload_only_these_names"];

/// The policy chosen on the panel: a name of the chooser ("" for none) and the REGEX of the
/// named forms.
#[derive(Clone, Copy)]
struct Chosen {
    name: RwSignal<String>,
    regex: RwSignal<String>,
}

impl Chosen {
    /// The policy; `None` for none, an error for a named form without a good REGEX.
    fn policy(&self) -> Option<Result<Checkpoint, String>> {
        let name = self.name.get();
        if name.is_empty() {
            return None;
        }
        let text = if NAMED.contains(&name.as_str()) { format!("{name}({})", self.regex.get()) } else { name };
        Some(Checkpoint::parse(&text))
    }
}

/// What a chosen policy costs: its name, the FLOPs its recomputation adds and one step's
/// (`None` without the HLO text).
#[derive(Clone, Debug)]
struct Price {
    name: String,
    flops_added: Option<u64>,
    step_flops: Option<u64>,
}

/// The edits, every space's estimate after them, and the chosen policy's price.
type Figures = (Edits, Vec<Estimate>, Option<Price>);

fn tick_of(offload: bool) -> Tick {
    if offload {
        Tick::Offload
    } else {
        Tick::Remat
    }
}

/// A tick box of an idle row: the value rematerialised (`offload` false) or offloaded.
pub(super) fn tick(ans: Ans, value: u32, offload: bool) -> impl IntoView {
    let focus = ans.focus;
    let checked = move || focus.whatif.with(|t| t.state(&[value], tick_of(offload)) == TickState::All);
    let on_change = move |e: leptos::ev::Event| {
        let on = event_target_checked(&e);
        focus.whatif.update(|t| Arc::make_mut(t).tick_values(&[value], tick_of(offload), on));
    };
    let class = if offload { "whatif-tick tick-offload" } else { "whatif-tick tick-remat" };
    let label = if offload { "offload" } else { "remat" };
    view! {
        <td class="tick" on:click=|e| e.stop_propagation()>
            <input type="checkbox" class=class aria-label=label title=label prop:checked=checked on:change=on_change />
        </td>
    }
}

/// The values of `values` (a frame's, a category's) that a tick of the group acts on, in
/// the panel's memory space ([`actionable`]).
fn group_values(ans: Ans, values: &[u32], tick: Tick) -> Vec<u32> {
    let shown = ans.focus.shown_untracked();
    let index = uses::schedule_index(&shown);
    let stacked = ans.stacked.get_untracked();
    actionable(&shown.module, ans.space.get_untracked(), &index, &stacked, values, tick)
}

/// A tick box of a group of values (an icicle frame, a category): ticks each of them the
/// tick acts on; ticked when all of them are, half when some are. Which values it acts on is
/// found once something is ticked (it places each value's uses on the schedule), or at its
/// first click.
pub(super) fn group_tick(ans: Ans, values: Arc<Vec<u32>>, offload: bool) -> impl IntoView {
    let focus = ans.focus;
    let tick = tick_of(offload);
    let engaged = Memo::new(move |_| focus.whatif.with(|t| !t.is_empty()));
    let acts = {
        let values = values.clone();
        Memo::new(move |_| {
            let _ = ans.space.get();
            engaged.get().then(|| Computed(Arc::new(group_values(ans, &values, tick))))
        })
    };
    let state = move || {
        let a = acts.get()?;
        Some(focus.whatif.with(|t| t.state(&a, tick)))
    };
    let on_change = move |e: leptos::ev::Event| {
        let on = event_target_checked(&e);
        let a = acts.get_untracked().map_or_else(|| group_values(ans, &values, tick), |a| a.to_vec());
        if a.is_empty() {
            // Nothing here this tick can free: the box stays clear.
            if let Some(el) = e.target().and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(t).ok()) {
                el.set_checked(false);
                el.set_title("nothing here that this can free (no idle stretch long enough, or an input that cannot be recomputed)");
            }
            return;
        }
        focus.whatif.update(|t| Arc::make_mut(t).tick_values(&a, tick, on));
    };
    let class = if offload { "whatif-tick tick-offload" } else { "whatif-tick tick-remat" };
    let label = if offload { "offload all" } else { "remat all" };
    let count = move || acts.get().map(|a| a.len().to_string());
    // Once known to act on nothing (inputs to remat, values never idle long enough): off.
    let none = move || acts.get().is_some_and(|a| a.is_empty());
    let title = move || if none() { "nothing here that this can free" } else { label };
    view! {
        <input type="checkbox" class=class aria-label=label title=title data-acts=count prop:disabled=none
            prop:checked=move || state() == Some(TickState::All)
            prop:indeterminate=move || state() == Some(TickState::Some) on:change=on_change />
    }
}

/// A remat tick box for the stacked outputs named `names` (one loop's, or every loop's).
pub(super) fn loops_tick(ans: Ans, names: Vec<String>, id: Option<&'static str>) -> impl IntoView {
    let focus = ans.focus;
    let names = Arc::new(names);
    let state = {
        let names = names.clone();
        move || focus.whatif.with(|t| t.loops_state(names.iter().map(String::as_str)))
    };
    let on_change = move |e: leptos::ev::Event| {
        let on = event_target_checked(&e);
        focus.whatif.update(|t| Arc::make_mut(t).tick_loops(names.iter().map(String::as_str), on));
    };
    let (checked, half) = (state.clone(), state);
    view! {
        <input type="checkbox" class="whatif-tick tick-loop" id=id aria-label="remat" title="rematerialise"
            prop:checked=move || checked() == TickState::All
            prop:indeterminate=move || half() == TickState::Some on:change=on_change />
    }
}

/// The ticks of the smallest plan that fits the capacity set on the panel's memory space
/// ([`fit`]) and the plan in code terms (its policy's snippet and why, how many devices);
/// `None` without a capacity there.
fn planned_ticks(ans: Ans, stacked: &[StackedOutput]) -> Option<(WhatIfTicks, String, Vec<String>)> {
    let focus = ans.focus;
    let shown = focus.shown_untracked();
    let color = ans.space.get_untracked();
    let cap = focus.capacity.with_untracked(|m| m.get(&color).cloned())?;
    let space = shown.analysis.space(color)?;
    let index = uses::schedule_index(&shown);
    let options = FitOptions { policies: true, ..FitOptions::default() };
    let plan = fit(&shown.module, space, &index, stacked, &cap, options);
    let mut code = Vec::new();
    if let Some(p) = &plan.policy {
        code.push(format!("In code: {} (MaxText {}). {}", p.snippet, p.maxtext, p.why));
        code.extend(p.also.iter().cloned());
    }
    code.extend(plan.devices_needed.as_ref().map(|d| d.sentence.clone()));
    // A stock policy that fits is chosen by name (its residuals with it); else the ticks.
    Some(match plan.checkpoint() {
        Some(name) => (WhatIfTicks::default(), name.to_string(), code),
        None => (WhatIfTicks::from_plan(&plan.plan, stacked), String::new(), code),
    })
}

/// A fitted plan: its ticks, its policy ("" for none) and what it says in code terms
/// ([`planned_ticks`]).
type Fitted = RwSignal<Option<(Arc<WhatIfTicks>, String, Vec<String>)>>;

/// The fitted plan in code terms, while the ticks and the policy are still the plan's.
fn code_lines(ans: Ans, chosen: Chosen, code: Fitted) -> impl Fn() -> Option<AnyView> {
    move || {
        let ticks = ans.focus.whatif.get();
        let name = chosen.name.get();
        let lines = code.with(|c| c.as_ref().filter(|(t, n, _)| Arc::ptr_eq(t, &ticks) && *n == name).map(|c| c.2.clone()))?;
        let items = lines.into_iter().map(|l| view! { <li>{l}</li> }).collect::<Vec<_>>();
        Some(view! { <ul class="whatif-code note" id="whatif-code">{items}</ul> }.into_any())
    }
}

/// "Estimate: peak 2.2 GiB at step 379 (real 7.5 GiB). …", with the capacity's verdict and
/// the chosen policy's price.
fn verdict_text(e: &Estimate, v: Option<&capacity::Verdict>, price: Option<&Price>) -> String {
    let step = e.step_after.map_or("-".to_string(), |t| units::group_digits(u64::from(t)));
    let mut text = format!(
        "Estimate: peak {} at step {step} (real {}).",
        units::human_bytes(e.peak_after),
        units::human_bytes(e.peak_before)
    );
    if e.host_bytes_added > 0 {
        text.push_str(&format!(" The host holds {} more.", units::human_bytes(e.host_bytes_added)));
    }
    if let Some(v) = v {
        text.push_str(if v.fits { " Fits the capacity." } else { " Still exceeds the capacity." });
    }
    if let Some(p) = price {
        text.push_str(&format!(" Policy {}", p.name));
        match (p.flops_added, p.step_flops) {
            (Some(a), Some(step)) if step > 0 => text.push_str(&format!(
                ": its recomputation adds {} ({:.1} % of a step of {}).",
                units::human_flops(a),
                a as f64 / step as f64 * 100.0,
                units::human_flops(step)
            )),
            (Some(a), _) => text.push_str(&format!(": its recomputation adds {}.", units::human_flops(a))),
            (None, _) => text.push_str(" (no HLO text read: no FLOPs)."),
        }
    }
    text
}

/// The policy chooser: the stock names and the named forms, whose REGEX goes in the text
/// field; what is wrong with the REGEX under them. Only where the module has stacked outputs.
fn chooser(ans: Ans, chosen: Chosen) -> impl Fn() -> Option<AnyView> {
    move || {
        if ans.stacked.with(|s| s.is_empty()) {
            return None;
        }
        let options = (STOCK.iter().chain(NAMED.iter()))
            .map(|&n| {
                let label = if NAMED.contains(&n) { format!("{n}(REGEX)") } else { n.to_string() };
                view! { <option value=n>{label}</option> }
            })
            .collect::<Vec<_>>();
        let named = move || NAMED.contains(&chosen.name.get().as_str());
        let error = move || {
            let e = chosen.policy().and_then(Result::err)?;
            Some(view! { <p class="note whatif-policy-error" id="whatif-policy-error">{e}</p> })
        };
        Some(view! {
            <p class="whatif-policy">
                <label>"jax.checkpoint policy over the loops' stacked outputs (instead of their ticks): "
                    <select id="whatif-policy" title=NAMES_HELP prop:value=move || chosen.name.get()
                        on:change=move |e| chosen.name.set(event_target_value(&e))>
                        <option value="">"none"</option>
                        {options}
                    </select>
                </label>
                " "
                <input type="text" id="whatif-policy-regex" aria-label="REGEX over op_name" placeholder="REGEX over op_name, e.g. bsd,dhk->bshk"
                    title=NAMES_HELP prop:disabled=move || !named() prop:value=move || chosen.regex.get()
                    on:change=move |e| chosen.regex.set(event_target_value(&e)) />
            </p>
            {error}
        }.into_any())
    }
}

/// The tick of every loop's stacked outputs in the panel's memory space, where it has any
/// (each loop's own is in the loops' table).
fn loops_box(ans: Ans) -> impl IntoView {
    move || {
        let s = ans.stacked.get();
        let space = ans.space.get();
        let mine: Vec<&StackedOutput> = s.iter().filter(|o| o.color == space).collect();
        (!mine.is_empty()).then(|| {
            let bytes: u64 = mine.iter().map(|o| o.bytes).sum();
            let label = format!(
                "Rematerialise the loops' stacked outputs: {} values, {} (one iteration kept in the backward body until its last read; each loop's own tick is under \"What the loops hold\")",
                mine.len(),
                units::human_bytes(bytes)
            );
            let names = mine.iter().map(|o| o.name.clone()).collect();
            view! {
                <label class="whatif-loops">{loops_tick(ans, names, Some("whatif-loops"))}" "{label}</label>
            }
        })
    }
}

/// Each space's estimate, whenever the ticks or the policy change; none without either.
fn estimated(ans: Ans, chosen: Chosen) -> Memo<Option<Computed<Figures>>> {
    let (focus, stacked) = (ans.focus, ans.stacked);
    Memo::new(move |_| {
        let t = focus.whatif.get();
        let shown = focus.shown();
        let policy = chosen.policy().and_then(Result::ok);
        if t.is_empty() && policy.is_none() {
            return None;
        }
        let stacked = stacked.get();
        let mut edits = t.edits(&stacked);
        let price = policy.map(|p| {
            let a = p.with_values(&shown.module, &uses::schedule_index(&shown), &stacked, &edits);
            edits = a.edits;
            let flops_added = shown.module.hlo.is_some().then_some(a.flops_added);
            Price { name: p.name(), flops_added, step_flops: step_flops(&shown.module) }
        });
        let ests = estimates(&shown, &edits);
        Some(Computed(Arc::new((edits, ests, price))))
    })
}

/// The estimate's verdict for the chosen space: its peak against the capacity, the host
/// bytes and the policy's price, with data attributes for the tests and the tick benchmark.
fn verdict(ans: Ans, result: Memo<Option<Computed<Figures>>>) -> impl Fn() -> Option<AnyView> {
    let focus = ans.focus;
    move || {
        let r = result.get()?;
        let color = ans.space.get();
        let e = r.1.iter().find(|e| e.color == color)?.clone();
        let cap = focus.capacity.with(|m| m.get(&color).cloned());
        let v = cap.as_ref().map(|c| capacity::verdict(e.peak_after, c));
        let price = r.2.clone();
        let text = verdict_text(&e, v.as_ref(), price.as_ref());
        let fits = v.map_or(String::new(), |v| v.fits.to_string());
        // For the tests and the tick benchmark: how many ticks the estimate is of, and the
        // estimate's area (its sum over the steps, what the diagram's hook reports of the
        // estimate it drew), or that it is the real curve (nothing drawn).
        let edits = &r.0 .0;
        let ticks = edits.remat.len() + edits.offload.len() + edits.loops.len() + edits.offload_loops.len();
        let changed = focus.shown_untracked().analysis.space(color).is_none_or(|s| s.curve != e.curve);
        let area = e.curve.iter().map(|&b| u128::from(b)).sum::<u128>().to_string();
        Some(view! {
            <p class="whatif-verdict" id="whatif-verdict" data-peak=e.peak_after.to_string() data-fits=fits
                data-ticks=ticks.to_string() data-changed=changed.to_string() data-area=area
                data-host=e.host_bytes_added.to_string() data-policy=price.as_ref().map(|p| p.name.clone())
                data-flops-added=price.as_ref().and_then(|p| p.flops_added).map(|f| f.to_string())
                data-step-flops=price.as_ref().and_then(|p| p.step_flops).map(|f| f.to_string())>{text}</p>
        }.into_any())
    }
}

#[component]
pub(super) fn WhatIf(ans: Ans) -> impl IntoView {
    let focus = ans.focus;
    let stacked = ans.stacked;
    let chosen = Chosen { name: RwSignal::new(String::new()), regex: RwSignal::new(String::new()) };
    let result = estimated(ans, chosen);
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
    let loops_box = loops_box(ans);
    let verdict = verdict(ans, result);
    let code: Fitted = RwSignal::new(None);
    let on_fit = move |_| {
        if let Some((t, name, lines)) = planned_ticks(ans, &stacked.get_untracked()) {
            ans.idle_open.set(true);
            let t = Arc::new(t);
            code.set(Some((t.clone(), name.clone(), lines)));
            chosen.name.set(name);
            focus.whatif.set(t);
        }
    };
    let has_capacity = move || focus.capacity.with(|m| m.contains_key(&ans.space.get()));
    let on_clear = move |_| {
        chosen.name.set(String::new());
        focus.whatif.set(Arc::new(WhatIfTicks::default()));
    };
    let on_export = move |_| {
        let Some(r) = result.get_untracked() else { return };
        let shown = focus.shown_untracked();
        let (edits, ests, _) = &*r.0;
        let json = plan_json(&shown.module, edits, ests);
        download_text(&format!("{}.whatif.json", shown.module.name), "application/json", &json);
    };
    let ticked_any = move || result.with(Option::is_some);
    view! {
        <div class="answer" id="answers-whatif">
            <h4>"What if (an estimate)"</h4>
            {loops_box}
            {chooser(ans, chosen)}
            <p class="note">"Tick values in the idle stretches, categories, a loop, or the op_name frame chosen below to rematerialise or offload them."</p>
            {verdict}
            {code_lines(ans, chosen, code)}
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
