//! The details of the selected value (`#details`, from `focus.selected`): name and id,
//! shape, sizes and padding, offset (decimal and hex), its allocation and the allocation's
//! flags, live range with the instructions at its ends, defining instruction, op_name,
//! source, positions and uses (each use a step to jump to, when the schedule places it) and
//! the longest stretch it is live but unused; a button to zoom the diagram to it. The
//! value's name, op_name and source are shown whole; the repeats of names (instruction,
//! live-range ends, positions, uses) at most [`CELL_CHARS`] characters of them.

use std::sync::Arc;

use bufscope::answers::idle;
use bufscope::model::{Allocation, Module, Value};
use bufscope::query::{self, SourceLocation};
use leptos::prelude::*;

use super::{space_label, CELL_CHARS};
use crate::ui::swatch;
use crate::ui::state::{Focus, Shown};
use crate::ui::uses;
use bufscope::text::clip_middle;
use bufscope::units;

mod hlo;

#[component]
pub fn Details(focus: Focus) -> impl IntoView {
    let content = move || {
        let shown = focus.shown();
        let Some(v) = focus.selected.get() else {
            return view! {
                <p class="placeholder">
                    "Select a value to see its details: click a block in a diagram or a row of the table, "
                    "or search and press Enter."
                </p>
            }
            .into_any();
        };
        let m = &shown.module;
        let Some(value) = m.values.get(v as usize).copied() else {
            return view! { <p class="placeholder">"This value is not in the module."</p> }
                .into_any();
        };
        let color = m.value_color(&value);
        let peak = shown
            .analysis
            .space(color)
            .and_then(|s| s.peak_time)
            .map(|t| value.live.is_some_and(|r| r.contains(t)));
        let name = query::display_name(m, &value);
        let can_reveal = value.live.is_some();
        view! {
            <header class="details-head">
                <h3 class="details-name">{name}</h3>
                <span class="details-id">{format!("value id {}", value.id)}</span>
            </header>
            <div class="details-actions">
                <button type="button" class="reveal" disabled=!can_reveal
                    title=if can_reveal { "Zoom the diagram to this value" } else { "Not drawn: it has no live range" }
                    on:click=move |_| focus.reveal(v)>"Zoom to it"</button>
                <button type="button" class="secondary clear-selection"
                    on:click=move |_| focus.selected.set(None)>"Clear"</button>
            </div>
            <dl class="facts">
                <dt>"Memory space"</dt>
                <dd><span class=swatch::class(color)></span>{space_label(color, m)}</dd>
                <dt>"Shape"</dt>
                <dd><code class="shape">{m.str(value.shape).to_string()}</code></dd>
                {sizes(&value)}
                <dt>"Offset"</dt>
                <dd class="offset" data-offset=value.offset.to_string()>
                    {format!("{} ({})", units::group_digits(value.offset), query::hex(value.offset))}
                </dd>
                <dt>"Allocation"</dt>
                <dd class="allocation">{allocation(m, m.allocations.get(value.allocation as usize))}</dd>
                <dt>"Live range"</dt>
                <dd class="live-range">{live_range(m, &value)}</dd>
                {peak.map(|live| view! {
                    <dt>"At the peak"</dt>
                    <dd>{if live { "live at its space's peak" } else { "not live at its space's peak" }}</dd>
                })}
                <dt>"Kind"</dt>
                <dd class="kind">{bufscope::analysis::value_kind(m, &value).label()}{value.phi.then_some(" (phi)")}</dd>
                {instruction(m, &value, shown.complete)}
            </dl>
            {hlo::stack(m, &value)}
            {hlo::instruction(focus, m, &value)}
            {idle_stretch(&shown, v, &value)}
            {positions_and_uses(focus, &shown, v, &value)}
        }
        .into_any()
    };
    view! {
        <aside id="details" class="details" aria-label="Selected value" aria-live="polite">
            {content}
        </aside>
    }
}

fn sizes(value: &Value) -> impl IntoView + use<> {
    let logical = value
        .logical_size
        .map_or_else(|| "unknown (dynamic shape)".to_string(), units::exact_bytes);
    let padding = query::padding(value).map(|p| {
        let pct = if value.size > 0 {
            format!(
                " ({:.1}% of the allocated size)",
                p as f64 * 100.0 / value.size as f64
            )
        } else {
            String::new()
        };
        format!("{}{pct}", units::exact_bytes(p))
    });
    view! {
        <dt>"Allocated size"</dt>
        <dd class="size" data-bytes=value.size.to_string()>{units::exact_bytes(value.size)}</dd>
        <dt>"Logical size"</dt>
        <dd class="logical">{logical}</dd>
        {padding.map(|p| view! { <dt>"Padding"</dt><dd class="padding">{p}</dd> })}
    }
}

fn allocation(m: &Module, a: Option<&Allocation>) -> String {
    let Some(a) = a else {
        return "—".to_string();
    };
    let mut flags: Vec<String> = Vec::new();
    if let Some(p) = &a.parameter {
        let mut f = format!("parameter {}", p.number);
        if !p.shape.is_empty() {
            f.push_str(&format!(", shape {}", m.str(p.shape)));
        }
        if !p.shape_index.is_empty() {
            f.push_str(&format!(" at index {}", m.str(p.shape_index)));
        }
        flags.push(f);
    }
    if let Some(s) = a.output_shape {
        flags.push(format!("output, shape {}", m.str(s)));
    }
    let f = a.flags;
    for (on, label) in [
        (f.constant, "constant"),
        (f.thread_local, "thread-local"),
        (f.maybe_live_out, "maybe-live-out"),
        (f.preallocated_temp, "preallocated-temp"),
    ] {
        if on {
            flags.push(label.to_string());
        }
    }
    if let Some(p) = a.page {
        flags.push(format!("page {p}"));
    }
    let mut text = format!(
        "allocation {} · {} · colour {}",
        a.index,
        units::exact_bytes(a.size),
        a.color
    );
    if !flags.is_empty() {
        text.push_str(" · ");
        text.push_str(&flags.join(" · "));
    }
    text
}

fn live_range(m: &Module, value: &Value) -> String {
    let Some(r) = value.live else {
        return "none (thread-local or not scheduled): not drawn on the time axis".to_string();
    };
    let at = |step: u32| match query::instruction_at(m, step) {
        Some(name) => clip_middle(name, CELL_CHARS),
        None => "end of program".to_string(),
    };
    let steps = u64::from(r.end.saturating_sub(r.start)) + 1;
    if m.schedule.is_some() {
        format!(
            "steps {}–{} ({}): from {} to {}",
            units::group_digits(u64::from(r.start)),
            units::group_digits(u64::from(r.end)),
            units::count(steps as usize, "step"),
            at(r.start),
            at(r.end)
        )
    } else {
        format!(
            "steps {}–{}",
            units::group_digits(u64::from(r.start)),
            units::group_digits(u64::from(r.end))
        )
    }
}

/// The value's instruction and what `Used values` says of it (`complete`: read already).
fn instruction(m: &Module, value: &Value, complete: bool) -> impl IntoView + use<> {
    let i = m.instruction(value);
    let opcode = m.str(i.opcode).to_string();
    let op_name = m.str(i.op_name).to_string();
    // `file:line in function`, or why the frame id is not resolved (no HLO text).
    // An inferred one says so at the end, with the instruction it is read from.
    let source = query::source_location(m, value).map(|at| match at {
        SourceLocation::File { file, line, function, inferred } => {
            let plain = SourceLocation::File { file, line, function, inferred: false };
            let mut text = plain.to_string();
            if !function.is_empty() {
                text = format!("{text} in {function}");
            }
            if inferred {
                let from = query::nearest_of(m, value).map(|n| n.from).unwrap_or_default();
                text = format!("{text}{} from {from}", query::INFERRED.trim_end_matches(')'));
                text.push(')');
            }
            text
        }
        _ => at.to_string(),
    });
    let known = |s: String| match (s.is_empty(), complete) {
        (false, _) => s,
        (true, true) => "—".to_string(),
        (true, false) => READING.to_string(),
    };
    view! {
        <dt>"Instruction"</dt>
        <dd class="instruction"><code>{clip_middle(m.str(i.name), CELL_CHARS)}</code>
            {(!opcode.is_empty()).then(|| view! { " · " <code class="opcode">{opcode}</code> })}
        </dd>
        <dt>"op_name"</dt>
        <dd class="op-name">{known(op_name)}</dd>
        <dt>"Source"</dt>
        <dd class="source">{known(source.unwrap_or_default())}</dd>
    }
}

/// The longest stretch in which the value is live but not used, in one sentence.
fn idle_stretch(shown: &Arc<Shown>, v: u32, value: &Value) -> Option<impl IntoView + use<>> {
    value.live?;
    let u = uses::value_uses(shown, v)?;
    let longest = u
        .stretches
        .iter()
        .max_by(|a, b| a.idle_steps.cmp(&b.idle_steps).then(b.from.cmp(&a.from)));
    let text = match longest {
        Some(s) => {
            let step = |t: u32| units::group_digits(u64::from(t));
            let to = if s.to_use {
                format!("its use at step {}", step(s.to))
            } else {
                format!("the end of its live range at step {}", step(s.to))
            };
            format!(
                "Longest idle: {} × {} (from step {} to {to}) = {} byte-steps.",
                units::human_bytes(value.size),
                units::count(s.idle_steps as usize, "step"),
                step(s.from),
                units::group_digits(value.size.saturating_mul(u64::from(s.idle_steps))),
            )
        }
        None => "Never idle: it is used at every step it is live, or the next.".to_string(),
    };
    Some(view! {
        <p class="idle-longest" data-idle-steps=longest.map_or(0, |s| s.idle_steps).to_string()>{text}</p>
    })
}

/// What the details say of what `Used values` tells while it is still being read.
const READING: &str = "being read…";

fn positions_and_uses(
    focus: Focus,
    shown: &Arc<Shown>,
    v: u32,
    value: &Value,
) -> impl IntoView + use<> {
    const SHOWN: usize = 200;
    let m = &shown.module;
    let list = |title: &'static str, class: &'static str, items: Vec<AnyView>, count: usize| {
        let more = (count > SHOWN)
            .then(|| view! { <li class="more">{format!("… and {} more", count - SHOWN)}</li> });
        view! {
            <details class=class open=count <= 8>
                <summary>{format!("{title} ({count})")}</summary>
                <ul>{items}{more}</ul>
            </details>
        }
    };
    let lines = |items: &[&str]| -> Vec<AnyView> {
        items
            .iter()
            .take(SHOWN)
            .map(|l| view! { <li><code>{clip_middle(l.trim(), CELL_CHARS)}</code></li> }.into_any())
            .collect()
    };
    let Some((positions, uses)) = m.positions_and_uses(value) else {
        let text = if !shown.complete {
            "Its positions and uses are still being read…"
        } else if uses::needs_values(shown) {
            idle::NEEDS_VALUES
        } else {
            "The dump lists no positions or uses for this value."
        };
        return view! { <p class="aside no-uses">{text}</p> }.into_any();
    };
    let placed = uses::value_uses(shown, v);
    let use_items = match &placed {
        Some(u) => u
            .uses
            .iter()
            .take(SHOWN)
            .map(|u| use_step(focus, u))
            .collect(),
        None => lines(&uses),
    };
    view! {
        {list("Positions", "positions", lines(&positions), positions.len())}
        {list("Uses", "uses", use_items, uses.len())}
    }
    .into_any()
}

/// A use as a step the user can jump to (the chosen step, shown in the diagrams), or as
/// text when the schedule does not list its instruction.
fn use_step(focus: Focus, u: &idle::Use) -> AnyView {
    let text = clip_middle(&u.text, CELL_CHARS);
    match u.step {
        Some(step) => view! {
            <li><button type="button" class="use-step" data-step=step.to_string()
                title="Show this step in the diagrams and the answers"
                on:click=move |_| focus.step.set(Some(step))>
                <span class="step">{format!("step {}", units::group_digits(u64::from(step)))}</span>
                <code>{text}</code>
            </button></li>
        }
        .into_any(),
        None => view! {
            <li><code>{text}</code><span class="aside">" (not in the schedule)"</span></li>
        }
        .into_any(),
    }
}
