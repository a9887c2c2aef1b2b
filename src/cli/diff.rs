//! `bufscope diff BASE NEW`: two compilations compared ([`bufscope::diff`]), as text or
//! JSON, and the CI gate on the growth of each memory space's peak.
//!
//! Owns: the command's arguments, pairing by hand (`--pair`), the text it prints and its
//! exit code: 0 done (and the gate passed), 1 a peak grew past `--max-growth`, 2 an input
//! could not be read or the arguments are wrong.

use super::{input, write_stdout, Failure, PATHS};
use bufscope::diff::{
    diff_loads, pair_modules, Limit, LoadDiff, MatchRule, ModuleDiff, OneSide, PairRule, Side,
    SpaceDiff, ValueChange, ValueInfo, Verdict,
};
use bufscope::pipeline::Loaded;
use bufscope::render::diff::{comparison_svg, delta_text, ChartText};
use bufscope::render::Style;
use bufscope::text::clip_middle;
use bufscope::units::{exact_bytes, group_digits, human_bytes, signed_bytes};
use clap::Args;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Compares two compilations: peaks, what changed at them, and a growth gate for CI
///
/// Modules are paired by name (the same name, or the same once XLA's `module_NNNN.` and
/// `.cl_N` parts are dropped; two single modules are paired whatever their names), or by
/// hand with --pair. Per paired module and memory space: both peaks, the delta, and the
/// largest changes among the values live at the peaks (new, gone, grown, shrunk, with the
/// rule that matched each pair). Exit status: 0 done, 1 a peak grew past --max-growth, 2 an
/// input could not be read or the arguments are wrong.
#[derive(Args)]
#[command(args_override_self = true, after_help = PATHS)]
pub struct DiffArgs {
    /// The base: a dump file or a folder of dumps
    #[arg(value_name = "BASE")]
    base: PathBuf,
    /// The change: a dump file or a folder of dumps
    #[arg(value_name = "NEW")]
    new: PathBuf,
    /// Print one JSON object instead of text
    #[arg(long)]
    json: bool,
    /// Exit 1 when a memory space's peak grew by more than this: bytes (64MiB, 64MB, 1e6)
    /// or a percentage of the base peak (5%)
    #[arg(long, value_name = "LIMIT", value_parser = Limit::parse)]
    max_growth: Option<Limit>,
    /// Changes listed per memory space
    #[arg(long, value_name = "N", default_value_t = 5)]
    top: usize,
    /// Pair these two modules whatever their names (repeatable); a name or a part of one
    #[arg(long, value_name = "BASE_MODULE=NEW_MODULE", value_parser = hand_pair)]
    pair: Vec<(String, String)>,
    /// Also draw both occupied-bytes curves of every memory space of the first paired
    /// module, on relative program position with each peak marked, into this SVG
    #[arg(long, value_name = "OUT.svg")]
    svg: Option<PathBuf>,
}

/// The text is kept within this many columns.
const WIDTH: usize = 100;

/// One [`Side`] per module read.
fn sides(l: &Loaded) -> Vec<Side<'_>> {
    l.modules
        .iter()
        .map(|a| Side::new(&a.module, &a.analysis))
        .collect()
}

/// `a=b` of `--pair`.
fn hand_pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((b, n)) if !b.trim().is_empty() && !n.trim().is_empty() => {
            Ok((b.trim().to_string(), n.trim().to_string()))
        }
        _ => Err(format!(
            "cannot read the pair '{text}': expected BASE_MODULE=NEW_MODULE"
        )),
    }
}

/// Runs `bufscope diff` and returns the exit code.
pub fn diff(args: DiffArgs) -> i32 {
    match compare(&args) {
        Ok(Some(verdict)) if !verdict.passed => 1,
        Ok(_) => 0,
        Err(Failure(msg)) => {
            eprintln!("bufscope: {msg}");
            2
        }
    }
}

/// Reads both sides, compares and prints; the gate's verdict when `--max-growth` is given.
fn compare(args: &DiffArgs) -> Result<Option<Verdict>, Failure> {
    let base = read_side(&args.base, "base")?;
    let new = read_side(&args.new, "new")?;
    let names =
        |l: &Loaded| -> Vec<String> { l.modules.iter().map(|a| a.module.name.clone()).collect() };
    let by_hand = hand_positions(&base, &new, &args.pair)?;
    let pairing = pair_modules(&names(&base), &names(&new), &by_hand).map_err(Failure)?;
    let load_diff = diff_loads(&sides(&base), &sides(&new), &pairing);
    if load_diff.modules.is_empty() {
        eprintln!("bufscope: no module of the base pairs with one of the new: nothing is compared (pair them with --pair BASE_MODULE=NEW_MODULE)");
    }
    if let Some(out) = &args.svg {
        write_svg(&load_diff, args, out)?;
    }
    let verdict = args.max_growth.map(|limit| load_diff.verdict(limit));
    let out = if args.json {
        json(&load_diff, verdict.as_ref())
    } else {
        text(&load_diff, verdict.as_ref(), args.top)
    };
    write_stdout(out.as_bytes())?;
    Ok(verdict)
}

/// The charts of `--svg` ([`bufscope::render::diff::comparison_svg`]), 1200 pixels wide,
/// each side named by its file or folder.
fn write_svg(load_diff: &LoadDiff, args: &DiffArgs, out: &PathBuf) -> Result<(), Failure> {
    let Some(m) = load_diff.modules.first() else {
        return Err(Failure(format!(
            "--svg {}: no paired module to draw",
            out.display()
        )));
    };
    let name = |p: &PathBuf| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    let (base_label, new_label) = (name(&args.base), name(&args.new));
    let text = ChartText {
        base_label: &base_label,
        new_label: &new_label,
        capacity: None,
        backend: m.backend,
    };
    let spaces: Vec<_> = m.spaces.iter().map(|s| &s.peaks).collect();
    let svg = comparison_svg(&spaces, &text, &Style::default(), 1200);
    std::fs::write(out, svg).map_err(|e| Failure(format!("cannot write {}: {e}", out.display())))
}

/// One side read as `summary` reads its operands; a side without a module, or with an
/// input that is no dump, cannot be compared.
fn read_side(path: &PathBuf, side: &str) -> Result<Loaded, Failure> {
    let p = path.display();
    let loaded = input::open(std::slice::from_ref(path))
        .map_err(|Failure(m)| Failure(format!("the {side} ({p}): {m}")))?;
    if loaded.modules.is_empty() {
        return Err(Failure(format!(
            "the {side} ({p}) holds no buffer-assignment module to compare"
        )));
    }
    if !loaded.errors.is_empty() {
        return Err(Failure(format!(
            "the {side} ({p}) holds a file that is not a dump (see above); name the dump files or folders only"
        )));
    }
    // XLA writes the dump of a compile that ran out of memory beside its error
    // (`*.error.txt`): the message is not compared, only said.
    if !loaded.oom.is_empty() {
        eprintln!("bufscope: the {side} ({p}) also holds an out-of-memory message, not compared (see `bufscope summary`)");
    }
    Ok(loaded)
}

/// The positions of the `--pair` modules ([`input::pick_module`]: a name, or a part of one).
fn hand_positions(
    base: &Loaded,
    new: &Loaded,
    pairs: &[(String, String)],
) -> Result<Vec<(usize, usize)>, Failure> {
    let position = |l: &Loaded, name: &str, side: &str| -> Result<usize, Failure> {
        let picked = input::pick_module(l, Some(name))
            .map_err(|Failure(m)| Failure(format!("--pair, the {side}: {m}")))?;
        Ok(l.modules
            .iter()
            .position(|a| std::ptr::eq(a, picked))
            .unwrap_or_default())
    };
    pairs
        .iter()
        .map(|(b, n)| Ok((position(base, b, "base")?, position(new, n, "new")?)))
        .collect()
}

/// [`LoadDiff::to_json`], with the gate's `verdict` after it when there is one.
fn json(load_diff: &LoadDiff, verdict: Option<&Verdict>) -> String {
    #[derive(Serialize)]
    struct Gated<'a> {
        #[serde(flatten)]
        diff: &'a LoadDiff,
        verdict: &'a Verdict,
    }
    let mut out = match verdict {
        None => load_diff.to_json(),
        Some(verdict) => serde_json::to_string_pretty(&Gated {
            diff: load_diff,
            verdict,
        })
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}")),
    };
    out.push('\n');
    out
}

/// The text report: each paired module's memory spaces, the unpaired modules, the verdict.
fn text(load_diff: &LoadDiff, verdict: Option<&Verdict>, top: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "The two schedules are compared on relative program position (0 = start, 1 = end), not on steps."
    );
    for m in &load_diff.modules {
        out.push('\n');
        out.push_str(&module_text(m, top));
    }
    for (side, names) in [
        ("base", &load_diff.unpaired_base),
        ("new", &load_diff.unpaired_new),
    ] {
        if names.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\nOnly in the {side} ({}), not compared:", names.len());
        for name in names {
            let _ = writeln!(out, "  {}", clip_middle(name, WIDTH - 2));
        }
    }
    if let Some(v) = verdict {
        out.push('\n');
        out.push_str(&verdict_text(v));
    }
    out
}

fn module_text(m: &ModuleDiff, top: usize) -> String {
    let rule = match m.paired_by {
        Some(PairRule::ByHand) => "paired by hand",
        Some(PairRule::ExactName) => "paired by name",
        Some(PairRule::StrippedName) => "paired by name without module_NNNN and cl_N",
        Some(PairRule::OnlyModule) => "the only module of each side",
        None => "paired",
    };
    let mut out = if m.base_name == m.new_name {
        format!(
            "{} ({rule})\n",
            clip_middle(&m.base_name, WIDTH - rule.len() - 3)
        )
    } else {
        let each = (WIDTH - rule.len() - 6) / 2;
        format!(
            "{} → {} ({rule})\n",
            clip_middle(&m.base_name, each),
            clip_middle(&m.new_name, each)
        )
    };
    for s in &m.spaces {
        out.push_str(&space_text(s, top));
    }
    out.push_str(&m.waste.as_ref().filter(|w| w.changed()).map_or_else(String::new, waste_text));
    out
}

/// The waste answers compared (issue 35): the totals that moved, the findings added and gone.
fn waste_text(w: &bufscope::diff::waste::WasteDiff) -> String {
    let mut out = String::from("  waste per device:\n");
    for (what, b) in [
        ("replicated, saved if cut like their peers", w.replicated_saving_bytes),
        ("gathered, live at the peak", w.gathered_at_peak_bytes),
        ("donated but left over", w.left_over_bytes),
        ("double buffered (not donated)", w.double_buffered_bytes),
    ] {
        if b.base != b.new {
            let _ = writeln!(out, "    {what}: {} → {}", human_bytes(b.base), human_bytes(b.new));
        }
    }
    for (sign, list) in [("+", &w.added), ("-", &w.removed)] {
        for f in list {
            let _ = writeln!(out, "    {sign} {}", clip_middle(f, WIDTH - 6));
        }
    }
    out
}

/// One memory space: the peaks and the delta, where each peak is, the largest changes.
fn space_text(s: &SpaceDiff, top: usize) -> String {
    let p = &s.peaks;
    let mut out = format!(
        "  memory space {}: peak {} → {}, {}\n",
        p.color,
        human_bytes(p.base_peak_bytes),
        human_bytes(p.new_peak_bytes),
        delta_text(p),
    );
    let at = |pos: Option<f64>, step: Option<u32>, steps: u32| match (pos, step) {
        (Some(pos), Some(t)) => format!("{:.2} (step {t} of {steps})", pos),
        _ => "none".to_string(),
    };
    let _ = writeln!(
        out,
        "    peak position: base {}, new {}",
        at(p.base_peak_position, p.base_peak_step, p.base_steps),
        at(p.new_peak_position, p.new_peak_step, p.new_steps)
    );
    let c = &s.changes;
    let shown = c.largest(top);
    let _ = writeln!(
        out,
        "    at the peaks: {} new, {} gone, {} grown, {} shrunk, {} unchanged{}",
        c.new.len(),
        c.gone.len(),
        c.grown.len(),
        c.shrunk.len(),
        c.unchanged.len(),
        match shown.len() {
            0 => String::new(),
            1 => "; the largest change:".to_string(),
            n => format!("; the {n} largest changes:"),
        }
    );
    for row in shown {
        out.push_str(&change_row(row));
    }
    out.push_str(&one_side_text(&s.one_side, top));
    out
}

/// The values found on one side only, anywhere: their counts and bytes, and the `top`
/// largest of each side (`    base only  4.0 MiB  custom-call scratch  custom-call.3{1}`).
fn one_side_text(o: &OneSide, top: usize) -> String {
    let mut out = String::new();
    if o.base_only.is_empty() && o.new_only.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "    on one side only, anywhere: {} in the base ({}), {} in the new ({})",
        o.base_only.len(),
        human_bytes(o.base_only_bytes),
        o.new_only.len(),
        human_bytes(o.new_only_bytes),
    );
    for (side, rows) in [("base only", &o.base_only), ("new only", &o.new_only)] {
        for v in rows.iter().take(top) {
            let head = format!(
                "    {side:<9} {:>10}  {:<19}  ",
                human_bytes(v.bytes),
                v.kind
            );
            let room = WIDTH.saturating_sub(head.chars().count()).max(8);
            let _ = writeln!(out, "{head}{}", clip_middle(&v.name, room));
        }
    }
    out
}

/// `    grown  +16.0 KiB  1.0 MiB → 1.1 MiB  op_name+shape  name`.
fn change_row(row: &ValueChange) -> String {
    let class = match (&row.base, &row.new) {
        (None, _) => "new",
        (_, None) => "gone",
        _ if row.delta_bytes > 0 => "grown",
        _ => "shrunk",
    };
    let size = |v: &Option<ValueInfo>| v.as_ref().map(|v| human_bytes(v.bytes));
    let sizes = match (size(&row.base), size(&row.new)) {
        (Some(b), Some(n)) => format!("{b} → {n}"),
        (Some(b), None) => format!("{b} → -"),
        (None, Some(n)) => format!("- → {n}"),
        (None, None) => String::new(),
    };
    let rule = match row.rule {
        Some(MatchRule::OpNameShape) => "op_name+shape",
        Some(MatchRule::Parameter) => "parameter",
        Some(MatchRule::SourceShape) => "source+shape",
        Some(MatchRule::Name) => "name",
        Some(MatchRule::RoleShape) => "role+shape",
        Some(MatchRule::TupleTable) => "tuple table",
        None => "-",
    };
    let name = match (&row.base, &row.new) {
        (Some(b), Some(n)) if b.name != n.name => format!("{} → {}", b.name, n.name),
        _ => row.name().to_string(),
    };
    let head = format!(
        "    {class:<6} {:>11}  {sizes:<21}  {rule:<13}  ",
        signed_human(row.delta_bytes)
    );
    let room = WIDTH.saturating_sub(head.chars().count()).max(8);
    format!("{head}{}\n", clip_middle(&name, room))
}

fn verdict_text(v: &Verdict) -> String {
    let limit = match v.limit {
        Limit::Bytes(b) => exact_bytes(b),
        Limit::Percent(p) => format!("{p}% of the base peak"),
    };
    if v.passed {
        return format!("Gate passed: no memory space's peak grew by more than {limit}.\n");
    }
    let mut out = format!(
        "Gate FAILED: {} memory space{} grew by more than {limit}:\n",
        v.failures.len(),
        if v.failures.len() == 1 { "" } else { "s" }
    );
    for f in &v.failures {
        let name = if f.base_module == f.new_module {
            f.base_module.clone()
        } else {
            format!("{} → {}", f.base_module, f.new_module)
        };
        let tail = format!(
            ", memory space {}: {}, allowed +{} B",
            f.color,
            signed_bytes(f.delta_bytes),
            group_digits(f.allowed_bytes)
        );
        let room = WIDTH.saturating_sub(tail.chars().count() + 2).max(8);
        let _ = writeln!(out, "  {}{tail}", clip_middle(&name, room));
    }
    out
}

/// `+16.0 KiB`, `-512 B`, `0 B`.
fn signed_human(d: i64) -> String {
    format!("{}{}", sign(d), human_bytes(d.unsigned_abs()))
}

fn sign(d: i64) -> &'static str {
    match d.signum() {
        1 => "+",
        -1 => "-",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_and_pairs() {
        assert_eq!(signed_bytes(29_700), "+29,700 B");
        assert_eq!(signed_bytes(-2048), "-2,048 B");
        assert_eq!(signed_bytes(0), "0 B");
        assert_eq!(signed_human(-16 * 1024), "-16.0 KiB");
        assert_eq!(hand_pair("a = b"), Ok(("a".into(), "b".into())));
        assert!(hand_pair("a").is_err() && hand_pair("=b").is_err());
    }
}
