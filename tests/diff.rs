//! `bufscope::diff` on real pairs: the same programs compiled by several jax versions
//! (tests/fixtures/cpu/jax*), each program against itself, a pair whose differences are
//! checked by hand against the two dumps' lines, properties over every pair of fixture
//! modules (antisymmetry, the class totals), the gate and the JSON names. The timing of the
//! 94 MB dump against itself is an ignored test (it prints, never asserts).

mod common;

use std::collections::BTreeSet;

use bufscope::analysis::{analyze, Analysis};
use bufscope::diff::{
    self, diff_loads, diff_modules, pair_by_name, values, Limit, MatchRule, ModuleDiff, PairRule,
    Side,
};
use bufscope::model::Module;
use proptest::prelude::*;

/// A fixture module (`cpu/jax0.7.2/cpu_mlp_train`) read and analysed.
fn load(label: &str) -> (Module, Analysis) {
    let files = common::fixture_module(label);
    let mut l = bufscope::load_files(files.inputs());
    assert!(l.errors.is_empty(), "{label}: {:?}", l.errors);
    let m = l.modules.remove(0);
    let a = analyze(&m);
    (m, a)
}

fn every_fixture() -> Vec<(String, Module, Analysis)> {
    common::fixture_modules()
        .iter()
        .map(|f| {
            let mut l = bufscope::load_files(f.inputs());
            let m = l.modules.remove(0);
            let a = analyze(&m);
            (f.label.clone(), m, a)
        })
        .collect()
}

const MLP: [&str; 5] = [
    "cpu/jax0.4.38/cpu_mlp_train",
    "cpu/jax0.6.2/cpu_mlp_train",
    "cpu/jax0.7.2/cpu_mlp_train",
    "cpu/jax0.9.2/cpu_mlp_train",
    "cpu/jax0.10.2/cpu_mlp_train",
];

fn d(base: &(Module, Analysis), new: &(Module, Analysis)) -> ModuleDiff {
    diff_modules(Side::new(&base.0, &base.1), Side::new(&new.0, &new.1))
}

/// Each fixture against itself: no delta, nothing new, gone, grown or shrunk, every value
/// live at the peak matched to itself, no group changed, and the strictest gate passes.
#[test]
fn a_program_against_itself_has_no_change() {
    for (label, m, a) in every_fixture() {
        let diff = diff_modules(Side::new(&m, &a), Side::new(&m, &a));
        assert_eq!(diff.spaces.len(), a.spaces.len(), "{label}");
        for (s, space) in diff.spaces.iter().zip(&a.spaces) {
            let p = &s.peaks;
            assert_eq!(
                (p.color, p.base_peak_bytes, p.new_peak_bytes),
                (space.color, space.peak_bytes, space.peak_bytes),
                "{label}"
            );
            assert_eq!(
                (p.delta_bytes, p.base_curve == p.new_curve),
                (0, true),
                "{label}"
            );
            let c = &s.changes;
            assert!(
                c.new.is_empty() && c.gone.is_empty() && c.grown.is_empty() && c.shrunk.is_empty(),
                "{label}"
            );
            assert_eq!(c.unchanged.len(), space.live_at_peak.len(), "{label}");
            for u in &c.unchanged {
                let (b, n) = (u.base.as_ref().unwrap(), u.new.as_ref().unwrap());
                assert_eq!(
                    b.value, n.value,
                    "{label}: {} matched to {}",
                    b.name, n.name
                );
            }
            assert!(
                s.groups
                    .by_op_name
                    .iter()
                    .chain(&s.groups.by_source)
                    .all(|g| g.delta_bytes == 0),
                "{label}"
            );
        }
        for limit in [Limit::Bytes(0), Limit::Percent(0.0)] {
            let v = diff::verdict([&diff], limit);
            assert!(v.passed && v.failures.is_empty(), "{label}");
        }
    }
}

/// Every ordered pair of jax versions of cpu_mlp_train: per colour, the delta is the
/// difference of the two analyses' peaks, the peak steps and schedule lengths are the
/// analyses', and each resampled curve still reaches its peak.
#[test]
fn version_pairs_deltas_are_the_difference_of_the_peaks() {
    let sides: Vec<_> = MLP.iter().map(|l| load(l)).collect();
    for (i, b) in sides.iter().enumerate() {
        for (j, n) in sides.iter().enumerate() {
            let diff = d(b, n);
            let colors: BTreeSet<u32> =
                b.1.spaces
                    .iter()
                    .chain(&n.1.spaces)
                    .map(|s| s.color)
                    .collect();
            assert_eq!(
                diff.spaces
                    .iter()
                    .map(|s| s.peaks.color)
                    .collect::<BTreeSet<_>>(),
                colors
            );
            for s in &diff.spaces {
                let p = &s.peaks;
                let (bs, ns) = (b.1.space(p.color).unwrap(), n.1.space(p.color).unwrap());
                let what = format!("{} → {}", MLP[i], MLP[j]);
                assert_eq!(
                    p.delta_bytes,
                    ns.peak_bytes as i64 - bs.peak_bytes as i64,
                    "{what}"
                );
                assert_eq!(
                    (p.base_peak_bytes, p.new_peak_bytes),
                    (bs.peak_bytes, ns.peak_bytes),
                    "{what}"
                );
                assert_eq!(
                    (p.base_peak_step, p.new_peak_step),
                    (bs.peak_time, ns.peak_time),
                    "{what}"
                );
                assert_eq!(
                    (p.base_steps, p.new_steps),
                    (b.1.steps, n.1.steps),
                    "{what}"
                );
                assert_eq!(p.base_curve.len(), diff::CURVE_POINTS);
                assert_eq!(p.base_curve.iter().max(), Some(&bs.peak_bytes), "{what}");
                assert_eq!(p.new_curve.iter().max(), Some(&ns.peak_bytes), "{what}");
                let pct = p.delta_percent.unwrap();
                assert!((pct - p.delta_bytes as f64 * 100.0 / bs.peak_bytes as f64).abs() < 1e-9);
            }
        }
    }
}

/// cpu_mlp_train, jax 0.7.2 → 0.9.2, checked by hand against the two dumps.
///
/// The peaks: the brute-force reference (tests/common/occupied.rs) puts them at step 89 of
/// 0.7.2 (`89:multiply_add_fusion.12`, line 1235) and step 88 of 0.9.2
/// (`88:multiply_add_fusion.12`, line 1141): the same instruction. From the
/// `BufferLiveRange` lines, what is live at one peak and has no counterpart at the other:
///
/// Gone (live at 0.7.2's step 89, nothing alike at 0.9.2's step 88):
/// * `reduce-window`: 0.7.2 line 199 `<554 reduce-window @0> (size=8192,...): f32[4,512]{1,0}`,
///   line 1285 `reduce-window{}:85-90`. 0.9.2 has no value named so and no `f32[4,512]`: its
///   step 85 is `ynn_fusion.2` (line 1138), which sums to `f32[512]` at once.
/// * `params_1___b__.1`: 0.7.2 line 53 (2048 bytes), line 1255 `params_1___b__.1{}:0-93`;
///   in 0.9.2 line 1159 `params_1___b__.1{}:0-87`: dead at 88, its buffer (allocation of
///   line 53–54) already updated in place by `multiply_add_fusion.15`.
/// * `constant.131`: 0.7.2 line 94 (4 bytes), line 1270 `27-90`; 0.9.2 line 1174 `27-85`.
///
/// New (live at 0.9.2's step 88 only):
/// * `ynn_fusion.2`: 0.9.2 line 181 `(size=2048,...): f32[512]{0}`, line 1189 `85-90`;
///   0.7.2 has no `ynn_fusion` at all. (Its op_name `.../transpose(jvp())/reduce_sum` and
///   shape are those of 0.7.2's `reduce_sum.78`, but that one is live 90-95, line 1286.)
/// * `multiply_add_fusion.15`: 0.9.2 line 54 (2048, `f32[512]{0}`), line 1209 `87-96`; in
///   0.7.2 line 1307 it starts at 93, after the peak. It shares op_name `jit(mlp_train_step)/add`
///   and shape with `multiply_add_fusion.16` and `.17`, live at both peaks (0.7.2 lines
///   1306, 1304: from 87 and 88 of 100 steps; 0.9.2 lines 1208, 1206: from 81 and 82 of 97):
///   ordered by relative start, `.16` and `.17` pair with themselves and `.15` (87 of 97)
///   is left over.
///
/// Nothing changed size. So the values: gone 8192 + 2048 + 4, new 2048 + 2048.
#[test]
fn known_difference_checked_by_hand() {
    let (b, n) = (load(MLP[2]), load(MLP[3]));
    for (side, step) in [(&b, 89), (&n, 88)] {
        let r = common::occupied::reference(&side.0, side.1.steps);
        assert_eq!(r[0].peak_time, Some(step));
    }
    let diff = d(&b, &n);
    assert_eq!(diff.spaces.len(), 1);
    let s = &diff.spaces[0];
    assert_eq!(
        (s.peaks.base_peak_step, s.peaks.new_peak_step),
        (Some(89), Some(88))
    );
    let c = &s.changes;
    let rows = |v: &[bufscope::diff::ValueChange], base: bool| -> Vec<(String, u64, String)> {
        v.iter()
            .map(|c| {
                let i = if base {
                    c.base.as_ref()
                } else {
                    c.new.as_ref()
                }
                .unwrap();
                (i.name.clone(), i.bytes, i.shape.clone())
            })
            .collect()
    };
    let own = |name: &str, bytes: u64, shape: &str| (name.to_string(), bytes, shape.to_string());
    assert_eq!(
        rows(&c.gone, true),
        [
            own("reduce-window", 8192, "f32[4,512]{1,0}"),
            own("params_1___b__.1", 2048, "f32[512]{0}"),
            own("constant.131", 4, "f32[]"),
        ]
    );
    assert_eq!(
        rows(&c.new, false),
        [
            own("multiply_add_fusion.15", 2048, "f32[512]{0}"),
            own("ynn_fusion.2", 2048, "f32[512]{0}"),
        ]
    );
    assert!(c.gone.iter().chain(&c.new).all(|x| x.rule.is_none()
        && x.delta_bytes.unsigned_abs() == x.base.as_ref().or(x.new.as_ref()).unwrap().bytes));
    assert!(c.grown.is_empty() && c.shrunk.is_empty());
    assert_eq!(
        (c.totals.gone_bytes, c.totals.new_bytes),
        (8192 + 2048 + 4, 2048 + 2048)
    );
    for name in ["multiply_add_fusion.16", "multiply_add_fusion.17"] {
        let u = c
            .unchanged
            .iter()
            .find(|u| u.base.as_ref().unwrap().name == name)
            .unwrap();
        assert_eq!(u.new.as_ref().unwrap().name, name);
        assert_eq!(u.rule, Some(MatchRule::OpNameShape));
    }
    // Largest first, ties by name: reduce-window (−8192), then the three of 2048 bytes.
    let largest: Vec<(&str, i64)> = c
        .largest(3)
        .iter()
        .map(|x| (x.name(), x.delta_bytes))
        .collect();
    assert_eq!(
        largest,
        [
            ("reduce-window", -8192),
            ("multiply_add_fusion.15", 2048),
            ("params_1___b__.1", -2048)
        ]
    );
    // By op_name, largest change first (ties by key): no op_name −8196 (`reduce-window`,
    // 0.7.2 line 722, and `constant.131`, line 621, have no metadata); then three of 2048:
    // `jit(mlp_train_step)/add` +1 value (`multiply_add_fusion.15`), `.../transpose(jvp())/
    // reduce_sum` (`ynn_fusion.2`, 0.9.2 line 648), `params[1]['b']` (0.7.2 line 506).
    let groups: Vec<(&str, i64)> = s.groups.by_op_name[..4]
        .iter()
        .map(|g| (g.key.as_str(), g.delta_bytes))
        .collect();
    assert_eq!(
        groups,
        [
            ("", -8196),
            ("jit(mlp_train_step)/add", 2048),
            ("jit(mlp_train_step)/transpose(jvp())/reduce_sum", 2048),
            ("params[1]['b']", -2048),
        ]
    );
    assert!(s.groups.by_op_name[4..].iter().all(|g| g.delta_bytes == 0));
}

/// Over every ordered pair of fixture modules: `diff(b, a)` is `diff(a, b)` reversed (deltas
/// negated, the same pairs swapped, new ↔ gone, grown ↔ shrunk), and the class totals add
/// up: `new − gone + grown − shrunk = N − B`, with `B`, `N` the sums of the sizes of the
/// values live at each peak.
#[test]
fn diff_is_antisymmetric_and_totals_add_up_on_every_fixture_pair() {
    let all = every_fixture();
    for (la, ma, aa) in &all {
        for (lb, mb, ab) in &all {
            let ab_ = diff_modules(Side::new(ma, aa), Side::new(mb, ab));
            let ba_ = diff_modules(Side::new(mb, ab), Side::new(ma, aa));
            let what = format!("{la} → {lb}");
            assert_eq!(ab_.spaces.len(), ba_.spaces.len(), "{what}");
            for (x, y) in ab_.spaces.iter().zip(&ba_.spaces) {
                assert_eq!(x.peaks.delta_bytes, -y.peaks.delta_bytes, "{what}");
                let (tx, ty) = (&x.changes.totals, &y.changes.totals);
                assert_eq!(
                    (tx.new_bytes, tx.grown_bytes),
                    (ty.gone_bytes, ty.shrunk_bytes),
                    "{what}"
                );
                assert_eq!(pairs(&x.changes, false), pairs(&y.changes, true), "{what}");
                check_totals(&x.changes, &what);
                let groups = |g: &[diff::GroupDelta]| {
                    g.iter()
                        .map(|g| (g.key.clone(), g.delta_bytes))
                        .collect::<BTreeSet<_>>()
                };
                let neg = |g: &[diff::GroupDelta]| {
                    g.iter()
                        .map(|g| (g.key.clone(), -g.delta_bytes))
                        .collect::<BTreeSet<_>>()
                };
                assert_eq!(
                    groups(&x.groups.by_op_name),
                    neg(&y.groups.by_op_name),
                    "{what}"
                );
                assert_eq!(
                    groups(&x.groups.by_source),
                    neg(&y.groups.by_source),
                    "{what}"
                );
            }
        }
    }
}

/// The matched pairs `(base value, new value, rule)`, sides swapped when `swap`.
fn pairs(c: &diff::PeakChanges, swap: bool) -> BTreeSet<(u32, u32, Option<MatchRule>)> {
    c.grown
        .iter()
        .chain(&c.shrunk)
        .chain(&c.unchanged)
        .map(|p| {
            let (b, n) = (
                p.base.as_ref().unwrap().value,
                p.new.as_ref().unwrap().value,
            );
            if swap {
                (n, b, p.rule)
            } else {
                (b, n, p.rule)
            }
        })
        .collect()
}

/// The identity of the class totals, recomputed from the rows, and the sort order.
fn check_totals(c: &diff::PeakChanges, what: &str) {
    let t = &c.totals;
    let sum = |v: &[diff::ValueChange]| v.iter().map(|x| i128::from(x.delta_bytes)).sum::<i128>();
    assert_eq!(sum(&c.new), i128::from(t.new_bytes), "{what}");
    assert_eq!(-sum(&c.gone), i128::from(t.gone_bytes), "{what}");
    assert_eq!(sum(&c.grown), i128::from(t.grown_bytes), "{what}");
    assert_eq!(-sum(&c.shrunk), i128::from(t.shrunk_bytes), "{what}");
    assert!(c.unchanged.iter().all(|x| x.delta_bytes == 0));
    assert!(
        c.grown.iter().all(|x| x.delta_bytes > 0) && c.shrunk.iter().all(|x| x.delta_bytes < 0)
    );
    let lhs = i128::from(t.new_bytes) - i128::from(t.gone_bytes) + i128::from(t.grown_bytes)
        - i128::from(t.shrunk_bytes);
    assert_eq!(
        lhs,
        i128::from(t.new_live_value_bytes) - i128::from(t.base_live_value_bytes),
        "{what}"
    );
    for class in [&c.new, &c.gone, &c.grown, &c.shrunk] {
        assert!(
            class
                .windows(2)
                .all(|w| w[0].delta_bytes.unsigned_abs() >= w[1].delta_bytes.unsigned_abs()),
            "{what}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64),
        ..ProptestConfig::default()
    })]

    /// The matcher on arbitrary sets of values (any values of two fixture modules, not only
    /// those at a peak, repeats allowed): every value is in exactly one row, swapping the
    /// sides swaps the pairs, and the totals add up.
    #[test]
    fn matching_any_value_sets(
        which in (0usize..MLP.len(), 0usize..MLP.len()),
        picks in (proptest::collection::vec(any::<u16>(), 0..80), proptest::collection::vec(any::<u16>(), 0..80)),
    ) {
        let (b, n) = (load(MLP[which.0]), load(MLP[which.1]));
        let pick = |m: &Module, p: &[u16]| -> Vec<u32> { p.iter().map(|&x| u32::from(x) % m.values.len() as u32).collect() };
        let (bv, nv) = (pick(&b.0, &picks.0), pick(&n.0, &picks.1));
        let (bs, ns) = (Side::new(&b.0, &b.1), Side::new(&n.0, &n.1));
        let c = values::peak_changes(&bs, &bv, &ns, &nv);
        let r = values::peak_changes(&ns, &nv, &bs, &bv);
        check_totals(&c, "random sets");
        let rows = c.new.len() + c.gone.len() + c.grown.len() + c.shrunk.len() + c.unchanged.len();
        prop_assert_eq!(rows * 2, bv.len() + nv.len() + c.new.len() + c.gone.len());
        prop_assert_eq!(pairs(&c, false), pairs(&r, true));
        prop_assert_eq!((c.totals.new_bytes, c.totals.grown_bytes), (r.totals.gone_bytes, r.totals.shrunk_bytes));
    }
}

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

/// Timing on the 94 MB dump (release: `cargo test --release --test diff -- --ignored
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

/// A small dump: two values of one op_name and shape, `(name, id, size, start)` each, live
/// to the end of a schedule of `max` steps.
fn synthetic(values: [(&str, u32, u64, u32); 2], max: u32) -> (Module, Analysis) {
    let values = values
        .map(|(name, id, size, start)| (name, id, size, "f32[4]{0}", (start, max), "jit(f)/layer"));
    small_dump(&values, max)
}

/// Several values with one key are paired in order of relative start, not of id or name:
/// `early` (step 0 of 10) with `first` (0 of 40), `late` (5 of 10) with `second` (30 of 40),
/// though the ids run the other way. `first` has the same shape but 16 bytes more (padding):
/// grown, by the first rule.
#[test]
fn values_with_one_key_pair_in_order_of_position() {
    let b = synthetic([("late", 1, 16, 5), ("early", 2, 16, 0)], 10);
    let n = synthetic([("first", 1, 32, 0), ("second", 2, 16, 30)], 40);
    let diff = d(&b, &n);
    let c = &diff.spaces[0].changes;
    let pair = |x: &bufscope::diff::ValueChange| {
        let side = |i: &Option<bufscope::diff::ValueInfo>| i.as_ref().unwrap().name.clone();
        (side(&x.base), side(&x.new), x.rule)
    };
    assert_eq!(
        c.grown.iter().map(pair).collect::<Vec<_>>(),
        [(
            "early".to_string(),
            "first".to_string(),
            Some(MatchRule::OpNameShape)
        )]
    );
    assert_eq!(c.grown[0].delta_bytes, 16);
    assert_eq!(
        c.unchanged.iter().map(pair).collect::<Vec<_>>(),
        [(
            "late".to_string(),
            "second".to_string(),
            Some(MatchRule::OpNameShape)
        )]
    );
    assert!(c.new.is_empty() && c.gone.is_empty() && c.shrunk.is_empty());
    assert_eq!(diff.spaces[0].peaks.delta_bytes, 16);
}

/// A small dump of `(name, id, size, shape, live steps, op_name)` values in one allocation,
/// over a schedule of `max` steps.
fn small_dump(values: &[(&str, u32, u64, &str, (u32, u32), &str)], max: u32) -> (Module, Analysis) {
    let total: u64 = values.iter().map(|v| v.2).sum();
    let mut t = format!("BufferAssignment:\nallocation 0: size {total}, maybe-live-out:\n");
    let mut offset = 0;
    for (name, id, size, shape, _, _) in values {
        t += &format!(" value: <{id} {name} @0> (size={size},offset={offset}): {shape}\n");
        offset += size;
    }
    t += &format!("\nTotal bytes used: {total} ({total}B)\n\nUsed values:\n");
    for (name, id, _, shape, _, op) in values {
        let instr = name.split('{').next().unwrap_or(name);
        t += &format!("<{id} {name} @0>\n positions:\n  {instr}\n uses:\n from instruction: %{instr} = {shape} fusion(), metadata={{op_name=\"{op}\"}}\n");
    }
    t += &format!("\n\nHloLiveRange (max {max}):\n  InstructionSequence:\n");
    for step in 0..max {
        t += &format!("    {step}:op.{step}\n");
    }
    t += "  BufferLiveRange:\n";
    for (name, _, _, _, (start, end), _) in values {
        let name = if name.contains('{') {
            name.to_string()
        } else {
            format!("{name}{{}}")
        };
        t += &format!("    {name}:{start}-{end}\n");
    }
    // XLA's peak list: the first step with the most bytes live, its values.
    let live = |step: u32| {
        values
            .iter()
            .filter(move |v| v.4 .0 <= step && step <= v.4 .1)
    };
    let bytes = |step: u32| live(step).map(|v| v.2).sum::<u64>();
    let peak = (0..max).rev().max_by_key(|&s| bytes(s)).unwrap_or(0);
    t += &format!("  Live ranges at {peak} (peak):\n");
    let mut cumulative = 0;
    for (name, _, size, _, _, _) in live(peak) {
        let name = if name.contains('{') {
            name.to_string()
        } else {
            format!("{name}{{}}")
        };
        cumulative += size;
        t += &format!("    {name}: {size} bytes (cumulative: {cumulative} bytes)\n");
    }
    let mut l = bufscope::load_files([("s.buffer-assignment.txt", t.as_bytes())]);
    let m = l.modules.remove(0);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let a = analyze(&m);
    (m, a)
}

/// A cuBLAS workspace (`s8[32]`, output 1 of a custom call) live at step 2 only, far from
/// the peak (steps 6 to 10: `a` and `c`, 80 bytes): the peak tables do not see it, the
/// values found on one side only do, as custom-call scratch; reversed, it is the base's.
#[test]
fn values_on_one_side_only_are_found_anywhere() {
    let a = ("a", 1, 16, "f32[4]{0}", (0, 10), "jit(f)/layer");
    let c = ("c", 2, 64, "f32[16]{0}", (6, 10), "jit(f)/other");
    let ws = (
        "custom-call.3{1}",
        3,
        32,
        "s8[32]{0}",
        (2, 2),
        "jit(f)/dot_general",
    );
    let base = small_dump(&[a, c], 11);
    let new = small_dump(&[a, c, ws], 11);
    let diff = d(&base, &new);
    let s = &diff.spaces[0];
    assert_eq!((s.peaks.base_peak_bytes, s.peaks.new_peak_bytes), (80, 80));
    let ch = &s.changes;
    assert!(ch.new.is_empty() && ch.gone.is_empty(), "{ch:?}");
    let o = &s.one_side;
    assert!(o.base_only.is_empty());
    let names: Vec<(&str, u64, &str)> = (o.new_only.iter())
        .map(|v| (v.name.as_str(), v.bytes, v.kind))
        .collect();
    assert_eq!(names, [("custom-call.3{1}", 32, "custom-call scratch")]);
    assert_eq!((o.base_only_bytes, o.new_only_bytes), (0, 32));
    let back = d(&new, &base);
    assert_eq!(back.spaces[0].one_side.base_only, o.new_only);
    // A program against itself has nothing on one side only.
    let same = d(&new, &new);
    assert!(
        same.spaces[0].one_side.new_only.is_empty() && same.spaces[0].one_side.base_only.is_empty()
    );
}
