//! Capacity and headroom: a table of common accelerators with the memory their makers publish,
//! the parsing of a size or device name a user gives, and the verdict at a peak.
//!
//! The figures are what the makers publish per device as JAX sees it (a TPU v2/v3 core, a
//! later TPU chip, a GPU). NVIDIA's "GB" of device memory are binary gigabytes (`nvidia-smi`
//! shows an A100 40GB as 40,960 MiB), so they are taken as GiB. The usable share is always
//! smaller: the runtime, the program's code and the allocator keep part of it. Where the
//! compiler says how much it can use, that is what a device's name means: XLA:TPU prints the
//! usable HBM of a generation in its out-of-memory errors ([`USABLE`]: v5e 15.75G, v6e
//! 31.24G, v4 30.75G), so `v5e` is "TPU v5e: 15.75 GiB usable by XLA of 16 GiB HBM"
//! ([`usable_meaning`]) and `v5e published` the 16 GiB. On a GPU a name is its published
//! memory, and `… at 75 %` the share JAX preallocates by default
//! (`XLA_PYTHON_CLIENT_MEM_FRACTION`, [`JAX_GPU_PERCENT`]). [`offers`] lists them all. A
//! capacity may also come from an error message paired with its dump ([`Capacity::source`]).
//!
//! A capacity belongs to the memory space it is set on ([`Capacity::space`]): space 0, the
//! device's memory (HBM on a TPU), unless another is named; other spaces are not judged
//! against it ([`Capacity::holds`]). A size the user typed is shown as typed
//! ([`Capacity::shown`]: `15.75GiB`, not `15.8 GiB`), and judged by its exact bytes; a
//! device's figure is shown to the hundredth of a GiB (`15.75 GiB`).

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

/// Why a GPU's share other than the published one is offered, as the offer says it.
pub const JAX_WHY: &str = "what JAX preallocates by default (XLA_PYTHON_CLIENT_MEM_FRACTION=.75); \
XLA_PYTHON_CLIENT_PREALLOCATE=false or another fraction changes it";

/// What a device's published figure is called where a usable one is its name's meaning.
const PUBLISHED: &str = "published";

/// A device figure to the hundredth of a GiB, as its maker or compiler says it (`16 GiB`,
/// `15.75 GiB`, `31.24 GiB`); under 1 GiB, [`human_bytes`].
pub fn device_bytes(bytes: u64) -> String {
    if bytes < GIB {
        return human_bytes(bytes);
    }
    let t = format!("{:.2}", bytes as f64 / GIB as f64);
    format!("{} GiB", t.trim_end_matches('0').trim_end_matches('.'))
}

/// The usable figure the compiler prints for `device`, if any.
fn usable_of(device: &Device) -> Option<&'static Usable> {
    USABLE.iter().find(|u| u.device == device.name)
}

/// What a TPU generation's name means as a capacity, without its name: "15.75 GiB usable by
/// XLA of 16 GiB HBM".
fn usable_words(u: &Usable, d: &Device) -> String {
    format!("{} usable by XLA of {} HBM", device_bytes(u.bytes), device_bytes(d.bytes))
}

/// What each TPU generation's name means as a capacity, one line each: "TPU v5e: 15.75 GiB
/// usable by XLA of 16 GiB HBM" (for `--help` and the page).
pub fn usable_meaning() -> Vec<String> {
    DEVICES
        .iter()
        .filter_map(|d| Some(format!("{}: {}", d.name, usable_words(usable_of(d)?, d))))
        .collect()
}

/// One choice of a device list: its name (what [`parse_capacity`] reads back), the bytes,
/// and what the figure is, with its bytes ("15.75 GiB usable by XLA of 16 GiB HBM").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Offer {
    pub name: String,
    pub bytes: u64,
    pub what: String,
}

/// Every device: a TPU whose compiler prints its usable HBM as that (`TPU v5e`, 15.75 GiB)
/// and its published memory beside it (`TPU v5e published`); another device's published
/// memory, and on a GPU JAX's default share beside it (`A100 80GB at 75 %`).
pub fn offers() -> Vec<Offer> {
    let mut out = Vec::new();
    for d in DEVICES {
        let published = format!("{} {}, {PUBLISHED}", device_bytes(d.bytes), d.memory);
        if let Some(u) = usable_of(d) {
            out.push(Offer {
                name: d.name.to_string(),
                bytes: u.bytes,
                what: usable_words(u, d),
            });
            out.push(Offer {
                name: format!("{} {PUBLISHED}", d.name),
                bytes: d.bytes,
                what: published,
            });
            continue;
        }
        out.push(Offer {
            name: d.name.to_string(),
            bytes: d.bytes,
            what: published,
        });
        if !d.name.starts_with("TPU") {
            let bytes = d.bytes * JAX_GPU_PERCENT / 100;
            out.push(Offer {
                name: format!("{} at {JAX_GPU_PERCENT} %", d.name),
                bytes,
                what: format!("{}, {JAX_WHY}", device_bytes(bytes)),
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

    /// The capacity and what it is, as a verdict says it: `15.75 GiB (TPU v5e: 15.75 GiB
    /// usable by XLA of 16 GiB HBM)`, `16 GiB (TPU v5e, HBM per chip)`, a size as typed.
    pub fn described(&self) -> String {
        match (&self.device, &self.source) {
            (Some(d), Some(s)) => format!("{} ({}: {s})", self.shown(), d.name),
            (Some(d), None) => format!("{} ({}, {})", self.shown(), d.name, d.memory),
            (None, Some(s)) => format!("{} ({s})", human_bytes(self.bytes)),
            (None, None) => self.shown(),
        }
    }

    /// The capacity as people read it: a size as the user typed it (`15.75GiB`,
    /// `16911433728`), a device as its bytes to the hundredth of a GiB (`15.75 GiB`).
    pub fn shown(&self) -> String {
        match self.device {
            Some(_) => device_bytes(self.bytes),
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
/// (`v5e`, `TPU v5e`, `a100-80gb`; a name that fits several devices is an error naming them):
/// a TPU whose usable HBM the compiler prints is that ([`USABLE`]), another device its
/// published memory. [`offers`]' other figures are read back by their names: `TPU v5e
/// published`, `A100 80GB at 75 %` (and `TPU v5e usable`, the same as `TPU v5e`).
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
    if let Some(base) = t.strip_suffix(PUBLISHED).map(str::trim_end) {
        let d = parse_capacity(base)?.device;
        let d = d.ok_or_else(|| format!("{base:?} is not a device"))?;
        return Ok(Capacity {
            bytes: d.bytes,
            label: format!("{} {PUBLISHED}", d.name),
            device: Some(d),
            source: None,
            space: 0,
        });
    }
    if let Some(base) = t.strip_suffix("usable").map(str::trim_end) {
        let c = parse_capacity(base)?;
        let d = c.device.ok_or_else(|| format!("{base:?} is not a device"))?;
        return match usable_of(&d) {
            Some(_) => Ok(c),
            None => Err(format!(
                "no usable figure is known for {}: the compiler's messages of a {} give it",
                d.name, d.name
            )),
        };
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
    device(t)
}

/// A device name of [`DEVICES`] as a capacity: a TPU's usable HBM where its compiler prints
/// it, else the published memory; a name that fits several devices is an error naming them.
fn device(t: &str) -> Result<Capacity, String> {
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
            bytes: usable_of(d).map_or(d.bytes, |u| u.bytes),
            label: d.name.to_string(),
            device: Some(**d),
            source: usable_of(d).map(|u| usable_words(u, d)),
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
    let on = capacity.described();
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
        // A TPU generation whose compiler prints its usable HBM means that figure.
        let c = parse_capacity("TPU v5e").unwrap();
        assert_eq!((c.bytes, c.label.as_str()), (16_911_433_728, "TPU v5e"));
        assert_eq!(parse_capacity("v5e published").unwrap().bytes, 16 * GIB);
        assert_eq!(parse_capacity("v5p").unwrap().bytes, 95 * GIB);
        assert_eq!(parse_capacity("a100-80gb").unwrap().bytes, 80 * GIB);
        assert_eq!(parse_capacity("nvidia h100").unwrap().label, "H100 80GB");
        let e = parse_capacity("a100").unwrap_err();
        assert!(e.contains("A100 40GB") && e.contains("A100 80GB"), "{e}");
    }

    #[test]
    fn a_tpu_name_says_it_is_the_compilers_usable_figure() {
        let v5e = parse_capacity("v5e").unwrap();
        assert_eq!(v5e.shown(), "15.75 GiB");
        assert_eq!(v5e.source.as_deref(), Some("15.75 GiB usable by XLA of 16 GiB HBM"));
        let meaning = usable_meaning();
        assert!(meaning.contains(&"TPU v5e: 15.75 GiB usable by XLA of 16 GiB HBM".to_string()), "{meaning:?}");
        assert!(meaning.contains(&"TPU v6e: 31.24 GiB usable by XLA of 32 GiB HBM".to_string()), "{meaning:?}");
        assert_eq!(meaning.len(), USABLE.len());
        let v = verdict(24 * GIB, &v5e);
        assert_eq!(
            v.sentence,
            "The peak of 24.0 GiB exceeds 15.75 GiB (TPU v5e: 15.75 GiB usable by XLA of 16 GiB HBM) by 8.2 GiB."
        );
        // `v5e usable` (the old name of the offer) reads as `v5e`.
        assert_eq!(parse_capacity("v5e usable"), Ok(v5e));
        assert!(parse_capacity("v5p usable").is_err());
    }

    #[test]
    fn every_offer_is_read_back_by_its_name() {
        let offers = offers();
        for o in &offers {
            let c = parse_capacity(&o.name).unwrap();
            assert_eq!((c.bytes, c.label.as_str()), (o.bytes, o.name.as_str()));
            // The offer says its bytes as the capacity is shown.
            assert!(o.what.starts_with(&c.shown()), "{o:?}");
        }
        // 80 GiB × 75 % = 60 GiB.
        assert_eq!(parse_capacity("a100-80gb at 75 %").unwrap().bytes, 60 * GIB);
        assert!(parse_capacity("v5e at 75 %").is_err());
        assert!(offers.iter().any(|o| o.name == "TPU v6e" && o.bytes == 33_543_694_582));
        assert!(offers.iter().any(|o| o.name == "TPU v6e published" && o.bytes == 32 * GIB));
    }

    #[test]
    fn a_typed_size_is_shown_as_typed_and_judged_exactly() {
        // 15.75 GiB = 16,911,433,728 bytes; `human_bytes` would say 15.8 GiB.
        for typed in ["15.75GiB", "15.75G", "16911433728"] {
            let c = parse_capacity(typed).unwrap();
            assert_eq!(c.bytes, 16_911_433_728);
            assert_eq!(c.shown(), typed);
            // A peak one byte over is over, though both read 15.8 GiB rounded.
            let v = verdict(16_911_433_729, &c);
            assert!(!v.fits);
            assert_eq!(v.excess_bytes, 1);
            assert_eq!(v.sentence, format!("The peak of 15.8 GiB exceeds {typed} by 1 B."));
            let v = verdict(16_911_433_728, &c);
            assert!(v.fits && v.headroom_bytes == 0, "{v:?}");
        }
        // A device is shown by its bytes, to the hundredth of a GiB.
        assert_eq!(parse_capacity("v5e published").unwrap().shown(), "16 GiB");
        assert_eq!(device_bytes(33_543_694_582), "31.24 GiB");
        assert_eq!(device_bytes(512 << 20), "512.0 MiB");
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
        let v = verdict(12 * GIB, &parse_capacity("v5e published").unwrap());
        assert_eq!((v.fits, v.headroom_bytes), (true, 4 * GIB));
        assert!(
            v.sentence
                .starts_with("4.0 GiB of headroom on 16 GiB (TPU v5e, HBM per chip)"),
            "{}",
            v.sentence
        );
    }
}
