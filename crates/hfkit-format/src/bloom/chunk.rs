//! One Bloom chunk: sizing, adding keys, testing keys, and folding a sparse chunk.
//! Spec: `formats/bloom.md` §"Chunks": §"Bit positions", §"Sizing" and §"Folding".
//!
//! ```text
//! chunk = bit array of byteSize bytes (BLOOM_CHUNK payload, nothing else)
//!   bit n lives in byte n >> 3 at mask 1 << (n & 7)          (LSB-first)
//! key  -> h1 = hash(key, 0); h2 = hash(key, h1)
//!         for i in 0..hashCount: set bit |(h1 + i*h2) % bitSize|   (i32 wrapping, Java %)
//! sizing (HBase BloomFilterUtil.createBySize, IEEE double arithmetic):
//!   byteSize  = ceil(hint*8 / 8) rounded up to a multiple of 2^maxFold
//!   bitSize   = byteSize * 8
//!   k0        = (long)(bitSize * (ln2*ln2 / -ln err))
//!   hashCount = ceil(ln2 * (bitSize / k0))               (integer division inside)
//!   maxKeys   = (int)(long)(-bitSize / hashCount * ln(1 - exp(ln err / hashCount)))
//! fold (when the chunk is closed): while byteSize even and maxKeys > 2*keyCount:
//!   byteSize /= 2, maxKeys /= 2; then OR every piece onto the first
//! ```
//! Folding keeps lookups valid: `pos % (bitSize/2^k)` of the folded chunk is the original
//! position reduced modulo the smaller size, which is where the OR put its bit.

use super::hash::{hash, HashType};
use crate::error::{FormatError, Result};

/// Bit masks, LSB-first (`BloomFilterUtil.bitvals`).
const BIT_MASKS: [u8; 8] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80];

/// Largest chunk HBase can allocate (`computeFoldableByteSize` rejects more than
/// `Integer.MAX_VALUE`; we further keep `bitSize` within an i32 so the reader's
/// `bloomSize << 3` matches the writer's).
pub const MAX_CHUNK_BYTES: u32 = (i32::MAX as u32) / 8;

/// `BloomFilterUtil.computeFoldableByteSize`: bytes for `bit_size` bits, rounded up to a
/// multiple of `2^fold_factor` so that the chunk can be halved `fold_factor` times.
pub fn compute_foldable_byte_size(bit_size: u64, fold_factor: u32) -> Result<u32> {
    if fold_factor > 30 {
        return Err(FormatError::Invalid(format!(
            "Bloom max fold {fold_factor} is too large (≤ 30)"
        )));
    }
    let mut bytes = bit_size.div_ceil(8);
    let mask = (1u64 << fold_factor) - 1;
    if bytes & mask != 0 {
        bytes = ((bytes >> fold_factor) + 1) << fold_factor;
    }
    u32::try_from(bytes)
        .ok()
        .filter(|b| *b <= MAX_CHUNK_BYTES)
        .ok_or_else(|| FormatError::Invalid(format!("Bloom chunk of {bytes} bytes is too large")))
}

/// The size parameters of a chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkSizing {
    /// Bytes in the bit array.
    pub byte_size: u32,
    /// Number of bit positions set per key.
    pub hash_count: u32,
    /// Keys the chunk takes before it is full.
    pub max_keys: u32,
}

impl ChunkSizing {
    /// `BloomFilterUtil.createBySize(byteSizeHint, errorRate, ..., foldFactor)`, with HBase's
    /// exact double arithmetic. `error_rate` is the (float-promoted) per-lookup error rate.
    pub fn by_size(byte_size_hint: u32, error_rate: f64, fold_factor: u32) -> Result<ChunkSizing> {
        if !(error_rate > 0.0 && error_rate < 1.0) {
            return Err(FormatError::Invalid(format!(
                "Bloom error rate {error_rate} is not in (0, 1)"
            )));
        }
        let byte_size = compute_foldable_byte_size(byte_size_hint as u64 * 8, fold_factor)?;
        if byte_size == 0 {
            return Err(FormatError::Invalid("Bloom chunk size hint is 0".into()));
        }
        let bit_size = byte_size as i64 * 8;
        let ln2 = std::f64::consts::LN_2;
        let log2_squared = ln2 * ln2;
        // idealMaxKeys: (long)(bitSize * (LOG2_SQUARED / -ln(err))), then (int).
        let ideal = (bit_size as f64 * (log2_squared / -error_rate.ln())) as i64 as i32;
        if ideal <= 0 {
            return Err(FormatError::Invalid(format!(
                "Bloom chunk of {byte_size} bytes holds no key at error rate {error_rate}"
            )));
        }
        // optimalFunctionCount: ceil(ln2 * (bitSize / maxKeys)) with long division.
        let hash_count = (ln2 * (bit_size / ideal as i64) as f64).ceil();
        if !(hash_count >= 1.0 && hash_count <= i32::MAX as f64) {
            return Err(FormatError::Invalid(format!(
                "Bloom hash count {hash_count} out of range"
            )));
        }
        let hash_count = hash_count as i32;
        // computeMaxKeys: (long)(-bitSize * 1.0 / hashCount * ln(1 - exp(ln(err) / hashCount))).
        let max_keys = (-(bit_size as f64) / hash_count as f64
            * (1.0 - (error_rate.ln() / hash_count as f64).exp()).ln())
            as i64 as i32;
        if max_keys <= 0 {
            return Err(FormatError::Invalid(format!(
                "Bloom chunk of {byte_size} bytes holds no key at error rate {error_rate}"
            )));
        }
        Ok(ChunkSizing {
            byte_size,
            hash_count: hash_count as u32,
            max_keys: max_keys as u32,
        })
    }

    /// The sizing after `compactBloom` for a chunk holding `key_count` keys, and the number
    /// of halvings.
    pub fn folded(self, key_count: u32) -> (ChunkSizing, u32) {
        let mut s = self;
        let mut folds = 0;
        if key_count == 0 {
            return (s, 0);
        }
        while s.byte_size & 1 == 0 && u64::from(s.max_keys) > 2 * u64::from(key_count) {
            s.byte_size >>= 1;
            s.max_keys >>= 1;
            folds += 1;
        }
        (s, folds)
    }
}

/// The bit positions a key with hashes (`h1`, `h2`) sets in a chunk of `bit_size` bits.
///
/// `h1 + i*h2` wraps in 32 bits, `%` truncates toward zero (Java), then the absolute value is
/// taken. `bit_size` must be in `1..=i32::MAX`.
///
/// `|c rem m|` equals `|c| mod m`, and `|c|` of an i32 fits a u32, so this is an unsigned
/// 32-bit remainder, computed without a division by [`FastMod`] (a key's `hash_count`
/// divisions were most of the cost of adding it).
pub fn positions(h1: i32, h2: i32, hash_count: u32, bit_size: u32) -> impl Iterator<Item = u32> {
    let m = FastMod::new(bit_size);
    (0..hash_count).map(move |i| {
        let composite = h1.wrapping_add((i as i32).wrapping_mul(h2));
        m.remainder(composite.unsigned_abs())
    })
}

/// `a % d` for a fixed 32-bit divisor by multiplication (Lemire, Kaser and Kurz, "Faster
/// remainder by direct computation", 2019: exact for every u32 `a` and `d >= 1`).
#[derive(Clone, Copy, Debug)]
pub struct FastMod {
    d: u32,
    magic: u64,
}

impl FastMod {
    /// For divisor `d` (0 is taken as 1).
    pub fn new(d: u32) -> FastMod {
        let d = d.max(1);
        FastMod {
            d,
            magic: (u64::MAX / u64::from(d)).wrapping_add(1),
        }
    }

    #[inline]
    pub fn remainder(self, a: u32) -> u32 {
        let low = self.magic.wrapping_mul(u64::from(a));
        ((u128::from(low) * u128::from(self.d)) >> 64) as u32
    }
}

/// Whether every position of `key` is set in the bit array `bits` (`BloomFilterUtil.contains`).
/// An empty `bits` contains nothing.
pub fn bits_contain(bits: &[u8], key: &[u8], hash_type: HashType, hash_count: u32) -> bool {
    let Ok(bit_size) = u32::try_from(bits.len() as u64 * 8) else {
        return false;
    };
    if bit_size == 0 || bit_size > i32::MAX as u32 {
        return false;
    }
    let h1 = hash(hash_type, key, 0);
    let h2 = hash(hash_type, key, h1);
    positions(h1, h2, hash_count, bit_size).all(|p| {
        bits.get((p >> 3) as usize)
            .is_some_and(|b| b & BIT_MASKS[(p & 7) as usize] != 0)
    })
}

/// A Bloom chunk being filled by the writer (`BloomFilterChunk`).
///
/// Bit positions are computed as keys are added but set in batches of [`PENDING_BITS`]: a
/// 128 KiB chunk does not stay in cache while the writer compresses blocks, and a tight loop
/// of independent stores lets the CPU overlap their cache misses (setting each key's bits
/// as it comes cost ~7 misses in a row per key).
#[derive(Clone, Debug)]
pub struct BloomChunk {
    bits: Vec<u8>,
    /// Positions computed but not yet set.
    pending: Vec<u32>,
    sizing: ChunkSizing,
    hash_type: HashType,
    key_count: u32,
}

/// Bit positions buffered before they are set.
const PENDING_BITS: usize = 4096;

impl BloomChunk {
    /// An empty chunk of the given sizing (`allocBloom`).
    pub fn new(sizing: ChunkSizing, hash_type: HashType) -> BloomChunk {
        BloomChunk {
            bits: vec![0; sizing.byte_size as usize],
            pending: Vec::with_capacity(PENDING_BITS + 64),
            sizing,
            hash_type,
            key_count: 0,
        }
    }

    /// Adds a key's hashed bytes.
    pub fn add(&mut self, key: &[u8]) {
        let h1 = hash(self.hash_type, key, 0);
        let h2 = hash(self.hash_type, key, h1);
        let bit_size = self.bits.len() as u32 * 8;
        self.pending
            .extend(positions(h1, h2, self.sizing.hash_count, bit_size));
        if self.pending.len() >= PENDING_BITS {
            self.set_pending();
        }
        self.key_count += 1;
    }

    fn set_pending(&mut self) {
        for &p in &self.pending {
            if let Some(b) = self.bits.get_mut((p >> 3) as usize) {
                *b |= BIT_MASKS[(p & 7) as usize];
            }
        }
        self.pending.clear();
    }

    /// Whether the key may have been added.
    pub fn contains(&mut self, key: &[u8]) -> bool {
        self.set_pending();
        bits_contain(&self.bits, key, self.hash_type, self.sizing.hash_count)
    }

    /// `compactBloom`: halves the chunk while it stays at most half full, OR-ing the halves.
    pub fn fold(&mut self) {
        self.set_pending();
        let (folded, folds) = self.sizing.folded(self.key_count);
        if folds == 0 {
            return;
        }
        let new_len = folded.byte_size as usize;
        let (head, rest) = self.bits.split_at_mut(new_len);
        for piece in rest.chunks(new_len) {
            for (dst, src) in head.iter_mut().zip(piece) {
                *dst |= *src;
            }
        }
        self.bits.truncate(new_len);
        self.sizing = folded;
    }

    /// Whether the chunk is full (`keyCount >= maxKeys`).
    pub fn is_full(&self) -> bool {
        self.key_count >= self.sizing.max_keys
    }

    /// The bit array, every pending bit set.
    pub fn bits(&mut self) -> &[u8] {
        self.set_pending();
        &self.bits
    }
    pub fn sizing(&self) -> ChunkSizing {
        self.sizing
    }
    pub fn key_count(&self) -> u32 {
        self.key_count
    }
    pub fn hash_type(&self) -> HashType {
        self.hash_type
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// HBase's formula as written: `abs((h1 + i*h2) % bitSize)` in 64-bit arithmetic.
    fn positions_by_division(h1: i32, h2: i32, k: u32, bit_size: u32) -> Vec<u32> {
        let m = i64::from(bit_size.max(1));
        (0..k)
            .map(|i| {
                let c = h1.wrapping_add((i as i32).wrapping_mul(h2));
                (i64::from(c) % m).unsigned_abs() as u32
            })
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn positions_equal_hbase_division(
            h1 in proptest::prelude::any::<i32>(),
            h2 in proptest::prelude::any::<i32>(),
            bit_size in 1u32..=i32::MAX as u32,
        ) {
            proptest::prop_assert_eq!(
                positions(h1, h2, 30, bit_size).collect::<Vec<_>>(),
                positions_by_division(h1, h2, 30, bit_size)
            );
        }
    }

    #[test]
    fn positions_at_the_edges() {
        for bit_size in [
            1,
            2,
            3,
            7,
            8,
            1 << 20,
            (1 << 20) + 8,
            i32::MAX as u32 - 1,
            i32::MAX as u32,
        ] {
            for (h1, h2) in [
                (i32::MIN, i32::MIN),
                (i32::MIN, -1),
                (i32::MAX, i32::MAX),
                (0, 0),
                (-1, 1),
            ] {
                assert_eq!(
                    positions(h1, h2, 12, bit_size).collect::<Vec<_>>(),
                    positions_by_division(h1, h2, 12, bit_size),
                    "{h1} {h2} {bit_size}"
                );
            }
        }
    }

    const ROW_ERR: f64 = 0.01f32 as f64;

    fn rowcol_err() -> f64 {
        (1.0 - (1.0 - 0.01f32 as f64).sqrt()) as f32 as f64
    }

    #[test]
    fn default_sizes() {
        assert_eq!(compute_foldable_byte_size(131_072 * 8, 7).unwrap(), 131_072);
        assert_eq!(compute_foldable_byte_size(100 * 8, 7).unwrap(), 128);
        assert_eq!(compute_foldable_byte_size(129 * 8, 7).unwrap(), 256);
        assert_eq!(compute_foldable_byte_size(256 * 8, 7).unwrap(), 256);
        assert_eq!(compute_foldable_byte_size(9, 0).unwrap(), 2);
        let row = ChunkSizing::by_size(131_072, ROW_ERR, 7).unwrap();
        assert_eq!(
            row,
            ChunkSizing {
                byte_size: 131_072,
                hash_count: 7,
                max_keys: 109_306
            }
        );
        assert_eq!(rowcol_err(), 0.005_012_562_964_111_566_5);
        let rowcol = ChunkSizing::by_size(131_072, rowcol_err(), 7).unwrap();
        assert_eq!(
            rowcol,
            ChunkSizing {
                byte_size: 131_072,
                hash_count: 8,
                max_keys: 95_069
            }
        );
    }

    #[test]
    fn folded_sizes() {
        let row = ChunkSizing::by_size(131_072, ROW_ERR, 7).unwrap();
        for (keys, bytes) in [
            (1, 2),
            (100, 128),
            (1000, 2048),
            (27_326, 32_768),
            (50_000, 65_536),
            (109_306, 131_072),
        ] {
            assert_eq!(row.folded(keys).0.byte_size, bytes, "{keys} keys");
        }
        // Confirmed by HBase-written metas (c_NONE__e_NONE__b_ROW): 8 halvings → 512 bytes,
        // maxKeys 426; 12 halvings → 32 bytes, maxKeys 26.
        assert_eq!(
            row.folded(360),
            (
                ChunkSizing {
                    byte_size: 512,
                    hash_count: 7,
                    max_keys: 426
                },
                8
            )
        );
        assert_eq!(
            row.folded(23),
            (
                ChunkSizing {
                    byte_size: 32,
                    hash_count: 7,
                    max_keys: 26
                },
                12
            )
        );
        let rowcol = ChunkSizing::by_size(131_072, rowcol_err(), 7).unwrap();
        assert_eq!(
            rowcol.folded(1179).0,
            ChunkSizing {
                byte_size: 2048,
                hash_count: 8,
                max_keys: 1485
            }
        );
    }

    #[test]
    fn abc_positions() {
        let sizing = ChunkSizing::by_size(131_072, ROW_ERR, 7).unwrap();
        let mut c = BloomChunk::new(sizing, HashType::Murmur);
        c.add(b"abc");
        let mut set = Vec::new();
        for (i, b) in c.bits().iter().enumerate() {
            for bit in 0..8 {
                if b & (1 << bit) != 0 {
                    set.push(i as u32 * 8 + bit);
                }
            }
        }
        let mut want = vec![490_651, 90_779, 309_093, 708_965, 60_261, 460_133, 860_005];
        let h1 = hash(HashType::Murmur, b"abc", 0);
        let h2 = hash(HashType::Murmur, b"abc", h1);
        assert_eq!(positions(h1, h2, 7, 131_072 * 8).collect::<Vec<_>>(), want);
        want.sort();
        assert_eq!(set, want);
        assert!(c.contains(b"abc"));
    }

    #[test]
    fn fold_keeps_members() {
        let sizing = ChunkSizing::by_size(131_072, ROW_ERR, 7).unwrap();
        let mut c = BloomChunk::new(sizing, HashType::Murmur);
        let keys: Vec<Vec<u8>> = (0..500)
            .map(|i| format!("row-{i:05}").into_bytes())
            .collect();
        for k in &keys {
            c.add(k);
        }
        c.fold();
        assert_eq!(c.bits().len(), 1024);
        assert_eq!(c.sizing().max_keys, 109_306 >> 7);
        assert!(keys.iter().all(|k| c.contains(k)));
    }

    #[test]
    fn bad_sizing_is_an_error() {
        assert!(ChunkSizing::by_size(131_072, 0.0, 7).is_err());
        assert!(ChunkSizing::by_size(131_072, 1.5, 7).is_err());
        assert!(ChunkSizing::by_size(0, 0.01, 0).is_err());
        assert!(ChunkSizing::by_size(u32::MAX, 0.01, 7).is_err());
        assert!(compute_foldable_byte_size(8, 40).is_err());
    }
}
