//! One instruction line of an HLO module text:
//! `[ROOT] %name = SHAPE opcode(operands), key=value, …` (`HloInstruction::ToString`), and
//! a computation's opening line `[ENTRY] %name (params) -> shape {`.
//!
//! Owns: this grammar and the attributes the answers read (called computations, metadata,
//! `sharding`, `custom_call_target`, `backend_config`'s `known_trip_count`, `direction`,
//! a constant's literal); every other attribute is kept as printed.

use std::borrow::Cow;

use super::scan::{balanced_len, each_inside, each_top, quoted, split, trim, Split};
use super::seen::{Kept, Seen};
use crate::parse::dump::lex::BRACKETS;
use crate::model::hlo::{CallRole, Head, HloBuilder, Meta};
use nom::bytes::complete::{tag, take_while1};
use nom::combinator::opt;
use nom::{IResult, Parser};

type In<'a> = &'a [u8];

fn is_name(c: u8) -> bool {
    !matches!(
        c,
        b' ' | b'(' | b')' | b'{' | b'}' | b',' | b'=' | b'\t' | b'"'
    )
}

/// `%name` or `name` (newer XLA prints no `%`), without the `%`.
fn name(i: In) -> IResult<In, In> {
    let (i, _) = opt(tag("%")).parse(i)?;
    take_while1(is_name).parse(i)
}

/// `[ROOT ]%name = `: whether ROOT, and the name.
fn head(i: In) -> IResult<In, (bool, In)> {
    let (i, _) = tag("  ").parse(i)?;
    let (i, root) = opt(tag("ROOT ")).parse(i)?;
    let (i, n) = name(i)?;
    let (i, _) = tag(" = ").parse(i)?;
    Ok((i, (root.is_some(), n)))
}

/// The shape: a bracketed tuple `(…)` or a token up to the first space outside brackets.
fn shape(i: In) -> Option<(In, In)> {
    if i.first() == Some(&b'(') {
        let n = balanced_len(i)?;
        return Some((&i[..n], &i[n..]));
    }
    // The first space outside brackets (a shape prints none inside them): the bracket
    // depth summed from one space to the next.
    let mut depth = 0i64;
    let mut from = 0;
    for k in memchr::memchr_iter(b' ', i) {
        depth += i[from..k].iter().map(|&c| i64::from(BRACKETS[c as usize])).sum::<i64>();
        if depth == 0 {
            return (k > 0).then(|| (&i[..k], &i[k..]));
        }
        from = k;
    }
    None
}

/// What reading an instruction's text gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Parsed {
    /// An instruction, kept.
    Whole,
    /// Its attributes leave a bracket or string open at the end of the text (the
    /// instruction goes on on the next line): nothing kept, when asked to stop there.
    Open,
    /// Not an instruction: nothing kept.
    Not,
}

/// Reads one instruction's text (without its line end) into `b`'s open computation. With
/// `whole_only`, a text whose attributes leave a bracket or string open at its end is
/// [`Parsed::Open`] and nothing is kept (the first line of an instruction printed over
/// several; the reader reads on); without, it is read as far as it goes.
pub(super) fn instruction(
    line: In,
    line_no: u64,
    b: &mut HloBuilder,
    seen: &mut Seen,
    whole_only: bool,
) -> Parsed {
    let not = Parsed::Not;
    let Ok((rest, (is_root, n))) = head(line) else {
        return not;
    };
    let Some((shape_text, rest)) = shape(rest) else {
        return not;
    };
    let Some(rest) = rest.strip_prefix(b" ") else {
        return not;
    };
    let Ok((rest, opcode)) =
        take_while1::<_, _, nom::error::Error<In>>(|c: u8| c != b'(' && c != b' ').parse(rest)
    else {
        return not;
    };
    let mut head = Head {
        name: b.name(n),
        opcode: b.intern_short(opcode),
        shape: b.intern(shape_text),
        is_root,
        line: u32::try_from(line_no).unwrap_or(u32::MAX),
        ..Head::default()
    };
    // The operands are pushed as the walk finds the end of the brackets (forgotten if the
    // line then turns out to be no instruction).
    let literal = opcode == b"constant" || opcode == b"parameter";
    let args_len = match literal {
        true => balanced_len(rest),
        false => each_inside(rest, |o| operand(b, o)),
    };
    let Some(args_len) = args_len else {
        b.abandon();
        return not;
    };
    let tail = &rest[args_len..];
    let tail = match tail.strip_prefix(b",") {
        Some(t) => t,
        None if trim(tail).is_empty() => b"",
        None => {
            b.abandon();
            return not;
        }
    };
    if literal {
        head.literal = Some(b.intern(trim(&rest[1..args_len - 1])));
    }
    let mut attributes = Attributes { b: &mut *b, seen, meta: &mut head.meta };
    let (depth, in_string) = split(tail, &mut attributes);
    if whole_only && (depth > 0 || in_string) {
        b.abandon();
        return Parsed::Open;
    }
    b.instruction(head);
    Parsed::Whole
}

/// One operand as printed: `%x`, `/*index=5*/%x`, `f32[2]{0} %x` (older XLA prints the
/// shape too), `%wide.param.39#0`; its name without `%` (none when empty).
fn operand(b: &mut HloBuilder, printed: In) {
    let mut p = trim(printed);
    while let Some(rest) = p.strip_prefix(b"/*") {
        let Some(end) = memchr::memmem::find(rest, b"*/") else {
            return;
        };
        p = trim(&rest[end + 2..]);
    }
    let last = memchr::memrchr(b' ', p).map_or(p, |k| &p[k + 1..]);
    let last = last.strip_prefix(b"%").unwrap_or(last);
    if !last.is_empty() {
        b.operand(last);
    }
}

/// The attributes after the operands, as [`split`] splits them: each read
/// ([`piece_read`]) or, when it was printed lately, taken as it was read then
/// ([`super::seen::Pieces`]).
struct Attributes<'r> {
    b: &'r mut HloBuilder,
    seen: &'r mut Seen,
    meta: &'r mut u32,
}

impl<'a> Split<'a> for Attributes<'_> {
    fn known(&mut self, rest: &'a [u8]) -> Option<usize> {
        let (len, (key, value)) = self.seen.pieces.find(rest)?;
        self.b.attr_again(key, value);
        Some(len)
    }

    fn piece(&mut self, piece: &'a [u8], whole: bool) {
        piece_read(self.b, self.seen, self.meta, piece, whole);
    }
}

/// One attribute as printed (`key=value`, or a bare word), read; kept for
/// [`Attributes`] to find again when it is `whole` (it closed what it opened).
fn piece_read(b: &mut HloBuilder, seen: &mut Seen, meta: &mut u32, piece: In, whole: bool) {
    let Some(eq) = piece.iter().position(|&c| c == b'=') else {
        b.attr(piece, b"");
        return;
    };
    let (key, value) = (&piece[..eq], &piece[eq + 1..]);
    if let Some(kept) = attribute(b, &mut seen.metas, meta, key, value) {
        if whole {
            seen.pieces.keep(key, value, kept);
        }
    }
}

/// One `key=value` after the operands; the attribute it read into, unless it is metadata
/// or names computations.
fn attribute(
    b: &mut HloBuilder,
    metas: &mut super::seen::Metas,
    meta: &mut u32,
    key: In,
    value: In,
) -> Option<Kept> {
    let role = match key {
        b"condition" => Some(CallRole::Condition),
        b"body" => Some(CallRole::Body),
        b"to_apply" => Some(CallRole::ToApply),
        b"branch_computations" => Some(CallRole::Branch),
        b"true_computation" => Some(CallRole::TrueComputation),
        b"false_computation" => Some(CallRole::FalseComputation),
        b"calls" => Some(CallRole::Calls),
        _ => None,
    };
    if let Some(role) = role {
        let inner = value
            .strip_prefix(b"{")
            .and_then(|v| v.strip_suffix(b"}"))
            .unwrap_or(value);
        each_top(inner, |c| {
            if let Ok((_, n)) = name(c) {
                b.call(role, n);
            }
        });
        return None;
    }
    let (k, v) = match key {
        b"metadata" => {
            *meta = match metas.find(value) {
                Ok(id) => id,
                Err(h) => {
                    let read = metadata(b, value);
                    let id = b.meta(read);
                    metas.add(value, h, id);
                    id
                }
            };
            return None;
        }
        b"custom_call_target" => match value.strip_prefix(b"\"").and_then(quoted) {
            Some((unquoted, _)) => b.attr(key, &unquoted),
            None => b.attr(key, value),
        },
        _ => b.attr(key, value),
    };
    Some((k, v))
}

/// `{op_type="…" op_name="…" source_file="…" source_line=N stack_frame_id=N …}`: what the
/// answers read of it.
pub(super) fn metadata(b: &mut HloBuilder, value: In) -> Meta {
    let mut m = Meta::default();
    let mut i = value.strip_prefix(b"{").unwrap_or(value);
    loop {
        i = trim(i);
        let Some(eq) = i.iter().position(|&c| c == b'=') else {
            return m;
        };
        let key = &i[..eq];
        let after = &i[eq + 1..];
        let (val, rest): (Cow<[u8]>, In) = match after.strip_prefix(b"\"") {
            Some(q) => match quoted(q) {
                Some(found) => found,
                None => return m,
            },
            None => {
                let end = after
                    .iter()
                    .position(|&c| c == b' ' || c == b'}')
                    .unwrap_or(after.len());
                (Cow::Borrowed(&after[..end]), &after[end..])
            }
        };
        let num = || {
            std::str::from_utf8(&val)
                .ok()
                .and_then(|v| v.parse::<u32>().ok())
        };
        match key {
            b"op_name" => m.op_name = Some(b.intern(&val)),
            b"source_file" => m.source_file = Some(b.intern(&val)),
            b"source_line" => m.source_line = num(),
            b"stack_frame_id" => m.stack_frame_id = num(),
            _ => {}
        }
        i = rest;
        if i.first() == Some(&b'}') || i.is_empty() {
            return m;
        }
    }
}

/// A computation's opening line: `[ENTRY ]%name (params) -> shape {`; whether ENTRY, and
/// the name.
pub(super) fn computation_start(line: In) -> Option<(bool, In)> {
    if line.last() != Some(&b'{') || line.starts_with(b" ") {
        return None;
    }
    let (i, entry) = opt(tag::<_, _, nom::error::Error<In>>("ENTRY "))
        .parse(line)
        .ok()?;
    let (_, n) = name(i).ok()?;
    Some((entry.is_some(), n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::hlo::NAMED_ATTRS;

    /// One instruction read, in owned form through the text's look-ups.
    #[derive(Debug)]
    struct Ins {
        name: String,
        opcode: String,
        shape: String,
        operands: Vec<String>,
        literal: Option<String>,
        is_root: bool,
        calls: Vec<(CallRole, String)>,
        op_name: Option<String>,
        source_file: Option<String>,
        source_line: Option<u32>,
        stack_frame_id: Option<u32>,
        sharding: Option<String>,
        custom_call_target: Option<String>,
        known_trip_count: Option<u64>,
        direction: Option<String>,
        attrs: Vec<(String, String)>,
        line: u32,
    }

    /// `line` read as the one instruction of a computation.
    fn instruction(line: In, line_no: u64) -> Option<Ins> {
        let mut b = HloBuilder::new();
        b.computation(b"c", false);
        let read = super::instruction(line, line_no, &mut b, &mut Seen::default(), false);
        if read != Parsed::Whole {
            return None;
        }
        let t = b.finish();
        let i = t.computations[0].instructions.first()?;
        let owned = |s: Option<&str>| s.map(str::to_string);
        let m = t.meta(i);
        Some(Ins {
            name: t.name(i).into(),
            opcode: t.opcode(i).into(),
            shape: t.shape(i).into(),
            operands: t.operands(i).map(str::to_string).collect(),
            literal: owned(t.literal(i)),
            is_root: i.is_root,
            calls: t
                .calls(i)
                .iter()
                .map(|c| (c.role, t.str(c.computation).to_string()))
                .collect(),
            op_name: owned(t.op_name(i)),
            source_file: owned(t.source_file(i)),
            source_line: m.source_line,
            stack_frame_id: m.stack_frame_id,
            sharding: owned(t.sharding(i)),
            custom_call_target: owned(t.custom_call_target(i)),
            known_trip_count: t.known_trip_count(i),
            direction: owned(t.direction(i)),
            attrs: (t.attrs(i).filter(|(k, _)| !NAMED_ATTRS.contains(k)))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            line: i.line,
        })
    }

    #[test]
    fn a_tpu_while_with_tuple_shape_and_index_comments() {
        let line = b"  %while.43 = (s32[]{:T(128)}, bf16[8,1024]{1,0:T(8,128)(2,1)S(1)}, /*index=5*/f32[2]) while(%tuple.114), condition=%wide.region_6.7_spmd.clone, body=%wide.region_1.6_spmd.clone.sunk, backend_config={\"known_trip_count\":{\"n\":\"8\"}}";
        let i = instruction(line, 7).unwrap();
        assert_eq!(i.name, "while.43");
        assert_eq!(i.opcode, "while");
        assert!(i.shape.starts_with("(s32[]{:T(128)},") && i.shape.ends_with("f32[2])"));
        assert_eq!(i.operands, ["tuple.114"]);
        assert_eq!(i.calls.len(), 2);
        assert_eq!(
            i.calls[0],
            (
                CallRole::Condition,
                "wide.region_6.7_spmd.clone".to_string()
            )
        );
        assert_eq!(i.calls[1].0, CallRole::Body);
        assert_eq!(i.known_trip_count, Some(8));
        assert_eq!(i.line, 7);
    }

    #[test]
    fn operands_metadata_and_attributes() {
        let line = b"  ROOT %fusion.478 = bf16[8,64]{1,0:T(8,128)(2,1)} fusion(%wide.param.1#1, %bitcast.427, /*index=5*/%add-rsqrt_fusion.4), kind=kOutput, calls=%fused_computation.195.clone.1, metadata={op_type=\"dot\" op_name=\"jit(f)/while/body/x, y\" stack_frame_id=41}, sharding={devices=[2,1]<=[2]}";
        let i = instruction(line, 1).unwrap();
        assert!(i.is_root);
        assert_eq!(
            i.operands,
            ["wide.param.1#1", "bitcast.427", "add-rsqrt_fusion.4"]
        );
        assert_eq!(i.op_name.as_deref(), Some("jit(f)/while/body/x, y"));
        assert_eq!(i.stack_frame_id, Some(41));
        assert_eq!(i.sharding.as_deref(), Some("{devices=[2,1]<=[2]}"));
        assert_eq!(i.attrs, [("kind".to_string(), "kOutput".to_string())]);
        assert_eq!(i.calls[0].1, "fused_computation.195.clone.1");
    }

    #[test]
    fn constants_compares_custom_calls_and_old_operands() {
        let c = instruction(
            b"  %constant.349.clone.1 = s32[]{:T(128)} constant(32000)",
            1,
        )
        .unwrap();
        assert_eq!(c.literal.as_deref(), Some("32000"));
        assert!(c.operands.is_empty());
        let p = instruction(b"  %param.84 = f32[256]{0} parameter(2), metadata={op_name=\"state[\\'model\\'][\\'w\\'].value\" source_file=\"/a/b.py\" source_line=12}", 1).unwrap();
        assert_eq!(p.op_name.as_deref(), Some("state['model']['w'].value"));
        assert_eq!(
            (p.source_file.as_deref(), p.source_line),
            (Some("/a/b.py"), Some(12))
        );
        assert_eq!(p.literal.as_deref(), Some("2"));
        let cmp = instruction(
            b"  %lt = pred[] compare(s32[] %i, s32[] %n), direction=LT",
            1,
        )
        .unwrap();
        assert_eq!(cmp.operands, ["i", "n"]);
        assert_eq!(cmp.direction.as_deref(), Some("LT"));
        let cc = instruction(
            b"  %cc = s32[4]{0} custom-call(%p), custom_call_target=\"AssumeGatherIndicesInBound\"",
            1,
        )
        .unwrap();
        assert_eq!(
            cc.custom_call_target.as_deref(),
            Some("AssumeGatherIndicesInBound")
        );
        let br = instruction(
            b"  %c = f32[] conditional(%i, %a, %b), branch_computations={%br.0, %br.1}",
            1,
        )
        .unwrap();
        assert_eq!(
            br.calls.iter().map(|c| c.1.as_str()).collect::<Vec<_>>(),
            ["br.0", "br.1"]
        );
    }

    /// An attribute printed again is taken as it was read, but only where it is the whole
    /// attribute: a longer value that starts the same, or one followed by more than spaces
    /// and a comma, is read.
    #[test]
    fn attributes_printed_again() {
        let v = r#"{"flag_configs":[],"scoped_memory_configs":[]}"#;
        let lines: Vec<String> = [
            format!("  %a = f32[] add(%x, %y), backend_config={v}"),
            format!("  %b = f32[] add(%x, %y), backend_config={v}  , kind=kLoop"),
            format!("  %c = f32[] add(%x, %y), backend_config={v}x, kind=kLoop"),
            format!("  %d = f32[] add(%x, %y), backend_config={v}{{\"more\":1}}"),
            format!("  %e = f32[] add(%x, %y), backend_config={v},"),
            format!("  %f = f32[] add(%x, %y), backend_config={}", &v[..v.len() - 1]),
            format!("  %g = f32[] add(%x, %y), frontend_attributes={v}"),
        ]
        .into();
        let attrs = |b: HloBuilder| {
            let t = b.finish();
            (t.computations[0].instructions.iter())
                .map(|i| t.attrs(i).map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        };
        let mut shared = HloBuilder::new();
        shared.computation(b"c", false);
        let mut seen = Seen::default();
        let mut alone = Vec::new();
        for line in &lines {
            super::instruction(line.as_bytes(), 1, &mut shared, &mut seen, false);
            let mut b = HloBuilder::new();
            b.computation(b"c", false);
            super::instruction(line.as_bytes(), 1, &mut b, &mut Seen::default(), false);
            alone.extend(attrs(b));
        }
        let shared = attrs(shared);
        assert_eq!(shared, alone);
        assert_eq!(shared[1], [format!("backend_config={v}"), "kind=kLoop".into()]);
        assert_eq!(shared[2][0], format!("backend_config={v}x"));
        assert_eq!(shared[4], [format!("backend_config={v}"), "=".into()]);
    }

    #[test]
    fn not_instructions() {
        assert!(instruction(b"  %x = f32[2] add(%a", 1).is_none());
        assert!(instruction(b"%x = f32[2] add(%a)", 1).is_none());
        assert!(instruction(b"  %x = ", 1).is_none());
        assert!(instruction(b"  %x = f32[2] add(%a) junk", 1).is_none());
        assert_eq!(
            computation_start(b"ENTRY %main.26_spmd (p: f32[2]) -> f32[2] {"),
            Some((true, &b"main.26_spmd"[..]))
        );
        assert_eq!(
            computation_start(b"%region_1.6 (a: (s32[], f32[])) -> (s32[], f32[]) {"),
            Some((false, &b"region_1.6"[..]))
        );
        assert_eq!(computation_start(b"  %x {"), None);
    }
}
