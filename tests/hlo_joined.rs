//! HLO module texts joined to their dumps: the CPU `mlp_train` dump folder copied into the
//! fixtures, read as the command line reads a folder and through `bufscope summary --json`,
//! and MaxText's parameters named by their paths from the text in ../shared/dumps (skipped
//! visibly without it). The reader on its own, on every real text and on damaged ones, is
//! tests/hlo_text.rs.

mod common;

/// The CPU `mlp_train` dump folder (tests/fixtures/folders), read as the command line reads
/// a folder: its dumps, then its HLO texts, each joined to its module; nothing skipped,
/// no error.
fn mlp_train_folder() -> bufscope::parse::Load {
    let dir = common::fixtures_dir().join("folders/mlp_train");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // XLA's other output beside the dump, as --xla_dump_to writes it.
    names.push("module_0004.jit_mlp_train_step.cpu_before_optimizations.txt".into());
    names.push("module_0004.jit_mlp_train_step.debug_options".into());
    names.push("module_0004.jit_mlp_train_step.ir-no-opt.ll".into());
    let plan = bufscope::parse::folder_plan(&names);
    // The text before optimizations is read too (its shardings), but this one is only named.
    assert_eq!((plan.dumps.len(), plan.hlo.len(), plan.skipped), (12, 4, 2));
    let mut loader = bufscope::Loader::new();
    for &i in plan.dumps.iter().chain(&plan.hlo).filter(|&&i| dir.join(&names[i]).exists()) {
        loader.begin_file(&names[i]);
        loader.feed(&std::fs::read(dir.join(&names[i])).unwrap());
        loader.end_file();
    }
    loader.skipped_files(plan.skipped);
    loader.finish()
}

#[test]
fn a_dump_folder_joins_its_hlo_texts() {
    let load = mlp_train_folder();
    assert!(load.errors.is_empty(), "{:?}", load.errors);
    assert_eq!(load.skipped, 2);
    assert_eq!(load.modules.len(), 3);
    for m in &load.modules {
        let hlo = m
            .hlo
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no HLO text", m.name));
        assert_eq!(hlo.devices(), 1);
        assert!(
            m.files
                .iter()
                .any(|f| f.ends_with("cpu_after_optimizations.txt")),
            "{:?}",
            m.files
        );
    }
    let m = load
        .modules
        .iter()
        .find(|m| m.name.contains("mlp_train_step"))
        .unwrap();
    let value = |name: &str| {
        m.values
            .iter()
            .find(|v| m.value_name(v) == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    // A parameter is named by its pytree path (`metadata={op_name="params[0][\'w\']"}`).
    let w = value("params_0___w__.1");
    assert_eq!(
        bufscope::query::parameter_path(m, w),
        Some("params[0]['w']")
    );
    assert_eq!(
        bufscope::query::display_name(m, w),
        "params_0___w__.1 params[0]['w']"
    );
    // Search finds values by their resolved source lines and by their paths.
    let by_path = bufscope::query::search(m, "0\\]\\['w'").unwrap();
    let names: Vec<String> = by_path
        .iter()
        .map(|&v| m.value_name(&m.values[v as usize]))
        .collect();
    assert!(names.contains(&"params_0___w__.1".to_string()), "{names:?}");
    assert!(
        names.contains(&"opt_state_0__mu_0___w__.1".to_string()),
        "{names:?}"
    );
    assert!(!bufscope::query::search(m, "programs.py:")
        .unwrap()
        .is_empty());
    // `%ynn_fusion.9 = f32[128,512]{1,0} fusion(%x.1, %params_0___w__.1), kind=kCustom,
    // calls=%fused_computation.9, … stack_frame_id=7}` in the entry computation main.24.
    let fusion = value("ynn_fusion.9");
    assert_eq!(bufscope::query::parameter_path(m, fusion), None);
    let view = bufscope::query::instruction_view(m, fusion).unwrap();
    assert_eq!(
        (view.opcode.as_str(), view.shape.as_str()),
        ("fusion", "f32[128,512]{1,0}")
    );
    assert_eq!(
        (view.computation.as_str(), view.in_entry),
        ("main.24", true)
    );
    assert_eq!(view.calls, [("calls", "fused_computation.9".to_string())]);
    let names: Vec<&str> = view.operands.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["x.1", "params_0___w__.1"]);
    for o in &view.operands {
        let v = o.value.unwrap_or_else(|| panic!("{} has no value", o.name));
        assert_eq!(m.value_name(&m.values[v as usize]), o.name);
    }
    assert_eq!(view.attributes[0].key, "kind");
    // Its source line is resolved through the text's tables: a file and a function.
    match bufscope::query::source_location(m, fusion) {
        Some(bufscope::query::SourceLocation::File {
            file,
            line,
            function,
            inferred: false,
        }) => {
            assert!(
                file.ends_with("programs.py") && line > 0 && !function.is_empty(),
                "{file}:{line} {function}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// MaxText's parameters are named `param.N` in the dump; the HLO text's op_name of each
/// `parameter` is its pytree path, which the categories read whole. Before the HLO text was
/// read, all of them were "inputs (heuristic)" (5,746.6 MiB at the peak of HBM).
#[test]
fn maxtext_parameters_by_their_paths() {
    let Some(dir) = common::shared_dumps_or_skip("maxtext_parameters_by_their_paths") else {
        return;
    };
    use bufscope::answers::categories::{Categories, Category};
    let stem = "tpu-aot/maxtext0.2.5/tpu_v5e-16_maxtext_llama3.1-8b_pdb1";
    let files: Vec<(String, Vec<u8>)> = [
        ".buffer-assignment.txt",
        ".buffer-assignment-values.txt",
        ".live-range.txt",
        ".after_optimizations.txt",
    ]
    .iter()
    .map(|s| {
        (
            format!("{stem}{s}"),
            std::fs::read(dir.join(format!("{stem}{s}"))).unwrap(),
        )
    })
    .collect();
    let load = bufscope::load_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    assert!(load.errors.is_empty(), "{:?}", load.errors);
    let m = &load.modules[0];
    assert_eq!(m.hlo.as_ref().unwrap().devices(), 16);
    let at = |name: &str| {
        m.values
            .iter()
            .position(|v| m.value_name(v) == name)
            .unwrap_or_else(|| panic!("no {name}")) as u32
    };
    let path = |name: &str| bufscope::query::parameter_path(m, &m.values[at(name) as usize]);
    let cats = Categories::new(m);
    let category = |m: &bufscope::model::Module, v: u32| cats.of(m, v);
    // `%param.84 = f32[256,32,14336]… parameter(2), metadata={op_name="state[\'model\']…[\'wi_1\'][\'kernel\'].value"}`
    assert_eq!(
        path("param.84"),
        Some("state['model']['decoder']['layers']['mlp']['wi_1']['kernel'].value")
    );
    assert_eq!(category(m, at("param.84")), Category::ModelParameters);
    // `%param.112 = … parameter(34), metadata={op_name="state[\'optimizer\'][\'opt_state\'][0][\'mu\']…"}`
    assert_eq!(category(m, at("param.112")), Category::OptimizerState);
    // `%param.124 = u32[] parameter(50), metadata={op_name="state[\'optimizer\'][\'step\'].value"}`
    assert_eq!(category(m, at("param.124")), Category::OptimizerState);
    // `%param.74 = s32[1,2048] parameter(51), metadata={op_name="data[\'inputs\']"}`
    assert_eq!(category(m, at("param.74")), Category::Inputs);
    // `%copy.207 = bf16[1,2048,4096] copy(%fusion.446), metadata={op_name="jit(train_step)/transpose(jvp())/while"}`:
    // the backward pass's cotangent of the activations, which flows into no update.
    assert_eq!(category(m, at("copy.207")), Category::Temporaries);
    // `%while.136 = (…, f32[32,256,14336]{2,0,1}, …)`: the backward scan's stacked gradient
    // of `wi_1`, an operand of the optimizer's `multiply_reduce_fusion.5`.
    assert_eq!(category(m, at("while.136{2}")), Category::Gradients);
}

/// `bufscope summary --json` on the folder: the HLO texts read with the dumps, the source
/// lines resolved (file, line, function), the devices said, the other files counted on
/// stderr.
#[test]
fn summary_of_a_folder_reads_its_hlo_texts() {
    let dir = common::fixtures_dir().join("folders/mlp_train");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .args(["summary", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let modules = json["modules"].as_array().unwrap();
    assert_eq!(modules.len(), 3);
    let m = modules
        .iter()
        .find(|m| m["name"].as_str().unwrap().contains("mlp_train_step"))
        .unwrap();
    assert_eq!(
        (
            m["devices"].as_u64(),
            m["num_partitions"].as_u64(),
            m["replica_count"].as_u64()
        ),
        (Some(1), Some(1), Some(1))
    );
    let rows = m["memory_spaces"][0]["answers"]["source_lines"]
        .as_array()
        .unwrap();
    assert!(!rows.is_empty());
    // The innermost frame: the program's own lines, and optax's where the update happens
    // (the groups "(no source)" and "(parameters: …)" aside).
    for r in rows {
        let file = r["file"].as_str().unwrap();
        if !file.starts_with('(') {
            assert!(file.ends_with(".py"), "{r}");
            assert!(
                r["line"].as_u64().unwrap() > 0 && !r["function"].as_str().unwrap().is_empty(),
                "{r}"
            );
        }
    }
    assert!(rows
        .iter()
        .any(|r| r["file"].as_str().unwrap().ends_with("/programs.py")));
}

/// The files of the fixture run `tpu-waste/waste_V` with those of `kinds` (gzipped).
fn waste_run(v: &str, kinds: &[&str]) -> Vec<(String, Vec<u8>)> {
    let dir = common::fixtures_dir().join("tpu-waste");
    (kinds.iter())
        .map(|k| format!("waste_{v}.{k}.gz"))
        .map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap()))
        .collect()
}

/// A text before optimizations that no module read takes is one sentence, never joined to
/// another run's module of the same `HloModule` name (both runs are `jit_train_step`).
#[test]
fn a_text_before_optimizations_without_its_module_is_said() {
    let dump = ["buffer-assignment.txt", "buffer-assignment-values.txt", "live-range.txt", "after_optimizations.txt"];
    let mut files = waste_run("fsdp", &dump);
    files.extend(waste_run("opt_replicated", &["before_optimizations.txt"]));
    let loaded = bufscope::pipeline::open_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    assert_eq!(loaded.modules.len(), 1);
    let m = &loaded.modules[0].module;
    assert!(m.hlo.is_some() && m.hlo_before.is_none(), "the other run's text is not joined");
    assert_eq!(
        loaded.errors,
        ["waste_opt_replicated.before_optimizations.txt.gz is an HLO module text before optimizations, but no dump of its module (waste_opt_replicated) was read beside it: its shardings are not used."]
    );
    assert_eq!(loaded.skipped, 0, "said, not counted among XLA's other output");
}

/// How the page joins the texts it reads after the diagrams ([`place_texts`], the core's
/// join too), on `tpu-aot/turn4/raw_folder_multi`: jit_init's text before optimizations,
/// numbered apart from its dump (0000 / 0003), goes to jit_init; with jit_init's dump left
/// out it is said, not dropped.
#[test]
fn the_page_s_join_places_each_text_or_says_why_not() {
    use bufscope::parse::hlo::{place_texts, read_hlo};
    let Some(dumps) = common::shared_dumps_or_skip("place_texts") else { return };
    let dir = dumps.join("tpu-aot/turn4/raw_folder_multi");
    let mut names: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let plan = bufscope::parse::folder_plan(&names);
    let read = |i: &usize| (names[*i].clone(), std::fs::read(dir.join(&names[*i])).unwrap());
    let dumps: Vec<(String, Vec<u8>)> = plan.dumps.iter().map(read).collect();
    let texts: Vec<_> = plan.hlo.iter().map(read).map(|(n, b)| read_hlo(&n, &b)).collect();
    assert_eq!(texts.len(), 6);
    for without_init in [false, true] {
        let kept = dumps.iter().filter(|(n, _)| !(without_init && n.contains("jit_init")));
        let loaded = bufscope::pipeline::open_files(kept.map(|(n, b)| (n.as_str(), b.as_slice())));
        let modules: Vec<&bufscope::model::Module> = loaded.modules.iter().map(|a| &a.module).collect();
        let placed = place_texts(&modules, &texts);
        let init_before = texts.iter().position(|t| t.file.starts_with("module_0000.jit_init")).unwrap();
        let (_, to) = placed.iter().find(|(r, _)| *r == init_before).unwrap();
        match without_init {
            false => assert_eq!(to.as_ref().ok().map(|&k| modules[k].name.contains("module_0003.jit_init")), Some(true)),
            true => assert!(to.as_ref().is_err_and(|e| e.contains("its shardings are not used")), "{to:?}"),
        }
        let joined = placed.iter().filter(|(_, to)| to.is_ok()).count();
        assert_eq!(joined, if without_init { 4 } else { 6 });
    }
}
