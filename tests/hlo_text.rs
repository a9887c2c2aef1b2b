//! The HLO module text reader (`parse::hlo`) on every real `*after_optimizations.txt` in
//! `../shared/dumps`, on a CPU dump folder copied into the fixtures, and on cut, garbled and
//! hostile texts. The counts are grep counts taken by hand on each file:
//! computations `grep -cE '^(ENTRY )?%[^ ]+ .*\{$'`, instructions
//! `grep -cE '^  (ROOT )?%[^ ]+ = '` (an instruction printed over several lines counts once).

mod common;

use bufscope::parse::hlo::{read_hlo, HloRead};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the heap bytes each thread holds (the tests run on several threads at once), to
/// measure what a read text keeps.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn add(n: isize) {
    let _ = LIVE.try_with(|c| c.set(c.get() + n));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        add(l.size() as isize);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        add(-(l.size() as isize));
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        add(n as isize - l.size() as isize);
        unsafe { System.realloc(p, l, n) }
    }
}

fn live() -> isize {
    LIVE.with(Cell::get)
}

#[global_allocator]
static A: Counting = Counting;

/// (path under ../shared/dumps, computations, instructions, entry, num_partitions, frames)
const TEXTS: &[(&str, usize, usize, &str, Option<u32>, usize)] = &[
    ("cpu/jax0.12-folders/cond_switch/module_0000.jit_cond_and_switch.cpu_after_optimizations.txt", 31, 132, "main.12", None, 20),
    ("cpu/jax0.12-folders/mlp_train/module_0000.jit_stage.cpu_after_optimizations.txt", 1, 2, "main.1", None, 0),
    ("cpu/jax0.12-folders/mlp_train/module_0002.jit__threefry_seed.cpu_after_optimizations.txt", 2, 10, "main.1", None, 2),
    ("cpu/jax0.12-folders/mlp_train/module_0004.jit_mlp_train_step.cpu_after_optimizations.txt", 69, 655, "main.24", None, 47),
    ("cpu/jax0.12-folders/scan_layers/module_0000.jit_scan_layers_train.cpu_after_optimizations.txt", 168, 1498, "main.56", None, 59),
    ("cpu/jax0.12-folders/sharded/module_0000.jit_sharded_mlp_train.cpu_after_optimizations.txt", 10, 91, "main.0_spmd", Some(8), 13),
    ("tpu-aot/jax0.12-libtpu0.0.50/tpu_v5e_host_offload.after_optimizations.txt", 12, 62, "main.0_spmd", Some(4), 9),
    ("tpu-aot/jax0.12-libtpu0.0.50/tpu_v5e_lm_scan_remat.after_optimizations.txt", 312, 2637, "main.26_spmd", Some(4), 125),
    ("tpu-aot/jax0.12-libtpu0.0.50/tpu_v5e_lm_scan_remat_OOM.after_optimizations.txt", 258, 2501, "main.26_spmd", Some(4), 125),
    ("tpu-aot/jax0.12-libtpu0.0.50/tpu_v5e_lm_unrolled.after_optimizations.txt", 1434, 10037, "main.81_spmd", Some(4), 118),
    ("tpu-aot/jax0.12-libtpu0.0.50/tpu_v5e_pallas_matmul.after_optimizations.txt", 4, 17, "main.0_spmd", Some(4), 7),
    ("tpu-aot/jax0.12-libtpu0.0.50/tpu_v5e_tiny_matmul.after_optimizations.txt", 6, 26, "main.0_spmd", Some(4), 4),
    ("tpu-aot/jax0.12-libtpu0.0.50/tpu_v6e_lm_scan_remat.after_optimizations.txt", 286, 2494, "main.26_spmd", Some(4), 124),
    ("tpu-aot/jax0.6.2-libtpu0.0.17/tpu_v5e_lm_scan_remat.after_optimizations.txt", 314, 2727, "main.1274_spmd", Some(4), 0),
    ("tpu-aot/jax0.6.2-libtpu0.0.17/tpu_v5e_lm_scan_remat_OOM.after_optimizations.txt", 265, 2648, "main.1274_spmd", Some(4), 0),
    ("tpu-aot/maxtext0.2.5/tpu_v5e-16_maxtext_llama3.1-8b_pdb1.after_optimizations.txt", 513, 5879, "main.64_spmd", Some(16), 434),
    ("tpu-aot/remat-ladder/tpu_v5e_lm_scan_dots.after_optimizations.txt", 288, 2509, "main.26_spmd", Some(4), 125),
    ("tpu-aot/remat-ladder/tpu_v5e_lm_scan_plain.after_optimizations.txt", 261, 2563, "main.22_spmd", Some(4), 124),
    ("tpu-aot/remat-ladder/tpu_v5e_lm_scan_remat_b32.after_optimizations.txt", 292, 2574, "main.26_spmd", Some(4), 125),
    ("tpu-aot/remat-ladder/tpu_v5e_lm_scan_remat_b8.after_optimizations.txt", 284, 2490, "main.26_spmd", Some(4), 125),
    ("tpu-aot/remat-ladder/tpu_v5e_lm_scan_save_qkv.after_optimizations.txt", 291, 2534, "main.26_spmd", Some(4), 128),
    ("tpu-aot/turn4/raw_folder_multi/module_0003.jit_init.cl_1004524046.after_optimizations.txt", 33, 2840, "main.2_spmd", Some(4), 11),
    ("tpu-aot/turn4/raw_folder_multi/module_0044.jit_train_step.cl_1004524046.after_optimizations.txt", 323, 2696, "main.26_spmd", Some(4), 123),
    ("tpu-aot/turn4/raw_folder_multi/module_0188.jit_eval_step.cl_1004524046.after_optimizations.txt", 82, 744, "main.12_spmd", Some(4), 78),
    ("tpu-aot/turn4/tpu_tpu7x_lm_scan_remat.after_optimizations.txt", 338, 2615, "main.26_spmd", Some(8), 123),
    ("tpu-aot/turn4/tpu_v5e_lm_scan_offload_dots.after_optimizations.txt", 522, 3987, "main.26_spmd", Some(4), 125),
    ("tpu-aot/turn4/tpu_v5e_lm_scan_offload_qkv.after_optimizations.txt", 544, 4059, "main.26_spmd", Some(4), 125),
    ("tpu-aot/turn4/tpu_v5e_lm_scan_remat_b48.after_optimizations.txt", 288, 2559, "main.26_spmd", Some(4), 125),
    ("tpu-aot/turn4/tpu_v5e_lm_scan_remat_b64.after_optimizations.txt", 312, 2661, "main.26_spmd", Some(4), 125),
    ("tpu-aot/turn4/tpu_v5e_lm_scan_remat_s512.after_optimizations.txt", 304, 2612, "main.26_spmd", Some(4), 125),
    ("tpu-aot/turn4/tpu_v5p-16_maxtext_llama2-7b_pdb1_pp4.after_optimizations.txt", 341, 3887, "main.85_spmd", Some(8), 569),
    ("tpu-aot/turn4/waste_baseline.after_optimizations.txt", 312, 2637, "main.26_spmd", Some(4), 125),
    ("tpu-aot/turn4/waste_lmhead_replicated.after_optimizations.txt", 298, 2513, "main.26_spmd", Some(4), 125),
    ("tpu-aot/turn4/waste_no_donation.after_optimizations.txt", 316, 2634, "main.26_spmd", Some(4), 125),
];

fn instruction_count(r: &HloRead) -> usize {
    r.text
        .computations
        .iter()
        .map(|c| c.instructions.len())
        .sum()
}

/// Reads `bytes` and returns the read with the live heap bytes its text keeps: every
/// allocation made while reading that is still live, less the file's name and the
/// warnings (not the text's; nothing else of the read is kept).
fn read_measured(name: &str, bytes: &[u8]) -> (HloRead, usize) {
    let before = live();
    let r = read_hlo(name, bytes);
    let HloRead {
        file,
        text,
        warnings,
    } = r;
    let others = file.capacity()
        + warnings.capacity() * std::mem::size_of::<bufscope::model::Warning>()
        + warnings
            .iter()
            .map(|w| w.file.capacity() + w.message.capacity())
            .sum::<usize>();
    let kept = live() - before - others as isize;
    (
        HloRead {
            file,
            text,
            warnings,
        },
        kept.max(0) as usize,
    )
}

#[test]
fn every_real_hlo_text_reads_whole_within_its_size() {
    let Some(dir) = common::shared_dumps_or_skip("every_real_hlo_text_reads_whole_within_its_size")
    else {
        return;
    };
    // Every text in ../shared is in the table above.
    let listed = std::process::Command::new("find")
        .arg(&dir)
        .args(["-name", "*after_optimizations.txt"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().count());
    if let Ok(n) = listed {
        assert_eq!(
            n,
            TEXTS.len(),
            "an HLO text in ../shared is missing from TEXTS"
        );
    }
    println!(
        "an HloInstruction's own fields: {} bytes (before its strings)",
        std::mem::size_of::<bufscope::model::hlo::HloInstruction>()
    );
    for &(path, comps, instrs, entry, parts, frames) in TEXTS {
        let bytes = std::fs::read(dir.join(path)).unwrap();
        let (r, kept) = read_measured(path, &bytes);
        assert!(
            r.warnings.is_empty(),
            "{path}: {:?}",
            &r.warnings[..r.warnings.len().min(3)]
        );
        assert_eq!(r.text.computations.len(), comps, "{path}");
        assert_eq!(instruction_count(&r), instrs, "{path}");
        let e = r.text.entry.expect("an entry") as usize;
        assert_eq!(r.text.str(r.text.computations[e].name), entry, "{path}");
        assert!(r.text.is_entry(&r.text.computations[e]));
        assert_eq!(r.text.num_partitions, parts, "{path}");
        assert_eq!(r.text.frames.frames.len(), frames, "{path}");
        // Every instruction with a stack frame id resolves to at least its own frame.
        for ins in r.text.computations.iter().flat_map(|c| &c.instructions) {
            if let Some(id) = r.text.meta(ins).stack_frame_id {
                assert!(
                    r.text.frames.frame(id).is_some(),
                    "{path}: {} frame {id}",
                    r.text.name(ins)
                );
            }
        }
        println!(
            "{path}: {} bytes, {kept} bytes kept ({:.2}x)",
            bytes.len(),
            kept as f64 / bytes.len() as f64
        );
        // The target: at most the file's size. Every text of 2 KB or more keeps
        // 0.57x to 1.00x (measured, in docs/benchmarks.md). The two under 2 KB keep a few
        // hundred bytes more than their short lines (the 336-byte `jit_stage` text 438
        // bytes, the 1,830-byte `threefry` one 2,124): the tables every text has.
        let bound = if bytes.len() >= 2048 { bytes.len() } else { bytes.len() + 512 };
        assert!(
            kept <= bound,
            "{path}: keeps {kept} bytes of a {}-byte text",
            bytes.len()
        );
    }
}

fn find<'a>(r: &'a HloRead, name: &str) -> &'a bufscope::model::hlo::HloInstruction {
    r.text
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .find(|i| r.text.name(i) == name)
        .unwrap_or_else(|| panic!("no instruction {name}"))
}

fn where_(r: &HloRead, id: u32) -> Vec<String> {
    r.text
        .frames
        .stack(id)
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{}",
                f.file.rsplit('/').next().unwrap(),
                f.line,
                f.function
            )
        })
        .collect()
}

/// Three values' stacks, followed by hand through the four tables (`parent_frame_id` is
/// printed as the parent's id plus one).
#[test]
fn three_values_stack_frames_resolved_by_hand() {
    let Some(dir) = common::shared_dumps_or_skip("three_values_stack_frames_resolved_by_hand")
    else {
        return;
    };
    let read = |p: &str| read_hlo(p, &std::fs::read(dir.join(p)).unwrap());
    // CPU scan_layers: reduce_sum.75 (fused into the layer norm) has stack_frame_id=14.
    let cpu = read("cpu/jax0.12-folders/scan_layers/module_0000.jit_scan_layers_train.cpu_after_optimizations.txt");
    let ins = find(&cpu, "reduce_sum.75");
    assert_eq!(cpu.text.meta(ins).stack_frame_id, Some(14));
    let s = where_(&cpu, 14);
    assert_eq!(s.len(), 12);
    assert_eq!(s[0], "programs.py:92:_layernorm");
    assert_eq!(s[1], "programs.py:100:_block");
    assert_eq!(
        s[2],
        "programs.py:147:scan_layers.<locals>.scan_layers_train.<locals>.loss.<locals>.body"
    );
    assert_eq!(s[9], "programs.py:22:compile_");
    assert_eq!(s[11], "programs.py:471:<module>");
    // TPU scan_remat: fusion.478 (a q/k/v projection in the scan body), frame 41.
    let tpu = read("tpu-aot/jax0.12-libtpu0.0.50/tpu_v5e_lm_scan_remat.after_optimizations.txt");
    assert_eq!(
        tpu.text.meta(find(&tpu, "fusion.478")).stack_frame_id,
        Some(41)
    );
    let s = where_(&tpu, 41);
    assert_eq!(s.len(), 13);
    assert_eq!(s[0], "tpu_programs.py:62:layer_fn");
    assert_eq!(
        s[1],
        "tpu_programs.py:148:build_lm.<locals>.forward.<locals>.<lambda>"
    );
    assert_eq!(s[11], "tpu_programs.py:267:main");
    assert_eq!(s[12], "tpu_programs.py:294:<module>");
    // MaxText: the splash attention kernel's custom call, frame 431, 34 frames deep, the
    // innermost in jax's Pallas ops and the outermost in runpy.
    let mt =
        read("tpu-aot/maxtext0.2.5/tpu_v5e-16_maxtext_llama3.1-8b_pdb1.after_optimizations.txt");
    let ins = find(&mt, "splash_mha_fwd_segmented_residuals.3");
    assert_eq!(mt.text.meta(ins).stack_frame_id, Some(431));
    assert_eq!(mt.text.opcode(ins), "custom-call");
    let s = where_(&mt, 431);
    assert_eq!(s.len(), 34);
    assert_eq!(s[0], "splash_attention_kernel.py:2420:_splash_attention");
    assert_eq!(s[7], "llama2.py:170:LlamaDecoderLayer.__call__");
    assert_eq!(s[33], "<frozen runpy>:198:_run_module_as_main");
}

/// The jax 0.6.2 text has `source_file`/`source_line` and no tables.
#[test]
fn older_texts_carry_source_lines() {
    let Some(dir) = common::shared_dumps_or_skip("older_texts_carry_source_lines") else {
        return;
    };
    let p = "tpu-aot/jax0.6.2-libtpu0.0.17/tpu_v5e_lm_scan_remat.after_optimizations.txt";
    let r = read_hlo(p, &std::fs::read(dir.join(p)).unwrap());
    assert!(r.text.frames.is_empty());
    let with_source = r
        .text
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .filter(|&i| r.text.source_file(i).is_some() && r.text.meta(i).source_line.is_some())
        .count();
    assert!(with_source > 1000, "{with_source}");
}

const SMALL: &str = "HloModule jit_f, is_scheduled=true, replica_count=2

FileNames
1 \"/m/a.py\"

FunctionNames
1 \"f\"

FileLocations
1 {file_name_id=1 function_name_id=1 line=10 end_line=10 column=1 end_column=2}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=1 parent_frame_id=3}
3 {file_location_id=1 parent_frame_id=9}

%body.1 (p: (s32[], f32[2])) -> (s32[], f32[2]) {
  %p = (s32[], f32[2]{0}) parameter(0)
  ROOT %t = (s32[], f32[2]{0}) tuple(%p), metadata={op_name=\"x\" stack_frame_id=2}
}

ENTRY %main.2 (a: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0), metadata={op_name=\"params[\\'w\\']\" stack_frame_id=7}
  ROOT %n = f32[2]{0} negate(%a), metadata={stack_frame_id=3}
}
";

#[test]
fn self_parented_and_missing_frames_warn_not_panic() {
    let r = read_hlo("x.after_optimizations.txt", SMALL.as_bytes());
    assert_eq!(r.text.replica_count, Some(2));
    assert_eq!(r.text.devices(), 2);
    assert_eq!(r.text.frames.stack(2).len(), 1, "frame 2 is its own parent");
    assert_eq!(
        r.text.frames.stack(3).len(),
        1,
        "frame 3's parent 8 is missing"
    );
    let text: Vec<String> = r
        .warnings
        .iter()
        .map(|w| format!("{}: {}", w.line, w.message))
        .collect();
    assert!(
        text.iter()
            .any(|w| w.contains("stack frame 2 is its own ancestor")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|w| w.contains("stack frame 8 is not in the StackFrames table")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|w| w.starts_with("23: 1 instructions name a stack_frame_id")),
        "{text:?}"
    );
    assert_eq!(r.text.op_name(find(&r, "a")), Some("params['w']"));
    assert_eq!(r.text.literal(find(&r, "a")), Some("0"));
    assert!(r.text.operands(find(&r, "a")).len() == 0);
}

#[test]
fn cut_and_garbled_texts_keep_what_was_read() {
    // Cut inside the entry computation, in the middle of a line.
    let cut = &SMALL[..SMALL.find("negate(").unwrap() + 3];
    let r = read_hlo("x.after_optimizations.txt", cut.as_bytes());
    assert_eq!(r.text.computations.len(), 2);
    assert_eq!(r.text.computations[1].instructions.len(), 1);
    let msgs: Vec<&str> = r.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(
        msgs.iter()
            .any(|m| m.contains("ends inside computation `main.2`")),
        "{msgs:?}"
    );
    // A garbled instruction line is one warning with its line number; the rest reads.
    let garbled = SMALL.replace(
        "  %p = (s32[], f32[2]{0}) parameter(0)",
        "  %p = ((( garbage",
    );
    let r = read_hlo("x.after_optimizations.txt", garbled.as_bytes());
    assert_eq!(r.text.computations[0].instructions.len(), 1);
    assert_eq!(r.text.computations[1].instructions.len(), 2);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.line == 18 && w.message.contains("expected an instruction")),
        "{:?}",
        r.warnings
    );
    // A stray line between computations.
    let stray = SMALL.replace("\nENTRY", "\nwhat is this\nENTRY");
    let r = read_hlo("x.after_optimizations.txt", stray.as_bytes());
    assert!(
        r.warnings
            .iter()
            .any(|w| w.line == 22 && w.message.contains("malformed line")),
        "{:?}",
        r.warnings
    );
    assert_eq!(instruction_count(&r), 4);
    // Not an HLO text at all, and bytes of every value: warnings, never a panic.
    let r = read_hlo("x.txt", b"BufferAssignment:\nallocation 0: size 4\n");
    assert!(r
        .warnings
        .iter()
        .any(|w| w.message.contains("not an HLO module text")));
    for cut in 0..SMALL.len() {
        let _ = read_hlo("x", &SMALL.as_bytes()[..cut]);
    }
    let noise: Vec<u8> = (0..4096u32)
        .map(|k| (k.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let _ = read_hlo("x", &noise);
}

/// Attributes printed again (most `backend_config`s are) are found among those printed
/// lately rather than read again: on every real text, what is read is the same as when
/// every attribute is read.
#[test]
fn attributes_found_again_read_the_same() {
    let Some(dir) = common::shared_dumps_or_skip("attributes_found_again_read_the_same") else {
        return;
    };
    for &(path, ..) in TEXTS {
        let bytes = std::fs::read(dir.join(path)).unwrap();
        let mut every = bufscope::parse::hlo::HloReader::new(path).reading_every_attribute();
        every.feed(&bytes);
        assert!(read_hlo(path, &bytes) == every.finish(), "{path}");
    }
}

/// Read in chunks of any size, the same text.
#[test]
fn chunked_reading_is_the_same() {
    let whole = read_hlo("x", SMALL.as_bytes());
    for size in [1, 2, 7, 64] {
        let mut r = bufscope::parse::hlo::HloReader::new("x");
        for chunk in SMALL.as_bytes().chunks(size) {
            r.feed(chunk);
        }
        assert_eq!(r.finish(), whole, "chunks of {size}");
    }
}

/// The CPU `mlp_train` dump folder (tests/fixtures/folders), read as the command line reads
/// a folder: its dumps, then its HLO texts, each joined to its module; nothing skipped,
/// no error.
fn mlp_train_folder() -> bufscope::parse::Load {
    let dir = common::fixtures_dir().join("folders/mlp_train");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // XLA's other output beside the dump, as --xla_dump_to writes it.
    names.push("module_0004.jit_mlp_train_step.cpu_before_optimizations.txt".into());
    names.push("module_0004.jit_mlp_train_step.debug_options".into());
    names.push("module_0004.jit_mlp_train_step.ir-no-opt.ll".into());
    let plan = bufscope::parse::folder_plan(&names);
    // The text before optimizations is read too (its shardings), but this one is only named.
    assert_eq!((plan.dumps.len(), plan.hlo.len(), plan.skipped), (12, 4, 2));
    let mut loader = bufscope::Loader::new();
    for &i in plan.dumps.iter().chain(&plan.hlo).filter(|&&i| dir.join(&names[i]).exists()) {
        loader.begin_file(&names[i]);
        loader.feed(&std::fs::read(dir.join(&names[i])).unwrap());
        loader.end_file();
    }
    loader.skipped_files(plan.skipped);
    loader.finish()
}

#[test]
fn a_dump_folder_joins_its_hlo_texts() {
    let load = mlp_train_folder();
    assert!(load.errors.is_empty(), "{:?}", load.errors);
    assert_eq!(load.skipped, 2);
    assert_eq!(load.modules.len(), 3);
    for m in &load.modules {
        let hlo = m
            .hlo
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no HLO text", m.name));
        assert_eq!(hlo.devices(), 1);
        assert!(
            m.files
                .iter()
                .any(|f| f.ends_with("cpu_after_optimizations.txt")),
            "{:?}",
            m.files
        );
    }
    let m = load
        .modules
        .iter()
        .find(|m| m.name.contains("mlp_train_step"))
        .unwrap();
    let value = |name: &str| {
        m.values
            .iter()
            .find(|v| m.value_name(v) == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    // A parameter is named by its pytree path (`metadata={op_name="params[0][\'w\']"}`).
    let w = value("params_0___w__.1");
    assert_eq!(
        bufscope::query::parameter_path(m, w),
        Some("params[0]['w']")
    );
    assert_eq!(
        bufscope::query::display_name(m, w),
        "params_0___w__.1 params[0]['w']"
    );
    // Search finds values by their resolved source lines and by their paths.
    let by_path = bufscope::query::search(m, "0\\]\\['w'").unwrap();
    let names: Vec<String> = by_path
        .iter()
        .map(|&v| m.value_name(&m.values[v as usize]))
        .collect();
    assert!(names.contains(&"params_0___w__.1".to_string()), "{names:?}");
    assert!(
        names.contains(&"opt_state_0__mu_0___w__.1".to_string()),
        "{names:?}"
    );
    assert!(!bufscope::query::search(m, "programs.py:")
        .unwrap()
        .is_empty());
    // `%ynn_fusion.9 = f32[128,512]{1,0} fusion(%x.1, %params_0___w__.1), kind=kCustom,
    // calls=%fused_computation.9, … stack_frame_id=7}` in the entry computation main.24.
    let fusion = value("ynn_fusion.9");
    assert_eq!(bufscope::query::parameter_path(m, fusion), None);
    let view = bufscope::query::instruction_view(m, fusion).unwrap();
    assert_eq!(
        (view.opcode.as_str(), view.shape.as_str()),
        ("fusion", "f32[128,512]{1,0}")
    );
    assert_eq!(
        (view.computation.as_str(), view.in_entry),
        ("main.24", true)
    );
    assert_eq!(view.calls, [("calls", "fused_computation.9".to_string())]);
    let names: Vec<&str> = view.operands.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["x.1", "params_0___w__.1"]);
    for o in &view.operands {
        let v = o.value.unwrap_or_else(|| panic!("{} has no value", o.name));
        assert_eq!(m.value_name(&m.values[v as usize]), o.name);
    }
    assert_eq!(view.attributes[0].key, "kind");
    // Its source line is resolved through the text's tables: a file and a function.
    match bufscope::query::source_location(m, fusion) {
        Some(bufscope::query::SourceLocation::File {
            file,
            line,
            function,
            inferred: false,
        }) => {
            assert!(
                file.ends_with("programs.py") && line > 0 && !function.is_empty(),
                "{file}:{line} {function}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// MaxText's parameters are named `param.N` in the dump; the HLO text's op_name of each
/// `parameter` is its pytree path, which the categories read whole. Before the HLO text was
/// read, all of them were "inputs (heuristic)" (5,746.6 MiB at the peak of HBM).
#[test]
fn maxtext_parameters_by_their_paths() {
    let Some(dir) = common::shared_dumps_or_skip("maxtext_parameters_by_their_paths") else {
        return;
    };
    use bufscope::answers::categories::{Categories, Category};
    let stem = "tpu-aot/maxtext0.2.5/tpu_v5e-16_maxtext_llama3.1-8b_pdb1";
    let files: Vec<(String, Vec<u8>)> = [
        ".buffer-assignment.txt",
        ".buffer-assignment-values.txt",
        ".live-range.txt",
        ".after_optimizations.txt",
    ]
    .iter()
    .map(|s| {
        (
            format!("{stem}{s}"),
            std::fs::read(dir.join(format!("{stem}{s}"))).unwrap(),
        )
    })
    .collect();
    let load = bufscope::load_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    assert!(load.errors.is_empty(), "{:?}", load.errors);
    let m = &load.modules[0];
    assert_eq!(m.hlo.as_ref().unwrap().devices(), 16);
    let at = |name: &str| {
        m.values
            .iter()
            .position(|v| m.value_name(v) == name)
            .unwrap_or_else(|| panic!("no {name}")) as u32
    };
    let path = |name: &str| bufscope::query::parameter_path(m, &m.values[at(name) as usize]);
    let cats = Categories::new(m);
    let category = |m: &bufscope::model::Module, v: u32| cats.of(m, v);
    // `%param.84 = f32[256,32,14336]… parameter(2), metadata={op_name="state[\'model\']…[\'wi_1\'][\'kernel\'].value"}`
    assert_eq!(
        path("param.84"),
        Some("state['model']['decoder']['layers']['mlp']['wi_1']['kernel'].value")
    );
    assert_eq!(category(m, at("param.84")), Category::ModelParameters);
    // `%param.112 = … parameter(34), metadata={op_name="state[\'optimizer\'][\'opt_state\'][0][\'mu\']…"}`
    assert_eq!(category(m, at("param.112")), Category::OptimizerState);
    // `%param.124 = u32[] parameter(50), metadata={op_name="state[\'optimizer\'][\'step\'].value"}`
    assert_eq!(category(m, at("param.124")), Category::OptimizerState);
    // `%param.74 = s32[1,2048] parameter(51), metadata={op_name="data[\'inputs\']"}`
    assert_eq!(category(m, at("param.74")), Category::Inputs);
    // `%copy.207 = bf16[1,2048,4096] copy(%fusion.446), metadata={op_name="jit(train_step)/transpose(jvp())/while"}`:
    // the backward pass's cotangent of the activations, which flows into no update.
    assert_eq!(category(m, at("copy.207")), Category::Temporaries);
    // `%while.136 = (…, f32[32,256,14336]{2,0,1}, …)`: the backward scan's stacked gradient
    // of `wi_1`, an operand of the optimizer's `multiply_reduce_fusion.5`.
    assert_eq!(category(m, at("while.136{2}")), Category::Gradients);
}

/// `bufscope summary --json` on the folder: the HLO texts read with the dumps, the source
/// lines resolved (file, line, function), the devices said, the other files counted on
/// stderr.
#[test]
fn summary_of_a_folder_reads_its_hlo_texts() {
    let dir = common::fixtures_dir().join("folders/mlp_train");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .args(["summary", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let modules = json["modules"].as_array().unwrap();
    assert_eq!(modules.len(), 3);
    let m = modules
        .iter()
        .find(|m| m["name"].as_str().unwrap().contains("mlp_train_step"))
        .unwrap();
    assert_eq!(
        (
            m["devices"].as_u64(),
            m["num_partitions"].as_u64(),
            m["replica_count"].as_u64()
        ),
        (Some(1), Some(1), Some(1))
    );
    let rows = m["memory_spaces"][0]["answers"]["source_lines"]
        .as_array()
        .unwrap();
    assert!(!rows.is_empty());
    // The innermost frame: the program's own lines, and optax's where the update happens
    // (the groups "(no source)" and "(parameters: …)" aside).
    for r in rows {
        let file = r["file"].as_str().unwrap();
        if !file.starts_with('(') {
            assert!(file.ends_with(".py"), "{r}");
            assert!(
                r["line"].as_u64().unwrap() > 0 && !r["function"].as_str().unwrap().is_empty(),
                "{r}"
            );
        }
    }
    assert!(rows
        .iter()
        .any(|r| r["file"].as_str().unwrap().ends_with("/programs.py")));
}
