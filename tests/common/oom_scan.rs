//! Independent scanning of out-of-memory texts for the reader's tests: printed sizes to
//! bytes, the text after a key, the lines that start a buffer entry, and a `ByteSize`
//! compared with the text it was read from. Plain string searches sharing no code with
//! `bufscope::parse::oom`. Declared by path from tests/oom.rs and tests/oom_made_up.rs (the
//! other test binaries do not build it).

use bufscope::model::oom::{ByteSize, OomBuffer, OomLog};

/// `10.90GiB`, `384.0KiB`, `12B`, `4.00G`, `-1.27G` → bytes: the printed number times its
/// 1024-based unit, rounded. None for anything else.
pub fn scan_size(text: &str) -> Option<i64> {
    let t = text.trim();
    let digits_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(digits_end);
    let power = match unit {
        "B" => 0,
        "K" | "KiB" => 1,
        "M" | "MiB" => 2,
        "G" | "GiB" => 3,
        "T" | "TiB" => 4,
        _ => return None,
    };
    let v: f64 = number.parse().ok()?;
    Some((v * 1024f64.powi(power)).round() as i64)
}

/// What follows `key` on a line, up to the end of the line.
pub fn after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.find(key).map(|p| line[p + key.len()..].trim())
}

/// Lines that start a buffer entry: `Buffer N:` (GPU) or `N. Size:` (TPU), after any
/// prefix.
pub fn entry_lines(text: &str) -> usize {
    text.lines()
        .filter(|l| {
            let t = l.trim_end();
            let gpu = t.rfind("Buffer ").is_some_and(|p| {
                let rest = &t[p + 7..];
                rest.len() > 1
                    && rest.ends_with(':')
                    && rest[..rest.len() - 1].bytes().all(|b| b.is_ascii_digit())
            });
            let tpu = t.find(". Size: ").is_some_and(|p| {
                let number = t[..p].rsplit(' ').next().unwrap_or("");
                !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())
            });
            gpu || tpu
        })
        .count()
}

pub fn all_buffers(log: &OomLog) -> Vec<&OomBuffer> {
    log.messages.iter().flat_map(|m| &m.buffers).collect()
}

pub fn assert_size(s: &ByteSize, printed: &str, what: &str) {
    assert_eq!(s.text, printed, "{what}: text");
    let expected = scan_size(printed).unwrap_or_else(|| panic!("{what}: `{printed}` unreadable"));
    assert_eq!(s.bytes, expected, "{what}: bytes of {printed}");
    assert!(
        s.min <= s.bytes && s.bytes <= s.max,
        "{what}: range of {printed}"
    );
    assert_eq!(
        s.exact,
        printed.ends_with('B') && !printed.ends_with("iB"),
        "{what}: exact"
    );
}
