//! Fitting bytes against the varied value: a constant, a line or a parabola by least
//! squares, the form chosen as the lowest degree that fits the points within
//! [`TOLERANCE`] of their largest figure, its predictions, and where it crosses a capacity.
//!
//! The rule, so that a prediction errs on the side of "does not fit": a parabola that bends
//! down (negative square term) is never chosen (it would predict less than the line beyond
//! the points); a degree needs at least one point more than it has terms, except the line
//! through two points (the only form two points give); a higher degree is taken only when
//! it at least halves the worst residual of the lower one (noise is no curve).

use serde::Serialize;

/// A form fits when its worst residual is at most this fraction of the largest figure.
pub const TOLERANCE: f64 = 0.02;

/// The fitted form's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    Constant,
    Linear,
    Quadratic,
}

impl Form {
    fn of_degree(d: usize) -> Form {
        match d {
            0 => Form::Constant,
            1 => Form::Linear,
            _ => Form::Quadratic,
        }
    }
}

/// A fitted form: `bytes = c0 + c1·v + c2·v²` (as many coefficients as its degree + 1).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Model {
    pub form: Form,
    pub coefficients: Vec<f64>,
    /// The largest |measured − fitted| over the points it was fitted to.
    pub max_residual_bytes: u64,
}

impl Model {
    /// The fitted bytes at `v` (0 where the form goes below 0).
    pub fn at(&self, v: f64) -> u64 {
        let y: f64 = (self.coefficients.iter().enumerate())
            .map(|(k, c)| c * v.powi(k as i32))
            .sum();
        if y.is_finite() && y > 0.0 {
            y.round() as u64
        } else {
            0
        }
    }

    /// The form as people read it: `1.44 GiB + 57.03 MiB·v`.
    pub fn formula(&self) -> String {
        let mut parts = Vec::new();
        for (k, &c) in self.coefficients.iter().enumerate() {
            let bytes = crate::units::human_bytes(c.abs().round() as u64);
            let sign = if c < 0.0 { "−" } else { "" };
            parts.push(match k {
                0 => format!("{sign}{bytes}"),
                1 => format!("{sign}{bytes}·v"),
                _ => format!("{sign}{bytes}·v²"),
            });
        }
        parts.join(" + ").replace("+ −", "− ")
    }
}

/// Fits `(value, bytes)` points (values need not be distinct; at least one point). `None`
/// when there is no point.
pub fn fit(points: &[(f64, u64)]) -> Option<Model> {
    if points.is_empty() {
        return None;
    }
    let distinct = distinct_count(points);
    let largest = points.iter().map(|p| p.1).max().unwrap_or(0) as f64;
    let tolerance = (largest * TOLERANCE).max(1.0);
    let mut best: Option<Model> = None;
    for d in 0..=2usize.min(distinct.saturating_sub(1)) {
        let Some(model) = fit_degree(points, d) else { continue };
        if d == 2 && model.coefficients[2] < 0.0 {
            break;
        }
        // A higher degree must at least halve the worst residual: noise is no curve.
        if let Some(b) = &best {
            if (model.max_residual_bytes as f64) > 0.5 * b.max_residual_bytes as f64 {
                break;
            }
        }
        let judged = d + 1 < distinct || d == 1;
        let good = (model.max_residual_bytes as f64) <= tolerance;
        best = Some(model);
        if good && judged {
            break;
        }
    }
    best
}

fn distinct_count(points: &[(f64, u64)]) -> usize {
    let mut xs: Vec<f64> = points.iter().map(|p| p.0).collect();
    xs.sort_by(|a, b| a.total_cmp(b));
    xs.dedup();
    xs.len()
}

/// The least-squares polynomial of degree `d` (values scaled to 0..1 for the solve).
fn fit_degree(points: &[(f64, u64)], d: usize) -> Option<Model> {
    let scale = points.iter().map(|p| p.0.abs()).fold(0.0, f64::max).max(1.0);
    let n = d + 1;
    // Normal equations: A c = b, A[i][j] = Σ x^(i+j), b[i] = Σ y x^i.
    let mut a = vec![vec![0.0f64; n + 1]; n];
    for &(x, y) in points {
        let x = x / scale;
        for (i, row) in a.iter_mut().enumerate() {
            for (j, cell) in row.iter_mut().take(n).enumerate() {
                *cell += x.powi((i + j) as i32);
            }
            row[n] += y as f64 * x.powi(i as i32);
        }
    }
    let scaled = solve(a)?;
    let coefficients: Vec<f64> = (scaled.iter().enumerate())
        .map(|(k, c)| c / scale.powi(k as i32))
        .collect();
    let mut model = Model {
        form: Form::of_degree(d),
        coefficients,
        max_residual_bytes: 0,
    };
    model.max_residual_bytes = (points.iter())
        .map(|&(x, y)| (y as f64 - model_value(&model, x)).abs().round() as u64)
        .max()
        .unwrap_or(0);
    Some(model)
}

fn model_value(model: &Model, v: f64) -> f64 {
    (model.coefficients.iter().enumerate())
        .map(|(k, c)| c * v.powi(k as i32))
        .sum()
}

/// Gaussian elimination with partial pivoting on an augmented `n × (n+1)` matrix.
fn solve(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let n = a.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        for row in 0..n {
            if row != col {
                let f = a[row][col] / a[col][col];
                for k in col..=n {
                    a[row][k] -= f * a[col][k];
                }
            }
        }
    }
    let out: Vec<f64> = (0..n).map(|i| a[i][n] / a[i][i]).collect();
    out.iter().all(|c| c.is_finite()).then_some(out)
}

/// The least-squares parabola through `points` when it bends up (three values or more):
/// what a peak growing with the square of the value (attention over the sequence) would
/// reach, held beside the chosen form when judging what fits.
pub fn upward_parabola(points: &[(f64, u64)]) -> Option<Model> {
    if distinct_count(points) < 3 {
        return None;
    }
    fit_degree(points, 2).filter(|m| m.coefficients[2] > 0.0)
}

/// The steepest growth between two neighbouring values of `points` (bytes per unit, at
/// least 0): beyond the largest value measured the peak is taken to grow at least this fast.
pub fn steepest_slope(points: &[(f64, u64)]) -> f64 {
    let mut sorted: Vec<(f64, u64)> = points.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    (sorted.windows(2))
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| (w[1].1 as f64 - w[0].1 as f64) / (w[1].0 - w[0].0))
        .fold(0.0, f64::max)
}

/// What is judged to fit: the fitted form plus `margin` within `capacity`, the parabola
/// through the points too where it bends up, and beyond the largest value measured,
/// `last = (value, bytes)`, that point's bytes grown at `slope` ([`steepest_slope`]) plus
/// `margin`: all read together, so that a form fitted
/// below never carries a value above the real one into "fits" (the compiler's choices
/// steepen a peak's growth further out).
pub struct Judged<'a> {
    pub model: &'a Model,
    pub capacity: u64,
    pub margin: u64,
    pub last: (u64, u64),
    pub slope: f64,
    /// [`upward_parabola`], held with its own worst residual as margin.
    pub parabola: Option<&'a Model>,
}

impl Judged<'_> {
    pub fn fits(&self, v: u64) -> bool {
        let by_parabola = self.parabola.is_none_or(|p| {
            p.at(v as f64).saturating_add(p.max_residual_bytes) <= self.capacity
        });
        let by_form = by_parabola && self.model.at(v as f64).saturating_add(self.margin) <= self.capacity;
        let (last_v, last_bytes) = self.last;
        let by_slope = v <= last_v
            || last_bytes as f64 + self.slope * (v - last_v) as f64 + self.margin as f64 <= self.capacity as f64;
        by_form && by_slope
    }
}

/// The largest whole value that [`Judged::fits`], searched from `from` up (or below it when
/// `from` does not fit), and the first above it that does not; `(None, Some(1))` when not
/// even 1 fits, `(None, None)` when nothing stops it below 2⁴⁰ (a constant under the
/// capacity).
pub fn crossing(judged: &Judged, from: u64) -> (Option<u64>, Option<u64>) {
    let fits = |v: u64| judged.fits(v);
    let from = from.max(1);
    let (mut lo, mut hi) = if fits(from) {
        let (mut lo, mut hi) = (from, from.saturating_mul(2));
        while fits(hi) {
            if hi >= 1 << 40 {
                return (None, None);
            }
            lo = hi;
            hi = hi.saturating_mul(2);
        }
        (lo, hi)
    } else if fits(1) {
        // Below the first value measured.
        (1, from)
    } else {
        return (None, Some(1));
    };
    // fits(lo), !fits(hi): the forms chosen grow from the measured range on.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (Some(lo), Some(hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chooses_the_lowest_degree_that_fits() {
        let line: Vec<(f64, u64)> = [8.0, 16.0, 32.0, 64.0].iter().map(|&x| (x, (1000.0 + 50.0 * x) as u64)).collect();
        let m = fit(&line).unwrap();
        assert_eq!(m.form, Form::Linear);
        assert!((m.coefficients[1] - 50.0).abs() < 1e-6, "{m:?}");
        assert_eq!(m.at(128.0), 1000 + 50 * 128);
        let square: Vec<(f64, u64)> = [256.0, 512.0, 1024.0, 2048.0].iter().map(|&x| (x, (1e6 + 3.0 * x * x) as u64)).collect();
        assert_eq!(fit(&square).unwrap().form, Form::Quadratic);
        let flat = [(4.0, 100), (8.0, 100), (12.0, 101)];
        assert_eq!(fit(&flat).unwrap().form, Form::Constant);
        // Noise beyond the tolerance that no curve halves stays a constant.
        let noisy = [(4.0, 112), (8.0, 104), (16.0, 112), (24.0, 112), (32.0, 112)];
        assert_eq!(fit(&noisy).unwrap().form, Form::Constant);
        // Two points: the line through them, exact.
        let two = fit(&[(1.0, 10), (3.0, 30)]).unwrap();
        assert_eq!((two.form, two.max_residual_bytes), (Form::Linear, 0));
        // One value only: a constant.
        assert_eq!(fit(&[(5.0, 7), (5.0, 9)]).unwrap().form, Form::Constant);
        assert!(fit(&[]).is_none());
    }

    #[test]
    fn a_parabola_bending_down_is_not_chosen() {
        let bent = [(1.0, 100), (2.0, 190), (3.0, 260), (4.0, 310)];
        let m = fit(&bent).unwrap();
        assert_eq!(m.form, Form::Linear, "{m:?}");
        assert!(m.max_residual_bytes > 0);
    }

    fn judged(model: &Model, capacity: u64, margin: u64, last: (u64, u64), slope: f64) -> Judged<'_> {
        Judged { model, capacity, margin, last, slope, parabola: None }
    }

    #[test]
    fn crossing_is_the_last_whole_value_that_fits() {
        let m = fit(&[(8.0, 1000 + 400), (16.0, 1000 + 800)]).unwrap();
        // 1000 + 50 v ≤ 3000 → v ≤ 40.
        assert_eq!(crossing(&judged(&m, 3000, 0, (16, 1800), 50.0), 8), (Some(40), Some(41)));
        // A margin of 100 bytes: v ≤ 38.
        assert_eq!(crossing(&judged(&m, 3000, 100, (16, 1800), 50.0), 8), (Some(38), Some(39)));
        // A steeper growth seen between two points: 1800 + 60 (v − 16) ≤ 3000 → v ≤ 36.
        assert_eq!(crossing(&judged(&m, 3000, 0, (16, 1800), 60.0), 8), (Some(36), Some(37)));
        // The first value measured does not fit: search below it.
        assert_eq!(crossing(&judged(&m, 1300, 0, (16, 1800), 50.0), 8), (Some(6), Some(7)));
        let flat = fit(&[(1.0, 5), (2.0, 5), (3.0, 5)]).unwrap();
        assert_eq!(crossing(&judged(&flat, 10, 0, (3, 5), 0.0), 1), (None, None));
        // Nothing fits, even 1; a huge first value is searched, not walked.
        assert_eq!(crossing(&judged(&m, 10, 0, (16, 1800), 50.0), 8), (None, Some(1)));
        assert_eq!(crossing(&judged(&m, 3000, 0, (16, 1800), 50.0), 1 << 50), (Some(40), Some(41)));
        // A parabola bending up held beside the line: 1000 + 50 v + v² ≤ 3000 → v ≤ 26.
        let bent = Model { form: Form::Quadratic, coefficients: vec![1000.0, 50.0, 1.0], max_residual_bytes: 0 };
        let with = Judged { parabola: Some(&bent), ..judged(&m, 3000, 0, (16, 1800), 50.0) };
        assert_eq!(crossing(&with, 8), (Some(26), Some(27)));
        assert!(upward_parabola(&[(1.0, 10), (2.0, 20)]).is_none());
        assert!(upward_parabola(&[(1.0, 10), (2.0, 20), (3.0, 40)]).is_some());
        assert!(upward_parabola(&[(1.0, 10), (2.0, 30), (3.0, 40)]).is_none());
        assert_eq!(steepest_slope(&[(4.0, 10), (8.0, 30), (16.0, 50), (16.0, 51)]), 5.0);
        assert_eq!(steepest_slope(&[(4.0, 10)]), 0.0);
    }
}
