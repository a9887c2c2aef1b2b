//! Waste per device: bytes a sharding or donation mistake costs on every device, from the
//! HLO texts beside the dump (issue 35). The text *before* optimizations prints each entry
//! parameter's global shape, `sharding={…}` and pytree path (`op_name`); the text *after*
//! them the per-device shapes and the header's `input_output_alias` and `buffer_donor`.
//!
//! Owns: the entry parameters as these texts describe them ([`Params`]) and the three
//! answers built on them: values replicated that their peers shard ([`replicated`]),
//! values all-gathered from a parameter and live at the peak ([`gathered`]), and donation
//! ([`donation`]: donated buffers XLA could not use, state held twice for want of one).
//! [`device`] puts the modules of one folder side by side. Each answer says what it
//! needs when the texts are missing, never a guess.

pub mod device;
pub mod donation;
pub mod gathered;
pub mod replicated;

use serde::Serialize;

use crate::analysis::Analysis;
use crate::model::hlo::{HloText, Tiling};
use crate::model::Module;
use crate::parse::hlo::tiling;
use crate::shape::logical_size;

/// What to give for the shardings.
pub const NEEDS_BEFORE: &str = "needs the HLO text before optimizations beside the dump (`*before_optimizations.txt`, which `--xla_dump_to` writes with `--xla_dump_hlo_as_text`): only it prints the entry parameters' shardings";
/// What to give for the per-device shapes and the aliasing.
pub const NEEDS_AFTER: &str = "needs the HLO text after optimizations beside the dump (`*after_optimizations.txt`, written with `--xla_dump_hlo_as_text`): its header says which parameters are aliased or donated";

/// The three answers of one module.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Waste {
    pub replicated: replicated::Replicated,
    pub gathered: gathered::Gathered,
    pub donation: donation::Donation,
}

/// The waste answers of `module` (each says what it needs where a text is missing).
pub fn waste(module: &Module, analysis: &Analysis) -> Waste {
    let params = Params::new(module);
    Waste {
        replicated: replicated::replicated(module, &params),
        gathered: gathered::gathered(module, analysis, &params),
        donation: donation::donation(module, &params),
    }
}

/// One entry parameter as the texts and the dump describe it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Param {
    pub number: u32,
    /// The pytree path JAX prints as the parameter's `op_name` (`params['unembed']`), else
    /// the parameter's name.
    pub path: String,
    /// The global shape (before optimizations), as printed without layout.
    pub global_shape: Option<String>,
    /// `sharding={…}` as printed (before optimizations), and what it cuts.
    pub sharding: Option<String>,
    pub tiling: Option<Tiling>,
    /// The per-device shape (after optimizations, else the dump's), without layout.
    pub shape: Option<String>,
    /// Per device, from `shape`; else the global bytes over the shards.
    pub bytes: Option<u64>,
    /// The dump's values of the parameter's allocation (what selecting it selects).
    pub values: Vec<u32>,
}

impl Param {
    /// Global elements × element size (before optimizations).
    pub fn global_bytes(&self) -> Option<u64> {
        logical_size(self.global_shape.as_deref()?)
    }
}

/// The entry parameters of a module, by number.
#[derive(Clone, Debug, Default)]
pub struct Params {
    pub list: Vec<Param>,
    /// Devices running the program (the texts' partitions × replicas).
    pub devices: u32,
    pub has_before: bool,
    pub has_after: bool,
}

/// A printed shape without its layout (`f32[8,1024]{1,0:T(8,128)}` → `f32[8,1024]`).
pub fn bare(shape: &str) -> &str {
    let s = shape.trim();
    match s.find(']') {
        Some(k) if !s.starts_with('(') => &s[..=k],
        _ => s,
    }
}

impl Params {
    pub fn new(module: &Module) -> Params {
        let before = module.hlo_before.as_deref();
        let after = module.hlo.as_deref();
        let mut list: Vec<Param> = Vec::new();
        if let Some(b) = before {
            for (n, i) in b.entry_parameters() {
                let p = slot(&mut list, n);
                p.path = b.op_name(i).unwrap_or(b.name(i)).to_string();
                p.global_shape = Some(bare(b.shape(i)).to_string());
                p.sharding = b.sharding(i).map(str::to_string);
                p.tiling = p.sharding.as_deref().and_then(tiling);
            }
        }
        for a in &module.allocations {
            let Some(e) = a.parameter.as_ref() else { continue };
            if !module.str(e.shape_index).trim_matches(['{', '}', ' ']).is_empty() {
                continue;
            }
            let p = slot(&mut list, e.number);
            p.values.extend(a.values.clone());
            if !module.str(e.shape).is_empty() {
                p.shape = Some(bare(module.str(e.shape)).to_string());
            }
        }
        if let Some(a) = after {
            for (n, i) in a.entry_parameters() {
                let p = slot(&mut list, n);
                if p.path.is_empty() {
                    p.path = a.op_name(i).unwrap_or_default().to_string();
                }
                p.shape = Some(bare(a.shape(i)).to_string());
            }
        }
        for p in list.iter_mut() {
            if p.path.is_empty() {
                p.path = format!("parameter {}", p.number);
            }
            p.bytes = p.shape.as_deref().and_then(logical_size).or_else(|| {
                let shards = p.tiling.as_ref()?.shards();
                Some(p.global_bytes()?.div_ceil(shards))
            });
        }
        list.sort_by_key(|p| p.number);
        let devices = after.or(before).map_or(1, HloText::devices);
        Params { list, devices, has_before: before.is_some(), has_after: after.is_some() }
    }

    pub fn get(&self, number: u32) -> Option<&Param> {
        self.list.iter().find(|p| p.number == number)
    }
}

/// Parameter `n` of `list`, made when new.
fn slot(list: &mut Vec<Param>, n: u32) -> &mut Param {
    let k = match list.iter().position(|p| p.number == n) {
        Some(k) => k,
        None => {
            list.push(Param { number: n, ..Param::default() });
            list.len() - 1
        }
    };
    &mut list[k]
}
