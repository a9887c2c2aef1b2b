//! The waste answers (issue 35) on real TPU compiles of one 166M LM train step
//! (`../shared/dumps/tpu-aot/programs/tpu_waste.py`, v5e 2x2, mesh data=2 × model=2), each
//! variant changing one thing; the ground truth is each run's `RESULT.json` (per-device
//! bytes by construction from the specs JAX was given).

mod common;

use std::path::{Path, PathBuf};

use bufscope::answers::waste::{waste, Waste};
use bufscope::pipeline::open_files;
use serde_json::Value as Json;

/// The files bufscope reads of one run: `DIR/STEM.*` (maybe `.gz`).
fn run_files(dir: &Path, stem: &str) -> Vec<(String, Vec<u8>)> {
    let kinds = [
        "buffer-assignment.txt",
        "buffer-assignment-values.txt",
        "live-range.txt",
        "after_optimizations.txt",
        "before_optimizations.txt",
    ];
    let mut out = Vec::new();
    for k in kinds {
        for name in [format!("{stem}.{k}"), format!("{stem}.{k}.gz")] {
            if let Ok(bytes) = std::fs::read(dir.join(&name)) {
                out.push((name, bytes));
            }
        }
    }
    out
}

/// Where a variant's run is: `../shared/dumps/tpu-aot/turn4/waste_V.*` or the fixtures'
/// `tpu-waste/waste_V.*`.
fn run_dir(variant: &str) -> Option<(PathBuf, String)> {
    let stem = format!("waste_{variant}");
    let fixtures = common::fixtures_dir().join("tpu-waste");
    if fixtures.join(format!("{stem}.RESULT.json")).is_file() {
        return Some((fixtures, stem));
    }
    let shared = common::shared_dumps_dir()?.join("tpu-aot").join("turn4");
    shared.join(format!("{stem}.RESULT.json")).is_file().then_some((shared, stem))
}

/// A variant's module, read and analysed, or `None` after saying skipped.
fn analysed(test: &str, variant: &str) -> Option<bufscope::pipeline::Analysed> {
    let Some((dir, stem)) = run_dir(variant) else {
        common::skip(test, &format!("the run waste_{variant} (tests/fixtures/tpu-waste or ../shared/dumps/tpu-aot/turn4)"));
        return None;
    };
    let files = run_files(&dir, &stem);
    let mut loaded = open_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    assert_eq!(loaded.modules.len(), 1);
    loaded.modules.pop()
}

/// The waste of a variant's module and its RESULT.json, or `None` after saying skipped.
fn load(test: &str, variant: &str) -> Option<(Waste, Json)> {
    let m = analysed(test, variant)?;
    assert!(m.module.hlo.is_some() && m.module.hlo_before.is_some(), "both HLO texts joined");
    let (dir, stem) = run_dir(variant)?;
    let result = std::fs::read(dir.join(format!("{stem}.RESULT.json"))).expect("RESULT.json");
    Some((waste(&m.module, &m.analysis), serde_json::from_slice(&result).expect("json")))
}

/// One RESULT.json argument: (path, per-device bytes, per-device bytes as baseline shards it).
fn args(result: &Json) -> Vec<(String, u64, u64)> {
    let args = result["args"].as_array().expect("args");
    (args.iter())
        .map(|a| {
            let n = |k: &str| a[k].as_u64().expect(k);
            (a["path"].as_str().expect("path").to_string(), n("per_device_bytes"), n("baseline_per_device_bytes"))
        })
        .collect()
}

/// The HBM of a TPU v5e (`device_kind` "TPU v5 lite"): 16 GiB per chip.
const V5E_HBM: u64 = 16 << 30;

/// The replicated values named with a saving of at least 1 MiB, as (path, saving).
fn named(w: &Waste) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = (w.replicated.values.iter())
        .filter(|v| v.saving_bytes >= 1 << 20)
        .map(|v| (v.path.clone(), v.saving_bytes))
        .collect();
    v.sort();
    v
}

/// What the run replicated beyond the baseline: (path, per-device excess), by construction.
fn excess(result: &Json) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = (args(result).into_iter())
        .filter(|a| a.1 > a.2)
        .map(|a| (a.0, a.1 - a.2))
        .collect();
    v.sort();
    v
}

#[test]
fn lm_head_and_its_adam_state_replicated_are_named_with_the_exact_saving() {
    let Some((w, result)) = load("lm_head_replicated", "lmhead_replicated") else { return };
    let want = excess(&result);
    assert_eq!(
        want.iter().map(|a| a.0.as_str()).collect::<Vec<_>>(),
        ["opt_state[0].mu['unembed']", "opt_state[0].nu['unembed']", "params['unembed']"]
    );
    assert_eq!(named(&w), want);
    let expected = result["ground_truth"]["expected_saving_per_device_bytes"].as_u64();
    let big: u64 = named(&w).iter().map(|n| n.1).sum();
    assert_eq!(Some(big), expected, "196,608,000 bytes per device");
    assert!(w.replicated.values.iter().filter(|v| v.saving_bytes >= 1 << 20).all(|v| v.exact && v.shards == 1 && v.peer_shards == 2));
    assert!(w.replicated.needs.is_none());
}

#[test]
fn optimizer_state_replicated_is_named_with_the_exact_saving() {
    let Some((w, result)) = load("opt_state_replicated", "opt_replicated") else { return };
    let want = excess(&result);
    assert_eq!(want.len(), 16, "every mu and nu leaf but the norms' scales");
    assert_eq!(named(&w), want);
    let total: u64 = want.iter().map(|a| a.1).sum();
    assert_eq!(total, 664_797_184);
    // Each is named against its own parameter (its mirror), which the program shards.
    for v in w.replicated.values.iter().filter(|v| v.saving_bytes >= 1 << 20) {
        assert!(v.peer.starts_with("params["), "{} against {}", v.path, v.peer);
    }
}

#[test]
fn fsdp_and_baseline_flag_nothing_beyond_one_percent_of_hbm() {
    for (variant, what) in [("fsdp", "fsdp"), ("baseline", "baseline")] {
        let Some((w, result)) = load(what, variant) else { continue };
        assert!(excess(&result).is_empty() || variant == "fsdp");
        assert!(
            w.replicated.saving_bytes < V5E_HBM / 100,
            "{variant}: {} bytes flagged: {:?}",
            w.replicated.saving_bytes,
            named(&w)
        );
        assert!(w.replicated.needs.is_none());
        assert!(w.donation.left_over.is_empty() && w.donation.double_buffered.is_empty(), "{variant}");
        assert_eq!(w.donation.aliased, 34, "{variant}: params and optimizer state aliased");
    }
}

#[test]
fn without_donation_the_double_buffered_state_is_named_with_its_bytes() {
    let Some((w, result)) = load("no_donation", "no_donation") else { return };
    let state: Vec<(String, u64, u64)> = args(&result).into_iter().filter(|a| a.0 != "tokens").collect();
    let paths: Vec<&str> = w.donation.double_buffered.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, state.iter().map(|a| a.0.as_str()).collect::<Vec<_>>());
    let bytes: u64 = state.iter().map(|a| a.1).sum();
    assert_eq!(w.donation.double_buffered_bytes, bytes);
    assert_eq!(bytes, 997_404_676);
    assert_eq!(w.donation.aliased, 0);
    // Against the baseline run, XLA's peak grew by these bytes as allocated (each rounded up
    // to its tile: the step count's 4 bytes take 512).
    let grew = result["ground_truth"]["delta_vs_baseline"]["peak_memory_in_bytes"].as_u64();
    assert_eq!(grew, Some(997_405_184));
    assert!(grew.unwrap() - bytes < 1024);
}

#[test]
fn a_donation_xla_could_not_use_names_the_left_over_parameter() {
    let Some((w, result)) = load("donation_unusable", "donation_unusable") else { return };
    // The run changed params['unembed']'s output (bf16, padded); JAX warned "Some donated
    // buffers were not usable: float32[1024,16000]" and paired the three same-shaped
    // buffers in order: params['unembed'] went to mu's output, mu's to nu's, and nu's was
    // left over. The header says so; the answer names that leaf, and the moves.
    let warned = result["warnings_all"][0]["message"].as_str().unwrap_or_default();
    assert!(warned.starts_with("Some donated buffers were not usable: float32[1024,16000]"), "{warned}");
    let left: Vec<(&str, &str)> = w.donation.left_over.iter().map(|r| (r.path.as_str(), r.shape.as_str())).collect();
    assert_eq!(left, [("opt_state[0].nu['unembed']", "f32[1024,16000]")]);
    let nu = args(&result).into_iter().find(|a| a.0 == "opt_state[0].nu['unembed']").expect("nu");
    assert_eq!(w.donation.left_over_bytes, nu.1);
    assert_eq!(w.donation.left_over_bytes, 65_536_000);
    let moved: Vec<(&str, Option<u32>)> = w.donation.moved.iter().map(|r| (r.path.as_str(), r.output)).collect();
    assert_eq!(moved, [("params['unembed']", Some(22)), ("opt_state[0].mu['unembed']", Some(33))]);
    assert_eq!(w.donation.aliased, 33);
    assert!(w.donation.double_buffered.is_empty());
}

#[test]
fn a_buffer_donor_xla_left_unused_is_named_though_jax_says_nothing() {
    let Some((w, result)) = load("bf16_donor", "donation_bf16_donor") else { return };
    // The run returns params['unembed'] as bf16 of the same shape: JAX pairs the three
    // same-shaped f32 buffers in order (params' to mu's output, mu's to nu's) and passes the
    // one left, nu's, to XLA as a `buffer_donor`, silently: no warning.
    assert_eq!(result["warnings_all"].as_array().map(Vec::len), Some(0), "no 'not usable' warning");
    let left: Vec<(&str, &str)> = w.donation.left_over.iter().map(|r| (r.path.as_str(), r.why.as_str())).collect();
    assert_eq!(left, [("opt_state[0].nu['unembed']", "a buffer_donor XLA left unused")]);
    let nu = args(&result).into_iter().find(|a| a.0 == "opt_state[0].nu['unembed']").expect("nu");
    assert_eq!(w.donation.left_over_bytes, nu.1);
    let moved: Vec<(&str, Option<u32>)> = w.donation.moved.iter().map(|r| (r.path.as_str(), r.output)).collect();
    assert_eq!(moved, [("params['unembed']", Some(22)), ("opt_state[0].mu['unembed']", Some(33))]);
    assert_eq!(w.donation.aliased, 33);
    assert!(w.donation.double_buffered.is_empty());
    // XLA's own account: against the baseline run it aliases exactly those bytes less.
    let Some((_, base_result)) = load("bf16_donor", "baseline") else { return };
    let alias = |r: &Json| r["memory_analysis"]["alias_size_in_bytes"].as_u64().expect("alias_size_in_bytes");
    assert_eq!(alias(&base_result) - alias(&result), w.donation.left_over_bytes, "65,536,000 bytes");
}

#[test]
fn without_the_texts_each_answer_says_what_it_needs() {
    let Some((dir, stem)) = run_dir("baseline") else {
        return common::skip("waste_needs", "the run waste_baseline");
    };
    let files: Vec<(String, Vec<u8>)> = (run_files(&dir, &stem).into_iter())
        .filter(|(n, _)| !n.contains("optimizations"))
        .collect();
    let loaded = open_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    let m = &loaded.modules[0];
    let w = waste(&m.module, &m.analysis);
    assert!(w.replicated.values.is_empty() && w.donation.double_buffered.is_empty());
    assert!(w.replicated.needs.as_deref().is_some_and(|n| n.contains("before_optimizations")), "{:?}", w.replicated.needs);
    assert!(w.donation.needs.as_deref().is_some_and(|n| n.contains("after_optimizations")));
    assert!(w.gathered.needs.is_some());

    // A text before optimizations whose parameters print no sharding.
    let mut files = run_files(&dir, &stem);
    for (name, bytes) in files.iter_mut().filter(|(n, _)| n.contains("before_optimizations")) {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let stripped: String = (text.lines())
            .map(|l| match (l.contains(" parameter("), l.find(", sharding={"), l.find(", metadata=")) {
                (true, Some(a), Some(b)) if a < b => format!("{}{}\n", &l[..a], &l[b..]),
                _ => format!("{l}\n"),
            })
            .collect();
        assert!(stripped.len() < text.len(), "{name}: shardings taken out");
        *bytes = stripped.into_bytes();
    }
    let loaded = open_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    let m = &loaded.modules[0];
    let w = waste(&m.module, &m.analysis);
    assert!(w.replicated.values.is_empty());
    assert!(w.replicated.needs.as_deref().is_some_and(|n| n.contains("no sharding")), "{:?}", w.replicated.needs);
    assert_eq!(w.donation.aliased, 34, "the donation answer does not need the shardings");
}

#[test]
fn fsdp_gathers_layer_weights_from_their_parameters_and_baseline_gathers_none() {
    let Some((w, result)) = load("gathered", "fsdp") else { return };
    let mut from: Vec<&str> = w.gathered.values.iter().filter_map(|g| g.from.as_deref()).collect();
    from.sort();
    from.dedup();
    // Every weight the run shards over `data` is gathered for its matmuls but the
    // embedding, which XLA looks up where it lies (no all-gather of it in the text).
    let sharded: Vec<String> = (result["args"].as_array().expect("args").iter())
        .filter(|a| a["spec"].as_str().is_some_and(|s| s.contains("'data'")))
        .filter_map(|a| a["path"].as_str().filter(|p| p.starts_with("params[") && *p != "params['embed']"))
        .map(str::to_string)
        .collect();
    assert_eq!(from, sharded, "the weights gathered");
    // 20 all-gathers (an async one counted at its start): 18 traced through the fusions
    // that start them, the slices and TPU's `ConcatBitcast` of a prefetched layer; the
    // two left are no weight's (the tokens' indices, made by a select, and an activation's
    // gradient out of the backward loop).
    assert_eq!((w.gathered.values.len(), w.gathered.total), (18, 20));
    // A layer's slice of a weight, gathered over `data` and cast to bf16, is an eighth of its
    // per-device bytes (8 layers, 2 shards, 4 bytes to 2); w2's is bf16[1,2048,1024] = 4 MiB.
    let per_device = |path: &str| args(&result).into_iter().find(|a| a.0 == path).map(|a| a.1);
    for g in w.gathered.values.iter().filter(|g| g.from.as_deref().is_some_and(|p| p.starts_with("params['layers']['w"))) {
        assert_eq!(Some(g.bytes * 8), per_device(g.from.as_deref().unwrap()), "{}", g.instruction);
    }
    assert!(w.gathered.values.iter().any(|g| g.bytes == 4 << 20));
    assert!(w.gathered.values.iter().all(|g| !g.values.is_empty()), "each is a value of the dump");
    // An asynchronous gather is named by its done, found through the fusions that carry it on.
    assert!(w.gathered.values.iter().any(|g| g.instruction.starts_with("async-collective-done")));
    let Some((base, _)) = load("gathered", "baseline") else { return };
    assert!(base.gathered.values.is_empty() && base.gathered.needs.is_none());
}

#[test]
fn gathered_weights_are_a_category_of_their_own() {
    use bufscope::answers::categories::{by_category_with, Categories, Category};
    use bufscope::answers::live_set;
    use bufscope::shape::logical_size;
    let Some(m) = analysed("gathered category", "fsdp") else { return };
    let (module, analysis) = (&m.module, &m.analysis);
    let w = waste(module, analysis);
    let cats = Categories::new(module);
    // Of each traced gather's values (its own, or its asynchronous start's and done's), one
    // per instruction holds the gathered array (a start's tuple also holds the operand's shard,
    // a table and flags, 4 B each): those are gathered weights, and no other value is.
    let name = |v: u32| module.str(module.instruction(&module.values[v as usize]).name);
    let gathered = |v: u32| cats.of(module, v) == Category::Gathered;
    let mut all: Vec<u32> = Vec::new();
    for g in &w.gathered.values {
        let mut names: Vec<&str> = g.values.iter().map(|&v| name(v)).collect();
        names.sort();
        names.dedup();
        let mine: Vec<u32> = g.values.iter().copied().filter(|&v| gathered(v)).collect();
        let mut theirs: Vec<&str> = mine.iter().map(|&v| name(v)).collect();
        theirs.sort();
        assert_eq!(theirs, names, "{}: one gathered weight per instruction", g.instruction);
        let shape = |v: u32| module.str(module.values[v as usize].shape);
        assert!(mine.iter().all(|&v| logical_size(shape(v)) == Some(g.bytes)), "{}", g.instruction);
        all.extend(mine);
    }
    all.sort();
    let categorised: Vec<u32> = (0..module.values.len() as u32).filter(|&v| gathered(v)).collect();
    assert_eq!(categorised, all, "no value but the gathers' is a gathered weight");
    // At the peak of each memory space, the category's bytes are the answer's gathered
    // bytes live there (TPU gathers this model's weights into VMEM, colour 1).
    let row = |color: u32, step: u32| {
        let space = analysis.spaces.iter().find(|s| s.color == color).expect("space");
        let live = live_set(module, space, step);
        (by_category_with(module, &cats, &live).into_iter())
            .find(|r| r.category == Category::Gathered)
            .map_or(0, |r| r.bytes)
    };
    let at_peaks: u64 = (analysis.spaces.iter()).filter_map(|s| Some(row(s.color, s.peak_time?))).sum();
    assert_eq!(at_peaks, w.gathered.bytes_at_peak);
    // Inside the forward scan a layer's weights are gathered before its matmuls: at some
    // step, w1's and w2's gathered slices (4 MiB each) are live together in VMEM.
    let vmem = analysis.spaces.iter().find(|s| s.color == 1).expect("VMEM");
    let most = (0..vmem.curve.len() as u32).map(|t| row(1, t)).max().unwrap_or(0);
    assert!(most >= 8 << 20, "at most {most} B of gathered weights live at once");
    // The baseline (data parallel) gathers no parameter: no value is a gathered weight.
    let Some(base) = analysed("gathered category", "baseline") else { return };
    let cats = Categories::new(&base.module);
    assert!((0..base.module.values.len() as u32).all(|v| cats.of(&base.module, v) != Category::Gathered));
}

/// `tpu-aot/turn4/raw_folder_multi` (init, train step, eval step as XLA wrote them), read
/// as the page reads a folder, or `None` after saying skipped.
fn folder_multi(test: &str) -> Option<bufscope::pipeline::Loaded> {
    let dumps = common::shared_dumps_or_skip(test)?;
    let dir = dumps.join("tpu-aot").join("turn4").join("raw_folder_multi");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir).expect("folder").flatten().map(|e| e.path()).collect();
    names.sort();
    let plan = bufscope::parse::folder_plan(&names.iter().map(|p| p.to_string_lossy().into_owned()).collect::<Vec<_>>());
    let files: Vec<(String, Vec<u8>)> = (plan.dumps.iter().chain(&plan.hlo))
        .map(|&i| (names[i].to_string_lossy().into_owned(), std::fs::read(&names[i]).expect("read")))
        .collect();
    Some(open_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice()))))
}

#[test]
fn a_folder_of_three_modules_is_one_device() {
    let Some(loaded) = folder_multi("device") else { return };
    let pairs: Vec<_> = loaded.modules.iter().map(|m| (&m.module, &m.analysis)).collect();
    let d = bufscope::answers::waste::device::device(pairs.iter().copied(), None);
    let jits: Vec<&str> = d.modules.iter().map(|l| l.jit_name.as_str()).collect();
    assert_eq!(jits, ["jit_init", "jit_train_step", "jit_eval_step"]);
    assert!(d.recompiles.is_empty());
    let peaks: Vec<u64> = loaded.modules.iter().map(|m| m.analysis.spaces[0].peak_bytes).collect();
    assert_eq!(d.worst_case_bytes, *peaks.iter().max().unwrap());
    assert_eq!(d.worst_module.as_deref(), Some(loaded.modules[1].module.name.as_str()));
    // Train and eval step take the same parameters (by path and per-device shape).
    let shared: Vec<&str> = d.shared_arguments.iter().map(|s| s.path.as_str()).collect();
    assert!(shared.iter().any(|p| p.starts_with("params")), "{shared:?}");
    assert!(d.shared_arguments.iter().all(|s| s.modules.len() >= 2));
    assert!(d.resident_bytes > 0 && d.resident_bytes <= d.worst_case_bytes);
    // Each module has its text before optimizations, jit_init's numbered apart (0000 / 0003).
    for m in &loaded.modules {
        let before = m.module.hlo_before.as_ref().map(|h| h.name.as_str());
        assert_eq!(before, m.module.hlo.as_ref().map(|h| h.name.as_str()), "{}", m.module.name);
    }
}

#[test]
fn jit_init_s_seed_is_not_double_buffered_by_the_step_count_of_its_shape() {
    let Some(loaded) = folder_multi("init_seed") else { return };
    let init = loaded.modules.iter().find(|m| m.module.name.contains("jit_init")).expect("jit_init");
    let w = waste(&init.module, &init.analysis);
    // The seed (s32[], not donated) and output 11, the optimizer's step count (s32[], set to
    // 0): same shape, but the count is a constant copied out, no new version of the seed.
    let hlo = init.module.hlo.as_ref().expect("text after optimizations");
    assert!(w.donation.aliased == 0 && hlo.buffer_donors.is_empty(), "nothing donated in jit_init");
    let root = hlo.entry_root().expect("root");
    let shapes = bufscope::shape::tuple_elements(hlo.shape(root)).expect("a tuple of outputs");
    let (_, p) = hlo.entry_parameters().into_iter().next().expect("the seed");
    assert_eq!(bufscope::answers::waste::bare(shapes[11]), bufscope::answers::waste::bare(hlo.shape(p)));
    assert!(w.donation.double_buffered.is_empty(), "{:?}", w.donation.double_buffered);
    // The rule removes nothing where state is updated: without donation all 34 leaves of
    // the state stay double buffered (without_donation_the_double_buffered_state_…).
}

#[test]
fn diff_reports_what_a_change_of_sharding_or_donation_wastes() {
    use bufscope::diff::{diff_modules, Side};
    fn side(a: &bufscope::pipeline::Analysed) -> Side<'_> {
        Side::new(&a.module, &a.analysis)
    }
    let Some(base) = analysed("waste_diff", "baseline") else { return };
    let Some(lm) = analysed("waste_diff", "lmhead_replicated") else { return };
    let w = diff_modules(side(&base), side(&lm)).waste.expect("both have HLO texts");
    assert_eq!((w.replicated_saving_bytes.base, w.replicated_saving_bytes.new), (0, 196_608_000));
    assert_eq!(
        w.added,
        ["replicated: opt_state[0].mu['unembed']", "replicated: opt_state[0].nu['unembed']", "replicated: params['unembed']"]
    );
    assert!(w.removed.is_empty());
    let Some(nd) = analysed("waste_diff", "no_donation") else { return };
    let w = diff_modules(side(&base), side(&nd)).waste.expect("texts");
    assert_eq!((w.double_buffered_bytes.base, w.double_buffered_bytes.new), (0, 997_404_676));
    assert_eq!(w.added.len(), 34);
    // The reverse comparison is the exact reverse.
    let r = diff_modules(side(&nd), side(&base)).waste.expect("texts");
    assert_eq!((r.added, r.removed.len()), (w.removed, 34));
    let same = diff_modules(side(&base), side(&base)).waste.expect("texts");
    assert!(!same.changed());
}
