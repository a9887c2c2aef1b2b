//! What the live bytes of a step are made of, by op_name path (a tree, for an icicle chart)
//! and by source line.
//!
//! Both group a [`LiveSet`] and add up each value's credited `bytes` (so they sum to the
//! step's occupied bytes; see [`crate::answers`] on aliases) and its own `size`
//! (`value_bytes`). Values with no op_name or no source are one group like any other, sorted
//! by size; the entry's parameters with no source are a group of their own ([`PARAMETERS`]).
//! A value whose instruction names no source is grouped by the nearest source through the
//! HLO text, a row of its own marked `inferred` ([`crate::query::nearest_source`]).
//!
//! **Folding numbered repeats.** Paths are split into segments by [`op_path::split_from`].
//! With `fold`, siblings whose segments differ only in their numbered repeats are one node:
//! a segment's key is [`op_path::fold_segment`] of it (`decoder_layer_0096` →
//! `decoder_layer_#`, `3` → `#`, `dot_general.1234` → `dot_general.#`). Merged siblings
//! merge their subtrees; the node's `repeats` counts the distinct segments merged (`×500`),
//! and its label is the key when there are several, the segment itself when there is one.

use std::borrow::Cow;

use hashbrown::{HashMap, HashSet};
use serde::Serialize;

use crate::analysis::{value_kind, ValueKind};
use crate::answers::LiveSet;
use crate::model::{Module, Str};
use crate::op_path::{self, Cut, Segment};
use crate::query::{self, SourceLocation};

/// Label of the group of values whose instruction has no op_name.
pub const NO_OP_NAME: &str = "(no op_name)";
/// Label of the group of values with no source location.
pub const NO_SOURCE: &str = "(no source)";
/// Label of the group of the entry's parameters with no source location: made by no
/// instruction of the program, they have none to infer (their paths name them).
pub const PARAMETERS: &str = "(parameters: passed in, no source line)";

/// A node of the op_name tree: one path prefix.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OpNode {
    /// The path segment (the folded key when several were merged); empty at the root.
    pub label: String,
    /// Distinct segments merged into this node (1 when nothing was folded).
    pub repeats: u32,
    /// Occupied bytes credited to the values under this node.
    pub bytes: u64,
    /// Sum of the own sizes of the values under this node.
    pub value_bytes: u64,
    /// Number of values under this node.
    pub count: u32,
    /// Largest `bytes` first, then by label.
    pub children: Vec<OpNode>,
    /// Values whose path ends here (in value order); not serialized.
    #[serde(skip)]
    pub values: Vec<u32>,
}

impl OpNode {
    /// Every value under this node (its own and its descendants').
    pub fn all_values(&self) -> Vec<u32> {
        let mut out = self.values.clone();
        for c in &self.children {
            out.extend(c.all_values());
        }
        out.sort_unstable();
        out
    }
}

/// The live values of one op_name: its bytes and sizes, and its values' place in the list
/// [`by_op_name`] returns.
struct OpValues {
    op: Str,
    bytes: u64,
    size: u64,
    values: std::ops::Range<usize>,
}

/// The live values grouped by op_name, in the order each op_name is first met (values of one
/// layer are neighbours, so neighbouring op_names share their first segments); and the
/// values, each op_name's together (in value order).
fn by_op_name(module: &Module, live: &LiveSet) -> (Vec<OpValues>, Vec<u32>) {
    let mut index: HashMap<Str, u32> = HashMap::new();
    let mut ops: Vec<OpValues> = Vec::new();
    let mut op_of: Vec<u32> = Vec::with_capacity(live.values.len());
    for lv in &live.values {
        let op = module
            .instructions
            .get(module.values[lv.value as usize].instruction as usize)
            .map_or(Str::EMPTY, |i| i.op_name);
        let i = *index.entry(op).or_insert_with(|| {
            ops.push(OpValues {
                op,
                bytes: 0,
                size: 0,
                values: 0..0,
            });
            ops.len() as u32 - 1
        });
        let e = &mut ops[i as usize];
        e.bytes += lv.bytes;
        e.size += lv.size;
        e.values.end += 1;
        op_of.push(i);
    }
    // Each op_name's values after the ones before it (a counting sort).
    let mut at = 0;
    for o in &mut ops {
        let n = o.values.end;
        o.values = at..at;
        at += n;
    }
    let mut values = vec![0u32; live.values.len()];
    for (lv, &i) in live.values.iter().zip(&op_of) {
        let r = &mut ops[i as usize].values;
        values[r.end] = lv.value;
        r.end += 1;
    }
    (ops, values)
}

/// How many bytes `a` and `b` begin with alike.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n && a[i..i + 8] == b[i..i + 8] {
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// The op_name tree of the live set: the root covers every live value; its children are the
/// first path segments (and [`NO_OP_NAME`]). Each distinct op_name is split once.
pub fn op_name_tree(module: &Module, live: &LiveSet, fold: bool) -> OpNode {
    let (ops, flat) = by_op_name(module, live);
    let mut ids = SegmentIds::default();
    // The nodes, the root first; children by key number.
    let mut nodes = vec![Builder::default()];
    // The previous op_name, its segments and the node of each: the segments it shares with
    // the next one are the same nodes, found without splitting or a lookup.
    let mut previous: &str = "";
    let mut cuts: Vec<Segment> = Vec::new();
    let mut path: Vec<usize> = Vec::new();
    let mut fresh: Vec<Segment> = Vec::new();
    for OpValues {
        op,
        bytes,
        size,
        values,
    } in ops
    {
        let values = &flat[values];
        let text = match module.str(op) {
            "" => NO_OP_NAME,
            t => t,
        };
        // Segments ending before the bytes both names begin with (their `/` included) are
        // shared; the rest is split from the first segment that is not.
        let common = common_prefix(previous.as_bytes(), text.as_bytes());
        let kept = cuts.iter().take_while(|c| c.end < common).count();
        let from = cuts.get(kept).map_or(Cut { start: 0, depth: 0 }, |c| Cut {
            start: c.start,
            depth: c.depth,
        });
        fresh.clear();
        op_path::split_from(text, from, &mut fresh);
        let shared = kept
            + fresh
                .iter()
                .zip(&cuts[kept..])
                .take_while(|(n, p)| text[n.start..n.end] == previous[p.start..p.end])
                .count();
        cuts.truncate(kept);
        cuts.extend_from_slice(&fresh);
        path.truncate(shared);
        previous = text;
        let mut node = 0;
        nodes[0].add(bytes, size, values.len());
        for (depth, c) in cuts.iter().enumerate() {
            node = match path.get(depth) {
                Some(&n) => n,
                None => {
                    let (id, key) = ids.of(&text[c.start..c.end], fold);
                    let fresh = nodes.len();
                    let child = *nodes[node].children.entry(key).or_insert(fresh);
                    if child == fresh {
                        nodes.push(Builder::default());
                    }
                    nodes[child].segments.insert(id);
                    path.push(child);
                    child
                }
            };
            nodes[node].add(bytes, size, values.len());
        }
        nodes[node].values.extend(values);
    }
    finish(&mut nodes, 0, u32::MAX, &ids)
}

/// Segments and their keys (folded, with `fold`) by number, each text split or folded once.
#[derive(Default)]
struct SegmentIds<'m> {
    /// Segment text → (its number, its key's number).
    ids: HashMap<&'m str, (u32, u32)>,
    keys: HashMap<Cow<'m, str>, u32>,
    /// By number: the segments' texts, the keys' texts.
    segments: Vec<&'m str>,
    key_texts: Vec<Cow<'m, str>>,
}

impl<'m> SegmentIds<'m> {
    fn of(&mut self, seg: &'m str, fold: bool) -> (u32, u32) {
        if let Some(&ids) = self.ids.get(seg) {
            return ids;
        }
        let key = if fold {
            op_path::fold_segment(seg)
        } else {
            Cow::Borrowed(seg)
        };
        let key = match self.keys.get(&key) {
            Some(&k) => k,
            None => {
                let k = self.key_texts.len() as u32;
                self.key_texts.push(key.clone());
                self.keys.insert(key, k);
                k
            }
        };
        let ids = (self.segments.len() as u32, key);
        self.segments.push(seg);
        self.ids.insert(seg, ids);
        ids
    }
}

/// A node being built: segments and keys by number ([`SegmentIds`]), children by index.
#[derive(Default)]
struct Builder {
    bytes: u64,
    value_bytes: u64,
    count: u32,
    /// The distinct segments merged here.
    segments: HashSet<u32>,
    /// Key number → the child's index among the nodes.
    children: HashMap<u32, usize>,
    values: Vec<u32>,
}

impl Builder {
    fn add(&mut self, bytes: u64, size: u64, count: usize) {
        self.bytes += bytes;
        self.value_bytes += size;
        self.count += count as u32;
    }
}

/// Node `i` of `nodes` as an [`OpNode`], its key number `key` (`u32::MAX` at the root, whose
/// label is empty).
fn finish(nodes: &mut [Builder], i: usize, key: u32, ids: &SegmentIds) -> OpNode {
    let b = std::mem::take(&mut nodes[i]);
    let repeats = b.segments.len().max(1) as u32;
    let label = match (repeats, b.segments.iter().next()) {
        (1, Some(&only)) => ids.segments[only as usize].to_string(),
        _ => ids
            .key_texts
            .get(key as usize)
            .map_or_else(String::new, |k| k.to_string()),
    };
    let mut children: Vec<OpNode> = b
        .children
        .into_iter()
        .map(|(k, c)| finish(nodes, c, k, ids))
        .collect();
    children.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.label.cmp(&b.label)));
    let mut values = b.values;
    values.sort_unstable();
    OpNode {
        label,
        repeats,
        bytes: b.bytes,
        value_bytes: b.value_bytes,
        count: b.count,
        children,
        values,
    }
}

/// One source line's share of the live bytes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SourceLine {
    /// The file (a `stack_frame_id` resolved through the HLO text beside the dump), the
    /// sentence [`crate::query::NEEDS_HLO`] for frame ids without it, [`PARAMETERS`] or
    /// [`NO_SOURCE`].
    pub file: String,
    /// 0 when unknown.
    pub line: u32,
    /// The function, from the HLO text's stack frames; empty when unknown.
    pub function: String,
    /// The values' instructions name no source: this is the nearest one through the HLO
    /// text ([`crate::query::nearest_source`]), never grouped with the same line printed.
    #[serde(rename = "source_inferred")]
    pub inferred: bool,
    pub bytes: u64,
    pub value_bytes: u64,
    pub count: u32,
    /// `bytes` as a percentage of the step's occupied bytes.
    pub percent: f64,
    /// Sum of `bytes` of this row and the rows above it.
    pub running_bytes: u64,
    #[serde(skip)]
    pub values: Vec<u32>,
}

impl SourceLine {
    /// `file:line` (the file alone without a line), then ` in function` when known (its
    /// name after the last `.<locals>.`: `loss`, `LlamaDecoderLayer.__call__`), then
    /// ` (inferred)` for an inferred row: the one text of a row for the panels and the
    /// summary table.
    pub fn label(&self) -> String {
        let mut out = if self.line > 0 {
            format!("{}:{}", self.file, self.line)
        } else {
            self.file.clone()
        };
        if !self.function.is_empty() {
            let short = self
                .function
                .rsplit(".<locals>.")
                .next()
                .unwrap_or_default();
            out.push_str(" in ");
            out.push_str(short);
        }
        if self.inferred {
            out.push_str(query::INFERRED);
        }
        out
    }
}

/// One file's share, with its lines.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SourceFile {
    pub file: String,
    pub bytes: u64,
    pub value_bytes: u64,
    pub percent: f64,
    /// Largest first; `running_bytes` runs within the file.
    pub lines: Vec<SourceLine>,
}

/// The live bytes by source line, largest first, with a running total over all lines.
pub fn by_source_line(module: &Module, live: &LiveSet) -> Vec<SourceLine> {
    let mut rows: HashMap<(&str, u32, &str, bool), SourceLine> = HashMap::new();
    for lv in &live.values {
        let v = &module.values[lv.value as usize];
        let key = match query::source_location(module, v) {
            Some(SourceLocation::File {
                file,
                line,
                function,
                inferred,
            }) => (file, line, function, inferred),
            Some(SourceLocation::StackFrame(_)) => (query::NEEDS_HLO, 0, "", false),
            None if value_kind(module, v) == ValueKind::Parameter => (PARAMETERS, 0, "", false),
            None => (NO_SOURCE, 0, "", false),
        };
        let row = rows.entry(key).or_insert_with(|| SourceLine {
            file: key.0.to_string(),
            line: key.1,
            function: key.2.to_string(),
            inferred: key.3,
            bytes: 0,
            value_bytes: 0,
            count: 0,
            percent: 0.0,
            running_bytes: 0,
            values: Vec::new(),
        });
        row.bytes += lv.bytes;
        row.value_bytes += lv.size;
        row.count += 1;
        row.values.push(lv.value);
    }
    let mut rows: Vec<SourceLine> = rows.into_values().collect();
    finish_rows(&mut rows, live.occupied_bytes);
    rows
}

/// The live bytes by file, then line (each largest first).
pub fn by_source_file(module: &Module, live: &LiveSet) -> Vec<SourceFile> {
    let mut files: HashMap<String, Vec<SourceLine>> = HashMap::new();
    for row in by_source_line(module, live) {
        files.entry(row.file.clone()).or_default().push(row);
    }
    let mut out: Vec<SourceFile> = files
        .into_iter()
        .map(|(file, mut lines)| {
            finish_rows(&mut lines, live.occupied_bytes);
            SourceFile {
                bytes: lines.iter().map(|l| l.bytes).sum(),
                value_bytes: lines.iter().map(|l| l.value_bytes).sum(),
                percent: 0.0,
                file,
                lines,
            }
        })
        .collect();
    for f in &mut out {
        f.percent = percent(f.bytes, live.occupied_bytes);
    }
    out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.file.cmp(&b.file)));
    out
}

/// Sorts rows largest first (then file, line) and fills percentages and running totals.
fn finish_rows(rows: &mut [SourceLine], whole: u64) {
    rows.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then_with(|| b.value_bytes.cmp(&a.value_bytes))
            .then_with(|| a.file.cmp(&b.file))
            .then_with(|| a.line.cmp(&b.line))
            .then_with(|| a.inferred.cmp(&b.inferred))
    });
    let mut running = 0u64;
    for r in rows.iter_mut() {
        running += r.bytes;
        r.running_bytes = running;
        r.percent = percent(r.bytes, whole);
        r.values.sort_unstable();
    }
}

/// `part` as a percentage of `whole` (0 when `whole` is 0).
pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages() {
        assert_eq!(percent(1, 4), 25.0);
        assert_eq!(percent(1, 0), 0.0);
    }
}
