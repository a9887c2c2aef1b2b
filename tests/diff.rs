//! `bufscope::diff` on real pairs: the same programs compiled by several jax versions
//! (tests/fixtures/cpu/jax*), each program against itself, a pair whose differences are
//! checked by hand against the two dumps' lines, and properties over every pair of fixture
//! modules (antisymmetry, the class totals). Whole loads, the gate and the JSON are in
//! tests/diff_loads.rs; hand-made small dumps in tests/diff_small.rs.

mod common;
#[path = "common/diff_fixture.rs"]
mod diff_fixture;

use std::collections::BTreeSet;

use bufscope::analysis::{analyze, Analysis};
use bufscope::diff::{self, diff_modules, values, Limit, MatchRule, Side};
use bufscope::model::Module;
use diff_fixture::{d, load, MLP};
use proptest::prelude::*;

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
