//! A row export's errors: [`ExportError`], naming the row and field at fault where there is
//! one. Spec: `formats/table.md` §"Export"; the key: `formats/rowkey.md` §"Inverting a spec".

use std::path::PathBuf;

use crate::RowkeyError;
use hfkit_table::TableError;

/// Errors of a row export; each names the row and field at fault where there is one.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Table(#[from] TableError),
    /// The rowkey spec does not parse, or cannot be inverted.
    #[error(transparent)]
    Spec(RowkeyError),
    /// The mapping cannot be exported as records (found before any row is read).
    #[error("{0}")]
    Mapping(String),
    /// A row whose key does not fit the spec.
    #[error("row '{row}': {reason}")]
    Row { row: String, reason: String },
    /// A row with a field that cannot be written so that it imports back the same.
    #[error("row '{row}': field '{field}': {reason}")]
    Field {
        row: String,
        field: String,
        reason: String,
    },
    /// Writing the CSV or Parquet output failed.
    #[error("{}: {detail}", path.display())]
    Write { path: PathBuf, detail: String },
}
