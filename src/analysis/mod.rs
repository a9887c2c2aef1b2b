//! Analysis: from a [`Module`] to what the views show, per memory space: the layout of its
//! allocations on one offset axis, every value's block, the occupied-bytes curve, its peak
//! and the values live there.
//!
//! Owns: every number derived from the model. It reads the model and never changes it.
//!
//! * A value's memory space is its colour (`@N`), else its allocation's colour.
//! * Within a memory space, the allocations of that colour (and any other allocation that
//!   holds a value of that colour) are laid one after another in index order; a value's
//!   block is `[base(allocation) + offset, + size)` × `[start, end + 1)`.
//! * Occupied bytes at step `t` is the length of the union of the byte ranges of the values
//!   live at `t` (`start <= t <= end`): aliases and operand→user hand-offs count once.

mod curve;
mod kind;
pub mod loops;
pub use kind::{value_kind, ValueKind};

use crate::model::{Module, Value};
use curve::Sweep;
use std::borrow::Borrow;

/// Everything derived from one module.
#[derive(Clone, Debug, Default)]
pub struct Analysis {
    /// Steps on the time axis: `0 .. steps`. XLA's `max` is the last one (the virtual
    /// end of the program, where outputs and parameters end).
    pub steps: u32,
    /// Sorted by colour.
    pub spaces: Vec<Space>,
}

/// One memory space (one colour).
#[derive(Clone, Debug, Default)]
pub struct Space {
    pub color: u32,
    /// Sum of the sizes of the allocations of this colour.
    pub allocated_bytes: u64,
    /// Number of values of this colour.
    pub value_count: u32,
    /// Allocations on this space's offset axis, in index order.
    pub layout: Vec<Slot>,
    /// Base offset of each allocation of the module on this axis (`u64::MAX`: not here).
    bases: Vec<u64>,
    /// End of the last slot: the height of the diagram.
    pub height: u64,
    /// Values of this colour that have a live range (drawn on the time axis).
    pub timed: Vec<u32>,
    /// Values of this colour without a live range (thread-local ones): listed apart.
    pub timeless: Vec<u32>,
    /// Occupied bytes at each step, `steps` long.
    pub curve: Vec<u64>,
    pub peak_bytes: u64,
    /// First step where `peak_bytes` is reached; `None` when the curve is 0 throughout.
    pub peak_time: Option<u32>,
    /// Values of this space live at `peak_time`.
    pub live_at_peak: Vec<u32>,
}

/// An allocation's place on a memory space's offset axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Position in [`Module::allocations`].
    pub allocation: u32,
    pub base: u64,
}

/// A value's rectangle: steps `x0 .. x1`, bytes `y0 .. y1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub value: u32,
    pub x0: u32,
    pub x1: u32,
    pub y0: u64,
    pub y1: u64,
}

impl Space {
    /// Base offset of an allocation on this axis, if it is laid out here.
    pub fn base(&self, allocation: u32) -> Option<u64> {
        self.bases
            .get(allocation as usize)
            .copied()
            .filter(|&b| b != u64::MAX)
    }

    /// The block of a value of this space (`None` without a live range).
    pub fn block(&self, module: &Module, value: u32) -> Option<Block> {
        let v = &module.values[value as usize];
        let live = v.live?;
        let base = self.base(v.allocation)?;
        Some(Block {
            value,
            x0: live.start,
            x1: live.end.saturating_add(1),
            y0: base.saturating_add(v.offset),
            y1: base.saturating_add(v.offset).saturating_add(v.size),
        })
    }

    /// The values of this space live at step `t` (closed live ranges, as XLA's), in
    /// [`Space::timed`] order.
    pub fn live_at<'a>(&'a self, module: &'a Module, t: u32) -> impl Iterator<Item = u32> + 'a {
        self.timed.iter().copied().filter(move |&v| {
            (module.values.get(v as usize)).is_some_and(|x| x.live.is_some_and(|r| r.contains(t)))
        })
    }

    /// Blocks of all timed values.
    pub fn blocks<'a>(&'a self, module: &'a Module) -> impl Iterator<Item = Block> + 'a {
        self.timed
            .iter()
            .filter_map(move |&v| self.block(module, v))
    }
}

impl Analysis {
    pub fn space(&self, color: u32) -> Option<&Space> {
        self.spaces.iter().find(|s| s.color == color)
    }
}

/// Values live at step `t`, in every memory space (as XLA's peak list counts them).
pub fn live_at(module: &Module, t: u32) -> Vec<u32> {
    (0..module.values.len() as u32)
        .filter(|&i| {
            module.values[i as usize]
                .live
                .is_some_and(|r| r.contains(t))
        })
        .collect()
}

/// The occupied-bytes curve of any set of blocks over `steps` steps: at each step the length
/// of the union of the byte ranges of the blocks covering it (the sweep that makes each
/// space's [`Space::curve`], for blocks other than the dump's own: the what-if's edited ones).
pub fn occupied_curve(blocks: Vec<Block>, steps: u32) -> Vec<u64> {
    let mut sweep = Sweep::from_blocks(blocks, steps);
    while !sweep.run(usize::MAX) {}
    sweep.curve
}

/// Runs the whole analysis.
pub fn analyze(module: &Module) -> Analysis {
    Analyzer::new(module).finish()
}

/// The analysis of a module a piece at a time ([`Analyzer::step`]), so that a page can
/// answer input between pieces while a big module is analysed. Same result as
/// [`analyze`], which runs it to the end. `M` is `&Module`, or `Module` itself for a caller
/// that keeps the analyzer beside nothing else ([`crate::pipeline`]).
pub struct Analyzer<M: Borrow<Module>> {
    module: M,
    steps: u32,
    /// Memory spaces still to analyse, in reverse order.
    colors: Vec<u32>,
    spaces: Vec<Space>,
    /// The space being analysed and the sweep of its curve (once it is set up).
    current: Option<(Space, Option<Sweep>)>,
}

impl<M: Borrow<Module>> Analyzer<M> {
    pub fn new(owner: M) -> Analyzer<M> {
        let module = owner.borrow();
        // A handful of colours among millions of values: collected without sorting them all.
        let mut colors: Vec<u32> = Vec::new();
        let all = module.allocations.iter().map(|a| a.color);
        for c in all.chain(module.values.iter().map(|v| module.value_color(v))) {
            if colors.last() != Some(&c) && !colors.contains(&c) {
                colors.push(c);
            }
        }
        colors.sort_unstable_by(|a, b| b.cmp(a));
        let steps = time_steps(module);
        Analyzer {
            module: owner,
            steps,
            colors,
            spaces: Vec::new(),
            current: None,
        }
    }

    /// Does a piece of about `work` units (a block or a step each; a space's layout and the
    /// gathering of its blocks is one piece, whatever their size). Whether the analysis is
    /// complete.
    pub fn step(&mut self, work: usize) -> bool {
        let work = work.max(1);
        let module = self.module.borrow();
        match self.current.take() {
            None => {
                let Some(color) = self.colors.pop() else {
                    return true;
                };
                self.current = Some((space_layout(module, color), None));
            }
            Some((space, None)) => {
                let sweep = Sweep::from_blocks(space.blocks(module).collect(), self.steps);
                self.current = Some((space, Some(sweep)));
            }
            Some((mut space, Some(mut sweep))) => {
                if sweep.run(work) {
                    space.curve = std::mem::take(&mut sweep.curve);
                    find_peak(&mut space, module);
                    self.spaces.push(space);
                } else {
                    self.current = Some((space, Some(sweep)));
                }
            }
        }
        self.current.is_none() && self.colors.is_empty()
    }

    /// Runs what is left and returns the analysis.
    pub fn finish(self) -> Analysis {
        self.finish_with_module().1
    }

    /// [`Analyzer::finish`], handing back the module too.
    pub fn finish_with_module(mut self) -> (M, Analysis) {
        while !self.step(usize::MAX) {}
        let analysis = Analysis {
            steps: self.steps,
            spaces: self.spaces,
        };
        (self.module, analysis)
    }
}

/// `max + 1` steps: one per instruction of the schedule plus XLA's virtual end (`max`),
/// where outputs and parameters end; or one past the latest range end if that is later or
/// there is no schedule. Capped in proportion to what was read (sequence lines and values),
/// so a corrupt `max` or range end cannot make the axis, and the curve, huge.
fn time_steps(module: &Module) -> u32 {
    let latest = module
        .values
        .iter()
        .filter_map(|v| v.live)
        .map(|r| u64::from(r.end) + 1)
        .max()
        .unwrap_or(0);
    let (max, sequence) = module
        .schedule
        .as_ref()
        .map_or((0, 0), |s| (u64::from(s.max) + 1, s.sequence.len() as u64));
    let cap = 2 * (sequence + module.values.len() as u64) + 1024;
    u32::try_from(latest.max(max).min(cap)).unwrap_or(u32::MAX)
}

/// A space's layout and values, without its curve.
fn space_layout(module: &Module, color: u32) -> Space {
    let of_color = |v: &Value| module.value_color(v) == color;
    let mut space = Space {
        color,
        bases: vec![u64::MAX; module.allocations.len()],
        ..Space::default()
    };

    for (i, a) in module.allocations.iter().enumerate() {
        let own = a.color == color;
        if own {
            space.allocated_bytes = space.allocated_bytes.saturating_add(a.size);
        }
        let holds = module.values[a.values.start as usize..a.values.end as usize]
            .iter()
            .any(of_color);
        if own || holds {
            space.layout.push(Slot {
                allocation: i as u32,
                base: space.height,
            });
            space.bases[i] = space.height;
            space.height = space.height.saturating_add(a.size);
        }
    }
    for (i, v) in module.values.iter().enumerate() {
        if of_color(v) {
            space.value_count += 1;
            if v.live.is_some() {
                space.timed.push(i as u32);
            } else {
                space.timeless.push(i as u32);
            }
        }
    }
    space
}

/// The peak of a space's curve, its first step and the values live there.
fn find_peak(space: &mut Space, module: &Module) {
    if let Some((t, &bytes)) = space
        .curve
        .iter()
        .enumerate()
        .rev()
        .max_by_key(|&(_, b)| *b)
        .filter(|&(_, b)| *b > 0)
    {
        // `rev` + `max_by_key` (last maximum) yields the first step reaching the peak.
        let step = t as u32;
        space.peak_bytes = bytes;
        space.peak_time = Some(step);
        space.live_at_peak = space.live_at(module, step).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::{analyze, Analyzer};

    #[test]
    fn analysis_in_small_pieces_is_the_analysis_in_one() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        for file in [
            "cpu/jax0.6.2/cpu_scan_layers.buffer-assignment.txt",
            "cpu/jax0.7.2/cpu_mlp_train.buffer-assignment.txt",
        ] {
            let bytes = std::fs::read(dir.join(file)).unwrap();
            let load = crate::load_files([(file, bytes.as_slice())]);
            let module = &load.modules[0];
            let whole = analyze(module);
            for work in [1, 7, 1000] {
                let mut a = Analyzer::new(module);
                let mut pieces = 1;
                while !a.step(work) {
                    pieces += 1;
                }
                assert!(
                    work > 1 || pieces > module.values.len(),
                    "{file}: {pieces} pieces"
                );
                let stepped = a.finish();
                assert_eq!(
                    format!("{stepped:?}"),
                    format!("{whole:?}"),
                    "{file}, {work}"
                );
            }
        }
    }
}
