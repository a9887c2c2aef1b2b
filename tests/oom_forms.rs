//! Today's out-of-memory forms (issue 25) through `bufscope::parse::oom`: the one-line TPU
//! and GPU messages, the BFC allocator's, the compiler notes, each on its own, behind every
//! common logger prefix, cut mid-message and two in one log. The fixtures are the issue's
//! quoted text (`tests/fixtures/oom/README.md`); figures were worked by hand: `24.35G` is
//! 24.35 × 2^30 = 26,145,613,414 B rounded, and so on, as each test says.

mod common;

use bufscope::model::oom::{ByteSize, CompilerNote, OomForm, OomMessage};
use bufscope::parse::oom::read_oom;

fn fixture(name: &str) -> String {
    let path = common::fixtures_dir().join("oom").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn only(text: &str) -> OomMessage {
    let log = read_oom(text).expect("a message");
    assert_eq!(log.messages.len(), 1, "{:#?}", log.messages);
    log.messages.into_iter().next().unwrap()
}

fn bytes(s: &Option<ByteSize>) -> i64 {
    s.as_ref().expect("a figure").bytes
}

/// The prefixes of issue 25, one per common shape.
const PREFIXES: [&str; 7] = [
    "E0305 11:02:33.418800   2231 pjit.py:1290] ",
    "2026-03-05 11:02:33,418 [worker-7] ERROR trainer: ",
    "2026-03-05 11:02:33.418 host-2 | ",
    "[tpu 12] ",
    "2024-06-24 17:01:13.933585: E external/xla/xla/pjrt/pjrt_client.cc:88] ",
    "(MeshHostWorker pid=489) ",
    "worker-1  | ",
];

fn prefixed(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|l| format!("{prefix}{l}\n"))
        .collect()
}

/// One fixture per form: today's and the reservation form a pipe prefix used to cut.
const FORMS: [&str; 7] = [
    "tpu_e1000.log",
    "tpu_hbm_usage.log",
    "tpu_device_buffer.log",
    "tpu_allocation_exceeds.log",
    "gpu_out_of_memory.log",
    "gpu_bfc_stats.log",
    "tpu_reserve_prefixed.log",
];

/// Every fixture of today's forms reads the same behind each prefix as without one.
#[test]
fn every_form_reads_the_same_behind_every_prefix() {
    for name in FORMS.iter().chain(&["compiler_notes.log"]) {
        let plain = read_oom(&fixture(name)).expect(name);
        for prefix in PREFIXES {
            let again = read_oom(&prefixed(&fixture(name), prefix)).expect(name);
            assert_eq!(again, plain, "{name} behind {prefix:?}");
        }
    }
}

#[test]
fn e1000_required_and_available_are_used_and_capacity() {
    let m = only(&fixture("tpu_e1000.log"));
    assert_eq!(m.form, OomForm::TpuCompileTimeHbmOom);
    assert_eq!(m.code.as_deref(), Some("E1000"));
    assert_eq!(m.module.as_deref(), Some("jit_train_step"));
    assert_eq!(m.memory_space.as_deref(), Some("hbm"));
    assert_eq!((m.first_line, m.last_line), (1, 2), "the See … line is its own");
    let c = m.capacity.as_ref().unwrap();
    // 24.35 × 2^30 and 15.75 × 2^30, rounded.
    assert_eq!(bytes(&c.used), 26_145_613_414);
    assert_eq!(bytes(&c.capacity), 16_911_433_728);
    // Exceeded by: not printed, computed (24.35G − 15.75G = 8.60G) and marked so.
    let x = c.exceeded_by.as_ref().unwrap();
    assert_eq!((x.text.as_str(), x.bytes), ("8.60G", 9_234_179_686));
    assert_eq!(c.computed, ["exceeded_by"]);
    assert!(x.min < x.bytes && x.bytes < x.max);
    assert!(m.buffers.is_empty() && m.warnings.is_empty(), "{:?}", m.warnings);
    assert_eq!(m.sections[0].stats[0].label, "HLO temporaries");
}

#[test]
fn tensorcore_and_sparsecore_usage_add_up_to_used() {
    let m = only(&fixture("tpu_hbm_usage.log"));
    assert_eq!(m.form, OomForm::TpuHbmUsage);
    let c = m.capacity.as_ref().unwrap();
    // 34.82 GiB + 174.10 GiB = 208.92 GiB: 37,387,690,312 + 186,938,451,558 B.
    assert_eq!(bytes(&c.used), 224_326_141_870);
    assert_eq!(c.used.as_ref().unwrap().text, "208.92G");
    assert_eq!(bytes(&c.capacity), 102_800_042_230);
    assert_eq!(c.computed, ["used", "exceeded_by"]);
    assert_eq!(c.exceeded_by.as_ref().unwrap().text, "113.18G");
    let parts: Vec<(&str, i64)> = m.sections[0]
        .stats
        .iter()
        .map(|s| (s.label.as_str(), s.size.as_ref().unwrap().bytes))
        .collect();
    assert_eq!(
        parts,
        [
            ("TensorCore Hbm usage", 37_387_690_312),
            ("SparseCore Hbm usage", 186_938_451_558)
        ]
    );
}

#[test]
fn e0100_request_and_free() {
    let m = only(&fixture("tpu_device_buffer.log"));
    assert_eq!(m.form, OomForm::TpuDeviceBuffer);
    assert_eq!(bytes(&m.request), 8 << 20);
    // 6.43 × 2^20 = 6,742,343.68 → 6,742,344.
    assert_eq!(bytes(&m.capacity.as_ref().unwrap().free), 6_742_344);
    assert_eq!(m.memory_space.as_deref(), Some("hbm"));
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
}

#[test]
fn the_allocation_form_gives_its_one_buffer() {
    let m = only(&fixture("tpu_allocation_exceeds.log"));
    assert_eq!(m.form, OomForm::TpuAllocationExceeds);
    let r = m.request.as_ref().unwrap();
    assert_eq!((r.bytes, r.exact), (107_374_182_400, true)); // 100 GiB
    assert_eq!(bytes(&m.capacity.as_ref().unwrap().capacity), 17_179_869_184); // 16 GiB
    let [b] = m.buffers.as_slice() else {
        panic!("{:?}", m.buffers)
    };
    assert_eq!(b.shape.as_deref(), Some("u8[327680,327680]{1,0:T(8,128)(4,1)}"));
    assert_eq!(b.memory_space.as_deref(), Some("hbm"));
    assert_eq!(b.tag.as_deref(), Some("output of xor_convert_fusion@{}"));
    assert_eq!(b.allocation.as_deref(), Some("allocation7"));
    assert_eq!(b.xla_label.as_deref(), Some("<no-hlo-instruction>"));
    assert_eq!(bytes(&b.size), 107_374_182_400);
}

#[test]
fn the_gpu_runtime_status_alone_is_a_request() {
    let m = only(&fixture("gpu_out_of_memory.log"));
    assert_eq!(m.form, OomForm::GpuOutOfMemory);
    assert_eq!(bytes(&m.request), 214_748_364_800); // 200 GiB
    assert!(m.capacity.is_none());
}

#[test]
fn bfc_request_and_stats() {
    let m = only(&fixture("gpu_bfc_stats.log"));
    assert_eq!(m.form, OomForm::GpuBfcAllocator);
    assert_eq!(m.memory_space.as_deref(), Some("GPU_0_bfc"));
    let r = m.request.as_ref().unwrap();
    // 3.50 GiB = 3,758,096,384 B exactly, the rounded count printed beside it.
    assert_eq!((r.bytes, r.exact), (3_758_096_384, true));
    let c = m.capacity.as_ref().unwrap();
    assert_eq!(bytes(&c.capacity), 15_753_805_824);
    assert_eq!(bytes(&c.used), 12_884_904_192);
    let stats = m.sections.iter().find(|s| s.title == "Stats").unwrap();
    let labels: Vec<&str> = stats.stats.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        labels,
        ["Limit", "InUse", "MaxInUse", "NumAllocs", "MaxAllocSize", "Reserved", "PeakReserved", "LargestFreeBlock"]
    );
    let allocs = &stats.stats[3];
    assert_eq!((allocs.size.is_none(), allocs.note.as_deref()), (true, Some("1234")));
    // The chunk summary: 9 × 256 B = 2.2 KiB and 3 × 4 GiB = 12.00 GiB, and their sum.
    let chunks = m.sections.iter().find(|s| s.title.contains("chunks")).unwrap();
    assert_eq!(chunks.stats.len(), 3);
    assert_eq!(chunks.stats[1].size.as_ref().unwrap().bytes, 12 << 30);
    assert_eq!(m.last_line, 23, "the star line closes it");
}

#[test]
fn compiler_notes_are_collected() {
    let log = read_oom(&fixture("compiler_notes.log")).unwrap();
    assert!(log.messages.is_empty());
    let [remat, spmd] = log.compiler_notes.as_slice() else {
        panic!("{:?}", log.compiler_notes)
    };
    let CompilerNote::RematerializationShortfall {
        line,
        target,
        reached,
        original,
    } = remat
    else {
        panic!("{remat:?}")
    };
    assert_eq!(*line, 1);
    assert_eq!(
        (bytes(target), bytes(reached), bytes(original)),
        (23_912_230_420, 40_694_815_130, 41_016_937_677)
    );
    assert!(target.as_ref().unwrap().exact);
    assert_eq!(target.as_ref().unwrap().text, "22.27GiB (23912230420 bytes)");
    let CompilerNote::InvoluntaryFullRematerialization {
        line,
        instruction,
        from_sharding,
        to_sharding,
        op_name,
    } = spmd
    else {
        panic!("{spmd:?}")
    };
    assert_eq!(*line, 2);
    assert_eq!(instruction.as_deref(), Some("dot.12"));
    assert_eq!(from_sharding.as_deref(), Some("{devices=[1,4]<=[4]}"));
    assert_eq!(to_sharding.as_deref(), Some("{devices=[4,1]<=[4]}"));
    assert_eq!(op_name.as_deref(), Some("jit(train_step)/jit(main)/dot_general"));
}

/// Cut anywhere, a one-line message keeps what was before the cut and warns about the rest.
#[test]
fn cut_mid_message() {
    let e1000 = fixture("tpu_e1000.log");
    let at = e1000.find("exceeds available").unwrap();
    let m = only(&e1000[..at + 12]);
    let c = m.capacity.as_ref().unwrap();
    assert_eq!(bytes(&c.used), 26_145_613_414);
    assert!(c.capacity.is_none() && c.exceeded_by.is_none() && c.computed.is_empty());
    assert!(m.warnings.iter().any(|w| w.contains("available")), "{:?}", m.warnings);
    assert_eq!(m.module, None);

    let usage = fixture("tpu_hbm_usage.log");
    let m = only(&usage[..usage.find(", Sparse").unwrap()]);
    let c = m.capacity.as_ref().unwrap();
    assert_eq!(bytes(&c.used), 37_387_690_312);
    assert!(m.sections[0].at_least, "the SparseCore part is missing: at least");
    assert!(m.warnings.len() >= 2, "{:?}", m.warnings);

    let device = fixture("tpu_device_buffer.log");
    let m = only(&device[..device.find("There are").unwrap()]);
    assert_eq!(bytes(&m.request), 8 << 20);
    assert!(m.warnings.iter().any(|w| w.contains("free")), "{:?}", m.warnings);

    let alloc = fixture("tpu_allocation_exceeds.log");
    let m = only(&alloc[..alloc.find("space=").unwrap()]);
    assert_eq!(bytes(&m.request), 107_374_182_400);
    assert!(m.warnings.iter().any(|w| w.contains("[...]")), "{:?}", m.warnings);

    let gpu = fixture("gpu_out_of_memory.log");
    let m = only(&gpu[..gpu.find(" bytes.").unwrap()]);
    assert!(m.request.is_none());
    assert!(m.warnings.iter().any(|w| w.contains("request")), "{:?}", m.warnings);

    let bfc = fixture("gpu_bfc_stats.log");
    let m = only(&bfc[..bfc.find("Stats:").unwrap()]);
    assert_eq!(bytes(&m.request), 3_758_096_384);
    assert!(m.capacity.is_none());
    assert!(!m.sections.iter().any(|s| s.title == "Stats"));

    // Every cut of every fixture reads without panicking.
    for name in ["tpu_e1000.log", "tpu_allocation_exceeds.log", "gpu_bfc_stats.log", "compiler_notes.log"] {
        let text = fixture(name);
        for cut in (0..text.len()).filter(|&c| text.is_char_boundary(c)) {
            let _ = read_oom(&text[..cut]);
        }
    }
}

/// Two messages in one log, between other output, in order; one module name each.
#[test]
fn two_in_one_log() {
    let log = format!(
        "Epoch 1\n{}training step 2\n{}Traceback (most recent call last):\n{}",
        prefixed(&fixture("tpu_e1000.log"), PREFIXES[1]),
        prefixed(&fixture("tpu_device_buffer.log"), PREFIXES[2]),
        fixture("gpu_bfc_stats.log")
    );
    let read = read_oom(&log).unwrap();
    let forms: Vec<OomForm> = read.messages.iter().map(|m| m.form).collect();
    assert_eq!(
        forms,
        [
            OomForm::TpuCompileTimeHbmOom,
            OomForm::TpuDeviceBuffer,
            OomForm::GpuBfcAllocator
        ]
    );
    let firsts: Vec<usize> = read.messages.iter().map(|m| m.first_line).collect();
    assert_eq!(firsts, [2, 5, 7]);
    let two_e1000 = format!("{0}{0}", fixture("tpu_e1000.log"));
    assert_eq!(read_oom(&two_e1000).unwrap().messages.len(), 2);
    // Every form in one log, each behind another prefix, read as each is alone.
    let names = FORMS;
    let all: String = (names.iter().zip(PREFIXES.iter().cycle()))
        .map(|(n, p)| format!("step done\n{}", prefixed(&fixture(n), p)))
        .collect();
    let read = read_oom(&all).unwrap();
    let alone: Vec<OomForm> = names.iter().map(|n| only(&fixture(n)).form).collect();
    let together: Vec<OomForm> = read.messages.iter().map(|m| m.form).collect();
    assert_eq!(together, alone);
}

/// Before issue 25 a `… host-2 | ` prefix cut the reservation message to its first line:
/// its blocks and buffers are all there behind it, as behind the TensorFlow prefix.
#[test]
fn the_reservation_form_behind_a_pipe_keeps_its_buffers() {
    let tf = fixture("tpu_reserve_prefixed.log");
    let piped: String = tf
        .lines()
        .map(|l| match l.find("] ") {
            Some(p) if l.starts_with("2021-") => format!("2026-03-05 11:02:33.418 host-2 | {}\n", &l[p + 2..]),
            _ => format!("{l}\n"),
        })
        .collect();
    let (a, b) = (only(&tf), only(&piped));
    assert!(!a.buffers.is_empty());
    assert_eq!(a, b);
}

/// `summary --json` adds `compiler_notes`, sizes as the OOM figures are, with the note in
/// words; the text lists them.
#[test]
fn summary_gives_the_compiler_notes() {
    let path = common::fixtures_dir().join("oom/compiler_notes.log");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .args(["summary", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = json["compiler_notes"].as_array().unwrap();
    assert_eq!(notes.len(), 2);
    let remat = &notes[0];
    assert_eq!(remat["kind"], "rematerialization_shortfall");
    assert_eq!(remat["file"], "compiler_notes.log");
    for (key, bytes) in [
        ("target", 23_912_230_420u64),
        ("reached", 40_694_815_130),
        ("original", 41_016_937_677),
    ] {
        assert_eq!(remat[key]["bytes"], bytes, "{key}");
        assert_eq!(remat[key]["exact"], true, "{key}");
        assert_eq!(remat[key]["min"], remat[key]["max"], "{key}");
    }
    assert_eq!(
        remat["sentence"],
        "remat got the program from 38.20 GiB to 37.90 GiB; it needed 22.27 GiB"
    );
    let spmd = &notes[1];
    assert_eq!(spmd["kind"], "involuntary_full_rematerialization");
    assert_eq!(spmd["instruction"], "dot.12");
    assert_eq!(spmd["from_sharding"], "{devices=[1,4]<=[4]}");
    assert_eq!(spmd["to_sharding"], "{devices=[4,1]<=[4]}");
    assert_eq!(spmd["op_name"], "jit(train_step)/jit(main)/dot_general");
    assert_eq!(json["oom_messages"].as_array().map(Vec::len), Some(0));
    let text = std::process::Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .arg("summary")
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("compiler notes (2):"), "{text}");
    assert!(text.contains("remat got the program from 38.20 GiB to 37.90 GiB"), "{text}");
}
