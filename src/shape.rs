//! Shapes as XLA prints them (`f32[64,64]{1,0:T(8,128)}`, `(s32[], f32[8]{0})`, `u32[]`):
//! their logical size, the `ShapeUtil::ByteSizeOf(shape, 8)` that XLA's peak list prints —
//! elements × element size ignoring tiling and padding but honouring `E(bits)`; 8 bytes per
//! tuple element; 0 for tokens. Comparing it with the allocated size shows the padding.

/// Logical bytes of a printed shape; `None` when it cannot be known (unbounded dynamic
/// dimension `?`, unknown element type, or text that is not a shape).
pub fn logical_size(shape: &str) -> Option<u64> {
    let s = shape.trim();
    if let Some(inner) = s.strip_prefix('(') {
        return Some(8 * tuple_arity(inner.strip_suffix(')')?)?);
    }
    if let Some(inner) = s.strip_prefix("b(") {
        return logical_size(inner.strip_suffix(')')?);
    }
    let open = s.find('[')?;
    let close = open + s[open..].find(']')?;
    let bits = element_bits(&s[..open])?;
    let mut elements: u64 = 1;
    for dim in s[open + 1..close].split(',').filter(|d| !d.is_empty()) {
        let d = dim.trim().trim_start_matches("<=");
        elements = elements.saturating_mul(d.parse::<u64>().ok()?);
    }
    let layout = &s[close + 1..];
    match layout_element_bits(layout) {
        Some(e) => Some(elements.saturating_mul(e).div_ceil(8)),
        None => Some(elements.saturating_mul(bits.div_ceil(8))),
    }
}

/// The top-level elements of a printed tuple shape (`(s32[], /*index=1*/f32[8]{0})` →
/// `["s32[]", "f32[8]{0}"]`); `None` for a shape that is not a tuple or does not close.
pub fn tuple_elements(shape: &str) -> Option<Vec<&str>> {
    let inner = shape.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut out = Vec::new();
    let (mut depth, mut from) = (0i32, 0usize);
    let bytes = inner.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                out.push(&inner[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(&inner[from..]);
    let out: Vec<&str> = out.into_iter().map(skip_comment).filter(|e| !e.is_empty()).collect();
    (depth == 0).then_some(out)
}

/// A tuple element without its leading `/*index=N*/` comment, trimmed.
fn skip_comment(e: &str) -> &str {
    let e = e.trim();
    match e.strip_prefix("/*").and_then(|r| r.find("*/").map(|k| &r[k + 2..])) {
        Some(rest) => rest.trim(),
        None => e,
    }
}

/// The dimensions of an array shape (`bf16[8,1024]{1,0}` → `[8, 1024]`); `None` for a
/// tuple, a dynamic dimension or text that is not a shape.
pub fn dimensions(shape: &str) -> Option<Vec<u64>> {
    let s = shape.trim();
    if s.starts_with('(') {
        return None;
    }
    let open = s.find('[')?;
    let close = open + s[open..].find(']')?;
    s[open + 1..close]
        .split(',')
        .filter(|d| !d.trim().is_empty())
        .map(|d| d.trim().parse().ok())
        .collect()
}

/// Number of top-level elements of a tuple's inside (`/*index=5*/` comments skipped).
fn tuple_arity(inner: &str) -> Option<u64> {
    let mut depth = 0i32;
    let mut count = 0u64;
    let mut any = false;
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'*') => {
                // Skip to the end of the comment.
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
                continue;
            }
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => count += 1,
            c if c.is_whitespace() => continue,
            _ => {}
        }
        any = true;
    }
    (depth == 0).then_some(if any { count + 1 } else { 0 })
}

/// `E(bits)` in a layout `{...:... E(4) ...}`.
fn layout_element_bits(layout: &str) -> Option<u64> {
    let colon = layout.find(':')?;
    let e = colon + layout[colon..].find("E(")?;
    let end = e + layout[e..].find(')')?;
    layout[e + 2..end].parse().ok()
}

/// Bit width of an element type (`primitive_util::BitWidth`); sub-byte types occupy a
/// whole byte unless the layout says `E(bits)`.
fn element_bits(ty: &str) -> Option<u64> {
    Some(match ty {
        "token" => 0,
        "pred" | "s8" | "u8" => 8,
        "s1" | "u1" => 1,
        "s2" | "u2" => 2,
        "s4" | "u4" | "f4e2m1fn" => 4,
        "f6e2m3fn" | "f6e3m2fn" => 6,
        "s16" | "u16" | "f16" | "bf16" => 16,
        "s32" | "u32" | "f32" => 32,
        "s64" | "u64" | "f64" | "c64" | "opaque" => 64,
        "c128" => 128,
        t if t.starts_with("f8") => 8,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::{dimensions, logical_size, tuple_elements};

    #[test]
    fn tuple_elements_and_dimensions() {
        let t = "(s32[]{:T(128)}, bf16[8,8,1024]{2,1,0:T(8,128)(2,1)}, /*index=2*/(f32[], u8[3]), pred[1024,1024]{0,1})";
        assert_eq!(
            tuple_elements(t).unwrap(),
            vec!["s32[]{:T(128)}", "bf16[8,8,1024]{2,1,0:T(8,128)(2,1)}", "(f32[], u8[3])", "pred[1024,1024]{0,1}"]
        );
        assert_eq!(tuple_elements("f32[2]"), None);
        assert_eq!(tuple_elements("(f32[2]"), None);
        assert_eq!(tuple_elements("()").unwrap(), Vec::<&str>::new());
        assert_eq!(dimensions("bf16[8,8,1024]{2,1,0:T(8,128)(2,1)}"), Some(vec![8, 8, 1024]));
        assert_eq!(dimensions("s32[]"), Some(vec![]));
        assert_eq!(dimensions("f32[<=4]"), None);
        assert_eq!(dimensions("(f32[2])"), None);
    }

    #[test]
    fn sizes() {
        assert_eq!(logical_size("f32[64,64]{1,0:T(8,128)}"), Some(16384));
        assert_eq!(logical_size("u32[]"), Some(4));
        assert_eq!(logical_size("u32[]{:S(2)}"), Some(4));
        assert_eq!(logical_size("bf16[2,3]{1,0}"), Some(12));
        assert_eq!(
            logical_size("(u32[2]{0:T(128)}, u32[2]{0:T(128)}, u32[2]{0:T(128)})"),
            Some(24)
        );
        assert_eq!(logical_size("(f32[], /*index=5*/f32[])"), Some(16));
        assert_eq!(logical_size("()"), Some(0));
        assert_eq!(logical_size("token[]"), Some(0));
        assert_eq!(logical_size("s4[8]{0:E(4)}"), Some(4));
        assert_eq!(logical_size("s4[8]{0}"), Some(8));
        assert_eq!(logical_size("f32[<=8,2]"), Some(64));
        assert_eq!(logical_size("f32[?,2]"), None);
        assert_eq!(logical_size("zz[2]"), None);
        assert_eq!(
            logical_size("f32[99999999999,99999999999,99999999999]"),
            Some(u64::MAX)
        );
    }
}
