//! The answers drawn: `bufscope render --capacity` (the SVG parses, the capacity line is at
//! the row of its bytes on each curve, the part of the curve over it is shaded exactly when
//! the peak exceeds it, the verdict is written at the peak), and the selected value's idle
//! stretch and uses among the marks; `render --png` is the same drawing without text. The
//! figures of TPU dump 000 (peaks of 65,536, 41,472 and 4 bytes in colours 0, 1 and 2) are
//! those of `bufscope summary --json`, checked by hand in `tests/answers.rs`.

use std::process::{Command, Output};

use bufscope::analysis::analyze;
use bufscope::answers::idle::{value_uses, ScheduleIndex};
use bufscope::render::{
    draw_marks, panel_height, Layout, Mapping, Marks, SpaceIndex, Style, Viewport,
};
use plotters::prelude::{IntoDrawingArea, SVGBackend};

const TPU_000: &str = "tests/fixtures/tpu/000_0cb419b3147a3cb6.txt";
const WIDTH: u32 = 1200;
/// The header line of the SVG above the first panel.
const HEADER: i32 = 34;
/// Occupied-bytes peaks of TPU 000 per panel (colours 0, 1, 2).
const PEAKS: [u64; 3] = [65_536, 41_472, 4];
const KIB: u64 = 1024;

fn render(extra: &[&str]) -> Output {
    let mut args = vec!["render", TPU_000, "--svg", "-", "--width", "1200"];
    args.extend_from_slice(extra);
    Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .args(&args)
        .output()
        .expect("run bufscope")
}

fn hex(c: plotters::style::RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// A filled rectangle of the SVG: `(x, y, width, height)`.
type Rect = (i32, i32, i32, i32);

/// The SVG, parsed: its filled rectangles of colour `fill` and all its texts.
fn read(svg: &str, fill: &str) -> (Vec<Rect>, Vec<String>) {
    let doc = roxmltree::Document::parse(svg).expect("the SVG parses as XML");
    let num = |n: &roxmltree::Node, a: &str| n.attribute(a).and_then(|v| v.parse::<i32>().ok());
    let rects = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(fill))
        .filter_map(|n| {
            Some((
                num(&n, "x")?,
                num(&n, "y")?,
                num(&n, "width")?,
                num(&n, "height")?,
            ))
        })
        .collect();
    let texts = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect();
    (rects, texts)
}

/// The curve's strip of panel `i` in SVG pixels: `(x0, x1, y0, y1)`.
fn curve_strip(i: usize) -> (i32, i32, i32, i32) {
    let panel = panel_height(f64::from(WIDTH)).round() as i32;
    let c = Layout::new((WIDTH, panel as u32), Style::default().font_size).curve;
    let top = HEADER + panel * i as i32;
    (c.x0, c.x1, top + c.y0, top + c.y1)
}

/// The row of `bytes` on the curve of panel `i`, with the capacity `cap` drawn: bytes 0 at
/// the strip's bottom, a third more than the higher of peak and capacity at its top.
fn row_of(i: usize, bytes: u64, cap: u64) -> i32 {
    let (_, _, y0, y1) = curve_strip(i);
    let top = PEAKS[i].max(cap) as f64 * 1.35;
    (f64::from(y1) - bytes as f64 * f64::from(y1 - y0) / top).round() as i32
}

/// The capacity lines: one per panel, across its curve's strip, in panel order.
fn lines(rects: &[Rect]) -> Vec<Rect> {
    let (x0, x1, _, _) = curve_strip(0);
    rects
        .iter()
        .copied()
        .filter(|r| r.0 == x0 && r.2 == x1 - x0 && r.3 == 1)
        .collect()
}

/// Shaded rectangles inside the curve strip of panel `i`.
fn in_strip(rects: &[Rect], i: usize) -> usize {
    let (_, _, y0, y1) = curve_strip(i);
    rects
        .iter()
        .filter(|r| r.1 >= y0 && r.1 + r.3 <= y1)
        .count()
}

#[test]
fn the_capacity_line_is_at_its_bytes_and_what_exceeds_it_is_shaded() {
    let style = Style::default();
    let (line_color, shade) = (hex(style.capacity_line), hex(style.over_capacity));
    for (cap_text, cap) in [("32KiB", 32 * KIB), ("1MiB", 1024 * KIB), ("40000", 40_000)] {
        // A capacity is drawn on the space it is set on (0 unless named), and only there.
        for (i, &peak) in PEAKS.iter().enumerate() {
            let space = i.to_string();
            let out = render(&["--capacity", cap_text, "--capacity-space", &space]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let svg = String::from_utf8(out.stdout).unwrap();
            let (rects, texts) = read(&svg, &line_color);
            let found: Vec<i32> = lines(&rects).iter().map(|r| r.1).collect();
            assert_eq!(
                found,
                [row_of(i, cap, cap)],
                "capacity {cap_text} on {i}: lines"
            );
            // The size as typed.
            let label = format!("capacity · {cap_text}");
            assert!(texts.contains(&label), "no {label:?} in {texts:?}");
            let (shaded, _) = read(&svg, &shade);
            for j in 0..PEAKS.len() {
                let n = in_strip(&shaded, j);
                assert_eq!(
                    n > 0,
                    j == i && peak > cap,
                    "capacity {cap_text} on {i}, panel {j}: {n} shaded"
                );
            }
        }
    }
}

/// A capacity one byte under colour 0's peak (65,535 of 65,536: far under a pixel) still
/// shades that peak: a mark at least 1 px high whose bottom is the capacity line; the other
/// panels (peaks of 41,472 and 4 bytes) fit and have none.
#[test]
fn an_excess_under_a_pixel_is_still_marked() {
    let style = Style::default();
    let out = render(&["--capacity", "65535"]);
    assert!(out.status.success());
    let svg = String::from_utf8(out.stdout).unwrap();
    let (shaded, _) = read(&svg, &hex(style.over_capacity));
    let line = row_of(0, 65_535, 65_535);
    assert_eq!(
        row_of(0, 65_536, 65_535),
        line,
        "the excess is under a pixel"
    );
    let (_, _, y0, y1) = curve_strip(0);
    let marks: Vec<Rect> = shaded
        .iter()
        .copied()
        .filter(|r| r.1 >= y0 && r.1 + r.3 <= y1)
        .collect();
    assert!(!marks.is_empty(), "no mark over the line in {shaded:?}");
    assert!(
        marks
            .iter()
            .all(|r| r.3 >= 1 && r.1 + r.3 == line && r.2 >= 1),
        "marks {marks:?}, line at row {line}"
    );
    assert_eq!((in_strip(&shaded, 1), in_strip(&shaded, 2)), (0, 0));
}

#[test]
fn the_verdict_is_written_at_each_peak() {
    // 32 KiB: colour 0 (64 KiB) exceeds by 32 KiB, colour 1 (40.5 KiB) by 8.5 KiB, colour 2
    // (4 B) leaves 32 KiB − 4 B of headroom (32,764 B, 32.0 KiB); each only when the
    // capacity is set on that space.
    let wants = [
        "exceeds by 32.0 KiB",
        "exceeds by 8.5 KiB",
        "32.0 KiB of headroom",
    ];
    for i in 0..wants.len() {
        let space = i.to_string();
        let out = render(&["--capacity", "32KiB", "--capacity-space", &space]);
        let svg = String::from_utf8(out.stdout).unwrap();
        let (_, texts) = read(&svg, "");
        for (j, other) in wants.iter().enumerate() {
            let found = texts.iter().any(|t| t == other);
            assert_eq!(
                found,
                i == j,
                "{other:?} with the capacity on {i}: {texts:?}"
            );
        }
    }
    // A device is named on its line.
    let out = render(&["--capacity", "TPU v5e"]);
    let svg = String::from_utf8(out.stdout).unwrap();
    let (_, texts) = read(&svg, "");
    // A TPU's name is the HBM XLA can use: 15.75 GiB, shown to the hundredth.
    assert!(
        texts.iter().any(|t| t == "TPU v5e · 15.75 GiB"),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.ends_with(" GiB of headroom")),
        "{texts:?}"
    );
    let out = render(&["--capacity", "v5e published"]);
    let (_, texts) = read(&String::from_utf8(out.stdout).unwrap(), "");
    assert!(texts.iter().any(|t| t == "TPU v5e · 16 GiB"), "{texts:?}");
}

#[test]
fn without_a_capacity_nothing_is_drawn_for_one() {
    let out = render(&[]);
    assert!(out.status.success());
    let svg = String::from_utf8(out.stdout).unwrap();
    let style = Style::default();
    assert!(lines(&read(&svg, &hex(style.capacity_line)).0).is_empty());
    assert!(read(&svg, &hex(style.over_capacity)).0.is_empty());
}

#[test]
fn a_capacity_it_cannot_read_exits_2() {
    for bad in ["a100", "12 parsecs", "-3GB"] {
        let out = render(&[&format!("--capacity={bad}")]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--capacity"), "{bad}: {err}");
        assert!(out.stdout.is_empty(), "{bad}: wrote an SVG");
    }
}

/// The marks of `value` of TPU 000 selected, with its idle stretches and uses, drawn alone
/// on a 1000 × 600 SVG; and the pixel mapping of its diagram.
fn idle_marks(name: &str, with_idle: bool) -> (String, Mapping) {
    let bytes = std::fs::read(TPU_000).expect("the TPU 000 fixture");
    let m = bufscope::load_files(vec![("000.txt", &bytes[..])])
        .modules
        .remove(0);
    let a = analyze(&m);
    let value = (0..m.values.len() as u32)
        .find(|&i| m.value_name(&m.values[i as usize]) == name)
        .unwrap();
    let space = a.space(1).unwrap();
    let u = value_uses(&m, &ScheduleIndex::new(&m), value).unwrap();
    let steps: Vec<u32> = u.uses.iter().filter_map(|u| u.step).collect();
    let index = SpaceIndex::new(&m, &a, space);
    let view = Viewport::full(&a, space);
    let style = Style::default();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 600)).into_drawing_area();
        let marks = Marks {
            selected: Some(value),
            idle: if with_idle { &u.stretches } else { &[] },
            uses: if with_idle { &steps } else { &[] },
            ..Marks::default()
        };
        draw_marks(&root, &index, &view, &style, &marks).unwrap();
        root.present().unwrap();
    }
    let map = Mapping::new(view, Layout::new((1000, 600), style.font_size).diagram);
    (svg, map)
}

/// The x of each point of each `<polyline>` (the hatch lines).
fn polyline_xs(svg: &str) -> Vec<Vec<i32>> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .map(|n| {
            n.attribute("points")
                .unwrap_or("")
                .split_whitespace()
                .filter_map(|p| p.split(',').next()?.parse().ok())
                .collect()
        })
        .collect()
}

#[test]
fn the_selected_values_idle_stretch_is_hatched_and_its_uses_ticked() {
    // copy-start.1{0} (colour 1): live 6-13, used at steps 12 (copy-done.1) and 13 (fusion),
    // so idle at steps 7-11 (tests/answers.rs, by hand).
    let (svg, map) = idle_marks("copy-start.1{0}", true);
    let col = |step: f64| map.x_px(step).round() as i32;
    let (idle_x0, idle_x1) = (col(7.0), col(12.0));
    let lines = polyline_xs(&svg);
    assert!(lines.len() > 5, "{} hatch lines", lines.len());
    for xs in &lines {
        assert!(
            xs.iter().all(|&x| idle_x0 <= x && x <= idle_x1),
            "a hatch line {xs:?} outside steps 7-11 ({idle_x0}..{idle_x1})"
        );
    }
    // The faded part starts at step 7 and ends before step 12.
    let (faded, _) = read(&svg, "#FFFFFF");
    assert!(
        faded.iter().any(|r| r.0 == idle_x0 && r.0 + r.2 == idle_x1),
        "no faded stretch {idle_x0}..{idle_x1} in {faded:?}"
    );
    // A tick two pixels wide at the middle of steps 12 and 13.
    let (ticks, _) = read(&svg, &hex(Style::default().text));
    for step in [12.5, 13.5] {
        let x = map.x_px(step).round() as i32 - 1;
        assert!(
            ticks.iter().any(|r| r.0 == x && r.2 == 2),
            "no tick at step {step} (x {x}) in {ticks:?}"
        );
    }
    // Selected without its stretches: no hatching.
    let (svg, _) = idle_marks("copy-start.1{0}", false);
    assert!(polyline_xs(&svg).is_empty());
}

/// A capacity drawn on a panel of any height, down to a few pixels (the page's diagrams
/// share the window's height), never panics: every capacity of TPU 000's spaces — under,
/// at and over each peak — on every height from 1 to 260 pixels.
#[test]
fn a_capacity_on_a_panel_of_any_height_draws_without_panicking() {
    let bytes = std::fs::read(TPU_000).expect("the TPU 000 fixture");
    let m = bufscope::load_files(vec![("000.txt", &bytes[..])])
        .modules
        .remove(0);
    let a = analyze(&m);
    for space in &a.spaces {
        for cap in [
            1,
            space.peak_bytes / 2,
            space.peak_bytes,
            space.peak_bytes * 2,
        ] {
            let style = Style {
                capacity: Some(
                    bufscope::answers::capacity::parse_capacity(&cap.to_string()).unwrap(),
                ),
                ..Style::default()
            };
            for height in 1..=260u32 {
                let mut raster = bufscope::render::Raster::new(640, height);
                let area = (&mut raster).into_drawing_area();
                let drawn = bufscope::render::draw_space(
                    &area,
                    &m,
                    &a,
                    space,
                    &Viewport::default(),
                    &style,
                );
                assert!(drawn.is_ok(), "colour {}, height {height}", space.color);
            }
        }
    }
}

/// A PNG's width, height and RGB rows (as `Raster::png` writes them: 8-bit RGB, each row
/// with filter type 0).
fn decode_png(png: &[u8]) -> (u32, u32, Vec<u8>) {
    use std::io::Read;
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let (mut at, mut ihdr, mut idat) = (8, Vec::new(), Vec::new());
    while at + 12 <= png.len() {
        let n = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let (kind, body) = (&png[at + 4..at + 8], &png[at + 8..at + 8 + n]);
        match kind {
            b"IHDR" => ihdr = body.to_vec(),
            b"IDAT" => idat.extend_from_slice(body),
            _ => {}
        }
        at += 12 + n;
    }
    assert_eq!(&ihdr[8..], [8, 2, 0, 0, 0], "not 8-bit RGB");
    let width = u32::from_be_bytes(ihdr[..4].try_into().unwrap());
    let height = u32::from_be_bytes(ihdr[4..8].try_into().unwrap());
    let mut rows = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut rows)
        .unwrap();
    assert_eq!(rows.len(), (height * (width * 3 + 1)) as usize);
    (width, height, rows)
}

/// `bufscope render TPU_000 --png - --width 1200` with `extra`, decoded.
fn render_png(extra: &[&str]) -> (u32, u32, Vec<u8>) {
    let mut args = vec!["render", TPU_000, "--png", "-", "--width", "1200"];
    args.extend_from_slice(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .args(&args)
        .output()
        .expect("run bufscope");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    decode_png(&out.stdout)
}

/// `render --png` draws what `--svg` draws, without the text: the same size; the SVG's
/// capacity line is at the same pixels in the PNG (but where the curve crosses it), and its excess (shaded at 70 % opacity)
/// is that shade over what the PNG without a capacity has there (32 KiB is under the
/// 64 KiB peak, so the scale is the same).
#[test]
fn the_png_is_the_svgs_drawing() {
    let style = Style::default();
    let (width, height, rows) = render_png(&["--capacity", "32KiB"]);
    let (_, _, plain) = render_png(&[]);
    let svg = String::from_utf8(render(&["--capacity", "32KiB"]).stdout).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let size = |a| {
        doc.root_element()
            .attribute(a)
            .and_then(|v| v.parse::<u32>().ok())
    };
    assert_eq!((Some(width), Some(height)), (size("width"), size("height")));
    let pixel = |rows: &[u8], x: i32, y: i32| {
        let at = (y as usize) * (width as usize * 3 + 1) + 1 + x as usize * 3;
        [rows[at], rows[at + 1], rows[at + 2]]
    };
    let on_panel_0 = |color| -> Vec<Rect> {
        let (rects, _) = read(&svg, &hex(color));
        rects
            .into_iter()
            .filter(|r| in_strip(&[*r], 0) == 1)
            .collect()
    };
    let line = style.capacity_line;
    let lines = on_panel_0(line);
    assert_eq!(lines.len(), 1, "{lines:?}");
    // Along the line, all but where the curve's outline crosses it.
    let (r, color) = (lines[0], [line.0, line.1, line.2]);
    let on = (r.0..r.0 + r.2)
        .filter(|&x| pixel(&rows, x, r.1) == color)
        .count();
    assert!(
        on * 10 >= r.2 as usize * 9,
        "the capacity line {r:?}: {on} pixels of it in the PNG"
    );
    let shade = style.over_capacity;
    let excess = on_panel_0(shade);
    assert!(!excess.is_empty(), "no excess shaded on panel 0 of the SVG");
    for r in excess {
        let (x, y) = (r.0 + r.2 / 2, r.1 + r.3 / 2);
        let under = pixel(&plain, x, y);
        let blend = |s: u8, u: u8| 0.7 * f64::from(s) + 0.3 * f64::from(u);
        let want = [
            blend(shade.0, under[0]),
            blend(shade.1, under[1]),
            blend(shade.2, under[2]),
        ];
        let got = pixel(&rows, x, y);
        assert_ne!(got, under, "excess {r:?}: nothing shaded at ({x}, {y})");
        for c in 0..3 {
            assert!(
                (f64::from(got[c]) - want[c]).abs() <= 1.0,
                "excess {r:?} at ({x}, {y}): {got:?}, not {want:?}"
            );
        }
    }
}
