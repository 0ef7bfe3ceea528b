//! Cell exports: every cell a read of a table returns (every version its families keep, TTL at
//! a given clock), one per CSV line or Parquet row, and the file formats row exports
//! ([`crate::export`]) share. Spec: `formats/table.md` §"Export".
//!
//! ```text
//! csv      header, then row,family,qualifier,timestamp,type,value — bytes as
//!          Bytes.toStringBinary text (printable ASCII as is, others \xNN)
//! parquet  row, family, qualifier, value: binary; timestamp: int64; type: utf8;
//!          row groups of PARQUET_ROW_GROUP_CELLS cells, Snappy
//! ```
//!
//! The table layer reads the rows (`Table::export_rows`, which also makes the file appear
//! atomically); the writers here turn them into bytes.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, BinaryBuilder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression as ParquetCompression;
use parquet::file::properties::WriterProperties;
use serde::Serialize;

use hfkit_format::cell::CellRef;
use hfkit_read::{ReadOptions, RowRef};
use hfkit_table::directory::Table;
use hfkit_table::export::{ExportReport, RowWriter};
use hfkit_table::{push_string_binary, TableError};

/// Cells per Parquet row group (bounds the writer's memory).
pub const PARQUET_ROW_GROUP_CELLS: usize = 65_536;

/// The file formats of exports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ExportFormat {
    Csv,
    Parquet,
}

/// Every cell a user would read of `table` (or of its snapshot `snapshot`): all versions the
/// families keep, TTL at `now_ms`, region by region, rows in order, as `format` at `dest` (a
/// file, written under a temporary name and renamed into place when complete).
pub fn export_cells(
    table: &Table,
    snapshot: Option<&str>,
    format: ExportFormat,
    dest: &Path,
    now_ms: i64,
) -> Result<ExportReport, TableError> {
    let opts = ReadOptions {
        max_versions: u32::MAX,
        now_ms,
        ..ReadOptions::default()
    };
    let (version, cells) = table.export_rows(snapshot, dest, &opts, |file| {
        Ok::<_, TableError>(match format {
            ExportFormat::Csv => CellWriter::Csv(Box::new(CsvCells::new(file)?)),
            ExportFormat::Parquet => CellWriter::Parquet(Box::new(ParquetCells::new(file)?)),
        })
    })?;
    Ok(ExportReport {
        path: dest.to_path_buf(),
        version,
        snapshot: snapshot.map(String::from),
        files: 1,
        cells,
        bytes: std::fs::metadata(dest).map(|md| md.len()).unwrap_or(0),
    })
}

/// The writer of a cell export.
enum CellWriter {
    Csv(Box<CsvCells>),
    Parquet(Box<ParquetCells>),
}

impl RowWriter for CellWriter {
    /// Cells written.
    type Output = u64;
    type Error = TableError;

    fn write_row(&mut self, row: RowRef<'_>) -> Result<(), TableError> {
        match self {
            CellWriter::Csv(w) => w.write_row(row),
            CellWriter::Parquet(w) => w.write_row(row),
        }
    }

    fn finish(self) -> Result<u64, TableError> {
        match self {
            CellWriter::Csv(w) => w.finish(),
            CellWriter::Parquet(w) => w.finish(),
        }
    }
}

/// Cells as CSV lines.
struct CsvCells {
    w: csv::Writer<BufWriter<File>>,
    cells: u64,
    /// The `Bytes.toStringBinary` text of the row, family, qualifier and value being written
    /// (buffers kept from cell to cell; the row's is made once per row).
    text: [String; 4],
}

fn csv_error(e: impl std::fmt::Display) -> TableError {
    TableError::Invalid(format!("CSV: {e}"))
}

impl CsvCells {
    fn new(file: File) -> Result<CsvCells, TableError> {
        let mut w = csv::Writer::from_writer(BufWriter::with_capacity(1 << 20, file));
        w.write_record(["row", "family", "qualifier", "timestamp", "type", "value"])
            .map_err(csv_error)?;
        Ok(CsvCells {
            w,
            cells: 0,
            text: Default::default(),
        })
    }

    fn write_row(&mut self, row: RowRef<'_>) -> Result<(), TableError> {
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
            self.w
                .write_record([
                    row_text.as_bytes(),
                    family.as_bytes(),
                    qualifier.as_bytes(),
                    timestamp.format(c.timestamp).as_bytes(),
                    c.cell_type.name().as_bytes(),
                    value.as_bytes(),
                ])
                .map_err(csv_error)?;
            self.cells += 1;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<u64, TableError> {
        self.w.flush().map_err(csv_error)?;
        Ok(self.cells)
    }
}

/// Cells as Parquet rows, in row groups of [`PARQUET_ROW_GROUP_CELLS`].
struct ParquetCells {
    w: ArrowWriter<File>,
    schema: Arc<Schema>,
    batch: CellBatch,
    cells: u64,
}

fn parquet_error(e: impl std::fmt::Display) -> TableError {
    TableError::Invalid(format!("Parquet: {e}"))
}

impl ParquetCells {
    fn new(file: File) -> Result<ParquetCells, TableError> {
        let schema = Arc::new(cell_schema());
        let props = WriterProperties::builder()
            .set_compression(ParquetCompression::SNAPPY)
            .set_max_row_group_row_count(Some(PARQUET_ROW_GROUP_CELLS))
            .build();
        let w = ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(parquet_error)?;
        Ok(ParquetCells {
            w,
            schema,
            batch: CellBatch::default(),
            cells: 0,
        })
    }

    fn write_row(&mut self, row: RowRef<'_>) -> Result<(), TableError> {
        for c in row.cells() {
            self.batch.push(&c);
            self.cells += 1;
            if self.batch.len() >= PARQUET_ROW_GROUP_CELLS {
                let b = self.batch.take(&self.schema)?;
                self.w.write(&b).map_err(parquet_error)?;
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<u64, TableError> {
        if self.batch.len() > 0 {
            let b = self.batch.take(&self.schema)?;
            self.w.write(&b).map_err(parquet_error)?;
        }
        let mut inner = self.w.into_inner().map_err(parquet_error)?;
        inner.flush().map_err(parquet_error)?;
        Ok(self.cells)
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
}

impl CellBatch {
    fn len(&self) -> usize {
        self.timestamp.len()
    }

    fn push(&mut self, c: &CellRef<'_>) {
        self.row.append_value(c.row);
        self.family.append_value(c.family);
        self.qualifier.append_value(c.qualifier);
        self.timestamp.append_value(c.timestamp);
        self.cell_type.append_value(c.cell_type.name());
        self.value.append_value(c.value);
    }

    /// The cells gathered, as a record batch; the builders are left empty.
    fn take(&mut self, schema: &Arc<Schema>) -> Result<RecordBatch, TableError> {
        let cols: Vec<ArrayRef> = vec![
            Arc::new(self.row.finish()),
            Arc::new(self.family.finish()),
            Arc::new(self.qualifier.finish()),
            Arc::new(self.timestamp.finish()),
            Arc::new(self.cell_type.finish()),
            Arc::new(self.value.finish()),
        ];
        RecordBatch::try_new(schema.clone(), cols).map_err(|e| parquet_error(format!("batch: {e}")))
    }
}
