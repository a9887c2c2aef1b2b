//! Axis ticks of the block diagram: where they go and what they say, chosen so that at
//! every zoom the labels are readable, distinct and never overlap (each label's box is
//! measured with the drawing's own text width).
//!
//! * Steps ([`step_axis`]): a 1-2-5 spacing, the smallest whose widest label (exact, digits
//!   grouped: `162,265`) fits between two ticks.
//! * Bytes ([`byte_axis`]): the diagram's y axis is the memory space's allocations stacked in
//!   index order (every allocation of the space, thread-local ones too, though their values
//!   have no live range and are not drawn), so a height is *an allocation and an offset in
//!   it*, the offset the details panel shows. Ticks are allocation starts, labelled
//!   `alloc 12`, and offsets inside an allocation a power of two apart, labelled relative to
//!   its start: `+1.25 MiB`, `+1,088 KiB`, or at deep zoom exact bytes (`+734,003,264 B`,
//!   then `…003,328 B` for the ticks above it, whose leading digits are the same). Offsets within
//!   one allocation are always distinct; the same `+512 KiB` in two allocations has the
//!   second one's `alloc N` start between them (or below the view).

use super::geometry::{Mapping, PxRect};
use crate::analysis::Slot;
use crate::units::group_digits;

/// A labelled tick.
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    /// Where along its axis, in pixels: a column for steps, a row for bytes.
    pub px: i32,
    pub label: String,
    /// The box of its label.
    pub rect: PxRect,
    /// Byte ticks: the allocation (position in `Module::allocations`) it is in.
    pub allocation: Option<u32>,
    /// Byte ticks: the start of that allocation (labelled `alloc N`).
    pub boundary: bool,
}

/// How labels are measured and where they may go.
pub struct Fit<'a> {
    /// A label's width in pixels.
    pub width: &'a dyn Fn(&str) -> i32,
    /// A label's height in pixels.
    pub height: i32,
    /// Pixels kept free between two labels.
    pub gap: i32,
    /// Every label's box lies inside (a label near an end is moved in, up to half its size).
    pub bounds: PxRect,
}

impl Fit<'_> {
    /// The box of a label of `width` centred on `centre` (one axis) and spanning `across`
    /// (the other), moved inside the bounds; `None` when it cannot be.
    fn place(&self, centre: i32, size: i32, lo: i32, hi: i32) -> Option<(i32, i32)> {
        let start = (centre - size / 2).max(lo);
        let start = start.min(hi - size);
        let moved = (start + size / 2 - centre).abs();
        (start >= lo && moved <= size / 2 + 1).then_some((start, start + size))
    }
}

/// Ticks of the step axis of `map`, labels centred under them with their top at `top`.
pub fn step_axis(map: &Mapping, fit: &Fit, top: i32) -> Vec<Tick> {
    let (lo, hi) = (map.view.x0, map.view.x1);
    let width = f64::from(map.rect.width());
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo || width <= 0.0 {
        return Vec::new();
    }
    let px_per_step = width / (hi - lo);
    let b = &fit.bounds;
    for step in spacings() {
        let spacing = step as f64 * px_per_step;
        if spacing < f64::from(fit.height + fit.gap) {
            continue;
        }
        let ticks = multiples(lo, hi, step);
        let labels: Vec<String> = ticks.iter().map(|&t| group_digits(t)).collect();
        let widest = labels.iter().map(|l| (fit.width)(l)).max().unwrap_or(0);
        if spacing < f64::from(widest + fit.gap) && step < u64::MAX / 10 {
            continue;
        }
        let mut placed: Vec<Tick> = Vec::new();
        let candidates = ticks.into_iter().zip(labels).filter_map(|(t, label)| {
            let px = map.x_px(t as f64).round() as i32;
            if px < map.rect.x0 || px >= map.rect.x1 {
                return None;
            }
            let (x0, x1) = fit.place(px, (fit.width)(&label), b.x0, b.x1)?;
            let rect = PxRect {
                x0,
                y0: top,
                x1,
                y1: top + fit.height,
            };
            (rect.y0 >= b.y0 && rect.y1 <= b.y1).then_some(Tick {
                px,
                label,
                rect,
                allocation: None,
                boundary: false,
            })
        });
        // A label moved in at an end may now touch its neighbour.
        for t in candidates {
            if placed
                .last()
                .is_none_or(|p| p.rect.x1 + fit.gap <= t.rect.x0)
            {
                placed.push(t);
            }
        }
        return placed;
    }
    Vec::new()
}

/// 1, 2, 5, 10, 20, 50, ... up to the largest `u64` of that form.
fn spacings() -> impl Iterator<Item = u64> {
    (0..19u32).flat_map(|m| [1u64, 2, 5].map(|k| k * 10u64.pow(m)))
}

/// Multiples of `step` in `lo ..= hi` (non-negative ones only; none when over 10,000).
fn multiples(lo: f64, hi: f64, step: u64) -> Vec<u64> {
    let step_f = step as f64;
    // Float to integer casts saturate (NaN becomes 0), so these are in range.
    let first = (lo.max(0.0) / step_f).ceil() as u64;
    let last = (hi.max(0.0) / step_f).floor() as u64;
    if first > last || last - first > 10_000 {
        return Vec::new();
    }
    (first..=last).map(|k| k.saturating_mul(step)).collect()
}

/// A tick before placing: its height in bytes, label and how much it matters.
struct Candidate {
    at: u64,
    /// Empty for an allocation's start until it is among those that may be placed (a space
    /// may have tens of thousands of allocations in view: see [`byte_axis`]).
    label: String,
    allocation: u32,
    boundary: bool,
    priority: (u8, u64),
    /// For a `…` label: the whole one, used when no tick of its allocation is placed below.
    full: Option<String>,
}

/// Ticks of the byte axis of `map` over the allocations `slots` (a space's layout);
/// `alloc(a)` is allocation `a`'s printed index and size. Labels end at column `right`,
/// centred on their row.
pub fn byte_axis(
    map: &Mapping,
    slots: &[Slot],
    alloc: &dyn Fn(u32) -> Option<(u64, u64)>,
    fit: &Fit,
    right: i32,
) -> Vec<Tick> {
    let v = &map.view;
    let height = f64::from(map.rect.height());
    if !v.is_valid() || height <= 0.0 {
        return Vec::new();
    }
    let bytes_px = (v.y1 - v.y0) / height;
    let sep = f64::from(fit.height + fit.gap) * bytes_px;
    let size_of = |s: &Slot| alloc(s.allocation).map_or(0, |(_, size)| size);
    let first = slots.partition_point(|s| (s.base.saturating_add(size_of(s)) as f64) <= v.y0);
    let mut strong = Vec::new();
    let mut weak = Vec::new();
    for s in &slots[first..] {
        if s.base as f64 >= v.y1 {
            break;
        }
        let Some((_, size)) = alloc(s.allocation) else {
            continue;
        };
        let big = size as f64 >= sep;
        if s.base as f64 >= v.y0 {
            let c = Candidate {
                at: s.base,
                label: String::new(),
                allocation: s.allocation,
                boundary: true,
                priority: (if big { 3 } else { 1 }, size),
                full: None,
            };
            if big { &mut strong } else { &mut weak }.push(c);
        }
        if big {
            strong.extend(inner_ticks(s, size, v.y0, v.y1, sep));
        }
    }
    // Many small allocations in view: only the largest can get a label anyway.
    const WEAK: usize = 256;
    if weak.len() > WEAK {
        weak.select_nth_unstable_by_key(WEAK, |c| std::cmp::Reverse(c.priority));
        weak.truncate(WEAK);
    }
    strong.append(&mut weak);
    strong.sort_by_key(|c| std::cmp::Reverse(c.priority));
    // Labelled only now: formatting every allocation's label took longer than the rest of
    // the frame (46,594 allocations on the 94 MB dump).
    for c in strong.iter_mut().filter(|c| c.boundary) {
        if let Some((index, _)) = alloc(c.allocation) {
            c.label = format!("alloc {index}");
        }
    }
    place_rows(map, fit, right, strong)
}

/// Offsets inside the allocation at `s` (of `size` bytes) between `y0` and `y1`, a power
/// of two apart, at least `sep` bytes.
fn inner_ticks(s: &Slot, size: u64, y0: f64, y1: f64, sep: f64) -> Vec<Candidate> {
    let mut step = 1u64;
    while (step as f64) < sep && step < (1 << 62) {
        step <<= 1;
    }
    let step_f = step as f64;
    let lo = ((y0 - s.base as f64) / step_f).ceil().max(1.0) as u64;
    let end = (y1 - s.base as f64).min(size as f64);
    let hi = (end / step_f).floor().max(0.0) as u64;
    if lo > hi || hi - lo > 10_000 {
        return Vec::new();
    }
    let offsets: Vec<u64> = (lo..=hi)
        .map(|k| k.saturating_mul(step))
        .filter(|&o| o < size)
        .collect();
    let labels = offset_labels(&offsets, step);
    offsets
        .into_iter()
        .zip(labels)
        .enumerate()
        .map(|(i, (o, label))| Candidate {
            at: s.base.saturating_add(o),
            full: label
                .starts_with('…')
                .then(|| format!("+{} B", group_digits(o))),
            label,
            allocation: s.allocation,
            boundary: false,
            // The lowest first: the others may be written relative to it.
            priority: (2, u64::from(i == 0)),
        })
        .collect()
}

/// Labels of offsets `step` apart (a power of two) inside one allocation: in the unit of the
/// largest with as many decimals as `step` needs (at most 3), else one unit down, else
/// exact bytes with the leading digits the ticks share written once.
pub fn offset_labels(offsets: &[u64], step: u64) -> Vec<String> {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let largest = offsets.iter().copied().max().unwrap_or(0).max(step);
    let unit = (0..UNITS.len())
        .rev()
        .find(|&j| largest >= 1u64 << (10 * j))
        .unwrap_or(0);
    // Under 1 KiB apart in KiB: bytes read better (`+1,536 B`, not `+1.5 KiB`).
    let units = if unit == 1 && step < 1024 {
        &[][..]
    } else {
        &[unit, unit.saturating_sub(1)][..]
    };
    for &j in units {
        let scale = (1u64 << (10 * j)) as f64;
        // One unit down, only whole numbers (`+1,088 KiB`).
        let most = if j == unit { 3 } else { 0 };
        let decimals =
            (0..=most).find(|&d| (u128::from(step) * 10u128.pow(d)) % (1u128 << (10 * j)) == 0);
        if let (Some(d), true) = (decimals, j > 0) {
            return offsets
                .iter()
                .map(|&o| {
                    let x = o as f64 / scale;
                    let whole = group_digits(x.trunc() as u64);
                    let frac = format!("{:.*}", d as usize, x.fract());
                    // `0.250` → `.250`; `1.0` rounds no fraction up (exact by construction).
                    let frac = frac.trim_start_matches('0');
                    format!("+{whole}{frac} {}", UNITS[j])
                })
                .collect();
        }
    }
    let first = offsets.first().copied().unwrap_or(0);
    let last = offsets.last().copied().unwrap_or(0);
    if last < 1_000_000 || offsets.len() < 2 {
        return offsets
            .iter()
            .map(|&o| format!("+{} B", group_digits(o)))
            .collect();
    }
    let mut groups = 1u32;
    while 10u64.saturating_pow(3 * groups) <= last - first && groups < 6 {
        groups += 1;
    }
    let modulus = 10u64.saturating_pow(3 * groups);
    offsets
        .iter()
        .enumerate()
        .map(|(i, &o)| {
            if i == 0 {
                format!("+{} B", group_digits(o))
            } else {
                let tail = group_digits(modulus + o % modulus);
                // `modulus + tail` has a leading `1,` to drop: the zero-padded groups remain.
                format!("…{} B", &tail[2..])
            }
        })
        .collect()
}

/// Places candidates in order (the most important first) where their label fits.
fn place_rows(map: &Mapping, fit: &Fit, right: i32, order: Vec<Candidate>) -> Vec<Tick> {
    let b = &fit.bounds;
    let mut placed: Vec<(Tick, Option<String>)> = Vec::new();
    for c in order {
        let py = map.y_px(c.at as f64).round() as i32;
        if py < map.rect.y0 || py > map.rect.y1 {
            continue;
        }
        let Some((y0, y1)) = fit.place(py, fit.height, b.y0, b.y1) else {
            continue;
        };
        let w = (fit.width)(&c.label);
        let rect = PxRect {
            x0: right - w,
            y0,
            x1: right,
            y1,
        };
        if rect.x0 < b.x0 || rect.x1 > b.x1 {
            continue;
        }
        let at = placed.partition_point(|(t, _)| t.rect.y0 < y0);
        let clear = |(t, _): &(Tick, _)| t.rect.y1 + fit.gap <= y0 || y1 + fit.gap <= t.rect.y0;
        let free = placed.get(at).is_none_or(clear)
            && at
                .checked_sub(1)
                .and_then(|i| placed.get(i))
                .is_none_or(clear);
        if free {
            let tick = Tick {
                px: py,
                label: c.label,
                rect,
                allocation: Some(c.allocation),
                boundary: c.boundary,
            };
            placed.insert(at, (tick, c.full));
        }
    }
    // Bottom up; a `…` label with no tick of its allocation below it is written whole
    // (only its width changes: rows stay apart), or left out when that does not fit.
    placed.reverse();
    let mut anchored: Vec<u32> = Vec::new();
    let mut ticks = Vec::with_capacity(placed.len());
    for (mut t, full) in placed {
        let a = t.allocation.unwrap_or(u32::MAX);
        if !t.boundary && !anchored.contains(&a) {
            if let Some(full) = full {
                // Without its unit when too wide (the `…` labels above it keep theirs).
                let short = full.trim_end_matches(" B").to_string();
                let Some(label) = [full, short]
                    .into_iter()
                    .find(|l| right - (fit.width)(l) >= b.x0)
                else {
                    continue;
                };
                t.rect.x0 = right - (fit.width)(&label);
                t.label = label;
            }
            anchored.push(a);
        }
        ticks.push(t);
    }
    ticks
}

#[cfg(test)]
mod tests;
