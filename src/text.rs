//! Text cut to fit: names a dump may make 300,000 characters long shortened so that the
//! part that tells them apart stays visible — [`clip_middle`] (op_names and paths differ at
//! their ends, names at both), [`clip_end`], [`clip_front`] (paths, files and names in a
//! fixed-width column). Pure functions, used by the render, the summary text and the page.

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

/// `s` when it has at most `max` characters, else `…` and its last `max − 1` (paths, files
/// and names differ at their ends).
pub fn clip_front(s: &str, max: usize) -> String {
    clip(s, max, 0)
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
    fn clipping_keeps_the_end() {
        assert_eq!(clip_front("short", 10), "short");
        assert_eq!(clip_front("a/b/c/dot_general", 8), "…general");
        assert_eq!(clip_front("a/b/c/dot_general", 8).chars().count(), 8);
    }
}
