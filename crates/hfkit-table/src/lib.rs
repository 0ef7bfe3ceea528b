//! The table layer: a table's schema (names, column families and their attributes, HBase's
//! defaults and validation; our TOML form and HBase shell `create` statements), its region
//! split points, and the table directory holding its store files, with a manifest naming the
//! live files. Spec: `formats/schema.md`, `formats/table.md`.
//!
//! | module | owns | prose |
//! |---|---|---|
//! | [`split`] | split algorithms, [`Regions`], split files, `Bytes.toBytesBinary` keys, sampling | `schema.md` §"Splits" |
//! | [`schema`] | [`TableSchema`], [`FamilySchema`], validation, the TOML form, [`ImportMapping`] | `schema.md` |
//! | [`shell`] | the HBase shell `create` statement | `schema.md` §"HBase shell form" |
//! | [`cursor`] | the token cursor of the shell parser, for the rowkey parser of `hfkit-pipeline` too | `schema.md` §"HBase shell form", `rowkey.md` |
//! | [`manifest`] | manifest versions and the atomic `CURRENT` pointer | `table.md` §"Manifest" |
//! | [`commit`] | the commit step of every write: publish, or undo what was placed, or report a commit whose durability is in doubt | `table.md` §"Commit protocol" |
//! | [`fsops`] | the filesystem operations of a commit, with crash injection for tests | `table.md` §"Commit protocol" |
//! | [`directory`] | create, open, attach, check and garbage-collect a table directory | `table.md` |
//! | [`staging`] | temporary directories held by a live process ([`staging::OwnedDir`]), and sweeping those of dead ones | `table.md` §"Writers and garbage" |
//! | [`remote`] | tables on object storage: mirrors, and the commit by create-only manifest versions | `table.md` §"Tables on object storage" |
//! | [`remote_read`] | read mirrors: store files on object storage read by byte ranges | `table.md` §"Reads of tables on object storage" |
//! | [`read`] | [`read::TableReader`]: Get and Scan over every region and family of one manifest version | `read.md` §"Table-level reads" |
//! | [`compact`] | compaction (HBase's selection and compaction rules) | `table.md` §"Compaction" |
//! | [`alter`] | `alter`: a family's settings changed in a new manifest version | `table.md` §"Alter" |
//! | [`snapshot`] | snapshots: create, list, delete, restore, clone | `table.md` §"Snapshots" |
//! | [`export`] | export as a table, a bulk-load directory, CSV or Parquet cells; rows to [`export::PartEncoder`]s on several threads | `table.md` §"Export" |
//!
//! Schema problems are [`SchemaError`]s (naming file, line and column, family, attribute or
//! key); everything about a table directory is a [`TableError`].

pub mod alter;
pub mod commit;
pub mod compact;
pub mod cursor;
pub mod directory;
pub mod error;
pub mod export;
pub mod fsops;
pub mod manifest;
pub mod progress;
pub mod read;
pub mod remote;
pub mod remote_read;
pub mod schema;
pub mod shell;
pub mod snapshot;
pub mod split;
pub mod staging;
pub mod writer_settings;

pub use error::{Location, SchemaError};
pub use schema::{
    BloomFilterKind, ColumnMapping, DeleteAction, DeleteScope, FamilySchema, ImportMapping,
    IndexSchema, KeepDeletedCells, OperationMapping, ParsedSchema, QualifierPart, SplitSpec,
    TableName, TableSchema, TimestampSource, TtlSource, ValueType,
};
pub use split::{
    push_string_binary, region_of_row, sample_splits, to_bytes_binary, to_string_binary,
    BytesBinaryError, Regions, SplitAlgorithm, Splitter,
};

use std::path::{Path, PathBuf};

/// Errors of the table layer.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: corrupt: {detail}", path.display())]
    Corrupt { path: PathBuf, detail: String },
    #[error("{0}")]
    Invalid(String),
    /// The change is visible as manifest `version`, but making it durable failed.
    #[error("committed as manifest version {version}, but not known to be durable: {detail}")]
    NotDurable { version: u64, detail: String },
    #[error(transparent)]
    Format(#[from] hfkit_format::FormatError),
    /// A read of a table failed: `what` names the read (the row of a Get, the region of a
    /// Scan).
    #[error("{}: {what}: {source}", table.display())]
    Read {
        table: PathBuf,
        what: String,
        #[source]
        source: Box<hfkit_read::ReadError>,
    },
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// A manifest's regions do not chain.
    #[error(transparent)]
    Regions(#[from] manifest::RegionChainError),
    /// An attach of an import whose identity the table already records.
    #[error("this import (id {id}) was already attached as manifest version {version}: nothing done (--force imports it again)")]
    AlreadyImported { id: String, version: u64 },
    /// A stop was asked for (`hfkit_storage::interrupt`: SIGINT, SIGTERM) before the commit:
    /// the writer stopped at a safe point, and what it staged is removed as on any failure.
    #[error("interrupted by {}", hfkit_storage::interrupt::signal_name(*signal))]
    Interrupted { signal: i32 },
}

/// `Err(Interrupted)` when a stop was asked for: writers check it at safe points (between
/// rows written, files copied, stores compacted) and before they commit.
pub fn check_interrupt() -> Result<(), TableError> {
    match hfkit_storage::interrupt::requested() {
        Some(signal) => Err(TableError::Interrupted { signal }),
        None => Ok(()),
    }
}

impl TableError {
    pub fn io(path: &Path, source: std::io::Error) -> TableError {
        TableError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
