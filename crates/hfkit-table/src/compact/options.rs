//! What a compaction is asked to do: [`CompactOptions`] (major or minor, which region and
//! family, "now") and [`CompactionPolicy`], HBase's minor-selection settings. Spec:
//! `formats/table.md` §"Compaction", §"Steps and crash safety" (the settings are those of
//! §"Selection").

use serde::Serialize;

/// HBase's minor-compaction selection settings (`CompactionConfiguration` defaults).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CompactionPolicy {
    /// `hbase.hstore.compaction.ratio`.
    pub ratio: f64,
    /// `hbase.hstore.compaction.min` (at least 2).
    pub min_files: usize,
    /// `hbase.hstore.compaction.max`.
    pub max_files: usize,
    /// `hbase.hstore.compaction.min.size`: files at most this big always qualify. HBase's
    /// default is the memstore flush size, 128 MiB.
    pub min_compact_size: u64,
    /// `hbase.hstore.compaction.max.size`: larger files (oldest first) are left out.
    pub max_compact_size: u64,
    /// `hbase.hstore.blockingStoreFiles`: with this many files a store "may be stuck" and the
    /// newest `min_files` are compacted even when the ratio selects nothing.
    pub blocking_files: usize,
}

impl Default for CompactionPolicy {
    fn default() -> Self {
        CompactionPolicy {
            ratio: 1.2,
            min_files: 3,
            max_files: 10,
            min_compact_size: 128 << 20,
            max_compact_size: u64::MAX,
            blocking_files: 16,
        }
    }
}

/// What to compact.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompactOptions {
    /// Every file of each store, dropping deleted, expired and excess cells and the markers.
    pub major: bool,
    /// Only this region (id).
    pub region: Option<String>,
    /// Only this family.
    pub family: Option<String>,
    /// Minor: every file of each store instead of the ratio-based selection.
    pub all_files: bool,
    /// "Now" for TTL, epoch ms (injected; compaction never reads the clock for semantics).
    pub now_ms: i64,
    pub policy: CompactionPolicy,
}
