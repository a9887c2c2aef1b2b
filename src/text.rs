//! Text cut to fit: names a dump may make 300,000 characters long shortened so that the
//! part that tells them apart stays visible — [`clip_middle`] (op_names and paths differ at
//! their ends, names at both), [`clip_end`], [`clip_front`] (paths, files and names in a
//! fixed-width column), [`clip_source`] (a source line: the directory folded, the file name
//! never cut) and [`source_parts`] (its directory, file name and rest). Pure functions, used by the render, the summary text and the page.

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

/// A source line's text (`/dir/file.py:12 in f (inferred)`) in its three parts: the
/// directory (`/dir/`, empty when none), the file name and line (`file.py:12`) and the rest
/// (` in f (inferred)`); `None` when it names no file (`(no source)`, a sentence), so that
/// a cell can shrink the directory and the rest but never the file name.
pub fn source_parts(s: &str) -> Option<(&str, &str, &str)> {
    let (place, rest) = s.split_at(s.find(" in ").or_else(|| s.find(" (")).unwrap_or(s.len()));
    if place.is_empty() || place.contains(' ') || place.starts_with('(') {
        return None;
    }
    let (dir, file) = place.split_at(place.rfind('/').map_or(0, |i| i + 1));
    Some((dir, file, rest))
}

/// A source line's text (`/dir/file.py:12 in f (inferred)`) in at most `max` characters
/// where it can be: the directory folded from its front (`…/layers/file.py:12`, then `…/`),
/// then the function's name cut in its middle; the file name, line and ` (inferred)` are
/// never cut, so the text is longer than `max` when they are.
pub fn clip_source(s: &str, max: usize) -> String {
    let count = |t: &str| t.chars().count();
    if count(s) <= max {
        return s.to_string();
    }
    const INFERRED: &str = " (inferred)";
    let (s, inferred) = match s.strip_suffix(INFERRED) {
        Some(rest) => (rest, INFERRED),
        None => (s, ""),
    };
    let Some((dir, file, function)) = source_parts(s) else {
        return clip_middle(&format!("{s}{inferred}"), max);
    };
    let kept = count(file) + count(inferred);
    let room = max.saturating_sub(kept + count(function));
    let dir = if count(dir) <= room {
        dir.to_string()
    } else if room >= 3 {
        clip_front(dir, room)
    } else if dir.is_empty() {
        String::new()
    } else {
        "…/".to_string()
    };
    let room = max.saturating_sub(kept + count(&dir)).max(8);
    format!("{dir}{file}{}{inferred}", clip_middle(function, room.min(count(function))))
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
    fn a_source_line_keeps_its_file_name_whole() {
        let s = "/venv/site-packages/maxtext/layers/nnx_decoders.py:1195 in NNXDecoder._apply (inferred)";
        assert_eq!(clip_source(s, 200), s);
        let short = clip_source(s, 60);
        assert_eq!(short, "…layers/nnx_decoders.py:1195 in NNXDecoder._apply (inferred)");
        assert_eq!(short.chars().count(), 60);
        // Too narrow for the directory: `…/`, then the function cut in its middle.
        let narrow = clip_source(s, 30);
        assert!(narrow.starts_with("…/nnx_decoders.py:1195 in "), "{narrow}");
        assert!(narrow.ends_with(" (inferred)"), "{narrow}");
        // Narrower than the file name: the file name stays whole.
        assert_eq!(clip_source("/a/b/a_long_file_name.py:3", 10), "…/a_long_file_name.py:3");
        assert_eq!(clip_source("no_dir_file.py:3", 4), "no_dir_file.py:3");
        // A text that is no path (a sentence) is cut in its middle.
        assert_eq!(clip_source("(no source) at all", 7), "(no …ll");
    }

    #[test]
    fn a_source_line_in_its_parts() {
        let s = "/a/b/file.py:12 in f (inferred)";
        assert_eq!(source_parts(s), Some(("/a/b/", "file.py:12", " in f (inferred)")));
        assert_eq!(source_parts("file.py:3 (inferred)"), Some(("", "file.py:3", " (inferred)")));
        assert_eq!(source_parts("…/file.py:3"), Some(("…/", "file.py:3", "")));
        assert_eq!(source_parts("(no source)"), None);
        assert_eq!(source_parts("stack frame 4: source lines need the HLO text"), None);
    }

    #[test]
    fn clipping_keeps_the_end() {
        assert_eq!(clip_front("short", 10), "short");
        assert_eq!(clip_front("a/b/c/dot_general", 8), "…general");
        assert_eq!(clip_front("a/b/c/dot_general", 8).chars().count(), 8);
    }
}
