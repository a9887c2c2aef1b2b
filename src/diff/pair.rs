//! Pairing the modules of two loads: by name, by hand, or both.
//!
//! Rules, in order (each module is paired at most once):
//! 1. **By hand**: the pairs the caller gives ([`pair_modules`]).
//! 2. **Exact name**: the same module name on both sides.
//! 3. **Stripped name**: the same [`stripped_name`], which drops what changes from one
//!    compilation to the next in XLA's file names: a leading timestamp, the `module_NNNN.`
//!    number and a `.cl_N` part (`module_0012.jit_train_step.cl_3.cpu_after_optimizations`
//!    → `jit_train_step.cpu_after_optimizations`).
//! 4. **Only module**: when each load holds exactly one module and neither rule paired them,
//!    they are paired whatever their names (`bufscope diff old.txt new.txt`).
//!
//! When several modules share a name (or a stripped name) on a side, they are paired in the
//! order of the loads. A module left without a partner is listed as unpaired.

use serde::Serialize;

/// How two modules were paired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairRule {
    ByHand,
    ExactName,
    StrippedName,
    OnlyModule,
}

/// Positions of two paired modules in their loads, and the rule that paired them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ModulePair {
    pub base: usize,
    pub new: usize,
    pub rule: PairRule,
}

/// The pairing of two loads' modules. Pairs come in the base load's order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Pairing {
    pub pairs: Vec<ModulePair>,
    /// Base modules without a partner, ascending.
    pub unpaired_base: Vec<usize>,
    /// New modules without a partner, ascending.
    pub unpaired_new: Vec<usize>,
}

/// A module name without what differs between two compilations of the same program: a
/// leading all-digit timestamp (`1700000000123.`), the `module_NNNN.` number and any `.cl_N`
/// part. A name with nothing to strip is returned as it is.
pub fn stripped_name(name: &str) -> String {
    crate::model::without_compilation_parts(name)
}

/// Pairs by name alone (rules 2–4).
pub fn pair_by_name<S: AsRef<str>>(base: &[S], new: &[S]) -> Pairing {
    // No hand pairs: nothing to reject.
    pair_modules(base, new, &[]).unwrap_or_default()
}

/// Pairs exactly the `(base, new)` positions given and leaves every other module unpaired.
pub fn pair_by_hand(
    base_count: usize,
    new_count: usize,
    pairs: &[(usize, usize)],
) -> Result<Pairing, String> {
    let mut pairing = Pairing::default();
    let (mut base_used, mut new_used) = (vec![false; base_count], vec![false; new_count]);
    take_hand_pairs(pairs, &mut base_used, &mut new_used, &mut pairing)?;
    finish(pairing, &base_used, &new_used)
}

/// The hand pairs first, then rules 2–4 for the modules they leave. An error names a hand
/// pair out of range or a module paired twice.
pub fn pair_modules<S: AsRef<str>>(
    base: &[S],
    new: &[S],
    by_hand: &[(usize, usize)],
) -> Result<Pairing, String> {
    let mut pairing = Pairing::default();
    let (mut base_used, mut new_used) = (vec![false; base.len()], vec![false; new.len()]);
    take_hand_pairs(by_hand, &mut base_used, &mut new_used, &mut pairing)?;
    let exact = |s: &str| s.to_string();
    for (key, rule) in [
        (&exact as &dyn Fn(&str) -> String, PairRule::ExactName),
        (&stripped_name, PairRule::StrippedName),
    ] {
        let new_keys: Vec<String> = new.iter().map(|n| key(n.as_ref())).collect();
        for (b, name) in base.iter().enumerate() {
            if base_used[b] {
                continue;
            }
            let k = key(name.as_ref());
            if let Some(n) = (0..new.len()).find(|&n| !new_used[n] && new_keys[n] == k) {
                base_used[b] = true;
                new_used[n] = true;
                pairing.pairs.push(ModulePair {
                    base: b,
                    new: n,
                    rule,
                });
            }
        }
    }
    if base.len() == 1 && new.len() == 1 && !base_used[0] && !new_used[0] {
        base_used[0] = true;
        new_used[0] = true;
        pairing.pairs.push(ModulePair {
            base: 0,
            new: 0,
            rule: PairRule::OnlyModule,
        });
    }
    finish(pairing, &base_used, &new_used)
}

fn take_hand_pairs(
    pairs: &[(usize, usize)],
    base_used: &mut [bool],
    new_used: &mut [bool],
    pairing: &mut Pairing,
) -> Result<(), String> {
    for &(b, n) in pairs {
        let (Some(bu), Some(nu)) = (base_used.get(b), new_used.get(n)) else {
            return Err(format!(
                "no module {b} in the base or {n} in the new load ({} and {} modules)",
                base_used.len(),
                new_used.len()
            ));
        };
        if *bu || *nu {
            return Err(format!("module {b} or {n} is paired twice"));
        }
        base_used[b] = true;
        new_used[n] = true;
        pairing.pairs.push(ModulePair {
            base: b,
            new: n,
            rule: PairRule::ByHand,
        });
    }
    Ok(())
}

fn finish(mut pairing: Pairing, base_used: &[bool], new_used: &[bool]) -> Result<Pairing, String> {
    let unused = |used: &[bool]| (0..used.len()).filter(|&i| !used[i]).collect::<Vec<_>>();
    pairing.unpaired_base = unused(base_used);
    pairing.unpaired_new = unused(new_used);
    pairing.pairs.sort_by_key(|p| (p.base, p.new));
    Ok(pairing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stripping() {
        assert_eq!(
            stripped_name("module_0012.jit_train_step"),
            "jit_train_step"
        );
        assert_eq!(
            stripped_name("1700000000.module_0012.jit_f.cl_42.cpu_after_optimizations"),
            "jit_f.cpu_after_optimizations"
        );
        assert_eq!(stripped_name("cpu_mlp_train"), "cpu_mlp_train");
        assert_eq!(stripped_name("module_x.f"), "module_x.f");
        assert_eq!(stripped_name("f.cl_"), "f.cl_");
        assert_eq!(stripped_name(""), "");
    }

    #[test]
    fn rules_in_order() {
        let base = ["module_0001.jit_a", "module_0002.jit_b", "jit_c", "jit_d"];
        let new = ["module_0007.jit_b", "jit_c", "module_0009.jit_a", "jit_e"];
        let p = pair_by_name(&base, &new);
        let got: Vec<_> = p.pairs.iter().map(|p| (p.base, p.new, p.rule)).collect();
        assert_eq!(
            got,
            [
                (0, 2, PairRule::StrippedName),
                (1, 0, PairRule::StrippedName),
                (2, 1, PairRule::ExactName),
            ]
        );
        assert_eq!(p.unpaired_base, [3]);
        assert_eq!(p.unpaired_new, [3]);
    }

    #[test]
    fn hand_pairs_first_and_checked() {
        let base = ["a", "b"];
        let new = ["b", "a"];
        let p = pair_modules(&base, &new, &[(0, 0)]).unwrap();
        let got: Vec<_> = p.pairs.iter().map(|p| (p.base, p.new, p.rule)).collect();
        assert_eq!(got, [(0, 0, PairRule::ByHand)]);
        assert_eq!((p.unpaired_base, p.unpaired_new), (vec![1], vec![1]));
        assert!(pair_modules(&base, &new, &[(0, 0), (1, 0)]).is_err());
        assert!(pair_by_hand(2, 2, &[(2, 0)]).is_err());
        let only = pair_by_hand(2, 3, &[(1, 2)]).unwrap();
        assert_eq!(only.unpaired_new, [0, 1]);
        let single = pair_by_name(&["x"], &["y"]);
        assert_eq!(single.pairs[0].rule, PairRule::OnlyModule);
        let same_names = pair_by_name(&["f", "f"], &["f"]);
        assert_eq!(same_names.pairs[0].base, 0);
        assert_eq!(same_names.unpaired_base, [1]);
    }
}
