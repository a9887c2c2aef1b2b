//! [`TableHash`]: the hash that the tables of names keep beside each name (the module's
//! string arena, the instruction names of a parse, the schedule index of the answers).

/// 32 bits of a string's hash, kept beside it in a hash table; the table works with
/// [`TableHash::spread`] of them, which it can recompute when it grows without the string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableHash(u32);

impl TableHash {
    /// The hash of `bytes`: MurmurHash3 (32-bit), four bytes at a time. All in 32 bits:
    /// the default hasher's 64-bit products are library calls in wasm32, and were a tenth
    /// of the hashing of names in the page's parse of a 1 GB dump.
    pub fn of(bytes: &[u8]) -> TableHash {
        const C1: u32 = 0xcc9e_2d51;
        const C2: u32 = 0x1b87_3593;
        let mix = |w: u32| w.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        let mut h = 0u32;
        let mut words = bytes.chunks_exact(4);
        for w in &mut words {
            h ^= mix(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
            h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 4];
            last[..rest.len()].copy_from_slice(rest);
            h ^= mix(u32::from_le_bytes(last));
        }
        h ^= bytes.len() as u32;
        h ^= h >> 16;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        TableHash(h ^ (h >> 16))
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
        // MurmurHash3's own values (seed 0), as the `mmh3` Python package gives them.
        let of = |s: &str| TableHash::of(s.as_bytes()).0;
        assert_eq!(of(""), 0);
        assert_eq!(of("a"), 0x3c25_69b2);
        assert_eq!(of("hello"), 0x248b_fa47);
        assert_eq!(of("fusion.12345"), 0x5d33_a692);
    }
}
