//! The list of buffers both message forms end with: an entry header (`Buffer 3:` on GPU,
//! `3. Size: 2.00G` on TPU), `Key: value` field lines, and a `==========================`
//! line closing each entry. Cut and missing entries become warnings.

use super::fields::{operator, padding};
use super::lines::Line;
use crate::model::oom::{OomBuffer, OomMessage};
use super::size::parse_size;

/// The line that closes an entry.
const CLOSE: &str = "==========================";

/// `Buffer 3:` → (3, None); `3. Size: 2.00G` → (3, Some("Size: 2.00G")).
pub(crate) fn entry_header(text: &str) -> Option<(u32, Option<&str>)> {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("Buffer ") {
        let rank = rest.strip_suffix(':')?.parse().ok()?;
        return Some((rank, None));
    }
    let dot = t.find(". Size:")?;
    let rank = t[..dot].trim_end_matches('\\').parse().ok()?;
    Some((rank, Some(&t[dot + 2..])))
}

/// Reads entries from `lines[i]` on while they come (blank lines between them allowed);
/// returns the index after the last line read.
pub(crate) fn read_list(lines: &[Line], mut i: usize, m: &mut OomMessage) -> usize {
    let mut after_last = i;
    loop {
        while i < lines.len() && lines[i].text.trim().is_empty() {
            i += 1;
        }
        let Some((rank, inline)) = lines.get(i).and_then(|l| entry_header(&l.text)) else {
            return after_last;
        };
        let mut buf = empty(rank, lines[i].no);
        if let Some(field_text) = inline {
            field(&mut buf, field_text, &mut m.warnings);
        }
        i += 1;
        let mut closed = false;
        let mut stray = false;
        while i < lines.len() {
            let t = lines[i].text.trim();
            if t.starts_with(CLOSE) && t.bytes().all(|b| b == b'=') {
                closed = true;
                i += 1;
                break;
            }
            if t.is_empty() || entry_header(t).is_some() {
                break;
            }
            if !field(&mut buf, t, &mut m.warnings) {
                stray = true;
                break;
            }
            i += 1;
        }
        after_last = i;
        let size_said = format!("buffer {rank}: `Size:");
        if buf.size.is_none() && !m.warnings.iter().any(|w| w.starts_with(&size_said)) {
            m.warnings
                .push(format!("buffer {rank} has no readable `Size:`"));
        }
        if !closed {
            m.warnings.push(format!(
                "buffer {rank} is cut: the text ends before its `{CLOSE}` line"
            ));
        }
        m.buffers.push(buf);
        if stray {
            return after_last;
        }
    }
}

pub(crate) fn empty(rank: u32, line: usize) -> OomBuffer {
    OomBuffer {
        rank,
        line,
        size: None,
        operator: None,
        shape: None,
        entry_parameter: false,
        unpadded_size: None,
        padding: None,
        expansion: None,
        xla_label: None,
        allocation_type: None,
        allocation: None,
        memory_space: None,
        tag: None,
    }
}

/// One `Key: value` line of an entry. False when the line is not a field at all.
fn field(buf: &mut OomBuffer, text: &str, warnings: &mut Vec<String>) -> bool {
    let Some((key, value)) = text.split_once(':') else {
        return false;
    };
    let value = value.trim();
    let rank = buf.rank;
    let mut unreadable = |what: &str| {
        warnings.push(format!("buffer {rank}: `{key}: {value}` is not {what}"));
    };
    match key.trim() {
        "Size" => match parse_size(value) {
            Some(s) => buf.size = Some(s),
            None => unreadable("a size"),
        },
        "Unpadded size" => match parse_size(value) {
            Some(s) => buf.unpadded_size = Some(s),
            None => unreadable("a size"),
        },
        "Extra memory due to padding" => match padding(value) {
            Some((s, e)) => {
                buf.padding = Some(s);
                buf.expansion = e;
            }
            None => unreadable("a size"),
        },
        "Operator" => match operator(value) {
            Some(op) => buf.operator = Some(op),
            None => unreadable("operator metadata"),
        },
        "Shape" => buf.shape = Some(value.to_string()),
        "Entry Parameter Subshape" => {
            buf.shape = Some(value.to_string());
            buf.entry_parameter = true;
        }
        "XLA Label" | "XLA label" => buf.xla_label = Some(value.to_string()),
        "Allocation type" => buf.allocation_type = Some(value.to_string()),
        other => {
            // A field this reader does not know: keep reading the entry, say so.
            let known = other
                .chars()
                .all(|c| c.is_alphanumeric() || c == ' ' || c == '_');
            if !known || other.is_empty() {
                return false;
            }
            warnings.push(format!("buffer {rank}: field `{other}` is not read"));
        }
    }
    true
}

/// Warnings about the list as a whole: entries before the first one read, gaps.
pub(crate) fn check_ranks(m: &mut OomMessage) {
    let mut expected = 1;
    let mut notes = Vec::new();
    for b in &m.buffers {
        if b.rank > expected {
            let missing = if b.rank - expected == 1 {
                format!("buffer {expected} is")
            } else {
                format!("buffers {expected}–{} are", b.rank - 1)
            };
            notes.push(format!(
                "{missing} not in the text (the list goes on at {})",
                b.rank
            ));
        }
        expected = b.rank.saturating_add(1);
    }
    m.warnings.extend(notes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        assert_eq!(entry_header("\tBuffer 12:"), Some((12, None)));
        assert_eq!(
            entry_header("  3. Size: 2.00G"),
            Some((3, Some("Size: 2.00G")))
        );
        assert_eq!(entry_header("Buffer x:"), None);
        assert_eq!(entry_header("Size: 2.00G"), None);
    }
}
