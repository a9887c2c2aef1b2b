//! jax's checkpoint policies by name (`bufscope::answers::whatif::checkpoint`) and their price
//! in FLOPs (`…::flops`), on the real TPU compiles of `../shared/dumps/tpu-aot`: the remat
//! ladder's `lm_scan_plain` (no jax.checkpoint) under each policy against the real recompile
//! with that policy (HBM never more than 5 % under, the host bytes of the offload pair exact),
//! the FLOPs of a projection and of attention's scores worked out by hand from the program's
//! config, one step's FLOPs against the model's 6·N·T, the recomputation's FLOPs against
//! the difference of two real compiles' steps, and the v6e ladder of
//! tests/fixtures/policy-ladder the same way.

mod common;

use bufscope::analysis::analyze;
use bufscope::answers::capacity::parse_capacity;
use bufscope::answers::idle::ScheduleIndex;
use bufscope::answers::whatif::checkpoint::{Checkpoint, Fate};
use bufscope::answers::whatif::fit::{fit, Action, FitOptions};
use bufscope::answers::whatif::flops::{step_flops, Counter};
use bufscope::answers::whatif::stacked::stacked_outputs;
use bufscope::answers::whatif::{estimate, Edits, Estimate};
use bufscope::model::Module;

// programs/tpu_programs.py's config (RESULT.json): batch 16, seq 1024, d_model 1024, 16 heads
// of 64, d_ff 4096, 8 layers, vocab 32000, on a 2×2 mesh: batch over `data` (2), heads, d_ff
// and vocab over `model` (2). Per device: batch 8, 8 heads.
const B: u64 = 16 / 2;
const S: u64 = 1024;
const D: u64 = 1024;
const H: u64 = 16 / 2;
const K: u64 = 64;

/// The HBM estimate of `policy` on `m`.
fn estimate_hbm(m: &Module, policy: &str) -> (Estimate, u64) {
    let p = Checkpoint::parse(policy).unwrap();
    let applied = p.apply(m, &stacked_outputs(m));
    let a = analyze(m);
    let e = estimate(m, a.space(0).unwrap(), &ScheduleIndex::new(m), &applied.edits);
    (e, applied.flops_added)
}

fn peak(m: &Module, color: u32) -> u64 {
    analyze(m).space(color).map_or(0, |s| s.peak_bytes)
}

const QKV: &str = "save_only_these_names(bsd,dhk->bshk/dot_general)";
const OFFLOAD_QKV: &str = "save_and_offload_only_these_names(bsd,dhk->bshk/dot_general)";

#[test]
fn each_policy_against_its_real_recompile() {
    let Some(plain) = common::shared_tpu_module("remat-ladder", "tpu_v5e_lm_scan_plain") else { return };
    let pairs = [
        ("nothing_saveable", "jax0.12-libtpu0.0.50", "tpu_v5e_lm_scan_remat", 0),
        ("dots_with_no_batch_dims_saveable", "remat-ladder", "tpu_v5e_lm_scan_dots", 0),
        (QKV, "remat-ladder", "tpu_v5e_lm_scan_save_qkv", 0),
        // The offloaded q, k, v (3 × 8 layers × b8·s1024·h8·k64 bf16 = 192 MiB) and every dot
        // without batch dimensions that the backward pass reads (576 MiB) on colour 5.
        ("offload_dot_with_no_batch_dims", "turn4", "tpu_v5e_lm_scan_offload_dots", 576 << 20),
        (OFFLOAD_QKV, "turn4", "tpu_v5e_lm_scan_offload_qkv", 192 << 20),
    ];
    for (policy, folder, run, host) in pairs {
        let real = common::shared_tpu_module(folder, run).unwrap();
        let (e, _) = estimate_hbm(&plain, policy);
        let r = peak(&real, 0);
        let err = (e.peak_after as f64 - r as f64) / r as f64;
        // Never a false "fits" (more than 5 % under), and within 15 % (README's table).
        assert!(err > -0.05 && err < 0.15, "{policy}: {} against {r}: {:+.1} %", e.peak_after, err * 100.0);
        assert!(e.peak_after < plain_peak(&plain) / 2, "{policy} frees most of the 7.5 GiB");
        assert_eq!(e.host_bytes_added, host, "{policy}: host bytes");
        assert_eq!(peak(&real, 5), host, "{run}: the real host peak");
        assert_eq!(e.copies > 0, host > 0, "{policy}: copies");
    }
}

fn plain_peak(m: &Module) -> u64 {
    peak(m, 0)
}

#[test]
fn policies_order_as_they_save() {
    let Some(plain) = common::shared_tpu_module("remat-ladder", "tpu_v5e_lm_scan_plain") else { return };
    let of = |p: &str| estimate_hbm(&plain, p);
    let (dots, dots_f) = of("dots_saveable");
    let (flat, flat_f) = of("dots_with_no_batch_dims_saveable");
    let (qkv, qkv_f) = of(QKV);
    let (none, none_f) = of("nothing_saveable");
    let (off, off_f) = of("offload_dot_with_no_batch_dims");
    // Saving less keeps fewer bytes and recomputes more.
    assert!(dots.peak_after >= flat.peak_after && flat.peak_after > qkv.peak_after && qkv.peak_after > none.peak_after);
    assert!(dots_f < flat_f && flat_f < qkv_f && qkv_f < none_f, "{dots_f} {flat_f} {qkv_f} {none_f}");
    // Offloading the dots recomputes what saving them does, and keeps them off HBM.
    assert_eq!(off_f, flat_f);
    assert!(off.peak_after < flat.peak_after && off.host_bytes_added > 0);
    // The mapping: projections are dots without batch dimensions, attention's with them.
    let stacked = stacked_outputs(&plain);
    let p = Checkpoint::parse("offload_dot_with_no_batch_dims").unwrap();
    for s in &stacked {
        let fate = p.fate(s);
        if s.op_name.ends_with("bsd,dhk->bshk/dot_general") || s.op_name.ends_with("bsd,df->bsf/dot_general") {
            assert_eq!(fate, Fate::Offload, "{}", s.name);
        } else if s.op_name.contains("bhst,bthk->bshk") {
            assert_eq!(fate, Fate::Remat, "{}", s.name);
        }
    }
}

/// The first instruction of the text whose op_name ends with `einsum/dot_general`.
fn flops_of(m: &Module, einsum: &str) -> u64 {
    let hlo = m.hlo.as_deref().unwrap();
    let mut counter = Counter::new(hlo);
    let (c, i) = (hlo.computations.iter())
        .flat_map(|c| c.instructions.iter().map(move |i| (c, i)))
        .find(|(_, i)| hlo.opcode(i) == "convolution" && hlo.op_name(i).is_some_and(|o| o.ends_with(&format!("{einsum}/dot_general"))))
        .unwrap_or_else(|| panic!("no convolution of {einsum}"));
    counter.instruction(c, i)
}

#[test]
fn dot_flops_by_hand() {
    let Some(plain) = common::shared_tpu_module("remat-ladder", "tpu_v5e_lm_scan_plain") else { return };
    // q = einsum("bsd,dhk->bshk"), printed as a convolution over a 1×8 window padded 7_7.
    assert_eq!(flops_of(&plain, "bsd,dhk->bshk"), 2 * B * S * D * H * K);
    // The scores einsum("bshk,bthk->bhst"), a window of 8 with stride 7 over lhs_dilate 8.
    assert_eq!(flops_of(&plain, "bshk,bthk->bhst"), 2 * B * H * S * S * K);
    // The MLP's up projection einsum("bsd,df->bsf"), d_ff over `model`.
    assert_eq!(flops_of(&plain, "bsd,df->bsf"), 2 * B * S * D * (4096 / 2));
}

#[test]
fn step_flops_against_the_model() {
    let Some(plain) = common::shared_tpu_module("remat-ladder", "tpu_v5e_lm_scan_plain") else { return };
    // 6 × the matmul parameters (8 layers of 4·D² + 2·D·d_ff, and the unembedding D·V) × the
    // tokens, over 4 devices, plus attention's two batch dots, 3× for the backward pass.
    let params = 8 * (4 * D * D + 2 * D * 4096) + D * 32000;
    let tokens = 16 * S;
    let attention = 8 * 3 * 2 * (2 * 16 * 16 * S * S * K) / 4;
    let model = 6 * params * tokens / 4 + attention;
    let step = step_flops(&plain).unwrap();
    let err = (step as f64 - model as f64) / model as f64;
    assert!(err.abs() < 0.05, "step {step} against the model's {model}: {:+.1} %", err * 100.0);
}

#[test]
fn flops_added_against_real_recompiles() {
    let Some(plain) = common::shared_tpu_module("remat-ladder", "tpu_v5e_lm_scan_plain") else { return };
    let base = step_flops(&plain).unwrap();
    for (policy, folder, run) in [
        ("nothing_saveable", "jax0.12-libtpu0.0.50", "tpu_v5e_lm_scan_remat"),
        ("dots_with_no_batch_dims_saveable", "remat-ladder", "tpu_v5e_lm_scan_dots"),
        (QKV, "remat-ladder", "tpu_v5e_lm_scan_save_qkv"),
    ] {
        let real = step_flops(&common::shared_tpu_module(folder, run).unwrap()).unwrap() - base;
        let (_, added) = estimate_hbm(&plain, policy);
        let err = (added as f64 - real as f64) / real as f64;
        assert!(err.abs() < 0.10, "{policy}: {added} against {real}: {:+.1} %", err * 100.0);
    }
}

#[test]
fn fit_takes_the_cheapest_policy_that_fits() {
    let Some(plain) = common::shared_tpu_module("remat-ladder", "tpu_v5e_lm_scan_plain") else { return };
    let a = analyze(&plain);
    let (hbm, index, stacked) = (a.space(0).unwrap(), ScheduleIndex::new(&plain), stacked_outputs(&plain));
    let plan_for = |cap: &str, offload: bool| {
        let options = FitOptions { offload_arguments: offload, policies: true };
        fit(&plain, hbm, &index, &stacked, &parse_capacity(cap).unwrap(), options)
    };
    for (cap, offload, want) in [
        ("2.95GiB", true, "dots_saveable"),
        ("2.5GiB", true, "offload_dot_with_no_batch_dims"),
        ("2.5GiB", false, "nothing_saveable"),
    ] {
        let plan = plan_for(cap, offload);
        assert!(plan.fits, "{cap}");
        assert_eq!(plan.policy.as_ref().map(|p| p.name.as_str()), Some(want), "{cap}, offload {offload}");
        let cheapest = (plan.policies_tried.iter()).filter(|t| t.fits).map(|t| t.flops_added).min();
        assert_eq!(plan.flops_added, cheapest, "{cap}");
        assert_eq!(plan.plan.iter().any(|p| p.action == Action::OffloadLoop), want.starts_with("offload"), "{cap}");
        // What the page's Fit chooses by name.
        assert_eq!(plan.checkpoint(), Some(want), "{cap}");
    }
    // Under nothing_saveable's 2,487,482,880 B no stock policy fits: the plan is not one.
    let plan = plan_for("2GiB", false);
    assert!(plan.policies_tried.iter().all(|t| !t.fits) && !plan.policies_tried.is_empty());
    assert_eq!(plan.checkpoint(), None);
}

/// The page's chooser with ticks (`Checkpoint::with_values`): no value ticked is the policy
/// alone; a value ticked keeps the policy's loop edits, adds the value, and costs no less.
#[test]
fn a_policy_with_values() {
    let Some(plain) = common::shared_tpu_module("remat-ladder", "tpu_v5e_lm_scan_plain") else { return };
    let (index, stacked) = (ScheduleIndex::new(&plain), stacked_outputs(&plain));
    let p = Checkpoint::parse("dots_with_no_batch_dims_saveable").unwrap();
    let alone = p.apply(&plain, &stacked);
    let none = p.with_values(&plain, &index, &stacked, &Edits::default());
    assert_eq!((none.edits, none.flops_added), (alone.edits.clone(), alone.flops_added));
    let v = (0..plain.values.len() as u32).find(|&v| !stacked.iter().any(|s| s.chain.contains(&v))).unwrap();
    let ticks = Edits { remat: vec![v], ..Edits::default() };
    let both = p.with_values(&plain, &index, &stacked, &ticks);
    assert_eq!((both.edits.remat.clone(), both.edits.loops.len()), (vec![v], alone.edits.loops.len()));
    assert!(both.flops_added >= alone.flops_added && alone.flops_added > 0);
}

/// A v6e compile that tests/bench/make_policy_ladder.sh made (gzipped in
/// tests/fixtures/policy-ladder): `plain` (no jax.checkpoint), `dots`, `save_qkv`,
/// `offload_dots`.
fn v6e(prog: &str) -> Module {
    ladder(&format!("tpu_v6e_lm_scan_{prog}_s1024_b16"))
}

/// A run of tests/fixtures/policy-ladder by its stem: its four files, gzipped.
fn ladder(stem: &str) -> Module {
    let dir = common::fixtures_dir().join("policy-ladder");
    let names = ["buffer-assignment.txt", "buffer-assignment-values.txt", "live-range.txt", "after_optimizations.txt"];
    let files: Vec<(String, Vec<u8>)> = (names.iter())
        .map(|n| format!("{stem}.{n}.gz"))
        .map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap()))
        .collect();
    let load = bufscope::load_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    load.modules.into_iter().next().unwrap()
}

/// Each policy's estimate on `plain` against its real recompile: HBM within −5 %…+15 %
/// (never a false "fits" beyond 5 %; README's table), the host bytes to the byte, and the
/// FLOPs added within 10 % of the two compiles' difference — or, where `more_recomputed`
/// names the policy, the recompile recomputing over 20 % more than the policy asks (v6e at
/// seq 2048 recomputes more than the forward slice for the policies that drop attention's
/// dots; README's table, not understood yet).
fn check_pairs(plain: &Module, pairs: Vec<(&str, Module, u64)>, more_recomputed: &[&str]) {
    for (policy, real, host) in pairs {
        let (e, added) = estimate_hbm(plain, policy);
        let r = peak(&real, 0);
        let err = (e.peak_after as f64 - r as f64) / r as f64;
        assert!(err > -0.05 && err < 0.15, "{policy}: {} against {r}: {:+.1} %", e.peak_after, err * 100.0);
        assert_eq!((e.host_bytes_added, peak(&real, 5)), (host, host), "{policy}");
        let real_added = step_flops(&real).unwrap() - step_flops(plain).unwrap();
        let err = (added as f64 - real_added as f64) / real_added as f64;
        match more_recomputed.contains(&policy) {
            false => assert!(err.abs() < 0.10, "{policy}: {added} against {real_added}"),
            true => assert!(err < -0.20, "{policy}: {added} against {real_added}: no longer more"),
        }
    }
}

#[test]
fn policies_on_v6e() {
    let plain = v6e("plain");
    assert!(plain.hlo.is_some(), "the gzipped HLO text is read with the dump");
    let Some(remat) = common::shared_tpu_module("jax0.12-libtpu0.0.50", "tpu_v6e_lm_scan_remat") else { return };
    let offload = "offload_dot_with_no_batch_dims";
    // (policy, its real recompile, the host bytes it offloads as on v5e: the dots without
    // batch dimensions, 576 MiB; q, k and v, 192 MiB)
    let pairs = [
        ("nothing_saveable", remat, 0),
        ("dots_with_no_batch_dims_saveable", v6e("dots"), 0),
        (QKV, v6e("save_qkv"), 0),
        (offload, v6e("offload_dots"), 576 << 20),
        (OFFLOAD_QKV, v6e("offload_qkv"), 192 << 20),
    ];
    check_pairs(&plain, pairs.into(), &[]);
}

/// The ladders at sequence 2048, batch 8 (attention's scores four times those at 1024): every
/// policy against its recompile, as at 1024; on each chip whose ladder is compiled.
#[test]
fn policies_at_seq_2048() {
    let mut chips = 0;
    for chip in ["v5e", "v6e"] {
        let stem = |prog: &str| format!("tpu_{chip}_lm_scan_{prog}_s2048_b8");
        let have = |prog: &str| common::fixtures_dir().join("policy-ladder").join(format!("{}.buffer-assignment.txt.gz", stem(prog))).exists();
        let progs = ["plain", "remat", "dots", "save_qkv", "offload_dots", "offload_qkv"];
        if !progs.iter().all(|p| have(p)) {
            continue;
        }
        chips += 1;
        let pairs = vec![
            ("nothing_saveable", ladder(&stem("remat")), 0),
            ("dots_with_no_batch_dims_saveable", ladder(&stem("dots")), 0),
            (QKV, ladder(&stem("save_qkv")), 0),
            ("offload_dot_with_no_batch_dims", ladder(&stem("offload_dots")), 576 << 20),
            (OFFLOAD_QKV, ladder(&stem("offload_qkv")), 192 << 20),
        ];
        let more: &[&str] = match chip {
            "v6e" => &["nothing_saveable", QKV, OFFLOAD_QKV],
            _ => &[],
        };
        check_pairs(&ladder(&stem("plain")), pairs, more);
    }
    assert_eq!(chips, 2, "the v5e and v6e seq 2048 ladders in tests/fixtures/policy-ladder");
}

/// v6e `nothing_saveable`, the pair the estimate missed by most (+20.2 %): it kept one
/// recomputed iteration of every stacked output live for the whole backward body, while the
/// body reads the MLP's residuals first and the attention's last, and a recomputed value dies
/// at its last read. Now each is live from the body's start to the body's last read of the
/// stored output (`StackedOutput::recomputed_steps`). Before: the same estimate with each
/// output's iteration added back up to the body's end.
#[test]
fn v6e_nothing_saveable_recomputes_until_the_last_read() {
    let plain = v6e("plain");
    let Some(real) = common::shared_tpu_module("jax0.12-libtpu0.0.50", "tpu_v6e_lm_scan_remat") else { return };
    let index = ScheduleIndex::new(&plain);
    let p = Checkpoint::parse("nothing_saveable").unwrap();
    let applied = p.apply(&plain, &stacked_outputs(&plain));
    assert_eq!(applied.edits.loops.len(), 30, "every stacked output of the forward scan");
    let a = analyze(&plain);
    let after = estimate(&plain, a.space(0).unwrap(), &index, &applied.edits);
    let mut before = after.curve.clone();
    let mut shorter = 0;
    for s in &applied.edits.loops {
        let ((lo, hi), (from, last)) = (s.backward_body.unwrap(), s.recomputed_steps(&plain, &index).unwrap());
        assert!(from == lo && lo < last && last <= hi, "{}: read at {last}, body {lo}–{hi}", s.name);
        shorter += usize::from(last < hi);
        for x in &mut before[last as usize + 1..=hi as usize] {
            *x += s.per_iteration_bytes();
        }
    }
    assert!(shorter > 20, "most outputs are last read before the body's end: {shorter}");
    let r = peak(&real, 0) as f64;
    let err = |b: u64| (b as f64 - r) / r * 100.0;
    let (was, now) = (err(*before.iter().max().unwrap()), err(after.peak_after));
    eprintln!("v6e nothing_saveable: {was:+.1} % before, {now:+.1} % now");
    assert!(was > 15.0, "the whole-body estimate was {was:+.1} %");
    assert!(now > -5.0 && now < 15.0, "{now:+.1} %");
}
