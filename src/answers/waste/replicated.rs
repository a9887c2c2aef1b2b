//! Values replicated that could be sharded: entry parameters cut into fewer pieces than
//! their peers, with the per-device bytes sharding them like those peers would save.
//!
//! Owns: who a value's peers are and the saving. A value's *mirrors* are the values with
//! the same pytree leaf under another root (`params['unembed']`, `opt_state[0].mu['unembed']`)
//! and the same global shape: an optimizer's state shards as its parameter does. Its
//! *family* is the values under the same root (`params`, `opt_state[0].mu`). The target is
//! the most pieces a mirror is cut into; else, for a value at least as large as a value its
//! family shards, the family's most common cut. Exact to the byte for parameters whose
//! dimensions divide (the saving is the per-device bytes less those bytes over the extra
//! cut); XLA's temporaries for a replicated value usually add more: a lower bound.

use serde::Serialize;

use super::{Param, Params, NEEDS_BEFORE};
use crate::model::Module;

/// The answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Replicated {
    /// Largest saving first.
    pub values: Vec<ReplicatedValue>,
    /// Their savings summed, per device.
    pub saving_bytes: u64,
    /// That the saving is a lower bound ([`LOWER_BOUND`]).
    pub note: &'static str,
    /// Why the answer is empty or partial, when it is (a text missing, no sharding printed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs: Option<String>,
}

/// One value cut into fewer pieces than its peers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ReplicatedValue {
    pub parameter: u32,
    pub path: String,
    pub global_shape: String,
    /// `sharding={…}` as printed.
    pub sharding: String,
    /// Pieces it is cut into now (1: replicated on every device).
    pub shards: u64,
    pub per_device_bytes: u64,
    /// Pieces its peers are cut into, and who: a mirror's path or `family <root>`.
    pub peer_shards: u64,
    pub peer: String,
    pub per_device_bytes_if_sharded: u64,
    pub saving_bytes: u64,
    /// Whether the shape divides by the extra cut (else the saving is rounded down).
    pub exact: bool,
    /// The dump's values of its allocation.
    #[serde(skip)]
    pub values: Vec<u32>,
}

/// The root and leaf of a pytree path (`opt_state[0].mu['w']` → `opt_state[0].mu`, `['w']`).
pub fn split_path(path: &str) -> (&str, &str) {
    match path.find("['").or_else(|| path.find("[\"")) {
        Some(k) => (&path[..k], &path[k..]),
        None => (path, ""),
    }
}

/// What the saving leaves out.
pub const LOWER_BOUND: &str = "a lower bound: XLA's temporaries for a replicated value (its gradient, its update) usually add more";

/// The values its peers shard more, largest saving first.
pub fn replicated(module: &Module, params: &Params) -> Replicated {
    let needs = if module.hlo_before.is_none() {
        Some(NEEDS_BEFORE.to_string())
    } else if params.list.iter().all(|p| p.tiling.is_none()) {
        Some("the HLO text before optimizations prints no sharding on the entry parameters (a program for one device, or shardings left to XLA): nothing to compare".to_string())
    } else {
        None
    };
    let mut values: Vec<ReplicatedValue> = (params.list.iter())
        .filter_map(|p| against_peers(p, &params.list))
        .collect();
    values.sort_by(|a, b| b.saving_bytes.cmp(&a.saving_bytes).then(a.parameter.cmp(&b.parameter)));
    Replicated {
        note: LOWER_BOUND,
        saving_bytes: values.iter().map(|v| v.saving_bytes).sum(),
        values,
        needs,
    }
}

/// `p` against its mirrors and family: a row when they cut it into more pieces.
fn against_peers(p: &Param, all: &[Param]) -> Option<ReplicatedValue> {
    let t = p.tiling.as_ref().filter(|t| !t.special)?;
    let (root, leaf) = split_path(&p.path);
    let global = p.global_bytes()?;
    let bytes = p.bytes?;
    if leaf.is_empty() || global <= 8 {
        return None;
    }
    let cut = |q: &Param| q.tiling.as_ref().filter(|t| !t.special).map(|t| t.shards());
    let mirror = (all.iter())
        .filter(|q| q.number != p.number && q.global_shape == p.global_shape)
        .filter(|q| split_path(&q.path).1 == leaf && split_path(&q.path).0 != root)
        .filter_map(|q| Some((cut(q)?, q)))
        .max_by_key(|&(s, q)| (s, std::cmp::Reverse(q.number)));
    let family: Vec<(u64, u64)> = (all.iter())
        .filter(|q| q.number != p.number && split_path(&q.path).0 == root)
        .filter_map(|q| Some((cut(q)?, q.global_bytes()?)))
        .filter(|&(s, _)| s > 1)
        .collect();
    let (peer_shards, peer) = match mirror {
        Some((s, q)) if s > t.shards() => (s, q.path.clone()),
        _ if family.iter().any(|&(_, g)| g <= global) => {
            (most_common(family.iter().map(|f| f.0)), format!("family {root}"))
        }
        _ => return None,
    };
    let shards = t.shards();
    if peer_shards <= shards {
        return None;
    }
    // Per device once cut in `peer_shards` (u128: no text's figures overflow it).
    let whole = u128::from(bytes) * u128::from(shards);
    let if_sharded = u64::try_from(whole.div_ceil(u128::from(peer_shards))).unwrap_or(bytes);
    Some(ReplicatedValue {
        parameter: p.number,
        path: p.path.clone(),
        global_shape: p.global_shape.clone().unwrap_or_default(),
        sharding: p.sharding.clone().unwrap_or_default(),
        shards,
        per_device_bytes: bytes,
        peer_shards,
        peer,
        per_device_bytes_if_sharded: if_sharded,
        saving_bytes: bytes.saturating_sub(if_sharded),
        exact: whole % u128::from(peer_shards) == 0,
        values: p.values.clone(),
    })
}

/// The most common of `xs` (the larger on a tie); 1 for none.
fn most_common(xs: impl Iterator<Item = u64>) -> u64 {
    let mut counts: Vec<(u64, usize)> = Vec::new();
    for x in xs {
        match counts.iter_mut().find(|c| c.0 == x) {
            Some(c) => c.1 += 1,
            None => counts.push((x, 1)),
        }
    }
    counts.into_iter().max_by_key(|&(x, n)| (n, x)).map_or(1, |c| c.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_and_leaves() {
        assert_eq!(split_path("opt_state[0].mu['layers']['w1']"), ("opt_state[0].mu", "['layers']['w1']"));
        assert_eq!(split_path("params['embed']"), ("params", "['embed']"));
        assert_eq!(split_path("tokens"), ("tokens", ""));
        assert_eq!(most_common([2, 4, 4, 2].into_iter()), 4);
        assert_eq!(most_common(std::iter::empty()), 1);
    }
}
