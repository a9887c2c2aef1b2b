//! The curve strip's own labels: the peak's (`peak N bytes (…) @ step T`), a capacity's
//! (`capacity · 15.75GiB`) and its verdict at the peak (`exceeds by 14.0 GiB`), placed so
//! that no two boxes overlap and every box stays inside the strip.
//!
//! Owns the placement rule ([`place`]): the labels are placed in that order (the peak's,
//! the capacity's, the verdict), each at the first of its candidate places (in order of
//! preference) that is inside the strip and clear of the boxes placed before it; a label
//! with no such place is left out (the peak's never is: its first place is kept, clipped to
//! the strip). Candidates: the peak's label right of the peak's line at the top, else left of
//! it; the capacity's just below its line, else above it, at the left, else at the right; the
//! verdict beside the peak's line, halfway between the peak and the capacity line, then at
//! the line, at the top and at the bottom of the strip, left of the peak first, then right,
//! then at the strip's two ends. [`super::curve_labels`] gives the boxes as drawn.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::capacity::{bytes_row, capacity_label, verdict_words};
use super::curve::curve_mapping;
use super::geometry::{Layout, Mapping, PxRect};
use super::{DrawResult, Painter};
use crate::analysis::Space;
use crate::units::{group_digits, human_bytes};

/// Which label a box is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CurveText {
    Peak,
    Capacity,
    Verdict,
}

/// What the placement is given for one strip: text widths in pixels, without padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wanted {
    /// The curve strip.
    pub strip: PxRect,
    /// A text row's height.
    pub row: i32,
    /// The peak's column when it is in view, and its label's width.
    pub peak: Option<(Option<i32>, i32)>,
    /// The row of the peak's bytes on the curve.
    pub peak_row: i32,
    /// The capacity line's row, its label's width and the verdict's width.
    pub capacity: Option<(i32, i32, i32)>,
}

/// Padding left and right of a text inside its box.
const PAD: i32 = 3;

/// The box of a text of width `w` starting at `x`, with its row's top at `y`.
fn text_box(x: i32, y: i32, w: i32, row: i32) -> PxRect {
    PxRect {
        x0: x - PAD,
        y0: y,
        x1: x + w + PAD,
        y1: y + row,
    }
}

fn inside(r: PxRect, strip: PxRect) -> bool {
    r.x0 >= strip.x0 && r.x1 <= strip.x1 && r.y0 >= strip.y0 && r.y1 <= strip.y1
}

fn apart(a: PxRect, b: PxRect) -> bool {
    a.x1 <= b.x0 || b.x1 <= a.x0 || a.y1 <= b.y0 || b.y1 <= a.y0
}

/// The first of `candidates` (text start, row top) inside the strip and clear of `placed`.
fn first_free(
    candidates: &[(i32, i32)],
    w: i32,
    want: &Wanted,
    placed: &[(CurveText, PxRect)],
) -> Option<PxRect> {
    candidates
        .iter()
        .map(|&(x, y)| text_box(x, y, w, want.row))
        .find(|b| inside(*b, want.strip) && placed.iter().all(|(_, p)| apart(*b, *p)))
}

/// The boxes of the strip's labels (see the module doc): none overlaps another, and every one
/// is inside the strip but the peak's when the strip is too small for it.
pub fn place(want: &Wanted) -> Vec<(CurveText, PxRect)> {
    let (s, row) = (want.strip, want.row);
    let top = s.y0 + 2;
    let mut placed = Vec::new();
    if let Some((x, w)) = want.peak {
        let right_of = x.map(|x| x + 6);
        let left_of = x.map(|x| x - 6 - w);
        let end = s.x1 - 6 - w;
        let first = match (right_of, left_of) {
            (Some(r), _) if r + w + PAD <= s.x1 => r,
            (_, Some(l)) => l.max(s.x0 + PAD),
            _ => end.max(s.x0 + PAD),
        };
        placed.push((CurveText::Peak, text_box(first, top, w, row)));
    }
    let Some((line, cap_w, verdict_w)) = want.capacity else {
        return placed;
    };
    let (below, above) = (line + 2, line - 1 - row);
    let (left, right) = (s.x0 + 6, s.x1 - 6 - cap_w);
    let cap = [(left, below), (left, above), (right, below), (right, above)];
    if let Some(b) = first_free(&cap, cap_w, want, &placed) {
        placed.push((CurveText::Capacity, b));
    }
    let mid = (want.peak_row + line) / 2 - row / 2;
    let rows = [mid, below, above, top, s.y1 - 1 - row, top + row];
    let peak_x = want.peak.and_then(|(x, _)| x);
    let xs: Vec<i32> = [
        peak_x.map(|x| x - 8 - verdict_w),
        peak_x.map(|x| x + 8),
        Some(s.x1 - 6 - verdict_w),
        Some(s.x0 + 6),
    ]
    .into_iter()
    .flatten()
    .collect();
    let verdict: Vec<(i32, i32)> = rows
        .iter()
        .flat_map(|&y| xs.iter().map(move |&x| (x, y)))
        .collect();
    if let Some(b) = first_free(&verdict, verdict_w, want, &placed) {
        placed.push((CurveText::Verdict, b));
    }
    placed
}

impl<DB: DrawingBackend> Painter<'_, DB> {
    /// The texts of the strip's labels and their boxes, placed by [`place`].
    pub(super) fn curve_texts(
        &self,
        layout: &Layout,
        map: &Mapping,
        space: &Space,
    ) -> Vec<(CurveText, String, PxRect)> {
        let r = layout.curve;
        let capacity = self.style.capacity_of(space.color);
        let cm = curve_mapping(space, &map.view, r, capacity.map(|c| c.bytes));
        let row = (self.style.font_size * 1.2).round() as i32;
        let peak_text = space.peak_time.map(|t| {
            let x = map.x_px(f64::from(t) + 0.5).round() as i32;
            let d = layout.diagram;
            let shown = (x >= d.x0 && x < d.x1).then_some(x);
            let mut text = format!(
                "peak {} bytes ({}) @ step {}",
                group_digits(space.peak_bytes),
                human_bytes(space.peak_bytes),
                group_digits(u64::from(t)),
            );
            if shown.is_none() {
                text.push_str(" (out of view)");
            }
            (shown, text)
        });
        let cap_texts = capacity.map(|c| {
            (
                capacity_label(c),
                verdict_words(space.peak_bytes, c),
                c.bytes,
            )
        });
        let want = Wanted {
            strip: r,
            row,
            peak: (peak_text.as_ref()).map(|(x, t)| (*x, self.text_width(t, 0.92))),
            peak_row: bytes_row(&cm, r, space.peak_bytes),
            capacity: cap_texts.as_ref().map(|(label, words, bytes)| {
                (
                    bytes_row(&cm, r, *bytes),
                    self.text_width(label, 0.92),
                    self.text_width(words, 0.92),
                )
            }),
        };
        let mut texts = Vec::new();
        for (what, b) in place(&want) {
            let text = match (what, &peak_text, &cap_texts) {
                (CurveText::Peak, Some((_, t)), _) => t.clone(),
                (CurveText::Capacity, _, Some((label, _, _))) => label.clone(),
                (CurveText::Verdict, _, Some((_, words, _))) => words.clone(),
                _ => continue,
            };
            texts.push((what, text, b));
        }
        texts
    }

    /// Draws the strip's labels ([`Painter::curve_texts`]): the capacity's and the
    /// verdict's on a light ground, and the peak's too when a capacity line is drawn (it may
    /// run under it; without one the curve under the peak's label stays in view).
    pub(super) fn curve_label_texts(
        &self,
        layout: &Layout,
        map: &Mapping,
        space: &Space,
    ) -> DrawResult<DB> {
        let fits =
            (self.style.capacity_of(space.color)).is_none_or(|c| space.peak_bytes <= c.bytes);
        for (what, text, b) in self.curve_texts(layout, map, space) {
            let color = match what {
                CurveText::Peak => self.style.peak,
                CurveText::Capacity => self.style.capacity_line,
                CurveText::Verdict if fits => self.style.capacity_line,
                CurveText::Verdict => self.style.over_capacity,
            };
            if what != CurveText::Peak || self.style.capacity_of(space.color).is_some() {
                self.fill(b, self.style.background.mix(0.8))?;
            }
            let at = (b.x0 + PAD, (b.y0 + b.y1) / 2);
            self.text(&text, at, 0.92, color, (HPos::Left, VPos::Center))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(h: i32) -> PxRect {
        PxRect {
            x0: 134,
            y0: 30,
            x1: 1100,
            y1: 30 + h,
        }
    }

    fn check(want: &Wanted, placed: &[(CurveText, PxRect)]) {
        for (i, (a, ra)) in placed.iter().enumerate() {
            assert!(inside(*ra, want.strip), "{a:?} {ra:?} outside {want:?}");
            for (b, rb) in &placed[i + 1..] {
                assert!(
                    apart(*ra, *rb),
                    "{a:?} {ra:?} overlaps {b:?} {rb:?} in {want:?}"
                );
            }
        }
    }

    #[test]
    fn the_issue_s_strip_has_its_three_labels_apart() {
        // A 48 px strip, rows of 17 px: the capacity line near the top (15.75 GiB, the
        // curve's top at 1.35 × the 29.8 GiB peak), the peak past the middle.
        let s = strip(48);
        let want = Wanted {
            strip: s,
            row: 17,
            peak: Some((Some(700), 260)),
            peak_row: s.y0 + 13,
            capacity: Some((s.y0 + 30, 150, 120)),
        };
        let placed = place(&want);
        check(&want, &placed);
        let kinds: Vec<CurveText> = placed.iter().map(|p| p.0).collect();
        assert_eq!(
            kinds,
            [CurveText::Peak, CurveText::Capacity, CurveText::Verdict]
        );
        // The peak's label right of its line at the top; the capacity's at the left above
        // its line (below it, 18 px from the strip's end, a 17 px row does not fit); the
        // verdict left of the peak's line.
        assert_eq!(placed[0].1, text_box(706, s.y0 + 2, 260, 17));
        assert_eq!(placed[1].1, text_box(s.x0 + 6, s.y0 + 30 - 1 - 17, 150, 17));
        assert!(placed[2].1.x1 <= 700 - 8 + PAD, "{:?}", placed[2].1);
    }

    #[test]
    fn no_two_labels_overlap_anywhere() {
        let mut verdicts = 0;
        let mut tried = 0;
        for h in [20, 30, 48, 60, 90, 150] {
            let s = strip(h);
            for peak_x in [None, Some(s.x0 + 1), Some(300), Some(640), Some(s.x1 - 2)] {
                for line in (s.y0..s.y1).step_by(3) {
                    for peak_row in [s.y0, s.y0 + h / 3, s.y1 - 1] {
                        for (pw, cw, vw) in [(260, 150, 120), (420, 300, 260), (60, 40, 30)] {
                            let want = Wanted {
                                strip: s,
                                row: 17,
                                peak: Some((peak_x, pw)),
                                peak_row,
                                capacity: Some((line, cw, vw)),
                            };
                            let placed = place(&want);
                            // The peak's label is always there.
                            assert_eq!(placed[0].0, CurveText::Peak);
                            if h >= 48 {
                                check(&want, &placed);
                                tried += 1;
                                verdicts += usize::from(placed.len() == 3);
                            }
                        }
                    }
                }
            }
        }
        // From 48 px up every label finds a place.
        assert_eq!(verdicts, tried);
    }

    #[test]
    fn without_a_capacity_the_peak_alone_is_placed_left_when_right_is_full() {
        let s = strip(60);
        let want = Wanted {
            strip: s,
            row: 17,
            peak: Some((Some(s.x1 - 10), 200)),
            peak_row: s.y0,
            capacity: None,
        };
        let placed = place(&want);
        assert_eq!(
            placed,
            [(
                CurveText::Peak,
                text_box(s.x1 - 16 - 200, s.y0 + 2, 200, 17)
            )]
        );
    }
}
