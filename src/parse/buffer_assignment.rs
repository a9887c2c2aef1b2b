//! Grammar of the `BufferAssignment:` section (`BufferAllocation::ToString`): allocation
//! headers with their flags, ` value:` lines, the "reused by buffers of a different color"
//! block, and the `Total bytes used:` line. One function per line kind; no state.

use super::lex::{all, i64, short_value, u32, u64, In, Res, ShortValue};
use nom::bytes::complete::{tag, take_until};
use nom::Parser;

#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct AllocHeader<'a> {
    pub index: u32,
    pub size: u64,
    pub color: u32,
    pub page: Option<i64>,
    /// `(number, shape, shape index)`.
    pub parameter: Option<(u32, &'a [u8], &'a [u8])>,
    pub output_shape: Option<&'a [u8]>,
    pub constant: bool,
    pub thread_local: bool,
    pub maybe_live_out: bool,
    pub preallocated_temp: bool,
}

/// `allocation N: [PTR, ]size N[, flag]...:`
pub(crate) fn alloc_header(line: In) -> Option<AllocHeader> {
    let (i, _) = tag::<_, _, nom::error::Error<In>>("allocation ")
        .parse(line)
        .ok()?;
    let (i, index) = u32(i).ok()?;
    let (mut i, _) = tag::<_, _, nom::error::Error<In>>(": ").parse(i).ok()?;
    if !i.starts_with(b"size ") {
        // Before 2022-09 a `%p` pointer stood here: `allocation 3: 0x55d1c2a0, size 64`.
        let (rest, _) = take_until::<_, _, nom::error::Error<In>>(", size ")
            .parse(i)
            .ok()?;
        i = &rest[2..];
    }
    let (mut i, size) = nom::sequence::preceded(tag("size "), u64).parse(i).ok()?;
    let mut h = AllocHeader {
        index,
        size,
        ..AllocHeader::default()
    };
    loop {
        if i == b":" {
            return Some(h);
        }
        i = i.strip_prefix(b", ")?;
        i = flag(i, &mut h).ok()?.0;
    }
}

fn flag<'a>(i: In<'a>, h: &mut AllocHeader<'a>) -> Res<'a, ()> {
    let word = |w: &'static str| tag::<_, _, nom::error::Error<In>>(w);
    if let Ok((i, c)) = nom::sequence::preceded(word("color "), u32).parse(i) {
        h.color = c;
        return Ok((i, ()));
    }
    if let Ok((i, p)) = nom::sequence::preceded(word("page "), i64).parse(i) {
        h.page = Some(p);
        return Ok((i, ()));
    }
    if let Ok((i, n)) = nom::sequence::preceded(word("parameter "), u32).parse(i) {
        // `, shape |S|` since 2019-12; `<unknown shape>` stands between the bars too.
        let (i, shape) = match i.strip_prefix(b", shape |") {
            Some(rest) => {
                let (rest, shape) = bars_end(rest)?;
                (rest, shape)
            }
            None => (i, &b""[..]),
        };
        let (i, index) =
            nom::sequence::preceded(word(" at ShapeIndex "), super::lex::shape_index).parse(i)?;
        h.parameter = Some((n, shape, index));
        return Ok((i, ()));
    }
    if let Some(rest) = i.strip_prefix(b"output shape is |") {
        let (i, shape) = bars_end(rest)?;
        h.output_shape = Some(shape);
        return Ok((i, ()));
    }
    for (w, set) in [
        ("constant", &mut h.constant),
        ("thread-local", &mut h.thread_local),
        ("maybe-live-out", &mut h.maybe_live_out),
        ("preallocated-temp", &mut h.preallocated_temp),
    ] {
        if let Some(rest) = i.strip_prefix(w.as_bytes()) {
            *set = true;
            return Ok((rest, ()));
        }
    }
    Err(nom::Err::Error(nom::error::Error::new(
        i,
        nom::error::ErrorKind::Tag,
    )))
}

/// The shape up to its closing `|` (shapes contain no `|`).
fn bars_end(i: In) -> Res<In> {
    match memchr::memchr(b'|', i) {
        Some(p) => Ok((&i[p + 1..], &i[..p])),
        None => Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Char,
        ))),
    }
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ValueLine<'a> {
    pub value: ShortValue<'a>,
    pub size: u64,
    pub offset: u64,
    pub shape: &'a [u8],
}

/// ` value: <...> (size=N,offset=N): SHAPE`
pub(crate) fn value_line(line: In) -> Option<ValueLine> {
    let i = line.strip_prefix(b" value: ")?;
    let (i, value) = short_value(i).ok()?;
    let (i, size) = nom::sequence::preceded(tag(" (size="), u64).parse(i).ok()?;
    let (i, offset) = nom::sequence::preceded(tag(",offset="), u64)
        .parse(i)
        .ok()?;
    let shape = i.strip_prefix(b"): ")?;
    Some(ValueLine {
        value,
        size,
        offset,
        shape,
    })
}

/// `  value: <...> (color=N)` under ` reused by buffers of a different color:`.
pub(crate) fn xcolor_value(line: In) -> Option<(ShortValue, u32)> {
    let i = line.strip_prefix(b"  value: ")?;
    all((
        short_value,
        nom::sequence::delimited(tag(" (color="), u32, tag(")")),
    )
        .parse(i))
}

/// `Total bytes used: N` with an optional ` (human)` (from 2021-08).
pub(crate) fn total_line(line: In) -> Option<u64> {
    let i = line.strip_prefix(b"Total bytes used: ")?;
    let (rest, n) = u64(i).ok()?;
    (rest.is_empty() || (rest.starts_with(b" (") && rest.ends_with(b")"))).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        let h = alloc_header(b"allocation 19: size 0, color 1, preallocated-temp:").unwrap();
        assert_eq!(
            (h.index, h.size, h.color, h.preallocated_temp),
            (19, 0, 1, true)
        );
        let h = alloc_header(
            b"allocation 0: size 1605632, parameter 1, shape |f32[784,512]| at ShapeIndex {}, maybe-live-out:",
        )
        .unwrap();
        assert_eq!(h.parameter, Some((1, &b"f32[784,512]"[..], &b"{}"[..])));
        assert!(h.maybe_live_out && !h.preallocated_temp);
        let h = alloc_header(
            b"allocation 3: 0x55d1c2a0, size 64, parameter 2 at ShapeIndex {1}, page -1:",
        )
        .unwrap();
        assert_eq!(
            (h.size, h.parameter, h.page),
            (64, Some((2, &b""[..], &b"{1}"[..])), Some(-1))
        );
        let h = alloc_header(
            b"allocation 6: size 32, output shape is |(u32[2], u32[2])|, maybe-live-out:",
        )
        .unwrap();
        assert_eq!(h.output_shape, Some(&b"(u32[2], u32[2])"[..]));
        assert!(alloc_header(b"allocation 6: size 32, output shape is |(u32[2]").is_none());
        assert!(alloc_header(b"allocation 6: size 32, bogus:").is_none());
        assert!(alloc_header(b"allocation 6: size 32").is_none());
    }

    #[test]
    fn values() {
        let v = value_line(
            b" value: <25 slice_reduce_fusion{0} @0> (size=512,offset=16): u32[2]{0:T(128)}",
        )
        .unwrap();
        assert_eq!(
            (v.value.id, v.size, v.offset, v.shape),
            (25, 512, 16, &b"u32[2]{0:T(128)}"[..])
        );
        assert!(value_line(b" value: <25 x @0> (size=512,offset=16)").is_none());
        let (v, c) = xcolor_value(b"  value: <7 y @1> (color=1)").unwrap();
        assert_eq!((v.id, c), (7, 1));
        assert_eq!(
            total_line(b"Total bytes used: 52288 (51.1KiB)"),
            Some(52288)
        );
        assert_eq!(total_line(b"Total bytes used: 52288"), Some(52288));
        assert_eq!(total_line(b"Total bytes used: 52x"), None);
    }
}
