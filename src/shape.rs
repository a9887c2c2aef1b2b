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
    use super::logical_size;

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
