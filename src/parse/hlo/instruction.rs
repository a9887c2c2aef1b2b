//! One instruction line of an HLO module text:
//! `[ROOT] %name = SHAPE opcode(operands), key=value, …` (`HloInstruction::ToString`), and
//! a computation's opening line `[ENTRY] %name (params) -> shape {`.
//!
//! Owns: this grammar and the attributes the answers read (called computations, metadata,
//! `sharding`, `custom_call_target`, `backend_config`'s `known_trip_count`, `direction`,
//! a constant's literal); every other attribute is kept as printed.

use super::scan::{balanced_len, quoted, split_top, trim};
use crate::model::hlo::{CallRole, Called, HloInstruction};
use crate::model::utf8_lossy as text;
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
    let mut depth = 0i64;
    for (k, &c) in i.iter().enumerate() {
        match c {
            b'[' | b'{' | b'(' => depth += 1,
            b']' | b'}' | b')' => depth -= 1,
            b' ' if depth == 0 => return (k > 0).then(|| (&i[..k], &i[k..])),
            _ => {}
        }
    }
    None
}

/// Reads one instruction line (without its line end); `None` when it is not one.
pub(super) fn instruction(line: In, line_no: u64) -> Option<HloInstruction> {
    let (rest, (is_root, n)) = head(line).ok()?;
    let (shape_text, rest) = shape(rest)?;
    let rest = rest.strip_prefix(b" ")?;
    let (rest, opcode) = take_while1::<_, _, nom::error::Error<In>>(|c: u8| c != b'(' && c != b' ')
        .parse(rest)
        .ok()?;
    let args_len = balanced_len(rest)?;
    let args = &rest[1..args_len - 1];
    let mut ins = HloInstruction {
        name: text(n).into_owned(),
        opcode: text(opcode).into_owned(),
        shape: text(shape_text).into_owned(),
        is_root,
        line: line_no,
        ..HloInstruction::default()
    };
    if ins.opcode == "constant" || ins.opcode == "parameter" {
        ins.literal = Some(text(trim(args)).into_owned());
    } else {
        ins.operands = split_top(args, b',')
            .into_iter()
            .filter_map(operand)
            .collect();
    }
    let tail = &rest[args_len..];
    let tail = match tail.strip_prefix(b",") {
        Some(t) => t,
        None if trim(tail).is_empty() => b"",
        None => return None,
    };
    for attr in split_top(tail, b',') {
        let Some(eq) = attr.iter().position(|&c| c == b'=') else {
            ins.attrs.push((text(attr).into_owned(), String::new()));
            continue;
        };
        attribute(&mut ins, &attr[..eq], &attr[eq + 1..]);
    }
    ins.operands.shrink_to_fit();
    Some(ins)
}

/// One operand as printed: `%x`, `/*index=5*/%x`, `f32[2]{0} %x` (older XLA prints the
/// shape too), `%wide.param.39#0`; its name without `%`.
fn operand(printed: In) -> Option<String> {
    let mut p = trim(printed);
    while let Some(rest) = p.strip_prefix(b"/*") {
        let end = rest.windows(2).position(|w| w == b"*/")?;
        p = trim(&rest[end + 2..]);
    }
    let last = p.rsplit(|&c| c == b' ').next().unwrap_or(p);
    let last = last.strip_prefix(b"%").unwrap_or(last);
    (!last.is_empty()).then(|| text(last).into_owned())
}

/// One `key=value` after the operands.
fn attribute(ins: &mut HloInstruction, key: In, value: In) {
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
        for c in split_top(inner, b',') {
            if let Ok((_, n)) = name(c) {
                ins.calls.push(Called {
                    role,
                    computation: text(n).into_owned(),
                });
            }
        }
        return;
    }
    match key {
        b"metadata" => metadata(ins, value),
        b"sharding" => ins.sharding = Some(text(value).into_owned()),
        b"custom_call_target" => {
            let v = value.strip_prefix(b"\"").and_then(quoted);
            ins.custom_call_target = Some(v.map_or_else(|| text(value).into_owned(), |(s, _)| s));
        }
        b"direction" => ins.direction = Some(text(value).into_owned()),
        _ => {
            if key == b"backend_config" {
                ins.known_trip_count = known_trip_count(value);
            }
            ins.attrs
                .push((text(key).into_owned(), text(value).into_owned()));
        }
    }
}

/// `"known_trip_count":{"n":"8"}` anywhere in a backend config.
fn known_trip_count(value: In) -> Option<u64> {
    let key = b"\"known_trip_count\":{\"n\":\"";
    let at = value.windows(key.len()).position(|w| w == key)?;
    crate::parse::lex::leading_u64(&value[at + key.len()..]).map(|(n, _)| n)
}

/// `{op_type="…" op_name="…" source_file="…" source_line=N stack_frame_id=N …}`.
fn metadata(ins: &mut HloInstruction, value: In) {
    let mut i = value.strip_prefix(b"{").unwrap_or(value);
    loop {
        i = trim(i);
        let Some(eq) = i.iter().position(|&c| c == b'=') else {
            return;
        };
        let key = &i[..eq];
        let after = &i[eq + 1..];
        let (val, rest): (Option<String>, In) = match after.strip_prefix(b"\"") {
            Some(q) => match quoted(q) {
                Some((s, rest)) => (Some(s), rest),
                None => return,
            },
            None => {
                let end = after
                    .iter()
                    .position(|&c| c == b' ' || c == b'}')
                    .unwrap_or(after.len());
                (Some(text(&after[..end]).into_owned()), &after[end..])
            }
        };
        let num = || val.as_deref().and_then(|v| v.parse::<u32>().ok());
        match key {
            b"op_name" => ins.op_name = val.clone(),
            b"source_file" => ins.source_file = val.clone(),
            b"source_line" => ins.source_line = num(),
            b"stack_frame_id" => ins.stack_frame_id = num(),
            _ => {}
        }
        i = rest;
        if i.first() == Some(&b'}') || i.is_empty() {
            return;
        }
    }
}

/// A computation's opening line: `[ENTRY ]%name (params) -> shape {`; whether ENTRY, and
/// the name.
pub(super) fn computation_start(line: In) -> Option<(bool, String)> {
    if line.last() != Some(&b'{') || line.starts_with(b" ") {
        return None;
    }
    let (i, entry) = opt(tag::<_, _, nom::error::Error<In>>("ENTRY "))
        .parse(line)
        .ok()?;
    let (_, n) = name(i).ok()?;
    Some((entry.is_some(), text(n).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

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
            Called {
                role: CallRole::Condition,
                computation: "wide.region_6.7_spmd.clone".into()
            }
        );
        assert_eq!(i.calls[1].role, CallRole::Body);
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
        assert_eq!(i.calls[0].computation, "fused_computation.195.clone.1");
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
            br.calls
                .iter()
                .map(|c| c.computation.as_str())
                .collect::<Vec<_>>(),
            ["br.0", "br.1"]
        );
    }

    #[test]
    fn not_instructions() {
        assert!(instruction(b"  %x = f32[2] add(%a", 1).is_none());
        assert!(instruction(b"%x = f32[2] add(%a)", 1).is_none());
        assert!(instruction(b"  %x = ", 1).is_none());
        assert!(instruction(b"  %x = f32[2] add(%a) junk", 1).is_none());
        assert_eq!(
            computation_start(b"ENTRY %main.26_spmd (p: f32[2]) -> f32[2] {"),
            Some((true, "main.26_spmd".into()))
        );
        assert_eq!(
            computation_start(b"%region_1.6 (a: (s32[], f32[])) -> (s32[], f32[]) {"),
            Some((false, "region_1.6".into()))
        );
        assert_eq!(computation_start(b"  %x {"), None);
    }
}
