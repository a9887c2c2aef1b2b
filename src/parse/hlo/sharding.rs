//! An instruction's `sharding={…}` attribute as the tiles it cuts a value into
//! ([`Tiling`]), from either form XLA prints: the classic `{replicated}`,
//! `{maximal device=N}`, `{devices=[2,1,2]<=[4] last_tile_dim_replicate}` (or with a device
//! list, or `last_tile_dims={manual, replicated}`), and Shardy's
//! `{mesh['data'=2,'model'=2], [{'model'}, {}]}` (sub-axes `'x':(1)2` count their size).
//!
//! Owns: this attribute's grammar. A tuple's sharding (`{{…}, {…}}`), a mesh named but not
//! printed (`@mesh`) or anything else it does not know gives `None`: no guess.

use crate::model::hlo::Tiling;

/// The tiling `text` (as printed, braces included) says.
pub fn tiling(text: &str) -> Option<Tiling> {
    let inner = text.trim().strip_prefix('{')?.strip_suffix('}')?.trim();
    if inner.starts_with('{') {
        return None;
    }
    if inner == "replicated" {
        return Some(Tiling::default());
    }
    if inner.starts_with("maximal") || inner.starts_with("manual") {
        return Some(Tiling { special: true, ..Tiling::default() });
    }
    if let Some(rest) = inner.strip_prefix("devices=[") {
        return classic(rest);
    }
    if let Some(rest) = inner.strip_prefix("mesh[") {
        return mesh(rest);
    }
    None
}

/// After `devices=[`: `2,1,2]<=[4] last_tile_dim_replicate`.
fn classic(rest: &str) -> Option<Tiling> {
    let (dims, after) = rest.split_once(']')?;
    let mut tiles = (dims.split(','))
        .map(|d| d.trim().parse::<u32>().ok())
        .collect::<Option<Vec<u32>>>()?;
    let mut replicas = 1u32;
    let mut special = false;
    if after.contains("last_tile_dim_replicate") {
        replicas = tiles.pop()?;
    } else if let Some((_, kinds)) = after.split_once("last_tile_dims={") {
        let kinds = kinds.split('}').next()?;
        for kind in kinds.split(',').rev() {
            let n = tiles.pop()?;
            match kind.trim() {
                "replicated" => replicas = replicas.checked_mul(n)?,
                _ => special = true,
            }
        }
    }
    Some(Tiling { tiles, replicas: Some(replicas), special, ..Tiling::default() })
}

/// After `mesh[`: `'data'=2,'model'=2], [{'model'}, {}]` or `…], replicated`.
fn mesh(rest: &str) -> Option<Tiling> {
    let (axes_text, after) = rest.split_once(']')?;
    let axes = (axes_text.split(','))
        .map(|a| {
            let (name, size) = a.split_once('=')?;
            Some((unquote(name)?.to_string(), size.trim().parse::<u32>().ok()?))
        })
        .collect::<Option<Vec<(String, u32)>>>()?;
    let devices = axes.iter().try_fold(1u32, |p, a| p.checked_mul(a.1))?;
    let after = after.trim().strip_prefix(',')?.trim();
    if after.starts_with("replicated") {
        return Some(Tiling { replicas: Some(devices), axes, ..Tiling::default() });
    }
    let dims = after.strip_prefix('[')?;
    let dims = &dims[..dims.find(']')?];
    let mut tiles = Vec::new();
    let mut dim_axes = Vec::new();
    for dim in dims.split('}') {
        let Some(dim) = dim.trim().trim_start_matches(',').trim().strip_prefix('{') else {
            continue;
        };
        let (mut tile, mut names) = (1u32, Vec::new());
        for axis in dim.split(',').map(str::trim).filter(|a| !a.is_empty() && *a != "?") {
            let (name, sub) = match axis.split_once(':') {
                Some((n, s)) => (n, Some(s)),
                None => (axis, None),
            };
            let name = unquote(name)?;
            let size = match sub {
                // `'x':(1)2`: a sub-axis of size 2.
                Some(s) => s.rsplit(')').next()?.trim().parse().ok()?,
                None => axes.iter().find(|a| a.0 == name)?.1,
            };
            tile = tile.checked_mul(size)?;
            names.push(name.to_string());
        }
        tiles.push(tile);
        dim_axes.push(names);
    }
    let shards = tiles.iter().try_fold(1u32, |p, &t| p.checked_mul(t))?;
    let replicas = (shards > 0 && devices % shards == 0).then(|| devices / shards);
    Some(Tiling { tiles, replicas, axes, dim_axes, special: false })
}

fn unquote(s: &str) -> Option<&str> {
    s.trim().strip_prefix('\'')?.strip_suffix('\'')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms() {
        let t = tiling("{mesh['data'=2,'model'=2], [{'model'}, {}]}").unwrap();
        assert_eq!((t.tiles.clone(), t.replicas, t.shards()), (vec![2, 1], Some(2), 2));
        assert_eq!(t.dim_axes, [vec!["model".to_string()], vec![]]);
        let t = tiling("{mesh['data'=2,'model'=2], [{'data', 'model'}, {?}]}").unwrap();
        assert_eq!((t.tiles, t.replicas), (vec![4, 1], Some(1)));
        let t = tiling("{mesh['data'=2,'model'=2], replicated}").unwrap();
        assert!(t.is_replicated());
        assert_eq!(t.replicas, Some(4));
        let t = tiling("{devices=[2,1,2]<=[4] last_tile_dim_replicate}").unwrap();
        assert_eq!((t.tiles, t.replicas), (vec![2, 1], Some(2)));
        let t = tiling("{devices=[1,4]0,1,2,3}").unwrap();
        assert_eq!((t.shards(), t.replicas), (4, Some(1)));
        let t = tiling("{devices=[2,2,3]<=[12] last_tile_dims={manual, replicated}}").unwrap();
        assert_eq!((t.tiles.clone(), t.replicas, t.special), (vec![2], Some(3), true));
        assert!(tiling("{replicated}").unwrap().is_replicated());
        assert!(tiling("{maximal device=0}").unwrap().special);
        assert_eq!(tiling("{{replicated}, {replicated}}"), None);
        assert_eq!(tiling("{@mesh, [{'x'}]}"), None);
        assert_eq!(tiling("garbage"), None);
        assert_eq!(tiling("{devices=[a]}"), None);
        // Hostile figures: no overflow, no panic.
        let t = tiling("{devices=[4294967295,4294967295,4294967295]<=[1]}").unwrap();
        assert_eq!(t.shards(), u64::MAX);
        assert_eq!(tiling("{mesh['a'=4294967295,'b'=2], [{'a', 'b'}]}"), None);
        for s in ["{", "}", "{mesh[", "{mesh[]", "{mesh['a'=2], [{'a'", "{devices=[2]<=[2] last_tile_dims={", "{devices=[]}"] {
            let _ = tiling(s);
        }
    }
}
