//! What a value is ([`ValueKind`]): parameter, output, constant, thread-local or temporary,
//! worked out by [`value_kind`] from its allocation's flags, its live range and its opcode.
//! A rule of bufscope's, not a fact printed in the dump, so it lives here and not in the model;
//! render colours blocks by it and the answers group live bytes by it.

use crate::model::{Module, Value};

/// What a value is: the class that colours its block and groups it by category.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ValueKind {
    Parameter,
    Output,
    Constant,
    ThreadLocal,
    Temporary,
}

impl ValueKind {
    pub const ALL: [ValueKind; 5] = [
        ValueKind::Parameter,
        ValueKind::Output,
        ValueKind::Constant,
        ValueKind::ThreadLocal,
        ValueKind::Temporary,
    ];
    pub fn label(self) -> &'static str {
        match self {
            ValueKind::Parameter => "parameter",
            ValueKind::Output => "output",
            ValueKind::Constant => "constant",
            ValueKind::ThreadLocal => "thread-local",
            ValueKind::Temporary => "temporary",
        }
    }
}

/// The kind of value `v` of `module`: constant and thread-local by its allocation's flags,
/// then an entry parameter, then an output when live out (and, with a schedule, live to its
/// end), else a temporary.
pub fn value_kind(module: &Module, v: &Value) -> ValueKind {
    let a = module.allocation_of(v);
    let schedule_end = module.schedule.as_ref().map(|s| s.max);
    if a.flags.constant {
        ValueKind::Constant
    } else if a.flags.thread_local {
        ValueKind::ThreadLocal
    } else if a.parameter.is_some() && is_entry_parameter(module, v) {
        ValueKind::Parameter
    } else if a.flags.maybe_live_out
        && match (v.live, schedule_end) {
            (Some(r), Some(max)) => r.end >= max,
            _ => true,
        }
    {
        ValueKind::Output
    } else {
        ValueKind::Temporary
    }
}

fn is_entry_parameter(module: &Module, v: &Value) -> bool {
    // Entry parameters are live from step 0; the opcode, when a `from instruction:` line
    // told it, rules out other values that share the parameter's buffer.
    let opcode = module.str(module.instruction(v).opcode);
    (opcode.is_empty() || opcode == "parameter") && v.live.is_none_or(|r| r.start == 0)
}
