//! Text cut to fit and made safe to draw: [`clip_middle`] and [`clip_end`] shorten names
//! that a dump may make 300,000 characters long, [`xml_safe`] keeps an SVG well-formed.
//! Pure functions, used by the render and by the page.

use std::borrow::Cow;

/// `s` when it has at most `max` characters, else its start and end with `…` between
/// (op_names and paths differ at their ends, names at both).
pub fn clip_middle(s: &str, max: usize) -> String {
    let head = max.saturating_sub(1) * 2 / 3;
    clip(s, max, head)
}

/// `s` when it has at most `max` characters, else its first `max - 1` and `…`.
pub fn clip_end(s: &str, max: usize) -> String {
    clip(s, max, max.saturating_sub(1))
}

/// `s` cut to `max` characters: `head` of its first, `…`, the rest from its end.
fn clip(s: &str, max: usize, head: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return s.to_string();
    }
    let tail = max.saturating_sub(1) - head;
    let mut out: String = s.chars().take(head).collect();
    out.push('…');
    out.extend(s.chars().skip(count - tail));
    out
}

/// `s` without the characters XML 1.0 forbids (control characters other than tab, line feed
/// and carriage return; U+FFFE, U+FFFF), which names from a dump may hold: each becomes
/// U+FFFD, so that an SVG stays well-formed. plotters escapes `< > & " '` itself.
pub(crate) fn xml_safe(s: &str) -> Cow<'_, str> {
    let bad = |c: char| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}')
    };
    if s.contains(bad) {
        s.chars()
            .map(|c| if bad(c) { '\u{FFFD}' } else { c })
            .collect::<String>()
            .into()
    } else {
        s.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_middle_keeps_both_ends() {
        assert_eq!(clip_middle("short", 5), "short");
        assert_eq!(clip_middle("abcdefghij", 7), "abcd…ij");
        assert_eq!(clip_middle("abcdefghij", 7).chars().count(), 7);
        assert_eq!(clip_middle("fusion.123/while/body", 10), "fusion…ody");
        // Characters, not bytes.
        assert_eq!(clip_middle("ééééé", 4), "éé…é");
        assert_eq!(clip_middle("abc", 1), "…");
        assert_eq!(clip_middle("abc", 0), "…");
    }

    #[test]
    fn clip_end_keeps_the_start() {
        assert_eq!(clip_end("alloc 3", 7), "alloc 3");
        assert_eq!(clip_end("alloc 3 param 0", 8), "alloc 3…");
        assert_eq!(clip_end("ééé", 2), "é…");
        assert_eq!(clip_end("abc", 0), "…");
    }

    #[test]
    fn xml_safe_replaces_what_xml_forbids() {
        assert!(matches!(xml_safe("plain <&>"), Cow::Borrowed("plain <&>")));
        assert_eq!(xml_safe("a\u{1}b\tc\u{FFFF}"), "a\u{FFFD}b\tc\u{FFFD}");
    }
}
