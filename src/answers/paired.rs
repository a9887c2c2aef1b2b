//! An out-of-memory message beside the dump of the program it is about. XLA still writes
//! the dump when a compile fails, so one read (a dropped folder, files given together) may
//! hold both: [`pair`] finds, for each message with a figure to give, the module it names
//! (`HLO module: jit_train_step.`; a module whose name holds that name) or the only module
//! read; [`capacity_of`] is the message's capacity as the module's capacity, set on the
//! memory space the message is about ([`space_of`]); [`reconcile`] holds each of the
//! message's figures (E1000's "required for HLO temporaries", the older "Used X of Y", a
//! GPU request, the stats that name the temporaries or the total) against the dump figures
//! it may state ([`DumpFigure`]: the allocated total, the occupied peak, the temporaries'
//! allocations), says which one it is within the message's rounding (or that none is),
//! and what must go for the program to fit.
//!
//! **Invariant:** only figures of the message and of the dump's analysis; a message names
//! at most one module, a module takes the first message paired with it.

use serde::Serialize;

use crate::analysis::Analysis;
use crate::answers::capacity::Capacity;
use crate::answers::xprof::{is_temp, xprof_figures};
use crate::model::{memory_space_name, Module};
use crate::model::oom::{ByteSize, OomForm, OomMessage};
use crate::parse::OomFile;
use crate::units::{group_digits, human_bytes, parse_bytes, tsl_human_bytes};

/// A message paired with a module: `files[file].log.messages[message]` and `module`, an
/// index of the names [`pair`] was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Pair {
    pub file: usize,
    pub message: usize,
    pub module: usize,
}

/// The module `m` is about, of those named `names`: the one its name names (equal, else
/// the only one holding it), else the only module there is.
pub fn module_of(names: &[&str], m: &OomMessage) -> Option<usize> {
    if let Some(named) = m.module.as_deref() {
        if let Some(i) = names.iter().position(|n| *n == named) {
            return Some(i);
        }
        let holding: Vec<usize> = (0..names.len())
            .filter(|&i| names[i].contains(named))
            .collect();
        if let [one] = holding.as_slice() {
            return Some(*one);
        }
    }
    (names.len() == 1).then_some(0)
}

/// The module whose name is the file's stem, for an error kept beside its dump under the
/// dump's name (`run.error.txt`, `run.log` beside `run.buffer-assignment.txt`).
fn module_of_file(names: &[&str], file: &str) -> Option<usize> {
    let name = file.rsplit(['/', '\\']).next().unwrap_or(file);
    let stem = [".error.txt", ".log", ".txt", ".error"]
        .iter()
        .find_map(|e| name.strip_suffix(e))
        .unwrap_or(name);
    let mut hits = (0..names.len()).filter(|&i| names[i] == stem);
    match (hits.next(), hits.next()) {
        (Some(i), None) => Some(i),
        _ => None,
    }
}

/// Every message with a capacity, a used figure or a GPU request, paired with its module ([`module_of`]);
/// each module once, with the first such message.
pub fn pair(names: &[&str], files: &[OomFile]) -> Vec<Pair> {
    let mut out: Vec<Pair> = Vec::new();
    for (file, f) in files.iter().enumerate() {
        for (message, m) in f.log.messages.iter().enumerate() {
            let figures = (m.request.is_some() && m.form.is_gpu())
                || (m.capacity.as_ref()).is_some_and(|c| c.capacity.is_some() || c.used.is_some());
            let module = module_of(names, m).or_else(|| module_of_file(names, &f.file));
            let Some(module) = module.filter(|_| figures) else {
                continue;
            };
            if out.iter().all(|p| p.module != module) {
                out.push(Pair {
                    file,
                    message,
                    module,
                });
            }
        }
    }
    out
}

/// The memory space (colour) of `module` the message is about: its memory space by name
/// (`vmem` → 1), HBM and the GPUs' memory the default space, 0.
pub fn space_of(m: &OomMessage, analysis: &Analysis) -> u32 {
    let Some(name) = m.memory_space.as_deref() else {
        return 0;
    };
    if name.eq_ignore_ascii_case("hbm") {
        return 0;
    }
    analysis
        .spaces
        .iter()
        .map(|s| s.color)
        .find(|&c| c != 0 && memory_space_name(c).eq_ignore_ascii_case(name))
        .unwrap_or(0)
}

/// The message's capacity as a capacity to hold the dump's peak against, labelled with
/// the figure as printed (which reads back as the same bytes) and where it comes from.
pub fn capacity_of(m: &OomMessage) -> Option<Capacity> {
    let cap = m.capacity.as_ref()?.capacity.as_ref()?;
    let bytes = u64::try_from(cap.bytes).ok().filter(|&b| b > 0)?;
    let label = if parse_bytes(&cap.text) == Some(bytes) {
        cap.text.clone()
    } else {
        bytes.to_string()
    };
    let space = m.memory_space.as_deref().unwrap_or("memory");
    let space = if space.eq_ignore_ascii_case("hbm") {
        "HBM".to_string()
    } else {
        space.to_string()
    };
    Some(Capacity {
        bytes,
        label,
        device: None,
        source: Some(format!("{} available {space}, from the error message", cap.text)),
        space: 0,
    })
}

/// A figure of the dump a message's figure may state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DumpFigure {
    /// XLA's allocated total: the sum of the space's allocation sizes (thread-local ones
    /// left out), what E1000's "required for HLO temporaries" and "Used X of Y" count.
    AllocatedTotal,
    /// The highest occupied bytes of the space's curve.
    Peak,
    /// The sizes of the space's `preallocated-temp` allocations: the GPU's temp buffer
    /// (what the runtime asks for), the TPU's `HLO temp`.
    Temporaries,
}

impl DumpFigure {
    /// Its name and what it is.
    fn words(self) -> (&'static str, &'static str) {
        match self {
            DumpFigure::AllocatedTotal => ("allocated total", "the sum of its allocations' sizes"),
            DumpFigure::Peak => ("occupied peak", "the most bytes live at once"),
            DumpFigure::Temporaries => ("temporaries' allocations", "its preallocated-temp allocations"),
        }
    }
}

/// One figure of the message held against the dump's figures it may state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FigureCheck {
    /// What the message calls it (`required for HLO temporaries`, `used`, `request`,
    /// `preallocated temp allocation`, `HLO temp`) and the figure as printed.
    pub label: String,
    pub text: String,
    pub bytes: i64,
    /// The first candidate within the message's rounding, and its bytes.
    pub figure: Option<DumpFigure>,
    pub dump_bytes: Option<u64>,
}

/// The message's figures against the dump's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reconciliation {
    /// The module and memory space (colour) held against.
    pub module: String,
    pub color: u32,
    /// What the message's main figure is (`HLO temporaries`, `used`, `request`) and the
    /// figure as printed.
    pub what: String,
    pub message_text: String,
    pub message_bytes: i64,
    /// The dump's occupied peak of the space and its first step.
    pub peak_bytes: u64,
    pub peak_step: Option<u32>,
    /// The main figure is one of the dump's figures within the message's rounding.
    pub matches: bool,
    /// Which dump figure it is (none: the dump may be of another compilation).
    pub figure: Option<DumpFigure>,
    /// The space's allocated total and its temporaries' allocations.
    pub allocated_bytes: u64,
    pub temporaries_allocated_bytes: u64,
    /// Every figure of the message checked, the main one first.
    pub checks: Vec<FigureCheck>,
    /// Its parts, as XProf counts them: the temporaries' highest occupied bytes, and the
    /// parameter, maybe-live-out and constant allocations kept whole.
    pub temporaries_bytes: u64,
    pub temporaries_step: Option<u32>,
    pub arguments_bytes: u64,
    /// The message's capacity and what must go at the peak to fit it (0 when it fits).
    pub capacity_bytes: Option<u64>,
    pub must_go_bytes: Option<u64>,
    /// All of it in words.
    pub sentence: String,
}

/// What the message's used figure is called: the `Memory required` stat of E1000
/// (`HLO temporaries`), else `used`.
fn figure_name(m: &OomMessage) -> String {
    m.sections
        .iter()
        .filter(|s| s.title == "Memory required")
        .flat_map(|s| &s.stats)
        .map(|s| s.label.clone())
        .next()
        .unwrap_or_else(|| "used".to_string())
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".to_string();
    }
    format!("{:.0} %", part as f64 / whole as f64 * 100.0)
}

use DumpFigure::{AllocatedTotal, Peak, Temporaries};

/// A figure of the message, what it is called and the dump figures it may state, in order.
type Said<'a> = (String, &'a ByteSize, &'static [DumpFigure]);

/// The figures of `m` that state a figure of its compilation's dump, the main one first:
/// the used figure (not the BFC allocator's `InUse`, a figure of the running process),
/// else a GPU request (the runtime asks for the temp buffer), then the stats that name
/// the temporaries or the total.
fn said(m: &OomMessage) -> Vec<Said<'_>> {
    let mut out: Vec<Said<'_>> = Vec::new();
    let used = m.capacity.as_ref().and_then(|c| c.used.as_ref());
    if let Some(used) = used.filter(|_| m.allocator.is_none()) {
        let what = figure_name(m);
        let order: &'static [DumpFigure] = if what == "used" {
            &[AllocatedTotal, Peak]
        } else {
            &[AllocatedTotal, Peak, Temporaries]
        };
        out.push((what, used, order));
    }
    if let Some(req) = m.request.as_ref().filter(|_| m.form.is_gpu()) {
        out.push(("request".to_string(), req, &[Temporaries, AllocatedTotal]));
    }
    for stat in m.sections.iter().flat_map(|s| &s.stats) {
        let order: &'static [DumpFigure] = match stat.label.as_str() {
            "preallocated temp allocation" | "HLO temp" => &[Temporaries],
            "total allocation" => &[AllocatedTotal],
            _ => continue,
        };
        if let Some(size) = &stat.size {
            out.push((stat.label.clone(), size, order));
        }
    }
    out
}

/// Every byte count `size` may stand for: as printed, and a BFC request rounded up to
/// 256 bytes stands for the 255 below it too.
fn stands_for(size: &ByteSize, m: &OomMessage) -> std::ops::RangeInclusive<i64> {
    let slack = if m.form == OomForm::GpuBfcAllocator { 255 } else { 0 };
    size.min.saturating_sub(slack)..=size.max
}

/// The dump's figures of one space.
struct Figures {
    allocated: u64,
    peak: u64,
    temporaries: u64,
}

impl Figures {
    fn of(&self, f: DumpFigure) -> u64 {
        match f {
            AllocatedTotal => self.allocated,
            Peak => self.peak,
            Temporaries => self.temporaries,
        }
    }

    fn check(&self, m: &OomMessage, (label, size, order): &Said<'_>) -> FigureCheck {
        let range = stands_for(size, m);
        let figure = order
            .iter()
            .copied()
            .find(|&f| range.contains(&i64::try_from(self.of(f)).unwrap_or(i64::MAX)));
        FigureCheck {
            label: label.clone(),
            text: size.text.clone(),
            bytes: size.bytes,
            figure,
            dump_bytes: figure.map(|f| self.of(f)),
        }
    }
}

/// The message's figures held against the figures of space `color` of `module`; None
/// without a figure to hold or without that space.
pub fn reconcile(
    module: &Module,
    analysis: &Analysis,
    m: &OomMessage,
    color: u32,
) -> Option<Reconciliation> {
    let space = analysis.space(color)?;
    let x = xprof_figures(module, space);
    let figures = Figures {
        allocated: x.total_bytes,
        peak: space.peak_bytes,
        temporaries: (module.allocations.iter())
            .filter(|a| is_temp(a, color))
            .fold(0u64, |s, a| s.saturating_add(a.size)),
    };
    let checks: Vec<FigureCheck> = said(m).iter().map(|s| figures.check(m, s)).collect();
    let main = checks.first()?;
    let at = space
        .peak_time
        .map(|t| format!(" at step {}", group_digits(u64::from(t))))
        .unwrap_or_default();
    let mut sentence = main_sentence(main, &figures, &space_label(color, m), &at);
    sentence.push_str(&format!(
        " Its parts: temporaries {} plus arguments and outputs {} (parameters, maybe-live-out and constants, kept whole).",
        human_bytes(x.temp_peak_bytes),
        human_bytes(x.indefinite_bytes)
    ));
    for c in &checks[1..] {
        sentence.push(' ');
        sentence.push_str(&other_sentence(c));
    }
    let cap = capacity_of(m).map(|c| c.bytes);
    let must_go = cap.map(|cap| figures.peak.saturating_sub(cap));
    if let (Some(cap), Some(go)) = (cap, must_go) {
        let c = m.capacity.as_ref().and_then(|c| c.capacity.as_ref());
        let cap_text = c.map_or_else(|| human_bytes(cap), |t| t.text.clone());
        sentence.push(' ');
        sentence.push_str(&what_must_go(go, &cap_text, x.temp_peak_bytes, x.indefinite_bytes));
    }
    Some(Reconciliation {
        module: module.name.clone(),
        color,
        what: main.label.clone(),
        message_text: main.text.clone(),
        message_bytes: main.bytes,
        peak_bytes: figures.peak,
        peak_step: space.peak_time,
        matches: main.figure.is_some(),
        figure: main.figure,
        allocated_bytes: figures.allocated,
        temporaries_allocated_bytes: figures.temporaries,
        checks: checks.clone(),
        temporaries_bytes: x.temp_peak_bytes,
        temporaries_step: x.temp_peak_step,
        arguments_bytes: x.indefinite_bytes,
        capacity_bytes: cap,
        must_go_bytes: must_go,
        sentence,
    })
}

/// `The error's 24.35G required for HLO temporaries`, `The error's request 12.0 GiB`.
fn called(c: &FigureCheck) -> String {
    match c.label.as_str() {
        "used" => format!("The error's {} used", c.text),
        "request" => format!("The error's request of {}", c.text),
        l => format!("The error's {} required for {l}", c.text),
    }
}

/// The main figure: which of the dump's figures it is, to the byte where the message
/// prints one, else within its rounding; or none of them.
fn main_sentence(c: &FigureCheck, f: &Figures, space: &str, at: &str) -> String {
    let peak = format!("occupied peak {} ({} B){at}", human_bytes(f.peak), group_digits(f.peak));
    match (c.figure, c.dump_bytes) {
        (Some(fig), Some(b)) => {
            let how = if b as i64 == c.bytes { "to the byte" } else { "within its rounding" };
            let (name, what) = fig.words();
            let mut s = format!(
                "{} = this dump's {name} of {space}, {} ({} B, {what}), {how}",
                called(c),
                tsl_human_bytes(b),
                group_digits(b)
            );
            if fig == AllocatedTotal && c.label == "HLO temporaries" {
                s.push_str(" (E1000 says HLO temporaries but counts every allocation, arguments and outputs too)");
            }
            if fig != Peak {
                s.push_str(&format!("; its {peak}"));
            }
            s.push('.');
            s
        }
        _ => format!(
            "{} is none of this dump's figures of {space} (allocated total {} B, {peak}, temporaries' allocations {} B): the dump may be of another compilation, or the message counts more.",
            called(c),
            group_digits(f.allocated),
            group_digits(f.temporaries)
        ),
    }
}

/// A further figure of the message (`preallocated temp allocation 11.99GiB`).
fn other_sentence(c: &FigureCheck) -> String {
    match (c.figure, c.dump_bytes) {
        (Some(fig), Some(b)) => format!(
            "Its {} {} = this dump's {} ({} B).",
            c.label,
            c.text,
            fig.words().0,
            group_digits(b)
        ),
        _ => format!("Its {} {} is none of this dump's figures.", c.label, c.text),
    }
}

/// What must go at the peak (`go` bytes) to fit `cap_text`: as a share of the temporaries
/// live there, or of the arguments and outputs when they would do.
fn what_must_go(go: u64, cap_text: &str, temporaries: u64, arguments: u64) -> String {
    if go == 0 {
        return format!("The peak fits the {cap_text} available.");
    }
    let args = if go <= arguments {
        format!(
            ", or {} of the arguments and outputs (sharded further or kept off the device)",
            percent(go, arguments)
        )
    } else {
        String::new()
    };
    format!(
        "For it to fit the {cap_text} available, {} must go at the peak: {} of the temporaries live there (rematerialised or offloaded){args}.",
        human_bytes(go),
        percent(go, temporaries)
    )
}

/// HBM for the default space of a message about HBM, else the space's name.
fn space_label(color: u32, m: &OomMessage) -> String {
    let hbm = m
        .memory_space
        .as_deref()
        .is_some_and(|s| s.eq_ignore_ascii_case("hbm"));
    if color == 0 && hbm {
        "HBM".to_string()
    } else {
        format!("memory space {color} ({})", memory_space_name(color))
    }
}

/// A message paired with its module, with what the pairing gives.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairedMessage {
    #[serde(flatten)]
    pub pair: Pair,
    /// The module's name and the memory space (colour) the message is about.
    pub module_name: String,
    pub color: u32,
    /// The message's capacity, set on that space ([`capacity_of`]).
    pub capacity: Option<Capacity>,
    pub reconciliation: Option<Reconciliation>,
}

/// Every pairing of one read ([`pair`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Paired {
    pub pairs: Vec<PairedMessage>,
}

impl Paired {
    /// The messages of `files` paired with `modules` (each with its analysis).
    pub fn new(modules: &[(&Module, &Analysis)], files: &[OomFile]) -> Paired {
        let names: Vec<&str> = modules.iter().map(|(m, _)| m.name.as_str()).collect();
        let pairs = pair(&names, files)
            .into_iter()
            .map(|p| {
                let (module, analysis) = modules[p.module];
                let m = &files[p.file].log.messages[p.message];
                let color = space_of(m, analysis);
                PairedMessage {
                    pair: p,
                    module_name: module.name.clone(),
                    color,
                    capacity: capacity_of(m).map(|c| c.on(color)),
                    reconciliation: reconcile(module, analysis, m, color),
                }
            })
            .collect();
        Paired { pairs }
    }

    /// The capacity the message paired with module `module` sets, and on which space.
    pub fn space_capacity(&self, module: usize) -> Option<(u32, Capacity)> {
        let p = self.pairs.iter().find(|p| p.pair.module == module)?;
        Some((p.color, p.capacity.clone()?))
    }

    /// The pairing of message `message` of file `file`, if it has one.
    pub fn of_message(&self, file: usize, message: usize) -> Option<&PairedMessage> {
        self.pairs
            .iter()
            .find(|p| p.pair.file == file && p.pair.message == message)
    }
}
