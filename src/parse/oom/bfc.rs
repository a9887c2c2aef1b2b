//! The GPU BFC allocator's message and the dump it logs after it:
//!
//! ```text
//! Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.50GiB (rounded to 3758096384)requested by op
//! BFCAllocator dump for GPU_0_bfc
//! Bin (256):   Total Chunks: 9, Chunks in use: 9. 2.2KiB allocated for chunks. …
//!      Summary of in-use Chunks by size:
//! 9 Chunks of size 256 totalling 2.2KiB
//! Sum Total of in-use chunks: 12.48GiB
//! total_region_allocated_bytes_: 15753805824 memory_limit_: 15753805824 available bytes: 0 …
//! Stats:
//! Limit:                     15753805824
//! InUse:                     13400000000
//! MaxInUse:                  13500000000
//! NumAllocs:                        1234
//! MaxAllocSize:               4000000000
//! ****************************_________*****
//! ```
//!
//! The request is the rounded allocation (exact); `Limit:` is the capacity and `InUse:`
//! the memory used; the `Stats:` lines and the in-use chunk summary are stats blocks. The
//! chunk-by-chunk lines (`Bin …`, `Chunk at …`, `InUse at …`, `Free at …`) are passed over.
//! The dump is logged at INFO level: a log without it is whole, no warning.

use super::fields::plain_stat;
use super::lines::Line;
use crate::model::oom::{ByteSize, Capacity, OomForm, OomMessage, Stat, StatSection};
use super::size::{exact_count, human};
use super::{finish, new_message};

const HEAD: &str = "ran out of memory trying to allocate ";

/// Whether the BFC message starts at `lines[i]`.
pub(crate) fn starts(lines: &[Line], i: usize) -> bool {
    let t = lines[i].text.trim();
    t.contains("Allocator (") && t.contains(HEAD)
}

/// Dump lines passed over.
fn passed_over(t: &str) -> bool {
    const STARTS: [&str; 8] = [
        "BFCAllocator dump for ",
        "Bin (",
        "Bin for ",
        "Chunk at ",
        "InUse at ",
        "Free at ",
        "Next region of size ",
        "total_region_allocated_bytes_",
    ];
    STARTS.iter().any(|s| t.starts_with(s))
        || (t.len() >= 10 && t.bytes().all(|b| b == b'*' || b == b'_'))
}

/// `Limit:   15753805824`: a `Stats:` line; NumAllocs is a count, not bytes.
fn stats_line(t: &str) -> Option<Stat> {
    let (label, value) = t.split_once(':')?;
    let known = matches!(
        label,
        "Limit"
            | "InUse"
            | "MaxInUse"
            | "NumAllocs"
            | "MaxAllocSize"
            | "Reserved"
            | "PeakReserved"
            | "LargestFreeBlock"
    );
    if !known {
        return None;
    }
    let value = value.trim();
    let size = if label == "NumAllocs" {
        value.bytes().all(|b| b.is_ascii_digit()).then_some(())?;
        None
    } else {
        Some(exact_count(value)?)
    };
    Some(Stat {
        label: label.to_string(),
        note: size.is_none().then(|| value.to_string()),
        size,
        figures: Vec::new(),
        percents: Vec::new(),
    })
}

/// `9 Chunks of size 256 totalling 2.2KiB` or `Sum Total of in-use chunks: 12.48GiB`.
fn chunk_line(t: &str) -> Option<Stat> {
    if let Some(rest) = t.strip_prefix("Sum Total of in-use chunks:") {
        let (_, s) = human(rest.trim()).ok()?;
        return Some(plain_stat(t.split(':').next()?, s));
    }
    let p = t.find(" totalling ")?;
    let (_, s) = human(t[p + " totalling ".len()..].trim()).ok()?;
    t.contains(" Chunks of size ").then(|| plain_stat(&t[..p], s))
}

fn section(title: &str) -> StatSection {
    StatSection {
        title: title.to_string(),
        total: None,
        at_least: false,
        stats: Vec::new(),
    }
}

/// Reads the message at `lines[i]` and the dump after it; returns it and the index after.
pub(crate) fn read(lines: &[Line], i: usize) -> (OomMessage, usize) {
    let t = lines[i].text.trim();
    let mut m = new_message(OomForm::GpuBfcAllocator, lines[i].no);
    m.error = Some(t.to_string());
    m.memory_space = t
        .find("Allocator (")
        .map(|p| &t[p + "Allocator (".len()..])
        .and_then(|r| r.split(')').next())
        .map(str::to_string);
    m.allocator = m.memory_space.clone();
    m.request = t.find(HEAD).and_then(|p| request(&t[p + HEAD.len()..]));
    if m.request.is_none() {
        m.warnings
            .push("the size it tried to allocate is not in the text".to_string());
    }
    let mut j = i + 1;
    let mut end = j;
    let (mut chunks, mut stats) = (section("Summary of in-use chunks"), section("Stats"));
    let mut in_stats = false;
    while let Some(line) = lines.get(j) {
        let t = line.text.trim();
        if t == "Stats:" {
            in_stats = true;
        } else if let Some(s) = stats_line(t).filter(|_| in_stats) {
            stats.stats.push(s);
        } else if let Some(s) = chunk_line(t) {
            chunks.stats.push(s);
        } else if !(t.is_empty() || passed_over(t) || t.starts_with("Summary of in-use Chunks")) {
            break;
        }
        j += 1;
        if !t.is_empty() {
            end = j;
        }
    }
    if !chunks.stats.is_empty() {
        m.sections.push(chunks);
    }
    let figure = |label: &str| {
        stats
            .stats
            .iter()
            .find(|s| s.label == label)
            .and_then(|s| s.size.clone())
    };
    if in_stats {
        let (limit, in_use) = (figure("Limit"), figure("InUse"));
        if limit.is_some() || in_use.is_some() {
            m.capacity = Some(Capacity {
                capacity: limit,
                used: in_use,
                ..Capacity::default()
            });
        }
        m.sections.push(stats);
    }
    finish(&mut m, lines, i, end);
    (m, end)
}

/// `3.50GiB (rounded to 3758096384)requested by op`: the rounded request, exact when the
/// count is there.
fn request(rest: &str) -> Option<ByteSize> {
    let (after, rounded) = human(rest.trim_start()).ok()?;
    let Some(inner) = after.trim_start().strip_prefix("(rounded to ") else {
        return Some(rounded);
    };
    let close = inner.find(')')?;
    let exact = exact_count(&inner[..close])?;
    let text = format!("{} (rounded to {})", rounded.text, &inner[..close]);
    Some(ByteSize { text, ..exact })
}
