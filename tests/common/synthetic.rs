//! Small dumps written by hand for the grammar tests: loading them (one module, sane and
//! analysed), finding a value by id, and `BASE`, a complete dump of the 2024-11 .. 2025-04
//! era to vary from, with the check of its model. Declared by path from
//! tests/synthetic_eras.rs and tests/synthetic_files.rs (the other test binaries do not
//! build it; each uses part of it).
#![allow(dead_code)]

use crate::common;
use bufscope::model::Module;
use bufscope::{load_files, Load};

pub fn load(files: &[(&str, &str)]) -> Load {
    load_files(files.iter().map(|(n, t)| (*n, t.as_bytes())))
}

pub fn one(files: &[(&str, &str)]) -> Module {
    let l = load(files);
    assert!(l.errors.is_empty(), "errors: {:?}", l.errors);
    assert_eq!(
        l.modules.len(),
        1,
        "modules: {:?}",
        l.modules.iter().map(|m| &m.name).collect::<Vec<_>>()
    );
    let m = l.modules.into_iter().next().unwrap();
    common::check_sane_and_analyze(&m, "synthetic");
    m
}

pub fn no_warnings(m: &Module) {
    assert!(m.warnings.is_empty(), "warnings: {:#?}", m.warnings);
}

pub fn value<'a>(m: &'a Module, id: u32) -> &'a bufscope::model::Value {
    m.values
        .iter()
        .find(|v| v.id == id)
        .unwrap_or_else(|| panic!("no value {id}"))
}

pub fn name_of(m: &Module, id: u32) -> String {
    m.value_name(value(m, id))
}

/// A complete small dump of the 2024-11 .. 2025-04 era (single file, `from instruction: `
/// with a space and a newline, peak list `name: N bytes`), to vary from.
pub const BASE: &str = "\
BufferAssignment:
allocation 0: size 64, output shape is |f32[16]|, maybe-live-out:
 value: <3 add.1 @0> (size=64,offset=0): f32[16]{0}
allocation 1: size 64, parameter 0, shape |f32[16]| at ShapeIndex {}:
 value: <1 p.0 @0> (size=64,offset=0): f32[16]{0}
allocation 2: size 128, preallocated-temp:
 value: <2 mul.2 @0> (size=64,offset=64): f32[16]{0}

Total bytes used: 256 (256B)

Used values:
<1 p.0 @0>
 positions:
  p.0
 uses:
  mul.2, operand 0
 from instruction: %p.0 = f32[16]{0} parameter(0)
<2 mul.2 @0>
 positions:
  mul.2
 uses:
  add.1, operand 0
 from instruction: %mul.2 = f32[16]{0} multiply(%p.0, %p.0)
<3 add.1 @0>
 positions:
  add.1
 uses:
 from instruction: %add.1 = f32[16]{0} add(%mul.2, %mul.2)


HloLiveRange (max 3):
  InstructionSequence:
    0:p.0
    1:mul.2
    2:add.1
  BufferLiveRange:
    p.0{}:0-3
    mul.2{}:1-2
    add.1{}:2-3
  Live ranges at 2 (peak):
    p.0: 64 bytes
    mul.2: 64 bytes
    add.1: 64 bytes
";

pub fn check_base_model(m: &Module) {
    assert_eq!(m.allocations.len(), 3);
    assert_eq!(m.values.len(), 3);
    assert_eq!(m.total_bytes(), 256);
    assert_eq!(m.total_bytes_line, Some(256));
    let mul = value(m, 2);
    assert_eq!((mul.allocation, mul.offset, mul.size), (2, 64, 64));
    assert_eq!(mul.live.map(|r| (r.start, r.end)), Some((1, 2)));
    assert_eq!(m.str(m.instruction(mul).opcode), "multiply");
    let (pos, uses) = m.positions_and_uses(mul).unwrap();
    assert_eq!(pos, ["mul.2"]);
    assert_eq!(uses, ["add.1, operand 0"]);
    let s = m.schedule.as_ref().unwrap();
    assert_eq!(s.max, 3);
    assert_eq!(s.sequence.len(), 3);
}
