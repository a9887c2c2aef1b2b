//! The model: what a buffer-assignment dump says, as plain Rust types in XLA's vocabulary
//! (module, allocation, value, instruction, schedule, live range, memory space).
//!
//! Owns: the data, nothing else. It has no parser and no analysis. Strings are interned into
//! one arena per module ([`Strings`]) and referred to by [`Str`] handles, so a 1 GB dump does
//! not become millions of small heap strings; the text of `from instruction:` lines is not
//! kept, only what a user needs from it ([`Instruction`]). The other inputs' types live
//! beside it: [`hlo`], the HLO module text; [`oom`], what an out-of-memory message says.

pub mod hlo;
mod names;
pub mod oom;
mod strings;
mod table_hash;
pub use names::{shown_module_names, without_compilation_parts, xla_module_name};
pub(crate) use strings::utf8_lossy;
pub use strings::{LastInterned, Str, Strings};
pub use table_hash::TableHash;

/// Index of an [`Instruction`] in [`Module::instructions`].
pub type InstrId = u32;

/// An HLO instruction named in the dump. Everything but `name` comes from the
/// `from instruction:` line of one of its values and is empty when there was none.
#[derive(Clone, Copy, Debug, Default)]
pub struct Instruction {
    pub name: Str,
    pub opcode: Str,
    /// `metadata={op_name="..."}`, unescaped.
    pub op_name: Str,
    pub source_file: Str,
    /// 0 when absent.
    pub source_line: u32,
    /// `metadata={stack_frame_id=N}` (new XLA replaces source_file/line with it).
    pub stack_frame_id: Option<u32>,
}

/// The flags of an allocation header, in XLA's order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllocFlags {
    pub constant: bool,
    pub thread_local: bool,
    pub maybe_live_out: bool,
    pub preallocated_temp: bool,
}

/// `parameter N, shape |S| at ShapeIndex {..}` of an allocation header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryParameter {
    pub number: u32,
    /// Empty in the oldest form, which prints no shape.
    pub shape: Str,
    pub shape_index: Str,
}

/// A `BufferAllocation`: one runtime buffer (a parameter, an output, a constant, a
/// thread-local alloca, or the combined temp buffer of one colour).
#[derive(Clone, Debug)]
pub struct Allocation {
    pub index: u32,
    pub size: u64,
    /// `color N`; 0 when not printed.
    pub color: u32,
    /// `page N` (XLA from 2026-08).
    pub page: Option<i64>,
    pub parameter: Option<EntryParameter>,
    /// `output shape is |S|`: holds the entry root at index `{}`.
    pub output_shape: Option<Str>,
    pub flags: AllocFlags,
    /// The values assigned to it: a range of [`Module::values`].
    pub values: std::ops::Range<u32>,
}

/// Program steps `start ..= end` (closed, as XLA computes them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LiveRange {
    pub start: u32,
    pub end: u32,
}

impl LiveRange {
    /// Whether the value is live at `step` (`start <= step <= end`).
    pub fn contains(self, step: u32) -> bool {
        self.start <= step && step <= self.end
    }
}

/// An `HloValue` with its slice of an allocation.
#[derive(Clone, Copy, Debug)]
pub struct Value {
    pub id: u32,
    pub instruction: InstrId,
    /// The shape index as printed in the value token (`{0}`), empty when the defining
    /// instruction is not a tuple (XLA then prints none; it means `{}`).
    pub index: Str,
    pub phi: bool,
    /// `@N`, the value's colour.
    pub color: Option<u32>,
    /// Position of its allocation in [`Module::allocations`].
    pub allocation: u32,
    pub offset: u64,
    /// Allocated size of the slice (the backend's size, padding included).
    pub size: u64,
    /// Shape with layout, as printed.
    pub shape: Str,
    /// Bytes of the shape itself (`ShapeUtil::ByteSizeOf`: elements × element size, 8 per
    /// tuple element); `None` when the shape does not tell (unbounded dynamic dimension).
    pub logical_size: Option<u64>,
    /// From `BufferLiveRange`; `None` for values with no range (thread-local ones).
    pub live: Option<LiveRange>,
    /// Positions and uses from `Used values`, as the dump's lines joined by `\n`, in
    /// [`Module::uses_strings`] (see [`Module::positions_and_uses`]); empty when absent.
    pub uses_text: Str,
}

/// What XLA itself printed as its peak (`Live ranges at N (peak):`).
#[derive(Clone, Debug, Default)]
pub struct XlaPeak {
    pub time: u32,
    pub entries: Vec<PeakEntry>,
}

#[derive(Clone, Copy, Debug)]
pub struct PeakEntry {
    pub instruction: InstrId,
    /// The index as printed; empty in the old form that prints the name alone.
    pub index: Str,
    pub bytes: u64,
}

/// A `BufferLiveRange` line whose value has no allocation in the dump.
#[derive(Clone, Copy, Debug)]
pub struct OrphanRange {
    pub instruction: InstrId,
    pub index: Str,
    pub live: LiveRange,
}

/// `HloLiveRange (max N)`: the flattened schedule.
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    /// `max`: the number of flattened instructions, one past the last step.
    pub max: u32,
    pub sequence: Vec<InstrId>,
    pub orphan_ranges: Vec<OrphanRange>,
    pub peak: Option<XlaPeak>,
    /// "Peak memory could not be determined due to unbounded dynamic shape."
    pub peak_undetermined: bool,
}

/// One node of the "Stack trace breakdown for peak usage" tree, in file order.
#[derive(Clone, Copy, Debug)]
pub struct StackNode {
    pub depth: u32,
    pub name: Str,
    pub total: u64,
    pub current: u64,
    pub remaining: u64,
}

/// What the `*-memory-usage-report.txt` said, as far as bufscope uses it.
#[derive(Clone, Debug, Default)]
pub struct MemoryReport {
    /// `Total bytes used:` (format A).
    pub total_bytes: Option<u64>,
    /// `Memory Space: NAME (color=N)` and its `Total bytes:` (format B).
    pub spaces: Vec<ReportSpace>,
}

#[derive(Clone, Copy, Debug)]
pub struct ReportSpace {
    pub name: Str,
    pub color: u32,
    pub total_bytes: u64,
}

/// A problem met while reading, with where it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub file: String,
    /// 1-based line in `file`; 0 when the warning is about the whole file or module.
    pub line: u64,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        } else {
            write!(f, "{}: {}", self.file, self.message)
        }
    }
}

/// One compiled HLO module: everything its dump files said.
#[derive(Clone, Default)]
pub struct Module {
    pub name: String,
    /// The files (or `*** Begin` sections) it was read from.
    pub files: Vec<String>,
    pub allocations: Vec<Allocation>,
    /// Grouped by allocation, in file order (allocation index, then value id).
    pub values: Vec<Value>,
    pub instructions: Vec<Instruction>,
    /// `Total bytes used:` as printed.
    pub total_bytes_line: Option<u64>,
    pub schedule: Option<Schedule>,
    pub stack_trace: Vec<StackNode>,
    /// `Stack trace breakdown for peak usage: N bytes`.
    pub stack_trace_total: Option<u64>,
    pub memory_report: Option<MemoryReport>,
    pub warnings: Vec<Warning>,
    /// Names, shapes, op_names, files: everything a [`Str`] refers to but `uses_text`.
    pub strings: Strings,
    /// The positions and uses of values, apart so that the names stay close in memory.
    pub uses_strings: Strings,
    /// The HLO module text read beside the dump (`*after_optimizations.txt`), when given:
    /// computations, loops, operands, stack frames.
    pub hlo: Option<Box<hlo::HloText>>,
    /// XLA's text of the module before its passes (`*before_optimizations.txt`), when given:
    /// the entry parameters' shardings and global shapes (the waste answer).
    pub hlo_before: Option<Box<hlo::HloText>>,
}

impl Module {
    /// Gives back what the module's growing lists hold beyond their length (up to half of
    /// each: the values of a 94 MB dump were 14 MiB for 9.5 of them), once it is joined.
    pub fn shrink_to_fit(&mut self) {
        self.allocations.shrink_to_fit();
        self.values.shrink_to_fit();
        self.instructions.shrink_to_fit();
        if let Some(s) = self.schedule.as_mut() {
            s.sequence.shrink_to_fit();
        }
    }

    pub fn str(&self, s: Str) -> &str {
        self.strings.get(s)
    }

    pub fn instruction(&self, v: &Value) -> &Instruction {
        &self.instructions[v.instruction as usize]
    }

    /// `name{index}` as XLA prints a value (no index for non-tuple instructions).
    pub fn value_name(&self, v: &Value) -> String {
        let name = self.str(self.instruction(v).name);
        format!("{name}{}", self.str(v.index))
    }

    /// Colour of the memory space the value lives in: `@N`, else its allocation's.
    pub fn value_color(&self, v: &Value) -> u32 {
        v.color
            .unwrap_or(self.allocations[v.allocation as usize].color)
    }

    pub fn allocation_of(&self, v: &Value) -> &Allocation {
        &self.allocations[v.allocation as usize]
    }

    /// Sum of all allocation sizes (what XLA prints as `Total bytes used`).
    pub fn total_bytes(&self) -> u64 {
        self.allocations
            .iter()
            .fold(0u64, |sum, a| sum.saturating_add(a.size))
    }

    /// The backend it was compiled for: from its name or its files' names
    /// ([`backend_from_name`]), else TPU when one of its first 4,096 values has a layout
    /// with TPU tiles (a TPU dump tiles nearly every array); `None` when neither tells
    /// (renamed CPU or GPU dumps).
    pub fn backend(&self) -> Option<Backend> {
        let names = std::iter::once(&self.name).chain(&self.files);
        if let Some(b) = names.filter_map(|n| backend_from_name(n)).next() {
            return Some(b);
        }
        let mut shapes = self.values.iter().take(4096).map(|v| v.shape);
        shapes
            .any(|s| tpu_tiled(self.str(s)))
            .then_some(Backend::Tpu)
    }

    /// `(positions, uses)` of a value, as the dump printed them (`uses` is empty for
    /// `(none)`; `None` when the dump had no `Used values` entry for it).
    pub fn positions_and_uses(&self, v: &Value) -> Option<(Vec<&str>, Vec<&str>)> {
        if v.uses_text.is_empty() {
            return None;
        }
        let (mut positions, mut uses) = (Vec::new(), Vec::new());
        let mut in_uses = false;
        for line in self.uses_strings.get(v.uses_text).split('\n') {
            match line {
                USES_MARK => in_uses = true,
                "" | "(none)" => {}
                _ if in_uses => uses.push(line),
                _ => positions.push(line),
            }
        }
        Some((positions, uses))
    }
}

/// Separates positions from uses in [`Value::uses_text`].
pub(crate) const USES_MARK: &str = "\u{1}uses";

/// XLA's name for a memory space colour (`GetMemorySpaceName`): 0 default, 1 vmem, 2 smem,
/// 3 hbm, 4 host, 5 cmem, otherwise `color_N`.
pub fn memory_space_name(color: u32) -> String {
    match color {
        0 => "default".into(),
        1 => "vmem".into(),
        2 => "smem".into(),
        3 => "hbm".into(),
        4 => "host".into(),
        5 => "cmem".into(),
        n => format!("color_{n}"),
    }
}

/// The backend a module was compiled for, as far as its dump tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Cpu,
    Gpu,
    Tpu,
}

impl Backend {
    /// What memory space 0 (`default`) is on this backend: only a TPU's is always HBM (a
    /// GPU's is HBM or GDDR by model, which the dump does not say).
    pub fn default_memory(self) -> &'static str {
        match self {
            Backend::Cpu => "host memory",
            Backend::Gpu => "GPU memory",
            Backend::Tpu => "HBM",
        }
    }
}

/// The backend a dump's file or module name tells: XLA ends it with the compiler's pass
/// pipeline, `cpu_after_optimizations`, `sm_9.0_gpu_after_optimizations` (CUDA),
/// `gfx90a_gpu_…` (ROCm), a `tpu` word. Words are read from the end, so a program called
/// `jit_cpu_to_gpu` compiled for the CPU is still CPU. `None` when no word tells.
pub fn backend_from_name(name: &str) -> Option<Backend> {
    let words: Vec<&str> = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words.iter().enumerate().rev().find_map(|(i, w)| {
        let w = w.to_ascii_lowercase();
        let next_is_digit = || {
            words
                .get(i + 1)
                .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        };
        match w.as_str() {
            "cpu" => Some(Backend::Cpu),
            "gpu" | "cuda" | "rocm" => Some(Backend::Gpu),
            "tpu" => Some(Backend::Tpu),
            "sm" if next_is_digit() => Some(Backend::Gpu),
            _ if w.starts_with("gfx")
                && w.len() > 3
                && w[3..].starts_with(|c: char| c.is_ascii_digit()) =>
            {
                Some(Backend::Gpu)
            }
            _ => None,
        }
    })
}

/// Whether a shape's layout is tiled as only a TPU tiles it: a first tile whose minor
/// dimension is 128 lanes (`{1,0:T(8,128)}`, `{0:T(128)}`, `{1,0:T(8,128)(2,1)}`).
fn tpu_tiled(shape: &str) -> bool {
    shape.match_indices(":T(").any(|(at, _)| {
        let tile = &shape[at + 3..];
        tile.find(')')
            .is_some_and(|end| tile[..end].rsplit(',').next() == Some("128"))
    })
}

/// What memory space `color` is where the backend tells it: space 0 is the device's memory
/// ([`Backend::default_memory`]); on a TPU, 1 and 2 are the core's vector and scalar
/// memories, 4 the host's memory and 5 (`cmem`) where jax's `pinned_host` arrays are placed
/// (the `S(5)` of their layouts; in a dump of a TPU v4, whose CMEM it is named after, it
/// may be that memory). `None` where nothing tells: space 3 (`hbm`, seen only on v4) and
/// colours 6 and up (`color_N`, XLA's own name for a colour it does not name).
pub fn memory_space_what(color: u32, backend: Option<Backend>) -> Option<&'static str> {
    match (color, backend?) {
        (0, b) => Some(b.default_memory()),
        (1, Backend::Tpu) => Some("vector memory, on core"),
        (2, Backend::Tpu) => Some("scalar memory, on core"),
        (4, Backend::Tpu) => Some("host memory"),
        (5, Backend::Tpu) => Some("where pinned_host arrays go"),
        _ => None,
    }
}

/// A memory space as people read it: the colour number, XLA's name, and what memory it is
/// ([`memory_space_what`]), or "unknown" where neither the dump nor the backend tells:
/// `0 default (HBM)`, `0 default (host memory)`, `1 vmem (vector memory, on core)`,
/// `6 color_6 (unknown)`.
pub fn memory_space_label(color: u32, backend: Option<Backend>) -> String {
    let what = memory_space_what(color, backend).unwrap_or("unknown");
    format!("{color} {} ({what})", memory_space_name(color))
}

#[cfg(test)]
mod tests {
    use super::{memory_space_name, Str, Strings};

    #[test]
    fn memory_spaces_say_what_they_are_or_unknown() {
        use super::{memory_space_label as label, Backend::*};
        assert_eq!(label(0, Some(Tpu)), "0 default (HBM)");
        assert_eq!(label(0, Some(Gpu)), "0 default (GPU memory)");
        assert_eq!(label(0, None), "0 default (unknown)");
        assert_eq!(label(1, Some(Tpu)), "1 vmem (vector memory, on core)");
        assert_eq!(label(3, Some(Tpu)), "3 hbm (unknown)");
        assert_eq!(label(5, Some(Tpu)), "5 cmem (where pinned_host arrays go)");
        assert_eq!(label(7, Some(Tpu)), "7 color_7 (unknown)");
        // A vmem colour on a GPU is not the TPU's.
        assert_eq!(label(1, Some(Gpu)), "1 vmem (unknown)");
    }

    #[test]
    fn memory_space_names_as_xla_writes_them() {
        // `Memory Space: vmem (color=1)`, `Memory Space: color_6 (color=6)` in dumps.
        let names: Vec<String> = (0..7).map(memory_space_name).collect();
        let expected = ["default", "vmem", "smem", "hbm", "host", "cmem", "color_6"];
        assert_eq!(names, expected);
        assert_eq!(memory_space_name(u32::MAX), "color_4294967295");
    }

    #[test]
    fn backends_from_names_as_xla_writes_them() {
        use super::{backend_from_name as b, Backend::*};
        let cases = [
            ("module_0001.jit_f.cpu_after_optimizations", Some(Cpu)),
            (
                "module_0037.jit__full_run.sm_8.0_gpu_after_optimizations",
                Some(Gpu),
            ),
            (
                "module_0042.jit_step.sm_90_gpu_after_optimizations",
                Some(Gpu),
            ),
            ("module_0001.jit_f.gpu_after_optimizations", Some(Gpu)),
            ("module_0003.jit_g.gfx90a_after_optimizations", Some(Gpu)),
            ("module_0005.jit_train.tpu_after_optimizations", Some(Tpu)),
            ("cpu_tiny", Some(Cpu)),
            // The pipeline's word at the end wins over the program's name.
            (
                "module_0002.jit_cpu_to_gpu.cpu_after_optimizations",
                Some(Cpu),
            ),
            (
                "module_0002.jit_tpu_like.sm_8.0_gpu_after_optimizations",
                Some(Gpu),
            ),
            // Renamed dumps and words that only contain the letters.
            ("000_0cb419b3147a3cb6", None),
            ("module_0009.jit_gpuish_smooth.cl_3", None),
            ("sm", None),
            ("", None),
        ];
        for (name, want) in cases {
            assert_eq!(b(name), want, "{name}");
        }
    }

    #[test]
    fn tpu_tiles_and_labels() {
        use super::{memory_space_label as label, tpu_tiled, Backend};
        assert!(tpu_tiled("f32[64,64]{1,0:T(8,128)}"));
        assert!(tpu_tiled("f32[]{:T(128)}"));
        assert!(tpu_tiled("bf16[8,256]{1,0:T(8,128)(2,1)}"));
        assert!(!tpu_tiled("f32[8,128]{1,0}"));
        assert!(!tpu_tiled("s4[1024]{0:T(2)E(4)}"));
        assert!(!tpu_tiled("f32[4]{0:T(1280)}"));
        assert_eq!(label(0, Some(Backend::Tpu)), "0 default (HBM)");
        assert_eq!(label(0, Some(Backend::Cpu)), "0 default (host memory)");
        assert_eq!(label(0, Some(Backend::Gpu)), "0 default (GPU memory)");
        assert_eq!(label(0, None), "0 default (unknown)");
        assert_eq!(
            label(1, Some(Backend::Tpu)),
            "1 vmem (vector memory, on core)"
        );
        assert_eq!(label(6, None), "6 color_6 (unknown)");
    }

    #[test]
    fn strings_across_chunks_and_longer_than_one() {
        let mut s = Strings::default();
        assert_eq!(s.get(Str::EMPTY), "");
        let long = "x".repeat(Strings::CHUNK + 10);
        let line = "y".repeat(Strings::CHUNK / 3);
        let mut handles = Vec::new();
        for i in 0..8 {
            let text = if i == 4 {
                long.clone()
            } else {
                format!("{i}{line}")
            };
            handles.push((s.push(&text), text));
        }
        let a = s.intern("name.1");
        assert_eq!(s.intern("name.1"), a);
        assert_eq!(s.intern_bytes(b"name.1"), a);
        for (h, text) in &handles {
            assert_eq!(s.get(*h), text);
        }
        assert_eq!(s.get(a), "name.1");
        assert!(s.heap_bytes() >= 8 * line.len() + long.len());
    }
}
