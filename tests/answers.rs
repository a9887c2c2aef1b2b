//! The answers of `bufscope::answers` on real dumps: the groupings add up to the curve,
//! XProf's peak heap against what XProf 2.24.2 reported for the same compilations, and
//! timings on the 94 MB dump (printed, never asserted). Padding and idle stretches checked by
//! hand against the dump text are in tests/answers_by_hand.rs.

#[path = "common/answers_fixture.rs"]
mod answers_fixture;
mod common;

use answers_fixture::{load, load_module, value_named};
use bufscope::analysis::{analyze, live_at, Analysis, Space};
use bufscope::answers::categories::{by_category, Categories, Category};
use bufscope::answers::groups::{by_source_file, by_source_line, op_name_tree, OpNode, NO_OP_NAME};
use bufscope::answers::idle::{idle_ranking, ScheduleIndex};
use bufscope::answers::padding::space_padding;
use bufscope::answers::peaks::{
    peaks, prominent_peaks, xla_peak_step, DEFAULT_FRACTION, DEFAULT_PROMINENCE,
};
use bufscope::answers::xprof::{three_peaks, xprof_figures};
use bufscope::answers::{live_set, space_answers, Options};
use bufscope::model::Module;

/// The steps every grouping is checked at: the peak, both ends, the middle and XLA's peak.
fn steps_of(m: &Module, a: &Analysis, s: &Space) -> Vec<u32> {
    let mut steps = vec![0, a.steps / 2, a.steps.saturating_sub(1)];
    steps.extend(s.peak_time);
    steps.extend(xla_peak_step(m));
    steps
}

fn tree_is_consistent(node: &OpNode) -> (u64, u64, u32) {
    let mut sums = (0u64, 0u64, node.values.len() as u32);
    for c in &node.children {
        let (b, v, n) = tree_is_consistent(c);
        sums = (sums.0 + b, sums.1 + v, sums.2 + n);
    }
    // A node's own values add to its children's.
    assert!(
        sums.0 <= node.bytes && sums.1 <= node.value_bytes,
        "{}",
        node.label
    );
    assert_eq!(sums.2, node.count, "{}", node.label);
    (node.bytes, node.value_bytes, node.count)
}

#[test]
fn every_grouping_sums_to_the_steps_occupied_bytes() {
    let mut checked = 0;
    for files in common::fixture_modules() {
        let m = load_module(&files);
        let a = analyze(&m);
        for s in &a.spaces {
            for t in steps_of(&m, &a, s) {
                let live = live_set(&m, s, t);
                let curve = s.curve.get(t as usize).copied().unwrap_or(0);
                assert_eq!(
                    live.occupied_bytes, curve,
                    "{} color {} step {t}",
                    files.label, s.color
                );
                // The live set is what analysis counts live at t, restricted to the space.
                let expected: Vec<u32> = live_at(&m, t)
                    .into_iter()
                    .filter(|v| s.timed.binary_search(v).is_ok() && (t as usize) < s.curve.len())
                    .collect();
                assert_eq!(live.indices(), expected, "{} step {t}", files.label);
                let sizes: u64 = expected.iter().map(|&v| m.values[v as usize].size).sum();
                assert_eq!(live.value_bytes, sizes);
                assert!(live.values.iter().all(|v| v.bytes <= v.size));

                for fold in [false, true] {
                    let tree = op_name_tree(&m, &live, fold);
                    assert_eq!(
                        tree,
                        reference_tree(&m, &live, fold),
                        "{} step {t}",
                        files.label
                    );
                    assert_eq!((tree.bytes, tree.value_bytes), (curve, sizes));
                    assert_eq!(tree.count as usize, live.values.len());
                    let kids: u64 = tree.children.iter().map(|c| c.bytes).sum();
                    assert_eq!(kids, curve, "{} step {t}", files.label);
                    tree_is_consistent(&tree);
                    assert_eq!(tree.all_values(), live.indices());
                }
                let lines = by_source_line(&m, &live);
                assert_eq!(lines.iter().map(|l| l.bytes).sum::<u64>(), curve);
                assert_eq!(lines.iter().map(|l| l.value_bytes).sum::<u64>(), sizes);
                assert_eq!(lines.last().map_or(0, |l| l.running_bytes), curve);
                assert!(lines.windows(2).all(|w| w[0].bytes >= w[1].bytes));
                let files_sum: u64 = by_source_file(&m, &live).iter().map(|f| f.bytes).sum();
                assert_eq!(files_sum, curve);
                let cats = by_category(&m, &live);
                assert_eq!(cats.iter().map(|c| c.bytes).sum::<u64>(), curve);
                assert_eq!(cats.iter().map(|c| c.value_bytes).sum::<u64>(), sizes);
                checked += 1;
            }
            // At the peak the live set is the analysis' own.
            if let Some(p) = s.peak_time {
                assert_eq!(live_set(&m, s, p).indices(), s.live_at_peak);
            }
        }
    }
    println!("{checked} (module, space, step) checked");
    assert!(checked > 100);
}

/// The op_name tree of the live set built the plain way, value by value, from the op_name's
/// segments and their folded keys (a check of `op_name_tree`, which shares work between
/// neighbouring op_names; `every_grouping_sums_to_the_steps_occupied_bytes` compares them).
fn reference_tree(
    m: &bufscope::model::Module,
    live: &bufscope::answers::LiveSet,
    fold: bool,
) -> OpNode {
    use std::collections::{BTreeMap, BTreeSet};
    #[derive(Default)]
    struct Node {
        bytes: u64,
        value_bytes: u64,
        count: u32,
        segments: BTreeSet<String>,
        children: BTreeMap<String, Node>,
        values: Vec<u32>,
    }
    fn done(n: Node, key: &str) -> OpNode {
        let repeats = n.segments.len().max(1) as u32;
        let label = match (repeats, n.segments.iter().next()) {
            (1, Some(only)) => only.clone(),
            _ => key.to_string(),
        };
        let mut children: Vec<OpNode> = n.children.into_iter().map(|(k, c)| done(c, &k)).collect();
        children.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.label.cmp(&b.label)));
        let mut values = n.values;
        values.sort_unstable();
        OpNode {
            label,
            repeats,
            bytes: n.bytes,
            value_bytes: n.value_bytes,
            count: n.count,
            children,
            values,
        }
    }
    let mut root = Node::default();
    for lv in &live.values {
        let v = &m.values[lv.value as usize];
        let op = m
            .instructions
            .get(v.instruction as usize)
            .map_or("", |i| m.str(i.op_name));
        let segments = if op.is_empty() {
            vec![NO_OP_NAME]
        } else {
            bufscope::op_path::segments(op)
        };
        let mut n = &mut root;
        let add = |n: &mut Node| {
            n.bytes += lv.bytes;
            n.value_bytes += lv.size;
            n.count += 1;
        };
        add(n);
        for seg in segments {
            let key = if fold {
                bufscope::op_path::fold_segment(seg).into_owned()
            } else {
                seg.to_string()
            };
            n = n.children.entry(key).or_default();
            n.segments.insert(seg.to_string());
            add(n);
        }
        n.values.push(lv.value);
    }
    done(root, "")
}

#[test]
fn aliases_are_counted_once_in_bytes_and_per_value_in_value_bytes() {
    // jax 0.10.2 mlp_train at XLA's peak step 92: allocation 2 holds
    // opt_state_0__nu_0___w__.1 and its update multiply_add_fusion.19 (1,605,632 bytes each,
    // offset 0), both live there per XLA's own peak list.
    let m = load("cpu/jax0.10.2/cpu_mlp_train");
    let a = analyze(&m);
    let live = live_set(&m, a.space(0).unwrap(), 92);
    let get = |name: &str| {
        let v = value_named(&m, name);
        *live.values.iter().find(|lv| lv.value == v).unwrap()
    };
    let (old, new) = (
        get("opt_state_0__nu_0___w__.1"),
        get("multiply_add_fusion.19"),
    );
    assert_eq!((old.size, new.size), (1_605_632, 1_605_632));
    assert_eq!(
        (old.bytes, new.bytes),
        (0, 1_605_632),
        "the later definition owns the bytes"
    );
    assert!(live.value_bytes > live.occupied_bytes);
}

#[test]
fn xprof_peak_heap_equals_what_xprof_reported() {
    for (label, expected) in [
        ("cpu/jax0.10.2/cpu_mlp_train", 12_902_240u64),
        ("cpu/jax0.10.2/cpu_scan_layers", 27_879_532),
    ] {
        let m = load(label);
        let a = analyze(&m);
        let s = a.space(0).unwrap();
        let f = xprof_figures(&m, s);
        println!("{label}: {f:?}");
        assert_eq!(f.xprof_peak_heap_bytes, expected, "{label}");
        assert!(f.fragmentation >= 0.0 && f.fragmentation < 0.01);
        let three = three_peaks(&m, s, &f);
        assert_eq!(three.xprof.bytes, Some(expected));
        assert_eq!(three.occupied.bytes, Some(s.peak_bytes));
        assert!(three.xla.bytes.is_some());
        for p in [&three.occupied, &three.xla, &three.xprof] {
            assert!(p.sentence.ends_with('.') && !p.sentence.contains('\n'));
        }
    }
    // By hand for mlp_train: the dump's 21 parameter and 2 other maybe-live-out allocations
    // and 2 constants total 9,983,832 bytes; the temp allocation is 2,918,468 bytes, of which
    // at most 2,918,408 are occupied at once (60 bytes of the end are never live together);
    // the 30 thread-local allocations of 4 bytes are left out.
    let m = load("cpu/jax0.10.2/cpu_mlp_train");
    let f = xprof_figures(&m, analyze(&m).space(0).unwrap());
    assert_eq!(
        (f.indefinite_bytes, f.temp_peak_bytes),
        (9_983_832, 2_918_408)
    );
    assert_eq!(f.total_bytes, 12_902_420 - 30 * 4);
}

/// XProf's temporary peak of every space of every fixture, against the union of the byte
/// ranges inside the space's `preallocated-temp` allocations taken at each step one by one.
#[test]
fn xprof_temp_peak_is_the_highest_union_inside_the_temp_allocations() {
    for files in common::fixture_modules() {
        let m = load_module(&files);
        let a = analyze(&m);
        for s in &a.spaces {
            let f = xprof_figures(&m, s);
            let temp: Vec<(u32, u32, u64, u64)> = s
                .timed
                .iter()
                .filter(|&&i| {
                    let al = m.allocation_of(&m.values[i as usize]);
                    al.color == s.color && al.flags.preallocated_temp
                })
                .filter_map(|&i| {
                    let (b, r) = (s.block(&m, i)?, m.values[i as usize].live?);
                    Some((r.start, r.end, b.y0, b.y1))
                })
                .collect();
            let (mut best, mut at) = (0u64, None);
            for t in 0..s.curve.len() as u32 {
                let mut live: Vec<(u64, u64)> = temp
                    .iter()
                    .filter(|r| r.0 <= t && t <= r.1)
                    .map(|r| (r.2, r.3))
                    .collect();
                live.sort_unstable();
                let (mut union, mut reach) = (0u64, 0u64);
                for (lo, hi) in live {
                    let lo = lo.max(reach);
                    if hi > lo {
                        union += hi - lo;
                        reach = hi;
                    }
                }
                if union > best {
                    (best, at) = (union, Some(t));
                }
            }
            assert_eq!(
                (f.temp_peak_bytes, f.temp_peak_step),
                (best, at),
                "{} space {}",
                files.label,
                s.color
            );
        }
    }
}

#[test]
fn parameters_split_by_their_python_path() {
    for label in ["cpu/jax0.10.2/cpu_mlp_train", "cpu/jax0.6.2/cpu_mlp_train"] {
        let m = load(label);
        let cats = Categories::new(&m);
        let mut seen = Vec::new();
        for (i, v) in m.values.iter().enumerate() {
            let c = cats.of(&m, i as u32);
            let ins = m.instruction(v);
            // The Python path: jax 0.10.2 names the instruction after it, 0.6.2 puts it in
            // the op_name.
            let path = format!("{}|{}", m.str(ins.name), m.str(ins.op_name));
            let expected = if bufscope::analysis::value_kind(&m, v)
                != bufscope::analysis::ValueKind::Parameter
            {
                continue;
            } else if path.starts_with("params") || path.contains("|params") {
                Category::ModelParameters
            } else if path.starts_with("opt_state") || path.contains("|opt_state") {
                Category::OptimizerState
            } else {
                Category::Inputs
            };
            assert_eq!(c, expected, "{label}: {path}");
            seen.push(c);
        }
        for c in [
            Category::ModelParameters,
            Category::OptimizerState,
            Category::Inputs,
        ] {
            assert!(seen.contains(&c), "{label}: no {c:?}");
        }
    }
}

/// Every space of every fixture: the listed peaks are few, local maxima of the curve, at
/// least half the highest, among the plain local maxima, and include the space's peak.
#[test]
fn prominent_peaks_of_every_fixture() {
    for files in common::fixture_modules() {
        let m = load_module(&files);
        let a = analyze(&m);
        for s in &a.spaces {
            let c = &s.curve;
            let listed = prominent_peaks(c, DEFAULT_FRACTION, DEFAULT_PROMINENCE);
            let all = peaks(c, DEFAULT_FRACTION);
            let what = format!("{} colour {}", m.name, s.color);
            if s.peak_bytes == 0 {
                assert!(listed.is_empty(), "{what}");
                continue;
            }
            assert!(
                listed.contains(&bufscope::answers::peaks::Peak {
                    step: s.peak_time.unwrap(),
                    bytes: s.peak_bytes
                }),
                "{what}: {listed:?} without the peak at {:?}",
                s.peak_time
            );
            assert!(listed.len() <= 20, "{what}: {} peaks listed", listed.len());
            assert!(listed.iter().all(|p| all.contains(p)), "{what}");
            for p in &listed {
                let t = p.step as usize;
                assert_eq!(c[t], p.bytes, "{what}");
                assert!(2 * p.bytes >= s.peak_bytes, "{what}");
                // A local maximum: lower before its run, lower after it.
                assert!(t == 0 || c[t - 1] < p.bytes, "{what} at {t}");
                let end = (t..c.len()).find(|&i| c[i] != p.bytes).unwrap_or(c.len());
                assert!(end == c.len() || c[end] < p.bytes, "{what} at {t}");
            }
        }
    }
}

#[test]
fn peaks_and_answers_serialize() {
    let m = load("cpu/jax0.10.2/cpu_scan_layers");
    let a = analyze(&m);
    let s = a.space(0).unwrap();
    let p = peaks(&s.curve, 0.5);
    assert!(p
        .iter()
        .any(|p| Some(p.step) == s.peak_time && p.bytes == s.peak_bytes));
    assert!(p.windows(2).all(|w| w[0].step < w[1].step));
    let options = Options {
        capacity: Some(bufscope::answers::capacity::parse_capacity("16MiB").unwrap()),
        ..Options::default()
    };
    let ans = space_answers(&m, s, None, &options);
    assert_eq!(ans.xprof_peak_heap_bytes, 27_879_532);
    assert_eq!(ans.occupied_bytes, s.peak_bytes);
    let json = serde_json::to_string(&ans).unwrap();
    for key in [
        "\"xprof_peak_heap_bytes\":27879532",
        "\"peak_padding_bytes\":",
        "\"op_names\"",
        "\"three_peaks\"",
    ] {
        assert!(json.contains(key), "{key}");
    }
}

/// Prints the best of three runs of `f` (the machine is shared), in milliseconds.
fn time(what: &str, f: &mut dyn FnMut()) {
    let best = (0..3)
        .map(|_| {
            let start = std::time::Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min);
    println!("  {what}: {best:.1} ms");
}

/// 500 layers fold into one node ×500.
fn assert_layers_fold(tree: &OpNode) {
    fn find_repeats(n: &OpNode, out: &mut Vec<(String, u32)>) {
        if n.repeats > 1 {
            out.push((n.label.clone(), n.repeats));
        }
        n.children.iter().for_each(|c| find_repeats(c, out));
    }
    let mut folded = Vec::new();
    find_repeats(tree, &mut folded);
    folded.sort_by_key(|f| std::cmp::Reverse(f.1));
    println!("  folded: {:?}", &folded[..folded.len().min(5)]);
    assert!(folded
        .iter()
        .any(|(l, r)| l.starts_with("decoder_layer_#") && *r >= 100));
}

/// The 94 MB dump in ../shared: the folded op_name tree, the source line the issue names,
/// and the time each answer takes for one step (printed, not asserted).
#[test]
fn deep_unrolled_500_answers_and_timings() {
    let test = "deep_unrolled_500_answers_and_timings";
    if cfg!(debug_assertions) {
        // Not a skip for want of ../shared: `./dev test` runs this file again in release.
        common::skip_in_debug(test, "the 94 MB dump (`cargo test --release --test answers` runs it)");
        return;
    }
    let Some(dir) = common::shared_dumps_or_skip(test) else {
        return;
    };
    let path = dir.join("cpu/jax0.6.2/cpu_deep_unrolled_500.buffer-assignment.txt");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let m = bufscope::load_files([(
        "cpu_deep_unrolled_500.buffer-assignment.txt",
        bytes.as_slice(),
    )])
    .modules
    .remove(0);
    let a = analyze(&m);
    let s = a.space(0).unwrap();
    let t = s.peak_time.unwrap();
    println!(
        "cpu_deep_unrolled_500, step {t} ({} values live):",
        s.live_at_peak.len()
    );
    let mut live = live_set(&m, s, t);
    time("live set", &mut || live = live_set(&m, s, t));
    let mut tree = OpNode::default();
    time("op_name tree, folded", &mut || {
        tree = op_name_tree(&m, &live, true)
    });
    time("op_name tree, unfolded", &mut || {
        drop(op_name_tree(&m, &live, false))
    });
    let mut lines = Vec::new();
    time("source lines", &mut || lines = by_source_line(&m, &live));
    time("categories", &mut || drop(by_category(&m, &live)));
    time("padding", &mut || drop(space_padding(&m, s, &live, 20)));
    time("peaks", &mut || drop(peaks(&s.curve, 0.5)));
    let mut listed = Vec::new();
    time("peaks listed (prominence)", &mut || {
        listed = prominent_peaks(&s.curve, DEFAULT_FRACTION, DEFAULT_PROMINENCE)
    });
    println!(
        "  {} local maxima above half the highest, {} listed: {listed:?}",
        peaks(&s.curve, DEFAULT_FRACTION).len(),
        listed.len()
    );
    assert!(listed.len() <= 20 && listed.iter().any(|p| Some(p.step) == s.peak_time));
    let mut index = None;
    time("schedule index (once per module)", &mut || {
        index = Some(ScheduleIndex::new(&m))
    });
    let index = index.unwrap();
    let start = std::time::Instant::now();
    let mut ranked = Some(idle_ranking(&m, &index, &live));
    println!(
        "  idle stretches, first step: {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    time("idle stretches, again (stretches kept)", &mut || {
        ranked = Some(idle_ranking(&m, &index, &live))
    });
    let mut f = None;
    time("xprof figures (once per space)", &mut || {
        f = Some(xprof_figures(&m, s))
    });
    time("all answers", &mut || {
        drop(space_answers(&m, s, Some(t), &Options::default()))
    });

    assert_eq!(live.occupied_bytes, s.peak_bytes);
    assert_layers_fold(&tree);
    let no_op = tree.children.iter().position(|c| c.label == NO_OP_NAME);
    println!(
        "  (no op_name) is child {no_op:?} of {}",
        tree.children.len()
    );
    for l in lines.iter().take(3) {
        println!(
            "  {}:{} {} B ({:.1} %), own sizes {} B",
            l.file, l.line, l.bytes, l.percent, l.value_bytes
        );
    }
    let (mut positions, mut uses) = (0usize, 0usize);
    for lv in &live.values {
        if let Some((p, u)) = m.positions_and_uses(&m.values[lv.value as usize]) {
            positions += p.len();
            uses += u.len();
        }
    }
    println!("  the live values have {positions} positions and {uses} uses");
    let r = ranked.unwrap();
    println!(
        "  idle: available {}, {} rows; top {:?}",
        r.available,
        r.rows.len(),
        r.rows.first()
    );
    println!("  xprof: {:?}", f.unwrap());
}
