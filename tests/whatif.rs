//! The what-if of `bufscope::answers::whatif`: with no edit it is the real curve at every
//! step of every dump; a value rematerialised or offloaded on a hand-worked fixture, step by
//! step; a loop's stacked outputs on the remat ladder's `lm_scan_plain` against what its HLO
//! text says the forward loop outputs; the plan for a capacity on `tpu_v5e_lm_scan_remat_OOM`.

mod common;

use bufscope::analysis::analyze;
use bufscope::answers::idle::ScheduleIndex;
use bufscope::answers::whatif::{estimate, Edits};
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
