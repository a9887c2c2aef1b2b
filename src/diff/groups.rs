//! The values live at each peak grouped, and each group's difference: by full op_name and by
//! source `file:line`.
//!
//! A group's bytes are the sum of its values' allocated sizes (aliases counted each time).
//! The op_name grouping is [`query::group_by_op_name`]; the source key is
//! [`super::values::source_key`] (file from the package root, so two virtual environments
//! compare). Values without an op_name, or without a source file, form the group with the
//! empty key.
//!
//! When the `answers` module (op_name path prefixes as a tree, source lines, bytes credited
//! so that they add up to the occupied bytes) is merged, these groupings should use its
//! grouping functions instead of their own.

use hashbrown::HashMap;
use serde::Serialize;

use crate::query;

use super::curves::signed_delta;
use super::values::source_key;
use super::Side;

/// One group's bytes on both sides.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GroupDelta {
    /// The op_name or `file:line`; empty for the values without one.
    pub key: String,
    pub base_bytes: u64,
    pub new_bytes: u64,
    pub delta_bytes: i64,
    pub base_values: u32,
    pub new_values: u32,
}

/// Both groupings of one memory space's peaks, largest absolute change first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GroupDeltas {
    pub by_op_name: Vec<GroupDelta>,
    pub by_source: Vec<GroupDelta>,
}

/// `(bytes, values)` per key.
type Sums = HashMap<String, (u64, u32)>;

fn by_op_name(side: &Side, live: &[u32]) -> Sums {
    let m = side.module;
    query::group_by_op_name(m, live)
        .into_iter()
        .map(|g| {
            (
                m.str(g.op_name).to_string(),
                (g.total, g.values.len() as u32),
            )
        })
        .collect()
}

fn by_source(side: &Side, live: &[u32]) -> Sums {
    let m = side.module;
    let mut sums = Sums::new();
    for v in live.iter().filter_map(|&x| m.values.get(x as usize)) {
        let e = sums
            .entry(source_key(m, v).unwrap_or_default())
            .or_default();
        e.0 = e.0.saturating_add(v.size);
        e.1 += 1;
    }
    sums
}

/// The groups of both sides joined by key, largest absolute change first, then by key.
fn join(base: Sums, mut new: Sums) -> Vec<GroupDelta> {
    let mut out: Vec<GroupDelta> = Vec::with_capacity(base.len().max(new.len()));
    for (key, (bb, bv)) in base {
        let (nb, nv) = new.remove(&key).unwrap_or((0, 0));
        out.push(GroupDelta {
            key,
            base_bytes: bb,
            new_bytes: nb,
            delta_bytes: signed_delta(bb, nb),
            base_values: bv,
            new_values: nv,
        });
    }
    for (key, (nb, nv)) in new {
        out.push(GroupDelta {
            key,
            base_bytes: 0,
            new_bytes: nb,
            delta_bytes: signed_delta(0, nb),
            base_values: 0,
            new_values: nv,
        });
    }
    out.sort_by(|a, b| {
        b.delta_bytes
            .unsigned_abs()
            .cmp(&a.delta_bytes.unsigned_abs())
            .then_with(|| a.key.cmp(&b.key))
    });
    out
}

/// Groups the values live at each peak (indices into each module's values).
pub fn group_deltas(base: &Side, base_live: &[u32], new: &Side, new_live: &[u32]) -> GroupDeltas {
    GroupDeltas {
        by_op_name: join(by_op_name(base, base_live), by_op_name(new, new_live)),
        by_source: join(by_source(base, base_live), by_source(new, new_live)),
    }
}
