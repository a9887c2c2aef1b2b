//! Every fixture cut short: at every line boundary of files up to 300 lines (and in the
//! middle of every line), else at `BUFSCOPE_CUTS` evenly spaced byte offsets and as many
//! line boundaries (default 200 in an optimised build, 40 in debug). Nothing may panic, and
//! a cut in the middle of a structured line must give a warning (or an error).
//!
//! (A file of its own: a stack overflow aborts the whole test binary, and would hide the
//! results of the other robustness tests.)

mod common;

use common::*;

fn cut_count() -> usize {
    std::env::var("BUFSCOPE_CUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) { 40 } else { 200 })
}

/// Whether cutting `line` after `k` bytes (0 < k < len) surely leaves a line that no
/// grammar rule accepts (or, for the Total line, a total that no longer matches), so the
/// parser must warn. Lines whose every prefix could be valid (positions, uses, the opaque
/// `from instruction:` text, names cut inside) are not required to warn.
fn cut_must_warn(line: &str, k: usize) -> bool {
    let prefix = &line[..k];
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if line.starts_with("allocation ")
        || line.starts_with("Total bytes used: ")
        || line.starts_with("HloLiveRange")
        || line.starts_with("  Live ranges at ")
        || line.starts_with("  Stack trace breakdown")
        || line.starts_with('<')
        || matches!(
            line,
            "BufferAssignment:"
                | "Used values:"
                | "  InstructionSequence:"
                | "  BufferLiveRange:"
                | " positions:"
                | " uses:"
        )
    {
        return true;
    }
    if line.starts_with(" from instruction:") {
        return k < " from instruction:".len();
    }
    if line.starts_with(" value: <") {
        let Some(shape_at) = line.find("): ").map(|i| i + 3) else {
            return true;
        };
        if k <= shape_at {
            return true;
        }
        // Inside the shape: a balanced prefix ending a dimension list, tuple or layout
        // (`f32[8,128]` of `f32[8,128]{1,0}`) is itself a valid shape.
        let shape = &prefix[shape_at..];
        let mut depth = 0i32;
        for c in shape.chars() {
            match c {
                '[' | '{' | '(' => depth += 1,
                ']' | '}' | ')' => depth -= 1,
                _ => {}
            }
        }
        return !(depth == 0 && shape.ends_with([']', ')', '}']));
    }
    if let Some(entry) = line.strip_prefix("    ") {
        if line.contains(" (cumulative: ") && prefix.ends_with(" bytes") {
            return false; // `name{i}: N bytes`: the peak line of 2025-04-14 .. 2025-05-16
        }
        if entry.starts_with(' ') || line.contains(" (cumulative: ") || line.ends_with(" bytes)") {
            // Peak (new form) or stack-tree lines: they end in `bytes)`.
            return line.ends_with(" bytes)");
        }
        if line.ends_with(" bytes") && entry.contains(": ") {
            return true; // old peak form `name: N bytes`
        }
        if entry.contains('{') {
            // BufferLiveRange `name{i}:s-e`: a cut inside `e` leaves a valid line.
            let p = &prefix[4.min(prefix.len())..];
            if let Some((key, range)) = p.rsplit_once(':') {
                if let Some((a, b)) = range.split_once('-') {
                    if key.contains('{') && key.ends_with('}') && digits(a) && digits(b) {
                        return false;
                    }
                }
            }
            return true;
        }
        if let Some((i, _)) = entry.split_once(':') {
            if digits(i) {
                // Sequence `i:name`: valid as soon as one character of the name is left.
                let p = &prefix[4.min(prefix.len())..];
                return !p.split_once(':').is_some_and(|(_, n)| !n.is_empty());
            }
        }
    }
    false
}

#[test]
fn cut_points_never_panic_and_midline_cuts_warn() {
    let cuts = cut_count();
    let mut missing = Vec::new();
    let mut tried = 0;
    for m in fixture_modules() {
        for (fi, (name, bytes)) in m.files.iter().enumerate() {
            let starts = line_starts(bytes);
            let lines = starts.len();
            let mut points: Vec<usize> = if lines <= 300 {
                // Every line boundary, and a point inside every line.
                let mut p = starts.clone();
                p.extend(starts.windows(2).map(|w| (w[0] + w[1]) / 2));
                p
            } else {
                let mut p: Vec<usize> = (0..cuts).map(|i| i * bytes.len() / cuts).collect();
                p.extend((0..cuts).map(|i| starts[i * (lines - 1) / cuts]));
                p
            };
            points.push(bytes.len().saturating_sub(1));
            points.sort_unstable();
            points.dedup();
            for &at in &points {
                if at >= bytes.len() {
                    continue;
                }
                tried += 1;
                let cut = &bytes[..at];
                let what = format!("{} cut at byte {at}", name);
                if std::env::var_os("BUFSCOPE_TRACE").is_some() {
                    eprintln!("{}: {what}", m.label);
                }
                let load = load_module_with(&m, fi, cut);
                sane(&load, &what);
                // Mid-line: the line holding `at` loses its tail.
                let li = starts.partition_point(|&s| s <= at) - 1;
                let (ls, le) = (
                    starts[li],
                    starts.get(li + 1).map_or(bytes.len(), |e| e - 1),
                );
                if at == ls || ModuleFiles::is_report(name) {
                    continue;
                }
                let line = String::from_utf8_lossy(&bytes[ls..le]);
                let line = line.strip_suffix('\r').unwrap_or(&line);
                let k = at - ls;
                if k < line.len() && line.is_char_boundary(k) && cut_must_warn(line, k) {
                    // Any warning will do: a truncated file may be noticed by a module-level check.
                    let warned = !all_warnings(&load).is_empty() || !load.errors.is_empty();
                    if !warned {
                        missing.push(format!(
                            "{}: {what}: line {} cut to {:?}",
                            m.label,
                            li + 1,
                            &line[..k]
                        ));
                    }
                }
            }
        }
    }
    assert!(tried > 1000, "only {tried} cut points");
    assert!(
        missing.is_empty(),
        "{} mid-line cuts gave no warning (first 30):\n{}",
        missing.len(),
        missing[..missing.len().min(30)].join("\n")
    );
}
