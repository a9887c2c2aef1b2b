//! One `<canvas>` per memory space, drawn by [`bufscope::render::draw_space`] through
//! plotters-canvas. The canvas gets as many pixels as it has CSS pixels × device pixel
//! ratio, so text and lines are sharp; it is drawn once, when mounted (zoom, pan and
//! redrawing on resize come with the interactive views).

use std::sync::Arc;

use bufscope::render::{draw_space, Style, Viewport};
use leptos::html;
use leptos::prelude::*;
use plotters::prelude::{IntoDrawingArea, RGBColor};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use super::state::Shown;

#[component]
pub fn SpaceCanvas(shown: Arc<Shown>, color: u32) -> impl IntoView {
    let canvas_ref = NodeRef::<html::Canvas>::new();
    Effect::new(move |_| {
        if let Some(canvas) = canvas_ref.get() {
            if let Err(e) = draw(&canvas, &shown, color) {
                leptos::logging::warn!("bufscope: could not draw memory space {color}: {e}");
            }
        }
    });
    view! {
        <canvas node_ref=canvas_ref class="space-canvas" data-color=color.to_string()
            aria-label=format!("Block diagram of memory space {color}")></canvas>
    }
}

fn draw(canvas: &HtmlCanvasElement, shown: &Shown, color: u32) -> Result<(), String> {
    let space = shown.analysis.space(color).ok_or("no such memory space")?;
    let dpr = web_sys::window()
        .map_or(1.0, |w| w.device_pixel_ratio())
        .clamp(1.0, 4.0);
    let css_width = f64::from(canvas.client_width().max(320));
    let css_height = (css_width * 0.5).clamp(380.0, 760.0);
    canvas.set_width((css_width * dpr).round() as u32);
    canvas.set_height((css_height * dpr).round() as u32);
    let backend = MeasuringCanvas::new(canvas).ok_or("no 2D context")?;
    let area = backend.into_drawing_area();
    let style = Style {
        font_size: Style::default().font_size * dpr,
        ..page_style()
    };
    let view = Viewport::full(&shown.analysis, space);
    draw_space(&area, &shown.module, &shown.analysis, space, &view, &style)
        .map_err(|e| e.to_string())?;
    area.present().map_err(|e| e.to_string())
}

/// The drawing colours: render's own on a light page, the page's on a dark one.
fn page_style() -> Style {
    let dark = web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches());
    if !dark {
        return Style::default();
    }
    Style {
        background: RGBColor(0x1f, 0x22, 0x26),
        text: RGBColor(0xe6, 0xe7, 0xe8),
        muted: RGBColor(0x9a, 0xa1, 0xa9),
        grid: RGBColor(0x2b, 0x2f, 0x34),
        frame: RGBColor(0x4a, 0x50, 0x58),
        band: RGBColor(0x26, 0x2a, 0x2f),
        boundary: RGBColor(0x3a, 0x40, 0x47),
        curve: RGBColor(0x7f, 0xa7, 0xd6),
        peak: RGBColor(0xff, 0x6b, 0x6b),
        ..Style::default()
    }
}

/// plotters-canvas, except that text is measured by the canvas (`measureText`). plotters
/// itself measures text in the browser by adding a `<span style="…">` to the page, which
/// the page's Content-Security-Policy (no inline styles) forbids, and which costs a layout
/// per label.
struct MeasuringCanvas {
    inner: CanvasBackend,
    context: CanvasRenderingContext2d,
}

type Error = DrawingErrorKind<<CanvasBackend as DrawingBackend>::ErrorType>;

impl MeasuringCanvas {
    fn new(canvas: &HtmlCanvasElement) -> Option<Self> {
        let context = canvas.get_context("2d").ok()??.dyn_into().ok()?;
        let inner = CanvasBackend::with_canvas_object(canvas.clone())?;
        Some(MeasuringCanvas { inner, context })
    }
}

impl DrawingBackend for MeasuringCanvas {
    type ErrorType = <CanvasBackend as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), Error> {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), Error> {
        self.inner.present()
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Error> {
        self.inner.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Error> {
        self.inner.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Error> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Error> {
        self.inner.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Error> {
        self.inner.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Error> {
        self.inner.fill_polygon(vert, style)
    }
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), Error> {
        self.inner.draw_text(text, style, pos)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), Error> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), Error> {
        // The same font string plotters-canvas draws with.
        self.context.set_font(&format!(
            "{} {}px {}",
            style.style().as_str(),
            style.size(),
            style.family().as_str()
        ));
        let width = self
            .context
            .measure_text(text)
            .map(|m| m.width())
            .unwrap_or(0.0);
        Ok((
            width.ceil().max(0.0) as u32,
            style.size().ceil().max(0.0) as u32,
        ))
    }
}
