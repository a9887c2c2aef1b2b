//! Capacity and headroom: a table of common accelerators with the memory their makers publish,
//! the parsing of a size or device name a user gives, and the verdict at a peak.
//!
//! The figures are what the makers publish per device as JAX sees it (a TPU v2/v3 core, a
//! later TPU chip, a GPU). NVIDIA's "GB" of device memory are binary gigabytes (`nvidia-smi`
//! shows an A100 40GB as 40,960 MiB), so they are taken as GiB. The usable share is always
//! smaller: the runtime, the program's code and the allocator keep part of it, and JAX on GPU
//! preallocates 75 % of the memory by default (`XLA_PYTHON_CLIENT_MEM_FRACTION`).
//!
//! A capacity belongs to the memory space it is set on ([`Capacity::space`]): space 0, the
//! device's memory (HBM on a TPU), unless another is named; other spaces are not judged
//! against it ([`Capacity::holds`]). A size the user typed is shown as typed
//! ([`Capacity::shown`]: `15.75GiB`, not `15.8 GiB`), and judged by its exact bytes.

use serde::Serialize;

use crate::units::{human_bytes, parse_bytes};

const GIB: u64 = 1 << 30;

/// A device and its published memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Device {
    /// As the maker names it: `TPU v5e`, `A100 80GB`.
    pub name: &'static str,
    pub bytes: u64,
    /// What the figure is: `HBM per core`, `HBM per chip`, `GDDR6`.
    pub memory: &'static str,
}

/// Common TPU and GPU generations.
pub const DEVICES: &[Device] = &[
    Device {
        name: "TPU v2",
        bytes: 8 * GIB,
        memory: "HBM per core",
    },
    Device {
        name: "TPU v3",
        bytes: 16 * GIB,
        memory: "HBM per core",
    },
    Device {
        name: "TPU v4",
        bytes: 32 * GIB,
        memory: "HBM per chip",
    },
    Device {
        name: "TPU v5e",
        bytes: 16 * GIB,
        memory: "HBM per chip",
    },
    Device {
        name: "TPU v5p",
        bytes: 95 * GIB,
        memory: "HBM per chip",
    },
    Device {
        name: "TPU v6e",
        bytes: 32 * GIB,
        memory: "HBM per chip",
    },
    Device {
        name: "V100 16GB",
        bytes: 16 * GIB,
        memory: "HBM2",
    },
    Device {
        name: "V100 32GB",
        bytes: 32 * GIB,
        memory: "HBM2",
    },
    Device {
        name: "T4",
        bytes: 16 * GIB,
        memory: "GDDR6",
    },
    Device {
        name: "A100 40GB",
        bytes: 40 * GIB,
        memory: "HBM2",
    },
    Device {
        name: "A100 80GB",
        bytes: 80 * GIB,
        memory: "HBM2e",
    },
    Device {
        name: "L4",
        bytes: 24 * GIB,
        memory: "GDDR6",
    },
    Device {
        name: "H100 80GB",
        bytes: 80 * GIB,
        memory: "HBM3",
    },
    Device {
        name: "H200",
        bytes: 141 * GIB,
        memory: "HBM3e",
    },
];

/// What the user said the capacity is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Capacity {
    pub bytes: u64,
    /// The device's name, or the size as typed.
    pub label: String,
    pub device: Option<Device>,
    /// The memory space (colour) it is set on: 0 (the device's memory, HBM on a TPU)
    /// unless another is named.
    pub space: u32,
}

impl Capacity {
    /// The same capacity set on memory space `color`.
    pub fn on(self, color: u32) -> Capacity {
        Capacity {
            space: color,
            ..self
        }
    }

    /// Whether memory space `color` is held against this capacity.
    pub fn holds(&self, color: u32) -> bool {
        self.space == color
    }

    /// The capacity as people read it: a size as the user typed it (`15.75GiB`), a device
    /// as its bytes (`16.0 GiB`).
    pub fn shown(&self) -> String {
        match self.device {
            Some(_) => human_bytes(self.bytes),
            None => self.label.clone(),
        }
    }
}

/// Normalises a device name for comparison: lower case, without spaces, `-` or `_`, and
/// without a leading `tpu` or `nvidia`.
fn squash(name: &str) -> String {
    let s: String = name
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect();
    let s = s.strip_prefix("nvidia").unwrap_or(&s);
    s.strip_prefix("tpu").unwrap_or(s).to_string()
}

/// Parses `16GiB`, `40GB`, `40e9`, `512 MiB`, `1.5T` (K/M/G/T alone are binary; KB/MB/GB/TB
/// decimal; KiB/MiB/GiB/TiB binary; a bare number is bytes) or a device name of [`DEVICES`]
/// (`v5e`, `TPU v5e`, `a100-80gb`; a name that fits several devices is an error naming them).
pub fn parse_capacity(text: &str) -> Result<Capacity, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty capacity".to_string());
    }
    if let Some(bytes) = parse_bytes(t) {
        return Ok(Capacity {
            bytes,
            label: t.to_string(),
            device: None,
            space: 0,
        });
    }
    let want = squash(t);
    let exact: Vec<&Device> = DEVICES.iter().filter(|d| squash(d.name) == want).collect();
    let found: Vec<&Device> = if exact.is_empty() {
        DEVICES
            .iter()
            .filter(|d| squash(d.name).starts_with(&want))
            .collect()
    } else {
        exact
    };
    match found.as_slice() {
        [d] => Ok(Capacity {
            bytes: d.bytes,
            label: d.name.to_string(),
            device: Some(**d),
            space: 0,
        }),
        [] => Err(format!(
            "not a size (16GiB, 40GB, 40e9) or a known device ({})",
            DEVICES
                .iter()
                .map(|d| d.name)
                .collect::<Vec<_>>()
                .join(", ")
        )),
        several => Err(format!(
            "{t:?} fits several devices: {}",
            several
                .iter()
                .map(|d| d.name)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The peak against a capacity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub capacity_bytes: u64,
    pub peak_bytes: u64,
    pub fits: bool,
    /// `capacity − peak` when it fits, else 0.
    pub headroom_bytes: u64,
    /// `peak − capacity` when it does not, else 0.
    pub excess_bytes: u64,
    /// "exceeds 16.0 GiB (TPU v5e) by 1.2 GiB" or "3.0 GiB of headroom on …".
    pub sentence: String,
}

/// The verdict for a peak of `peak_bytes` on `capacity`.
pub fn verdict(peak_bytes: u64, capacity: &Capacity) -> Verdict {
    let cap = capacity.bytes;
    let on = match &capacity.device {
        Some(d) => format!("{} ({}, {})", human_bytes(cap), d.name, d.memory),
        None => capacity.shown(),
    };
    let fits = peak_bytes <= cap;
    let sentence = if fits {
        format!(
            "{} of headroom on {on} at the peak of {}; the usable share of a device is smaller than its published memory.",
            human_bytes(cap - peak_bytes),
            human_bytes(peak_bytes)
        )
    } else {
        format!(
            "The peak of {} exceeds {on} by {}.",
            human_bytes(peak_bytes),
            human_bytes(peak_bytes - cap)
        )
    };
    Verdict {
        capacity_bytes: cap,
        peak_bytes,
        fits,
        headroom_bytes: cap.saturating_sub(peak_bytes),
        excess_bytes: peak_bytes.saturating_sub(cap),
        sentence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let b = |t: &str| parse_capacity(t).map(|c| c.bytes);
        assert_eq!(b("16GiB"), Ok(16 * GIB));
        assert_eq!(b("16 GiB"), Ok(16 * GIB));
        assert_eq!(b("40GB"), Ok(40_000_000_000));
        assert_eq!(b("40e9"), Ok(40_000_000_000));
        assert_eq!(b("1.5G"), Ok(3 * GIB / 2));
        assert_eq!(b("512mib"), Ok(512 << 20));
        assert_eq!(b("1234"), Ok(1234));
        assert!(b("-3GB").is_err());
        assert!(b("1e400").is_err());
        assert!(b("").is_err());
        assert!(b("12 parsecs").is_err());
    }

    #[test]
    fn devices() {
        let c = parse_capacity("TPU v5e").unwrap();
        assert_eq!((c.bytes, c.label.as_str()), (16 * GIB, "TPU v5e"));
        assert_eq!(parse_capacity("v5p").unwrap().bytes, 95 * GIB);
        assert_eq!(parse_capacity("a100-80gb").unwrap().bytes, 80 * GIB);
        assert_eq!(parse_capacity("nvidia h100").unwrap().label, "H100 80GB");
        let e = parse_capacity("a100").unwrap_err();
        assert!(e.contains("A100 40GB") && e.contains("A100 80GB"), "{e}");
    }

    #[test]
    fn a_typed_size_is_shown_as_typed_and_judged_exactly() {
        // 15.75 GiB = 16,911,433,728 bytes; `human_bytes` would say 15.8 GiB.
        let c = parse_capacity("15.75GiB").unwrap();
        assert_eq!(c.bytes, 16_911_433_728);
        assert_eq!(c.shown(), "15.75GiB");
        // A peak one byte over is over, though both read 15.8 GiB rounded.
        let v = verdict(16_911_433_729, &c);
        assert!(!v.fits);
        assert_eq!(v.excess_bytes, 1);
        assert_eq!(v.sentence, "The peak of 15.8 GiB exceeds 15.75GiB by 1 B.");
        let v = verdict(16_911_433_728, &c);
        assert!(v.fits && v.headroom_bytes == 0, "{v:?}");
        // A device is shown by its bytes.
        assert_eq!(parse_capacity("v5e").unwrap().shown(), "16.0 GiB");
    }

    #[test]
    fn a_capacity_holds_the_space_it_is_set_on() {
        let c = parse_capacity("16GiB").unwrap();
        assert!(c.holds(0) && !c.holds(1) && !c.holds(6));
        let vmem = c.on(1);
        assert!(vmem.holds(1) && !vmem.holds(0));
    }

    #[test]
    fn verdicts() {
        let c = parse_capacity("16GiB").unwrap();
        let v = verdict(17 * GIB, &c);
        assert!(!v.fits);
        assert_eq!(v.excess_bytes, GIB);
        assert_eq!(v.sentence, "The peak of 17.0 GiB exceeds 16GiB by 1.0 GiB.");
        let v = verdict(12 * GIB, &parse_capacity("v5e").unwrap());
        assert_eq!((v.fits, v.headroom_bytes), (true, 4 * GIB));
        assert!(
            v.sentence
                .starts_with("4.0 GiB of headroom on 16.0 GiB (TPU v5e, HBM per chip)"),
            "{}",
            v.sentence
        );
    }
}
