//! `bufscope diff --svg`: the comparison chart of cpu_mlp_train from jax 0.7.2 to 0.9.2,
//! read back as XML. Two curves (one per side's colour), each side's peak dot at the
//! relative position of its peak step (steps 89 of 100 and 88 of 97, checked by hand in
//! `tests/diff.rs`) and at the height of its curve's highest point, and the title's delta
//! equal to the difference of the two peaks `bufscope summary --json` prints.

mod common;

use bufscope::render::diff::{comparison_height, ChartLayout, BASE_COLOR, NEW_COLOR};
use bufscope::render::Style;
use plotters::style::RGBColor;
use std::process::Command;

fn bufscope(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .args(args)
        .output()
        .expect("bufscope runs")
}

fn mlp(version: &str) -> String {
    common::fixtures_dir()
        .join(format!("cpu/{version}/cpu_mlp_train.buffer-assignment.txt"))
        .to_string_lossy()
        .into_owned()
}

fn peak(file: &str) -> i64 {
    let out = bufscope(&["summary", "--json", file]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["modules"][0]["memory_spaces"][0]["peak_live_bytes"]
        .as_i64()
        .unwrap()
}

fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// The points of every `<polyline>` stroked in `color`.
fn polylines(doc: &roxmltree::Document, color: &str) -> Vec<Vec<(f64, f64)>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some(color))
        .map(|n| {
            n.attribute("points")
                .unwrap()
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

/// `(cx, cy)` of every `<circle>` filled with `color`.
fn dots(doc: &roxmltree::Document, color: &str) -> Vec<(f64, f64)> {
    doc.descendants()
        .filter(|n| n.has_tag_name("circle") && n.attribute("fill") == Some(color))
        .map(|n| {
            let f = |a| n.attribute(a).unwrap().parse::<f64>().unwrap();
            (f("cx"), f("cy"))
        })
        .collect()
}

#[test]
fn both_curves_and_peaks_where_they_are() {
    let out_path = std::env::temp_dir().join(format!("bufscope-diff-{}.svg", std::process::id()));
    let out = out_path.to_string_lossy().into_owned();
    let (base, new) = (mlp("jax0.7.2"), mlp("jax0.9.2"));
    let run = bufscope(&["diff", &base, &new, "--svg", &out]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let svg = std::fs::read_to_string(&out_path).unwrap();
    let _ = std::fs::remove_file(&out_path);
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    let root = doc.root_element();
    assert_eq!(root.attribute("width"), Some("1200"));
    assert_eq!(
        root.attribute("height"),
        Some(comparison_height(1200).to_string().as_str())
    );

    let plot = ChartLayout::new((1200, comparison_height(1200)), Style::default().font_size).plot;
    let x_of = |position: f64| f64::from(plot.x0) + position * f64::from(plot.width());
    for (color, step, steps) in [(BASE_COLOR, 89.0, 100.0), (NEW_COLOR, 88.0, 97.0)] {
        let color = hex(color);
        let curves = polylines(&doc, &color);
        assert_eq!(curves.len(), 1, "one curve in {color}");
        let curve = &curves[0];
        // It spans the plot from position 0 to 1.
        let (first, last) = (curve[0].0, curve[curve.len() - 1].0);
        assert!(
            (first - f64::from(plot.x0)).abs() <= 1.0 && (last - f64::from(plot.x1)).abs() <= 1.0
        );
        let d = dots(&doc, &color);
        assert_eq!(d.len(), 1, "one peak dot in {color}");
        let (cx, cy) = d[0];
        let want = x_of((step + 0.5) / steps);
        assert!(
            (cx - want).abs() <= 1.0,
            "{color}: peak dot at x {cx}, expected {want}"
        );
        // The dot sits on the curve's highest point (smallest y), which is near it in x.
        let top = curve.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        assert!(
            (cy - top).abs() <= 1.0,
            "{color}: dot at y {cy}, curve top {top}"
        );
        let near = curve
            .windows(2)
            .any(|w| w[0].1 == top && w[1].1 == top && w[0].0 - 2.0 <= cx && cx <= w[1].0 + 2.0);
        assert!(near, "{color}: the curve does not reach its top at the dot");
    }
    let delta = peak(&new) - peak(&base);
    assert_eq!(delta, -6148);
    let text: String = doc
        .descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect();
    assert!(text.contains("-6,148 B (-0.05%)"), "{text}");
    assert!(text.contains("relative program position"), "{text}");
    assert!(text.contains("base 100 steps, new 97"), "{text}");
}
