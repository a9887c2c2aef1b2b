//! One failure, one message. A GPU job's log prints one out-of-memory failure up to three
//! times: the BFC allocator's warning (`Allocator (GPU_0_bfc) ran out of memory trying to
//! allocate 1.97GiB (rounded to 2110783744)`, and its stats when logged), the runtime's
//! status (`RESOURCE_EXHAUSTED: Out of memory while trying to allocate 2110783616 bytes.`
//! with the `BufferAssignment OOM Debugging.` after it), and the Python exception that
//! repeats the status after its traceback. Owns folding those into one message.
//!
//! The allocator's warning leads to the status that follows it within
//! [`LEAD_LINES`] lines and asks for the same bytes rounded up to 256 (the allocator's
//! rounding); the status keeps its form and exact request and takes the allocator's name,
//! first line, capacity (`Limit`, `InUse`) and stats. A Python exception's message
//! (`ValueError: RESOURCE_EXHAUSTED: …`, `jaxlib.xla_extension.XlaRuntimeError: …`) equal to
//! the message kept just before it (form, status, request, buffers) and led by no allocator
//! warning of its own is that message raised: its line is kept in `printed_again`. Two
//! failures stay two messages even when alike: each is logged (and warned by the allocator)
//! on its own.

use crate::model::oom::{OomForm, OomMessage};

/// How many lines after the allocator's warning (and the stats it logged) the status may
/// start.
pub(crate) const LEAD_LINES: usize = 5;

/// Whether `line` is a Python exception's (`…Error: RESOURCE_EXHAUSTED: …`): the word
/// before the status is a dotted name ending in `Error` or `Exception`.
pub(crate) fn raised(line: &str) -> bool {
    let Some(p) = line.find("RESOURCE_EXHAUSTED") else {
        return false;
    };
    let Some(head) = line[..p].trim_end().strip_suffix(':') else {
        return false;
    };
    let name = head.rsplit([' ', '\t']).next().unwrap_or("");
    (name.ends_with("Error") || name.ends_with("Exception"))
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

/// `messages` (in log order, each with whether it is a Python exception's, [`raised`]) with
/// each failure once.
pub(crate) fn one_per_failure(messages: Vec<(OomMessage, bool)>) -> Vec<OomMessage> {
    let mut out: Vec<OomMessage> = Vec::new();
    for (m, raised) in messages {
        let led = out.last().is_some_and(|bfc| leads(bfc, &m));
        let m = match out.pop() {
            Some(bfc) if led => fold(bfc, m),
            Some(prev) => {
                out.push(prev);
                m
            }
            None => m,
        };
        match out.last_mut() {
            Some(prev) if raised && !led && same(prev, &m) => prev.printed_again.push(m.first_line),
            _ => out.push(m),
        }
    }
    out
}

/// Whether the allocator's warning `bfc` is the start of the failure whose status is `m`.
fn leads(bfc: &OomMessage, m: &OomMessage) -> bool {
    let rounded = |a: i64, b: i64| (0..256).contains(&(a - b));
    bfc.form == OomForm::GpuBfcAllocator
        && m.form.is_gpu()
        && m.form != OomForm::GpuBfcAllocator
        && m.first_line <= bfc.last_line + LEAD_LINES
        && matches!((&bfc.request, &m.request), (Some(a), Some(b)) if rounded(a.bytes, b.bytes))
}

/// The status `m` with the allocator's warning `bfc` in it: the allocator's line is a note.
fn fold(bfc: OomMessage, mut m: OomMessage) -> OomMessage {
    m.first_line = bfc.first_line;
    m.allocator = bfc.allocator;
    if m.capacity.is_none() {
        m.capacity = bfc.capacity;
    }
    m.notes.extend(bfc.error);
    m.notes.extend(bfc.notes);
    m.sections.extend(bfc.sections);
    m.warnings.extend(bfc.warnings);
    m
}

/// Whether `m` is `prev` printed again.
fn same(prev: &OomMessage, m: &OomMessage) -> bool {
    m.error.is_some()
        && prev.form == m.form
        && prev.error == m.error
        && prev.request == m.request
        && prev.buffers.len() == m.buffers.len()
        && prev.buffers.iter().zip(&m.buffers).all(|(a, b)| {
            (a.rank, &a.size, &a.shape, &a.operator, &a.xla_label)
                == (b.rank, &b.size, &b.shape, &b.operator, &b.xla_label)
        })
}

#[cfg(test)]
mod tests {
    use super::raised;

    #[test]
    fn a_python_exception_is_raised_a_log_record_is_not() {
        assert!(raised("ValueError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 2110783616 bytes."));
        assert!(raised("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory"));
        assert!(!raised("E0528 07:05:32.758850 25920 pjrt_stream_executor_client.cc:2826] Execution of replica 0 failed: RESOURCE_EXHAUSTED: Out of memory"));
        assert!(!raised("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3221225472 bytes."));
        assert!(!raised("the status said Error: not RESOURCE"));
    }
}
