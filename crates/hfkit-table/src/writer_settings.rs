//! The writer settings HBase reads from configuration, taken from a family's `CONFIGURATION`
//! (as an HStore merges its family's CONFIGURATION over the cluster's): Bloom chunk size,
//! error rate and fold, index block size and minimum entries, and the zstd level. Every
//! writer of store files (import, attach, compaction, export, clone, `hbase compact`) gets its
//! options from [`crate::manifest::FamilyEntry::writer_options`], which applies these, so a
//! family writes the same bytes whichever command writes it. A value out of HBase's range is
//! refused when the table is created or altered. Spec: `formats/hfile.md` §"Writer settings".

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use hfkit_format::compression::{Compression, ZSTD_LEVELS};
use hfkit_format::writer::WriterOptions;

use crate::TableError;

/// `io.storefile.bloom.block.size` (`BloomFilterFactory`): a Bloom chunk's size in bytes.
pub const BLOOM_BLOCK_SIZE: &str = "io.storefile.bloom.block.size";
/// `io.storefile.bloom.error.rate`: the false-positive rate a chunk is sized for.
pub const BLOOM_ERROR_RATE: &str = "io.storefile.bloom.error.rate";
/// `io.storefile.bloom.max.fold`: how many times a chunk may be folded in half.
pub const BLOOM_MAX_FOLD: &str = "io.storefile.bloom.max.fold";
/// `hfile.index.block.max.size` (`HFileBlockIndex`): an index block's size before a new one.
pub const INDEX_BLOCK_MAX_SIZE: &str = "hfile.index.block.max.size";
/// `hfile.index.block.min.entries`: the entries an index block holds before it may be cut.
pub const INDEX_BLOCK_MIN_ENTRIES: &str = "hfile.index.block.min.entries";
/// `hbase.io.compress.zstd.level` (`ZstdCodec`): the zstd level of a ZSTD family.
pub const ZSTD_LEVEL: &str = "hbase.io.compress.zstd.level";

/// Every configuration key that changes the bytes hfkit writes.
pub const KEYS: [&str; 6] = [
    BLOOM_BLOCK_SIZE,
    BLOOM_ERROR_RATE,
    BLOOM_MAX_FOLD,
    INDEX_BLOCK_MAX_SIZE,
    INDEX_BLOCK_MIN_ENTRIES,
    ZSTD_LEVEL,
];

/// Applies family `family`'s `configuration` to `o`; an unparsable or out-of-range value is an
/// error naming the family, the key and the range.
pub fn apply(
    family: &str,
    configuration: &BTreeMap<String, String>,
    o: &mut WriterOptions,
) -> Result<(), TableError> {
    let get = |key: &str| configuration.get(key).map(|v| v.trim());
    let bad = |key: &str, v: &str, want: String| {
        TableError::Invalid(format!(
            "family {family}: CONFIGURATION '{key}' = '{v}': expected {want}"
        ))
    };
    let int = |key: &str, range: RangeInclusive<i64>| -> Result<Option<i64>, TableError> {
        let Some(v) = get(key) else { return Ok(None) };
        v.parse::<i64>()
            .ok()
            .filter(|n| range.contains(n))
            .map(Some)
            .ok_or_else(|| {
                bad(
                    key,
                    v,
                    format!("an integer in {}..={}", range.start(), range.end()),
                )
            })
    };
    if let Some(n) = int(BLOOM_BLOCK_SIZE, 1..=i64::from(i32::MAX))? {
        o.bloom_params.chunk_byte_size_hint = n as usize;
    }
    if let Some(v) = get(BLOOM_ERROR_RATE) {
        o.bloom_params.error_rate = v
            .parse::<f32>()
            .ok()
            .filter(|r| *r > 0.0 && *r < 1.0)
            .ok_or_else(|| bad(BLOOM_ERROR_RATE, v, "a rate between 0 and 1".into()))?;
    }
    if let Some(n) = int(BLOOM_MAX_FOLD, 0..=30)? {
        o.bloom_params.max_fold = n as u32;
    }
    if let Some(n) = int(INDEX_BLOCK_MAX_SIZE, 1..=i64::from(i32::MAX))? {
        o.index_block_size = n as usize;
    }
    if let Some(n) = int(INDEX_BLOCK_MIN_ENTRIES, 2..=i64::from(i32::MAX))? {
        o.index_min_entries = n as usize;
    }
    let levels = i64::from(*ZSTD_LEVELS.start())..=i64::from(*ZSTD_LEVELS.end());
    if let Some(n) = int(ZSTD_LEVEL, levels)? {
        // HBase's zstd codec reads it; other codecs ignore it, as in HBase.
        if o.compression == Compression::Zstd {
            o.compression_level = Some(n as i32);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn each_key_sets_its_setting() {
        let mut o = WriterOptions {
            compression: Compression::Zstd,
            ..WriterOptions::default()
        };
        let c = conf(&[
            (BLOOM_BLOCK_SIZE, "512"),
            (BLOOM_ERROR_RATE, "0.001"),
            (BLOOM_MAX_FOLD, "3"),
            (INDEX_BLOCK_MAX_SIZE, "128"),
            (INDEX_BLOCK_MIN_ENTRIES, "4"),
            (ZSTD_LEVEL, "19"),
            ("unrelated.key", "x"),
        ]);
        apply("f", &c, &mut o).unwrap();
        assert_eq!(o.bloom_params.chunk_byte_size_hint, 512);
        assert_eq!(o.bloom_params.error_rate, 0.001);
        assert_eq!(o.bloom_params.max_fold, 3);
        assert_eq!((o.index_block_size, o.index_min_entries), (128, 4));
        assert_eq!(o.compression_level, Some(19));
        // The zstd level means nothing to another codec, as in HBase.
        let mut o = WriterOptions::default();
        apply("f", &conf(&[(ZSTD_LEVEL, "19")]), &mut o).unwrap();
        assert_eq!(o.compression_level, None);
        // Nothing given: the defaults.
        let mut o = WriterOptions::default();
        apply("f", &BTreeMap::new(), &mut o).unwrap();
        assert_eq!(o, WriterOptions::default());
    }

    #[test]
    fn values_out_of_range_name_the_family_and_key() {
        for (k, v) in [
            (BLOOM_BLOCK_SIZE, "0"),
            (BLOOM_ERROR_RATE, "1.5"),
            (BLOOM_ERROR_RATE, "often"),
            (BLOOM_MAX_FOLD, "31"),
            (INDEX_BLOCK_MIN_ENTRIES, "1"),
            (ZSTD_LEVEL, "23"),
        ] {
            let e = apply("d", &conf(&[(k, v)]), &mut WriterOptions::default()).unwrap_err();
            let m = e.to_string();
            assert!(
                m.contains("family d") && m.contains(k) && m.contains(v),
                "{m}"
            );
        }
    }
}
