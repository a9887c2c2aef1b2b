//! The blocks of one memory space, worked out once: what drawing, hit-testing and marking
//! scan. A view that draws the same space many times (the browser, on every pan and zoom)
//! keeps one [`SpaceIndex`] instead of looking every value up again; a space with many
//! blocks also gets its levels of detail ([`Grid`]) here.

use crate::analysis::{Analysis, Block, Slot, Space};
use crate::model::{InstrId, Module};

use super::geometry::{Mapping, PxRect, Viewport};
use super::kind::{kind_at, kind_index};
use super::levels::{Grid, GridBuilder, Steps};
use crate::analysis::{value_kind, ValueKind};
use std::cell::{OnceCell, RefCell};

/// Allocation slots are skipped in runs of this many.
const SLOTS: usize = 64;
/// Spaces with fewer blocks than this are drawn block by block at every zoom.
const LEVELS_FROM: usize = 50_000;
/// A view where this many blocks or fewer meet the steps in view is drawn block by block.
const FEW_BLOCKS: f64 = 30_000.0;
/// Level `j`'s grid has `COLUMNS << j` columns and `ROWS << j` rows over the whole space
/// (about the aspect of a diagram on a screen); levels `0 ..= MAX_LEVEL`.
const COLUMNS: u64 = 256;
const ROWS: u64 = 96;
const MAX_LEVEL: usize = 12;
/// A level is used when its cells are at most this part of a pixel, each way (on the
/// dense diagram of the render tests, a half changed 4 % of the pixels from a drawing
/// block by block, a quarter under 2 %).
const CELL_PX: f64 = 0.25;

/// Every value of a space that has a block (a live range and a non-empty size), in value
/// order (the order [`Space::timed`] lists them, which is also the drawing order), with
/// its kind and instruction.
#[derive(Clone, Debug, Default)]
pub struct SpaceIndex {
    color: u32,
    full: Viewport,
    blocks: Vec<Block>,
    kinds: Vec<ValueKind>,
    instructions: Vec<InstrId>,
    steps: Steps,
    /// The largest allocation of each run of [`SLOTS`] slots of the space's layout: what
    /// lets drawing skip runs of allocation bands too thin to draw.
    slot_runs: Vec<u64>,
    /// Levels of detail, coarsest first, each built the first time a view needs it (none
    /// for a small space).
    grids: Vec<OnceCell<Grid>>,
    /// The level being built while idle ([`SpaceIndex::prepare_next`]), and its progress.
    building: RefCell<Option<(usize, GridBuilder)>>,
    /// Levels used even when few blocks are in view ([`Levels::Always`]).
    always: bool,
}

/// A [`SpaceIndex`] being built a slice of the space's values at a time, so that a
/// browser can build it between frames (the largest space of a 1 GB dump takes about
/// 90 ms in wasm). Every call takes the module and space it was made for.
pub struct IndexBuilder {
    index: SpaceIndex,
    levels: Levels,
    /// Values of [`Space::timed`] gathered so far.
    done: usize,
}

impl IndexBuilder {
    /// Gathers the blocks of up to `work` more values; whether all are gathered.
    pub fn step(&mut self, module: &Module, space: &Space, work: usize) -> bool {
        let to = self.done.saturating_add(work).min(space.timed.len());
        let index = &mut self.index;
        for &value in &space.timed[self.done..to] {
            let (Some(b), Some(v)) = (
                space.block(module, value),
                module.values.get(value as usize),
            ) else {
                continue;
            };
            if b.x1 > b.x0 && b.y1 > b.y0 {
                index.blocks.push(b);
                index.kinds.push(value_kind(module, v));
                index.instructions.push(v.instruction);
            }
        }
        self.done = to;
        to == space.timed.len()
    }

    /// Gathers what is left, orders the blocks by first step and makes the index.
    pub fn finish(mut self, module: &Module, space: &Space) -> SpaceIndex {
        self.step(module, space, usize::MAX);
        let mut index = self.index;
        index.steps = Steps::new(&index.blocks, 0..index.blocks.len() as u32);
        let size = |s: &Slot| {
            module
                .allocations
                .get(s.allocation as usize)
                .map_or(0, |a| a.size)
        };
        index.slot_runs = space
            .layout
            .chunks(SLOTS)
            .map(|run| run.iter().map(size).max().unwrap_or(0))
            .collect();
        let wanted = match self.levels {
            Levels::Auto => index.blocks.len() >= LEVELS_FROM,
            Levels::Never => false,
            Levels::Always => true,
        };
        if wanted {
            index.grids = vec![OnceCell::new(); MAX_LEVEL + 1];
            index.always = self.levels == Levels::Always;
        }
        index
    }
}

/// What a drawing shows, as [`SpaceIndex::for_each_in_view`] hands it out.
pub(crate) enum InView {
    /// A run of cells of a level of detail, covered by thin blocks of one kind, in pixels.
    Cells(PxRect, ValueKind),
    /// One block.
    Block(Block, ValueKind),
}

/// Whether a [`SpaceIndex`] has levels of detail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Levels {
    /// When the space has many blocks, used when a view shows many of them.
    Auto,
    /// Never: every drawing goes block by block (what the levels are compared with).
    Never,
    /// Always, used whenever a level's cells are small enough (for tests).
    Always,
}

impl SpaceIndex {
    pub fn new(module: &Module, analysis: &Analysis, space: &Space) -> SpaceIndex {
        SpaceIndex::with_levels(module, analysis, space, Levels::Auto)
    }

    pub fn with_levels(
        module: &Module,
        analysis: &Analysis,
        space: &Space,
        levels: Levels,
    ) -> SpaceIndex {
        let mut builder = SpaceIndex::builder(analysis, space, levels);
        builder.step(module, space, usize::MAX);
        builder.finish(module, space)
    }

    /// The index of `space` built in pieces ([`IndexBuilder::step`]).
    pub fn builder(analysis: &Analysis, space: &Space, levels: Levels) -> IndexBuilder {
        IndexBuilder {
            index: SpaceIndex {
                color: space.color,
                full: Viewport::full(analysis, space),
                ..SpaceIndex::default()
            },
            levels,
            done: 0,
        }
    }

    /// The first slot from `i` on (in layout order) that may be at least `bytes` large:
    /// whole runs of smaller ones are skipped.
    pub(crate) fn next_slot_of(&self, i: usize, bytes: u64) -> usize {
        if !i.is_multiple_of(SLOTS) {
            return i;
        }
        let mut run = i / SLOTS;
        while self.slot_runs.get(run).is_some_and(|&m| m < bytes) {
            run += 1;
        }
        run * SLOTS
    }

    /// Cell size (steps, bytes) of level `j`.
    fn cell(&self, j: usize) -> (u64, u64) {
        let steps = self.full.x1.max(1.0) as u64;
        let bytes = self.full.y1.max(1.0) as u64;
        (
            steps.div_ceil(COLUMNS << j).max(1),
            bytes.div_ceil(ROWS << j).max(1),
        )
    }

    /// Level `j`'s grid, built now if it was not yet (finishing what was built of it while
    /// idle).
    fn grid(&self, j: usize) -> Option<&Grid> {
        let cell = self.grids.get(j)?;
        Some(cell.get_or_init(|| {
            let started = self.building.borrow_mut().take_if(|(k, _)| *k == j);
            let builder = started.map_or_else(|| self.grid_builder(j), |(_, b)| b);
            builder.finish(&self.blocks, &self.steps, |p| self.class(p))
        }))
    }

    fn grid_builder(&self, j: usize) -> GridBuilder {
        let (cw, ch) = self.cell(j);
        GridBuilder::new(&self.blocks, cw, ch)
    }

    /// The drawing class of the block at `p`.
    fn class(&self, p: usize) -> u8 {
        kind_index(self.kinds[p]) as u8
    }

    /// The level of detail for a drawing with `map`: none when few blocks meet the steps
    /// in view, else the coarsest whose cells are at most [`CELL_PX`] of a pixel each way.
    fn level_for(&self, map: &Mapping) -> Option<usize> {
        let v = &map.view;
        let share = (v.x1 - v.x0) / (self.full.x1 - self.full.x0).max(1.0);
        let few = !self.always && share * self.blocks.len() as f64 <= FEW_BLOCKS;
        if self.grids.is_empty() || few {
            return None;
        }
        let steps_px = (v.x1 - v.x0) / f64::from(map.rect.width().max(1));
        let bytes_px = (v.y1 - v.y0) / f64::from(map.rect.height().max(1));
        (0..self.grids.len()).find(|&j| {
            let (cw, ch) = self.cell(j);
            cw as f64 <= steps_px * CELL_PX && ch as f64 <= bytes_px * CELL_PX
        })
    }

    /// Builds the level of detail that the whole space drawn in `plot` (a diagram's
    /// rectangle in pixels) uses, so that the first drawing does not wait for it.
    pub fn prepare(&self, plot: PxRect) {
        self.prepare_view(&self.full, plot);
    }

    /// Builds the level of detail that drawing `view` in `plot` uses, unless it is built
    /// already; whether it built one (so that a view can draw in a later frame instead of
    /// waiting for it in this one).
    pub fn prepare_view(&self, view: &Viewport, plot: PxRect) -> bool {
        match self.level_for(&Mapping::new(*view, plot)) {
            Some(j) if self.grids.get(j).is_some_and(|g| g.get().is_none()) => {
                self.grid(j);
                true
            }
            _ => false,
        }
    }

    /// Builds part of the next level of detail, finer than the whole space's in `plot`,
    /// that zooming into it may use: up to `work` blocks placed per call, so that a view
    /// can build the levels while idle, between frames, rather than on its first zoom.
    /// Whether there is more to build.
    pub fn prepare_next(&self, plot: PxRect, work: usize) -> bool {
        let Some(first) = self.level_for(&Mapping::new(self.full, plot)) else {
            return false;
        };
        // Zooming in 2^k times uses about level `first + k`, and levels at all only while
        // more than FEW_BLOCKS blocks are in view.
        let more = (self.blocks.len() as f64 / FEW_BLOCKS)
            .log2()
            .ceil()
            .max(0.0) as usize;
        let last = (first + more + 1).min(self.grids.len().saturating_sub(1));
        let Some(j) = (first..=last).find(|&j| self.grids[j].get().is_none()) else {
            return false;
        };
        let mut building = self.building.borrow_mut();
        let (_, builder) = match building.take() {
            Some((k, b)) if k == j => building.insert((k, b)),
            _ => building.insert((j, self.grid_builder(j))),
        };
        if builder.step(&self.blocks, &self.steps, |p| self.class(p), work) {
            if let Some((_, b)) = building.take() {
                let grid = b.finish(&self.blocks, &self.steps, |p| self.class(p));
                let _ = self.grids[j].set(grid);
            }
        }
        true
    }

    /// Bytes the levels of detail built so far take (for benchmarks).
    pub fn levels_heap_bytes(&self) -> usize {
        self.grids
            .iter()
            .filter_map(OnceCell::get)
            .map(Grid::heap_bytes)
            .sum()
    }

    /// Calls `f` with what a drawing with `map` shows: when a level of detail fits the
    /// view, first its runs of cells in view (row by row), then the other blocks in view
    /// one by one, in value order. Blocks are culled by steps only.
    pub(crate) fn for_each_in_view(&self, map: &Mapping, mut f: impl FnMut(InView)) {
        let v = &map.view;
        let steps = match self.level_for(map).and_then(|j| self.grid(j)) {
            Some(grid) => {
                let (cw, ch) = (grid.cell_steps as f64, grid.cell_bytes as f64);
                let (lo, hi) = (
                    (v.x0 / cw).floor().max(0.0) as u64,
                    (v.x1 / cw).ceil().max(0.0) as u64,
                );
                let first = (v.y0 / ch).floor().max(0.0) as usize;
                let last = ((v.y1 / ch).ceil().max(0.0) as usize).min(grid.rows());
                for row in first..last {
                    let (y0, y1) = (row as f64 * ch, (row + 1) as f64 * ch);
                    grid.visit_row(row, lo, hi, |class, c0, c1| {
                        let (x0, x1) = (f64::from(c0) * cw, f64::from(c1) * cw);
                        if let Some(px) = map.data_rect_px(x0, x1, y0, y1) {
                            f(InView::Cells(px, kind_at(usize::from(class))));
                        }
                    });
                }
                &grid.tall
            }
            None => &self.steps,
        };
        for p in self.positions(steps, v.x0, v.x1) {
            let p = p as usize;
            f(InView::Block(self.blocks[p], self.kinds[p]));
        }
    }

    /// Positions of the blocks of `steps` that meet steps `lo .. hi`, in value order.
    fn positions(&self, steps: &Steps, lo: f64, hi: f64) -> Vec<u32> {
        let mut found = Vec::new();
        steps.visit(&self.blocks, lo, hi, |p| found.push(p));
        if found.len() < self.blocks.len() / 64 {
            found.sort_unstable();
            return found;
        }
        // Many: a bitmap puts them in order in time linear in the count.
        let mut bits = vec![0u64; self.blocks.len().div_ceil(64)];
        for &p in &found {
            bits[p as usize / 64] |= 1 << (p % 64);
        }
        found.clear();
        for (w, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                found.push((w * 64) as u32 + word.trailing_zeros());
                word &= word - 1;
            }
        }
        found
    }

    /// The memory space's colour.
    pub fn color(&self) -> u32 {
        self.color
    }

    /// The whole space ([`Viewport::full`]).
    pub fn full(&self) -> Viewport {
        self.full
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The block of `value`, if it has one in this space.
    pub fn block(&self, value: u32) -> Option<Block> {
        self.position(value).map(|i| self.blocks[i])
    }

    fn position(&self, value: u32) -> Option<usize> {
        self.blocks.binary_search_by_key(&value, |b| b.value).ok()
    }

    /// `(block, kind, instruction)` of the blocks whose steps meet `lo .. hi`.
    pub(crate) fn in_steps(
        &self,
        lo: f64,
        hi: f64,
    ) -> impl Iterator<Item = (Block, ValueKind, InstrId)> + '_ {
        self.positions(&self.steps, lo, hi).into_iter().map(|p| {
            let p = p as usize;
            (self.blocks[p], self.kinds[p], self.instructions[p])
        })
    }

    /// The value whose block is under pixel `(px, py)` of a diagram drawn in `rect` with
    /// `view` (an invalid one means the whole space); the smallest one when blocks overlap
    /// there. Uses the mapping drawing uses, so a block drawn one pixel wide is found at
    /// that pixel.
    pub fn hit(&self, view: &Viewport, rect: PxRect, px: i32, py: i32) -> Option<u32> {
        if !rect.contains(px, py) {
            return None;
        }
        let map = Mapping::new(view.or(self.full), rect);
        // A block drawn at column `px` has steps within a pixel of it (rounding, and
        // widening to one pixel): cheap to test before working out its pixels.
        let (lo, hi) = (
            map.step_at(f64::from(px) - 1.0),
            map.step_at(f64::from(px) + 2.0),
        );
        let mut best: Option<(u128, u32)> = None;
        for (b, _, _) in self.in_steps(lo, hi) {
            // Where the block is drawn: thin ones taller (`Mapping::shown_px`).
            let Some(r) = map.shown_px(&b) else { continue };
            if r.contains(px, py) {
                let area = u128::from(b.x1 - b.x0) * u128::from(b.y1 - b.y0);
                if best.is_none_or(|(a, _)| area < a) {
                    best = Some((area, b.value));
                }
            }
        }
        best.map(|(_, v)| v)
    }

    /// Blocks of the values of `instruction`, in value order.
    pub fn of_instruction(&self, instruction: InstrId) -> impl Iterator<Item = Block> + '_ {
        self.blocks
            .iter()
            .zip(&self.instructions)
            .filter(move |(_, &i)| i == instruction)
            .map(|(b, _)| *b)
    }

    /// The kind of `value`'s block, if it has one here.
    pub fn kind(&self, value: u32) -> Option<ValueKind> {
        self.position(value).map(|i| self.kinds[i])
    }

    /// The first value (in value order) whose name is `name`; a linear search.
    pub fn find_by_name(&self, module: &Module, name: &str) -> Option<u32> {
        self.blocks.iter().map(|b| b.value).find(|&v| {
            module
                .values
                .get(v as usize)
                .is_some_and(|value| module.value_name(value) == name)
        })
    }
}
