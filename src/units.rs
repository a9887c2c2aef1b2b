//! Units and number formatting: every byte size and count the program writes for people,
//! in one place. The forms differ on purpose, each for its reader:
//!
//! - [`human_bytes`]: `"12.0 KiB"`, one decimal, binary units (summaries, render, the page);
//! - [`exact_bytes`]: `"172,580 B (168.5 KiB)"`, the exact figure first (the page);
//! - [`tsl_human_bytes`]: `"1.50MiB"`, what XLA itself prints in `Total bytes used`;
//! - [`group_digits`] and [`count`]: `"177,800"`, `"1 value"`.
//!
//! And the one reading of a size people type ([`parse_bytes`]), for `generate --size`,
//! `--capacity` and `diff --max-growth`.

/// Binary units, 1024 apart: `UNITS[j]` is `1 << (10 * j)` bytes.
const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// A size as people type it: `4096`, `1e9`, `1.5GiB`, `64 MB`. Units, in any case: `B`;
/// `KB MB GB TB` are powers of 1000; `KiB MiB GiB TiB` and the bare `K M G T` (as XLA prints
/// them, `63.80G`) are powers of 1024. Rounded to a whole byte; `None` for anything else,
/// a negative size or one past `u64`.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(t.len());
    let (number, unit) = (t[..split].trim(), t[split..].trim());
    let n: f64 = number.parse().ok()?;
    let binary = |power: i32| 1024f64.powi(power);
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "k" | "kib" => binary(1),
        "m" | "mib" => binary(2),
        "g" | "gib" => binary(3),
        "t" | "tib" => binary(4),
        _ => return None,
    };
    let bytes = (n * scale).round();
    // `u64::MAX as f64` rounds up to 2^64, which is out of range.
    (0.0..18_446_744_073_709_551_616.0)
        .contains(&bytes)
        .then_some(bytes as u64)
}

/// Bytes for people: "512 B", "12.0 KiB", "1.5 GiB" (binary units, one decimal).
pub fn human_bytes(n: u64) -> String {
    if n < 1024 {
        return format!("{n} B");
    }
    // Step up while the one-decimal figure would read 1024.0 or more.
    let (value, unit) = scaled(n, 1023.95);
    format!("{value:.1} {}", UNITS[unit])
}

/// `n` (at least 1 KiB) in the unit that keeps it under `next` (or in EiB), and that unit's
/// index in [`UNITS`].
fn scaled(n: u64, next: f64) -> (f64, usize) {
    let mut value = n as f64 / 1024.0;
    let mut unit = 1;
    while value >= next && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    (value, unit)
}

/// Exact bytes with the human size after it: `"172,580 B (168.5 KiB)"`; below 1 KiB just
/// `"512 B"`.
pub fn exact_bytes(n: u64) -> String {
    if n < 1024 {
        format!("{n} B")
    } else {
        format!("{} B ({})", group_digits(n), human_bytes(n))
    }
}

/// Bytes as XLA prints them (`tsl::strings::HumanReadableNumBytes`, in the `Total bytes
/// used` line): `"512B"`, `"1.5KiB"`, `"1.50MiB"` (no space; two decimals from MiB on).
pub fn tsl_human_bytes(n: u64) -> String {
    if n < 1024 {
        return format!("{n}B");
    }
    let (v, unit) = scaled(n, 1024.0);
    if unit == 1 {
        format!("{v:.1}{}", UNITS[unit])
    } else {
        format!("{v:.2}{}", UNITS[unit])
    }
}

/// An integer with thousands separated by commas: "177,800".
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A change in bytes, exact, with its sign: "+29,700 B", "-2,048 B", "0 B".
pub fn signed_bytes(d: i64) -> String {
    let sign = match d.signum() {
        1 => "+",
        -1 => "-",
        _ => "",
    };
    format!("{sign}{} B", group_digits(d.unsigned_abs()))
}

/// A count and its noun, plural unless one: "1 value", "177,800 values".
pub fn count(n: usize, noun: &str) -> String {
    let plural = if n == 1 { "" } else { "s" };
    format!("{} {noun}{plural}", group_digits(n as u64))
}

/// FLOPs in SI units (`1.23 TFLOP`).
pub fn human_flops(f: u64) -> String {
    let units = [(1e15, "PFLOP"), (1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1e3, "kFLOP")];
    let x = f as f64;
    units.iter().find(|(u, _)| x >= *u).map_or(format!("{f} FLOP"), |(u, n)| format!("{:.2} {n}", x / u))
}

#[cfg(test)]
mod tests {
    #[test]
    fn signed_bytes_keep_their_sign() {
        assert_eq!(signed_bytes(29_700), "+29,700 B");
        assert_eq!(signed_bytes(-2048), "-2,048 B");
        assert_eq!(signed_bytes(0), "0 B");
        assert_eq!(signed_bytes(i64::MIN), "-9,223,372,036,854,775,808 B");
    }

    #[test]
    fn sizes_people_type() {
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes(" 1e9 "), Some(1_000_000_000));
        assert_eq!(parse_bytes("250MB"), Some(250_000_000));
        assert_eq!(parse_bytes("1.5 GiB"), Some(3 << 29));
        assert_eq!(
            parse_bytes("63.80G"),
            Some((63.80 * 1073741824.0f64).round() as u64)
        );
        assert_eq!(parse_bytes("16gib"), Some(16 << 30));
        assert_eq!(parse_bytes("1k"), Some(1024));
        assert_eq!(parse_bytes("40GB"), Some(40_000_000_000));
        for bad in ["", "M", "-1", "1 parsec", "1e30", "GiB16", "nan"] {
            assert_eq!(parse_bytes(bad), None, "{bad:?}");
        }
    }

    use super::*;

    #[test]
    fn human_bytes_one_decimal() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1.0 KiB");
        assert_eq!(human_bytes(12 * 1024), "12.0 KiB");
        assert_eq!(human_bytes(1536 * 1024), "1.5 MiB");
        // 1023.999 KiB would read "1024.0 KiB": it is 1.0 MiB.
        assert_eq!(human_bytes(1024 * 1024 - 1), "1.0 MiB");
        assert_eq!(human_bytes(220 * 1024 * 1024), "220.0 MiB");
        assert_eq!(human_bytes(u64::MAX), "16.0 EiB");
    }

    #[test]
    fn exact_bytes_then_human() {
        assert_eq!(exact_bytes(0), "0 B");
        assert_eq!(exact_bytes(1023), "1023 B");
        assert_eq!(exact_bytes(172_580), "172,580 B (168.5 KiB)");
        assert_eq!(exact_bytes(1_572_864), "1,572,864 B (1.5 MiB)");
    }

    #[test]
    fn tsl_form_as_xla_prints_it() {
        // Figures as they stand in the fixtures' `Total bytes used:` lines.
        assert_eq!(tsl_human_bytes(12_288), "12.0KiB");
        assert_eq!(tsl_human_bytes(172_580), "168.5KiB");
        assert_eq!(tsl_human_bytes(12_889_179), "12.29MiB");
        assert_eq!(tsl_human_bytes(230_870_056), "220.17MiB");
        assert_eq!(tsl_human_bytes(512), "512B");
        assert_eq!(tsl_human_bytes(1536), "1.5KiB");
        assert_eq!(tsl_human_bytes(1_572_864), "1.50MiB");
        assert_eq!(tsl_human_bytes(3 << 30), "3.00GiB");
        // No rounding step-up: 1023.9 KiB stays in KiB.
        assert_eq!(tsl_human_bytes(1024 * 1024 - 100), "1023.9KiB");
        assert_eq!(tsl_human_bytes(u64::MAX), "16.00EiB");
    }

    #[test]
    fn digits_and_counts() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1000), "1,000");
        assert_eq!(group_digits(177_800), "177,800");
        assert_eq!(group_digits(93_763_358), "93,763,358");
        assert_eq!(group_digits(u64::MAX), "18,446,744,073,709,551,615");
        assert_eq!(count(1, "value"), "1 value");
        assert_eq!(count(0, "value"), "0 values");
        assert_eq!(count(177_800, "step"), "177,800 steps");
    }
}
