//! Compile-log lines about memory that are not out-of-memory messages ([`CompilerNote`]):
//!
//! ```text
//! hlo_rematerialization.cc:2948] Can't reduce memory use below 22.27GiB (23912… bytes) by rematerialization; only reduced to 37.90GiB (… bytes), down from 38.20GiB (… bytes) originally
//! [spmd] Involuntary full rematerialization. The compiler was not able to go from sharding {devices=[1,4]<=[4]} to {replicated} without doing a full rematerialization of the tensor for HLO operation: %dot.12 = f32[…] dot(…), metadata={op_name="jit(f)/dot_general" …}
//! ```
//!
//! Each is one line (its log prefix removed by `lines`); a figure the line lost is `None`.

use super::fields::operator;
use super::lines::Line;
use crate::model::oom::{ByteSize, CompilerNote};
use super::size::size;

const REMAT: &str = "Can't reduce memory use below ";
const INVOLUNTARY: &str = "Involuntary full rematerialization";

/// The note on `line`, if it is one.
pub(crate) fn note(line: &Line) -> Option<CompilerNote> {
    let t = line.text.trim();
    if let Some(p) = t.find(REMAT) {
        let rest = &t[p..];
        return Some(CompilerNote::RematerializationShortfall {
            line: line.no,
            target: size_after(rest, REMAT),
            reached: size_after(rest, "only reduced to "),
            original: size_after(rest, "down from "),
        });
    }
    let p = t.find(INVOLUNTARY)?;
    let rest = &t[p..];
    let from = rest.find("from sharding ").map(|q| &rest[q + "from sharding ".len()..]);
    let from_sharding = from.and_then(braced);
    let to_sharding = from
        .zip(from_sharding)
        .and_then(|(f, s)| f[s.len()..].trim_start().strip_prefix("to "))
        .and_then(|r| braced(r.trim_start()));
    let op = rest.find("HLO operation: ").map(|q| &rest[q + "HLO operation: ".len()..]);
    let instruction = op
        .map(|o| o.trim_start().trim_start_matches('%'))
        .map(|o| &o[..o.find([' ', ',']).unwrap_or(o.len())])
        .filter(|n| !n.is_empty())
        .map(str::to_string);
    let op_name = op
        .and_then(|o| o.find("metadata={").map(|q| &o[q + "metadata={".len()..]))
        .and_then(operator)
        .and_then(|o| o.op_name);
    Some(CompilerNote::InvoluntaryFullRematerialization {
        line: line.no,
        instruction,
        from_sharding: from_sharding.map(str::to_string),
        to_sharding: to_sharding.map(str::to_string),
        op_name,
    })
}

/// The size right after `key`, with the exact count beside it when printed.
fn size_after(t: &str, key: &str) -> Option<ByteSize> {
    let p = t.find(key)?;
    size(&t[p + key.len()..]).ok().map(|(_, s)| s)
}

/// `{…}` at the start of `t`, braces balanced; None when it does not close.
fn braced(t: &str) -> Option<&str> {
    if !t.starts_with('{') {
        return None;
    }
    let mut depth = 0usize;
    for (k, c) in t.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&t[..=k]);
                }
            }
            _ => {}
        }
    }
    None
}
