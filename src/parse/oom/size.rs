//! Sizes as the messages print them (`HumanReadableNumBytes`: `12B`, `384.0KiB`, `10.90GiB`,
//! TPU `4.0K`, `63.80G`, `-2.55G`) and the exact byte counts printed beside some of them
//! (`(165425291480B)`, `(   6,532,939,776 bytes)`, `6291456 bytes`), with the range of
//! byte counts a rounded figure stands for.

use crate::model::oom::ByteSize;
use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::{char, digit1, space0};
use nom::combinator::{opt, recognize};
use nom::sequence::{delimited, preceded};
use nom::{IResult, Parser};

type Res<'a, T> = IResult<&'a str, T>;

/// Units longest first, so `GiB` is not read as `G`.
const UNITS: [(&str, u32); 13] = [
    ("KiB", 1),
    ("MiB", 2),
    ("GiB", 3),
    ("TiB", 4),
    ("PiB", 5),
    ("EiB", 6),
    ("K", 1),
    ("M", 2),
    ("G", 3),
    ("T", 4),
    ("P", 5),
    ("E", 6),
    ("B", 0),
];

fn unit(i: &str) -> Res<'_, u32> {
    for (name, power) in UNITS {
        if let Some(rest) = i.strip_prefix(name) {
            return Ok((rest, power));
        }
    }
    Err(nom::Err::Error(nom::error::Error::new(
        i,
        nom::error::ErrorKind::Tag,
    )))
}

fn fail(i: &str) -> nom::Err<nom::error::Error<&str>> {
    nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Verify))
}

/// A rounded size: `-2.55G`, `10.90GiB`, `0B`, `384.0KiB`.
pub(crate) fn human(i: &str) -> Res<'_, ByteSize> {
    let start = i;
    let (i, neg) = opt(char('-')).parse(i)?;
    let (i, whole) = digit1(i)?;
    let (i, frac) = opt(preceded(char('.'), digit1)).parse(i)?;
    let (i, power) = unit(i)?;
    let text = &start[..start.len() - i.len()];
    let frac = frac.unwrap_or("");
    let size = rounded(text, neg.is_some(), whole, frac, power).ok_or_else(|| fail(start))?;
    Ok((i, size))
}

/// The size `whole.frac × 1024^power` printed as `text`, with its byte range.
fn rounded(text: &str, neg: bool, whole: &str, frac: &str, power: u32) -> Option<ByteSize> {
    if whole.len() + frac.len() > 18 {
        return None;
    }
    let digits: i128 = format!("{whole}{frac}").parse().ok()?;
    let scale = 10i128.checked_pow(frac.len() as u32)?;
    let unit = 1024i128.pow(power);
    let nominal = (digits * unit * 2 + scale) / (2 * scale);
    let (lo, hi) = if power == 0 || frac.is_empty() {
        // Whole bytes are exact; a whole number of a bigger unit is not what XLA prints,
        // so it stands for itself.
        (nominal, nominal)
    } else {
        range(digits, scale, power)?
    };
    let sign = if neg { -1 } else { 1 };
    let (min, max) = if neg { (-hi, -lo) } else { (lo, hi) };
    Some(ByteSize {
        text: text.to_string(),
        bytes: i64::try_from(sign * nominal).ok()?,
        exact: power == 0,
        min: i64::try_from(min).ok()?,
        max: i64::try_from(max).ok()?,
    })
}

/// Every byte count that `HumanReadableNumBytes` prints as `digits / scale` of unit
/// `1024^power`. It divides by 1024 (truncating) while the count is at least 1 MiB, then
/// prints `q / 1024.0` rounded half to even: so `q` lies within half a last digit of the
/// printed value, and the count within `[q_lo, q_hi + 1) × 1024^(power-1)`.
fn range(digits: i128, scale: i128, power: u32) -> Option<(i128, i128)> {
    let even = digits % 2 == 0;
    let lo_num = (2 * digits - 1) * 512;
    let hi_num = (2 * digits + 1) * 512;
    let mut q_lo = lo_num.div_euclid(scale) + i128::from(lo_num.rem_euclid(scale) != 0);
    let mut q_hi = hi_num.div_euclid(scale);
    if lo_num.rem_euclid(scale) == 0 && !even {
        q_lo += 1;
    }
    if hi_num.rem_euclid(scale) == 0 && !even {
        q_hi -= 1;
    }
    q_lo = q_lo.max(1024);
    q_hi = q_hi.min(1024 * 1024 - 1);
    if q_lo > q_hi {
        return None;
    }
    let step = 1024i128.pow(power - 1);
    Some((q_lo * step, (q_hi + 1) * step - 1))
}

/// An exact count: `165425291480`, `6,532,939,776`, `-2,735,391,744`.
fn count(i: &str) -> Res<'_, i64> {
    let (rest, text) = recognize((
        opt(char('-')),
        digit1,
        take_while(|c: char| c.is_ascii_digit() || c == ','),
    ))
    .parse(i)?;
    let digits: String = text.chars().filter(|c| *c != ',').collect();
    let n = digits.parse::<i64>().map_err(|_| fail(i))?;
    Ok((rest, n))
}

fn exact(text: &str, bytes: i64) -> ByteSize {
    ByteSize {
        text: text.to_string(),
        bytes,
        exact: true,
        min: bytes,
        max: bytes,
    }
}

/// `6291456 bytes`: an exact count on its own.
pub(crate) fn counted(i: &str) -> Res<'_, ByteSize> {
    let start = i;
    let (i, n) = count(i)?;
    let (i, _) = (space0, tag("bytes")).parse(i)?;
    Ok((i, exact(&start[..start.len() - i.len()], n)))
}

/// A rounded size, followed by the exact count in parentheses when the message prints one:
/// `154.06GiB (165425291480B)`, `529.00M (     554,696,704 bytes)`.
pub(crate) fn size(i: &str) -> Res<'_, ByteSize> {
    let start = i;
    let (i, rounded) = human(i)?;
    let exact_part = delimited(
        (space0, char('('), space0),
        count,
        (space0, alt((tag("bytes"), tag("B"))), char(')')),
    );
    match opt(exact_part).parse(i)? {
        (rest, Some(n)) => Ok((rest, exact(&start[..start.len() - rest.len()], n))),
        (rest, None) => Ok((rest, rounded)),
    }
}

/// A whole text that is one size (with its exact count when printed).
pub(crate) fn parse_size(text: &str) -> Option<ByteSize> {
    match size(text.trim()) {
        Ok(("", s)) => Some(s),
        _ => None,
    }
}

/// A word run (letters, digits, `_`): the labels of figures and percentages.
/// An exact count alone (`107374182400`, `6,532,939,776`): its bytes.
pub(crate) fn exact_count(text: &str) -> Option<ByteSize> {
    match count(text.trim()) {
        Ok(("", n)) => Some(exact(text.trim(), n)),
        _ => None,
    }
}

/// A size bufscope computed from printed ones (`sign` +1: `a + b`, -1: `a - b`): its byte
/// range is what the two ranges allow, its text the bytes in the style of `a`
/// (`HumanReadableNumBytes`, without `iB` when `a` has none), exact when both are.
pub(crate) fn combined(a: &ByteSize, b: &ByteSize, sign: i64) -> ByteSize {
    let bytes = a.bytes.saturating_add(sign.saturating_mul(b.bytes));
    let (min, max) = if sign >= 0 {
        (a.min.saturating_add(b.min), a.max.saturating_add(b.max))
    } else {
        (a.min.saturating_sub(b.max), a.max.saturating_sub(b.min))
    };
    let exact = a.exact && b.exact;
    ByteSize {
        text: human_text(bytes, !a.text.contains("iB") && !a.exact),
        bytes,
        exact,
        min: if exact { bytes } else { min },
        max: if exact { bytes } else { max },
    }
}

/// `n` as `HumanReadableNumBytes` prints it (`-8.60G`, `1.5KiB`, `12B`); `short`: without
/// `iB`, as the TPU messages print it.
fn human_text(n: i64, short: bool) -> String {
    let sign = if n < 0 { "-" } else { "" };
    let mut v = n.unsigned_abs();
    if v < 1024 {
        return format!("{sign}{v}B");
    }
    const UNIT: [char; 6] = ['K', 'M', 'G', 'T', 'P', 'E'];
    let mut unit = 0;
    while v >= 1024 * 1024 && unit + 1 < UNIT.len() {
        v /= 1024;
        unit += 1;
    }
    let value = v as f64 / 1024.0;
    let tail = if short { "" } else { "iB" };
    if unit == 0 {
        format!("{sign}{value:.1}{}{tail}", UNIT[unit])
    } else {
        format!("{sign}{value:.2}{}{tail}", UNIT[unit])
    }
}

pub(crate) fn word(i: &str) -> Res<'_, &str> {
    take_while1(|c: char| c.is_alphanumeric() || c == '_')(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(n: i64) -> String {
        // tsl::strings::HumanReadableNumBytes, to check the ranges against.
        if n < 1024 {
            return format!("{n}B");
        }
        let units = ['K', 'M', 'G', 'T', 'P', 'E'];
        let (mut n, mut u) = (n, 0);
        while n >= 1024 * 1024 {
            n /= 1024;
            u += 1;
        }
        let v = n as f64 / 1024.0;
        if u == 0 {
            format!("{v:.1}KiB")
        } else {
            format!("{v:.2}{}iB", units[u])
        }
    }

    #[test]
    fn computed_sizes_keep_the_style_and_the_range_of_their_parts() {
        let a = parse_size("24.35G").unwrap();
        let b = parse_size("15.75G").unwrap();
        let d = combined(&a, &b, -1);
        // 24.35 - 15.75 = 8.60 (G), within the rounding of both.
        assert_eq!(d.text, "8.60G");
        assert!(d.min <= d.bytes && d.bytes <= d.max && !d.exact);
        assert_eq!((d.min, d.max), (a.min - b.max, a.max - b.min));
        let s = combined(&parse_size("34.82G").unwrap(), &parse_size("174.10G").unwrap(), 1);
        assert_eq!(s.text, "208.92G");
        let e = combined(&exact_count("3000").unwrap(), &exact_count("1000").unwrap(), -1);
        assert_eq!((e.text.as_str(), e.exact, e.min, e.max), ("2.0KiB", true, 2000, 2000));
    }

    #[test]
    fn ranges_hold_exactly_the_counts_that_print_the_same() {
        for text in [
            "384.0KiB",
            "5.5KiB",
            "1004.50MiB",
            "10.90GiB",
            "4.00MiB",
            "1.0KiB",
        ] {
            let s = parse_size(text).unwrap();
            assert_eq!(show(s.min), text, "min of {text}");
            assert_eq!(show(s.max), text, "max of {text}");
            assert_ne!(show(s.min - 1), text, "below {text}");
            assert_ne!(show(s.max + 1), text, "above {text}");
            assert!(s.min <= s.bytes && s.bytes <= s.max && !s.exact);
        }
    }

    #[test]
    fn exact_forms() {
        let s = parse_size("154.06GiB (165425291480B)").unwrap();
        assert_eq!((s.bytes, s.exact), (165_425_291_480, true));
        let s = parse_size("-2.55G (  -2,735,391,744 bytes)").unwrap();
        assert_eq!(
            (s.bytes, s.min, s.max),
            (-2_735_391_744, -2_735_391_744, -2_735_391_744)
        );
        let s = parse_size("12B").unwrap();
        assert_eq!((s.bytes, s.exact), (12, true));
        assert_eq!(counted("6291456 bytes.").unwrap().1.bytes, 6_291_456);
        let s = parse_size("-2.55G").unwrap();
        assert!(s.bytes < 0 && s.min <= s.bytes && s.bytes <= s.max);
        assert_eq!(parse_size("63.80G").unwrap().bytes, 68_504_728_371);
        assert!(parse_size("384").is_none());
        assert!(parse_size("99999999999999999999G").is_none());
    }
}
