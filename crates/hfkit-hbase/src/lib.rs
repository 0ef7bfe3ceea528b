//! HBase's own on-disk layout, offline: an HBase root directory (`hbase.rootdir`) and its
//! tables, regions, store files (plain HFiles, HFileLinks, split references) and snapshots,
//! read as HBase would read them, and written as HBase would write them (snapshots, in-place
//! compaction). Spec: `formats/hbase-layout.md`.
//!
//! | module | owns | spec section |
//! |---|---|---|
//! | [`proto`] | the layout's protobuf messages (`prost`, by hand) | each in its file's section |
//! | [`names`] | store file names: HFile, HFileLink, reference; link search order | §"Store files" |
//! | [`region`] | `RegionInfo`, encoded names, `.regioninfo`, region order, split parents | §"Regions" |
//! | [`descriptor`] | `.tableinfo`, table / family descriptors, HBase's `describe` text | §"Table descriptors" |
//! | [`reference`] | reference files (`Reference`: split key and half) | §"Store files" |
//! | [`manifest`] | a table's or snapshot's regions and store files ([`Manifest`]); store listing, `.filelist` | §"Regions", §"Store file trackers" |
//! | [`mob`] | MOB reference cells resolved to the MOB files' cells | §"MOB tables" |
//! | [`store`] | resolving a store file to its bytes, opening it as HBase does, [`hfkit_read::Store`]s | §"Reading" |
//! | [`root`] | the root directory: version, tables, snapshots | §"Root directory" |
//! | [`remote`] | a root on object storage, read through a local mirror of its small files | §"Roots on object storage" |
//! | [`snapshot`] | `.snapshotinfo`, `data.manifest` (v2), v1 and `region-manifest.*` snapshots | §"Snapshots" |
//! | [`verify`] | snapshot verification and per-store cell digests | §"Verification" |
//! | [`clone`] | an hfkit table from an HBase table or snapshot | §"Clone into an hfkit table" |
//! | [`compact`] | offline major compaction of a table's stores in place, archiving the inputs | §"Offline compaction" |
//! | [`export`] | an hfkit table as an HBase snapshot (`ExportSnapshot`'s layout) | §"Export as an HBase snapshot" |
//! | [`copy`] | a snapshot copied between roots (`ExportSnapshot`), by threads or Spark tasks | §"Copy of a snapshot between roots" |
//! | [`export_s3`] | the same into a root on object storage, without renames | §"Export into a root on object storage" |
//!
//! This layer uses [`hfkit_format`], [`hfkit_read`], [`hfkit_storage`] and [`hfkit_table`] only.

pub mod clone;
pub mod compact;
pub mod copy;
pub mod descriptor;
pub mod export;
pub mod export_s3;
pub mod manifest;
pub mod mob;
pub mod names;
pub mod owner;
pub mod proto;
pub mod reference;
pub mod region;
pub mod remote;
pub mod root;
pub mod snapshot;
pub mod snapshot_info;
pub mod store;
pub mod verify;

use std::path::{Path, PathBuf};

pub use descriptor::{FamilyDescriptor, TableDescriptor};
pub use manifest::{FamilyFiles, Manifest, RegionManifest, Source, StoreFile};
pub use reference::Reference;
pub use region::RegionInfo;
pub use root::HBaseRoot;

use hfkit_format::fileinfo::PB_MAGIC;
use hfkit_table::to_string_binary;

/// Errors of the HBase layout: each names the file (or directory) and the problem (a family
/// attribute: the family, attribute and value).
#[derive(Debug, thiserror::Error)]
pub enum HBaseError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file of the layout is damaged, missing or inconsistent.
    #[error("{}: {detail}", path.display())]
    Corrupt { path: PathBuf, detail: String },
    /// A store file cannot be read as an HFile.
    #[error("{}: {source}", path.display())]
    Format {
        path: PathBuf,
        #[source]
        source: hfkit_format::FormatError,
    },
    /// A file of the layout holds a message hfkit cannot use; [`ContentError`] says what.
    #[error("{}: {source}", path.display())]
    Content {
        path: PathBuf,
        #[source]
        source: ContentError,
    },
    /// A family descriptor attribute hfkit cannot use (HBase would not have written it).
    #[error("family {family}: {key} '{value}' is not valid")]
    FamilyAttribute {
        family: String,
        key: &'static str,
        value: String,
    },
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Table(#[from] hfkit_table::TableError),
}

/// What is wrong inside one of the layout's messages (`RegionInfo`, `TableSchema`,
/// `Reference`, `SnapshotDescription`) or between the regions they describe, found by code
/// that parses the message and does not know which file it came from: the reader of the file
/// wraps it in [`HBaseError::Content`] with the file's path.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    #[error("the table schema has no table name")]
    NoTableName,
    /// `part` is `namespace` or `qualifier`.
    #[error("the table {part} is not UTF-8")]
    TableNameNotUtf8 { part: &'static str },
    /// (Boxed to keep [`HBaseError`] small.)
    #[error(transparent)]
    TableName(Box<hfkit_table::SchemaError>),
    #[error("reference range {0} is not TOP or BOTTOM")]
    ReferenceRange(i32),
    #[error("the reference's split key is not a valid cell key")]
    ReferenceSplitKey,
    /// A reference's split row is not the bound of its region it must be: the start key for
    /// a top half, the end key for a bottom half (or, for a merge's top reference, the start
    /// key of the merged parent).
    #[error(
        "{} reference split at '{}', but the {bound} key is '{}'",
        if *top { "top" } else { "bottom" },
        to_string_binary(split_row),
        to_string_binary(expected)
    )]
    ReferenceSplitMismatch {
        top: bool,
        split_row: Vec<u8>,
        /// What `expected` is: "region's start", "region's end" or "merged parent's start".
        bound: &'static str,
        expected: Vec<u8>,
    },
    #[error("unknown snapshot type {0}")]
    SnapshotType(i32),
    /// Two live regions (by region name) share keys.
    #[error(
        "regions {} and {} overlap and neither is a split or merge parent",
        to_string_binary(first),
        to_string_binary(second)
    )]
    RegionsOverlap { first: Vec<u8>, second: Vec<u8> },
    /// The live regions leave the rows from `start` up to the region named `next` uncovered.
    #[error(
        "no live region starts at '{}' (next: {})",
        to_string_binary(start),
        to_string_binary(next)
    )]
    RegionHole { start: Vec<u8>, next: Vec<u8> },
    /// The last live region ends at `end` instead of covering the rows to the table's end.
    #[error("no live region covers the rows from '{}' on", to_string_binary(end))]
    RegionTail { end: Vec<u8> },
    /// The entry for store file `name` of a manifest or file list.
    #[error("{name}: {source}")]
    StoreFile {
        name: String,
        #[source]
        source: Box<ContentError>,
    },
}

impl From<hfkit_table::SchemaError> for ContentError {
    fn from(e: hfkit_table::SchemaError) -> ContentError {
        ContentError::TableName(Box::new(e))
    }
}

impl ContentError {
    /// This error, as found in the entry for store file `name`.
    pub fn in_store_file(self, name: &str) -> ContentError {
        ContentError::StoreFile {
            name: name.to_string(),
            source: Box::new(self),
        }
    }
}

impl HBaseError {
    pub fn io(path: &Path, source: std::io::Error) -> HBaseError {
        HBaseError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub fn corrupt(path: &Path, detail: impl Into<String>) -> HBaseError {
        HBaseError::Corrupt {
            path: path.to_path_buf(),
            detail: detail.into(),
        }
    }

    pub fn content(path: &Path, source: ContentError) -> HBaseError {
        HBaseError::Content {
            path: path.to_path_buf(),
            source,
        }
    }
}

pub type Result<T, E = HBaseError> = std::result::Result<T, E>;

/// The bytes after the `PBUF` magic of a protobuf file HBase writes with it.
pub(crate) fn pb_magic<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a [u8]> {
    bytes
        .strip_prefix(PB_MAGIC.as_slice())
        .ok_or_else(|| HBaseError::corrupt(path, "does not start with the PBUF magic"))
}

/// Test hook, in debug builds only: with `<var>=<phase>:<n>` set in the environment, once `n`
/// items are through `phase`, says so on stderr and sleeps, for a test to SIGKILL the process
/// at that point (`tests/it/hbase_layout/`, `tests/it/kill.rs`). Release builds do nothing.
#[cfg(debug_assertions)]
pub(crate) fn pause_for_tests(var: &str, phase: &str, done: usize) {
    let Ok(want) = std::env::var(var) else {
        return;
    };
    if want != format!("{phase}:{done}") {
        return;
    }
    eprintln!("paused after {done} {phase}");
    loop {
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}

#[cfg(not(debug_assertions))]
pub(crate) fn pause_for_tests(_var: &str, _phase: &str, _done: usize) {}
