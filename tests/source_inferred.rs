//! Source lines where the dump names none: the nearest source through the HLO text
//! (`bufscope::query::nearest_source`), on the real TPU compilations of
//! `../shared/dumps/tpu-aot`, marked inferred wherever shown.

mod common;

use bufscope::analysis::analyze;
use bufscope::answers::groups::{by_source_line, NO_SOURCE};
use bufscope::answers::live::live_set;
use bufscope::model::Module;

/// The module of `stem` (under `../shared/dumps`) read with its HLO text.
fn load(dir: &std::path::Path, stem: &str) -> Module {
    let (folder, name) = stem.rsplit_once('/').unwrap_or(("", stem));
    common::load_stem(&dir.join(folder), &format!("{name}."))
}

/// The LM of `programs/tpu_programs.py` (8 layers in `lax.scan` with remat): the forward
/// scan's stacked output `while.43{2}` (the residuals) gets the line inside `layer_fn` that
/// makes each slice (its `return`, not the scan call at line 151); every inferred line at
/// the peak points into a Python file, some inside `layer_fn`; the grouping still sums to the step; and most of the
/// peak that is not an entry parameter has a source.
#[test]
fn scan_outputs_get_the_line_inside_the_layer() {
    let Some(dir) = common::shared_dumps_or_skip("scan_outputs_get_the_line_inside_the_layer") else {
        return;
    };
    let m = load(&dir, "tpu-aot/jax0.12-libtpu0.0.50/tpu_v5e_lm_scan_remat");
    let program = std::fs::read_to_string(dir.join("tpu-aot/programs/tpu_programs.py")).unwrap();
    let lines: Vec<&str> = program.lines().collect();
    let layer = |line: u32| {
        let start = lines.iter().position(|l| l.starts_with("def layer_fn")).unwrap() as u32 + 1;
        let end = start + lines[start as usize..].iter().position(|l| l.starts_with("def ")).unwrap() as u32;
        (start..end).contains(&line)
    };
    let at = m.values.iter().position(|v| m.value_name(v) == "while.43{2}").unwrap();
    match bufscope::query::source_location(&m, &m.values[at]) {
        Some(bufscope::query::SourceLocation::File { file, line, inferred: true, .. }) => {
            assert!(file.ends_with("tpu_programs.py") && layer(line), "{file}:{line}");
        }
        other => panic!("{other:?}"),
    }
    let a = analyze(&m);
    let s = a.space(0).unwrap();
    let live = live_set(&m, s, s.peak_time.unwrap());
    let rows = by_source_line(&m, &live);
    assert_eq!(rows.iter().map(|r| r.bytes).sum::<u64>(), live.occupied_bytes);
    let inferred: Vec<_> = rows.iter().filter(|r| r.inferred).collect();
    assert!(!inferred.is_empty());
    for r in &inferred {
        assert!(r.label().ends_with("(inferred)"), "{}", r.label());
        assert!(r.file.ends_with(".py") && r.line > 0, "{}", r.label());
    }
    assert!(inferred.iter().any(|r| r.file.ends_with("tpu_programs.py") && layer(r.line)));
    let none: u64 = rows.iter().filter(|r| r.file == NO_SOURCE).map(|r| r.bytes).sum();
    assert!(none * 10 < live.occupied_bytes, "{none} of {} with no source", live.occupied_bytes);
}

/// MaxText llama3.1-8b: before, 90.8 % of the HBM peak had no source; now the rows with no
/// source but the entry's parameters hold under 5 % of it, and the inferred rows point into
/// MaxText's layers.
#[test]
fn maxtext_peak_mostly_sourced() {
    let Some(dir) = common::shared_dumps_or_skip("maxtext_peak_mostly_sourced") else { return };
    let m = load(&dir, "tpu-aot/maxtext0.2.5/tpu_v5e-16_maxtext_llama3.1-8b_pdb1");
    let a = analyze(&m);
    let s = a.space(0).unwrap();
    let live = live_set(&m, s, s.peak_time.unwrap());
    let rows = by_source_line(&m, &live);
    assert_eq!(rows.iter().map(|r| r.bytes).sum::<u64>(), live.occupied_bytes);
    let none: u64 = rows.iter().filter(|r| r.file == NO_SOURCE).map(|r| r.bytes).sum();
    assert!(none * 20 < live.occupied_bytes, "{none} of {}", live.occupied_bytes);
    let inferred: u64 = rows.iter().filter(|r| r.inferred).map(|r| r.bytes).sum();
    assert!(inferred * 10 > live.occupied_bytes, "{inferred} of {}", live.occupied_bytes);
    assert!(rows.iter().filter(|r| r.inferred).all(|r| r.file.contains("maxtext")));
}
