//! The pieces both message grammars share: a stats line (`label: size (note)` on GPU,
//! `label   size (note)` on TPU), a block title (`Total hbm usage >= 65.05G:`), and the
//! `Operator:` metadata (`op_name="…" source_file="…" source_line=N`).

use crate::model::oom::{ByteSize, NamedSize, Operator, Percent, Stat, StatSection};
use super::size::{human, parse_size, size, word};
use nom::bytes::complete::{tag, take_till, take_while1};
use nom::character::complete::{char, space0, space1};
use nom::combinator::opt;
use nom::sequence::delimited;
use nom::{IResult, Parser};

/// A stats line: a label, then the first figure that reads as a size, then its note.
/// `arguments   unknown size` has no size. None when no figure follows a label.
pub(crate) fn stat(line: &str) -> Option<Stat> {
    let text = line.trim();
    if let Some(label) = text.strip_suffix("unknown size") {
        let label = label.trim().trim_end_matches(':').trim();
        return (!label.is_empty()).then(|| Stat {
            label: label.to_string(),
            size: None,
            note: Some("unknown size".to_string()),
            figures: Vec::new(),
            percents: Vec::new(),
        });
    }
    let starts = text
        .char_indices()
        .filter(|&(i, _)| i > 0 && text[..i].ends_with([' ', '\t']))
        .map(|(i, _)| i);
    for at in starts {
        let Ok((rest, figure)) = size(&text[at..]) else {
            continue;
        };
        if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
            continue;
        }
        let label = text[..at].trim().trim_end_matches(':').trim_end();
        if label.is_empty() {
            return None;
        }
        let note = rest.trim();
        return Some(Stat {
            label: label.to_string(),
            size: Some(figure),
            note: (!note.is_empty()).then(|| note.to_string()),
            figures: figures(note),
            percents: percents(note),
        });
    }
    None
}

/// A stat of a label and a figure, with no note (the one-line forms' parts).
pub(crate) fn plain_stat(label: &str, size: ByteSize) -> Stat {
    Stat {
        label: label.trim().to_string(),
        size: Some(size),
        note: None,
        figures: Vec::new(),
        percents: Vec::new(),
    }
}

/// `Word (size)` pairs in a note: `Unpadded (8.65G) Padded (9.06G), 0.0% fragmentation (0B)`.
fn figures(note: &str) -> Vec<NamedSize> {
    let mut out = Vec::new();
    for (open, _) in note.match_indices('(') {
        let inside = &note[open + 1..];
        let Some(close) = inside.find(')') else {
            continue;
        };
        let Some(size) = parse_size(&inside[..close]) else {
            continue;
        };
        let before = note[..open].trim_end();
        let label_start = run_start(before, |c| c.is_alphanumeric() || c == '_');
        out.push(NamedSize {
            label: before[label_start..].to_string(),
            size,
        });
    }
    out
}

/// Where the run of chars that `keep` at the end of `s` starts.
fn run_start(s: &str, keep: impl Fn(char) -> bool) -> usize {
    s.char_indices()
        .rev()
        .find(|&(_, c)| !keep(c))
        .map_or(0, |(p, c)| p + c.len_utf8())
}

/// `95.4% utilization` → ("utilization", "95.4"); `(0.02%)` → ("", "0.02").
fn percents(note: &str) -> Vec<Percent> {
    let mut out = Vec::new();
    for (pct, _) in note.match_indices('%') {
        let before = &note[..pct];
        let start = run_start(before, |c| c.is_ascii_digit() || c == '.');
        if start == pct {
            continue;
        }
        let after = note[pct + 1..].trim_start_matches(' ');
        let label = if note[pct + 1..].starts_with(' ') {
            word(after).map_or("", |(_, w)| w)
        } else {
            ""
        };
        out.push(Percent {
            label: label.to_string(),
            value: before[start..].to_string(),
        });
    }
    out
}

/// A block title: `Total hbm usage >= 65.05G:`, `Program hbm requirement 4.34G:`,
/// `HBM capacity 8.00G:`, `Heap allocator status:`. The line must end with `:`.
pub(crate) fn title(line: &str) -> Option<StatSection> {
    let head = line.trim().strip_suffix(':')?.trim_end();
    if head.is_empty() {
        return None;
    }
    let (label, total, at_least) = match head.rfind(' ') {
        Some(sp) => match parse_size(&head[sp + 1..]) {
            Some(total) => {
                let label = head[..sp].trim_end();
                match label.strip_suffix(">=") {
                    Some(l) => (l.trim_end(), Some(total), true),
                    None => (label, Some(total), false),
                }
            }
            None => (head, None, false),
        },
        None => (head, None, false),
    };
    Some(StatSection {
        title: label.to_string(),
        total,
        at_least,
        stats: Vec::new(),
    })
}

type Res<'a, T> = IResult<&'a str, T>;

fn quoted(i: &str) -> Res<'_, &str> {
    delimited(char('"'), take_till(|c| c == '"'), char('"')).parse(i)
}

fn bare(i: &str) -> Res<'_, &str> {
    take_while1(|c: char| !c.is_whitespace())(i)
}

fn pair(i: &str) -> Res<'_, (&str, &str)> {
    let (i, key) = take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_')(i)?;
    let (i, _) = tag("=")(i)?;
    let (i, value) = nom::branch::alt((quoted, bare)).parse(i)?;
    Ok((i, (key, value)))
}

/// `op_type="OneHot" op_name="model/loss/one_hot" source_file="x.py" source_line=12
/// deduplicated_name="fusion.8"`. Reads pairs until one does not fit; None when none does.
pub(crate) fn operator(text: &str) -> Option<Operator> {
    let mut op = Operator::default();
    let mut i = text.trim();
    let mut any = false;
    while let Ok((rest, (key, value))) = pair(i) {
        any = true;
        match key {
            "op_type" => op.op_type = Some(value.to_string()),
            "op_name" => op.op_name = Some(value.to_string()),
            "source_file" => op.source_file = Some(value.to_string()),
            "source_line" => match value.parse() {
                Ok(n) => op.source_line = Some(n),
                Err(_) => op.other.push((key.to_string(), value.to_string())),
            },
            "deduplicated_name" => op.deduplicated_name = Some(value.to_string()),
            _ => op.other.push((key.to_string(), value.to_string())),
        }
        let Ok((rest, _)) = space0::<&str, nom::error::Error<&str>>(rest) else {
            break;
        };
        i = rest;
    }
    any.then_some(op)
}

fn expansion(i: &str) -> Res<'_, &str> {
    delimited(
        (space1, char('(')),
        take_while1(|c: char| c.is_ascii_digit() || c == '.'),
        (tag("x expansion"), char(')')),
    )
    .parse(i)
}

/// `Extra memory due to padding: 12.91G (12.8x expansion)` → (12.91G, "12.8").
pub(crate) fn padding(text: &str) -> Option<(crate::model::oom::ByteSize, Option<String>)> {
    let (rest, size) = human(text.trim()).ok()?;
    let factor = opt(expansion)
        .parse(rest)
        .ok()
        .and_then(|(_, e)| e.map(str::to_string));
    Some((size, factor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_lines() {
        let s = stat("  preallocated temp fragmentation:   24.75MiB (0.02%)").unwrap();
        assert_eq!(s.label, "preallocated temp fragmentation");
        assert_eq!(s.size.unwrap().text, "24.75MiB");
        assert_eq!(s.percents[0].value, "0.02");
        let s = stat("    HLO temp   3.93G (97.4% utilization: Unpadded (3.81G) Padded (3.92G), 0.4% fragmentation (14.68M))").unwrap();
        assert_eq!(s.label, "HLO temp");
        let labels: Vec<&str> = s.figures.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(labels, ["Unpadded", "Padded", "fragmentation"]);
        assert_eq!(s.percents[0].label, "utilization");
        assert_eq!(s.percents[1].label, "fragmentation");
        let s = stat("    heap allocations (without fragmentation)   6.08G ").unwrap();
        assert_eq!(s.label, "heap allocations (without fragmentation)");
        let s = stat("       Top-of-Memory reserved:  529.00M (     554,696,704 bytes)").unwrap();
        assert_eq!(
            (s.label.as_str(), s.size.unwrap().bytes),
            ("Top-of-Memory reserved", 554_696_704)
        );
        assert!(stat("    arguments       unknown size")
            .unwrap()
            .size
            .is_none());
        assert!(stat("                               ------------").is_none());
        // Replacement characters (invalid UTF-8 in the log) next to the figures.
        let s = stat("HLO temp 1.00G (8.5% utilization: Unpadded (16.\u{fffd}1G) Padded (1.00G), 0.2%\u{fffd}fragmentation (1B))").unwrap();
        assert_eq!(s.figures.len(), 2);
        assert_eq!(s.percents[1].label, "");
    }

    #[test]
    fn titles_and_operators() {
        let t = title("Total hbm usage >= 10.94G:").unwrap();
        assert_eq!((t.title.as_str(), t.at_least), ("Total hbm usage", true));
        assert_eq!(title("Heap allocator status:").unwrap().total, None);
        let op = operator("op_type=\"OneHot\" op_name=\"a/b c\" source_file=\"/x.py\" source_line=12 deduplicated_name=\"f.8\"").unwrap();
        assert_eq!(op.op_name.as_deref(), Some("a/b c"));
        assert_eq!(
            (op.source_line, op.deduplicated_name.as_deref()),
            (Some(12), Some("f.8"))
        );
        let (p, e) = padding("12.91G (12.8x expansion)").unwrap();
        assert_eq!((p.text.as_str(), e.as_deref()), ("12.91G", Some("12.8")));
    }
}
