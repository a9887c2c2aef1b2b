//! [`TableHash`]: the hash that the tables of names keep beside each name (the module's
//! string arena, the instruction names of a parse, the schedule index of the answers).

/// 32 bits of a string's hash, kept beside it in a hash table; the table works with
/// [`TableHash::spread`] of them, which it can recompute when it grows without the string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableHash(u32);

impl TableHash {
    /// The hash of `bytes`: xxHash32 (seed 0), all in 32 bits. The default hasher's 64-bit
    /// products are library calls in wasm32 (`__multi3`: with the hashing itself, about
    /// 90 ms of the page's load of a 1 GB dump); xxHash32 takes long strings (op_names) 16
    /// bytes a round in four independent lanes.
    pub fn of(bytes: &[u8]) -> TableHash {
        TableHash(xxhash_rust::xxh32::xxh32(bytes, 0))
    }

    /// The 64-bit hash the table uses: the 32 bits multiplied out over all 64.
    pub fn spread(self) -> u64 {
        u64::from(self.0).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

#[cfg(test)]
mod tests {
    use super::TableHash;

    /// Names that differ in any one byte spread over the table's buckets: with 2^18
    /// names like XLA's in 2^18 buckets (the low bits of the spread hash), no bucket holds
    /// more than a few, and no two names share all 32 bits.
    #[test]
    fn table_hashes_spread() {
        let names: Vec<String> = ["fusion", "add", "get-tuple-element", "Arg_0"]
            .iter()
            .flat_map(|stem| (0..1 << 16).map(move |n| format!("{stem}.{n}")))
            .collect();
        let mut buckets = vec![0u32; 1 << 18];
        let mut full: Vec<u32> = Vec::new();
        for name in &names {
            let h = TableHash::of(name.as_bytes());
            buckets[(h.spread() as usize) & ((1 << 18) - 1)] += 1;
            full.push(h.0);
        }
        assert!(
            buckets.iter().max().unwrap() <= &12,
            "{:?}",
            buckets.iter().max()
        );
        full.sort_unstable();
        full.dedup();
        assert!(
            names.len() - full.len() <= 16,
            "{} collisions",
            names.len() - full.len()
        );
    }
}
