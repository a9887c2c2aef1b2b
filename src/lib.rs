//! bufscope core: bytes of XLA buffer-assignment dumps in, model and analysis out.
//!
//! The data flows one way: [`parse`] (bytes → [`model::Module`]) → [`analysis`] (layout,
//! occupied bytes, peak) → [`answers`] (what the live bytes are made of, at any step) and
//! [`diff`] (two compilations compared) → [`render`] (plotters, any backend) and [`summary`].
//! [`pipeline`] drives reading, joining and analysing in pieces; [`units`] formats numbers
//! for all. The core does no I/O and builds natively and for `wasm32-unknown-unknown`; the
//! CLI (`src/cli/`) and the browser app (`src/ui/`) do the reading. See ARCHITECTURE.md.

pub mod analysis;
pub mod answers;
pub mod diff;
pub mod export;
pub mod model;
pub mod op_path;
pub mod parse;
pub mod pipeline;
pub mod query;
pub mod render;
pub mod shape;
pub mod summary;
pub mod text;
pub mod units;
pub mod view_hash;

pub use parse::{load_files, module_name, Finishing, Load, Loader};
