//! The axes as drawn: [`axis_labels`] through a real backend (SVG, its own text
//! measure) at many zoom windows of a busy space: boxes apart, inside the drawing, the
//! byte labels distinct per allocation, and the titles there.

use super::*;

#[test]
fn axis_labels_never_overlap_when_drawn() {
    let m = busy_module();
    let a = analyze(&m);
    let space = &a.spaces[0];
    let full = Viewport::full(&a, space);
    let size = (1280u32, 520u32);
    let mut svg = String::new();
    let area = SVGBackend::with_string(&mut svg, size).into_drawing_area();
    let mut views = vec![full];
    for k in 1..40 {
        let f = 0.6f64.powi(k);
        for (ax, ay) in [(0.1, 0.05), (0.5, 0.5), (0.93, 0.97)] {
            views.push(full.zoom(f, f, (full.x1 * ax, full.y1 * ay)));
            views.push(full.zoom(1.0, f, (0.0, full.y1 * ay)));
            views.push(full.zoom(f, 1.0, (full.x1 * ax, 0.0)));
        }
    }
    let mut deep = 0;
    for view in views {
        let view = interaction::constrain(view, full);
        let labels = axis_labels(&area, &m, &a, space, &view, &Style::default());
        for (i, (ta, ra)) in labels.iter().enumerate() {
            assert!(ra.x0 >= 0 && ra.y0 >= 0, "{ta} at {ra:?}");
            assert!(
                ra.x1 <= size.0 as i32 && ra.y1 <= size.1 as i32,
                "{ta} at {ra:?}"
            );
            for (tb, rb) in &labels[i + 1..] {
                let apart = ra.x1 <= rb.x0 || rb.x1 <= ra.x0 || ra.y1 <= rb.y0 || rb.y1 <= ra.y0;
                assert!(apart, "{ta} {ra:?} overlaps {tb} {rb:?} in {view:?}");
            }
        }
        let texts: Vec<&str> = labels.iter().map(|(t, _)| t.as_str()).collect();
        assert!(texts.contains(&"step") && texts.contains(&"allocation + offset"));
        // Steps and bytes are labelled in every view.
        let bytes = texts
            .iter()
            .filter(|t| t.starts_with(['+', '…', 'a']) && **t != "allocation + offset");
        assert!(bytes.count() >= 2, "{texts:?} in {view:?}");
        deep += usize::from(view.y1 - view.y0 < 1024.0);
    }
    assert!(deep > 10, "no deep zoom was tried");
}

/// The curve strip's labels as drawn ([`curve_labels`], SVG's own text measure) on TPU dump
/// 000's three spaces at the heights the page gives four spaces at 1280×720, with
/// capacities under, at and over each peak: apart, inside the strip, all three there.
#[test]
fn curve_labels_never_overlap_when_drawn() {
    let text = include_str!("../../../tests/fixtures/tpu/000_0cb419b3147a3cb6.txt");
    let load = crate::load_files([("000.txt", text.as_bytes())]);
    let m = &load.modules[0];
    let a = analyze(m);
    for space in &a.spaces {
        let full = Viewport::full(&a, space);
        for h in [180u32, 240, 400] {
            let mut svg = String::new();
            let area = SVGBackend::with_string(&mut svg, (1000, h)).into_drawing_area();
            let strip = Layout::new((1000, h), 14.0).curve;
            assert!(strip.height() >= 48, "{h}: {strip:?}");
            for cap in [
                space.peak_bytes / 3,
                space.peak_bytes,
                space.peak_bytes * 2 + 7,
            ] {
                let capacity = crate::answers::capacity::parse_capacity(&cap.to_string())
                    .unwrap()
                    .on(space.color);
                let style = Style {
                    capacity: Some(capacity),
                    ..Style::default()
                };
                let labels = curve_labels(&area, &a, space, &full, &style);
                assert_eq!(labels.len(), 3, "{} at {h}, {cap}: {labels:?}", space.color);
                for (i, (ta, ra)) in labels.iter().enumerate() {
                    let inside = ra.x0 >= strip.x0
                        && ra.x1 <= strip.x1
                        && ra.y0 >= strip.y0
                        && ra.y1 <= strip.y1;
                    assert!(inside, "{ta} {ra:?} outside {strip:?}");
                    for (tb, rb) in &labels[i + 1..] {
                        let apart =
                            ra.x1 <= rb.x0 || rb.x1 <= ra.x0 || ra.y1 <= rb.y0 || rb.y1 <= ra.y0;
                        assert!(apart, "{ta} {ra:?} overlaps {tb} {rb:?}");
                    }
                }
            }
        }
    }
}
