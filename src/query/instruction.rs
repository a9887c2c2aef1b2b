//! A value's HLO instruction as the details panel shows it, from the HLO text beside the
//! dump ([`Module::hlo`]): its line (shape, opcode, operands, attributes), the computation
//! it lives in, what it calls, its custom call target and sharding; each operand's value,
//! so that the panel can link to it; long attributes shortened with the whole kept.
//!
//! Owns: these derivations (the panel only lays them out), and the parameter's pytree
//! path as a value's second name ([`parameter_path`]).

use crate::model::hlo::{CallRole, NAMED_ATTRS};
use crate::model::{Module, Value};

/// Attribute values longer than this are shortened ([`shorten`]).
pub const ATTR_CHARS: usize = 80;

/// One operand: its name as printed and the value it reads, when the dump has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operand {
    /// As printed, without `%` (`fusion.798#0`, `wide.param.39#0`).
    pub name: String,
    /// Index in [`Module::values`] of the operand's value.
    pub value: Option<u32>,
}

/// One attribute: its key, its value shortened and whether it was ([`shorten`]), and the
/// whole value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribute {
    pub key: String,
    pub short: String,
    pub shortened: bool,
    pub full: String,
}

/// What the details panel shows of a value's instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstructionView {
    pub name: String,
    pub opcode: String,
    pub shape: String,
    pub operands: Vec<Operand>,
    /// A constant's literal or a parameter's number.
    pub literal: Option<String>,
    /// The computation the instruction lives in, and whether it is the entry.
    pub computation: String,
    pub in_entry: bool,
    /// What it calls: `(role, computation)`, the role as XLA prints its attribute
    /// (`calls`, `body`, …).
    pub calls: Vec<(&'static str, String)>,
    pub custom_call_target: Option<String>,
    pub sharding: Option<String>,
    pub attributes: Vec<Attribute>,
    /// 1-based line in the HLO text.
    pub line: u64,
}

/// The attribute name XLA prints for a call role.
pub fn role_key(role: CallRole) -> &'static str {
    match role {
        CallRole::Condition => "condition",
        CallRole::Body => "body",
        CallRole::ToApply => "to_apply",
        CallRole::Branch => "branch_computations",
        CallRole::TrueComputation => "true_computation",
        CallRole::FalseComputation => "false_computation",
        CallRole::Calls => "calls",
    }
}

/// `text` cut to at most `max` characters (an ellipsis at the end), and whether it was.
pub fn shorten(text: &str, max: usize) -> (String, bool) {
    if text.chars().count() <= max {
        return (text.to_string(), false);
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    (out, true)
}

/// The value an operand reads: the dump's value of that instruction, at shape index
/// `{N}` for a TPU's `name#N` (a tuple element it prints no get-tuple-element for), else at
/// `{}` (or no index), else the instruction's first value.
pub fn operand_value(module: &Module, operand: &str) -> Option<u32> {
    let (name, index) = match operand.rsplit_once('#') {
        Some((n, k)) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => {
            (n, format!("{{{k}}}"))
        }
        _ => (operand, "{}".to_string()),
    };
    let mut first = None;
    for (k, v) in module.values.iter().enumerate() {
        if module.str(module.instruction(v).name) != name {
            continue;
        }
        let at = module.str(v.index);
        if at == index || (at.is_empty() && index == "{}") {
            return u32::try_from(k).ok();
        }
        first.get_or_insert(k);
    }
    first.and_then(|k| u32::try_from(k).ok())
}

/// The value's instruction in the module's HLO text; `None` without the text or when the
/// text has no instruction of that name.
pub fn instruction_view(module: &Module, v: &Value) -> Option<InstructionView> {
    let hlo = module.hlo.as_deref()?;
    let name = module.str(module.instruction(v).name);
    let (computation, ins) = hlo.find(name)?;
    let operands = hlo
        .operands(ins)
        .map(|o| Operand {
            name: o.to_string(),
            value: operand_value(module, o),
        })
        .collect();
    let attributes = hlo
        .attrs(ins)
        .filter(|(key, _)| !NAMED_ATTRS.contains(key))
        .map(|(key, full)| {
            let (short, shortened) = shorten(full, ATTR_CHARS);
            Attribute {
                key: key.to_string(),
                short,
                shortened,
                full: full.to_string(),
            }
        })
        .collect();
    let owned = |s: Option<&str>| s.map(str::to_string);
    Some(InstructionView {
        name: hlo.name(ins).to_string(),
        opcode: hlo.opcode(ins).to_string(),
        shape: hlo.shape(ins).to_string(),
        operands,
        literal: owned(hlo.literal(ins)),
        computation: hlo.str(computation.name).to_string(),
        in_entry: hlo.is_entry(computation),
        calls: (hlo.calls(ins).iter())
            .map(|c| (role_key(c.role), hlo.str(c.computation).to_string()))
            .collect(),
        custom_call_target: owned(hlo.custom_call_target(ins)),
        sharding: owned(hlo.sharding(ins)),
        attributes,
        line: u64::from(ins.line),
    })
}

/// A parameter's pytree path, as jax names it in the op_name of the entry computation's
/// `parameter` instruction (`params['layers']['w2']`, MaxText's
/// `state['model']['decoder']…['kernel'].value`); `None` for any other value, or without
/// the HLO text (or the dump's own op_name of a parameter, which the older texts carry).
pub fn parameter_path<'m>(module: &'m Module, v: &Value) -> Option<&'m str> {
    let i = module.instruction(v);
    let hlo = module.hlo.as_deref()?;
    let entry = hlo.computations.get(hlo.entry? as usize)?;
    let ins = hlo.find_in(entry, module.str(i.name))?;
    if hlo.opcode(ins) != "parameter" {
        return None;
    }
    hlo.op_name(ins).filter(|p| !p.is_empty())
}

/// The value's name as the page shows it: `name{index}`, then its pytree path when it is a
/// parameter the HLO text names ([`parameter_path`]).
pub fn display_name(module: &Module, v: &Value) -> String {
    let name = module.value_name(v);
    match parameter_path(module, v) {
        Some(path) => format!("{name} {path}"),
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::load_files;

    const DUMP: &[u8] =
        include_bytes!("../../tests/fixtures/cpu/jax0.10.2/cpu_tiny.buffer-assignment.txt");

    #[test]
    fn shortening() {
        assert_eq!(shorten("abc", 3), ("abc".to_string(), false));
        assert_eq!(shorten("abcdef", 4), ("abc…".to_string(), true));
        assert_eq!(shorten("ééééé", 3), ("éé…".to_string(), true));
    }

    #[test]
    fn without_the_text_nothing() {
        let m = &load_files([("cpu_tiny.buffer-assignment.txt", DUMP)]).modules[0];
        assert!(instruction_view(m, &m.values[0]).is_none());
        assert!(parameter_path(m, &m.values[0]).is_none());
    }
}
