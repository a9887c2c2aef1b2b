//! The module header line and the four stack-frame tables of an HLO module text (jax ≥ 0.9):
//! `FileNames` and `FunctionNames` (`ID "text"`), `FileLocations`
//! (`ID {file_name_id=N function_name_id=N line=N end_line=N column=N end_column=N}`) and
//! `StackFrames` (`ID {file_location_id=N parent_frame_id=N}`).
//!
//! Owns: these rows' grammar (nom) and where each row goes in [`StackFrames`].

use super::scan::{each_inside, quoted, split_top, trim};
use crate::model::hlo::{BufferDonor, FileLocation, HloText, IoAlias, StackFrame, StackFrames};
use crate::model::utf8_lossy as text;
use nom::bytes::complete::{tag, take_while1};
use nom::character::complete::u32 as nom_u32;
use nom::sequence::separated_pair;
use nom::Parser;

type In<'a> = &'a [u8];

/// Which table a row belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Table {
    FileNames,
    FunctionNames,
    FileLocations,
    StackFrames,
}

/// The table a line opens, if it is one's title.
pub(super) fn opens(line: In) -> Option<Table> {
    match line {
        b"FileNames" => Some(Table::FileNames),
        b"FunctionNames" => Some(Table::FunctionNames),
        b"FileLocations" => Some(Table::FileLocations),
        b"StackFrames" => Some(Table::StackFrames),
        _ => None,
    }
}

/// `{key=N key=N …}`: `f(key, N)` for each pair, in order; false when the text is not
/// such pairs (what follows the closing brace is the caller's to check: given back).
fn fields<'a>(i: In<'a>, mut f: impl FnMut(In, u32)) -> Option<In<'a>> {
    let mut rest = i.strip_prefix(b"{")?;
    loop {
        let (after, (key, n)) = separated_pair(
            take_while1(|c: u8| c != b'=' && c != b' ' && c != b'}'),
            tag("="),
            nom_u32::<_, nom::error::Error<In>>,
        )
        .parse(rest)
        .ok()?;
        f(key, n);
        if let Some(end) = after.strip_prefix(b"}") {
            return Some(end);
        }
        let spaces = after.iter().take_while(|&&c| c == b' ').count();
        if spaces == 0 {
            return None;
        }
        rest = &after[spaces..];
    }
}

/// One row of `table` into `frames`; false when the line is not such a row.
pub(super) fn row(table: Table, line: In, frames: &mut StackFrames) -> bool {
    let Ok((rest, id)) = nom_u32::<_, nom::error::Error<In>>(line) else {
        return false;
    };
    let Some(rest) = rest.strip_prefix(b" ") else {
        return false;
    };
    match table {
        Table::FileNames | Table::FunctionNames => {
            let Some((s, after)) = rest.strip_prefix(b"\"").and_then(quoted) else {
                return false;
            };
            if !trim(after).is_empty() {
                return false;
            }
            let map = match table {
                Table::FileNames => &mut frames.file_names,
                _ => &mut frames.function_names,
            };
            map.insert(id, text(&s).into_owned());
        }
        Table::FileLocations | Table::StackFrames => {
            // The keys of either table, the first of each kept.
            const KEYS: [&[u8]; 8] = [
                b"file_location_id",
                b"parent_frame_id",
                b"file_name_id",
                b"function_name_id",
                b"line",
                b"end_line",
                b"column",
                b"end_column",
            ];
            let mut values = [None; KEYS.len()];
            let after = fields(rest, |key, n| {
                if let Some(k) = KEYS.iter().position(|&x| x == key) {
                    values[k].get_or_insert(n);
                }
            });
            if !after.is_some_and(|a| trim(a).is_empty()) {
                return false;
            }
            let get = |k: &[u8]| KEYS.iter().position(|&x| x == k).and_then(|k| values[k]);
            if table == Table::StackFrames {
                let (Some(loc), Some(parent)) = (get(b"file_location_id"), get(b"parent_frame_id"))
                else {
                    return false;
                };
                frames.frames.insert(
                    id,
                    StackFrame {
                        file_location_id: loc,
                        parent_frame_id: parent,
                    },
                );
            } else {
                let (Some(file), Some(function)) = (get(b"file_name_id"), get(b"function_name_id"))
                else {
                    return false;
                };
                let location = FileLocation {
                    file_name_id: file,
                    function_name_id: function,
                    line: get(b"line").unwrap_or(0),
                    end_line: get(b"end_line").unwrap_or(0),
                    column: get(b"column").unwrap_or(0),
                    end_column: get(b"end_column").unwrap_or(0),
                };
                frames.file_locations.insert(id, location);
            }
        }
    }
    true
}

/// `HloModule NAME, key=value, …`: the name, `num_partitions` and `replica_count`; false
/// when the line is not a module header.
pub(super) fn header(line: In, hlo: &mut HloText) -> bool {
    let Some(rest) = line.strip_prefix(b"HloModule ") else {
        return false;
    };
    let mut parts = split_top(rest).into_iter();
    hlo.name = text(parts.next().unwrap_or_default()).into_owned();
    for part in parts {
        let num = |key: &[u8]| {
            let v = part.strip_prefix(key)?.strip_prefix(b"=")?;
            nom_u32::<_, nom::error::Error<In>>(v).ok().map(|(_, n)| n)
        };
        if let Some(n) = num(b"num_partitions") {
            hlo.num_partitions = Some(n);
        } else if let Some(n) = num(b"replica_count") {
            hlo.replica_count = Some(n);
        } else if let Some(v) = part.strip_prefix(b"input_output_alias=") {
            hlo.aliases = pairs(v, alias);
        } else if let Some(v) = part.strip_prefix(b"buffer_donor=") {
            hlo.buffer_donors = pairs(v, donor);
        }
    }
    true
}

/// The entries of `{ E, E, … }`, each read by `entry` (one that fits no rule is left out).
fn pairs<T>(v: In, entry: fn(In) -> Option<T>) -> Vec<T> {
    let mut out = Vec::new();
    if v.starts_with(b"{") {
        each_inside(v, |e| out.extend(entry(e)));
    }
    out
}

/// A shape index `{}` or `{0, 1}` and what follows it.
fn shape_index(i: In) -> Option<(Vec<u32>, In)> {
    let i = trim(i).strip_prefix(b"{")?;
    let end = i.iter().position(|&c| c == b'}')?;
    let index = (i[..end].split(|&c| c == b','))
        .map(trim)
        .filter(|n| !n.is_empty())
        .map(|n| std::str::from_utf8(n).ok()?.parse().ok())
        .collect::<Option<Vec<u32>>>()?;
    Some((index, &i[end + 1..]))
}

/// `{OUT}: (PARAM, {INDEX}, may-alias)`.
fn alias(e: In) -> Option<IoAlias> {
    let (output, rest) = shape_index(e)?;
    let rest = trim(trim(rest).strip_prefix(b":")?).strip_prefix(b"(")?;
    let (rest, parameter) = nom_u32::<_, nom::error::Error<In>>(rest).ok()?;
    let (parameter_index, rest) = shape_index(trim(rest).strip_prefix(b",")?)?;
    let kind = trim(trim(rest).strip_prefix(b",")?).strip_suffix(b")")?;
    Some(IoAlias {
        output,
        parameter,
        parameter_index,
        must: trim(kind) == b"must-alias",
    })
}

/// `(PARAM, {INDEX})`.
fn donor(e: In) -> Option<BufferDonor> {
    let rest = trim(e).strip_prefix(b"(")?;
    let (rest, parameter) = nom_u32::<_, nom::error::Error<In>>(rest).ok()?;
    let (index, rest) = shape_index(trim(rest).strip_prefix(b",")?)?;
    (trim(rest) == b")").then_some(BufferDonor { parameter, index })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_each_table() {
        let mut f = StackFrames::default();
        assert!(row(
            Table::FileNames,
            b"1 \"/home/user/models/programs.py\"",
            &mut f
        ));
        assert!(row(
            Table::FunctionNames,
            b"6 \"scan_layers.<locals>.body\"",
            &mut f
        ));
        assert!(row(
            Table::FileLocations,
            b"8 {file_name_id=1 function_name_id=6 line=92 end_line=92 column=8 end_column=33}",
            &mut f
        ));
        assert!(row(
            Table::StackFrames,
            b"14 {file_location_id=8 parent_frame_id=14}",
            &mut f
        ));
        assert_eq!(f.file_names[&1], "/home/user/models/programs.py");
        assert_eq!(f.file_locations[&8].line, 92);
        assert_eq!(
            f.frames[&14],
            StackFrame {
                file_location_id: 8,
                parent_frame_id: 14
            }
        );
        assert!(!row(Table::StackFrames, b"14 {file_location_id=8}", &mut f));
        assert!(!row(Table::FileNames, b"x \"a\"", &mut f));
        assert!(!row(Table::FileNames, b"2 \"open", &mut f));
        assert!(!row(Table::FileLocations, b"3 {line=4} junk", &mut f));
    }

    #[test]
    fn header_figures() {
        let mut h = HloText::default();
        assert!(header(b"HloModule jit_train_step, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias) }, num_partitions=4, replica_count=2, frontend_attributes={a=\"x,y\"}", &mut h));
        assert_eq!(
            (h.name.as_str(), h.num_partitions, h.replica_count),
            ("jit_train_step", Some(4), Some(2))
        );
        assert_eq!(h.devices(), 8);
        assert!(!header(b"BufferAssignment:", &mut h));
    }

    #[test]
    fn header_aliases_and_donors() {
        let mut h = HloText::default();
        let line = b"HloModule m, input_output_alias={ {0}: (0, {}, may-alias), {1, 2}: (3, {1}, must-alias), {9}: junk }, buffer_donor={ (4, {}), (5, {0, 1}) }, num_partitions=4";
        assert!(header(line, &mut h));
        assert_eq!(h.aliases.len(), 2, "{:?}", h.aliases);
        assert_eq!(
            h.aliases[1],
            IoAlias { output: vec![1, 2], parameter: 3, parameter_index: vec![1], must: true }
        );
        assert!(!h.aliases[0].must);
        let donors: Vec<_> = h.buffer_donors.iter().map(|d| (d.parameter, d.index.clone())).collect();
        assert_eq!(donors, [(4, vec![]), (5, vec![0, 1])]);
        assert_eq!(h.num_partitions, Some(4));
    }
}
