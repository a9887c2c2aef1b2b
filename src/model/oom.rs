//! What an out-of-memory message says (read by [`crate::parse::oom`]), as plain data in
//! XLA's and the allocator's words: the request that
//! failed, the capacity verdict, the stats blocks, the listed buffers, and what could not
//! be read. No parsing here and no derived numbers beyond a size's byte value.

use serde::Serialize;

/// Every out-of-memory message found in one log, in the order they appear.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OomLog {
    pub messages: Vec<OomMessage>,
    /// Compile-log lines that explain memory without being an out-of-memory message
    /// (rematerialization's shortfall, an involuntary full rematerialization), in order.
    pub compiler_notes: Vec<CompilerNote>,
}

/// Which of XLA's messages this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OomForm {
    /// GPU/ROCm: `BufferAssignment OOM Debugging.`, `BufferAssignment stats:`, `Peak buffers:`.
    GpuBufferAssignment,
    /// TPU compile: `Ran out of memory in memory space hbm. Used X of Y hbm. Exceeded hbm
    /// capacity by Z.`, the usage blocks and `Largest program allocations in hbm:`.
    TpuRanOutOfMemory,
    /// Older TPU runtime: `Attempting to reserve X at the bottom of memory.`, `HBM capacity`,
    /// `Heap allocator status:`.
    TpuReserve,
    /// Today's XLA:TPU compile error (E1000 `CompileTimeHbmOom`): `Ran out of memory on HBM,
    /// the total memory required for HLO temporaries (X) exceeds available HBM (Y). HLO
    /// module: NAME.` One line, no buffers.
    TpuCompileTimeHbmOom,
    /// `TPU TensorCore Hbm usage: X, SparseCore Hbm usage Y, exceeding available bytes: Z`
    /// (E1000 on chips with SparseCores).
    TpuHbmUsage,
    /// The TPU runtime (E0100, `jax.device_put`): `Error allocating device buffer:
    /// Attempting to allocate X. That was not possible. There are Y free.`
    TpuDeviceBuffer,
    /// `Allocation (size=N) would exceed memory (size=M) :: #allocationK [shape = '…',
    /// space=…, size = …, tag = '…'] :: INSTRUCTION`, with its one buffer.
    TpuAllocationExceeds,
    /// The GPU runtime's status alone: `Out of memory while trying to allocate N bytes.`
    /// with no `BufferAssignment OOM Debugging.` after it.
    GpuOutOfMemory,
    /// The BFC allocator: `Allocator (GPU_0_bfc) ran out of memory trying to allocate X
    /// (rounded to N)` and the dump it logs after (`Stats:` with `Limit:`, `InUse:`, …, the
    /// chunk summary).
    GpuBfcAllocator,
}

impl OomForm {
    /// A GPU runtime's message (else a TPU one).
    pub fn is_gpu(self) -> bool {
        matches!(
            self,
            OomForm::GpuBufferAssignment | OomForm::GpuOutOfMemory | OomForm::GpuBfcAllocator
        )
    }
}

/// One message. Everything is optional but the form: a message cut by the log (or by
/// whoever pasted it) keeps what was there, and `warnings` says what is missing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OomMessage {
    pub form: OomForm,
    /// 1-based line of the log where the message's first recognised line is.
    pub first_line: usize,
    /// 1-based line of its last recognised line.
    pub last_line: usize,
    /// 1-based lines where the same message is printed again (the Python exception repeats
    /// the runtime's status and its buffers), in order.
    pub printed_again: Vec<usize>,
    /// The status line as printed (from `RESOURCE_EXHAUSTED` or the sentence that names the
    /// failure), without the log's prefix.
    pub error: Option<String>,
    /// XLA's error code when printed (`E1000`, `E0100`).
    pub code: Option<String>,
    /// The module (program) the message names: `HLO module: jit_train_step.`, `Error loading
    /// program 'jit_eval_step'`.
    pub module: Option<String>,
    /// The allocation or reservation that failed: `Out of memory while trying to allocate N
    /// bytes.`, `Failed to allocate request for X (NB)`, `Attempting to reserve X`.
    pub request: Option<ByteSize>,
    /// `hbm`, `vmem`, … for TPU messages; none for GPU ones (they name no memory space).
    pub memory_space: Option<String>,
    /// The GPU BFC allocator that reported the failure (`GPU_0_bfc`) when its warning is
    /// part of the message; `capacity` then holds its `Limit` and `InUse`, figures of the
    /// running process (every live buffer), not of one compilation.
    pub allocator: Option<String>,
    pub capacity: Option<Capacity>,
    /// The stats blocks in the order printed (`BufferAssignment stats`, `Total hbm usage`,
    /// `Program hbm requirement`, `HBM capacity`, `Heap allocator status`, …).
    pub sections: Vec<StatSection>,
    /// Lines that stand alone between the blocks, as printed (`Output size 0B; shares 0B
    /// with arguments.`).
    pub notes: Vec<String>,
    /// The listed buffers (`Peak buffers:` / `Largest program allocations in hbm:`), in order.
    pub buffers: Vec<OomBuffer>,
    /// What could not be read or is missing, one sentence each.
    pub warnings: Vec<String>,
}

/// The capacity verdict. New TPU messages print used, capacity and excess; the older
/// runtime form prints the capacity, what it wanted, what was free and what would be left
/// (negative when it does not fit).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Capacity {
    pub capacity: Option<ByteSize>,
    pub used: Option<ByteSize>,
    pub exceeded_by: Option<ByteSize>,
    /// `There are X free, Y reserved, and Z reservable.`
    pub free: Option<ByteSize>,
    pub reserved: Option<ByteSize>,
    pub reservable: Option<ByteSize>,
    /// `Available after request:` of the `HBM capacity` block.
    pub available_after_request: Option<ByteSize>,
    /// The fields above that bufscope computed rather than read (`used`, `exceeded_by`):
    /// the message printed the parts, not the figure.
    pub computed: Vec<String>,
}

/// A block of `label: size` lines under a title line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatSection {
    /// The title as printed, without its trailing figure and colon: `BufferAssignment stats`,
    /// `Total hbm usage`, `Program hbm requirement`, `HBM capacity`, …
    pub title: String,
    /// The figure on the title line (`Total hbm usage >= 65.05G:` → 65.05G; `>=` kept in
    /// `at_least`).
    pub total: Option<ByteSize>,
    /// The title said `>=`: the figure is a lower bound.
    pub at_least: bool,
    pub stats: Vec<Stat>,
}

/// One `label  size (note)` line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stat {
    /// As printed, trimmed: `preallocated temp allocation`, `HLO temp`,
    /// `reserved(Infeed/Outfeed/Continuations)`.
    pub label: String,
    /// None when XLA printed no figure (`arguments  unknown size`).
    pub size: Option<ByteSize>,
    /// What follows the size, as printed: `(0.02%)`, `(95.4% utilization: Unpadded (8.65G)
    /// Padded (9.06G), 0.0% fragmentation (0B))`, `unknown size`.
    pub note: Option<String>,
    /// Named figures inside the note: `Unpadded (8.65G)` → ("Unpadded", 8.65G),
    /// `fragmentation (0B)` → ("fragmentation", 0B).
    pub figures: Vec<NamedSize>,
    /// Percentages inside the note with the word after them: `95.4% utilization` →
    /// ("utilization", "95.4"); a bare `(0.02%)` has an empty label.
    pub percents: Vec<Percent>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NamedSize {
    pub label: String,
    pub size: ByteSize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Percent {
    pub label: String,
    /// The digits as printed (`95.4`), so nothing is lost to a float.
    pub value: String,
}

/// One listed buffer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OomBuffer {
    /// The number XLA gave it (`Buffer 3:` / `3. Size:`), 1 = largest.
    pub rank: u32,
    /// 1-based line of the log where the entry starts.
    pub line: usize,
    pub size: Option<ByteSize>,
    /// The `Operator:` metadata.
    pub operator: Option<Operator>,
    /// `Shape:`, or the `Entry Parameter Subshape:` of an entry parameter; with its TPU
    /// layout (`{1,0:T(8,128)}`) when printed.
    pub shape: Option<String>,
    /// The shape came from `Entry Parameter Subshape:`.
    pub entry_parameter: bool,
    /// `Unpadded size:` (TPU).
    pub unpadded_size: Option<ByteSize>,
    /// `Extra memory due to padding: X (Nx expansion)` (TPU).
    pub padding: Option<ByteSize>,
    /// The `N` of `(Nx expansion)`, as printed.
    pub expansion: Option<String>,
    /// `XLA Label:` (GPU: the opcode) / `XLA label:` (TPU: the instruction, maybe cut by
    /// XLA with `...`).
    pub xla_label: Option<String>,
    /// `Allocation type:` (TPU): `HLO temp`, `scoped`, `global`, …
    pub allocation_type: Option<String>,
    /// The allocation's name (`allocation7` of `#allocation7 [...]`).
    pub allocation: Option<String>,
    /// `space=hbm` of the allocation form.
    pub memory_space: Option<String>,
    /// `tag = 'output of xor_convert_fusion@{}'` of the allocation form.
    pub tag: Option<String>,
}

/// A compile-log line about memory that is not an out-of-memory message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CompilerNote {
    /// `Can't reduce memory use below T (N bytes) by rematerialization; only reduced to R
    /// (N bytes), down from O (N bytes) originally`.
    RematerializationShortfall {
        line: usize,
        target: Option<ByteSize>,
        reached: Option<ByteSize>,
        original: Option<ByteSize>,
    },
    /// `[spmd] Involuntary full rematerialization. The compiler was not able to go from
    /// sharding S to T without doing a full rematerialization of the tensor for HLO
    /// operation: %INSTR = …`: a resharding that copies the whole tensor to every device.
    InvoluntaryFullRematerialization {
        line: usize,
        instruction: Option<String>,
        from_sharding: Option<String>,
        to_sharding: Option<String>,
        op_name: Option<String>,
    },
}

/// `OpMetadataToString`: `op_type="…" op_name="…" source_file="…" source_line=N …`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Operator {
    pub op_type: Option<String>,
    pub op_name: Option<String>,
    pub source_file: Option<String>,
    pub source_line: Option<u32>,
    pub deduplicated_name: Option<String>,
    /// Any other `key=value` pair, in order.
    pub other: Vec<(String, String)>,
}

/// A size as XLA printed it and the bytes it stands for.
///
/// XLA prints sizes with `HumanReadableNumBytes`: under 1024 as whole bytes (`12B`), else
/// in 1024-based units with one decimal for K and two for M and up (`384.0KiB`,
/// `10.90GiB`; the TPU messages drop the `iB`: `4.0K`, `63.80G`). Such a figure is
/// rounded: `bytes` is the printed number times its unit, rounded to a whole byte, and
/// `min..=max` is every byte count that prints as this text. Whole bytes and the byte
/// counts some messages print next to the rounded figure (`(165425291480B)`,
/// `(554,696,704 bytes)`, `6291456 bytes`) are exact: `exact` is true and
/// `min == bytes == max`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ByteSize {
    /// The figure as printed (`10.90GiB`, `-2.55G`, `0B`); for an exact count printed next
    /// to a rounded one, both (`154.06GiB (165425291480B)`).
    pub text: String,
    pub bytes: i64,
    pub exact: bool,
    pub min: i64,
    pub max: i64,
}
