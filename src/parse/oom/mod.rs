//! XLA's out-of-memory messages: text → [`OomLog`].
//!
//! Owns: finding every OOM message in a whole log (other output around it, several
//! messages, a logger's or a worker's prefix on every line, lines a terminal wrapped) and
//! reading each with the grammar of its form: `gpu` (`BufferAssignment OOM Debugging.`,
//! CUDA and ROCm), `tpu` (`Ran out of memory in memory space hbm`, and the older
//! `Attempting to reserve … at the bottom of memory`), `bfc` (the GPU BFC allocator's
//! message and its statistics) and `short` (today's one-line forms: E1000
//! `CompileTimeHbmOom`, TensorCore + SparseCore usage, E0100 device buffers, `Allocation
//! (size=…) would exceed memory`, the GPU runtime's bare status); `notes` reads the
//! compile-log lines about memory that are no OOM message
//! ([`CompilerNote`](crate::model::oom::CompilerNote)). `lines` cleans the lines, `size`
//! reads sizes, `fields` and `entries` the parts both forms share; `fold` makes one message
//! of one failure printed several times (the BFC allocator's warning, the runtime's status,
//! the Python exception); [`search`] keeps a file's text for the search. Only grammar and
//! actions live here: what a message says is [`crate::model::oom`]'s types, the groupings
//! of its buffers [`crate::answers::oom`]'s. A message cut by the log keeps what was read,
//! and its `warnings` name what is missing. Nothing here panics on any input.

mod bfc;
mod entries;
mod fields;
mod fold;
mod gpu;
mod lines;
mod notes;
pub mod search;
mod short;
mod size;
mod tpu;

use crate::model::oom::{OomForm, OomLog, OomMessage};

use lines::Line;

/// What [`read_oom`] looked for, as one sentence for a log that has none of it.
pub const NO_OOM_MESSAGE: &str = "no XLA out-of-memory message: looked for the GPU \
`BufferAssignment OOM Debugging.` / `Peak buffers:` message, the TPU `Ran out of memory in \
memory space …` / `Largest program allocations in …:` one, the older TPU `Attempting to \
reserve … at the bottom of memory` one, today's one-line TPU forms (E1000 `Ran out of memory on \
HBM`, `TensorCore Hbm usage`, E0100 `Attempting to allocate`, `Allocation (size=…) would \
exceed memory`), the GPU runtime's `Out of memory while trying to allocate` and the BFC \
allocator's `ran out of memory trying to allocate`";

/// Every out-of-memory message and compiler note in `log`, in order; None when there is
/// neither.
pub fn read_oom(log: &str) -> Option<OomLog> {
    let lines = lines::clean(log);
    let mut messages = Vec::new();
    let mut compiler_notes = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let read = if gpu::starts(&lines, i) {
            Some(gpu::read(&lines, i))
        } else if tpu::starts(&lines, i) {
            Some(tpu::read(&lines, i))
        } else if bfc::starts(&lines, i) {
            Some(bfc::read(&lines, i))
        } else if short::starts(&lines, i) {
            Some(short::read(&lines, i))
        } else {
            None
        };
        match read {
            Some((mut message, next)) => {
                if message.module.is_none() {
                    message.module = message.error.as_deref().and_then(short::module_named);
                }
                messages.push((message, fold::raised(&lines[i].text)));
                i = next.max(i + 1);
            }
            None => {
                compiler_notes.extend(notes::note(&lines[i]));
                i += 1;
            }
        }
    }
    let messages = fold::one_per_failure(messages);
    (!messages.is_empty() || !compiler_notes.is_empty()).then_some(OomLog {
        messages,
        compiler_notes,
    })
}

/// [`read_oom`] for bytes (invalid UTF-8 replaced), with [`NO_OOM_MESSAGE`] when there is
/// no message.
pub fn read_oom_bytes(bytes: &[u8]) -> Result<OomLog, String> {
    read_oom(&String::from_utf8_lossy(bytes)).ok_or_else(|| NO_OOM_MESSAGE.to_string())
}

fn new_message(form: OomForm, first_line: usize) -> OomMessage {
    OomMessage {
        form,
        first_line,
        last_line: first_line,
        printed_again: Vec::new(),
        error: None,
        code: None,
        module: None,
        request: None,
        memory_space: None,
        capacity: None,
        allocator: None,
        sections: Vec::new(),
        notes: Vec::new(),
        buffers: Vec::new(),
        warnings: Vec::new(),
    }
}

/// Sets the message's last line: the last non-blank one of `lines[start..end]`.
fn finish(m: &mut OomMessage, lines: &[Line], start: usize, end: usize) {
    let end = end.min(lines.len());
    if let Some(l) = lines[start.min(end)..end]
        .iter()
        .rev()
        .find(|l| !l.text.trim().is_empty())
    {
        m.last_line = l.no;
    }
}
