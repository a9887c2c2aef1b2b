//! Tokens shared by every section's grammar: integers, names, shape indices, the
//! `<id name{index} (phi) @color>` value token, and byte-string helpers.

use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::{digit1, i64 as nom_i64, u32 as nom_u32, u64 as nom_u64};
use nom::combinator::{opt, recognize};
use nom::sequence::{delimited, preceded};
use nom::{IResult, Parser};

pub(crate) type In<'a> = &'a [u8];
pub(crate) type Res<'a, T> = IResult<In<'a>, T>;

pub(crate) fn u64(i: In) -> Res<u64> {
    nom_u64(i)
}

pub(crate) fn u32(i: In) -> Res<u32> {
    nom_u32(i)
}

pub(crate) fn i64(i: In) -> Res<i64> {
    nom_i64(i)
}

/// An instruction name. XLA sanitises names to `[A-Za-z0-9_.-]`; anything up to a
/// delimiter is accepted so that an unusual name still reads.
pub(crate) fn name(i: In) -> Res<In> {
    take_while1(|c: u8| !matches!(c, b' ' | b'{' | b'}' | b'<' | b'>' | b':' | b',' | b'\t'))(i)
}

/// `{}`, `{0}`, `{1,2}`: kept as printed.
pub(crate) fn shape_index(i: In) -> Res<In> {
    recognize(delimited(
        tag("{"),
        take_while(|c: u8| c.is_ascii_digit() || c == b','),
        tag("}"),
    ))
    .parse(i)
}

/// The parts of `<id name{index} (phi) @color>` (`HloValue::ToShortString`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShortValue<'a> {
    pub id: u32,
    pub name: &'a [u8],
    pub index: &'a [u8],
    pub phi: bool,
    pub color: Option<u32>,
}

pub(crate) fn short_value(i: In) -> Res<ShortValue> {
    let (i, _) = tag("<")(i)?;
    let (i, id) = u32(i)?;
    let (i, _) = tag(" ")(i)?;
    let (i, name) = name(i)?;
    let (i, index) = opt(shape_index).parse(i)?;
    let (i, phi) = opt(tag(" (phi)")).parse(i)?;
    let (i, color) = opt(preceded(tag(" @"), u32)).parse(i)?;
    let (i, _) = tag(">")(i)?;
    let value = ShortValue {
        id,
        name,
        index: index.unwrap_or(b""),
        phi: phi.is_some(),
        color,
    };
    Ok((i, value))
}

/// Digits grouped in threes by single spaces (`12 288`), as the stack-trace block prints.
pub(crate) fn spaced_u64(i: In) -> Res<u64> {
    let (rest, text) = recognize((digit1, nom::multi::many0((tag(" "), digit1)))).parse(i)?;
    let mut n: u64 = 0;
    for &c in text.iter().filter(|c| c.is_ascii_digit()) {
        n = match n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(c - b'0')))
        {
            Some(n) => n,
            None => {
                return Err(nom::Err::Error(nom::error::Error::new(
                    i,
                    nom::error::ErrorKind::TooLarge,
                )))
            }
        };
    }
    Ok((rest, n))
}

/// Requires the whole input to be consumed.
pub(crate) fn all<'a, T>(r: Res<'a, T>) -> Option<T> {
    match r {
        Ok(([], t)) => Some(t),
        _ => None,
    }
}

/// Bytes as text; invalid UTF-8 is replaced (dumps are ASCII but for stack-trace names).
pub(crate) fn text(b: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}

/// Splits a `from instruction:` tail into the instruction text and a value token glued to
/// its end (XLA 2024-01-16 … 2024-11-01 printed no newline after it).
pub(crate) fn split_glued(line: In) -> (In, Option<ShortValue>) {
    if line.last() == Some(&b'>') {
        if let Some(lt) = memchr::memrchr(b'<', line) {
            if let Some(v) = all(short_value(&line[lt..])) {
                return (&line[..lt], Some(v));
            }
        }
    }
    (line, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_tokens() {
        let v = all(short_value(b"<1343 arg_tuple.3{0} (phi) @0>")).unwrap();
        assert_eq!(
            (v.id, v.name, v.index, v.phi, v.color),
            (1343, &b"arg_tuple.3"[..], &b"{0}"[..], true, Some(0))
        );
        let v = all(short_value(b"<2 add.14 @6>")).unwrap();
        assert_eq!(
            (v.name, v.index, v.phi, v.color),
            (&b"add.14"[..], &b""[..], false, Some(6))
        );
        let v = all(short_value(b"<65 copy-start.1{} @0>")).unwrap();
        assert_eq!(v.index, b"{}");
        assert!(all(short_value(b"<65 copy-start.1{} @0")).is_none());
        assert!(all(short_value(b"<99999999999 x @0>")).is_none());
    }

    #[test]
    fn spaced_numbers() {
        assert_eq!(all(spaced_u64(b"184 680 476")), Some(184_680_476));
        assert_eq!(all(spaced_u64(b"0")), Some(0));
    }

    #[test]
    fn glued_values() {
        let (text, v) =
            split_glued(b"%x = f32[] add(%a, %b), metadata={op_name=\"a\"}<17 add.3 @0>");
        assert!(text.ends_with(b"}"));
        assert_eq!(v.unwrap().id, 17);
        let (text, v) = split_glued(b"%x = f32[] constant(1)");
        assert_eq!(text.len(), 22);
        assert!(v.is_none());
    }
}
