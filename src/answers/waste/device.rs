//! The device as a whole: the modules of one dump folder side by side (init, train step,
//! eval step; pipeline stages; recompiles).
//!
//! Owns: the module ledger (each module's peak in the device's memory, colour 0, and its
//! arguments), the arguments modules share (by pytree path and per-device shape), modules
//! per jit name (a recompile storm, counted) and the device's worst case: the largest
//! peak, with the arguments other modules share with it (what stays resident between
//! calls), against a capacity when one is given.

use serde::Serialize;

use super::Params;
use crate::analysis::Analysis;
use crate::model::{xla_module_name, Module};

/// The answer for a set of modules.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Device {
    /// In the order given.
    pub modules: Vec<Ledger>,
    /// Arguments two or more modules take, largest first.
    pub shared_arguments: Vec<SharedArgument>,
    /// Jit names compiled more than once, with how many modules each.
    pub recompiles: Vec<(String, u32)>,
    /// The module with the largest peak and that peak (colour 0), per device.
    pub worst_module: Option<String>,
    pub worst_case_bytes: u64,
    /// Of that peak, the arguments another module shares (resident between calls).
    pub resident_bytes: u64,
    pub capacity_bytes: Option<u64>,
}

/// One module of the ledger.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Ledger {
    pub name: String,
    pub jit_name: String,
    pub peak_bytes: u64,
    /// Its entry parameters' bytes, per device (from the dump's parameter allocations).
    pub argument_bytes: u64,
}

/// One argument shared by several modules.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SharedArgument {
    pub path: String,
    pub shape: String,
    pub bytes: u64,
    pub modules: Vec<String>,
}

/// The jit name of a module: its text's `HloModule` name, else the one in its file name.
pub fn jit_name(module: &Module) -> String {
    match module.hlo.as_deref().or(module.hlo_before.as_deref()) {
        Some(h) if !h.name.is_empty() => h.name.clone(),
        _ => xla_module_name(&module.name),
    }
}

/// The device's answer for `modules`, held against `capacity` bytes when given.
pub fn device<'a>(
    modules: impl IntoIterator<Item = (&'a Module, &'a Analysis)>,
    capacity: Option<u64>,
) -> Device {
    let mut d = Device { capacity_bytes: capacity, ..Device::default() };
    let mut args: Vec<(String, Vec<(String, String, u64)>)> = Vec::new();
    for (m, a) in modules {
        let params = Params::new(m);
        let peak = a.spaces.iter().find(|s| s.color == 0).map_or(0, |s| s.peak_bytes);
        let argument_bytes = (m.allocations.iter())
            .filter(|x| x.parameter.is_some() && x.color == 0)
            .map(|x| x.size)
            .sum();
        let jit = jit_name(m);
        match d.recompiles.iter_mut().find(|r| r.0 == jit) {
            Some(r) => r.1 += 1,
            None => d.recompiles.push((jit.clone(), 1)),
        }
        d.modules.push(Ledger { name: m.name.clone(), jit_name: jit, peak_bytes: peak, argument_bytes });
        let list = (params.list.iter())
            .filter(|p| !p.path.starts_with("parameter "))
            .map(|p| (p.path.clone(), p.shape.clone().unwrap_or_default(), p.bytes.unwrap_or(0)))
            .collect();
        args.push((m.name.clone(), list));
    }
    d.recompiles.retain(|r| r.1 > 1);
    d.shared_arguments = shared(&args);
    let worst = d.modules.iter().max_by_key(|l| l.peak_bytes);
    if let Some(w) = worst {
        d.worst_module = Some(w.name.clone());
        d.worst_case_bytes = w.peak_bytes;
        d.resident_bytes = d.shared_bytes(&w.name);
    }
    d
}

impl Device {
    /// The bytes of module `name`'s arguments that another module shares.
    pub fn shared_bytes(&self, name: &str) -> u64 {
        (self.shared_arguments.iter())
            .filter(|s| s.modules.iter().any(|m| m == name))
            .map(|s| s.bytes)
            .sum()
    }

    /// How many modules of the set were compiled under jit name `jit` (1 when once).
    pub fn compiles(&self, jit: &str) -> u32 {
        self.recompiles.iter().find(|r| r.0 == jit).map_or(1, |r| r.1)
    }
}

/// The (path, shape) pairs found in two or more modules' arguments, largest first.
fn shared(args: &[(String, Vec<(String, String, u64)>)]) -> Vec<SharedArgument> {
    let mut out: Vec<SharedArgument> = Vec::new();
    for (module, list) in args {
        for (path, shape, bytes) in list {
            match out.iter_mut().find(|s| &s.path == path && &s.shape == shape) {
                Some(s) if !s.modules.contains(module) => s.modules.push(module.clone()),
                Some(_) => {}
                None => out.push(SharedArgument {
                    path: path.clone(),
                    shape: shape.clone(),
                    bytes: *bytes,
                    modules: vec![module.clone()],
                }),
            }
        }
    }
    out.retain(|s| s.modules.len() > 1);
    out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.path.cmp(&b.path)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;

    #[test]
    fn a_jit_name_compiled_three_times_is_a_recompile_counted() {
        let names = [
            "module_0001.jit_step.cl_1.after_optimizations",
            "module_0007.jit_step.cl_1.after_optimizations",
            "module_0009.jit_eval.cl_1.after_optimizations",
            "module_0012.jit_step.cl_1.after_optimizations",
        ];
        let modules: Vec<Module> = (names.iter()).map(|n| Module { name: n.to_string(), ..Module::default() }).collect();
        let analyses: Vec<Analysis> = modules.iter().map(analyze).collect();
        let d = device(modules.iter().zip(&analyses), Some(1 << 30));
        assert_eq!(d.recompiles, [("jit_step".to_string(), 3)]);
        assert_eq!((d.compiles("jit_step"), d.compiles("jit_eval")), (3, 1));
        assert_eq!(d.shared_bytes(names[0]), 0);
        assert_eq!(d.modules.len(), 4);
        assert_eq!((d.worst_case_bytes, d.resident_bytes, d.capacity_bytes), (0, 0, Some(1 << 30)));
        assert!(d.shared_arguments.is_empty());
    }
}
