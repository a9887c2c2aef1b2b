//! The what-if's ticks as the page keeps them: values rematerialised or offloaded, and
//! loops' stacked outputs rematerialised, one by one; and the rules of ticking a group at
//! once (an icicle frame, a category, one loop, every loop).
//!
//! Owns: [`Ticks`] (what is ticked, and its [`Edits`]), which values of a group a tick acts
//! on ([`actionable`]), a group's tick state ([`TickState`]) and the ticks of a plan
//! ([`Ticks::from_plan`]). A group's tick is no state of its own: ticking it ticks each of
//! its members, and it reads as ticked when all of them are.

use std::collections::BTreeSet;

use hashbrown::HashSet;

use super::fit::PlanStep;
use super::{offload_gap, remat_gap, Edits, StackedOutput};
use crate::answers::idle::{remedy, Remedy, ScheduleIndex};
use crate::model::Module;

/// What a value's tick asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tick {
    Remat,
    Offload,
}

/// A group's tick box: none of its members ticked, some, or all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickState {
    None,
    Some,
    All,
}

impl TickState {
    /// Of `members`, `ticked` of them ticked.
    fn of(ticked: usize, members: usize) -> TickState {
        match ticked {
            0 => TickState::None,
            n if n >= members => TickState::All,
            _ => TickState::Some,
        }
    }
}

/// What is ticked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ticks {
    /// Values (indices into [`Module::values`]) rematerialised.
    pub remat: BTreeSet<u32>,
    /// Values offloaded (a value is in one of the two at most).
    pub offload: BTreeSet<u32>,
    /// Loops' stacked outputs rematerialised, by [`StackedOutput::name`].
    pub loops: BTreeSet<String>,
}

impl Ticks {
    pub fn is_empty(&self) -> bool {
        self.remat.is_empty() && self.offload.is_empty() && self.loops.is_empty()
    }

    /// Ticks (`on`) or unticks `values` for `tick`; a value ticked for one is unticked for
    /// the other.
    pub fn tick_values(&mut self, values: &[u32], tick: Tick, on: bool) {
        let (this, other) = match tick {
            Tick::Remat => (&mut self.remat, &mut self.offload),
            Tick::Offload => (&mut self.offload, &mut self.remat),
        };
        for &v in values {
            if on {
                this.insert(v);
                other.remove(&v);
            } else {
                this.remove(&v);
            }
        }
    }

    /// How many of `values` are ticked for `tick`.
    pub fn state(&self, values: &[u32], tick: Tick) -> TickState {
        let set = match tick {
            Tick::Remat => &self.remat,
            Tick::Offload => &self.offload,
        };
        TickState::of(
            values.iter().filter(|v| set.contains(v)).count(),
            values.len(),
        )
    }

    /// Ticks or unticks the stacked outputs named `names`.
    pub fn tick_loops<'a>(&mut self, names: impl IntoIterator<Item = &'a str>, on: bool) {
        for n in names {
            if on {
                self.loops.insert(n.to_string());
            } else {
                self.loops.remove(n);
            }
        }
    }

    /// How many of the stacked outputs named `names` are ticked.
    pub fn loops_state<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> TickState {
        let (mut n, mut ticked) = (0, 0);
        for name in names {
            n += 1;
            ticked += usize::from(self.loops.contains(name));
        }
        TickState::of(ticked, n)
    }

    /// The edits of the ticks (`stacked`: the module's stacked outputs).
    pub fn edits(&self, stacked: &[StackedOutput]) -> Edits {
        Edits {
            remat: self.remat.iter().copied().collect(),
            offload: self.offload.iter().copied().collect(),
            loops: stacked
                .iter()
                .filter(|s| self.loops.contains(&s.name))
                .cloned()
                .collect(),
            ..Edits::default()
        }
    }

    /// The ticks of a plan ([`super::fit`]): each of its edits ([`super::fit::edits_of`]).
    pub fn from_plan(plan: &[PlanStep], stacked: &[StackedOutput]) -> Ticks {
        let e = super::fit::edits_of(plan, stacked);
        Ticks {
            remat: e.remat.into_iter().collect(),
            offload: e.offload.into_iter().collect(),
            loops: e.loops.into_iter().map(|s| s.name).collect(),
        }
    }
}

/// The values of a group (an icicle frame's or a category's, `values`) that a `tick` of the
/// group acts on, in memory space `color`: those of the space that the tick would free
/// somewhere (a stretch long enough: [`remat_gap`], [`offload_gap`]); for a remat, only
/// temporaries ([`Remedy::RematOrOffload`]). Loops' carries are left out, as the idle
/// stretches leave them out, and so are the values sharing a stacked output's buffer
/// (`stacked`), which the loop's own tick takes.
pub fn actionable(
    module: &Module,
    color: u32,
    index: &ScheduleIndex,
    stacked: &[StackedOutput],
    values: &[u32],
    tick: Tick,
) -> Vec<u32> {
    let chains: HashSet<u32> = (stacked.iter())
        .filter(|s| s.color == color)
        .flat_map(|s| s.chain.iter().copied())
        .collect();
    let gap = match tick {
        Tick::Remat => remat_gap,
        Tick::Offload => offload_gap,
    };
    let mut out: Vec<u32> = (values.iter().copied())
        .filter(|&v| {
            let Some(x) = module.values.get(v as usize) else {
                return false;
            };
            module.value_color(x) == color
                && !index.is_carry(v)
                && !chains.contains(&v)
                && (tick == Tick::Offload || remedy(module, x) == Remedy::RematOrOffload)
                && index
                    .stretches_of(module, v)
                    .iter()
                    .any(|s| gap(s).is_some())
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The names of the stacked outputs of the forward loop `while_name` in memory space
/// `color` (one loop's tick).
pub fn loop_outputs<'a>(
    stacked: &'a [StackedOutput],
    while_name: &'a str,
    color: u32,
) -> impl Iterator<Item = &'a str> {
    (stacked.iter())
        .filter(move |s| s.color == color && s.forward_while == while_name)
        .map(|s| s.name.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_ticked_one_way() {
        let mut t = Ticks::default();
        t.tick_values(&[1, 2, 3], Tick::Remat, true);
        assert_eq!(t.state(&[1, 2, 3], Tick::Remat), TickState::All);
        t.tick_values(&[2], Tick::Offload, true);
        assert_eq!(t.state(&[1, 2, 3], Tick::Remat), TickState::Some);
        assert_eq!(t.state(&[2], Tick::Offload), TickState::All);
        assert_eq!(t.remat.iter().copied().collect::<Vec<_>>(), [1, 3]);
        t.tick_values(&[1, 2, 3], Tick::Offload, false);
        assert_eq!(t.state(&[1, 2, 3], Tick::Offload), TickState::None);
        assert_eq!(t.remat.len(), 2);
        t.tick_loops(["while.1{2}", "while.1{3}"], true);
        assert_eq!(t.loops_state(["while.1{2}", "while.9{0}"]), TickState::Some);
        t.tick_loops(["while.1{2}"], false);
        assert_eq!(t.loops_state(["while.1{2}"]), TickState::None);
        assert!(!t.is_empty());
        // An empty group reads as unticked.
        assert_eq!(t.state(&[], Tick::Remat), TickState::None);
    }
}
