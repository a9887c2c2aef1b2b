//! The parser on damaged input: lines corrupted, duplicated, huge, binary; CRLF; no final
//! newline; files that are not dumps. Nothing may panic, and the warnings must say where.
//!
//! Cuts (truncated files) are in tests/cut_points.rs; stdout wrappers, gzip and streaming in
//! chunks in tests/robustness_streams.rs.

#[path = "common/check.rs"]
mod check;
mod common;
#[path = "common/scan.rs"]
mod scan;

use bufscope::{load_files, Load, Loader};
use check::load_one as read_separately;
use common::*;
use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};

/// Deterministic pseudo-random numbers: proptest's generator (ChaCha) from a fixed seed,
/// so failures reproduce.
fn seeded(seed: u64) -> TestRng {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

/// Replaces (or with `insert`, inserts before) 1-based line `n` of `bytes` by `new`.
fn edit_line(bytes: &[u8], n: usize, new: &[u8], insert: bool) -> Vec<u8> {
    let starts = line_starts(bytes);
    let (s, e) = (starts[n - 1], starts.get(n).copied().unwrap_or(bytes.len()));
    let mut out = bytes[..s].to_vec();
    out.extend_from_slice(new);
    out.push(b'\n');
    out.extend_from_slice(if insert { &bytes[s..] } else { &bytes[e..] });
    out
}

/// The lines to corrupt in a file: all of a small one, else a sample.
fn sample_lines(bytes: &[u8], rng: &mut TestRng, max: usize) -> Vec<usize> {
    let n = line_starts(bytes).len() - usize::from(bytes.ends_with(b"\n"));
    if n <= max {
        (1..=n).collect()
    } else {
        let mut v: Vec<usize> = (0..max).map(|_| rng.random_range(1..=n)).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// 1-based number of the first non-blank line: lines up to it are the file's preamble,
/// which a reader may skip as log noise.
fn first_content_line(bytes: &[u8]) -> usize {
    let text = String::from_utf8_lossy(bytes);
    text.split('\n')
        .position(|l| !l.trim().is_empty())
        .map_or(1, |i| i + 1)
}

fn warned_at(load: &Load, file: &str, line: usize) -> bool {
    all_warnings(load)
        .iter()
        .any(|w| w.file == file && w.line == line as u64)
}

fn dump_files(m: &ModuleFiles) -> impl Iterator<Item = (usize, &String, &Vec<u8>)> {
    m.files
        .iter()
        .enumerate()
        .filter(|(_, (n, _))| !ModuleFiles::is_report(n))
        .map(|(i, (n, b))| (i, n, b))
}

/// Runs `corrupt` on sampled lines of every dump file; the warning must name `expect_line`.
fn corrupt_lines(
    per_file: usize,
    seed: u64,
    what: &str,
    corrupt: impl Fn(&[u8], usize) -> Option<(Vec<u8>, usize)>,
) {
    let mut rng = seeded(seed);
    let mut missing = Vec::new();
    let mut tried = 0;
    for m in fixture_modules() {
        for (fi, name, bytes) in dump_files(&m) {
            for n in sample_lines(bytes, &mut rng, per_file) {
                if n <= first_content_line(bytes) || in_instruction_text(bytes, n) {
                    continue;
                }
                let Some((new, expect)) = corrupt(bytes, n) else {
                    continue;
                };
                tried += 1;
                let load = load_module_with(&m, fi, &new);
                let label = format!("{}: {what} at line {n}", name);
                sane(&load, &label);
                // Losing a section header may make the whole file unreadable: an error is an
                // acceptable answer then.
                let orig = line_text(bytes, n);
                let header = matches!(orig.as_str(), "BufferAssignment:" | "Used values:")
                    || orig.starts_with("HloLiveRange");
                if !warned_at(&load, name, expect) && !(header && !load.errors.is_empty()) {
                    let got: Vec<String> = all_warnings(&load)
                        .iter()
                        .take(3)
                        .map(|w| w.to_string())
                        .collect();
                    let text = line_text(&new, expect);
                    missing.push(format!(
                        "{}: {label} ({:?}): no warning at line {expect}; got {got:?}; errors {:?}",
                        m.label,
                        text.chars().take(80).collect::<String>(),
                        load.errors
                    ));
                }
            }
        }
    }
    assert!(tried > 100, "{what}: only {tried} cases");
    // Up to 4 examples of each kind of line.
    let mut kinds = std::collections::BTreeMap::<&str, Vec<&String>>::new();
    for x in &missing {
        kinds
            .entry(line_kind(x.split_once("(\"").map_or("", |p| p.1)))
            .or_default()
            .push(x);
    }
    let examples: Vec<String> = kinds
        .iter()
        .map(|(k, v)| {
            format!(
                "{k} ({} cases):\n  {}",
                v.len(),
                v.iter()
                    .take(4)
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n  ")
            )
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{what}: {} of {tried} cases without the right warning, by kind of line:\n{}",
        missing.len(),
        examples.join("\n")
    );
}

/// A rough name for the kind of a line, for failure messages.
fn line_kind(line: &str) -> &'static str {
    if line.starts_with("allocation ") {
        "allocation header"
    } else if line.starts_with(" value: ") {
        "value line"
    } else if line.starts_with('<') {
        "Used-values entry"
    } else if line.contains("(cumulative") || line.ends_with(" bytes") {
        "peak entry"
    } else if line.starts_with("    ") && line.contains('{') {
        "BufferLiveRange entry"
    } else if line.starts_with("    ") {
        "sequence or stack entry"
    } else {
        "other"
    }
}

/// Whether line `n` is (or a line put before it lands) inside a several-line `from
/// instruction:` text (tests/fixtures/edited): text of an instruction, opaque, no grammar to
/// break. Such a line starts with neither `<` nor a space nor opens a section, and the
/// lines back to the ` from instruction:` line are such lines too.
fn in_instruction_text(bytes: &[u8], n: usize) -> bool {
    const HEADERS: [&str; 6] = [
        "HloLiveRange",
        "BufferAssignment",
        "Total bytes used",
        "Used values",
        "*** ",
        "Stack trace",
    ];
    let free = |k: usize| {
        let t = line_text(bytes, k);
        !t.is_empty() && !t.starts_with(['<', ' ']) && !HEADERS.iter().any(|h| t.starts_with(h))
    };
    let mut k = n;
    while k > 1 && free(k) {
        k -= 1;
    }
    k < n && line_text(bytes, k).starts_with(" from instruction:")
}

fn line_text(bytes: &[u8], n: usize) -> String {
    let starts = line_starts(bytes);
    let e = starts.get(n).map_or(bytes.len(), |e| e - 1);
    String::from_utf8_lossy(&bytes[starts[n - 1]..e]).into_owned()
}

#[test]
fn garbage_line_is_warned_at_its_line() {
    corrupt_lines(60, 1, "garbage line", |b, n| {
        Some((
            edit_line(b, n, b"!!! this is not a dump line ?? <x {y} :z", false),
            n,
        ))
    });
}

#[test]
fn binary_line_is_warned_at_its_line() {
    corrupt_lines(30, 2, "line of NULs and invalid UTF-8", |b, n| {
        Some((
            edit_line(b, n, b"\xff\xfe\x00bad\x00\x80 line\xc3", false),
            n,
        ))
    });
}

#[test]
fn nul_bytes_inside_a_structured_line_are_warned_at_its_line() {
    corrupt_lines(30, 3, "NUL inside a line", |b, n| {
        let line = line_text(b, n);
        // Only lines where a NUL in the middle breaks the grammar (not opaque text).
        let structured = line.starts_with("allocation ")
            || line.starts_with(" value: <")
            || line.starts_with("    ");
        if !structured || line.len() < 4 {
            return None;
        }
        let mut new = line.into_bytes();
        new.insert(3, 0);
        Some((edit_line(b, n, &new, false), n))
    });
}

#[test]
fn huge_line_is_warned_at_its_line() {
    let huge = vec![b'x'; 300_000];
    // Inserted before line n (n >= 2, after the first header): it becomes line n.
    corrupt_lines(8, 4, "line of 300000 'x'", |b, n| {
        Some((edit_line(b, n, &huge, true), n))
    });
}

#[test]
fn duplicated_structured_line_is_warned_at_the_copy() {
    corrupt_lines(80, 5, "duplicated line", |b, n| {
        let line = line_text(b, n);
        // Lines whose repetition is an error: the same allocation, value, range, step or
        // peak entry twice, or a Used-values entry twice.
        let entry = line.strip_prefix("    ");
        let dup_is_error = line.starts_with("allocation ")
            || line.starts_with(" value: <")
            || line.starts_with('<')
            || line.contains(" (cumulative: ")
            || entry.is_some_and(|e| {
                !e.starts_with(' ')
                    && !e.ends_with(" bytes)")
                    && !e.ends_with(" bytes")
                    && e.contains(':')
            });
        dup_is_error.then(|| (edit_line(b, n + 1, line.as_bytes(), true), n + 1))
    });
}

#[test]
fn crlf_and_missing_final_newline_read_the_same() {
    for m in fixture_modules() {
        let want = fingerprint(&read_separately(&m));
        let variants: [(&str, fn(&[u8]) -> Vec<u8>); 3] = [
            ("CRLF", |b| {
                String::from_utf8_lossy(b)
                    .replace('\n', "\r\n")
                    .into_bytes()
            }),
            ("no final newline", |b| {
                b.strip_suffix(b"\n").unwrap_or(b).to_vec()
            }),
            ("CRLF, no final newline", |b| {
                let b = b.strip_suffix(b"\n").unwrap_or(b);
                String::from_utf8_lossy(b)
                    .replace('\n', "\r\n")
                    .into_bytes()
            }),
        ];
        for (what, f) in variants {
            let files: Vec<(String, Vec<u8>)> =
                m.files.iter().map(|(n, b)| (n.clone(), f(b))).collect();
            let load = load_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
            assert!(
                load.errors.is_empty(),
                "{} {what}: {:?}",
                m.label,
                load.errors
            );
            assert_eq!(load.modules.len(), 1, "{} {what}", m.label);
            let got = &load.modules[0];
            assert!(
                got.warnings.is_empty(),
                "{} {what}: {:?}",
                m.label,
                &got.warnings[..got.warnings.len().min(5)]
            );
            assert_eq!(fingerprint(got), want, "{} {what}", m.label);
        }
    }
}

fn assert_not_a_dump(name: &str, bytes: &[u8]) {
    let load = load_files([(name, bytes)]);
    assert!(
        load.modules.is_empty(),
        "{name}: got modules {:?}",
        load.modules.iter().map(|m| &m.name).collect::<Vec<_>>()
    );
    assert_eq!(load.errors.len(), 1, "{name}: errors {:?}", load.errors);
    let e = &load.errors[0];
    assert!(
        e.contains(name),
        "{name}: the error should name the file: {e:?}"
    );
    assert!(
        !e.contains('\n') && e.len() < 400,
        "{name}: one sentence: {e:?}"
    );
    assert!(e.ends_with('.'), "{name}: a sentence: {e:?}");
}

#[test]
fn files_that_are_not_dumps_give_one_error() {
    assert_not_a_dump("empty.txt", b"");
    assert_not_a_dump("empty.buffer-assignment.txt", b"");
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    let mut rng = seeded(99);
    png.extend((0..20_000).map(|_| rng.random::<u8>()));
    assert_not_a_dump("picture.png", &png);
    assert_not_a_dump("picture.buffer-assignment.txt", &png);
    let readme = std::fs::read(fixtures_dir().join("README.md")).unwrap();
    assert_not_a_dump("README.md", &readme);
    assert_not_a_dump("notes.txt", b"just some notes\nnothing to see here\n");
    let source = std::fs::read(manifest_dir().join("src").join("lib.rs")).unwrap();
    assert_not_a_dump("lib.rs", &source);
}

/// Found by the fuzzer (tests/fuzz): whether a file is binary was judged on its first
/// chunk only, so the same bytes were "not a text file" in one chunk and "no section
/// header" in small ones.
#[test]
fn binary_is_judged_the_same_in_any_chunks() {
    let mut bytes = b"ab".to_vec();
    bytes.extend([1u8; 40]);
    for chunk in [1, 2, 5, bytes.len()] {
        let mut loader = Loader::new();
        loader.begin_file("x.bin");
        for c in bytes.chunks(chunk) {
            loader.feed(c);
        }
        let load = loader.finish();
        assert_eq!(
            load.errors,
            ["x.bin is not a text file, so it is not an XLA buffer-assignment dump."],
            "chunks of {chunk}"
        );
    }
}

#[test]
fn not_a_dump_next_to_dumps_does_not_disturb_them() {
    let m = fixture_module("tpu/004_f7d316536d8a2672");
    let want = fingerprint(&read_separately(&m));
    let mut inputs = m.inputs();
    inputs.insert(0, ("README.md", b"# hello\n".as_slice()));
    inputs.push(("empty.txt", b"".as_slice()));
    let load = load_files(inputs);
    assert_eq!(load.modules.len(), 1);
    assert_eq!(load.errors.len(), 2, "{:?}", load.errors);
    assert_eq!(fingerprint(&load.modules[0]), want);
}
