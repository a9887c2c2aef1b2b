//! The parser on input that comes in other packagings and pieces: the stdout wrapper
//! (`*** Begin … ***`), gzip (whole, with a bad checksum, without its trailer), streaming in
//! chunks of any size, several modules in one load, and files joined in pieces. Each reads
//! as the plain separate files do, and nothing panics. Damaged lines, CRLF and files that
//! are not dumps are tests/robustness.rs.

#[path = "common/check.rs"]
mod check;
mod common;
#[path = "common/scan.rs"]
mod scan;

use bufscope::{load_files, Load, Loader};
use check::load_one as read_separately;
use common::*;

fn wrap_stdout(modules: &[&ModuleFiles]) -> Vec<u8> {
    let mut out = Vec::new();
    // XLA writes the HLO text too; a reader must skip it.
    out.extend_from_slice(
        b"*** Begin module_0001.jit_f.before_optimizations.txt ***\nHloModule jit_f\n\nENTRY %main {\n  ROOT %p = f32[] parameter(0)\n}\n\n*** End module_0001.jit_f.before_optimizations.txt ***\n",
    );
    for m in modules {
        for (name, bytes) in &m.files {
            // The TPU dumps were renamed to `NNN_hash.txt`; in a stdout dump XLA's own
            // suffix names the file.
            let name = if bufscope::parse::is_ours(name) {
                name.clone()
            } else {
                format!("{}.buffer-assignment.txt", m.stem)
            };
            out.extend_from_slice(format!("*** Begin {name} ***\n").as_bytes());
            out.extend_from_slice(bytes);
            out.extend_from_slice(format!("\n*** End {name} ***\n").as_bytes());
        }
    }
    out
}

#[test]
fn stdout_dump_reads_as_the_separate_files() {
    let pairs = [
        ("tpu/004_f7d316536d8a2672", "cpu/jax0.10.2/cpu_cond_switch"),
        ("cpu/jax0.9.2/cpu_mlp_train", "cpu/jax0.4.38/cpu_tiny"),
    ];
    for (a, b) in pairs {
        let (ma, mb) = (fixture_module(a), fixture_module(b));
        let want = [
            fingerprint(&read_separately(&ma)),
            fingerprint(&read_separately(&mb)),
        ];
        let stdout = wrap_stdout(&[&ma, &mb]);
        let load = load_files([("xla_stdout.log", stdout.as_slice())]);
        assert!(load.errors.is_empty(), "{a}+{b}: {:?}", load.errors);
        assert_eq!(
            load.modules.len(),
            2,
            "{a}+{b}: {:?}",
            load.modules.iter().map(|m| &m.name).collect::<Vec<_>>()
        );
        for (got, want) in load.modules.iter().zip(&want) {
            assert!(
                got.warnings.is_empty(),
                "{}: {:?}",
                got.name,
                &got.warnings[..got.warnings.len().min(5)]
            );
            assert_eq!(&fingerprint(got), want);
        }
        // With log noise around the sections.
        let mut noisy = b"2026-01-01 I0101 some log line\n".to_vec();
        noisy.extend_from_slice(&stdout);
        noisy.extend_from_slice(b"done.\n");
        let load = load_files([("xla_stdout.log", noisy.as_slice())]);
        assert_eq!(
            load.modules.len(),
            2,
            "{a}+{b} with noise: {:?}",
            load.errors
        );
        for (got, want) in load.modules.iter().zip(&want) {
            assert_eq!(&fingerprint(got), want, "{a}+{b} with noise");
        }
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[test]
fn gzip_reads_as_plain() {
    for label in [
        "cpu/jax0.6.2/cpu_mlp_train",
        "cpu/jax0.10.2/cpu_scan_layers",
        "tpu/001_d4ec204070c56195",
    ] {
        let m = fixture_module(label);
        let want = fingerprint(&read_separately(&m));
        for suffix in ["", ".gz"] {
            let files: Vec<(String, Vec<u8>)> = m
                .files
                .iter()
                .map(|(n, b)| (format!("{n}{suffix}"), gzip(b)))
                .collect();
            let load = load_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
            assert!(
                load.errors.is_empty(),
                "{label} gz{suffix}: {:?}",
                load.errors
            );
            assert_eq!(load.modules.len(), 1, "{label} gz{suffix}");
            assert!(
                load.modules[0].warnings.is_empty(),
                "{label}: {:?}",
                load.modules[0].warnings
            );
            assert_eq!(fingerprint(&load.modules[0]), want, "{label} gz{suffix}");
        }
    }
    // A truncated gzip stream: no panic, and something is said about it.
    let m = fixture_module("cpu/jax0.6.2/cpu_tiny");
    let gz = gzip(&m.files[0].1);
    for cut in [10, gz.len() / 2, gz.len() - 4] {
        let load = load_files([(m.files[0].0.as_str(), &gz[..cut])]);
        sane(&load, "truncated gzip");
        assert!(
            !load.errors.is_empty() || !all_warnings(&load).is_empty(),
            "truncated gzip at {cut}: nothing said"
        );
    }
}

#[test]
fn chunked_streaming_reads_the_same() {
    let mut failures = Vec::new();
    for label in [
        "cpu/jax0.7.2/cpu_tiny",
        "tpu/002_609704118d861766",
        "cpu/jax0.10.2/cpu_mlp_train",
    ] {
        let m = fixture_module(label);
        let want = fingerprint(&read_separately(&m));
        for chunk in [1usize, 2, 3, 7, 64, 4093] {
            for gz in [false, true] {
                if chunk == 1 && m.files.iter().map(|f| f.1.len()).sum::<usize>() > 100_000 {
                    continue;
                }
                let mut loader = Loader::new();
                for (name, bytes) in &m.files {
                    let bytes = if gz { gzip(bytes) } else { bytes.clone() };
                    loader.begin_file(name);
                    for c in bytes.chunks(chunk) {
                        loader.feed(c);
                    }
                    loader.end_file();
                }
                let load = loader.finish();
                let case = format!(
                    "{label} in chunks of {chunk} bytes{}",
                    if gz { ", gzip" } else { "" }
                );
                if !load.errors.is_empty() {
                    failures.push(format!("{case}: errors {:?}", load.errors));
                } else if load.modules.len() != 1 {
                    failures.push(format!("{case}: {} modules", load.modules.len()));
                } else if !load.modules[0].warnings.is_empty() {
                    failures.push(format!(
                        "{case}: warnings {:?}",
                        &load.modules[0].warnings[..load.modules[0].warnings.len().min(3)]
                    ));
                } else if fingerprint(&load.modules[0]) != want {
                    failures.push(format!("{case}: reads differently"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Found by the fuzzer (tests/fuzz): a gzip stream whose checksum is wrong, or whose
/// trailer is cut off, was read as an empty file when it came in one chunk (the decoder
/// still held the text when the checksum failed), but as the dump it is in small chunks.
#[test]
fn gzip_with_bad_checksum_or_no_trailer_reads_its_text_in_any_chunks() {
    let m = fixture_module("cpu/jax0.6.2/cpu_tiny");
    let (name, plain) = (&m.files[0].0, &m.files[0].1);
    let want = load_files([(name.as_str(), plain.as_slice())]);
    let values = want.modules[0].values.len();
    let gz = gzip(plain);
    let mut bad_crc = gz.clone();
    let n = bad_crc.len();
    bad_crc[n - 8] ^= 0xff;
    for (what, bytes) in [("bad checksum", &bad_crc[..]), ("no trailer", &gz[..n - 8])] {
        for chunk in [1, 3, 64, n] {
            let mut loader = Loader::new();
            loader.begin_file(name);
            for c in bytes.chunks(chunk) {
                loader.feed(c);
            }
            let load = loader.finish();
            let case = format!("{what}, chunks of {chunk}");
            assert!(load.errors.is_empty(), "{case}: {:?}", load.errors);
            assert_eq!(load.modules.len(), 1, "{case}");
            assert_eq!(load.modules[0].values.len(), values, "{case}");
            let warnings: Vec<_> = load.modules[0]
                .warnings
                .iter()
                .map(|w| &w.message)
                .collect();
            assert_eq!(
                warnings,
                ["the gzip data is corrupt or cut short; what came before was read"],
                "{case}"
            );
        }
    }
}

#[test]
fn several_modules_in_one_load_stay_apart() {
    // Every fixture at once (one folder's modules have distinct stems; the same stem in
    // two folders is the same module name, so load one folder at a time).
    let modules = fixture_modules();
    let folders: std::collections::BTreeSet<&str> =
        modules.iter().map(|m| m.folder.as_str()).collect();
    for folder in folders {
        let of: Vec<&ModuleFiles> = modules.iter().filter(|m| m.folder == folder).collect();
        let inputs: Vec<(&str, &[u8])> = of.iter().flat_map(|m| m.inputs()).collect();
        let load = load_files(inputs);
        assert!(load.errors.is_empty(), "{folder}: {:?}", load.errors);
        assert_eq!(load.modules.len(), of.len(), "{folder}");
        for m in of {
            let got = load
                .modules
                .iter()
                .find(|x| x.name == m.stem)
                .unwrap_or_else(|| panic!("{} missing", m.label));
            assert_eq!(
                fingerprint(got),
                fingerprint(&read_separately(m)),
                "{}",
                m.label
            );
        }
    }
}

/// Everything a load says: each module's fingerprint and warnings, and the errors.
fn describe_load(load: &Load) -> String {
    let mut out = format!("errors {:?}\n", load.errors);
    for m in &load.modules {
        out.push_str(&fingerprint(m));
        for w in &m.warnings {
            out.push_str(&format!("warning {}:{}: {}\n", w.file, w.line, w.message));
        }
    }
    out
}

#[test]
fn joining_in_pieces_is_joining_in_one_go() {
    // Every fixture module, and damaged ones whose join warns (a value listed twice, a
    // second live range, a `Used values` entry of no allocation, a cut `Used values`).
    let tiny = fixture_module("cpu/jax0.6.2/cpu_tiny");
    let (name, bytes) = tiny.inputs()[0];
    let text = String::from_utf8_lossy(bytes).into_owned();
    let twice = |prefix: &str| {
        let line = text.lines().find(|l| l.starts_with(prefix)).unwrap();
        text.replacen(&format!("{line}\n"), &format!("{line}\n{line}\n"), 1)
    };
    let range = text
        .lines()
        .skip_while(|l| *l != "  BufferLiveRange:")
        .nth(1)
        .unwrap()
        .to_string();
    let damaged = [
        twice(" value: <"),
        text.replacen(&format!("{range}\n"), &format!("{range}\n{range}\n"), 1),
        text.replacen("\n<", "\n<987654 stray.1 @0>\n positions:\n uses:\n from instruction: %stray.1 = f32[] parameter(0)\n<", 1),
        text[..text.find("HloLiveRange").unwrap()].replacen("\n<", "\n", 3),
    ];
    let mut inputs: Vec<Vec<(String, Vec<u8>)>> = fixture_modules()
        .iter()
        .map(|m| {
            m.inputs()
                .into_iter()
                .map(|(n, b)| (n.to_string(), b.to_vec()))
                .collect()
        })
        .collect();
    inputs.extend(
        damaged
            .iter()
            .map(|t| vec![(name.to_string(), t.as_bytes().to_vec())]),
    );
    let mut warned = 0;
    for files in &inputs {
        let load = || {
            let mut loader = Loader::new();
            for (name, bytes) in files {
                loader.begin_file(name);
                loader.feed(bytes);
            }
            loader
        };
        let whole = load().finish();
        warned += usize::from(whole.modules.iter().any(|m| !m.warnings.is_empty()));
        let want = describe_load(&whole);
        for work in [1, 7, 1000] {
            let mut finishing = load().finishing();
            let mut pieces = 1;
            while !finishing.step(work) {
                pieces += 1;
            }
            let values: usize = whole.modules.iter().map(|m| m.values.len()).sum();
            assert!(
                work > 1 || pieces > values,
                "{}: {pieces} pieces",
                files[0].0
            );
            assert_eq!(
                describe_load(&finishing.into_load()),
                want,
                "{} in pieces of {work}",
                files[0].0
            );
        }
    }
    assert!(warned >= 4, "only {warned} loads had join warnings");
}
