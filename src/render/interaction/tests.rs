//! Tests of the interaction rules, in device pixels of a 1200 × 600 panel.

use super::*;

fn layout() -> Layout {
    Layout::new((1200, 600), 12.0)
}

fn view() -> Viewport {
    Viewport {
        x0: 0.0,
        x1: 100.0,
        y0: 0.0,
        y1: 1000.0,
    }
}

/// The centre of a rectangle.
fn centre(r: PxRect) -> (f64, f64) {
    (f64::from(r.x0 + r.x1) / 2.0, f64::from(r.y0 + r.y1) / 2.0)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn regions_follow_the_layout() {
    let l = layout();
    let d = l.diagram;
    assert_eq!(region(&l, centre(d)), Region::Diagram);
    assert_eq!(region(&l, centre(l.curve)), Region::Steps);
    // The step axis under the diagram.
    let below = (centre(d).0, f64::from(d.y1) + 3.0);
    assert_eq!(region(&l, below), Region::Steps);
    // The byte axis left of it.
    let left = (f64::from(d.x0) - 5.0, centre(d).1);
    assert_eq!(region(&l, left), Region::Bytes);
    assert_eq!(region(&l, centre(l.title)), Region::Outside);
    assert_eq!(region(&l, centre(l.labels)), Region::Outside);
    assert_eq!(region(&l, (-1.0, -1.0)), Region::Outside);
}

#[test]
fn constrain_keeps_views_inside_and_not_too_thin() {
    let full = view();
    assert_eq!(constrain(full, full), full);
    let nan = Viewport {
        x0: f64::NAN,
        ..full
    };
    assert_eq!(constrain(nan, full), full);
    // Half a step and 4 bytes wide: widened to 2 steps and 16 bytes about their centre.
    let thin = Viewport {
        x0: 10.0,
        x1: 10.5,
        y0: 100.0,
        y1: 104.0,
    };
    let c = constrain(thin, full);
    assert_eq!((c.x0, c.x1, c.y0, c.y1), (9.25, 11.25, 94.0, 110.0));
    // Sticking out on the left: shifted back in, width kept.
    let out = Viewport {
        x0: -30.0,
        x1: 20.0,
        ..full
    };
    let c = constrain(out, full);
    assert_eq!((c.x0, c.x1), (0.0, 50.0));
    // A space one step long cannot be shown thinner than that step.
    let one = Viewport { x1: 1.0, ..full };
    let c = constrain(Viewport { x1: 0.1, ..one }, one);
    assert_eq!((c.x0, c.x1), (0.0, 1.0));
}

#[test]
fn zoom_keeps_the_point_under_the_pointer() {
    let l = layout();
    let at = (
        f64::from(l.diagram.x0) + 100.0,
        f64::from(l.diagram.y0) + 50.0,
    );
    let before = Mapping::new(view(), l.diagram);
    let z = zoom_at(view(), l.diagram, 0.5, Axes::BOTH, Some(at));
    let after = Mapping::new(z, l.diagram);
    assert!(close(before.step_at(at.0), after.step_at(at.0)));
    assert!(close(before.bytes_at(at.1), after.bytes_at(at.1)));
    assert!(close(z.x1 - z.x0, 50.0) && close(z.y1 - z.y0, 500.0));
    // One axis only; without a pointer, around the centre.
    let s = zoom_at(view(), l.diagram, 0.5, Axes::STEPS, None);
    assert_eq!((s.x0, s.x1, s.y0, s.y1), (25.0, 75.0, 0.0, 1000.0));
    let b = zoom_at(view(), l.diagram, 2.0, Axes::BYTES, None);
    assert_eq!((b.x0, b.x1, b.y0, b.y1), (0.0, 100.0, -500.0, 1500.0));
}

#[test]
fn wheel_zooms_where_it_is_and_swipes_pan() {
    let l = layout();
    let inside = centre(l.diagram);
    let w = |dx: f64, dy: f64, shift: bool, alt: bool| Wheel { dx, dy, shift, alt };
    // A notch up over the diagram zooms in on both axes by e^(-0.15).
    let v = wheel(view(), &l, inside, w(0.0, -100.0, false, false)).unwrap();
    let f = (-0.15f64).exp();
    assert!(close(v.x1 - v.x0, 100.0 * f) && close(v.y1 - v.y0, 1000.0 * f));
    let (m0, m1) = (Mapping::new(view(), l.diagram), Mapping::new(v, l.diagram));
    assert!(close(m0.step_at(inside.0), m1.step_at(inside.0)));
    // Alt: offsets only; Shift (which Chromium turns into a sideways wheel): steps only.
    let v = wheel(view(), &l, inside, w(0.0, -100.0, false, true)).unwrap();
    assert_eq!((v.x0, v.x1), (0.0, 100.0));
    assert!(close(v.y1 - v.y0, 1000.0 * f));
    let v = wheel(view(), &l, inside, w(100.0, 0.0, true, false)).unwrap();
    assert!(close(v.x1 - v.x0, 100.0 / f));
    assert_eq!((v.y0, v.y1), (0.0, 1000.0));
    // Over the byte axis: offsets only; over the curve: steps only.
    let axis = (f64::from(l.diagram.x0) - 5.0, inside.1);
    let v = wheel(view(), &l, axis, w(0.0, -100.0, false, false)).unwrap();
    assert_eq!((v.x0, v.x1), (0.0, 100.0));
    let v = wheel(view(), &l, centre(l.curve), w(0.0, -100.0, false, false)).unwrap();
    assert_eq!((v.y0, v.y1), (0.0, 1000.0));
    // A sideways swipe of the diagram's width pans by the view's width, in time only.
    let width = f64::from(l.diagram.width());
    let v = wheel(view(), &l, inside, w(width, 3.0, false, false)).unwrap();
    assert_eq!((v.x0, v.x1, v.y0, v.y1), (100.0, 200.0, 0.0, 1000.0));
    // Outside: not taken.
    assert_eq!(
        wheel(view(), &l, centre(l.title), w(0.0, -100.0, false, false)),
        None
    );
    assert_eq!(wheel_unit(0, 700.0), 1.0);
    assert_eq!(wheel_unit(1, 700.0), 16.0);
    assert_eq!(wheel_unit(2, 700.0), 700.0);
}

#[test]
fn a_drag_starts_past_the_slop_and_follows_the_pointer() {
    let l = layout();
    let plot = l.diagram;
    let mut d = Drag::press(Region::Diagram, (50.0, 50.0), view()).unwrap();
    assert_eq!(d.moved((52.0, 51.0), plot, 2.0), None);
    assert!(!d.dragging);
    // Right by half the plot's width (CSS pixels at 2 device pixels each) and down by a
    // quarter of its height: the data moves with the pointer.
    let (half_w, quarter_h) = (
        f64::from(plot.width()) / 4.0,
        f64::from(plot.height()) / 8.0,
    );
    let v = d
        .moved((50.0 + half_w, 50.0 + quarter_h), plot, 2.0)
        .unwrap();
    assert!(d.dragging);
    assert!(close(v.x0, -50.0) && close(v.x1, 50.0));
    assert!(close(v.y0, 250.0) && close(v.y1, 1250.0));
    // Once a drag, even a small movement pans.
    assert!(d.moved((51.0, 50.0), plot, 2.0).is_some());
    // On the byte axis only the offsets move; outside there is no press.
    let mut b = Drag::press(Region::Bytes, (0.0, 0.0), view()).unwrap();
    let v = b.moved((100.0, 100.0), plot, 1.0).unwrap();
    assert_eq!((v.x0, v.x1), (0.0, 100.0));
    assert!(v.y0 > 0.0);
    assert_eq!(Drag::press(Region::Outside, (0.0, 0.0), view()), None);
}

#[test]
fn clicks_pick_on_the_diagram_only() {
    let l = layout();
    let inside = centre(l.diagram);
    let got = click(&l, inside, |x, y| {
        assert_eq!((x, y), (inside.0 as i32, inside.1 as i32));
        Some(7)
    });
    assert_eq!(got, Some(Some(7)));
    assert_eq!(click(&l, inside, |_, _| None), Some(None));
    assert_eq!(click(&l, centre(l.curve), |_, _| Some(7)), None);

    let b = Block {
        value: 3,
        x0: 10,
        x1: 30,
        y0: 100,
        y1: 300,
    };
    let v = double_click(view(), &l, inside, |_, _| Some(b)).unwrap();
    assert_eq!((v.x0, v.x1, v.y0, v.y1), (5.0, 35.0, 50.0, 350.0));
    let v = double_click(view(), &l, inside, |_, _| None).unwrap();
    assert!(close(v.x1 - v.x0, 50.0) && close(v.y1 - v.y0, 500.0));
    assert_eq!(
        double_click(view(), &l, centre(l.curve), |_, _| Some(b)),
        None
    );
}

#[test]
fn the_time_cursor_is_the_step_under_the_pointer() {
    let l = layout();
    let d = l.diagram;
    // 100 steps over the plot's width: the first column is step 0, the last step 99.
    let y = centre(d).1;
    assert_eq!(time_step(view(), &l, (f64::from(d.x0), y), 100), Some(0));
    assert_eq!(
        time_step(view(), &l, (f64::from(d.x1) - 0.5, y), 100),
        Some(99)
    );
    let mid = f64::from(d.x0) + f64::from(d.width()) * 0.425;
    assert_eq!(time_step(view(), &l, (mid, y), 100), Some(42));
    // Past the program's end it stays on the last step; a view before step 0 shows none.
    assert_eq!(
        time_step(view(), &l, (f64::from(d.x1) - 0.5, y), 10),
        Some(9)
    );
    let early = Viewport {
        x0: -50.0,
        x1: 50.0,
        ..view()
    };
    assert_eq!(time_step(early, &l, (f64::from(d.x0), y), 100), None);
    assert_eq!(time_step(view(), &l, centre(l.curve), 100), Some(50));
    assert_eq!(time_step(view(), &l, (f64::from(d.x0) - 5.0, y), 100), None);
}

#[test]
fn every_key_has_one_action_and_the_view_keys_move_it() {
    let mut seen = Vec::new();
    for b in BINDINGS {
        for &(k, a) in b.keys {
            assert!(!seen.contains(&k), "{k} bound twice");
            seen.push(k);
            assert_eq!(key_action(k), Some(a));
        }
    }
    assert_eq!(key_action("x"), None);
    assert_eq!(key_action("Escape"), Some(Action::Close));
    assert_eq!(key_action("?"), Some(Action::Help));

    let (full, plot) = (view(), layout().diagram);
    let half = Viewport {
        x0: 20.0,
        x1: 70.0,
        y0: 0.0,
        y1: 500.0,
    };
    let k = |a, far| key_view(a, half, full, plot, far, None);
    let v = k(Action::PanRight, false).unwrap();
    assert!(close(v.x0, 27.5) && close(v.x1, 77.5));
    let v = k(Action::PanLeft, true).unwrap();
    assert!(close(v.x0, -2.5) && close(v.x1, 47.5));
    let v = k(Action::PanUp, false).unwrap();
    assert!(close(v.y0, 75.0) && close(v.y1, 575.0));
    let v = k(Action::PanDown, false).unwrap();
    assert!(close(v.y0, -75.0));
    let v = k(Action::ZoomIn, false).unwrap();
    assert!(close(v.x1 - v.x0, 40.0) && close((v.x0 + v.x1) / 2.0, 45.0));
    let v = k(Action::ZoomOut, false).unwrap();
    assert!(close(v.x1 - v.x0, 62.5));
    assert_eq!(k(Action::Reset, false), Some(full));
    assert_eq!(k(Action::Help, false), None);
    assert_eq!(k(Action::Close, false), None);
}

#[test]
fn the_keys_speedscope_and_perfetto_users_expect_are_bound() {
    use Action::*;
    let expected = [
        ("w", ZoomIn),
        ("s", ZoomOut),
        ("a", PanLeft),
        ("d", PanRight),
        ("+", ZoomIn),
        ("-", ZoomOut),
        ("0", Reset),
        ("ArrowLeft", PanLeft),
        ("ArrowRight", PanRight),
        ("ArrowUp", PanUp),
        ("ArrowDown", PanDown),
        ("/", Search),
        ("Escape", Close),
        ("]", NextPeak),
        ("n", NextPeak),
        ("[", PreviousPeak),
        ("N", PreviousPeak),
    ];
    for (key, action) in expected {
        assert_eq!(key_action(key), Some(action), "{key}");
        // Every bound key is listed by the overlay's label of its row.
        let row = BINDINGS
            .iter()
            .find(|b| b.keys.iter().any(|&(k, _)| k == key))
            .unwrap();
        assert!(!row.label.is_empty() && !row.does.is_empty());
    }
    let (full, plot) = (view(), layout().diagram);
    for a in [Search, NextPeak, PreviousPeak] {
        assert_eq!(key_view(a, full, full, plot, false, None), None);
    }
}

#[test]
fn the_peak_keys_walk_the_prominent_peaks() {
    use Action::*;
    // Peaks at steps 2 (100), 6 (80) and 10 (90): each stands over 5 % of the highest above
    // the valleys around it (6 is 10 above the dip to 70 at 8). The bump at 13 (45) is
    // under half the highest, so not a peak.
    let curve = [0, 50, 100, 40, 30, 60, 80, 75, 70, 85, 90, 20, 30, 45, 10];
    assert_eq!(peak_step(NextPeak, &curve, 0), Some(2));
    assert_eq!(peak_step(NextPeak, &curve, 2), Some(6));
    assert_eq!(peak_step(NextPeak, &curve, 6), Some(10));
    assert_eq!(peak_step(NextPeak, &curve, 10), None);
    assert_eq!(peak_step(PreviousPeak, &curve, 10), Some(6));
    assert_eq!(peak_step(PreviousPeak, &curve, 7), Some(6));
    assert_eq!(peak_step(PreviousPeak, &curve, 2), None);
    assert_eq!(peak_step(ZoomIn, &curve, 0), None);
    assert_eq!(peak_step(NextPeak, &[], 0), None);
}

#[test]
fn the_wheel_is_the_diagrams_only_where_it_would_scroll_nothing_else() {
    let at = |focused, embedded, page_scrolls, ctrl| {
        wheel_is_diagrams(WheelPlace { focused, embedded, page_scrolls, ctrl })
    };
    // The one-screen page: the wheel zooms, focused or not.
    assert!(at(false, false, false, false) && at(true, false, false, false));
    // A notebook's iframe, or a narrow window whose page scrolls: the page (or the notebook)
    // scrolls on over the diagram until it is clicked, or Ctrl (a pinch) is held.
    for (embedded, scrolls) in [(true, false), (false, true), (true, true)] {
        assert!(!at(false, embedded, scrolls, false), "{embedded} {scrolls}");
        assert!(at(true, embedded, scrolls, false), "{embedded} {scrolls}");
        assert!(at(false, embedded, scrolls, true), "{embedded} {scrolls}");
    }
}
