//! Region split points: HBase's pre-split algorithms, region lookup, split files, and split
//! points sampled from the data. Prose: `formats/schema.md` §"Splits".
//!
//! ```text
//! n regions  <=>  n-1 split keys k_1 < k_2 < ... < k_{n-1}   (non-empty, unique)
//! region 0 = [empty, k_1)   region i = [k_i, k_{i+1})   region n-1 = [k_{n-1}, empty)
//! ```
//!
//! | module | owns |
//! |---|---|
//! | `algorithm` | HBase's pre-split algorithms ([`SplitAlgorithm`], [`Splitter`]) |
//! | `keys` | keys as text (`Bytes.toBytesBinary` / `toStringBinary`) and splits files |
//! | this module | [`Regions`] (validation, region lookup) and split points sampled from the data |
//!
//! Keys written as text (splits files, `SPLITS => [...]`, TOML `keys`) use the convention of
//! HBase's `Bytes.toBytesBinary`: `\xNN` (two upper-case hex digits) is one byte, every other
//! character is itself. See [`to_bytes_binary`] for the two places where we refuse input that
//! HBase would silently misread.

mod algorithm;
mod keys;

use std::cmp::Ordering;

use hfkit_format::bytes::compare_bytes;

use crate::error::{At, SchemaError};

pub use algorithm::{NumberStringSplit, SplitAlgorithm, Splitter, UniformSplit, MAX_REGIONS};
pub use keys::{
    parse_splits_file, push_string_binary, read_splits_file, to_bytes_binary, to_string_binary,
    BytesBinaryError,
};

/// The sorted, validated split keys of a table: region `i` covers `[key_{i-1}, key_i)`, region 0
/// starts at the empty row and the last region ends at the empty row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Regions {
    splits: Vec<Vec<u8>>,
}

impl Regions {
    /// One region covering every row.
    pub fn single() -> Regions {
        Regions { splits: Vec::new() }
    }

    /// Validates split keys the way HBase's `Admin.createTable` does: sorts them (raw byte
    /// order), then refuses an empty key or a duplicate, naming it.
    pub fn new(mut splits: Vec<Vec<u8>>) -> Result<Regions, SchemaError> {
        splits.sort();
        for (i, key) in splits.iter().enumerate() {
            if key.is_empty() {
                return Err(SchemaError::SplitKey {
                    at: At::default(),
                    key: String::new(),
                    reason: "an empty split key must not be passed in the split keys".into(),
                });
            }
            if i > 0 && splits[i - 1] == *key {
                return Err(SchemaError::SplitKey {
                    at: At::default(),
                    key: to_string_binary(key),
                    reason: "all split keys must be unique; this one appears more than once".into(),
                });
            }
        }
        Ok(Regions { splits })
    }

    /// Like [`Regions::new`] but refuses keys that are not already strictly increasing, naming
    /// the first one out of order (for callers that promise sorted input).
    pub fn from_sorted(splits: Vec<Vec<u8>>) -> Result<Regions, SchemaError> {
        for w in splits.windows(2) {
            if w[0] >= w[1] {
                return Err(SchemaError::SplitKey {
                    at: At::default(),
                    key: to_string_binary(&w[1]),
                    reason: format!(
                        "not greater than the previous key '{}'",
                        to_string_binary(&w[0])
                    ),
                });
            }
        }
        Regions::new(splits)
    }

    /// Number of regions (split keys + 1).
    pub fn len(&self) -> usize {
        self.splits.len() + 1
    }

    /// Always false: a table has at least one region.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The split keys, sorted.
    pub fn split_keys(&self) -> &[Vec<u8>] {
        &self.splits
    }

    /// Start row of region `i` (empty for region 0). Panics if `i >= len()`.
    pub fn start_key(&self, i: usize) -> &[u8] {
        assert!(i < self.len(), "region {i} of {}", self.len());
        if i == 0 {
            &[]
        } else {
            &self.splits[i - 1]
        }
    }

    /// End row (exclusive) of region `i` (empty for the last region). Panics if `i >= len()`.
    pub fn end_key(&self, i: usize) -> &[u8] {
        assert!(i < self.len(), "region {i} of {}", self.len());
        self.splits.get(i).map_or(&[], |k| k.as_slice())
    }

    /// The region holding `row`: the number of split keys <= `row` ([`region_of_row`]).
    pub fn region_of(&self, row: &[u8]) -> usize {
        region_of_row(&self.splits, row)
    }
}

/// The region of `row` among the regions cut at `splits` (sorted): the number of split keys
/// <= `row`, by binary search. Keys are compared by `bytes::compare_bytes`, inline, where a
/// slice comparison calls `memcmp` for each probe (an import looks up every row's region; the
/// calls were most of `import --dry-run`'s lookups).
#[inline]
pub fn region_of_row(splits: &[Vec<u8>], row: &[u8]) -> usize {
    splits.partition_point(|k| compare_bytes(k, row) != Ordering::Greater)
}

/// Split keys for `regions` regions cut at the quantiles of a sample of encoded row keys.
///
/// The sample (any order, duplicates allowed) is sorted and deduplicated; with `m` distinct keys
/// `s_0 < ... < s_{m-1}`, split key `i` (i = 1..regions-1) is `s_{floor(i*m/regions)}`. Repeated
/// and empty cut points are dropped, as is `s_0` (it would leave region 0 without sampled rows),
/// so a small or skewed sample yields fewer than `regions - 1` keys. The result is sorted, unique
/// and non-empty, ready for [`Regions::new`]. `regions` above [`MAX_REGIONS`] counts as
/// `MAX_REGIONS`.
pub fn sample_splits<K: AsRef<[u8]>>(sample: &[K], regions: usize) -> Vec<Vec<u8>> {
    let regions = regions.min(MAX_REGIONS);
    let mut keys: Vec<&[u8]> = sample.iter().map(|k| k.as_ref()).collect();
    keys.sort_unstable();
    keys.dedup();
    let m = keys.len();
    let mut out: Vec<Vec<u8>> = Vec::new();
    if m == 0 || regions < 2 {
        return out;
    }
    for i in 1..regions {
        let idx = ((i as u128 * m as u128) / regions as u128) as usize;
        if idx == 0 {
            continue;
        }
        let key = keys[idx];
        if key.is_empty() || out.last().is_some_and(|last| last.as_slice() == key) {
            continue;
        }
        out.push(key.to_vec());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    pub(super) fn strs(keys: &[Vec<u8>]) -> Vec<String> {
        keys.iter()
            .map(|k| String::from_utf8(k.clone()).unwrap())
            .collect()
    }

    #[test]
    fn regions_lookup() {
        let r = Regions::new(vec![b"m".to_vec(), b"c".to_vec(), b"x".to_vec()]).unwrap();
        assert_eq!(
            r.split_keys(),
            [b"c".to_vec(), b"m".to_vec(), b"x".to_vec()]
        );
        assert_eq!(r.len(), 4);
        assert_eq!(r.region_of(b""), 0);
        assert_eq!(r.region_of(b"a"), 0);
        assert_eq!(r.region_of(b"c"), 1);
        assert_eq!(r.region_of(b"c\x00"), 1);
        assert_eq!(r.region_of(b"m"), 2);
        assert_eq!(r.region_of(b"x"), 3);
        assert_eq!(r.region_of(b"\xff\xff"), 3);
        assert_eq!((r.start_key(0), r.end_key(0)), (&b""[..], &b"c"[..]));
        assert_eq!((r.start_key(3), r.end_key(3)), (&b"x"[..], &b""[..]));
        assert_eq!(Regions::single().region_of(b"anything"), 0);
    }

    #[test]
    fn regions_validation() {
        let e = Regions::new(vec![b"a".to_vec(), vec![]])
            .unwrap_err()
            .to_string();
        assert!(e.contains("empty split key"), "{e}");
        let e = Regions::new(vec![b"a\x00".to_vec(), b"b".to_vec(), b"a\x00".to_vec()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("'a\\x00'") && e.contains("unique"), "{e}");
        let e = Regions::from_sorted(vec![b"b".to_vec(), b"a".to_vec()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("'a'") && e.contains("previous key 'b'"), "{e}");
    }

    #[test]
    fn sampling() {
        let sample: Vec<Vec<u8>> = (0..100u32)
            .rev()
            .map(|i| format!("{i:03}").into_bytes())
            .collect();
        let s = sample_splits(&sample, 4);
        assert_eq!(strs(&s), ["025", "050", "075"]);
        // Duplicates collapse; too few distinct keys give fewer splits.
        let s = sample_splits(&[b"a", b"a", b"b", b"b"], 8);
        assert_eq!(strs(&s), ["b"]);
        assert!(sample_splits::<Vec<u8>>(&[], 4).is_empty());
        assert!(sample_splits(&[b"x"], 1).is_empty());
    }

    proptest! {
        #[test]
        fn sampled_splits_are_valid(sample in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..6), 0..200), n in 1usize..40) {
            let s = sample_splits(&sample, n);
            prop_assert!(s.len() < n.max(1));
            prop_assert!(Regions::from_sorted(s.clone()).is_ok());
        }

        #[test]
        fn region_of_matches_linear_scan(mut keys in proptest::collection::btree_set(proptest::collection::vec(0u8..3, 1..20), 0..20), row in proptest::collection::vec(0u8..3, 0..24)) {
            let keys: Vec<Vec<u8>> = std::mem::take(&mut keys).into_iter().collect();
            let r = Regions::new(keys).unwrap();
            let i = r.region_of(&row);
            prop_assert!(r.start_key(i) <= row.as_slice());
            prop_assert!(r.end_key(i).is_empty() || row.as_slice() < r.end_key(i));
            prop_assert_eq!(i, r.split_keys().iter().filter(|k| k.as_slice() <= row.as_slice()).count());
        }
    }
}
