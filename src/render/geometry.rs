//! Geometry of a memory-space panel: the viewport in data units, pixel rectangles, the
//! panel layout and the one mapping between data (steps × bytes) and pixels that drawing
//! and hit-testing share.

use crate::analysis::{Analysis, Block, Space};

/// The zoom factor of a wheel movement of `delta` pixels (a mouse notch is about 100;
/// negative zooms in): what the browser's diagrams and the native draw benchmark share.
pub fn wheel_zoom(delta: f64) -> f64 {
    (delta * 0.0015).exp().clamp(0.25, 4.0)
}

/// The visible part of a diagram in data units: steps `x0 .. x1`, bytes `y0 .. y1`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Viewport {
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
}

impl Viewport {
    /// The whole space: every step and every byte of its layout.
    pub fn full(analysis: &Analysis, space: &Space) -> Viewport {
        Viewport {
            x0: 0.0,
            x1: f64::from(analysis.steps.max(1)),
            y0: 0.0,
            y1: (space.height.max(1)) as f64,
        }
    }

    /// Zooms each axis by its factor (below 1 zooms in) around `anchor`, a point in data
    /// units that stays where it is on screen.
    pub fn zoom(&self, factor_x: f64, factor_y: f64, anchor: (f64, f64)) -> Viewport {
        let scale = |a: f64, b: f64, f: f64, c: f64| {
            let f = if f.is_finite() && f > 0.0 { f } else { 1.0 };
            (c + (a - c) * f, c + (b - c) * f)
        };
        let (x0, x1) = scale(self.x0, self.x1, factor_x, anchor.0);
        let (y0, y1) = scale(self.y0, self.y1, factor_y, anchor.1);
        Viewport { x0, x1, y0, y1 }
    }

    /// Moves by `dx` steps and `dy` bytes.
    pub fn pan(&self, dx: f64, dy: f64) -> Viewport {
        Viewport {
            x0: self.x0 + dx,
            x1: self.x1 + dx,
            y0: self.y0 + dy,
            y1: self.y1 + dy,
        }
    }

    /// This viewport kept inside `bounds` (usually [`Viewport::full`]): no wider than it,
    /// shifted back in when it sticks out.
    pub fn clamped(&self, bounds: &Viewport) -> Viewport {
        let fit = |a: f64, b: f64, lo: f64, hi: f64| {
            let span = (b - a).min(hi - lo);
            let a = a.max(lo).min(hi - span);
            (a, a + span)
        };
        let (x0, x1) = fit(self.x0, self.x1, bounds.x0, bounds.x1);
        let (y0, y1) = fit(self.y0, self.y1, bounds.y0, bounds.y1);
        Viewport { x0, x1, y0, y1 }
    }

    /// Whether both ranges are finite and non-empty.
    pub fn is_valid(&self) -> bool {
        [self.x0, self.x1, self.y0, self.y1]
            .iter()
            .all(|v| v.is_finite())
            && self.x1 > self.x0
            && self.y1 > self.y0
    }

    /// `self` if valid, else `fallback`.
    pub(crate) fn or(self, fallback: Viewport) -> Viewport {
        if self.is_valid() {
            self
        } else {
            fallback
        }
    }
}

/// A rectangle in pixels, half-open: columns `x0 .. x1`, rows `y0 .. y1`, in the
/// coordinates of the drawing area it belongs to (origin top left).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PxRect {
    pub x0: i32,
    pub y0: i32,
    pub x1: i32,
    pub y1: i32,
}

impl PxRect {
    pub fn width(&self) -> i32 {
        (self.x1 - self.x0).max(0)
    }
    pub fn height(&self) -> i32 {
        (self.y1 - self.y0).max(0)
    }
    pub fn is_empty(&self) -> bool {
        self.width() == 0 || self.height() == 0
    }
    pub fn contains(&self, px: i32, py: i32) -> bool {
        self.x0 <= px && px < self.x1 && self.y0 <= py && py < self.y1
    }
    /// Corners as plotters wants them for a `Rectangle`.
    pub(crate) fn corners(&self) -> [(i32, i32); 2] {
        [(self.x0, self.y0), (self.x1, self.y1)]
    }
}

/// The curve strip's least height where the panel's body has twice that.
pub const MIN_CURVE_PX: i32 = 48;

/// Where the parts of a memory-space panel go, for a drawing area of a given size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The title row (title left, legend right).
    pub title: PxRect,
    /// The occupied-bytes curve.
    pub curve: PxRect,
    /// The block diagram: x = step, y = offset.
    pub diagram: PxRect,
    /// Column right of the diagram where allocation labels go (may be empty).
    pub labels: PxRect,
}

impl Layout {
    /// The layout of a panel of `size` pixels (width, height).
    pub fn new(size: (u32, u32), font_size: f64) -> Layout {
        let w = i32::try_from(size.0).unwrap_or(i32::MAX);
        let h = i32::try_from(size.1).unwrap_or(i32::MAX);
        let font = font_size.clamp(6.0, 48.0);
        let pad = 8;
        let title_h = (font * 1.9).round() as i32;
        // Room for a byte label such as `+1,234,567,890` (see `ticks`).
        let axis_w = (font * 9.0).round() as i32;
        let x_axis_h = (font * 2.0).round() as i32;
        let gap = (font * 1.6).round() as i32;
        let labels_w = if w >= 640 {
            (font * 12.0).round() as i32
        } else {
            0
        };

        let x0 = pad + axis_w;
        let x1 = (w - pad - labels_w).max(x0);
        let title = PxRect {
            x0: pad,
            y0: pad / 2,
            x1: (w - pad).max(pad),
            y1: pad / 2 + title_h,
        };
        let body_top = title.y1 + pad / 2;
        let body_bottom = (h - pad - x_axis_h).max(body_top);
        let body = body_bottom - body_top;
        // A fifth of the body, at most 150 px, and at least 48 px (room for the curve's three
        // labels, `curve_labels.rs`) while that leaves the diagram as much.
        let curve_h = ((f64::from(body) * 0.2).round() as i32)
            .clamp(MIN_CURVE_PX.min(body / 2), 150)
            .min(body);
        let curve = PxRect {
            x0,
            y0: body_top,
            x1,
            y1: body_top + curve_h,
        };
        let diagram_top = (curve.y1 + gap).min(body_bottom);
        let diagram = PxRect {
            x0,
            y0: diagram_top,
            x1,
            y1: body_bottom,
        };
        let labels = PxRect {
            x0: x1 + 6,
            y0: diagram.y0,
            x1: (w - pad).max(x1 + 6),
            y1: diagram.y1,
        };
        Layout {
            title,
            curve,
            diagram,
            labels,
        }
    }
}

/// The mapping between data (steps, bytes) and pixels of one plot rectangle. Steps grow to
/// the right, bytes grow upwards (offset 0 at the bottom).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mapping {
    pub view: Viewport,
    pub rect: PxRect,
}

impl Mapping {
    pub fn new(view: Viewport, rect: PxRect) -> Mapping {
        Mapping { view, rect }
    }

    fn sx(&self) -> f64 {
        f64::from(self.rect.width()) / (self.view.x1 - self.view.x0)
    }
    fn sy(&self) -> f64 {
        f64::from(self.rect.height()) / (self.view.y1 - self.view.y0)
    }

    /// Pixel column (fractional) of step `x`.
    pub fn x_px(&self, x: f64) -> f64 {
        f64::from(self.rect.x0) + (x - self.view.x0) * self.sx()
    }
    /// Pixel row (fractional) of byte offset `y`.
    pub fn y_px(&self, y: f64) -> f64 {
        f64::from(self.rect.y1) - (y - self.view.y0) * self.sy()
    }
    /// Step (fractional) at pixel column `px`.
    pub fn step_at(&self, px: f64) -> f64 {
        self.view.x0 + (px - f64::from(self.rect.x0)) / self.sx()
    }
    /// Byte offset (fractional) at pixel row `py`.
    pub fn bytes_at(&self, py: f64) -> f64 {
        self.view.y0 + (f64::from(self.rect.y1) - py) / self.sy()
    }

    /// The pixels of a data rectangle, clipped to the plot; at least one pixel each way
    /// when any of it is in view, `None` when none is.
    pub fn data_rect_px(&self, x0: f64, x1: f64, y0: f64, y1: f64) -> Option<PxRect> {
        let v = &self.view;
        if x1 <= v.x0 || x0 >= v.x1 || y1 <= v.y0 || y0 >= v.y1 || self.rect.is_empty() {
            return None;
        }
        let r = &self.rect;
        // Clip in data units first so that deep zooms never overflow the pixel type.
        let left = self.x_px(x0.max(v.x0)).round() as i32;
        let right = self.x_px(x1.min(v.x1)).round() as i32;
        let top = self.y_px(y1.min(v.y1)).round() as i32;
        let bottom = self.y_px(y0.max(v.y0)).round() as i32;
        let (left, right) = widen(left.clamp(r.x0, r.x1), right.clamp(r.x0, r.x1), r.x0, r.x1);
        let (top, bottom) = widen(top.clamp(r.y0, r.y1), bottom.clamp(r.y0, r.y1), r.y0, r.y1);
        Some(PxRect {
            x0: left,
            y0: top,
            x1: right,
            y1: bottom,
        })
    }

    /// The pixels of a value's block (see [`Mapping::data_rect_px`]).
    pub fn block_px(&self, b: &Block) -> Option<PxRect> {
        self.data_rect_px(f64::from(b.x0), f64::from(b.x1), b.y0 as f64, b.y1 as f64)
    }

    /// The pixels a block is drawn on and found at: [`Mapping::block_px`], except that a
    /// block at least [`THIN_MIN_PX`] wide but lower than that is drawn that high (centred on
    /// its rows, inside the plot) with an outline, so that a small value beside a large one
    /// stays visible. Only the drawing grows: the block's bytes are the same.
    pub fn shown_px(&self, b: &Block) -> Option<PxRect> {
        let r = self.block_px(b)?;
        if r.width() < THIN_MIN_PX || r.height() >= THIN_MIN_PX {
            return Some(r);
        }
        let y0 = (r.y0 + r.y1 - THIN_MIN_PX) / 2;
        let y0 = y0.min(self.rect.y1 - THIN_MIN_PX).max(self.rect.y0);
        Some(PxRect {
            y0,
            y1: (y0 + THIN_MIN_PX).min(self.rect.y1),
            ..r
        })
    }
}

/// The least height, in device pixels, of a block drawn at least this wide
/// ([`Mapping::shown_px`]): an outline above and below a row of its colour.
pub const THIN_MIN_PX: i32 = 3;

/// Makes `lo .. hi` at least one pixel long, staying inside `min .. max`.
fn widen(lo: i32, hi: i32, min: i32, max: i32) -> (i32, i32) {
    if hi > lo {
        (lo, hi)
    } else if lo < max {
        (lo, lo + 1)
    } else {
        ((max - 1).max(min), max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> Mapping {
        let view = Viewport {
            x0: 0.0,
            x1: 100.0,
            y0: 0.0,
            y1: 1000.0,
        };
        Mapping::new(
            view,
            PxRect {
                x0: 10,
                y0: 20,
                x1: 110,
                y1: 120,
            },
        )
    }

    #[test]
    fn mapping_round_trips() {
        let m = map();
        assert_eq!(m.x_px(0.0), 10.0);
        assert_eq!(m.x_px(100.0), 110.0);
        assert_eq!(m.y_px(0.0), 120.0);
        assert_eq!(m.y_px(1000.0), 20.0);
        assert!((m.step_at(m.x_px(37.0)) - 37.0).abs() < 1e-9);
        assert!((m.bytes_at(m.y_px(420.0)) - 420.0).abs() < 1e-9);
    }

    #[test]
    fn tiny_rects_get_one_pixel_and_offscreen_ones_none() {
        let m = map();
        let r = m.data_rect_px(5.0, 5.1, 0.0, 1.0).unwrap();
        assert_eq!((r.width(), r.height()), (1, 1));
        assert_eq!(m.data_rect_px(100.0, 120.0, 0.0, 10.0), None);
        assert_eq!(m.data_rect_px(0.0, 10.0, 1000.0, 2000.0), None);
        // A huge rect is clipped to the plot.
        let r = m.data_rect_px(-1e300, 1e300, -1e300, 1e300).unwrap();
        assert_eq!(r, m.rect);
    }

    #[test]
    fn viewport_zoom_pan_clamp() {
        let full = Viewport {
            x0: 0.0,
            x1: 100.0,
            y0: 0.0,
            y1: 50.0,
        };
        let z = full.zoom(0.5, 1.0, (50.0, 0.0));
        assert_eq!((z.x0, z.x1, z.y0, z.y1), (25.0, 75.0, 0.0, 50.0));
        let p = z.pan(40.0, 0.0).clamped(&full);
        assert_eq!((p.x0, p.x1), (50.0, 100.0));
        assert!(!Viewport {
            x0: 1.0,
            x1: 1.0,
            y0: 0.0,
            y1: 1.0
        }
        .is_valid());
    }

    #[test]
    fn the_curve_strip_is_48_px_high_where_the_body_has_96() {
        // 14 px text: title 27 px + 4 + 4 above the body, 8 + 28 below it.
        let body = |h: u32| {
            let l = Layout::new((1200, h), 14.0);
            (l.curve.height(), l.diagram.y1 - l.curve.y0)
        };
        // 180 px high: a body of 109 px, a fifth of it 22 px: raised to 48.
        assert_eq!(body(180), (48, 109));
        // A body under 96 px: half of it.
        assert_eq!(body(150).0, 79 / 2);
        // A tall panel: a fifth, at most 150 px.
        assert_eq!(body(600).0, 106);
        assert_eq!(body(2000).0, 150);
    }

    #[test]
    fn layout_is_inside_the_area() {
        for size in [(0, 0), (100, 50), (1200, 600), (4000, 300)] {
            let l = Layout::new(size, 12.0);
            for r in [l.title, l.curve, l.diagram] {
                assert!(r.x1 >= r.x0 && r.y1 >= r.y0, "{size:?} {r:?}");
            }
            if size.0 >= 640 {
                assert!(l.diagram.x1 <= size.0 as i32 && l.diagram.y1 <= size.1 as i32);
            }
        }
    }
}
