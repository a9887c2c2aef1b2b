//! A `from instruction:` text that spans several lines (issue 25): MaxText's splash-attention
//! Pallas kernels print a `frontend_attributes` / `backend_config` holding a newline. It is
//! read whole: no warning, the op_name and source kept, one pass and the deferred read
//! alike. On `tests/fixtures/edited/cpu_tiny_multiline` (two such texts, the first entry's
//! and the last one's) and on the MaxText dump of ../shared (skipped visibly without it),
//! where the 20 continuation lines (`"xprof_metadata"…`, `}}, metadata={op_name=…`) warned
//! before.

mod common;

use bufscope::model::Module;
use common::*;

fn op_name_of(m: &Module, value_name: &str) -> String {
    let v = (m.values.iter())
        .find(|v| m.value_name(v) == value_name)
        .unwrap_or_else(|| panic!("no value {value_name}"));
    m.str(m.instruction(v).op_name).to_string()
}

#[test]
fn the_edited_fixture_reads_whole_both_ways() {
    let m = fixture_module("edited/cpu_tiny_multiline");
    let inputs = m.inputs();
    let load = load_both_ways(&inputs, &m.label);
    let module = &load.modules[0];
    assert!(module.warnings.is_empty(), "{:?}", module.warnings);
    // As in the dump: the metadata on the line after the text's newline(s).
    assert_eq!(op_name_of(module, "y.1"), "y");
    assert_eq!(op_name_of(module, "x.1"), "x");
    assert_eq!(
        op_name_of(module, "broadcast_add_fusion"),
        "jit(tiny_elementwise)/add"
    );
    let fusion = (module.values.iter())
        .find(|v| module.value_name(v) == "broadcast_add_fusion")
        .unwrap();
    let i = module.instruction(fusion);
    assert_eq!(module.str(i.opcode), "fusion");
    assert_eq!(i.stack_frame_id, Some(4));
    // The deferred read skipped the body and completed it without falling back.
    for jump in [false, true] {
        let (first, deferred) = load_deferred(&inputs, 1 << 20, jump);
        assert!(first.is_some(), "jump {jump}: fell back to one pass");
        assert_same_load(&bufscope::load_files(inputs.iter().copied()), &deferred, "edited");
    }
    // The unedited dump reads the same op_names: the edit lost nothing.
    let plain = fixture_module("cpu/jax0.10.2/cpu_tiny");
    let plain = bufscope::load_files(plain.inputs().iter().copied());
    for name in ["y.1", "x.1", "broadcast_add_fusion"] {
        assert_eq!(op_name_of(&plain.modules[0], name), op_name_of(module, name));
    }
}

#[test]
fn the_maxtext_dump_reads_without_warnings() {
    let Some(dir) = shared_dumps_or_skip("the_maxtext_dump_reads_without_warnings") else {
        return;
    };
    let modules = modules_under(&dir.join("tpu-aot/maxtext0.2.5"), |_, _| true);
    let [m] = modules.as_slice() else {
        panic!("{} modules", modules.len())
    };
    let inputs = m.inputs();
    let values = inputs
        .iter()
        .find(|(n, _)| n.ends_with("buffer-assignment-values.txt"))
        .unwrap()
        .1;
    // The lines of the values file that start with neither `<` nor a space nor are blank,
    // after the section's header: the continuations of several-line texts.
    let text = String::from_utf8_lossy(values);
    let body = &text[text.find("\nUsed values:\n").unwrap() + 14..];
    let continuations: Vec<&str> = body
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(['<', ' ']))
        .collect();
    assert_eq!(continuations.len(), 20);
    let load = load_both_ways(&inputs, &m.label);
    let module = &load.modules[0];
    let malformed: Vec<_> = (module.warnings.iter())
        .filter(|w| w.message.contains("malformed"))
        .collect();
    assert!(malformed.is_empty(), "{malformed:?}");
    // Each `}}, metadata={op_name="…"` continuation gave its instruction that op_name.
    let named: Vec<&str> = continuations
        .iter()
        .filter_map(|l| l.split("metadata={op_name=\"").nth(1))
        .filter_map(|l| l.split('"').next())
        .collect();
    assert_eq!(named.len(), 10);
    for op in named {
        assert!(
            module
                .values
                .iter()
                .any(|v| module.str(module.instruction(v).op_name) == op),
            "no value has op_name {op}"
        );
    }
    let (first, deferred) = load_deferred(&inputs, 1 << 20, true);
    assert!(first.is_some(), "fell back to one pass");
    assert_same_load(&bufscope::load_files(inputs.iter().copied()), &deferred, "maxtext");
}
