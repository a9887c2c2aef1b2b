//! `bufscope::diff` on whole loads and its outputs: folders of fixture modules paired by
//! name, the gate on a real growth, the JSON names. The timing of the 94 MB dump against
//! itself is an ignored test (it prints, never asserts).

mod common;
#[path = "common/diff_fixture.rs"]
mod diff_fixture;

use std::collections::BTreeSet;

use bufscope::analysis::{analyze, Analysis};
use bufscope::diff::{
    self, diff_loads, diff_modules, pair_by_name, Limit, MatchRule, PairRule, Side,
};
use bufscope::model::Module;
use diff_fixture::{d, load, MLP};

/// Whole folders: modules paired by exact name, the two that jax 0.10.2's folder lacks
/// listed as unpaired; and XLA-style names (`module_NNNN.`, `.cl_N`) paired when stripped.
#[test]
fn loads_pair_by_name() {
    let folder = |v: &str| -> Vec<Module> {
        let files: Vec<_> = common::fixture_modules()
            .into_iter()
            .filter(|m| m.folder == format!("cpu/{v}"))
            .collect();
        let inputs: Vec<(&str, &[u8])> = files.iter().flat_map(|f| f.inputs()).collect();
        bufscope::load_files(inputs).modules
    };
    let (old, new) = (folder("jax0.6.2"), folder("jax0.10.2"));
    let names = |ms: &[Module]| ms.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
    let p = pair_by_name(&names(&old), &names(&new));
    assert!(p
        .pairs
        .iter()
        .all(|p| p.rule == PairRule::ExactName && old[p.base].name == new[p.new].name));
    assert_eq!(p.pairs.len(), 4);
    let unpaired: BTreeSet<&str> = p
        .unpaired_base
        .iter()
        .map(|&i| old[i].name.as_str())
        .collect();
    assert_eq!(
        unpaired,
        BTreeSet::from(["cpu_transformer_bf16", "cpu_tuple_consts"])
    );
    assert!(p.unpaired_new.is_empty());
    let (oa, na): (Vec<Analysis>, Vec<Analysis>) = (
        old.iter().map(analyze).collect(),
        new.iter().map(analyze).collect(),
    );
    let bs: Vec<Side> = old.iter().zip(&oa).map(|(m, a)| Side::new(m, a)).collect();
    let ns: Vec<Side> = new.iter().zip(&na).map(|(m, a)| Side::new(m, a)).collect();
    let load_diff = diff_loads(&bs, &ns, &p);
    assert_eq!(load_diff.modules.len(), 4);
    assert_eq!(
        load_diff
            .unpaired_base
            .iter()
            .collect::<BTreeSet<_>>()
            .len(),
        2
    );

    // The same program under XLA's file names: numbers and `.cl_N` differ.
    let renamed = |label: &str, stem: &str| -> Module {
        let f = common::fixture_module(label);
        let named: Vec<(String, &[u8])> = f
            .files
            .iter()
            .map(|(n, b)| {
                (
                    n.replacen("cpu_mlp_train.", &format!("{stem}-"), 1),
                    b.as_slice(),
                )
            })
            .collect();
        let mut l = bufscope::load_files(named.iter().map(|(n, b)| (n.as_str(), *b)));
        assert!(l.errors.is_empty(), "{:?}", l.errors);
        assert_eq!(l.modules.len(), 1, "{label}");
        l.modules.remove(0)
    };
    let a = renamed(
        MLP[3],
        "module_0012.jit_mlp_train_step.cpu_after_optimizations",
    );
    let b = renamed(
        MLP[4],
        "module_0031.jit_mlp_train_step.cl_7.cpu_after_optimizations",
    );
    let tiny = renamed(
        "cpu/jax0.10.2/cpu_tiny",
        "module_0002.jit_tiny.cpu_after_optimizations",
    );
    let p = pair_by_name(&[a.name.as_str()], &[tiny.name.as_str(), b.name.as_str()]);
    assert_eq!(
        (p.pairs.len(), p.pairs[0].new, p.pairs[0].rule),
        (1, 1, PairRule::StrippedName)
    );
    assert_eq!(p.unpaired_new, [0]);
}

/// The gate on a real growth: cpu_mlp_train's peak from jax 0.4.38 to 0.6.2. A limit equal
/// to the growth passes, one byte less fails naming colour 0; percentages alike.
#[test]
fn gate_on_a_real_growth() {
    let (b, n) = (load(MLP[0]), load(MLP[1]));
    let diff = d(&b, &n);
    let (bp, np) = (b.1.spaces[0].peak_bytes, n.1.spaces[0].peak_bytes);
    assert!(np > bp, "the fixture pair is expected to grow");
    let growth = np - bp;
    assert!(diff::verdict([&diff], Limit::Bytes(growth)).passed);
    let v = diff::verdict([&diff], Limit::Bytes(growth - 1));
    assert!(!v.passed);
    assert_eq!(v.failures.len(), 1);
    let f = &v.failures[0];
    assert_eq!(
        (
            f.color,
            f.base_peak_bytes,
            f.new_peak_bytes,
            f.delta_bytes,
            f.allowed_bytes
        ),
        (0, bp, np, growth as i64, growth - 1)
    );
    assert_eq!(f.base_module, "cpu_mlp_train");
    let pct = growth as f64 * 100.0 / bp as f64;
    assert!(diff::verdict([&diff], Limit::Percent(pct * 1.001)).passed);
    assert!(!diff::verdict([&diff], Limit::Percent(pct * 0.999)).passed);
    // The other way the peak shrinks: any limit passes.
    assert!(diff::verdict([&d(&n, &b)], Limit::Bytes(0)).passed);
    assert_eq!(Limit::parse("64MiB"), Ok(Limit::Bytes(64 * 1024 * 1024)));
    assert_eq!(Limit::parse("5%"), Ok(Limit::Percent(5.0)));
}

/// `--json`: per module, per memory space, exactly the names `color`, `base_peak_bytes`,
/// `new_peak_bytes`, `delta_bytes`, and the matched changes; the curves are not printed.
#[test]
fn json_names() {
    let (b, n) = (load(MLP[2]), load(MLP[3]));
    let (bs, ns) = ([Side::new(&b.0, &b.1)], [Side::new(&n.0, &n.1)]);
    let load_diff = diff_loads(
        &bs,
        &ns,
        &pair_by_name(&["cpu_mlp_train"], &["cpu_mlp_train"]),
    );
    let json: serde_json::Value = serde_json::from_str(&load_diff.to_json()).unwrap();
    let m = &json["modules"][0];
    assert_eq!(m["paired_by"], "exact_name");
    let s = &m["spaces"][0];
    assert_eq!(s["color"], 0);
    assert_eq!(s["base_peak_bytes"], b.1.spaces[0].peak_bytes);
    assert_eq!(s["new_peak_bytes"], n.1.spaces[0].peak_bytes);
    assert_eq!(
        s["delta_bytes"],
        n.1.spaces[0].peak_bytes as i64 - b.1.spaces[0].peak_bytes as i64
    );
    assert_eq!(s["changes"]["gone"][0]["base"]["name"], "reduce-window");
    assert_eq!(s["changes"]["unchanged"][0]["rule"], "op_name_shape");
    assert!(s.get("base_curve").is_none() && s.get("new_curve").is_none());
}

/// Timing on the 94 MB dump (release: `cargo test --release --test diff_loads -- --ignored
/// --nocapture`): reading both sides, analysing both, the diff; against itself (every value
/// matches by op_name and shape) and against a variant whose op_names all differ (every
/// op_name prefixed, so the first rule matches nothing and the second rule does the work).
/// Prints, never asserts.
#[test]
#[ignore]
fn timing_of_the_94_mb_dump() {
    let Some(dir) = common::shared_dumps_or_skip("timing_of_the_94_mb_dump") else {
        return;
    };
    let path = dir.join("cpu/jax0.6.2/cpu_deep_unrolled_500.buffer-assignment.txt");
    let bytes = std::fs::read(&path).unwrap();
    let variant = replace_all(&bytes, b"op_name=\"", b"op_name=\"v2/");
    for (what, other) in [("itself", &bytes), ("its op_name variant", &variant)] {
        let name = "cpu_deep_unrolled_500.buffer-assignment.txt";
        let t = std::time::Instant::now();
        let base = bufscope::load_files([(name, bytes.as_slice())])
            .modules
            .remove(0);
        let new = bufscope::load_files([(name, other.as_slice())])
            .modules
            .remove(0);
        let read = t.elapsed();
        let t = std::time::Instant::now();
        let (ba, na) = (analyze(&base), analyze(&new));
        let analysis = t.elapsed();
        let t = std::time::Instant::now();
        let diff = diff_modules(Side::new(&base, &ba), Side::new(&new, &na));
        let compare = t.elapsed();
        let live: usize = ba.spaces.iter().map(|s| s.live_at_peak.len()).sum();
        let rule = |r: MatchRule| {
            diff.spaces
                .iter()
                .flat_map(|s| &s.changes.unchanged)
                .filter(|u| u.rule == Some(r))
                .count()
        };
        println!(
            "94 MB dump against {what}: reading both {read:?}, analysing both {analysis:?}, \
             diff {compare:?} ({live} values live at the base peak; matched by op_name+shape {}, \
             by name {}); diff = {:.2} × reading, diff + analyses = {:.2} × reading",
            rule(MatchRule::OpNameShape),
            rule(MatchRule::Name),
            compare.as_secs_f64() / read.as_secs_f64(),
            (analysis + compare).as_secs_f64() / read.as_secs_f64()
        );
    }
}

/// `bytes` with every `from` replaced by `to`.
fn replace_all(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 8);
    let mut rest = bytes;
    while let Some(at) = rest.windows(from.len()).position(|w| w == from) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(to);
        rest = &rest[at + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}
