//! Categories on scan-over-layers training steps (issue 34, point 4): the gradients are
//! what flows into the optimizer's update (the backward scan's stacked per-layer gradients
//! among them), the activations the forward pass's residuals, on the real TPU compiles in
//! `../shared/dumps/tpu-aot` with their HLO texts.
//!
//! The truth is the program's (`tpu-aot/programs/tpu_programs.py`, `param_specs`): the LM's
//! parameters are f32, embed and unembed (32000 × 1024) split over the mesh's `model` axis
//! (2), the 8 stacked layers' ln1, ln2 (8 × 1024), wq, wk, wv, wo (8 × 1024 × 16 × 64) and
//! w1, w2 (8 × 1024 × 4096), all but the norms split over `model`: 201,392,128 bytes of
//! stacked layers per device; adamw's gradients have the parameters' shapes and sharding.

mod common;

use bufscope::analysis::analyze;
use bufscope::answers::categories::{by_category, Categories, Category};
use bufscope::answers::live_set;
use bufscope::answers::loops::{ModuleLoops, Role};
use bufscope::model::Module;

/// The stacked layers' parameters of `tpu_programs.py`'s LM per device.
const LAYER_BYTES: u64 = 2 * 8 * 1024 * 4 + 4 * (8 * 1024 * 16 * 64 / 2) * 4 + 2 * (8 * 1024 * 4096 / 2) * 4;

/// The bytes of each category live at `step` (else the peak) of memory space 0.
fn at(m: &Module, step: Option<u32>) -> Vec<(Category, u64)> {
    let a = analyze(m);
    let space = a.spaces.iter().find(|s| s.color == 0).expect("HBM");
    let live = live_set(m, space, step.or(space.peak_time).expect("a peak"));
    let rows = by_category(m, &live);
    assert_eq!(rows.iter().map(|r| r.bytes).sum::<u64>(), live.occupied_bytes, "categories sum to the curve");
    rows.iter().map(|r| (r.category, r.bytes)).collect()
}

fn bytes(rows: &[(Category, u64)], c: Category) -> u64 {
    rows.iter().find(|r| r.0 == c).map_or(0, |r| r.1)
}

/// The elements of the first loop (`forward`) or the last (the backward scan) that a value
/// holds: role, value, category. By their order, not their names: the offload runs' whiles
/// have no op_name.
fn elements(m: &Module, forward: bool) -> Vec<(Role, u32, Category)> {
    let cats = Categories::new(m);
    let ml = ModuleLoops::new(m);
    let steps = ml.loops.loops.iter().enumerate().map(|(i, l)| (l.step, i));
    let li = if forward { steps.min() } else { steps.max() }.expect("a loop").1;
    let hold = ml.hold(li).expect("a hold");
    (hold.elements.iter())
        .filter_map(|e| Some((e.role, e.value?, cats.of(m, e.value?))))
        .collect()
}

/// The bytes of the elements of `els` in category `c`.
fn element_bytes(m: &Module, els: &[(Role, u32, Category)], c: Category) -> u64 {
    els.iter().filter(|e| e.2 == c).map(|e| m.values[e.1 as usize].size).sum()
}

/// The LM's scan runs (2 × 2 mesh, `tpu_programs.py`'s default layers): folder, stem.
const LM_SCANS: [(&str, &str); 12] = [
    ("jax0.12-libtpu0.0.50", "tpu_v5e_lm_scan_remat."),
    ("jax0.12-libtpu0.0.50", "tpu_v6e_lm_scan_remat."),
    ("remat-ladder", "tpu_v5e_lm_scan_plain."),
    ("remat-ladder", "tpu_v5e_lm_scan_dots."),
    ("remat-ladder", "tpu_v5e_lm_scan_save_qkv."),
    ("remat-ladder", "tpu_v5e_lm_scan_remat_b8."),
    ("remat-ladder", "tpu_v5e_lm_scan_remat_b32."),
    ("turn4", "tpu_v5e_lm_scan_remat_b48."),
    ("turn4", "tpu_v5e_lm_scan_remat_b64."),
    ("turn4", "tpu_v5e_lm_scan_remat_s512."),
    ("turn4", "tpu_v5e_lm_scan_offload_dots."),
    ("turn4", "tpu_v5e_lm_scan_offload_qkv."),
];

#[test]
fn grad_backward_scan_stacks_are_the_layers_gradients_on_every_lm_scan() {
    let Some(dumps) = common::shared_dumps_or_skip("grad_backward_scan_stacks_are_the_layers_gradients_on_every_lm_scan") else {
        return;
    };
    for (folder, stem) in LM_SCANS {
        let m = common::load_stem(&dumps.join("tpu-aot").join(folder), stem);
        let back = elements(&m, false);
        let stacks: Vec<_> = back.iter().filter(|e| e.0 == Role::Stacked).collect();
        assert!(stacks.iter().all(|e| e.2 == Category::Gradients), "{stem}: {back:?}");
        // The per-layer gradients the backward scan carries out are the layers' parameters,
        // byte for byte (f32, the same sharding), whatever role the element was given (on
        // v6e two stacks are updated in a way `answers::loops` reads as a carry, in the
        // offload runs all of them).
        assert_eq!(element_bytes(&m, &back, Category::Gradients), LAYER_BYTES, "{stem}: {back:?}");
        // The forward scan's stacks are the residuals kept for the backward pass.
        let fwd = elements(&m, true);
        let fwd_stacks: Vec<_> = fwd.iter().filter(|e| e.0 == Role::Stacked).collect();
        assert!(fwd_stacks.iter().all(|e| e.2 == Category::Activations), "{stem}: {fwd:?}");
        // In the backward scan's body: every layer's gradient and no more than the whole
        // parameters' bytes (the embeddings' gradients, bf16, come after it).
        let ml = ModuleLoops::new(&m);
        let body = ml.loops.loops.iter().max_by_key(|l| l.step).map(|l| l.body_steps[0]);
        let rows = at(&m, body);
        let (g, p) = (bytes(&rows, Category::Gradients), bytes(&rows, Category::ModelParameters));
        assert!(g >= LAYER_BYTES && g <= p, "{stem}: gradients {g}, parameters {p}");
        // Adam's mu and nu, and its step count (a scalar: one tile at most).
        let opt = bytes(&rows, Category::OptimizerState);
        assert!(opt >= 2 * p && opt <= 2 * p + 4096, "{stem}: {rows:?}");
        // At the peak (in the forward pass without remat, in the backward pass with it),
        // the residuals or the gradients are there.
        let rows = at(&m, None);
        assert!(bytes(&rows, Category::Gradients) + bytes(&rows, Category::Activations) >= LAYER_BYTES / 2, "{stem}: {rows:?}");
    }
}

#[test]
fn grad_maxtext_gradients_are_counted_as_gradients() {
    let Some(dumps) = common::shared_dumps_or_skip("grad_maxtext_gradients_are_counted_as_gradients") else { return };
    let m = common::load_stem(&dumps.join("tpu-aot/maxtext0.2.5"), "tpu_v5e-16_maxtext_llama3.1-8b_pdb1.");
    let back = elements(&m, false);
    assert!(back.iter().filter(|e| e.0 == Role::Stacked).all(|e| e.2 == Category::Gradients), "{back:?}");
    // llama3.1-8b's 32 decoder layers, f32, over 16 devices: 218,112,000 weights a layer
    // (q, o 4096²; k, v 4096 × 1024; the MLP's three 4096 × 14336) and two 4096 norms.
    let layers: u64 = 32 * (218_112_000 + 2 * 4096) * 4 / 16;
    let sum = element_bytes(&m, &back, Category::Gradients);
    let off = sum.abs_diff(layers) as f64 / layers as f64;
    assert!(off < 0.01, "stacked gradients {sum} against the layers' {layers}");
    let rows = at(&m, None);
    let (g, p) = (bytes(&rows, Category::Gradients), bytes(&rows, Category::ModelParameters));
    assert!(g >= layers && g <= p, "gradients {g} at the peak, parameters {p}: {rows:?}");
    assert!(bytes(&rows, Category::Activations) > 0, "{rows:?}");
}

#[test]
fn grad_an_inference_step_has_no_gradients_nor_activations() {
    let Some(dumps) = common::shared_dumps_or_skip("grad_an_inference_step_has_no_gradients_nor_activations") else { return };
    let m = common::load_stem(&dumps.join("tpu-aot/jax0.12-libtpu0.0.50"), "tpu_v5e_tiny_matmul.");
    let cats = Categories::new(&m);
    for v in 0..m.values.len() as u32 {
        assert!(!matches!(cats.of(&m, v), Category::Gradients | Category::Activations), "{}", m.value_name(&m.values[v as usize]));
    }
}
