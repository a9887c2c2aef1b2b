//! One memory space of a comparison: the chart of both curves on relative program position
//! ([`bufscope::render::diff::comparison_svg`], shown as SVG), the delta in words, a
//! capacity field (the line on the chart; [`Focus::capacity`] of both sides), the tables
//! ([`super::tables`]) and the two block diagrams, the base above the new.

use std::sync::Arc;

use bufscope::answers::capacity::parse_capacity;
use bufscope::diff::SpaceDiff;
use bufscope::model::memory_space_label;
use bufscope::render::diff::{comparison_svg, delta_text, ChartText};
use bufscope::units;
use leptos::prelude::*;

use super::sync::Sides;
use super::tables::{ChangeTables, GroupTables, OneSideTables};
use crate::ui::canvas::{page_style, Diagrams, Shared, SpaceCanvas};
use crate::ui::state::Focus;

/// Width the chart is drawn at; the page scales it to its column.
const CHART_WIDTH: u32 = 960;

#[component]
pub(super) fn SpaceCompare(sides: Sides, space: Arc<SpaceDiff>) -> impl IntoView {
    let p = &space.peaks;
    let color = p.color;
    let chart = {
        let space = space.clone();
        move || {
            let cap = sides.base.capacity.with(|c| c.get(&color).cloned());
            let (base, new) = (sides.base.shown(), sides.new.shown());
            let (base_label, new_label) = super::side_names(&base, &new);
            let text = ChartText {
                base_label: &base_label,
                new_label: &new_label,
                capacity: cap.as_ref().map(|c| (c.bytes, c.label.as_str())),
                backend: base.module.backend(),
            };
            comparison_svg(&[&space.peaks], &text, &page_style(), CHART_WIDTH)
        }
    };
    let position = |pos: Option<f64>, step: Option<u32>, steps: u32| match (pos, step) {
        (Some(pos), Some(t)) => format!(
            "{pos:.2} (step {} of {})",
            units::group_digits(u64::from(t)),
            units::group_digits(u64::from(steps))
        ),
        _ => "—".to_string(),
    };
    let delta = format!(
        "Peak {} → {}: {}. Base peak at position {}, new at {}.",
        units::exact_bytes(p.base_peak_bytes),
        units::exact_bytes(p.new_peak_bytes),
        delta_text(p),
        position(p.base_peak_position, p.base_peak_step, p.base_steps),
        position(p.new_peak_position, p.new_peak_step, p.new_steps),
    );
    let direction = match p.delta_bytes.signum() {
        1 => "grew",
        -1 => "shrank",
        _ => "same",
    };
    view! {
        <section class="compare-space" data-color=color.to_string()>
            <h3>{format!("Memory space {}", memory_space_label(color, sides.base.shown().module.backend()))}</h3>
            <div class="compare-chart" role="img"
                aria-label="Occupied bytes of both compilations on relative program position"
                data-base-peak=p.base_peak_bytes.to_string() data-new-peak=p.new_peak_bytes.to_string()
                inner_html=chart></div>
            <p class="compare-delta" data-delta-bytes=p.delta_bytes.to_string()
                data-direction=direction>{delta}</p>
            <CapacityField sides=sides color=color />
            <ChangeTables sides=sides space=space.clone() />
            <OneSideTables sides=sides space=space.clone() />
            <GroupTables sides=sides space=space.clone() />
            <Diagrams sides=sides color=color />
        </section>
    }
}

/// The capacity the chart draws as a line (a size or a device, as in the answers panel).
#[component]
fn CapacityField(sides: Sides, color: u32) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let on_change = move |e: web_sys::Event| {
        let text = event_target_value(&e);
        let parsed = (!text.trim().is_empty()).then(|| parse_capacity(&text));
        error.set(parsed.as_ref().and_then(|r| r.as_ref().err().cloned()));
        for focus in [sides.base, sides.new] {
            focus.capacity.update(|map| {
                let map = Arc::make_mut(map);
                match &parsed {
                    Some(Ok(c)) => {
                        map.insert(color, c.clone().on(color));
                    }
                    _ => {
                        map.remove(&color);
                    }
                }
            });
        }
    };
    view! {
        <p class="compare-capacity">
            <label>
                "Capacity line: "
                <input type="text" class="capacity-input" placeholder="16GiB, v5e, a100-80gb"
                    on:change=on_change />
            </label>
            {move || error.get().map(|e| view! { <span class="capacity-error">{e}</span> })}
        </p>
    }
}

/// The two block diagrams of the space, the base above the new, each with its side's
/// name and the value under the pointer.
#[component]
fn Diagrams(sides: Sides, color: u32) -> impl IntoView {
    let one = |focus: Focus, side: &'static str| {
        let shown = focus.shown();
        let has = shown.analysis.space(color).is_some();
        let shared = Shared::new(focus, Diagrams::new());
        let hovered = move || {
            let v = focus.hovered.get()?;
            let s = focus.shown();
            let value = s.module.values.get(v as usize)?;
            let op = bufscope::query::op_name(&s.module, value);
            Some(format!(
                "{} · {} · {} · {}",
                s.module.value_name(value),
                s.module.str(value.shape),
                units::exact_bytes(value.size),
                op
            ))
        };
        let steps = shown.analysis.steps;
        let body = if has {
            let space_label = memory_space_label(color, shown.module.backend());
            view! { <SpaceCanvas space_label=space_label color=color shared=shared /> }.into_any()
        } else {
            view! { <p class="note">{format!("No memory space {color} on this side.")}</p> }
                .into_any()
        };
        view! {
            <div class="compare-side" data-side=side data-steps=steps.to_string()>
                <p class="compare-side-label">
                    <span class=format!("side-tag {side}")>{side}</span>
                    <span class="compare-hover">{hovered}</span>
                </p>
                {body}
            </div>
        }
    };
    view! {
        <div class="compare-diagrams">
            <p class="diagram-hint">
                "Wheel: zoom · drag: pan · click: select on both sides. Zoom and pan are kept \
                 in step by relative program position."
            </p>
            {one(sides.base, "base")}
            {one(sides.new, "new")}
        </div>
    }
}
