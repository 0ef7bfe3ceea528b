//! What a writer is told and what it reports: the options of one HFile (block size,
//! compression, encoding, checksums, tags and MVCC, Bloom, the bulk-load keys) and the summary
//! of a finished file. Spec: `formats/hfile.md` §"File layout" and §"FileInfo".

use crate::bloom::{BloomParams, BloomType};
use crate::checksum::{ChecksumType, DEFAULT_BYTES_PER_CHECKSUM};
use crate::compression::Compression;
use crate::encoding::DataBlockEncoding;
use crate::index::{DEFAULT_MAX_CHUNK_SIZE, DEFAULT_MIN_ENTRIES};
use crate::trailer::COMPARATOR_KV;

/// HBase's default family BLOCKSIZE.
pub const DEFAULT_BLOCK_SIZE: usize = 64 * 1024;

/// The bulk-load FileInfo keys `HFileOutputFormat2` adds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkLoadInfo {
    /// `BULKLOAD_TIMESTAMP`, epoch ms.
    pub timestamp: i64,
    /// `BULKLOAD_SOURCE_TASK`.
    pub task: String,
    /// `EXCLUDE_FROM_MINOR_COMPACTION`.
    pub exclude_from_minor_compaction: bool,
    /// `MAJOR_COMPACTION_KEY`: true in what `HFileOutputFormat2` writes (its output is
    /// taken for a major compaction's); false for a file to be compacted with the others.
    pub major_compaction: bool,
}

/// Everything that decides a file's bytes besides its cells.
#[derive(Clone, Debug, PartialEq)]
pub struct WriterOptions {
    /// Data block size target (family BLOCKSIZE).
    pub block_size: usize,
    pub compression: Compression,
    /// The codec's level (`hbase.io.compress.zstd.level`, GZ's `zlib.compress.level`);
    /// `None`: HBase's default.
    pub compression_level: Option<i32>,
    pub encoding: DataBlockEncoding,
    pub checksum_type: ChecksumType,
    pub bytes_per_checksum: u32,
    /// Cells carry a tags length (HBase bulk loads always do).
    pub include_tags: bool,
    /// Cells carry an MVCC VLong (HBase bulk loads always do, with value 0).
    pub include_mvcc: bool,
    /// Dictionary-compress tags in encoded blocks.
    pub compress_tags: bool,
    /// `hfile.index.block.max.size`.
    pub index_block_size: usize,
    /// `hfile.index.block.min.entries`.
    pub index_min_entries: usize,
    /// `hfile.CREATE_TIME_TS`, epoch ms.
    pub create_time: i64,
    /// Trailer comparator class name.
    pub comparator: String,
    /// Write the store-file keys `StoreFileWriter` adds (TIMERANGE, EARLIEST_PUT_TS,
    /// DELETE_FAMILY_COUNT, HISTORICAL, Bloom keys). False gives what HBase's plain HFile
    /// writer produces.
    pub store_file: bool,
    /// Bulk-load keys; `None` for other files.
    pub bulk_load: Option<BulkLoadInfo>,
    /// General Bloom filter type (store files only); `None` for no general Bloom. A store
    /// file also gets a delete-family Bloom unless the type is ROWCOL, as in HBase.
    pub bloom: Option<BloomType>,
    /// Bloom sizing and hashing parameters (HBase's defaults).
    pub bloom_params: BloomParams,
}

impl Default for WriterOptions {
    /// The options of an HBase bulk-load file with family defaults except Bloom (none here).
    fn default() -> Self {
        WriterOptions {
            block_size: DEFAULT_BLOCK_SIZE,
            compression: Compression::None,
            compression_level: None,
            encoding: DataBlockEncoding::None,
            checksum_type: ChecksumType::Crc32c,
            bytes_per_checksum: DEFAULT_BYTES_PER_CHECKSUM,
            include_tags: true,
            include_mvcc: true,
            compress_tags: false,
            index_block_size: DEFAULT_MAX_CHUNK_SIZE,
            index_min_entries: DEFAULT_MIN_ENTRIES,
            create_time: 0,
            comparator: COMPARATOR_KV.to_string(),
            store_file: true,
            bulk_load: None,
            bloom: None,
            bloom_params: BloomParams::default(),
        }
    }
}

/// What a finished file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteSummary {
    pub entry_count: u64,
    pub file_size: u64,
    pub data_blocks: u64,
    pub index_levels: u32,
    pub first_key: Option<Vec<u8>>,
    pub last_key: Option<Vec<u8>>,
    /// Min and max timestamp over all cells (TIMERANGE rules), if any cell.
    pub time_range: Option<(i64, i64)>,
}
