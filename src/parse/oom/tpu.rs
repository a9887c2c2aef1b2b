//! The TPU messages. The compile-time one:
//!
//! ```text
//! RESOURCE_EXHAUSTED: … Ran out of memory in memory space hbm. Used 9.1G of 7.5G hbm. Exceeded hbm capacity by 1.6G.
//!
//! Total hbm usage >= 9.6G:
//!     reserved        530.00M
//!     program           9.1G
//! Output size 0B; shares 0B with arguments.
//!
//! Program hbm requirement 9.1G:
//!     HLO temp          9.1G (95.4% utilization: Unpadded (8.6G) Padded (9.0G), 0.0% fragmentation (0B))
//!
//!   Largest program allocations in hbm:
//!
//!   1. Size: 124.00M
//!      Operator: op_name="…" source_file="…" source_line=8
//!      Shape: f32[512,245,256]{2,1,0:T(8,128)}
//!      Unpadded size: 122.50M
//!      Extra memory due to padding: 1.50M (1.0x expansion)
//!      XLA label: fusion.12 = fusion(…)
//!      Allocation type: HLO temp
//!      ==========================
//! ```
//!
//! and the older runtime one, which starts `Attempting to reserve 3.95G at the bottom of
//! memory. That was not possible. There are 1.92G free, 0B reserved, and 1.92G
//! reservable.`, then an `HBM capacity 8.00G:` block whose lines carry exact byte counts,
//! `Heap allocator status:`, `Persistent allocations include some or all of:` and the same
//! blocks as above. A block is a title line ending in `:` followed by indented
//! `label  size (note)` lines; the allocation list closes the message.

use super::entries::{check_ranks, entry_header, read_list};
use super::fields::{stat, title};
use super::lines::Line;
use crate::model::oom::{Capacity, OomForm, OomMessage};
use super::size::human;
use super::{finish, new_message};

const RAN_OUT: &str = "Ran out of memory in memory space ";
const RESERVE: &str = "Attempting to reserve ";
const BOTTOM: &str = " at the bottom of memory";
const LIST: &str = "Largest program allocations in ";

/// Titles that open a TPU block even when the first line of the message is cut off.
fn known_title(t: &str) -> bool {
    (t.starts_with("Total ") && t.contains(" usage >="))
        || (t.starts_with("Program ") && t.contains(" requirement "))
        || t.starts_with("HBM capacity ")
        || t == "Heap allocator status:"
}

/// Whether a TPU message (or what is left of one) starts at `lines[i]`.
pub(crate) fn starts(lines: &[Line], i: usize) -> bool {
    let t = lines[i].text.trim();
    t.contains(RAN_OUT)
        || (t.contains(RESERVE) && t.contains(BOTTOM))
        || (known_title(t) && t.ends_with(':'))
        || (t.starts_with(LIST) && t.ends_with(':'))
        || matches!(entry_header(t), Some((_, Some(_))))
}

/// Reads the message that starts at `lines[i]`; returns it and the index after it.
pub(crate) fn read(lines: &[Line], i: usize) -> (OomMessage, usize) {
    let first = lines[i].text.trim();
    let mut m = new_message(OomForm::TpuRanOutOfMemory, lines[i].no);
    let mut j = i;
    if first.contains(RAN_OUT) {
        ran_out(first, &mut m);
        j += 1;
    } else if first.contains(RESERVE) {
        m.form = OomForm::TpuReserve;
        reserve(first, &mut m);
        j += 1;
    } else {
        if first.starts_with("HBM capacity") || first.starts_with("Heap allocator") {
            m.form = OomForm::TpuReserve;
        }
        m.warnings.push(format!(
            "the first line of the message (`{RAN_OUT}…` or `{RESERVE}…{BOTTOM}`) is not in the text"
        ));
    }
    let (end, listed) = blocks(lines, j, &mut m);
    if !listed {
        m.warnings
            .push(format!("no `{LIST}…:` list: the text ends before it"));
    }
    check_ranks(&mut m);
    let end = end.max(i + 1);
    finish(&mut m, lines, i, end);
    (m, end)
}

/// The blocks after the first line, up to the end of the allocation list or the first line
/// that fits none of them. Returns the index after them and whether the list was seen.
fn blocks(lines: &[Line], mut j: usize, m: &mut OomMessage) -> (usize, bool) {
    let mut in_block = false;
    let mut end = j;
    while j < lines.len() {
        let raw = &lines[j].text;
        let t = raw.trim();
        let indented = raw.starts_with([' ', '\t']);
        if t.is_empty() || (t.len() >= 3 && t.bytes().all(|b| b == b'-')) {
            j += 1;
            continue;
        }
        if let Some(space) = t.strip_prefix(LIST).and_then(|r| r.strip_suffix(':')) {
            if m.memory_space.is_none() {
                m.memory_space = Some(space.to_string());
            }
            let after = read_list(lines, j + 1, m);
            if m.buffers.is_empty() {
                m.warnings
                    .push(format!("`{t}` lists no allocation in the text"));
            }
            return (after.max(j + 1), true);
        }
        if matches!(entry_header(t), Some((_, Some(_)))) {
            m.warnings
                .push(format!("the `{LIST}…:` line is not in the text"));
            return (read_list(lines, j, m), true);
        }
        if t.starts_with(';') || t.starts_with("Output size") {
            m.notes.push(t.to_string());
        } else if let (true, true, Some(s)) = (indented, in_block, stat(t)) {
            if s.label == "Available after request" {
                capacity(m).available_after_request = s.size.clone();
            }
            if let Some(section) = m.sections.last_mut() {
                section.stats.push(s);
            }
        } else if let Some(section) = title_here(lines, j, indented) {
            if section.title == "HBM capacity" {
                capacity(m).capacity = section.total.clone();
                m.memory_space.get_or_insert_with(|| "hbm".to_string());
            }
            m.sections.push(section);
            in_block = true;
        } else {
            return (end, false);
        }
        j += 1;
        end = j;
    }
    (end, false)
}

/// A block title at `lines[j]`: a line at the margin ending in `:`, known by name or
/// followed by an indented stats line.
fn title_here(lines: &[Line], j: usize, indented: bool) -> Option<crate::model::oom::StatSection> {
    let t = lines[j].text.trim();
    if indented && !known_title(t) {
        return None;
    }
    let section = title(t)?;
    let next_is_stat = lines
        .get(j + 1)
        .is_some_and(|l| l.text.starts_with([' ', '\t']) && stat(&l.text).is_some());
    (known_title(t) || next_is_stat).then_some(section)
}

fn capacity(m: &mut OomMessage) -> &mut Capacity {
    m.capacity.get_or_insert_with(Capacity::default)
}

/// The size right after `key` in `t`.
fn size_after(t: &str, key: &str) -> Option<crate::model::oom::ByteSize> {
    let p = t.find(key)?;
    human(&t[p + key.len()..]).ok().map(|(_, s)| s)
}

/// `Ran out of memory in memory space hbm. Used 63.80G of 30.75G hbm. Exceeded hbm capacity
/// by 33.05G.`
fn ran_out(t: &str, m: &mut OomMessage) {
    m.error = Some(t.to_string());
    let space = t
        .find(RAN_OUT)
        .map(|p| &t[p + RAN_OUT.len()..])
        .and_then(|r| r.split(['.', ' ']).next())
        .filter(|s| !s.is_empty());
    m.memory_space = space.map(str::to_string);
    let used = size_after(t, ". Used ");
    let cap = t.find(". Used ").and_then(|p| size_after(&t[p..], " of "));
    let exceeded = size_after(t, " capacity by ");
    if used.is_none() || cap.is_none() || exceeded.is_none() {
        m.warnings.push(
            "the `Used X of Y. Exceeded capacity by Z.` figures are not all readable".to_string(),
        );
    }
    let c = capacity(m);
    c.used = used;
    c.capacity = cap;
    c.exceeded_by = exceeded;
}

/// `Attempting to reserve 3.95G at the bottom of memory. That was not possible. There are
/// 1.92G free, 0B reserved, and 1.92G reservable.`
fn reserve(t: &str, m: &mut OomMessage) {
    m.error = Some(t.trim_end_matches([';', ' ']).to_string());
    m.request = size_after(t, RESERVE);
    if m.request.is_none() {
        m.warnings
            .push("the size it attempted to reserve is not readable".to_string());
    }
    if let Some(p) = t.find("There are ") {
        let rest = &t[p..];
        let free = size_after(rest, "There are ");
        let reserved = rest
            .find(" free, ")
            .and_then(|q| size_after(&rest[q..], " free, "));
        let reservable = rest
            .find(" reserved, and ")
            .and_then(|q| size_after(&rest[q..], " reserved, and "));
        let c = capacity(m);
        c.free = free;
        c.reserved = reserved;
        c.reservable = reservable;
    }
}
