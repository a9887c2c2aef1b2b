//! What a value is ([`ValueKind`]): parameter, output, constant, thread-local, custom-call
//! scratch or temporary, worked out by [`value_kind`] from its allocation's flags, its live
//! range, its opcode, and for scratch its instruction's name and shape.
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
    /// A custom call's workspace: a byte array (`s8[N]`, `u8[N]`) the call outputs beside its
    /// result (cuBLAS's and cuDNN's workspaces, `custom-call.12{1}`).
    Scratch,
    Temporary,
}

impl ValueKind {
    pub const ALL: [ValueKind; 6] = [
        ValueKind::Parameter,
        ValueKind::Output,
        ValueKind::Constant,
        ValueKind::ThreadLocal,
        ValueKind::Scratch,
        ValueKind::Temporary,
    ];
    pub fn label(self) -> &'static str {
        match self {
            ValueKind::Parameter => "parameter",
            ValueKind::Output => "output",
            ValueKind::Constant => "constant",
            ValueKind::ThreadLocal => "thread-local",
            ValueKind::Scratch => "custom-call scratch",
            ValueKind::Temporary => "temporary",
        }
    }
}

/// The kind of value `v` of `module`: constant and thread-local by its allocation's flags,
/// then an entry parameter, then an output when live out (and, with a schedule, live to its
/// end), then custom-call scratch ([`is_custom_call_scratch`]), else a temporary.
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
    } else if is_custom_call_scratch(module, v) {
        ValueKind::Scratch
    } else {
        ValueKind::Temporary
    }
}

/// Whether `v` is a custom call's workspace: a one-dimensional byte array (`s8[N]` or
/// `u8[N]`, any layout) in a tuple output (an index printed) of an instruction named as XLA
/// names custom calls (`custom-call`, and the GPU's `cublas-…`, `cudnn-…` calls). By name, not
/// opcode, so that a module read with its `Used values` left for later is the same.
pub fn is_custom_call_scratch(module: &Module, v: &Value) -> bool {
    let shape = module.str(v.shape);
    let bytes = ["s8[", "u8["].iter().any(|p| {
        shape.strip_prefix(p).is_some_and(|rest| {
            let dims = rest.split(']').next().unwrap_or("");
            !dims.is_empty() && dims.bytes().all(|b| b.is_ascii_digit())
        })
    });
    if !bytes || module.str(v.index).is_empty() {
        return false;
    }
    let name = module.str(module.instruction(v).name);
    ["custom-call", "cublas", "cudnn"]
        .iter()
        .any(|p| name.starts_with(p))
}

fn is_entry_parameter(module: &Module, v: &Value) -> bool {
    // Entry parameters are live from step 0; the opcode, when a `from instruction:` line
    // told it, rules out other values that share the parameter's buffer.
    let opcode = module.str(module.instruction(v).opcode);
    (opcode.is_empty() || opcode == "parameter") && v.live.is_none_or(|r| r.start == 0)
}
