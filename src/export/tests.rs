//! Tests of the CSV writing: fields quoted as RFC 4180 says, and tables read back by a
//! reader written here from the RFC's grammar (not from the writer).

use super::*;
use crate::analysis::analyze;
use crate::answers::{categories, groups, live_set};

/// Reads CSV text as RFC 4180 defines it: records end with CRLF, a field is either plain
/// (no comma, quote, CR or LF) or quoted with `""` standing for one quote.
fn parse(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut chars = text.chars().peekable();
    while chars.peek().is_some() {
        let mut f = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        f.push('"');
                    }
                    Some('"') => break,
                    Some(c) => f.push(c),
                    None => panic!("unterminated quoted field"),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' || c == '\r' {
                    break;
                }
                assert!(c != '"' && c != '\n', "bare {c:?} in a plain field");
                f.push(c);
                chars.next();
            }
        }
        record.push(f);
        match chars.next() {
            Some(',') => {}
            Some('\r') => {
                assert_eq!(chars.next(), Some('\n'), "CR without LF");
                records.push(std::mem::take(&mut record));
            }
            other => panic!("after a field: {other:?}"),
        }
    }
    assert!(record.is_empty(), "last record without CRLF");
    records
}

#[test]
fn fields_are_quoted_only_when_they_must_be() {
    assert_eq!(field("plain text"), "plain text");
    assert_eq!(field(""), "");
    assert_eq!(field("a,b"), "\"a,b\"");
    assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    assert_eq!(field("two\nlines"), "\"two\nlines\"");
    assert_eq!(field("cr\r"), "\"cr\r\"");
    assert!(matches!(field("x"), Cow::Borrowed(_)));
}

#[test]
fn rows_read_back_as_written() {
    let rows = [
        vec![
            "jit(f)/dot_general[dimension_numbers=(([1], [0]), ([], []))]",
            "1",
            "",
        ],
        vec!["a \"quoted\" name", "line one\nline two", "cr\r\nlf"],
        vec!["", ",", "\""],
    ];
    let mut csv = Csv::new(&["op_name", "b", "c"]);
    for r in &rows {
        csv.row(r.iter());
    }
    let text = csv.finish();
    assert!(text.starts_with("op_name,b,c\r\n"));
    let back = parse(&text);
    assert_eq!(back.len(), 4);
    assert_eq!(back[0], ["op_name", "b", "c"]);
    for (r, b) in rows.iter().zip(&back[1..]) {
        assert_eq!(r, b);
    }
}

/// TPU 000 with one op_name rewritten to hold a comma and quotes.
fn tpu_000() -> Module {
    let text = include_str!("../../tests/fixtures/tpu/000_0cb419b3147a3cb6.txt").replace(
        "jit(mini_attention)/jit(main)/rms_norm/reduce_sum",
        r#"jit(f)/dot[a, b] \"q\""#,
    );
    let mut load = crate::load_files([("000.txt", text.as_bytes())]);
    assert!(!load.modules.is_empty(), "{:?}", load.errors);
    load.modules.swap_remove(0)
}

#[test]
fn values_read_back_one_by_one() {
    let m = tpu_000();
    let mut values: Vec<u32> = (0..m.values.len() as u32).collect();
    query::sort_values(&m, &mut values, query::Column::OpName, false);
    let back = parse(&values_csv(&m, &values));
    assert_eq!(back[0], VALUE_COLUMNS);
    assert_eq!(back.len(), values.len() + 1);
    assert!(values.len() > 3);
    let mut tricky = 0;
    for (&v, row) in values.iter().zip(&back[1..]) {
        let value = &m.values[v as usize];
        assert_eq!(row.len(), VALUE_COLUMNS.len());
        assert_eq!(row[0], m.value_name(value));
        assert_eq!(row[1], value.id.to_string());
        assert_eq!(row[2].parse::<u64>().unwrap(), value.size);
        let logical = value
            .logical_size
            .map(|l| l.to_string())
            .unwrap_or_default();
        assert_eq!(row[3], logical);
        assert_eq!(row[5], m.str(value.shape));
        let op = m.str(m.instruction(value).op_name);
        assert_eq!(row[6], op);
        tricky += usize::from(op.contains(',') && op.contains('"'));
    }
    assert!(tricky > 0, "no op_name with a comma and a quote");
}

#[test]
fn groups_and_answers_have_a_line_each_and_their_sums() {
    let m = tpu_000();
    let a = analyze(&m);
    let space = &a.spaces[0];
    let live = live_set(&m, space, space.peak_time.expect("a peak"));
    let gs = query::group_by_op_name(&m, &live.indices());
    let back = parse(&op_groups_csv(&m, &gs));
    assert_eq!(back.len(), gs.len() + 1);
    let count: usize = back[1..]
        .iter()
        .map(|r| r[1].parse::<usize>().unwrap())
        .sum();
    assert_eq!(count, live.values.len());
    let total: u64 = back[1..].iter().map(|r| r[2].parse::<u64>().unwrap()).sum();
    assert_eq!(total, live.value_bytes);

    let lines = groups::by_source_line(&m, &live);
    let back = parse(&source_lines_csv(&lines));
    assert_eq!(back.len(), lines.len() + 1);
    let bytes: u64 = back[1..].iter().map(|r| r[2].parse::<u64>().unwrap()).sum();
    assert_eq!(bytes, live.occupied_bytes);

    let cats = categories::by_category(&m, &live);
    let back = parse(&categories_csv(&cats));
    assert_eq!(back.len(), cats.len() + 1);
    let bytes: u64 = back[1..].iter().map(|r| r[1].parse::<u64>().unwrap()).sum();
    assert_eq!(bytes, live.occupied_bytes);
}

#[test]
fn file_names_keep_to_safe_characters() {
    assert_eq!(
        file_name("jit_f", &["space0", "default"], "png"),
        "jit_f-space0-default.png"
    );
    assert_eq!(
        file_name("module/a b:c", &["live", "step42"], "csv"),
        "module_a_b_c-live-step42.csv"
    );
    assert_eq!(file_name("", &["summary"], "json"), "module-summary.json");
    assert_eq!(file_name("../..", &[""], "svg"), "module.svg");
    assert!(file_name(&"x".repeat(500), &[], "csv").len() <= 204);
}

/// TPU 000 (with a quoted op_name) against TPU 001: each class of matched values and each
/// grouping of the Compare view reads back a line per row, with the row's figures, and the
/// changes add up to the diff's own.
#[test]
fn compare_tables_read_back_row_by_row() {
    use crate::diff::{diff_modules, Side};
    let base = tpu_000();
    let text = include_str!("../../tests/fixtures/tpu/001_d4ec204070c56195.txt");
    let new = crate::load_files([("001.txt", text.as_bytes())])
        .modules
        .swap_remove(0);
    let (ba, na) = (analyze(&base), analyze(&new));
    let diff = diff_modules(Side::new(&base, &ba), Side::new(&new, &na));
    let mut rows_seen = 0;
    for space in &diff.spaces {
        let c = &space.changes;
        for class in [&c.new, &c.gone, &c.grown, &c.shrunk, &c.unchanged] {
            let back = parse(&value_changes_csv(class));
            assert_eq!(back.len(), class.len() + 1, "a header and a line per row");
            assert_eq!(back[0][0], "change_bytes");
            for (r, line) in class.iter().zip(&back[1..]) {
                assert_eq!(line.len(), 12);
                assert_eq!(line[0], r.delta_bytes.to_string());
                let name = |i: &Option<crate::diff::ValueInfo>| {
                    i.as_ref().map_or(String::new(), |i| i.name.clone())
                };
                assert_eq!(
                    (line[3].clone(), line[4].clone()),
                    (name(&r.base), name(&r.new))
                );
                let op = |i: &Option<crate::diff::ValueInfo>| {
                    i.as_ref().map_or(String::new(), |i| i.op_name.clone())
                };
                assert_eq!(
                    (line[6].clone(), line[7].clone()),
                    (op(&r.base), op(&r.new))
                );
            }
            let sum: i64 = back[1..].iter().map(|l| l[0].parse::<i64>().unwrap()).sum();
            assert_eq!(sum, class.iter().map(|r| r.delta_bytes).sum::<i64>());
            rows_seen += class.len();
        }
        for (rows, key) in [
            (&space.groups.by_op_name, "op_name"),
            (&space.groups.by_source, "source_line"),
        ] {
            let back = parse(&group_deltas_csv(rows, key));
            assert_eq!(back.len(), rows.len() + 1);
            assert_eq!(back[0][5], key);
            for (d, line) in rows.iter().zip(&back[1..]) {
                assert_eq!(line[5], d.key);
                let (b, n): (u64, u64) = (line[1].parse().unwrap(), line[3].parse().unwrap());
                assert_eq!(n as i64 - b as i64, line[0].parse::<i64>().unwrap());
            }
        }
    }
    assert!(
        rows_seen > 0,
        "TPU 000 and 001 have values live at their peaks"
    );
}
