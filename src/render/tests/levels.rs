//! Levels of detail and the space index as drawn: a busy space rasterised through the
//! levels against the blocks drawn one by one, and the levels and the index built in pieces
//! (while idle) against the ones built at once.

use super::*;

/// How two drawings of the same size differ in `rect`: the share of pixels that differ,
/// the difference of their ink (pixels of a block colour) as a share of all pixels, and
/// the share of 8×8 tiles whose ink differs by more than 8 pixels.
fn compare(a: &Raster, b: &Raster, rect: PxRect) -> (f64, f64, f64) {
    let inks: Vec<[u8; 3]> = ValueKind::ALL
        .iter()
        .flat_map(|&k| {
            let c = kind_color(k);
            let d = kind::border_color(c);
            [[c.0, c.1, c.2], [d.0, d.1, d.2]]
        })
        .collect();
    let ink = |r: &Raster, x: i32, y: i32| {
        r.pixel(x as u32, y as u32)
            .is_some_and(|p| inks.contains(&p))
    };
    let (mut differ, mut ink_a, mut ink_b, mut tiles, mut bad_tiles) = (0, 0i64, 0i64, 0, 0);
    for ty in (rect.y0..rect.y1).step_by(8) {
        for tx in (rect.x0..rect.x1).step_by(8) {
            let (mut ta, mut tb) = (0i64, 0i64);
            for y in ty..(ty + 8).min(rect.y1) {
                for x in tx..(tx + 8).min(rect.x1) {
                    differ +=
                        usize::from(a.pixel(x as u32, y as u32) != b.pixel(x as u32, y as u32));
                    ta += i64::from(ink(a, x, y));
                    tb += i64::from(ink(b, x, y));
                }
            }
            tiles += 1;
            bad_tiles += usize::from((ta - tb).abs() > 8);
            ink_a += ta;
            ink_b += tb;
        }
    }
    let pixels = (rect.width() * rect.height()).max(1) as f64;
    (
        differ as f64 / pixels,
        (ink_a - ink_b).abs() as f64 / pixels,
        bad_tiles as f64 / f64::from(tiles.max(1)),
    )
}

#[test]
fn levels_of_detail_draw_what_blocks_one_by_one_draw() {
    // Thousands of blocks drawn whole and zoomed, with and without levels of detail: only
    // pixels at the edges of merged runs may differ.
    let m = busy_module();
    let a = analyze(&m);
    let space = &a.spaces[0];
    let exact = SpaceIndex::with_levels(&m, &a, space, Levels::Never);
    let coarse = SpaceIndex::with_levels(&m, &a, space, Levels::Always);
    let full = exact.full();
    let layout = Layout::new((900, 420), Style::default().font_size);
    let views = [
        full,
        full.zoom(0.5, 1.0, (full.x1 * 0.3, 0.0)),
        full.zoom(0.8, 0.6, (full.x1 * 0.6, full.y1 * 0.5)),
        full.zoom(1.0, 0.05, (0.0, full.y1 * 0.7)),
    ];
    let mut compared = 0;
    for view in views {
        let (e, c) = (
            draw_raster(&m, &a, &exact, &view),
            draw_raster(&m, &a, &coarse, &view),
        );
        let (pixels, ink, tiles) = compare(&e, &c, layout.diagram);
        eprintln!(
            "{view:?}: pixels {:.2} %, ink {:.2} %, tiles {:.2} %",
            pixels * 100.0,
            ink * 100.0,
            tiles * 100.0
        );
        assert!(
            pixels < 0.10,
            "{:.2} % of the pixels differ",
            pixels * 100.0
        );
        assert!(
            ink < 0.01,
            "ink differs by {:.2} % of the pixels",
            ink * 100.0
        );
        assert!(
            tiles < 0.02,
            "{:.2} % of the 8×8 tiles differ",
            tiles * 100.0
        );
        // The level was used: the drawing is not the same, call for call.
        compared += usize::from(e.fills != c.fills);
    }
    assert!(compared > 0, "no view was drawn through a level of detail");
}

#[test]
fn levels_built_in_pieces_while_idle_draw_as_levels_built_at_once() {
    let m = busy_module();
    let a = analyze(&m);
    let space = &a.spaces[0];
    let at_once = SpaceIndex::with_levels(&m, &a, space, Levels::Always);
    let idle = SpaceIndex::with_levels(&m, &a, space, Levels::Always);
    let plot = Layout::new((900, 420), Style::default().font_size).diagram;
    let mut calls = 0;
    while idle.prepare_next(plot, 1000) {
        calls += 1;
        assert!(calls < 10_000, "prepare_next does not end");
    }
    let built = idle.levels_heap_bytes();
    assert!(built > 0 && calls > 30, "{calls} calls built {built} bytes");
    let full = at_once.full();
    for view in [
        full,
        full.zoom(0.25, 0.5, (full.x1 * 0.4, full.y1 * 0.2)),
        full.zoom(0.05, 1.0, (full.x1 * 0.7, 0.0)),
    ] {
        let (x, y) = (
            draw_raster(&m, &a, &at_once, &view),
            draw_raster(&m, &a, &idle, &view),
        );
        assert_eq!(compare(&x, &y, plot), (0.0, 0.0, 0.0), "{view:?}");
        assert_eq!(x.fills, y.fills, "{view:?}");
    }
    // Nothing was built again when drawing: the levels prepared were those the views use.
    assert_eq!(idle.levels_heap_bytes(), built);
}

#[test]
fn index_built_in_pieces_is_the_index_built_at_once() {
    let m = busy_module();
    let a = analyze(&m);
    let space = &a.spaces[0];
    let whole = SpaceIndex::with_levels(&m, &a, space, Levels::Auto);
    for work in [1, 7, 1000] {
        let mut builder = SpaceIndex::builder(&a, space, Levels::Auto);
        let mut pieces = 1;
        while !builder.step(&m, space, work) {
            pieces += 1;
        }
        assert!(work > 1 || pieces >= space.timed.len(), "{pieces} pieces");
        let stepped = builder.finish(&m, space);
        assert_eq!(
            format!("{stepped:?}"),
            format!("{whole:?}"),
            "pieces of {work}"
        );
    }
}
