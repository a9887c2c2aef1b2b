//! Text made safe to draw: [`xml_safe`] keeps an SVG well-formed whatever a dump's names
//! hold. (Clipping text to fit is [`crate::text`].)

use std::borrow::Cow;

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
    fn xml_safe_replaces_what_xml_forbids() {
        assert!(matches!(xml_safe("plain <&>"), Cow::Borrowed("plain <&>")));
        assert_eq!(xml_safe("a\u{1}b\tc\u{FFFF}"), "a\u{FFFD}b\tc\u{FFFD}");
    }
}
