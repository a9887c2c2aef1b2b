//! The occupied-bytes curve of a set of blocks: at each step, the length of the union of the
//! byte ranges of the blocks covering it.
//!
//! Owns: the sweep that makes it, resumable a piece at a time ([`Sweep::run`]), and the
//! segment tree it counts unions with ([`CoverTree`]).
//!
//! The blocks are first cut into *runs*: stretches of consecutive blocks (in the order given)
//! whose byte ranges lie apart from every other run's. The union at a step is then the sum
//! of each run's own union, so each run is swept alone, by its own events and over its own
//! offsets, and adds to the curve only where its union changes (a change per step, summed at
//! the end). A space's blocks come allocation by allocation, up its offset axis, so a run is
//! one allocation's values (one block for most): small trees, most blocks a single add. Any
//! order gives the right curve: a block reaching below the runs before it merges them with
//! it, at worst into one run (the whole sweep at once).

use super::Block;

/// Consecutive blocks `first .. end` whose byte ranges lie within `lo .. hi`.
#[derive(Clone, Copy, Debug)]
struct Run {
    first: u32,
    end: u32,
    lo: u64,
    hi: u64,
}

/// The occupied-bytes curve, a piece at a time. Phases: the runs (a slice of blocks at a
/// time); each run's sweep (a slice of its events at a time), adding the changes of its
/// union to `curve`; the changes summed into the curve (a slice of steps at a time).
pub(super) struct Sweep {
    blocks: Vec<Block>,
    /// Blocks placed in runs so far; the runs, ascending and apart in bytes.
    placed: usize,
    runs: Vec<Run>,
    /// Next run to sweep, and the sweep of the last run of several blocks (under way while
    /// it has events left; its buffers serve the next one).
    next_run: usize,
    local: RunSweep,
    /// Steps summed so far, and their sum.
    summed: usize,
    total: u64,
    /// While the runs are swept, the change of the curve at each step (wrapping: a step's
    /// union always fits in `u64`, so the wrapping sums are exact); then the curve.
    pub(super) curve: Vec<u64>,
}

/// One run's sweep over its own events and offsets.
#[derive(Default)]
struct RunSweep {
    /// The run's distinct byte offsets, sorted.
    ys: Vec<u64>,
    /// Each block's byte range as indices into `ys`, in the run's order.
    spans: Vec<(u32, u32)>,
    /// `step << 32 | (block << 1) | ends`, sorted: the step at which a block starts or ends.
    events: Vec<u64>,
    tree: CoverTree,
    /// Next event, and the union after the events before it.
    next: usize,
    covered: u64,
}

impl Sweep {
    pub(super) fn from_blocks(mut blocks: Vec<Block>, steps: u32) -> Sweep {
        blocks.retain(|b| b.y1 > b.y0 && b.x0 < steps && b.x1 > b.x0);
        Sweep {
            blocks,
            placed: 0,
            runs: Vec::new(),
            next_run: 0,
            local: RunSweep::default(),
            summed: 0,
            total: 0,
            curve: vec![0u64; steps as usize],
        }
    }

    /// Does about `work` units (a block, an event or a step each); whether the curve is
    /// complete.
    pub(super) fn run(&mut self, work: usize) -> bool {
        if self.blocks.is_empty() {
            return true;
        }
        if self.placed < self.blocks.len() {
            let to = self.placed.saturating_add(work).min(self.blocks.len());
            self.place(to);
            return false;
        }
        if self.next_run < self.runs.len() || self.local.under_way() {
            self.sweep_runs(work);
            return false;
        }
        let to = self.summed.saturating_add(work).min(self.curve.len());
        for change in &mut self.curve[self.summed..to] {
            self.total = self.total.wrapping_add(*change);
            *change = self.total;
        }
        self.summed = to;
        self.summed == self.curve.len()
    }

    /// Places blocks `placed .. to` in runs: a block starts a run of its own above the last
    /// one, or takes in every run its range reaches (a suffix of the runs, since they ascend).
    fn place(&mut self, to: usize) {
        for i in self.placed..to {
            let b = &self.blocks[i];
            let mut run = Run {
                first: i as u32,
                end: i as u32 + 1,
                lo: b.y0,
                hi: b.y1,
            };
            while let Some(top) = self.runs.last().filter(|top| top.hi > run.lo) {
                run.first = top.first;
                run.lo = run.lo.min(top.lo);
                run.hi = run.hi.max(top.hi);
                self.runs.pop();
            }
            self.runs.push(run);
        }
        self.placed = to;
    }

    /// Sweeps runs, or the events of a long one, for about `work` units.
    fn sweep_runs(&mut self, work: usize) {
        let mut done = 0usize;
        while done < work {
            if self.local.under_way() {
                done += self.local.advance(&mut self.curve, work - done);
                continue;
            }
            let Some(&run) = self.runs.get(self.next_run) else {
                return;
            };
            self.next_run += 1;
            let blocks = &self.blocks[run.first as usize..run.end as usize];
            done += blocks.len();
            if let [b] = blocks {
                self.add(b.x0, b.x1, b.y1 - b.y0);
            } else {
                // The curve has a slot per step, so its length is the axis's end.
                self.local.start(blocks, self.curve.len() as u32);
            }
        }
    }

    /// A block alone in its run: `bytes` from step `x0` to before `x1`.
    fn add(&mut self, x0: u32, x1: u32, bytes: u64) {
        let at = &mut self.curve[x0 as usize];
        *at = at.wrapping_add(bytes);
        if let Some(at) = self.curve.get_mut(x1 as usize) {
            *at = at.wrapping_sub(bytes);
        }
    }
}

impl RunSweep {
    fn under_way(&self) -> bool {
        self.next < self.events.len()
    }

    /// Sets up the sweep of a run's blocks (in the buffers of the last one).
    fn start(&mut self, blocks: &[Block], steps: u32) {
        self.ys.clear();
        self.ys.extend(blocks.iter().flat_map(|b| [b.y0, b.y1]));
        self.ys.sort_unstable();
        self.ys.dedup();
        let ys = &self.ys;
        let coord = |y: u64| ys.partition_point(|&c| c < y) as u32;
        self.spans.clear();
        self.spans
            .extend(blocks.iter().map(|b| (coord(b.y0), coord(b.y1))));
        self.events.clear();
        for (i, b) in blocks.iter().enumerate() {
            let i = (i as u64) << 1;
            self.events.push(u64::from(b.x0) << 32 | i);
            // An end at or past the axis's end never comes.
            if b.x1 < steps {
                self.events.push(u64::from(b.x1) << 32 | i | 1);
            }
        }
        self.events.sort_unstable();
        self.tree.reset(&self.ys);
        self.next = 0;
        self.covered = 0;
    }

    /// Applies the events of about `work` steps, adding the change of the run's union at each
    /// step to `curve`; the work done.
    fn advance(&mut self, curve: &mut [u64], work: usize) -> usize {
        let mut done = 0usize;
        while self.under_way() && done < work {
            let step = self.events[self.next] >> 32;
            while let Some(&e) = self.events.get(self.next).filter(|&&e| e >> 32 == step) {
                let (lo, hi) = self.spans[(e as u32 >> 1) as usize];
                let delta = if e & 1 == 1 { -1 } else { 1 };
                self.tree.add(lo as usize, hi as usize, delta);
                self.next += 1;
                done += 1;
            }
            let covered = self.tree.covered();
            let at = &mut curve[step as usize];
            *at = at.wrapping_add(covered.wrapping_sub(self.covered));
            self.covered = covered;
        }
        done
    }
}

/// Segment tree over elementary intervals `[ys[i], ys[i+1])`, bottom-up (no recursion):
/// for each node, how many intervals cover it whole and how much of it is covered.
#[derive(Default)]
pub(super) struct CoverTree {
    /// Number of leaves (a power of two); node `i` has children `2i`, `2i + 1`.
    size: usize,
    nodes: Vec<CoverNode>,
}

/// One node of a [`CoverTree`] (its fields side by side: a pull reads a node and its two
/// children, which then share a cache line).
#[derive(Clone, Copy, Default)]
struct CoverNode {
    /// Bytes spanned.
    span: u64,
    /// Bytes covered.
    covered: u64,
    /// Intervals covering the node whole.
    count: i32,
}

impl CoverTree {
    #[cfg(test)]
    pub(super) fn new(ys: &[u64]) -> Self {
        let mut tree = CoverTree::default();
        tree.reset(ys);
        tree
    }

    /// The tree over `ys`, nothing covered (its nodes reused).
    fn reset(&mut self, ys: &[u64]) {
        let n = ys.len().saturating_sub(1).max(1);
        let size = n.next_power_of_two();
        self.size = size;
        self.nodes.clear();
        self.nodes.resize(2 * size, CoverNode::default());
        let nodes = &mut self.nodes;
        for (i, w) in ys.windows(2).enumerate() {
            nodes[size + i].span = w[1] - w[0];
        }
        for i in (1..size).rev() {
            nodes[i].span = nodes[2 * i].span + nodes[2 * i + 1].span;
        }
    }

    pub(super) fn covered(&self) -> u64 {
        self.nodes[1].covered
    }

    fn pull(&mut self, node: usize) {
        let n = self.nodes[node];
        self.nodes[node].covered = if n.count > 0 {
            n.span
        } else if node >= self.size {
            0
        } else {
            self.nodes[2 * node].covered + self.nodes[2 * node + 1].covered
        };
    }

    /// Adds `delta` cover to elementary intervals `lo .. hi`.
    pub(super) fn add(&mut self, lo: usize, hi: usize, delta: i32) {
        if lo >= hi {
            return;
        }
        let (mut l, mut r) = (lo + self.size, hi + self.size);
        let (l0, r0) = (l, r - 1);
        while l < r {
            if l & 1 == 1 {
                self.nodes[l].count += delta;
                self.pull(l);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                self.nodes[r].count += delta;
                self.pull(r);
            }
            l >>= 1;
            r >>= 1;
        }
        // The ancestors of both ends, a level at a time (the leaves are at one depth, so
        // the two paths meet and are then one).
        let (mut a, mut b) = (l0 >> 1, r0 >> 1);
        while a > 0 {
            self.pull(a);
            if b != a {
                self.pull(b);
            }
            a >>= 1;
            b >>= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Block, CoverTree, Sweep};

    /// The union at each step, counted byte by byte.
    fn brute(blocks: &[Block], steps: u32) -> Vec<u64> {
        (0..steps)
            .map(|t| {
                let live: Vec<&Block> = blocks.iter().filter(|b| b.x0 <= t && t < b.x1).collect();
                let top = live.iter().map(|b| b.y1).max().unwrap_or(0);
                (0..top)
                    .filter(|&y| live.iter().any(|b| b.y0 <= y && y < b.y1))
                    .count() as u64
            })
            .collect()
    }

    #[test]
    fn runs_follow_the_byte_ranges() {
        let b = |x0, x1, y0, y1| Block {
            value: 0,
            x0,
            x1,
            y0,
            y1,
        };
        let blocks = vec![
            // An allocation of three values, two of them aliasing: one run.
            b(0, 6, 0, 50),
            b(3, 9, 50, 100),
            b(6, 10, 0, 100),
            // A value alone in its allocation, then one above a gap.
            b(2, 4, 100, 200),
            b(5, 7, 300, 310),
            // A block reaching below the last two runs takes them in; past the axis's end.
            b(1, 30, 150, 320),
        ];
        let mut sweep = Sweep::from_blocks(blocks.clone(), 12);
        sweep.place(5);
        let spans = |s: &Sweep| {
            s.runs
                .iter()
                .map(|r| (r.first, r.end, r.lo, r.hi))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            spans(&sweep),
            [(0, 3, 0, 100), (3, 4, 100, 200), (4, 5, 300, 310)]
        );
        sweep.place(6);
        assert_eq!(spans(&sweep), [(0, 3, 0, 100), (3, 6, 100, 320)]);
        while !sweep.run(3) {}
        assert_eq!(sweep.curve, brute(&blocks, 12));
    }

    proptest::proptest! {
        /// Adds and removes, checked against the union counted interval by interval.
        #[test]
        fn cover_tree_is_the_union(
            ops in proptest::collection::vec((0usize..11, 0usize..11, 0usize..3, 0usize..99), 1..200)
        ) {
            let ys = [0u64, 3, 4, 10, 11, 20, 27, 30, 31, 45, 46, 64];
            let mut t = CoverTree::new(&ys);
            let mut cover = [0i32; 11];
            let mut live: Vec<(usize, usize)> = Vec::new();
            for (a, b, kind, pick) in ops {
                let (lo, hi, delta) = if live.is_empty() || kind > 0 {
                    live.push((a.min(b), a.max(b) + 1));
                    (a.min(b), a.max(b) + 1, 1)
                } else {
                    let (lo, hi) = live.swap_remove(pick % live.len());
                    (lo, hi, -1)
                };
                t.add(lo, hi, delta);
                cover[lo..hi].iter_mut().for_each(|c| *c += delta);
                let union: u64 = (0..11)
                    .filter(|&i| cover[i] > 0)
                    .map(|i| ys[i + 1] - ys[i])
                    .sum();
                proptest::prop_assert_eq!(t.covered(), union);
            }
        }
    }

    #[test]
    fn cover_tree_unions() {
        let ys = [0u64, 10, 20, 50, 100];
        let mut t = CoverTree::new(&ys);
        t.add(0, 2, 1); // [0,20)
        assert_eq!(t.covered(), 20);
        t.add(1, 3, 1); // [10,50): union [0,50)
        assert_eq!(t.covered(), 50);
        t.add(0, 2, -1);
        assert_eq!(t.covered(), 40);
        t.add(3, 4, 1);
        assert_eq!(t.covered(), 90);
        t.add(1, 3, -1);
        t.add(3, 4, -1);
        assert_eq!(t.covered(), 0);
    }
}
