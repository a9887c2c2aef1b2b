//! `bufscope render --capacity`: the SVG parses, the capacity line is at the row of its bytes
//! on each curve, the part of the curve over it is shaded exactly when the peak exceeds it,
//! and the verdict is written at the peak. The figures of TPU dump 000 (peaks of 65,536,
//! 41,472 and 4 bytes in colours 0, 1 and 2) are those of `bufscope summary --json`,
//! checked by hand in `tests/answers.rs`.

use std::process::{Command, Output};

use bufscope::render::{panel_height, Layout, Style};

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
        let out = render(&["--capacity", cap_text]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let svg = String::from_utf8(out.stdout).unwrap();
        let (rects, texts) = read(&svg, &line_color);
        let found: Vec<i32> = lines(&rects).iter().map(|r| r.1).collect();
        let want: Vec<i32> = (0..3).map(|i| row_of(i, cap, cap)).collect();
        assert_eq!(found, want, "capacity {cap_text}: lines at rows");
        let label = format!("capacity · {}", bufscope::units::human_bytes(cap));
        assert!(texts.contains(&label), "no {label:?} in {texts:?}");
        let (shaded, _) = read(&svg, &shade);
        for (i, &peak) in PEAKS.iter().enumerate() {
            let n = in_strip(&shaded, i);
            assert_eq!(
                n > 0,
                peak > cap,
                "capacity {cap_text}, panel {i}: {n} shaded"
            );
        }
    }
}

#[test]
fn the_verdict_is_written_at_each_peak() {
    // 32 KiB: colour 0 (64 KiB) exceeds by 32 KiB, colour 1 (40.5 KiB) by 8.5 KiB, colour 2
    // (4 B) leaves 32 KiB − 4 B of headroom (32,764 B, 32.0 KiB).
    let out = render(&["--capacity", "32KiB"]);
    let svg = String::from_utf8(out.stdout).unwrap();
    let (_, texts) = read(&svg, "");
    for want in [
        "exceeds by 32.0 KiB",
        "exceeds by 8.5 KiB",
        "32.0 KiB of headroom",
    ] {
        assert!(texts.iter().any(|t| t == want), "no {want:?} in {texts:?}");
    }
    // A device is named on its line.
    let out = render(&["--capacity", "TPU v5e"]);
    let svg = String::from_utf8(out.stdout).unwrap();
    let (_, texts) = read(&svg, "");
    assert!(texts.iter().any(|t| t == "TPU v5e · 16.0 GiB"), "{texts:?}");
    assert!(
        texts.iter().any(|t| t == "16.0 GiB of headroom"),
        "{texts:?}"
    );
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
