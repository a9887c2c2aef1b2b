//! Tests of the render: drawn to SVG strings and read back (the axes, the levels of detail
//! and thin blocks in tests/axes.rs, tests/levels.rs and tests/thin.rs).

use super::*;
use crate::analysis::{analyze, value_kind, ValueKind};
use crate::model::{
    AllocFlags, Allocation, EntryParameter, Instruction, LiveRange, Schedule, Str, Value,
};

/// A module built by hand: allocations of `(size, colour, flags)`, values of
/// `(allocation, offset, size, live)`, each defined by its own instruction `v<i>`.
/// `(size, colour, flags, entry parameter)`.
type AllocSpec = (u64, u32, AllocFlags, bool);
/// `(allocation, offset, size, live steps)`.
type ValueSpec = (u32, u64, u64, Option<(u32, u32)>);

fn module(allocs: &[AllocSpec], values: &[ValueSpec], max: u32) -> Module {
    let mut m = Module {
        name: "test_module".into(),
        ..Module::default()
    };
    for (i, &(size, color, flags, param)) in allocs.iter().enumerate() {
        let parameter = param.then_some(EntryParameter {
            number: 0,
            shape: Str::EMPTY,
            shape_index: Str::EMPTY,
        });
        let first = values
            .iter()
            .position(|v| v.0 as usize == i)
            .unwrap_or(values.len()) as u32;
        let count = values.iter().filter(|v| v.0 as usize == i).count() as u32;
        m.allocations.push(Allocation {
            index: i as u32,
            size,
            color,
            page: None,
            parameter,
            output_shape: None,
            flags,
            values: first..first + count,
        });
    }
    for (i, &(allocation, offset, size, live)) in values.iter().enumerate() {
        let name = m.strings.intern(&format!("v{i}"));
        let opcode = m.strings.intern(if allocs[allocation as usize].3 {
            "parameter"
        } else {
            "add"
        });
        m.instructions.push(Instruction {
            name,
            opcode,
            ..Instruction::default()
        });
        m.values.push(Value {
            id: i as u32,
            instruction: i as u32,
            index: Str::EMPTY,
            phi: false,
            color: None,
            allocation,
            offset,
            size,
            shape: Str::EMPTY,
            logical_size: Some(size),
            live: live.map(|(start, end)| LiveRange { start, end }),
            uses_text: Str::EMPTY,
        });
    }
    m.schedule = Some(Schedule {
        max,
        ..Schedule::default()
    });
    m
}

const TEMP: AllocFlags = AllocFlags {
    constant: false,
    thread_local: false,
    maybe_live_out: false,
    preallocated_temp: false,
};

/// Parameter allocation 0 (one value live throughout), temp allocation 1 with three values.
fn small() -> Module {
    module(
        &[(1024, 0, TEMP, true), (4096, 0, TEMP, false)],
        &[
            (0, 0, 1024, Some((0, 10))),
            (1, 0, 2048, Some((1, 4))),
            (1, 2048, 2048, Some((3, 6))),
            (1, 0, 1024, Some((7, 9))),
        ],
        10,
    )
}

/// Filled rectangles of an SVG: `(rect, fill)`.
fn svg_rects(svg: &str) -> Vec<(PxRect, String)> {
    let attr = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        let len = tag[start..].find('"')?;
        Some(tag[start..start + len].to_string())
    };
    svg.split("<rect")
        .skip(1)
        .filter_map(|tag| {
            let tag = &tag[..tag.find("/>")?];
            let num = |name| attr(tag, name)?.parse::<i32>().ok();
            let (x, y, w, h) = (num("x")?, num("y")?, num("width")?, num("height")?);
            let fill = attr(tag, "fill")?;
            (fill != "none").then(|| {
                (
                    PxRect {
                        x0: x,
                        y0: y,
                        x1: x + w,
                        y1: y + h,
                    },
                    fill,
                )
            })
        })
        .collect()
}

/// The texts of an SVG, trimmed.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..t.find("</text>")?];
            Some(body.trim().to_string())
        })
        .collect()
}

fn has_text(svg: &str, text: &str) -> bool {
    svg_texts(svg).iter().any(|t| t == text)
}

fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

fn draw(m: &Module, a: &Analysis, view: &Viewport, size: (u32, u32)) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw_space(&root, m, a, &a.spaces[0], view, &Style::default()).unwrap();
        root.present().unwrap();
    }
    svg
}

fn kind_rects(svg: &str) -> Vec<PxRect> {
    let fills: Vec<String> = ValueKind::ALL.iter().map(|&k| hex(kind_color(k))).collect();
    let fills: Vec<String> = fills
        .iter()
        .map(|f| f.to_lowercase())
        .chain(fills.iter().cloned())
        .collect();
    svg_rects(svg)
        .into_iter()
        .filter(|(_, f)| fills.contains(f))
        .map(|(r, _)| r)
        .collect()
}

#[test]
fn draws_a_rectangle_per_value() {
    let m = small();
    let a = analyze(&m);
    let space = &a.spaces[0];
    let size = (1000, 600);
    let view = Viewport::full(&a, space);
    let svg = draw(&m, &a, &view, size);
    let map = Mapping::new(view, Layout::new(size, Style::default().font_size).diagram);
    let rects = svg_rects(&svg);
    for b in space.blocks(&m) {
        let px = map.block_px(&b).unwrap();
        let kind = value_kind(&m, &m.values[b.value as usize]);
        let inner = PxRect {
            x0: px.x0 + 1,
            y0: px.y0 + 1,
            x1: px.x1 - 1,
            y1: px.y1 - 1,
        };
        let fill = hex(kind_color(kind));
        assert!(
            rects
                .iter()
                .any(|(r, f)| *r == inner && f.eq_ignore_ascii_case(&fill)),
            "no {fill} rect {inner:?} for value {}",
            b.value
        );
        assert!(
            has_text(&svg, &format!("v{}", b.value)),
            "no label for value {}",
            b.value
        );
    }
    for text in [
        "0 default (unknown)",
        "allocation + offset",
        "peak 5,120 bytes (5.0 KiB) @ step 3",
        "alloc 0 param 0",
        "alloc 1 temp",
    ] {
        assert!(has_text(&svg, text), "no {text:?} in {:?}", svg_texts(&svg));
    }
    assert!(has_text(&svg, "parameter") && has_text(&svg, "temporary"));
}

#[test]
fn culling_drops_blocks_out_of_view() {
    let m = small();
    let a = analyze(&m);
    let full = Viewport::full(&a, &a.spaces[0]);
    let all = kind_rects(&draw(&m, &a, &full, (1000, 600)));
    // Steps 7..10, upper half of the temp allocation: value 2 ends at step 7 and value 3
    // sits lower, so no block is in view.
    let view = Viewport {
        x0: 7.0,
        x1: 10.0,
        y0: 1024.0 + 2048.0,
        y1: 5120.0,
    };
    let none = kind_rects(&draw(&m, &a, &view, (1000, 600)));
    assert!(none.is_empty(), "{none:?}");
    // Steps 0..2, bottom: the parameter and value 1 only.
    let view = Viewport {
        x0: 0.0,
        x1: 2.0,
        y0: 0.0,
        y1: 5120.0,
    };
    let svg = draw(&m, &a, &view, (1000, 600));
    assert!(has_text(&svg, "v0") && has_text(&svg, "v1"));
    assert!(!has_text(&svg, "v2") && !has_text(&svg, "v3"));
    assert!(kind_rects(&svg).len() < all.len());
}

#[test]
fn hit_test_finds_a_known_block() {
    let m = small();
    let a = analyze(&m);
    let space = &a.spaces[0];
    let view = Viewport::full(&a, space);
    let rect = Layout::new((1000, 600), Style::default().font_size).diagram;
    let map = Mapping::new(view, rect);
    // Value 2: steps 3..7, bytes 1024+2048 .. 1024+4096 on the space's axis.
    let (x, y) = (map.x_px(5.0) as i32, map.y_px(1024.0 + 3000.0) as i32);
    assert_eq!(hit_test(&m, &a, space, &view, rect, x, y), Some(2));
    // Free space: step 8, bytes 4000.
    let (x, y) = (map.x_px(8.0) as i32, map.y_px(4000.0) as i32);
    assert_eq!(hit_test(&m, &a, space, &view, rect, x, y), None);
    // Outside the plot.
    assert_eq!(hit_test(&m, &a, space, &view, rect, rect.x0 - 1, y), None);
}

/// Many values far smaller than a pixel: a bounded number of rectangles, and each one
/// can still be found by hit-testing where it is drawn.
#[test]
fn tiny_blocks_are_merged() {
    let n = 20_000u32;
    let values: Vec<_> = (0..n)
        .map(|i| (0, u64::from(i % 100) * 64, 64, Some((i, i))))
        .collect();
    let m = module(&[(6400, 0, TEMP, false)], &values, n);
    let a = analyze(&m);
    let space = &a.spaces[0];
    let view = Viewport::full(&a, space);
    let svg = draw(&m, &a, &view, (800, 400));
    let rects = kind_rects(&svg);
    assert!(!rects.is_empty());
    assert!(rects.len() < 2_000, "{} rectangles", rects.len());
    let rect = Layout::new((800, 400), Style::default().font_size).diagram;
    let map = Mapping::new(view, rect);
    let b = space.block(&m, 12_345).unwrap();
    let px = map.block_px(&b).unwrap();
    assert!(hit_test(&m, &a, space, &view, rect, px.x0, px.y0).is_some());
}

#[test]
fn render_svg_is_deterministic_and_stacks_spaces() {
    let mut m = small();
    m.allocations.push(Allocation {
        index: 2,
        size: 256,
        color: 1,
        page: None,
        parameter: None,
        output_shape: None,
        flags: TEMP,
        values: 4..4,
    });
    let a = analyze(&m);
    let one = render_svg(&m, &a, 900);
    assert_eq!(one, render_svg(&m, &a, 900));
    for text in [
        "test_module",
        "0 default (unknown)",
        "1 vmem (unknown)",
        "no values with a live range in this memory space",
    ] {
        assert!(has_text(&one, text), "no {text:?}");
    }
    // A CPU module says what its memory space 0 is.
    m.name = "module_0001.jit_f.cpu_after_optimizations".into();
    let cpu = render_svg(&m, &a, 900);
    assert!(has_text(&cpu, "0 default (host memory)") && !cpu.contains("HBM"));
}

#[test]
fn odd_modules_do_not_panic() {
    let empty = Module::default();
    let a = analyze(&empty);
    assert!(has_text(
        &render_svg(&empty, &a, 0),
        "no memory spaces: the module has no allocations"
    ));

    // No schedule, no live ranges, zero sizes, a huge allocation.
    let mut m = module(
        &[(0, 0, TEMP, false), (1 << 62, 0, TEMP, false)],
        &[
            (0, 0, 0, Some((0, 0))),
            (1, (1 << 62) - 8, 8, Some((1_000_000, 1_000_000))),
            (1, 0, 1 << 61, None),
        ],
        0,
    );
    m.schedule = None;
    let a = analyze(&m);
    let svg = render_svg(&m, &a, 600);
    assert!(svg.starts_with("<svg"));
    let space = &a.spaces[0];
    for view in [
        Viewport {
            x0: f64::NAN,
            x1: 1.0,
            y0: 0.0,
            y1: 1.0,
        },
        Viewport {
            x0: 0.0,
            x1: 1e-300,
            y0: 0.0,
            y1: 1e300,
        },
        Viewport {
            x0: -1e300,
            x1: 1e300,
            y0: -5.0,
            y1: -1.0,
        },
    ] {
        draw(&m, &a, &view, (700, 400));
        draw(&m, &a, &view, (10, 10));
        hit_test(
            &m,
            &a,
            space,
            &view,
            Layout::new((700, 400), Style::default().font_size).diagram,
            300,
            300,
        );
    }
}

/// Draws the marks alone (on an empty SVG) and returns the SVG.
fn draw_marks_only(m: &Module, a: &Analysis, marks: &Marks, cursor: Option<u32>) -> String {
    let space = &a.spaces[0];
    let index = SpaceIndex::new(m, a, space);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 600)).into_drawing_area();
        let view = Viewport::full(a, space);
        draw_marks(&root, &index, &view, &Style::default(), marks).unwrap();
        if let Some(step) = cursor {
            draw_cursor(&root, a, space, &view, &Style::default(), step).unwrap();
        }
        root.present().unwrap();
    }
    svg
}

#[test]
fn marks_outline_the_selected_block_and_matches() {
    let m = small();
    let a = analyze(&m);
    let space = &a.spaces[0];
    let map = Mapping::new(
        Viewport::full(&a, space),
        Layout::new((1000, 600), Style::default().font_size).diagram,
    );
    let b2 = map.block_px(&space.block(&m, 2).unwrap()).unwrap();
    let style = Style::default();
    // Selected: a 2-pixel frame in the text colour just outside the block (its lower
    // side here: the block touches the top of the plot, where the frame is clipped).
    let svg = draw_marks_only(
        &m,
        &a,
        &Marks {
            selected: Some(2),
            ..Marks::default()
        },
        None,
    );
    let text = hex(style.text);
    let top = PxRect {
        x0: b2.x0 - 2,
        y0: b2.y1,
        x1: b2.x1 + 2,
        y1: b2.y1 + 2,
    };
    assert!(
        svg_rects(&svg)
            .iter()
            .any(|(r, f)| *r == top && f.eq_ignore_ascii_case(&text)),
        "no selection frame {top:?} in {:?}",
        svg_rects(&svg)
    );
    // A search match: the block is drawn again in its colour, the diagram dimmed.
    let svg = draw_marks_only(
        &m,
        &a,
        &Marks {
            matches: &[2],
            ..Marks::default()
        },
        None,
    );
    let fill = hex(kind_color(value_kind(&m, &m.values[2])));
    assert!(svg_rects(&svg)
        .iter()
        .any(|(_, f)| f.eq_ignore_ascii_case(&fill)));
    // Nothing to mark: nothing drawn.
    assert!(svg_rects(&draw_marks_only(&m, &a, &Marks::default(), None)).is_empty());
}

#[test]
fn cursor_shows_the_step_and_occupied_bytes() {
    let m = small();
    let a = analyze(&m);
    let svg = draw_marks_only(&m, &a, &Marks::default(), Some(3));
    assert!(
        has_text(&svg, "step 3 · 5.0 KiB occupied"),
        "{:?}",
        svg_texts(&svg)
    );
    // Out of the schedule: only the step.
    let svg = draw_marks_only(&m, &a, &Marks::default(), Some(10_000));
    assert!(svg_texts(&svg).is_empty());
}

#[test]
fn index_agrees_with_the_space() {
    let m = small();
    let a = analyze(&m);
    let space = &a.spaces[0];
    let index = SpaceIndex::new(&m, &a, space);
    assert_eq!(index.len(), space.blocks(&m).count());
    for b in space.blocks(&m) {
        assert_eq!(index.block(b.value), Some(b));
    }
    assert_eq!(index.find_by_name(&m, "v2"), Some(2));
    assert_eq!(index.find_by_name(&m, "nope"), None);
    assert_eq!(
        index.of_instruction(1).map(|b| b.value).collect::<Vec<_>>(),
        vec![1]
    );
}

fn draw_raster(m: &Module, a: &Analysis, index: &SpaceIndex, view: &Viewport) -> Raster {
    let space = a.space(index.color()).unwrap();
    let mut raster = Raster::new(900, 420);
    {
        let area = (&mut raster).into_drawing_area();
        draw_space_indexed(&area, m, a, space, index, view, &Style::default()).unwrap();
    }
    raster
}

/// A module like a training step: 30,000 values over 8,000 steps in a few allocations,
/// mostly short-lived, some living long, of sizes from bytes to a large part of the space.
fn busy_module() -> Module {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n.max(1)
    };
    let steps = 8_000u32;
    let allocs: Vec<AllocSpec> = (0..6).map(|i| (1u64 << (20 + i), 0, TEMP, false)).collect();
    let values: Vec<ValueSpec> = (0..30_000u32)
        .map(|i| {
            let a = i % 6;
            let cap = 1u64 << (20 + a);
            let size = 1 + next(if i % 50 == 0 { cap / 4 } else { 4096 });
            let offset = next(cap - size);
            let start = next(u64::from(steps) - 1) as u32;
            let len = if i % 20 == 0 { next(4000) } else { next(30) } as u32;
            (a, offset, size, Some((start, (start + len).min(steps - 1))))
        })
        .collect();
    module(&allocs, &values, steps)
}

mod axes;
mod levels;
mod thin;
