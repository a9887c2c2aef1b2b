//! The out-of-memory message reader (`bufscope::parse::oom`) on the real messages in
//! `../shared/dumps/oom/` (read from there, never copied; skipped visibly without them). The
//! made-up TPU and GPU inputs in `tests/fixtures/oom/` are tests/oom_made_up.rs.
//!
//! Expected figures come from the text itself through plain string searches that share no
//! code with the reader (count the lines that start an entry, take what follows `Size: `,
//! the digits after `source_line=`; tests/common/oom_scan.rs).

mod common;
#[path = "common/oom_scan.rs"]
mod oom_scan;

use bufscope::model::oom::{OomForm, OomLog, OomMessage};
use bufscope::parse::oom::read_oom;
use oom_scan::*;

// ------------------------------------------------------------------ the real messages

/// The texts after `Size: ` on every entry's size line, in order.
fn size_texts(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.contains("Unpadded size"))
        .filter_map(|l| after(l, "Size: "))
        .map(str::to_string)
        .collect()
}

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
