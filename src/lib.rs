//! bufscope core: bytes of XLA buffer-assignment dumps in, model and analysis out.
//!
//! The data flows one way: [`parse`] (bytes → [`model::Module`]) → [`analysis`] (layout,
//! occupied bytes, peak) → [`render`] (plotters, any backend) and [`summary`]. The core does
//! no I/O and builds natively and for `wasm32-unknown-unknown`; the CLI (`src/cli.rs`) and
//! the browser app (`src/ui/`) do the reading. See ARCHITECTURE.md.

pub mod analysis;
pub mod diff;
pub mod model;
pub mod parse;
pub mod query;
pub mod render;
pub mod shape;
pub mod summary;

pub use parse::{load_files, module_name, Finishing, Load, Loader};
