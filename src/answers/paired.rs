//! An out-of-memory message beside the dump of the program it is about. XLA still writes
//! the dump when a compile fails, so one read (a dropped folder, files given together) may
//! hold both: [`pair`] finds, for each message with a figure to give, the module it names
//! (`HLO module: jit_train_step.`; a module whose name holds that name) or the only module
//! read; [`capacity_of`] is the message's capacity as the module's capacity, set on the
//! memory space the message is about ([`space_of`]); [`reconcile`] holds the message's
//! figure (E1000's "required for HLO temporaries", the older "Used X of Y") against the
//! dump's peak and its parts, and says what must go for the program to fit.
//!
//! **Invariant:** only figures of the message and of the dump's analysis; a message names
//! at most one module, a module takes the first message paired with it.

use serde::Serialize;

use crate::analysis::Analysis;
use crate::answers::capacity::Capacity;
use crate::answers::xprof::xprof_figures;
use crate::model::{memory_space_name, Module};
use crate::parse::oom::OomMessage;
use crate::parse::OomFile;
use crate::units::{group_digits, human_bytes, parse_bytes};

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

/// Every message with a capacity or a used figure, paired with its module ([`module_of`]);
/// each module once, with the first such message.
pub fn pair(names: &[&str], files: &[OomFile]) -> Vec<Pair> {
    let mut out: Vec<Pair> = Vec::new();
    for (file, f) in files.iter().enumerate() {
        for (message, m) in f.log.messages.iter().enumerate() {
            let figures = m
                .capacity
                .as_ref()
                .is_some_and(|c| c.capacity.is_some() || c.used.is_some());
            let Some(module) = module_of(names, m).filter(|_| figures) else {
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

/// The message's figure against the dump's peak.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reconciliation {
    /// The module and memory space (colour) held against.
    pub module: String,
    pub color: u32,
    /// What the message's figure is (`HLO temporaries`, `used`) and the figure as printed.
    pub what: String,
    pub message_text: String,
    pub message_bytes: i64,
    /// The dump's occupied peak of the space and its first step.
    pub peak_bytes: u64,
    pub peak_step: Option<u32>,
    /// The peak is one of the byte counts the message's figure stands for.
    pub matches: bool,
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

/// The message's used figure held against the peak of space `color` of `module`; None
/// without a used figure or without that space.
pub fn reconcile(
    module: &Module,
    analysis: &Analysis,
    m: &OomMessage,
    color: u32,
) -> Option<Reconciliation> {
    let c = m.capacity.as_ref()?;
    let used = c.used.as_ref()?;
    let space = analysis.space(color)?;
    let x = xprof_figures(module, space);
    let peak = space.peak_bytes;
    let matches = (used.min..=used.max).contains(&i64::try_from(peak).unwrap_or(i64::MAX));
    let what = figure_name(m);
    let called = if what == "used" {
        format!("The error's {} used", used.text)
    } else {
        format!("The error's {} required for {what}", used.text)
    };
    let at = space
        .peak_time
        .map(|t| format!(" at step {}", group_digits(u64::from(t))))
        .unwrap_or_default();
    let parts = format!(
        "temporaries {} plus arguments and outputs {} (parameters, maybe-live-out and constants, kept whole)",
        human_bytes(x.temp_peak_bytes),
        human_bytes(x.indefinite_bytes)
    );
    let mut sentence = if matches {
        format!(
            "{called} is this dump's peak of {}: {}{at} ({} B, which XLA prints as {}): {parts}.",
            space_label(color, m),
            human_bytes(peak),
            group_digits(peak),
            used.text
        )
    } else {
        format!(
            "{called} is not this dump's peak of {} ({}{at}, {} B): the dump may be of another compilation, or the message counts more; its parts: {parts}.",
            space_label(color, m),
            human_bytes(peak),
            group_digits(peak)
        )
    };
    let cap = capacity_of(m).map(|c| c.bytes);
    let must_go = cap.map(|cap| peak.saturating_sub(cap));
    if let (Some(cap), Some(go)) = (cap, must_go) {
        let cap_text = c.capacity.as_ref().map_or_else(|| human_bytes(cap), |t| t.text.clone());
        sentence.push(' ');
        sentence.push_str(&what_must_go(go, &cap_text, x.temp_peak_bytes, x.indefinite_bytes));
    }
    Some(Reconciliation {
        module: module.name.clone(),
        color,
        what,
        message_text: used.text.clone(),
        message_bytes: used.bytes,
        peak_bytes: peak,
        peak_step: space.peak_time,
        matches,
        temporaries_bytes: x.temp_peak_bytes,
        temporaries_step: x.temp_peak_step,
        arguments_bytes: x.indefinite_bytes,
        capacity_bytes: cap,
        must_go_bytes: must_go,
        sentence,
    })
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
