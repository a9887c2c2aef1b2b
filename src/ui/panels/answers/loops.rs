//! What the loops hold (`#answers-loops`): per `while` of the module
//! ([`bufscope::answers::loops`]), its steps and trip count, and at the chosen step the bytes
//! of its stacked per-iteration outputs, its carries (of which loop-invariant) and its
//! body's temporaries in the space answered for; a loop's row opens its tuple's elements
//! (role, value, shape, bytes), each one a click that highlights its value; its tick
//! rematerialises its stacked outputs in the what-if. Without the HLO
//! text, or where it disagrees with the schedule, the reason instead.

use bufscope::answers::loops::{held_at, temporaries, HeldAt};
use bufscope::answers::whatif::ticks::loop_outputs;
use bufscope::text::clip_middle;
use bufscope::units;
use leptos::prelude::*;

use super::{whatif, Ans, Computed};

const NAME_CHARS: usize = 48;

#[component]
pub(super) fn LoopHolds(ans: Ans) -> impl IntoView {
    let loops = ans.focus.shown().loops();
    let open = RwSignal::new(None::<usize>);
    let held = Memo::new(move |_| {
        let (color, step) = (ans.space.get(), ans.step.get());
        let shown = ans.focus.shown();
        let l = shown.loops();
        Computed(std::sync::Arc::new(held_at(&shown.module, &l.loops.loops, &l.loops.holds, color, step)))
    });
    let message = {
        let l = &loops.loops.loops;
        let text = if !l.warnings.is_empty() {
            Some(l.warnings.join(" · "))
        } else if l.loops.is_empty() {
            Some("no while loops in this module".to_string())
        } else {
            None
        };
        text.map(|m| view! { <p class="note loops-message">{m}</p> })
    };
    let rows = move || {
        let shown = ans.focus.shown();
        let l = shown.loops();
        let held = held.get();
        let color = ans.space.get();
        let stacked = ans.stacked.get();
        (l.loops.holds.iter().zip(held.iter()))
            .map(|(h, at): (_, &HeldAt)| {
                let i = h.loop_index as usize;
                let lp = &l.loops.loops.loops[i];
                let t = temporaries(&shown.module, lp, h, color);
                let trips = lp.trip_count.map_or_else(|| "unknown".to_string(), |n| n.to_string());
                let trips_attr = trips.clone();
                let values: Vec<u32> = h.elements.iter().filter_map(|e| e.value).collect();
                let indent = format!("{}em", f64::from(lp.depth) * 1.2);
                let outputs: Vec<String> = loop_outputs(&stacked, &lp.while_name, color).map(str::to_string).collect();
                let n = outputs.len();
                let tick = (n > 0).then(|| whatif::loops_tick(ans, outputs, None));
                view! {
                    <tr class="loop-row" data-while=lp.while_name.clone() data-trips=trips_attr
                        data-stacked=at.stacked_bytes.to_string() data-carries=at.carry_bytes.to_string()
                        aria-expanded=move || (open.get() == Some(i)).to_string()
                        data-outputs=n.to_string()
                        on:click=move |_| {
                            open.update(|o| *o = if *o == Some(i) { None } else { Some(i) });
                            ans.highlight(values.clone());
                        }>
                        <td class="tick" on:click=|e| e.stop_propagation()
                            title=format!("rematerialise this loop's {n} stacked outputs (what-if)")>{tick}</td>
                        <td class="mono name" style:padding-left=indent title=lp.op_name.clone().unwrap_or_default()>
                            {format!("{} · {}", lp.while_name, lp.name)}</td>
                        <td class="num">{format!("{}–{}", lp.body_steps[0], lp.body_steps[1])}</td>
                        <td class="num">{trips}</td>
                        <td class="num" title=units::exact_bytes(at.stacked_bytes)>{units::human_bytes(at.stacked_bytes)}</td>
                        <td class="num" title=format!("of which loop-invariant {}", units::human_bytes(at.invariant_bytes))>
                            {units::human_bytes(at.carry_bytes)}</td>
                        <td class="num" title=format!("{} values; the most live at once in the body: {}",
                            t.values, units::human_bytes(t.peak_bytes))>{units::human_bytes(at.temporary_bytes)}</td>
                    </tr>
                }
            })
            .collect::<Vec<_>>()
    };
    view! {
        <div class="answer" id="answers-loops">
            <h4>"What the loops hold"</h4>
            {message}
            <table class="answer-table">
                <thead><tr><th title="rematerialise the loop's stacked outputs that a later loop reads (what-if)">"remat"</th><th>"loop"</th><th class="num">"body steps"</th><th class="num">"trips"</th>
                    <th class="num" title="per-iteration outputs stacked along the trip count (residuals for the backward pass), live at this step">"stacked"</th>
                    <th class="num" title="carried through the loop, live at this step">"carries"</th>
                    <th class="num" title="the body's per-iteration temporaries live at this step">"temporaries"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            <LoopElements ans=ans open=open />
        </div>
    }
}

/// The tuple of the loop `open` points at: each element's role, value, shape and bytes,
/// and whether it is live at the step; a click highlights the value.
#[component]
fn LoopElements(ans: Ans, open: RwSignal<Option<usize>>) -> impl IntoView {
    move || {
        let i = open.get()?;
        let shown = ans.focus.shown();
        let l = shown.loops();
        let h = l.loops.hold(i)?;
        let lp = &l.loops.loops.loops[i];
        let step = ans.step.get();
        let rows = h
            .elements
            .iter()
            .map(|e| {
                let name = e.value_name.clone().unwrap_or_else(|| "(no value)".to_string());
                let live = e.value.and_then(|v| shown.module.values.get(v as usize)).and_then(|v| v.live);
                let here = live.is_some_and(|r| r.contains(step));
                let value = e.value;
                view! {
                    <tr class="loop-element" data-role=e.role.label() data-name=name.clone()
                        on:click=move |_| ans.highlight(value.into_iter().collect())>
                        <td class="num">{e.index.to_string()}</td>
                        <td>{e.role.label()}</td>
                        <td class="mono name" title=name.clone()>{clip_middle(&name, NAME_CHARS)}</td>
                        <td class="mono" title=e.shape.clone()>{clip_middle(&e.shape, 32)}</td>
                        <td class="num">{units::human_bytes(e.size)}</td>
                        <td>{if here { "live here" } else { "" }}</td>
                    </tr>
                }
            })
            .collect::<Vec<_>>();
        Some(view! {
            <p class="note">{format!("{}: condition steps {}–{}, {} (trip count {})", lp.while_name,
                lp.condition_steps[0], lp.condition_steps[1], lp.body_label(),
                match lp.trip_count { Some(_) => format!("{:?}", lp.trip_source).to_lowercase(), None => "unknown".into() })}</p>
            <table class="answer-table" id="answers-loop-elements">
                <thead><tr><th class="num">"#"</th><th>"role"</th><th>"value"</th><th>"shape"</th>
                    <th class="num">"bytes"</th><th>""</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        })
    }
}
