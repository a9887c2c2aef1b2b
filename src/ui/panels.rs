//! The panels around the diagrams: the module header, the search box, the table of values
//! live at the peak, the list of values without a live range, and the details of the
//! selected value. They read and write the shared [`Focus`].

use bufscope::analysis::Space;
use bufscope::model::memory_space_name;
use leptos::prelude::*;

use super::fmt;
use super::state::Focus;

/// The module's header: name, files, sizes, schedule, memory spaces with their peaks,
/// warnings. (The diagrams are drawn by [`super::diagram`].)
#[component]
pub fn Header(focus: Focus) -> impl IntoView {
    let shown = focus.shown();
    let m = &shown.module;
    let a = &shown.analysis;
    let total = m.total_bytes();
    let xla_total = m.total_bytes_line.filter(|&t| t != total).map(|t| {
        view! { <span class="aside">{format!(" — the dump says {}", fmt::bytes(t))}</span> }
    });
    let schedule = m.schedule.as_ref().map_or_else(
        || "—".to_string(),
        |s| format!("{} instructions", fmt::grouped(u64::from(s.max))),
    );
    let files = m.files.join(", ");
    let spaces = a.spaces.iter().map(space_row).collect_view();
    let warnings = (!m.warnings.is_empty()).then(|| {
        const SHOWN: usize = 50;
        let count = m.warnings.len();
        let items = m
            .warnings
            .iter()
            .take(SHOWN)
            .map(|w| view! { <li>{w.to_string()}</li> })
            .collect_view();
        let more = (count > SHOWN).then(|| view! { <li class="more">{format!("… and {} more", count - SHOWN)}</li> });
        view! {
            <details class="warnings">
                <summary>{format!("{count} warning{} while reading", if count == 1 { "" } else { "s" })}</summary>
                <ul>{items}{more}</ul>
            </details>
        }
    });

    view! {
        <section class="module-header">
            <h2 class="module-name">{m.name.clone()}</h2>
            <p class="module-files">{files}</p>
            <table class="summary">
                <tbody>
                    <tr><th scope="row">"Allocations"</th><td class="num">{fmt::grouped(m.allocations.len() as u64)}</td></tr>
                    <tr><th scope="row">"Values"</th><td class="num">{fmt::grouped(m.values.len() as u64)}</td></tr>
                    <tr>
                        <th scope="row">"Total bytes"</th>
                        <td class="num total-bytes" data-bytes=total.to_string()>{fmt::bytes(total)}{xla_total}</td>
                    </tr>
                    <tr><th scope="row">"Schedule length"</th><td class="num">{schedule}</td></tr>
                </tbody>
            </table>
            <h3>"Memory spaces"</h3>
            <table class="spaces">
                <thead>
                    <tr>
                        <th scope="col">"Colour"</th>
                        <th scope="col" class="num">"Values"</th>
                        <th scope="col" class="num">"Allocated"</th>
                        <th scope="col" class="num">"Peak occupied"</th>
                        <th scope="col" class="num">"At step"</th>
                    </tr>
                </thead>
                <tbody>{spaces}</tbody>
            </table>
            {warnings}
        </section>
    }
}

fn space_row(s: &Space) -> impl IntoView {
    let swatch = format!("swatch c{}", s.color % 8);
    let label = format!("{} {}", s.color, memory_space_name(s.color));
    let peak_step = s
        .peak_time
        .map_or_else(|| "—".to_string(), |t| fmt::grouped(u64::from(t)));
    view! {
        <tr data-color=s.color.to_string()>
            <td><span class=swatch></span>{label}</td>
            <td class="num">{fmt::grouped(u64::from(s.value_count))}</td>
            <td class="num">{fmt::bytes(s.allocated_bytes)}</td>
            <td class="num">{fmt::bytes(s.peak_bytes)}</td>
            <td class="num">{peak_step}</td>
        </tr>
    }
}
