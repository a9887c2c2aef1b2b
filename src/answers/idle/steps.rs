//! Instruction name → its first step in the flattened schedule, for placing uses.
//!
//! Owns the index and its one rule: a name listed twice in the schedule is at its first
//! step. XLA's names end in a numeric suffix (`multiply.1059576`), and the schedule lists
//! them mostly in the order they were made, so suffixes come in rising runs: a name is
//! found through a dense list by suffix, each suffix's steps chained, which the schedule
//! fills nearly in order. Hashing every name into one table instead touched a random place
//! of it per name (the 1 GB generated dump's 1.78 million: 151 of the summary's samples at
//! 1,000 Hz). Names without a suffix, and suffixes too sparse for a dense list, go through
//! a hash table.

use hashbrown::HashTable;

use crate::model::{Module, Str, TableHash};
use crate::parse::numbered_name;

/// No step.
const NONE: u32 = u32::MAX;

/// Suffixes are listed densely up to this many per step of the schedule (and 4,096 more);
/// larger ones go to the table, so a few huge suffixes cannot make the list huge.
const DENSE_PER_STEP: usize = 4;

/// Steps chained per suffix (XLA shares a suffix among at most a handful of names); the
/// steps after go to the table, so that no lookup walks a long chain.
const CHAIN: u8 = 16;

#[derive(Default)]
pub(super) struct StepsByName {
    /// By suffix: the last step seen whose instruction's name ends in `.N`.
    head: Vec<u32>,
    /// By step: the step seen before it with the same suffix (its chain; `NONE`: none).
    next: Vec<u32>,
    /// By suffix: the steps in its chain (at most [`CHAIN`]).
    chained: Vec<u8>,
    /// The other names: `(hash of the name, the name in the arena, first step)`.
    other: HashTable<(TableHash, Str, u32)>,
}

impl StepsByName {
    /// The index of `module`'s schedule (empty without one).
    pub fn new(module: &Module) -> StepsByName {
        let mut index = StepsByName::default();
        let Some(s) = module.schedule.as_ref() else {
            return index;
        };
        let name = |id: u32| module.instructions.get(id as usize).map(|i| module.str(i.name));
        // Each step's suffix (`NONE`: none), read once.
        let suffix = |n: &str| numbered_name(n.as_bytes()).map_or(NONE, |(_, n)| n);
        let suffixes: Vec<u32> = (s.sequence.iter())
            .map(|&id| name(id).map_or(NONE, suffix))
            .collect();
        let dense = DENSE_PER_STEP * s.sequence.len() + 4096;
        let longest = (suffixes.iter().map(|&n| n as usize)).filter(|&n| n < dense).max();
        index.head = vec![NONE; longest.map_or(0, |n| n + 1)];
        index.chained = vec![0; index.head.len()];
        index.next = vec![NONE; s.sequence.len()];
        for (step, (&id, n)) in s.sequence.iter().zip(suffixes).enumerate() {
            let Some(i) = module.instructions.get(id as usize) else {
                continue;
            };
            let n = n as usize;
            if index.chained.get(n).is_some_and(|&c| c < CHAIN) {
                index.next[step] = index.head[n];
                index.head[n] = step as u32;
                index.chained[n] += 1;
                continue;
            }
            let name = module.str(i.name);
            let hash = TableHash::of(name.as_bytes());
            // One probe: the first step of a name listed twice stays.
            index
                .other
                .entry(hash.spread(), |e| e.0 == hash && module.str(e.1) == name, |e| e.0.spread())
                .or_insert((hash, i.name, step as u32));
        }
        index
    }

    /// The first step of the instruction named `name` (`module` is the one indexed).
    pub fn step_of(&self, module: &Module, name: &str) -> Option<u32> {
        let n = numbered_name(name.as_bytes()).map(|(_, n)| n as usize);
        if let Some(&last) = n.and_then(|n| self.head.get(n)) {
            let sequence = module.schedule.as_ref().map_or(&[][..], |s| &s.sequence[..]);
            let named = |step: u32| {
                let id = sequence.get(step as usize)?;
                module.instructions.get(*id as usize).map(|i| module.str(i.name))
            };
            // The chain runs from the last step to the first: the first that matches wins.
            // Steps past a full chain are in the table, all after the chain's.
            let (mut at, mut first) = (last, None);
            while at != NONE {
                if named(at) == Some(name) {
                    first = Some(at);
                }
                at = self.next.get(at as usize).copied().unwrap_or(NONE);
            }
            if first.is_some() || n.and_then(|n| self.chained.get(n)).is_some_and(|&c| c < CHAIN) {
                return first;
            }
        }
        let hash = TableHash::of(name.as_bytes());
        (self.other)
            .find(hash.spread(), |e| e.0 == hash && module.str(e.1) == name)
            .map(|e| e.2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Instruction, Schedule};
    use hashbrown::HashMap;

    /// A module whose schedule lists `names` (a name listed again is the same instruction).
    fn module(names: &[String]) -> Module {
        let mut m = Module::default();
        let mut ids: HashMap<&str, u32> = HashMap::new();
        let mut sequence = Vec::new();
        for n in names {
            let id = *ids.entry(n).or_insert_with(|| {
                let name = m.strings.intern(n);
                m.instructions.push(Instruction { name, ..Instruction::default() });
                m.instructions.len() as u32 - 1
            });
            sequence.push(id);
        }
        let max = sequence.len() as u32;
        m.schedule = Some(Schedule { max, sequence, ..Schedule::default() });
        m
    }

    /// Every name's first step, one name at a time, as the index must give it.
    fn first_steps(m: &Module) -> HashMap<String, u32> {
        let mut first = HashMap::new();
        for (step, &id) in m.schedule.as_ref().unwrap().sequence.iter().enumerate() {
            let name = m.str(m.instructions[id as usize].name).to_string();
            first.entry(name).or_insert(step as u32);
        }
        first
    }

    fn check(m: &Module, absent: &[&str]) {
        let index = StepsByName::new(m);
        let first = first_steps(m);
        for (name, &step) in &first {
            assert_eq!(index.step_of(m, name), Some(step), "{name}");
        }
        for name in absent {
            assert_eq!(index.step_of(m, name), None, "{name}");
        }
    }

    /// Names with and without a suffix, a suffix shared by more names than a chain holds,
    /// a suffix too large for the dense list, a leading zero, names listed twice: each at
    /// its first step; names not listed at none.
    #[test]
    fn every_name_at_its_first_step() {
        let mut names: Vec<String> = (0..40).map(|k| format!("a{k}.7")).collect();
        names.extend((0..300).map(|i| format!("add.{i}")));
        names.extend(["Arg_0", "x.99999999", "add.05", "tuple.", "a3.7", "add.12", "Arg_0"].map(String::from));
        names.extend((0..40).rev().map(|k| format!("a{k}.7")));
        let m = module(&names);
        check(&m, &["nope.3", "a50.7", "zzz", "add.300", "x.99999998", "add.005"]);
        assert!(StepsByName::new(&m).chained[7] == CHAIN);
    }

    /// The same on every scheduled module of the CPU fixtures.
    #[test]
    fn fixtures() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cpu/jax0.6.2");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if !path.to_string_lossy().ends_with("buffer-assignment.txt") {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let load = crate::load_files([(path.to_str().unwrap(), bytes.as_slice())]);
            for m in load.modules.iter().filter(|m| m.schedule.is_some()) {
                check(m, &["not.an.instruction.1"]);
                checked += 1;
            }
        }
        assert!(checked >= 4, "{checked} modules checked");
    }
}
