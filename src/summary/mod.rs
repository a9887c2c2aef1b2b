//! Summary: the key figures of each module (allocations, values, bytes, per memory space
//! the allocated bytes and the peak of live bytes), as JSON and as a text table.
//!
//! Owns: the shape of `bufscope summary` output. Numbers are written by [`crate::units`].
//! [`answers`] adds to each memory space the answers to an OOM (groupings, padding,
//! capacity, idle stretches, XProf's figures); [`oom`] the out-of-memory messages of a log.

pub mod answers;
pub mod loops;
pub mod oom;
pub mod waste;

use crate::analysis::Analysis;
use crate::answers::{in_turn, Both};
use crate::model::{memory_space_name, Module};
use answers::{module_extras, space_block, SpaceExtras, SummaryOptions};
use serde::Serialize;

use crate::units::{group_digits, human_bytes};

/// Summary of a set of modules.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    /// The modules side by side on the device ([`crate::answers::waste::device`]): left out
    /// unless an HLO text was read beside a dump.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<crate::answers::waste::device::Device>,
    pub modules: Vec<ModuleSummary>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModuleSummary {
    pub name: String,
    pub allocations: u64,
    pub values: u64,
    /// Sum of all allocation sizes.
    pub total_bytes: u64,
    /// The schedule's `max`; `None` without a schedule.
    pub schedule_length: Option<u32>,
    /// One per colour with an allocation or a value, by colour.
    pub memory_spaces: Vec<SpaceSummary>,
    pub warnings: Vec<String>,
    /// How many devices run the program (`num_partitions` × `replica_count` of the HLO text
    /// beside the dump); every figure is per device. `None` without the HLO text.
    pub devices: Option<u32>,
    /// The HLO text's `num_partitions` (1 when it prints none); `None` without the text.
    pub num_partitions: Option<u32>,
    /// The HLO text's `replica_count` (1 when it prints none); `None` without the text.
    pub replica_count: Option<u32>,
    /// The loops on the time axis with what each carries and stacks ([`loops`]); left out
    /// without the HLO text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loops: Option<Vec<loops::LoopSummary>>,
    /// Why loops are missing or left out (a disagreement with `InstructionSequence`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub loop_warnings: Vec<String>,
    /// Waste per device: replicated values, gathered weights, donation
    /// ([`crate::answers::waste`]); left out unless an HLO text was read beside the dump.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waste: Option<crate::answers::waste::Waste>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpaceSummary {
    pub color: u32,
    /// Sum of the sizes of the allocations of this colour.
    pub allocated_bytes: u64,
    /// Number of values of this colour.
    pub values: u32,
    /// Highest occupied bytes over the schedule.
    pub peak_live_bytes: u64,
    /// First step where it is reached.
    pub peak_time: Option<u32>,
    /// The answers of issue 10, after the fields above ([`crate::summary::answers`]).
    #[serde(flatten)]
    pub extras: SpaceExtras,
    /// What each loop holds live at `peak_time`; left out without the HLO text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loops_at_peak: Option<Vec<loops::LoopAtPeak>>,
}

impl ModuleSummary {
    pub fn new(module: &Module, analysis: &Analysis) -> ModuleSummary {
        ModuleSummary::with_options(module, analysis, &SummaryOptions::default())
    }

    /// The summary with the answers asked by `options`.
    pub fn with_options(
        module: &Module,
        analysis: &Analysis,
        options: &SummaryOptions,
    ) -> ModuleSummary {
        ModuleSummary::with_options_by(module, analysis, options, in_turn)
    }

    /// [`ModuleSummary::with_options`], two parts of the answers computed by `both`
    /// (maybe at once: [`answers::module_extras`]).
    pub fn with_options_by(
        module: &Module,
        analysis: &Analysis,
        options: &SummaryOptions,
        both: Both,
    ) -> ModuleSummary {
        let (extras, module_loops) = module_extras(module, analysis, options, both);
        let mut at_peaks = (module_loops.as_ref())
            .map(|l| loops::at_peaks(l, module, analysis).into_iter().map(Some).collect())
            .unwrap_or_else(Vec::new)
            .into_iter();
        let memory_spaces = (analysis.spaces.iter().zip(extras))
            .map(|(s, extras)| SpaceSummary {
                color: s.color,
                allocated_bytes: s.allocated_bytes,
                values: s.value_count,
                peak_live_bytes: s.peak_bytes,
                peak_time: s.peak_time,
                extras,
                loops_at_peak: at_peaks.next().flatten(),
            })
            .collect();
        ModuleSummary {
            name: module.name.clone(),
            allocations: module.allocations.len() as u64,
            values: module.values.len() as u64,
            total_bytes: module.total_bytes(),
            schedule_length: module.schedule.as_ref().map(|s| s.max),
            memory_spaces,
            warnings: module.warnings.iter().map(|w| w.to_string()).collect(),
            devices: module.hlo.as_ref().map(|h| h.devices()),
            num_partitions: module.hlo.as_ref().map(|h| h.num_partitions.unwrap_or(1)),
            replica_count: module.hlo.as_ref().map(|h| h.replica_count.unwrap_or(1)),
            loops: module_loops.as_ref().map(loops::summaries),
            loop_warnings: module_loops.map_or_else(Vec::new, |l| l.loops.warnings),
            waste: waste::has_texts(module).then(|| crate::answers::waste::waste(module, analysis)),
        }
    }
}

/// Says that every figure is per device, and how many devices run the program when the HLO
/// text says so.
fn devices_line(m: &ModuleSummary) -> String {
    match (m.devices, m.num_partitions, m.replica_count) {
        (Some(1), _, _) => "  every figure is per device: 1 device runs this program\n".to_string(),
        (Some(d), Some(p), Some(r)) => format!(
            "  every figure is per device: {} devices run this program ({} partitions × {} replicas)\n",
            group_digits(u64::from(d)),
            group_digits(u64::from(p)),
            group_digits(u64::from(r)),
        ),
        _ => "  every figure is per device (the HLO text beside the dump says how many devices run it)\n".to_string(),
    }
}

impl Summary {
    /// The summary of each `(module, its analysis)`, in the order given.
    pub fn new<'a>(modules: impl IntoIterator<Item = (&'a Module, &'a Analysis)>) -> Summary {
        Summary::with_options(modules, &SummaryOptions::default())
    }

    /// [`Summary::new`] with the answers asked by `options`.
    pub fn with_options<'a>(
        modules: impl IntoIterator<Item = (&'a Module, &'a Analysis)>,
        options: &SummaryOptions,
    ) -> Summary {
        Summary::with_options_by(modules, options, in_turn)
    }

    /// [`Summary::with_options`], two parts of each module's answers computed by `both`
    /// (the command line: on two threads).
    pub fn with_options_by<'a>(
        modules: impl IntoIterator<Item = (&'a Module, &'a Analysis)>,
        options: &SummaryOptions,
        both: Both,
    ) -> Summary {
        let modules: Vec<(&Module, &Analysis)> = modules.into_iter().collect();
        Summary {
            device: waste::device(&modules, options),
            modules: (modules.iter())
                .map(|&(m, a)| ModuleSummary::with_options_by(m, a, options, both))
                .collect(),
        }
    }

    /// One JSON object, pretty-printed with a two-space indent.
    pub fn to_json(&self) -> String {
        // Plain structs of strings and integers always serialize.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// A readable table per module.
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        for (i, m) in self.modules.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            let name = if m.name.is_empty() {
                "(unnamed)"
            } else {
                &m.name
            };
            out.push_str(&format!("module {}\n", printable(name)));
            let schedule = match m.schedule_length {
                Some(n) => format!("schedule of {} steps", group_digits(u64::from(n))),
                None => "no schedule".to_string(),
            };
            out.push_str(&format!(
                "  {} allocations · {} values · {} allocated · {}\n",
                group_digits(m.allocations),
                group_digits(m.values),
                human_bytes(m.total_bytes),
                schedule,
            ));
            out.push_str(&devices_line(m));
            let mut rows = vec![[
                "color".to_string(),
                "memory space".to_string(),
                "allocated".to_string(),
                "values".to_string(),
                "peak live".to_string(),
                "peak step".to_string(),
            ]];
            for s in &m.memory_spaces {
                rows.push([
                    s.color.to_string(),
                    memory_space_name(s.color),
                    human_bytes(s.allocated_bytes),
                    group_digits(u64::from(s.values)),
                    human_bytes(s.peak_live_bytes),
                    s.peak_time
                        .map_or_else(|| "-".to_string(), |t| group_digits(u64::from(t))),
                ]);
            }
            out.push_str(&align(&rows, &[true, false, true, true, true, true]));
            if !m.warnings.is_empty() {
                out.push_str(&format!("  warnings ({}):\n", m.warnings.len()));
                for w in &m.warnings {
                    out.push_str(&format!("    {}\n", printable(w)));
                }
            }
            out.push_str(&loops::loops_block(m.loops.as_deref().unwrap_or(&[]), &m.loop_warnings));
            for s in &m.memory_spaces {
                out.push_str(&space_block(s.color, s.peak_time, &s.extras));
                out.push_str(&loops::at_peak_block(s.loops_at_peak.as_deref().unwrap_or(&[])));
            }
            out.push_str(&m.waste.as_ref().map_or_else(String::new, waste::waste_block));
        }
        out.push_str(&self.device.as_ref().map_or_else(String::new, waste::device_block));
        out
    }
}

/// Text for a terminal: control characters (which a dump's names may hold, ESC included)
/// written as escapes, so that printing a name cannot drive the terminal.
pub(crate) fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    if s.chars().any(char::is_control) {
        s.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect::<String>()
            .into()
    } else {
        s.into()
    }
}

/// Rows as aligned columns (right-aligned where `right`), indented by two spaces.
pub(crate) fn align<const N: usize>(rows: &[[String; N]], right: &[bool; N]) -> String {
    let mut widths = [0usize; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::from(" ");
        for ((cell, w), r) in row.iter().zip(widths).zip(right) {
            let pad = " ".repeat(w - cell.chars().count());
            line.push_str("  ");
            if *r {
                line.push_str(&pad);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&pad);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `text` cut at spaces into lines of at most `width` characters (a longer word stays
/// whole), the first after `first`, the others after `rest`, each ending in `\n`; nothing
/// for a text with no word. The one word wrapper of the summary's text.
pub(crate) fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut words = 0;
    for word in text.split_whitespace() {
        if words > 0 && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = rest.to_string();
            words = 0;
        }
        if words > 0 {
            line.push(' ');
        }
        line.push_str(word);
        words += 1;
    }
    if words > 0 {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_do_not_reach_the_terminal() {
        assert_eq!(printable("plain"), "plain");
        let shown = printable("bell\u{7}esc\u{1b}[31m");
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        assert!(shown.contains("\\u{1b}[31m"), "{shown:?}");
    }
    use crate::analysis::analyze;
    use crate::model::{AllocFlags, Allocation, LiveRange, Schedule, Value, Warning};

    fn module() -> Module {
        let mut m = Module {
            name: "jit_f".into(),
            ..Module::default()
        };
        let value = |allocation: u32,
                     offset: u64,
                     size: u64,
                     color: Option<u32>,
                     live: Option<(u32, u32)>| Value {
            id: 0,
            instruction: 0,
            index: Default::default(),
            phi: false,
            color,
            allocation,
            offset,
            size,
            shape: Default::default(),
            logical_size: Some(size),
            live: live.map(|(start, end)| LiveRange { start, end }),
            uses_text: Default::default(),
        };
        m.instructions.push(Default::default());
        m.allocations = vec![
            Allocation {
                index: 0,
                size: 4096,
                color: 0,
                page: None,
                parameter: None,
                output_shape: None,
                flags: AllocFlags::default(),
                values: 0..2,
            },
            Allocation {
                index: 1,
                size: 512,
                color: 1,
                page: None,
                parameter: None,
                output_shape: None,
                flags: AllocFlags::default(),
                values: 2..3,
            },
        ];
        m.values = vec![
            value(0, 0, 1024, None, Some((0, 2))),
            value(0, 1024, 2048, None, Some((1, 3))),
            value(1, 0, 512, Some(1), Some((2, 2))),
        ];
        m.schedule = Some(Schedule {
            max: 4,
            ..Schedule::default()
        });
        m.warnings.push(Warning {
            file: "f.txt".into(),
            line: 7,
            message: "odd line".into(),
        });
        m
    }

    #[test]
    fn json_has_the_agreed_shape() {
        let m = module();
        let a = analyze(&m);
        let mut json: serde_json::Value =
            serde_json::from_str(&Summary::new([(&m, &a)]).to_json()).unwrap();
        // The fields of the answers follow these (their order: tests/summary_cli.rs).
        for space in json["modules"][0]["memory_spaces"].as_array_mut().unwrap() {
            space.as_object_mut().unwrap().retain(|k, _| {
                [
                    "color",
                    "allocated_bytes",
                    "values",
                    "peak_live_bytes",
                    "peak_time",
                ]
                .contains(&k.as_str())
            });
        }
        let expected = serde_json::json!({"modules": [{
            "name": "jit_f",
            "allocations": 2,
            "values": 3,
            "total_bytes": 4608,
            "schedule_length": 4,
            "memory_spaces": [
                {"color": 0, "allocated_bytes": 4096, "values": 2, "peak_live_bytes": 3072, "peak_time": 1},
                {"color": 1, "allocated_bytes": 512, "values": 1, "peak_live_bytes": 512, "peak_time": 2},
            ],
            "warnings": ["f.txt:7: odd line"],
            // Without the HLO text beside the dump, how many devices is unknown.
            "devices": null,
            "num_partitions": null,
            "replica_count": null,
        }]});
        assert_eq!(json, expected);
    }

    #[test]
    fn json_nulls_and_indent() {
        let m = Module {
            name: "empty".into(),
            ..Module::default()
        };
        let a = analyze(&m);
        let text = Summary::new([(&m, &a)]).to_json();
        assert!(text.contains("\n  \"modules\": [\n"), "{text}");
        assert!(text.contains("\"schedule_length\": null"), "{text}");
        assert_eq!(Summary::default().to_json(), "{\n  \"modules\": []\n}");
    }

    #[test]
    fn table_is_aligned_and_readable() {
        let m = module();
        let a = analyze(&m);
        let table = Summary::new([(&m, &a)]).to_table();
        let expected = "\
module jit_f
  2 allocations · 3 values · 4.5 KiB allocated · schedule of 4 steps
  every figure is per device (the HLO text beside the dump says how many devices run it)
   color  memory space  allocated  values  peak live  peak step
       0  default         4.0 KiB       2    3.0 KiB          1
       1  vmem              512 B       1      512 B          2
  warnings (1):
    f.txt:7: odd line
";
        // The answers of each memory space follow.
        assert!(table.starts_with(expected), "{table}");
        assert!(table.contains("\n  memory space 1 (vmem) at step 2, the peak: 512 B"));
    }

    #[test]
    fn devices_from_the_hlo_text() {
        let mut m = module();
        let text = "HloModule jit_f, num_partitions=4, replica_count=2\n";
        m.hlo = Some(Box::new(
            crate::parse::hlo::read_hlo("f.after_optimizations.txt", text.as_bytes()).text,
        ));
        let a = analyze(&m);
        let s = Summary::new([(&m, &a)]);
        let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        let m0 = &json["modules"][0];
        assert_eq!(
            (&m0["devices"], &m0["num_partitions"], &m0["replica_count"]),
            (
                &serde_json::json!(8),
                &serde_json::json!(4),
                &serde_json::json!(2)
            )
        );
        assert!(s.to_table().contains("\n  every figure is per device: 8 devices run this program (4 partitions × 2 replicas)\n"));
    }
}
