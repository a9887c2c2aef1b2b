//! Comparing the module on screen with one of another read: the "Compare with…" control
//! ([`compare_control`]: file and folder pickers and a drop target, read through the
//! page's own loading flow into [`AppState::compare`](super::AppState)), and the Compare
//! view ([`compare_view`]) that replaces the single view until "Back to the single view".
//!
//! The view pairs the module on screen with a module of the other read by the core's rule
//! ([`bufscope::diff::pair_by_name`]; a select pairs by hand), compares them
//! ([`bufscope::diff::diff_modules`]) and shows, per memory space, the chart of both curves
//! on relative program position ([`bufscope::render::diff`]), the tables of what changed at
//! the peaks ([`tables`]) and the two block diagrams one above the other, kept in step and
//! sharing the selection of matched values ([`sync`]).

mod space;
mod sync;
mod tables;

use std::sync::Arc;

use bufscope::diff::{diff_modules, pair_by_name, PairRule, Side};
use bufscope::units;
use leptos::prelude::*;

use super::load::{start_load_into, Target};
use super::state::{Focus, Shown};
use super::app::{AppState, Outcome};
use super::intake::{on_drop, picked, pickers};

/// "Compare with…": pick files or a folder, or drop them onto the target; and, while
/// comparing, the way back to the single view.
pub(super) fn compare_control(st: AppState) -> impl IntoView {
    let on_pick = move |e: web_sys::Event| start_load_into(st, picked(&e), Target::Compare);
    let over = RwSignal::new(false);
    let on_drop_here = move |e: web_sys::DragEvent| {
        // The page's own drop (open instead of compare) must not see it.
        e.prevent_default();
        e.stop_propagation();
        over.set(false);
        st.dragging.set(false);
        if let Some(dt) = e.data_transfer() {
            on_drop(st, &dt, Target::Compare);
        }
    };
    let comparing = move || st.compare.with(Option::is_some);
    view! {
        <div class="compare-control">
            <span class="compare-label">"Compare with…"</span>
            {pickers(["compare-file-input", "compare-dir-input"], ["files", "a folder"], "small", on_pick)}
            <div id="compare-drop" class="compare-drop" class:over=move || over.get()
                on:dragover=move |e: web_sys::DragEvent| {
                    e.prevent_default();
                    over.set(true);
                }
                on:dragleave=move |_| over.set(false)
                on:drop=on_drop_here>
                "or drop the other dump here"
            </div>
            <Show when=comparing>
                <button type="button" id="compare-back" class="button small secondary"
                    on:click=move |_| st.compare.set(None)>"Back to the single view"</button>
            </Show>
        </div>
    }
}

/// The pair on screen: the base module (the one chosen in the page), the other read's
/// module, and how they were paired.
#[derive(Clone)]
struct Pair {
    base: Arc<Shown>,
    new: Arc<Shown>,
    rule: Option<PairRule>,
}

/// The other read's module paired with base module `chosen` by name, if any.
fn partner(base: &Outcome, chosen: usize, other: &Outcome) -> Option<(usize, PairRule)> {
    let names =
        |o: &Outcome| -> Vec<String> { o.modules.iter().map(|m| m.module.name.clone()).collect() };
    let pairing = pair_by_name(&names(base), &names(other));
    if let Some(p) = pairing.pairs.iter().find(|p| p.base == chosen) {
        return Some((p.new, p.rule));
    }
    // Two single modules pair whatever their names; so does the module on screen with a
    // single other one.
    (other.modules.len() == 1).then_some((0, PairRule::OnlyModule))
}

/// The Compare view of base module `chosen` (a signal: the page's module picker) with the
/// modules of `other`.
pub(super) fn compare_view(
    base: Arc<Outcome>,
    chosen: RwSignal<usize>,
    other: Arc<Outcome>,
) -> AnyView {
    // The other module picked by hand (`None`: the one paired by name).
    let by_hand = RwSignal::new(None::<usize>);
    let pair = {
        let (base, other) = (base.clone(), other.clone());
        Memo::new(move |_| {
            let b = chosen.get();
            let named = partner(&base, b, &other);
            let (n, rule) = match by_hand.get() {
                Some(n) => (Some(n), Some(PairRule::ByHand)),
                None => (named.map(|p| p.0), named.map(|p| p.1)),
            };
            let base = base.modules.get(b)?.clone();
            let default =
                bufscope::pipeline::default_module(other.modules.iter().map(|m| &m.module));
            let new = other.modules.get(n.or(default)?)?.clone();
            Some(PairView(Pair { base, new, rule }))
        })
    };
    // The position of the other module on screen, for its option's `selected`.
    let new_index = {
        let other = other.clone();
        Memo::new(move |_| pair.with(|p| p.as_ref().and_then(|p| other_index(&other, &p.0.new))))
    };
    let options = other
        .modules
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let label = format!("{} — {}", m.label, units::human_bytes(m.module.total_bytes()));
            view! {
                <option value=i.to_string() prop:selected=move || new_index.get() == Some(i)>
                    {label}
                </option>
            }
        })
        .collect_view();
    let picker = view! {
        <label class="compare-picker">
            "compared with "
            <select id="compare-module"
                on:change=move |e| {
                    if let Ok(i) = event_target_value(&e).parse() {
                        by_hand.set(Some(i));
                    }
                }>{options}</select>
        </label>
    };
    let body = move || {
        pair.get()
            .map(|PairView(p)| view! { <ComparePair pair=p /> })
    };
    let rule = move || {
        pair.with(|p| match p.as_ref().map(|p| p.0.rule) {
            Some(Some(PairRule::ByHand)) => "paired by hand",
            Some(Some(PairRule::ExactName)) => "paired by name",
            Some(Some(PairRule::StrippedName)) => "paired by name without module_NNNN and cl_N",
            Some(Some(PairRule::OnlyModule)) => "the only module of the other read",
            _ => "no module of the other read has this name: pick one",
        })
    };
    view! {
        <section class="compare" aria-label="Comparison">
            <div class="compare-pairing">
                {picker}
                <span class="compare-rule">{rule}</span>
            </div>
            {body}
        </section>
    }
    .into_any()
}

/// Position of `m` among the modules of `o`.
fn other_index(o: &Outcome, m: &Arc<Shown>) -> Option<usize> {
    o.modules.iter().position(|x| Arc::ptr_eq(x, m))
}

/// A [`Pair`] compared by identity (a memo needs `PartialEq`).
#[derive(Clone)]
struct PairView(Pair);

impl PartialEq for PairView {
    fn eq(&self, o: &Self) -> bool {
        Arc::ptr_eq(&self.0.base, &o.0.base)
            && Arc::ptr_eq(&self.0.new, &o.0.new)
            && self.0.rule == o.0.rule
    }
}

/// Where a module was read from, for telling two of one name apart: the folder of its first
/// file (`jax0.12/…`), else that file's name.
fn origin(m: &bufscope::model::Module) -> String {
    let first = m.files.first().map_or("", String::as_str);
    match first.rsplit_once(['/', '\\']) {
        Some((folder, _)) if !folder.is_empty() => format!("{folder}/"),
        _ => first.to_string(),
    }
}

/// The two sides' names as the Compare view shows them: as the page names each module
/// ([`Shown::label`]), and where the two read the same, each with where it was read from.
pub(super) fn side_names(base: &Shown, new: &Shown) -> (String, String) {
    if base.label != new.label {
        return (base.label.clone(), new.label.clone());
    }
    let (b, n) = (origin(&base.module), origin(&new.module));
    if b == n {
        return (
            format!("{} (base)", base.label),
            format!("{} (new)", new.label),
        );
    }
    (
        format!("{} ({b})", base.label),
        format!("{} ({n})", new.label),
    )
}

/// Two modules compared: their names and sizes, then one section per memory space.
#[component]
fn ComparePair(pair: Pair) -> impl IntoView {
    let diff = diff_modules(
        Side::new(&pair.base.module, &pair.base.analysis),
        Side::new(&pair.new.module, &pair.new.analysis),
    );
    let sides = sync::Sides {
        base: Focus::new(pair.base.clone()),
        new: Focus::new(pair.new.clone()),
    };
    sync::keep_in_step(sides, &diff);
    let (base_name, new_name) = side_names(&pair.base, &pair.new);
    let names = [
        ("base", &pair.base, base_name),
        ("new", &pair.new, new_name),
    ]
    .map(|(side, s, name)| {
        let m = &s.module;
        view! {
            <p class=format!("compare-side-name {side}")>
                <span class="side-tag">{side}</span>
                <span class="module-name-compare" title=m.name.clone()>{name}</span>
                <span class="aside">{format!(" — {} · {} steps · {}", m.files.join(", "),
                    units::group_digits(u64::from(s.analysis.steps)), units::human_bytes(m.total_bytes()))}</span>
            </p>
        }
    });
    let spaces = diff
        .spaces
        .into_iter()
        .map(|s| view! { <space::SpaceCompare sides=sides space=Arc::new(s) /> })
        .collect_view();
    view! {
        <div class="compare-pair">
            {names}
            <p class="compare-note">
                "The two schedules differ in length, so everything below is placed on "
                <strong>"relative program position"</strong>
                " (0 = start, 1 = end of the program). Values live at the two peaks are matched \
                 by op_name and shape, then by name, then by source line and shape."
            </p>
            <sync::SelectionLine sides=sides />
            {spaces}
        </div>
    }
}
