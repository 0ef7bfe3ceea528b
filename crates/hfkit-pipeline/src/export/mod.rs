//! Row exports: a table read back as the records its import mapping turns into cells — one
//! record per row key, one field per input field the mapping reads — written as CSV or Parquet
//! that `hfkit import` with the same schema reads back into the same cells.
//! Spec: `formats/table.md` §"Export"; the key: `formats/rowkey.md` §"Inverting a spec".
//!
//! ```text
//! per row (the newest version of each column, as a read returns it):
//!   string [[column]]s          -> their source fields: the cell bytes as they are
//!   the row key                 -> the fields of its invertible terms (RowkeyInverse)
//!   int64 / double [[column]]s  -> decimal text
//!   timestamp fields            -> the cell's timestamp in the column's timestamp_format (epoch ms by default)
//!   check: every source re-encodes from the chosen text to its very cell, and the fields
//!          re-encode to the row key (salt, hash_prefix and bucket terms included)
//! ```
//!
//! A field several sources give must agree (an exact source — a string column, a field
//! reference in the key — wins over a canonical one such as `pad`'s digits); a row that cannot
//! be written so that it imports back into the same cells is an error naming the row and
//! field. Cells of columns the mapping does not name, and rows with only such cells, are
//! counted and left out.
//!
//! | module | owns |
//! |---|---|
//! | `decode` | [`RecordDecoder`]: a row's key and cells to the record that imports as them |
//! | `write` | [`RecordParts`]: decoded records encoded as CSV or Parquet, region by region; [`RecordSink`]: the parts into one file (cell exports' too, with their header and schema); the CSV part and Parquet row group encoders both share |

pub mod cells;
mod decode;
mod write;

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::RowkeyError;
pub use decode::{Record, RecordDecoder};
use hfkit_read::ReadOptions;
use hfkit_table::directory::Table;
use hfkit_table::export::ExportScope;
use hfkit_table::{ImportMapping, TableError};
pub(crate) use write::{
    encode_row_group, parquet_properties, parts_ahead, within_arrow_offsets, CSV_PART_BYTES,
    CSV_PART_CAPACITY,
};
pub use write::{RecordPart, RecordParts, RecordSink};

/// The file formats of exports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ExportFormat {
    Csv,
    Parquet,
}

/// Records per Parquet row group, at most.
pub const PARQUET_ROW_GROUP_ROWS: usize = 65_536;
/// Field bytes buffered before a Parquet row group is written, at most (about).
pub const PARQUET_ROW_GROUP_BYTES: usize = 64 << 20;

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

/// Parquet type of an exported field (CSV fields are all text).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    Utf8,
    Int64,
    Double,
}

/// One field of the exported records: an input field of the mapping.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExportField {
    pub name: String,
    pub parquet_type: FieldType,
}

/// Counts of a row export.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RowCounts {
    /// Records written (one per row key).
    pub rows: u64,
    /// Cells of mapped columns the records carry.
    pub cells: u64,
    /// Rows with no cell in a mapped column (no record).
    pub rows_skipped: u64,
    /// Cells in columns the mapping does not name (not exported).
    pub unmapped_cells: u64,
    /// Cells whose timestamp the record does not carry: their column has a fixed timestamp
    /// that differs, or the import time. A re-import stamps them as its schema says.
    pub untimed_cells: u64,
}

/// What a row export wrote.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RowExportReport {
    pub path: PathBuf,
    /// Manifest version exported.
    pub version: u64,
    pub snapshot: Option<String>,
    pub fields: Vec<ExportField>,
    #[serde(flatten)]
    pub counts: RowCounts,
    pub bytes: u64,
}

/// Exports `table` (or its `snapshot`) as one record per row key through `mapping`, in
/// `format`, to the file `dest` (which must not exist), regions decoded and encoded on
/// `threads` threads (the file is the same for any number). TTL is applied at `now_ms`.
/// `scope`: the regions one task of a cluster export writes (default: all).
#[allow(clippy::too_many_arguments)]
pub fn export_rows(
    table: &Table,
    mapping: &ImportMapping,
    format: ExportFormat,
    dest: &Path,
    snapshot: Option<&str>,
    now_ms: i64,
    scope: &ExportScope,
    threads: usize,
) -> Result<RowExportReport, ExportError> {
    let families: Vec<String> = table
        .manifest()?
        .families
        .iter()
        .map(|f| f.name.clone())
        .collect();
    let decoder = RecordDecoder::new(mapping, &families)?;
    let opts = ReadOptions {
        max_versions: 1,
        now_ms,
        ..ReadOptions::default()
    };
    let (version, (), encoders) = table.export_parts(
        snapshot,
        dest,
        &opts,
        scope,
        threads,
        write::parts_ahead(format),
        |file| RecordSink::new(&decoder, format, file, dest),
        |sink| Ok(RecordParts::new(&decoder, sink)),
    )?;
    let counts = encoders
        .iter()
        .map(RecordParts::counts)
        .fold(RowCounts::default(), |a, b| RowCounts {
            rows: a.rows + b.rows,
            cells: a.cells + b.cells,
            rows_skipped: a.rows_skipped + b.rows_skipped,
            unmapped_cells: a.unmapped_cells + b.unmapped_cells,
            untimed_cells: a.untimed_cells + b.untimed_cells,
        });
    Ok(RowExportReport {
        path: dest.to_path_buf(),
        version,
        snapshot: snapshot.map(String::from),
        fields: decoder.fields().to_vec(),
        counts,
        bytes: std::fs::metadata(dest).map(|m| m.len()).unwrap_or(0),
    })
}
