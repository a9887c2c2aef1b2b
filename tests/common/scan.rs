//! The independent scanner of the tests: reads the figures the tests expect from a dump's
//! text. Deliberately dumb (prefix tests and `split`s, grep-like), it shares no code with
//! `bufscope::parse`, so that a parser bug cannot hide behind the same bug here. Declared by
//! path from the test binaries that compare against it (tests/real_dumps.rs,
//! tests/snapshots.rs, and through tests/common/check.rs tests/robustness*.rs); the others do
//! not build it.
#![allow(dead_code)]

use crate::common::ModuleFiles;
use std::collections::BTreeMap;

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
            let allocation = scan_allocation(rest, line);
            alloc = Some(allocation.index);
            s.allocations.push(allocation);
            continue;
        }
        if let Some(rest) = line.strip_prefix(" value: <") {
            s.values.push(scan_value(rest, alloc, line));
            continue;
        }
        if scan_heading(line, s, &mut sec) {
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
            Sec::Peak => s.peak.push(scan_peak_entry(entry, line)),
            Sec::Stack => s.stack_trace_nodes += 1,
            Sec::None => {}
        }
    }
}

/// An `allocation N: size M, ...:` header (`rest` follows `allocation `).
fn scan_allocation(rest: &str, line: &str) -> ScanAllocation {
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
    ScanAllocation {
        index,
        size,
        color: field("color ").unwrap_or(0),
        parameter: field("parameter "),
        has_output_shape: header.contains(", output shape is |"),
        constant: words.contains(&"constant"),
        thread_local: words.contains(&"thread-local"),
        maybe_live_out: words.contains(&"maybe-live-out"),
        preallocated_temp: words.contains(&"preallocated-temp"),
    }
}

/// A ` value: <...> (size=N,offset=M): SHAPE` line (`rest` follows ` value: <`), in the
/// allocation whose header came last.
fn scan_value(rest: &str, alloc: Option<u32>, line: &str) -> ScanValue {
    let (inner, rest) = rest.split_once('>').unwrap();
    let (id, name, index, phi, color) = split_short_value(inner);
    let rest = rest.strip_prefix(" (size=").unwrap();
    let (size, rest) = rest.split_once(",offset=").unwrap();
    let (offset, shape) = rest.split_once("): ").unwrap();
    ScanValue {
        id,
        name,
        index,
        phi,
        color,
        allocation: alloc.expect("value before any allocation"),
        size: num(size, line),
        offset: num(offset, line),
        shape: shape.to_string(),
    }
}

/// The lines that hold a figure or open a section (`Total bytes used:`, `HloLiveRange`, the
/// section headings): read into `s` and `sec`, `true`; any other line, `false`.
fn scan_heading(line: &str, s: &mut Scan, sec: &mut Sec) -> bool {
    if let Some(rest) = line.strip_prefix("Total bytes used: ") {
        s.total = Some(num(rest.split(' ').next().unwrap(), line));
        return true;
    }
    if let Some(rest) = line.strip_prefix("HloLiveRange (max ") {
        s.max = Some(num(rest.strip_suffix("):").unwrap(), line));
        *sec = Sec::None;
        return true;
    }
    match line {
        "  InstructionSequence:" => {
            *sec = Sec::Sequence;
            return true;
        }
        "  BufferLiveRange:" => {
            *sec = Sec::Ranges;
            return true;
        }
        "  Peak memory could not be determined due to unbounded dynamic shape." => {
            s.peak_undetermined = true;
            *sec = Sec::None;
            return true;
        }
        _ => {}
    }
    if let Some(rest) = line.strip_prefix("  Live ranges at ") {
        s.peak_time = Some(num(rest.strip_suffix(" (peak):").unwrap(), line));
        *sec = Sec::Peak;
        return true;
    }
    if let Some(rest) = line.strip_prefix("  Stack trace breakdown for peak usage: ") {
        s.stack_trace_total = Some(spaced(rest.strip_suffix(" bytes").unwrap()));
        *sec = Sec::Stack;
        return true;
    }
    false
}

/// One line of the peak's live values: `name[{idx}]: N bytes[ (cumulative: M bytes)]`.
fn scan_peak_entry(entry: &str, line: &str) -> ScanPeakEntry {
    let (key, rest) = entry.split_once(": ").unwrap();
    let (bytes, rest) = rest.split_once(" bytes").unwrap();
    let cumulative = rest
        .strip_prefix(" (cumulative: ")
        .map(|c| num(c.strip_suffix(" bytes)").unwrap(), line));
    let (name, index) = match key.find('{') {
        Some(i) => (key[..i].to_string(), Some(key[i..].to_string())),
        None => (key.to_string(), None),
    };
    ScanPeakEntry {
        name,
        index,
        bytes: num(bytes, line),
        cumulative,
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
