//! Property test of the occupied-bytes curve: on random modules (built as model values, so
//! that cases the parser would refuse are reachable too), the analysis's curve, peak, peak
//! step and values live at the peak are those of the brute-force reference in
//! tests/common/occupied.rs. The modules favour what a sweep gets wrong: aliases (equal or
//! overlapping slices), zero sizes, one-step ranges, offsets near `u64::MAX`, ranges past
//! the end of the schedule, values coloured apart from their allocation.
//!
//! `PROPTEST_CASES` raises the case count (default 512).

mod common;

use bufscope::analysis::analyze;
use bufscope::model::{Allocation, Instruction, LiveRange, Module, Schedule, Value};
use proptest::prelude::*;

/// A value as generated: its allocation (an index, taken modulo the allocations), colour,
/// offset, size and live range.
type Gen = (usize, Option<u32>, u64, u64, Option<(u32, u32)>);

fn huge() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(u64::MAX),
        (u64::MAX - 4096)..=u64::MAX,
        (1u64 << 62)..(1u64 << 63),
    ]
}

/// Offsets and sizes from a few small numbers (so slices alias and abut), any small number,
/// or a huge one.
fn bytes() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => prop::sample::select(vec![0u64, 8, 16, 24, 32, 64]),
        3 => 0u64..100,
        1 => huge(),
    ]
}

fn live() -> impl Strategy<Value = Option<(u32, u32)>> {
    prop_oneof![
        1 => Just(None),
        // One-step ranges.
        3 => (0u32..24).prop_map(|s| Some((s, s))),
        5 => (0u32..24, 0u32..12).prop_map(|(s, n)| Some((s, s + n))),
        // Ending far past the schedule (the axis is capped), or starting past it.
        1 => (0u32..24).prop_map(|s| Some((s, u32::MAX))),
        1 => (30u32..5000).prop_map(|s| Some((s, s + 3))),
    ]
}

fn value() -> impl Strategy<Value = Gen> {
    (
        0usize..8,
        prop_oneof![3 => Just(None), 1 => (0u32..3).prop_map(Some)],
        bytes(),
        bytes(),
        live(),
    )
}

fn allocation() -> impl Strategy<Value = (u64, u32)> {
    (prop_oneof![4 => 0u64..200, 1 => huge()], 0u32..3)
}

/// A module of those allocations and values (values grouped by allocation, as the parser
/// makes them), with a schedule of `max` steps when `max` is given.
fn module(allocs: &[(u64, u32)], values: &[Gen], max: Option<u32>) -> Module {
    let mut values: Vec<Gen> = values.to_vec();
    for v in &mut values {
        v.0 %= allocs.len();
    }
    values.sort_by_key(|v| v.0);
    let mut m = Module {
        name: "random".into(),
        instructions: vec![Instruction::default()],
        ..Module::default()
    };
    for (i, &(size, color)) in allocs.iter().enumerate() {
        let from = values.partition_point(|v| v.0 < i) as u32;
        let to = values.partition_point(|v| v.0 <= i) as u32;
        m.allocations.push(Allocation {
            index: i as u32,
            size,
            color,
            page: None,
            parameter: None,
            output_shape: None,
            flags: Default::default(),
            values: from..to,
        });
    }
    for (id, &(a, color, offset, size, live)) in values.iter().enumerate() {
        m.values.push(Value {
            id: id as u32,
            instruction: 0,
            index: Default::default(),
            phi: false,
            color,
            allocation: a as u32,
            offset,
            size,
            shape: Default::default(),
            logical_size: None,
            live: live.map(|(start, end)| LiveRange { start, end }),
            uses_text: Default::default(),
        });
    }
    m.schedule = max.map(|max| Schedule {
        max,
        ..Schedule::default()
    });
    m
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(512),
        ..ProptestConfig::default()
    })]

    #[test]
    fn occupied_bytes_match_the_reference(
        allocs in prop::collection::vec(allocation(), 1..6),
        values in prop::collection::vec(value(), 0..24),
        max in prop::option::of(0u32..40),
    ) {
        let m = module(&allocs, &values, max);
        let an = analyze(&m);
        common::occupied::check_curves(&m, &an, "random module");
    }
}

/// A case worked by hand, so that the reference itself is checked against numbers that do
/// not come from code: two aliases, an overlap, a gap, a zero size and a one-step range.
#[test]
fn reference_on_a_case_worked_by_hand() {
    // Allocation 0 (colour 0, 100 B) at base 0; allocation 1 (colour 1, 50 B) holds a
    // colour-0 value, so it is laid on colour 0's axis at base 100.
    let m = module(
        &[(100, 0), (50, 1)],
        &[
            (0, None, 0, 40, Some((0, 2))),    // [0, 40) at steps 0..=2
            (0, None, 0, 40, Some((1, 1))),    // its alias, step 1 only
            (0, None, 30, 20, Some((1, 3))),   // [30, 50): overlaps by 10
            (0, None, 60, 0, Some((0, 3))),    // zero size
            (1, Some(0), 10, 5, Some((3, 3))), // [110, 115) at step 3
            (1, None, 0, 50, Some((0, 0))),    // colour 1: [0, 50) at step 0
        ],
        Some(4),
    );
    let an = analyze(&m);
    let want = common::occupied::reference(&m, an.steps);
    assert_eq!(an.steps, 5);
    // Step 0: [0,40) = 40; 1: [0,50) = 50; 2: same; 3: [30,50) + [110,115) = 25; 4: nothing.
    assert_eq!(want[0].curve, [40, 50, 50, 25, 0]);
    assert_eq!(want[0].layout, [(0, 0), (1, 100)]);
    assert_eq!((want[0].peak_bytes, want[0].peak_time), (50, Some(1)));
    assert_eq!(want[0].live_at_peak, [0, 1, 2, 3]);
    assert_eq!(want[1].curve, [50, 0, 0, 0, 0]);
    assert_eq!(want[1].layout, [(1, 0)]);
    common::occupied::check_curves(&m, &an, "worked by hand");
}
