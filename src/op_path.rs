//! op_name paths as XLA's metadata writes them (`jit(train_step)/jvp(layer_3)/mlp/dot_general`):
//! split into segments at the `/`s outside brackets ([`segments`]), and numbered repeats
//! folded so that 500 layers read as one ([`fold_segment`], [`fold_path`]). The one rule for
//! the dump answers' op_name tree and for the groups of an OOM message.
//!
//! **Folding.** A run of ASCII digits becomes `#` when it is a whole segment (`h/3` →
//! `h/#`) or a numbered suffix: after `_`, `.` or `-`, and followed by the segment's end or
//! by a character that is not a letter or digit (`decoder_layer_0096` → `decoder_layer_#`,
//! `dot_general.1234` → `dot_general.#`, `jvp(layer_3)` → `jvp(layer_#)`,
//! `fusion.12.clone` → `fusion.#.clone`), and so does an index in brackets, as pytree paths
//! number list elements (`opt_state[0].mu[3]['w']` → `opt_state[#].mu[#]['w']`). Digits
//! inside a word stay (`conv_1x1`, `dense1`, `w2`, `bf16`): they name different things, not
//! repeats.

use std::borrow::Cow;

/// The segments of `path`: split at each `/` that is not inside `()`, `[]` or `{}`
/// (`dot_general[precision=a/b]` stays one segment). An empty path has one empty segment.
pub fn segments(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    split_from(path, Cut { start: 0, depth: 0 }, &mut out);
    out.iter().map(|c| &path[c.start..c.end]).collect()
}

/// Where a segment of a path starts, and the bracket depth there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    pub start: usize,
    pub depth: i32,
}

/// One segment of a path: its bytes `start .. end`, and the bracket depth at its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    pub depth: i32,
}

/// Appends to `out` the segments of `path` from `from` on ([`segments`] of the whole path
/// from `Cut { start: 0, depth: 0 }`): a path sharing its first segments with another is
/// split from the first segment they do not share, at the depth found there.
pub fn split_from(path: &str, from: Cut, out: &mut Vec<Segment>) {
    let mut depth = from.depth;
    let mut start = from.start;
    let mut at_start = depth;
    for (i, &b) in path.as_bytes().iter().enumerate().skip(from.start) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'/' if depth <= 0 => {
                out.push(Segment {
                    start,
                    end: i,
                    depth: at_start,
                });
                start = i + 1;
                at_start = depth;
            }
            _ => {}
        }
    }
    out.push(Segment {
        start,
        end: path.len(),
        depth: at_start,
    });
}

/// `segment` with its numbered repeats replaced by `#` (see the module comment).
pub fn fold_segment(segment: &str) -> Cow<'_, str> {
    let bytes = segment.as_bytes();
    if !bytes.iter().any(u8::is_ascii_digit) {
        return Cow::Borrowed(segment);
    }
    let mut out = String::with_capacity(segment.len());
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            let next = (i + 1..bytes.len())
                .find(|&j| bytes[j].is_ascii_digit())
                .unwrap_or(bytes.len());
            out.push_str(&segment[i..next]);
            i = next;
            continue;
        }
        let end = (i..bytes.len())
            .find(|&j| !bytes[j].is_ascii_digit())
            .unwrap_or(bytes.len());
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(end).copied();
        let whole = before.is_none() && after.is_none();
        let suffix = matches!(before, Some(b'_' | b'.' | b'-'))
            && !after.is_some_and(|b| b.is_ascii_alphanumeric());
        let index = before == Some(b'[') && after == Some(b']');
        if whole || suffix || index {
            out.push('#');
        } else {
            out.push_str(&segment[i..end]);
        }
        i = end;
    }
    Cow::Owned(out)
}

/// `path` with every segment folded; several paths joined by `;` (one OOM buffer can name
/// several) fold one by one.
pub fn fold_path(path: &str) -> String {
    path.split(';')
        .map(|p| {
            segments(p)
                .into_iter()
                .map(fold_segment)
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect::<Vec<_>>()
        .join(";")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_repeats_fold() {
        assert_eq!(fold_segment("decoder_layer_0096"), "decoder_layer_#");
        assert_eq!(fold_segment("3"), "#");
        assert_eq!(fold_segment("dot_general.1234"), "dot_general.#");
        assert_eq!(fold_segment("jvp(layer_3)"), "jvp(layer_#)");
        assert_eq!(fold_segment("fusion.12.clone"), "fusion.#.clone");
        assert_eq!(fold_segment("layers-7"), "layers-#");
        assert_eq!(
            fold_segment("opt_state[0].mu[12]['w']"),
            "opt_state[#].mu[#]['w']"
        );
    }

    #[test]
    fn digits_inside_words_stay() {
        for s in [
            "conv_1x1", "dense1", "bf16", "jvp(mlp)", "a1b22c", "", "_", "x_", "a[1:2]",
        ] {
            assert_eq!(fold_segment(s), s);
        }
        // A leading number that is not the whole segment names a thing (`2d_conv`).
        assert_eq!(fold_segment("2d_conv"), "2d_conv");
    }

    #[test]
    fn paths_split_outside_brackets() {
        assert_eq!(
            segments("jit(f)/model/h/0/attn/dot_general[a=(1, 2)/x]"),
            [
                "jit(f)",
                "model",
                "h",
                "0",
                "attn",
                "dot_general[a=(1, 2)/x]"
            ]
        );
        assert_eq!(segments(""), [""]);
        assert_eq!(segments("a//b/"), ["a", "", "b", ""]);
        // A stray closing bracket does not stop the splitting.
        assert_eq!(segments("a)/b"), ["a)", "b"]);
    }

    #[test]
    fn whole_paths_fold() {
        assert_eq!(
            fold_path("jit(f)/model/h/0/attn/dot_general[a=(1, 2)]"),
            "jit(f)/model/h/#/attn/dot_general[a=(1, 2)]"
        );
        assert_eq!(
            fold_path("enc/layers_12/mlp;enc/layers_3/mlp"),
            "enc/layers_#/mlp;enc/layers_#/mlp"
        );
        assert_eq!(fold_path("a/conv_1x1/b_/c[x/1]"), "a/conv_1x1/b_/c[x/1]");
    }
}
