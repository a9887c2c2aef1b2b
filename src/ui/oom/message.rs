//! One out-of-memory message laid out: what failed and the capacity verdict in plain
//! words, the stats blocks as printed, the listed buffers ([`super::buffers`]), what could
//! not be read; and, once after all the messages ([`limits`]), what they cannot show with
//! how to get the full picture (a dump).

use bufscope::model::oom::{ByteSize, CompilerNote, OomForm, OomMessage, StatSection};
use bufscope::summary::oom::{note_sentence, printed_again};
use bufscope::text::clip_middle;
use leptos::prelude::*;

use super::{buffers, human, signed, size_view};

/// Longest error line shown (the full text is in its title).
const ERROR_CHARS: usize = 400;

/// Message `i` of `n`; `dump`: what its dump, read with it, says of its figure
/// ([`bufscope::answers::paired`]).
pub(super) fn view(m: &OomMessage, i: usize, n: usize, dump: Option<&str>) -> impl IntoView {
    let what = match m.form {
        OomForm::GpuBufferAssignment => "GPU: the buffers of a program did not fit".to_string(),
        OomForm::TpuRanOutOfMemory => format!(
            "TPU compile: ran out of memory in {}",
            m.memory_space.as_deref().unwrap_or("a memory space")
        ),
        OomForm::TpuReserve => "TPU: a reservation of memory failed".to_string(),
        OomForm::TpuCompileTimeHbmOom => format!(
            "TPU compile (E1000): the program needs more {} than the device has",
            m.memory_space.as_deref().unwrap_or("HBM").to_uppercase()
        ),
        OomForm::TpuHbmUsage => "TPU compile: TensorCore and SparseCore HBM usage exceed the device".to_string(),
        OomForm::TpuDeviceBuffer => "TPU runtime (E0100): a device buffer could not be allocated".to_string(),
        OomForm::TpuAllocationExceeds => "TPU: an allocation would exceed the device's memory".to_string(),
        OomForm::GpuOutOfMemory => "GPU: an allocation did not fit".to_string(),
        OomForm::GpuBfcAllocator => format!(
            "GPU: the BFC allocator ({}) ran out of memory",
            m.memory_space.as_deref().unwrap_or("GPU")
        ),
    };
    let module = m.module.as_ref().map(|name| {
        view! { <p class="oom-module">"Program (HLO module): "<code>{name.clone()}</code></p> }
    });
    let number = (n > 1).then(|| format!("Message {} of {n}: ", i + 1));
    let mut lines = if m.first_line == m.last_line {
        format!("line {} of the text", m.first_line)
    } else {
        format!("lines {}–{} of the text", m.first_line, m.last_line)
    };
    if let Some(again) = printed_again(m) {
        lines = format!("{lines}; {again}");
    }
    let error = m.error.as_ref().map(|e| {
        view! { <p class="oom-error" title=e.clone()><code>{clip_middle(e, ERROR_CHARS)}</code></p> }
    });
    let notes = (!m.notes.is_empty()).then(|| {
        let items = m
            .notes
            .iter()
            .map(|t| view! { <li>{t.clone()}</li> })
            .collect_view();
        view! { <ul class="oom-notes">{items}</ul> }
    });
    let dump = dump.map(|d| {
        view! { <p class="oom-dump"><strong>"With its dump: "</strong>{d.to_string()}</p> }
    });
    view! {
        <article class="oom-message">
            <h3>{number}{what}<span class="oom-lines">{format!(" ({lines})")}</span></h3>
            {error}
            {module}
            <p class="oom-verdict">{verdict(m)}</p>
            {dump}
            {warnings(m)}
            {stats(&m.sections)}
            {notes}
            {buffers::view(m)}
        </article>
    }
}

/// What failed and by how much, in plain words, from whatever the message printed.
fn verdict(m: &OomMessage) -> String {
    let space = m.memory_space.as_deref().unwrap_or("memory");
    let c = m.capacity.clone().unwrap_or_default();
    let mut out = Vec::new();
    match (&c.used, &c.capacity, &c.exceeded_by) {
        (Some(used), Some(cap), Some(over)) => {
            let pct = (cap.bytes > 0)
                .then(|| {
                    format!(
                        " ({:.0}% over capacity)",
                        over.bytes as f64 / cap.bytes as f64 * 100.0
                    )
                })
                .unwrap_or_default();
            out.push(format!(
                "The program needs {} of {space}, but the device has {}: {} too much{pct}.",
                human(used),
                human(cap),
                human(over)
            ));
        }
        (Some(used), Some(cap), None) => out.push(format!(
            "It uses {} of {space}; the device has {}.",
            human(used),
            human(cap)
        )),
        _ => {}
    }
    if let Some(req) = &m.request {
        let req = human(req);
        out.push(match (m.form, &c.free) {
            (OomForm::TpuReserve, Some(free)) => {
                format!(
                    "It tried to reserve {req} at once, but only {} was free.",
                    human(free)
                )
            }
            (OomForm::TpuReserve, None) => {
                format!("It tried to reserve {req} at once and could not.")
            }
            (_, Some(free)) => format!(
                "It tried to allocate {req} at once, but only {} was free.",
                human(free)
            ),
            _ => format!("XLA tried to allocate {req} more and the device had no room for it."),
        });
    }
    if c.used.is_none() {
        if let Some(cap) = &c.capacity {
            out.push(format!("The device has {} of {space}.", human(cap)));
        }
    }
    if let Some(after) = &c.available_after_request {
        out.push(if after.bytes < 0 {
            format!(
                "After the request {} would be missing.",
                signed(after.bytes.saturating_neg())
            )
        } else {
            format!("After the request {} would be left.", human(after))
        });
    }
    if m.form == OomForm::GpuBufferAssignment {
        if let Some(total) = stat(m, "total allocation") {
            out.push(format!("Its buffer assignment totals {}.", human(total)));
        }
        out.push("The message does not say how much memory the GPU has.".into());
    }
    if out.is_empty() {
        out.push("The message does not say how much memory was used or available.".into());
    }
    out.join(" ")
}

/// The figure of the stat labelled `label`, in any block.
fn stat<'m>(m: &'m OomMessage, label: &str) -> Option<&'m ByteSize> {
    m.sections
        .iter()
        .flat_map(|s| &s.stats)
        .find(|s| s.label == label)
        .and_then(|s| s.size.as_ref())
}

/// The stats blocks, one small table each, figures as printed in their titles.
fn stats(sections: &[StatSection]) -> impl IntoView {
    let tables = sections
        .iter()
        .map(|s| {
            let total = s.total.as_ref().map(|t| {
                let at_least = if s.at_least { "at least " } else { "" };
                view! { <span class="oom-stat-total">{at_least}{size_view(t)}</span> }
            });
            let rows = s
                .stats
                .iter()
                .map(|st| {
                    let size = st.size.as_ref().map(size_view);
                    let note = st.note.clone().unwrap_or_default();
                    view! {
                        <tr>
                            <th scope="row">{st.label.clone()}</th>
                            <td class="num">{size}</td>
                            <td class="oom-note">{note}</td>
                        </tr>
                    }
                })
                .collect_view();
            view! {
                <table class="oom-stats">
                    <caption>{s.title.clone()}" "{total}</caption>
                    <tbody>{rows}</tbody>
                </table>
            }
        })
        .collect_view();
    (!sections.is_empty()).then(|| view! { <div class="oom-stat-blocks">{tables}</div> })
}

/// What could not be read or is missing (a message cut by the log, say).
fn warnings(m: &OomMessage) -> impl IntoView {
    (!m.warnings.is_empty()).then(|| {
        let items = m
            .warnings
            .iter()
            .map(|w| view! { <li>{w.clone()}</li> })
            .collect_view();
        view! {
            <div class="message warn oom-warnings" role="note">
                <p><strong>"Part of this message is missing or could not be read:"</strong></p>
                <ul>{items}</ul>
            </div>
        }
    })
}

/// What the messages cannot show, and the dump that shows it: once, after them.
pub(super) fn limits(messages: &[OomMessage]) -> impl IntoView {
    let only = match messages {
        [m] => match m.buffers.len() {
            0 => "lists no buffers".to_string(),
            1 => "lists only the largest buffer".to_string(),
            n => format!("lists only the {n} largest buffers"),
        },
        _ => "lists only the largest buffers".to_string(),
    };
    let program = messages.iter().find_map(program_name).map(|name| {
        view! { " Its files are named after the program, here probably "<code>{format!("*{name}*")}</code>"." }
    });
    view! {
        <div class="oom-limits">
            <h4>"What this message cannot show"</h4>
            <p>
                {format!(
                    "A message is one moment with no time axis: it does not say when each \
                     buffer is live or which buffers are live together, and it {only}, not \
                     everything in memory."
                )}
                " For the full picture, run the program again with XLA's dump turned on:"
            </p>
            <pre class="oom-flags"><code>"XLA_FLAGS=--xla_dump_to=/tmp/xla_dump python your_program.py"</code></pre>
            <p>
                "(keep any flags already in "<code>"XLA_FLAGS"</code>", space-separated), then drop "
                "here the "<code>"*-buffer-assignment.txt"</code>" file of the program that failed, "
                "and on new XLA its "<code>"*-buffer-assignment-values.txt"</code>" and "
                <code>"*-live-range.txt"</code>" too, or the whole "<code>"/tmp/xla_dump"</code>
                " folder."{program}
            </p>
        </div>
    }
}

/// `jit_NAME` from the first op_name that starts with `jit(NAME)` (or `pjit(NAME)`): the
/// name JAX gives the program, which its dump files carry.
fn program_name(m: &OomMessage) -> Option<String> {
    if let Some(name) = &m.module {
        return Some(name.clone());
    }
    m.buffers.iter().find_map(|b| {
        let name = b.operator.as_ref()?.op_name.as_deref()?;
        let first = name.split('/').next()?;
        let (head, rest) = first.split_once('(')?;
        let inner = rest.strip_suffix(')')?;
        let plain =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        (matches!(head, "jit" | "pjit") && plain(inner)).then(|| format!("{head}_{inner}"))
    })
}

/// The compiler notes of the log ([`bufscope::model::oom::CompilerNote`]), each in words.
pub(super) fn notes(notes: &[CompilerNote]) -> impl IntoView {
    (!notes.is_empty()).then(|| {
        let items = notes
            .iter()
            .map(|n| view! { <li>{note_sentence(n)}</li> })
            .collect_view();
        view! {
            <div class="oom-compiler-notes">
                <h4>"Compiler notes"</h4>
                <ul>{items}</ul>
            </div>
        }
    })
}
