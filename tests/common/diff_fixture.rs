//! Shared by the diff tests (tests/diff.rs, tests/diff_loads.rs, tests/diff_small.rs, which
//! declare it by path, so the other test binaries do not build it): a fixture module read and
//! analysed, the jax versions of cpu_mlp_train, and the diff of two of them.
#![allow(dead_code)]

use crate::common;
use bufscope::analysis::{analyze, Analysis};
use bufscope::diff::{diff_modules, ModuleDiff, Side};
use bufscope::model::Module;

/// A fixture module (`cpu/jax0.7.2/cpu_mlp_train`) read and analysed.
pub fn load(label: &str) -> (Module, Analysis) {
    let files = common::fixture_module(label);
    let mut l = bufscope::load_files(files.inputs());
    assert!(l.errors.is_empty(), "{label}: {:?}", l.errors);
    let m = l.modules.remove(0);
    let a = analyze(&m);
    (m, a)
}

pub const MLP: [&str; 5] = [
    "cpu/jax0.4.38/cpu_mlp_train",
    "cpu/jax0.6.2/cpu_mlp_train",
    "cpu/jax0.7.2/cpu_mlp_train",
    "cpu/jax0.9.2/cpu_mlp_train",
    "cpu/jax0.10.2/cpu_mlp_train",
];

pub fn d(base: &(Module, Analysis), new: &(Module, Analysis)) -> ModuleDiff {
    diff_modules(Side::new(&base.0, &base.1), Side::new(&new.0, &new.1))
}
