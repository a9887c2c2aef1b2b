//! Bracket-aware scanning of HLO text: where a bracketed run ends, where a line splits into
//! attributes at the top level, and whether a line leaves a bracket or string open (an
//! instruction printed over several lines, as a Pallas kernel's `xprof_metadata` is).
//!
//! Owns: the depth rule only. Brackets are `()`, `{}`, `[]`; a `"` string (with `\`
//! escapes) hides what it holds; `/*…*/` comments are plain text here (they hold no
//! bracket in what XLA prints).

use std::borrow::Cow;

/// What the walk does at each byte: nothing, an opening or closing bracket, a string's
/// start, a comma (where [`each_top`] splits).
const PLAIN: u8 = 0;
const OPEN: u8 = 1;
const CLOSE: u8 = 2;
const QUOTE: u8 = 3;
const COMMA: u8 = 4;

static CLASS: [u8; 256] = {
    let mut t = [PLAIN; 256];
    t[b'(' as usize] = OPEN;
    t[b'{' as usize] = OPEN;
    t[b'[' as usize] = OPEN;
    t[b')' as usize] = CLOSE;
    t[b'}' as usize] = CLOSE;
    t[b']' as usize] = CLOSE;
    t[b'"' as usize] = QUOTE;
    t[b',' as usize] = COMMA;
    t
};

/// Where the string that starts after `text[..k]` ends: the position after its closing
/// quote, `None` when it stays open (escapes skipped, found a stretch at a time).
fn string_end(text: &[u8], mut k: usize) -> Option<usize> {
    loop {
        let at = k + memchr::memchr2(b'"', b'\\', text.get(k..)?)?;
        if text[at] == b'"' {
            return Some(at + 1);
        }
        k = at + 2;
    }
}

/// Walks `text`: for every bracket and comma outside a string, `f(position, byte, depth)`
/// with the bracket depth after that byte, until `f` returns false. Gives the depth and
/// whether a string is open where it stopped. Other bytes are passed over in a tight loop,
/// strings a stretch at a time.
fn walk(text: &[u8], mut f: impl FnMut(usize, u8, i64) -> bool) -> (i64, bool) {
    let mut depth = 0i64;
    let mut k = 0;
    let n = text.len();
    while k < n {
        let c = text[k];
        match CLASS[c as usize] {
            PLAIN => {
                k += 1;
                continue;
            }
            OPEN => depth += 1,
            CLOSE => depth -= 1,
            QUOTE => match string_end(text, k + 1) {
                Some(end) => {
                    k = end;
                    continue;
                }
                None => return (depth, true),
            },
            _ => {}
        }
        if !f(k, c, depth) {
            break;
        }
        k += 1;
    }
    (depth, false)
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
        if depth > 0 || CLASS[c as usize] != CLOSE {
            return true;
        }
        end = (depth == 0).then_some(k + 1);
        false
    });
    end
}

/// [`balanced_len`] of `text` (which starts with an opening bracket), giving `f` on the way
/// each piece of what the brackets hold, split as [`each_top`] splits it: one walk, not two.
/// Pieces given before a run that never closes (`None`) are the caller's to forget.
pub(super) fn each_inside<'a>(text: &'a [u8], mut f: impl FnMut(&'a [u8])) -> Option<usize> {
    let (mut start, mut any, mut end) = (1, false, None);
    walk(text, |k, c, depth| {
        if c == b',' && depth == 1 {
            f(trim(&text[start..k]));
            start = k + 1;
            any = true;
            return true;
        }
        if depth > 0 || CLASS[c as usize] != CLOSE {
            return true;
        }
        end = (depth == 0).then_some(k + 1);
        false
    });
    let end = end?;
    let last = trim(&text[start.min(end - 1)..end - 1]);
    if !last.is_empty() || any {
        f(last);
    }
    Some(end)
}

/// What [`split`] does with the pieces of a text.
pub(super) trait Split<'a> {
    /// The length of a piece at the start of `rest` (its leading spaces passed over) known
    /// without walking it: one that closes every bracket and string it opens, followed by a
    /// comma or the text's end (spaces aside). It is taken as it is: [`Split::piece`] is not
    /// called for it.
    fn known(&mut self, _rest: &'a [u8]) -> Option<usize> {
        None
    }

    /// One piece, trimmed of spaces; `whole`: it closes every bracket and string it opens.
    fn piece(&mut self, piece: &'a [u8], whole: bool);
}

/// `text` split at each comma outside brackets and strings, each piece given to `to`
/// (trimmed of spaces; nothing for a text of spaces only) unless `to` knows it already.
/// Gives what [`open_at_end`] gives of `text`.
pub(super) fn split<'a>(text: &'a [u8], to: &mut impl Split<'a>) -> (i64, bool) {
    let mut rest = text;
    let mut any = false;
    loop {
        let start = trim_start(rest);
        if let Some(len) = to.known(start) {
            match trim_start(&start[len..]).strip_prefix(b",") {
                Some(next) => rest = next,
                None => return (0, false),
            }
            any = true;
            continue;
        }
        let (end, depth, in_string) = piece_end(rest);
        let piece = trim(&rest[..end]);
        let last = end == rest.len();
        if !last || !piece.is_empty() || any {
            to.piece(piece, !last || (depth == 0 && !in_string));
        }
        if last {
            return (depth, in_string);
        }
        rest = &rest[end + 1..];
        any = true;
    }
}

/// Each piece of `text` as [`split`] gives it, given to `f` in order.
pub(super) fn each_top<'a>(text: &'a [u8], f: impl FnMut(&'a [u8])) -> (i64, bool) {
    struct Each<F>(F);
    impl<'a, F: FnMut(&'a [u8])> Split<'a> for Each<F> {
        fn piece(&mut self, piece: &'a [u8], _whole: bool) {
            (self.0)(piece)
        }
    }
    split(text, &mut Each(f))
}

/// Where the first piece of `text` ends, as [`split`] splits it: the position of the
/// first comma outside brackets and strings, or the text's end; with what [`open_at_end`]
/// gives of the text up to there.
fn piece_end(text: &[u8]) -> (usize, i64, bool) {
    let mut end = text.len();
    let open = walk(text, |k, c, depth| {
        if c == b',' && depth == 0 {
            end = k;
            return false;
        }
        true
    });
    (end, open.0, open.1)
}

/// `text` without leading spaces.
fn trim_start(text: &[u8]) -> &[u8] {
    let start = text.iter().position(|&c| c != b' ').unwrap_or(text.len());
    &text[start..]
}

/// `text` split at each comma outside brackets and strings (pieces trimmed of spaces).
pub(super) fn split_top(text: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    each_top(text, |p| out.push(p));
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
/// opening quote. Returns the string (borrowed when it has no escape) and the rest after
/// the closing quote (`None` when it never closes).
pub(super) fn quoted(text: &[u8]) -> Option<(Cow<'_, [u8]>, &[u8])> {
    let first = memchr::memchr2(b'"', b'\\', text)?;
    if text[first] == b'"' {
        return Some((Cow::Borrowed(&text[..first]), &text[first + 1..]));
    }
    let mut out = text[..first].to_vec();
    let mut k = first;
    while k < text.len() {
        match text[k] {
            b'"' => return Some((Cow::Owned(out), &text[k + 1..])),
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
        let mut pieces = Vec::new();
        let end = each_inside(b"(%a, f(%b, %c), \")\") rest", |p| pieces.push(p));
        assert_eq!(end, Some(20));
        assert_eq!(pieces, [&b"%a"[..], b"f(%b, %c)", b"\")\""]);
        pieces.clear();
        assert_eq!(each_inside(b"( ) x", |p| pieces.push(p)), Some(3));
        assert!(pieces.is_empty());
        assert_eq!(each_inside(b"(a, (b)", |p| pieces.push(p)), None);
        let parts = split_top(b"%a, f(%b, %c), x={1,2}, s=\"p, q\"");
        assert_eq!(parts, [&b"%a"[..], b"f(%b, %c)", b"x={1,2}", b"s=\"p, q\""]);
        assert!(split_top(b"  ").is_empty());
        assert_eq!(
            quoted(b"state[\\'model\\'] x\" rest"),
            Some((Cow::Owned(b"state['model'] x".to_vec()), &b" rest"[..]))
        );
        assert_eq!(
            quoted(b"plain\" rest"),
            Some((Cow::Borrowed(&b"plain"[..]), &b" rest"[..]))
        );
        assert_eq!(open_at_end(b"a=\"x\\\\\" {"), (1, false));
        assert_eq!(quoted(b"open"), None);
    }
}
