//! Which one dimension a set of compilations of one program varies: an entry parameter's
//! dimension, read from the shapes the dumps print (`parameter tokens, dim 0`), or a loop's
//! trip count, read from the HLO text beside the dump (`trip count of while.12`, the number
//! of layers of a scan).
//!
//! Loops are paired across compilations by what they are (while name and kind), not by
//! their place in the schedule, which the compiler may change from one compilation to the
//! next.
//!
//! Dimensions whose values move in proportion across the compilations are one dimension
//! (the layers' stacked parameters and the scans' trip counts all follow the number of
//! layers); it is named after a trip count where one moves with it (the layers), else after
//! the parameter first in number. Two groups that do not move together are two
//! dimensions: an error naming both. Two compilations at the same value whose programs
//! differ (a remat ladder: one batch, several policies) are no sweep either: an error
//! naming them.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::loops::{loops, Loop};
use crate::model::Module;

/// The dimension the compilations vary and its value in each, in the order given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Varied {
    /// `parameter tokens, dim 0` or `trip count of while.12`.
    pub what: String,
    pub values: Vec<u64>,
}

/// One dimension seen in every compilation.
#[derive(Clone, Debug)]
struct Candidate {
    what: String,
    values: Vec<u64>,
    /// Trip counts name a group before parameters; then the lower key.
    rank: (u8, u32, u32),
}

/// The one dimension `modules` vary, or one sentence: nothing varies, or two dimensions do
/// (naming both and their values).
pub fn varied(modules: &[&Module]) -> Result<Varied, String> {
    let mut candidates = parameter_dims(modules);
    candidates.extend(trip_counts(modules));
    let moving: Vec<Candidate> = candidates
        .into_iter()
        .filter(|c| c.values.iter().any(|&v| v != c.values[0]))
        .collect();
    let mut groups: Vec<Vec<Candidate>> = Vec::new();
    for c in moving {
        match groups.iter_mut().find(|g| proportional(&g[0].values, &c.values)) {
            Some(g) => g.push(c),
            None => groups.push(vec![c]),
        }
    }
    let mut named: Vec<Candidate> = (groups.into_iter())
        .filter_map(|g| g.into_iter().min_by_key(|c| c.rank))
        .collect();
    named.sort_by_key(|c| c.rank);
    match named.len() {
        0 => Err(format!(
            "nothing varies across the {} compilations: no entry parameter's dimension and no loop's trip count differs",
            modules.len()
        )),
        1 => {
            let c = named.remove(0);
            match other_program(modules, &c.values) {
                Some((a, b)) => Err(format!(
                    "compilations {} and {} have the same shapes ({} = {}) but are different programs ({} against {} instructions): another remat policy or change of code, not one dimension varied",
                    a + 1,
                    b + 1,
                    c.what,
                    c.values[a],
                    modules[a].instructions.len(),
                    modules[b].instructions.len()
                )),
                None => Ok(Varied { what: c.what, values: c.values }),
            }
        }
        _ => Err(format!(
            "two dimensions vary: {} ({}) and {} ({}); a sweep varies one",
            named[0].what,
            list(&named[0].values),
            named[1].what,
            list(&named[1].values)
        )),
    }
}

/// Two compilations with the same value of the one dimension varied (so the same shapes
/// everywhere) whose programs differ (in their number of instructions): the first such pair.
/// The same program compiled twice is the same point twice, not this.
fn other_program(modules: &[&Module], values: &[u64]) -> Option<(usize, usize)> {
    (0..modules.len())
        .flat_map(|a| (a + 1..modules.len()).map(move |b| (a, b)))
        .find(|&(a, b)| values[a] == values[b] && modules[a].instructions.len() != modules[b].instructions.len())
}

/// Whether `modules` have the same entry parameters: each module's set of (parameter
/// number, shape index, rank) is the same and not empty. Compilations of one program with
/// other sizes do; a folder's different programs (init, train step, eval step) do not.
pub fn same_parameters(modules: &[&Module]) -> bool {
    let keys = |m: &Module| -> std::collections::BTreeSet<(u32, String, usize)> {
        (m.allocations.iter())
            .filter_map(|a| {
                let p = a.parameter.as_ref()?;
                let dims = crate::shape::dimensions(m.str(p.shape))?;
                Some((p.number, m.str(p.shape_index).to_string(), dims.len()))
            })
            .collect()
    };
    let Some(first) = modules.first().map(|m| keys(m)) else { return false };
    !first.is_empty() && modules[1..].iter().all(|m| keys(m) == first)
}

fn list(values: &[u64]) -> String {
    values.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

/// `a` and `b` are in the same ratio at every compilation.
fn proportional(a: &[u64], b: &[u64]) -> bool {
    a.len() == b.len()
        && (a.iter().zip(b)).all(|(&x, &y)| x as u128 * b[0] as u128 == y as u128 * a[0] as u128)
}

/// Every dimension of every array-shaped entry parameter that all modules print, keyed by
/// parameter number, shape index and dimension.
fn parameter_dims(modules: &[&Module]) -> Vec<Candidate> {
    let mut seen: BTreeMap<(u32, String, u32), Candidate> = BTreeMap::new();
    for (k, m) in modules.iter().enumerate() {
        for a in &m.allocations {
            let Some(p) = &a.parameter else { continue };
            let Some(dims) = crate::shape::dimensions(m.str(p.shape)) else { continue };
            let index = m.str(p.shape_index).to_string();
            for (d, &v) in dims.iter().enumerate() {
                let key = (p.number, index.clone(), d as u32);
                if k == 0 {
                    let what = format!("parameter {}, dim {d}", parameter_name(m, a, p.number));
                    let rank = (1, p.number, d as u32);
                    seen.insert(key, Candidate { what, values: vec![v], rank });
                } else if let Some(c) = seen.get_mut(&key) {
                    if c.values.len() == k {
                        c.values.push(v);
                    }
                }
            }
        }
    }
    (seen.into_values())
        .filter(|c| c.values.len() == modules.len())
        .collect()
}

/// The parameter's pytree path where the HLO text names it, else its instruction's name,
/// else its number.
fn parameter_name(m: &Module, a: &crate::model::Allocation, number: u32) -> String {
    let vals = &m.values[a.values.start as usize..a.values.end as usize];
    let own = (vals.iter())
        .find(|v| m.str(m.instruction(v).opcode) == "parameter")
        .or(vals.first());
    match own {
        Some(v) => crate::query::parameter_path(m, v)
            .map(str::to_string)
            .unwrap_or_else(|| m.str(m.instruction(v).name).to_string()),
        None => number.to_string(),
    }
}

/// The loops' trip counts, where every module has the same number of loops and each loop of
/// the first has a partner in every other ([`partner`]) with a known count.
fn trip_counts(modules: &[&Module]) -> Vec<Candidate> {
    let all: Vec<Vec<Loop>> = modules.iter().map(|m| loops(m).loops).collect();
    let Some(first) = all.first() else { return Vec::new() };
    if all.iter().any(|l| l.len() != first.len()) {
        return Vec::new();
    }
    (0..first.len())
        .filter_map(|i| {
            let values: Option<Vec<u64>> = all.iter().map(|l| partner(first, i, l)?.trip_count).collect();
            Some(Candidate {
                what: format!("trip count of {}", first[i].while_name),
                values: values?,
                rank: (0, i as u32, 0),
            })
        })
        .collect()
}

/// The loop of `other` that is loop `i` of `first`: the one of the same while name that is
/// the same kind of loop (its name from the op_name, and depth), else the n-th of that kind
/// in step order as loop `i` is the n-th of its kind in `first`. Not its place in step order:
/// the scheduler may order two loops differently in two compilations (MaxText's backward scan
/// and XLA's loop of a dot_general swap places between per-device batch 4 and 5).
fn partner<'a>(first: &[Loop], i: usize, other: &'a [Loop]) -> Option<&'a Loop> {
    let kind = |l: &Loop| (l.name.clone(), l.depth);
    let want = kind(&first[i]);
    let by_name = other.iter().find(|l| l.while_name == first[i].while_name && kind(l) == want);
    let nth = first[..i].iter().filter(|l| kind(l) == want).count();
    by_name.or_else(|| other.iter().filter(|l| kind(l) == want).nth(nth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proportional_values_are_one_dimension() {
        assert!(proportional(&[4, 8, 12], &[4, 8, 12]));
        assert!(proportional(&[4, 8, 12], &[8, 16, 24]));
        assert!(!proportional(&[4, 8, 12], &[8, 16, 25]));
        assert!(!proportional(&[4, 8], &[4, 8, 12]));
    }

    fn lp(while_name: &str, name: &str, trip: u64) -> Loop {
        Loop {
            while_name: while_name.to_string(),
            step: 0,
            in_computation: String::new(),
            condition: String::new(),
            body: String::new(),
            condition_steps: [0, 0],
            body_steps: [0, 0],
            trip_count: Some(trip),
            trip_source: crate::analysis::loops::TripSource::Printed,
            name: name.to_string(),
            op_name: None,
            depth: 0,
            parent: None,
            at: [0; 4],
        }
    }

    #[test]
    fn loops_are_paired_by_what_they_are_not_their_place_in_the_schedule() {
        // MaxText's llama3.1-8b at per-device batch 4 and 5: the backward scan and XLA's loop
        // of a dot_general swap places; neither trip count varies.
        let b4 = [lp("while.145", "forward scan", 32), lp("while.137", "XLA loop", 4), lp("while.136", "backward scan", 32)];
        let b5 = [lp("while.145", "forward scan", 32), lp("while.136", "backward scan", 32), lp("while.137", "XLA loop", 4)];
        for i in 0..3 {
            assert_eq!(partner(&b4, i, &b5).unwrap().trip_count, b4[i].trip_count, "{i}");
        }
        // Renumbered by the compiler: the n-th loop of its kind.
        let renamed = [lp("while.9", "backward scan", 48), lp("while.8", "forward scan", 48), lp("while.7", "XLA loop", 4)];
        assert_eq!(partner(&b4, 2, &renamed).unwrap().while_name, "while.9");
        assert_eq!(partner(&b4, 1, &renamed).unwrap().while_name, "while.7");
        // No loop of that kind: no partner.
        assert!(partner(&b4, 1, &[lp("while.1", "forward scan", 1)]).is_none());
    }
}
