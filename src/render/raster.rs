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

    /// The pixels as a PNG file (8-bit RGB, one zlib stream, no filter): the drawing
    /// without its text, for where an image is all that can be shown (a notebook's static
    /// output).
    pub fn png(&self) -> Vec<u8> {
        use std::io::Write;
        let mut rows = Vec::with_capacity(self.pixels.len() * 3 + self.height as usize);
        for row in self.pixels.chunks(self.width.max(1) as usize) {
            rows.push(0); // filter type None
            rows.extend(row.iter().flatten());
        }
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        // Writing into a Vec cannot fail.
        let _ = z.write_all(&rows);
        let idat = z.finish().unwrap_or_default();
        let mut ihdr = Vec::with_capacity(13);
        ihdr.extend(self.width.to_be_bytes());
        ihdr.extend(self.height.to_be_bytes());
        ihdr.extend([8, 2, 0, 0, 0]); // 8 bits, RGB, deflate, no filter, no interlace
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        for (kind, data) in [(b"IHDR", &ihdr), (b"IDAT", &idat), (b"IEND", &Vec::new())] {
            png.extend((data.len() as u32).to_be_bytes());
            let start = png.len();
            png.extend(kind);
            png.extend(data);
            let crc = crc32(&png[start..]);
            png.extend(crc.to_be_bytes());
        }
        png
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

/// The CRC-32 (ISO 3309, as PNG's chunks carry it) of `bytes`, bit by bit: a thumbnail's
/// few chunks need no table.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
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

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::prelude::*;
    use std::io::Read;

    /// The PNG's chunks: each with a right CRC, the header saying the size, and the
    /// inflated rows (a filter byte, then RGB) the raster's pixels exactly.
    #[test]
    fn png_holds_the_pixels() {
        let mut r = Raster::new(7, 5);
        {
            let area = (&mut r).into_drawing_area();
            area.draw(&Rectangle::new(
                [(1, 1), (4, 3)],
                RGBColor(200, 30, 10).filled(),
            ))
            .unwrap();
        }
        assert_eq!(r.pixel(2, 2), Some([200, 30, 10]));
        let png = r.png();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let (mut at, mut chunks) = (8, Vec::new());
        while at < png.len() {
            let n = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            let body = &png[at + 4..at + 8 + n];
            let crc = u32::from_be_bytes(png[at + 8 + n..at + 12 + n].try_into().unwrap());
            assert_eq!(crc, crc32(body), "chunk {:?}", &body[..4]);
            chunks.push((body[..4].to_vec(), body[4..].to_vec()));
            at += 12 + n;
        }
        let kinds: Vec<&[u8]> = chunks.iter().map(|(k, _)| k.as_slice()).collect();
        assert_eq!(kinds, [b"IHDR", b"IDAT", b"IEND"]);
        assert_eq!(chunks[0].1, [0, 0, 0, 7, 0, 0, 0, 5, 8, 2, 0, 0, 0]);
        let mut rows = Vec::new();
        flate2::read::ZlibDecoder::new(&chunks[1].1[..])
            .read_to_end(&mut rows)
            .unwrap();
        let expected: Vec<u8> = r
            .pixels()
            .chunks(7)
            .flat_map(|row| std::iter::once(0).chain(row.iter().flatten().copied()))
            .collect();
        assert_eq!(rows, expected);
        // The check value of "123456789" in the standard's own tables.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }
}
