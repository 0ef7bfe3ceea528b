//! The table layer: what an HBase table looks like before any file is written.
//!
//! It owns the table schema (names, column families and their attributes, HBase's defaults and
//! validation), the two ways of writing it down (our TOML file and HBase shell `create`
//! statements), the region split points (pre-split algorithms, explicit keys, split files,
//! sampling) and the plain description of how input fields map to cells ([`ImportMapping`]).
//! It performs no I/O beyond reading a schema or splits file, and writes nothing.
//!
//! | module | owns | prose |
//! |---|---|---|
//! | [`split`] | split algorithms, [`Regions`], split files, `Bytes.toBytesBinary` keys, sampling | `formats/schema.md` §"Splits" |
//! | [`schema`] | [`TableSchema`], [`FamilySchema`], validation, the TOML form, [`ImportMapping`] | `formats/schema.md` |
//! | [`shell`] | the HBase shell `create` statement | `formats/schema.md` §"HBase shell form" |
//!
//! Every failure is a [`SchemaError`] naming the offending item (file, line and column where
//! there is one; family; attribute; key).

pub mod error;
pub mod schema;
pub mod shell;
pub mod split;

pub use error::{Location, SchemaError};
pub use schema::{
    BloomFilterKind, ColumnMapping, FamilySchema, ImportMapping, KeepDeletedCells, ParsedSchema,
    SplitSpec, TableName, TableSchema, TimestampSource, ValueType,
};
pub use split::{
    sample_splits, to_bytes_binary, to_string_binary, Regions, SplitAlgorithm, Splitter,
};

/// Locating Apache HBase's golden fixtures in tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use std::path::{Path, PathBuf};

    /// The fixtures root (holding `splits/`, `hashes/`, `hbase/`): `$HFKIT_HBASE_FIXTURES`, else
    /// `CARGO_MANIFEST_DIR/../shared/fixtures`. `None`, with a `SKIP` line on stderr, when the
    /// wanted sub-directory is absent.
    pub(crate) fn dir(test: &str, sub: &str) -> Option<PathBuf> {
        let root = match std::env::var_os("HFKIT_HBASE_FIXTURES") {
            Some(p) => PathBuf::from(p),
            None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures"),
        };
        let dir = root.join(sub);
        if dir.is_dir() {
            Some(dir)
        } else {
            eprintln!(
                "SKIP {test}: HBase fixtures not found at {} (set HFKIT_HBASE_FIXTURES)",
                dir.display()
            );
            None
        }
    }
}
