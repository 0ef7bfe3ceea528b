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
//! | `format` | [`ExportFormat`], the Parquet row group bounds, the records' [`ExportField`]s and their [`FieldType`]s, the [`RowCounts`] |
//! | `error` | [`ExportError`] |
//! | `csv_line` | the CSV lines of records, as the `csv` crate writes them |
//! | `decode` | [`RecordDecoder`]: a row's key and cells to the record that imports as them |
//! | `write` | [`RecordParts`]: decoded records encoded as CSV or Parquet, region by region; [`RecordSink`]: the parts into one file (cell exports' too, with their header and schema); the CSV part and Parquet row group encoders both share |

pub mod cells;
mod csv_line;
mod decode;
mod error;
mod format;
mod write;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use decode::{Record, RecordDecoder};
pub use error::ExportError;
pub use format::{
    ExportField, ExportFormat, FieldType, RowCounts, PARQUET_DICTIONARY_PAGE_BYTES,
    PARQUET_ROW_GROUP_BYTES, PARQUET_ROW_GROUP_ROWS,
};
use hfkit_read::ReadOptions;
use hfkit_table::directory::Table;
use hfkit_table::export::ExportScope;
use hfkit_table::ImportMapping;
pub(crate) use write::{
    encode_row_group, parquet_properties, parts_ahead, within_arrow_offsets, CSV_PART_BYTES,
    CSV_PART_CAPACITY,
};
pub use write::{RecordPart, RecordParts, RecordSink};

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
