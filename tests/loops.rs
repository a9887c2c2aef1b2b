//! Loops on the time axis (`analysis::loops`), what they hold (`answers::loops`) and the
//! loop-aware idle stretches, on the real dumps with their HLO texts in `../shared/dumps`.
//!
//! The figures were read by hand from each dump: a while's condition and body steps are the
//! steps of the first and last instruction printed in those computations, found in the
//! `InstructionSequence` of the live-range file (`grep -n`); the trip count from the
//! condition's `compare(param#k, constant(N))`, the init tuple's element `k` (a `copy` of a
//! `constant(0)`) and the body's `add(param#k, constant(s))`, or from the CPU's printed
//! `known_trip_count`.

mod common;

use std::path::Path;

use bufscope::analysis::analyze;
use bufscope::analysis::loops::{flatten, loops, Loop, TripSource};
use bufscope::answers::idle::{value_uses, ScheduleIndex};
use bufscope::answers::live_set;
use bufscope::answers::loops::{held_at, loop_holds, Role};
use bufscope::model::Module;
use bufscope::summary::Summary;

fn load(dir: &Path, stem: &str) -> Module {
    common::load_stem(dir, stem)
}

fn find<'a>(loops: &'a [Loop], name: &str) -> &'a Loop {
    loops.iter().find(|l| l.while_name == name).unwrap_or_else(|| panic!("no {name}"))
}

/// (while, condition steps, body steps, while step, trip count, depth)
type Expected = (&'static str, [u32; 2], [u32; 2], u32, Option<u64>, u32);

fn check(m: &Module, expected: &[Expected]) {
    let l = loops(m);
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    assert_eq!(l.loops.len(), expected.len(), "{:?}", l.loops.iter().map(|l| &l.while_name).collect::<Vec<_>>());
    for &(name, cond, body, step, trips, depth) in expected {
        let w = find(&l.loops, name);
        assert_eq!((w.condition_steps, w.body_steps, w.step, w.trip_count, w.depth), (cond, body, step, trips, depth), "{name}");
    }
}

#[test]
fn the_flattening_is_instruction_sequence_on_every_cpu_dump_folder() {
    let Some(dumps) = common::shared_dumps_or_skip("the_flattening_is_instruction_sequence_on_every_cpu_dump_folder") else {
        return;
    };
    // (folder, module stem, steps of its InstructionSequence: `HloLiveRange (max N)`)
    let folders = [
        ("cond_switch", "module_0000.jit_cond_and_switch", 78),
        ("mlp_train", "module_0000.jit_stage", 2),
        ("mlp_train", "module_0002.jit__threefry_seed", 2),
        ("mlp_train", "module_0004.jit_mlp_train_step", 96),
        ("scan_layers", "module_0000.jit_scan_layers_train", 326),
        ("sharded", "module_0000.jit_sharded_mlp_train", 18),
    ];
    for (folder, stem, steps) in folders {
        let m = load(&dumps.join("cpu/jax0.12-folders").join(folder), stem);
        let hlo = m.hlo.as_deref().unwrap();
        let flat: Vec<&str> = flatten::flatten(hlo)
            .iter()
            .map(|&(c, i)| hlo.name(&hlo.computations[c as usize].instructions[i as usize]))
            .collect();
        let s = m.schedule.as_ref().unwrap();
        let seq: Vec<&str> = s.sequence.iter().map(|&i| m.str(m.instructions[i as usize].name)).collect();
        assert_eq!(seq.len(), steps, "{stem}");
        // Name for name, once the steps the text does not print are left out: those are
        // get-tuple-elements and, in two dumps, `while.N` names the text has no line for
        // (counted by hand: each sequence name without a `%NAME = ` line in the text).
        let printed: std::collections::HashSet<&str> =
            hlo.computations.iter().flat_map(|c| c.instructions.iter().map(|i| hlo.name(i))).collect();
        let (shown, unprinted): (Vec<&str>, Vec<&str>) = seq.iter().partition(|n| printed.contains(*n));
        assert_eq!(flat, shown, "{stem}");
        let gtes = unprinted.iter().filter(|n| n.starts_with("get-tuple-element")).count();
        let others: Vec<&str> = unprinted.iter().copied().filter(|n| !n.starts_with("get-tuple-element")).collect();
        assert_eq!((gtes, others), unprinted_by_hand(stem), "{stem}");
        assert!(loops(&m).warnings.is_empty(), "{stem}");
    }
}

/// The steps each CPU dump's text does not print: get-tuple-elements, and other names.
fn unprinted_by_hand(stem: &str) -> (usize, Vec<&'static str>) {
    match stem {
        "module_0000.jit_cond_and_switch" => (18, vec!["while.11"]),
        "module_0000.jit_scan_layers_train" => {
            (106, vec!["while.44", "while.80", "while.81", "while.76", "while.77", "while.78", "while.79"])
        }
        "module_0000.jit_sharded_mlp_train" => (2, vec![]),
        _ => (0, vec![]),
    }
}

#[test]
fn scan_layers_cpu_loops_by_hand() {
    let Some(dumps) = common::shared_dumps_or_skip("scan_layers_cpu_loops_by_hand") else { return };
    let m = load(&dumps.join("cpu/jax0.12-folders/scan_layers"), "module_0000.jit_scan_layers_train");
    // while.42: region_7.23 at 50–53 (arg_tuple.3 … its compare), region_0.22 at 54–157,
    // the while at 158; while.3 likewise at 191–194, 195–311, 312. 6 layers:
    // known_trip_count {"n":"6"} on both.
    check(&m, &[("while.42", [50, 53], [54, 157], 158, Some(6), 0), ("while.3", [191, 194], [195, 311], 312, Some(6), 0)]);
    let l = loops(&m);
    assert_eq!(find(&l.loops, "while.42").name, "forward scan");
    assert_eq!(find(&l.loops, "while.3").name, "backward scan");
    assert_eq!(find(&l.loops, "while.3").trip_source, TripSource::Printed);
}

#[test]
fn tpu_scan_remat_loops_by_hand() {
    let Some(dumps) = common::shared_dumps_or_skip("tpu_scan_remat_loops_by_hand") else { return };
    let m = load(&dumps.join("tpu-aot/jax0.12-libtpu0.0.50"), "tpu_v5e_lm_scan_remat.");
    // Forward: condition wide.region_6.7_spmd.clone at 161 (constant.328.clone.2) – 164
    // (lt.60, `compare(wide.param.39#0, constant(8)), direction=LT`), body
    // wide.region_1.6_spmd.clone.sunk at 165 (constant.360.clone..sunk.1) – 205 (tuple.116),
    // while.43 at 206; counter init copy.69 = copy(constant.348.clone = 0), step
    // add.587 = add(wide.param.1#0, constant(1)): 8 trips. Backward likewise: 342–345,
    // 346–725, while.42 at 726, `lt.59 … constant(8)`.
    check(&m, &[("while.43", [161, 164], [165, 205], 206, Some(8), 0), ("while.42", [342, 345], [346, 725], 726, Some(8), 0)]);
    let l = loops(&m);
    let fwd = find(&l.loops, "while.43");
    assert_eq!((fwd.name.as_str(), fwd.trip_source), ("forward scan", TripSource::Condition));
    assert_eq!(fwd.body_label(), "while.43 body ×8 · steps 165–205");
    assert_eq!(find(&l.loops, "while.42").name, "backward scan");
    // What while.43 holds: element 0 the counter, 1 the hidden state bf16[8,1024,1024]
    // (add.588, changed each layer: a carry, though its leading 8 is the batch), 2 the
    // residuals bf16[8,8,1024,1024] updated in place by bitcast_dynamic-update-slice_fusion.2
    // (134,217,728 bytes, `value: <2692 while.43{2} (phi) @0> (size=134217728…`), 3–12
    // passed through (`%wide.param.1#3` … in tuple.116).
    let holds = loop_holds(&m, &l);
    let i = l.loops.iter().position(|w| w.while_name == "while.43").unwrap();
    let h = holds.iter().find(|h| h.loop_index as usize == i).unwrap();
    let roles: Vec<Role> = h.elements.iter().map(|e| e.role).collect();
    let mut want = vec![Role::Counter, Role::Carry, Role::Stacked];
    want.extend([Role::Invariant; 10]);
    assert_eq!(roles, want);
    assert_eq!((h.elements[2].value_name.as_deref(), h.elements[2].size), (Some("while.43{2}"), 134_217_728));
    // Element 3 came in as param.6 (tuple.114's operand 3), f32[8,1024] padded to 32,768.
    assert_eq!(h.elements[3].value_name.as_deref(), Some("param.6"));
    // At the peak of HBM (step 526, in the backward body) the residuals are live:
    // while.43{2} lives 206–726.
    let a = analyze(&m);
    let hbm = a.space(0).unwrap();
    assert_eq!(hbm.peak_time, Some(526));
    let at = held_at(&m, &l, &holds, 0, 526);
    assert_eq!(at[h.loop_index as usize].stacked_bytes, 134_217_728);
}

#[test]
fn idle_stretches_know_the_backward_loop() {
    let Some(dumps) = common::shared_dumps_or_skip("idle_stretches_know_the_backward_loop") else { return };
    let m = load(&dumps.join("tpu-aot/jax0.12-libtpu0.0.50"), "tpu_v5e_lm_scan_remat.");
    let v = (0..m.values.len() as u32).find(|&v| m.value_name(&m.values[v as usize]) == "while.43{2}").unwrap();
    let index = ScheduleIndex::new(&m);
    let u = value_uses(&m, &index, v).unwrap();
    let longest = u.stretches.iter().map(|s| s.idle_steps).max().unwrap();
    // Live 206–726; used in the backward body (346–725) at 353 and 725, so also touched at
    // 342, the loop's first step, and 726, and idle nowhere in the loop: idle only from 206
    // to 342, 135 steps, where it was ranked "idle 371 steps" (353 to 725, inside the loop
    // that reads it every iteration).
    let got: Vec<_> = u.stretches.iter().map(|s| (s.from, s.to, s.idle_steps)).collect();
    assert_eq!(got, vec![(206, 342, 135)]);
    assert_eq!(longest, 135);
    // No carry of either loop is a candidate at the peak.
    let a = analyze(&m);
    let live = live_set(&m, a.space(0).unwrap(), 526);
    let ranked = bufscope::answers::idle::idle_ranking(&m, &index, &live);
    for r in &ranked.rows {
        let name = m.value_name(&m.values[r.value as usize]);
        assert!(!["while.43{1}", "while.42{1}", "while.43{}", "while.42{}"].contains(&name.as_str()), "{name}");
    }
}

#[test]
fn maxtext_loops_by_hand() {
    let Some(dumps) = common::shared_dumps_or_skip("maxtext_loops_by_hand") else { return };
    let m = load(&dumps.join("tpu-aot/maxtext0.2.5"), "tpu_v5e-16_maxtext_llama3.1-8b_pdb1");
    let l = loops(&m);
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    assert_eq!(l.loops.len(), 18);
    // The decoder scan: condition wide.region_4.7_spmd.clone.clone.clone.clone at 226
    // (constant.467.clone.5 = 32) – 229 (lt.106), body at 230–919 (tuple.659), while.145 at
    // 920; counter init copy.562 = copy(constant 0): 32 layers of llama3.1-8b. Backward:
    // wide.region_19.24_spmd at 1106–1109, body 1110–2606, while.136 at 2607.
    let fwd = find(&l.loops, "while.145");
    assert_eq!((fwd.condition_steps, fwd.body_steps, fwd.step, fwd.trip_count), ([226, 229], [230, 919], 920, Some(32)));
    let bwd = find(&l.loops, "while.136");
    assert_eq!((bwd.condition_steps, bwd.body_steps, bwd.step, bwd.trip_count), ([1106, 1109], [1110, 2606], 2607, Some(32)));
    assert_eq!((fwd.name.as_str(), bwd.name.as_str()), ("forward scan", "backward scan"));
    // Windowed einsums inside the scans: `compare(param#4, constant(8)), LT`, counter from
    // copy(copy(constant 0)), stepped by add(param#4, constant(2)): 4 trips. while.155 in
    // the forward body at 301–304, 305–358, step 359.
    let w = find(&l.loops, "while.155");
    assert_eq!((w.condition_steps, w.body_steps, w.step, w.trip_count, w.depth), ([301, 304], [305, 358], 359, Some(4), 1));
    assert_eq!(w.name, "XLA loop of dot_general (forward)");
    assert_eq!(l.loops[w.parent.unwrap() as usize].while_name, "while.145");
    let nested = l.loops.iter().filter(|x| x.depth == 1).count();
    assert_eq!(nested, 15);
    // The scan stacks one output, while.145{2}: bf16[32,1,2048,4096], 536,870,912 bytes.
    let holds = loop_holds(&m, &l);
    let i = l.loops.iter().position(|x| x.while_name == "while.145").unwrap();
    let stacked: Vec<_> = holds[i].elements.iter().filter(|e| e.role == Role::Stacked).collect();
    assert_eq!(stacked.len(), 1);
    assert_eq!((stacked[0].value_name.as_deref(), stacked[0].size), (Some("while.145{2}"), 536_870_912));
}

#[test]
fn summary_json_lists_loops_and_what_they_hold_at_the_peak() {
    let Some(dumps) = common::shared_dumps_or_skip("summary_json_lists_loops_and_what_they_hold_at_the_peak") else { return };
    let m = load(&dumps.join("tpu-aot/jax0.12-libtpu0.0.50"), "tpu_v5e_lm_scan_remat.");
    let a = analyze(&m);
    let json: serde_json::Value = serde_json::from_str(&Summary::new([(&m, &a)]).to_json()).unwrap();
    let module = &json["modules"][0];
    let first = &module["loops"][0];
    assert_eq!(first["while"], "while.43");
    assert_eq!(first["step"], 206);
    assert_eq!(first["in"], "main.26_spmd");
    assert_eq!(first["condition"], "wide.region_6.7_spmd.clone");
    assert_eq!(first["body"], "wide.region_1.6_spmd.clone.sunk");
    assert_eq!(first["condition_steps"], serde_json::json!([161, 164]));
    assert_eq!(first["body_steps"], serde_json::json!([165, 205]));
    assert_eq!(first["trip_count"], 8);
    let hbm = &module["memory_spaces"][0];
    assert_eq!(hbm["color"], 0);
    assert_eq!(hbm["loops_at_peak"][0]["while"], "while.43");
    assert_eq!(hbm["loops_at_peak"][0]["stacked_bytes"], 134_217_728);
    let text = Summary::new([(&m, &a)]).to_table();
    assert!(text.contains("while.43 (forward scan) at step 206 in main.26_spmd: cond steps 161–164, body ×8 · steps 165–205"), "{text}");
}

#[test]
fn maxtext_stacked_output_is_not_idle_across_the_backward_scan() {
    let Some(dumps) = common::shared_dumps_or_skip("maxtext_stacked_output_is_not_idle_across_the_backward_scan") else {
        return;
    };
    let m = load(&dumps.join("tpu-aot/maxtext0.2.5"), "tpu_v5e-16_maxtext_llama3.1-8b_pdb1");
    let v = (0..m.values.len() as u32).find(|&v| m.value_name(&m.values[v as usize]) == "while.145{2}").unwrap();
    let u = value_uses(&m, &ScheduleIndex::new(&m), v).unwrap();
    // Live 920–2607; used by fusion.661 (step 1180), fusion.662 (1240), fusion.812 (1392),
    // fusion.687 (2388), multiply_reduce_fusion.30 (2439) and tuple.725 (2606), all in the
    // backward scan's body (1110–2606): idle only from its definition to the backward
    // scan's first step, 1106 (185 steps), not the 995 steps from 1392 to 2388.
    let got: Vec<_> = u.stretches.iter().map(|s| (s.from, s.to, s.idle_steps)).collect();
    assert_eq!(got, vec![(920, 1106, 185)]);
}

#[test]
fn every_tpu_text_agrees_with_its_schedule() {
    let Some(dumps) = common::shared_dumps_or_skip("every_tpu_text_agrees_with_its_schedule") else { return };
    // (folder, stem, whiles): the whiles counted by `grep -c ' while('` in each text.
    let texts = [
        ("jax0.12-libtpu0.0.50", "tpu_v5e_host_offload.", 0),
        ("jax0.12-libtpu0.0.50", "tpu_v5e_lm_scan_remat_OOM.", 2),
        ("jax0.12-libtpu0.0.50", "tpu_v5e_lm_unrolled.", 0),
        ("jax0.12-libtpu0.0.50", "tpu_v5e_pallas_matmul.", 0),
        ("jax0.12-libtpu0.0.50", "tpu_v5e_tiny_matmul.", 0),
        // The sparsecore gather: an async-start on another thread, flattened at its update.
        ("jax0.12-libtpu0.0.50", "tpu_v6e_lm_scan_remat.", 2),
        ("remat-ladder", "tpu_v5e_lm_scan_dots.", 2),
        ("remat-ladder", "tpu_v5e_lm_scan_plain.", 2),
        ("remat-ladder", "tpu_v5e_lm_scan_remat_b32.", 2),
        ("remat-ladder", "tpu_v5e_lm_scan_remat_b8.", 2),
        ("remat-ladder", "tpu_v5e_lm_scan_save_qkv.", 2),
    ];
    for (folder, stem, whiles) in texts {
        let m = load(&dumps.join("tpu-aot").join(folder), stem);
        let l = loops(&m);
        assert!(l.warnings.is_empty(), "{stem}: {:?}", l.warnings);
        assert_eq!(l.loops.len(), whiles, "{stem}");
        assert!(l.loops.iter().all(|w| w.trip_count == Some(8)), "{stem}");
    }
}
