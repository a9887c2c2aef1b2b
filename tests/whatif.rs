//! The what-if of `bufscope::answers::whatif`: with no edit it is the real curve at every
//! step of every dump; a value rematerialised or offloaded on a hand-worked fixture, step by
//! step; a loop's stacked outputs on the remat ladder's `lm_scan_plain` against what its HLO
//! text says the forward loop outputs; the plan for a capacity on `tpu_v5e_lm_scan_remat_OOM`;
//! an icicle frame and a category ticked on `cpu_transformer_bf16`, by hand; the incremental
//! estimate against the sweep of every block after the edits.

mod common;

use bufscope::analysis::{analyze, occupied_curve};
use bufscope::answers::idle::ScheduleIndex;
use bufscope::answers::capacity::parse_capacity;
use bufscope::answers::categories::{Categories, Category};
use bufscope::answers::whatif::fit::{edits_of, fit, Action, FitOptions};
use bufscope::answers::whatif::stacked::stacked_outputs;
use bufscope::answers::whatif::ticks::{actionable, loop_outputs, Tick, Ticks};
use bufscope::answers::whatif::{blocks_after, estimate, estimate_incremental, Edits};
use bufscope::answers::{categories, groups, live_set};
use bufscope::model::Module;

fn load_module(files: &common::ModuleFiles) -> Module {
    let mut load = bufscope::load_files(files.inputs());
    load.modules.remove(0)
}

fn value_named(m: &Module, name: &str) -> u32 {
    (0..m.values.len() as u32)
        .find(|&i| m.value_name(&m.values[i as usize]) == name)
        .unwrap_or_else(|| panic!("no value {name}"))
}

fn no_edit_is_the_real_curve(m: &Module, what: &str) {
    let a = analyze(m);
    let index = ScheduleIndex::new(m);
    for s in &a.spaces {
        let e = estimate(m, s, &index, &Edits::default());
        assert_eq!(e.curve, s.curve, "{what}, colour {}", s.color);
        assert_eq!((e.peak_after, e.step_after), (s.peak_bytes, s.peak_time), "{what}");
        assert_eq!((e.host_bytes_added, e.copies), (0, 0), "{what}");
    }
}

#[test]
fn no_edit_is_the_real_curve_on_every_fixture() {
    for f in common::fixture_modules() {
        let load = bufscope::load_files(f.inputs());
        for m in &load.modules {
            no_edit_is_the_real_curve(m, &f.label);
        }
    }
}

#[test]
fn no_edit_is_the_real_curve_on_the_remat_ladder() {
    let Some(dumps) = common::shared_dumps_or_skip("no_edit_is_the_real_curve_on_the_remat_ladder") else {
        return;
    };
    for f in common::modules_under(&dumps.join("tpu-aot"), |folder, stem| {
        folder == "remat-ladder" || stem.starts_with("tpu_v5e_lm_scan_remat")
    }) {
        let load = bufscope::load_files(f.inputs());
        assert!(!load.modules.is_empty(), "{}", f.label);
        for m in &load.modules {
            no_edit_is_the_real_curve(m, &f.label);
        }
    }
}

// tests/fixtures/tpu/000: memory space 1 (vmem) is allocation 15, laid out from 0:
//   copy-start{0}              [0, 32768)      live 1-5
//   multiply_reduce_fusion{1}  [32768, 40960)  live 5-13, used at 10, 11, 13
//   add_sqrt_fusion            [40960, 41472)  live 9-13
//   multiply_reduce_fusion{0}  [45056, 45568)  live 5-9
//   fusion.5                   [45056, 45568)  live 10-13
//   fusion.2                   [49152, 49664)  live 11-13
//   copy-start.1{0}            [53248, 69632)  live 6-13, used at 12 (copy-done.1), 13
// so the curve is 0; 32768 at 1-4; 41472 at 5; 25088 at 6-8; 25600 at 9-10; 26112 at 11-13;
// 0 at 14 (the program's end).
const REAL_VMEM: [u64; 15] = [
    0, 32768, 32768, 32768, 32768, 41472, 25088, 25088, 25088, 25600, 25600, 26112, 26112, 26112,
    0,
];

#[test]
fn a_value_rematerialised_step_by_step() {
    let m = load_module(&common::fixture_module("tpu/000_0cb419b3147a3cb6"));
    let a = analyze(&m);
    let vmem = a.space(1).unwrap();
    assert_eq!(vmem.curve, REAL_VMEM);
    let index = ScheduleIndex::new(&m);
    // copy-start.1{0}: defined at 6, next used at 12, so idle at 7-11 and recomputed at 11:
    // its 16384 bytes are gone at 7-10.
    let edits = Edits {
        remat: vec![value_named(&m, "copy-start.1{0}")],
        ..Edits::default()
    };
    let e = estimate(&m, vmem, &index, &edits);
    let mut want = REAL_VMEM;
    for t in 7..=10 {
        want[t] -= 16384;
    }
    assert_eq!(e.curve, want);
    assert_eq!(&e.curve[6..12], [25088, 8704, 8704, 9216, 9216, 26112]);
    // The peak, at 5, is before it: unchanged.
    assert_eq!((e.peak_after, e.step_after), (41472, Some(5)));

    // multiply_reduce_fusion{1}: defined at 5, used at 10: gone at 6-8 (8192 bytes); its
    // stretch 11 -> 13 has one idle step, too short to free anything.
    let both = Edits {
        remat: vec![
            value_named(&m, "copy-start.1{0}"),
            value_named(&m, "multiply_reduce_fusion{1}"),
        ],
        ..Edits::default()
    };
    let e = estimate(&m, vmem, &index, &both);
    assert_eq!(&e.curve[5..12], [41472, 16896, 512, 512, 9216, 9216, 26112]);
    // Edits of values of other spaces do not touch this one.
    let other = Edits {
        remat: vec![value_named(&m, "Arg_1.2")],
        ..Edits::default()
    };
    assert_eq!(estimate(&m, vmem, &index, &other).curve, REAL_VMEM);
}

#[test]
fn a_value_offloaded_step_by_step() {
    let m = load_module(&common::fixture_module("tpu/000_0cb419b3147a3cb6"));
    let a = analyze(&m);
    let vmem = a.space(1).unwrap();
    let index = ScheduleIndex::new(&m);
    // copy-start.1{0}, stretch 6 -> 12: copied out at 7, back in at 11, so gone at 8-10; the
    // host holds its 16384 bytes at 7-11; two copies of 16384 bytes.
    let edits = Edits {
        offload: vec![value_named(&m, "copy-start.1{0}")],
        ..Edits::default()
    };
    let e = estimate(&m, vmem, &index, &edits);
    assert_eq!(&e.curve[6..12], [25088, 25088, 8704, 9216, 9216, 26112]);
    assert_eq!(&e.host_curve[5..13], [0, 0, 16384, 16384, 16384, 16384, 16384, 0]);
    assert_eq!((e.host_bytes_added, e.copies, e.copied_bytes), (16384, 2, 32768));
    // fusion.2, defined at 11 and used at 13 only: no stretch long enough to offload.
    let short = Edits {
        offload: vec![value_named(&m, "fusion.2")],
        ..Edits::default()
    };
    let e = estimate(&m, vmem, &index, &short);
    assert_eq!(e.curve, REAL_VMEM);
    assert_eq!(e.unchanged, [value_named(&m, "fusion.2")]);
}

#[test]
fn a_loops_stacked_outputs_on_lm_scan_plain() {
    let Some(m) = common::shared_tpu_module("remat-ladder", "tpu_v5e_lm_scan_plain") else { return };
    assert!(m.hlo.is_some(), "the HLO text is read with the dump");
    let stacked = stacked_outputs(&m);
    // The HLO text: the backward loop `while.104` takes `tuple.146`, whose operands are
    // `%while.103#2` … `%while.103#32` but #5 (f32[8,1,1,1024] in vmem, which reaches it
    // through copy-done.65 into another buffer); the forward body's ROOT tuple.140 writes each
    // of them with a dynamic-update-slice (fused) into the same element of wide.param.0.
    let mut want: Vec<String> = (2..=32).filter(|&k| k != 5).map(|k| format!("while.103{{{k}}}")).collect();
    want.sort();
    let mut got: Vec<String> = stacked.iter().map(|s| s.name.clone()).collect();
    got.sort();
    assert_eq!(got, want);
    for s in &stacked {
        assert_eq!((s.color, s.trip_count, s.backward_while.as_str()), (0, 8, "while.104"), "{}", s.name);
        // Allocated before the forward loop (while.103 at step 335), live to the backward
        // one (while.104 at 701), whose body runs at steps 510-700.
        assert!(s.life.0 < 335 && s.life.1 == 701, "{} {:?}", s.name, s.life);
        assert_eq!(s.backward_body, Some((510, 700)));
        assert_eq!(s.bytes, m.values[s.value as usize].size);
    }
    // Their sizes in the buffer-assignment text: nine of 268435456 ({2,6,20,24,27-30,32}),
    // two of 134217728 ({8,26}), 2147483648 ({13}), 1073741824 ({16}), four of 67108864
    // ({11,12,17,19}), four of 8388608 ({7,9,10,18}), two of 33554432 ({25,31}), four of
    // 262144 ({3,4,21,22}), two of 2097152 ({14,15}) and 32768 ({23}).
    let total: u64 = stacked.iter().map(|s| s.bytes).sum();
    assert_eq!(total, 6_279_954_432);
    // One loop's tick: all 30 are while.103's.
    assert!(stacked.iter().all(|s| s.forward_while == "while.103"));
    assert_eq!(loop_outputs(&stacked, "while.103", 0).count(), 30);
    assert_eq!(loop_outputs(&stacked, "while.104", 0).count(), 0);
    // q, k and v (`bsd,dhk->bshk` einsums, stored by bitcast_dynamic-update-slice_fusion.22,
    // .23 and .24 from their convolution) are what `--keep bsd,dhk->bshk` keeps.
    let mut qkv: Vec<u32> = stacked.iter().filter(|s| s.op_name.contains("bsd,dhk->bshk/dot_general")).map(|s| s.index).collect();
    qkv.sort();
    assert_eq!(qkv, [11, 12, 17]);
    // {16}, the softmax (bf16[8,8,8,1024,1024]), stores a divide.
    let p16 = stacked.iter().find(|s| s.index == 16).unwrap();
    assert!(p16.op_name.ends_with("eval_jaxpr/div"), "{}", p16.op_name);

    // All of them gone: at the real peak (step 379, between the loops, every one live), the
    // estimate is the peak less their bytes; before the first is allocated (step 72) nothing
    // changes.
    let a = analyze(&m);
    let hbm = a.space(0).unwrap();
    assert_eq!((hbm.peak_bytes, hbm.peak_time), (8_081_832_960, Some(379)));
    let e = estimate(&m, hbm, &ScheduleIndex::new(&m), &Edits { loops: stacked, ..Edits::default() });
    assert_eq!(e.curve[379], 8_081_832_960 - 6_279_954_432);
    assert_eq!(e.curve[..72], hbm.curve[..72]);
    assert!(e.curve.iter().zip(&hbm.curve).all(|(a, b)| a <= b));
}

#[test]
fn the_plan_on_lm_scan_remat_oom() {
    let Some(m) = common::shared_tpu_module("jax0.12-libtpu0.0.50", "tpu_v5e_lm_scan_remat_OOM") else { return };
    let a = analyze(&m);
    let hbm = a.space(0).unwrap();
    let index = ScheduleIndex::new(&m);
    let stacked = stacked_outputs(&m);
    let v5e = parse_capacity("v5e").unwrap();
    // The program's arguments at the peak: the parameters (3,745,792,000 bytes), Adam's mu
    // and nu (twice that) and the 136 KiB batch: XProf's "10.5 GiB" of parameter allocations.
    let arguments = 3_745_792_000 + 2 * 3_745_792_000 + 139_264u64;

    let plan = fit(&m, hbm, &index, &stacked, &v5e, FitOptions::default());
    assert!(plan.fits && plan.peak_after <= v5e.bytes, "{}", plan.peak_after);
    assert_eq!(plan.peak_before, hbm.peak_bytes);
    // The loop's stacked output first: the forward scan's layer inputs, all 2 GiB: the
    // backward body's last read of them comes before the peak, inside that body, so no
    // recomputed iteration (256 MiB) is live there.
    assert_eq!(plan.plan[0].action, Action::RematLoop);
    assert_eq!((plan.plan[0].what.as_str(), plan.plan[0].bytes_at_peak), ("while.43{2}", 2 << 30));
    let s = stacked.iter().find(|s| s.name == "while.43{2}").unwrap();
    let ((_, last), (_, end), t) = (s.recomputed_steps(&m, &index).unwrap(), s.backward_body.unwrap(), hbm.peak_time.unwrap());
    assert!(last < t && t <= end, "last read {last}, peak {t}, body's end {end}");
    // Offloads come last, each an argument, marked so.
    let first_offload = plan.plan.iter().position(|p| p.action == Action::Offload).unwrap();
    for p in &plan.plan[first_offload..] {
        assert!(p.action == Action::Offload && p.offload_only, "{p:?}");
        let c = Categories::new(&m).of(&m, p.value.unwrap());
        assert!(matches!(c, Category::OptimizerState | Category::ModelParameters), "{c:?}");
    }
    assert!(plan.plan[..first_offload].iter().all(|p| !p.offload_only));
    let args = &plan.arguments_at_peak;
    assert_eq!(args.parameter_bytes + args.optimizer_state_bytes + args.other_bytes, arguments);
    assert_eq!(args.optimizer_state_bytes, 2 * args.parameter_bytes);
    assert!(args.sentence.as_deref().is_some_and(|s| s.ends_with("shard or offload the optimizer state.")));
    // The plan's estimate is the estimate of its edits, and of the ticks "Fit to capacity"
    // fills from it (each loop output and value one by one).
    let again = estimate(&m, hbm, &index, &edits_of(&plan.plan, &stacked));
    assert_eq!(again.peak_after, plan.peak_after);
    let ticks = Ticks::from_plan(&plan.plan, &stacked);
    assert_eq!(ticks.loops.iter().map(String::as_str).collect::<Vec<_>>(), ["while.43{2}"]);
    assert_eq!(ticks.remat.len() + ticks.offload.len() + 1, plan.plan.len());
    assert_eq!(estimate(&m, hbm, &index, &ticks.edits(&stacked)).peak_after, plan.peak_after);
    // Minimal: without any one edit it no longer fits.
    for i in 0..plan.plan.len() {
        let mut less = plan.plan.clone();
        less.remove(i);
        let e = estimate(&m, hbm, &index, &edits_of(&less, &stacked));
        assert!(e.peak_after > v5e.bytes, "{} is not needed", plan.plan[i].what);
    }

    // Without offloading the arguments nothing fits: what remains is said.
    let no = fit(&m, hbm, &index, &stacked, &v5e, FitOptions { offload_arguments: false, ..FitOptions::default() });
    assert!(!no.fits && no.plan.iter().all(|p| !p.offload_only));
    let rem = no.remains.as_ref().expect("what remains");
    assert_eq!(rem.argument_bytes, arguments);
    assert_eq!(rem.excess_bytes, no.peak_after - v5e.bytes);
    assert!(rem.sentence.contains("shard or offload the optimizer state"), "{}", rem.sentence);
}

// tests/fixtures/cpu/jax0.6.2/cpu_transformer_bf16, one memory space, peak 25,996,292 B at
// step 133 (the curve is 23,899,140 at 128-132 and 19,704,836 at 134).
fn transformer() -> (Module, bufscope::analysis::Analysis) {
    let m = load_module(&common::fixture_module("cpu/jax0.6.2/cpu_transformer_bf16"));
    let a = analyze(&m);
    (m, a)
}

#[test]
fn an_icicle_frame_ticked() {
    let (m, a) = transformer();
    let s = a.space(0).unwrap();
    assert_eq!((s.peak_bytes, s.peak_time), (25_996_292, Some(133)));
    let index = ScheduleIndex::new(&m);
    let tree = groups::op_name_tree(&m, &live_set(&m, s, 133), true);
    let main = &tree.children.iter().find(|c| c.label == "jit(transformer_block_bfloat16)").unwrap().children[0];
    let exp = main.children.iter().find(|c| c.label == "exp").unwrap();
    // The frame jit(transformer_block_bfloat16)/jit(main)/exp holds one value at the peak:
    // subtract_exponential_fusion.clone (2,097,152 B, live 74-254), used at 78, 79, 84, 85,
    // 240, 241 and 254: its stretches 74→78, 79→84, 85→240 and 241→254, each recomputed the
    // step before its use, leave it gone at 75-76, 80-82, 86-238 and 242-252.
    let values = exp.all_values();
    assert_eq!(values.len(), 1);
    let remat = actionable(&m, 0, &index, &[], &values, Tick::Remat);
    assert_eq!(remat, [value_named(&m, "subtract_exponential_fusion.clone")]);
    let mut ticks = Ticks::default();
    ticks.tick_values(&remat, Tick::Remat, true);
    let e = estimate(&m, s, &index, &ticks.edits(&[]));
    for (t, (&after, &real)) in e.curve.iter().zip(&s.curve).enumerate() {
        let gone = [(75, 76), (80, 82), (86, 238), (242, 252)].iter().any(|&(lo, hi)| lo <= t && t <= hi);
        let want = if gone { real - 2_097_152 } else { real };
        assert_eq!(after, want, "step {t}");
    }
    // What the page's browser test reads: the peak 2 MiB lower, still at 133 (23,899,140 at
    // 128-132 fell by 2 MiB too).
    assert_eq!((e.peak_after, e.step_after), (23_899_140, Some(133)));
    // Its parent frame jit(main) holds 13 values, all temporaries idle long enough.
    assert_eq!(actionable(&m, 0, &index, &[], &main.all_values(), Tick::Remat).len(), 13);
}

#[test]
fn a_category_ticked() {
    let (m, a) = transformer();
    let s = a.space(0).unwrap();
    let index = ScheduleIndex::new(&m);
    let rows = categories::by_category(&m, &live_set(&m, s, 133));
    let params = rows.iter().find(|r| r.label == "model parameters").unwrap();
    // Six parameters live at the peak: Arg_2.3 and Arg_3.4 (524,288 B each), Arg_5.6
    // (393,216), Arg_4.5 (131,072), Arg_0.1 and Arg_1.2 (512 each): 1,573,888 B. Inputs of
    // the program: nothing recomputes them, so a remat tick acts on none of them.
    assert_eq!(params.values.len(), 6);
    assert_eq!(params.bytes, 1_573_888);
    assert!(actionable(&m, 0, &index, &[], &params.values, Tick::Remat).is_empty());
    // Offloaded, each is idle across 133 (Arg_1.2 from 115 to 153, gone at 117-151; the
    // others from their last use before step 20 to the end): the peak falls by their bytes.
    let offload = actionable(&m, 0, &index, &[], &params.values, Tick::Offload);
    assert_eq!(offload.len(), 6);
    let mut ticks = Ticks::default();
    ticks.tick_values(&offload, Tick::Offload, true);
    let e = estimate(&m, s, &index, &ticks.edits(&[]));
    assert_eq!((e.peak_after, e.step_after), (25_996_292 - 1_573_888, Some(133)));
    assert_eq!(e.host_bytes_added, 1_573_888);
    // Two copies per stretch long enough: Arg_1.2's six stretches (0→114, 115→153, 154→164,
    // 165→212, 213→223, 224→295) and the two of each of the other five (before and after its
    // one use).
    assert_eq!(e.copies, 12 + 5 * 4);
}

/// The estimate (only the bytes the edited values cover swept again) is the sweep of every
/// block after the edits: without its fallback, which is that sweep
/// (`estimate_incremental`).
fn incremental_is_whole(m: &Module, what: &str) {
    let a = analyze(m);
    let index = ScheduleIndex::new(m);
    for s in &a.spaces {
        let Some(t) = s.peak_time else { continue };
        let live: Vec<u32> = live_set(m, s, t).values.iter().map(|l| l.value).collect();
        let timed_half: Vec<u32> = s.timed.iter().copied().step_by(2).collect();
        let remat = actionable(m, s.color, &index, &[], &live, Tick::Remat);
        let offload = actionable(m, s.color, &index, &[], &live, Tick::Offload);
        let mut cases = vec![
            Edits { remat: remat.clone(), ..Edits::default() },
            Edits { offload: offload.clone(), ..Edits::default() },
            Edits { remat: timed_half.clone(), offload: s.timed.iter().copied().skip(1).step_by(2).collect(), ..Edits::default() },
        ];
        // One value at a time (few blocks swept again: the incremental path).
        for &v in remat.iter().take(20) {
            cases.push(Edits { remat: vec![v], ..Edits::default() });
        }
        for &v in offload.iter().take(20) {
            cases.push(Edits { offload: vec![v], ..Edits::default() });
        }
        for (i, edits) in cases.iter().enumerate() {
            let e = estimate_incremental(m, s, &index, edits);
            let whole = occupied_curve(blocks_after(m, s, &index, edits), s.curve.len() as u32);
            assert_eq!(e.curve, whole, "{what}, colour {}, case {i}", s.color);
        }
    }
}

#[test]
fn the_estimate_is_the_sweep_of_the_blocks_after_the_edits() {
    let mut checked = 0;
    for f in common::fixture_modules() {
        let load = bufscope::load_files(f.inputs());
        for m in load.modules.iter().filter(|m| bufscope::answers::idle::has_uses(m)) {
            incremental_is_whole(m, &f.label);
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} modules with uses");
}

/// The cases in which some removed piece shares bytes with another value's block: how many
/// such pieces, found by brute force (`pieces`: what the edits of a case take away), after
/// checking each case's estimate against the sweep of every block.
fn sharing_cases(m: &Module, s: &bufscope::analysis::Space, cases: &[(Edits, Vec<bufscope::analysis::Block>)], what: &str) -> usize {
    let index = ScheduleIndex::new(m);
    let blocks: Vec<_> = s.blocks(m).filter(|b| b.y1 > b.y0).collect();
    let mut shared = 0;
    for (i, (edits, pieces)) in cases.iter().enumerate() {
        let e = estimate_incremental(m, s, &index, edits);
        let mut whole = occupied_curve(blocks_after(m, s, &index, edits), s.curve.len() as u32);
        // Plus what a loop's remat adds back: one iteration's worth from the backward body's
        // start to its last read of the output.
        for o in &edits.loops {
            let (lo, hi) = o.recomputed_steps(m, &index).unwrap();
            for x in &mut whole[lo as usize..=hi as usize] {
                *x += o.per_iteration_bytes();
            }
        }
        assert_eq!(e.curve, whole, "{what}, colour {}, case {i}", s.color);
        shared += (pieces.iter())
            .filter(|p| blocks.iter().any(|b| b.value != p.value && b.y0 < p.y1 && p.y0 < b.y1 && b.x0 < p.x1 && p.x0 < b.x1))
            .count();
    }
    shared
}

/// Where what an edit takes away shares bytes with another value's block (an alias, a
/// hand-off at a boundary step, a loop's stacked output and the slices written into it), the
/// bytes are not simply taken away: the estimate sweeps those pieces with the blocks they
/// meet. The remat ladder's `lm_scan_plain` with each stacked output rematerialised (its
/// slot's values dropped whole), alone and all at once, against the sweep of every block.
#[test]
fn pieces_sharing_bytes_are_swept_with_what_they_meet() {
    let Some(m) = common::shared_tpu_module("remat-ladder", "tpu_v5e_lm_scan_plain") else { return };
    let a = analyze(&m);
    let stacked = stacked_outputs(&m);
    let s = a.space(0).unwrap();
    let whole = |o: &[&bufscope::answers::whatif::StackedOutput]| {
        let pieces = o.iter().flat_map(|o| o.chain.iter().filter_map(|&v| s.block(&m, v))).collect();
        (Edits { loops: o.iter().map(|&o| o.clone()).collect(), ..Edits::default() }, pieces)
    };
    let mut cases: Vec<_> = stacked.iter().map(|o| whole(&[o])).collect();
    cases.push(whole(&stacked.iter().collect::<Vec<_>>()));
    let shared = sharing_cases(&m, s, &cases, "lm_scan_plain");
    eprintln!("{shared} pieces share bytes");
    assert!(shared > 0, "no piece shares bytes: the sweep of the shared ones is not exercised");
}
