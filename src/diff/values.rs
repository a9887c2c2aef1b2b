//! The values live at each side's peak, matched across the two and classified.
//!
//! **Matching.** Six rules, in order; each value is matched at most once, and a rule only
//! sees the values the rules before it left. They pair by what survives a recompile for
//! another target (H100 vs A100, v5e vs v6e), where XLA numbers its instructions anew
//! (`fusion.12` is `fusion.15` there) and fuses differently:
//! 1. [`MatchRule::OpNameShape`]: same op_name (not empty) and same shape;
//! 2. [`MatchRule::Parameter`]: the same entry parameter (number and shape index), any shape;
//! 3. [`MatchRule::SourceShape`]: same source `file:line` and same shape: printed, resolved
//!    from a stack frame, or inferred through the HLO text ([`query::source_location`]);
//! 4. [`MatchRule::Name`]: same value name, `instruction{index}` as XLA prints it, and same
//!    shape, unless the names are trusted: when nine in ten of the pairs of rule 1 have the
//!    same name on both sides (the numbering did not shift), the name alone;
//! 5. [`MatchRule::RoleShape`]: same role ([`crate::analysis::ValueKind`]: temporary,
//!    output, …) and same shape, for the values no metadata names (`copy-start.14{0}`,
//!    `convert.75`);
//! 6. [`MatchRule::TupleTable`]: a tuple's table of pointers (a tuple-shaped value, 512 B
//!    on v5e, 32 B on v6e, whose elements each target lays out its own way:
//!    `(f32[8,1024,8,64])` is `(s8[16777216])` there): same role, opcode, shape index and
//!    number of elements.
//!
//! Shapes are compared without their layouts (`f32[8,128]{1,0}` → `f32[8,128]`), so a value
//! whose layout or padding changed is still matched, and shows as grown or shrunk. Source
//! files are compared from the package root: everything up to the last `site-packages/` or
//! `dist-packages/` is dropped, so the same library in two virtual environments matches.
//!
//! **Several values with one key** (a scan's layers, or one op_name and shape computed at
//! several places of the program): both sides' values of the key are ordered by relative program position of their
//! live range's start (`start / steps`), then by size (largest first), then by value id,
//! and paired in that order, the first with the first; what is left over on the longer side
//! goes on to the next rule.
//!
//! **Classes.** A matched pair is grown, shrunk or unchanged by its allocated sizes
//! ([`crate::model::Value::size`]); a value of the base's peak without a partner is gone, one
//! of the new peak's is new. Each class is sorted by the size of its change (the size
//! itself for new, gone and unchanged), largest first, then by name.
//!
//! **Found on one side only** ([`one_side`]): the same rules over every value of a memory
//! space, wherever it is live, not only at the peaks; what is left unmatched on each side.
//!
//! **Totals.** With `B` and `N` the sums of the sizes of the values live at each peak (each
//! value counted once, aliases each time, unlike the occupied bytes):
//! `new − gone + grown − shrunk = N − B`, where `grown` and `shrunk` sum the absolute size
//! differences of their pairs ([`ChangeTotals`]).

use std::cmp::Reverse;

use hashbrown::HashMap;
use serde::Serialize;

use crate::analysis::{value_kind, ValueKind};
use crate::model::{Module, Value};
use crate::query;

use super::curves::signed_delta;
use super::Side;

/// Which rule matched a pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchRule {
    OpNameShape,
    Parameter,
    SourceShape,
    Name,
    RoleShape,
    TupleTable,
}

impl MatchRule {
    /// The rule as the Compare view and its CSV name it.
    pub fn label(self) -> &'static str {
        match self {
            MatchRule::OpNameShape => "op_name + shape",
            MatchRule::Parameter => "parameter",
            MatchRule::SourceShape => "source line + shape",
            MatchRule::Name => "name",
            MatchRule::RoleShape => "role + shape",
            MatchRule::TupleTable => "tuple table",
        }
    }
}

/// One value as the diff shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ValueInfo {
    /// Position in its module's [`Module::values`].
    pub value: u32,
    /// `instruction{index}`.
    pub name: String,
    pub op_name: String,
    /// As printed, with the layout.
    pub shape: String,
    /// `file:line` as the dump printed it; `None` when it had none.
    pub source: Option<String>,
    /// Allocated size.
    pub bytes: u64,
    /// What the value is ([`crate::analysis::ValueKind::label`]: `temporary`,
    /// `custom-call scratch`, …).
    pub kind: &'static str,
}

/// One row of a class: a matched pair, or a value on one side only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ValueChange {
    /// `None` for new and gone values.
    pub rule: Option<MatchRule>,
    pub base: Option<ValueInfo>,
    pub new: Option<ValueInfo>,
    /// New bytes minus base bytes (a missing side counts 0).
    pub delta_bytes: i64,
}

/// Sums over the classes; see the module doc for the identity they keep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ChangeTotals {
    /// Sum of the sizes of the values live at each peak.
    pub base_live_value_bytes: u64,
    pub new_live_value_bytes: u64,
    pub new_bytes: u64,
    pub gone_bytes: u64,
    /// Sum of `new - base` over grown pairs.
    pub grown_bytes: u64,
    /// Sum of `base - new` over shrunk pairs.
    pub shrunk_bytes: u64,
    /// Sum of the sizes of unchanged pairs (one side).
    pub unchanged_bytes: u64,
}

/// The values at the two peaks of one memory space, matched and classified.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PeakChanges {
    pub new: Vec<ValueChange>,
    pub gone: Vec<ValueChange>,
    pub grown: Vec<ValueChange>,
    pub shrunk: Vec<ValueChange>,
    pub unchanged: Vec<ValueChange>,
    pub totals: ChangeTotals,
}

impl PeakChanges {
    /// The `n` largest changes of any class but unchanged: by absolute `delta_bytes`, then
    /// by name (the rows a table of "what changed at the peak" shows first).
    pub fn largest(&self, n: usize) -> Vec<&ValueChange> {
        let mut all: Vec<&ValueChange> = self
            .new
            .iter()
            .chain(&self.gone)
            .chain(&self.grown)
            .chain(&self.shrunk)
            .collect();
        all.sort_by(|a, b| {
            b.delta_bytes
                .unsigned_abs()
                .cmp(&a.delta_bytes.unsigned_abs())
                .then_with(|| a.name().cmp(b.name()))
        });
        all.truncate(n);
        all
    }
}

impl ValueChange {
    /// The base side's value name, else the new side's.
    pub fn name(&self) -> &str {
        self.base
            .as_ref()
            .or(self.new.as_ref())
            .map_or("", |i| i.name.as_str())
    }
}

/// `shape` without the layouts (`{...}` after a `]`), tuples included.
pub fn shape_without_layout(shape: &str) -> String {
    let mut out = String::with_capacity(shape.len());
    let mut depth = 0u32;
    let mut prev = ' ';
    for c in shape.chars() {
        if depth > 0 {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
        } else if c == '{' && prev == ']' {
            depth = 1;
        } else {
            out.push(c);
            prev = c;
        }
    }
    out
}

/// `file` from the package root: everything up to the last `site-packages/` or
/// `dist-packages/` dropped.
fn package_relative(file: &str) -> &str {
    let root = ["site-packages/", "dist-packages/"]
        .iter()
        .filter_map(|m| file.rfind(m).map(|at| at + m.len()))
        .max()
        .unwrap_or(0);
    &file[root..]
}

/// `file:line` (`file` without a line) from the package root.
fn file_line(file: &str, line: u32) -> String {
    match line {
        0 => package_relative(file).to_string(),
        line => format!("{}:{line}", package_relative(file)),
    }
}

/// The source `file:line` of a value's instruction as the dump printed it, from the package
/// root (see the module doc); `None` without a source file.
pub fn source_key(module: &Module, v: &Value) -> Option<String> {
    let i = module.instructions.get(v.instruction as usize)?;
    let file = module.str(i.source_file);
    (!file.is_empty()).then(|| file_line(file, i.source_line))
}

/// The source a value is matched by (rule 3): printed, resolved or inferred.
fn match_source(module: &Module, v: &Value) -> Option<String> {
    match query::source_location(module, v)? {
        query::SourceLocation::File { file, line, .. } => Some(file_line(file, line)),
        query::SourceLocation::StackFrame(_) => None,
    }
}

/// A value and its order within a key.
struct Ordered {
    value: u32,
    /// Live range start over steps, as a fraction with a common scale.
    position: u64,
    size: u64,
    id: u32,
}

/// The values that are the module's, in the order of the module doc.
fn ordered(side: &Side, values: &[u32]) -> Vec<Ordered> {
    let m = side.module;
    let steps = u64::from(side.analysis.steps.max(1));
    let mut out: Vec<Ordered> = values
        .iter()
        .filter_map(|&x| {
            let v = m.values.get(x as usize)?;
            Some(Ordered {
                value: x,
                // Relative start on a scale of 2^32, so both sides compare alike.
                position: (u64::from(v.live.map_or(0, |r| r.start)) << 32) / steps,
                size: v.size,
                id: v.id,
            })
        })
        .collect();
    out.sort_by_key(|o| (o.position, Reverse(o.size), o.id));
    out
}

/// A value's key under `rule` (`None`: the rule does not apply to it); `names_trusted`:
/// rule 4 takes the name alone. Computed only for the values the rules before left, which
/// are few once op_names match.
fn key(m: &Module, x: u32, rule: MatchRule, names_trusted: bool) -> Option<String> {
    let v = &m.values[x as usize];
    let shape = || shape_without_layout(m.str(v.shape));
    match rule {
        MatchRule::OpNameShape => {
            let op = query::op_name(m, v);
            (!op.is_empty()).then(|| format!("{op}\u{0}{}", shape()))
        }
        MatchRule::Parameter => {
            let p = m.allocation_of(v).parameter.as_ref()?;
            (value_kind(m, v) == ValueKind::Parameter)
                .then(|| format!("{}\u{0}{}", p.number, m.str(p.shape_index)))
        }
        MatchRule::SourceShape => match_source(m, v).map(|s| format!("{s}\u{0}{}", shape())),
        MatchRule::Name if names_trusted => Some(m.value_name(v)),
        MatchRule::Name => Some(format!("{}\u{0}{}", m.value_name(v), shape())),
        MatchRule::RoleShape => Some(format!("{}\u{0}{}", value_kind(m, v).label(), shape())),
        MatchRule::TupleTable => {
            let elements = crate::shape::tuple_elements(m.str(v.shape))?.len();
            let opcode = m.instructions.get(v.instruction as usize).map_or("", |i| m.str(i.opcode));
            let index = m.str(v.index);
            Some(format!("{}\u{0}{opcode}\u{0}{index}\u{0}{elements}", value_kind(m, v).label()))
        }
    }
}

/// Whether the two sides number their instructions alike: nine in ten of the pairs found
/// by op_name and shape have one name (and there are such pairs).
fn names_trusted(base: &Module, new: &Module, pairs: &[(u32, u32, MatchRule)]) -> bool {
    let same = pairs
        .iter()
        .filter(|(b, n, _)| base.value_name(&base.values[*b as usize]) == new.value_name(&new.values[*n as usize]))
        .count();
    !pairs.is_empty() && same * 10 >= pairs.len() * 9
}

/// What [`match_values`] found: values as indices into each module's values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Matching {
    /// `(base value, new value, rule)`, in the order the rules found them.
    pub pairs: Vec<(u32, u32, MatchRule)>,
    /// Values of the base without a partner.
    pub base_only: Vec<u32>,
    /// Values of the new side without a partner.
    pub new_only: Vec<u32>,
}

/// Matches the two sides' values (indices into each module's values; those that are not
/// the module's are passed over) by the six rules of the module doc.
pub fn match_values(base: &Side, base_values: &[u32], new: &Side, new_values: &[u32]) -> Matching {
    let (mut b_left, mut n_left) = (ordered(base, base_values), ordered(new, new_values));
    let mut pairs = Vec::new();
    let rules = [
        MatchRule::OpNameShape,
        MatchRule::Parameter,
        MatchRule::SourceShape,
        MatchRule::Name,
        MatchRule::RoleShape,
        MatchRule::TupleTable,
    ];
    let mut trusted = false;
    for rule in rules {
        if rule == MatchRule::Parameter {
            trusted = names_trusted(base.module, new.module, &pairs);
        }
        // Each key's base values, in order; taken from the front as new values claim them.
        let b_keys: Vec<Option<String>> = b_left
            .iter()
            .map(|o| key(base.module, o.value, rule, trusted))
            .collect();
        let mut by_key: HashMap<&str, (usize, Vec<usize>)> = HashMap::new();
        for (i, k) in b_keys.iter().enumerate() {
            if let Some(k) = k {
                by_key.entry(k.as_str()).or_default().1.push(i);
            }
        }
        let mut b_taken = vec![false; b_left.len()];
        let mut n_rest = Vec::with_capacity(n_left.len());
        for o in n_left {
            let claimed = key(new.module, o.value, rule, trusted).and_then(|k| {
                let (next, list) = by_key.get_mut(k.as_str())?;
                let i = *list.get(*next)?;
                *next += 1;
                Some(i)
            });
            match claimed {
                Some(i) => {
                    b_taken[i] = true;
                    pairs.push((b_left[i].value, o.value, rule));
                }
                None => n_rest.push(o),
            }
        }
        let mut taken = b_taken.into_iter();
        b_left.retain(|_| !taken.next().unwrap_or(false));
        n_left = n_rest;
    }
    Matching {
        pairs,
        base_only: b_left.iter().map(|o| o.value).collect(),
        new_only: n_left.iter().map(|o| o.value).collect(),
    }
}

fn info(side: &Side, x: u32) -> ValueInfo {
    let m = side.module;
    let v = &m.values[x as usize];
    ValueInfo {
        value: x,
        name: m.value_name(v),
        op_name: query::op_name(m, v).to_string(),
        shape: m.str(v.shape).to_string(),
        source: query::source(m, v),
        bytes: v.size,
        kind: value_kind(m, v).label(),
    }
}

/// The values of one memory space found on one side only: every value of the space on
/// either side (live at the peak or not, drawn or thread-local), matched by the six rules
/// of the module doc; what is left unmatched on each side, largest first, then by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OneSide {
    pub base_only: Vec<ValueInfo>,
    pub new_only: Vec<ValueInfo>,
    /// Sums of their sizes.
    pub base_only_bytes: u64,
    pub new_only_bytes: u64,
}

/// [`OneSide`] for memory space `color` of the two sides.
pub fn one_side(base: &Side, new: &Side, color: u32) -> OneSide {
    let all = |side: &Side| -> Vec<u32> {
        (side.analysis.space(color)).map_or(Vec::new(), |s| {
            let mut v: Vec<u32> = s.timed.iter().chain(&s.timeless).copied().collect();
            v.sort_unstable();
            v
        })
    };
    let m = match_values(base, &all(base), new, &all(new));
    let listed = |side: &Side, xs: &[u32]| {
        let mut rows: Vec<ValueInfo> = xs.iter().map(|&x| info(side, x)).collect();
        rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
        let bytes = rows.iter().fold(0u64, |s, r| s.saturating_add(r.bytes));
        (rows, bytes)
    };
    let (base_only, base_only_bytes) = listed(base, &m.base_only);
    let (new_only, new_only_bytes) = listed(new, &m.new_only);
    OneSide {
        base_only,
        new_only,
        base_only_bytes,
        new_only_bytes,
    }
}

/// Matches and classifies the values live at the two peaks.
pub fn peak_changes(base: &Side, base_live: &[u32], new: &Side, new_live: &[u32]) -> PeakChanges {
    // Indices that are not the module's are dropped, as `keyed` drops them.
    let valid = |side: &Side, xs: &[u32]| -> Vec<u32> {
        xs.iter()
            .copied()
            .filter(|&x| (x as usize) < side.module.values.len())
            .collect()
    };
    let (base_live, new_live) = (valid(base, base_live), valid(new, new_live));
    let Matching {
        pairs,
        base_only: gone,
        new_only,
    } = match_values(base, &base_live, new, &new_live);
    let mut out = PeakChanges::default();
    let t = &mut out.totals;
    let size = |side: &Side, x: u32| side.module.values[x as usize].size;
    t.base_live_value_bytes = base_live
        .iter()
        .fold(0u64, |s, &x| s.saturating_add(size(base, x)));
    t.new_live_value_bytes = new_live
        .iter()
        .fold(0u64, |s, &x| s.saturating_add(size(new, x)));
    for (bx, nx, rule) in pairs {
        let (bs, ns) = (size(base, bx), size(new, nx));
        let change = ValueChange {
            rule: Some(rule),
            base: Some(info(base, bx)),
            new: Some(info(new, nx)),
            delta_bytes: signed_delta(bs, ns),
        };
        if ns > bs {
            t.grown_bytes = t.grown_bytes.saturating_add(ns - bs);
            out.grown.push(change);
        } else if ns < bs {
            t.shrunk_bytes = t.shrunk_bytes.saturating_add(bs - ns);
            out.shrunk.push(change);
        } else {
            t.unchanged_bytes = t.unchanged_bytes.saturating_add(bs);
            out.unchanged.push(change);
        }
    }
    for x in gone {
        let i = info(base, x);
        t.gone_bytes = t.gone_bytes.saturating_add(i.bytes);
        out.gone.push(ValueChange {
            rule: None,
            delta_bytes: signed_delta(i.bytes, 0),
            base: Some(i),
            new: None,
        });
    }
    for x in new_only {
        let i = info(new, x);
        t.new_bytes = t.new_bytes.saturating_add(i.bytes);
        out.new.push(ValueChange {
            rule: None,
            delta_bytes: signed_delta(0, i.bytes),
            base: None,
            new: Some(i),
        });
    }
    for (class, by_delta) in [
        (&mut out.new, true),
        (&mut out.gone, true),
        (&mut out.grown, true),
        (&mut out.shrunk, true),
        (&mut out.unchanged, false),
    ] {
        sort_class(class, by_delta);
    }
    out
}

/// Largest change first (the size itself when `by_delta` is false), then by name.
fn sort_class(class: &mut [ValueChange], by_delta: bool) {
    let magnitude = |c: &ValueChange| {
        if by_delta {
            c.delta_bytes.unsigned_abs()
        } else {
            c.base.as_ref().map_or(0, |i| i.bytes)
        }
    };
    class.sort_by_cached_key(|c| (Reverse(magnitude(c)), c.name().to_string()));
}

#[cfg(test)]
mod tests {
    use super::shape_without_layout;

    #[test]
    fn layouts_dropped() {
        assert_eq!(shape_without_layout("f32[8,128]{1,0}"), "f32[8,128]");
        assert_eq!(
            shape_without_layout("f32[64,64]{1,0:T(8,128)}"),
            "f32[64,64]"
        );
        assert_eq!(
            shape_without_layout("(s32[], f32[8]{0}, (u8[2]{0}))"),
            "(s32[], f32[8], (u8[2]))"
        );
        assert_eq!(shape_without_layout("f32[]"), "f32[]");
        assert_eq!(shape_without_layout("{1}"), "{1}");
    }
}
