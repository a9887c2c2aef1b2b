//! The records the section readers hand to a module's `Builder` (`assemble.rs`): one parsed
//! line each, borrowing the line's bytes. Types only; each grammar stays in its reader
//! (`buffer_assignment::value_line`, `used_values::instruction`). Owning them here, below
//! both the readers and the builder, keeps the readers → section → builder flow one-way.

use super::lex::ShortValue;

/// ` value: <...> (size=N,offset=N): SHAPE` of an allocation.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ValueLine<'a> {
    pub value: ShortValue<'a>,
    pub size: u64,
    pub offset: u64,
    pub shape: &'a [u8],
}

/// What is kept of an instruction's text.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct InstrInfo<'a> {
    pub name: &'a [u8],
    pub opcode: &'a [u8],
    pub op_name: Option<std::borrow::Cow<'a, [u8]>>,
    pub source_file: Option<std::borrow::Cow<'a, [u8]>>,
    pub source_line: Option<u32>,
    pub stack_frame_id: Option<u32>,
}
