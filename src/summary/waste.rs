//! The waste answers in `bufscope summary` (issue 35): per module a short "Waste" block
//! (replicated values, gathered weights, donation), and for the set of modules the device
//! block (module ledger, shared arguments, recompiles, worst case). Present only where an
//! HLO text was read beside a dump, so a summary without one is as it was.

use crate::analysis::Analysis;
use crate::answers::waste::device::{device as device_answer, Device};
use crate::answers::waste::Waste;
use crate::model::Module;
use crate::units::{group_digits, human_bytes};

use super::answers::SummaryOptions;
use super::printable;

/// Rows listed per finding; the rest are counted.
const ROWS: usize = 5;

/// Whether `module` has an HLO text, before or after optimizations.
pub fn has_texts(module: &Module) -> bool {
    module.hlo.is_some() || module.hlo_before.is_some()
}

/// The device's answer when any module has an HLO text.
pub fn device(modules: &[(&Module, &Analysis)], options: &SummaryOptions) -> Option<Device> {
    if !modules.iter().any(|(m, _)| has_texts(m)) {
        return None;
    }
    let capacity = options.capacity.as_ref().filter(|c| c.space == 0).map(|c| c.bytes);
    Some(device_answer(modules.iter().copied(), capacity))
}

/// `  … and N more` when `n` rows were left out.
fn more(n: usize) -> String {
    match n {
        0 => String::new(),
        n => format!("      … and {n} more\n"),
    }
}

/// The module's "Waste" block.
pub fn waste_block(w: &Waste) -> String {
    let mut out = String::from("  Waste (per device)\n");
    let r = &w.replicated;
    match &r.needs {
        Some(n) if r.values.is_empty() => out.push_str(&format!("    replicated: {n}\n")),
        _ => {
            out.push_str(&format!(
                "    replicated that peers shard: {} values, {} saved if sharded like them ({})\n",
                r.values.len(),
                human_bytes(r.saving_bytes),
                r.note
            ));
            for v in r.values.iter().take(ROWS) {
                out.push_str(&format!(
                    "      {}  {} in {} piece(s), {} per device; {} saved cut in {} like {}\n",
                    printable(&v.path),
                    v.global_shape,
                    v.shards,
                    human_bytes(v.per_device_bytes),
                    human_bytes(v.saving_bytes),
                    v.peer_shards,
                    printable(&v.peer)
                ));
            }
            out.push_str(&more(r.values.len().saturating_sub(ROWS)));
        }
    }
    let g = &w.gathered;
    match &g.needs {
        Some(n) => out.push_str(&format!("    gathered: {n}\n")),
        None => out.push_str(&format!(
            "    gathered from parameters: {} values (of {} all-gathers), {} live at the peak\n",
            g.values.len(),
            g.total,
            human_bytes(g.bytes_at_peak)
        )),
    }
    let d = &w.donation;
    if let Some(n) = &d.needs {
        out.push_str(&format!("    donation: {n}\n"));
        return out;
    }
    out.push_str(&format!(
        "    donation: {} parameters aliased ({}); {} left over ({}); {} double buffered ({} saved by donating them)\n",
        group_digits(u64::from(d.aliased)),
        human_bytes(d.aliased_bytes),
        d.left_over.len(),
        human_bytes(d.left_over_bytes),
        d.double_buffered.len(),
        human_bytes(d.double_buffered_bytes)
    ));
    let moved = d.moved.iter().take(ROWS);
    for r in d.left_over.iter().chain(moved).chain(d.double_buffered.iter().take(ROWS)) {
        out.push_str(&format!("      {}  {} {}: {}\n", printable(&r.path), r.shape, human_bytes(r.bytes), r.why));
    }
    out.push_str(&more(d.double_buffered.len().saturating_sub(ROWS)));
    out
}

/// The device block, after the modules.
pub fn device_block(d: &Device) -> String {
    let mut out = String::from("\ndevice (the modules side by side)\n");
    for l in &d.modules {
        out.push_str(&format!(
            "  {}  {}: peak {}, arguments {}\n",
            printable(&l.jit_name),
            printable(&l.name),
            human_bytes(l.peak_bytes),
            human_bytes(l.argument_bytes)
        ));
    }
    if let Some(w) = &d.worst_module {
        let against = d.capacity_bytes.map_or_else(String::new, |c| format!(" against {}", human_bytes(c)));
        out.push_str(&format!(
            "  worst case {} ({}){against}, of which {} are arguments other modules share (resident between calls)\n",
            human_bytes(d.worst_case_bytes),
            printable(w),
            human_bytes(d.resident_bytes)
        ));
    }
    out.push_str(&format!("  {} arguments shared between modules\n", d.shared_arguments.len()));
    for (name, n) in &d.recompiles {
        out.push_str(&format!("  {} compiled {n} times\n", printable(name)));
    }
    out
}
