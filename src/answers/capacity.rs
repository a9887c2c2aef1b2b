//! Capacity and headroom: a table of common accelerators with the memory their makers publish,
//! the parsing of a size or device name a user gives, and the verdict at a peak.
//!
//! The figures are what the makers publish per device as JAX sees it (a TPU v2/v3 core, a
//! later TPU chip, a GPU). NVIDIA's "GB" of device memory are binary gigabytes (`nvidia-smi`
//! shows an A100 40GB as 40,960 MiB), so they are taken as GiB. The usable share is always
//! smaller: the runtime, the program's code and the allocator keep part of it. Two such
//! figures are offered beside the published ones ([`offers`]): the usable HBM XLA:TPU reports
//! for a generation in its out-of-memory errors ([`USABLE`]: v5e 15.75G, v6e 31.24G, v4
//! 30.75G), and on a GPU the 75 % JAX preallocates by default
//! (`XLA_PYTHON_CLIENT_MEM_FRACTION`, [`JAX_GPU_PERCENT`]). A capacity may also come from an
//! error message paired with its dump ([`Capacity::source`]).
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

/// The usable HBM XLA:TPU reports for a generation in its out-of-memory errors
/// (`… exceeds available HBM (15.75G)`, `Used … of 31.24G hbm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Usable {
    /// A name of [`DEVICES`].
    pub device: &'static str,
    /// As the compiler prints it.
    pub text: &'static str,
    pub bytes: u64,
}

/// The TPU generations whose usable HBM the compiler's messages print.
pub const USABLE: &[Usable] = &[
    Usable {
        device: "TPU v4",
        text: "30.75G",
        bytes: 33_017_561_088,
    },
    Usable {
        device: "TPU v5e",
        text: "15.75G",
        bytes: 16_911_433_728,
    },
    Usable {
        device: "TPU v6e",
        text: "31.24G",
        bytes: 33_543_694_582,
    },
];

/// The share of a GPU's memory JAX preallocates by default, in percent.
pub const JAX_GPU_PERCENT: u64 = 75;

/// Why a figure other than the published one is offered, as the offer says it.
pub const USABLE_WHY: &str = "usable HBM as XLA:TPU reports it in out-of-memory errors";
pub const JAX_WHY: &str = "what JAX preallocates by default (XLA_PYTHON_CLIENT_MEM_FRACTION=.75); \
XLA_PYTHON_CLIENT_PREALLOCATE=false or another fraction changes it";

/// One choice of a device list: its name (what [`parse_capacity`] reads back), the bytes,
/// and what the figure is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Offer {
    pub name: String,
    pub bytes: u64,
    pub what: String,
}

/// Every device's published memory, and beside it the usable HBM a TPU compiler reports
/// (`TPU v5e usable`) or JAX's default share of a GPU (`A100 80GB at 75 %`).
pub fn offers() -> Vec<Offer> {
    let mut out = Vec::new();
    for d in DEVICES {
        out.push(Offer {
            name: d.name.to_string(),
            bytes: d.bytes,
            what: format!("{}, published", d.memory),
        });
        if let Some(u) = USABLE.iter().find(|u| u.device == d.name) {
            out.push(Offer {
                name: format!("{} usable", d.name),
                bytes: u.bytes,
                what: format!("{}, {USABLE_WHY}", u.text),
            });
        } else if !d.name.starts_with("TPU") {
            out.push(Offer {
                name: format!("{} at {JAX_GPU_PERCENT} %", d.name),
                bytes: d.bytes * JAX_GPU_PERCENT / 100,
                what: JAX_WHY.to_string(),
            });
        }
    }
    out
}

/// What the user said the capacity is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Capacity {
    pub bytes: u64,
    /// The device's name, or the size as typed.
    pub label: String,
    pub device: Option<Device>,
    /// Where the figure comes from when it is not the device's published memory or a size
    /// typed: the usable share of [`offers`], or an error message paired with its dump.
    pub source: Option<String>,
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
/// [`offers`]' shares are read back by their names: `TPU v5e usable`, `A100 80GB at 75 %`.
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
            source: None,
            space: 0,
        });
    }
    if let Some(base) = t.strip_suffix("usable").map(str::trim_end) {
        let c = parse_capacity(base)?;
        let d = c.device.ok_or_else(|| format!("{base:?} is not a device"))?;
        let u = USABLE.iter().find(|u| u.device == d.name).ok_or_else(|| {
            format!("no usable figure is known for {}: the compiler's messages of a {} give it", d.name, d.name)
        })?;
        return Ok(Capacity {
            bytes: u.bytes,
            label: format!("{} usable", d.name),
            device: Some(d),
            source: Some(format!("{}, {USABLE_WHY}", u.text)),
            space: 0,
        });
    }
    let jax = format!("at {JAX_GPU_PERCENT} %");
    if let Some(base) = t.strip_suffix(jax.as_str()).map(str::trim_end) {
        let c = parse_capacity(base)?;
        let d = c.device.filter(|d| !d.name.starts_with("TPU"));
        let d = d.ok_or_else(|| format!("{base:?} is not a GPU"))?;
        return Ok(Capacity {
            bytes: d.bytes * JAX_GPU_PERCENT / 100,
            label: format!("{} {jax}", d.name),
            device: Some(d),
            source: Some(JAX_WHY.to_string()),
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
            source: None,
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
    let on = match (&capacity.device, &capacity.source) {
        (Some(d), Some(s)) => format!("{} ({}, {s})", human_bytes(cap), d.name),
        (Some(d), None) => format!("{} ({}, {})", human_bytes(cap), d.name, d.memory),
        (None, Some(s)) => format!("{} ({s})", human_bytes(cap)),
        (None, None) => capacity.shown(),
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
    fn usable_and_jax_shares_are_offered_and_read_back() {
        let offers = offers();
        for o in &offers {
            let c = parse_capacity(&o.name).unwrap();
            assert_eq!((c.bytes, c.label.as_str()), (o.bytes, o.name.as_str()));
        }
        // 15.75 × 2^30 exactly; 80 GiB × 75 % = 60 GiB.
        let v5e = parse_capacity("v5e usable").unwrap();
        assert_eq!(v5e.bytes, 16_911_433_728);
        assert!(v5e.source.as_deref().unwrap().contains("15.75G"));
        assert_eq!(parse_capacity("a100-80gb at 75 %").unwrap().bytes, 60 * GIB);
        assert!(parse_capacity("v5p usable").is_err());
        assert!(parse_capacity("v5e at 75 %").is_err());
        assert!(offers.iter().any(|o| o.name == "TPU v6e usable" && o.bytes == 33_543_694_582));
        let v = verdict(17 * GIB, &v5e);
        assert!(v.sentence.contains("(TPU v5e, 15.75G, usable HBM"), "{}", v.sentence);
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
