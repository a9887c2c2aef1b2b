//! The answers that are tables of figures: the three peaks reconciled ([`ThreePeaks`]), the
//! live bytes by source line ([`SourceLines`]) and by category ([`Categories`]), and the
//! padding of the space ([`Padding`]). A click on a row highlights its values in the
//! diagrams; a category's ticks rematerialise or offload its values in the what-if.

use std::sync::Arc;

use bufscope::answers::{categories, groups, padding, xprof};
use bufscope::export;
use bufscope::model::memory_space_name;
use bufscope::text::{clip_middle, clip_source};
use bufscope::units;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{clicked_index, show_more, whatif, Ans, Computed, FIRST_ROWS};
use crate::ui::export::csv_button;
use crate::ui::panels::CELL_CHARS;
use crate::ui::tasks::next_task;

/// The most characters of a file path or value name in a row (the title has it whole).
const NAME_CHARS: usize = 80;

fn percent(p: f64) -> String {
    format!("{p:.1} %")
}

/// bufscope's occupied peak, XLA's peak list and XProf's peak heap, each with what it counts.
/// XProf's figures take a pass over the space's values (on the 94 MB dump, tens of ms): a
/// space's are computed once, in a task of their own as soon as the panel shows the space
/// (not when the table is scrolled into view: its row is there from the start, "computing…"
/// until they are in).
#[component]
pub(super) fn ThreePeaks(ans: Ans) -> impl IntoView {
    let occupied = Memo::new(move |_| ans.with_space(|_, s| xprof::occupied_peak(s)));
    let xla = xprof::xla_peak(&ans.focus.shown().module);
    // XProf's figures of the space answered for, once computed: (colour, figures).
    let xprof = RwSignal::new(None::<(u32, Computed<xprof::XprofFigures>)>);
    Effect::new(move |_| {
        let color = ans.space.get();
        let shown = ans.focus.shown();
        if let Some(f) = shown.kept.xprof_kept(color) {
            xprof.set(Some((color, Computed(f))));
            return;
        }
        spawn_local(async move {
            next_task().await;
            if ans.space.try_get_untracked() != Some(color) {
                return;
            }
            if let Some(f) = shown.xprof(color) {
                xprof.try_set(Some((color, Computed(f))));
            }
        });
    });
    let xprof_row = move || {
        xprof.with(|x| {
            x.as_ref()
                .filter(|(c, _)| *c == ans.space.get())
                .map(|(_, f)| xprof::xprof_peak(f))
        })
    };
    let row = |id: &'static str, name: &'static str, p: &xprof::PeakFigure| {
        let bytes = p.bytes.map(|b| b.to_string()).unwrap_or_default();
        let shown = p.bytes.map_or_else(|| "—".to_string(), units::human_bytes);
        let exact = p.bytes.map(units::exact_bytes).unwrap_or_default();
        view! {
            <tr class="peak-figure" data-peak=id data-bytes=bytes>
                <th scope="row">{name}</th>
                <td class="num" title=exact>{shown}</td>
                <td class="num">{p.step.map(|s| units::group_digits(u64::from(s)))}</td>
                <td class="sentence">{p.sentence.clone()}</td>
            </tr>
        }
    };
    let body = move || {
        occupied.get().map(|o| {
            view! {
                {row("occupied", "bufscope (occupied)", &o)}
                {row("xla", "XLA's peak list", &xla)}
                {match xprof_row() {
                    Some(x) => row("xprof", "XProf peak heap", &x).into_any(),
                    None => view! {
                        <tr class="peak-figure" data-peak="xprof" data-computing="true">
                            <th scope="row">"XProf peak heap"</th>
                            <td class="num">"…"</td><td class="num"></td>
                            <td class="sentence">"computing…"</td>
                        </tr>
                    }
                    .into_any(),
                }}
            }
        })
    };
    view! {
        <div class="answer" id="answers-peaks">
            <h4>"Three peaks"</h4>
            <table class="answer-table">
                <thead><tr><th>"figure"</th><th class="num">"bytes"</th><th class="num">"step"</th><th>"what it counts"</th></tr></thead>
                <tbody>{body}</tbody>
            </table>
        </div>
    }
}

/// The name of an answer's CSV file: the module, `what`, the step and the memory space.
fn file(ans: Ans, what: &str) -> String {
    let shown = ans.focus.shown();
    let step = format!("step{}", ans.step.get_untracked());
    let space = memory_space_name(ans.space.get_untracked());
    export::file_name(&shown.module.name, &[what, &step, &space], "csv")
}

/// The live bytes by source line, largest first, with a running total.
#[component]
pub(super) fn SourceLines(ans: Ans) -> impl IntoView {
    let el = NodeRef::<leptos::html::Div>::new();
    let live = ans.live_in(el, || false);
    let rows = Memo::new(move |_| {
        let live = live.get();
        let shown = ans.focus.shown();
        Computed(Arc::new(groups::by_source_line(&shown.module, &live)))
    });
    let limit = RwSignal::new(FIRST_ROWS);
    Effect::new(move |_| {
        rows.track();
        limit.set(FIRST_ROWS);
    });
    let body = move || {
        let rows = rows.get();
        let n = limit.get().min(rows.len());
        rows[..n]
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let place = r.label();
                view! {
                    <tr class="source-row" data-i=i.to_string() data-bytes=r.bytes.to_string()
                        data-inferred=r.inferred.to_string()>
                        <td class="mono name source-place" class:inferred=r.inferred
                            title=place.clone()>{clip_source(&place, NAME_CHARS)}</td>
                        <td class="num" title=units::exact_bytes(r.bytes)>{units::human_bytes(r.bytes)}</td>
                        <td class="num">{percent(r.percent)}</td>
                        <td class="num">{units::human_bytes(r.running_bytes)}</td>
                        <td class="num">{units::group_digits(u64::from(r.count))}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    let total = move || rows.with(|r| r.len());
    view! {
        <div class="answer" id="answers-source" node_ref=el>
            <h4>"By source line" {csv_button("answers-source-csv", "the live bytes by source line",
                move || (file(ans, "source_lines"), rows.with_untracked(|r| export::source_lines_csv(r))))}</h4>
            <table class="answer-table">
                <thead><tr><th>"file:line"</th><th class="num">"bytes"</th><th class="num">"% live"</th>
                    <th class="num">"running"</th><th class="num">"values"</th></tr></thead>
                <tbody on:click=move |e| {
                    let values = clicked_index(&e, "tr").and_then(|i| rows.with_untracked(|r| Some(r.get(i)?.values.clone())));
                    if let Some(v) = values { ans.highlight(v) }
                }>{body}</tbody>
            </table>
            {show_more(limit, total)}
        </div>
    }
}

/// The live bytes by category, with the rule of each.
#[component]
pub(super) fn Categories(ans: Ans) -> impl IntoView {
    let el = NodeRef::<leptos::html::Div>::new();
    let live = ans.live_in(el, || false);
    // The module's dataflow (its HLO text's walk) once per module, not once per step.
    let cats = Memo::new(move |_| Computed(Arc::new(categories::Categories::new(&ans.focus.shown().module))));
    let rows = Memo::new(move |_| {
        let live = live.get();
        let shown = ans.focus.shown();
        let cats = cats.get();
        Computed(Arc::new(categories::by_category_with(&shown.module, &cats.0, &live)))
    });
    let body = move || {
        rows.get()
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let values = Arc::new(r.values.clone());
                view! {
                    <tr class="category-row" data-i=i.to_string() data-bytes=r.bytes.to_string() data-label=r.label title=r.rule>
                        <td class="tick" on:click=|e| e.stop_propagation()>{whatif::group_tick(ans, values.clone(), false)}</td>
                        <td class="tick" on:click=|e| e.stop_propagation()>{whatif::group_tick(ans, values, true)}</td>
                        <td>{r.label}{r.heuristic.then(|| view! { <span class="tag">"heuristic"</span> })}</td>
                        <td class="num" title=units::exact_bytes(r.bytes)>{units::human_bytes(r.bytes)}</td>
                        <td class="num">{percent(r.percent)}</td>
                        <td class="num">{units::group_digits(u64::from(r.count))}</td>
                        <td class="rule">{r.rule}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <div class="answer" id="answers-categories" node_ref=el>
            <h4>"By category" {csv_button("answers-categories-csv", "the live bytes by category",
                move || (file(ans, "categories"), rows.with_untracked(|r| export::categories_csv(r))))}</h4>
            <table class="answer-table">
                <thead><tr><th title="rematerialise every temporary of the category idle long enough">"remat"</th>
                    <th title="offload every value of the category idle long enough">"offload"</th><th>"category"</th><th class="num">"bytes"</th><th class="num">"% live"</th>
                    <th class="num">"values"</th><th>"rule"</th></tr></thead>
                <tbody on:click=move |e| {
                    let values = clicked_index(&e, "tr").and_then(|i| rows.with_untracked(|r| Some(r.get(i)?.values.clone())));
                    if let Some(v) = values { ans.highlight(v) }
                }>{body}</tbody>
            </table>
        </div>
    }
}

/// Padding at the step and over all values of the space, and the most padded values.
#[component]
pub(super) fn Padding(ans: Ans) -> impl IntoView {
    let el = NodeRef::<leptos::html::Div>::new();
    let live = ans.live_in(el, || false);
    let pad = Memo::new(move |_| {
        let live = live.get();
        let shown = ans.focus.shown();
        ans.with_space(|m, s| {
            let all = shown.kept.all_padding(m, s);
            Computed(Arc::new(padding::step_padding(m, &live, 50, all)))
        })
    });
    let limit = RwSignal::new(FIRST_ROWS / 2);
    let summary = move || {
        pad.get().map(|p| {
            let share = groups::percent(p.step_padding_bytes, p.step_value_bytes);
            let unknown = (p.unknown > 0).then(|| {
                format!(
                    " {} values have no logical size to compare with.",
                    units::group_digits(u64::from(p.unknown))
                )
            });
            view! {
                <p class="padding-summary" data-step-bytes=p.step_padding_bytes.to_string()>
                    {format!(
                        "At step {}: {} of the live values' {} is padding ({}). Over all values of the space: {}.",
                        units::group_digits(u64::from(p.step)),
                        units::human_bytes(p.step_padding_bytes),
                        units::human_bytes(p.step_value_bytes),
                        percent(share),
                        units::human_bytes(p.all_padding_bytes),
                    )}
                    {unknown}
                </p>
            }
        })
    };
    let body = move || {
        let Some(p) = pad.get() else {
            return Vec::new();
        };
        let n = limit.get().min(p.top.len());
        p.top[..n]
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let name = ans.value_name(v.value);
                view! {
                    <tr class="padding-row" data-i=i.to_string() data-bytes=v.padding.to_string()>
                        <td class="mono name" title=clip_middle(&name, CELL_CHARS)>{clip_middle(&name, NAME_CHARS)}</td>
                        <td class="num" title=units::exact_bytes(v.padding)>{units::human_bytes(v.padding)}</td>
                        <td class="num">{units::human_bytes(v.size)}</td>
                        <td class="sentence">{v.explanation.clone()}</td>
                    </tr>
                }
            })
            .collect::<Vec<_>>()
    };
    let total = move || pad.with(|p| p.as_ref().map_or(0, |p| p.top.len()));
    view! {
        <div class="answer" id="answers-padding" node_ref=el>
            <h4>"Padding"</h4>
            {summary}
            <table class="answer-table">
                <thead><tr><th>"value"</th><th class="num">"padding"</th><th class="num">"allocated"</th><th>"why"</th></tr></thead>
                <tbody on:click=move |e| {
                    let value = clicked_index(&e, "tr").and_then(|i| pad.with_untracked(|p| Some(p.as_ref()?.top.get(i)?.value)));
                    if let Some(v) = value { ans.highlight(vec![v]) }
                }>{body}</tbody>
            </table>
            {show_more(limit, total)}
        </div>
    }
}
