//! The live bytes of a step by category: parameters (split into model parameters, optimizer
//! state and inputs where the dump names parameters after Python arguments), outputs,
//! constants, gradients, activations, gathered weights, other temporaries. Each category
//! carries the rule that puts a value in it; the split of parameters is a heuristic and says
//! so.
//!
//! A value's kind is [`Module::kind`]. A parameter's *path* is its instruction's op_name when
//! that reads as a Python path (jax < 0.7 writes `opt_state[0].mu[0]['w']`, `p['ln1']`, `x`
//! there), else its instruction name without the `.N` suffix when jax ≥ 0.7 named it after
//! the argument (`params_0___w__.1`, `opt_state_0__mu_0___w__.1`). Names XLA makes up
//! (`Arg_0.1`, `arg3.1`, `parameter.2`, `p0.1`) and op_names such as `XLA_Args` give no path.
//! With the HLO text beside the dump, the path is the op_name of the entry computation's
//! `parameter` instruction there ([`crate::query::parameter_path`]: MaxText's
//! `state['model']['decoder']…`). The path's root (up to the first `[`, `.`, `'` or `(`; in
//! an instruction name up to the first `_` followed by `_` or a digit) decides, and so does
//! any word of a printed path (`state['optimizer']…['mu']` is optimizer state, `state['model']…`
//! model parameters).
//!
//! Temporaries split three ways. With the HLO text, by its dataflow ([`flow`]): gradients
//! are what flows into the optimizer's update of the parameters (a scan's stacked per-layer
//! gradients, the backward `while`'s outputs, included), activations the forward pass's
//! temporaries still live in the backward pass (the residual stacks), the rest other
//! temporaries (the backward pass's cotangents among them). Before those, with the text after
//! optimizations, the arrays an all-gather makes from a parameter are gathered weights
//! ([`gathered`]). Without the text, by op_name only: a
//! temporary made by the backward pass (`transpose(jvp(…))`, jax's transpose) is a
//! gradient, a forward one live in the backward pass an activation.

pub mod flow;
pub mod gathered;

use hashbrown::HashSet;
use serde::Serialize;

use crate::analysis::{value_kind, ValueKind};
use crate::answers::LiveSet;
use crate::model::Module;
use flow::{is_backward, is_forward, Flow};

/// A category of live values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    ModelParameters,
    OptimizerState,
    Inputs,
    /// Parameters whose names tell nothing.
    Parameters,
    Outputs,
    Constants,
    /// The parameters' gradients.
    Gradients,
    /// The forward pass's temporaries kept for (or recomputed in) the backward pass.
    Activations,
    /// Arrays all-gathered from an entry parameter (FSDP's gathered weights).
    Gathered,
    /// Every other temporary.
    Temporaries,
    ThreadLocal,
}

impl Category {
    pub fn label(self) -> &'static str {
        match self {
            Category::ModelParameters => "model parameters",
            Category::OptimizerState => "optimizer state",
            Category::Inputs => "inputs",
            Category::Parameters => "parameters",
            Category::Outputs => "outputs",
            Category::Constants => "constants",
            Category::Gradients => "gradients",
            Category::Activations => "activations",
            Category::Gathered => "gathered weights",
            Category::Temporaries => "other temporaries",
            Category::ThreadLocal => "thread-local",
        }
    }

    /// The rule that puts a value in this category.
    pub fn rule(self) -> &'static str {
        match self {
            Category::ModelParameters => "heuristic: an entry parameter whose Python path starts with params, param, p, weights, w, variables, vars or model, or has params, model, weights or variables in it",
            Category::OptimizerState => "heuristic: an entry parameter whose Python path starts with opt (opt_state, optimizer), adam, momentum, mu or nu, or has one of those in it",
            Category::Inputs => "heuristic: an entry parameter with any other Python path (x, y, batch, ...)",
            Category::Parameters => "an entry parameter whose name is made up by XLA (Arg_0.1, arg3.1, parameter.2): no Python path to split by",
            Category::Outputs => "a value in a maybe-live-out allocation that lives to the end of the program",
            Category::Constants => "a value in a constant allocation",
            Category::Gradients => "heuristic: with the HLO text, a temporary that flows into the optimizer's update (an entry output with a parameter's type and element count): reached back from the update's operands through values of the same element count (any count through collectives, slices, concatenations and asynchronous copies), a parameter carried as it is excepted; a while's output element with every value holding it (a scan's stacked per-layer gradients); without it, a temporary whose op_name has transpose( (jax's backward pass), rematted_computation excepted",
            Category::Activations => "heuristic: a temporary of jax's forward pass (jvp( in its op_name outside transpose(, or rematted_computation) still live once the backward pass (the first value whose op_name has transpose() has begun, or a value holding a forward loop's stacked element (a scan's residuals)",
            Category::Gathered => "with the HLO text after optimizations, a temporary holding what an all-gather (or its asynchronous start and done) makes from an entry parameter's data, traced back through moves of data, fusions and loops' tuples: FSDP's gathered weights (XProf's \"Gathered\")",
            Category::Temporaries => "any other value: intermediate results (the backward pass's cotangents among them), including those that reuse a donated parameter's buffer before the end",
            Category::ThreadLocal => "a value in a thread-local allocation",
        }
    }

    pub fn is_heuristic(self) -> bool {
        matches!(
            self,
            Category::ModelParameters
                | Category::OptimizerState
                | Category::Inputs
                | Category::Gradients
                | Category::Activations
        )
    }
}

/// One category's share of the live bytes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CategoryRow {
    pub category: Category,
    pub label: &'static str,
    pub rule: &'static str,
    pub heuristic: bool,
    pub bytes: u64,
    pub value_bytes: u64,
    pub count: u32,
    pub percent: f64,
    #[serde(skip)]
    pub values: Vec<u32>,
}

/// What a module's categories need computed once: the dataflow of its HLO text ([`Flow`]),
/// else the start of its backward pass by op_name.
#[derive(Clone, Debug, Default)]
pub struct Categories {
    flow: Flow,
    /// The first step of a value whose op_name is the backward pass's (no HLO text).
    backward_start: Option<u32>,
    /// The values holding an array all-gathered from a parameter ([`gathered`]).
    gathered: HashSet<u32>,
}

impl Categories {
    pub fn new(module: &Module) -> Categories {
        let flow = Flow::new(module);
        let backward_start = if flow.read { None } else { flow::backward_start(module) };
        Categories { flow, backward_start, gathered: gathered::gathered_weights(module) }
    }

    /// The category of one value.
    pub fn of(&self, module: &Module, value: u32) -> Category {
        let v = &module.values[value as usize];
        match value_kind(module, v) {
            ValueKind::Parameter => parameter_category(module, value),
            ValueKind::Output => Category::Outputs,
            ValueKind::Constant => Category::Constants,
            ValueKind::ThreadLocal => Category::ThreadLocal,
            ValueKind::Temporary => self.temporary(module, value),
            ValueKind::Scratch => Category::Temporaries,
        }
    }

    fn temporary(&self, module: &Module, value: u32) -> Category {
        if self.gathered.contains(&value) {
            return Category::Gathered;
        }
        if self.flow.read {
            return if self.flow.gradients.contains(&value) {
                Category::Gradients
            } else if self.flow.activations.contains(&value) {
                Category::Activations
            } else {
                Category::Temporaries
            };
        }
        let v = &module.values[value as usize];
        let op_name = module.str(module.instruction(v).op_name);
        if is_backward(op_name) {
            Category::Gradients
        } else if is_forward(op_name) && self.backward_start.is_some_and(|s| v.live.is_some_and(|r| r.end >= s)) {
            Category::Activations
        } else {
            Category::Temporaries
        }
    }
}

/// The words of a printed Python path, lower-cased: `state['optimizer'][0]['mu']` →
/// `state`, `optimizer`, `0`, `mu`.
fn path_words(path: &str) -> impl Iterator<Item = String> + '_ {
    path.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
}

fn parameter_category(module: &Module, value: u32) -> Category {
    let v = &module.values[value as usize];
    let i = module.instruction(v);
    let op_name = crate::query::parameter_path(module, v).unwrap_or(module.str(i.op_name));
    let root = python_root(op_name, module.str(i.name));
    let Some(root) = root else {
        return Category::Parameters;
    };
    let root = root.to_ascii_lowercase();
    // A printed path's words (an instruction name's are its root only).
    let words: Vec<String> = if root.len() < op_name.trim().len() && !op_name.contains('/') {
        path_words(op_name).collect()
    } else {
        Vec::new()
    };
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    let w_digits = root
        .strip_prefix('w')
        .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()));
    let optimizer = ["adam", "momentum", "mu", "nu"];
    if root.starts_with("opt")
        || optimizer.contains(&root.as_str())
        || has(&optimizer)
        || has(&["optimizer", "opt_state"])
    {
        Category::OptimizerState
    } else if w_digits
        || [
            "params",
            "param",
            "p",
            "weights",
            "variables",
            "vars",
            "model",
        ]
        .contains(&root.as_str())
        || has(&["params", "model", "weights", "variables"])
    {
        Category::ModelParameters
    } else {
        Category::Inputs
    }
}

/// The root of a parameter's Python path, from its op_name or else its instruction name.
fn python_root<'a>(op_name: &'a str, name: &'a str) -> Option<&'a str> {
    let op = op_name.trim();
    let pythonic = !op.is_empty()
        && !op.contains('/')
        && !op.contains("jit(")
        && op != "XLA_Args"
        && !made_up(op);
    if pythonic {
        let end = op.find(['[', '.', '\'', '(']).unwrap_or(op.len());
        return Some(&op[..end]).filter(|r| !r.is_empty());
    }
    let base = name.rsplit_once('.').map_or(name, |(b, n)| {
        if n.bytes().all(|c| c.is_ascii_digit()) {
            b
        } else {
            name
        }
    });
    if base.is_empty() || made_up(base) {
        return None;
    }
    let bytes = base.as_bytes();
    let end = (0..bytes.len())
        .find(|&k| {
            bytes[k] == b'_'
                && bytes
                    .get(k + 1)
                    .is_some_and(|&c| c == b'_' || c.is_ascii_digit())
        })
        .unwrap_or(bytes.len());
    Some(&base[..end]).filter(|r| !r.is_empty())
}

/// Names XLA gives parameters itself: `Arg_0`, `arg3`, `parameter`, `parameter.2`, `p0`,
/// `param_1`.
fn made_up(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let base = lower.split('.').next().unwrap_or("");
    ["arg_", "arg", "parameter_", "parameter", "param_", "p"]
        .iter()
        .any(|p| {
            base.strip_prefix(p).is_some_and(|rest| {
                rest.bytes().all(|b| b.is_ascii_digit()) && (!rest.is_empty() || *p == "parameter")
            })
        })
}

/// The live set by category, largest first.
pub fn by_category(module: &Module, live: &LiveSet) -> Vec<CategoryRow> {
    by_category_with(module, &Categories::new(module), live)
}

/// [`by_category`] with the module's [`Categories`] computed once.
pub fn by_category_with(module: &Module, cats: &Categories, live: &LiveSet) -> Vec<CategoryRow> {
    let mut rows: Vec<CategoryRow> = Vec::new();
    for lv in &live.values {
        let c = cats.of(module, lv.value);
        let at = match rows.iter().position(|r| r.category == c) {
            Some(at) => at,
            None => {
                rows.push(CategoryRow {
                    category: c,
                    label: c.label(),
                    rule: c.rule(),
                    heuristic: c.is_heuristic(),
                    bytes: 0,
                    value_bytes: 0,
                    count: 0,
                    percent: 0.0,
                    values: Vec::new(),
                });
                rows.len() - 1
            }
        };
        let r = &mut rows[at];
        r.bytes += lv.bytes;
        r.value_bytes += lv.size;
        r.count += 1;
        r.values.push(lv.value);
    }
    for r in &mut rows {
        r.percent = crate::answers::groups::percent(r.bytes, live.occupied_bytes);
    }
    rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.category.cmp(&b.category)));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_roots() {
        assert_eq!(
            python_root("opt_state[0].mu[0]['w']", "Arg_9.10"),
            Some("opt_state")
        );
        assert_eq!(python_root("p['ln1']", "Arg_0.1"), Some("p"));
        assert_eq!(python_root("x", "Arg_0.1"), Some("x"));
        assert_eq!(python_root("", "params_0___w__.1"), Some("params"));
        assert_eq!(
            python_root("opt_state[0].count", "opt_state_0__count.1"),
            Some("opt_state")
        );
        assert_eq!(
            python_root("", "opt_state_0__mu_0___w__.1"),
            Some("opt_state")
        );
        assert_eq!(python_root("", "p__ln1__.1"), Some("p"));
        assert_eq!(python_root("", "batch_images.1"), Some("batch_images"));
        assert_eq!(python_root("XLA_Args", "arg2.1"), None);
        assert_eq!(python_root("", "Arg_0.1"), None);
        assert_eq!(
            python_root("jit(f)/jit(main)/reduce_sum", "parameter.3"),
            None
        );
        assert_eq!(python_root("", "p0.1"), None);
    }

    #[test]
    fn whole_paths() {
        let words: Vec<String> = path_words("state['optimizer'][0]['mu']['decoder']").collect();
        assert_eq!(words, ["state", "optimizer", "0", "mu", "decoder"]);
    }
}
