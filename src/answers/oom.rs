//! Groupings of an out-of-memory message's buffers ([`crate::model::oom`]).
//!
//! Owns: the listed buffers of one message grouped by op_name (numbered repeats folded by
//! [`fold_path`]: `h/0/attn` and `h/1/attn` are `h/#/attn`, `layers_2` and `layers_1` are
//! `layers_#`) or by source
//! `file:line`, sizes added; and how much of a reported total the listed buffers cover.

use crate::model::oom::{ByteSize, OomBuffer, OomMessage};
use crate::op_path::fold_path;
use serde::Serialize;

/// Buffers that share a key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OomGroup {
    /// The folded op_name or `file:line`; None for the buffers that have none.
    pub key: Option<String>,
    /// Indices into the message's `buffers`, in list order.
    pub buffers: Vec<usize>,
    /// Sums of the buffers' sizes: the printed figures' byte values, and the ranges they
    /// stand for (`ByteSize::min`/`max`).
    pub bytes: i64,
    pub min: i64,
    pub max: i64,
    /// Sum of `Unpadded size:` over the buffers that print one (TPU), and how many do.
    pub unpadded: i64,
    pub unpadded_count: usize,
    /// The distinct keys before folding, when more than one folded into this group.
    pub folded: Vec<String>,
}

/// Groups by op_name with numbered layers folded; largest first, the unnamed group last.
pub fn group_by_op_name(buffers: &[OomBuffer]) -> Vec<OomGroup> {
    group(buffers, |b| {
        let name = b.operator.as_ref()?.op_name.as_ref()?;
        Some((fold_path(name), name.clone()))
    })
}

/// Groups by source `file:line`; largest first, the group without a source last.
pub fn group_by_source(buffers: &[OomBuffer]) -> Vec<OomGroup> {
    group(buffers, |b| {
        let op = b.operator.as_ref()?;
        let file = op.source_file.as_ref()?;
        let key = match op.source_line {
            Some(line) => format!("{file}:{line}"),
            None => file.clone(),
        };
        Some((key.clone(), key))
    })
}

fn group(
    buffers: &[OomBuffer],
    key: impl Fn(&OomBuffer) -> Option<(String, String)>,
) -> Vec<OomGroup> {
    let mut groups: Vec<OomGroup> = Vec::new();
    for (i, b) in buffers.iter().enumerate() {
        let (k, original) = match key(b) {
            Some((k, o)) => (Some(k), Some(o)),
            None => (None, None),
        };
        let g = match groups.iter().position(|g| g.key == k) {
            Some(g) => g,
            None => {
                groups.push(OomGroup {
                    key: k,
                    buffers: Vec::new(),
                    bytes: 0,
                    min: 0,
                    max: 0,
                    unpadded: 0,
                    unpadded_count: 0,
                    folded: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let g = &mut groups[g];
        g.buffers.push(i);
        if let Some(s) = &b.size {
            g.bytes = g.bytes.saturating_add(s.bytes);
            g.min = g.min.saturating_add(s.min);
            g.max = g.max.saturating_add(s.max);
        }
        if let Some(u) = &b.unpadded_size {
            g.unpadded = g.unpadded.saturating_add(u.bytes);
            g.unpadded_count += 1;
        }
        if let Some(o) = original {
            if !g.folded.contains(&o) {
                g.folded.push(o);
            }
        }
    }
    for g in &mut groups {
        if g.folded.len() < 2 {
            g.folded.clear();
        }
    }
    groups.sort_by(|a, b| {
        (a.key.is_none(), std::cmp::Reverse(a.bytes), &a.key).cmp(&(
            b.key.is_none(),
            std::cmp::Reverse(b.bytes),
            &b.key,
        ))
    });
    groups
}

/// How much of a reported total the listed buffers cover.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Coverage {
    /// Sum of the listed sizes (printed figures' byte values), and the range it stands for.
    pub listed: i64,
    pub listed_min: i64,
    pub listed_max: i64,
    /// The total it is compared with, as printed.
    pub total: ByteSize,
    /// `listed / total`, from the figures' byte values.
    pub fraction: f64,
}

/// The listed buffers against `total` (for example the `total allocation` stat, or the
/// `HLO temp` one); None when `total` is zero.
pub fn coverage(m: &OomMessage, total: &ByteSize) -> Option<Coverage> {
    if total.bytes <= 0 {
        return None;
    }
    let sizes = m.buffers.iter().filter_map(|b| b.size.as_ref());
    let (mut listed, mut lo, mut hi) = (0i64, 0i64, 0i64);
    for s in sizes {
        listed = listed.saturating_add(s.bytes);
        lo = lo.saturating_add(s.min);
        hi = hi.saturating_add(s.max);
    }
    Some(Coverage {
        listed,
        listed_min: lo,
        listed_max: hi,
        total: total.clone(),
        fraction: listed as f64 / total.bytes as f64,
    })
}
