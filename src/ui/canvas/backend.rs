//! The plotters backend of the page: plotters-canvas's `CanvasBackend`, with two changes to
//! text, everything else passed through.
//!
//! * Text is sized as plotters' SVG backend sizes it (the size given / 1.24), so that the
//!   page's diagrams look like the CLI's SVGs.
//! * Text is measured with the canvas (`measureText`). plotters' own measure on wasm adds a
//!   styled `<span>` to the page, which the page's Content-Security-Policy forbids (and which
//!   costs a layout per label). Widths are kept, by font and text, for the frames after.

use std::cell::RefCell;
use std::collections::HashMap;

use plotters_backend::text_anchor::Pos;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    FontFamily, FontStyle, FontTransform,
};
use plotters_canvas::CanvasBackend;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// plotters' SVG backend writes `font-size` as the size it is given / 1.24.
const SVG_FONT_RATIO: f64 = 1.24;

type Error = DrawingErrorKind<<CanvasBackend as DrawingBackend>::ErrorType>;

/// A canvas (any size, on the page or not) as a plotters backend.
pub struct Canvas2d<'a> {
    inner: CanvasBackend,
    ctx: &'a CanvasRenderingContext2d,
}

impl<'a> Canvas2d<'a> {
    /// `ctx` is `canvas`'s 2D context (used to measure text).
    pub fn new(
        canvas: &HtmlCanvasElement,
        ctx: &'a CanvasRenderingContext2d,
    ) -> Result<Self, String> {
        let inner = CanvasBackend::with_canvas_object(canvas.clone())
            .ok_or("the canvas has no 2D context")?;
        Ok(Canvas2d { inner, ctx })
    }
}

/// A text style as the SVG backend would size it.
struct SvgSized<'s, S>(&'s S);

impl<S: BackendTextStyle> BackendTextStyle for SvgSized<'_, S> {
    type FontError = S::FontError;

    fn color(&self) -> BackendColor {
        self.0.color()
    }
    fn size(&self) -> f64 {
        self.0.size() / SVG_FONT_RATIO
    }
    fn transform(&self) -> FontTransform {
        self.0.transform()
    }
    fn style(&self) -> FontStyle {
        self.0.style()
    }
    fn anchor(&self) -> Pos {
        self.0.anchor()
    }
    fn family(&self) -> FontFamily<'_> {
        self.0.family()
    }
    /// Not reached: [`Canvas2d`] measures text itself, and `CanvasBackend` draws without it.
    #[allow(clippy::type_complexity)]
    fn layout_box(&self, text: &str) -> Result<((i32, i32), (i32, i32)), Self::FontError> {
        self.0.layout_box(text)
    }
    fn draw<E, DrawFunc: FnMut(i32, i32, BackendColor) -> Result<(), E>>(
        &self,
        text: &str,
        pos: BackendCoord,
        draw: DrawFunc,
    ) -> Result<Result<(), E>, Self::FontError> {
        self.0.draw(text, pos, draw)
    }
}

impl DrawingBackend for Canvas2d<'_> {
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
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Error> {
        self.inner.fill_polygon(vert, style)
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
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), Error> {
        self.inner.draw_text(text, &SvgSized(style), pos)
    }
    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), Error> {
        let size = style.size() / SVG_FONT_RATIO;
        // The font string plotters-canvas sets for drawing the same text.
        let font = format!(
            "{} {size}px {}",
            style.style().as_str(),
            style.family().as_str()
        );
        let width = measured(&font, text).unwrap_or_else(|| {
            self.ctx.set_font(&font);
            let width = self
                .ctx
                .measure_text(text)
                .map(|m| m.width())
                .unwrap_or(0.0);
            remember(font, text, width);
            width
        });
        Ok((width.ceil().max(0.0) as u32, size.ceil().max(0.0) as u32))
    }
}

/// Texts measured at most before the cache starts again.
const MEASURED_MAX: usize = 8192;

/// Widths by text, by font.
type Widths = HashMap<String, HashMap<String, f64>>;

thread_local! {
    /// Widths measured so far: setting a font and measuring costs microseconds, and a
    /// diagram measures the same axis labels and block names frame after frame.
    static MEASURED: RefCell<(Widths, usize)> = RefCell::new((HashMap::new(), 0));
}

/// The width of `text` in `font`, when measured before.
fn measured(font: &str, text: &str) -> Option<f64> {
    MEASURED.with(|m| m.borrow().0.get(font)?.get(text).copied())
}

fn remember(font: String, text: &str, width: f64) {
    MEASURED.with(|m| {
        let (widths, count) = &mut *m.borrow_mut();
        if *count >= MEASURED_MAX {
            widths.clear();
            *count = 0;
        }
        widths
            .entry(font)
            .or_default()
            .insert(text.to_owned(), width);
        *count += 1;
    });
}
