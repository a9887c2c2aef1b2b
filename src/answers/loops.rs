//! What the loops hold: for each `while` ([`crate::analysis::loops`]), the elements of the
//! tuple it carries, each one a loop counter, a loop-invariant carry (the body passes it
//! through unchanged: stacked parameters), a per-iteration output stacked along a leading
//! dimension equal to the trip count (updated in place by a dynamic-update-slice each
//! iteration: the residuals saved for the backward pass), or a carry that changes each
//! iteration (the scan's state); their bytes live at any step; and the body's per-iteration
//! temporaries.
//!
//! An element's value is the one the while defines (`while.43{2}`), else, where the while
//! defines none because the element shares the buffer it came in (an invariant carry), the
//! value of the init tuple's operand (`param.6`). At a step, an element's bytes are those of
//! whichever of its values holds it then (the init operand before the loop, the body's
//! parameter or update inside it, the while's value after it), counted once: values' own
//! sizes, so a buffer handed from one loop to the next (the forward scan's residuals, read
//! by the backward scan) counts in each loop that holds it.

use hashbrown::{HashMap, HashSet};
use serde::Serialize;

use crate::analysis::loops::trip::{counter_element, parameter, parameter_element, root};
use crate::analysis::loops::{loops, Loop, Loops};
use crate::model::hlo::{CallRole, Computation, HloInstruction, HloText};
use crate::model::Module;
use crate::shape::{dimensions, tuple_elements};

/// What an element of a loop's tuple is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The `i` of the condition `i < N`.
    Counter,
    /// Passed through the body unchanged.
    Invariant,
    /// Updated in place each iteration along a leading dimension of the trip count.
    Stacked,
    /// Changed each iteration (the scan's state, a gradient being summed).
    Carry,
}

impl Role {
    pub fn label(self) -> &'static str {
        match self {
            Role::Counter => "counter",
            Role::Invariant => "loop-invariant",
            Role::Stacked => "stacked per iteration",
            Role::Carry => "carry",
        }
    }
}

/// One element of a loop's tuple.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Element {
    pub index: u32,
    pub role: Role,
    /// As the while's shape prints it.
    pub shape: String,
    /// Index into [`Module::values`]; `None` when no value of the dump holds it.
    #[serde(skip)]
    pub value: Option<u32>,
    /// `while.43{2}`, or the init operand's value (`param.6{}`).
    pub value_name: Option<String>,
    /// Whether the value is the while's own (not the init operand's).
    #[serde(skip)]
    pub own: bool,
    /// The value's own size (0 without one).
    pub size: u64,
    /// Every value that holds the element at some step: `value`, the init operand's, the
    /// body's and the condition's parameter element, what the body's root carries in it.
    #[serde(skip)]
    pub held_by: Vec<u32>,
}

/// The tuple of one loop and its body's temporaries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoopHold {
    /// Index into [`Loops::loops`].
    #[serde(rename = "loop")]
    pub loop_index: u32,
    pub elements: Vec<Element>,
    /// Values defined in the body for one iteration (not its parameter, root tuple or what
    /// the root tuple carries to the next iteration).
    #[serde(skip)]
    pub temporaries: Vec<u32>,
}

/// What one loop holds live at a step, in one memory space.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HeldAt {
    #[serde(rename = "while")]
    pub while_name: String,
    pub name: String,
    pub stacked_bytes: u64,
    /// Loop-invariant carries, changing carries and the counter.
    pub carry_bytes: u64,
    /// Of which loop-invariant.
    pub invariant_bytes: u64,
    /// The body's temporaries live at the step (0 outside the body).
    pub temporary_bytes: u64,
}

/// The body's temporaries in one memory space: the most bytes live at once over the body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Temporaries {
    pub values: u32,
    pub peak_bytes: u64,
    /// The first body step where `peak_bytes` is live.
    pub peak_step: Option<u32>,
}

/// A module's loops and what each holds, computed once for the views and the summary.
#[derive(Clone, Debug, Default)]
pub struct ModuleLoops {
    pub loops: Loops,
    pub holds: Vec<LoopHold>,
}

impl ModuleLoops {
    /// The loops of `module` (none, with [`crate::analysis::loops::NEEDS_HLO`], without
    /// its HLO text) and their holds.
    pub fn new(module: &Module) -> ModuleLoops {
        let loops = loops(module);
        let holds = loop_holds(module, &loops);
        ModuleLoops { loops, holds }
    }

    /// The hold of loop `i`.
    pub fn hold(&self, i: usize) -> Option<&LoopHold> {
        self.holds.iter().find(|h| h.loop_index as usize == i)
    }
}

/// The values by `(instruction name, shape index)` for the names asked.
fn values_named<'m>(module: &'m Module, names: &HashSet<&str>) -> HashMap<(&'m str, &'m str), u32> {
    // Each instruction's name looked up once, not once per value (a tuple has many).
    let asked: Vec<bool> = (module.instructions.iter()).map(|ins| names.contains(module.str(ins.name))).collect();
    let mut out = HashMap::new();
    for (i, v) in module.values.iter().enumerate() {
        if asked.get(v.instruction as usize) != Some(&true) {
            continue;
        }
        let n = module.str(module.instructions[v.instruction as usize].name);
        out.entry((n, module.str(v.index))).or_insert(i as u32);
    }
    out
}

/// The value an operand names: `(instruction, shape index)`. `while.43#2` (the TPU's
/// unprinted get-tuple-element) and a printed `get-tuple-element(while.43), index=2` are
/// `while.43{2}`; any other operand is its instruction's own value (index empty).
pub(crate) fn value_of_operand<'a>(hlo: &'a HloText, comp: &'a Computation, operand: &'a str) -> (&'a str, String) {
    if let Some((base, k)) = operand.rsplit_once('#') {
        return (base, format!("{{{k}}}"));
    }
    let gte = hlo.find_in(comp, operand).filter(|i| hlo.opcode(i) == "get-tuple-element");
    let index = gte.and_then(|i| hlo.attr(i, "index"));
    match (gte.and_then(|i| hlo.operand(i, 0)), index) {
        (Some(base), Some(k)) => (base, format!("{{{k}}}")),
        _ => (operand, String::new()),
    }
}

/// Whether `name` in `body` updates body element `k` in place with a dynamic-update-slice
/// (itself, or a fusion whose computation holds one).
fn updates_in_place(hlo: &HloText, body: &Computation, name: &str, k: u32) -> bool {
    let Some(i) = hlo.find_in(body, name) else { return false };
    let dus = match hlo.opcode(i) {
        "dynamic-update-slice" => true,
        "fusion" => hlo.calls(i).iter().filter(|c| c.role == CallRole::Calls).any(|c| {
            hlo.computation(hlo.str(c.computation))
                .is_some_and(|f| f.instructions.iter().any(|x| hlo.opcode(x) == "dynamic-update-slice"))
        }),
        _ => false,
    };
    dus && hlo.operands(i).any(|o| parameter_element(hlo, body, o) == Some(k))
}

fn role(hlo: &HloText, l: &Loop, body: &Computation, counter_at: Option<u32>, k: u32, operand: &str, shape: &str) -> Role {
    if counter_at == Some(k) {
        Role::Counter
    } else if parameter_element(hlo, body, operand) == Some(k) {
        Role::Invariant
    } else if updates_in_place(hlo, body, operand, k)
        && dimensions(shape).and_then(|d| d.first().copied()).is_some_and(|d| l.trip_count.is_none_or(|n| n == d))
    {
        Role::Stacked
    } else {
        Role::Carry
    }
}

/// The values of a module by `(instruction name, shape index)`.
type Values<'m> = HashMap<(&'m str, &'m str), u32>;

/// One loop's computations in the HLO text: the one the while is in, the while, its init
/// tuple, condition, body and the body's root tuple.
struct Parts<'a> {
    hlo: &'a HloText,
    outer: &'a Computation,
    init: Option<&'a HloInstruction>,
    cond: &'a Computation,
    body: &'a Computation,
    root: &'a HloInstruction,
    shapes: Vec<&'a str>,
    counter_at: Option<u32>,
}

impl<'a> Parts<'a> {
    fn of(hlo: &'a HloText, l: &Loop) -> Option<Parts<'a>> {
        let comp = |i: u32| hlo.computations.get(i as usize);
        let (outer, cond, body) = (comp(l.at[0])?, comp(l.at[2])?, comp(l.at[3])?);
        let w = outer.instructions.get(l.at[1] as usize)?;
        let init = hlo.operand(w, 0).and_then(|o| hlo.find_in(outer, o)).filter(|i| hlo.opcode(i) == "tuple");
        let root = root(body).filter(|r| hlo.opcode(r) == "tuple")?;
        let shapes = tuple_elements(hlo.shape(w)).unwrap_or_default();
        let counter_at = counter_element(hlo, cond, body);
        Some(Parts { hlo, outer, init, cond, body, root, shapes, counter_at })
    }

    /// Element `k` (the root tuple's operand `operand`) with its values.
    fn element(&self, module: &Module, values: &Values, l: &Loop, k: u32, operand: &str) -> Element {
        let shape = self.shapes.get(k as usize).copied().unwrap_or("");
        let index = format!("{{{k}}}");
        let own = values.get(&(l.while_name.as_str(), index.as_str())).map(|&v| (v, format!("{}{index}", l.while_name)));
        let came_in = || {
            let (name, i) = value_of_operand(self.hlo, self.outer, self.hlo.operand(self.init?, k as usize)?);
            let v = values.get(&(name, i.as_str())).or_else(|| i.is_empty().then(|| values.get(&(name, "{}"))).flatten())?;
            Some((*v, module.value_name(&module.values[*v as usize])))
        };
        let element_of = |c: &Computation| parameter(self.hlo, c).and_then(|p| values.get(&(self.hlo.name(p), index.as_str())).copied());
        let carried = {
            let (n, i) = value_of_operand(self.hlo, self.body, operand);
            values.get(&(n, i.as_str())).copied()
        };
        let is_own = own.is_some();
        let came = came_in();
        let came_value = came.as_ref().map(|v| v.0);
        let value = own.or(came);
        let mut held_by: Vec<u32> = [value.as_ref().map(|v| v.0), came_value, element_of(self.body), element_of(self.cond), carried]
            .into_iter()
            .flatten()
            .collect();
        held_by.sort_unstable();
        held_by.dedup();
        Element {
            own: is_own,
            index: k,
            role: role(self.hlo, l, self.body, self.counter_at, k, operand, shape),
            shape: shape.to_string(),
            size: value.as_ref().map_or(0, |v| module.values[v.0 as usize].size),
            value: value.as_ref().map(|v| v.0),
            held_by,
            value_name: value.map(|v| v.1),
        }
    }

    /// The body's temporaries: its values but those of its parameter, root and what the
    /// root carries to the next iteration.
    fn temporaries(&self, by_instruction: &HashMap<&str, Vec<u32>>) -> Vec<u32> {
        let hlo = self.hlo;
        let mut kept: HashSet<&str> = hlo.operands(self.root).collect();
        kept.insert(hlo.name(self.root));
        if let Some(p) = parameter(hlo, self.body) {
            kept.insert(hlo.name(p));
        }
        let mut out: Vec<u32> = (self.body.instructions.iter())
            .filter(|i| !kept.contains(hlo.name(i)))
            .filter_map(|i| by_instruction.get(hlo.name(i)))
            .flatten()
            .copied()
            .collect();
        out.sort_unstable();
        out
    }
}

/// What each loop holds (none without the HLO text or loops).
pub fn loop_holds(module: &Module, loops: &Loops) -> Vec<LoopHold> {
    let Some(hlo) = module.hlo.as_deref() else { return Vec::new() };
    let parts: Vec<Option<Parts>> = loops.loops.iter().map(|l| Parts::of(hlo, l)).collect();
    // The names whose values are looked up: the whiles, their init operands, the names of
    // their conditions and bodies.
    let mut names: HashSet<&str> = HashSet::new();
    for (l, p) in loops.loops.iter().zip(&parts) {
        names.insert(&l.while_name);
        let Some(p) = p else { continue };
        if let Some(init) = p.init {
            names.extend(hlo.operands(init).map(|o| value_of_operand(hlo, p.outer, o).0));
        }
        for c in [p.cond, p.body] {
            names.extend(c.instructions.iter().map(|i| hlo.name(i)));
        }
    }
    let values = values_named(module, &names);
    let mut by_instruction: HashMap<&str, Vec<u32>> = HashMap::new();
    for (&(n, _), &v) in &values {
        by_instruction.entry(n).or_default().push(v);
    }
    (loops.loops.iter().zip(&parts).enumerate())
        .filter_map(|(li, (l, p))| {
            let p = p.as_ref()?;
            let elements = (hlo.operands(p.root).enumerate())
                .map(|(k, operand)| p.element(module, &values, l, k as u32, operand))
                .collect();
            Some(LoopHold { loop_index: li as u32, elements, temporaries: p.temporaries(&by_instruction) })
        })
        .collect()
}

fn live_in(module: &Module, v: u32, color: u32, step: u32) -> bool {
    let v = &module.values[v as usize];
    module.value_color(v) == color && v.live.is_some_and(|r| r.contains(step))
}

/// What each loop holds live at `step` in memory space `color`.
pub fn held_at(module: &Module, loops: &Loops, holds: &[LoopHold], color: u32, step: u32) -> Vec<HeldAt> {
    holds
        .iter()
        .filter_map(|h| {
            let l = loops.loops.get(h.loop_index as usize)?;
            let mut row = HeldAt {
                while_name: l.while_name.clone(),
                name: l.name.clone(),
                stacked_bytes: 0,
                carry_bytes: 0,
                invariant_bytes: 0,
                temporary_bytes: 0,
            };
            let mut seen = HashSet::new();
            for e in &h.elements {
                // The element's bytes once, whichever of its values holds it at the step.
                let live: Vec<u32> = (e.held_by.iter().copied())
                    .filter(|&v| live_in(module, v, color, step))
                    .collect();
                if live.is_empty() || live.iter().any(|v| seen.contains(v)) {
                    continue;
                }
                seen.extend(live.iter().copied());
                let size = live.iter().map(|&v| module.values[v as usize].size).max().unwrap_or(0);
                match e.role {
                    Role::Stacked => row.stacked_bytes += size,
                    Role::Invariant => {
                        row.carry_bytes += size;
                        row.invariant_bytes += size;
                    }
                    Role::Counter | Role::Carry => row.carry_bytes += size,
                }
            }
            if l.body_steps[0] <= step && step <= l.body_steps[1] {
                row.temporary_bytes = (h.temporaries.iter())
                    .filter(|&&v| live_in(module, v, color, step))
                    .map(|&v| module.values[v as usize].size)
                    .sum();
            }
            Some(row)
        })
        .collect()
}

/// The body's temporaries of `hold` in memory space `color`: how many, and the most bytes
/// live at once within the body's steps.
pub fn temporaries(module: &Module, l: &Loop, hold: &LoopHold, color: u32) -> Temporaries {
    let [a, b] = l.body_steps;
    let mut delta = vec![0i128; (b - a + 2) as usize];
    let mut count = 0;
    for &v in &hold.temporaries {
        let val = &module.values[v as usize];
        let Some(r) = val.live.filter(|_| module.value_color(val) == color) else { continue };
        let (s, e) = (r.start.max(a), r.end.min(b));
        if s > e {
            continue;
        }
        count += 1;
        delta[(s - a) as usize] += i128::from(val.size);
        delta[(e - a + 1) as usize] -= i128::from(val.size);
    }
    let mut t = Temporaries { values: count, ..Temporaries::default() };
    let mut now = 0i128;
    for (i, d) in delta.iter().take((b - a + 1) as usize).enumerate() {
        now += d;
        if now > 0 && now as u64 > t.peak_bytes {
            t.peak_bytes = now as u64;
            t.peak_step = Some(a + i as u32);
        }
    }
    t
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::analysis::loops::loops;
    use crate::analysis::loops::tests::{module, scan};
    use crate::model::{LiveRange, Value};

    /// Adds a value of instruction `name` (of the module's schedule) in allocation 0.
    pub(crate) fn push_value(m: &mut Module, name: &str, index: &str, size: u64, live: LiveRange) {
        let instruction = m.instructions.iter().position(|i| m.str(i.name) == name).unwrap() as u32;
        let v = Value {
            id: m.values.len() as u32,
            instruction,
            index: m.strings.intern(index),
            phi: false,
            color: Some(0),
            allocation: 0,
            offset: 0,
            size,
            shape: Default::default(),
            logical_size: None,
            live: Some(live),
            uses_text: Default::default(),
        };
        m.values.push(v);
    }

    /// The scan of `analysis::loops::tests` with values: `while.1{0..2}`, the invariant
    /// `w8{}` (element 3 shares its buffer), a body temporary `one{}` and the carried `x{}`.
    pub(crate) fn scan_module() -> Module {
        let (hlo, names) = scan();
        let mut m = module(hlo, &names);
        m.allocations.push(crate::model::Allocation {
            index: 0,
            size: 1024,
            color: 0,
            page: None,
            parameter: None,
            output_shape: None,
            flags: Default::default(),
            values: 0..6,
        });
        for (name, index, size, start, end) in [
            ("while.1", "{0}", 4, 17, 17),
            ("while.1", "{1}", 16, 17, 18),
            ("while.1", "{2}", 128, 17, 18),
            ("w8", "{}", 128, 1, 18),
            ("one", "{}", 64, 10, 13),
            ("x", "{}", 16, 14, 16),
        ] {
            push_value(&mut m, name, index, size, LiveRange { start, end });
        }
        m
    }

    #[test]
    fn elements_are_counter_carry_stacked_invariant() {
        let m = scan_module();
        let l = loops(&m);
        let h = loop_holds(&m, &l);
        assert_eq!(h.len(), 1);
        let got: Vec<_> = h[0]
            .elements
            .iter()
            .map(|e| (e.role, e.value_name.as_deref(), e.size))
            .collect();
        assert_eq!(
            got,
            vec![
                (Role::Counter, Some("while.1{0}"), 4),
                (Role::Carry, Some("while.1{1}"), 16),
                (Role::Stacked, Some("while.1{2}"), 128),
                (Role::Invariant, Some("w8{}"), 128),
            ]
        );
        assert_eq!(h[0].elements[2].shape, "f32[8,4]");
        // `one` is the only temporary: x, dus and next are carried to the next iteration.
        assert_eq!(h[0].temporaries.len(), 1);
        let t = temporaries(&m, &l.loops[0], &h[0], 0);
        assert_eq!(t, Temporaries { values: 1, peak_bytes: 64, peak_step: Some(10) });
    }

    #[test]
    fn bytes_held_at_steps() {
        let m = scan_module();
        let l = loops(&m);
        let h = loop_holds(&m, &l);
        let at = |s| held_at(&m, &l, &h, 0, s).remove(0);
        // In the body: w8 (invariant) and the temporary `one`.
        let a = at(12);
        assert_eq!((a.stacked_bytes, a.carry_bytes, a.invariant_bytes, a.temporary_bytes), (0, 128, 128, 64));
        // After the loop: the stack (128) and carries x (16) + w8 (128); while.1{0} ended.
        let b = at(18);
        assert_eq!((b.stacked_bytes, b.carry_bytes, b.invariant_bytes, b.temporary_bytes), (128, 144, 128, 0));
        // Another memory space holds none of it.
        assert_eq!(held_at(&m, &l, &h, 1, 18)[0].carry_bytes, 0);
    }

    #[test]
    fn a_stack_needs_the_trip_count_as_its_leading_dimension() {
        let (mut hlo, names) = scan();
        let main = hlo.computations.len() - 1;
        hlo.computations[main].instructions[6].known_trip_count = Some(4);
        let m = module(hlo, &names);
        let h = loop_holds(&m, &loops(&m));
        assert_eq!(h[0].elements[2].role, Role::Carry);
    }
}
