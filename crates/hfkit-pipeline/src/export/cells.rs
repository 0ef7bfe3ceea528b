//! Cell exports: every cell a read of a table returns (every version its families keep, TTL at
//! a given clock), one per CSV line or Parquet row, and the file formats row exports
//! ([`crate::export`]) share. Spec: `formats/table.md` §"Export".
//!
//! ```text
//! csv      header, then row,family,qualifier,timestamp,type,value — bytes as
//!          Bytes.toStringBinary text (printable ASCII as is, others \xNN); a typed
//!          column's value as its type shows it (`crate::mapping::typed`), unless raw values are asked
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

use arrow_array::{ArrayRef, BinaryArray, Int64Array, StringArray};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_writer::ArrowRowGroupWriterFactory;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use crate::export::csv_line::needs_quotes;
use crate::export::{
    encode_row_group, parquet_properties, parts_ahead, within_arrow_offsets, ExportError,
    RecordPart, RecordSink, CSV_PART_BYTES, CSV_PART_CAPACITY,
};
use crate::mapping::typed::ColumnTypes;
use hfkit_format::bytes::extend_short;
use hfkit_format::cell::CellRef;
use hfkit_format::text::{ColumnTexts, TimestampText};
use hfkit_read::{ReadOptions, RowRef};
use hfkit_table::directory::Table;
use hfkit_table::export::{ExportReport, ExportScope, PartEncoder};
use hfkit_table::{push_string_binary, to_string_binary};

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

pub use crate::export::ExportFormat;

/// Every cell a user would read of `table` (or of its snapshot `snapshot`): all versions the
/// families keep, TTL at `now_ms`, region by region, rows in order, as `format` at `dest` (a
/// file, written under a temporary name and renamed into place when complete). The regions
/// are read and encoded on `threads` threads; the file is the same for any number. `scope`:
/// the regions one task of a cluster export writes (default: all).
pub fn export_cells(
    table: &Table,
    snapshot: Option<&str>,
    format: ExportFormat,
    dest: &Path,
    now_ms: i64,
    scope: &ExportScope,
    threads: usize,
) -> Result<ExportReport, ExportError> {
    export_cells_as(table, snapshot, format, dest, now_ms, scope, threads, false)
}

/// [`export_cells`], with the values of the table's typed columns in CSV as their type shows
/// them (formats/table.md §"Typed values"), or with `raw_values` every value as stored
/// (`Bytes.toStringBinary` text). Parquet's `value` column holds the stored bytes either way.
#[allow(clippy::too_many_arguments)]
pub fn export_cells_as(
    table: &Table,
    snapshot: Option<&str>,
    format: ExportFormat,
    dest: &Path,
    now_ms: i64,
    scope: &ExportScope,
    threads: usize,
    raw_values: bool,
) -> Result<ExportReport, ExportError> {
    let types = Arc::new(ColumnTypes::of(&table.manifest()?, raw_values));
    let opts = ReadOptions {
        max_versions: u32::MAX,
        now_ms,
        ..ReadOptions::default()
    };
    let (version, (), encoders) = table.export_parts(
        snapshot,
        dest,
        &opts,
        scope,
        threads,
        match format {
            ExportFormat::Csv => parts_ahead(format),
            ExportFormat::Parquet => PARQUET_PARTS_AHEAD,
        },
        |file| RecordSink::with_schema(cell_schema(), cell_properties(), format, file, dest),
        |sink| Ok(CellParts::new(sink, types.clone())),
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
    /// The row's CSV field (made once per row, kept from row to row).
    row_field: String,
    /// The columns' and timestamps' CSV fields, made once while they repeat.
    columns: ColumnTexts,
    timestamp: TimestampText,
    /// A typed value's text, made here from cell to cell.
    typed: Vec<u8>,
    /// The typed columns, whose CSV values are shown decoded.
    types: Arc<ColumnTypes>,
}

enum CellsOut {
    /// The part's lines (see [`push_cell_line`]).
    Csv(String),
    Parquet {
        factory: Arc<ArrowRowGroupWriterFactory>,
        schema: Arc<Schema>,
        batch: Box<CellBatch>,
    },
}

impl CellParts {
    fn new(sink: &RecordSink, types: Arc<ColumnTypes>) -> CellParts {
        let out = match sink.row_group_writers() {
            None => CellsOut::Csv(String::with_capacity(CSV_PART_CAPACITY)),
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
            row_field: String::new(),
            columns: ColumnTexts::default(),
            timestamp: TimestampText::default(),
            typed: Vec::new(),
            types,
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
            CellsOut::Csv(lines) if lines.is_empty() => Ok(None),
            CellsOut::Csv(lines) => {
                let next = String::with_capacity(CSV_PART_CAPACITY);
                Ok(Some(RecordPart::Csv(
                    std::mem::replace(lines, next).into_bytes(),
                )))
            }
            CellsOut::Parquet {
                factory,
                schema,
                batch,
            } if batch.len() > 0 => batch.take().and_then(|columns| {
                encode_row_group(factory, schema, columns)
                    .map(|chunks| Some(RecordPart::Parquet(chunks)))
                    .map_err(|e| format!("Parquet: {e}"))
            }),
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
            CellsOut::Csv(lines) => {
                let row_field = &mut self.row_field;
                row_field.clear();
                push_csv_field(row_field, row.row());
                self.columns.start_row();
                for c in row.cells() {
                    let texts = (&mut self.columns, &mut self.timestamp, &mut self.typed);
                    push_cell_line(lines, row_field, &c, &self.types, texts);
                    self.cells += 1;
                }
                lines.len() >= CSV_PART_BYTES
            }
            CellsOut::Parquet { batch, .. } => {
                for c in row.cells() {
                    if !batch.push(&c) {
                        return Err(ExportError::Row {
                            row: to_string_binary(row.row()),
                            reason: "its cells hold over 2 GiB, more than a Parquet binary \
                                     column of one row group can (export it as CSV)"
                                .into(),
                        });
                    }
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

/// Appends the CSV line of `cell` (`row_field`: its row's field, from [`push_csv_field`]): the
/// bytes the `csv` crate's writer writes for the record (the header's too), made here without
/// its per-byte quoting test, which the text makes needless but for `,` and `"` (tested
/// against the crate).
fn push_cell_line(
    line: &mut String,
    row_field: &str,
    cell: &CellRef<'_>,
    types: &ColumnTypes,
    (columns, timestamp, typed): (&mut ColumnTexts, &mut TimestampText, &mut Vec<u8>),
) {
    line.push_str(row_field);
    line.push(',');
    columns.push(line, cell.family, cell.qualifier, |line, f, q| {
        push_csv_field(line, f);
        line.push(',');
        push_csv_field(line, q);
        line.push(',');
    });
    timestamp.push(line, cell.timestamp);
    line.push(',');
    line.push_str(cell.cell_type.name());
    line.push(',');
    typed.clear();
    match types.push_text(cell, typed) {
        Some(text) => push_csv_text(line, text),
        None => push_csv_field(line, cell.value),
    }
    line.push('\n');
}

/// Appends `text` (a typed value's, [`ColumnTypes::text`]) as a CSV field: quoted as the `csv`
/// crate quotes, should it hold a `,`, a `"` or a line break.
fn push_csv_text(line: &mut String, text: &str) {
    if needs_quotes(text.as_bytes()) {
        line.push('"');
        line.push_str(&text.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(text);
    }
}

/// Appends `bytes` as `Bytes.toStringBinary` text in a CSV field: quoted (and its quotes
/// doubled) when it holds a `,` or a `"`, as the `csv` crate does by default. The text has no
/// other byte that needs quotes: line breaks and every byte outside printable ASCII are
/// `\xNN`.
fn push_csv_field(line: &mut String, bytes: &[u8]) {
    let start = line.len();
    push_string_binary(line, bytes);
    if memchr::memchr2(b',', b'"', &line.as_bytes()[start..]).is_some() {
        let text = line.split_off(start);
        line.push('"');
        for ch in text.chars() {
            if ch == '"' {
                line.push('"');
            }
            line.push(ch);
        }
        line.push('"');
    }
}

/// The Parquet properties of cell exports. Column statistics (min and max) are kept where
/// they can rule out row groups: `row` (sorted), `timestamp` and `value`; not for `family`,
/// `qualifier` and `type`, which take all their values in nearly every row group (their
/// statistics were a tenth of the export's CPU).
fn cell_properties() -> WriterProperties {
    ["family", "qualifier", "type"]
        .into_iter()
        .fold(parquet_properties(PARQUET_ROW_GROUP_CELLS), |p, column| {
            p.set_column_statistics_enabled(ColumnPath::from(column), EnabledStatistics::None)
        })
        .build()
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
    row: ByteColumn,
    family: ByteColumn,
    qualifier: ByteColumn,
    timestamp: Vec<i64>,
    cell_type: ByteColumn,
    value: ByteColumn,
    /// Bytes of the byte columns (row, family, qualifier, type name, value) gathered.
    bytes: usize,
}

impl CellBatch {
    fn len(&self) -> usize {
        self.timestamp.len()
    }

    /// Adds a cell; false (and nothing added) when the batch's bytes would pass what an Arrow
    /// binary column's 32-bit offsets reach (a row of over 2 GiB: a batch ends at the first row
    /// end after [`PARQUET_ROW_GROUP_CELL_BYTES`]).
    fn push(&mut self, c: &CellRef<'_>) -> bool {
        let type_name = c.cell_type.name().as_bytes();
        let bytes =
            c.row.len() + c.family.len() + c.qualifier.len() + type_name.len() + c.value.len();
        if !within_arrow_offsets(self.bytes, bytes) {
            return false;
        }
        self.bytes += bytes;
        self.row.push(c.row);
        self.family.push(c.family);
        self.qualifier.push(c.qualifier);
        self.timestamp.push(c.timestamp);
        self.cell_type.push(type_name);
        self.value.push(c.value);
        true
    }

    /// The cells gathered, one array per column of [`cell_schema`]; the columns are left
    /// empty, with the capacities of these, so a row group's columns are not grown (and
    /// copied) from empty each time.
    fn take(&mut self) -> Result<Vec<ArrayRef>, String> {
        self.bytes = 0;
        let n = self.len();
        let timestamps = std::mem::replace(&mut self.timestamp, Vec::with_capacity(n));
        let (type_offsets, type_names) = self.cell_type.take();
        Ok(vec![
            self.row.binary()?,
            self.family.binary()?,
            self.qualifier.binary()?,
            Arc::new(Int64Array::from(timestamps)),
            Arc::new(
                StringArray::try_new(type_offsets, type_names, None)
                    .map_err(|e| format!("Arrow: {e}"))?,
            ),
            self.value.binary()?,
        ])
    }
}

/// A binary column being gathered as an Arrow array holds it: the values end to end and the
/// offset where each ends. Each value is appended by [`extend_short`]; an Arrow builder's
/// `append_value` is a `memcpy` call and a validity step per value (with the builders, a tenth
/// of a Parquet cell export's CPU).
struct ByteColumn {
    /// 0, then the end of each value in `bytes`.
    offsets: Vec<i32>,
    bytes: Vec<u8>,
}

impl Default for ByteColumn {
    fn default() -> Self {
        ByteColumn {
            offsets: vec![0],
            bytes: Vec::new(),
        }
    }
}

impl ByteColumn {
    /// Appends a value. The caller keeps the column under 2 GiB ([`CellBatch::push`]), so the
    /// end fits an `i32`.
    #[inline]
    fn push(&mut self, value: &[u8]) {
        extend_short(&mut self.bytes, value);
        self.offsets.push(self.bytes.len() as i32);
    }

    /// The values gathered as Arrow's offsets and values buffers (no copy); the column is left
    /// empty, with these capacities.
    fn take(&mut self) -> (OffsetBuffer<i32>, Buffer) {
        let mut offsets = Vec::with_capacity(self.offsets.len());
        offsets.push(0);
        let offsets = std::mem::replace(&mut self.offsets, offsets);
        let next = Vec::with_capacity(self.bytes.len());
        let bytes = std::mem::replace(&mut self.bytes, next);
        (
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            Buffer::from_vec(bytes),
        )
    }

    /// The values gathered as a binary array (see [`take`](Self::take)).
    fn binary(&mut self) -> Result<ArrayRef, String> {
        let (offsets, bytes) = self.take();
        BinaryArray::try_new(offsets, bytes, None)
            .map(|a| Arc::new(a) as ArrayRef)
            .map_err(|e| format!("Arrow: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hfkit_format::cell::CellType;
    use proptest::prelude::*;

    /// Bytes that exercise CSV quoting and `toStringBinary`'s escapes.
    fn field() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                Just(b','),
                Just(b'"'),
                Just(b'\\'),
                Just(b'\n'),
                Just(b'\r'),
                Just(b' '),
                0x20u8..0x7f,
                any::<u8>(),
            ],
            0..24,
        )
    }

    /// Any bytes, as long as a short field.
    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(any::<u8>(), 0..24)
    }

    /// A cell that would take a batch past 2 GiB (what 32-bit Arrow offsets reach) is refused
    /// and leaves the batch as it was; one that fits is taken.
    #[test]
    fn a_batch_refuses_cells_past_arrow_offsets() {
        let cell = CellRef {
            row: b"r",
            family: b"f",
            qualifier: b"q",
            timestamp: 1,
            cell_type: CellType::Put,
            value: b"0123456",
            tags: &[],
            seq_id: 0,
        };
        // 13 bytes: row, family, qualifier, the type's name ("Put") and value.
        let mut batch = CellBatch {
            bytes: i32::MAX as usize - 13,
            ..CellBatch::default()
        };
        assert!(batch.push(&cell));
        assert_eq!((batch.len(), batch.bytes), (1, i32::MAX as usize));
        assert!(!batch.push(&cell));
        assert_eq!((batch.len(), batch.bytes), (1, i32::MAX as usize));
    }

    proptest! {
        /// A batch's arrays hold the cells pushed, field for field, and so do the next batch's
        /// (the columns start again from empty after `take`).
        #[test]
        fn batch_arrays_hold_the_cells(
            batches in proptest::collection::vec(
                proptest::collection::vec((bytes(), bytes(), bytes(), any::<i64>(), any::<bool>()), 0..40),
                1..4,
            ),
        ) {
            use arrow_array::Array;
            let mut batch = CellBatch::default();
            for cells in &batches {
                for (row, qualifier, value, timestamp, delete) in cells {
                    let taken = batch.push(&CellRef {
                        row,
                        family: b"f",
                        qualifier,
                        timestamp: *timestamp,
                        cell_type: if *delete { CellType::DeleteColumn } else { CellType::Put },
                        value,
                        tags: &[],
                        seq_id: 0,
                    });
                    prop_assert!(taken);
                }
                let columns = batch.take().unwrap();
                prop_assert_eq!(batch.len(), 0);
                let binary = |i: usize| {
                    let a = columns[i].as_any().downcast_ref::<BinaryArray>().unwrap();
                    (0..a.len()).map(|j| a.value(j).to_vec()).collect::<Vec<_>>()
                };
                let rows: Vec<Vec<u8>> = cells.iter().map(|c| c.0.clone()).collect();
                let qualifiers: Vec<Vec<u8>> = cells.iter().map(|c| c.1.clone()).collect();
                let values: Vec<Vec<u8>> = cells.iter().map(|c| c.2.clone()).collect();
                prop_assert_eq!(binary(0), rows);
                prop_assert_eq!(binary(1), vec![b"f".to_vec(); cells.len()]);
                prop_assert_eq!(binary(2), qualifiers);
                prop_assert_eq!(binary(5), values);
                let timestamps = columns[3].as_any().downcast_ref::<Int64Array>().unwrap();
                prop_assert_eq!(
                    timestamps.values().to_vec(),
                    cells.iter().map(|c| c.3).collect::<Vec<_>>()
                );
                let types = columns[4].as_any().downcast_ref::<StringArray>().unwrap();
                prop_assert_eq!(
                    types.iter().map(|t| t.unwrap_or("").to_string()).collect::<Vec<_>>(),
                    cells
                        .iter()
                        .map(|c| if c.4 { "DeleteColumn" } else { "Put" }.to_string())
                        .collect::<Vec<_>>()
                );
                prop_assert!(columns.iter().all(|c| c.null_count() == 0 && c.len() == cells.len()));
            }
        }

        /// A cell line is what the `csv` crate's writer writes for the same fields.
        #[test]
        fn cell_lines_are_the_csv_crates(
            row in field(), family in field(), qualifier in field(), value in field(),
            timestamp in any::<i64>(), delete in any::<bool>(),
        ) {
            let cell = CellRef {
                row: &row,
                family: &family,
                qualifier: &qualifier,
                timestamp,
                cell_type: if delete { CellType::DeleteColumn } else { CellType::Put },
                value: &value,
                tags: &[],
                seq_id: 0,
            };
            let mut row_field = String::new();
            push_csv_field(&mut row_field, &row);
            // Twice, as two rows holding the same column: the second line from the texts the
            // first made.
            let mut ours = String::new();
            let (mut columns, mut stamp) = (ColumnTexts::default(), TimestampText::default());
            let mut typed = Vec::new();
            for _ in 0..2 {
                columns.start_row();
                let texts = (&mut columns, &mut stamp, &mut typed);
                push_cell_line(&mut ours, &row_field, &cell, &ColumnTypes::default(), texts);
            }
            let text = |b: &[u8]| hfkit_table::to_string_binary(b);
            let mut w = csv::Writer::from_writer(Vec::new());
            w.write_record([
                text(&row),
                text(&family),
                text(&qualifier),
                timestamp.to_string(),
                cell.cell_type.name().to_string(),
                text(&value),
            ])
            .unwrap();
            let theirs = w.into_inner().unwrap().repeat(2);
            prop_assert_eq!(ours.as_bytes(), &theirs[..]);
        }
    }
}
