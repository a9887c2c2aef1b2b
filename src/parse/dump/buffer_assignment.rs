//! The `BufferAssignment:` section (`BufferAllocation::ToString`): its grammar (allocation
//! headers with their flags, ` value:` lines, the "reused by buffers of a different color"
//! block, the `Total bytes used:` line; one function per line kind) and its reader
//! ([`Allocations`]), which adds the allocations and values to the module.

use super::lex::{all, i64, leading_u64, short_value, u32, u64, In, Res, ShortValue};
use super::records::ValueLine;
use super::section::{Cx, Flow, SectionReader};
use crate::model::{AllocFlags, Allocation, EntryParameter};
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

/// ` value: <...> (size=N,offset=N): SHAPE`
pub(crate) fn value_line(line: In) -> Option<ValueLine> {
    let i = line.strip_prefix(b" value: ")?;
    let (i, value) = short_value(i).ok()?;
    let (size, i) = leading_u64(i.strip_prefix(b" (size=")?)?;
    let (offset, i) = leading_u64(i.strip_prefix(b",offset=")?)?;
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

/// Where in the section the reader is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum At {
    #[default]
    Allocations,
    /// Under ` reused by buffers of a different color:`.
    CrossColor,
    /// After the allocations' closing blank line.
    After,
}

/// Reader of the `BufferAssignment:` section.
#[derive(Default)]
pub(in crate::parse) struct Allocations {
    at: At,
}

impl SectionReader for Allocations {
    fn start(&mut self, _header: &[u8], _total: Option<u64>, _cx: &mut Cx) {
        self.at = At::Allocations;
    }

    fn line(&mut self, line: &[u8], cx: &mut Cx) -> Flow {
        if self.at == At::After {
            return self.after(line, cx);
        }
        if line.first() == Some(&b'a') {
            return match alloc_header(line) {
                Some(h) => {
                    self.at = At::Allocations;
                    allocation(&h, cx);
                    Flow::Read
                }
                None => Flow::Malformed("`allocation N: size N[, flags]:`"),
            };
        }
        if line.starts_with(b" value: ") && self.at == At::Allocations {
            return match value_line(line) {
                Some(v) => value(&v, cx),
                None => Flow::Malformed("` value: <ID NAME> (size=N,offset=N): SHAPE`"),
            };
        }
        if line == b" reused by buffers of a different color:" {
            self.at = At::CrossColor;
            return Flow::Read;
        }
        if self.at == At::CrossColor && xcolor_value(line).is_some() {
            return Flow::Read; // Repeats of values listed above (XLA says so); not counted twice.
        }
        if line.is_empty() {
            self.at = At::After;
            return Flow::Read;
        }
        if line.starts_with(b"  ")
            && memchr::memchr(b'[', line).is_some()
            && self.at == At::Allocations
        {
            cx.warn("value line in the pre-2019-09 format, which bufscope does not read".into());
            return Flow::Read;
        }
        Flow::Other("an `allocation` or ` value:` line")
    }

    fn label(&self) -> &'static str {
        match self.at {
            At::Allocations | At::CrossColor => "BufferAssignment (allocations)",
            At::After => "Total bytes used",
        }
    }

    fn end(&mut self, _at_file_end: bool, cx: &mut Cx) {
        if let Some(b) = cx.builder() {
            b.look_up_later();
        }
        self.at = At::Allocations;
    }
}

impl Allocations {
    /// After the blank line that closes the allocations.
    fn after(&mut self, line: &[u8], cx: &mut Cx) -> Flow {
        if line.is_empty() {
            return Flow::Read;
        }
        if line.starts_with(b"allocation ") {
            // A blank line inside the allocations (a joined or edited file): go on reading.
            self.at = At::Allocations;
            return self.line(line, cx);
        }
        Flow::Other("`Total bytes used: N` or `Used values:`")
    }
}

/// An `allocation N:` line: a new allocation (XLA prints them in index order).
fn allocation(h: &AllocHeader, cx: &mut Cx) {
    let expected = cx.builder().map_or(0, |b| b.module.allocations.len());
    if h.index as usize != expected {
        cx.warn(format!(
            "allocation {} where {expected} was expected (XLA prints them in index order): \
             a duplicated, missing or misplaced allocation",
            h.index
        ));
    }
    let Some(b) = cx.builder() else {
        return;
    };
    let s = &mut b.module.strings;
    let parameter = h.parameter.map(|(number, shape, index)| EntryParameter {
        number,
        shape: s.intern_bytes(shape),
        shape_index: s.intern_bytes(index),
    });
    let output_shape = h.output_shape.map(|o| s.intern_bytes(o));
    let at = b.module.values.len() as u32;
    b.module.allocations.push(Allocation {
        index: h.index,
        size: h.size,
        color: h.color,
        page: h.page,
        parameter,
        output_shape,
        flags: AllocFlags {
            constant: h.constant,
            thread_local: h.thread_local,
            maybe_live_out: h.maybe_live_out,
            preallocated_temp: h.preallocated_temp,
        },
        values: at..at,
    });
}

/// A ` value:` line: a value of the last allocation, checked against it.
fn value(v: &ValueLine, cx: &mut Cx) -> Flow {
    let line_no = cx.line_no;
    let Some(b) = cx.builder() else {
        return Flow::Read;
    };
    let Some(a) = b.module.allocations.last() else {
        return Flow::Malformed("an `allocation N:` line before its values");
    };
    let inside = v
        .offset
        .checked_add(v.size)
        .is_some_and(|end| end <= a.size);
    let previous =
        (a.values.end > a.values.start).then(|| b.module.values[a.values.end as usize - 1].id);
    b.add_value(v, line_no);
    if !inside {
        cx.warn(format!("value {} lies outside its allocation", v.value.id));
    }
    if let Some(p) = previous.filter(|&p| p >= v.value.id) {
        cx.warn(format!(
            "value {} follows value {p}: XLA prints an allocation's values in id order \
             (a duplicated or misplaced line)",
            v.value.id
        ));
    }
    Flow::Read
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

    /// Lines of `tests/fixtures/cpu/jax0.6.2/cpu_tiny.buffer-assignment.txt`, one value
    /// moved out of its allocation and one allocation index changed.
    #[test]
    fn reader() {
        let text = "BufferAssignment:
allocation 0: size 4096, output shape is |f32[8,128]|, maybe-live-out:
 value: <9 broadcast_add_fusion @0> (size=4096,offset=0): f32[8,128]{1,0}
allocation 1: size 4096, parameter 1, shape |f32[8,128]| at ShapeIndex {}:
 value: <7 Arg_1.2 @0> (size=4096,offset=8): f32[8,128]{1,0}
allocation 5: size 4096, parameter 0, shape |f32[8,128]| at ShapeIndex {}:
 value: <8 Arg_0.1 @0> (size=4096,offset=0): f32[8,128]{1,0}
 value: <8 Arg_0.1 @0> (size=4096,offset=0)

Total bytes used: 12288 (12.0KiB)";
        let (b, said) = super::super::section::run(&mut Allocations::default(), text);
        let m = &b.module;
        assert_eq!(m.allocations.len(), 3);
        assert_eq!(m.values.len(), 3);
        assert_eq!(m.allocations[1].values, 1..2);
        assert!(m.allocations[0].flags.maybe_live_out);
        assert_eq!(m.allocations[2].parameter.map(|p| p.number), Some(0));
        assert_eq!(m.value_name(&m.values[1]), "Arg_1.2");
        assert_eq!((m.values[1].offset, m.values[1].size), (8, 4096));
        assert_eq!(
            said,
            [
                "5: value 7 lies outside its allocation",
                "6: allocation 5 where 2 was expected (XLA prints them in index order): \
                 a duplicated, missing or misplaced allocation",
                "8: malformed: ` value: <ID NAME> (size=N,offset=N): SHAPE`",
                "10: other: `Total bytes used: N` or `Used values:`",
            ]
        );
    }
}
