//! Fit to a capacity: the smallest plan of edits whose estimate ([`super::estimate`]) fits,
//! or what remains above the capacity when nothing more can go.
//!
//! Owns: the candidates and their order, the plan and the sentence about what remains.
//!
//! At the estimated peak, the candidates that would free bytes there are taken in this
//! order until they cover the excess: a loop's stacked outputs (largest first), then values
//! idle across the peak by bytes × idle steps (rematerialised), then parameters and optimizer
//! state (offload only: they are the program's inputs, nothing recomputes them), marked so.
//! The estimate is made again and the next peak treated alike, until it fits or no candidate
//! is left at the peak. Then, in a plan of up to [`PRUNE`] edits, each edit the plan can do
//! without is dropped, last taken first, so such a plan is minimal (no edit can go and the
//! estimate still fit; for a plan that does not fit, none can go without raising its peak). Offloading arguments can be ruled
//! out ([`FitOptions`]); where the plan offloads some or does not fit, it says how many bytes
//! the arguments hold at the peak and what to do about them.

use hashbrown::HashSet;
use serde::Serialize;

use super::checkpoint::{cheapest, Applied, Checkpoint, Tried};
use super::flops::{flops_added, no_policy, step_flops};
use super::policy::{policy, stock, Policy};
use super::{estimate_with, offload_gap, remat_gap, Edits, Estimate, StackedOutput, StretchCache};
use crate::analysis::Space;
use crate::answers::capacity::Capacity;
use crate::answers::categories::{Categories, Category};
use crate::answers::idle::{idle_ranking, value_uses, ScheduleIndex};
use crate::answers::live_set;
use crate::model::Module;
use crate::units::human_bytes;

/// What a plan does to one thing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A loop's stacked per-iteration output rematerialised.
    RematLoop,
    /// A loop's stacked per-iteration output offloaded to the host (an offload policy's).
    OffloadLoop,
    Remat,
    Offload,
}

/// One edit of a plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlanStep {
    pub action: Action,
    /// The value (`name{index}`) or the loop output (`while.103{2}`).
    pub what: String,
    /// Bytes it frees at the peak it was taken for.
    pub bytes_at_peak: u64,
    /// A parameter or optimizer state: only offloading can take it off the device.
    pub offload_only: bool,
    #[serde(skip)]
    pub value: Option<u32>,
    #[serde(skip)]
    pub stacked: Option<usize>,
}

/// What stays above the capacity when no candidate is left at the peak.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Remains {
    pub step: u32,
    pub excess_bytes: u64,
    /// The bytes live at that step in the estimate, by category, largest first.
    pub categories: Vec<(String, u64)>,
    /// Parameters and optimizer state live there (the program's arguments).
    pub argument_bytes: u64,
    pub sentence: String,
}

/// Rounds of candidates taken at the estimated peak before the search stops.
pub const ROUNDS: usize = 32;
/// The pruning tries to drop every edit of a plan of up to this many (so such a plan is
/// minimal); of a longer plan, none (each try is an estimate).
pub const PRUNE: usize = 64;

/// What a plan may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FitOptions {
    /// Offload the program's arguments (parameters, optimizer state) as a last resort, and
    /// try the offloading stock policy.
    pub offload_arguments: bool,
    /// Try the stock checkpoint policies first ([`cheapest`]): the cheapest in FLOPs that fits
    /// is the plan.
    pub policies: bool,
}

impl Default for FitOptions {
    fn default() -> FitOptions {
        FitOptions { offload_arguments: true, policies: false }
    }
}

/// The program's arguments live at the real peak: what sharding or offloading could take.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Arguments {
    pub parameter_bytes: u64,
    pub optimizer_state_bytes: u64,
    /// Inputs and parameters whose names tell nothing.
    pub other_bytes: u64,
    /// What to do about them, when the plan offloads arguments or does not fit.
    pub sentence: Option<String>,
}

/// The plan for one memory space.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    pub color: u32,
    pub capacity_bytes: u64,
    pub plan: Vec<PlanStep>,
    pub peak_before: u64,
    pub peak_after: u64,
    pub step_after: Option<u32>,
    pub fits: bool,
    pub remains: Option<Remains>,
    /// The arguments live at the real peak.
    pub arguments_at_peak: Arguments,
    /// The plan in code terms ([`super::policy`]); `None` for no edit.
    pub policy: Option<Policy>,
    /// When the plan does not fit or offloads arguments: how many devices of this kind the
    /// sharded state needs instead ([`devices_needed`]); `None` without the HLO text.
    pub devices_needed: Option<DevicesNeeded>,
    /// The stock policies tried, when [`FitOptions::policies`].
    pub policies_tried: Vec<Tried>,
    /// What the plan's recomputation costs and one step of the program, in FLOPs per device
    /// ([`super::flops`]; `None` without the HLO text).
    pub flops_added: Option<u64>,
    pub step_flops: Option<u64>,
    #[serde(skip)]
    pub estimate: Estimate,
}

impl Plan {
    /// The stock policy the plan is, when [`fit`] found one that fits (its plan is the
    /// policy's, [`policy_plan`]).
    pub fn checkpoint(&self) -> Option<&str> {
        self.policies_tried.iter().any(|t| t.fits).then(|| self.policy.as_ref().map(|p| p.name.as_str())).flatten()
    }
}

/// Whether a category is an argument of the program (offload only).
fn is_argument(c: Category) -> bool {
    matches!(
        c,
        Category::ModelParameters | Category::OptimizerState | Category::Inputs | Category::Parameters
    )
}

/// Parameters and optimizer state: what FSDP shards.
fn is_state(c: Category) -> bool {
    matches!(c, Category::ModelParameters | Category::OptimizerState)
}

/// How many devices of the same kind the sharded state needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DevicesNeeded {
    /// Devices running the program now (`num_partitions` × `replica_count`).
    pub now: u32,
    /// Devices needed; `None` when no number of devices fits (the rest alone exceeds the
    /// capacity).
    pub needed: Option<u64>,
    /// Parameters and optimizer state per device at the estimated peak.
    pub state_bytes: u64,
    /// Everything else there, after the plan's rematerialisations.
    pub rest_bytes: u64,
    pub assumption: &'static str,
    pub sentence: String,
}

/// What [`devices_needed`] assumes.
pub const DEVICES_ASSUMPTION: &str = "Parameters and optimizer state shard evenly over the devices (FSDP: N devices hold N × the state per device now, spread over N' devices), everything else per device stays as it is (the same per-device batch, the plan's rematerialisations kept, its offloads of arguments replaced by sharding), judged at the estimated peak's step.";

/// Devices needed: with `state` bytes of parameters and optimizer state per device on `now`
/// devices and `rest` other bytes at the peak, `now' ≥ now × state / (capacity − rest)`:
/// the state shards evenly, the rest stays; none when `rest ≥ capacity`.
pub fn devices_needed(now: u32, state: u64, rest: u64, capacity: u64, kind: &str) -> DevicesNeeded {
    let room = capacity.saturating_sub(rest);
    let total = u128::from(now) * u128::from(state);
    let needed = (room > 0).then(|| total.div_ceil(u128::from(room)).max(1)).map(|n| u64::try_from(n).unwrap_or(u64::MAX));
    let sentence = match needed {
        _ if state == 0 => format!(
            "No parameters or optimizer state are live at the estimated peak: more devices of this kind ({kind}) do not lower it."
        ),
        Some(n) if n <= u64::from(now) => format!(
            "The {} of parameters and optimizer state already fit beside the rest on {now} devices if kept on the device: sharding them instead of offloading needs no more devices.",
            human_bytes(state)
        ),
        Some(n) => format!(
            "If the {} of parameters and optimizer state per device shard evenly over more devices (FSDP, the same per-device batch): {n} devices of this kind ({kind}; now {now}), {} more.",
            human_bytes(state),
            n - u64::from(now)
        ),
        None => format!(
            "No number of devices of this kind ({kind}) fits: without the {} of parameters and optimizer state the rest alone is {}, over the capacity of {}.",
            human_bytes(state),
            human_bytes(rest),
            human_bytes(capacity)
        ),
    };
    DevicesNeeded { now, needed, state_bytes: state, rest_bytes: rest, assumption: DEVICES_ASSUMPTION, sentence }
}

/// The edits of a plan.
pub fn edits_of(plan: &[PlanStep], stacked: &[StackedOutput]) -> Edits {
    let mut e = Edits::default();
    for s in plan {
        match (s.action, s.value, s.stacked) {
            (Action::RematLoop, _, Some(i)) => e.loops.extend(stacked.get(i).cloned()),
            (Action::OffloadLoop, _, Some(i)) => e.offload_loops.extend(stacked.get(i).cloned()),
            (Action::Remat, Some(v), _) => e.remat.push(v),
            (Action::Offload, Some(v), _) => e.offload.push(v),
            _ => {}
        }
    }
    e
}

/// The candidates that free bytes at step `t`, in the plan's order, leaving out what the plan
/// has taken.
fn candidates_at(
    module: &Module,
    space: &Space,
    index: &ScheduleIndex,
    stacked: &[StackedOutput],
    taken: &HashSet<(Action, u32)>,
    t: u32,
    options: FitOptions,
) -> Vec<PlanStep> {
    let mut out = Vec::new();
    let in_chains: HashSet<u32> = stacked.iter().flat_map(|s| s.chain.iter().copied()).collect();
    let mut loops: Vec<(usize, &StackedOutput)> = stacked
        .iter()
        .enumerate()
        .filter(|(i, s)| {
            s.color == space.color && !taken.contains(&(Action::RematLoop, *i as u32)) && s.life.0 <= t && t <= s.life.1
        })
        .collect();
    loops.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then(a.0.cmp(&b.0)));
    for (i, s) in loops {
        let back = s.recomputed_steps(module, index).is_some_and(|(lo, hi)| lo <= t && t <= hi);
        out.push(PlanStep {
            action: Action::RematLoop,
            what: s.name.clone(),
            bytes_at_peak: s.bytes - if back { s.per_iteration_bytes() } else { 0 },
            offload_only: false,
            value: None,
            stacked: Some(i),
        });
    }
    let live = live_set(module, space, t);
    let ranked = idle_ranking(module, index, &live);
    let credited = |v: u32| live.values.iter().find(|l| l.value == v).map_or(0, |l| l.bytes);
    // Whether a value is an argument needs no dataflow: a parameter's category is its own.
    let cats = Categories::default();
    let (mut values, mut args) = (Vec::new(), Vec::new());
    for row in ranked.rows {
        let Some(s) = row.across_step else { continue };
        if in_chains.contains(&row.value) {
            continue;
        }
        let step = |action, offload_only| PlanStep {
            action,
            what: module.value_name(&module.values[row.value as usize]),
            bytes_at_peak: credited(row.value),
            offload_only,
            value: Some(row.value),
            stacked: None,
        };
        if is_argument(cats.of(module, row.value)) {
            let frees = offload_gap(&s).is_some_and(|(lo, hi)| lo <= t && t <= hi);
            if frees && !taken.contains(&(Action::Offload, row.value)) {
                args.push(step(Action::Offload, true));
            }
        } else if remat_gap(&s).is_some_and(|(lo, hi)| lo <= t && t <= hi)
            && !taken.contains(&(Action::Remat, row.value))
        {
            // Ranked by the bytes it frees × the idle steps of the stretch across the peak.
            let p = step(Action::Remat, false);
            values.push((p.bytes_at_peak.saturating_mul(u64::from(s.idle_steps)), p));
        }
    }
    values.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.what.cmp(&b.1.what)));
    out.extend(values.into_iter().map(|(_, p)| p));
    args.sort_by(|a, b| b.bytes_at_peak.cmp(&a.bytes_at_peak).then(a.what.cmp(&b.what)));
    if options.offload_arguments {
        out.extend(args);
    }
    out.retain(|p| p.bytes_at_peak > 0);
    out
}

fn key(p: &PlanStep) -> (Action, u32) {
    match p.action {
        Action::RematLoop | Action::OffloadLoop => (p.action, p.stacked.unwrap_or(0) as u32),
        _ => (p.action, p.value.unwrap_or(0)),
    }
}

/// The smallest plan for `space` to fit `capacity` (see the module's doc).
pub fn fit(
    module: &Module,
    space: &Space,
    index: &ScheduleIndex,
    stacked: &[StackedOutput],
    capacity: &Capacity,
    options: FitOptions,
) -> Plan {
    let cap = capacity.bytes;
    let mut plan: Vec<PlanStep> = Vec::new();
    let mut taken: HashSet<(Action, u32)> = HashSet::new();
    let mut cache = StretchCache::default();
    let mut est = estimate_with(module, space, index, &Edits::default(), &mut cache);
    let tried = match (options.policies && est.peak_after > cap)
        .then(|| cheapest(module, space, index, stacked, cap, options.offload_arguments))
    {
        Some((tried, Some(best))) => return policy_plan(module, space, stacked, capacity, best, tried),
        Some((tried, None)) => tried,
        None => Vec::new(),
    };
    let mut remains = None;
    // Each round covers the excess at one peak (an estimate each: on the 94 MB dump a round
    // costs about a fifth of a second, so the rounds are bounded).
    for _ in 0..ROUNDS {
        if est.peak_after <= cap {
            break;
        }
        let t = est.step_after.unwrap_or(0);
        let excess = est.peak_after - cap;
        let cands = candidates_at(module, space, index, stacked, &taken, t, options);
        if cands.is_empty() {
            remains = Some(what_remains(module, space, index, &est, &plan, stacked, cap));
            break;
        }
        let mut freed = 0u64;
        for c in cands {
            freed = freed.saturating_add(c.bytes_at_peak);
            taken.insert(key(&c));
            plan.push(c);
            if freed >= excess {
                break;
            }
        }
        est = estimate_with(module, space, index, &edits_of(&plan, stacked), &mut cache);
    }
    // A plan that fits keeps only what it needs to fit; one that does not, only what lowers
    // its peak.
    let bound = cap.max(est.peak_after);
    prune(module, space, (index, &mut cache), stacked, bound, &mut plan, &mut est);
    let fits = est.peak_after <= cap;
    let offloads = plan.iter().any(|p| p.offload_only);
    let devices = module.hlo.as_ref().map(|h| h.devices());
    let devices_needed = devices
        .filter(|_| !fits || offloads)
        .map(|now| devices_for(module, (space, index), stacked, &plan, &est, now, capacity));
    let edits = edits_of(&plan, stacked);
    Plan {
        policy: policy(module, &edits, !stacked.is_empty()),
        policies_tried: tried,
        flops_added: module.hlo.is_some().then(|| flops_added(module, index, &edits, stacked, &no_policy)),
        step_flops: step_flops(module),
        devices_needed,
        arguments_at_peak: arguments_at(module, space, space.peak_time, !fits || offloads),
        color: space.color,
        capacity_bytes: cap,
        peak_before: space.peak_bytes,
        peak_after: est.peak_after,
        step_after: est.step_after,
        fits,
        plan,
        remains,
        estimate: est,
    }
}

/// [`devices_needed`] for a plan on `now` devices, judged at its estimate's peak.
fn devices_for(
    module: &Module,
    (space, index): (&Space, &ScheduleIndex),
    stacked: &[StackedOutput],
    plan: &[PlanStep],
    est: &Estimate,
    now: u32,
    capacity: &Capacity,
) -> DevicesNeeded {
    let t = est.step_after.unwrap_or(0);
    let gone: HashSet<u32> = (plan.iter())
        .filter_map(|p| stacked.get(p.stacked?))
        .flat_map(|s| s.chain.iter().copied())
        .collect();
    let state = |p: &[PlanStep]| {
        let by = categories_at(module, space, index, p, &gone, t);
        by.iter().filter(|(c, _)| is_state(*c)).map(|(_, b)| b).sum::<u64>()
    };
    let (all, left) = (state(&[]), state(plan));
    devices_needed(now, all, est.peak_after.saturating_sub(left), capacity.bytes, &capacity.label)
}

/// The plan of the cheapest stock policy that fits: each stacked output it rematerialises or
/// offloads, its estimate, named in code terms.
fn policy_plan(
    module: &Module,
    space: &Space,
    stacked: &[StackedOutput],
    capacity: &Capacity,
    (p, applied, est): (Checkpoint, Applied, Estimate),
    tried: Vec<Tried>,
) -> Plan {
    let at = |s: &StackedOutput| stacked.iter().position(|x| x.name == s.name);
    let step = |action, s: &StackedOutput| PlanStep {
        action,
        what: s.name.clone(),
        bytes_at_peak: s.bytes,
        offload_only: false,
        value: None,
        stacked: at(s),
    };
    let mut plan: Vec<PlanStep> = applied.edits.loops.iter().map(|s| step(Action::RematLoop, s)).collect();
    plan.extend(applied.edits.offload_loops.iter().map(|s| step(Action::OffloadLoop, s)));
    let step_flops = step_flops(module);
    let share = step_flops.filter(|&f| f > 0).map_or(String::new(), |f| format!(" ({:.1} % of a step)", applied.flops_added as f64 / f as f64 * 100.0));
    let why = format!(
        "The cheapest in FLOPs of the stock policies whose estimate fits: its recomputation adds {:.3} TFLOP{share}{}.",
        applied.flops_added as f64 / 1e12,
        if est.host_bytes_added > 0 { format!(", and it holds {} on the host", human_bytes(est.host_bytes_added)) } else { String::new() }
    );
    Plan {
        color: space.color,
        capacity_bytes: capacity.bytes,
        plan,
        peak_before: space.peak_bytes,
        peak_after: est.peak_after,
        step_after: est.step_after,
        fits: true,
        remains: None,
        arguments_at_peak: arguments_at(module, space, space.peak_time, false),
        policy: Some(stock(&p.name(), why)),
        devices_needed: None,
        policies_tried: tried,
        flops_added: Some(applied.flops_added),
        step_flops,
        estimate: est,
    }
}

/// Drops each edit the plan can do without and still peak at most `cap`, last taken first
/// (a plan of at most [`PRUNE`] edits).
fn prune(
    module: &Module,
    space: &Space,
    (index, cache): (&ScheduleIndex, &mut StretchCache),
    stacked: &[StackedOutput],
    cap: u64,
    plan: &mut Vec<PlanStep>,
    est: &mut Estimate,
) {
    let tries = if plan.len() <= PRUNE { plan.len() } else { 0 };
    for i in (plan.len() - tries..plan.len()).rev() {
        let mut without = plan.clone();
        without.remove(i);
        let e = estimate_with(module, space, index, &edits_of(&without, stacked), cache);
        if e.peak_after <= cap {
            *plan = without;
            *est = e;
        }
    }
}

/// Whether a plan's edit of a value frees it at step `t`.
fn frees_at(module: &Module, index: &ScheduleIndex, p: &PlanStep, t: u32) -> bool {
    let Some(v) = p.value else { return false };
    let gap = match p.action {
        Action::Remat => remat_gap,
        Action::Offload => offload_gap,
        Action::RematLoop | Action::OffloadLoop => return false,
    };
    value_uses(module, index, v).is_some_and(|u| {
        u.stretches.iter().filter_map(gap).any(|(lo, hi)| lo <= t && t <= hi)
    })
}

/// The live bytes at `t` of the values the plan leaves there, by category, largest first.
fn categories_at(
    module: &Module,
    space: &Space,
    index: &ScheduleIndex,
    plan: &[PlanStep],
    gone: &HashSet<u32>,
    t: u32,
) -> Vec<(Category, u64)> {
    let mut by: Vec<(Category, u64)> = Vec::new();
    let cats = Categories::new(module);
    for lv in live_set(module, space, t).values {
        let edited = plan.iter().any(|p| p.value == Some(lv.value) && frees_at(module, index, p, t));
        if gone.contains(&lv.value) || edited {
            continue;
        }
        let c = cats.of(module, lv.value);
        match by.iter_mut().find(|(k, _)| *k == c) {
            Some((_, b)) => *b += lv.bytes,
            None => by.push((c, lv.bytes)),
        }
    }
    by.retain(|(_, b)| *b > 0);
    by.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    by
}

/// The arguments live at the real peak, with advice when `advise`.
fn arguments_at(module: &Module, space: &Space, peak: Option<u32>, advise: bool) -> Arguments {
    let by = peak.map_or_else(Vec::new, |t| {
        let idx = ScheduleIndex::new(&Module::default());
        categories_at(module, space, &idx, &[], &HashSet::new(), t)
    });
    let of = |c: Category| by.iter().find(|(k, _)| *k == c).map_or(0, |(_, b)| *b);
    let (params, opt) = (of(Category::ModelParameters), of(Category::OptimizerState));
    let other = of(Category::Inputs) + of(Category::Parameters);
    let all = params + opt + other;
    let sentence = (advise && all > 0).then(|| {
        format!(
            "The program's arguments hold {} at the peak ({} of parameters{}{}): {}",
            human_bytes(all),
            human_bytes(params + other),
            if other > 0 { " and inputs" } else { "" },
            if opt > 0 { format!(", {} of optimizer state", human_bytes(opt)) } else { String::new() },
            if opt > 0 { "shard or offload the optimizer state." } else { "shard the parameters." }
        )
    });
    Arguments {
        parameter_bytes: params,
        optimizer_state_bytes: opt,
        other_bytes: other,
        sentence,
    }
}

/// What is live at the estimate's peak, by category, and the sentence about it.
fn what_remains(
    module: &Module,
    space: &Space,
    index: &ScheduleIndex,
    est: &Estimate,
    plan: &[PlanStep],
    stacked: &[StackedOutput],
    cap: u64,
) -> Remains {
    let t = est.step_after.unwrap_or(0);
    let gone: HashSet<u32> = (plan.iter())
        .filter_map(|p| stacked.get(p.stacked?))
        .flat_map(|s| s.chain.iter().copied())
        .collect();
    let by = categories_at(module, space, index, plan, &gone, t);
    let argument_bytes: u64 = by.iter().filter(|(c, _)| is_argument(*c)).map(|(_, b)| b).sum();
    let optimizer = by.iter().any(|(c, _)| *c == Category::OptimizerState);
    let excess = est.peak_after.saturating_sub(cap);
    let mut sentence = format!(
        "Nothing more can go at step {t}: the estimate stays {} above the capacity.",
        human_bytes(excess)
    );
    if argument_bytes > 0 {
        sentence.push_str(&format!(
            " The program's arguments (parameters{}) hold {} there: {}",
            if optimizer { " and optimizer state" } else { "" },
            human_bytes(argument_bytes),
            if optimizer {
                "shard or offload the optimizer state."
            } else {
                "shard the parameters."
            }
        ));
    }
    Remains {
        step: t,
        excess_bytes: excess,
        categories: by.iter().map(|(c, b)| (c.label().to_string(), *b)).collect(),
        argument_bytes,
        sentence,
    }
}
