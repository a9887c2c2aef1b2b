//! Queries over a module's values for the views: the search (a regular expression over value
//! names, op_names and shapes), sorting value rows by a column, grouping them by op_name, and the
//! few derived figures and texts the panels show (padding, source location, totals of value
//! sizes and of XLA's peak list, hexadecimal offsets, the instruction at a step).
//!
//! Owns: pure functions of a [`Module`]; no I/O, no web dependency, no state. The browser's
//! panels call them; they are tested natively here.

use std::cmp::Ordering;

use regex_lite::{Regex, RegexBuilder};

use crate::analysis::value_kind;
use crate::model::{Module, Str, Value, XlaPeak};

mod instruction;
mod nearest;
mod source;
pub use instruction::{
    display_name, instruction_view, operand_value, parameter_path, role_key, shorten, Attribute,
    InstructionView, Operand, ATTR_CHARS,
};
pub use nearest::{nearest_source, Nearest};
pub use source::{
    fold_library, is_library_file, nearest_of, source, source_location, source_stack,
    SourceLocation, StackRow, INFERRED, NEEDS_HLO,
};

// ---------------------------------------------------------------- search

/// A compiled search pattern. A pattern with no regex syntax is searched as plain text,
/// which is several times faster than the regex engine on the largest dumps.
#[derive(Clone, Debug)]
pub enum Matcher {
    /// A literal; `fold`: compare ASCII letters case-insensitively (the needle is lower-case).
    Literal {
        needle: String,
        fold: bool,
    },
    Regex(Regex),
}

impl Matcher {
    pub fn is_match(&self, haystack: &str) -> bool {
        match self {
            Matcher::Literal {
                needle,
                fold: false,
            } => memchr::memmem::find(haystack.as_bytes(), needle.as_bytes()).is_some(),
            Matcher::Literal { needle, fold: true } => {
                let n = needle.as_bytes();
                n.is_empty()
                    || haystack
                        .as_bytes()
                        .windows(n.len())
                        .any(|w| w.eq_ignore_ascii_case(n))
            }
            Matcher::Regex(re) => re.is_match(haystack),
        }
    }
}

/// Compiles the search box's pattern. Smart case, as in ripgrep: case-insensitive unless the
/// pattern has an upper-case letter. The error is one line, for showing inline.
pub fn compile(pattern: &str) -> Result<Matcher, String> {
    let insensitive = !pattern.chars().any(char::is_uppercase);
    let literal = !pattern.chars().any(|c| "\\.+*?()|[]{}^$".contains(c));
    if literal && (pattern.is_ascii() || !insensitive) {
        return Ok(Matcher::Literal {
            needle: if insensitive {
                pattern.to_ascii_lowercase()
            } else {
                pattern.to_string()
            },
            fold: insensitive,
        });
    }
    RegexBuilder::new(pattern)
        .case_insensitive(insensitive)
        // Patterns are typed by hand: bound what one may cost to build.
        .size_limit(1 << 20)
        .nest_limit(64)
        .build()
        .map(Matcher::Regex)
        .map_err(|e| {
            let text = e.to_string();
            // regex-lite's messages can span lines (pattern, caret, reason): keep the reason.
            text.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map_or_else(
                    || "invalid regular expression".to_string(),
                    |l| l.trim().to_string(),
                )
        })
}

/// A field of a value the search looks in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    OpName,
    /// `instruction{index}`, as XLA prints it.
    Name,
    /// The shape with its layout, as printed (`bf16[8,8,1024,1024]{3,2,1,0:T(8,128)(2,1)}`).
    Shape,
    /// The source location, `file:line function` ([`source_location`], a stack frame
    /// resolved through the HLO text).
    Source,
    /// A parameter's pytree path ([`parameter_path`]).
    Path,
}

impl Field {
    /// In the order a value's fields are tried.
    pub const ALL: [Field; 5] = [Field::OpName, Field::Name, Field::Shape, Field::Source, Field::Path];

    pub fn label(self) -> &'static str {
        match self {
            Field::OpName => "op_name",
            Field::Name => "name",
            Field::Shape => "shape",
            Field::Source => "source",
            Field::Path => "path",
        }
    }
}

/// What a search found: the values, and how many of them each field matched first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Matches {
    /// Indices into [`Module::values`], ascending.
    pub values: Vec<u32>,
    /// Per field of [`Field::ALL`], the values it matched (the first field tried that
    /// matches counts).
    pub by_field: [u32; 5],
}

impl Matches {
    /// "op_name 3 · shape 40": the fields that matched, with their counts.
    pub fn fields_text(&self) -> String {
        (Field::ALL.iter().zip(self.by_field))
            .filter(|&(_, n)| n > 0)
            .map(|(f, n)| format!("{} {n}", f.label()))
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// "op_name, shape": the fields that matched, without their counts.
    pub fn fields_short(&self) -> String {
        (Field::ALL.iter().zip(self.by_field))
            .filter(|&(_, n)| n > 0)
            .map(|(f, _)| f.label())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The values whose instruction's op_name, whose name (`name{index}`, as XLA prints it),
/// whose shape (as printed, layout included), whose source location (`file:line function`)
/// or whose pytree path as a parameter matches `re`, tried in that order. Each distinct
/// op_name, shape and source is tried once, however many values share it.
pub fn matching_fields(module: &Module, re: &Matcher) -> Matches {
    // op_names and shapes are interned and shared by many values: try each distinct one once.
    let mut by_op: hashbrown::HashMap<Str, bool> = hashbrown::HashMap::new();
    let mut by_shape: hashbrown::HashMap<Str, bool> = hashbrown::HashMap::new();
    let mut by_source: hashbrown::HashMap<(Str, u32, Option<u32>), bool> = hashbrown::HashMap::new();
    let mut name = String::new();
    let mut out = Matches::default();
    for (i, v) in module.values.iter().enumerate() {
        let Some(instr) = module.instructions.get(v.instruction as usize) else {
            continue;
        };
        let op_match = !instr.op_name.is_empty()
            && *by_op
                .entry(instr.op_name)
                .or_insert_with(|| re.is_match(module.str(instr.op_name)));
        let mut field = if op_match {
            Some(Field::OpName)
        } else {
            name.clear();
            name.push_str(module.str(instr.name));
            name.push_str(module.str(v.index));
            if re.is_match(&name) {
                Some(Field::Name)
            } else {
                let shape = *by_shape
                    .entry(v.shape)
                    .or_insert_with(|| re.is_match(module.str(v.shape)));
                shape.then_some(Field::Shape)
            }
        };
        if field.is_none() {
            let key = (instr.source_file, instr.source_line, instr.stack_frame_id);
            let source_match = (!instr.source_file.is_empty() || instr.stack_frame_id.is_some())
                && *by_source.entry(key).or_insert_with(|| match source_location(module, v) {
                    Some(SourceLocation::File { file, line, function, .. }) => {
                        re.is_match(&format!("{file}:{line} {function}"))
                    }
                    _ => false,
                });
            let path_match = || {
                value_kind(module, v) == crate::analysis::ValueKind::Parameter
                    && parameter_path(module, v).is_some_and(|p| re.is_match(p))
            };
            field = if source_match {
                Some(Field::Source)
            } else {
                path_match().then_some(Field::Path)
            };
        }
        if let Some(f) = field {
            out.values.push(i as u32);
            out.by_field[f as usize] += 1;
        }
    }
    out
}

/// The values [`matching_fields`] finds.
pub fn matching_values(module: &Module, re: &Matcher) -> Vec<u32> {
    matching_fields(module, re).values
}

/// [`compile`] then [`matching_values`]; an empty pattern matches nothing.
pub fn search(module: &Module, pattern: &str) -> Result<Vec<u32>, String> {
    search_fields(module, pattern).map(|m| m.values)
}

/// [`compile`] then [`matching_fields`]; an empty pattern matches nothing.
pub fn search_fields(module: &Module, pattern: &str) -> Result<Matches, String> {
    if pattern.is_empty() {
        return Ok(Matches::default());
    }
    compile(pattern).map(|re| matching_fields(module, &re))
}

/// The first value XLA names `name` (`name{index}`, [`Module::value_name`]), without
/// building every name.
pub fn value_named(module: &Module, name: &str) -> Option<u32> {
    let at = module.values.iter().position(|v| {
        module
            .instructions
            .get(v.instruction as usize)
            .and_then(|i| name.strip_prefix(module.str(i.name)))
            .is_some_and(|rest| rest == module.str(v.index))
    })?;
    u32::try_from(at).ok()
}

// ---------------------------------------------------------------- derived texts

/// Allocated size minus logical size; `None` when the logical size is unknown or larger.
pub fn padding(v: &Value) -> Option<u64> {
    v.logical_size.and_then(|l| v.size.checked_sub(l))
}

/// The op_name of the value's instruction (empty when the dump had none).
pub fn op_name<'m>(module: &'m Module, v: &Value) -> &'m str {
    module
        .instructions
        .get(v.instruction as usize)
        .map_or("", |i| module.str(i.op_name))
}

/// `0x` and lower-case hexadecimal digits.
pub fn hex(n: u64) -> String {
    format!("{n:#x}")
}

/// The name of the instruction the schedule runs at `step`; `None` past its end (XLA's
/// `max` is a virtual step after the last instruction) or without a schedule.
pub fn instruction_at(module: &Module, step: u32) -> Option<&str> {
    let schedule = module.schedule.as_ref()?;
    let id = *schedule.sequence.get(step as usize)?;
    module
        .instructions
        .get(id as usize)
        .map(|i| module.str(i.name))
}

// ---------------------------------------------------------------- totals

/// Sum of the allocated sizes of `values` (indices into [`Module::values`]; others are
/// skipped), saturating: the "their sizes add to" figure beside the occupied bytes, in
/// which aliases count once each.
pub fn total_size(module: &Module, values: &[u32]) -> u64 {
    values
        .iter()
        .filter_map(|&v| module.values.get(v as usize))
        .fold(0u64, |t, v| t.saturating_add(v.size))
}

/// The bytes of XLA's own peak list (`Live ranges at N (peak):`): the sum of its entries,
/// saturating.
pub fn xla_peak_bytes(peak: &XlaPeak) -> u64 {
    peak.entries
        .iter()
        .fold(0u64, |t, e| t.saturating_add(e.bytes))
}

// ---------------------------------------------------------------- sorting

/// A column of the value tables, as far as sorting and grouping need it (what the page calls
/// a column is the UI's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Column {
    Name,
    Size,
    Logical,
    Padding,
    Shape,
    OpName,
    Source,
    Kind,
}

impl Column {
    pub const ALL: [Column; 8] = [
        Column::Name,
        Column::Size,
        Column::Logical,
        Column::Padding,
        Column::Shape,
        Column::OpName,
        Column::Source,
        Column::Kind,
    ];

    pub fn is_numeric(self) -> bool {
        matches!(self, Column::Size | Column::Logical | Column::Padding)
    }

    /// The direction of a first click: numbers largest first, text A to Z.
    pub fn default_descending(self) -> bool {
        self.is_numeric()
    }
}

/// Compares two values by `column` in ascending order. Unknown numbers and empty texts
/// compare as `None`, which callers keep last in both directions.
fn compare(module: &Module, column: Column, a: &Value, b: &Value) -> Option<Ordering> {
    fn opt<T: Ord>(a: Option<T>, b: Option<T>) -> Option<Ordering> {
        match (a, b) {
            (Some(a), Some(b)) => Some(a.cmp(&b)),
            _ => None,
        }
    }
    fn text(a: &str, b: &str) -> Option<Ordering> {
        opt((!a.is_empty()).then_some(a), (!b.is_empty()).then_some(b))
    }
    match column {
        Column::Name => {
            let (ia, ib) = (module.instruction(a), module.instruction(b));
            Some(
                module
                    .str(ia.name)
                    .cmp(module.str(ib.name))
                    .then_with(|| module.str(a.index).cmp(module.str(b.index))),
            )
        }
        Column::Size => Some(a.size.cmp(&b.size)),
        Column::Logical => opt(a.logical_size, b.logical_size),
        Column::Padding => opt(padding(a), padding(b)),
        Column::Shape => text(module.str(a.shape), module.str(b.shape)),
        Column::OpName => text(op_name(module, a), op_name(module, b)),
        Column::Source => opt(source_location(module, a), source_location(module, b)),
        Column::Kind => Some(value_kind(module, a).cmp(&value_kind(module, b))),
    }
}

/// Orders a cell comparison for a sort in either direction, unknowns last.
fn directed(ord: Option<Ordering>, known: (bool, bool), descending: bool) -> Ordering {
    match (known, ord) {
        (_, Some(o)) if descending => o.reverse(),
        (_, Some(o)) => o,
        ((true, false), None) => Ordering::Less,
        ((false, true), None) => Ordering::Greater,
        _ => Ordering::Equal,
    }
}

fn known(module: &Module, column: Column, v: &Value) -> bool {
    match column {
        Column::Logical => v.logical_size.is_some(),
        Column::Padding => padding(v).is_some(),
        Column::Shape => !v.shape.is_empty(),
        Column::OpName => !op_name(module, v).is_empty(),
        Column::Source => source_location(module, v).is_some(),
        Column::Name | Column::Size | Column::Kind => true,
    }
}

/// Sorts value indices by `column`; ties by size (largest first), then by value order, so
/// the order is total and stable. Values with no figure for the column come last, and so do
/// indices that are not the module's (which callers never pass).
pub fn sort_values(module: &Module, values: &mut [u32], column: Column, descending: bool) {
    values.sort_by(|&x, &y| {
        let (a, b) = match (module.values.get(x as usize), module.values.get(y as usize)) {
            (Some(a), Some(b)) => (a, b),
            (a, b) => return a.is_none().cmp(&b.is_none()).then(x.cmp(&y)),
        };
        let primary = directed(
            compare(module, column, a, b),
            (known(module, column, a), known(module, column, b)),
            descending,
        );
        primary
            .then_with(|| b.size.cmp(&a.size))
            .then_with(|| x.cmp(&y))
    });
}

// ---------------------------------------------------------------- grouping

/// Values sharing one op_name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Empty for the values whose instruction has no op_name.
    pub op_name: Str,
    /// Sum of the allocated sizes.
    pub total: u64,
    /// Sum of the logical sizes where known.
    pub logical: u64,
    /// Members, in the order they were given.
    pub values: Vec<u32>,
}

impl Group {
    /// Sum of the allocated sizes minus sum of the known logical sizes (0 if larger).
    pub fn padding(&self) -> u64 {
        self.total.saturating_sub(self.logical)
    }
}

/// Groups `values` by op_name, keeping their order within each group. Groups come largest
/// total first (then by op_name), the group without op_name last.
pub fn group_by_op_name(module: &Module, values: &[u32]) -> Vec<Group> {
    let mut index: hashbrown::HashMap<Str, usize> = hashbrown::HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    for &x in values {
        let Some(v) = module.values.get(x as usize) else {
            continue;
        };
        let op = module
            .instructions
            .get(v.instruction as usize)
            .map_or(Str::EMPTY, |i| i.op_name);
        let g = *index.entry(op).or_insert_with(|| {
            groups.push(Group {
                op_name: op,
                total: 0,
                logical: 0,
                values: Vec::new(),
            });
            groups.len() - 1
        });
        let group = &mut groups[g];
        group.total = group.total.saturating_add(v.size);
        group.logical = group.logical.saturating_add(v.logical_size.unwrap_or(0));
        group.values.push(x);
    }
    sort_groups(module, &mut groups, Column::Size, true);
    groups
}

/// Orders groups by a column: op_name by name, the numeric columns by their sums, any other
/// column by the member count; ties largest total first. The group without op_name stays last.
pub fn sort_groups(module: &Module, groups: &mut [Group], column: Column, descending: bool) {
    groups.sort_by(|a, b| {
        let unnamed = a.op_name.is_empty().cmp(&b.op_name.is_empty());
        let primary = match column {
            Column::OpName => module.str(a.op_name).cmp(module.str(b.op_name)),
            Column::Size => a.total.cmp(&b.total),
            Column::Logical => a.logical.cmp(&b.logical),
            Column::Padding => a.padding().cmp(&b.padding()),
            _ => a.values.len().cmp(&b.values.len()),
        };
        let primary = if descending {
            primary.reverse()
        } else {
            primary
        };
        unnamed
            .then(primary)
            .then_with(|| b.total.cmp(&a.total))
            .then_with(|| module.str(a.op_name).cmp(module.str(b.op_name)))
    });
}

// ---------------------------------------------------------------- table rows

/// Keeps the values found in `only` (sorted ascending, as [`OpNode::all_values`] and a
/// search's matches are), in their order: the live set limited to an icicle frame's values.
///
/// [`OpNode::all_values`]: crate::answers::groups::OpNode::all_values
pub fn keep_only(values: &mut Vec<u32>, only: &[u32]) {
    values.retain(|v| only.binary_search(v).is_ok());
}

/// One line of a value table, as a list of lines shows it: a value, a value inside an
/// opened group, or a group (an index into the groups).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TableRow {
    Value(u32),
    Member(u32),
    Group(u32),
}

impl TableRow {
    /// The value of a value's line (`None` for a group's).
    pub fn value(self) -> Option<u32> {
        match self {
            TableRow::Value(v) | TableRow::Member(v) => Some(v),
            TableRow::Group(_) => None,
        }
    }
}

/// The lines of a grouped table: each group, followed by its members when `open(group)`.
pub fn flatten_groups(groups: &[Group], open: impl Fn(&Group) -> bool) -> Vec<TableRow> {
    let mut rows = Vec::with_capacity(groups.len());
    for (i, g) in groups.iter().enumerate() {
        rows.push(TableRow::Group(i as u32));
        if open(g) {
            rows.extend(g.values.iter().map(|&v| TableRow::Member(v)));
        }
    }
    rows
}

/// The line of a value `steps` value lines after (negative: before) the line of `from`,
/// stopping at the first and last value lines; group lines are skipped. Without `from` (or
/// when it has no line), the first value line going down and the last going up.
pub fn step_value(rows: &[TableRow], from: Option<u32>, steps: isize) -> Option<usize> {
    let lines: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].value().is_some())
        .collect();
    let last = lines.len().checked_sub(1)?;
    let at = from.and_then(|v| lines.iter().position(|&i| rows[i].value() == Some(v)));
    let to = match at {
        Some(at) => at.saturating_add_signed(steps).min(last),
        None if steps < 0 => last,
        None => 0,
    };
    Some(lines[to])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;
    use crate::load_files;

    const TPU: &[u8] = include_bytes!("../tests/fixtures/tpu/000_0cb419b3147a3cb6.txt");

    fn tpu() -> Module {
        let mut load = load_files([("000_0cb419b3147a3cb6.txt", TPU)]);
        assert_eq!(load.modules.len(), 1);
        load.modules.remove(0)
    }

    /// The index of the value XLA names `name` (`name{index}`).
    fn find(m: &Module, name: &str) -> u32 {
        let at = m.values.iter().position(|v| m.value_name(v) == name);
        at.unwrap_or_else(|| panic!("no value {name}")) as u32
    }

    fn names(m: &Module, values: &[u32]) -> Vec<String> {
        values
            .iter()
            .map(|&v| m.value_name(&m.values[v as usize]))
            .collect()
    }

    #[test]
    fn a_value_is_found_by_its_name() {
        let m = tpu();
        for name in ["fusion.5", "copy-start{0}", "Arg_1.2"] {
            let v = value_named(&m, name).expect(name);
            assert_eq!(m.value_name(&m.values[v as usize]), name);
        }
        assert_eq!(
            value_named(&m, "copy-start"),
            None,
            "a tuple's value needs its index"
        );
        assert_eq!(value_named(&m, "no such value"), None);
        assert_eq!(value_named(&m, ""), None);
    }

    #[test]
    fn search_matches_names_and_op_names() {
        let m = tpu();
        let found = search(&m, "^fusion\\.5$").unwrap();
        assert_eq!(names(&m, &found), ["fusion.5"]);
        // Tuple indices are part of the name.
        let found = search(&m, r"copy-start\{0\}").unwrap();
        assert_eq!(names(&m, &found), ["copy-start{0}"]);
        // op_name: the parameters called w1 and w2.
        let found = search(&m, "^w[12]$").unwrap();
        let mut n = names(&m, &found);
        n.sort();
        assert_eq!(n, ["Arg_1.2", "Arg_2.3"]);
        // Results are in value order.
        assert!(found.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn search_matches_shapes_and_says_which_field_did() {
        let m = tpu();
        // In dump 000: `<64 Arg_2.3 @0> … f32[64,32]{0,1:T(8,128)}`, `<66 copy-start.1{0} @1>
        // … f32[64,32]{0,1:T(8,128)S(1)}` and the tuple `<65 copy-start.1{} @0> …
        // (f32[64,32]{…}, f32[64,32]{…}, u32[]{:S(2)})`; no name or op_name has that text.
        let found = search_fields(&m, r"f32\[64,32\]").unwrap();
        let mut n = names(&m, &found.values);
        n.sort();
        assert_eq!(n, ["Arg_2.3", "copy-start.1{0}", "copy-start.1{}"]);
        assert_eq!(found.by_field, [0, 0, 3, 0, 0]);
        assert_eq!(found.fields_text(), "shape 3");
        // The layout is part of the shape as printed: S(1) is VMEM's copy alone.
        let vmem = search(&m, r"\[64,32\]\{0,1:T\(8,128\)S\(1\)\}$").unwrap();
        assert_eq!(names(&m, &vmem), ["copy-start.1{0}"]);
        // Fields in order: the op_name `w2` of Arg_2.3, the name of fusion.5.
        let both = search_fields(&m, "^(w2|fusion\\.5)$").unwrap();
        assert_eq!(both.by_field, [1, 1, 0, 0, 0], "{:?}", names(&m, &both.values));
        assert_eq!(both.fields_text(), "op_name 1 · name 1");
        assert_eq!(both.fields_short(), "op_name, name");
    }

    #[test]
    fn literal_and_regex_agree() {
        let m = tpu();
        for p in [
            "fusion",
            "Fusion",
            "arg_",
            "copy-start",
            "w1",
            "rms_norm/reduce",
            "zzz",
        ] {
            let fast = search(&m, p).unwrap();
            // The same text as a regex (a group makes it one), searched by the regex engine.
            let slow = search(&m, &format!("(?:{p})")).unwrap();
            assert!(matches!(compile(p), Ok(Matcher::Literal { .. })), "{p}");
            assert!(
                matches!(compile(&format!("(?:{p})")), Ok(Matcher::Regex(_))),
                "{p}"
            );
            assert_eq!(fast, slow, "{p}");
        }
    }

    #[test]
    fn search_is_smart_case() {
        let m = tpu();
        assert_eq!(search(&m, "ARG_1\\.2").unwrap().len(), 0);
        assert_eq!(names(&m, &search(&m, "^arg_1\\.2$").unwrap()), ["Arg_1.2"]);
    }

    #[test]
    fn bad_patterns_are_errors_not_panics() {
        let m = tpu();
        for p in ["(", "[", "a{2,1}", "*", "(?P<x", "\\"] {
            let e = search(&m, p).unwrap_err();
            assert!(!e.is_empty() && !e.contains('\n'), "{p}: {e:?}");
        }
        assert_eq!(search(&m, "").unwrap(), Vec::<u32>::new());
    }

    #[test]
    fn derived_texts() {
        let m = tpu();
        let v = &m.values[find(&m, "add.14") as usize];
        assert_eq!(v.size, 512);
        assert_eq!(padding(v), Some(508));
        assert_eq!(source(&m, v).as_deref(), Some("/home/ptoulme/tpu.py:41"));
        assert_eq!(
            op_name(&m, v),
            "jit(mini_attention)/jit(main)/rms_norm/reduce_sum"
        );
        assert_eq!(hex(53248), "0xd000");
        assert_eq!(instruction_at(&m, 0), Some("Arg_1.2"));
        assert_eq!(instruction_at(&m, 13), Some("fusion"));
        assert_eq!(instruction_at(&m, 14), None);
    }

    #[test]
    fn totals() {
        let m = tpu();
        // XLA's peak list in the fixture ends `fusion.5{}: 64 bytes (cumulative: 43200 bytes)`.
        let peak = m.schedule.as_ref().and_then(|s| s.peak.as_ref()).unwrap();
        assert_eq!(xla_peak_bytes(peak), 43200);
        // Allocated sizes as the value lines print them: `<69 Arg_1.2 @0> (size=32768,…)`,
        // `<64 Arg_2.3 @0> (size=16384,…)` (the peak list gives their logical bytes instead).
        let (a, b) = (find(&m, "Arg_1.2"), find(&m, "Arg_2.3"));
        assert_eq!(total_size(&m, &[a, b]), 32768 + 16384);
        // An index that is not the module's counts nothing; no values, nothing.
        assert_eq!(total_size(&m, &[a, u32::MAX]), 32768);
        assert_eq!(total_size(&m, &[]), 0);
        // Saturates instead of wrapping.
        let mut big = m.clone();
        big.values[a as usize].size = u64::MAX;
        assert_eq!(total_size(&big, &[a, b]), u64::MAX);
    }

    #[test]
    fn sorting_by_every_column_is_total_and_reversible() {
        let m = tpu();
        let all: Vec<u32> = (0..m.values.len() as u32).collect();
        for column in Column::ALL {
            let mut asc = all.clone();
            sort_values(&m, &mut asc, column, false);
            let mut desc = all.clone();
            sort_values(&m, &mut desc, column, true);
            let mut sorted = asc.clone();
            sorted.sort();
            assert_eq!(sorted, all, "{column:?} lost or duplicated values");
            if column == Column::Size {
                let sizes: Vec<u64> = desc.iter().map(|&v| m.values[v as usize].size).collect();
                assert!(sizes.windows(2).all(|w| w[0] >= w[1]));
            }
        }
        // Text: A to Z, and values without an op_name last in both directions.
        let mut by_op = all.clone();
        sort_values(&m, &mut by_op, Column::OpName, false);
        let ops: Vec<&str> = by_op
            .iter()
            .map(|&v| op_name(&m, &m.values[v as usize]))
            .collect();
        let named = ops.iter().take_while(|o| !o.is_empty()).count();
        assert!(named > 0 && ops[named..].iter().all(|o| o.is_empty()));
        assert!(ops[..named].windows(2).all(|w| w[0] <= w[1]));
        sort_values(&m, &mut by_op, Column::OpName, true);
        let ops: Vec<&str> = by_op
            .iter()
            .map(|&v| op_name(&m, &m.values[v as usize]))
            .collect();
        assert!(ops[..named].windows(2).all(|w| w[0] >= w[1]));
        assert!(ops[named..].iter().all(|o| o.is_empty()));
    }

    #[test]
    fn grouping_by_op_name() {
        let m = tpu();
        let a = analyze(&m);
        let live = &a.space(0).unwrap().live_at_peak;
        let groups = group_by_op_name(&m, live);
        let members: usize = groups.iter().map(|g| g.values.len()).sum();
        assert_eq!(members, live.len());
        let total: u64 = groups.iter().map(|g| g.total).sum();
        let sizes: u64 = live.iter().map(|&v| m.values[v as usize].size).sum();
        assert_eq!(total, sizes);
        // Named groups largest first, the unnamed one last.
        let named: Vec<&Group> = groups.iter().filter(|g| !g.op_name.is_empty()).collect();
        assert!(named.windows(2).all(|w| w[0].total >= w[1].total));
        if let Some(pos) = groups.iter().position(|g| g.op_name.is_empty()) {
            assert_eq!(pos, groups.len() - 1);
        }
        let mut by_name = groups.clone();
        sort_groups(&m, &mut by_name, Column::OpName, false);
        let n: Vec<&str> = by_name
            .iter()
            .filter(|g| !g.op_name.is_empty())
            .map(|g| m.str(g.op_name))
            .collect();
        assert!(n.windows(2).all(|w| w[0] <= w[1]));
        // Padding: the sums' difference, never below zero.
        for g in &groups {
            assert_eq!(g.padding() + g.logical.min(g.total), g.total);
        }
        let mut by_padding = groups.clone();
        sort_groups(&m, &mut by_padding, Column::Padding, true);
        let named: Vec<u64> = by_padding
            .iter()
            .filter(|g| !g.op_name.is_empty())
            .map(Group::padding)
            .collect();
        assert!(named.windows(2).all(|w| w[0] >= w[1]));
    }

    #[test]
    fn keeping_only_a_subset() {
        let mut v = vec![9, 3, 7, 1, 5];
        keep_only(&mut v, &[1, 2, 5, 9]);
        assert_eq!(v, [9, 1, 5]);
        keep_only(&mut v, &[]);
        assert!(v.is_empty());
    }

    #[test]
    fn flattening_groups_and_stepping_through_values() {
        let group = |op: u32, values: Vec<u32>| Group {
            op_name: Str::EMPTY,
            total: op as u64,
            logical: 0,
            values,
        };
        let groups = [
            group(0, vec![4, 2]),
            group(1, vec![7]),
            group(2, vec![1, 8, 3]),
        ];
        use TableRow::{Group as G, Member as M};
        // Closed: one line per group.
        assert_eq!(flatten_groups(&groups, |_| false), [G(0), G(1), G(2)]);
        // The first and last open: their members follow them, in their order.
        let rows = flatten_groups(&groups, |g| g.total != 1);
        assert_eq!(rows, [G(0), M(4), M(2), G(1), G(2), M(1), M(8), M(3)]);
        // Down from 2: skips the group lines to 1; two steps from 4 reach 1; clamped at the ends.
        assert_eq!(step_value(&rows, Some(2), 1), Some(5));
        assert_eq!(step_value(&rows, Some(4), 2), Some(5));
        assert_eq!(step_value(&rows, Some(3), 1), Some(7));
        assert_eq!(step_value(&rows, Some(1), -100), Some(1));
        assert_eq!(step_value(&rows, Some(3), isize::MAX), Some(7));
        // No selection (or one not in the table): the first value going down, the last going up.
        assert_eq!(step_value(&rows, None, 1), Some(1));
        assert_eq!(step_value(&rows, Some(99), -1), Some(7));
        // Nothing to step to.
        assert_eq!(
            step_value(&flatten_groups(&groups, |_| false), None, 1),
            None
        );
        assert_eq!(step_value(&[], Some(1), 1), None);
        let flat: Vec<TableRow> = [5, 6].map(TableRow::Value).to_vec();
        assert_eq!(step_value(&flat, Some(5), 1), Some(1));
    }
}
