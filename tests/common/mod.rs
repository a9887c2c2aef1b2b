//! Shared by the integration tests: finding the fixture dumps, grouping their files into
//! modules, and an independent line scanner that reads the figures the tests expect.
//!
//! The scanner is deliberately dumb (prefix tests and `split`s, grep-like) and shares no code
//! with `bufscope::parse`, so that a parser bug cannot hide behind the same bug here.
#![allow(dead_code)]

pub mod deferred;
pub mod occupied;

pub use deferred::*;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One module's files: `(file name, bytes)`, in a stable order.
#[derive(Clone)]
pub struct ModuleFiles {
    /// `tpu/000_...` or `cpu/jax0.6.2/cpu_tiny`: folder + stem, for messages.
    pub label: String,
    /// The stem shared by the files (`cpu_tiny`), which names the module.
    pub stem: String,
    /// The folder below `fixtures/` (or `dumps/`): `cpu/jax0.10.2`, `tpu`.
    pub folder: String,
    pub files: Vec<(String, Vec<u8>)>,
}

impl ModuleFiles {
    pub fn inputs(&self) -> Vec<(&str, &[u8])> {
        self.files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect()
    }
    pub fn is_report(name: &str) -> bool {
        name.contains("memory-usage-report")
    }
    /// The files that are not memory-usage reports.
    pub fn dump_files(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files
            .iter()
            .filter(|(n, _)| !Self::is_report(n))
            .map(|(n, b)| (n.as_str(), b.as_slice()))
    }
    pub fn report_file(&self) -> Option<(&str, &[u8])> {
        self.files
            .iter()
            .find(|(n, _)| Self::is_report(n))
            .map(|(n, b)| (n.as_str(), b.as_slice()))
    }
}

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixtures_dir() -> PathBuf {
    manifest_dir().join("tests").join("fixtures")
}

/// `../shared/dumps` next to the repository (`$BUFSCOPE_SHARED/dumps` when that is set, as
/// for the browser tests), when it is there.
pub fn shared_dumps_dir() -> Option<PathBuf> {
    let shared = std::env::var_os("BUFSCOPE_SHARED")
        .map_or_else(|| manifest_dir().join("..").join("shared"), PathBuf::from);
    let dir = shared.join("dumps");
    dir.is_dir().then_some(dir)
}

/// Whether the tests run under CI (`CI=true`, as CI services and `.ci/run` set it).
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Marks the calling test as skipped for want of `needs` (`../shared/dumps`): prints
/// `SKIPPED: TEST: needs ...` on the terminal, past libtest's capture of passing tests'
/// output, so a skip does not pass as a silent `ok`. Under CI, which always has `needs`,
/// the test fails instead.
pub fn skip(test: &str, needs: &str) {
    let line = format!("SKIPPED: {test}: needs {needs}");
    if under_ci() {
        panic!("{line}, and CI=true: CI must not skip it");
    }
    // `eprintln!` would be captured (and hidden) for a passing test: write to fd 2.
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Marks the calling test as left to the release run (`./dev test` runs its file again with
/// `--release`): prints `SKIPPED: TEST: NOTE in a debug build` on the terminal, never fails.
pub fn skip_in_debug(test: &str, what: &str) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED: {test}: {what} in a debug build"
    );
}

/// `../shared/dumps`, or `None` after reporting `test` as skipped ([`skip`]).
pub fn shared_dumps_or_skip(test: &str) -> Option<PathBuf> {
    let dir = shared_dumps_dir();
    if dir.is_none() {
        skip(test, "../shared/dumps beside the repository");
    }
    dir
}

/// `load_files` of the files under `dir` named `stem.part`, one for each of `parts`.
pub fn load_parts(dir: &Path, stem: &str, parts: &[&str]) -> bufscope::Load {
    let files: Vec<(String, Vec<u8>)> = parts
        .iter()
        .map(|p| {
            let name = format!("{stem}.{p}");
            (name.clone(), std::fs::read(dir.join(&name)).unwrap())
        })
        .collect();
    bufscope::load_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())))
}

/// The one module of run `run` in `../shared/dumps/tpu-aot/FOLDER` (its dump files and HLO
/// text read together), or `None` after reporting it skipped ([`skip`]).
pub fn shared_tpu_module(folder: &str, run: &str) -> Option<bufscope::model::Module> {
    let dumps = shared_dumps_or_skip(run)?;
    let files = modules_under(&dumps.join("tpu-aot").join(folder), |_, stem| stem == run);
    assert_eq!(files.len(), 1, "{folder}/{run}");
    let load = bufscope::load_files(files[0].inputs());
    Some(load.modules.into_iter().next().unwrap())
}

/// The files of `../shared/dumps/oom` (real out-of-memory messages; its README left out), in
/// name order, or `None` after reporting `test` as skipped ([`skip`]).
pub fn shared_oom_or_skip(test: &str) -> Option<Vec<PathBuf>> {
    let dir = shared_dumps_dir()
        .map(|d| d.join("oom"))
        .filter(|d| d.is_dir());
    let Some(dir) = dir else {
        skip(test, "../shared/dumps/oom beside the repository");
        return None;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("README")
        })
        .collect();
    files.sort();
    assert!(
        files.len() >= 8,
        "expected the 8 OOM files in {}",
        dir.display()
    );
    Some(files)
}

/// The stem of a dump file name: everything before the first `.`.
pub fn stem_of(file_name: &str) -> &str {
    file_name.split('.').next().unwrap_or(file_name)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "txt") {
            out.push(p);
        }
    }
}

/// Every module under `root`, its files grouped by folder and stem, for which `keep(folder,
/// stem)` holds.
pub fn modules_under(root: &Path, keep: impl Fn(&str, &str) -> bool) -> Vec<ModuleFiles> {
    let mut paths = Vec::new();
    walk(root, &mut paths);
    let mut groups: BTreeMap<(String, String), Vec<PathBuf>> = BTreeMap::new();
    for p in paths {
        let folder = p
            .parent()
            .unwrap()
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let stem = stem_of(&name).to_string();
        groups.entry((folder, stem)).or_default().push(p);
    }
    // In a folder as XLA lays it out (`module_NNNN.name.…`), a module number whose files
    // hold no buffer assignment is a compilation XLA stopped before it (jax's `jit_init`
    // writes its `before_optimizations` under one number and its dump under another): no
    // module to read.
    let xla_without_dump = |stem: &str, paths: &[PathBuf]| {
        stem.starts_with("module_")
            && !paths
                .iter()
                .any(|p| p.to_string_lossy().contains("buffer-assignment"))
    };
    groups
        .into_iter()
        .filter(|((folder, stem), paths)| keep(folder, stem) && !xla_without_dump(stem, paths))
        .map(|((folder, stem), paths)| ModuleFiles {
            label: format!("{folder}/{stem}"),
            files: paths
                .iter()
                .map(|p| {
                    (
                        p.file_name().unwrap().to_string_lossy().into_owned(),
                        std::fs::read(p).unwrap(),
                    )
                })
                .collect(),
            stem,
            folder,
        })
        .collect()
}

/// Every fixture module (tests/fixtures).
pub fn fixture_modules() -> Vec<ModuleFiles> {
    // `folders/` holds whole dump folders (HLO texts beside the dumps) for the folder tests,
    // `sweep/` a compilation of a sweep for tests/sweep.rs.
    let m = modules_under(&fixtures_dir(), |folder, _| {
        !folder.starts_with("folders") && !folder.starts_with("sweep")
    });
    assert_eq!(
        m.len(),
        24,
        "expected the 24 fixture modules in tests/fixtures (23 real, 1 edited)"
    );
    m
}

pub fn fixture_module(label: &str) -> ModuleFiles {
    fixture_modules()
        .into_iter()
        .find(|m| m.label == label)
        .unwrap_or_else(|| panic!("no fixture module {label}"))
}

// ---------------------------------------------------------------------------------------
// The independent scanner.

/// A ` value:` line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ScanValue {
    pub id: u32,
    pub name: String,
    /// As printed; empty when none.
    pub index: String,
    pub phi: bool,
    pub color: Option<u32>,
    /// The number in the preceding `allocation N:` header.
    pub allocation: u32,
    pub size: u64,
    pub offset: u64,
    pub shape: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanAllocation {
    pub index: u32,
    pub size: u64,
    pub color: u32,
    pub parameter: Option<u32>,
    pub has_output_shape: bool,
    pub constant: bool,
    pub thread_local: bool,
    pub maybe_live_out: bool,
    pub preallocated_temp: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanPeakEntry {
    pub name: String,
    /// `None` in the old form (`name: N bytes`).
    pub index: Option<String>,
    pub bytes: u64,
    pub cumulative: Option<u64>,
}

#[derive(Clone, Debug, Default)]
pub struct Scan {
    pub allocations: Vec<ScanAllocation>,
    pub values: Vec<ScanValue>,
    /// `Total bytes used:` of the dump files (not the report).
    pub total: Option<u64>,
    pub max: Option<u32>,
    pub sequence: Vec<String>,
    /// `name{idx}` (index always printed) → (start, end).
    pub live_ranges: BTreeMap<String, (u32, u32)>,
    pub peak_time: Option<u32>,
    pub peak: Vec<ScanPeakEntry>,
    pub peak_undetermined: bool,
    pub stack_trace_total: Option<u64>,
    pub stack_trace_nodes: usize,
    /// Report format A `Total bytes used:`.
    pub report_total: Option<u64>,
    /// Report format B `Memory Space: NAME (color=N)` + `Total bytes: N`.
    pub report_spaces: Vec<(String, u32, u64)>,
}

fn num<T: std::str::FromStr>(s: &str, what: &str) -> T {
    s.trim()
        .parse()
        .unwrap_or_else(|_| panic!("scanner: bad number {s:?} in {what:?}"))
}

/// `a b c` digits grouped by spaces.
fn spaced(s: &str) -> u64 {
    num(&s.replace(' ', ""), s)
}

/// Splits the inside of a short value token `ID NAME[{idx}][ (phi)][ @N]`.
pub fn split_short_value(inner: &str) -> (u32, String, String, bool, Option<u32>) {
    let (id, rest) = inner.split_once(' ').expect("short value: id");
    let mut parts = rest.split(' ');
    let name_idx = parts.next().unwrap();
    let (name, index) = match name_idx.find('{') {
        Some(i) => (name_idx[..i].to_string(), name_idx[i..].to_string()),
        None => (name_idx.to_string(), String::new()),
    };
    let mut phi = false;
    let mut color = None;
    for p in parts {
        if p == "(phi)" {
            phi = true;
        } else if let Some(c) = p.strip_prefix('@') {
            color = Some(num(c, inner));
        } else {
            panic!("scanner: unexpected {p:?} in <{inner}>");
        }
    }
    (num(id, inner), name, index, phi, color)
}

fn lines_of(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
        .collect()
}

/// Scans one module's files.
pub fn scan(m: &ModuleFiles) -> Scan {
    let mut s = Scan::default();
    for (name, bytes) in &m.files {
        if ModuleFiles::is_report(name) {
            scan_report(bytes, &mut s);
        } else {
            scan_dump(bytes, &mut s);
        }
    }
    s
}

#[derive(PartialEq)]
enum Sec {
    None,
    Sequence,
    Ranges,
    Peak,
    Stack,
}

pub fn scan_dump(bytes: &[u8], s: &mut Scan) {
    let mut alloc: Option<u32> = None;
    let mut sec = Sec::None;
    for line in lines_of(bytes) {
        let line = line.as_str();
        if let Some(rest) = line.strip_prefix("allocation ") {
            let (idx, header) = rest.split_once(':').unwrap();
            let index: u32 = num(idx, line);
            let size_txt = header
                .strip_prefix(" size ")
                .unwrap_or_else(|| panic!("scanner: header {line:?}"));
            let size = num(
                size_txt.split(',').next().unwrap().trim_end_matches(':'),
                line,
            );
            let field = |key: &str| -> Option<u32> {
                header
                    .split(", ")
                    .find_map(|f| f.strip_prefix(key))
                    .map(|n| num(n.trim_end_matches(':').split(',').next().unwrap(), line))
            };
            // Flags are the last comma-separated words of the header (shapes hold no such words).
            let words: Vec<&str> = header.trim_end_matches(':').split(", ").collect();
            s.allocations.push(ScanAllocation {
                index,
                size,
                color: field("color ").unwrap_or(0),
                parameter: field("parameter "),
                has_output_shape: header.contains(", output shape is |"),
                constant: words.contains(&"constant"),
                thread_local: words.contains(&"thread-local"),
                maybe_live_out: words.contains(&"maybe-live-out"),
                preallocated_temp: words.contains(&"preallocated-temp"),
            });
            alloc = Some(index);
            continue;
        }
        if let Some(rest) = line.strip_prefix(" value: <") {
            let (inner, rest) = rest.split_once('>').unwrap();
            let (id, name, index, phi, color) = split_short_value(inner);
            let rest = rest.strip_prefix(" (size=").unwrap();
            let (size, rest) = rest.split_once(",offset=").unwrap();
            let (offset, shape) = rest.split_once("): ").unwrap();
            s.values.push(ScanValue {
                id,
                name,
                index,
                phi,
                color,
                allocation: alloc.expect("value before any allocation"),
                size: num(size, line),
                offset: num(offset, line),
                shape: shape.to_string(),
            });
            continue;
        }
        if let Some(rest) = line.strip_prefix("Total bytes used: ") {
            s.total = Some(num(rest.split(' ').next().unwrap(), line));
            continue;
        }
        if let Some(rest) = line.strip_prefix("HloLiveRange (max ") {
            s.max = Some(num(rest.strip_suffix("):").unwrap(), line));
            sec = Sec::None;
            continue;
        }
        match line {
            "  InstructionSequence:" => {
                sec = Sec::Sequence;
                continue;
            }
            "  BufferLiveRange:" => {
                sec = Sec::Ranges;
                continue;
            }
            "  Peak memory could not be determined due to unbounded dynamic shape." => {
                s.peak_undetermined = true;
                sec = Sec::None;
                continue;
            }
            _ => {}
        }
        if let Some(rest) = line.strip_prefix("  Live ranges at ") {
            s.peak_time = Some(num(rest.strip_suffix(" (peak):").unwrap(), line));
            sec = Sec::Peak;
            continue;
        }
        if let Some(rest) = line.strip_prefix("  Stack trace breakdown for peak usage: ") {
            s.stack_trace_total = Some(spaced(rest.strip_suffix(" bytes").unwrap()));
            sec = Sec::Stack;
            continue;
        }
        let Some(entry) = line.strip_prefix("    ") else {
            if !line.starts_with("    ") && sec != Sec::None && !line.is_empty() {
                sec = Sec::None;
            }
            continue;
        };
        match sec {
            Sec::Sequence => {
                let (_, name) = entry.split_once(':').unwrap();
                s.sequence.push(name.to_string());
            }
            Sec::Ranges => {
                let (key, range) = entry.rsplit_once(':').unwrap();
                let (a, b) = range.split_once('-').unwrap();
                s.live_ranges
                    .insert(key.to_string(), (num(a, line), num(b, line)));
            }
            Sec::Peak => {
                let (key, rest) = entry.split_once(": ").unwrap();
                let (bytes, rest) = rest.split_once(" bytes").unwrap();
                let cumulative = rest
                    .strip_prefix(" (cumulative: ")
                    .map(|c| num(c.strip_suffix(" bytes)").unwrap(), line));
                let (name, index) = match key.find('{') {
                    Some(i) => (key[..i].to_string(), Some(key[i..].to_string())),
                    None => (key.to_string(), None),
                };
                s.peak.push(ScanPeakEntry {
                    name,
                    index,
                    bytes: num(bytes, line),
                    cumulative,
                });
            }
            Sec::Stack => s.stack_trace_nodes += 1,
            Sec::None => {}
        }
    }
}

pub fn scan_report(bytes: &[u8], s: &mut Scan) {
    let lines = lines_of(bytes);
    for (i, line) in lines.iter().enumerate() {
        if let Some(rest) = line.strip_prefix("Total bytes used: ") {
            s.report_total = Some(num(rest.split(' ').next().unwrap(), line));
        }
        if let Some(rest) = line.strip_prefix("Memory Space: ") {
            let (name, color) = rest.split_once(" (color=").unwrap();
            let color: u32 = num(color.strip_suffix(')').unwrap(), line);
            let total = lines[i + 1]
                .strip_prefix("Total bytes: ")
                .map(|t| num(t.split(' ').next().unwrap(), line))
                .expect("Total bytes: after Memory Space:");
            s.report_spaces.push((name.to_string(), color, total));
        }
    }
}

/// `name{idx}` with `{}` for no index, as BufferLiveRange prints it.
pub fn range_key(name: &str, index: &str) -> String {
    if index.is_empty() {
        format!("{name}{{}}")
    } else {
        format!("{name}{index}")
    }
}

// ---------------------------------------------------------------------------------------
// Comparing modules read in different ways.

/// Everything a module says, as text, except the names of the files it came from and its
/// warnings: two reads of the same dump (CRLF, gzip, stdout wrapper, chunked) must agree.
pub fn fingerprint(m: &bufscope::model::Module) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let s = |x| m.str(x).to_string();
    writeln!(out, "module {}", m.name).unwrap();
    for a in &m.allocations {
        writeln!(
            out,
            "alloc {} size {} color {} page {:?} param {:?} out {:?} flags {:?} values {:?}",
            a.index,
            a.size,
            a.color,
            a.page,
            a.parameter
                .map(|p| (p.number, s(p.shape), s(p.shape_index))),
            a.output_shape.map(s),
            a.flags,
            a.values
        )
        .unwrap();
    }
    for v in &m.values {
        let i = m.instruction(v);
        writeln!(
            out,
            "value {} {} {} phi {} color {:?} alloc {} off {} size {} shape {} logical {:?} live {:?} uses {:?} | {} {} {}:{} {:?} {}",
            v.id,
            s(i.name),
            s(v.index),
            v.phi,
            v.color,
            v.allocation,
            v.offset,
            v.size,
            s(v.shape),
            v.logical_size,
            v.live.map(|r| (r.start, r.end)),
            m.positions_and_uses(v),
            s(i.opcode),
            s(i.op_name),
            s(i.source_file),
            i.source_line,
            i.stack_frame_id,
            i.name.is_empty()
        )
        .unwrap();
    }
    writeln!(out, "total line {:?}", m.total_bytes_line).unwrap();
    if let Some(sc) = &m.schedule {
        let seq: Vec<String> = sc
            .sequence
            .iter()
            .map(|&i| s(m.instructions[i as usize].name))
            .collect();
        writeln!(out, "schedule max {} seq {:?}", sc.max, seq).unwrap();
        for o in &sc.orphan_ranges {
            writeln!(
                out,
                "orphan {} {} {:?}",
                s(m.instructions[o.instruction as usize].name),
                s(o.index),
                o.live
            )
            .unwrap();
        }
        if let Some(p) = &sc.peak {
            writeln!(out, "peak at {}", p.time).unwrap();
            for e in &p.entries {
                writeln!(
                    out,
                    "  {}{} {}",
                    s(m.instructions[e.instruction as usize].name),
                    s(e.index),
                    e.bytes
                )
                .unwrap();
            }
        }
        writeln!(out, "peak undetermined {}", sc.peak_undetermined).unwrap();
    }
    writeln!(out, "stack total {:?}", m.stack_trace_total).unwrap();
    for n in &m.stack_trace {
        writeln!(
            out,
            "  node {} {} {} {} {}",
            n.depth,
            s(n.name),
            n.total,
            n.current,
            n.remaining
        )
        .unwrap();
    }
    if let Some(r) = &m.memory_report {
        writeln!(out, "report total {:?}", r.total_bytes).unwrap();
        for sp in &r.spaces {
            writeln!(
                out,
                "  space {} {} {}",
                s(sp.name),
                sp.color,
                sp.total_bytes
            )
            .unwrap();
        }
    }
    out
}

/// Structural sanity of any module the parser returns, whatever its input: indices in
/// range, every value inside its allocation or a warning, the analysis runs.
pub fn check_sane(m: &bufscope::model::Module, what: &str) {
    let n = m.values.len() as u32;
    for (ai, a) in m.allocations.iter().enumerate() {
        assert!(
            a.values.start <= a.values.end && a.values.end <= n,
            "{what}: allocation {ai} values {:?} of {n}",
            a.values
        );
    }
    for (i, v) in m.values.iter().enumerate() {
        assert!(
            (v.allocation as usize) < m.allocations.len(),
            "{what}: value {i} allocation out of range"
        );
        assert!(
            (v.instruction as usize) < m.instructions.len(),
            "{what}: value {i} instruction out of range"
        );
        let a = &m.allocations[v.allocation as usize];
        assert!(
            a.values.contains(&(i as u32)),
            "{what}: value {i} not in its allocation's range"
        );
        if v.offset.checked_add(v.size).is_none_or(|end| end > a.size) {
            assert!(
                !m.warnings.is_empty(),
                "{what}: value {} outside its allocation, no warning",
                m.value_name(v)
            );
        }
        let _ = m.value_name(v);
        let _ = m.positions_and_uses(v);
        let _ = bufscope::analysis::value_kind(m, v);
    }
    if let Some(s) = &m.schedule {
        for &i in &s.sequence {
            assert!(
                (i as usize) < m.instructions.len(),
                "{what}: sequence entry out of range"
            );
        }
        let max = s.max;
        for v in &m.values {
            if let Some(r) = v.live {
                if r.start > r.end || r.end > max {
                    assert!(
                        !m.warnings.is_empty(),
                        "{what}: live range {r:?} of {} outside 0..={max}, no warning",
                        m.value_name(v)
                    );
                }
            }
        }
    }
}

/// `check_sane`, then the analysis, when its time axis is of a sane length (a corrupted
/// number could otherwise ask it for a curve of billions of steps).
pub fn check_sane_and_analyze(m: &bufscope::model::Module, what: &str) {
    check_sane(m, what);
    let longest = m
        .values
        .iter()
        .filter_map(|v| v.live)
        .map(|r| r.end as u64)
        .chain(m.schedule.iter().map(|s| s.max as u64))
        .max()
        .unwrap_or(0);
    if longest <= 1_000_000 {
        let an = bufscope::analysis::analyze(m);
        for s in &an.spaces {
            let _ = s.blocks(m).count();
        }
    }
}

/// Line start offsets of `bytes` (0 and after every `\n`), and the end.
pub fn line_starts(bytes: &[u8]) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(
        bytes
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .map(|(i, _)| i + 1),
    );
    v
}

/// Reads a module's files with file number `file` replaced by `bytes`.
pub fn load_module_with(m: &ModuleFiles, file: usize, bytes: &[u8]) -> bufscope::Load {
    let inputs: Vec<(&str, &[u8])> = m
        .files
        .iter()
        .enumerate()
        .map(|(i, (n, b))| (n.as_str(), if i == file { bytes } else { b.as_slice() }))
        .collect();
    load_both_ways(&inputs, &m.label)
}

/// Every warning of every module read.
pub fn all_warnings(load: &bufscope::Load) -> Vec<&bufscope::model::Warning> {
    load.modules.iter().flat_map(|m| &m.warnings).collect()
}

/// [`check_sane_and_analyze`] on every module read.
pub fn sane(load: &bufscope::Load, what: &str) {
    for m in &load.modules {
        check_sane_and_analyze(m, what);
    }
}

// ---------------------------------------------------------------------------------------
// The deferred read: `Used values` skipped, the diagram's module first, completed after.

/// What a module's analysis draws: steps, and per memory space its layout, values, curve
/// and peak.
pub fn analysis_fingerprint(m: &bufscope::model::Module) -> String {
    let a = bufscope::analysis::analyze(m);
    let mut out = format!("{} steps {}", m.name, a.steps);
    for s in &a.spaces {
        let curve = s.curve.iter().fold(0u64, |h, &b| h.rotate_left(7) ^ b);
        out.push_str(&format!(
            "\n space {} height {} slots {} timed {:?} timeless {:?} peak {} at {:?} curve {curve:x}",
            s.color,
            s.height,
            s.layout.len(),
            s.timed,
            s.timeless,
            s.peak_bytes,
            s.peak_time
        ));
    }
    out
}

/// Panics unless two loads read the same: every module's [`fingerprint`], files and
/// warnings (in order, with their lines), the errors and the out-of-memory files.
pub fn assert_same_load(one_pass: &bufscope::Load, other: &bufscope::Load, what: &str) {
    type ModuleView = (String, Vec<String>, Vec<bufscope::model::Warning>);
    let view = |l: &bufscope::Load| {
        let modules: Vec<ModuleView> = l
            .modules
            .iter()
            .map(|m| (fingerprint(m), m.files.clone(), m.warnings.clone()))
            .collect();
        (modules, l.errors.clone(), l.oom.len())
    };
    let (a, b) = (view(one_pass), view(other));
    if a != b {
        let first = a.0.iter().zip(&b.0).position(|(x, y)| x != y).map(|i| {
            let line = a.0[i].0.lines().zip(b.0[i].0.lines()).find(|(x, y)| x != y);
            format!(
                "module {i}: first differing line {line:?}\nwarnings one pass {:?}\ndeferred {:?}",
                a.0[i].2, b.0[i].2
            )
        });
        panic!(
            "{what}: the deferred read differs from one pass ({} vs {} modules, errors {:?} vs {:?}); {}",
            a.0.len(),
            b.0.len(),
            a.1,
            b.1,
            first.unwrap_or_default()
        );
    }
}

/// [`bufscope::load_files`] (one pass), checked against the shipped machine's read
/// ([`load_deferred_seeded`], its lanes and pieces in an order seeded by `what`): the same
/// modules once completed, and the first read's analysis already the complete one's.
pub fn load_both_ways(files: &[(&str, &[u8])], what: &str) -> bufscope::Load {
    let one_pass = bufscope::load_files(files.iter().copied());
    let (first, deferred) = load_deferred_seeded(files, 4093, seed_of(what), |p, _| Ok(p));
    assert_same_load(&one_pass, &deferred, what);
    if let Some(first) = first {
        let complete: Vec<String> = one_pass.modules.iter().map(analysis_fingerprint).collect();
        assert_eq!(first, complete, "{what}: the first read's analysis");
    }
    one_pass
}

/// The one module read from the files of `dir` whose names start with `stem` (its HLO text
/// after optimizations joined; the one before left out).
pub fn load_stem(dir: &Path, stem: &str) -> bufscope::model::Module {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(stem)))
        .filter(|p| !p.to_string_lossy().contains("before_optimizations"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    files.sort();
    let load = bufscope::load_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    let mut modules = load.modules;
    assert_eq!(modules.len(), 1, "{stem}: {:?}", load.errors);
    let m = modules.remove(0);
    assert!(m.hlo.is_some(), "{stem}: no HLO text joined");
    m
}
