//! Parsing of the `--capacity` of `bufscope summary` and `bufscope render`: a size or a device
//! name, and on a name that fits no device, the close names in the error.

use bufscope::answers::capacity::{parse_capacity, usable_meaning, Capacity, DEVICES};
use bufscope::model::memory_space_name;

/// `--capacity-space`'s value: a colour number, or XLA's name of one (`vmem`, `color_6`).
pub fn space(text: &str) -> Result<u32, String> {
    let t = text.trim().to_ascii_lowercase();
    if let Ok(n) = t.parse::<u32>() {
        return Ok(n);
    }
    if let Some(n) = t.strip_prefix("color_").and_then(|n| n.parse().ok()) {
        return Ok(n);
    }
    (0..6).find(|&c| memory_space_name(c) == t).ok_or_else(|| {
        "not a memory space: a colour (0, 1, 6) or one of default, vmem, smem, hbm, host, cmem, color_N".to_string()
    })
}

/// `--capacity`'s value ([`parse_capacity`]); an unknown device is answered with the device
/// names close to it, or all of them when none is.
pub fn capacity(text: &str) -> Result<Capacity, String> {
    parse_capacity(text).map_err(|e| {
        let close = close_devices(text);
        if close.is_empty() || e.contains("fits several devices") {
            e
        } else {
            format!(
                "not a size (16GiB, 40GB, 40e9) or a known device; close names: {}",
                close.join(", ")
            )
        }
    })
}

/// `--capacity`'s help under `--help`: `what` it does, then what a size and a device name
/// mean: a TPU's name the HBM XLA can use ("TPU v5e: 15.75 GiB usable by XLA of 16 GiB HBM",
/// [`usable_meaning`]), `NAME published` the whole of it.
pub fn capacity_help(what: &str) -> String {
    format!(
        "{what}: a size (16GiB, 15.75G, 40GB, 40e9; shown as typed) or a device (v5e, \"TPU v4\", \
         a100-80gb). A TPU's name means the HBM XLA can use, as its out-of-memory errors print it:\n  {}\n\
         \"v5e published\" is the whole HBM; a GPU's name its published memory (\"a100-80gb at 75 %\": \
         what JAX preallocates by default).",
        usable_meaning().join("\n  ")
    )
}

/// Lower case, letters and digits only, without a leading `tpu` or `nvidia`.
fn key(name: &str) -> String {
    let k: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    ["tpu", "nvidia"]
        .iter()
        .find_map(|p| k.strip_prefix(p))
        .map_or(k.clone(), str::to_string)
}

/// The device names within a few edits of `text`, closest first.
fn close_devices(text: &str) -> Vec<&'static str> {
    let want = key(text);
    if want.is_empty() {
        return Vec::new();
    }
    let limit = 1.max(want.len() / 3);
    let mut close: Vec<(usize, &'static str)> = DEVICES
        .iter()
        .map(|d| (edits(&want, &key(d.name)), d.name))
        .filter(|&(n, _)| n <= limit)
        .collect();
    close.sort();
    close.into_iter().map(|(_, name)| name).collect()
}

/// Levenshtein distance between two short strings.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_devices() {
        assert_eq!(capacity("16GiB").map(|c| c.bytes), Ok(16 << 30));
        assert_eq!(capacity("v5e").map(|c| c.label), Ok("TPU v5e".to_string()));
    }

    #[test]
    fn the_help_says_what_a_tpus_name_means() {
        let h = capacity_help("Hold the peak against this capacity");
        assert!(h.starts_with("Hold the peak against this capacity: a size"), "{h}");
        assert!(h.contains("\n  TPU v5e: 15.75 GiB usable by XLA of 16 GiB HBM\n"), "{h}");
    }

    #[test]
    fn spaces_by_number_or_name() {
        assert_eq!(space("0"), Ok(0));
        assert_eq!(space("VMEM"), Ok(1));
        assert_eq!(space("cmem"), Ok(5));
        assert_eq!(space("color_7"), Ok(7));
        assert!(space("l2").is_err());
    }

    #[test]
    fn an_unknown_device_names_the_close_ones() {
        let e = capacity("TPU v5x").unwrap_err();
        assert!(e.contains("close names: TPU v5e"), "{e}");
        assert!(e.contains("TPU v5p"), "{e}");
        assert!(!e.contains("A100"), "{e}");
        // Nothing close: every device is listed.
        let e = capacity("frobnicator").unwrap_err();
        assert!(e.contains("A100") && e.contains("TPU v4"), "{e}");
        assert_eq!(edits("kitten", "sitting"), 3);
        assert_eq!(edits("", "ab"), 2);
    }
}
