//! HBase's MurmurHash (`org.apache.hadoop.hbase.util.MurmurHash`, hash type 1), used by the
//! rowkey `salt` function (`formats/rowkey.md` §"salt"). The HFile Bloom filter uses the same
//! function (`formats/bloom.md`).
//!
//! ```text
//! all arithmetic on 32-bit words, wrapping; m = 0x5bd1e995, r = 24
//! h = seed ^ len
//! each 4-byte word k (little-endian):  k *= m; k ^= k >>> r; k *= m; h *= m; h ^= k
//! tail of 1..3 bytes, each byte SIGN-EXTENDED (HBase's quirk; reference Murmur2 masks them):
//!   h ^= b[2] << 16; h ^= b[1] << 8; h ^= b[0]; h *= m
//! h ^= h >>> 13; h *= m; h ^= h >>> 15
//! ```

/// `MurmurHash.hash(bytes, seed)` exactly as HBase computes it, as a Java `int`. The one
/// implementation lives with the Bloom filters (`format::bloom::hash`); this is the rowkey
/// layer's name for it.
pub fn murmur_hash(data: &[u8], seed: i32) -> i32 {
    hfkit_format::bloom::hash::hash(hfkit_format::bloom::hash::HashType::Murmur, data, seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hfkit_testkit as fixtures;

    #[test]
    fn reference_values() {
        assert_eq!(murmur_hash(b"row1", 0), 155469074);
        assert_eq!(murmur_hash(b"row1", 155469074), -1581353726);
        assert_eq!(murmur_hash(b"abc", 0), 324500635);
        assert_eq!(murmur_hash(b"abc", 324500635), -211163648);
        assert_eq!(murmur_hash(b"", 0), 0);
    }

    /// Every line of HBase's own MurmurHash output (`hashes/murmur.txt`).
    #[test]
    fn hbase_golden_hashes() {
        let Some(dir) = fixtures::dir("hbase_golden_hashes", "hashes") else {
            return;
        };
        let text = std::fs::read_to_string(dir.join("murmur.txt")).unwrap();
        let mut n = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let parts: Vec<&str> = line.split(' ').collect();
            assert_eq!(parts.len(), 3, "{line}");
            let input = if parts[0] == "-" {
                Vec::new()
            } else {
                hfkit_format::text::parse_hex(parts[0]).unwrap()
            };
            let seed: i32 = parts[1].parse().unwrap();
            let want: i32 = parts[2].parse().unwrap();
            assert_eq!(murmur_hash(&input, seed), want, "{line}");
            n += 1;
        }
        assert!(n >= 50, "only {n} vectors");
        eprintln!("checked {n} MurmurHash vectors from HBase");
    }
}
