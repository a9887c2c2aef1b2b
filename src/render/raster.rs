//! A pixel buffer that plotters can draw on, with no fonts: what native benchmarks time
//! drawing with and what tests compare drawings in. Text is counted, not drawn (its box is
//! estimated at 0.56 em a character, as the layout assumes).

use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

/// `width × height` RGB pixels, row by row from the top left.
#[derive(Clone, Debug)]
pub struct Raster {
    width: u32,
    height: u32,
    pixels: Vec<[u8; 3]>,
    /// Rectangles filled (what a canvas would be asked for one call each).
    pub fills: u64,
    /// Texts drawn.
    pub texts: u64,
}

/// Never happens: drawing into memory cannot fail.
#[derive(Debug)]
pub struct NoError;

impl std::fmt::Display for NoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no error")
    }
}

impl std::error::Error for NoError {}

impl Raster {
    pub fn new(width: u32, height: u32) -> Raster {
        Raster {
            width,
            height,
            pixels: vec![[255; 3]; width as usize * height as usize],
            fills: 0,
            texts: 0,
        }
    }

    /// The pixel at `(x, y)`, `None` outside.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        (x < self.width && y < self.height)
            .then(|| self.pixels[y as usize * self.width as usize + x as usize])
    }

    /// Every pixel, row by row.
    pub fn pixels(&self) -> &[[u8; 3]] {
        &self.pixels
    }

    fn put(&mut self, x: i32, y: i32, c: BackendColor) {
        if x >= 0 && y >= 0 && (x as u32) < self.width && (y as u32) < self.height && c.alpha > 0.0
        {
            let p = &mut self.pixels[y as usize * self.width as usize + x as usize];
            let a = c.alpha.clamp(0.0, 1.0);
            for (dst, src) in p.iter_mut().zip([c.rgb.0, c.rgb.1, c.rgb.2]) {
                *dst = (f64::from(src) * a + f64::from(*dst) * (1.0 - a)).round() as u8;
            }
        }
    }
}

type Result<T = ()> = std::result::Result<T, DrawingErrorKind<NoError>>;

/// Drawn on through a mutable borrow, so that the pixels can be read after the drawing area
/// is dropped: `(&mut raster).into_drawing_area()`.
impl DrawingBackend for &mut Raster {
    type ErrorType = NoError;

    fn get_size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    fn ensure_prepared(&mut self) -> Result {
        Ok(())
    }

    fn present(&mut self) -> Result {
        Ok(())
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result {
        self.put(point.0, point.1, color);
        Ok(())
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result {
        self.fills += 1;
        let c = style.color();
        let (x0, x1) = (
            upper_left.0.max(0),
            bottom_right.0.min(self.width as i32 - 1),
        );
        let (y0, y1) = (
            upper_left.1.max(0),
            bottom_right.1.min(self.height as i32 - 1),
        );
        if fill && c.alpha >= 1.0 && x0 <= x1 {
            let rgb = [c.rgb.0, c.rgb.1, c.rgb.2];
            let w = self.width as usize;
            for y in y0.max(0)..=y1 {
                let row = y as usize * w;
                self.pixels[row + x0 as usize..=row + x1 as usize].fill(rgb);
            }
            return Ok(());
        }
        for y in y0..=y1 {
            if fill || y == y0 || y == y1 {
                for x in x0..=x1 {
                    self.put(x, y, c);
                }
            } else {
                self.put(x0, y, c);
                self.put(x1, y, c);
            }
        }
        Ok(())
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        _text: &str,
        _style: &S,
        _pos: BackendCoord,
    ) -> Result {
        self.texts += 1;
        Ok(())
    }

    fn estimate_text_size<S: BackendTextStyle>(&self, text: &str, style: &S) -> Result<(u32, u32)> {
        let size = style.size();
        let width = text.chars().count() as f64 * size * 0.56;
        Ok((width.ceil() as u32, size.ceil() as u32))
    }
}
