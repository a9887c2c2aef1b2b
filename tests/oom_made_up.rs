//! The out-of-memory message reader (`bufscope::parse::oom`) on the made-up TPU and GPU
//! inputs in `tests/fixtures/oom/`: their figures as written, other errors and buffer
//! assignments that are no message, cut messages, and no panic on any cut or mutation of
//! them. Expected figures come from the fixtures as written, read back through the plain
//! string searches of tests/common/oom_scan.rs. The real messages are tests/oom.rs.

mod common;
#[path = "common/oom_scan.rs"]
mod oom_scan;

use bufscope::answers::oom::{group_by_op_name, group_by_source};
use bufscope::model::oom::{ByteSize, OomForm, OomLog, OomMessage};
use bufscope::parse::oom::{read_oom, read_oom_bytes, NO_OOM_MESSAGE};
use oom_scan::*;
use proptest::prelude::*;

// ------------------------------------------------------------------ made-up inputs

fn fixture(name: &str) -> String {
    let p = common::fixtures_dir().join("oom").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The figure after `key` in the first line that has it (`Used 21.50G of` → `21.50G`).
fn figure(text: &str, key: &str) -> String {
    let rest = text.lines().find_map(|l| after(l, key)).unwrap();
    let token = rest.split(' ').next().unwrap();
    token.trim_end_matches('.').to_string()
}

#[test]
fn tpu_compile_messages() {
    let text = fixture("tpu_compile_two_messages.log");
    let log = read_oom(&text).unwrap();
    assert_eq!(log.messages.len(), 2);
    assert_eq!(all_buffers(&log).len(), entry_lines(&text));
    let m = &log.messages[0];
    assert_eq!(m.form, OomForm::TpuRanOutOfMemory);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    assert_eq!(m.memory_space.as_deref(), Some("hbm"));
    let c = m.capacity.as_ref().unwrap();
    assert_size(c.used.as_ref().unwrap(), &figure(&text, "Used "), "used");
    assert_size(c.capacity.as_ref().unwrap(), "15.48G", "capacity");
    assert_size(
        c.exceeded_by.as_ref().unwrap(),
        &figure(&text, "capacity by "),
        "exceeded",
    );
    let titles: Vec<&str> = m.sections.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(titles, ["Total hbm usage", "Program hbm requirement"]);
    assert!(m.sections[0].at_least);
    assert_size(m.sections[0].total.as_ref().unwrap(), "22.02G", "total");
    let temp = m.sections[1]
        .stats
        .iter()
        .find(|s| s.label == "HLO temp")
        .unwrap();
    let figures: Vec<(&str, &str)> = temp
        .figures
        .iter()
        .map(|f| (f.label.as_str(), f.size.text.as_str()))
        .collect();
    assert_eq!(
        figures,
        [
            ("Unpadded", "16.81G"),
            ("Padded", "19.20G"),
            ("fragmentation", "39.38M")
        ]
    );
    assert_eq!(
        (
            temp.percents[0].label.as_str(),
            temp.percents[0].value.as_str()
        ),
        ("utilization", "87.5")
    );
    assert_eq!(m.notes, ["Output size 2.25G; shares 2.25G with arguments."]);

    let b = &m.buffers;
    assert_eq!(b.iter().map(|b| b.rank).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert_eq!(
        b[0].shape.as_deref(),
        Some("f32[16,16,2048,2048]{3,2,1,0:T(8,128)}")
    );
    assert_eq!(b[0].allocation_type.as_deref(), Some("HLO temp"));
    assert!(b[0]
        .xla_label
        .as_deref()
        .unwrap()
        .starts_with("fusion.311 = fusion("));
    let op = b[2].operator.as_ref().unwrap();
    assert_eq!(
        (op.op_type.as_deref(), op.op_name.as_deref()),
        (Some("OneHot"), Some("loss/one_hot"))
    );
    assert_size(b[2].unpadded_size.as_ref().unwrap(), "160.00M", "unpadded");
    assert_size(b[2].padding.as_ref().unwrap(), "1.34G", "padding");
    assert_eq!(b[2].expansion.as_deref(), Some("9.6"));
    assert!(b[3].operator.is_none());
    assert_eq!(b[3].allocation_type.as_deref(), Some("scoped"));
    assert_size(b[3].size.as_ref().unwrap(), "768.0K", "size");

    // Layers 0 and 1 of the same attention fold into one group; sizes add up.
    let groups = group_by_op_name(b);
    assert_eq!(groups[0].buffers, [0, 1]);
    assert!(groups[0]
        .key
        .as_deref()
        .unwrap()
        .contains("/decoder/block/#/attn/"));
    assert_eq!(groups[0].bytes, 8 << 30);
    assert_eq!(groups[0].folded.len(), 2);
    assert!(groups.last().unwrap().key.is_none());
    let by_line = group_by_source(b);
    assert_eq!(
        by_line[0].key.as_deref(),
        Some("/home/someone/model.py:141")
    );
    assert_eq!(by_line[0].unpadded, 8 << 30);

    let v = &log.messages[1];
    assert_eq!(v.memory_space.as_deref(), Some("vmem"));
    assert_eq!(v.buffers.len(), 2);
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    assert!(v.first_line > m.last_line);
}

#[test]
fn tpu_reserve_message_behind_log_prefixes() {
    let text = fixture("tpu_reserve_prefixed.log");
    let log = read_oom(&text).unwrap();
    assert_eq!(log.messages.len(), 1);
    let m = &log.messages[0];
    assert_eq!(m.form, OomForm::TpuReserve);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let attempt = text
        .lines()
        .position(|l| l.contains("Attempting to reserve"))
        .unwrap();
    assert_eq!(m.first_line, attempt + 1);
    assert_size(m.request.as_ref().unwrap(), "5.50G", "request");
    let c = m.capacity.as_ref().unwrap();
    assert_size(c.capacity.as_ref().unwrap(), "16.00G", "capacity");
    assert_size(c.free.as_ref().unwrap(), "4.23G", "free");
    assert_size(c.reserved.as_ref().unwrap(), "0B", "reserved");
    assert_size(c.reservable.as_ref().unwrap(), "4.23G", "reservable");
    let titles: Vec<&str> = m.sections.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "HBM capacity",
            "Total hbm usage",
            "Heap allocator status",
            "Persistent allocations include some or all of",
            "Program hbm requirement"
        ]
    );
    // The HBM capacity lines carry exact counts: read them from the text, check each against
    // its rounded figure.
    let exact: Vec<(i64, String)> = text
        .lines()
        .filter(|l| l.ends_with(" bytes)"))
        .map(|l| {
            let inside = &l[l.rfind('(').unwrap() + 1..l.len() - " bytes)".len()];
            let n: i64 = inside.trim().replace(',', "").parse().unwrap();
            let rounded = l[..l.rfind('(').unwrap()]
                .split_whitespace()
                .last()
                .unwrap()
                .to_string();
            (n, rounded)
        })
        .collect();
    let read: Vec<&ByteSize> = m.sections[0]
        .stats
        .iter()
        .map(|s| s.size.as_ref().unwrap())
        .collect();
    assert_eq!(read.len(), exact.len());
    for (s, (n, rounded)) in read.iter().zip(&exact) {
        assert_eq!((s.bytes, s.exact, s.min, s.max), (*n, true, *n, *n));
        assert!(s.text.starts_with(rounded.as_str()));
        // The fixture is consistent: the rounded figure is the exact count, rounded.
        let shown = (n.abs() as f64) / f64::from(1u32 << 30);
        let shown = if shown < 1.0 {
            format!("{:.2}M", shown * 1024.0)
        } else {
            format!("{shown:.2}G")
        };
        assert_eq!(rounded.trim_start_matches('-'), shown);
    }
    assert_eq!(
        c.available_after_request.as_ref().unwrap().bytes,
        exact.last().unwrap().0
    );
    assert_eq!(m.notes, ["; attempting reservation for program memory"]);
    assert_eq!(m.buffers.len(), entry_lines(&text));
    let b = &m.buffers[0];
    assert_eq!(
        b.operator.as_ref().unwrap().op_type.as_deref(),
        Some("aten::convolution")
    );
    assert_eq!(b.expansion.as_deref(), Some("16.0"));
    assert!(b.xla_label.as_deref().unwrap().ends_with("{..."));
    assert_eq!(
        m.last_line,
        text.lines()
            .position(|l| l.ends_with("==========================") && l.contains(".123502"))
            .unwrap()
            + 1
    );
}

#[test]
fn gpu_message_behind_a_worker_prefix_wrapped_by_a_terminal() {
    let text = fixture("gpu_worker_wrapped.log");
    let log = read_oom(&text).unwrap();
    assert_eq!(log.messages.len(), 1);
    let m = &log.messages[0];
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    assert_eq!(m.buffers.len(), entry_lines(&text));
    let r = m.request.as_ref().unwrap();
    assert_eq!((r.bytes, r.exact), (3_221_225_472, true));
    let stats = &m.sections[0].stats;
    assert_eq!(stats.len(), 7);
    assert_size(stats[1].size.as_ref().unwrap(), "640B", "constant");
    assert_eq!(stats[4].percents[0].value, "0.17");
    let op = m.buffers[0].operator.as_ref().unwrap();
    assert_eq!(
        op.op_name.as_deref(),
        Some("pjit(step)/jit(main)/transpose(jvp(Net))/encoder/layers_11/mlp/dot_general[dimension_numbers=(((1,), (0,)), ((), ())) precision=None]")
    );
    assert_eq!(
        (op.source_file.as_deref(), op.source_line),
        (Some("/work/net.py"), Some(210))
    );
    assert!(m.buffers[2].entry_parameter);
    assert_eq!(m.buffers[3].shape.as_deref(), Some("(f32[1024], s32[])"));
    assert_eq!(
        m.buffers[3]
            .operator
            .as_ref()
            .unwrap()
            .deduplicated_name
            .as_deref(),
        Some("loop_reduce_fusion.2")
    );
    let groups = group_by_op_name(&m.buffers);
    assert!(groups[0]
        .key
        .as_deref()
        .unwrap()
        .contains("/encoder/layers_#/mlp/"));
    assert_eq!((groups[0].buffers.len(), groups[0].bytes), (2, 6 << 30));

    // The same message behind a glog prefix, twice in one log, reads the same.
    let glog = read_oom(&fixture("gpu_glog_twice.log")).unwrap();
    assert_eq!(glog.messages.len(), 2);
    for g in &glog.messages {
        assert_eq!(
            (&g.buffers.len(), &g.sections, &g.request, &g.warnings),
            (&m.buffers.len(), &m.sections, &m.request, &m.warnings)
        );
        for (a, b) in g.buffers.iter().zip(&m.buffers) {
            assert_eq!(
                (&a.size, &a.operator, &a.shape),
                (&b.size, &b.operator, &b.shape)
            );
        }
    }
}

#[test]
fn another_error_is_no_message_with_the_sentence_of_what_was_looked_for() {
    let text = fixture("other_error.log");
    assert!(read_oom(&text).is_none());
    let err = read_oom_bytes(text.as_bytes()).unwrap_err();
    assert_eq!(err, NO_OOM_MESSAGE);
    for looked_for in [
        "BufferAssignment OOM Debugging.",
        "Ran out of memory in memory space",
        "at the bottom of memory",
    ] {
        assert!(err.contains(looked_for), "{err}");
    }
    assert!(read_oom("").is_none());
}

#[test]
fn buffer_assignment_dumps_are_not_oom_messages() {
    let dumps = common::fixture_modules();
    for m in &dumps {
        for (name, bytes) in &m.files {
            assert!(
                read_oom_bytes(bytes).is_err(),
                "{}/{name} read as an OOM message",
                m.label
            );
        }
    }
}

/// The first `n` lines of `text`, or the lines from `from` on.
fn head(text: &str, n: usize) -> String {
    text.lines().take(n).collect::<Vec<_>>().join("\n")
}

#[test]
fn cut_messages_keep_what_was_read_and_name_what_is_missing() {
    let text = fixture("tpu_compile_two_messages.log");
    let lines: Vec<&str> = text.lines().collect();
    let at = |needle: &str| lines.iter().position(|l| l.contains(needle)).unwrap();
    let warns = |m: &OomMessage, part: &str| m.warnings.iter().any(|w| w.contains(part));

    // Cut before the allocation list.
    let log = read_oom(&head(&text, at("Largest program allocations in hbm"))).unwrap();
    let m = &log.messages[0];
    assert_eq!((m.sections.len(), m.buffers.len()), (2, 0));
    assert!(
        warns(m, "Largest program allocations in"),
        "{:?}",
        m.warnings
    );

    // Cut inside the second allocation.
    let second = at("  2. Size:");
    let log = read_oom(&head(&text, second + 3)).unwrap();
    let m = &log.messages[0];
    assert_eq!(m.buffers.len(), 2);
    assert!(m.buffers[1].shape.is_some() && m.buffers[1].allocation_type.is_none());
    assert!(warns(m, "buffer 2 is cut"), "{:?}", m.warnings);

    // Cut in the middle of a size.
    let cut = format!("{}\n  2. Size: 4.0", head(&text, second));
    let m = &read_oom(&cut).unwrap().messages[0];
    assert!(m.buffers[1].size.is_none());
    assert!(warns(m, "`Size: 4.0` is not a size"), "{:?}", m.warnings);

    // Cut at the start: the text begins at allocation 3.
    let tail = lines[at("  3. Size:")..].join("\n");
    let m = &read_oom(&tail).unwrap().messages[0];
    assert_eq!(m.buffers[0].rank, 3);
    assert!(
        warns(m, "buffers 1–2 are not in the text"),
        "{:?}",
        m.warnings
    );
    assert!(warns(m, "first line of the message"), "{:?}", m.warnings);

    // A GPU message cut before its list.
    let gpu = fixture("gpu_glog_twice.log");
    let peak = gpu
        .lines()
        .position(|l| l.ends_with("Peak buffers:"))
        .unwrap();
    let m = &read_oom(&head(&gpu, peak)).unwrap().messages[0];
    assert_eq!((m.sections[0].stats.len(), m.buffers.len()), (7, 0));
    assert!(warns(m, "no `Peak buffers:` list"), "{:?}", m.warnings);
}

#[test]
fn the_result_serialises_for_summary_json() {
    let log = read_oom(&fixture("tpu_reserve_prefixed.log")).unwrap();
    let json = serde_json::to_string(&log).unwrap();
    assert!(json.contains("\"form\":\"tpu_reserve\""));
    assert!(json.contains("\"bytes\":-1358954496"));
}

// ------------------------------------------------------------------ no panic

fn fixture_texts() -> Vec<String> {
    let dir = common::fixtures_dir().join("oom");
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

fn check_shape(log: &OomLog) {
    for m in &log.messages {
        assert!(m.first_line <= m.last_line);
        for b in &m.buffers {
            assert!(m.first_line <= b.line && b.line <= m.last_line);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn cuts_and_mutations_never_panic(
        which in 0usize..16,
        a in 0usize..8000,
        b in 0usize..8000,
        edits in prop::collection::vec((0usize..8000, any::<u8>()), 0..10),
    ) {
        let texts = fixture_texts();
        let mut bytes = texts[which % texts.len()].clone().into_bytes();
        let (lo, hi) = (a.min(b) % (bytes.len() + 1), a.max(b) % (bytes.len() + 1));
        let (lo, hi) = (lo.min(hi), lo.max(hi));
        bytes = bytes[lo..hi].to_vec();
        for (at, byte) in edits {
            if !bytes.is_empty() {
                let i = at % bytes.len();
                bytes[i] = byte;
            }
        }
        if let Ok(log) = read_oom_bytes(&bytes) {
            check_shape(&log);
            for m in &log.messages {
                for g in group_by_op_name(&m.buffers).iter().chain(&group_by_source(&m.buffers)) {
                    prop_assert!(g.min <= g.bytes && g.bytes <= g.max);
                }
            }
        }
    }
}
