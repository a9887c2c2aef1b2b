//! The diagram's contents: allocation bands (every other one shaded, lines between them,
//! labels at the right) and one block per value in view, large ones one by one with a
//! border and their name, small ones merged through the coverage raster, and wide but low
//! ones (a 512-byte value beside a large one) last, drawn [`THIN_MIN_PX`] high with an
//! outline so that no neighbour's border hides them.

use super::coverage::Coverage;
use super::geometry::{Layout, Mapping, PxRect, THIN_MIN_PX};
use super::index::InView;
use super::kind::{border_color, kind_at, kind_color, kind_index};
use super::{DrawError, DrawResult, Painter, SpaceIndex};
use crate::analysis::Space;
use crate::analysis::ValueKind;
use crate::model::{Allocation, Module};
use crate::text::clip_end;
use crate::units::human_bytes;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// Blocks at least this many pixels wide and high are drawn one by one; smaller ones go
/// through the coverage raster.
pub(super) const MIN_BLOCK_PX: i32 = 3;
/// Allocation bands at least this many pixels high are shaded and outlined.
const MIN_BAND_PX: i32 = 5;
/// Blocks at least this large get a darker border.
const BORDER_PX: i32 = 6;
/// At most this many thin blocks in view are drawn taller and outlined
/// ([`Mapping::shown_px`]); more are merged like small ones.
const MAX_THIN_SHOWN: usize = 512;
/// At most this many value names per drawing.
const MAX_BLOCK_LABELS: usize = 400;

/// What the block pass drew.
pub(super) struct Drawn {
    pub(super) count: usize,
    /// Kinds present among the drawn blocks, in [`ValueKind::ALL`] order.
    pub(super) kinds: [bool; ValueKind::ALL.len()],
}

/// `alloc 3 param 0`, `alloc 7 output`, `alloc 12 temp`, ...
fn allocation_label(a: &Allocation) -> String {
    let mut s = format!("alloc {}", a.index);
    let plain = s.len();
    if let Some(p) = &a.parameter {
        s.push_str(&format!(" param {}", p.number));
    }
    if a.output_shape.is_some() || a.flags.maybe_live_out {
        s.push_str(" output");
    }
    if a.flags.constant {
        s.push_str(" constant");
    }
    if a.flags.thread_local {
        s.push_str(" thread-local");
    }
    // Allocations with no flag are temp buffers too.
    if a.flags.preallocated_temp || s.len() == plain {
        s.push_str(" temp");
    }
    s
}

/// Where the band pass stands: the last line and label drawn, whether the band below
/// was tall.
struct BandPass {
    last_line: i32,
    last_label: i32,
    previous_tall: bool,
}

impl<DB: DrawingBackend> Painter<'_, DB> {
    /// Allocation bands: every other one shaded, lines between them, labels at the right.
    pub(super) fn bands(
        &self,
        layout: &Layout,
        map: &Mapping,
        module: &Module,
        space: &Space,
        index: &SpaceIndex,
    ) -> DrawResult<DB> {
        let d = layout.diagram;
        // Bands smaller than this are never tall, whatever the rounding.
        let bytes_px = (map.view.y1 - map.view.y0) / f64::from(d.height().max(1));
        let short = ((f64::from(MIN_BAND_PX) - 1.5) * bytes_px).max(0.0) as u64;
        let size_of = |allocation: u32| {
            module
                .allocations
                .get(allocation as usize)
                .map_or(0, |a| a.size)
        };
        let first = space.layout.partition_point(|s| {
            (s.base.saturating_add(size_of(s.allocation)) as f64) <= map.view.y0
        });
        let mut pass = BandPass {
            last_line: i32::MAX,
            last_label: i32::MAX,
            previous_tall: false,
        };
        let mut next = first;
        while let Some(slot) = space.layout.get(next) {
            if slot.base as f64 >= map.view.y1 {
                break;
            }
            if !pass.previous_tall {
                // A band after a short one draws nothing unless it is tall itself.
                let skip = index.next_slot_of(next, short);
                if skip != next {
                    next = skip;
                    continue;
                }
            }
            let i = next;
            next += 1;
            let Some(a) = module.allocations.get(slot.allocation as usize) else {
                continue;
            };
            let end = slot.base.saturating_add(a.size);
            let Some(px) = map.data_rect_px(map.view.x0, map.view.x1, slot.base as f64, end as f64)
            else {
                continue;
            };
            let tall = a.size > 0 && px.height() >= MIN_BAND_PX;
            if tall && i % 2 == 1 {
                self.fill(px, self.style.band)?;
            }
            let y = map.y_px(slot.base as f64).round() as i32;
            self.band_line(&mut pass, d, y, tall)?;
            self.band_label(&mut pass, layout.labels, px, a)?;
        }
        Ok(())
    }

    /// The line under a band (its base, at `y`), when the band or the one below is tall
    /// enough to tell apart (lines between sliver bands would only hatch the plot).
    fn band_line(&self, pass: &mut BandPass, d: PxRect, y: i32, tall: bool) -> DrawResult<DB> {
        let below_tall = std::mem::replace(&mut pass.previous_tall, tall);
        if (tall || below_tall) && y > d.y0 && y < d.y1 && (pass.last_line - y).abs() >= 2 {
            let line = PxRect {
                x0: d.x0,
                y0: y,
                x1: d.x1,
                y1: y + 1,
            };
            self.fill(line, self.style.boundary)?;
            pass.last_line = y;
        }
        Ok(())
    }

    /// A band's label in the `labels` column, level with the band drawn at `px`: its
    /// allocation, and its size below when there is room for two lines.
    fn band_label(
        &self,
        pass: &mut BandPass,
        labels: PxRect,
        px: PxRect,
        a: &Allocation,
    ) -> DrawResult<DB> {
        let font_px = self.style.font_size;
        if labels.is_empty() || f64::from(px.height()) < font_px * 1.1 {
            return Ok(());
        }
        let mid = (px.y0 + px.y1) / 2;
        if f64::from((pass.last_label - mid).abs()) < font_px * 1.25 {
            return Ok(());
        }
        let max_chars = (f64::from(labels.width()) / (font_px * 0.92 * 0.56)).max(4.0) as usize;
        let text = clip_end(&allocation_label(a), max_chars);
        let two_lines = f64::from(px.height()) >= font_px * 2.8;
        let y_name = if two_lines {
            mid - (font_px * 0.6) as i32
        } else {
            mid
        };
        let left = (HPos::Left, VPos::Center);
        self.text(&text, (labels.x0, y_name), 0.92, self.style.text, left)?;
        if two_lines {
            let size = human_bytes(a.size);
            let y_size = mid + (font_px * 0.6) as i32;
            self.text(&size, (labels.x0, y_size), 0.92, self.style.muted, left)?;
        }
        pass.last_label = mid;
        Ok(())
    }

    /// Every value's block in view: large ones one by one (with a border and, room allowing,
    /// their name), small ones through the coverage raster.
    pub(super) fn blocks(
        &self,
        map: &Mapping,
        module: &Module,
        index: &SpaceIndex,
    ) -> Result<Drawn, DrawError<DB>> {
        let mut drawn = Drawn {
            count: 0,
            kinds: [false; ValueKind::ALL.len()],
        };
        let mut small: Option<Coverage> = None;
        let mut large: Vec<(PxRect, u32, ValueKind)> = Vec::new();
        let mut thin: Vec<(PxRect, PxRect, ValueKind)> = Vec::new();
        index.for_each_in_view(map, |item| {
            let (px, kind, block) = match item {
                InView::Cells(px, kind) => (px, kind, None),
                InView::Block(b, kind) => match map.block_px(&b) {
                    Some(px) => (px, kind, Some(b)),
                    None => return,
                },
            };
            drawn.count += 1;
            drawn.kinds[kind_index(kind)] = true;
            match block {
                Some(b) if px.width() >= MIN_BLOCK_PX && px.height() >= MIN_BLOCK_PX => {
                    large.push((px, b.value, kind));
                }
                // Wide but low: drawn taller, outlined, over its neighbours (below).
                Some(b) if px.width() >= THIN_MIN_PX => {
                    thin.extend(map.shown_px(&b).map(|r| (px, r, kind)));
                }
                _ => small
                    .get_or_insert_with(|| Coverage::new(map.rect))
                    .paint(&px, kind_index(kind) as u8 + 1),
            }
        });
        // In a crowd, thin blocks merge as small ones do: outlining each would hatch the
        // plot, and a crowd is visible anyway.
        let crowd = thin.len() > MAX_THIN_SHOWN;
        if crowd {
            let cov = small.get_or_insert_with(|| Coverage::new(map.rect));
            for (px, _, kind) in thin.drain(..) {
                cov.paint(&px, kind_index(kind) as u8 + 1);
            }
        }
        if let Some(cov) = &small {
            cov.for_each_rect(|r, class| {
                let kind = kind_at(usize::from(class - 1));
                self.fill(r, kind_color(kind))
            })?;
        }
        self.large_blocks(module, &large)?;
        for (_, r, kind) in thin {
            let color = kind_color(kind);
            self.bordered(r, color, border_color(color))?;
        }
        Ok(drawn)
    }

    /// Blocks of at least [`MIN_BLOCK_PX`]: filled, with a border when large, and with
    /// the value's name when it fits (at most [`MAX_BLOCK_LABELS`] names).
    fn large_blocks(&self, module: &Module, large: &[(PxRect, u32, ValueKind)]) -> DrawResult<DB> {
        let mut labels = 0;
        let label_px = (self.style.font_size * 0.92).round() as i32;
        for &(r, value, kind) in large {
            let color = kind_color(kind);
            if r.width() >= BORDER_PX && r.height() >= BORDER_PX {
                self.bordered(r, color, border_color(color))?;
            } else {
                self.fill(r, color)?;
            }
            if self.style.block_labels
                && labels < MAX_BLOCK_LABELS
                && r.width() >= 30
                && r.height() >= label_px + 4
            {
                let Some(v) = module.values.get(value as usize) else {
                    continue;
                };
                if self.block_label(r, &module.value_name(v))? {
                    labels += 1;
                }
            }
        }
        Ok(())
    }

    /// `name` written into the block at `r` when it fits; whether it did.
    fn block_label(&self, r: PxRect, name: &str) -> Result<bool, DrawError<DB>> {
        // Measuring is the costly part (the canvas measures the whole text): no character
        // is narrower than 0.3 em, so a name that long cannot fit.
        let at_least = name.chars().count() as f64 * self.style.font_size * 0.92 * 0.3;
        if at_least > f64::from(r.width()) || self.text_width(name, 0.92) + 8 > r.width() {
            return Ok(false);
        }
        let at = (r.x0 + 4, (r.y0 + r.y1) / 2);
        self.text(name, at, 0.92, self.style.text, (HPos::Left, VPos::Center))?;
        Ok(true)
    }
}
