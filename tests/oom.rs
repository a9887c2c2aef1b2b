//! The out-of-memory message reader (`bufscope::parse::oom`) on the real messages in
//! `../shared/dumps/oom/` (read from there, never copied; skipped visibly without them) and
//! on the made-up TPU and GPU inputs in `tests/fixtures/oom/`.
//!
//! Expected figures come from the text itself through plain string searches that share no
//! code with the reader (count the lines that start an entry, take what follows `Size: `,
//! the digits after `source_line=`), or from the fixtures as written.

mod common;

use bufscope::parse::oom::{
    group_by_op_name, group_by_source, read_oom, read_oom_bytes, ByteSize, OomForm, OomLog,
    OomMessage, NO_OOM_MESSAGE,
};
use proptest::prelude::*;

// ------------------------------------------------------------------ independent scanning

/// `10.90GiB`, `384.0KiB`, `12B`, `4.00G`, `-1.27G` → bytes: the printed number times its
/// 1024-based unit, rounded. None for anything else.
fn scan_size(text: &str) -> Option<i64> {
    let t = text.trim();
    let digits_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(digits_end);
    let power = match unit {
        "B" => 0,
        "K" | "KiB" => 1,
        "M" | "MiB" => 2,
        "G" | "GiB" => 3,
        "T" | "TiB" => 4,
        _ => return None,
    };
    let v: f64 = number.parse().ok()?;
    Some((v * 1024f64.powi(power)).round() as i64)
}

/// What follows `key` on a line, up to the end of the line.
fn after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.find(key).map(|p| line[p + key.len()..].trim())
}

/// Lines that start a buffer entry: `Buffer N:` (GPU) or `N. Size:` (TPU), after any
/// prefix.
fn entry_lines(text: &str) -> usize {
    text.lines()
        .filter(|l| {
            let t = l.trim_end();
            let gpu = t.rfind("Buffer ").is_some_and(|p| {
                let rest = &t[p + 7..];
                rest.len() > 1
                    && rest.ends_with(':')
                    && rest[..rest.len() - 1].bytes().all(|b| b.is_ascii_digit())
            });
            let tpu = t.find(". Size: ").is_some_and(|p| {
                let number = t[..p].rsplit(' ').next().unwrap_or("");
                !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())
            });
            gpu || tpu
        })
        .count()
}

/// The texts after `Size: ` on every entry's size line, in order.
fn size_texts(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.contains("Unpadded size"))
        .filter_map(|l| after(l, "Size: "))
        .map(str::to_string)
        .collect()
}

fn all_buffers(log: &OomLog) -> Vec<&bufscope::parse::oom::OomBuffer> {
    log.messages.iter().flat_map(|m| &m.buffers).collect()
}

fn assert_size(s: &ByteSize, printed: &str, what: &str) {
    assert_eq!(s.text, printed, "{what}: text");
    let expected = scan_size(printed).unwrap_or_else(|| panic!("{what}: `{printed}` unreadable"));
    assert_eq!(s.bytes, expected, "{what}: bytes of {printed}");
    assert!(
        s.min <= s.bytes && s.bytes <= s.max,
        "{what}: range of {printed}"
    );
    assert_eq!(
        s.exact,
        printed.ends_with('B') && !printed.ends_with("iB"),
        "{what}: exact"
    );
}

// ------------------------------------------------------------------ the real messages

fn shared_oom() -> Option<Vec<(String, String)>> {
    let files = common::shared_oom_or_skip("the real OOM messages")?;
    Some(
        files
            .iter()
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (
                    name,
                    String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned(),
                )
            })
            .collect(),
    )
}

#[test]
fn every_real_message_reads_with_its_figures() {
    let Some(files) = shared_oom() else { return };
    for (name, text) in &files {
        let log = read_oom(text).unwrap_or_else(|| panic!("{name}: no message read"));
        let kept = before_repeats(text, &log);
        let text = &kept;
        let buffers = all_buffers(&log);
        // The BFC allocator's line is a message of its own only when no runtime status
        // follows it within 5 lines (the failure's status takes it in), its request the
        // rounded count it prints.
        let (bfc, messages): (Vec<&OomMessage>, Vec<&OomMessage>) = log
            .messages
            .iter()
            .partition(|m| m.form == OomForm::GpuBfcAllocator);
        let bfc_read: Vec<i64> = bfc.iter().map(|m| m.request.as_ref().unwrap().bytes).collect();
        assert_eq!(bfc_read, bfc_alone(text), "{name}: BFC messages");

        // Every listed buffer found, and no other.
        assert_eq!(buffers.len(), entry_lines(text), "{name}: buffers");
        let headers = text.matches("BufferAssignment OOM Debugging.").count();
        assert_eq!(messages.len(), headers.max(1), "{name}: messages");

        // Sizes exactly as printed; an unreadable one is named in a warning.
        let sizes = size_texts(text);
        assert_eq!(sizes.len(), buffers.len(), "{name}: size lines");
        for (b, printed) in buffers.iter().zip(&sizes) {
            match &b.size {
                Some(s) => assert_size(s, printed, &format!("{name} buffer {}", b.rank)),
                None => {
                    assert!(
                        scan_size(printed).is_none(),
                        "{name}: `{printed}` was readable"
                    );
                    let said = messages.iter().flat_map(|m| &m.warnings).any(|w| {
                        w.contains(&format!("buffer {}", b.rank)) && w.contains(printed.as_str())
                    });
                    assert!(said, "{name}: no warning names buffer {}", b.rank);
                }
            }
        }

        // Operators, source lines and entry parameters.
        let operators = text.lines().filter(|l| l.contains("Operator: ")).count();
        assert_eq!(
            buffers.iter().filter(|b| b.operator.is_some()).count(),
            operators,
            "{name}"
        );
        let mut lines_in_text: Vec<u32> = text
            .match_indices("source_line=")
            .map(|(p, k)| {
                let d: String = text[p + k.len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                d.parse().unwrap()
            })
            .collect();
        let mut lines_read: Vec<u32> = buffers
            .iter()
            .filter_map(|b| b.operator.as_ref()?.source_line)
            .collect();
        lines_in_text.sort_unstable();
        lines_read.sort_unstable();
        assert_eq!(lines_read, lines_in_text, "{name}: source lines");
        for b in &buffers {
            if let Some(op) = &b.operator {
                let name_ok = op
                    .op_name
                    .as_ref()
                    .is_some_and(|n| !n.contains('\n') && !n.is_empty());
                assert!(name_ok, "{name}: op_name of buffer {}", b.rank);
            }
        }
        let params = text.matches("Entry Parameter Subshape: ").count();
        assert_eq!(
            buffers.iter().filter(|b| b.entry_parameter).count(),
            params,
            "{name}"
        );
        for shape in text.lines().filter_map(|l| after(l, "Shape: ")) {
            assert!(
                buffers.iter().any(|b| b.shape.as_deref() == Some(shape)),
                "{name}: {shape}"
            );
        }

        // The stats block, line by line.
        for m in &messages {
            check_gpu_stats(name, text, m);
        }

        // The request, exactly.
        if let Some(n) = text
            .lines()
            .find_map(|l| after(l, "while trying to allocate "))
        {
            let n: i64 = n.split(' ').next().unwrap().parse().unwrap();
            for m in &messages {
                let r = m
                    .request
                    .as_ref()
                    .unwrap_or_else(|| panic!("{name}: request"));
                assert_eq!((r.bytes, r.exact), (n, true), "{name}: request");
            }
        }

        check_cut(name, text, &messages, buffers.first().map_or(1, |b| b.rank));
    }
}

/// `text` before the first line where a message is printed again (the Python exception
/// after its traceback): a repeat is counted once (tests/oom_failures.rs checks them).
fn before_repeats(text: &str, log: &OomLog) -> String {
    match log.messages.iter().flat_map(|m| &m.printed_again).min() {
        Some(&n) => text.lines().take(n - 1).map(|l| format!("{l}\n")).collect(),
        None => text.to_string(),
    }
}

/// The rounded requests of the BFC allocator's lines that are messages of their own: no
/// runtime status follows within 5 lines (one that does takes the line in).
fn bfc_alone(text: &str) -> Vec<i64> {
    let lines: Vec<&str> = text.lines().collect();
    (0..lines.len())
        .filter(|&i| lines[i].contains("ran out of memory trying to allocate"))
        .filter(|&i| !lines[i + 1..(i + 7).min(lines.len())].iter().any(|l| l.contains("while trying to allocate")))
        .map(|i| {
            let n = after(lines[i], "(rounded to ").unwrap();
            n[..n.find(')').unwrap()].parse().unwrap()
        })
        .collect()
}

/// Cut messages say so; whole ones do not. `first_rank`: the rank of the first buffer read.
fn check_cut(name: &str, text: &str, messages: &[&OomMessage], first_rank: u32) {
    // Cut messages say so; whole ones do not.
    let warned = messages.iter().any(|m| !m.warnings.is_empty());
    let has_start = text.contains("BufferAssignment OOM Debugging.");
    let last_closed = text.trim_end().ends_with("==========================")
        || text.rfind("==========================") > text.rfind("Size: ");
    let whole = has_start && first_rank == 1 && last_closed;
    assert_eq!(
        warned, !whole,
        "{name}: warnings {:?}",
        messages[0].warnings
    );
    if first_rank > 1 {
        let w = &messages[0].warnings;
        assert!(
            w.iter().any(|w| w.contains("not in the text")),
            "{name}: {w:?}"
        );
    }
}

/// `label:  size` lines of the GPU stats block, compared with what was read.
fn check_gpu_stats(name: &str, text: &str, m: &OomMessage) {
    let expected: Vec<(String, String)> = text
        .lines()
        .filter(|l| l.trim_end().ends_with(['B', ')']))
        .filter_map(|l| {
            let (label, value) = l.split_once(": ")?;
            let label = label
                .rsplit(") ")
                .next()
                .unwrap_or(label)
                .rsplit("m ")
                .next()?;
            let label = label.trim();
            (label.ends_with("allocation") || label.ends_with("fragmentation")).then(|| {
                (
                    label.to_string(),
                    value.trim().split(' ').next().unwrap().to_string(),
                )
            })
        })
        .collect();
    let Some(section) = m.sections.first() else {
        assert!(expected.is_empty(), "{name}: stats not read");
        return;
    };
    let read: Vec<(String, String)> = section
        .stats
        .iter()
        .map(|s| (s.label.clone(), s.size.as_ref().unwrap().text.clone()))
        .collect();
    let messages = text.matches("BufferAssignment stats:").count().max(1);
    assert_eq!(read.len() * messages, expected.len(), "{name}: stat lines");
    assert_eq!(read, expected[..read.len()], "{name}: stats");
    for s in &section.stats {
        let size = s.size.as_ref().unwrap();
        assert_size(size, &size.text, &format!("{name} {}", s.label));
    }
}

#[test]
fn rocm_wrapped_operator_reads_whole() {
    let Some(files) = shared_oom() else { return };
    let (_, text) = files.iter().find(|(n, _)| n.contains("ROCm")).unwrap();
    let log = read_oom(text).unwrap();
    let m = &log.messages[0];
    // The op_name of buffer 1 as the text has it, with the terminal's line breaks removed.
    let start = text.find("Buffer 1:").unwrap();
    let open = start + text[start..].find("op_name=\"").unwrap() + 9;
    let close = open + text[open..].find('"').unwrap();
    let expected = text[open..close].replace('\n', "");
    let op = m.buffers[0].operator.as_ref().unwrap();
    assert_eq!(op.op_name.as_deref(), Some(expected.as_str()));
    assert_eq!(op.op_name.as_ref().unwrap().split(';').count(), 8);
    assert_eq!(op.deduplicated_name.as_deref(), Some("fusion.664"));
    let op2 = m.buffers[1].operator.as_ref().unwrap();
    assert_eq!(
        op2.source_file.as_deref(),
        Some("/opt/miniconda3/bin/colabfold_batch")
    );
    let r = m.request.as_ref().unwrap();
    assert_eq!((r.bytes, r.exact), (165_425_291_480, true));
    assert!(r.min <= r.bytes && r.bytes <= r.max);
}

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
