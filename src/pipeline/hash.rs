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

const M: u32 = 0x5bd1_e995;
const R: u32 = 24;

/// `MurmurHash.hash(bytes, seed)` exactly as HBase computes it, as a Java `int`.
pub fn murmur_hash(data: &[u8], seed: i32) -> i32 {
    // Java's int `length`; inputs above 2 GiB wrap as they would there.
    let mut h = (seed ^ data.len() as i32) as u32;
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        let mut k = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = words.remainder();
    let signed = |b: u8| b as i8 as i32 as u32;
    if tail.len() >= 3 {
        h ^= signed(tail[2]) << 16;
    }
    if tail.len() >= 2 {
        h ^= signed(tail[1]) << 8;
    }
    if !tail.is_empty() {
        h ^= signed(tail[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::fixtures;

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
                crate::format::text::parse_hex(parts[0]).unwrap()
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
