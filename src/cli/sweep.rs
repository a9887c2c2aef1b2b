//! `bufscope sweep`: several compilations of one program that differ in one dimension, the
//! peak of each memory space fitted against it ([`bufscope::answers::sweep`]), printed as a
//! table or JSON.
//!
//! Each operand is one compilation: a folder, or a file, which brings the files beside it
//! of the same run (`STEM.buffer-assignment.txt` brings `STEM.buffer-assignment-values.txt`,
//! `STEM.live-range.txt`, `STEM.after_optimizations.txt`, `STEM.error.txt`, …). An
//! out-of-memory message read with a compilation marks it as one that does not fit.
//! Exit codes: 0 done; 1 a compilation could not be read; 2 the arguments are wrong, or
//! no one dimension varies (two vary: the message names both).

use super::{input, summary_args, write_stdout, Failure};
use bufscope::answers::capacity::Capacity;
use bufscope::answers::sweep::{self, Options, Point, Sweep};
use bufscope::parse::{hlo_module_names, is_error_text, is_ours, module_name};
use bufscope::units::human_bytes;
use clap::Args;
use std::path::{Path, PathBuf};

/// Which configuration fits: several compilations varying one dimension
///
/// Each operand is one compilation of the same program (a folder, or a dump file with the
/// files of its run beside it). bufscope finds the one dimension that varies (an entry
/// parameter's dimension, or a loop's trip count: the layers of a scan), fits each memory
/// space's peak and each category at it as constant, linear or quadratic in it, predicts it
/// at each --at value and, with --capacity, says the largest value that fits and the first
/// that does not. A peak pinned near the capacity by the compiler's rematerialisation is
/// never extrapolated. Two dimensions varying: exit 2, naming both.
#[derive(Args)]
#[command(args_override_self = true)]
pub struct SweepArgs {
    /// Print one JSON object instead of a table
    #[arg(long)]
    json: bool,
    /// Hold memory space 0's peak (another with --capacity-space) against this capacity
    #[arg(long, value_name = "SIZE|DEVICE", value_parser = summary_args::capacity,
        long_help = summary_args::capacity_help("Hold memory space 0's peak (another with \
            --capacity-space) against this capacity: the largest value that fits and the first that does not"))]
    capacity: Option<Capacity>,
    /// The memory space --capacity is set on: its colour (0, 1, 6) or XLA's name
    #[arg(long, value_name = "SPACE", default_value = "0", value_parser = summary_args::space)]
    capacity_space: u32,
    /// Predict the peak at this value of the varied dimension (repeatable)
    #[arg(long, value_name = "V")]
    at: Vec<u64>,
    /// The compilations: dump folders or dump files, one per compilation
    #[arg(value_name = "DUMP_OR_FOLDER", required = true, num_args = 2..)]
    paths: Vec<PathBuf>,
}

/// Runs `bufscope sweep`, returning the exit code.
pub fn sweep(args: SweepArgs) -> i32 {
    match run(&args) {
        Ok(text) => match write_stdout(text.as_bytes()) {
            Ok(()) => 0,
            Err(Failure(msg)) => fail(&msg, 1),
        },
        Err((msg, code)) => fail(&msg, code),
    }
}

fn fail(msg: &str, code: i32) -> i32 {
    eprintln!("bufscope: {msg}");
    code
}

fn run(args: &SweepArgs) -> Result<String, (String, i32)> {
    let mut loads = Vec::new();
    for path in &args.paths {
        let files = compilation_files(path);
        let loaded = input::open(&files).map_err(|Failure(m)| (format!("{}: {m}", path.display()), 1))?;
        if loaded.modules.is_empty() {
            return Err((format!("{}: no dump to read the compilation's shapes from", path.display()), 1));
        }
        loads.push(loaded);
    }
    let names: Vec<Vec<String>> = (loads.iter())
        .map(|l| l.modules.iter().map(|a| a.module.name.clone()).collect())
        .collect();
    let first = bufscope::pipeline::default_module(loads[0].modules.iter().map(|a| &a.module)).unwrap_or(0);
    let picked = sweep::pick_modules(&names, first).map_err(|m| (m, 1))?;
    let points: Vec<Point> = (loads.iter().zip(&names).zip(&picked))
        .map(|((l, names), &i)| {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            Point {
                module: &l.modules[i].module,
                analysis: &l.modules[i].analysis,
                failed: sweep::failed(&names, &l.oom)[i],
            }
        })
        .collect();
    let options = Options {
        capacity: args.capacity.clone().map(|c| c.on(args.capacity_space)),
        at: args.at.clone(),
    };
    let result = sweep::sweep(&points, &options).map_err(|m| (m, 2))?;
    Ok(if args.json {
        let mut json = serde_json::to_string_pretty(&result).unwrap_or_default();
        json.push('\n');
        json
    } else {
        table(&result)
    })
}

/// The files of the compilation `path` names: a folder as it is; a dump file with the
/// files of its run beside it (same stem: dump files, HLO text, `.error.txt`), dumps first.
pub fn compilation_files(path: &Path) -> Vec<PathBuf> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (Some(dir), true) = (path.parent(), path.is_file() && is_ours(&name)) else {
        return vec![path.to_path_buf()];
    };
    let stem = module_name(&name);
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let Ok(entries) = std::fs::read_dir(dir) else { return vec![path.to_path_buf()] };
    let mut siblings: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    siblings.sort();
    let named = |p: &PathBuf| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut out: Vec<PathBuf> = (siblings.iter())
        .filter(|p| is_ours(&named(p)) && module_name(&named(p)) == stem)
        .cloned()
        .collect();
    out.extend(siblings.iter().filter(|p| is_error_text(&named(p)) && named(p) == format!("{stem}.error.txt")).cloned());
    out.extend((siblings.iter()).filter(|p| {
        let n = named(p);
        bufscope::parse::is_hlo_text(&n) && hlo_module_names(&n).contains(&stem)
    }).cloned());
    out
}

/// The sweep as text: the varied dimension, then per memory space its points, fit,
/// predictions, verdict and categories.
fn table(s: &Sweep) -> String {
    let values: Vec<String> = s.varied.values.iter().map(u64::to_string).collect();
    let mut out = format!("{}: {} = {}\n", s.module, s.varied.what, values.join(", "));
    for sp in &s.spaces {
        out.push_str(&format!("\n{}\n", sp.label));
        out.push_str(&format!("  {:>10}  {:>12}\n", "value", "peak"));
        for p in &sp.points {
            let mut note = String::new();
            if p.failed {
                note.push_str("  compile failed (out of memory)");
            }
            if p.pinned {
                note.push_str("  pinned");
            }
            if p.compiler_remats > 0 {
                note.push_str(&format!("  {} rematerialised by the compiler", p.compiler_remats));
            }
            out.push_str(&format!("  {:>10}  {:>12}{note}\n", p.value, human_bytes(p.peak_live_bytes)));
        }
        for a in &sp.at {
            out.push_str(&format!("  {:>10}  {:>12}  predicted\n", a.value, human_bytes(a.peak_live_bytes)));
        }
        out.push_str(&format!("  {}\n", sp.sentence));
        for c in sp.categories.iter().filter(|c| c.points.iter().any(|p| p.peak_live_bytes > 0)) {
            let fit = c.model.as_ref().map_or("no fit".to_string(), |m| {
                format!("{} (worst residual {})", m.formula(), human_bytes(m.max_residual_bytes))
            });
            out.push_str(&format!("    {:<18} {fit}\n", c.label));
        }
    }
    out
}
