//! The answers panel (`#answers`): what the live bytes of one memory space are made of at
//! the chosen step ([`Focus::step`], the space's peak by default), beside the diagrams.
//! The step is chosen by a click on a curve, a number, or the previous / next peak and
//! XLA's peak buttons ([`StepChooser`]); the parts below answer for it: the three peaks
//! reconciled, source lines, categories and padding ([`figures`]), the capacity verdict
//! ([`capacity`]), the op_name icicle ([`icicle`]), the what-if's estimate ([`whatif`]), the
//! idle stretches ([`idle`]), whose rows it ticks, what the loops hold ([`loops`]), waste per device ([`waste`]) and the read's modules
//! side by side ([`device`]).
//!
//! Owns the panel's state ([`Ans`]) and layout; every figure comes from
//! [`bufscope::answers`]. Figures are memos over the chosen space and step, computed only
//! while the panel is open; lists show a few rows with "show more". The step line answers
//! for a new step at once; each part below it does too while it is on screen, and a part
//! scrolled out of sight ([`Ans::live_in`]) two frames later, so that the frame after a
//! click shows what is on screen without waiting for the rest.

mod capacity;
mod device;
mod figures;
mod icicle;
mod idle;
mod loops;
mod waste;
mod whatif;

use std::sync::Arc;

use bufscope::analysis::Space;
use bufscope::answers::whatif::stacked::{stacked_outputs, StackedOutput};
use bufscope::answers::{groups, peaks, LiveSet};
use bufscope::model::Module;
use bufscope::units;
use leptos::prelude::*;

use super::{space_label, step_label};
pub(super) use crate::ui::state::Computed;
use crate::ui::state::{Focus, ReadModules, Shown};


/// Rows of a ranked list in the DOM at first, and how many "show more" adds.
pub(super) const FIRST_ROWS: usize = 20;
pub(super) const MORE_ROWS: usize = 50;

/// The panel's state, shared by its parts; `Copy`.
#[derive(Clone, Copy)]
pub(super) struct Ans {
    pub focus: Focus,
    /// The memory space answered for (its colour).
    pub space: RwSignal<u32>,
    /// The step answered for: the chosen one, else the space's peak (within the program).
    pub step: Memo<u32>,
    /// The values live there, each with its share of the occupied bytes.
    pub live: Memo<Computed<LiveSet>>,
    /// The idle stretches were asked for (ranked from then on, at every step).
    pub idle_open: RwSignal<bool>,
    /// The loops' stacked outputs the what-if can rematerialise (none without the HLO text).
    pub stacked: Memo<Computed<Vec<StackedOutput>>>,
}

impl Ans {
    fn new(focus: Focus) -> Ans {
        let shown = focus.shown();
        let space = RwSignal::new(super::fullest_space(&shown.analysis.spaces));
        let step = Memo::new(move |_| focus.step_in(space.get()).unwrap_or(0));
        let live = Memo::new(move |_| {
            let (color, step) = (space.get(), step.get());
            Computed(focus.shown().live_set(color, step))
        });
        Ans {
            focus,
            space,
            step,
            live,
            idle_open: RwSignal::new(false),
            stacked: Memo::new(move |_| Computed(Arc::new(stacked_outputs(&focus.shown().module)))),
        }
    }

    /// `f` of the module and the space answered for (`None` without that space).
    pub fn with_space<R>(&self, f: impl FnOnce(&Module, &Space) -> R) -> Option<R> {
        let shown: Arc<Shown> = self.focus.shown();
        let color = self.space.get();
        let space = shown.analysis.space(color)?;
        Some(f(&shown.module, space))
    }

    /// Highlights `values` in the diagrams, the way a search's matches are.
    pub fn highlight(&self, mut values: Vec<u32>) {
        values.sort_unstable();
        values.dedup();
        self.focus.match_index.set(0);
        self.focus.matches.set(Arc::new(values));
    }

    /// The live set the part of the panel in `el` answers for: [`Ans::live`] at once while
    /// the part is on screen or `eager` says it must follow, else two animation frames later
    /// (the latest live set then), or as soon as the part comes into view.
    pub fn live_in(
        &self,
        el: NodeRef<leptos::html::Div>,
        eager: impl Fn() -> bool + Send + Sync + 'static,
    ) -> ReadSignal<Computed<LiveSet>> {
        let ans = *self;
        let in_view = RwSignal::new(false);
        Effect::new(move |_| {
            if let Some(div) = el.get() {
                watch_in_view(&div, in_view, false);
            }
        });
        let shown = RwSignal::new(ans.live.get_untracked());
        // The latest live set, if the part does not show it yet.
        let behind = move || {
            let want = ans.live.try_get_untracked()?;
            (shown.try_with_untracked(|s| *s != want)?).then_some(want)
        };
        let waiting = StoredValue::new(false);
        Effect::new(move |_| {
            ans.live.track();
            if in_view.get() || eager() {
                if let Some(want) = behind() {
                    shown.set(want);
                }
            } else if !waiting.get_value() {
                waiting.set_value(true);
                request_animation_frame(move || {
                    request_animation_frame(move || {
                        waiting.try_set_value(false);
                        if let Some(want) = behind() {
                            shown.try_set(want);
                        }
                    })
                });
            }
        });
        shown.read_only()
    }

    /// A value's name as a list shows it.
    pub fn value_name(&self, value: u32) -> String {
        let shown = self.focus.shown();
        let m = &shown.module;
        m.values
            .get(value as usize)
            .map_or_else(String::new, |v| bufscope::query::display_name(m, v))
    }
}

/// The answers panel of the module on screen.
#[component]
pub fn Answers(
    focus: Focus,
    /// The read's modules, for the device ledger (shown when there are several).
    read: Option<ReadModules>,
    /// Whether the panel is shown: closed until asked for (a module opens on its diagrams,
    /// and nothing is computed for the answers, of a 94 MB dump a few hundred ms, until
    /// then); the workspace holds it, so that the panel made again stays as it was.
    open: RwSignal<bool>,
) -> impl IntoView {
    let ans = Ans::new(focus);
    let shown = focus.shown();
    let options = shown
        .analysis
        .spaces
        .iter()
        .map(|s| {
            let c = s.color;
            view! { <option value=c.to_string() selected=move || ans.space.get() == c>{space_label(c, &shown.module)}</option> }
        })
        .collect_view();
    let on_space = move |e: leptos::ev::Event| {
        if let Ok(c) = event_target_value(&e).parse::<u32>() {
            ans.space.set(c);
        }
    };
    view! {
        <section id="answers" class="answers" aria-labelledby="answers-title">
            <header class="answers-head">
                <h3 id="answers-title">"Answers"</h3>
                <label class="answers-space">"Memory space "
                    <select id="answers-space" on:change=on_space>{options}</select>
                </label>
                <button type="button" class="button answers-toggle" aria-expanded=move || open.get().to_string()
                    on:click=move |_| open.update(|o| *o = !*o)>
                    {move || if open.get() { "Hide" } else { "Show" }}
                </button>
            </header>
            <Show when=move || open.get()>
                <StepChooser ans=ans />
                <div class="answers-grid">
                    <figures::ThreePeaks ans=ans />
                    <capacity::CapacityVerdict ans=ans />
                    <figures::SourceLines ans=ans />
                    <figures::Categories ans=ans />
                    <figures::Padding ans=ans />
                    <whatif::WhatIf ans=ans />
                    <idle::IdleStretches ans=ans />
                    <loops::LoopHolds ans=ans />
                    <waste::WasteAnswer ans=ans />
                    {read.map(|read| view! { <device::DeviceLedger ans=ans read=read /> })}
                </div>
                <icicle::Icicle ans=ans />
            </Show>
        </section>
    }
}

/// The step answered for: its number (editable), its instruction, the live bytes there,
/// and buttons to the previous / next peak, XLA's peak and the space's own peak.
#[component]
fn StepChooser(ans: Ans) -> impl IntoView {
    let focus = ans.focus;
    let shown = focus.shown();
    let steps = shown.analysis.steps;
    let peak_list = Memo::new(move |_| {
        Computed(Arc::new(
            ans.with_space(|_, s| {
                peaks::prominent_peaks(&s.curve, peaks::DEFAULT_FRACTION, peaks::DEFAULT_PROMINENCE)
            })
            .unwrap_or_default(),
        ))
    });
    let xla_step = peaks::xla_peak_step(&shown.module);
    let go = move |to: Option<peaks::Peak>| {
        if let Some(p) = to {
            focus.step.set(Some(p.step));
        }
    };
    let previous = move || peaks::previous_peak(&peak_list.get(), ans.step.get());
    let next = move || peaks::next_peak(&peak_list.get(), ans.step.get());
    let on_step = move |e: leptos::ev::Event| {
        if let Ok(s) = event_target_value(&e).trim().parse::<u32>() {
            focus.step.set(Some(s.min(steps.saturating_sub(1))));
        }
    };
    // The module read through the focus, never kept (its HLO text may replace it in place).
    let label = move || step_label(&focus.shown().module, ans.step.get());
    let peak_note = move || {
        let list = peak_list.get();
        let step = ans.step.get();
        match list.iter().position(|p| p.step == step) {
            Some(i) => format!("peak {} of {}", i + 1, list.len()),
            None => format!(
                "{} peak{} listed",
                list.len(),
                if list.len() == 1 { "" } else { "s" }
            ),
        }
    };
    let live_bytes = move || ans.live.with(|l| l.occupied_bytes);
    view! {
        <div class="answers-step">
            <label>"Step "
                <input id="answers-step" type="number" min="0" max=steps.saturating_sub(1).to_string()
                    prop:value=move || ans.step.get().to_string() on:change=on_step />
            </label>
            <span class="answers-step-name mono">{label}</span>
            <span class="answers-live" data-bytes=move || live_bytes().to_string()
                data-step=move || ans.step.get().to_string()>
                {move || format!("{} live in {} values", units::human_bytes(live_bytes()),
                    units::group_digits(ans.live.with(|l| l.values.len()) as u64))}
            </span>
            <span class="answers-peak-note">{peak_note}</span>
            <span class="answers-step-buttons">
                <button type="button" class="button" id="answers-prev-peak"
                    disabled=move || previous().is_none() on:click=move |_| go(previous())>"◀ previous peak"</button>
                <button type="button" class="button" id="answers-next-peak"
                    disabled=move || next().is_none() on:click=move |_| go(next())>"next peak ▶"</button>
                <button type="button" class="button" id="answers-xla-peak" disabled=xla_step.is_none()
                    title="the step of XLA's peak buffers list"
                    on:click=move |_| focus.step.set(xla_step)>"XLA's peak"</button>
                <button type="button" class="button" id="answers-own-peak"
                    title="the highest occupied bytes of this memory space"
                    on:click=move |_| focus.step.set(None)>"this space's peak"</button>
            </span>
            <PeakList ans=ans peak_list=peak_list />
        </div>
    }
}

/// The space's peaks as a list ([`peaks::prominent_peaks`]): step, bytes and share of the
/// highest, each a button to that step; the step answered for is marked.
#[component]
fn PeakList(ans: Ans, peak_list: Memo<Computed<Vec<peaks::Peak>>>) -> impl IntoView {
    let items = move || {
        let list = peak_list.get();
        let highest = list.iter().map(|p| p.bytes).max().unwrap_or(0);
        list.iter()
            .map(|&p| {
                let current = move || ans.step.get() == p.step;
                view! {
                    <li>
                        <button type="button" class="button answers-peak" data-step=p.step.to_string()
                            data-bytes=p.bytes.to_string() aria-current=move || current().then_some("step")
                            class:current=current on:click=move |_| ans.focus.step.set(Some(p.step))>
                            {format!("step {} · {} · {:.0} %", units::group_digits(u64::from(p.step)), units::human_bytes(p.bytes),
                                groups::percent(p.bytes, highest))}
                        </button>
                    </li>
                }
            })
            .collect_view()
    };
    view! {
        <div class="answers-peak-list">
            <span class="note" title=format!(
                "local maxima of at least {:.0} % of the highest that stand at least {:.0} % of the highest above the valleys around them",
                peaks::DEFAULT_FRACTION * 100.0, peaks::DEFAULT_PROMINENCE * 100.0)>"Peaks: "</span>
            <ol id="answers-peaks-list">{items}</ol>
        </div>
    }
}

/// Keeps `in_view` telling whether any of `el` is on screen, inside the scrolling boxes
/// around it (until `el` goes; `once`: stops at the first time it is, leaving `in_view`
/// true). Where the browser cannot tell, `in_view` is set true.
pub(super) fn watch_in_view(el: &web_sys::Element, in_view: RwSignal<bool>, once: bool) {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    use web_sys::{IntersectionObserver, IntersectionObserverEntry};
    let callback = Closure::<dyn FnMut(js_sys::Array, IntersectionObserver)>::new(
        move |entries: js_sys::Array, observer: IntersectionObserver| {
            // The last notice is the latest state.
            let Some(last) = entries
                .iter()
                .filter_map(|e| e.dyn_into::<IntersectionObserverEntry>().ok())
                .last()
            else {
                return;
            };
            let visible = last.is_intersecting();
            if visible && once {
                observer.disconnect();
            }
            if in_view.try_get_untracked() != Some(visible) {
                in_view.try_set(visible);
            }
        },
    );
    match IntersectionObserver::new(callback.as_ref().unchecked_ref()) {
        Ok(observer) => {
            observer.observe(el);
            // The observer stops with the part; its callback (a few bytes) stays, so that a
            // notice on its way finds it.
            callback.forget();
            let observer = StoredValue::new_local(observer);
            on_cleanup(move || {
                observer.try_with_value(|o| o.disconnect());
            });
        }
        Err(_) => in_view.set(true),
    }
}

/// The `data-i` of the element matching `selector` a click landed in (a row or a frame):
/// a list takes one click handler for all its rows.
pub(super) fn clicked_index(e: &leptos::ev::MouseEvent, selector: &str) -> Option<usize> {
    use wasm_bindgen::JsCast;
    let el = e.target()?.dyn_into::<web_sys::Element>().ok()?;
    el.closest(selector)
        .ok()??
        .get_attribute("data-i")?
        .parse()
        .ok()
}

/// A "show N more" button for a list of `total` rows of which `limit` are shown.
pub(super) fn show_more(
    limit: RwSignal<usize>,
    total: impl Fn() -> usize + Copy + Send + Sync + 'static,
) -> impl IntoView {
    move || {
        let rest = total().saturating_sub(limit.get());
        (rest > 0).then(|| {
            view! {
                <button type="button" class="button answers-more"
                    on:click=move |_| limit.update(|l| *l += MORE_ROWS)>
                    {format!("show {} more (of {})", units::group_digits(rest.min(MORE_ROWS) as u64), units::group_digits(rest as u64))}
                </button>
            }
        })
    }
}
