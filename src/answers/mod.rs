//! Answers: the questions an engineer fixing an out-of-memory error asks of one memory space
//! at one step, computed from the model and its analysis.
//!
//! Owns: the live set at any step with each value's share of the occupied bytes
//! ([`live`]), the curve's several peaks ([`peaks`]), what the live bytes are made of
//! ([`groups`]: op_name tree and source lines; [`categories`]), padding ([`padding`]),
//! capacity and headroom ([`capacity`]), idle stretches for rematerialisation or offload
//! ([`idle`]), XProf's figures beside XLA's and bufscope's own peaks ([`xprof`]), an
//! out-of-memory message held against the dump of its program ([`paired`]), the groupings
//! of such a message's listed buffers ([`oom`]), and what the
//! curve would be after rematerialising or offloading, with a plan for a capacity
//! ([`whatif`]).
//! Pure functions of a [`Module`](crate::model::Module) and its
//! [`Analysis`](crate::analysis::Analysis); every result type is `serde::Serialize` so
//! `bufscope summary --json` can print it.
//!
//! **How aliases are counted.** Several values can share bytes of one allocation (a
//! parameter and its in-place update, an operand handed to its user at the step both are
//! live). Every byte occupied at a step is credited to exactly one live value, its *owner*:
//! among the values covering the byte, the one defined latest (then the larger, then the
//! lower value index). A value's `bytes` is its share; its `size` is its own allocated size.
//! Groupings add up `bytes`, so every grouping sums to the occupied bytes of the step (the
//! curve's figure); each group also carries `value_bytes`, the sum of its members' own sizes,
//! which counts shared bytes once per value.

pub mod capacity;
pub mod categories;
pub mod groups;
pub mod idle;
pub mod live;
pub mod loops;
pub mod oom;
pub mod padding;
pub mod paired;
pub mod peaks;
pub mod sweep;
pub mod waste;
pub mod whatif;
pub mod xprof;

pub use live::{live_set, LiveSet, LiveValue};

use serde::Serialize;

use crate::analysis::Space;
use crate::model::Module;

/// What [`space_answers`] is asked.
#[derive(Clone, Debug)]
pub struct Options {
    /// A peak must reach this fraction of the highest ([`peaks::DEFAULT_FRACTION`]).
    pub peak_fraction: f64,
    /// A listed peak's prominence must reach this fraction of the highest
    /// ([`peaks::DEFAULT_PROMINENCE`]).
    pub peak_prominence: f64,
    /// Fold numbered repeats in the op_name tree.
    pub fold: bool,
    /// Rows kept in the ranked lists (source lines, padding, idle stretches).
    pub top: usize,
    pub capacity: Option<capacity::Capacity>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            peak_fraction: peaks::DEFAULT_FRACTION,
            peak_prominence: peaks::DEFAULT_PROMINENCE,
            fold: true,
            top: 20,
            capacity: None,
        }
    }
}

/// Every answer for one memory space at one step, ready to serialize.
#[derive(Clone, Debug, Serialize)]
pub struct SpaceAnswers {
    pub color: u32,
    pub step: u32,
    /// The curve at `step`: what every grouping sums to.
    pub occupied_bytes: u64,
    pub value_bytes: u64,
    pub live_values: u32,
    pub peaks: Vec<peaks::Peak>,
    /// The space's peaks as a list: those of `peaks` that stand out
    /// ([`peaks::prominent_peaks`]).
    pub listed_peaks: Vec<peaks::Peak>,
    pub xla_peak_step: Option<u32>,
    pub op_names: groups::OpNode,
    /// The first `top` rows.
    pub source_lines: Vec<groups::SourceLine>,
    pub categories: Vec<categories::CategoryRow>,
    pub padding: padding::SpacePadding,
    /// Σ (allocated − logical) over the values live at the space's peak.
    pub peak_padding_bytes: u64,
    /// The space's peak against the capacity asked for.
    pub capacity: Option<capacity::Verdict>,
    /// The first `top` rows.
    pub idle: idle::IdleAnswer,
    pub xprof: xprof::XprofFigures,
    /// XProf's peak heap (the name the summary JSON uses).
    pub xprof_peak_heap_bytes: u64,
    pub three_peaks: xprof::ThreePeaks,
}

/// Every answer for `space` at `step` (its peak when `None`, step 0 without one). For one
/// space; the summary makes the module's schedule index and categories once for all its
/// spaces ([`space_answers_but_idle`], [`top_idle`]).
pub fn space_answers(module: &Module, space: &Space, step: Option<u32>, options: &Options) -> SpaceAnswers {
    let live = space_live_set(module, space, step);
    let idle = top_idle(module, &idle::ScheduleIndex::new(module), &live, options.top);
    let cats = categories::Categories::new(module);
    let answers = space_answers_but_idle(module, &cats, space, &live, options);
    SpaceAnswers {
        idle,
        ..with_xprof(module, space, answers, xprof::xprof_figures(module, space))
    }
}

/// The values of `space` live at `step` (its peak when `None`, step 0 without one).
pub fn space_live_set(module: &Module, space: &Space, step: Option<u32>) -> LiveSet {
    live_set(module, space, step.or(space.peak_time).unwrap_or(0))
}

/// The first `top` idle candidates among `live` ([`idle::idle_ranking`]'s, found by
/// [`idle::top_idle_ranking`] without looking at most values).
pub fn top_idle(
    module: &Module,
    index: &idle::ScheduleIndex,
    live: &LiveSet,
    top: usize,
) -> idle::IdleAnswer {
    idle::top_idle_ranking(module, index, live, top)
}

/// Every answer for `space` at the step of `live` but the idle stretches, which need the
/// module's schedule index, and XProf's figures: its `idle` is left empty for
/// [`top_idle`]'s and its XProf figures for [`with_xprof`], so that a caller may compute
/// them at once ([`Both`]). `cats` are the module's categories, made once for all its
/// spaces.
pub fn space_answers_but_idle(
    module: &Module,
    cats: &categories::Categories,
    space: &Space,
    live: &LiveSet,
    options: &Options,
) -> SpaceAnswers {
    let mut source_lines = groups::by_source_line(module, live);
    source_lines.truncate(options.top);
    SpaceAnswers {
        color: space.color,
        step: live.step,
        occupied_bytes: live.occupied_bytes,
        value_bytes: live.value_bytes,
        live_values: live.values.len() as u32,
        peaks: peaks::peaks(&space.curve, options.peak_fraction),
        listed_peaks: peaks::prominent_peaks(
            &space.curve,
            options.peak_fraction,
            options.peak_prominence,
        ),
        xla_peak_step: peaks::xla_peak_step(module),
        op_names: groups::op_name_tree(module, live, options.fold),
        source_lines,
        categories: categories::by_category_with(module, cats, live),
        padding: padding::space_padding(module, space, live, options.top),
        peak_padding_bytes: padding::peak_padding_bytes(module, space),
        capacity: (options.capacity.as_ref())
            .filter(|c| c.holds(space.color))
            .map(|c| capacity::verdict(space.peak_bytes, c)),
        idle: idle::IdleAnswer {
            step: live.step,
            available: false,
            message: None,
            rows: Vec::new(),
        },
        xprof_peak_heap_bytes: 0,
        three_peaks: xprof::ThreePeaks::default(),
        xprof: xprof::XprofFigures::default(),
    }
}

/// `answers` (of `space`, from [`space_answers_but_idle`]) with `space`'s XProf figures
/// ([`xprof::xprof_figures`]) and the three peaks they are compared with.
pub fn with_xprof(module: &Module, space: &Space, answers: SpaceAnswers, xprof: xprof::XprofFigures) -> SpaceAnswers {
    SpaceAnswers {
        xprof_peak_heap_bytes: xprof.xprof_peak_heap_bytes,
        three_peaks: xprof::three_peaks(module, space, &xprof),
        xprof,
        ..answers
    }
}

/// Runs two pieces of work that share only what they read, maybe at once. The core has no
/// threads: [`in_turn`] runs one after the other; the command line passes one that runs
/// them on two threads.
pub type Both = fn(&mut (dyn FnMut() + Send), &mut (dyn FnMut() + Send));

/// [`Both`]: the first, then the second.
pub fn in_turn(first: &mut (dyn FnMut() + Send), second: &mut (dyn FnMut() + Send)) {
    first();
    second();
}
