//! Padding and idle stretches of `bufscope::answers` on real dumps, checked by hand against
//! the dump text: TPU tiles explain every allocated size, TPU dump 000's padding at its peak,
//! its idle stretches and what can be done to each candidate, and the clear answer when the
//! values file is missing. (The groupings, XProf's figures and the timings are in
//! tests/answers.rs.)

#[path = "common/answers_fixture.rs"]
mod answers_fixture;
mod common;

use answers_fixture::{load, load_module, value_named};
use bufscope::analysis::analyze;
use bufscope::answers::idle::{idle_ranking, value_uses, ScheduleIndex, Stretch};
use bufscope::answers::live_set;
use bufscope::answers::padding::{peak_padding_bytes, space_padding, tiling, value_padding};

#[test]
fn tiles_explain_every_tpu_allocated_size() {
    let mut tiled = 0;
    for files in common::fixture_modules()
        .into_iter()
        .filter(|f| f.folder == "tpu")
    {
        let m = load_module(&files);
        for v in &m.values {
            let shape = m.str(v.shape);
            if let Some(t) = tiling(shape) {
                assert_eq!(t.tiled_bytes, Some(v.size), "{}: {shape}", files.label);
                tiled += 1;
            }
        }
    }
    println!("{tiled} tiled TPU values: tiled size = allocated size");
    assert!(tiled > 50);
}

#[test]
fn tpu_000_padding_by_hand() {
    let m = load("tpu/000_0cb419b3147a3cb6");
    let a = analyze(&m);
    let s = a.space(0).unwrap();
    // Peak of HBM (colour 0) at step 13: Arg_1.2 32 KiB (logical 16 KiB), Arg_2.3 16 KiB (8),
    // Arg_0.1 8 KiB (4), fusion 8 KiB (f32[16,32]: 2 KiB) = 64 KiB, of which 34 KiB padding.
    assert_eq!((s.peak_time, s.peak_bytes), (Some(13), 65_536));
    assert_eq!(peak_padding_bytes(&m, s), 16_384 + 8_192 + 4_096 + 6_144);
    let p = value_padding(&m, value_named(&m, "Arg_2.3"));
    // f32[64,32]{0,1:T(8,128)}: dim 0 is most minor, 64 → 128; dim 1, 32, is a multiple of 8.
    assert_eq!(
        p.explanation,
        "Dim 0 padded 64 → 128 by tile T(8,128) (8.0 KiB of padding)."
    );
    let p = value_padding(&m, value_named(&m, "fusion"));
    assert_eq!(
        p.explanation,
        "Dim 1 padded 32 → 128 by tile T(8,128) (6.0 KiB of padding)."
    );
    let p = value_padding(&m, value_named(&m, "add.14"));
    assert_eq!(
        p.explanation,
        "The scalar padded 1 → 128 elements by tile T(128) (508 B of padding)."
    );
    let live = live_set(&m, s, 13);
    let sp = space_padding(&m, s, &live, 3);
    assert_eq!(sp.step_padding_bytes, 34_816);
    let top: Vec<String> = sp
        .top
        .iter()
        .map(|p| m.value_name(&m.values[p.value as usize]))
        .collect();
    assert_eq!(top, ["Arg_1.2", "Arg_2.3", "fusion"]);
    // Over all colour-0 values: the four above, three tuple tables (32 allocated, 24 or 16
    // logical) and the nine thread-local scalars of allocations 0 and 5-12 (512 for 4).
    assert_eq!(sp.all_padding_bytes, 34_816 + 8 + 8 + 16 + 9 * 508);
}

#[test]
fn idle_stretches_of_tpu_000_by_hand() {
    // Uses in the dump text, placed on its InstructionSequence:
    // copy-start.1{0} @1, live 6-13: copy-done.1 (step 12), fusion (13).
    // multiply_reduce_fusion{1} @1, live 5-13: fusion.5 (10), fusion.2 (11), fusion (13).
    // multiply_reduce_fusion{0} @1, live 5-9: add_sqrt_fusion (9).
    let m = load("tpu/000_0cb419b3147a3cb6");
    let index = ScheduleIndex::new(&m);
    let u = value_uses(&m, &index, value_named(&m, "multiply_reduce_fusion{1}")).unwrap();
    let steps: Vec<Option<u32>> = u.uses.iter().map(|u| u.step).collect();
    assert_eq!(steps, [Some(11), Some(10), Some(13)]);
    let st = |from, to, to_use, idle_steps| Stretch {
        from,
        to,
        to_use,
        idle_steps,
    };
    assert_eq!(u.stretches, [st(5, 10, true, 4), st(11, 13, true, 1)]);

    let a = analyze(&m);
    let live = live_set(&m, a.space(1).unwrap(), 8);
    let ranked = idle_ranking(&m, &index, &live);
    assert!(ranked.available);
    let rows: Vec<(String, u64, Option<Stretch>)> = ranked
        .rows
        .iter()
        .map(|r| {
            (
                m.value_name(&m.values[r.value as usize]),
                r.idle_byte_steps,
                r.across_step,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (
                "copy-start.1{0}".to_string(),
                16_384 * 5,
                Some(st(6, 12, true, 5))
            ),
            (
                "multiply_reduce_fusion{1}".to_string(),
                8_192 * 4,
                Some(st(5, 10, true, 4))
            ),
            (
                "multiply_reduce_fusion{0}".to_string(),
                512 * 3,
                Some(st(5, 9, true, 3))
            ),
        ]
    );
    // The index keeps the stretches it found: at every step, one index reused across the
    // steps ranks as a fresh one does.
    let s1 = a.space(1).unwrap();
    for t in (0..a.steps).rev() {
        let live = live_set(&m, s1, t);
        let fresh = idle_ranking(&m, &ScheduleIndex::new(&m), &live);
        assert_eq!(idle_ranking(&m, &index, &live), fresh, "step {t}");
    }
}

#[test]
fn idle_stretches_need_the_values_file() {
    // jax 0.10.2 writes Used values to a file of its own: without it, a clear answer.
    let files = common::fixture_module("cpu/jax0.10.2/cpu_mlp_train");
    let inputs: Vec<(&str, &[u8])> = files
        .dump_files()
        .filter(|(n, _)| !n.contains("-values"))
        .collect();
    let m = bufscope::load_files(inputs).modules.remove(0);
    let a = analyze(&m);
    let s = a.space(0).unwrap();
    let live = live_set(&m, s, s.peak_time.unwrap());
    let ans = idle_ranking(&m, &ScheduleIndex::new(&m), &live);
    assert!(!ans.available && ans.rows.is_empty());
    assert!(ans.message.unwrap().contains("buffer-assignment-values"));
}

/// What can be done to each candidate: in TPU dump 000's HBM, at every step, the entry
/// parameters `Arg_0.1`, `Arg_1.2` and `Arg_2.3` (allocations 4, 1 and 2: `parameter 0` to `2`)
/// can only be offloaded; every other candidate is a temporary, which can also be
/// rematerialised.
#[test]
fn idle_candidates_say_what_can_be_done() {
    use bufscope::answers::idle::Remedy;
    use std::collections::BTreeSet;
    let m = load("tpu/000_0cb419b3147a3cb6");
    let a = analyze(&m);
    let space = a.space(0).unwrap();
    let index = ScheduleIndex::new(&m);
    let mut seen: BTreeSet<(String, Remedy)> = BTreeSet::new();
    for t in 0..a.steps {
        let ranked = idle_ranking(&m, &index, &live_set(&m, space, t));
        seen.extend(
            (ranked.rows.iter()).map(|r| (m.value_name(&m.values[r.value as usize]), r.remedy)),
        );
    }
    let offload: Vec<&str> = (seen.iter())
        .filter(|(_, r)| *r == Remedy::OffloadOnly)
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(offload, ["Arg_0.1", "Arg_1.2", "Arg_2.3"], "{seen:?}");
    let remat = seen
        .iter()
        .filter(|(_, r)| *r == Remedy::RematOrOffload)
        .count();
    assert!(remat > 0, "{seen:?}");
    assert_eq!(Remedy::OffloadOnly.label(), "offload only");
}
