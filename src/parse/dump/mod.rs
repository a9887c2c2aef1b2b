//! The dump reader: the sections of `*-buffer-assignment.txt` (and new XLA's
//! `*-buffer-assignment-values.txt`, `*-live-range.txt`) read into a module's parts, then
//! joined and checked.
//!
//! Owns: each section's grammar and its actions, one [`section::SectionReader`] per
//! section ([`buffer_assignment`], [`used_values`], [`live_range`], [`report`]; [`lex`]
//! their shared tokens, [`records`] the parsed lines they hand on, [`headers`] the one rule
//! of what line opens a section); [`assemble`] keeps a module's parts as they are read
//! ([`instr_names`] finds an instruction by name) and [`join`] joins and checks them once
//! everything is read. Which file goes to which reader is [`super::file`]'s.

pub(super) mod assemble;
pub(super) mod buffer_assignment;
pub(super) mod headers;
pub(super) mod instr_names;
pub(super) mod join;
pub(super) mod lex;
pub(super) mod live_range;
pub(super) mod records;
pub(super) mod report;
pub(super) mod section;
pub(super) mod used_values;
