//! The read path: Get and Scan over the HFiles of a table's stores with HBase's read semantics
//! (versions, MIN_VERSIONS, TTL, the four delete markers, KEEP_DELETED_CELLS, time range,
//! column selection, raw mode). Our prose description is `formats/read.md`.
//!
//! | module | owns |
//! |---|---|
//! | [`merge`] | k-way merge of one store's files in cell order, newest sequence id first on ties |
//! | [`matcher`] | every delete / version / TTL / time-range rule, as a per-cell state machine |
//! | [`row`] | the rows a scan returns, borrowed from one reused buffer ([`RowRef`]) |
//! | `scan` | file selection (key range, time range, TTL, Bloom), [`get`], [`scan`], [`RowScanner`] |
//!
//! A **store** is one region × one column family: a set of HFiles, each with the sequence id
//! that every cell read from it carries (bulk-load semantics). Stores of several families are
//! read together and their cells returned per row, families in byte order.
//!
//! # Delete markers (user reads)
//!
//! | marker | masks | qualifier |
//! |---|---|---|
//! | `Delete` (8) | the Put of its column with exactly its timestamp | its column |
//! | `DeleteColumn` (12) | every Put of its column with ts ≤ its ts | its column |
//! | `DeleteFamilyVersion` (10) | every Put of the row (this family) with exactly its ts | empty |
//! | `DeleteFamily` (14) | every Put of the row (this family) with ts ≤ its ts | empty |
//!
//! Masking ignores sequence ids (a marker masks a Put written later with an older or equal
//! timestamp). Markers are never returned except in raw reads.
//!
//! # Which markers apply
//!
//! | KEEP_DELETED_CELLS | a marker applies when |
//! |---|---|
//! | `FALSE` | `ts ≥ time_range.min` (markers newer than the range still apply) |
//! | `TRUE`, `TTL` | `time_range.min ≤ ts < time_range.max` ("time travel" behind a delete) |
//!
//! With MIN_VERSIONS = 0, expired cells (`ts < now − TTL`) — markers included — are ignored.
//!
//! # Versions and TTL
//!
//! | rule | value |
//! |---|---|
//! | versions returned per column | `min(max_versions, family VERSIONS)`; raw: `max_versions` |
//! | counted | Puts that are not deleted and inside the time range |
//! | duplicate (same column, ts and type) | the first (highest sequence id) wins |
//! | expired Put, MIN_VERSIONS = 0 | never returned |
//! | expired Put, MIN_VERSIONS = m > 0 | returned only as one of the column's newest m versions |
//! | raw | markers and masked Puts returned, no TTL, markers not counted as versions |

pub mod matcher;
pub mod merge;
pub mod row;
pub mod scan;

use std::sync::Arc;

use hfkit_format::error::FormatError;
use hfkit_format::reader::HFileReader;

pub use matcher::{MatchCode, QueryMatcher};
pub use merge::MergeScanner;
pub use row::{RowBuf, RowRef};
pub use scan::{get, get_with_stats, scan, RowScanner};

/// Errors of the read path.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A store file could not be read.
    #[error("{file}: {source}")]
    Format {
        file: String,
        #[source]
        source: FormatError,
    },
    /// A store file holds a cell of another column family.
    #[error("{file}: cell of family {found:?} in the store of family {expected:?}")]
    WrongFamily {
        file: String,
        expected: String,
        found: String,
    },
    /// The read options are not valid.
    #[error("invalid read options: {0}")]
    Options(String),
}

impl ReadError {
    pub(crate) fn format(file: &str, source: FormatError) -> ReadError {
        ReadError::Format {
            file: file.to_string(),
            source,
        }
    }
}

pub type Result<T, E = ReadError> = std::result::Result<T, E>;

/// A family's `KEEP_DELETED_CELLS` (HBase's `KeepDeletedCells`): the one type for it in every
/// layer (schema, manifest checks, reads, compaction, the CLI).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KeepDeletedCells {
    #[default]
    False,
    True,
    /// Like `True` for reads; differs only in compaction.
    Ttl,
}

impl KeepDeletedCells {
    pub const ALL: [KeepDeletedCells; 3] = [
        KeepDeletedCells::False,
        KeepDeletedCells::True,
        KeepDeletedCells::Ttl,
    ];

    /// HBase's name: `FALSE`, `TRUE` or `TTL`.
    pub const fn name(self) -> &'static str {
        match self {
            KeepDeletedCells::False => "FALSE",
            KeepDeletedCells::True => "TRUE",
            KeepDeletedCells::Ttl => "TTL",
        }
    }
}

/// A `KEEP_DELETED_CELLS` value that is not one of HBase's names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("KEEP_DELETED_CELLS '{0}' is not FALSE, TRUE or TTL")]
pub struct UnknownKeepDeletedCells(pub String);

impl std::str::FromStr for KeepDeletedCells {
    type Err = UnknownKeepDeletedCells;

    /// HBase's name, case-insensitively.
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        KeepDeletedCells::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownKeepDeletedCells(s.to_string()))
    }
}

/// The column-family settings that shape reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyReadSettings {
    /// `VERSIONS` (≥ 1).
    pub versions: u32,
    /// `MIN_VERSIONS` (≤ VERSIONS).
    pub min_versions: u32,
    /// `TTL` in seconds; `None` (or `Some(2147483647)`, HBase's FOREVER) for no TTL.
    pub ttl_seconds: Option<u64>,
    pub keep_deleted_cells: KeepDeletedCells,
}

impl Default for FamilyReadSettings {
    /// HBase's family defaults: VERSIONS 1, MIN_VERSIONS 0, TTL forever, KEEP_DELETED_CELLS
    /// FALSE.
    fn default() -> Self {
        FamilyReadSettings {
            versions: 1,
            min_versions: 0,
            ttl_seconds: None,
            keep_deleted_cells: KeepDeletedCells::False,
        }
    }
}

/// The sequence id of a store file whose cells each keep the sequence id (MVCC) stored in
/// them, as HBase reads the files it flushed or compacted itself (`Store::files`). Every other
/// value is given to every cell of its file, as HBase does for bulk-loaded files.
pub const CELL_SEQ_IDS: u64 = u64::MAX;

/// One region × column family: its files, each with the sequence id its cells carry (or
/// [`CELL_SEQ_IDS`]), oldest first: a later file wins a tie of equal keys and sequence ids.
#[derive(Clone, Debug)]
pub struct Store {
    pub family: Vec<u8>,
    pub settings: FamilyReadSettings,
    pub files: Vec<(Arc<HFileReader>, u64)>,
}

/// A time range `[min, max)` in ms (HBase's `TimeRange`). `min ≥ 0`, `max ≥ min`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimeRange {
    pub min: i64,
    pub max: i64,
}

impl Default for TimeRange {
    fn default() -> Self {
        TimeRange::ALL
    }
}

impl TimeRange {
    /// All time: `[0, i64::MAX)`; every timestamp (even `i64::MAX`) is inside it.
    pub const ALL: TimeRange = TimeRange {
        min: 0,
        max: i64::MAX,
    };

    /// `[min, max)`.
    pub fn between(min: i64, max: i64) -> Result<TimeRange> {
        let tr = TimeRange { min, max };
        tr.validate()?;
        Ok(tr)
    }

    /// Exactly `ts` (`[ts, ts + 1)`, HBase's `setTimestamp`).
    pub fn at(ts: i64) -> Result<TimeRange> {
        TimeRange::between(ts, ts.saturating_add(1))
    }

    pub fn validate(&self) -> Result<()> {
        if self.min < 0 || self.max < 0 || self.max < self.min {
            return Err(ReadError::Options(format!(
                "time range [{}, {}) must have 0 ≤ min ≤ max",
                self.min, self.max
            )));
        }
        Ok(())
    }

    pub fn is_all_time(&self) -> bool {
        *self == TimeRange::ALL
    }

    /// `min ≤ ts < max` (always true for all time).
    pub fn within(&self, ts: i64) -> bool {
        self.is_all_time() || (self.min <= ts && ts < self.max)
    }

    /// `ts ≥ min` (always true for all time).
    pub fn within_or_after(&self, ts: i64) -> bool {
        self.is_all_time() || ts >= self.min
    }

    /// `Less` below the range, `Greater` at or above `max`, `Equal` inside.
    pub fn compare(&self, ts: i64) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        if self.is_all_time() {
            Ordering::Equal
        } else if ts < self.min {
            Ordering::Less
        } else if ts >= self.max {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }
}

/// What to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// First row (inclusive); empty = from the first row. Scans only.
    pub start_row: Vec<u8>,
    /// Row to stop before (exclusive); empty = to the last row. Scans only.
    pub stop_row: Vec<u8>,
    /// Only rows starting with this prefix (intersected with start/stop). Scans only.
    pub prefix: Option<Vec<u8>>,
    /// `(family, None)` = the whole family, `(family, Some(qualifier))` = one column (a
    /// `None` for a family wins over its qualifiers). Empty = every family of the stores given.
    pub columns: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    pub time_range: TimeRange,
    /// Versions per column (capped by the family's VERSIONS unless raw). Default 1.
    pub max_versions: u32,
    /// At most this many rows (scans).
    pub limit: Option<usize>,
    /// Return delete markers and masked cells; no TTL. Whole families only.
    pub raw: bool,
    /// Emit rows in descending order (the row range is still `[start_row, stop_row)`).
    pub reverse: bool,
    /// "Now" in epoch ms for TTL. Injected: the read path never reads the clock. With the
    /// default 0 nothing with a non-negative timestamp expires.
    pub now_ms: i64,
}

impl ReadOptions {
    /// Checks the options as [`get`] and [`scan`] do: a valid time range, `max_versions ≥ 1`,
    /// no qualifiers in a raw read.
    pub fn validate(&self) -> Result<()> {
        scan::validate(self)
    }
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            start_row: Vec::new(),
            stop_row: Vec::new(),
            prefix: None,
            columns: Vec::new(),
            time_range: TimeRange::ALL,
            max_versions: 1,
            limit: None,
            raw: false,
            reverse: false,
            now_ms: 0,
        }
    }
}

/// A row of a scan: its key and its cells (families in byte order, then cell order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub row: Vec<u8>,
    pub cells: Vec<hfkit_format::cell::Cell>,
}

/// Which files a read used and why it skipped the others (each skipped file is counted under
/// the first reason that applied, in this order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Files of the stores read.
    pub files_considered: usize,
    /// Files actually merged.
    pub files_read: usize,
    /// TIMERANGE entirely outside the query's time range.
    pub skipped_time_range: usize,
    /// Newest cell expired (TTL) and MIN_VERSIONS = 0.
    pub skipped_ttl: usize,
    /// Row range outside the row (Get) or `[start, stop)` (Scan); also empty files.
    pub skipped_key_range: usize,
    /// Bloom filter says the row (or row + column) is absent (Get only).
    pub skipped_bloom: usize,
}
