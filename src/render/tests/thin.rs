//! Tiny values stay visible: a block wide enough to see but lower than
//! [`THIN_MIN_PX`] is drawn that high, outlined, over its neighbours, and the hit test
//! finds it on every row it is drawn on; its bytes do not change.

use super::*;
use crate::render::geometry::THIN_MIN_PX;
use crate::render::kind::border_color;

/// A 1 MiB parameter with one value filling it but 512 bytes, and on its top edge a
/// 512-byte temporary allocation holding a 512-byte value, both live at steps 2 ..= 8;
/// a 64 KiB allocation above, its value live at steps 0 ..= 1.
fn edge_module() -> Module {
    let big = 1u64 << 20;
    module(
        &[
            (big, 0, TEMP, true),
            (512, 0, TEMP, false),
            (1 << 16, 0, TEMP, false),
        ],
        &[
            (0, 0, big - 512, Some((2, 8))),
            (1, 0, 512, Some((2, 8))),
            (2, 0, 1 << 16, Some((0, 1))),
        ],
        10,
    )
}

#[test]
fn a_tiny_value_on_the_edge_of_a_large_one_is_drawn_and_found() {
    let m = edge_module();
    let a = analyze(&m);
    let space = &a.spaces[0];
    let index = SpaceIndex::new(&m, &a, space);
    let view = Viewport::full(&a, space);
    let rect = Layout::new((900, 420), Style::default().font_size).diagram;
    let map = Mapping::new(view, rect);

    let tiny = space.block(&m, 1).unwrap();
    let large = space.block(&m, 0).unwrap();
    // The numbers stay: 512 bytes on top of the parameter.
    assert_eq!((tiny.y0, tiny.y1), ((1 << 20), (1 << 20) + 512));
    let true_px = map.block_px(&tiny).unwrap();
    let shown = map.shown_px(&tiny).unwrap();
    assert_eq!(true_px.height(), 1, "{true_px:?}");
    assert_eq!(shown.height(), THIN_MIN_PX);
    assert_eq!((shown.x0, shown.x1), (true_px.x0, true_px.x1));
    assert!(shown.y0 <= true_px.y0 && true_px.y1 <= shown.y1);
    // The large block's own pixels are what they were.
    assert_eq!(map.shown_px(&large), map.block_px(&large));

    // Drawn: outline above and below, the temporary's colour between, over the large
    // block's border.
    let raster = draw_raster(&m, &a, &index, &view);
    let kind = value_kind(&m, &m.values[1]);
    assert_eq!(kind, ValueKind::Temporary);
    let fill = kind_color(kind);
    let edge = border_color(fill);
    let x = ((shown.x0 + shown.x1) / 2) as u32;
    let px = |y: i32| raster.pixel(x, y as u32).unwrap();
    assert_eq!(px(shown.y0), [edge.0, edge.1, edge.2]);
    assert_eq!(px(shown.y0 + 1), [fill.0, fill.1, fill.2]);
    // (A fill covers its last row and column too, as every rectangle of the backends.)
    assert_eq!(px(shown.y1 - 1), [fill.0, fill.1, fill.2]);
    assert_eq!(px(shown.y1), [edge.0, edge.1, edge.2]);

    // Found on every row drawn, the large value just below.
    for y in shown.y0..shown.y1 {
        assert_eq!(index.hit(&view, rect, x as i32, y), Some(1), "row {y}");
    }
    assert_eq!(index.hit(&view, rect, x as i32, shown.y1 + 1), Some(0));
    let mid = map.block_px(&large).unwrap();
    assert_eq!(
        index.hit(&view, rect, x as i32, (mid.y0 + mid.y1) / 2),
        Some(0)
    );
}

#[test]
fn a_crowd_of_thin_blocks_is_merged_not_outlined() {
    // 2,000 values of 64 bytes side by side in time, each a row of a 1 px band: drawn
    // through the coverage raster (few rectangles), never one outline each.
    let n = 2_000u32;
    let values: Vec<_> = (0..n)
        .map(|i| (0, u64::from(i) * 64, 64, Some((0, 9))))
        .collect();
    let m = module(&[(u64::from(n) * 64 * 400, 0, TEMP, false)], &values, 10);
    let a = analyze(&m);
    let space = &a.spaces[0];
    let svg = draw(&m, &a, &Viewport::full(&a, space), (800, 400));
    let rects = kind_rects(&svg);
    assert!(
        !rects.is_empty() && rects.len() < 200,
        "{} rectangles",
        rects.len()
    );
}
