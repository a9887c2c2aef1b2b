//! The panels around the diagrams: the module header ([`Header`]: name and key figures, in
//! the workspace's bar), what else there is about the module ([`ModuleInfo`]), the search box
//! ([`search`]), the live-set table (the values live at the chosen step, the peak at first,
//! and those without a live range: [`live_table`]), the details of the selected value ([`details`]) and the line naming the
//! hovered value ([`HoverLine`]). They read and write the shared [`Focus`] and never talk to
//! each other or to the diagrams directly. Text from dumps is only ever shown as text.

mod answers;
mod details;
mod live_table;
mod search;

pub use answers::Answers;
pub use details::Details;
pub use live_table::{prepare_table, LiveSetTable};
pub use search::SearchBox;

use bufscope::analysis::Space;
use bufscope::model::{memory_space_label, Module};
use bufscope::query;
use leptos::prelude::*;

use super::swatch;
use super::state::Focus;

/// A memory space of `m` as the page names it ([`memory_space_label`]): the colour number,
/// XLA's name, and for space 0 the memory of `m`'s backend (`0 default (HBM)` on a TPU,
/// `0 default (host memory)` on a CPU), `1 vmem`, …, `7 color_7`.
pub fn space_label(color: u32, m: &Module) -> String {
    memory_space_label(color, m.backend())
}

/// The memory space a panel shows first: the one with the highest peak (what fills memory
/// most), the lower colour on a tie.
pub fn fullest_space(spaces: &[Space]) -> u32 {
    spaces
        .iter()
        .max_by_key(|s| (s.peak_bytes, std::cmp::Reverse(s.color)))
        .map_or(0, |s| s.color)
}

/// For text shown in passing (labels, the tooltip): a dump may hold names of 300,000
/// characters, which would make a line of the page as long. The details pane and the
/// titles show the whole text.
use bufscope::text::clip_middle;
use bufscope::units;

/// The most characters of a text in a table cell or a one-line label that cuts it with an
/// ellipsis anyway: far more than fits, far less than a 300,000-character name, whose
/// layout alone would cost a frame. The cell's title has the whole text.
pub const CELL_CHARS: usize = 1000;

/// The most characters of an instruction name in a step label.
const STEP_NAME_CHARS: usize = 120;

/// `step N (instruction)`, or `step N (end of program)` at XLA's virtual last step.
fn step_label(m: &Module, step: u32) -> String {
    match query::instruction_at(m, step) {
        Some(name) => format!(
            "{} ({})",
            units::group_digits(u64::from(step)),
            clip_middle(name, STEP_NAME_CHARS)
        ),
        None if m.schedule.as_ref().is_some_and(|s| step >= s.max) => {
            format!("{} (end of program)", units::group_digits(u64::from(step)))
        }
        None => units::group_digits(u64::from(step)),
    }
}

/// The module's header, one line of the workspace's bar: its name and key figures (the
/// highest peak of its memory spaces, allocations, values, XLA's peak). Everything else
/// about the module is in [`ModuleInfo`]. (The diagrams are drawn by [`super::diagram`].)
#[component]
pub fn Header(focus: Focus) -> impl IntoView {
    let shown = focus.shown();
    let m = &shown.module;
    let spaces = &shown.analysis.spaces;
    let fullest = fullest_space(spaces);
    let peak = spaces.iter().find(|s| s.color == fullest).map(|s| {
        let at = (spaces.len() > 1).then(|| format!(" in {}", space_label(s.color, m)));
        view! {
            <span class="figure figure-peak" data-bytes=s.peak_bytes.to_string()>
                "peak "<span class="fig-value">{units::human_bytes(s.peak_bytes)}</span>{at}
            </span>
        }
    });
    let xla = m
        .schedule
        .as_ref()
        .and_then(|s| s.peak.as_ref())
        .filter(|_| !m.schedule.as_ref().is_some_and(|s| s.peak_undetermined))
        .map(|p| {
            view! {
                <span class="figure">"XLA peak "<span class="fig-value">{units::human_bytes(query::xla_peak_bytes(p))}</span></span>
            }
        });
    view! {
        <div class="module-header" title=format!("{}: {}", m.name, m.files.join(", "))>
            <h2 class="module-name" data-name=m.name.clone()>{shown.label.clone()}</h2>
            <p class="module-figures">
                {peak}
                <span class="figure">{units::count(m.allocations.len(), "allocation")}</span>
                <span class="figure">{units::count(m.values.len(), "value")}</span>
                {xla}
            </p>
        </div>
    }
}

/// What else there is to know about the module: its files, figures, memory spaces with their
/// peaks, and the warnings while reading; folded, below the diagrams.
#[component]
pub fn ModuleInfo(focus: Focus) -> impl IntoView {
    let shown = focus.shown();
    let m = &shown.module;
    let spaces = shown
        .analysis
        .spaces
        .iter()
        .map(|s| space_row(m, s))
        .collect_view();
    view! {
        <section class="module-info" aria-label="The module">
            <h3>"Module"</h3>
            <p class="module-files">{m.files.join(", ")}</p>
            {module_figures(m)}
            <h3>"Memory spaces"</h3>
            <div class="table-scroll">
                <table class="spaces">
                    <thead>
                        <tr>
                            <th scope="col">"Memory space"</th>
                            <th scope="col" class="num">"Values"</th>
                            <th scope="col" class="num">"Allocated"</th>
                            <th scope="col" class="num">"Peak occupied"</th>
                            <th scope="col" class="num">"Live at peak"</th>
                            <th scope="col">"At step"</th>
                        </tr>
                    </thead>
                    <tbody>{spaces}</tbody>
                </table>
            </div>
            {warnings(m)}
        </section>
    }
}

/// The module's figures: allocations, values, total bytes (and the dump's own total when it
/// differs), schedule length, XLA's peak list.
fn module_figures(m: &Module) -> impl IntoView {
    let total = m.total_bytes();
    let xla_total = m.total_bytes_line.filter(|&t| t != total).map(|t| {
        view! { <span class="aside">{format!(" — the dump says {}", units::exact_bytes(t))}</span> }
    });
    let schedule = m.schedule.as_ref().map_or_else(
        || "— (no live-range section)".to_string(),
        |s| format!("{} steps", units::group_digits(u64::from(s.max))),
    );
    let xla_peak = xla_peak(m).map(|text| {
        view! {
            <tr>
                <th scope="row">"XLA's peak list"</th>
                <td class="num xla-peak">{text}</td>
            </tr>
        }
    });
    view! {
        <table class="summary">
            <tbody>
                <tr><th scope="row">"Allocations"</th><td class="num">{units::group_digits(m.allocations.len() as u64)}</td></tr>
                <tr><th scope="row">"Values"</th><td class="num">{units::group_digits(m.values.len() as u64)}</td></tr>
                <tr>
                    <th scope="row">"Total bytes"</th>
                    <td class="num total-bytes" data-bytes=total.to_string()>{units::exact_bytes(total)}{xla_total}</td>
                </tr>
                <tr><th scope="row">"Schedule length"</th><td class="num schedule-length">{schedule}</td></tr>
                {xla_peak}
            </tbody>
        </table>
    }
}

/// What XLA itself printed as its peak, for comparison with the occupied-bytes peak; `None`
/// when the dump printed none.
fn xla_peak(m: &Module) -> Option<String> {
    let s = m.schedule.as_ref()?;
    if s.peak_undetermined {
        return Some("could not be determined (unbounded dynamic shape)".to_string());
    }
    let p = s.peak.as_ref()?;
    Some(format!(
        "{} at step {}, {} values",
        units::exact_bytes(query::xla_peak_bytes(p)),
        step_label(m, p.time),
        units::group_digits(p.entries.len() as u64)
    ))
}

/// The warnings while reading, folded (the first 50 of them).
fn warnings(m: &Module) -> Option<impl IntoView> {
    const SHOWN: usize = 50;
    let count = m.warnings.len();
    (count > 0).then(|| {
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
    })
}

/// One memory space's row of the header's table.
fn space_row(m: &Module, s: &Space) -> impl IntoView {
    let swatch = swatch::class(s.color);
    let peak_step = s
        .peak_time
        .map_or_else(|| "—".to_string(), |t| step_label(m, t));
    view! {
        <tr data-color=s.color.to_string()>
            <td class="space-name"><span class=swatch></span>{space_label(s.color, m)}</td>
            <td class="num">{units::group_digits(u64::from(s.value_count))}</td>
            <td class="num" data-bytes=s.allocated_bytes.to_string()>{units::exact_bytes(s.allocated_bytes)}</td>
            <td class="num peak-bytes" data-bytes=s.peak_bytes.to_string()>{units::exact_bytes(s.peak_bytes)}</td>
            <td class="num">{units::group_digits(s.live_at_peak.len() as u64)}</td>
            <td class="peak-step">{peak_step}</td>
        </tr>
    }
}

/// One unobtrusive line naming the value under the pointer (the diagrams' tooltip says
/// more); empty when nothing is hovered.
#[component]
pub fn HoverLine(focus: Focus) -> impl IntoView {
    let text = move || {
        let v = focus.hovered.get()?;
        let shown = focus.shown();
        let m = &shown.module;
        let value = m.values.get(v as usize)?;
        Some(format!(
            "{} · {} · {}",
            clip_middle(&bufscope::query::display_name(m, value), CELL_CHARS),
            units::human_bytes(value.size),
            clip_middle(m.str(value.shape), CELL_CHARS)
        ))
    };
    view! { <p class="hover-line" aria-hidden="true">{text}</p> }
}
