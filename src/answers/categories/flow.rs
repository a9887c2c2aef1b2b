//! Which temporaries are gradients and which are activations, from the HLO text's dataflow
//! (the module's `*after_optimizations.txt`) and the values' op_names.
//!
//! **Updates.** An output of the entry computation (an element of its `ROOT` tuple) is a
//! parameter's update when it is a floating-point array of 2 or more elements with the
//! element type and element count of an entry parameter (the new parameters, Adam's new mu
//! and nu; not the step count, an integer, nor the loss, a scalar). Its *update
//! instruction* is what computes it, found through `copy-done`, `copy-start`, `copy`,
//! `bitcast` and get-tuple-elements (the optimizer's fusion, `multiply_add_fusion.5#0`); an
//! output that is a parameter passed through has none.
//!
//! **Gradients.** From each operand of an update instruction that is no entry parameter
//! (nor one carried as it is through copies or a loop's tuple), constant or other update
//! instruction, the walk goes back through the entry computation
//! while the element count stays the updated array's (any opcode: a reshape, a transposed
//! layout, a bf16 copy, the sum of two uses; through what only moves or cuts data, any
//! count: collectives, slices, concatenations, asynchronous copies, so the TPU's chunked
//! prefetch of a gradient into VMEM too): every value it reaches is a gradient. At a `while` it stops: the loop's tuple element it
//! reaches is a gradient with every value that holds it ([`crate::answers::loops`]: the
//! zeros it starts from, the body's parameter element, the in-place
//! dynamic-update-slice), so a scan's stacked per-layer gradients are gradients whatever
//! their op_names say.
//!
//! **Activations.** A temporary of jax's forward pass (its op_name has `jvp(` outside any
//! `transpose(`, or is a forward computation rematerialized inside it,
//! `rematted_computation`) still live once the backward pass (the first value whose op_name
//! has `transpose(`) has begun: the residuals kept for the backward pass and those it
//! recomputes; and every value holding a stacked element of a forward loop (the scan's
//! residual stacks, in its body too).

use hashbrown::{HashMap, HashSet};

use crate::answers::loops::{value_of_operand, ModuleLoops, Role};
use crate::model::hlo::{Computation, HloText};
use crate::model::Module;
use crate::shape::{dimensions, tuple_elements};

/// The values the dataflow puts in a category; empty without an HLO text.
#[derive(Clone, Debug, Default)]
pub struct Flow {
    /// Whether the HLO text was there to read.
    pub read: bool,
    pub gradients: HashSet<u32>,
    pub activations: HashSet<u32>,
}

/// Whether an op_name is the backward pass's: jax's `transpose(jvp(…))`, not a forward
/// computation rematerialized inside it.
pub fn is_backward(op_name: &str) -> bool {
    op_name.contains("transpose(") && !op_name.contains("rematted_computation")
}

/// Whether an op_name is jax's forward pass of a differentiated function, or a forward
/// computation rematerialized in the backward pass.
pub fn is_forward(op_name: &str) -> bool {
    let before_transpose = op_name.split("transpose(").next().unwrap_or("");
    before_transpose.contains("jvp(") || op_name.contains("rematted_computation")
}

/// The first step of a value whose op_name is the backward pass's ([`is_backward`]).
pub fn backward_start(module: &Module) -> Option<u32> {
    (module.values.iter())
        .filter(|v| is_backward(module.str(module.instruction(v).op_name)))
        .filter_map(|v| v.live.map(|r| r.start))
        .min()
}

/// A shape's element type (`bf16`) and element count; `None` for a tuple or no array.
fn array(shape: &str) -> Option<(&str, u64)> {
    let s = shape.trim();
    let ty = &s[..s.find('[')?];
    let count = dimensions(s)?.iter().try_fold(1u64, |a, &d| a.checked_mul(d))?;
    Some((ty, count))
}

fn is_float(ty: &str) -> bool {
    ty.starts_with('f') || ty == "bf16"
}

/// Whether an instruction only moves or cuts its operands' elements (so that an operand
/// may hold more or fewer elements than the array it becomes): a collective, a slice, a
/// concatenation (the TPU's `ConcatBitcast` custom call too), an asynchronous copy.
pub(crate) fn moves_data(hlo: &HloText, i: &crate::model::hlo::HloInstruction) -> bool {
    let opcode = hlo.opcode(i);
    ["all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute", "async-", "copy-"]
        .iter()
        .any(|c| opcode.starts_with(c))
        || matches!(opcode, "concatenate" | "slice" | "dynamic-slice")
        || (opcode == "custom-call" && hlo.custom_call_target(i).is_some_and(|t| t.contains("Concat")))
}

/// One step of the walk: an instruction's output (`{}`) or tuple element (`{2}`).
type Node<'a> = (&'a str, String);

struct Walk<'a> {
    hlo: &'a HloText,
    entry: &'a Computation,
    values: HashMap<(&'a str, &'a str), u32>,
    loops: Option<ModuleLoops>,
    seen: HashSet<Node<'a>>,
    gradients: HashSet<u32>,
}

impl<'a> Walk<'a> {
    /// The shape of a node as printed (a tuple element's for `{k}`).
    fn shape(&self, (name, index): &Node<'a>) -> Option<&'a str> {
        let i = self.hlo.find_in(self.entry, name)?;
        let shape = self.hlo.shape(i);
        match index.strip_prefix('{').and_then(|k| k.strip_suffix('}')).filter(|k| !k.is_empty()) {
            Some(k) => tuple_elements(shape)?.get(k.parse::<usize>().ok()?).copied(),
            None => Some(shape),
        }
    }

    fn node(&self, operand: &'a str) -> Node<'a> {
        value_of_operand(self.hlo, self.entry, operand)
    }

    /// The instruction that computes an output, through copies and get-tuple-elements.
    fn producer(&self, mut node: Node<'a>) -> Option<Node<'a>> {
        for _ in 0..16 {
            let i = self.hlo.find_in(self.entry, node.0)?;
            match self.hlo.opcode(i) {
                "copy-done" | "copy-start" | "copy" | "bitcast" => node = self.node(self.hlo.operand(i, 0)?),
                "parameter" => return None,
                _ => return Some(node),
            }
        }
        None
    }

    /// Marks the value of `node` a gradient (a whole array's index read as `{}` or empty).
    /// Whether `node` is an entry parameter carried as it is: through copies and a
    /// `while`'s tuple (the element's init operand), as a loop carries a parameter it reads.
    fn is_parameter(&self, mut node: Node<'a>) -> bool {
        for _ in 0..16 {
            let Some(i) = self.hlo.find_in(self.entry, node.0) else { return false };
            let next = match self.hlo.opcode(i) {
                "parameter" => return true,
                "copy-done" | "copy-start" | "copy" | "bitcast" => self.hlo.operand(i, 0),
                "while" => {
                    let init = self.hlo.operand(i, 0).and_then(|o| self.hlo.find_in(self.entry, o));
                    let k = node.1.trim_matches(['{', '}']).parse::<usize>().ok();
                    match (init, k) {
                        (Some(t), Some(k)) if self.hlo.opcode(t) == "tuple" => self.hlo.operand(t, k),
                        _ => None,
                    }
                }
                _ => None,
            };
            let Some(next) = next else { return false };
            node = self.node(next);
        }
        false
    }

    fn mark(&mut self, (name, index): &Node<'a>) {
        let whole = index.is_empty() || index == "{}";
        let v = match whole {
            true => self.values.get(&(*name, "{}")).or_else(|| self.values.get(&(*name, ""))),
            false => self.values.get(&(*name, index.as_str())),
        };
        if let Some(&v) = v {
            self.gradients.insert(v);
        }
    }

    /// The gradient walk from `node`, an array of `count` elements.
    fn back(&mut self, start: Node<'a>, count: u64) {
        let mut todo = vec![start];
        while let Some(node) = todo.pop() {
            if !self.seen.insert(node.clone()) {
                continue;
            }
            let Some(i) = self.hlo.find_in(self.entry, node.0) else { continue };
            let opcode = self.hlo.opcode(i);
            if opcode == "constant" || self.is_parameter(node.clone()) {
                continue;
            }
            // A tuple reached whole (a `copy-start`, an `all-reduce-start`) is passed through.
            let whole_tuple = node.1.is_empty() && self.hlo.shape(i).trim_start().starts_with('(');
            if !whole_tuple {
                self.mark(&node);
            }
            if opcode == "while" {
                self.loop_element(&node);
                continue;
            }
            let lenient = moves_data(self.hlo, i) || whole_tuple;
            for o in self.hlo.operands(i) {
                let next = self.node(o);
                let n = self.shape(&next).and_then(array).map(|a| a.1);
                let fits = match n {
                    Some(n) => n == count || (lenient && n > 0 && (n % count == 0 || count % n == 0)),
                    None => self.shape(&next).is_some_and(|s| s.trim_start().starts_with('(')),
                };
                if fits {
                    todo.push(next);
                }
            }
        }
    }

    /// Marks every value holding the loop element `node` (`while.42{4}`).
    fn loop_element(&mut self, (name, index): &Node<'a>) {
        let Some(k) = index.trim_matches(['{', '}']).parse::<u32>().ok() else { return };
        let Some(ml) = &self.loops else { return };
        let Some(li) = ml.loops.loops.iter().position(|l| l.while_name == *name) else { return };
        if let Some(e) = ml.hold(li).and_then(|h| h.elements.iter().find(|e| e.index == k)) {
            self.gradients.extend(e.held_by.iter().copied());
        }
    }
}

impl Flow {
    /// The flow of `module` (empty without its HLO text).
    pub fn new(module: &Module) -> Flow {
        let Some(hlo) = module.hlo.as_deref() else { return Flow::default() };
        let Some(entry) = hlo.entry.and_then(|e| hlo.computations.get(e as usize)) else {
            return Flow { read: true, ..Flow::default() };
        };
        let has_while = entry.instructions.iter().any(|i| hlo.opcode(i) == "while");
        let mut walk = Walk {
            hlo,
            entry,
            values: all_values(module),
            loops: has_while.then(|| ModuleLoops::new(module)),
            seen: HashSet::new(),
            gradients: HashSet::new(),
        };
        let updates = updates(&walk);
        let is_update: HashSet<&str> = updates.iter().map(|(n, _)| *n).collect();
        for (u, counts) in &updates {
            let Some(i) = hlo.find_in(entry, u) else { continue };
            for o in hlo.operands(i) {
                let node = walk.node(o);
                if is_update.contains(node.0) {
                    continue;
                }
                let n = walk.shape(&node).and_then(array).map(|a| a.1);
                if let Some(n) = n.filter(|n| counts.contains(n)) {
                    walk.back(node, n);
                }
            }
        }
        let activations = activations(module, walk.loops.as_ref(), &walk.gradients);
        Flow { read: true, gradients: walk.gradients, activations }
    }
}

/// Every value by `(instruction name, shape index)`.
fn all_values(module: &Module) -> HashMap<(&str, &str), u32> {
    let mut out = HashMap::with_capacity(module.values.len());
    for (k, v) in module.values.iter().enumerate() {
        let name = module.str(module.instruction(v).name);
        out.entry((name, module.str(v.index))).or_insert(k as u32);
    }
    out
}

/// The update instructions of the entry's outputs, each with the element counts it updates.
fn updates<'a>(walk: &Walk<'a>) -> Vec<(&'a str, Vec<u64>)> {
    let (hlo, entry) = (walk.hlo, walk.entry);
    let params: HashSet<(&str, u64)> = (entry.instructions.iter())
        .filter(|i| hlo.opcode(i) == "parameter")
        .filter_map(|i| array(hlo.shape(i)))
        .collect();
    let Some(root) = crate::analysis::loops::trip::root(entry) else { return Vec::new() };
    let outputs: Vec<&str> = if hlo.opcode(root) == "tuple" {
        hlo.operands(root).collect()
    } else {
        vec![hlo.name(root)]
    };
    let mut out: Vec<(&str, Vec<u64>)> = Vec::new();
    for o in outputs {
        let node = walk.node(o);
        let Some((ty, n)) = walk.shape(&node).and_then(array) else { continue };
        if !is_float(ty) || n < 2 || !params.contains(&(ty, n)) {
            continue;
        }
        let Some((u, _)) = walk.producer(node) else { continue };
        match out.iter_mut().find(|(name, _)| *name == u) {
            Some((_, counts)) if !counts.contains(&n) => counts.push(n),
            Some(_) => {}
            None => out.push((u, vec![n])),
        }
    }
    out
}

/// The activations: forward temporaries live once the backward pass has begun, and the
/// values holding a forward loop's stacked elements.
fn activations(module: &Module, loops: Option<&ModuleLoops>, gradients: &HashSet<u32>) -> HashSet<u32> {
    let op_name = |v: &crate::model::Value| module.str(module.instruction(v).op_name);
    let Some(start) = backward_start(module) else { return HashSet::new() };
    let temporary = |k: u32| {
        let v = &module.values[k as usize];
        !gradients.contains(&k) && crate::analysis::value_kind(module, v) == crate::analysis::ValueKind::Temporary
    };
    let mut out: HashSet<u32> = (0..module.values.len() as u32)
        .filter(|&k| temporary(k))
        .filter(|&k| {
            let v = &module.values[k as usize];
            is_forward(op_name(v)) && v.live.is_some_and(|r| r.end >= start)
        })
        .collect();
    if let Some(ml) = loops {
        for h in &ml.holds {
            let Some(l) = ml.loops.loops.get(h.loop_index as usize) else { continue };
            if is_backward(l.op_name.as_deref().unwrap_or("")) {
                continue;
            }
            for e in h.elements.iter().filter(|e| e.role == Role::Stacked) {
                out.extend(e.held_by.iter().copied().filter(|&k| temporary(k)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::loops::tests::{ins, module, scan};
    use crate::answers::loops::tests::push_value;
    use crate::model::{Allocation, LiveRange};

    /// The scan of `analysis::loops::tests` made a training step: its stacked element 2 is
    /// the gradient of the entry parameter `w8`, which `upd` (the optimizer) updates; the
    /// carry `x` feeds no update; `loss` is a scalar output. A whole array's value has an
    /// empty index, as in the dumps.
    fn train_step() -> Module {
        let (mut hlo, mut names) = scan();
        let main = hlo.computations.last_mut().unwrap();
        main.instructions.pop(); // `out`
        main.instructions.push(ins("upd", "fusion", "f32[8,4]", &["w8", "while.1#2"]));
        main.instructions.push(ins("loss", "reduce", "f32[]", &["while.1#1"]));
        let mut root = ins("root.main", "tuple", "(f32[8,4], f32[])", &["upd", "loss"]);
        root.is_root = true;
        main.instructions.push(root);
        names.pop();
        names.extend(["upd", "loss", "root.main"]);
        let mut m = module(hlo, &names);
        m.allocations.push(Allocation { index: 0, size: 1 << 20, color: 0, page: None, parameter: None, output_shape: None, flags: Default::default(), values: 0..6 });
        for (name, index) in [("while.1", "{2}"), ("buf", ""), ("dus", ""), ("while.1", "{1}"), ("x", ""), ("upd", "")] {
            push_value(&mut m, name, index, 128, LiveRange { start: 1, end: 2 });
        }
        m
    }

    #[test]
    fn what_flows_into_the_update_is_a_gradient() {
        let m = train_step();
        let f = Flow::new(&m);
        assert!(f.read);
        let mut got: Vec<String> = f.gradients.iter().map(|&v| m.value_name(&m.values[v as usize])).collect();
        got.sort();
        // The while's element, the zeros it starts from and the in-place update in the body;
        // not the carry `x`, the loss, nor the update itself.
        assert_eq!(got, ["buf", "dus", "while.1{2}"]);
    }

    #[test]
    fn op_names_of_the_two_passes() {
        assert!(is_backward("jit(train_step)/transpose(jvp())/while/body/dot_general"));
        assert!(!is_backward("jit(train_step)/transpose(jvp())/while/body/checkpoint/rematted_computation/dot_general"));
        assert!(is_forward("jit(train_step)/jvp()/while/body/dot_general"));
        assert!(is_forward("jit(train_step)/transpose(jvp())/while/body/checkpoint/rematted_computation/mul"));
        assert!(!is_forward("jit(train_step)/transpose(jvp())/dot_general"));
        assert!(!is_forward("jit(train_step)/add"));
        assert_eq!(array("bf16[8,1024]{1,0:T(8,128)(2,1)}"), Some(("bf16", 8192)));
        assert_eq!(array("(f32[2], s32[])"), None);
    }
}
