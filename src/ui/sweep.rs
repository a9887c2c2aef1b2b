//! The Sweep view: several compilations of one program that differ in one dimension (batch,
//! sequence, layers), answered by [`bufscope::answers::sweep`] as `bufscope sweep` answers
//! them, and drawn per memory space by [`bufscope::render::sweep`] ([`chart`]).
//!
//! Owns: which modules on screen make the sweep ([`AppState::sweep`], their positions) and
//! the view's own state (the capacity it is held against). A read whose modules are
//! compilations of one program ([`bufscope::answers::sweep::is_sweep`]) opens as a sweep
//! ([`AppState::open_if_sweep`]); "Sweep" sweeps the read's modules whatever they are
//! (saying the core's sentence when they make no sweep); "Add a configuration…" reads one
//! more compilation, which joins the read on screen ([`AppState::add_configuration`]). A click on a point
//! (or its row) opens that compilation in the single view, as the module picker does.

mod chart;

use std::collections::BTreeMap;
use std::sync::Arc;

use bufscope::answers::capacity::{parse_capacity, Capacity};
use bufscope::answers::sweep::{self, Measured, Options, Point, Sweep};
use bufscope::units;
use leptos::prelude::*;

use super::app::{AppState, Outcome};
use super::hash;
use super::state::Computed;
use super::intake::{picked, pickers};
use super::load::{start_load_into, Target};

/// The bar's sweep actions: "Sweep" (the read's modules, when it has several) and "Add a
/// configuration…" (files or a folder); while sweeping, the way back to the single view.
pub(super) fn sweep_control(st: AppState, chosen: RwSignal<usize>) -> impl IntoView {
    let on_pick = move |e: web_sys::Event| {
        // Outside a sweep, the module on screen is its first compilation.
        if st.sweep.with_untracked(Option::is_none) {
            st.sweep.set(Some(Arc::new(vec![chosen.get_untracked()])));
        }
        start_load_into(st, picked(&e), Target::Sweep);
    };
    let sweeping = move || st.sweep.with(Option::is_some);
    let several = move || st.view.with(|o| o.as_ref().is_some_and(|o| o.modules.len() > 1));
    let sweep_all = move |_| {
        let n = st.view.with_untracked(|o| o.as_ref().map_or(0, |o| o.modules.len()));
        st.sweep.set(Some(Arc::new((0..n).collect())));
    };
    view! {
        <div class="sweep-control">
            <Show when=move || !sweeping() && several()>
                <button type="button" id="sweep-button" class="button small secondary"
                    title="Which batch, sequence or layer count fits: the read's modules as compilations of one program"
                    on:click=sweep_all>"Sweep"</button>
            </Show>
            <span class="sweep-label">"Add a configuration…"</span>
            {pickers(["sweep-add-file", "sweep-add-dir"], ["files", "a folder"], "small", on_pick)}
            <Show when=sweeping>
                <button type="button" id="sweep-back" class="button small secondary"
                    on:click=move |_| st.sweep.set(None)>"Back to the single view"</button>
            </Show>
        </div>
    }
}

/// The capacity the sweep starts with: the one the page holds (the hash's, or the module
/// on screen's), HBM's first.
fn held_capacity() -> Option<Capacity> {
    let held: BTreeMap<u32, String> = hash::capacities();
    let (color, label) = held.get_key_value(&0).or_else(|| held.iter().next())?;
    Some(parse_capacity(label).ok()?.on(*color))
}

/// The measured part of the sweep of the modules at `indices` of `outcome` (each module's
/// categories: the costly part, made again only when the modules change), or the core's
/// sentence why they make none. A module read with an out-of-memory message paired with it
/// ([`Shown::failed`](super::state::Shown)) is a failed point, as in `bufscope sweep`.
fn measured(outcome: &Outcome, indices: &[usize]) -> Result<Measured, String> {
    let points: Vec<Point> = (indices.iter())
        .filter_map(|&i| outcome.modules.get(i))
        .map(|s| Point { module: &s.module, analysis: &s.analysis, failed: s.failed })
        .collect();
    sweep::measure(&points)
}

/// What the view keeps of the modules it sweeps: their positions, whether all are complete,
/// and the measured sweep; never the modules, which are completed in place (a kept one
/// would be completed from a copy).
struct Swept {
    /// The swept modules' positions among those on screen, in the order of the sweep's points
    /// ([`PointPeak::input`](bufscope::answers::sweep::PointPeak)).
    indices: Vec<usize>,
    complete: bool,
    measured: Result<Measured, String>,
}

impl Swept {
    fn new(outcome: &Outcome, indices: &[usize]) -> Swept {
        let indices: Vec<usize> = indices.iter().copied().filter(|&i| i < outcome.modules.len()).collect();
        Swept {
            complete: indices.iter().all(|&i| outcome.modules[i].complete),
            measured: measured(outcome, &indices),
            indices,
        }
    }
}

/// The values typed in the "Predict at" box (`64`, `64, 128`: as `bufscope sweep --at`
/// takes them, one or more), or why they are not values.
fn parse_at(text: &str) -> Result<Vec<u64>, String> {
    (text.split([',', ' ']).filter(|t| !t.is_empty()))
        .map(|t| t.parse::<u64>().map_err(|_| format!("{t:?} is not a whole number of the varied dimension")))
        .collect()
}

/// The "Predict at" box: the values the sweep predicts the peak at (`--at V`), applied on
/// Enter or change; a problem said beside it.
fn at_box(at: RwSignal<Vec<u64>>) -> impl IntoView {
    let typed = RwSignal::new(String::new());
    let problem = RwSignal::new(None::<String>);
    let apply = move || match parse_at(&typed.get_untracked()) {
        Ok(values) => {
            at.set(values);
            problem.set(None);
        }
        Err(e) => problem.set(Some(e)),
    };
    view! {
        <label>" Predict at " {typed_box("sweep-at", "64, 128", typed, apply)}</label>
        <span class="sweep-at-problem">{move || problem.get()}</span>
    }
}

/// A text box following `typed`, `apply` run on change and on Enter.
fn typed_box(
    id: &'static str,
    placeholder: &'static str,
    typed: RwSignal<String>,
    apply: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <input id=id type="text" placeholder=placeholder prop:value=move || typed.get()
            on:input=move |e| typed.set(event_target_value(&e))
            on:change=move |_| apply()
            on:keydown=move |e: web_sys::KeyboardEvent| if e.key() == "Enter" { apply() } />
    }
}

/// The Sweep view: the varied dimension, a capacity field and the values to predict at,
/// then per memory space the chart, the predictions, the sweep's sentence and the points;
/// or the sentence why the modules make no sweep.
pub(super) fn sweep_view(st: AppState, chosen: RwSignal<usize>) -> AnyView {
    let at = RwSignal::new(Vec::<u64>::new());
    let capacity = RwSignal::new(held_capacity());
    let typed = RwSignal::new(capacity.get_untracked().map_or_else(String::new, |c| c.label.clone()));
    let problem = RwSignal::new(None::<String>);
    let space = RwSignal::new(capacity.get_untracked().map_or(0, |c| c.space));
    let apply = move || {
        let text = typed.get_untracked();
        if text.trim().is_empty() {
            capacity.set(None);
            problem.set(None);
            hash::sweep_capacity(None);
            return;
        }
        match parse_capacity(&text) {
            Ok(c) => {
                let c = c.on(space.get_untracked());
                hash::sweep_capacity(Some((c.space, c.label.clone())));
                capacity.set(Some(c));
                problem.set(None);
            }
            Err(e) => problem.set(Some(e)),
        }
    };
    let open = move |i: usize| {
        hash::carry();
        chosen.set(i);
        st.sweep.set(None);
    };
    // Measured when the modules change; judged again when the capacity or "Predict at" does.
    let measure = Memo::new(move |_| {
        let indices = st.sweep.get()?;
        st.view.with(|o| Some(Computed(Arc::new(Swept::new(o.as_ref()?, &indices)))))
    });
    let body = move || {
        let m = measure.get()?;
        let swept = &*m.0;
        let indices = &swept.indices;
        let held = capacity.get();
        let judged = swept.measured.as_ref().map(|m| m.judge(&Options { capacity: held.clone(), at: at.get() }));
        Some(match judged.map_err(String::clone) {
            Ok(s) => answered(swept, s, (swept.complete, held), open).into_any(),
            Err(sentence) => view! {
                <p id="sweep-error" class="sweep-error message">
                    {format!("These {} modules make no sweep: {sentence}.", indices.len())}
                </p>
            }
            .into_any(),
        })
    };
    view! {
        <section class="sweep" aria-label="Sweep">
            <div class="sweep-capacity">
                <label>"Capacity " {typed_box("sweep-capacity", "v5e, 16GiB", typed, apply)}</label>
                <label>" on memory space "
                    <input id="sweep-capacity-space" type="number" min="0" prop:value=move || space.get().to_string()
                        on:change=move |e| {
                            space.set(event_target_value(&e).parse().unwrap_or(0));
                            apply();
                        } />
                </label>
                <span class="sweep-capacity-problem">{move || problem.get()}</span>
                {at_box(at)}
            </div>
            {body}
        </section>
    }
    .into_any()
}

/// A sweep answered: what varies, then a section per memory space.
fn answered(
    swept: &Swept,
    s: Sweep,
    (complete, capacity): (bool, Option<Capacity>),
    open: impl Fn(usize) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let mut values = s.varied.values.clone();
    values.sort_unstable();
    let head = format!(
        "{} compilations of {} · varied: {} ({})",
        swept.indices.len(),
        bufscope::model::xla_module_name(&s.module),
        s.varied.what,
        values.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
    );
    let what = s.varied.what.clone();
    let listed = values.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let spaces = (s.spaces.iter())
        .map(|sp| {
            let modules: Vec<Option<usize>> = (sp.points.iter())
                .map(|p| swept.indices.get(p.input).copied())
                .collect();
            let chart = chart::SweepChart { space: Arc::new(sp.clone()), what: what.clone(), capacity: capacity.clone(), modules, open };
            space_section(chart)
        })
        .collect_view();
    view! {
        <div id="sweep-view" class="sweep-view" data-what=s.varied.what.clone()
            data-values=listed
            data-complete=complete.to_string()>
            <h2 class="sweep-head">{head}</h2>
            {spaces}
        </div>
    }
}

/// One memory space: the chart, the sweep's sentence, and the points (a row's click opens
/// its compilation).
fn space_section<O: Fn(usize) + Copy + Send + Sync + 'static>(chart: chart::SweepChart<O>) -> impl IntoView {
    let (sp, open) = (chart.space.clone(), chart.open);
    let opt = |v: Option<u64>| v.map_or_else(String::new, |v| v.to_string());
    let form = sp.model.as_ref().map_or_else(String::new, |m| format!("{:?}", m.form).to_lowercase());
    let rows = (sp.points.iter().zip(&chart.modules))
        .map(|(p, &m)| {
            let state = if p.failed { "compile failed (out of memory)" } else if p.pinned { "pinned" } else { "" };
            view! {
                <tr class="sweep-point" data-value=p.value.to_string() data-peak=p.peak_live_bytes.to_string()
                    data-failed=p.failed.to_string() data-pinned=p.pinned.to_string()
                    data-module=m.map_or_else(String::new, |m| m.to_string())
                    on:click=move |_| if let Some(m) = m { open(m) }>
                    <td class="num">{units::group_digits(p.value)}</td>
                    <td class="num" title=units::exact_bytes(p.peak_live_bytes)>{units::human_bytes(p.peak_live_bytes)}</td>
                    <td>{state}</td>
                </tr>
            }
        })
        .collect_view();
    let verdict = format!("{}: {}", sp.label, bufscope::render::sweep::verdict_line(&sp));
    let predictions = (sp.at.iter())
        .map(|p| {
            let said = format!("at {}: {} predicted", units::group_digits(p.value), units::human_bytes(p.peak_live_bytes));
            view! {
                <p class="sweep-at" data-value=p.value.to_string() data-peak=p.peak_live_bytes.to_string()
                    title=units::exact_bytes(p.peak_live_bytes)>{said}</p>
            }
        })
        .collect_view();
    view! {
        <section class="sweep-space" data-color=sp.color.to_string()
            data-largest-fitting=opt(sp.largest_fitting) data-first-not-fitting=opt(sp.first_not_fitting)
            data-pinned=sp.pinned.to_string() data-form=form data-capacity=opt(sp.capacity_bytes)>
            <p class="sweep-verdict" class:held=sp.capacity_bytes.is_some()
                class:fits=sp.largest_fitting.is_some()>{verdict}</p>
            {chart.view()}
            {predictions}
            <p class="sweep-sentence" class:pinned=sp.pinned>{sp.sentence.clone()}</p>
            <table class="sweep-points">
                <thead><tr><th>"value"</th><th>"peak"</th><th></th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}
