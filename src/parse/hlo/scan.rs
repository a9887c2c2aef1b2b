//! Bracket-aware scanning of HLO text: where a bracketed run ends, where a line splits into
//! attributes at the top level, and whether a line leaves a bracket or string open (an
//! instruction printed over several lines, as a Pallas kernel's `xprof_metadata` is).
//!
//! Owns: the depth rule only. Brackets are `()`, `{}`, `[]`; a `"` string (with `\`
//! escapes) hides what it holds; `/*…*/` comments are plain text here (they hold no
//! bracket in what XLA prints).

/// One byte inside a string: whether the string goes on after it.
fn string_byte(c: u8, escaped: &mut bool) -> bool {
    if *escaped {
        *escaped = false;
        return true;
    }
    match c {
        b'\\' => *escaped = true,
        b'"' => return false,
        _ => {}
    }
    true
}

/// Walks `text`: for every byte outside a string, `f(position, byte, depth)` with the
/// bracket depth after that byte, until `f` returns false. Gives the depth and whether a
/// string is open where it stopped.
fn walk(text: &[u8], mut f: impl FnMut(usize, u8, i64) -> bool) -> (i64, bool) {
    let mut depth = 0i64;
    let mut in_str = false;
    let mut escaped = false;
    for (k, &c) in text.iter().enumerate() {
        if in_str {
            in_str = string_byte(c, &mut escaped);
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => depth -= 1,
            _ => {}
        }
        if !f(k, c, depth) {
            break;
        }
    }
    (depth, in_str)
}

/// What is left open at the end of `text`: bracket depth and whether inside a string.
pub(super) fn open_at_end(text: &[u8]) -> (i64, bool) {
    walk(text, |_, _, _| true)
}

/// The length of the bracketed run at the start of `text` (which starts with an opening
/// bracket), its closing bracket included; `None` when it never closes.
pub(super) fn balanced_len(text: &[u8]) -> Option<usize> {
    let mut end = None;
    walk(text, |k, c, depth| {
        if !matches!(c, b')' | b'}' | b']') || depth > 0 {
            return true;
        }
        end = (depth == 0).then_some(k + 1);
        false
    });
    end
}

/// `text` split at each `sep` outside brackets and strings (pieces trimmed of spaces).
pub(super) fn split_top(text: &[u8], sep: u8) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    walk(text, |k, c, depth| {
        if c == sep && depth == 0 {
            out.push(trim(&text[start..k]));
            start = k + 1;
        }
        true
    });
    let last = trim(&text[start..]);
    if !last.is_empty() || !out.is_empty() {
        out.push(last);
    }
    out
}

/// `text` without leading and trailing spaces.
pub(super) fn trim(text: &[u8]) -> &[u8] {
    let start = text.iter().position(|&c| c != b' ').unwrap_or(text.len());
    let end = text
        .iter()
        .rposition(|&c| c != b' ')
        .map_or(start, |e| e + 1);
    &text[start..end.max(start)]
}

/// A quoted string's contents unescaped (`\'`, `\"`, `\\`, `\n`); `text` starts after the
/// opening quote. Returns the string and the rest after the closing quote (`None` when it
/// never closes).
pub(super) fn quoted(text: &[u8]) -> Option<(String, &[u8])> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < text.len() {
        match text[k] {
            b'"' => return Some((crate::model::utf8_lossy(&out).into_owned(), &text[k + 1..])),
            b'\\' if k + 1 < text.len() => {
                out.push(match text[k + 1] {
                    b'n' => b'\n',
                    b't' => b'\t',
                    c => c,
                });
                k += 2;
            }
            c => {
                out.push(c);
                k += 1;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_strings_and_splits() {
        assert_eq!(open_at_end(b"a={\"x\":\"}\""), (1, false));
        assert_eq!(open_at_end(b"a=\"\\\"{"), (0, true));
        assert_eq!(balanced_len(b"(a, (b), \")\") rest"), Some(13));
        assert_eq!(balanced_len(b"(a, (b)"), None);
        let parts = split_top(b"%a, f(%b, %c), x={1,2}, s=\"p, q\"", b',');
        assert_eq!(parts, [&b"%a"[..], b"f(%b, %c)", b"x={1,2}", b"s=\"p, q\""]);
        assert!(split_top(b"  ", b',').is_empty());
        assert_eq!(
            quoted(b"state[\\'model\\'] x\" rest"),
            Some(("state['model'] x".into(), &b" rest"[..]))
        );
        assert_eq!(quoted(b"open"), None);
    }
}
