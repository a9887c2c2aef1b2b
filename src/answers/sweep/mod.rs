//! Several compilations of one program that differ in one dimension (batch, sequence,
//! layers): which dimension ([`varied`]), and per memory space the peak and each category
//! at the peak fitted against it ([`fit`]), predicted at other values and, with a capacity,
//! the largest value that fits and the smallest that does not.
//!
//! Owns: the sweep's answer ([`Sweep`], `bufscope sweep --json`). The modules are paired
//! across compilations as `diff` pairs them ([`crate::diff::pair_by_name`]); the categories
//! are [`categories`](crate::answers::categories)', at each space's peak.
//!
//! **Pinned peaks.** Near the capacity the compiler rematerialises to fit, so the peak stops
//! growing with the dimension. A compilation whose peak is within [`PINNED_MARGIN`] of the
//! capacity while the compiler rematerialised instructions of its own (names ending in
//! `.remat`, `.remat2`, … in the dump) is *pinned*: it is left out of the fit, and no value
//! above it is said to fit from the form alone.
//!
//! **What fits** is judged on the safe side: the fitted form plus its worst residual, the
//! parabola through the points where it bends up ([`fit::upward_parabola`]), and beyond the
//! largest value measured, that point grown at the steepest growth measured
//! between two neighbouring points ([`fit::Judged`]); measured points overrule both (a
//! compile that failed does not fit, one that compiled does), and nothing past twice the
//! largest value compiled is said to fit (`fit_says_largest` keeps what the fit said).

pub mod fit;
pub mod varied;

use serde::Serialize;

use crate::analysis::Analysis;
use crate::answers::capacity::Capacity;
use crate::answers::paired;
use crate::answers::categories::{by_category_with, Categories, Category};
use crate::parse::OomFile;
use crate::model::{memory_space_label, Module};
use crate::units::human_bytes;
pub use fit::{Form, Model};
pub use varied::{same_parameters, varied, Varied};

/// A peak within this fraction below the capacity, with the compiler's own
/// rematerialisation in the dump, is pinned.
pub const PINNED_MARGIN: f64 = 0.03;

/// One compilation of the sweep.
#[derive(Clone, Copy)]
pub struct Point<'a> {
    pub module: &'a Module,
    pub analysis: &'a Analysis,
    /// Its compile failed: an out-of-memory message read beside it is paired with it
    /// ([`failed`]).
    pub failed: bool,
}

/// Which of the modules `names` (read together with the out-of-memory messages `oom`) are
/// compiles that failed: those a message is paired with ([`paired::pair`]: by the module's
/// name or its file's stem). The one rule of the command line and the page.
pub fn failed(names: &[&str], oom: &[OomFile]) -> Vec<bool> {
    let mut out = vec![false; names.len()];
    for p in paired::pair(names, oom) {
        if let Some(f) = out.get_mut(p.module) {
            *f = true;
        }
    }
    out
}

/// What the sweep is asked besides its points.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub capacity: Option<Capacity>,
    /// Values to predict at.
    pub at: Vec<u64>,
}

/// The sweep's answer.
#[derive(Clone, Debug, Serialize)]
pub struct Sweep {
    pub varied: Varied,
    /// The module compared (the first compilation's name).
    pub module: String,
    pub spaces: Vec<SpaceSweep>,
}

/// One compilation's figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointPeak {
    pub value: u64,
    pub peak_live_bytes: u64,
    /// Its compile failed (an out-of-memory message beside it).
    pub failed: bool,
    pub pinned: bool,
    /// Instructions the compiler rematerialised ([`compiler_remats`]).
    pub compiler_remats: usize,
    /// The first two of them.
    #[serde(skip)]
    pub remat_examples: Vec<String>,
    /// Its compilation: the position of its [`Point`] among those swept.
    #[serde(skip)]
    pub input: usize,
}

/// A prediction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prediction {
    pub value: u64,
    pub peak_live_bytes: u64,
}

/// One category's bytes at the space's peak across the sweep.
#[derive(Clone, Debug, Serialize)]
pub struct CategorySweep {
    pub category: Category,
    pub label: &'static str,
    pub points: Vec<Prediction>,
    pub model: Option<Model>,
}

/// One memory space across the sweep.
#[derive(Clone, Debug, Serialize)]
pub struct SpaceSweep {
    pub color: u32,
    pub label: String,
    /// Ascending by value.
    pub points: Vec<PointPeak>,
    /// Fitted to the points neither failed nor pinned; `None` when none is left.
    pub model: Option<Model>,
    pub at: Vec<Prediction>,
    pub capacity_bytes: Option<u64>,
    pub largest_fitting: Option<u64>,
    pub first_not_fitting: Option<u64>,
    /// The largest value the fit alone says fits, before the rules of the safe side: the
    /// measured points and no more than twice the largest value compiled.
    pub fit_says_largest: Option<u64>,
    pub pinned: bool,
    pub sentence: String,
    pub categories: Vec<CategorySweep>,
}

/// The position of the module to compare in each compilation: `first` in the first, its
/// partner by name ([`crate::diff::pair_by_name`]) in the others; an error names a
/// compilation without one.
pub fn pick_modules(names: &[Vec<String>], first: usize) -> Result<Vec<usize>, String> {
    let Some(base) = names.first() else { return Ok(Vec::new()) };
    let mut out = vec![first];
    for (k, other) in names.iter().enumerate().skip(1) {
        let pairing = crate::diff::pair_by_name(base, other);
        let partner = (pairing.pairs.iter()).find(|p| p.base == first).map(|p| p.new);
        match partner {
            Some(p) => out.push(p),
            None => {
                return Err(format!(
                    "compilation {} has no module paired with {}",
                    k + 1,
                    base.get(first).map_or("the first", String::as_str)
                ))
            }
        }
    }
    Ok(out)
}

/// Whether modules read together are compilations of one program varying one dimension
/// (what the page opens as a sweep): two or more, the same entry parameters
/// ([`same_parameters`]), and [`varied`] finds one dimension.
pub fn is_sweep(modules: &[&Module]) -> bool {
    modules.len() >= 2 && same_parameters(modules) && varied(modules).is_ok()
}

/// What the compilations measure, whatever they are held against: the dimension varied and
/// per memory space the points' peaks and each category's bytes at them, neither judged nor
/// fitted ([`Measured::judge`] does that). The costly part of a sweep (each module's
/// categories), made once however often the capacity or the values predicted at change.
#[derive(Clone, Debug)]
pub struct Measured {
    pub varied: Varied,
    pub module: String,
    spaces: Vec<SpaceSweep>,
}

/// The measured part of the sweep of `points` (one dimension varying), or one sentence why
/// they make none.
pub fn measure(points: &[Point]) -> Result<Measured, String> {
    if points.len() < 2 {
        return Err("a sweep needs at least two compilations".to_string());
    }
    let modules: Vec<&Module> = points.iter().map(|p| p.module).collect();
    let varied = varied(&modules)?;
    let cats: Vec<Categories> = modules.iter().map(|m| Categories::new(m)).collect();
    let backend = points[0].module.backend();
    let remats: Vec<Vec<&str>> = modules.iter().map(|m| compiler_remats(m)).collect();
    let each = Each { points, cats: &cats, values: &varied.values, remats: &remats };
    let spaces = (points[0].analysis.spaces.iter())
        .map(|s| {
            let mut sw = measure_space(&each, s.color);
            sw.label = memory_space_label(s.color, backend);
            sw
        })
        .collect();
    Ok(Measured { module: points[0].module.name.clone(), varied, spaces })
}

impl Measured {
    /// The sweep held against `options`' capacity and predicted at its values: the fits,
    /// the pinned points, the verdicts.
    pub fn judge(&self, options: &Options) -> Sweep {
        let spaces = (self.spaces.iter())
            .map(|s| {
                let capacity = options.capacity.as_ref().filter(|c| c.holds(s.color));
                judge_space(s.clone(), capacity, &options.at)
            })
            .collect();
        Sweep { varied: self.varied.clone(), module: self.module.clone(), spaces }
    }
}

/// The sweep of `points` (one dimension varying), or one sentence why not.
pub fn sweep(points: &[Point], options: &Options) -> Result<Sweep, String> {
    Ok(measure(points)?.judge(options))
}

/// The compiler's own rematerialised instructions in a module: names with a `.remat`
/// suffix (`fusion.12.remat2`, `gte.remat`), as XLA's rematerialisation names its clones.
pub fn compiler_remats(module: &Module) -> Vec<&str> {
    (module.instructions.iter())
        .map(|i| module.str(i.name))
        .filter(|n| {
            n.rfind(".remat")
                .is_some_and(|k| n[k + 6..].bytes().all(|b| b.is_ascii_digit()))
        })
        .collect()
}

/// What every space's sweep reads of the compilations.
struct Each<'a, 'p> {
    points: &'a [Point<'p>],
    cats: &'a [Categories],
    values: &'a [u64],
    remats: &'a [Vec<&'p str>],
}

/// One space's points and categories, in ascending value, neither pinned nor fitted.
fn measure_space(each: &Each, color: u32) -> SpaceSweep {
    let mut rows: Vec<(PointPeak, usize)> = Vec::new();
    for (k, p) in each.points.iter().enumerate() {
        let remats = &each.remats[k];
        let row = PointPeak {
            value: each.values[k],
            peak_live_bytes: p.analysis.space(color).map_or(0, |s| s.peak_bytes),
            failed: p.failed,
            pinned: false,
            compiler_remats: remats.len(),
            remat_examples: remats.iter().take(2).map(|r| r.to_string()).collect(),
            input: k,
        };
        rows.push((row, k));
    }
    rows.sort_by_key(|r| r.0.value);
    let categories = category_points(each.points, each.cats, &rows, color);
    SpaceSweep {
        color,
        label: String::new(),
        points: rows.into_iter().map(|r| r.0).collect(),
        model: None,
        at: Vec::new(),
        capacity_bytes: None,
        largest_fitting: None,
        first_not_fitting: None,
        fit_says_largest: None,
        pinned: false,
        sentence: String::new(),
        categories,
    }
}

/// A measured space held against `capacity`: its pinned points, the fits of the peak and
/// of each category to the points neither failed nor pinned, the predictions at `at`, and
/// the verdict ([`judge`]).
fn judge_space(mut s: SpaceSweep, capacity: Option<&Capacity>, at: &[u64]) -> SpaceSweep {
    let cap = capacity.map(|c| c.bytes);
    for p in &mut s.points {
        let peak = p.peak_live_bytes;
        p.pinned = cap.is_some_and(|c| {
            !p.failed && peak <= c && peak as f64 >= c as f64 * (1.0 - PINNED_MARGIN) && p.compiler_remats > 0
        });
    }
    let kept: Vec<bool> = s.points.iter().map(|p| !p.failed && !p.pinned).collect();
    let fitted = |pts: &[Prediction]| -> Vec<(f64, u64)> {
        (pts.iter().zip(&kept)).filter(|(_, k)| **k).map(|(p, _)| (p.value as f64, p.peak_live_bytes)).collect()
    };
    let peaks: Vec<Prediction> = (s.points.iter())
        .map(|p| Prediction { value: p.value, peak_live_bytes: p.peak_live_bytes })
        .collect();
    s.model = fit::fit(&fitted(&peaks));
    for c in &mut s.categories {
        c.model = fit::fit(&fitted(&c.points));
    }
    s.at = (at.iter())
        .map(|&v| Prediction { value: v, peak_live_bytes: s.model.as_ref().map_or(0, |m| m.at(v as f64)) })
        .collect();
    s.capacity_bytes = cap;
    judge(&mut s, capacity);
    s
}

/// Each category's bytes at the space's peak in every compilation (fitted when judged).
fn category_points(points: &[Point], cats: &[Categories], rows: &[(PointPeak, usize)], color: u32) -> Vec<CategorySweep> {
    let mut out: Vec<CategorySweep> = Vec::new();
    for (n, (row, k)) in rows.iter().enumerate() {
        let (module, analysis) = (points[*k].module, points[*k].analysis);
        let Some(space) = analysis.space(color) else { continue };
        let live = crate::answers::space_live_set(module, space, None);
        for c in by_category_with(module, &cats[*k], &live) {
            let i = match out.iter().position(|s| s.category == c.category) {
                Some(i) => i,
                None => {
                    out.push(CategorySweep { category: c.category, label: c.label, points: Vec::new(), model: None });
                    out.len() - 1
                }
            };
            let pts = &mut out[i].points;
            // Points before this one without the category held none of it.
            while pts.len() < n {
                pts.push(Prediction { value: rows[pts.len()].0.value, peak_live_bytes: 0 });
            }
            pts.push(Prediction { value: row.value, peak_live_bytes: c.bytes });
        }
    }
    for c in &mut out {
        while c.points.len() < rows.len() {
            let value = rows[c.points.len()].0.value;
            c.points.push(Prediction { value, peak_live_bytes: 0 });
        }
    }
    out.sort_by_key(|c| std::cmp::Reverse(c.points.last().map_or(0, |p| p.peak_live_bytes)));
    out
}

/// The largest value that fits, the first that does not, pinned or not, and the sentence.
fn judge(s: &mut SpaceSweep, capacity: Option<&Capacity>) {
    let form = match &s.model {
        Some(m) => format!(
            "{} fit {} (worst residual {})",
            format!("{:?}", m.form).to_lowercase(),
            m.formula(),
            human_bytes(m.max_residual_bytes)
        ),
        None => "no fit (every compilation failed or is pinned)".to_string(),
    };
    let Some(cap) = capacity else {
        s.sentence = format!("{form}; give --capacity (v5e, 16GiB) to know what fits.");
        return;
    };
    let fits = |p: &PointPeak| !p.failed && p.peak_live_bytes <= cap.bytes;
    let measured_fit = s.points.iter().filter(|p| fits(p)).map(|p| p.value).max();
    let measured_not = s.points.iter().filter(|p| !fits(p)).map(|p| p.value).min();
    if let Some(pin) = s.points.iter().rev().find(|p| p.pinned) {
        s.pinned = true;
        s.largest_fitting = measured_fit;
        s.first_not_fitting = measured_not;
        s.sentence = format!(
            "pinned: at {} the peak is {} ({:.1} % of {}) and the compiler rematerialised {} instructions ({}) to fit: near the capacity the compiler trades compute for memory, so the peak may stop growing with the value; no value above {} is said to fit from the {form}: compile one to know.",
            pin.value,
            human_bytes(pin.peak_live_bytes),
            100.0 * pin.peak_live_bytes as f64 / cap.bytes as f64,
            cap.described(),
            pin.compiler_remats,
            pin.remat_examples.join(", "),
            pin.value
        );
        return;
    }
    let (crossed, last) = fitted_crossing(s, cap.bytes);
    let (mut largest, mut first) = crossed;
    // Beyond twice the largest value compiled the fit is not trusted: a square term hidden
    // at small values (attention over the sequence) grows past any form fitted there.
    let trusted = last.0.saturating_mul(2);
    s.fit_says_largest = largest;
    let beyond = first.is_some() && largest.is_some_and(|l| l > trusted);
    if beyond {
        (largest, first) = (Some(trusted), None);
    }
    if let Some(n) = measured_not {
        first = Some(first.map_or(n, |f| f.min(n)));
        largest = largest.map(|l| l.min(n.saturating_sub(1)));
    }
    if let Some(m) = measured_fit {
        largest = Some(largest.map_or(m, |l| l.max(m)));
        first = first.map(|f| f.max(m.saturating_add(1)));
    }
    s.largest_fitting = largest;
    s.first_not_fitting = first;
    let on = cap.described();
    s.sentence = match (largest, first) {
        (Some(l), None) if beyond => format!(
            "fits {on} up to at least {l}, twice the largest value compiled ({}); the {form} says up to {}, but past twice the largest value compiled no fit is trusted: compile near it to know.",
            last.0,
            s.fit_says_largest.unwrap_or(l)
        ),
        (_, None) => format!("{form}: within {on} at every value."),
        (Some(l), Some(f)) => format!(
            "fits {on} up to {l}; {f} does not ({form}; its worst residual as margin, the parabola through the points where it bends up, and beyond {} the steepest growth measured between two points).",
            last.0
        ),
        (None, Some(f)) => format!("does not fit {on} even at {f} ({form})."),
    };
}

/// Where the fit crosses the capacity ([`fit::crossing`] on [`fit::Judged`]), and the
/// largest point fitted `(value, bytes)`.
fn fitted_crossing(s: &SpaceSweep, capacity: u64) -> ((Option<u64>, Option<u64>), (u64, u64)) {
    let from = s.points.first().map_or(1, |p| p.value.max(1));
    let fitted: Vec<(f64, u64)> = (s.points.iter())
        .filter(|p| !p.failed && !p.pinned)
        .map(|p| (p.value as f64, p.peak_live_bytes))
        .collect();
    let last = (s.points.iter().filter(|p| !p.failed && !p.pinned))
        .max_by_key(|p| p.value)
        .map_or((0, 0), |p| (p.value, p.peak_live_bytes));
    let parabola = fit::upward_parabola(&fitted);
    let crossed = match &s.model {
        Some(m) => {
            let judged = fit::Judged {
                model: m,
                capacity,
                margin: m.max_residual_bytes,
                last,
                slope: fit::steepest_slope(&fitted),
                parabola: parabola.as_ref(),
            };
            fit::crossing(&judged, from)
        }
        None => (None, None),
    };
    (crossed, last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answers::capacity::parse_capacity;

    fn point(value: u64, peak: u64, pinned: bool, failed: bool) -> PointPeak {
        let remats = if pinned { 3 } else { 0 };
        let remat_examples = vec!["fusion.1.remat2".to_string()];
        PointPeak { value, peak_live_bytes: peak, failed, pinned, compiler_remats: remats, remat_examples, input: 0 }
    }

    fn space(points: Vec<PointPeak>) -> SpaceSweep {
        let fitted: Vec<(f64, u64)> = (points.iter())
            .filter(|p| !p.pinned && !p.failed)
            .map(|p| (p.value as f64, p.peak_live_bytes))
            .collect();
        SpaceSweep {
            color: 0,
            label: String::new(),
            model: fit::fit(&fitted),
            points,
            at: Vec::new(),
            capacity_bytes: None,
            largest_fitting: None,
            first_not_fitting: None,
            fit_says_largest: None,
            pinned: false,
            sentence: String::new(),
            categories: Vec::new(),
        }
    }

    #[test]
    fn a_pinned_peak_is_never_extrapolated_into_a_fit() {
        let cap = parse_capacity("1000").unwrap();
        // 100 + 100 v grows to 900 at 8; at 12 the compiler rematerialised to 990 (pinned):
        // the line says 13 would not fit either way, but nothing above 12 is said to fit.
        let mut s = space(vec![point(4, 500, false, false), point(8, 900, false, false), point(12, 990, true, false)]);
        judge(&mut s, Some(&cap));
        assert!(s.pinned);
        assert_eq!((s.largest_fitting, s.first_not_fitting), (Some(12), None));
        assert!(s.sentence.starts_with("pinned: at 12"), "{}", s.sentence);
        assert!(s.sentence.contains("fusion.1.remat2"), "{}", s.sentence);
        // With a failed compile above it, that is the first that does not fit.
        let mut s = space(vec![point(4, 500, false, false), point(12, 990, true, false), point(14, 1100, false, true)]);
        judge(&mut s, Some(&cap));
        assert_eq!((s.largest_fitting, s.first_not_fitting), (Some(12), Some(14)));
    }

    #[test]
    fn measured_points_beat_the_line() {
        let cap = parse_capacity("1000").unwrap();
        // The line 100 v says 10 fits; a compile at 9 failed: 8 is the largest said to fit.
        let mut s = space(vec![point(2, 200, false, false), point(4, 400, false, false), point(9, 950, false, true)]);
        judge(&mut s, Some(&cap));
        assert!(!s.pinned);
        assert_eq!((s.largest_fitting, s.first_not_fitting), (Some(8), Some(9)));
        // Without a capacity: no verdict.
        let mut s = space(vec![point(2, 200, false, false), point(4, 400, false, false)]);
        judge(&mut s, None);
        assert_eq!((s.largest_fitting, s.first_not_fitting), (None, None));
        assert!(s.sentence.contains("--capacity"), "{}", s.sentence);
    }
}
