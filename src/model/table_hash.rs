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

    /// A quicker hash of `bytes` for the HLO text's tables (its interning while read, its
    /// names once read: `model::hlo`), never compared with [`TableHash::of`]'s: eight bytes
    /// a round, a multiply each (64-bit, one instruction in wasm32 too), folded
    /// to 32 bits so that every bit of the input reaches the low bits the table indexes by.
    /// About a third of xxHash32's cost on the short names that most strings are.
    pub fn quick(bytes: &[u8]) -> TableHash {
        const K: u64 = 0xf135_7aea_2e62_a9c5;
        let mut h = bytes.len() as u64;
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            h = (h.rotate_left(26) ^ w).wrapping_mul(K);
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            h = (h.rotate_left(26) ^ u64::from_le_bytes(last)).wrapping_mul(K);
        }
        h = (h ^ (h >> 32)).wrapping_mul(K);
        TableHash((h >> 32) as u32)
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
    /// more than a few, and no two names share all 32 bits. Both hashes.
    #[test]
    fn table_hashes_spread() {
        let names: Vec<String> = ["fusion", "add", "get-tuple-element", "Arg_0"]
            .iter()
            .flat_map(|stem| (0..1 << 16).map(move |n| format!("{stem}.{n}")))
            .collect();
        for hash in [TableHash::of, TableHash::quick] {
            let mut buckets = vec![0u32; 1 << 18];
            let mut full: Vec<u32> = Vec::new();
            for name in &names {
                let h = hash(name.as_bytes());
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

    /// The quick hash reads every byte, the length too: texts that differ in one byte
    /// anywhere, or only in trailing zero bytes, hash apart.
    #[test]
    fn quick_reads_every_byte_and_the_length() {
        let base = b"wide.region_1.6_spmd.clone.sunk".to_vec();
        let h = TableHash::quick(&base);
        for k in 0..base.len() {
            let mut other = base.clone();
            other[k] ^= 1;
            assert_ne!(TableHash::quick(&other), h, "byte {k}");
        }
        assert_ne!(TableHash::quick(b"a"), TableHash::quick(b"a\0"));
        assert_ne!(TableHash::quick(b""), TableHash::quick(b"\0"));
    }
}
