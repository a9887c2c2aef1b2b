//! The whole module as one SVG ([`render_svg`]): a header line with the module's name and
//! figures, then one panel per memory space, stacked. Also the height of a memory-space
//! panel for a given width ([`panel_height`]), which the page's canvases use too, and one
//! memory space at a zoom window as an SVG of its own ([`render_space_svg`], the page's
//! export of a diagram). [`render_png_styled`]: the module's drawing as a PNG, without text.

use super::geometry::{PxRect, Viewport};
use super::raster::Raster;
use super::svg::Svg;
use super::{draw_space, DrawResult, Painter, Style};
use crate::analysis::Analysis;
use crate::model::Module;
use crate::units::{count, human_bytes};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// Height of the header line of [`render_svg`], in pixels.
const HEADER_PX: u32 = 34;

/// The whole module as one SVG, `width` pixels wide: a header, then one panel per memory
/// space, stacked, each showing its whole space. Deterministic.
pub fn render_svg(module: &Module, analysis: &Analysis, width: u32) -> String {
    render_svg_styled(module, analysis, width, &Style::default())
}

/// [`render_svg`] in `style` (its colours, and the capacity line it carries, drawn on
/// every memory space's curve).
pub fn render_svg_styled(
    module: &Module,
    analysis: &Analysis,
    width: u32,
    style: &Style,
) -> String {
    let (width, height, panel) = module_size(analysis, width);
    let mut svg = String::new();
    {
        let root = Svg::with_string(&mut svg, (width, height)).into_drawing_area();
        // Writing into a String cannot fail; a failure would only truncate the picture.
        let _ = draw_module(&root, module, analysis, style, panel);
        let _ = root.present();
    }
    svg
}

/// [`render_svg_styled`] as a PNG: the same drawing without its text (the raster has no
/// fonts), for a static thumbnail beside a table that gives the figures.
pub fn render_png_styled(
    module: &Module,
    analysis: &Analysis,
    width: u32,
    style: &Style,
) -> Vec<u8> {
    let (width, height, panel) = module_size(analysis, width);
    let mut raster = Raster::new(width, height.min(16_384));
    {
        let root = (&mut raster).into_drawing_area();
        // Drawing into memory cannot fail.
        let _ = draw_module(&root, module, analysis, style, panel);
        let _ = root.present();
    }
    raster.png()
}

/// The drawing of a module `width` pixels wide (clamped): its width, height and the height
/// of each memory space's panel.
fn module_size(analysis: &Analysis, width: u32) -> (u32, u32, u32) {
    let width = width.clamp(320, 16_384);
    let panel = panel_height(f64::from(width)).round() as u32;
    let panels = u32::try_from(analysis.spaces.len())
        .unwrap_or(u32::MAX)
        .max(1);
    (
        width,
        HEADER_PX.saturating_add(panel.saturating_mul(panels)),
        panel,
    )
}

/// One memory space (colour `color`) as an SVG of `width` × `height` pixels, showing `view`
/// (the whole space when `view` is invalid), drawn by the same code as each panel of
/// [`render_svg`]. Deterministic; a module without that space gives its message.
pub fn render_space_svg(
    module: &Module,
    analysis: &Analysis,
    color: u32,
    view: &Viewport,
    (width, height): (u32, u32),
    style: &Style,
) -> String {
    let size = (width.clamp(320, 16_384), height.clamp(200, 16_384));
    let mut svg = String::new();
    {
        let root = Svg::with_string(&mut svg, size).into_drawing_area();
        let _ = match analysis.space(color) {
            Some(space) => draw_space(&root, module, analysis, space, view, style),
            None => root.fill(&style.background).and_then(|()| {
                Painter { area: &root, style }.text(
                    "no such memory space",
                    (8, 20),
                    1.0,
                    style.muted,
                    (HPos::Left, VPos::Center),
                )
            }),
        };
        let _ = root.present();
    }
    svg
}

/// Height of one memory-space panel `width` pixels wide: half the width, within 380 to 760
/// pixels (CSS pixels on the page).
pub fn panel_height(width: f64) -> f64 {
    (width * 0.5).clamp(380.0, 760.0)
}

fn draw_module<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    module: &Module,
    analysis: &Analysis,
    style: &Style,
    panel: u32,
) -> DrawResult<DB> {
    root.fill(&style.background)?;
    let (head, body) = root.split_vertically(HEADER_PX);
    header(&Painter { area: &head, style }, module)?;
    if analysis.spaces.is_empty() {
        let b = Painter { area: &body, style };
        return b.text(
            "no memory spaces: the module has no allocations",
            (8, 20),
            1.0,
            style.muted,
            (HPos::Left, VPos::Center),
        );
    }
    let mut rest = body;
    for (i, space) in analysis.spaces.iter().enumerate() {
        let (this, below) = rest.split_vertically(panel);
        let view = Viewport::full(analysis, space);
        draw_space(&this, module, analysis, space, &view, style)?;
        if i > 0 {
            // A line between panels.
            let w = this.dim_in_pixel().0 as i32;
            let line = PxRect {
                x0: 0,
                y0: 0,
                x1: w,
                y1: 1,
            };
            Painter { area: &this, style }.fill(line, style.boundary)?;
        }
        rest = below;
    }
    Ok(())
}

/// The header line: the module's name in bold, its figures after it, a line under it.
fn header<DB: DrawingBackend>(p: &Painter<'_, DB>, module: &Module) -> DrawResult<DB> {
    let style = p.style;
    let name = if module.name.is_empty() {
        "(unnamed module)"
    } else {
        &module.name
    };
    let y = HEADER_PX as i32 / 2;
    p.bold(name, (8, y), 1.25, style.text, (HPos::Left, VPos::Center))?;
    let mut facts = format!(
        "{} · {} · {} allocated",
        count(module.allocations.len(), "allocation"),
        count(module.values.len(), "value"),
        human_bytes(module.total_bytes()),
    );
    match &module.schedule {
        Some(s) => facts.push_str(&format!(" · schedule of {}", count(s.max as usize, "step"))),
        None => facts.push_str(" · no schedule"),
    }
    // Bold text runs wider than the estimate of the regular face.
    let x = 8 + p.text_width(name, 1.25) * 6 / 5 + 16;
    p.text(&facts, (x, y), 1.0, style.muted, (HPos::Left, VPos::Center))?;
    let line = PxRect {
        x0: 0,
        y0: HEADER_PX as i32 - 1,
        x1: p.area.dim_in_pixel().0 as i32,
        y1: HEADER_PX as i32,
    };
    p.fill(line, style.boundary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;
    use crate::model::memory_space_label;

    #[test]
    fn one_space_at_a_window_is_an_svg_of_its_own() {
        let text = include_str!("../../tests/fixtures/tpu/000_0cb419b3147a3cb6.txt");
        let load = crate::load_files([("000.txt", text.as_bytes())]);
        let m = &load.modules[0];
        let a = analyze(m);
        let space = &a.spaces[0];
        let full = Viewport::full(&a, space);
        let style = Style::default();
        let whole = render_space_svg(m, &a, space.color, &full, (900, 480), &style);
        let doc = roxmltree::Document::parse(&whole).expect("the SVG parses");
        let root = doc.root_element();
        assert_eq!(root.attribute("width"), Some("900"));
        assert_eq!(root.attribute("height"), Some("480"));
        let title = memory_space_label(space.color, m.backend());
        assert!(doc
            .descendants()
            .any(|n| n.text().map(str::trim) == Some(title.as_str())));
        // The invalid view is the whole space; a zoom window draws something else.
        let invalid = Viewport {
            x0: 1.0,
            x1: 0.0,
            ..full
        };
        assert_eq!(
            whole,
            render_space_svg(m, &a, space.color, &invalid, (900, 480), &style)
        );
        let half = Viewport {
            x1: (full.x0 + full.x1) / 2.0,
            ..full
        };
        let zoomed = render_space_svg(m, &a, space.color, &half, (900, 480), &style);
        assert_ne!(whole, zoomed);
        roxmltree::Document::parse(&zoomed).expect("the zoomed SVG parses");
        let none = render_space_svg(m, &a, 99, &full, (900, 480), &style);
        assert!(none.contains("no such memory space"));
    }

    #[test]
    fn panels_are_half_as_high_as_wide_within_bounds() {
        assert_eq!(panel_height(1200.0), 600.0);
        assert_eq!(panel_height(1001.0), 500.5);
        assert_eq!(panel_height(320.0), 380.0);
        assert_eq!(panel_height(4000.0), 760.0);
    }
}
