//! XProf's Memory Viewer figures for a memory space, and the three peaks of a space (bufscope's
//! occupied peak, XLA's peak list, XProf's peak heap) each explained in one sentence.
//!
//! XProf (`hlo_proto_to_memory_visualization_utils.cc`) simulates the heap of the space's
//! temporary allocation from XLA's heap-simulator trace and adds every allocation whose
//! lifetime is the whole program. From the text dump, with the trace absent:
//! * **peak heap** = the highest occupied bytes inside the space's `preallocated-temp`
//!   allocation(s) (at one step, all of them together) + the size of every allocation of the
//!   space that is an entry parameter, `maybe-live-out` or constant (each once).
//!   Thread-local allocations are left out, and so is an allocation holding no value of
//!   non-zero size (XProf counts an allocation through its largest value). The space is the
//!   allocation's colour.
//! * **fragmentation** = (total − peak heap) / (total − parameter, maybe-live-out and
//!   constant bytes), where total is the sum of the space's allocation sizes, thread-local
//!   ones left out; 0 when the denominator is 0.
//!
//! The occupied bytes inside the temporary allocations are the occupied-bytes curve of their
//! values' blocks alone (`analysis::occupied_curve`, the sweep that makes the space's curve).

use serde::Serialize;

use crate::analysis::{occupied_curve, Space};
use crate::answers::peaks::{xla_peak_bytes, xla_peak_step};
use crate::model::{Allocation, Module};
use crate::units::{group_digits, human_bytes};

/// XProf's figures for one memory space.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct XprofFigures {
    pub color: u32,
    /// XProf's "peak heap": `temp_peak_bytes + indefinite_bytes`.
    pub xprof_peak_heap_bytes: u64,
    /// Highest occupied bytes inside the space's `preallocated-temp` allocation(s).
    pub temp_peak_bytes: u64,
    /// First step where it is reached.
    pub temp_peak_step: Option<u32>,
    /// Sizes of the entry-parameter, `maybe-live-out` and constant allocations.
    pub indefinite_bytes: u64,
    /// Sizes of the space's allocations, thread-local ones left out.
    pub total_bytes: u64,
    /// `(total − peak heap) / (total − indefinite)`.
    pub fragmentation: f64,
}

pub(crate) fn is_temp(a: &Allocation, color: u32) -> bool {
    a.color == color && a.flags.preallocated_temp
}

fn is_indefinite(module: &Module, a: &Allocation) -> bool {
    let held = module
        .values
        .get(a.values.start as usize..a.values.end as usize)
        .is_some_and(|vs| vs.iter().any(|v| v.size > 0));
    held && (a.parameter.is_some() || a.flags.maybe_live_out || a.flags.constant)
}

/// XProf's peak heap and fragmentation for `space`.
pub fn xprof_figures(module: &Module, space: &Space) -> XprofFigures {
    let color = space.color;
    let own = || module.allocations.iter().filter(move |a| a.color == color);
    let total_bytes = own()
        .filter(|a| !a.flags.thread_local)
        .fold(0u64, |s, a| s.saturating_add(a.size));
    let indefinite_bytes = own()
        .filter(|a| !a.flags.thread_local && is_indefinite(module, a))
        .fold(0u64, |s, a| s.saturating_add(a.size));
    let temp = temp_curve(module, space);
    let (temp_peak_step, temp_peak_bytes) = temp
        .iter()
        .enumerate()
        .rev()
        .max_by_key(|&(_, b)| *b)
        .filter(|&(_, b)| *b > 0)
        .map_or((None, 0), |(t, &b)| (Some(t as u32), b));
    let peak = temp_peak_bytes.saturating_add(indefinite_bytes);
    let spare = total_bytes.saturating_sub(indefinite_bytes);
    XprofFigures {
        color,
        xprof_peak_heap_bytes: peak,
        temp_peak_bytes,
        temp_peak_step,
        indefinite_bytes,
        total_bytes,
        fragmentation: if spare == 0 {
            0.0
        } else {
            total_bytes.saturating_sub(peak) as f64 / spare as f64
        },
    }
}

/// Occupied bytes inside the space's temporary allocations at each step: the occupied-bytes
/// curve of their blocks alone ([`occupied_curve`]).
fn temp_curve(module: &Module, space: &Space) -> Vec<u64> {
    let temp = space.blocks(module).filter(|b| {
        let v = &module.values[b.value as usize];
        is_temp(module.allocation_of(v), space.color)
    });
    occupied_curve(temp.collect(), space.curve.len() as u32)
}

/// One of the three peak figures, with what it counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PeakFigure {
    pub bytes: Option<u64>,
    pub step: Option<u32>,
    /// One sentence: what the figure counts.
    pub sentence: String,
}

/// bufscope's occupied peak, XLA's peak list and XProf's peak heap of one memory space.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ThreePeaks {
    pub color: u32,
    pub occupied: PeakFigure,
    pub xla: PeakFigure,
    pub xprof: PeakFigure,
}

fn at(step: Option<u32>) -> String {
    step.map_or_else(String::new, |t| {
        format!(" at step {}", group_digits(u64::from(t)))
    })
}

/// The three peaks of `space`, each explained in one sentence; `f` is the space's
/// [`xprof_figures`].
pub fn three_peaks(module: &Module, space: &Space, f: &XprofFigures) -> ThreePeaks {
    ThreePeaks {
        color: space.color,
        occupied: occupied_peak(space),
        xla: xla_peak(module),
        xprof: xprof_peak(f),
    }
}

/// bufscope's occupied peak of `space`, with what it counts.
pub fn occupied_peak(space: &Space) -> PeakFigure {
    PeakFigure {
        bytes: Some(space.peak_bytes),
        step: space.peak_time,
        sentence: format!(
            "bufscope's peak, {}{}: the most bytes of this memory space covered at one step by live values, at their allocated sizes (padding included), bytes shared by several values counted once; thread-local values have no live range and are left out.",
            human_bytes(space.peak_bytes),
            at(space.peak_time)
        ),
    }
}

/// XLA's peak list of the module, with what it counts.
pub fn xla_peak(module: &Module) -> PeakFigure {
    let (xla_bytes, xla_step) = (xla_peak_bytes(module), xla_peak_step(module));
    PeakFigure {
        bytes: xla_bytes,
        step: xla_step,
        sentence: match xla_bytes {
            Some(b) => format!(
                "XLA's peak list, {}{}: the sum of the logical sizes (no padding) of the values live at the step where that sum is highest, every memory space together, a value sharing another's buffer counted again.",
                human_bytes(b),
                at(xla_step)
            ),
            None => "XLA's peak list: this dump prints none (the live-range section is missing, too old, or the peak was undetermined).".to_string(),
        },
    }
}

/// XProf's peak heap of a space whose [`xprof_figures`] are `f`, with what it counts.
pub fn xprof_peak(f: &XprofFigures) -> PeakFigure {
    PeakFigure {
        bytes: Some(f.xprof_peak_heap_bytes),
        step: f.temp_peak_step,
        sentence: format!(
            "XProf's peak heap, {}: the highest occupied bytes inside the temporary allocation(s), {}{}, plus every parameter, maybe-live-out and constant allocation whole, {}, as if all were live throughout; thread-local allocations left out.",
            human_bytes(f.xprof_peak_heap_bytes),
            human_bytes(f.temp_peak_bytes),
            at(f.temp_peak_step),
            human_bytes(f.indefinite_bytes)
        ),
    }
}
