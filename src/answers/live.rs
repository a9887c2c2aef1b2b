//! The live set of a memory space at any step: the values live there, each with its own size
//! and its share of the occupied bytes (the alias rule of [`crate::answers`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::Serialize;

use crate::analysis::Space;
use crate::model::Module;

/// A value live at the step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LiveValue {
    /// Index into [`Module::values`].
    pub value: u32,
    /// Its allocated size.
    pub size: u64,
    /// The occupied bytes credited to it (at most `size`; less where it shares bytes with a
    /// value defined later).
    pub bytes: u64,
}

/// The values of one memory space live at one step.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LiveSet {
    pub color: u32,
    pub step: u32,
    /// In value order.
    pub values: Vec<LiveValue>,
    /// Bytes covered by the live values (the curve at `step`): the sum of their `bytes`.
    pub occupied_bytes: u64,
    /// Sum of their own sizes (shared bytes counted once per value).
    pub value_bytes: u64,
}

impl LiveSet {
    /// The value indices, in value order.
    pub fn indices(&self) -> Vec<u32> {
        self.values.iter().map(|v| v.value).collect()
    }
}

/// The values of `space` live at `step` (`start <= step <= end`), each credited with the
/// bytes it owns. A step past the curve gives an empty set.
pub fn live_set(module: &Module, space: &Space, step: u32) -> LiveSet {
    let mut blocks = Vec::new();
    // Past the curve (steps beyond the schedule) nothing is counted live.
    let in_curve = (step as usize) < space.curve.len();
    for &i in space.timed.iter().filter(|_| in_curve) {
        let v = &module.values[i as usize];
        if !v.live.is_some_and(|r| r.start <= step && step <= r.end) {
            continue;
        }
        if let Some(b) = space.block(module, i) {
            blocks.push(Owned {
                y0: b.y0,
                y1: b.y1,
                rank: (v.live.map_or(0, |r| r.start), v.size, Reverse(i)),
                value: i,
            });
        }
    }
    let shares = owned_bytes(&mut blocks);
    let mut values: Vec<LiveValue> = blocks
        .iter()
        .zip(&shares)
        .map(|(b, &bytes)| LiveValue {
            value: b.value,
            size: module.values[b.value as usize].size,
            bytes,
        })
        .collect();
    values.sort_unstable_by_key(|v| v.value);
    LiveSet {
        color: space.color,
        step,
        occupied_bytes: values.iter().map(|v| v.bytes).sum(),
        value_bytes: values.iter().map(|v| v.size).sum(),
        values,
    }
}

/// Who owns shared bytes: the latest start, then the larger size, then the lower index.
type Rank = (u32, u64, Reverse<u32>);

/// A live block and the rank that decides who owns shared bytes (highest wins).
struct Owned {
    y0: u64,
    y1: u64,
    rank: Rank,
    value: u32,
}

/// Bytes owned by each block (in the order `blocks` ends up in, sorted by `y0`): a sweep
/// along the byte axis with the covering blocks in a heap by rank; a byte goes to the
/// highest-ranked block covering it.
fn owned_bytes(blocks: &mut [Owned]) -> Vec<u64> {
    blocks.sort_unstable_by_key(|b| b.y0);
    let mut owned = vec![0u64; blocks.len()];
    let mut heap: BinaryHeap<(Rank, usize)> = BinaryHeap::new();
    let mut next = 0usize;
    let Some(first) = blocks.first() else {
        return owned;
    };
    let mut y = first.y0;
    loop {
        while next < blocks.len() && blocks[next].y0 <= y {
            heap.push((blocks[next].rank, next));
            next += 1;
        }
        while heap.peek().is_some_and(|&(_, i)| blocks[i].y1 <= y) {
            heap.pop();
        }
        let Some(&(_, top)) = heap.peek() else {
            match blocks.get(next) {
                Some(b) => {
                    y = b.y0;
                    continue;
                }
                None => break,
            }
        };
        let upto = blocks
            .get(next)
            .map_or(blocks[top].y1, |b| b.y0.min(blocks[top].y1));
        owned[top] += upto - y;
        y = upto;
    }
    owned
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(y0: u64, y1: u64, start: u32, value: u32) -> Owned {
        Owned {
            y0,
            y1,
            rank: (start, y1 - y0, Reverse(value)),
            value,
        }
    }

    #[test]
    fn shared_bytes_go_to_the_latest_defined() {
        // [0,100) defined at 1; [50,150) defined at 3 owns the overlap; [200,210) alone;
        // [0,10) defined at 0 is hidden under the first.
        let mut b = vec![
            block(0, 100, 1, 0),
            block(50, 150, 3, 1),
            block(200, 210, 2, 2),
            block(0, 10, 0, 3),
        ];
        let owned = owned_bytes(&mut b);
        let by_value: Vec<(u32, u64)> = b.iter().map(|b| b.value).zip(owned).collect();
        let get = |v| by_value.iter().find(|(x, _)| *x == v).unwrap().1;
        assert_eq!((get(0), get(1), get(2), get(3)), (50, 100, 10, 0));
        assert_eq!(owned_bytes(&mut []), Vec::<u64>::new());
    }
}
