//! Cell exports: every cell a read of a table returns (every version its families keep, TTL at
//! a given clock), one per CSV line or Parquet row, and the file formats row exports
//! ([`crate::export`]) share. Spec: `formats/table.md` §"Export".
//!
//! ```text
//! csv      header, then row,family,qualifier,timestamp,type,value — bytes as
//!          Bytes.toStringBinary text (printable ASCII as is, others \xNN)
//! parquet  row, family, qualifier, value: binary; timestamp: int64; type: utf8;
//!          row groups of 65,536 cells or 8 MiB of cells, ended at row ends, Snappy
//! ```
//!
//! The table layer reads the regions on `threads` threads (`Table::export_parts`, each region
//! whole to one [`CellParts`], which encodes 1 MiB parts of CSV lines or Parquet row groups)
//! and the row export's sink ([`RecordSink`], with the cells' header and schema) writes the
//! parts in region order, so the file is the same for any number of threads. A Parquet row
//! group ends at the first row end after [`PARQUET_ROW_GROUP_CELLS`] cells or
//! [`PARQUET_ROW_GROUP_CELL_BYTES`], and at a region's end.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, BinaryBuilder, Int64Builder, StringBuilder};
use arrow_array::ArrayRef;
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_writer::ArrowRowGroupWriterFactory;
use serde::Serialize;

use crate::export::{
    csv_part_writer, encode_row_group, parts_ahead, take_csv_part, ExportError, RecordPart,
    RecordSink, CSV_PART_BYTES,
};
use hfkit_format::cell::CellRef;
use hfkit_read::{ReadOptions, RowRef};
use hfkit_table::directory::Table;
use hfkit_table::export::{ExportReport, PartEncoder};
use hfkit_table::push_string_binary;

/// Cells per Parquet row group: a row group ends at the first row end after this many cells,
/// or after [`PARQUET_ROW_GROUP_CELL_BYTES`].
pub const PARQUET_ROW_GROUP_CELLS: usize = 65_536;
/// Bytes of cells (row, family, qualifier, value) after which a Parquet row group ends at the
/// next row end, whatever its cells: with [`PARQUET_PARTS_AHEAD`], what bounds the memory of
/// big cells.
pub const PARQUET_ROW_GROUP_CELL_BYTES: usize = 8 << 20;
/// Parquet row groups of a region that may wait for the file while the regions before it are
/// written (at most 64 MiB of cells before encoding; CSV parts wait as row exports' do).
const PARQUET_PARTS_AHEAD: usize = 8;

/// The file formats of exports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ExportFormat {
    Csv,
    Parquet,
}

/// Every cell a user would read of `table` (or of its snapshot `snapshot`): all versions the
/// families keep, TTL at `now_ms`, region by region, rows in order, as `format` at `dest` (a
/// file, written under a temporary name and renamed into place when complete). The regions
/// are read and encoded on `threads` threads; the file is the same for any number.
pub fn export_cells(
    table: &Table,
    snapshot: Option<&str>,
    format: ExportFormat,
    dest: &Path,
    now_ms: i64,
    threads: usize,
) -> Result<ExportReport, ExportError> {
    let opts = ReadOptions {
        max_versions: u32::MAX,
        now_ms,
        ..ReadOptions::default()
    };
    let (version, (), encoders) = table.export_parts(
        snapshot,
        dest,
        &opts,
        threads,
        match format {
            ExportFormat::Csv => parts_ahead(format),
            ExportFormat::Parquet => PARQUET_PARTS_AHEAD,
        },
        |file| RecordSink::with_schema(cell_schema(), PARQUET_ROW_GROUP_CELLS, format, file, dest),
        |sink| Ok(CellParts::new(sink)),
    )?;
    Ok(ExportReport {
        path: dest.to_path_buf(),
        version,
        snapshot: snapshot.map(String::from),
        files: 1,
        cells: encoders.iter().map(|e| e.cells).sum(),
        bytes: std::fs::metadata(dest).map(|md| md.len()).unwrap_or(0),
    })
}

/// A [`PartEncoder`] of cell exports: each cell as a CSV line or a Parquet row.
struct CellParts {
    /// The destination, for messages.
    path: PathBuf,
    out: CellsOut,
    cells: u64,
    /// The `Bytes.toStringBinary` text of the row, family, qualifier and value being written
    /// (buffers kept from cell to cell; the row's is made once per row).
    text: [String; 4],
}

enum CellsOut {
    Csv(Box<csv::Writer<Vec<u8>>>),
    Parquet {
        factory: Arc<ArrowRowGroupWriterFactory>,
        schema: Arc<Schema>,
        batch: Box<CellBatch>,
    },
}

impl CellParts {
    fn new(sink: &RecordSink) -> CellParts {
        let out = match sink.row_group_writers() {
            None => CellsOut::Csv(Box::new(csv_part_writer())),
            Some((factory, schema)) => CellsOut::Parquet {
                factory,
                schema,
                batch: Box::default(),
            },
        };
        CellParts {
            path: sink.path().to_path_buf(),
            out,
            cells: 0,
            text: Default::default(),
        }
    }

    fn werr(&self, detail: String) -> ExportError {
        ExportError::Write {
            path: self.path.clone(),
            detail,
        }
    }

    /// The cells gathered as a part (none if there are none).
    fn take_part(&mut self) -> Result<Option<RecordPart>, ExportError> {
        let r = match &mut self.out {
            CellsOut::Csv(w) => take_csv_part(w),
            CellsOut::Parquet {
                factory,
                schema,
                batch,
            } if batch.len() > 0 => encode_row_group(factory, schema, batch.take())
                .map(|chunks| Some(RecordPart::Parquet(chunks)))
                .map_err(|e| format!("Parquet: {e}")),
            CellsOut::Parquet { .. } => Ok(None),
        };
        r.map_err(|detail| self.werr(detail))
    }
}

impl PartEncoder for CellParts {
    type Part = RecordPart;
    type Error = ExportError;

    fn write_row(&mut self, row: RowRef<'_>) -> Result<Option<RecordPart>, ExportError> {
        let full = match &mut self.out {
            CellsOut::Csv(w) => {
                let [row_text, family, qualifier, value] = &mut self.text;
                row_text.clear();
                push_string_binary(row_text, row.row());
                let mut timestamp = itoa::Buffer::new();
                for c in row.cells() {
                    for (text, bytes) in [
                        (&mut *family, c.family),
                        (&mut *qualifier, c.qualifier),
                        (&mut *value, c.value),
                    ] {
                        text.clear();
                        push_string_binary(text, bytes);
                    }
                    let r = w.write_record([
                        row_text.as_bytes(),
                        family.as_bytes(),
                        qualifier.as_bytes(),
                        timestamp.format(c.timestamp).as_bytes(),
                        c.cell_type.name().as_bytes(),
                        value.as_bytes(),
                    ]);
                    if let Err(e) = r {
                        return Err(self.werr(format!("CSV: {e}")));
                    }
                    self.cells += 1;
                }
                w.get_ref().len() >= CSV_PART_BYTES
            }
            CellsOut::Parquet { batch, .. } => {
                for c in row.cells() {
                    batch.push(&c);
                    self.cells += 1;
                }
                batch.len() >= PARQUET_ROW_GROUP_CELLS
                    || batch.bytes >= PARQUET_ROW_GROUP_CELL_BYTES
            }
        };
        if full {
            return self.take_part();
        }
        Ok(None)
    }

    fn end_region(&mut self) -> Result<Option<RecordPart>, ExportError> {
        self.take_part()
    }
}

/// The Parquet schema of exported cells.
pub fn cell_schema() -> Schema {
    Schema::new(vec![
        Field::new("row", DataType::Binary, false),
        Field::new("family", DataType::Binary, false),
        Field::new("qualifier", DataType::Binary, false),
        Field::new("timestamp", DataType::Int64, false),
        Field::new("type", DataType::Utf8, false),
        Field::new("value", DataType::Binary, false),
    ])
}

/// Columns of cells being gathered for one record batch: each field appended to its column's
/// buffer (no allocation per cell).
#[derive(Default)]
struct CellBatch {
    row: BinaryBuilder,
    family: BinaryBuilder,
    qualifier: BinaryBuilder,
    timestamp: Int64Builder,
    cell_type: StringBuilder,
    value: BinaryBuilder,
    /// Bytes of the rows, families, qualifiers and values gathered.
    bytes: usize,
}

impl CellBatch {
    fn len(&self) -> usize {
        self.timestamp.len()
    }

    fn push(&mut self, c: &CellRef<'_>) {
        self.bytes += c.row.len() + c.family.len() + c.qualifier.len() + c.value.len();
        self.row.append_value(c.row);
        self.family.append_value(c.family);
        self.qualifier.append_value(c.qualifier);
        self.timestamp.append_value(c.timestamp);
        self.cell_type.append_value(c.cell_type.name());
        self.value.append_value(c.value);
    }

    /// The cells gathered, one array per column of [`cell_schema`]; the builders are left
    /// empty.
    fn take(&mut self) -> Vec<ArrayRef> {
        self.bytes = 0;
        vec![
            Arc::new(self.row.finish()),
            Arc::new(self.family.finish()),
            Arc::new(self.qualifier.finish()),
            Arc::new(self.timestamp.finish()),
            Arc::new(self.cell_type.finish()),
            Arc::new(self.value.finish()),
        ]
    }
}
