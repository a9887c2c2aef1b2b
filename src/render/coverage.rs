//! Coverage raster: blocks too small to draw one by one are painted into a grid of pixels,
//! which then comes out as few rectangles (runs of equal pixels in a row, merged with the
//! identical runs of the rows below). Drawing cost then follows pixels, not values.

use super::geometry::PxRect;

/// One byte per pixel of a plot rectangle: 0 empty, else a class (1-based).
pub(crate) struct Coverage {
    rect: PxRect,
    width: usize,
    cells: Vec<u8>,
}

impl Coverage {
    pub(crate) fn new(rect: PxRect) -> Coverage {
        let width = rect.width() as usize;
        let height = rect.height() as usize;
        Coverage {
            rect,
            width,
            cells: vec![0; width.saturating_mul(height)],
        }
    }

    /// Paints `px` (clipped to the plot) with `class` (1-based; 0 is ignored).
    pub(crate) fn paint(&mut self, px: &PxRect, class: u8) {
        let r = &self.rect;
        let (x0, x1) = (px.x0.max(r.x0) - r.x0, px.x1.min(r.x1) - r.x0);
        let (y0, y1) = (px.y0.max(r.y0) - r.y0, px.y1.min(r.y1) - r.y0);
        if class == 0 || x0 >= x1 || y0 >= y1 {
            return;
        }
        for y in y0 as usize..y1 as usize {
            let row = y * self.width;
            self.cells[row + x0 as usize..row + x1 as usize].fill(class);
        }
    }

    /// Calls `emit(rect, class)` for a set of disjoint rectangles covering exactly the
    /// painted pixels, in a deterministic order (by bottom row, then column).
    pub(crate) fn for_each_rect<E>(
        &self,
        mut emit: impl FnMut(PxRect, u8) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.width == 0 {
            return Ok(());
        }
        let (ox, oy) = (self.rect.x0, self.rect.y0);
        let out = |run: &Run, y1: usize| {
            let rect = PxRect {
                x0: ox + run.x0 as i32,
                y0: oy + run.y0 as i32,
                x1: ox + run.x1 as i32,
                y1: oy + y1 as i32,
            };
            (rect, run.class)
        };
        let mut open: Vec<Run> = Vec::new();
        let mut next: Vec<Run> = Vec::new();
        let rows = self.cells.len() / self.width;
        for (y, row) in self.cells.chunks_exact(self.width).enumerate() {
            let mut j = 0;
            let mut x = 0;
            while x < row.len() {
                let class = row[x];
                let start = x;
                while x < row.len() && row[x] == class {
                    x += 1;
                }
                if class == 0 {
                    continue;
                }
                // Close the open runs that end before this one or differ from it.
                let mut continued = None;
                while j < open.len() && open[j].x0 <= start {
                    let o = open[j];
                    j += 1;
                    if o.x0 == start && o.x1 == x && o.class == class {
                        continued = Some(o.y0);
                        break;
                    }
                    let (r, c) = out(&o, y);
                    emit(r, c)?;
                }
                next.push(Run {
                    x0: start,
                    x1: x,
                    y0: continued.unwrap_or(y),
                    class,
                });
            }
            for o in &open[j..] {
                let (r, c) = out(o, y);
                emit(r, c)?;
            }
            std::mem::swap(&mut open, &mut next);
            next.clear();
        }
        for o in &open {
            let (r, c) = out(o, rows);
            emit(r, c)?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
struct Run {
    x0: usize,
    x1: usize,
    y0: usize,
    class: u8,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rects(c: &Coverage) -> Vec<(PxRect, u8)> {
        let mut v = Vec::new();
        c.for_each_rect::<()>(|r, k| {
            v.push((r, k));
            Ok(())
        })
        .unwrap();
        v
    }

    #[test]
    fn merges_runs_into_rectangles() {
        let mut c = Coverage::new(PxRect {
            x0: 10,
            y0: 10,
            x1: 30,
            y1: 30,
        });
        // Many one-pixel blocks making up a 5×4 square: one rectangle.
        for x in 12..17 {
            for y in 11..15 {
                c.paint(
                    &PxRect {
                        x0: x,
                        y0: y,
                        x1: x + 1,
                        y1: y + 1,
                    },
                    2,
                );
            }
        }
        assert_eq!(
            rects(&c),
            vec![(
                PxRect {
                    x0: 12,
                    y0: 11,
                    x1: 17,
                    y1: 15
                },
                2
            )]
        );
    }

    #[test]
    fn covers_exactly_the_painted_pixels() {
        let rect = PxRect {
            x0: 0,
            y0: 0,
            x1: 16,
            y1: 12,
        };
        let mut c = Coverage::new(rect);
        let paints = [
            (
                PxRect {
                    x0: 0,
                    y0: 0,
                    x1: 16,
                    y1: 1,
                },
                1,
            ),
            (
                PxRect {
                    x0: 3,
                    y0: 2,
                    x1: 9,
                    y1: 7,
                },
                3,
            ),
            (
                PxRect {
                    x0: 5,
                    y0: 4,
                    x1: 12,
                    y1: 12,
                },
                1,
            ),
            (
                PxRect {
                    x0: -5,
                    y0: 10,
                    x1: 40,
                    y1: 40,
                },
                2,
            ),
        ];
        for (p, k) in paints {
            c.paint(&p, k);
        }
        let mut seen = vec![0u8; 16 * 12];
        for (r, k) in rects(&c) {
            for y in r.y0..r.y1 {
                for x in r.x0..r.x1 {
                    let cell = &mut seen[(y * 16 + x) as usize];
                    assert_eq!(*cell, 0, "rectangles overlap at {x},{y}");
                    *cell = k;
                }
            }
        }
        assert_eq!(seen, c.cells);
    }
}
