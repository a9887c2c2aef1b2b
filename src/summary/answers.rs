//! The answers of [`crate::answers`] in `bufscope summary`: per memory space, the figures the
//! summary JSON carries after each space's existing fields ([`SpaceExtras`]), and the compact
//! text block the table prints under its rows ([`space_block`]).
//!
//! Owns: which answers the summary shows (the `top` rows of each ranked list, op_name groups
//! flattened from the folded tree, names in place of value indices) and their text layout.
//! The figures themselves are computed in [`crate::answers`].

use crate::analysis::Analysis;
use crate::answers::capacity::{Capacity, Verdict};
use crate::answers::categories::{Categories, CategoryRow};
use crate::answers::groups::{percent, OpNode, SourceLine};
use crate::answers::idle::{IdleRow, ScheduleIndex};
use crate::answers::loops::ModuleLoops;
use crate::answers::padding::ValuePadding;
use crate::answers::peaks::Peak;
use crate::answers::xprof::{xprof_figures, ThreePeaks};
use crate::answers::{
    space_answers_but_idle, space_live_set, top_idle, with_xprof, Both, Options, SpaceAnswers,
};
use crate::model::{memory_space_name, Module};
use crate::summary::{align, printable};
use crate::text::{clip_front, clip_source};
use crate::units::{group_digits, human_bytes};
use serde::Serialize;

/// What the summary's answers are asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryOptions {
    /// Rows of each ranked list (source lines, op_name groups, padded values, idle values,
    /// peaks).
    pub top: usize,
    /// The capacity each space's peak is held against.
    pub capacity: Option<Capacity>,
    /// The step the live set is taken at; each space's peak when `None`.
    pub step: Option<u32>,
    /// The capacity of one memory space (by colour) where `capacity` is none: an error
    /// message's, paired with its dump ([`crate::answers::paired`]).
    pub space_capacity: Option<(u32, Capacity)>,
}

impl Default for SummaryOptions {
    fn default() -> SummaryOptions {
        SummaryOptions {
            top: 5,
            capacity: None,
            step: None,
            space_capacity: None,
        }
    }
}

/// The figures one memory space's summary adds after its existing fields.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpaceExtras {
    /// XProf's peak heap ([`crate::answers::xprof`]).
    pub xprof_peak_heap_bytes: u64,
    /// XProf's fragmentation, a fraction from 0 to 1.
    pub xprof_fragmentation: f64,
    /// Σ (allocated − logical size) over the values live at `peak_time`.
    pub peak_padding_bytes: u64,
    /// Σ (allocated − logical size) over every value of the space.
    pub padding_bytes_all_values: u64,
    /// XLA's peak-list figure (all memory spaces together) and its step.
    pub xla_peak_bytes: Option<u64>,
    pub xla_peak_time: Option<u32>,
    /// bufscope's occupied peak, XLA's peak list and XProf's peak heap, each explained.
    pub three_peaks: ThreePeaks,
    pub answers: StepAnswers,
    /// The space's peaks as a list ([`crate::answers::peaks::prominent_peaks`]), by step.
    pub peaks: Vec<PeakAt>,
}

/// One listed peak: its step (`time`, as `peak_time`) and occupied bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PeakAt {
    pub time: u32,
    pub bytes: u64,
}

/// What the live bytes of a space are made of at one step (the peak by default).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepAnswers {
    pub step: u32,
    /// The curve at `step`: what each grouping sums to (over all its rows).
    pub occupied_bytes: u64,
    pub live_values: u32,
    /// The highest local maxima of the curve (at least half the highest), by step.
    pub peaks: Vec<Peak>,
    pub source_lines: Vec<SourceLine>,
    /// op_name paths with numbered repeats folded (`layer_#×500`), by the bytes of the
    /// values whose path ends there.
    pub op_name_groups: Vec<OpGroup>,
    pub categories: Vec<CategoryRow>,
    /// Σ (allocated − logical size) over the values live at `step`.
    pub padding_bytes: u64,
    pub top_padded_values: Vec<PaddedValue>,
    pub idle: IdleCandidates,
    /// The space's peak against `--capacity`; `null` without one.
    pub capacity: Option<Verdict>,
}

/// The values whose folded op_name path ends at one node of the tree.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpGroup {
    /// Folded segments joined by `/`; a segment standing for several is followed by `×N`.
    pub path: String,
    pub bytes: u64,
    pub value_bytes: u64,
    pub count: u32,
    /// `bytes` as a percentage of the step's occupied bytes.
    pub percent: f64,
}

/// A value of the ranked lists, by name beside its index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Named<T> {
    pub name: String,
    /// A parameter's pytree path from the HLO text beside the dump
    /// ([`crate::query::parameter_path`]); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(flatten)]
    pub row: T,
}

/// A value live at the step with padding.
pub type PaddedValue = Named<ValuePadding>;
/// A value live at the step, with its longest idle stretch.
pub type IdleCandidate = Named<IdleRow>;

/// Rematerialisation or offload candidates at the step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IdleCandidates {
    /// `false` when the dump has no `Used values`; `message` says what is needed.
    pub available: bool,
    pub message: Option<String>,
    pub rows: Vec<IdleCandidate>,
}

/// The extras of every space of `analysis`, in its order, and the module's loops; the
/// loops, then the idle candidates (the schedule index, built once, and the uses of the live
/// values) are found beside the other answers by `both` ([`crate::answers::in_turn`]: one
/// after the other).
pub fn module_extras(
    module: &Module,
    analysis: &Analysis,
    options: &SummaryOptions,
    both: Both,
) -> (Vec<SpaceExtras>, Option<ModuleLoops>) {
    let asked = Options {
        top: options.top,
        capacity: options.capacity.clone(),
        ..Options::default()
    };
    let lives: Vec<_> = (analysis.spaces.iter())
        .map(|space| space_live_set(module, space, options.step))
        .collect();
    let (mut idle, mut answers, mut loops, mut xprof) = (Vec::new(), Vec::new(), None, Vec::new());
    both(
        &mut || {
            // The loops and what they hold (with the HLO text), for the summary and for the
            // idle stretches, and XProf's figures, beside the other answers: so the two
            // halves are about even (docs/benchmarks.md).
            loops = super::loops::module_loops(module);
            let index = ScheduleIndex::with_loops(module, loops.as_ref());
            idle = (lives.iter())
                .map(|live| top_idle(module, &index, live, options.top))
                .collect();
            xprof = (analysis.spaces.iter())
                .map(|space| xprof_figures(module, space))
                .collect();
        },
        &mut || {
            let cats = Categories::new(module);
            answers = (analysis.spaces.iter().zip(&lives))
                .map(|(space, live)| {
                    let own = match (&asked.capacity, &options.space_capacity) {
                        (None, Some((color, c))) if *color == space.color => Some(c.clone()),
                        _ => None,
                    };
                    let with_own = own.map(|c| Options {
                        capacity: Some(c),
                        ..asked.clone()
                    });
                    let options = with_own.as_ref().unwrap_or(&asked);
                    space_answers_but_idle(module, &cats, space, live, options)
                })
                .collect();
        },
    );
    let extras = (answers.into_iter().zip(idle).zip(xprof).zip(&analysis.spaces))
        .map(|(((a, idle), xprof), space)| {
            let a = with_xprof(module, space, a, xprof);
            extras(module, SpaceAnswers { idle, ..a }, options.top)
        })
        .collect();
    (extras, loops)
}

fn extras(module: &Module, a: SpaceAnswers, top: usize) -> SpaceExtras {
    let listed = (a.listed_peaks.iter())
        .map(|p| PeakAt {
            time: p.step,
            bytes: p.bytes,
        })
        .collect();
    let mut peaks = a.peaks;
    peaks.sort_by(|x, y| y.bytes.cmp(&x.bytes).then(x.step.cmp(&y.step)));
    peaks.truncate(top);
    peaks.sort_by_key(|p| p.step);
    let mut op_name_groups = Vec::new();
    flatten(&a.op_names, "", a.occupied_bytes, &mut op_name_groups);
    op_name_groups.sort_by(|x, y| y.bytes.cmp(&x.bytes).then_with(|| x.path.cmp(&y.path)));
    op_name_groups.truncate(top);
    let answers = StepAnswers {
        step: a.step,
        occupied_bytes: a.occupied_bytes,
        live_values: a.live_values,
        peaks,
        source_lines: a.source_lines,
        op_name_groups,
        categories: a.categories,
        padding_bytes: a.padding.step_padding_bytes,
        top_padded_values: (a.padding.top.into_iter())
            .map(|row| named(module, row.value, row))
            .collect(),
        idle: IdleCandidates {
            available: a.idle.available,
            message: a.idle.message,
            rows: (a.idle.rows.into_iter())
                .map(|row| named(module, row.value, row))
                .collect(),
        },
        capacity: a.capacity,
    };
    SpaceExtras {
        xprof_peak_heap_bytes: a.xprof_peak_heap_bytes,
        xprof_fragmentation: a.xprof.fragmentation,
        peak_padding_bytes: a.peak_padding_bytes,
        padding_bytes_all_values: a.padding.all_padding_bytes,
        xla_peak_bytes: a.three_peaks.xla.bytes,
        xla_peak_time: a.three_peaks.xla.step,
        three_peaks: a.three_peaks,
        answers,
        peaks: listed,
    }
}

/// `row` of value `v`, by name.
fn named<T>(module: &Module, v: u32, row: T) -> Named<T> {
    let value = module.values.get(v as usize);
    let name = value.map_or_else(String::new, |x| module.value_name(x));
    let path = value
        .and_then(|x| crate::query::parameter_path(module, x))
        .map(str::to_string);
    Named { name, path, row }
}

/// One [`OpGroup`] per node of the tree with values of its own: a node's figures less its
/// children's (each value sits under one path).
fn flatten(node: &OpNode, prefix: &str, whole: u64, out: &mut Vec<OpGroup>) {
    let path = if node.label.is_empty() && prefix.is_empty() {
        String::new()
    } else {
        let segment = if node.repeats > 1 {
            format!("{}×{}", node.label, node.repeats)
        } else {
            node.label.clone()
        };
        if prefix.is_empty() {
            segment
        } else {
            format!("{prefix}/{segment}")
        }
    };
    if !node.values.is_empty() {
        let (mut bytes, mut value_bytes) = (node.bytes, node.value_bytes);
        for c in &node.children {
            bytes = bytes.saturating_sub(c.bytes);
            value_bytes = value_bytes.saturating_sub(c.value_bytes);
        }
        out.push(OpGroup {
            path: path.clone(),
            bytes,
            value_bytes,
            count: node.values.len() as u32,
            percent: percent(bytes, whole),
        });
    }
    for child in &node.children {
        flatten(child, &path, whole, out);
    }
}

/// Width the text block keeps to.
const WIDTH: usize = 100;

/// The text block of one memory space: the step's live bytes, the three peaks explained,
/// XProf's figures, padding, capacity, then the ranked lists.
pub fn space_block(color: u32, peak_time: Option<u32>, x: &SpaceExtras) -> String {
    let a = &x.answers;
    let which = if Some(a.step) == peak_time {
        ", the peak"
    } else {
        ""
    };
    let mut out = format!(
        "  memory space {color} ({}) at step {}{which}: {} occupied by {} live value{}\n",
        memory_space_name(color),
        group_digits(u64::from(a.step)),
        human_bytes(a.occupied_bytes),
        group_digits(u64::from(a.live_values)),
        if a.live_values == 1 { "" } else { "s" },
    );
    out.push_str("    three peaks:\n");
    for figure in [
        &x.three_peaks.occupied,
        &x.three_peaks.xla,
        &x.three_peaks.xprof,
    ] {
        out.push_str(&wrap(&figure.sentence, "      - ", "        "));
    }
    out.push_str(&format!(
        "    XProf: peak heap {}, fragmentation {:.1} %\n",
        human_bytes(x.xprof_peak_heap_bytes),
        x.xprof_fragmentation * 100.0
    ));
    let at_step = if which.is_empty() {
        format!(
            ", {} at step {}",
            human_bytes(a.padding_bytes),
            group_digits(u64::from(a.step))
        )
    } else {
        String::new()
    };
    out.push_str(&format!(
        "    padding: {} at the peak{at_step}, {} over all values\n",
        human_bytes(x.peak_padding_bytes),
        human_bytes(x.padding_bytes_all_values),
    ));
    if let Some(v) = &a.capacity {
        out.push_str(&wrap(&v.sentence, "    capacity: ", "      "));
    }
    out.push_str(&peak_list(&x.peaks));
    out.push_str(&lists(a));
    out
}

/// The listed peaks, by step, each with its share of the highest.
fn peak_list(peaks: &[PeakAt]) -> String {
    if peaks.is_empty() {
        return String::new();
    }
    let highest = peaks.iter().map(|p| p.bytes).max().unwrap_or(0);
    let items: Vec<String> = (peaks.iter())
        .map(|p| {
            format!(
                "step {}: {} ({:.0} %)",
                group_digits(u64::from(p.time)),
                human_bytes(p.bytes),
                percent(p.bytes, highest)
            )
        })
        .collect();
    let head = format!(
        "    peaks ({}, prominence at least {:.0} % of the highest): ",
        peaks.len(),
        crate::answers::peaks::DEFAULT_PROMINENCE * 100.0
    );
    wrap(&items.join(", "), &head, "      ")
}

/// The ranked lists of a step, each a small aligned table.
fn lists(a: &StepAnswers) -> String {
    let mut out = String::new();
    let pct = |p: f64| format!("{p:.1} %");
    let mut rows = vec![head(["source line", "bytes", "share", "running"])];
    rows.extend(a.source_lines.iter().map(|s| {
        [
            clip_source(&s.label(), 60),
            human_bytes(s.bytes),
            pct(s.percent),
            human_bytes(s.running_bytes),
        ]
    }));
    out.push_str(&table(&rows, &[false, true, true, true]));
    let mut rows = vec![head(["op_name group (folded)", "bytes", "share", "values"])];
    rows.extend(a.op_name_groups.iter().map(|g| {
        [
            clip_front(&g.path, 60),
            human_bytes(g.bytes),
            pct(g.percent),
            group_digits(u64::from(g.count)),
        ]
    }));
    out.push_str(&table(&rows, &[false, true, true, true]));
    let mut rows = vec![head(["category", "bytes", "share", "values"])];
    rows.extend(a.categories.iter().map(|c| {
        let label = if c.heuristic {
            format!("{} (heuristic)", c.label)
        } else {
            c.label.to_string()
        };
        [
            label,
            human_bytes(c.bytes),
            pct(c.percent),
            group_digits(u64::from(c.count)),
        ]
    }));
    out.push_str(&table(&rows, &[false, true, true, true]));
    if !a.top_padded_values.is_empty() {
        let mut rows = vec![head(["most padding", "size", "padding", "logical"])];
        rows.extend(a.top_padded_values.iter().map(|v| {
            let p = &v.row;
            [
                clip_front(&v.name, 60),
                human_bytes(p.size),
                human_bytes(p.padding),
                p.logical.map_or_else(|| "?".to_string(), human_bytes),
            ]
        }));
        out.push_str(&table(&rows, &[false, true, true, true]));
    }
    out.push_str(&idle_list(&a.idle));
    out
}

fn idle_list(idle: &IdleCandidates) -> String {
    if !idle.available {
        let message = idle.message.as_deref().unwrap_or("");
        return wrap(message, "    remat/offload: ", "      ");
    }
    let mut rows = vec![head([
        "remat/offload candidate",
        "size",
        "idle steps",
        "from → to",
    ])];
    rows.extend(idle.rows.iter().map(|c| {
        let s = c.row.longest;
        [
            clip_front(&c.name, 50),
            human_bytes(c.row.size),
            group_digits(u64::from(s.idle_steps)),
            format!(
                "{} → {}{}",
                group_digits(u64::from(s.from)),
                group_digits(u64::from(s.to)),
                if s.to_use { " (use)" } else { " (end)" }
            ),
        ]
    }));
    table(&rows, &[false, true, true, true])
}

fn head(cells: [&str; 4]) -> [String; 4] {
    cells.map(str::to_string)
}

/// An aligned table indented by six spaces; names made safe for a terminal.
fn table(rows: &[[String; 4]], right: &[bool; 4]) -> String {
    let safe: Vec<[String; 4]> = rows
        .iter()
        .map(|r| r.clone().map(|c| printable(&c).into_owned()))
        .collect();
    align(&safe, right)
        .lines()
        .map(|l| format!("  {l}\n"))
        .collect()
}

/// `text` wrapped at [`WIDTH`] on spaces: the first line after `first`, the rest after
/// `rest`; made safe for a terminal.
fn wrap(text: &str, first: &str, rest: &str) -> String {
    super::wrap(&printable(text), WIDTH, first, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_to_the_width() {
        let text = "word ".repeat(60);
        let wrapped = wrap(&text, "    x: ", "      ");
        assert!(wrapped.lines().count() > 2, "{wrapped}");
        for line in wrapped.lines() {
            assert!(line.chars().count() <= WIDTH, "{line:?}");
            assert!(line.starts_with("    x: word") || line.starts_with("      word"));
        }
        assert_eq!(wrapped.matches("word").count(), 60);
        assert!(!wrap("esc\u{1b}[31m", "", "").contains('\u{1b}'));
    }
}
