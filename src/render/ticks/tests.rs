//! Ticks at many zoom windows: labels never overlap, stay inside their axis, are distinct
//! (per allocation for bytes) and say what they mark.

use super::*;
use crate::render::geometry::Viewport;

/// About what a 12.9 px sans-serif font measures: 0.6 em a character.
fn width(s: &str) -> i32 {
    (s.chars().count() as f64 * 7.8).ceil() as i32
}

fn fit(bounds: PxRect) -> Fit<'static> {
    Fit {
        width: &width,
        height: 13,
        gap: 4,
        bounds,
    }
}

/// Where a 1,280 px wide panel with a 14 px font puts its diagram.
const DIAGRAM: PxRect = PxRect {
    x0: 134,
    y0: 60,
    x1: 1100,
    y1: 560,
};

fn no_overlaps(ticks: &[Tick], gap: i32) {
    for (i, a) in ticks.iter().enumerate() {
        for b in &ticks[i + 1..] {
            let apart_x = a.rect.x1 + gap <= b.rect.x0 || b.rect.x1 + gap <= a.rect.x0;
            let apart_y = a.rect.y1 + gap <= b.rect.y0 || b.rect.y1 + gap <= a.rect.y0;
            assert!(apart_x || apart_y, "{a:?} overlaps {b:?}");
        }
    }
}

fn inside(ticks: &[Tick], bounds: PxRect) {
    for t in ticks {
        let r = t.rect;
        assert!(
            r.x0 >= bounds.x0 && r.x1 <= bounds.x1 && r.y0 >= bounds.y0 && r.y1 <= bounds.y1,
            "{t:?} outside {bounds:?}"
        );
    }
}

#[test]
fn step_labels_fit_at_every_zoom() {
    let bounds = PxRect {
        x0: DIAGRAM.x0 - 6,
        y0: DIAGRAM.y1 + 4,
        x1: DIAGRAM.x1 + 150,
        y1: DIAGRAM.y1 + 30,
    };
    let f = fit(bounds);
    let full = 162_265.0;
    let mut deep_seen = false;
    for k in 0..60 {
        let span = full / 1.6f64.powi(k);
        for at in [0.0, 0.37, 0.999] {
            let x0 = (full - span) * at;
            let view = Viewport {
                x0,
                x1: x0 + span,
                y0: 0.0,
                y1: 1.0,
            };
            let map = Mapping::new(view, DIAGRAM);
            let ticks = step_axis(&map, &f, DIAGRAM.y1 + 4);
            no_overlaps(&ticks, f.gap);
            inside(&ticks, bounds);
            let labels: Vec<&str> = ticks.iter().map(|t| t.label.as_str()).collect();
            let mut unique = labels.clone();
            unique.dedup();
            assert_eq!(unique, labels, "labels repeat in {view:?}");
            if span > 10.0 {
                assert!(ticks.len() >= 2, "{view:?}: {labels:?}");
            }
            for t in &ticks {
                // The label is the step at its column.
                let step: f64 = t.label.replace(',', "").parse().unwrap();
                assert!((map.x_px(step) - f64::from(t.px)).abs() <= 0.5, "{t:?}");
                deep_seen |= t.label.len() > 6 && span < 50.0;
            }
        }
    }
    assert!(deep_seen, "no deep zoom far from step 0 was tried");
}

#[test]
fn step_ticks_are_round() {
    let f = fit(PxRect {
        x0: 0,
        y0: 0,
        x1: 2000,
        y1: 2000,
    });
    let rect = PxRect {
        x0: 100,
        y0: 0,
        x1: 1100,
        y1: 100,
    };
    let view = |x0: f64, x1: f64| Viewport {
        x0,
        x1,
        y0: 0.0,
        y1: 1.0,
    };
    let labels = |v: Viewport| -> Vec<String> {
        step_axis(&Mapping::new(v, rect), &f, 200)
            .into_iter()
            .map(|t| t.label)
            .collect()
    };
    // 1,000 px for 10 steps: every step has room.
    assert_eq!(labels(view(0.0, 10.0)).len(), 10);
    // 162,265 steps on 1,000 px: `160,000` is 7 characters (55 px) and 4 px apart, so
    // 10,000 steps apart (61.6 px) is the smallest 1-2-5 spacing that fits; 5,000 (30.8
    // px) does not.
    assert_eq!(
        labels(view(0.0, 162_265.0)),
        (0..=16)
            .map(|k| group_digits(k * 10_000))
            .collect::<Vec<_>>()
    );
    assert!(labels(view(3.2, 3.9)).is_empty());
    assert!(labels(view(f64::NAN, 1.0)).is_empty());
}

/// A space of allocations stacked: sizes in bytes, printed index = position.
fn space(sizes: &[u64]) -> (Vec<Slot>, Vec<u64>) {
    let mut base = 0;
    let slots = sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let slot = Slot {
                allocation: i as u32,
                base,
            };
            base += s;
            slot
        })
        .collect();
    (slots, sizes.to_vec())
}

/// The offset in its allocation a byte tick's label says, worked out from the label alone
/// (with the tick below it for `…` labels).
fn read_offset(label: &str, below: Option<u64>) -> u64 {
    // An exact anchor may come without its unit: bytes.
    let (number, unit) = label.rsplit_once(' ').unwrap_or((label, "B"));
    let scale = match unit {
        "B" => 1u64,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => panic!("unit of {label}"),
    };
    if let Some(tail) = number.strip_prefix('…') {
        let digits = tail.replace(',', "");
        let modulus = 10u64.pow(digits.len() as u32);
        let tail: u64 = digits.parse().unwrap();
        let below = below.expect("a … label has a tick below it");
        // The first offset above `below` that ends in these digits.
        let mut o = below - below % modulus + tail;
        if o <= below {
            o += modulus;
        }
        return o;
    }
    let number: f64 = number
        .strip_prefix('+')
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    (number * scale as f64).round() as u64
}

fn check_bytes(sizes: &[u64], views: &[Viewport]) -> Vec<String> {
    let (slots, size) = space(sizes);
    let alloc = |a: u32| size.get(a as usize).map(|&s| (u64::from(a), s));
    let bounds = PxRect {
        x0: 8,
        y0: DIAGRAM.y0 - 6,
        x1: DIAGRAM.x0 - 7,
        y1: DIAGRAM.y1 + 3,
    };
    let f = fit(bounds);
    let mut labelled = Vec::new();
    for view in views {
        let map = Mapping::new(*view, DIAGRAM);
        let ticks = byte_axis(&map, &slots, &alloc, &f, DIAGRAM.x0 - 7);
        no_overlaps(&ticks, f.gap);
        inside(&ticks, bounds);
        let mut seen = std::collections::HashSet::new();
        let mut below: Option<(u32, u64)> = None;
        for t in &ticks {
            let a = t.allocation.unwrap();
            assert!(
                seen.insert((a, t.label.clone())),
                "{} twice in {view:?}",
                t.label
            );
            let slot = slots[a as usize];
            // What the label says is where the tick is.
            let at = if t.boundary {
                assert_eq!(t.label, format!("alloc {a}"));
                slot.base
            } else {
                let prev = below.filter(|(pa, _)| *pa == a).map(|(_, o)| o);
                let o = read_offset(&t.label, prev);
                assert!(o > 0 && o < size[a as usize], "{t:?}");
                below = Some((a, o));
                slot.base + o
            };
            // The label's row is the tick's, unless moved in at an end of the axis.
            let py = map.y_px(at as f64);
            assert!(
                (py - f64::from(t.px)).abs() <= 0.5,
                "{t:?} at {at} ({py}) in {view:?}"
            );
            let middle = (t.rect.y0 + t.rect.y1) / 2;
            assert!((middle - t.px).abs() <= f.height / 2 + 1, "{t:?}");
            labelled.push(t.label.clone());
        }
        // Ticks come bottom up.
        assert!(ticks.windows(2).all(|w| w[0].px > w[1].px), "{ticks:?}");
    }
    labelled
}

fn zooms(height: f64) -> Vec<Viewport> {
    let mut views = Vec::new();
    for k in 0..64 {
        let span = height / 1.5f64.powi(k);
        if span < 4.0 {
            break;
        }
        for at in [0.0, 0.123, 0.5, 0.77, 1.0] {
            let y0 = (height - span) * at;
            views.push(Viewport {
                x0: 0.0,
                x1: 10.0,
                y0,
                y1: y0 + span,
            });
        }
    }
    views
}

#[test]
fn byte_labels_fit_and_say_where_they_are_at_every_zoom() {
    // A TPU-like space: a few GiB-sized allocations between tiny ones.
    let sizes = [
        512,
        3 << 30,
        256,
        1 << 20,
        4096,
        (5 << 30) + 12_345,
        512,
        512,
        700 << 20,
        64,
    ];
    let height: u64 = sizes.iter().sum();
    let mut views = zooms(height as f64);
    // Deep inside the 5 GiB allocation, past its first 4 GiB: 4 bytes a pixel and less.
    let deep = (3u64 << 30) + 512 + 256 + (1 << 20) + 4096 + (4 << 30) + 777;
    for span in [2000.0, 300.0, 40.0] {
        views.push(Viewport {
            x0: 0.0,
            x1: 1.0,
            y0: deep as f64,
            y1: deep as f64 + span,
        });
    }
    let labels = check_bytes(&sizes, &views);
    // Every form was tried: allocation starts, GiB, a unit down, bytes, `…` bytes.
    for form in ["alloc 5", " GiB", "0 MiB", " KiB", "…"] {
        assert!(
            labels.iter().any(|l| l.contains(form)),
            "no {form} in {labels:?}"
        );
    }
    // Thousands of small allocations, as on the 94 MB CPU dump.
    let many: Vec<u64> = (0..46_594u64).map(|i| 64 + (i * 7919) % 50_000).collect();
    let height: u64 = many.iter().sum();
    let labels = check_bytes(&many, &zooms(height as f64));
    assert!(labels.len() > 500 && labels.iter().any(|l| l.starts_with("alloc 4")));
}

#[test]
fn deep_zoom_labels_are_exact_and_short() {
    // Offsets of 700 MiB and more, 64 bytes apart: MiB would need 6 decimals.
    let o = 700u64 << 20;
    let labels = offset_labels(&[o, o + 64, o + 128, o + 960, o + 1024], 64);
    assert_eq!(
        labels,
        [
            "+734,003,200 B",
            "…003,264 B",
            "…003,328 B",
            "…004,160 B",
            "…004,224 B"
        ]
    );
    // The first offset above o + 128 that ends in 004,160 is o + 960.
    assert_eq!(read_offset("…004,160 B", Some(o + 128)), o + 960);
    // Ticks within 1,000 bytes share all but the last group.
    assert_eq!(
        offset_labels(&[o, o + 512], 512),
        ["+734,003,200 B", "…712 B"]
    );
    // Round spacings keep the unit of the largest.
    assert_eq!(
        offset_labels(&[1 << 19, 1 << 20, 3 << 19], 1 << 19),
        ["+0.5 MiB", "+1.0 MiB", "+1.5 MiB"]
    );
    assert_eq!(
        offset_labels(&[5 << 28, 6 << 28], 1 << 28),
        ["+1.25 GiB", "+1.50 GiB"]
    );
    // 64 KiB apart near 1 MiB: a unit down.
    assert_eq!(
        offset_labels(&[1 << 20, (1 << 20) + (1 << 16)], 1 << 16),
        ["+1,024 KiB", "+1,088 KiB"]
    );
    assert_eq!(
        offset_labels(&[512, 1024, 1536], 512),
        ["+512 B", "+1,024 B", "+1,536 B"]
    );
}
