//! The out-of-memory messages in `bufscope summary`: per message, the capacity verdict, the
//! stats blocks, the listed buffers, their groups by op_name and by source line, how much
//! of the reported total they cover, and what the message cannot show with the flags that
//! give the full picture.
//!
//! Owns: the `oom_messages` entries of the summary JSON ([`OomReport`]) and their text
//! ([`to_text`]), and the choice of the total the listed buffers are compared with
//! ([`reported_total`]). The figures are the reader's ([`crate::parse::oom`]); sizes are
//! shown as XLA printed them, sums in [`human_bytes`].

use crate::answers::paired::{Paired, PairedMessage};
use crate::answers::oom::{coverage, group_by_op_name, group_by_source, Coverage, OomGroup};
use crate::model::oom::{ByteSize, CompilerNote, OomBuffer, OomForm, OomMessage};
use crate::parse::OomFile;
use crate::summary::{printable, Summary};
use crate::units::{group_digits, human_bytes};
use serde::Serialize;
use std::fmt::Write;

/// One message with what is derived from it, as `summary --json` gives it.
#[derive(Debug, Clone, Serialize)]
pub struct OomReport<'a> {
    /// The file (log) the message is in.
    pub file: &'a str,
    #[serde(flatten)]
    pub message: &'a OomMessage,
    /// The listed buffers by op_name, numbered layers folded ([`group_by_op_name`]).
    pub by_op_name: Vec<OomGroup>,
    /// The listed buffers by source `file:line` ([`group_by_source`]).
    pub by_source: Vec<OomGroup>,
    /// The listed buffers against [`reported_total`]; the total's name in `coverage_of`.
    pub coverage: Option<Coverage>,
    pub coverage_of: Option<String>,
    /// About the file as a whole ([`OomFile::warnings`]).
    pub file_warnings: &'a [String],
    /// The dump read with the message, when it is of the module the message is about
    /// ([`crate::answers::paired`]): the module, the space, the capacity set on it and
    /// the message's figure against the dump's peak.
    pub dump: Option<&'a PairedMessage>,
}

/// A compiler note of a log, as `summary --json` gives it (`compiler_notes`).
#[derive(Debug, Clone, Serialize)]
pub struct NoteReport<'a> {
    pub file: &'a str,
    #[serde(flatten)]
    pub note: &'a CompilerNote,
    /// The note in words ([`note_sentence`]).
    pub sentence: String,
}

/// Every compiler note of every file, in order.
pub fn note_reports(files: &[OomFile]) -> Vec<NoteReport<'_>> {
    (files.iter())
        .flat_map(|f| f.log.compiler_notes.iter().map(move |n| (f, n)))
        .map(|(f, note)| NoteReport {
            file: &f.file,
            note,
            sentence: note_sentence(note),
        })
        .collect()
}

/// A size of a note as printed, spaced for reading (`38.20GiB (… bytes)` → `38.20 GiB`).
fn spaced(s: &Option<ByteSize>) -> String {
    let Some(s) = s else {
        return "?".to_string();
    };
    let rounded = s.text.split(" (").next().unwrap_or(&s.text);
    let unit = rounded.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    format!("{} {unit}", &rounded[..rounded.len() - unit.len()])
}

/// A compiler note in words: what rematerialization reached and needed, or which
/// instruction is resharded by a full copy.
pub fn note_sentence(note: &CompilerNote) -> String {
    match note {
        CompilerNote::RematerializationShortfall {
            target,
            reached,
            original,
            ..
        } => format!(
            "remat got the program from {} to {}; it needed {}",
            spaced(original),
            spaced(reached),
            spaced(target)
        ),
        CompilerNote::InvoluntaryFullRematerialization {
            instruction,
            from_sharding,
            to_sharding,
            op_name,
            ..
        } => {
            let what = instruction.as_deref().unwrap_or("an instruction");
            let op = op_name
                .as_deref()
                .map(|o| format!(" ({o})"))
                .unwrap_or_default();
            format!(
                "{what}{op} goes from sharding {} to {} by a full rematerialization: the whole tensor on every device, a sharding mismatch that multiplies its memory",
                from_sharding.as_deref().unwrap_or("?"),
                to_sharding.as_deref().unwrap_or("?")
            )
        }
    }
}

/// `summary --json`: the summary's object as [`Summary::to_json`] writes it, with an
/// `oom_messages` array ([`OomReport`]s) and a `compiler_notes` one ([`NoteReport`]s) after
/// its other keys when there is a message or a note.
pub fn summary_json(summary: &Summary, files: &[OomFile]) -> String {
    summary_json_paired(summary, files, &Paired::default())
}

/// [`summary_json`] with the messages paired with the modules read beside them.
/// The summary of `modules` with `options`, each module taking the capacity of an
/// out-of-memory message of `files` paired with it ([`Paired`]: the module it names, or the
/// only one), and the pairing, for [`summary_json_paired`]. `both` computes two parts of
/// each module's answers ([`crate::answers::Both`]).
pub fn summary_with_messages(
    modules: &[(&crate::model::Module, &crate::analysis::Analysis)],
    files: &[OomFile],
    options: &crate::summary::answers::SummaryOptions,
    both: crate::answers::Both,
) -> (Summary, Paired) {
    let paired = Paired::new(modules, files);
    let summary = Summary {
        device: crate::summary::waste::device(modules, options),
        modules: (modules.iter().enumerate())
            .map(|(i, (m, a))| {
                let options = crate::summary::answers::SummaryOptions {
                    space_capacity: paired.space_capacity(i),
                    ..options.clone()
                };
                crate::summary::ModuleSummary::with_options_by(m, a, &options, both)
            })
            .collect(),
    };
    (summary, paired)
}

pub fn summary_json_paired(summary: &Summary, files: &[OomFile], paired: &Paired) -> String {
    #[derive(Serialize)]
    struct WithOom<'a> {
        #[serde(flatten)]
        summary: &'a Summary,
        oom_messages: Vec<OomReport<'a>>,
        compiler_notes: Vec<NoteReport<'a>>,
    }
    let oom_messages = reports_paired(files, paired);
    let compiler_notes = note_reports(files);
    if oom_messages.is_empty() && compiler_notes.is_empty() {
        return summary.to_json();
    }
    let all = WithOom {
        summary,
        oom_messages,
        compiler_notes,
    };
    // Plain structs of strings and numbers always serialize.
    serde_json::to_string_pretty(&all).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// Every message of every file, in order.
pub fn reports(files: &[OomFile]) -> Vec<OomReport<'_>> {
    static NONE: Paired = Paired { pairs: Vec::new() };
    reports_paired(files, &NONE)
}

/// [`reports`], each with its pairing in `paired`.
pub fn reports_paired<'a>(files: &'a [OomFile], paired: &'a Paired) -> Vec<OomReport<'a>> {
    let mut out = Vec::new();
    for (fi, f) in files.iter().enumerate() {
        for (mi, m) in f.log.messages.iter().enumerate() {
            let total = reported_total(m);
            out.push(OomReport {
                file: &f.file,
                message: m,
                by_op_name: group_by_op_name(&m.buffers),
                by_source: group_by_source(&m.buffers),
                coverage: total.as_ref().and_then(|(_, t)| coverage(m, t)),
                coverage_of: total.map(|(name, _)| name),
                file_warnings: &f.warnings,
                dump: paired.of_message(fi, mi),
            });
        }
    }
    out
}

/// The total the listed buffers are a part of, and its name: the `total allocation` stat
/// of a GPU message (the buffers are those live at its peak), the `Program … requirement`
/// block of a TPU one (the list is of program allocations), else the memory used.
pub fn reported_total(m: &OomMessage) -> Option<(String, ByteSize)> {
    let stats = m.sections.iter().flat_map(|s| &s.stats);
    if let Some(s) = stats
        .filter(|s| s.label == "total allocation")
        .find_map(|s| s.size.clone())
    {
        return Some(("total allocation".into(), s));
    }
    if let Some((title, total)) = m
        .sections
        .iter()
        .filter(|s| s.title.starts_with("Program ") && s.title.ends_with(" requirement"))
        .find_map(|s| Some((s.title.clone(), s.total.clone()?)))
    {
        return Some((title, total));
    }
    let used = m.capacity.as_ref()?.used.clone()?;
    Some(("memory used".into(), used))
}

/// What no OOM message can show, and how to get a dump that shows it, for messages of
/// these forms (which files to take depends on the device).
pub fn full_picture(forms: impl IntoIterator<Item = OomForm>) -> String {
    const GPU: &str = "`*buffer-assignment.txt` (and `*buffer-assignment-values.txt` and \
                       `*live-range.txt`, which newer XLA writes next to it)";
    const TPU: &str = "`*buffer-assignment.txt` and `*memory-usage-report.txt`";
    let (mut gpu, mut tpu) = (false, false);
    for f in forms {
        if f.is_gpu() {
            gpu = true;
        } else {
            tpu = true;
        }
    }
    let files = match (gpu, tpu) {
        (true, true) => format!("on a GPU its {GPU}, on a TPU its {TPU}"),
        (false, true) => format!("its {TPU}"),
        _ => format!("its {GPU}"),
    };
    format!(
        "An out-of-memory message has no time axis (it cannot show which buffers are live \
         together, or when) and lists only the largest buffers. For the whole program over \
         time, run it again with `XLA_FLAGS=--xla_dump_to=DIR` (added to any XLA_FLAGS \
         already set) and drop the failing program's files from DIR into bufscope: {files}; \
         or run `bufscope summary DIR`. If XLA stops before writing them, a smaller batch \
         shows the same program at a smaller scale."
    )
}

/// The messages as text, one block each, then what they cannot show ([`full_picture`]).
pub fn to_text(files: &[OomFile]) -> String {
    to_text_paired(files, &Paired::default())
}

/// [`to_text`] with each message's pairing with a dump, and the compiler notes.
pub fn to_text_paired(files: &[OomFile], paired: &Paired) -> String {
    let reports = reports_paired(files, paired);
    let mut out = String::new();
    for (i, r) in reports.iter().enumerate() {
        let _ = writeln!(
            out,
            "out-of-memory message {} of {} in {}, lines {}-{} ({})",
            i + 1,
            reports.len(),
            printable(r.file),
            r.message.first_line,
            r.message.last_line,
            form_name(r.message.form)
        );
        message_text(&mut out, r);
        out.push('\n');
    }
    let notes = note_reports(files);
    if !notes.is_empty() {
        let _ = writeln!(out, "compiler notes ({}):", notes.len());
        for n in &notes {
            let line = match n.note {
                CompilerNote::RematerializationShortfall { line, .. }
                | CompilerNote::InvoluntaryFullRematerialization { line, .. } => *line,
            };
            let head = format!("  {} line {line}: ", printable(n.file));
            out.push_str(&super::wrap(&printable(&n.sentence), 96, &head, "    "));
        }
        out.push('\n');
    }
    let unpaired: Vec<OomForm> = (reports.iter())
        .filter(|r| r.dump.is_none())
        .map(|r| r.message.form)
        .collect();
    if !unpaired.is_empty() {
        out.push_str(&super::wrap(&full_picture(unpaired), 96, "", ""));
    }
    out
}

/// The summary table `table` followed by the messages' text, a blank line between.
pub fn after_table(table: String, files: &[OomFile]) -> String {
    after_table_paired(table, files, &Paired::default())
}

/// [`after_table`] with each message's pairing with a dump.
pub fn after_table_paired(mut table: String, files: &[OomFile], paired: &Paired) -> String {
    let text = to_text_paired(files, paired);
    if !table.is_empty() && !text.is_empty() {
        table.push('\n');
    }
    table.push_str(&text);
    table
}

fn form_name(form: OomForm) -> &'static str {
    match form {
        OomForm::GpuBufferAssignment => "GPU BufferAssignment OOM",
        OomForm::TpuRanOutOfMemory => "TPU ran out of memory",
        OomForm::TpuReserve => "TPU reservation failed",
        OomForm::TpuCompileTimeHbmOom => "TPU compile-time HBM OOM",
        OomForm::TpuHbmUsage => "TPU TensorCore and SparseCore HBM usage",
        OomForm::TpuDeviceBuffer => "TPU device buffer allocation failed",
        OomForm::TpuAllocationExceeds => "TPU allocation would exceed memory",
        OomForm::GpuOutOfMemory => "GPU out of memory",
        OomForm::GpuBfcAllocator => "GPU BFC allocator out of memory",
    }
}

fn size(s: &Option<ByteSize>) -> String {
    s.as_ref()
        .map_or_else(|| "?".to_string(), |s| s.text.clone())
}

fn sum(bytes: i64) -> String {
    human_bytes(bytes.max(0) as u64)
}

fn message_text(out: &mut String, r: &OomReport) {
    let m = r.message;
    if let Some(e) = &m.error {
        let _ = writeln!(out, "  {}", printable(e));
    }
    verdict_text(out, m);
    for s in &m.sections {
        let total = match &s.total {
            Some(t) if s.at_least => format!(" >= {}", t.text),
            Some(t) => format!(" {}", t.text),
            None => String::new(),
        };
        let _ = writeln!(out, "  {}{total}:", printable(&s.title));
        for st in &s.stats {
            let note = st
                .note
                .as_deref()
                .map(|n| format!(" {n}"))
                .unwrap_or_default();
            let figure = st.size.as_ref().map_or("", |s| s.text.as_str());
            let _ = writeln!(
                out,
                "    {}: {figure}{}",
                printable(&st.label),
                printable(&note)
            );
        }
    }
    for n in &m.notes {
        let _ = writeln!(out, "  {}", printable(n));
    }
    if let Some(again) = printed_again(m) {
        let _ = writeln!(out, "  {again}");
    }
    buffers_text(out, r);
    for (title, groups) in [
        ("by op_name (numbered layers folded)", &r.by_op_name),
        ("by source line", &r.by_source),
    ] {
        groups_text(out, title, groups);
    }
    for w in r.file_warnings.iter().chain(&m.warnings) {
        let _ = writeln!(out, "  warning: {}", printable(w));
    }
    if let Some(p) = r.dump {
        let head = format!("  with its dump, module {}: ", printable(&p.module_name));
        let said = match (&p.reconciliation, &p.capacity) {
            (Some(rec), _) => rec.sentence.clone(),
            (None, Some(c)) => format!(
                "its capacity, {}, is held against memory space {}'s peak",
                c.label, p.color
            ),
            (None, None) => "no figure to hold against it".to_string(),
        };
        out.push_str(&super::wrap(&printable(&said), 96, &head, "    "));
    }
}

/// Where the log prints the same message again (`printed again at lines 107 and 230; one
/// failure`), if it does.
pub fn printed_again(m: &OomMessage) -> Option<String> {
    let (last, rest) = m.printed_again.split_last()?;
    let lines = match rest {
        [] => format!("line {last}"),
        _ => {
            let rest: Vec<String> = rest.iter().map(usize::to_string).collect();
            format!("lines {} and {last}", rest.join(", "))
        }
    };
    Some(format!("printed again at {lines} (the same failure, counted once)"))
}

fn verdict_text(out: &mut String, m: &OomMessage) {
    if let Some(req) = &m.request {
        let _ = writeln!(out, "  request: {}", req.text);
    }
    let Some(c) = &m.capacity else { return };
    let space = m.memory_space.as_deref().unwrap_or("memory");
    let mut parts = Vec::new();
    let computed = |field: &str| {
        if c.computed.iter().any(|f| f == field) {
            " (computed)"
        } else {
            ""
        }
    };
    if let Some(used) = &c.used {
        parts.push(format!("used {}{}", used.text, computed("used")));
    }
    if let Some(cap) = &c.capacity {
        parts.push(format!("capacity {} {}", cap.text, printable(space)));
    }
    if let Some(x) = &c.exceeded_by {
        parts.push(format!("exceeded by {}{}", x.text, computed("exceeded_by")));
    }
    for (name, s) in [
        ("free", &c.free),
        ("reserved", &c.reserved),
        ("reservable", &c.reservable),
        ("available after request", &c.available_after_request),
    ] {
        if let Some(s) = s {
            parts.push(format!("{name} {}", s.text));
        }
    }
    if !parts.is_empty() {
        let _ = writeln!(out, "  capacity: {}", parts.join(" · "));
    }
}

fn buffers_text(out: &mut String, r: &OomReport) {
    let m = r.message;
    let covered = match (&r.coverage, &r.coverage_of) {
        (Some(c), Some(of)) => format!(
            ": {} listed, {:.1}% of {of} ({})",
            sum(c.listed),
            c.fraction * 100.0,
            c.total.text
        ),
        _ => String::new(),
    };
    if m.buffers.is_empty() {
        let _ = writeln!(out, "  lists no buffers");
        return;
    }
    let _ = writeln!(out, "  listed buffers ({}){covered}:", m.buffers.len());
    for b in &m.buffers {
        buffer_text(out, b);
    }
}

fn buffer_text(out: &mut String, b: &OomBuffer) {
    let mut head = format!("    {}. {}", b.rank, size(&b.size));
    if let Some(s) = &b.shape {
        let what = if b.entry_parameter { "parameter " } else { "" };
        let _ = write!(head, "  {what}{}", printable(s));
    }
    if let Some(t) = &b.allocation_type {
        let _ = write!(head, "  ({})", printable(t));
    }
    let _ = writeln!(out, "{head}");
    if b.unpadded_size.is_some() || b.padding.is_some() {
        let padding = match (&b.padding, &b.expansion) {
            (Some(p), Some(x)) => format!(" · padding {} ({x}x expansion)", p.text),
            (Some(p), None) => format!(" · padding {}", p.text),
            _ => String::new(),
        };
        let _ = writeln!(out, "       unpadded {}{padding}", size(&b.unpadded_size));
    }
    if let Some(op) = &b.operator {
        if let Some(n) = &op.op_name {
            let _ = writeln!(out, "       op_name {}", printable(n));
        }
        if let Some(f) = &op.source_file {
            let line = op.source_line.map(|l| format!(":{l}")).unwrap_or_default();
            let _ = writeln!(out, "       source {}{line}", printable(f));
        }
    }
    if let Some(l) = &b.xla_label {
        let _ = writeln!(out, "       XLA label {}", printable(l));
    }
}

fn groups_text(out: &mut String, title: &str, groups: &[OomGroup]) {
    if groups.iter().all(|g| g.key.is_none()) {
        return;
    }
    let _ = writeln!(out, "  {title}:");
    for g in groups {
        let key = g.key.as_deref().unwrap_or("(none)");
        let n = g.buffers.len();
        let folded = if g.folded.is_empty() {
            String::new()
        } else {
            format!(", {} names folded", g.folded.len())
        };
        let _ = writeln!(
            out,
            "    {:>10}  {} buffer{}{folded}  {}",
            sum(g.bytes),
            group_digits(n as u64),
            if n == 1 { "" } else { "s" },
            printable(key)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_words_whole_and_lines_short() {
        let text = "a bb ccc dddd `XLA_FLAGS=--xla_dump_to=DIR` e";
        let w = super::super::wrap(text, 8, "", "");
        assert_eq!(w, "a bb ccc\ndddd\n`XLA_FLAGS=--xla_dump_to=DIR`\ne\n");
        assert_eq!(w.split_whitespace().collect::<Vec<_>>().join(" "), text);
    }

    #[test]
    fn the_full_picture_names_the_files_of_each_device() {
        let gpu = full_picture([OomForm::GpuBufferAssignment]);
        assert!(gpu.contains("`*live-range.txt`") && !gpu.contains("memory-usage-report"));
        let tpu = full_picture([OomForm::TpuReserve]);
        assert!(tpu.contains("`*memory-usage-report.txt`") && !tpu.contains("live-range"));
        let both = full_picture([OomForm::TpuRanOutOfMemory, OomForm::GpuBufferAssignment]);
        assert!(both.contains("on a GPU") && both.contains("on a TPU"));
        assert!(both.contains("`XLA_FLAGS=--xla_dump_to=DIR`"));
    }
}
