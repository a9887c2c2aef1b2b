//! The blocks of one memory space, worked out once: what drawing, hit-testing and marking
//! scan. A view that draws the same space many times (the browser, on every pan and zoom)
//! keeps one [`SpaceIndex`] instead of looking every value up again.

use crate::analysis::{Analysis, Block, Space};
use crate::model::{InstrId, Module, ValueKind};

use super::geometry::{Mapping, PxRect, Viewport};

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
}

impl SpaceIndex {
    pub fn new(module: &Module, analysis: &Analysis, space: &Space) -> SpaceIndex {
        let mut index = SpaceIndex {
            color: space.color,
            full: Viewport::full(analysis, space),
            ..SpaceIndex::default()
        };
        for b in space.blocks(module) {
            let Some(v) = module.values.get(b.value as usize) else {
                continue;
            };
            if b.x1 > b.x0 && b.y1 > b.y0 {
                index.blocks.push(b);
                index.kinds.push(module.kind(v));
                index.instructions.push(v.instruction);
            }
        }
        index
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
        self.blocks
            .iter()
            .zip(&self.kinds)
            .zip(&self.instructions)
            .filter(move |((b, _), _)| f64::from(b.x0) < hi && f64::from(b.x1) > lo)
            .map(|((b, k), i)| (*b, *k, *i))
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
            let Some(r) = map.block_px(&b) else { continue };
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
