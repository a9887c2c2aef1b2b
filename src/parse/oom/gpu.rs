//! The GPU (CUDA and ROCm) message, `BufferAssignment::ToVerboseString` after a failed
//! allocation:
//!
//! ```text
//! … RESOURCE_EXHAUSTED: Out of memory while trying to allocate 6291456 bytes.
//! BufferAssignment OOM Debugging.
//! BufferAssignment stats:
//!              parameter allocation:    6.00MiB
//!   preallocated temp fragmentation:         0B (0.00%)
//! Peak buffers:
//!         Buffer 1:
//!                 Size: 6.00MiB
//!                 Operator: op_name="jit(f)/concatenate" source_file="m.py" source_line=68
//!                 XLA Label: concatenate
//!                 Shape: f32[4096,128,3]
//!                 ==========================
//! ```
//!
//! ROCm words the status `Failed to allocate request for 154.06GiB (165425291480B) on
//! device ordinal 0`. An entry parameter has `Entry Parameter Subshape:` instead of the
//! label and shape. The reader also starts at `BufferAssignment stats:`, `Peak buffers:` or
//! a `Buffer N:` entry, for text cut before them, and says what is missing.

use super::entries::{check_ranks, entry_header, read_list};
use super::fields::stat;
use super::lines::Line;
use crate::model::oom::{OomForm, OomMessage, StatSection};
use super::size::{counted, size};
use super::{finish, new_message};

const HEADER: &str = "BufferAssignment OOM Debugging.";
const STATS: &str = "BufferAssignment stats:";
const PEAK: &str = "Peak buffers:";

/// The status sentence that comes before the header.
fn is_status(t: &str) -> bool {
    t.contains("Out of memory while trying to allocate")
        || t.contains("Failed to allocate request for")
}

fn next_text<'l>(lines: &'l [Line], i: usize) -> Option<&'l str> {
    lines[i..]
        .iter()
        .map(|l| l.text.trim())
        .find(|t| !t.is_empty())
}

/// Whether a GPU message (or what is left of one) starts at `lines[i]`.
pub(crate) fn starts(lines: &[Line], i: usize) -> bool {
    let t = lines[i].text.trim();
    if t.contains(HEADER) || t == STATS || t == PEAK {
        return true;
    }
    if is_status(t) {
        return next_text(lines, i + 1).is_some_and(|n| n.contains(HEADER));
    }
    matches!(entry_header(t), Some((_, None)))
        && lines
            .get(i + 1)
            .is_some_and(|l| l.text.trim_start().starts_with("Size:"))
}

/// Reads the message that starts at `lines[i]`; returns it and the index after it.
pub(crate) fn read(lines: &[Line], i: usize) -> (OomMessage, usize) {
    let mut m = new_message(OomForm::GpuBufferAssignment, lines[i].no);
    let mut j = i;
    let at = |j: usize| lines.get(j).map_or("", |l| l.text.trim());
    if is_status(at(j)) {
        status(at(j), &mut m);
        if !at(j).contains(HEADER) {
            j += 1;
            while j < lines.len() && at(j).is_empty() {
                j += 1;
            }
        }
    }
    let header = at(j).contains(HEADER);
    if header {
        j += 1;
    }
    let stats = at(j) == STATS;
    if stats {
        let mut section = StatSection {
            title: STATS.trim_end_matches(':').to_string(),
            total: None,
            at_least: false,
            stats: Vec::new(),
        };
        j += 1;
        while let Some(s) = lines.get(j).and_then(|l| stat(&l.text)) {
            section.stats.push(s);
            j += 1;
        }
        m.sections.push(section);
    }
    let peak = at(j) == PEAK;
    if peak {
        j += 1;
    }
    let end = read_list(lines, j, &mut m);
    if !header && !stats {
        m.warnings.push(format!(
            "the start of the message is not in the text: no `{HEADER}` and no `{STATS}` block"
        ));
    } else if !header && m.error.is_none() {
        m.warnings.push(format!(
            "the start of the message is not in the text: no status line and no `{HEADER}` before the stats"
        ));
    }
    if stats && !peak {
        m.warnings.push(format!(
            "no `{PEAK}` list after the stats: the text ends before it"
        ));
    } else if peak && m.buffers.is_empty() {
        m.warnings
            .push(format!("`{PEAK}` lists no buffer in the text"));
    }
    check_ranks(&mut m);
    let end = end.max(j).max(i + 1);
    finish(&mut m, lines, i, end);
    (m, end)
}

/// The status line: its text from `RESOURCE_EXHAUSTED` on, and the failed request.
fn status(t: &str, m: &mut OomMessage) {
    let from = t.find("RESOURCE_EXHAUSTED").unwrap_or(0);
    let text = t[from..].split(HEADER).next().unwrap_or("").trim();
    m.error = Some(text.to_string());
    const ALLOCATE: &str = "trying to allocate ";
    const REQUEST: &str = "allocate request for ";
    if let Some(p) = t.find(ALLOCATE) {
        m.request = counted(&t[p + ALLOCATE.len()..]).ok().map(|(_, s)| s);
    } else if let Some(p) = t.find(REQUEST) {
        m.request = size(&t[p + REQUEST.len()..]).ok().map(|(_, s)| s);
    }
    if m.request.is_none() {
        m.warnings
            .push("the size of the failed request is not readable".to_string());
    }
}
