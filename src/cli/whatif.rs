//! `bufscope whatif` and `bufscope fit`: the estimated peak after rematerialising or
//! offloading ([`bufscope::answers::whatif`]), and the smallest plan for a capacity.
//!
//! Owns: the two commands' arguments, turning value names and `--keep` into edits, the text
//! and JSON they print, and `fit`'s exit code (1 when no plan fits).

use super::{input, summary_args, write_stdout, Failure, PATHS};
use bufscope::analysis::{Analysis, Space};
use bufscope::answers::capacity::Capacity;
use bufscope::answers::idle::ScheduleIndex;
use bufscope::answers::whatif::checkpoint::{Checkpoint, Tried};
use bufscope::answers::whatif::policy::Stores;
use bufscope::answers::whatif::fit::{fit, Action, FitOptions, Plan};
use bufscope::answers::whatif::flops::{flops_added, step_flops, RULE as FLOPS_RULE};
use bufscope::answers::whatif::stacked::stacked_outputs;
use bufscope::answers::whatif::{estimate, Edits, Estimate, Residual, StackedOutput, ASSUMPTIONS};
use bufscope::model::hlo::{Computation, HloInstruction, HloText};
use bufscope::model::Module;
use bufscope::pipeline::Analysed;
use bufscope::render;
use bufscope::render::estimate::EstimateCurve;
use bufscope::query::{compile, value_named, Matcher};
use bufscope::units::human_bytes;
use clap::Args;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Estimates each memory space's peak after rematerialising or offloading values
///
/// An estimate, not a compile: the occupied bytes of what stays live, as if XLA re-packed
/// the freed bytes; a recomputation's inputs are taken to be live anyway. A value
/// rematerialised is gone over its idle stretches and back the step before each use; one
/// offloaded is copied out and back in around each stretch, its bytes held by the host; a
/// loop's stacked per-iteration outputs rematerialised are gone for the loop's life, one
/// iteration's worth live in the backward loop's body from its start to its last read of
/// the output (needs the HLO text
/// *after_optimizations.txt beside the dump). --policy names a jax.checkpoint policy and
/// maps it onto those outputs; each estimate says what the recomputation costs in FLOPs
/// (flops_added) beside one step of the program (step_flops).
#[derive(Args)]
#[command(args_override_self = false, after_help = PATHS)]
pub struct WhatifArgs {
    /// Dump files or folders of dumps (with the HLO text for --remat-loops)
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
    /// Rematerialise this value (`name{index}` as XLA prints it; repeatable)
    #[arg(long, value_name = "VALUE")]
    remat: Vec<String>,
    /// Offload this value to the host (repeatable)
    #[arg(long, value_name = "VALUE")]
    offload: Vec<String>,
    /// Rematerialise every loop's stacked per-iteration outputs that a later loop reads
    #[arg(long)]
    remat_loops: bool,
    /// With --remat-loops: keep the stacked outputs whose op_name matches (`dot_general`)
    #[arg(long, value_name = "REGEX", value_parser = keep_pattern)]
    keep: Option<Matcher>,
    /// A jax.checkpoint policy over the loops' stacked outputs: nothing_saveable,
    /// dots_saveable, dots_with_no_batch_dims_saveable, offload_dot_with_no_batch_dims,
    /// save_only_these_names(REGEX), save_and_offload_only_these_names(REGEX)
    #[arg(long, value_name = "POLICY", value_parser = Checkpoint::parse, conflicts_with_all = ["remat_loops", "keep"],
        long_help = POLICY_HELP)]
    policy: Option<Checkpoint>,
    /// Print one JSON object instead of a table
    #[arg(long)]
    json: bool,
    /// Also draw one module (the default, or --module) with each estimate dashed over its
    /// real curve into this SVG
    #[arg(long, value_name = "OUT.svg")]
    svg: Option<PathBuf>,
    /// The module --svg draws (a name, or a part of one name)
    #[arg(long, value_name = "NAME")]
    module: Option<String>,
    /// Hold the estimates --svg draws against this capacity: a size or a device
    #[arg(long, value_name = "SIZE|DEVICE", value_parser = summary_args::capacity)]
    capacity: Option<Capacity>,
}

/// Plans what to rematerialise or offload so that a module's peak fits a capacity
///
/// First the stock jax.checkpoint policies over the loops' stacked outputs (dots_saveable,
/// dots_with_no_batch_dims_saveable, offload_dot_with_no_batch_dims, nothing_saveable): of
/// those whose estimate fits, the cheapest in FLOPs (policies_tried lists them all). Else,
/// from the candidates at the estimated peak: loops' stacked outputs first, then values by
/// bytes × idle steps, then parameters and optimizer state (offload only, marked so), the
/// smallest plan whose estimate fits; or what remains above the capacity. The module given
/// (by default the one with the most allocated bytes); its default memory space. Exit
/// status: 0 a plan fits, 1 none does (or nothing could be read), 2 wrong arguments.
#[derive(Args)]
#[command(after_help = PATHS)]
pub struct FitArgs {
    /// Dump files or folders of dumps (with the HLO text for the loops)
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
    /// The capacity: a size (16GiB, 15.75G, 40e9) or a device (v5e: the 15.75 GiB XLA can
    /// use, "TPU v4", a100-80gb)
    #[arg(long, value_name = "SIZE|DEVICE", value_parser = summary_args::capacity,
        long_help = summary_args::capacity_help("The capacity to fit"))]
    capacity: Capacity,
    /// The module to plan for (a name, or a part of one name)
    #[arg(long, value_name = "NAME")]
    module: Option<String>,
    /// Never offload to the host: neither the program's arguments (parameters, optimizer
    /// state) nor a policy's residuals
    #[arg(long)]
    no_offload: bool,
    /// Print one JSON object instead of text
    #[arg(long)]
    json: bool,
}

const POLICY_HELP: &str = "A jax.checkpoint policy over the loops' stacked outputs (the scan's residuals; the scan body's input is saved by every policy): nothing_saveable, dots_saveable, dots_with_no_batch_dims_saveable, offload_dot_with_no_batch_dims, save_only_these_names(REGEX), save_and_offload_only_these_names(REGEX). Dots are dot and convolution fusions; \"no batch dims\" a dot whose lhs_batch_dims are empty or whose op_name's einsum has no letter in both inputs and the output. Checkpoint names (jax.ad_checkpoint.checkpoint_name) do not survive compilation: REGEX matches the op_name of what each output stores (e.g. 'bsd,dhk->bshk' for q, k and v). Offloaded outputs leave HBM for the host (host_bytes_added, with the copies' bytes).";

fn keep_pattern(text: &str) -> Result<Matcher, String> {
    compile(text)
}

/// The value a user named: `name{index}` as printed, or `name{}` for a value printed bare.
fn find_value(module: &Module, name: &str) -> Option<u32> {
    value_named(module, name).or_else(|| value_named(module, name.strip_suffix("{}")?))
}

/// What `args` asks of one module: its edits, the names that are not values of it, how many
/// stacked outputs stay saved, and the FLOPs the recomputation adds (with the HLO text).
struct Asked {
    edits: Edits,
    missing: Vec<String>,
    kept: usize,
    flops_added: Option<u64>,
}

/// The edits of `args` in `module` (a policy's through [`Checkpoint::with_values`], the one
/// place a policy and single values combine), and their price in FLOPs.
fn edits_for(module: &Module, args: &WhatifArgs, index: &ScheduleIndex, stacked: &[StackedOutput]) -> Asked {
    let mut missing = Vec::new();
    let mut resolve = |names: &[String]| -> Vec<u32> {
        (names.iter())
            .filter_map(|n| {
                let v = find_value(module, n);
                if v.is_none() {
                    missing.push(n.clone());
                }
                v
            })
            .collect()
    };
    let values = Edits { remat: resolve(&args.remat), offload: resolve(&args.offload), ..Edits::default() };
    let with_hlo = module.hlo.is_some();
    if let Some(p) = &args.policy {
        let applied = p.with_values(module, index, stacked, &values);
        let flops_added = with_hlo.then_some(applied.flops_added);
        return Asked { edits: applied.edits, missing, kept: applied.saved, flops_added };
    }
    let (mut edits, mut kept) = (values, 0);
    for s in stacked.iter().filter(|_| args.remat_loops) {
        match args.keep.as_ref().is_some_and(|k| k.is_match(&s.op_name)) {
            true => kept += 1,
            false => edits.loops.push(s.clone()),
        }
    }
    let saves_nothing = |_: &HloText, _: &Computation, _: &HloInstruction| false;
    let flops_added = with_hlo.then(|| flops_added(module, index, &edits, stacked, &saves_nothing));
    Asked { edits, missing, kept, flops_added }
}

#[derive(Serialize)]
struct WhatifJson<'a> {
    estimate: bool,
    assumptions: &'static str,
    modules: Vec<ModuleJson<'a>>,
}

#[derive(Serialize)]
struct ModuleJson<'a> {
    name: &'a str,
    /// The jax policy asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<String>,
    /// Loop outputs rematerialised, offloaded and kept.
    loop_outputs: Vec<LoopJson>,
    loop_outputs_offloaded: Vec<LoopJson>,
    loop_outputs_kept: usize,
    /// What the policy saves that the program stacks nowhere.
    residuals_saved: Vec<Residual>,
    /// The recomputation's FLOPs and one step's, per device (`None` without the HLO text).
    flops_added: Option<u64>,
    step_flops: Option<u64>,
    flops_rule: &'static str,
    memory_spaces: Vec<Estimate>,
}

#[derive(Serialize)]
struct LoopJson {
    what: String,
    op_name: String,
    /// The forward body's instruction whose result it stores.
    source: Option<String>,
    stores: Stores,
    bytes: u64,
    per_iteration_bytes: u64,
}

fn loop_json(s: &StackedOutput) -> LoopJson {
    LoopJson {
        what: s.name.clone(),
        op_name: s.op_name.clone(),
        source: s.source.clone(),
        stores: s.stores,
        bytes: s.bytes,
        per_iteration_bytes: s.per_iteration_bytes(),
    }
}

/// Every memory space's estimate of one module.
fn estimates(module: &Module, analysis: &Analysis, index: &ScheduleIndex, edits: &Edits) -> Vec<Estimate> {
    (analysis.spaces.iter())
        .map(|s| estimate(module, s, index, edits))
        .collect()
}

pub fn whatif(args: WhatifArgs) -> Result<(), Failure> {
    if args.keep.is_some() && !args.remat_loops {
        return Err(Failure("--keep applies to --remat-loops".into()));
    }
    let loaded = input::open(&args.paths)?;
    let mut modules = Vec::new();
    let mut unknown: Option<Vec<String>> = None;
    for a in &loaded.modules {
        let index = ScheduleIndex::new(&a.module);
        let stacked = stacked_outputs(&a.module);
        let Asked { edits, missing, kept, flops_added } = edits_for(&a.module, &args, &index, &stacked);
        // A name counts as unknown only if no module has it.
        unknown = Some(match unknown {
            None => missing,
            Some(u) => u.into_iter().filter(|n| missing.contains(n)).collect(),
        });
        if (args.remat_loops || args.policy.is_some()) && a.module.hlo.is_none() {
            eprintln!(
                "bufscope: {}: no HLO text read beside the dump (*after_optimizations.txt): no loop outputs to rematerialise",
                a.module.name
            );
        }
        modules.push(ModuleJson {
            name: &a.module.name,
            policy: args.policy.as_ref().map(Checkpoint::name),
            loop_outputs: edits.loops.iter().map(loop_json).collect(),
            loop_outputs_offloaded: edits.offload_loops.iter().map(loop_json).collect(),
            loop_outputs_kept: kept,
            residuals_saved: edits.saved.clone(),
            flops_added,
            step_flops: step_flops(&a.module),
            flops_rule: FLOPS_RULE,
            memory_spaces: estimates(&a.module, &a.analysis, &index, &edits),
        });
    }
    if let Some(u) = unknown.filter(|u| !u.is_empty()) {
        return Err(Failure(format!("no value named {} in the modules read", u.join(", "))));
    }
    if let Some(out) = &args.svg {
        let shown = input::pick_module(&loaded, args.module.as_deref())?;
        let at = loaded.modules.iter().position(|a| std::ptr::eq(a, shown)).unwrap_or(0);
        draw(shown, &modules[at].memory_spaces, args.capacity.clone(), out)?;
    }
    let report = WhatifJson {
        estimate: true,
        assumptions: ASSUMPTIONS,
        modules,
    };
    let text = if args.json {
        serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"
    } else {
        whatif_text(&report)
    };
    write_stdout(text.as_bytes())
}

/// The module drawn with its estimates dashed over the real curves.
fn draw(shown: &Analysed, estimates: &[Estimate], capacity: Option<Capacity>, out: &PathBuf) -> Result<(), Failure> {
    let curves = estimates.iter().map(EstimateCurve::from).collect();
    let style = render::Style {
        capacity,
        estimates: std::sync::Arc::new(curves),
        ..render::Style::default()
    };
    let svg = render::render_svg_styled(&shown.module, &shown.analysis, 1400, &style);
    std::fs::write(out, svg).map_err(|e| Failure(format!("cannot write {}: {e}", out.display())))
}

fn whatif_text(r: &WhatifJson) -> String {
    let mut out = String::new();
    for m in &r.modules {
        let _ = writeln!(out, "module {}", m.name);
        if let Some(p) = &m.policy {
            let _ = writeln!(out, "  policy {p}");
        }
        if !m.loop_outputs.is_empty() || !m.loop_outputs_offloaded.is_empty() || m.loop_outputs_kept > 0 {
            let bytes = |l: &[LoopJson]| human_bytes(l.iter().map(|l| l.bytes).sum());
            let _ = writeln!(
                out,
                "  loops' stacked outputs rematerialised: {} ({}), offloaded: {} ({}), kept: {}",
                m.loop_outputs.len(),
                bytes(&m.loop_outputs),
                m.loop_outputs_offloaded.len(),
                bytes(&m.loop_outputs_offloaded),
                m.loop_outputs_kept
            );
        }
        if let (Some(added), Some(step)) = (m.flops_added, m.step_flops) {
            let share = if step > 0 { added as f64 / step as f64 * 100.0 } else { 0.0 };
            let _ = writeln!(out, "  FLOPs added by recomputation: {} ({share:.1} % of a step of {})", bufscope::units::human_flops(added), bufscope::units::human_flops(step));
        }
        let _ = writeln!(
            out,
            "  {:>5}  {:>12}  {:>9}  {:>21}  {:>9}  {:>10}",
            "color", "peak before", "at step", "estimated peak after", "at step", "host added"
        );
        for s in &m.memory_spaces {
            let step = |t: Option<u32>| t.map_or("-".into(), |t| t.to_string());
            let _ = writeln!(
                out,
                "  {:>5}  {:>12}  {:>9}  {:>21}  {:>9}  {:>10}",
                s.color,
                human_bytes(s.peak_before),
                step(s.step_before),
                human_bytes(s.peak_after),
                step(s.step_after),
                human_bytes(s.host_bytes_added)
            );
        }
    }
    let _ = writeln!(out, "{ASSUMPTIONS}");
    out
}

#[derive(Serialize)]
struct FitJson<'a> {
    module: &'a str,
    #[serde(flatten)]
    plan: &'a Plan,
    estimate: bool,
    assumptions: &'static str,
}

/// The space a capacity is held against: the default memory space (colour 0), else the one
/// with the highest peak.
fn device_space(analysis: &Analysis) -> Option<&Space> {
    analysis
        .space(0)
        .or_else(|| analysis.spaces.iter().max_by_key(|s| s.peak_bytes))
}

pub fn fit_command(args: FitArgs) -> Result<i32, Failure> {
    let loaded = input::open(&args.paths)?;
    let shown = input::pick_module(&loaded, args.module.as_deref())?;
    let (module, analysis) = (&shown.module, &shown.analysis);
    let Some(space) = device_space(analysis) else {
        return Err(Failure(format!("{}: no memory space to plan for", module.name)));
    };
    let index = ScheduleIndex::new(module);
    let options = FitOptions { offload_arguments: !args.no_offload, policies: true };
    let plan = fit(module, space, &index, &stacked_outputs(module), &args.capacity, options);
    let report = FitJson {
        module: &module.name,
        plan: &plan,
        estimate: true,
        assumptions: ASSUMPTIONS,
    };
    let text = if args.json {
        serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"
    } else {
        fit_text(&report, &args.capacity)
    };
    write_stdout(text.as_bytes())?;
    Ok(if plan.fits { 0 } else { 1 })
}

fn fit_text(r: &FitJson, capacity: &Capacity) -> String {
    let p = r.plan;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "module {}, memory space {}: peak {} against {}",
        r.module,
        p.color,
        human_bytes(p.peak_before),
        capacity.described()
    );
    if p.plan.is_empty() && p.fits {
        let _ = writeln!(out, "  fits as it is: nothing to change");
    }
    // Edits under 1 MiB at the peak are summed on one line (the JSON lists them all).
    let (shown, small): (Vec<_>, Vec<_>) = p.plan.iter().partition(|s| s.bytes_at_peak >= 1 << 20);
    for s in shown {
        let _ = writeln!(
            out,
            "  {:<10} {:<40} {:>10} at the peak{}",
            match s.action {
                Action::RematLoop => "remat loop",
                Action::OffloadLoop => "offload loop",
                Action::Remat => "remat",
                Action::Offload => "offload",
            },
            s.what,
            human_bytes(s.bytes_at_peak),
            if s.offload_only { " (offload only: an argument)" } else { "" }
        );
    }
    if !small.is_empty() {
        let bytes: u64 = small.iter().map(|s| s.bytes_at_peak).sum();
        let _ = writeln!(out, "  and {} smaller edits, {} at the peak", small.len(), human_bytes(bytes));
    }
    let step = p.step_after.map_or("-".into(), |t| t.to_string());
    let _ = writeln!(
        out,
        "  estimated peak after: {} at step {step}: {}",
        human_bytes(p.peak_after),
        if p.fits { "fits" } else { "does not fit" }
    );
    if let Some(note) = &p.arguments_at_peak.sentence {
        let _ = writeln!(out, "  {note}");
    }
    if let Some(rem) = &p.remains {
        let _ = writeln!(out, "  {}", rem.sentence);
        for (label, bytes) in &rem.categories {
            let _ = writeln!(out, "    {label:<28} {:>10}", human_bytes(*bytes));
        }
    }
    if let Some(pol) = &p.policy {
        let _ = writeln!(out, "  in code: {}   (MaxText {})", pol.snippet, pol.maxtext);
        let _ = writeln!(out, "    {}", pol.why);
        for line in &pol.also {
            let _ = writeln!(out, "    {line}");
        }
    }
    if let Some(d) = &p.devices_needed {
        let _ = writeln!(out, "  devices: {}", d.sentence);
    }
    if let (Some(added), Some(step)) = (p.flops_added, p.step_flops) {
        let _ = writeln!(out, "  FLOPs added by recomputation: {} (a step: {})", bufscope::units::human_flops(added), bufscope::units::human_flops(step));
    }
    tried_text(&mut out, &p.policies_tried);
    let _ = writeln!(out, "{ASSUMPTIONS}");
    out
}

/// The stock policies `fit` tried, one line each.
fn tried_text(out: &mut String, tried: &[Tried]) {
    if tried.is_empty() {
        return;
    }
    let _ = writeln!(out, "  stock policies tried (estimates):");
    for t in tried {
        let _ = writeln!(
            out,
            "    {:<34} peak {:>10}  host {:>10}  +{:>12}  {}",
            t.name,
            human_bytes(t.peak_after),
            human_bytes(t.host_bytes_added),
            bufscope::units::human_flops(t.flops_added),
            if t.fits { "fits" } else { "does not fit" }
        );
    }
}
