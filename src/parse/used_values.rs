//! Grammar of the `Used values:` section (`HloValue::ToString`): position and use lines, and
//! what bufscope keeps of a `from instruction:` line: the opcode and the metadata's op_name,
//! source file and line, stack frame id. The rest of that line (which can be 300,000
//! characters) is skipped, never copied.

use super::lex::{name, shape_index, u32, In};
use nom::bytes::complete::tag;
use nom::combinator::opt;
use nom::sequence::preceded;
use nom::Parser;

/// `  NAME[ {INDEX}]` (HloPosition::ToString).
pub(crate) fn is_position(line: In) -> bool {
    let Some(i) = line.strip_prefix(b"  ") else {
        return false;
    };
    matches!(
        (name, opt(preceded(tag(" "), shape_index))).parse(i),
        Ok((rest, _)) if rest.is_empty()
    )
}

/// `  NAME, operand N[ {INDEX}]` (HloUse::ToString).
pub(crate) fn is_use(line: In) -> bool {
    let Some(i) = line.strip_prefix(b"  ") else {
        return false;
    };
    matches!(
        (name, tag(", operand "), u32, opt(preceded(tag(" "), shape_index))).parse(i),
        Ok((rest, _)) if rest.is_empty()
    )
}

/// What is kept of an instruction's text.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct InstrInfo<'a> {
    pub name: &'a [u8],
    pub opcode: &'a [u8],
    pub op_name: Option<std::borrow::Cow<'a, [u8]>>,
    pub source_file: Option<std::borrow::Cow<'a, [u8]>>,
    pub source_line: Option<u32>,
    pub stack_frame_id: Option<u32>,
}

/// `%NAME = SHAPE opcode(operands), attr=..., metadata={...}, ...`
pub(crate) fn instruction(text: In) -> Option<InstrInfo> {
    let text = text.strip_prefix(b"%")?;
    // Names have no spaces: the first one is the one of ` = `.
    let sp = memchr::memchr(b' ', text)?;
    let (name, rest) = (&text[..sp], text[sp..].strip_prefix(b" = ")?);
    let after_shape = skip_shape(rest)?;
    let opcode_len = after_shape
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.'))
        .unwrap_or(after_shape.len());
    let (opcode, tail) = after_shape.split_at(opcode_len);
    if opcode.is_empty() || tail.first() != Some(&b'(') {
        return None;
    }
    let mut info = InstrInfo {
        name,
        opcode,
        ..InstrInfo::default()
    };
    static METADATA: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
        std::sync::OnceLock::new();
    let finder = METADATA.get_or_init(|| memchr::memmem::Finder::new(b", metadata={"));
    if let Some(m) = finder.find(tail) {
        metadata(&tail[m + 12..], &mut info);
    }
    Some(info)
}

/// Skips `SHAPE ` (brackets balanced; tuples and layouts nest), returning what follows.
fn skip_shape(i: In) -> Option<In> {
    let mut depth: i32 = 0;
    for (k, &c) in i.iter().enumerate() {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b' ' if depth == 0 => return Some(&i[k + 1..]),
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    None
}

/// `key=value key="quoted" ...}`: fills the fields bufscope keeps; stops at the closing
/// brace or at anything it does not understand.
fn metadata<'a>(mut i: In<'a>, info: &mut InstrInfo<'a>) {
    loop {
        i = trim_start(i);
        let Some(eq) = i.iter().position(|&c| c == b'=' || c == b'}' || c == b' ') else {
            return;
        };
        if i[eq] != b'=' {
            return;
        }
        let key = &i[..eq];
        i = &i[eq + 1..];
        let raw: In;
        let quoted = i.first() == Some(&b'"');
        if quoted {
            let Some(end) = closing_quote(&i[1..]) else {
                return;
            };
            raw = &i[1..1 + end];
            i = &i[end + 2..];
        } else {
            let end = i
                .iter()
                .position(|&c| c == b' ' || c == b'}')
                .unwrap_or(i.len());
            raw = &i[..end];
            i = &i[end..];
        }
        let string = || -> std::borrow::Cow<'a, [u8]> {
            if quoted && memchr::memchr(b'\\', raw).is_some() {
                unescape(raw).into()
            } else {
                raw.into()
            }
        };
        let number = || std::str::from_utf8(raw).ok().and_then(|s| s.parse().ok());
        match key {
            b"op_name" => info.op_name = Some(string()),
            b"source_file" => info.source_file = Some(string()),
            b"source_line" => info.source_line = number(),
            b"stack_frame_id" => info.stack_frame_id = number(),
            _ => {}
        }
    }
}

fn trim_start(i: In) -> In {
    let n = i.iter().take_while(|&&c| c == b' ').count();
    &i[n..]
}

/// Position of the quote that closes a string starting at `i[0]` (escapes skipped).
fn closing_quote(i: In) -> Option<usize> {
    let mut k = 0;
    loop {
        k += memchr::memchr2(b'"', b'\\', &i[k..])?;
        if i[k] == b'"' {
            return Some(k);
        }
        k += 2;
        if k > i.len() {
            return None;
        }
    }
}

/// Undoes `CEscape`: `\n \t \r \" \' \\`, octal `\ooo`, hex `\xHH`.
fn unescape(i: In) -> Vec<u8> {
    let mut out = Vec::with_capacity(i.len());
    let mut k = 0;
    while k < i.len() {
        if i[k] != b'\\' || k + 1 >= i.len() {
            out.push(i[k]);
            k += 1;
            continue;
        }
        let c = i[k + 1];
        k += 2;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                let mut digits = 1;
                while digits < 3 && k < i.len() && (b'0'..=b'7').contains(&i[k]) {
                    v = v * 8 + u32::from(i[k] - b'0');
                    k += 1;
                    digits += 1;
                }
                out.push(v as u8);
            }
            b'x' if k + 2 <= i.len() => {
                match std::str::from_utf8(&i[k..k + 2])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(v) => {
                        out.push(v);
                        k += 2;
                    }
                    None => out.push(b'x'),
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_and_uses() {
        assert!(is_position(b"  slice_reduce_fusion {0}"));
        assert!(is_position(b"  get-tuple-element"));
        assert!(!is_position(b"  a, operand 0"));
        assert!(is_use(b"  get-tuple-element.1, operand 0 {}"));
        assert!(is_use(b"  tuple.10, operand 3"));
        assert!(!is_use(b"  tuple.10, operand"));
    }

    #[test]
    fn instruction_text() {
        let i = instruction(br#"%add.257 = f32[] add(f32[] %Arg_0.255, f32[] %Arg_1.256), metadata={op_name="jit(f)/reduce_sum" source_file="/opt/a \"b\".py" source_line=398}"#).unwrap();
        assert_eq!(i.name, b"add.257");
        assert_eq!(i.opcode, b"add");
        assert_eq!(i.op_name.as_deref(), Some(&b"jit(f)/reduce_sum"[..]));
        assert_eq!(i.source_file.as_deref(), Some(&b"/opt/a \"b\".py"[..]));
        assert_eq!(i.source_line, Some(398));
        let i = instruction(b"%t = (u32[2]{0:T(128)}, /*index=5*/u32[2]{0:T(128)}) fusion(%a), kind=kLoop, metadata={op_name=\"x\" stack_frame_id=4}").unwrap();
        assert_eq!((i.opcode, i.stack_frame_id), (&b"fusion"[..], Some(4)));
        let i =
            instruction(br#"%c = f32[] constant(1), metadata={op_name="caf\303\251"}"#).unwrap();
        assert_eq!(i.op_name.as_deref(), Some("café".as_bytes()));
        assert!(instruction(b"%c = f32[").is_none());
        assert!(instruction(b"garbage").is_none());
    }
}
