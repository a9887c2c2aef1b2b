//! One fixture module loaded for the answers tests, and a value found by its name. Declared
//! by path from tests/answers.rs and tests/answers_by_hand.rs (the other test binaries do not
//! build it).

use crate::common;
use bufscope::model::Module;

pub fn load_module(files: &common::ModuleFiles) -> Module {
    let mut load = bufscope::load_files(files.dump_files());
    load.modules.remove(0)
}

pub fn load(label: &str) -> Module {
    load_module(&common::fixture_module(label))
}

pub fn value_named(m: &Module, name: &str) -> u32 {
    (0..m.values.len() as u32)
        .find(|&i| m.value_name(&m.values[i as usize]) == name)
        .unwrap_or_else(|| panic!("no value {name}"))
}
