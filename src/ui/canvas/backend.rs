//! A plotters backend drawing on a `CanvasRenderingContext2d`, made for redrawing often.
//!
//! Unlike plotters-canvas it
//! * sizes text as plotters' SVG backend does (size / 1.24), so that the page's diagrams
//!   look like the CLI's SVGs;
//! * measures text with the canvas (`measureText`); plotters would add a `<span style>` to
//!   the page, which the page's Content-Security-Policy forbids, and pay a layout per label;
//! * sets the fill colour and font only when they change (building those strings for the
//!   canvas is most of the cost of a small rectangle).

use std::cell::RefCell;
use std::fmt;

use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    FontTransform,
};
use web_sys::CanvasRenderingContext2d;

/// plotters' SVG backend writes `font-size` as the size it is given / 1.24.
const SVG_FONT_RATIO: f64 = 1.24;

#[derive(Debug)]
pub struct CanvasError(String);

impl fmt::Display for CanvasError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CanvasError {}

type Error = DrawingErrorKind<CanvasError>;

fn js_error(e: wasm_bindgen::JsValue) -> Error {
    DrawingErrorKind::DrawingError(CanvasError(format!("{e:?}")))
}

/// The 2D context of a canvas of `size` device pixels.
pub struct Canvas2d<'a> {
    ctx: &'a CanvasRenderingContext2d,
    size: (u32, u32),
    /// What the context is set to, to skip setting it again.
    fill: RefCell<Option<Rgba>>,
    stroke: RefCell<Option<(Rgba, u32)>>,
    font: RefCell<String>,
}

#[derive(Clone, Copy, PartialEq)]
struct Rgba(u8, u8, u8, u64);

impl Rgba {
    fn of(c: &BackendColor) -> Rgba {
        Rgba(c.rgb.0, c.rgb.1, c.rgb.2, c.alpha.to_bits())
    }
    fn css(self) -> String {
        let alpha = f64::from_bits(self.3);
        if alpha >= 1.0 {
            format!("rgb({},{},{})", self.0, self.1, self.2)
        } else {
            format!("rgba({},{},{},{alpha:.3})", self.0, self.1, self.2)
        }
    }
}

impl<'a> Canvas2d<'a> {
    pub fn new(ctx: &'a CanvasRenderingContext2d, size: (u32, u32)) -> Self {
        Canvas2d {
            ctx,
            size,
            fill: RefCell::new(None),
            stroke: RefCell::new(None),
            font: RefCell::new(String::new()),
        }
    }

    fn set_fill(&self, c: &BackendColor) {
        let c = Rgba::of(c);
        let mut fill = self.fill.borrow_mut();
        if *fill != Some(c) {
            self.ctx.set_fill_style_str(&c.css());
            *fill = Some(c);
        }
    }

    fn set_stroke<S: BackendStyle>(&self, style: &S) {
        let c = Rgba::of(&style.color());
        let key = (c, style.stroke_width());
        let mut stroke = self.stroke.borrow_mut();
        if *stroke != Some(key) {
            self.ctx.set_stroke_style_str(&c.css());
            self.ctx
                .set_line_width(f64::from(style.stroke_width().max(1)));
            *stroke = Some(key);
        }
    }

    fn set_font<S: BackendTextStyle>(&self, style: &S) {
        let font = format!(
            "{} {:.2}px {}",
            style.style().as_str(),
            style.size() / SVG_FONT_RATIO,
            style.family().as_str()
        );
        let mut current = self.font.borrow_mut();
        if *current != font {
            self.ctx.set_font(&font);
            *current = font;
        }
    }

    /// Lines of odd width sit on pixel centres, so they are sharp.
    fn offset<S: BackendStyle>(style: &S) -> f64 {
        if style.stroke_width() % 2 == 1 {
            0.5
        } else {
            0.0
        }
    }

    fn path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(&self, path: I, style: &S) {
        let o = Self::offset(style);
        self.ctx.begin_path();
        for (i, (x, y)) in path.into_iter().enumerate() {
            let (x, y) = (f64::from(x) + o, f64::from(y) + o);
            if i == 0 {
                self.ctx.move_to(x, y);
            } else {
                self.ctx.line_to(x, y);
            }
        }
    }
}

impl DrawingBackend for Canvas2d<'_> {
    type ErrorType = CanvasError;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }
    fn ensure_prepared(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn present(&mut self) -> Result<(), Error> {
        Ok(())
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Error> {
        if color.alpha > 0.0 {
            self.set_fill(&color);
            self.ctx
                .fill_rect(f64::from(point.0), f64::from(point.1), 1.0, 1.0);
        }
        Ok(())
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Error> {
        if style.color().alpha > 0.0 {
            self.set_stroke(style);
            self.path([from, to], style);
            self.ctx.stroke();
        }
        Ok(())
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Error> {
        if style.color().alpha <= 0.0 {
            return Ok(());
        }
        let (x, y) = (f64::from(upper_left.0), f64::from(upper_left.1));
        let (w, h) = (
            f64::from(bottom_right.0 - upper_left.0),
            f64::from(bottom_right.1 - upper_left.1),
        );
        if fill {
            self.set_fill(&style.color());
            self.ctx.fill_rect(x, y, w, h);
        } else {
            self.set_stroke(style);
            let o = Self::offset(style);
            self.ctx.stroke_rect(x + o, y + o, w, h);
        }
        Ok(())
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Error> {
        if style.color().alpha > 0.0 {
            self.set_stroke(style);
            self.path(path, style);
            self.ctx.stroke();
        }
        Ok(())
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Error> {
        if style.color().alpha > 0.0 {
            self.set_fill(&style.color());
            self.ctx.begin_path();
            for (i, (x, y)) in vert.into_iter().enumerate() {
                if i == 0 {
                    self.ctx.move_to(f64::from(x), f64::from(y));
                } else {
                    self.ctx.line_to(f64::from(x), f64::from(y));
                }
            }
            self.ctx.close_path();
            self.ctx.fill();
        }
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Error> {
        if style.color().alpha <= 0.0 {
            return Ok(());
        }
        self.ctx.begin_path();
        self.ctx
            .arc(
                f64::from(center.0),
                f64::from(center.1),
                f64::from(radius),
                0.0,
                std::f64::consts::TAU,
            )
            .map_err(js_error)?;
        if fill {
            self.set_fill(&style.color());
            self.ctx.fill();
        } else {
            self.set_stroke(style);
            self.ctx.stroke();
        }
        Ok(())
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), Error> {
        let color = style.color();
        if color.alpha <= 0.0 {
            return Ok(());
        }
        let turn = match style.transform() {
            FontTransform::None => 0.0,
            FontTransform::Rotate90 => 0.25,
            FontTransform::Rotate180 => 0.5,
            FontTransform::Rotate270 => 0.75,
        } * std::f64::consts::TAU;
        let (mut x, mut y) = (f64::from(pos.0), f64::from(pos.1));
        if turn != 0.0 {
            self.ctx.save();
            self.ctx.translate(x, y).map_err(js_error)?;
            self.ctx.rotate(turn).map_err(js_error)?;
            (x, y) = (0.0, 0.0);
        }
        self.ctx.set_text_baseline(match style.anchor().v_pos {
            VPos::Top => "top",
            VPos::Center => "middle",
            VPos::Bottom => "bottom",
        });
        self.ctx.set_text_align(match style.anchor().h_pos {
            HPos::Left => "left",
            HPos::Right => "right",
            HPos::Center => "center",
        });
        self.set_fill(&color);
        self.set_font(style);
        let drawn = self.ctx.fill_text(text, x, y).map_err(js_error);
        if turn != 0.0 {
            self.ctx.restore();
            // `restore` brings back the state from before `save`.
            *self.fill.borrow_mut() = None;
            self.font.borrow_mut().clear();
        }
        drawn
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), Error> {
        self.set_font(style);
        let width = self
            .ctx
            .measure_text(text)
            .map(|m| m.width())
            .unwrap_or(0.0);
        Ok((
            width.ceil().max(0.0) as u32,
            (style.size() / SVG_FONT_RATIO).ceil().max(0.0) as u32,
        ))
    }
}
