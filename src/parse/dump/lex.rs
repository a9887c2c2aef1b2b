//! Tokens shared by every section's grammar: integers, names, shape indices, the
//! `<id name{index} (phi) @color>` value token, and byte-string helpers.

use nom::bytes::complete::{tag, take_while};
use nom::character::complete::{digit1, i64 as nom_i64, u32 as nom_u32, u64 as nom_u64};
use nom::combinator::recognize;
use nom::sequence::delimited;
use nom::{IResult, Parser};

pub(crate) type In<'a> = &'a [u8];
pub(crate) type Res<'a, T> = IResult<In<'a>, T>;

/// What each byte does to the nesting of a shape: `( [ {` open, `) ] }` close (a table,
/// without the branches a `match` takes on every byte of a `from instruction:` line or an
/// HLO text's shape).
pub(crate) static BRACKETS: [i8; 256] = {
    let mut t = [0i8; 256];
    t[b'(' as usize] = 1;
    t[b'[' as usize] = 1;
    t[b'{' as usize] = 1;
    t[b')' as usize] = -1;
    t[b']' as usize] = -1;
    t[b'}' as usize] = -1;
    t
};

pub(crate) fn u64(i: In) -> Res<u64> {
    nom_u64(i)
}

pub(crate) fn u32(i: In) -> Res<u32> {
    nom_u32(i)
}

pub(crate) fn i64(i: In) -> Res<i64> {
    nom_i64(i)
}

/// A byte that may stand in an instruction name. XLA sanitises names to `[A-Za-z0-9_.-]`;
/// anything up to a delimiter is accepted so that an unusual name still reads.
fn is_name_byte(c: u8) -> bool {
    NAME_BYTES[usize::from(c)]
}

/// [`is_name_byte`] of each byte (a table: names are most of what a dump's lines hold).
static NAME_BYTES: [bool; 256] = {
    let mut t = [true; 256];
    let delimiters = *b" {}<>:,\t";
    let mut k = 0;
    while k < delimiters.len() {
        t[delimiters[k] as usize] = false;
        k += 1;
    }
    t
};

/// Length of the instruction name at the start of `i` (0 when there is none).
pub(crate) fn name_len(i: In) -> usize {
    i.iter().position(|&c| !is_name_byte(c)).unwrap_or(i.len())
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

/// Whether `i` is one whole [`shape_index`].
pub(crate) fn is_shape_index(i: In) -> bool {
    match i {
        [b'{', inner @ .., b'}'] => inner.iter().all(|&c| c.is_ascii_digit() || c == b','),
        _ => false,
    }
}

/// A name ending in `.N` as XLA prints its numbers (1 to 9 digits, no leading zero): the
/// name up to and with the dot, and N. XLA makes a module's names unique with such a number
/// (`multiply.176354`); `Arg_0` and `add.05` have none. The one reading of it, for the
/// instruction names of a parse and for `bufscope generate`'s renaming.
pub fn numbered_name(name: In) -> Option<(In, u32)> {
    let dot = memchr::memrchr(b'.', name)?;
    let digits = &name[dot + 1..];
    let printed = digits == b"0" || digits.first().is_some_and(|&d| d != b'0');
    if !printed || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = (digits.iter()).fold(0, |n, &d| n * 10 + u32::from(d - b'0'));
    Some((&name[..=dot], n))
}

/// [`u64`] without nom's error values: the number at the start of `i` and what follows.
pub(crate) fn leading_u64(i: In) -> Option<(u64, In)> {
    let digits = i.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    // Up to 19 digits cannot overflow, so only longer numbers are checked: a checked
    // 64-bit product is a 128-bit library call in wasm32, once per digit.
    let (short, long) = i[..digits].split_at(digits.min(19));
    let mut n = short
        .iter()
        .fold(0u64, |n, &c| n * 10 + u64::from(c - b'0'));
    for &c in long {
        n = n.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some((n, &i[digits..]))
}

/// [`u32`] without nom's error values (see [`leading_u64`]).
pub(crate) fn leading_u32(i: In) -> Option<(u32, In)> {
    let (n, rest) = leading_u64(i)?;
    Some((u32::try_from(n).ok()?, rest))
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

/// Written out by hand, without nom's combinators: it reads every value header of a dump.
pub(crate) fn short_value(input: In) -> Res<ShortValue> {
    let fail = || nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::Tag));
    let i = input.strip_prefix(b"<").ok_or_else(fail)?;
    let (id, i) = leading_u32(i).ok_or_else(fail)?;
    let i = i.strip_prefix(b" ").ok_or_else(fail)?;
    let n = name_len(i);
    if n == 0 {
        return Err(fail());
    }
    let (name, mut i) = i.split_at(n);
    let mut index: &[u8] = b"";
    if i.first() == Some(&b'{') {
        // `{` then digits and commas, closed by `}`; anything else leaves no index.
        let inner = i[1..]
            .iter()
            .take_while(|&&c| c.is_ascii_digit() || c == b',')
            .count();
        if i.get(1 + inner) == Some(&b'}') {
            (index, i) = i.split_at(inner + 2);
        }
    }
    let phi = match i.strip_prefix(b" (phi)") {
        Some(rest) => {
            i = rest;
            true
        }
        None => false,
    };
    let mut color = None;
    if let Some((c, rest)) = i.strip_prefix(b" @").and_then(leading_u32) {
        color = Some(c);
        i = rest;
    }
    let i = i.strip_prefix(b">").ok_or_else(fail)?;
    let value = ShortValue {
        id,
        name,
        index,
        phi,
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
pub(crate) use crate::model::utf8_lossy as text;

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
pub(crate) mod tests {
    use super::*;

    /// Numbers of up to 19 digits are read unchecked, longer ones checked: `u64::MAX` reads,
    /// one more does not, and leading zeros do not count against the bound.
    #[test]
    fn leading_numbers_at_the_bounds() {
        let n = |s: &str| leading_u64(s.as_bytes()).map(|(n, rest)| (n, rest.len()));
        assert_eq!(
            n("9999999999999999999 x"),
            Some((9_999_999_999_999_999_999, 2))
        );
        assert_eq!(n("18446744073709551615"), Some((u64::MAX, 0)));
        assert_eq!(n("18446744073709551616"), None);
        assert_eq!(n("99999999999999999999"), None);
        assert_eq!(n("0000000000000000000000042"), Some((42, 0)));
        assert_eq!(n("x"), None);
        assert_eq!(leading_u32(b"4294967296"), None);
        assert_eq!(leading_u32(b"4294967295,"), Some((u32::MAX, &b","[..])));
    }

    /// Value tokens, position and use lines, and strings made of their pieces, cut and
    /// spliced at random (for checking the hand-written readers against nom's).
    pub(crate) fn token_soup(cases: usize) -> Vec<Vec<u8>> {
        let seeds: [&[u8]; 8] = [
            b"<12 add.1{0,1} (phi) @3>",
            b"<0 x @0>",
            b"<4294967295 a{}>",
            b"  fusion.2 {1}",
            b"  get-tuple-element",
            b"  tuple.10, operand 3 {}",
            b"  a, operand 4294967295",
            "  caf\u{e9}, operand 0".as_bytes(),
        ];
        let tokens: [&[u8]; 16] = [
            b"<",
            b"4294967296",
            b" ",
            b"{",
            b"}",
            b",",
            b" (phi)",
            b" @",
            b"7",
            b">",
            b":",
            b"\t",
            b", operand ",
            b"  ",
            b"{0,1}",
            b"\xff",
        ];
        let mut seed = 0x9e37_79b9_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        (0..cases)
            .map(|_| {
                let mut s = seeds[next(seeds.len())].to_vec();
                for _ in 0..next(3) {
                    let at = next(s.len() + 1);
                    match next(3) {
                        0 => drop(s.splice(at..at, tokens[next(tokens.len())].iter().copied())),
                        1 => drop(s.drain(at..(at + 1 + next(3)).min(s.len()))),
                        _ => s.truncate(at),
                    }
                }
                s
            })
            .collect()
    }

    /// `short_value` as nom's combinators read it.
    fn short_value_nom(i: In) -> Res<ShortValue> {
        use nom::bytes::complete::take_while1;
        use nom::combinator::opt;
        use nom::sequence::preceded;
        let (i, _) = tag("<")(i)?;
        let (i, id) = u32(i)?;
        let (i, _) = tag(" ")(i)?;
        let (i, name) = take_while1(is_name_byte)(i)?;
        let (i, index) = opt(shape_index).parse(i)?;
        let (i, phi) = opt(tag(" (phi)")).parse(i)?;
        let (i, color) = opt(preceded(tag(" @"), u32)).parse(i)?;
        let (i, _) = tag(">")(i)?;
        let index = index.unwrap_or(b"");
        Ok((
            i,
            ShortValue {
                id,
                name,
                index,
                phi: phi.is_some(),
                color,
            },
        ))
    }

    #[test]
    fn short_value_reads_as_nom_does() {
        let mut read = 0;
        for s in token_soup(50_000) {
            let (ours, nom) = (short_value(&s).ok(), short_value_nom(&s).ok());
            assert_eq!(ours, nom, "{:?}", String::from_utf8_lossy(&s));
            read += usize::from(ours.is_some());
        }
        assert!(read > 5000, "only {read} strings read");
        for s in [
            &b"<1 a{0} (phi) @2>"[..],
            b"<1 a{0}{1}>",
            b"<1 a @x>",
            b"<1 a{0,}>rest",
        ] {
            assert_eq!(short_value(s).ok(), short_value_nom(s).ok());
        }
    }

    #[test]
    fn hand_written_tokens() {
        assert!(is_shape_index(b"{}") && is_shape_index(b"{1,2}"));
        assert!(!is_shape_index(b"{") && !is_shape_index(b"{a}") && !is_shape_index(b"}"));
        assert_eq!(leading_u32(b"4294967295x"), Some((u32::MAX, &b"x"[..])));
        assert_eq!(leading_u32(b"4294967296"), None);
        assert_eq!(leading_u32(b"x1"), None);
        assert_eq!(
            leading_u64(b"18446744073709551615"),
            Some((u64::MAX, &b""[..]))
        );
        assert_eq!(leading_u64(b"18446744073709551616"), None);
        assert_eq!(name_len(b"add.1{0}"), 5);
        assert_eq!(name_len("caf\u{e9} x".as_bytes()), 5);
    }

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
