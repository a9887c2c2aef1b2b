//! Memory-space names on real dumps: the backend each dump was compiled for, told by its
//! file name (`cpu_after_optimizations`, `sm_8.0_gpu_after_optimizations`) or, for the
//! renamed TPU dumps, by the TPU tiles of its layouts; HBM only for the TPU.
//!
//! The fixtures always; the public GPU/CPU dumps of ../shared/dumps when it is there.

mod common;

use bufscope::model::{backend_from_name, memory_space_label, Backend, Module};
use common::*;

fn load(m: &ModuleFiles) -> Module {
    let load = bufscope::load_files(m.inputs());
    assert_eq!(load.modules.len(), 1, "{}", m.label);
    load.modules.into_iter().next().unwrap()
}

#[test]
fn fixtures_name_their_backend() {
    let (mut cpu, mut tpu) = (0, 0);
    for files in fixture_modules() {
        let m = load(&files);
        // `edited/` holds CPU dumps edited by hand (named `cpu_…`).
        let want = if files.folder.starts_with("cpu") || files.label.starts_with("edited/cpu_") {
            cpu += 1;
            Backend::Cpu
        } else {
            assert_eq!(files.folder, "tpu");
            // Renamed: `000_0cb419b3147a3cb6` tells nothing; the layouts do.
            assert_eq!(backend_from_name(&m.name), None, "{}", files.label);
            tpu += 1;
            Backend::Tpu
        };
        assert_eq!(m.backend(), Some(want), "{}", files.label);
        let label = memory_space_label(0, m.backend());
        assert_eq!(
            label.contains("HBM"),
            want == Backend::Tpu,
            "{}: {label}",
            files.label
        );
    }
    // 18 CPU fixtures and the edited `cpu_tiny_multiline`; 5 TPU.
    assert_eq!((cpu, tpu), (19, 5));
}

#[test]
fn public_dumps_name_their_backend() {
    let Some(dumps) = shared_dumps_or_skip("public_dumps_name_their_backend") else {
        return;
    };
    let root = dumps.join("public");
    let modules = modules_under(&root, |_, _| true);
    let mut seen = [0; 2];
    for files in &modules {
        for (name, _) in &files.files {
            let want = if name.contains("_gpu_after_optimizations") {
                seen[0] += 1;
                Backend::Gpu
            } else if name.contains("cpu_after_optimizations") {
                seen[1] += 1;
                Backend::Cpu
            } else {
                continue;
            };
            assert_eq!(backend_from_name(name), Some(want), "{name}");
        }
    }
    assert!(seen[0] >= 5 && seen[1] >= 2, "{seen:?}");
    // One A100 module read whole: its space 0 is GPU memory, not HBM by name.
    let gpu = modules
        .iter()
        .find(|m| {
            m.files
                .iter()
                .any(|(n, _)| n.contains("jit_iota") || n.contains("scatter-add"))
        })
        .expect("a small public module");
    let m = load(gpu);
    assert!(m.backend().is_some(), "{}", gpu.label);
    assert!(
        !memory_space_label(0, m.backend()).contains("HBM") || m.backend() == Some(Backend::Tpu)
    );
}
