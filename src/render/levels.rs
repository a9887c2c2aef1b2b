//! Finding a space's blocks by step range, and its levels of detail: what keeps the cost of
//! a drawing near the cost of its pixels when a space has millions of blocks.
//!
//! * [`Steps`]: the blocks that meet a step range, found without looking at all of them.
//! * [`Grid`]: a level of detail. The plane is cut into cells of `cell_steps × cell_bytes`;
//!   each "thin" block (at most [`THIN_CELLS`] cells high) marks the cells it touches, and
//!   each row of cells keeps the runs of marked cells per kind, merged where they overlap
//!   or touch. A view whose cells are a small part of a pixel each way (a quarter, see
//!   `index.rs`) paints these runs instead of the thin blocks; the taller blocks keep
//!   their own [`Steps`] and are drawn one by one.
//!
//! Invariant: painting a grid's runs colours the pixels that painting its thin blocks one
//! by one would colour, up to the part of a pixel (one cell) a block's ends move to the
//! cells' edges.

use crate::analysis::Block;

/// Blocks are scanned in runs of this many, sorted by first step.
const RUN: usize = 64;

/// The positions (in a block list) of some blocks, sorted by first step, with the latest
/// end of each run of [`RUN`] of them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Steps {
    order: Vec<u32>,
    run_end: Vec<u32>,
}

impl Steps {
    /// The blocks at `positions`, ordered by first step (ties in the order given).
    pub(crate) fn new(blocks: &[Block], positions: impl Iterator<Item = u32>) -> Steps {
        let positions: Vec<u32> = positions.collect();
        let first = |p: u32| blocks[p as usize].x0;
        let max = positions.iter().map(|&p| first(p)).max().unwrap_or(0) as usize;
        if max > 4 * positions.len() + 1024 {
            // Steps far beyond the blocks' number (a damaged dump): a stable sort, whose
            // memory does not grow with the largest step.
            let mut positions = positions;
            positions.sort_by_key(|&p| first(p));
            return Steps::sorted(blocks, positions);
        }
        // A counting sort by first step: two passes, no comparisons.
        let mut starts = vec![0u32; max + 2];
        for &p in &positions {
            starts[first(p) as usize + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut order = vec![0u32; positions.len()];
        for &p in &positions {
            let at = &mut starts[first(p) as usize];
            order[*at as usize] = p;
            *at += 1;
        }
        Steps::sorted(blocks, order)
    }

    /// The blocks at `order`, which is sorted by first step.
    fn sorted(blocks: &[Block], order: Vec<u32>) -> Steps {
        let run_end = order
            .chunks(RUN)
            .map(|run| {
                run.iter()
                    .map(|&p| blocks[p as usize].x1)
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        Steps { order, run_end }
    }

    /// Calls `f(position)` for each block that meets steps `lo .. hi` (`x0 < hi`,
    /// `x1 > lo`), in no particular order. Runs that end before `lo` are skipped whole.
    pub(crate) fn visit(&self, blocks: &[Block], lo: f64, hi: f64, mut f: impl FnMut(u32)) {
        let end = self
            .order
            .partition_point(|&p| f64::from(blocks[p as usize].x0) < hi);
        for (run, &run_end) in self.order[..end].chunks(RUN).zip(&self.run_end) {
            if f64::from(run_end) <= lo {
                continue;
            }
            for &p in run {
                if f64::from(blocks[p as usize].x1) > lo {
                    f(p);
                }
            }
        }
    }
}

/// Blocks at most this many cells high go into a grid's runs.
pub(crate) const THIN_CELLS: u64 = 6;

/// One level of detail (see the module's documentation).
#[derive(Clone, Debug, Default)]
pub(crate) struct Grid {
    pub(crate) cell_steps: u64,
    pub(crate) cell_bytes: u64,
    /// Row `r`'s runs of columns (`c0 .. c1`) are `runs[starts[r] .. starts[r + 1]]`,
    /// sorted by class, then by first column; within a class they are disjoint and do not
    /// touch.
    starts: Vec<u32>,
    runs: Vec<(u32, u32)>,
    classes: Vec<u8>,
    /// The blocks taller than [`THIN_CELLS`] cells.
    pub(crate) tall: Steps,
}

impl Grid {
    /// The grid of cells `cell_steps × cell_bytes` (each at least 1) over `blocks`, whose
    /// classes (drawing colours, below 8) are `class(position)`; `all` holds every block.
    /// In one go; [`GridBuilder`] does the same in pieces.
    #[cfg(test)]
    pub(crate) fn new(
        blocks: &[Block],
        all: &Steps,
        class: impl Fn(usize) -> u8,
        cell_steps: u64,
        cell_bytes: u64,
    ) -> Grid {
        GridBuilder::new(blocks, cell_steps, cell_bytes).finish(blocks, all, class)
    }

    /// Number of rows of cells.
    pub(crate) fn rows(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Number of runs.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.runs.len()
    }

    /// Calls `f(class, c0, c1)` for the runs of row `row` that meet columns `lo .. hi`.
    pub(crate) fn visit_row(&self, row: usize, lo: u64, hi: u64, mut f: impl FnMut(u8, u32, u32)) {
        let (Some(&a), Some(&b)) = (self.starts.get(row), self.starts.get(row + 1)) else {
            return;
        };
        let (runs, classes) = (
            &self.runs[a as usize..b as usize],
            &self.classes[a as usize..b as usize],
        );
        let mut i = 0;
        while i < runs.len() {
            // One class: its runs are sorted and disjoint, so both ends grow.
            let c = classes[i];
            let n = classes[i..].partition_point(|&k| k == c);
            let class_runs = &runs[i..i + n];
            let first = class_runs.partition_point(|&(_, c1)| u64::from(c1) <= lo);
            for &(c0, c1) in &class_runs[first..] {
                if u64::from(c0) >= hi {
                    break;
                }
                f(c, c0, c1);
            }
            i += n;
        }
    }

    /// Bytes this grid takes.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.starts.capacity() * 4
            + self.runs.capacity() * 8
            + self.classes.capacity()
            + (self.tall.order.capacity() + self.tall.run_end.capacity()) * 4
    }
}

/// Classes of blocks a grid keeps apart (drawing colours).
const CLASSES: usize = 8;
/// No open run.
const NO_RUN: (u32, u32) = (u32::MAX, 0);

/// A [`Grid`] being built, a slice of blocks at a time, so that a browser can build one
/// between frames. One pass over the blocks by first step, with no sorting: each row and
/// class keeps one open run, which a block extends when it starts within it and otherwise
/// closes (the runs of a row and class therefore close in column order); at the end the
/// runs are counting-sorted by row and class.
#[derive(Clone, Debug)]
pub(crate) struct GridBuilder {
    cw: u64,
    ch: u64,
    rows: usize,
    /// The open run of each `row × CLASSES + class`.
    open: Vec<(u32, u32)>,
    /// Closed runs: (row × CLASSES + class, c0, c1).
    closed: Vec<(u32, u32, u32)>,
    tall: Vec<u32>,
    /// Blocks placed so far, in the order of [`Steps`].
    done: usize,
}

impl GridBuilder {
    pub(crate) fn new(blocks: &[Block], cell_steps: u64, cell_bytes: u64) -> GridBuilder {
        let (cw, ch) = (cell_steps.max(1), cell_bytes.max(1));
        let rows = blocks
            .iter()
            .filter(|b| b.y1 - b.y0 <= THIN_CELLS * ch)
            .map(|b| ((b.y1.max(1) - 1) / ch) as usize + 1)
            .max()
            .unwrap_or(0);
        GridBuilder {
            cw,
            ch,
            rows,
            open: vec![NO_RUN; rows * CLASSES],
            closed: Vec::new(),
            tall: Vec::new(),
            done: 0,
        }
    }

    /// Places up to `work` more blocks; whether all are placed.
    pub(crate) fn step(
        &mut self,
        blocks: &[Block],
        all: &Steps,
        class: impl Fn(usize) -> u8,
        work: usize,
    ) -> bool {
        let (cw, ch) = (self.cw, self.ch);
        let to = self.done.saturating_add(work).min(all.order.len());
        for &p in &all.order[self.done..to] {
            let b = &blocks[p as usize];
            if b.y1 - b.y0 > THIN_CELLS * ch {
                self.tall.push(p);
                continue;
            }
            let c0 = (u64::from(b.x0) / cw) as u32;
            let c1 = ((u64::from(b.x1.max(1)) - 1) / cw + 1) as u32;
            let k = usize::from(class(p as usize)) % CLASSES;
            for r in (b.y0 / ch) as usize..=((b.y1.max(1) - 1) / ch) as usize {
                let slot = &mut self.open[r * CLASSES + k];
                if slot.0 != u32::MAX && c0 <= slot.1 {
                    slot.1 = slot.1.max(c1);
                } else {
                    if slot.0 != u32::MAX {
                        self.closed.push(((r * CLASSES + k) as u32, slot.0, slot.1));
                    }
                    *slot = (c0, c1);
                }
            }
        }
        self.done = to;
        to == all.order.len()
    }

    /// Places the blocks left and makes the grid.
    pub(crate) fn finish(
        mut self,
        blocks: &[Block],
        all: &Steps,
        class: impl Fn(usize) -> u8,
    ) -> Grid {
        self.step(blocks, all, class, usize::MAX);
        let (rows, mut closed) = (self.rows, self.closed);
        for (key, slot) in self.open.iter().enumerate() {
            if slot.0 != u32::MAX {
                closed.push((key as u32, slot.0, slot.1));
            }
        }
        drop(self.open);
        // Stable counting sort by (row, class): each key's runs stay in column order.
        let mut starts = vec![0u32; rows * CLASSES + 1];
        for &(key, _, _) in &closed {
            starts[key as usize + 1] += 1;
        }
        for k in 0..rows * CLASSES {
            starts[k + 1] += starts[k];
        }
        let mut runs = vec![(0u32, 0u32); closed.len()];
        let mut classes = vec![0u8; closed.len()];
        let mut fill = starts.clone();
        for &(key, c0, c1) in &closed {
            let at = fill[key as usize] as usize;
            runs[at] = (c0, c1);
            classes[at] = (key as usize % CLASSES) as u8;
            fill[key as usize] += 1;
        }
        Grid {
            cell_steps: self.cw,
            cell_bytes: self.ch,
            starts: starts.iter().step_by(CLASSES).copied().collect(),
            runs,
            classes,
            tall: Steps::sorted(blocks, self.tall),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(value: u32, x0: u32, x1: u32, y0: u64, y1: u64) -> Block {
        Block {
            value,
            x0,
            x1,
            y0,
            y1,
        }
    }

    #[test]
    fn steps_finds_exactly_the_blocks_meeting_a_range() {
        // Blocks of every length at every start, more than a run's worth; then the same
        // shifted to steps far beyond their number (sorted by comparison, not by counting).
        for shift in [0u32, 3_000_000_000] {
            let mut blocks = Vec::new();
            for i in 0..300u32 {
                let x0 = (i * 37) % 211 + shift;
                let len = 1 + (i * 13) % 50 + if i % 29 == 0 { 400 } else { 0 };
                blocks.push(block(i, x0, x0 + len, 0, 1));
            }
            let steps = Steps::new(&blocks, 0..blocks.len() as u32);
            assert!(
                steps.order.windows(2).all(|w| {
                    let (a, b) = (&blocks[w[0] as usize], &blocks[w[1] as usize]);
                    (a.x0, w[0]) < (b.x0, w[1])
                }),
                "not in order of first step, then position (shift {shift})"
            );
            for (lo, hi) in [
                (0.0, 1.0),
                (10.5, 11.0),
                (100.0, 180.0),
                (250.0, 700.0),
                (-5.0, 0.0),
            ] {
                let (lo, hi) = (lo + f64::from(shift), hi + f64::from(shift));
                let mut found = Vec::new();
                steps.visit(&blocks, lo, hi, |p| found.push(p));
                found.sort_unstable();
                let expected: Vec<u32> = (0..300)
                    .filter(|&p| {
                        let b = &blocks[p as usize];
                        f64::from(b.x0) < hi && f64::from(b.x1) > lo
                    })
                    .collect();
                assert_eq!(found, expected, "steps {lo} .. {hi}");
            }
        }
    }

    #[test]
    fn grid_merges_thin_blocks_per_row_and_keeps_tall_ones_apart() {
        // Cells of 4 steps × 10 bytes; thin means at most 60 bytes high.
        let blocks = vec![
            block(0, 0, 2, 0, 10),    // row 0, columns 0..1
            block(1, 3, 9, 5, 10),    // row 0, columns 0..3: overlaps the first, merged
            block(2, 13, 14, 0, 10),  // row 0, column 3: touches, merged
            block(3, 20, 21, 12, 25), // rows 1 and 2, column 5
            block(4, 0, 9, 0, 100),   // tall
            block(5, 0, 1, 0, 3),     // row 0, another class
        ];
        let class = |p: usize| if p == 5 { 2 } else { 1 };
        let all = Steps::new(&blocks, 0..blocks.len() as u32);
        let grid = Grid::new(&blocks, &all, class, 4, 10);
        assert_eq!(grid.rows(), 3);
        let runs = |r: usize, lo: u64, hi: u64| {
            let mut v = Vec::new();
            grid.visit_row(r, lo, hi, |c, c0, c1| v.push((c, c0, c1)));
            v
        };
        assert_eq!(runs(0, 0, 100), vec![(1, 0, 4), (2, 0, 1)]);
        assert_eq!(runs(1, 0, 100), vec![(1, 5, 6)]);
        assert_eq!(runs(2, 0, 100), vec![(1, 5, 6)]);
        // Only the runs meeting the columns asked for.
        assert_eq!(runs(0, 1, 2), vec![(1, 0, 4)]);
        assert_eq!(runs(1, 0, 5), vec![]);
        assert_eq!(runs(9, 0, 100), vec![]);
        let mut tall = Vec::new();
        grid.tall.visit(&blocks, 0.0, 10.0, |p| tall.push(p));
        assert_eq!(tall, vec![4]);
        assert_eq!(grid.len(), 4);
    }
}
