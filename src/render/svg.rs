//! plotters' SVG backend with text measured the same way on every target ([`Svg`]): by the
//! estimate plotters itself uses natively (its `naive` font: 0.7 em per byte of text). On
//! wasm plotters measures text by adding a styled `<span>` to the page, which the page's
//! Content-Security-Policy forbids; with this backend an SVG made in the page is laid out
//! exactly as the CLI lays out the same drawing. Also the one layout of several charts in one
//! SVG, one above another ([`stacked_charts`]: a comparison's spaces, a sweep's).

use plotters::prelude::SVGBackend;
use plotters_backend::{
    BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

type Error<'a> = DrawingErrorKind<<SVGBackend<'a> as DrawingBackend>::ErrorType>;

/// An SVG written into a `String`, its text measured by [`estimate`].
pub struct Svg<'a>(SVGBackend<'a>);

impl<'a> Svg<'a> {
    /// An SVG of `size` pixels written into `buf`.
    pub fn with_string(buf: &'a mut String, size: (u32, u32)) -> Svg<'a> {
        Svg(SVGBackend::with_string(buf, size))
    }
}

/// Charts one above another as one SVG `width` pixels wide, `count` charts each `each`
/// high on `background`, chart `i` drawn by `draw(area, i)`. Deterministic.
pub fn stacked_charts(
    (width, each, count): (u32, u32, usize),
    background: &plotters::style::RGBColor,
    mut draw: impl FnMut(&plotters::drawing::DrawingArea<Svg<'_>, plotters::coord::Shift>, usize),
) -> String {
    use plotters::drawing::IntoDrawingArea;
    let n = u32::try_from(count).unwrap_or(u32::MAX).max(1);
    let mut svg = String::new();
    {
        let root = Svg::with_string(&mut svg, (width, each.saturating_mul(n))).into_drawing_area();
        let _ = root.fill(background);
        let mut rest = root;
        for i in 0..count {
            let (this, below) = rest.split_vertically(each);
            draw(&this, i);
            rest = below;
        }
        let _ = rest.present();
    }
    svg
}

/// The size of `text` at font size `size` as plotters' native estimate gives it:
/// `em = size / 1.24²`, `0.7 em` per byte wide, `1.24 em` high (each part rounded).
pub fn estimate(text: &str, size: f64) -> (u32, u32) {
    let em = size / 1.24 / 1.24;
    let width = (em * 0.7 * text.len() as f64).round();
    let height = em.round() + (em * 0.24).round();
    (width.max(0.0) as u32, height.max(0.0) as u32)
}

impl<'a> DrawingBackend for Svg<'a> {
    type ErrorType = <SVGBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), Error<'a>> {
        self.0.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), Error<'a>> {
        self.0.present()
    }
    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: plotters_backend::BackendColor,
    ) -> Result<(), Error<'a>> {
        self.0.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Error<'a>> {
        self.0.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Error<'a>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Error<'a>> {
        self.0.draw_path(path, style)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Error<'a>> {
        self.0.fill_polygon(vert, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Error<'a>> {
        self.0.draw_circle(center, radius, style, fill)
    }
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), Error<'a>> {
        self.0.draw_text(text, style, pos)
    }
    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), Error<'a>> {
        Ok(estimate(text, style.size()))
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), Error<'a>> {
        self.0.blit_bitmap(pos, size, src)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::prelude::*;

    /// Natively plotters' SVG backend measures with the same estimate: the two agree.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn text_is_measured_as_plotters_measures_it_natively() {
        let mut a = String::new();
        let mut b = String::new();
        let plain = SVGBackend::with_string(&mut a, (400, 300)).into_drawing_area();
        let ours = Svg::with_string(&mut b, (400, 300)).into_drawing_area();
        for text in ["", "x", "0 default (HBM)", "+734,003,200 B", "ünïcödé"] {
            for size in [9.0, 14.0, 17.36, 40.0] {
                let style = TextStyle::from(("sans-serif", size).into_font());
                assert_eq!(
                    plain.estimate_text_size(text, &style).unwrap(),
                    ours.estimate_text_size(text, &style).unwrap(),
                    "{text:?} at {size}"
                );
                let bold = TextStyle::from(("sans-serif", size, FontStyle::Bold).into_font());
                assert_eq!(
                    plain.estimate_text_size(text, &bold).unwrap(),
                    ours.estimate_text_size(text, &bold).unwrap()
                );
            }
        }
    }
}
