//! `bufscope whatif` and `bufscope fit`: the estimated peak after rematerialising or
//! offloading ([`bufscope::answers::whatif`]), and the smallest plan for a capacity.
//!
//! Owns: the two commands' arguments, turning value names and `--keep` into edits, the text
//! and JSON they print, and `fit`'s exit code (1 when no plan fits).

use super::{input, summary_args, write_stdout, Failure, PATHS};
use bufscope::analysis::{Analysis, Space};
use bufscope::answers::capacity::Capacity;
use bufscope::answers::idle::ScheduleIndex;
use bufscope::answers::whatif::fit::{fit, Action, FitOptions, Plan};
use bufscope::answers::whatif::stacked::stacked_outputs;
use bufscope::answers::whatif::{estimate, Edits, Estimate, StackedOutput, ASSUMPTIONS};
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
/// iteration's worth live while the backward loop runs (needs the HLO text
/// *after_optimizations.txt beside the dump).
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
/// From the candidates at the estimated peak: loops' stacked outputs first, then values by
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
    /// Never offload the program's arguments (parameters, optimizer state)
    #[arg(long)]
    no_offload: bool,
    /// Print one JSON object instead of text
    #[arg(long)]
    json: bool,
}

fn keep_pattern(text: &str) -> Result<Matcher, String> {
    compile(text)
}

/// The value a user named: `name{index}` as printed, or `name{}` for a value printed bare.
fn find_value(module: &Module, name: &str) -> Option<u32> {
    value_named(module, name).or_else(|| value_named(module, name.strip_suffix("{}")?))
}

/// The edits of `args` in `module`, and the names that are not values of it.
fn edits_for(module: &Module, args: &WhatifArgs) -> (Edits, Vec<String>, usize) {
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
    let remat = resolve(&args.remat);
    let offload = resolve(&args.offload);
    let (mut loops, mut kept) = (Vec::new(), 0);
    if args.remat_loops {
        for s in stacked_outputs(module) {
            if args.keep.as_ref().is_some_and(|k| k.is_match(&s.op_name)) {
                kept += 1;
            } else {
                loops.push(s);
            }
        }
    }
    (Edits { remat, offload, loops }, missing, kept)
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
    /// Loop outputs rematerialised and kept.
    loop_outputs: Vec<LoopJson>,
    loop_outputs_kept: usize,
    memory_spaces: Vec<Estimate>,
}

#[derive(Serialize)]
struct LoopJson {
    what: String,
    op_name: String,
    bytes: u64,
    per_iteration_bytes: u64,
}

fn loop_json(s: &StackedOutput) -> LoopJson {
    LoopJson {
        what: s.name.clone(),
        op_name: s.op_name.clone(),
        bytes: s.bytes,
        per_iteration_bytes: s.per_iteration_bytes(),
    }
}

/// Every memory space's estimate of one module.
fn estimates(module: &Module, analysis: &Analysis, edits: &Edits) -> Vec<Estimate> {
    let index = ScheduleIndex::new(module);
    (analysis.spaces.iter())
        .map(|s| estimate(module, s, &index, edits))
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
        let (edits, missing, kept) = edits_for(&a.module, &args);
        // A name counts as unknown only if no module has it.
        unknown = Some(match unknown {
            None => missing,
            Some(u) => u.into_iter().filter(|n| missing.contains(n)).collect(),
        });
        if args.remat_loops && a.module.hlo.is_none() {
            eprintln!(
                "bufscope: {}: no HLO text read beside the dump (*after_optimizations.txt): no loop outputs to rematerialise",
                a.module.name
            );
        }
        modules.push(ModuleJson {
            name: &a.module.name,
            loop_outputs: edits.loops.iter().map(loop_json).collect(),
            loop_outputs_kept: kept,
            memory_spaces: estimates(&a.module, &a.analysis, &edits),
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
        if !m.loop_outputs.is_empty() || m.loop_outputs_kept > 0 {
            let bytes: u64 = m.loop_outputs.iter().map(|l| l.bytes).sum();
            let _ = writeln!(
                out,
                "  loops' stacked outputs rematerialised: {} ({}), kept: {}",
                m.loop_outputs.len(),
                human_bytes(bytes),
                m.loop_outputs_kept
            );
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
    let options = FitOptions { offload_arguments: !args.no_offload };
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
    let _ = writeln!(out, "{ASSUMPTIONS}");
    out
}
