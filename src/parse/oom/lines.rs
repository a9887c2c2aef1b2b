//! A log's lines made readable for the message grammars: each line's log prefix removed
//! (a logger's `I1122 12:00:00.123456  1234 file.cc:42] `, TensorFlow's `2024-06-24
//! 17:01:13.933585: E file.cc:42] `, Python logging's `2026-03-05 11:02:33,418 [worker-7]
//! ERROR trainer: `, a worker name and a pipe after a time (`2026-03-05 11:02:33.418 host-2
//! | `) or alone (`worker-1  | `), a bracketed host (`[tpu 12] `), a Ray worker's
//! `(MeshHostWorker pid=489) ` with its colour codes, and a viewer's line number glued to
//! those codes), and lines that a terminal wrapped inside a quoted `Operator:` value joined
//! again. A prefix's own text is never taken for the message's: a stats line's indentation
//! after the prefix is kept.

use std::borrow::Cow;

/// One logical line: its text without the prefix and its 1-based number in the log.
#[derive(Debug, Clone)]
pub(crate) struct Line<'a> {
    pub no: usize,
    pub text: Cow<'a, str>,
}

/// Physical lines a wrapped quoted value may span.
const MAX_WRAPPED: usize = 64;

/// The lines of `log`, cleaned.
pub(crate) fn clean(log: &str) -> Vec<Line<'_>> {
    let raw: Vec<&str> = log
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let first = strip_prefix(raw[i]);
        let mut text = Cow::Borrowed(first);
        let no = i + 1;
        i += 1;
        if may_wrap(first) {
            let mut joined = 0;
            while i < raw.len() && joined < MAX_WRAPPED && (odd_quotes(&text) || continues(raw[i]))
            {
                text.to_mut().push_str(raw[i]);
                i += 1;
                joined += 1;
            }
        }
        out.push(Line { no, text });
    }
    out
}

/// Entry lines long enough for a terminal to wrap: the operator metadata, shapes, labels.
fn may_wrap(line: &str) -> bool {
    const LONG: [&str; 5] = [
        "Operator:",
        "Shape:",
        "XLA label:",
        "XLA Label:",
        "Entry Parameter Subshape:",
    ];
    let t = line.trim_start();
    LONG.iter().any(|k| t.starts_with(k))
}

/// A physical line that goes on the line before it: text at the very margin, with no log
/// prefix (entry lines are indented, and a prefix marks a line the program wrote).
fn continues(next: &str) -> bool {
    !next.is_empty() && !next.starts_with([' ', '\t']) && strip_prefix(next).len() == next.len()
}

fn odd_quotes(text: &str) -> bool {
    text.bytes().filter(|&b| b == b'"').count() % 2 == 1
}

/// The line without the prefixes a logger, a worker or a viewer put before it.
pub(crate) fn strip_prefix(mut s: &str) -> &str {
    loop {
        let before = s.len();
        s = strip_colours(s);
        s = strip_glued_number(s);
        s = strip_worker(s);
        s = strip_glog(s);
        s = strip_dated(s);
        s = strip_bracketed(s);
        s = strip_piped(s);
        if s.len() == before {
            return s;
        }
    }
}

/// One colour code: `ESC[2m`, `ESC[0;36m`, or the same with the ESC lost (`[36m`).
fn colour(s: &str) -> Option<&str> {
    let rest = s.strip_prefix('\u{1b}').unwrap_or(s);
    let rest = rest.strip_prefix('[')?;
    let body = rest.find('m')?;
    let ok = body > 0
        && body <= 8
        && rest[..body]
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b';');
    ok.then(|| &rest[body + 1..])
}

fn strip_colours(mut s: &str) -> &str {
    while let Some(rest) = colour(s) {
        s = rest;
    }
    s
}

/// A line number glued to a colour code (`71[2m…`), as some log viewers copy them.
fn strip_glued_number(s: &str) -> &str {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && digits <= 9 && colour(&s[digits..]).is_some() {
        &s[digits..]
    } else {
        s
    }
}

/// A Ray worker's `(Name pid=123) ` or `(Name pid=123, ip=10.0.0.1) `.
fn strip_worker(s: &str) -> &str {
    let Some(rest) = s.strip_prefix('(') else {
        return s;
    };
    let Some(close) = rest.find(')') else {
        return s;
    };
    let inside = &rest[..close];
    let name_len = inside
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b':')
        .count();
    if name_len == 0 || !inside[name_len..].starts_with(" pid=") {
        return s;
    }
    let after = strip_colours(&rest[close + 1..]);
    after.strip_prefix(' ').unwrap_or(after)
}

/// Everything up to and including the `] ` that closes a log prefix, looked for in the
/// first 300 bytes.
fn through_bracket(s: &str) -> Option<&str> {
    let window = &s.as_bytes()[..s.len().min(300)];
    let pos = window.windows(2).position(|w| w == b"] ")?;
    Some(&s[pos + 2..])
}

/// glog / absl: `E0523 23:25:07.437651   27128 file.cc:2826] `.
fn strip_glog(s: &str) -> &str {
    let b = s.as_bytes();
    let looks = b.len() > 15
        && matches!(b[0], b'I' | b'W' | b'E' | b'F')
        && b[1..5].iter().all(u8::is_ascii_digit)
        && b[5] == b' '
        && b[6..8].iter().all(u8::is_ascii_digit)
        && b[8] == b':';
    if looks {
        through_bracket(s).unwrap_or(s)
    } else {
        s
    }
}

/// A dated prefix: TensorFlow's `2024-06-24 17:01:13.933585: E file.cc:1268] ` (or only
/// the date part and `: `), Python logging's `2026-03-05 11:02:33,418 [worker-7] ERROR
/// trainer: ` (or `… - name - ERROR - `), and `2026-03-05 11:02:33.418 host-2 | `.
fn strip_dated(s: &str) -> &str {
    let b = s.as_bytes();
    let looks = b.len() > 20
        && b[0..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b' ' | b'T')
        && b[13] == b':';
    if !looks {
        return s;
    }
    // The time: digits and `:.,` then maybe a zone (`Z`, `+00:00`).
    let time_end = 11 + s[11..]
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, ':' | '.' | ',' | 'Z' | '+')))
        .unwrap_or(s.len() - 11);
    let after = &s[time_end..];
    let head = &after[..floor_boundary(after, 120)];
    let colon = head.find(": ");
    if let Some(pipe) = head.find(" | ").filter(|&p| colon.is_none_or(|c| p < c)) {
        return &after[pipe + 3..];
    }
    if let Some(rest) = python_logging(after) {
        return rest;
    }
    let Some(colon) = s[11..].find(": ").map(|p| p + 11) else {
        return s;
    };
    let rest = &s[colon + 2..];
    let severity = rest.len() > 2 && matches!(&rest.as_bytes()[..2], b"I " | b"W " | b"E " | b"F ");
    if severity {
        through_bracket(rest).unwrap_or(rest)
    } else {
        rest
    }
}

/// The largest char boundary of `s` at or before `n`.
fn floor_boundary(s: &str, n: usize) -> usize {
    let mut n = n.min(s.len());
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    n
}

/// After a time: ` [thread] LEVEL name: `, ` LEVEL name: `, ` - name - LEVEL - ` or
/// ` LEVEL `; what follows it. None when no level word comes within the first few words.
fn python_logging(after: &str) -> Option<&str> {
    const LEVELS: [&str; 7] = [
        "DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL", "FATAL",
    ];
    let mut at = 0;
    for _ in 0..6 {
        let rest = &after[at..];
        let word_start = rest.len() - rest.trim_start_matches([' ', '-']).len();
        let word = &rest[word_start..];
        let len = word.find(' ').unwrap_or(word.len());
        let token = word[..len].trim_end_matches(':');
        at += word_start + len;
        if LEVELS.contains(&token) {
            let tail = &after[at..];
            // `LEVEL - msg`, `LEVEL: msg`.
            for sep in [" - ", ": "] {
                if let Some(t) = tail.strip_prefix(sep) {
                    return Some(t);
                }
            }
            if word[..len].ends_with(':') {
                return Some(tail.strip_prefix(' ').unwrap_or(tail));
            }
            // `LEVEL name: msg` (a logger name has no spaces and some lower case, unlike
            // `RESOURCE_EXHAUSTED:`), else `LEVEL msg`.
            let t = tail.strip_prefix(' ')?;
            let name_len = t.find(' ').unwrap_or(t.len());
            let name = &t[..name_len];
            if name_len > 1 && name.ends_with(':') && name.bytes().any(|b| b.is_ascii_lowercase()) {
                let msg = &t[name_len..];
                return Some(msg.strip_prefix(' ').unwrap_or(msg));
            }
            return Some(t);
        }
        if at >= after.len() || at > 120 {
            return None;
        }
    }
    None
}

/// A bracketed host or worker at the start: `[tpu 12] `, `[worker-3] `.
fn strip_bracketed(s: &str) -> &str {
    let Some(rest) = s.strip_prefix('[') else {
        return s;
    };
    let Some(close) = rest[..floor_boundary(rest, 41)].find(']') else {
        return s;
    };
    let inside = &rest[..close];
    let ok = !inside.is_empty()
        && inside
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.' | ':' | '/'))
        && inside.chars().any(|c| c.is_ascii_alphabetic());
    match rest[close + 1..].strip_prefix(' ') {
        Some(after) if ok => after,
        _ => s,
    }
}

/// A worker name (with a number in it) and a pipe at the start, as docker compose and job
/// runners print them: `worker-1  | `.
fn strip_piped(s: &str) -> &str {
    let name = s
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        .count();
    if name == 0 || name > 40 || !s[..name].bytes().any(|b| b.is_ascii_digit()) {
        return s;
    }
    let spaces = s[name..].bytes().take_while(|&b| b == b' ').count();
    match s[name + spaces..].strip_prefix("| ") {
        Some(rest) if spaces > 0 => rest,
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        assert_eq!(
            strip_prefix("I1122 12:00:00.123 42 x.cc:1] Peak buffers:"),
            "Peak buffers:"
        );
        assert_eq!(
            strip_prefix("2020-05-04 09:05:40.721128: E    1578 a/b.cc:76]      Shape: f32[]"),
            "     Shape: f32[]"
        );
        assert_eq!(strip_prefix("(worker pid=123) \tBuffer 1:"), "\tBuffer 1:");
        assert_eq!(
            strip_prefix("71\u{1b}[2m\u{1b}[36m(MeshHostWorker pid=489)\u{1b}[0m  x"),
            " x"
        );
        assert_eq!(strip_prefix("72[2m[36m(W pid=4, ip=1.2.3.4)[0m y"), "y");
        assert_eq!(strip_prefix("  1. Size: 2.00G"), "  1. Size: 2.00G");
        assert_eq!(strip_prefix("(not a worker) x"), "(not a worker) x");
    }

    #[test]
    fn todays_prefixes_keep_the_message_and_its_indentation() {
        let cases = [
            "E0305 11:02:33.418800   2231 pjit.py:1290] ",
            "2026-03-05 11:02:33,418 [worker-7] ERROR trainer: ",
            "2026-03-05 11:02:33,418 - trainer - ERROR - ",
            "2026-03-05 11:02:33,418 ERROR ",
            "2026-03-05 11:02:33.418 host-2 | ",
            "2026-03-05T11:02:33.418Z host-2 | ",
            "[tpu 12] ",
            "worker-1  | ",
        ];
        for prefix in cases {
            for text in [
                "RESOURCE_EXHAUSTED: E1000: CompileTimeHbmOom: x",
                "       Top-of-Memory reserved:  528.00M (     553,648,128 bytes)",
                "    reserved(Infeed/Outfeed/Continuations) 528.00M ",
            ] {
                assert_eq!(strip_prefix(&format!("{prefix}{text}")), text, "{prefix:?}");
            }
        }
        // Not prefixes: a message's own words stay.
        for line in ["[1, 2] x", "a | b", "Limit:   15753805824", "| x"] {
            assert_eq!(strip_prefix(line), line);
        }
    }

    #[test]
    fn wrapped_shapes_join_and_margin_lines_after_other_lines_do_not() {
        let log = "\t\tShape: (f32[5104,2571\n52], s8[4194304])\n\t\t=====\nValueError: x";
        let lines = clean(log);
        assert_eq!(lines[0].text, "\t\tShape: (f32[5104,257152], s8[4194304])");
        assert_eq!(lines.len(), 3);
        let log = "  File \"x.py\", line 3\nValueError: y";
        assert_eq!(clean(log).len(), 2);
    }

    #[test]
    fn wrapped_operator_lines_join() {
        let log = "\t\tOperator: op_name=\"a/b\nc/d\" source_file=\"/x/\ny.py\" source_\nline=3\n\t\tXLA Label: fusion";
        let lines = clean(log);
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[0].text,
            "\t\tOperator: op_name=\"a/bc/d\" source_file=\"/x/y.py\" source_line=3"
        );
        assert_eq!((lines[0].no, lines[1].no), (1, 5));
    }
}
