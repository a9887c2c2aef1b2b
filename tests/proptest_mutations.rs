//! Property test of the parser on mutated real dumps: byte flips, deletions, insertions of
//! random bytes and of the format's own tokens. Reading must never panic, the warnings
//! stay bounded by the number of lines, and every module returned is structurally sound
//! (values inside their allocations, live ranges inside the schedule, or a warning).
//!
//! `PROPTEST_CASES` raises the case count (default 256; modules over 60 KB only in an
//! optimised build).

mod common;

use common::*;
use proptest::prelude::*;
use proptest::sample::Index;
use std::sync::OnceLock;

const TOKENS: &[&str] = &[
    "<",
    ">",
    "{",
    "}",
    "{}",
    "{0,1}",
    ":",
    "-",
    ",",
    "(",
    ")",
    "|",
    "@",
    "0",
    "7",
    "-1",
    "99999999999999999999",
    "18446744073709551615",
    "4294967295",
    "4294967296",
    "allocation ",
    "allocation 0: size 99999999999999:\n",
    "value: ",
    " value: <1 x @0> (size=4,offset=0): f32[]\n",
    " value: <5 y{0} (phi) @3> (size=18446744073709551615,offset=18446744073709551615): f32[]\n",
    "  value: <1 x @0> (color=1)\n",
    " reused by buffers of a different color:\n",
    "\n",
    "\r\n",
    "\n\n",
    " (phi)",
    "HloLiveRange (max 3):\n",
    "HloLiveRange (max 4294967295):\n",
    "  InstructionSequence:\n",
    "  BufferLiveRange:\n",
    "    x{}:0-4294967295\n",
    "    7:x\n",
    "  Live ranges at 99 (peak):\n",
    "  Peak memory could not be determined due to unbounded dynamic shape.\n",
    "  Stack trace breakdown for peak usage: 1 234 bytes\n",
    "      ├── a (1.0%, total: 1 bytes, current: 1 bytes, remaining: 0 bytes)\n",
    "*** Begin x.buffer-assignment.txt ***\n",
    "\n*** End x.buffer-assignment.txt ***\n",
    "Total bytes used: ",
    "Total bytes used: 1 (1B)\n",
    "Used values:\n",
    "BufferAssignment:\n",
    " positions:\n",
    " uses:\n",
    "  (none)\n",
    " uses are not initialized yet.\n",
    " from instruction: ",
    "Memory Space: ",
    "Memory Space: vmem (color=1)\n",
    "Total bytes: 5 (5B)\n",
    "HloLiveRange not available (finalized or constructed from proto)",
    "    ",
    "\0",
    "\u{feff}",
    "ü",
    "\u{2502}",
    "\u{00d7}",
    "\x1f\u{8b}",
];

#[derive(Clone, Debug)]
enum Mutation {
    Flip(Index, u8),
    Delete(Index, usize),
    InsertBytes(Index, Vec<u8>),
    InsertToken(Index, Index),
    /// Copies a range of the file to another place (repeats whole structures).
    Copy(Index, usize, Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), 0u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<Index>(), 1usize..64).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<Index>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(i, v)| Mutation::InsertBytes(i, v)),
        (any::<Index>(), any::<Index>()).prop_map(|(i, t)| Mutation::InsertToken(i, t)),
        (any::<Index>(), 1usize..400, any::<Index>()).prop_map(|(i, n, j)| Mutation::Copy(i, n, j)),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let len = bytes.len();
    let at = |i: &Index| if len == 0 { 0 } else { i.index(len + 1) };
    match m {
        Mutation::Flip(i, bit) => {
            if len > 0 {
                let p = i.index(len);
                bytes[p] ^= 1 << bit;
            }
        }
        Mutation::Delete(i, n) => {
            let p = at(i).min(len);
            let e = (p + n).min(len);
            bytes.drain(p..e);
        }
        Mutation::InsertBytes(i, v) => {
            let p = at(i);
            bytes.splice(p..p, v.iter().copied());
        }
        Mutation::InsertToken(i, t) => {
            let p = at(i);
            let tok = TOKENS[t.index(TOKENS.len())].as_bytes();
            bytes.splice(p..p, tok.iter().copied());
        }
        Mutation::Copy(i, n, j) => {
            if len > 0 {
                let s = i.index(len);
                let e = (s + n).min(len);
                let piece = bytes[s..e].to_vec();
                let p = j.index(len + 1);
                bytes.splice(p..p, piece);
            }
        }
    }
}

fn pool() -> &'static Vec<ModuleFiles> {
    static POOL: OnceLock<Vec<ModuleFiles>> = OnceLock::new();
    POOL.get_or_init(|| {
        let limit = if cfg!(debug_assertions) {
            60_000
        } else {
            usize::MAX
        };
        fixture_modules()
            .into_iter()
            .filter(|m| m.files.iter().map(|f| f.1.len()).sum::<usize>() <= limit)
            .collect()
    })
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

fn check(m: &ModuleFiles, file: usize, bytes: &[u8]) -> Result<(), TestCaseError> {
    let mut files = m.files.clone();
    files[file].1 = bytes.to_vec();
    let inputs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let load = load_both_ways(&inputs, &m.label);
    let lines: usize = files
        .iter()
        .map(|(_, b)| b.iter().filter(|&&c| c == b'\n').count() + 1)
        .sum();
    let warnings: usize = load.modules.iter().map(|m| m.warnings.len()).sum();
    prop_assert!(
        warnings <= lines + 10 * files.len(),
        "{warnings} warnings for {lines} lines"
    );
    for md in &load.modules {
        for w in &md.warnings {
            prop_assert!(!w.message.is_empty());
            prop_assert!(
                w.line <= lines as u64 + 1,
                "warning at line {} of {lines}: {w}",
                w.line
            );
        }
        check_sane_and_analyze(md, &m.label);
    }
    for e in &load.errors {
        prop_assert!(!e.is_empty());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn mutated_dumps_never_panic(
        module in any::<Index>(),
        file in any::<Index>(),
        mutations in prop::collection::vec(mutation(), 1..12),
    ) {
        let m = &pool()[module.index(pool().len())];
        let fi = file.index(m.files.len());
        let mut bytes = m.files[fi].1.clone();
        for mu in &mutations {
            apply(&mut bytes, mu);
        }
        check(m, fi, &bytes)?;
    }

    #[test]
    fn mutated_lines_of_one_structure_never_panic(
        module in any::<Index>(),
        line in any::<Index>(),
        token in any::<Index>(),
        at in any::<Index>(),
    ) {
        // One token inserted into one line: the damage most likely to reach deep into the
        // grammar of that line.
        let m = &pool()[module.index(pool().len())];
        let fi = m.files.iter().position(|(n, _)| !ModuleFiles::is_report(n)).unwrap();
        let bytes = &m.files[fi].1;
        let starts: Vec<usize> = std::iter::once(0)
            .chain(bytes.iter().enumerate().filter(|(_, &b)| b == b'\n').map(|(i, _)| i + 1))
            .collect();
        let li = line.index(starts.len() - 1);
        let (s, e) = (starts[li], starts[li + 1] - 1);
        let p = s + at.index(e - s + 1);
        let mut new = bytes.clone();
        let tok = TOKENS[token.index(TOKENS.len())].as_bytes();
        new.splice(p..p, tok.iter().copied());
        check(m, fi, &new)?;
    }
}
