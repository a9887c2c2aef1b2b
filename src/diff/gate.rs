//! The CI gate: how much a memory space's peak may grow, and the verdict.
//!
//! A limit is bytes or a percentage of the base peak ([`Limit::parse`]). A memory space
//! fails when its peak grew by **more** than the limit: `delta > bytes`, or
//! `delta × 100 > percent × base peak` (so with a base peak of 0 any growth fails a
//! percentage). A shrinking or unchanged peak always passes. Modules without a partner are
//! not judged; the caller reports them.

use serde::Serialize;

use super::{ModuleDiff, SpaceDiff};

/// How much a peak may grow.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    Bytes(u64),
    /// Percent of the base peak (`5` for `5%`).
    Percent(f64),
}

impl Limit {
    /// `64MiB`, `64 MB`, `1e6`, `1.5GiB` (read by [`crate::units::parse_bytes`]) or `5%`.
    /// The error is one sentence.
    pub fn parse(text: &str) -> Result<Limit, String> {
        let t = text.trim();
        let bad = || {
            format!("cannot read the limit '{text}': expected bytes such as 64MiB, 64MB or 1e6, or a percentage such as 5%")
        };
        if let Some(pct) = t.strip_suffix('%') {
            let p: f64 = pct.trim().parse().map_err(|_| bad())?;
            return (p.is_finite() && p >= 0.0)
                .then_some(Limit::Percent(p))
                .ok_or_else(bad);
        }
        crate::units::parse_bytes(t)
            .map(Limit::Bytes)
            .ok_or_else(bad)
    }

    /// The growth allowed from a base peak of `base` bytes (rounded down).
    pub fn allowed_growth(self, base: u64) -> u64 {
        match self {
            Limit::Bytes(b) => b,
            Limit::Percent(p) => {
                let allowed = base as f64 * p / 100.0;
                if allowed >= 18_446_744_073_709_551_615.0 {
                    u64::MAX
                } else {
                    allowed as u64
                }
            }
        }
    }

    /// Whether a peak going from `base` to `new` bytes grew past the limit.
    pub fn exceeded(self, base: u64, new: u64) -> bool {
        let Some(growth) = new.checked_sub(base) else {
            return false;
        };
        match self {
            Limit::Bytes(b) => growth > b,
            Limit::Percent(p) => growth as f64 * 100.0 > p * base as f64,
        }
    }
}

/// A memory space whose peak grew past the limit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GateFailure {
    pub base_module: String,
    pub new_module: String,
    pub color: u32,
    pub base_peak_bytes: u64,
    pub new_peak_bytes: u64,
    pub delta_bytes: i64,
    /// Growth the limit allowed.
    pub allowed_bytes: u64,
}

/// The gate's verdict over every paired module's memory spaces.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    pub limit: Limit,
    /// `failures` is empty.
    pub passed: bool,
    pub failures: Vec<GateFailure>,
}

/// Judges every memory space of every module diff.
pub fn verdict<'a>(modules: impl IntoIterator<Item = &'a ModuleDiff>, limit: Limit) -> Verdict {
    let mut failures = Vec::new();
    for m in modules {
        for s in &m.spaces {
            if let Some(f) = space_failure(m, s, limit) {
                failures.push(f);
            }
        }
    }
    Verdict {
        limit,
        passed: failures.is_empty(),
        failures,
    }
}

fn space_failure(m: &ModuleDiff, s: &SpaceDiff, limit: Limit) -> Option<GateFailure> {
    let (base, new) = (s.peaks.base_peak_bytes, s.peaks.new_peak_bytes);
    limit.exceeded(base, new).then(|| GateFailure {
        base_module: m.base_name.clone(),
        new_module: m.new_name.clone(),
        color: s.peaks.color,
        base_peak_bytes: base,
        new_peak_bytes: new,
        delta_bytes: s.peaks.delta_bytes,
        allowed_bytes: limit.allowed_growth(base),
    })
}

#[cfg(test)]
mod tests {
    use super::Limit;

    #[test]
    fn limits_parse() {
        assert_eq!(Limit::parse("64MiB"), Ok(Limit::Bytes(64 << 20)));
        assert_eq!(Limit::parse("64MB"), Ok(Limit::Bytes(64_000_000)));
        assert_eq!(Limit::parse(" 64 mib "), Ok(Limit::Bytes(64 << 20)));
        assert_eq!(Limit::parse("1e6"), Ok(Limit::Bytes(1_000_000)));
        assert_eq!(Limit::parse("1.5KiB"), Ok(Limit::Bytes(1536)));
        assert_eq!(Limit::parse("0"), Ok(Limit::Bytes(0)));
        assert_eq!(Limit::parse("64M"), Ok(Limit::Bytes(64 << 20)));
        assert_eq!(Limit::parse("5%"), Ok(Limit::Percent(5.0)));
        assert_eq!(Limit::parse("0.5 %"), Ok(Limit::Percent(0.5)));
        for bad in [
            "", "%", "-1", "-5%", "5 apples", "1e400", "inf", "NaN%", "MiB", "1e",
        ] {
            assert!(Limit::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn exceeded_only_past_the_limit() {
        let b = Limit::Bytes(100);
        assert!(!b.exceeded(1000, 1100));
        assert!(b.exceeded(1000, 1101));
        assert!(!b.exceeded(1000, 0));
        let p = Limit::Percent(5.0);
        assert!(!p.exceeded(1000, 1050));
        assert!(p.exceeded(1000, 1051));
        assert!(p.exceeded(0, 1));
        assert!(!p.exceeded(0, 0));
        assert_eq!(p.allowed_growth(1000), 50);
        assert!(!Limit::Bytes(0).exceeded(7, 7));
        assert!(Limit::Bytes(0).exceeded(7, 8));
    }
}
