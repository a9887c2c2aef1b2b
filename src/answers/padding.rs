//! Padding: per value, allocated size against logical size and, for tiled layouts
//! (`{1,0:T(8,128)}`, `{2,1,0:T(8,128)(2,1)}`), which dimension the tile pads from what to
//! what, in one sentence; per memory space, the padding at a step and over all values, and
//! the values with the most padding.
//!
//! Tiling as XLA lays it out: the first tile covers the most-minor dimensions, its last
//! entry the most-minor one (`minor_to_major[0]`); a tile with more entries than the shape
//! has dimensions pads dimensions of size 1 (a scalar under `T(128)` takes 128 elements).
//! Each dimension is rounded up to a multiple of its tile entry. A later tile (`(2,1)`)
//! tiles the tile before it and pads only where it does not divide it.
//! A value's padding is `size − logical size` ([`crate::query::padding`]); sums over values
//! count each value's own padding (aliases once per value).

use serde::Serialize;

use crate::analysis::Space;
use crate::answers::LiveSet;
use crate::model::Module;
use crate::query::padding;
use crate::shape::logical_size;
use crate::units::human_bytes;

/// One dimension a tile pads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DimPadding {
    /// Logical dimension number; `None` for a dimension of size 1 the tile adds.
    pub dim: Option<u32>,
    pub from: u64,
    pub to: u64,
}

/// What a tiled layout does to a shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Tiling {
    /// The tiles as printed: `T(8,128)(2,1)`.
    pub tile: String,
    /// The dimensions it pads (those it leaves alone are not listed).
    pub dims: Vec<DimPadding>,
    /// Bytes of the tiled shape; `None` when the element size is unknown.
    pub tiled_bytes: Option<u64>,
}

/// A value's padding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ValuePadding {
    pub value: u32,
    pub size: u64,
    pub logical: Option<u64>,
    /// `size − logical` (0 when unknown or negative).
    pub padding: u64,
    pub tiling: Option<Tiling>,
    /// One sentence saying where the padding comes from.
    pub explanation: String,
}

/// A space's padding at one step and over all its values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SpacePadding {
    pub color: u32,
    pub step: u32,
    /// Σ padding over the values live at `step`.
    pub step_padding_bytes: u64,
    /// Σ allocated size over the same values.
    pub step_value_bytes: u64,
    /// Σ padding over every value of the space.
    pub all_padding_bytes: u64,
    /// Values whose logical size is unknown (not counted).
    pub unknown: u32,
    /// The values live at `step` with the most padding, largest first.
    pub top: Vec<ValuePadding>,
}

/// The tiling of a printed shape, if its layout has a tile.
pub fn tiling(shape: &str) -> Option<Tiling> {
    let s = shape.trim();
    if s.starts_with('(') {
        return None;
    }
    let open = s.find('[')?;
    let close = open + s[open..].find(']')?;
    let dims: Vec<u64> = s[open + 1..close]
        .split(',')
        .filter(|d| !d.trim().is_empty())
        .map(|d| d.trim().trim_start_matches("<=").parse().ok())
        .collect::<Option<_>>()?;
    let layout = s[close + 1..].strip_prefix('{')?;
    let layout = &layout[..layout.find('}')?];
    let (order, rest) = layout.split_once(':')?;
    let order: Vec<usize> = if order.trim().is_empty() {
        (0..dims.len()).rev().collect()
    } else {
        order
            .split(',')
            .map(|d| d.trim().parse().ok())
            .collect::<Option<_>>()?
    };
    if order.len() != dims.len() || order.iter().any(|&d| d >= dims.len()) {
        return None;
    }
    let t = rest.find("T(")?;
    let tiles = parse_tiles(&rest[t + 1..])?;
    let first = tiles.first()?;
    let mut padded_dims = Vec::new();
    let mut factor_num: u128 = 1;
    let mut factor_den: u128 = 1;
    for (k, &t) in first.iter().rev().enumerate() {
        let (dim, from) = match order.get(k) {
            Some(&d) => (Some(d as u32), dims[d]),
            None => (None, 1),
        };
        let to = from.div_ceil(t.max(1)) * t.max(1);
        if to != from {
            padded_dims.push(DimPadding { dim, from, to });
        }
        factor_num *= u128::from(to);
        factor_den *= u128::from(from.max(1));
    }
    for pair in tiles.windows(2) {
        for (outer, inner) in pair[0].iter().rev().zip(pair[1].iter().rev()) {
            let inner = (*inner).max(1);
            factor_num *= u128::from(outer.div_ceil(inner) * inner);
            factor_den *= u128::from((*outer).max(1));
        }
    }
    let elements: u128 = dims.iter().map(|&d| u128::from(d)).product();
    let tiled_bytes = logical_size(s).and_then(|l| {
        let zero_dims = elements == 0;
        let bytes = if zero_dims {
            0
        } else {
            (u128::from(l) * factor_num).div_ceil(factor_den)
        };
        u64::try_from(bytes).ok()
    });
    let text_end = rest[t..]
        .find(|c: char| c != 'T' && c != '(' && c != ')' && c != ',' && !c.is_ascii_digit());
    Some(Tiling {
        tile: rest[t..t + text_end.unwrap_or(rest.len() - t)].to_string(),
        dims: padded_dims,
        tiled_bytes,
    })
}

/// `(8,128)(2,1)` → `[[8,128],[2,1]]`; stops at the first character that is not a tile.
fn parse_tiles(text: &str) -> Option<Vec<Vec<u64>>> {
    let mut tiles = Vec::new();
    let mut rest = text;
    while let Some(inner) = rest.strip_prefix('(') {
        let close = inner.find(')')?;
        let tile: Vec<u64> = inner[..close]
            .split(',')
            .map(|n| n.trim().parse().ok())
            .collect::<Option<_>>()?;
        tiles.push(tile);
        rest = &inner[close + 1..];
    }
    (!tiles.is_empty()).then_some(tiles)
}

/// The padding of one value, explained.
pub fn value_padding(module: &Module, value: u32) -> ValuePadding {
    let v = &module.values[value as usize];
    let shape = module.str(v.shape);
    let tiling = tiling(shape);
    let pad = padding(v).unwrap_or(0);
    let explanation = explain(v.size, v.logical_size, pad, tiling.as_ref(), shape);
    ValuePadding {
        value,
        size: v.size,
        logical: v.logical_size,
        padding: pad,
        tiling,
        explanation,
    }
}

fn explain(
    size: u64,
    logical: Option<u64>,
    pad: u64,
    tiling: Option<&Tiling>,
    shape: &str,
) -> String {
    let Some(logical) = logical else {
        return "The logical size is unknown (dynamic shape), so the padding is too.".to_string();
    };
    if pad == 0 {
        return format!(
            "No padding: {} allocated for {} of data.",
            human_bytes(size),
            human_bytes(logical)
        );
    }
    match tiling {
        Some(t) if !t.dims.is_empty() => {
            let dims: Vec<String> = t
                .dims
                .iter()
                .map(|d| match d.dim {
                    Some(n) => format!("dim {n} padded {} → {}", d.from, d.to),
                    None if shape.contains("[]") => {
                        format!("the scalar padded {} → {} elements", d.from, d.to)
                    }
                    None => format!("an added dim padded {} → {}", d.from, d.to),
                })
                .collect();
            format!(
                "{} by tile {} ({} of padding).",
                join_and(&dims),
                t.tile,
                human_bytes(pad)
            )
        }
        Some(t) => format!(
            "Tile {} pads no dimension; {} more than the {} of data (backend alignment).",
            t.tile,
            human_bytes(pad),
            human_bytes(logical)
        ),
        None if shape.trim_start().starts_with('(') => format!(
            "A tuple's table of element pointers: {} allocated for {} (backend alignment).",
            human_bytes(size),
            human_bytes(logical)
        ),
        None => format!(
            "No tiled layout; {} more than the {} of data (backend alignment).",
            human_bytes(pad),
            human_bytes(logical)
        ),
    }
}

fn join_and(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => capitalised(one),
        [init @ .., last] => capitalised(&format!("{} and {last}", init.join(", "))),
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or_else(String::new, |f| {
        f.to_uppercase().collect::<String>() + c.as_str()
    })
}

/// The padding of `space` at `live.step` and over all its values, with the `top` values of
/// the live set with the most padding.
pub fn space_padding(module: &Module, space: &Space, live: &LiveSet, top: usize) -> SpacePadding {
    step_padding(module, live, top, all_padding(module, space))
}

/// The padding over every value of a space (the same at every step).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllPadding {
    /// Σ padding over the values whose logical size is known.
    pub bytes: u64,
    /// Values whose logical size is unknown (not counted).
    pub unknown: u32,
}

/// The padding over every value of `space`.
pub fn all_padding(module: &Module, space: &Space) -> AllPadding {
    let mut all = AllPadding::default();
    for &i in space.timed.iter().chain(&space.timeless) {
        match padding(&module.values[i as usize]) {
            Some(p) => all.bytes = all.bytes.saturating_add(p),
            None => all.unknown += u32::from(module.values[i as usize].logical_size.is_none()),
        }
    }
    all
}

/// [`space_padding`] of the live set's space, whose padding over every value is `all`.
pub fn step_padding(module: &Module, live: &LiveSet, top: usize, all: AllPadding) -> SpacePadding {
    let mut ranked: Vec<(u64, u32)> = live
        .values
        .iter()
        .map(|lv| {
            (
                padding(&module.values[lv.value as usize]).unwrap_or(0),
                lv.value,
            )
        })
        .collect();
    let step_padding = ranked.iter().fold(0u64, |s, r| s.saturating_add(r.0));
    // Most padding first, then by value: only the first `top` are sorted.
    let order = |a: &(u64, u32), b: &(u64, u32)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
    if ranked.len() > top {
        ranked.select_nth_unstable_by(top, order);
        ranked.truncate(top);
    }
    ranked.sort_unstable_by(order);
    SpacePadding {
        color: live.color,
        step: live.step,
        step_padding_bytes: step_padding,
        step_value_bytes: live.value_bytes,
        all_padding_bytes: all.bytes,
        unknown: all.unknown,
        top: ranked
            .iter()
            .take(top)
            .filter(|r| r.0 > 0)
            .map(|r| value_padding(module, r.1))
            .collect(),
    }
}

/// Σ (allocated − logical) over the values of `space` live at its peak
/// (`peak_padding_bytes` of the summary); 0 when the curve has no peak.
pub fn peak_padding_bytes(module: &Module, space: &Space) -> u64 {
    space.live_at_peak.iter().fold(0u64, |s, &i| {
        s.saturating_add(padding(&module.values[i as usize]).unwrap_or(0))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(shape: &str) -> Vec<(Option<u32>, u64, u64)> {
        tiling(shape)
            .unwrap()
            .dims
            .iter()
            .map(|d| (d.dim, d.from, d.to))
            .collect()
    }

    #[test]
    fn tiles_pad_the_minor_dimensions() {
        // {1,0}: dim 1 is most minor, under 128; dim 0 under 8.
        assert_eq!(dims("f32[64,64]{1,0:T(8,128)}"), [(Some(1), 64, 128)]);
        assert_eq!(
            tiling("f32[64,64]{1,0:T(8,128)}").unwrap().tiled_bytes,
            Some(32768)
        );
        // {0,1}: dim 0 is most minor.
        assert_eq!(dims("f32[64,32]{0,1:T(8,128)}"), [(Some(0), 64, 128)]);
        assert_eq!(
            dims("f32[100,3]{1,0:T(8,128)}"),
            [(Some(1), 3, 128), (Some(0), 100, 104)]
        );
        // A scalar takes a whole tile.
        assert_eq!(dims("f32[]{:T(128)}"), [(None, 1, 128)]);
        assert_eq!(tiling("f32[]{:T(128)}").unwrap().tiled_bytes, Some(512));
        // The second tile divides the first: no more padding.
        let t = tiling("bf16[8,2048,128]{2,1,0:T(8,128)(2,1)}").unwrap();
        assert_eq!(
            (t.tile.as_str(), t.dims.len(), t.tiled_bytes),
            ("T(8,128)(2,1)", 0, Some(4194304))
        );
        assert_eq!(tiling("f32[64,64]{1,0}"), None);
        assert_eq!(tiling("(f32[], f32[])"), None);
        assert_eq!(tiling("f32[2]{5:T(128)}"), None);
    }

    #[test]
    fn sentences() {
        let t = tiling("f32[100,3]{1,0:T(8,128)}");
        let s = explain(
            53248,
            Some(1200),
            52048,
            t.as_ref(),
            "f32[100,3]{1,0:T(8,128)}",
        );
        assert_eq!(s, "Dim 1 padded 3 → 128 and dim 0 padded 100 → 104 by tile T(8,128) (50.8 KiB of padding).");
        let t = tiling("f32[]{:T(128)}");
        let s = explain(512, Some(4), 508, t.as_ref(), "f32[]{:T(128)}");
        assert_eq!(
            s,
            "The scalar padded 1 → 128 elements by tile T(128) (508 B of padding)."
        );
    }
}
