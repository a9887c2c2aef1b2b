//! What a value is, for colouring: [`ValueKind`], worked out from its allocation's flags and
//! its live range by [`value_kind`], and the palette that paints each kind. A drawing
//! heuristic, not a fact of the dump, so it lives with the drawing rather than in the model.

use crate::model::{Module, Value};
use plotters::style::RGBColor;

/// What a value is, for colouring.
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

/// The fill colour of a value of this kind.
pub fn kind_color(kind: ValueKind) -> RGBColor {
    match kind {
        ValueKind::Parameter => RGBColor(0x5b, 0x8f, 0xd0),
        ValueKind::Output => RGBColor(0xf3, 0x9c, 0x45),
        ValueKind::Constant => RGBColor(0xb5, 0x8b, 0xc6),
        ValueKind::ThreadLocal => RGBColor(0xa9, 0x84, 0x67),
        ValueKind::Temporary => RGBColor(0x6d, 0xbe, 0x8c),
    }
}

/// The border of a block: its colour, darker.
pub(super) fn border_color(c: RGBColor) -> RGBColor {
    let d = |v: u8| (f64::from(v) * 0.62).round() as u8;
    RGBColor(d(c.0), d(c.1), d(c.2))
}

/// A kind's position in [`ValueKind::ALL`] (how legends, coverage rasters and levels of
/// detail store it), and back.
pub(super) fn kind_index(kind: ValueKind) -> usize {
    ValueKind::ALL.iter().position(|&k| k == kind).unwrap_or(0)
}

pub(super) fn kind_at(index: usize) -> ValueKind {
    ValueKind::ALL[index.min(ValueKind::ALL.len() - 1)]
}
