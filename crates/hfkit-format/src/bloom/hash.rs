//! The three hash functions HBase Bloom filters can use, bit-for-bit as HBase computes them.
//! Spec: `formats/bloom.md` §"Hashes".
//!
//! ```text
//! code  name      function                                   note
//! 0     jenkins   Bob Jenkins' lookup3 hashlittle             12-byte LE blocks, bytes masked
//! 1     murmur    MurmurHash2 (32-bit), HBase variant         tail bytes SIGN-EXTENDED (default)
//! 2     murmur3   MurmurHash3 x86_32                          tail bytes masked
//! ```
//!
//! All arithmetic is 32-bit wrapping; 4-byte words are read little-endian (the one place in
//! the format that is not big-endian). The codes are stored in the Bloom meta block: DO NOT
//! CHANGE.

use crate::error::{FormatError, Result};

/// `Hash.JENKINS_HASH` etc.: which hash function a Bloom filter uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HashType {
    /// Code 0, `jenkins`.
    Jenkins,
    /// Code 1, `murmur`: HBase's default (`hbase.hash.type`).
    Murmur,
    /// Code 2, `murmur3`.
    Murmur3,
}

impl HashType {
    /// The on-disk code (Bloom meta `hashType` field).
    pub const fn code(self) -> i32 {
        match self {
            HashType::Jenkins => 0,
            HashType::Murmur => 1,
            HashType::Murmur3 => 2,
        }
    }

    /// The hash type for an on-disk code.
    pub const fn from_code(code: i32) -> Option<HashType> {
        match code {
            0 => Some(HashType::Jenkins),
            1 => Some(HashType::Murmur),
            2 => Some(HashType::Murmur3),
            _ => None,
        }
    }

    /// HBase's configuration name (`hbase.hash.type`).
    pub const fn name(self) -> &'static str {
        match self {
            HashType::Jenkins => "jenkins",
            HashType::Murmur => "murmur",
            HashType::Murmur3 => "murmur3",
        }
    }

    /// Parses a configuration name (case-insensitive).
    pub fn from_name(name: &str) -> Result<HashType> {
        [HashType::Jenkins, HashType::Murmur, HashType::Murmur3]
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                FormatError::Invalid(format!(
                    "unknown hash type {name:?} (jenkins, murmur, murmur3)"
                ))
            })
    }
}

/// Hashes `data` with `seed` as HBase's `Hash.getInstance(type).hash(ByteArrayHashKey, seed)`.
pub fn hash(hash_type: HashType, data: &[u8], seed: i32) -> i32 {
    match hash_type {
        HashType::Jenkins => jenkins(data, seed),
        HashType::Murmur => murmur(data, seed),
        HashType::Murmur3 => murmur3(data, seed),
    }
}

fn le_word(w: &[u8]) -> i32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(w);
    i32::from_le_bytes(a)
}

/// HBase's `MurmurHash` (type 1). Differs from reference MurmurHash2 in that the 1–3 tail bytes
/// are sign-extended before being mixed in.
pub fn murmur(data: &[u8], seed: i32) -> i32 {
    const M: i32 = 0x5bd1_e995;
    const R: u32 = 24;
    let mut h = seed ^ (data.len() as i32);
    let mut words = data.chunks_exact(4);
    for w in words.by_ref() {
        let mut k = le_word(w);
        k = k.wrapping_mul(M);
        k ^= ((k as u32) >> R) as i32;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = words.remainder();
    // Sign extension: a byte ≥ 0x80 becomes a negative int, setting the high bits of the word.
    let signed = |i: usize| tail.get(i).map_or(0, |b| *b as i8 as i32);
    if tail.len() >= 3 {
        h ^= signed(2) << 16;
    }
    if tail.len() >= 2 {
        h ^= signed(1) << 8;
    }
    if !tail.is_empty() {
        h ^= signed(0);
        h = h.wrapping_mul(M);
    }
    h ^= ((h as u32) >> 13) as i32;
    h = h.wrapping_mul(M);
    h ^= ((h as u32) >> 15) as i32;
    h
}

/// MurmurHash3 x86_32 (type 2).
pub fn murmur3(data: &[u8], seed: i32) -> i32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h1 = seed as u32;
    let mut words = data.chunks_exact(4);
    for w in words.by_ref() {
        let mut k1 = le_word(w) as u32;
        k1 = k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h1 ^= k1;
        h1 = h1.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let mut k1: u32 = 0;
        for (i, b) in tail.iter().enumerate() {
            k1 |= (*b as u32) << (8 * i);
        }
        k1 = k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h1 ^= k1;
    }
    h1 ^= data.len() as u32;
    h1 ^= h1 >> 16;
    h1 = h1.wrapping_mul(0x85eb_ca6b);
    h1 ^= h1 >> 13;
    h1 = h1.wrapping_mul(0xc2b2_ae35);
    h1 ^= h1 >> 16;
    h1 as i32
}

/// Bob Jenkins' lookup3 `hashlittle` (type 0), as HBase's `JenkinsHash`.
pub fn jenkins(data: &[u8], seed: i32) -> i32 {
    let init = 0xdead_beef_u32
        .wrapping_add(data.len() as u32)
        .wrapping_add(seed as u32);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut rest = data;
    // Full 12-byte blocks, but the last 1..=12 bytes always go to the tail step.
    while rest.len() > 12 {
        let (block, tail) = rest.split_at(12);
        a = a.wrapping_add(le_word(&block[0..4]) as u32);
        b = b.wrapping_add(le_word(&block[4..8]) as u32);
        c = c.wrapping_add(le_word(&block[8..12]) as u32);
        // mix(a, b, c)
        a = a.wrapping_sub(c);
        a ^= c.rotate_left(4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= a.rotate_left(6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= b.rotate_left(8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c);
        a ^= c.rotate_left(16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= a.rotate_left(19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= b.rotate_left(4);
        b = b.wrapping_add(a);
        rest = tail;
    }
    if rest.is_empty() {
        return c as i32;
    }
    // Tail: byte i goes to word i / 4 at bit 8 * (i % 4); bytes are unsigned here.
    for (i, byte) in rest.iter().enumerate() {
        let v = (*byte as u32) << (8 * (i % 4));
        match i / 4 {
            0 => a = a.wrapping_add(v),
            1 => b = b.wrapping_add(v),
            _ => c = c.wrapping_add(v),
        }
    }
    // final(a, b, c)
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(24));
    c as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse_hex;

    #[test]
    fn reference_check_values() {
        // formats: reference hfile-v3.md §11.3 (confirmed with HBase's own MurmurHash).
        assert_eq!(murmur(b"row1", 0), 155_469_074);
        assert_eq!(murmur(b"row1", 155_469_074), -1_581_353_726);
        assert_eq!(murmur(b"abc", 0), 324_500_635);
        assert_eq!(murmur(b"abc", 324_500_635), -211_163_648);
        assert_eq!(murmur(b"", 0), 0);
    }

    #[test]
    fn every_golden_murmur_vector() {
        let Some(dir) = hfkit_testkit::dir("every_golden_murmur_vector", "hashes") else {
            return;
        };
        let text = std::fs::read_to_string(dir.join("murmur.txt")).unwrap();
        let mut n = 0;
        for line in text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        {
            let f: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(f.len(), 3, "bad line {line:?}");
            let data = parse_hex(f[0]).unwrap();
            let seed: i32 = f[1].parse().unwrap();
            let want: i32 = f[2].parse().unwrap();
            assert_eq!(
                hash(HashType::Murmur, &data, seed),
                want,
                "murmur({}, {seed})",
                f[0]
            );
            n += 1;
        }
        assert!(n >= 50, "only {n} vectors");
    }

    #[test]
    fn murmur3_and_jenkins_known_values() {
        // MurmurHash3_x86_32 published test vectors.
        assert_eq!(murmur3(b"", 0), 0);
        assert_eq!(murmur3(b"", 1) as u32, 0x514e_28b7);
        assert_eq!(murmur3(b"", -1) as u32, 0x81f1_6f39);
        assert_eq!(murmur3(&[0xff, 0xff, 0xff, 0xff], 0) as u32, 0x7629_3b50);
        assert_eq!(murmur3(&[0x21, 0x43, 0x65, 0x87], 0) as u32, 0xf55b_516b);
        assert_eq!(murmur3(&[0x21, 0x43, 0x65], 0) as u32, 0x7e4a_8634);
        assert_eq!(murmur3(b"Hello, world!", 1234) as u32, 0xfaf6_cdb3);
        // lookup3.c driver values: hashlittle("", 0) and "Four score and seven years ago".
        assert_eq!(jenkins(b"", 0) as u32, 0xdead_beef);
        assert_eq!(jenkins(b"", 0xdead_beef_u32 as i32) as u32, 0xbd5b_7dde);
        assert_eq!(
            jenkins(b"Four score and seven years ago", 0) as u32,
            0x1777_0551
        );
        assert_eq!(
            jenkins(b"Four score and seven years ago", 1) as u32,
            0xcd62_8161
        );
    }

    #[test]
    fn murmur_tail_is_sign_extended() {
        // Reference MurmurHash2 would mask 0x80; HBase's does not, so these differ from a
        // masked computation. The golden file covers the exact values; this guards the branch.
        let masked = {
            let m: i32 = 0x5bd1_e995;
            let mut h = 1i32;
            h ^= 0x80;
            h = h.wrapping_mul(m);
            h ^= ((h as u32) >> 13) as i32;
            h = h.wrapping_mul(m);
            h ^= ((h as u32) >> 15) as i32;
            h
        };
        assert_ne!(murmur(&[0x80], 0), masked);
        assert_eq!(HashType::from_code(1), Some(HashType::Murmur));
        assert_eq!(HashType::from_name("MURMUR3").unwrap(), HashType::Murmur3);
        assert!(HashType::from_name("md5").is_err());
    }
}
