//! The page's tables as CSV, and the names of the files the page's exports download.
//!
//! Owns: how a table is written for a spreadsheet. RFC 4180: fields separated by commas,
//! lines ended by CRLF, a field quoted (its quotes doubled) when it holds a comma, a quote,
//! a CR or an LF. Bytes are exact integers, never `1.2 MiB`; an unknown figure is an empty
//! field. What the rows are (their order, grouping, filtering) is the caller's:
//! [`crate::query`], [`crate::answers`] and [`crate::diff`] work them out, this module only writes them.

use std::borrow::Cow;

use crate::analysis::value_kind;
use crate::answers::categories::CategoryRow;
use crate::answers::groups::SourceLine;
use crate::diff::{GroupDelta, MatchRule, ValueChange};
use crate::model::Module;
use crate::query::{self, Group};

/// One field as RFC 4180 writes it: quoted, with its quotes doubled, when it holds a comma,
/// a quote, a CR or an LF; as it is otherwise.
pub fn field(text: &str) -> Cow<'_, str> {
    if text.contains([',', '"', '\r', '\n']) {
        Cow::Owned(format!("\"{}\"", text.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(text)
    }
}

/// A CSV text being written: a header line, then a line per [`Csv::row`].
#[derive(Clone, Debug, Default)]
pub struct Csv {
    text: String,
}

impl Csv {
    /// A table with the columns `header`.
    pub fn new(header: &[&str]) -> Csv {
        let mut csv = Csv::default();
        csv.row(header.iter().copied());
        csv
    }

    /// Adds one line of fields.
    pub fn row<S: AsRef<str>>(&mut self, fields: impl IntoIterator<Item = S>) {
        for (i, f) in fields.into_iter().enumerate() {
            if i > 0 {
                self.text.push(',');
            }
            self.text.push_str(&field(f.as_ref()));
        }
        self.text.push_str("\r\n");
    }

    /// The text written.
    pub fn finish(self) -> String {
        self.text
    }
}

/// An optional number as a field: empty when unknown.
fn opt(n: Option<u64>) -> String {
    n.map_or_else(String::new, |n| n.to_string())
}

/// The columns of [`values_csv`].
pub const VALUE_COLUMNS: [&str; 10] = [
    "value",
    "id",
    "size_bytes",
    "logical_bytes",
    "padding_bytes",
    "shape",
    "op_name",
    "source",
    "kind",
    "path",
];

/// The values `values` of `module` (indices into its values), one line each in the order
/// given, with the live-set table's columns ([`VALUE_COLUMNS`]): whole texts, exact bytes.
pub fn values_csv(module: &Module, values: &[u32]) -> String {
    let mut csv = Csv::new(&VALUE_COLUMNS);
    for v in values.iter().filter_map(|&v| module.values.get(v as usize)) {
        csv.row([
            module.value_name(v),
            v.id.to_string(),
            v.size.to_string(),
            opt(v.logical_size),
            opt(query::padding(v)),
            module.str(v.shape).to_string(),
            query::op_name(module, v).to_string(),
            query::source(module, v).unwrap_or_default(),
            value_kind(module, v).label().to_string(),
            query::parameter_path(module, v)
                .unwrap_or_default()
                .to_string(),
        ]);
    }
    csv.finish()
}

/// The live-set table grouped by op_name: one line per group, in the order given.
pub fn op_groups_csv(module: &Module, groups: &[Group]) -> String {
    let mut csv = Csv::new(&[
        "op_name",
        "values",
        "size_bytes",
        "logical_bytes",
        "padding_bytes",
    ]);
    for g in groups {
        csv.row([
            module.str(g.op_name).to_string(),
            g.values.len().to_string(),
            g.total.to_string(),
            g.logical.to_string(),
            g.padding().to_string(),
        ]);
    }
    csv.finish()
}

/// The answers' "by source line" table: every row, not only those shown.
pub fn source_lines_csv(rows: &[SourceLine]) -> String {
    let mut csv = Csv::new(&[
        "file",
        "line",
        "bytes",
        "percent_live",
        "running_bytes",
        "values",
        "function",
    ]);
    for r in rows {
        let line = if r.line > 0 {
            r.line.to_string()
        } else {
            String::new()
        };
        csv.row([
            r.file.clone(),
            line,
            r.bytes.to_string(),
            format!("{:.2}", r.percent),
            r.running_bytes.to_string(),
            r.count.to_string(),
            r.function.clone(),
        ]);
    }
    csv.finish()
}

/// The answers' "by category" table.
pub fn categories_csv(rows: &[CategoryRow]) -> String {
    let mut csv = Csv::new(&["category", "bytes", "percent_live", "values", "rule"]);
    for r in rows {
        csv.row([
            r.label.to_string(),
            r.bytes.to_string(),
            format!("{:.2}", r.percent),
            r.count.to_string(),
            r.rule.to_string(),
        ]);
    }
    csv.finish()
}

/// A class of the Compare view's matched values (new, gone, grown, shrunk, unchanged): a
/// line per value or pair, each side's figures in its own columns (empty for a missing side).
pub fn value_changes_csv(rows: &[ValueChange]) -> String {
    let mut csv = Csv::new(&[
        "change_bytes",
        "base_bytes",
        "new_bytes",
        "base_value",
        "new_value",
        "matched_by",
        "base_op_name",
        "new_op_name",
        "base_shape",
        "new_shape",
        "base_source",
        "new_source",
    ]);
    for r in rows {
        let (b, n) = (r.base.as_ref(), r.new.as_ref());
        let rule = r.rule.map_or("", MatchRule::label);
        csv.row([
            r.delta_bytes.to_string(),
            b.map_or(String::new(), |i| i.bytes.to_string()),
            n.map_or(String::new(), |i| i.bytes.to_string()),
            b.map_or(String::new(), |i| i.name.clone()),
            n.map_or(String::new(), |i| i.name.clone()),
            rule.to_string(),
            b.map_or(String::new(), |i| i.op_name.clone()),
            n.map_or(String::new(), |i| i.op_name.clone()),
            b.map_or(String::new(), |i| i.shape.clone()),
            n.map_or(String::new(), |i| i.shape.clone()),
            b.and_then(|i| i.source.clone()).unwrap_or_default(),
            n.and_then(|i| i.source.clone()).unwrap_or_default(),
        ]);
    }
    csv.finish()
}

/// The Compare view's live bytes at the two peaks grouped by `key` (`op_name` or
/// `source_line`), as differences: every group, not only those shown.
pub fn group_deltas_csv(rows: &[GroupDelta], key: &str) -> String {
    let mut csv = Csv::new(&[
        "change_bytes",
        "base_bytes",
        "base_values",
        "new_bytes",
        "new_values",
        key,
    ]);
    for d in rows {
        csv.row([
            d.delta_bytes.to_string(),
            d.base_bytes.to_string(),
            d.base_values.to_string(),
            d.new_bytes.to_string(),
            d.new_values.to_string(),
            d.key.clone(),
        ]);
    }
    csv.finish()
}

/// The name of a downloaded file: the module's name and `parts`, joined by `-`, each
/// reduced to letters, digits, `.`, `_` (anything else becomes `_`, runs of it one), then
/// `.ext`. `module-space0-default.png`, `module-live-step42.csv`.
pub fn file_name(module: &str, parts: &[&str], ext: &str) -> String {
    let clean = |s: &str| {
        let mut out = String::new();
        for c in s.chars() {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                out.push(c);
            } else if !out.ends_with('_') {
                out.push('_');
            }
        }
        out.trim_matches(['_', '.']).to_string()
    };
    let mut name = clean(module);
    if name.is_empty() {
        name.push_str("module");
    }
    for p in parts.iter().map(|p| clean(p)).filter(|p| !p.is_empty()) {
        name.push('-');
        name.push_str(&p);
    }
    name.truncate(200);
    format!("{name}.{ext}")
}

#[cfg(test)]
mod tests;
