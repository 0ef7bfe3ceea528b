//! Writing exported records (`formats/table.md` §"Row exports"): [`RecordParts`], the
//! table's [`PartEncoder`] for row exports, decodes each row of its regions and encodes the
//! records as CSV lines or Parquet row groups (at most [`PARQUET_ROW_GROUP_ROWS`] rows or about
//! [`PARQUET_ROW_GROUP_BYTES`] of fields, and never two regions' rows: a region's last rows end
//! a row group); [`RecordSink`] writes the parts into the file in region order. So the file is
//! the same whichever thread encoded which region, and however many there were.
//!
//! Parquet row groups are encoded where the rows are, by the column writers of the file's own
//! `ArrowRowGroupWriterFactory`, and appended whole by the sink (the parquet crate's way of
//! encoding on several threads).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowRowGroupWriterFactory};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression as ParquetCompression;
use parquet::file::properties::{WriterProperties, WriterPropertiesBuilder};
use parquet::file::writer::SerializedFileWriter;

use hfkit_read::RowRef;
use hfkit_table::export::{PartEncoder, PartSink};
use hfkit_table::to_string_binary;

use super::csv_line;
use super::decode::{Record, RecordDecoder};
use super::error::ExportError;
use super::format::{
    ExportField, ExportFormat, FieldType, RowCounts, PARQUET_DICTIONARY_PAGE_BYTES,
    PARQUET_ROW_GROUP_BYTES, PARQUET_ROW_GROUP_ROWS,
};

/// CSV bytes gathered before they are handed to the file as a part.
pub(crate) const CSV_PART_BYTES: usize = 1 << 20;
/// The buffer a CSV part is gathered in: a part is cut at the first row end after
/// [`CSV_PART_BYTES`], and a buffer that had to double past it would hold twice the bytes while
/// the part waits for the file.
pub(crate) const CSV_PART_CAPACITY: usize = CSV_PART_BYTES + CSV_PART_BYTES / 8;

/// Parts of a region that may wait for the file while the regions before it are written: 64 MiB
/// of CSV, two Parquet row groups (each at most [`PARQUET_ROW_GROUP_BYTES`] of fields before
/// encoding). A worker whose region is further ahead waits.
pub(crate) fn parts_ahead(format: ExportFormat) -> usize {
    match format {
        ExportFormat::Csv => 64,
        ExportFormat::Parquet => 2,
    }
}

/// Parquet columns being gathered for one row group.
enum Builder {
    Utf8(StringBuilder),
    Int64(Int64Builder),
    Double(Float64Builder),
}

/// One part of a row export's file.
pub enum RecordPart {
    /// CSV lines.
    Csv(Vec<u8>),
    /// One Parquet row group: its column chunks, encoded.
    Parquet(Vec<ArrowColumnChunk>),
}

/// The file of a row export: its CSV header or Parquet footer, and the parts in order.
pub struct RecordSink {
    path: PathBuf,
    out: SinkOut,
}

enum SinkOut {
    Csv(BufWriter<File>),
    Parquet {
        writer: Box<SerializedFileWriter<File>>,
        factory: Arc<ArrowRowGroupWriterFactory>,
        schema: Arc<Schema>,
    },
}

fn write_error(path: &Path, detail: String) -> ExportError {
    ExportError::Write {
        path: path.to_path_buf(),
        detail,
    }
}

impl RecordSink {
    /// The file of `format` for `decoder`'s fields, in `file` (destined for `path`); CSV gets
    /// its header here.
    pub fn new(
        decoder: &RecordDecoder,
        format: ExportFormat,
        file: File,
        path: &Path,
    ) -> Result<RecordSink, ExportError> {
        let schema = Schema::new(
            decoder
                .fields()
                .iter()
                .map(|f| {
                    let t = match f.parquet_type {
                        FieldType::Utf8 => DataType::Utf8,
                        FieldType::Int64 => DataType::Int64,
                        FieldType::Double => DataType::Float64,
                    };
                    Field::new(&f.name, t, true)
                })
                .collect::<Vec<_>>(),
        );
        let props = parquet_properties(PARQUET_ROW_GROUP_ROWS)
            .set_dictionary_page_size_limit(PARQUET_DICTIONARY_PAGE_BYTES)
            .build();
        RecordSink::with_schema(schema, props, format, file, path)
    }

    /// The file of `format` whose CSV header is the names of `schema`'s fields and whose
    /// Parquet columns are `schema`'s, written with `props` (from [`parquet_properties`]; cell
    /// exports use it with their own schema and properties).
    pub(crate) fn with_schema(
        schema: Schema,
        props: WriterProperties,
        format: ExportFormat,
        file: File,
        path: &Path,
    ) -> Result<RecordSink, ExportError> {
        let werr = |detail: String| write_error(path, detail);
        let out = match format {
            ExportFormat::Csv => {
                let mut w = csv::Writer::from_writer(BufWriter::with_capacity(1 << 20, file));
                w.write_record(schema.fields().iter().map(|f| f.name().as_str()))
                    .map_err(|e| werr(format!("CSV: {e}")))?;
                let file = w
                    .into_inner()
                    .map_err(|e| werr(format!("CSV: {}", e.error())))?;
                SinkOut::Csv(file)
            }
            ExportFormat::Parquet => {
                let schema = Arc::new(schema);
                let (writer, factory) = ArrowWriter::try_new(file, schema.clone(), Some(props))
                    .and_then(ArrowWriter::into_serialized_writer)
                    .map_err(|e| werr(format!("Parquet: {e}")))?;
                SinkOut::Parquet {
                    writer: Box::new(writer),
                    factory: Arc::new(factory),
                    schema,
                }
            }
        };
        Ok(RecordSink {
            path: path.to_path_buf(),
            out,
        })
    }

    /// The destination, for messages.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// For a Parquet file: what encodes its row groups, and its schema.
    pub(crate) fn row_group_writers(
        &self,
    ) -> Option<(Arc<ArrowRowGroupWriterFactory>, Arc<Schema>)> {
        match &self.out {
            SinkOut::Csv(_) => None,
            SinkOut::Parquet {
                factory, schema, ..
            } => Some((factory.clone(), schema.clone())),
        }
    }
}

/// The Parquet properties of exports: Snappy, row groups of at most `row_group_rows` rows
/// (a caller may set more).
pub(crate) fn parquet_properties(row_group_rows: usize) -> WriterPropertiesBuilder {
    WriterProperties::builder()
        .set_compression(ParquetCompression::SNAPPY)
        .set_max_row_group_row_count(Some(row_group_rows))
}

/// The lines gathered in `lines` as a part (none if there are none), `lines` left empty with
/// the capacity of a part.
fn take_csv_part(lines: &mut Vec<u8>) -> Option<RecordPart> {
    if lines.is_empty() {
        return None;
    }
    let next = Vec::with_capacity(CSV_PART_CAPACITY);
    Some(RecordPart::Csv(std::mem::replace(lines, next)))
}

/// `columns` (one array per field of `schema`) as one row group's column chunks, encoded by
/// column writers of `factory` (the file's), for the sink to append.
pub(crate) fn encode_row_group(
    factory: &ArrowRowGroupWriterFactory,
    schema: &Arc<Schema>,
    columns: Vec<ArrayRef>,
) -> Result<Vec<ArrowColumnChunk>, String> {
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())?;
    // The row group's index only matters to encrypted files, which exports do not write.
    let mut writers = factory
        .create_column_writers(0)
        .map_err(|e| e.to_string())?;
    let mut leaf_writers = writers.iter_mut();
    for (field, array) in schema.fields().iter().zip(batch.columns()) {
        for leaf in compute_leaves(field, array).map_err(|e| e.to_string())? {
            leaf_writers
                .next()
                .ok_or("internal: more Parquet leaves than column writers")?
                .write(&leaf)
                .map_err(|e| e.to_string())?;
        }
    }
    writers
        .into_iter()
        .map(|w| w.close().map_err(|e| e.to_string()))
        .collect()
}

impl PartSink for RecordSink {
    type Part = RecordPart;
    type Output = ();
    type Error = ExportError;

    fn write_part(&mut self, part: RecordPart) -> Result<(), ExportError> {
        let r = match (&mut self.out, part) {
            (SinkOut::Csv(w), RecordPart::Csv(bytes)) => {
                w.write_all(&bytes).map_err(|e| format!("CSV: {e}"))
            }
            (SinkOut::Parquet { writer, .. }, RecordPart::Parquet(chunks)) => writer
                .next_row_group()
                .and_then(|mut group| {
                    for chunk in chunks {
                        chunk.append_to_row_group(&mut group)?;
                    }
                    group.close().map(|_| ())
                })
                .map_err(|e| format!("Parquet: {e}")),
            _ => Err("internal: a part of another format".to_string()),
        };
        r.map_err(|detail| write_error(&self.path, detail))
    }

    fn finish(self) -> Result<(), ExportError> {
        let r = match self.out {
            SinkOut::Csv(mut w) => w.flush().map_err(|e| format!("CSV: {e}")),
            SinkOut::Parquet { writer, .. } => writer
                .into_inner()
                .map_err(|e| e.to_string())
                .and_then(|mut f| f.flush().map_err(|e| e.to_string()))
                .map_err(|e| format!("Parquet: {e}")),
        };
        r.map_err(|detail| write_error(&self.path, detail))
    }
}

/// Whether `more` bytes fit beside the `gathered` bytes of a row group's byte columns: Arrow's
/// binary and utf8 arrays reach 2 GiB with their 32-bit offsets (a builder panics past them).
/// A row group ends after [`PARQUET_ROW_GROUP_BYTES`] (or the cell exports' bound), so only a
/// row of nearly 2 GiB meets this.
pub(crate) fn within_arrow_offsets(gathered: usize, more: usize) -> bool {
    gathered.saturating_add(more) <= i32::MAX as usize
}

/// Parquet columns being gathered for one row group, and what encodes them.
struct ParquetRows {
    factory: Arc<ArrowRowGroupWriterFactory>,
    schema: Arc<Schema>,
    columns: Vec<Builder>,
    rows: usize,
    bytes: usize,
}

enum PartsOut {
    /// The part's CSV lines ([`csv_line::push_record`]).
    Csv(Vec<u8>),
    Parquet(Box<ParquetRows>),
}

/// A [`PartEncoder`]: each row decoded into a record and encoded as CSV or Parquet.
pub struct RecordParts<'d> {
    decoder: &'d RecordDecoder,
    /// The destination, for messages.
    path: PathBuf,
    record: Record,
    counts: RowCounts,
    out: PartsOut,
}

impl<'d> RecordParts<'d> {
    /// An encoder of the parts `sink` takes.
    pub fn new(decoder: &'d RecordDecoder, sink: &RecordSink) -> RecordParts<'d> {
        let out = match &sink.out {
            SinkOut::Csv(_) => PartsOut::Csv(Vec::with_capacity(CSV_PART_CAPACITY)),
            SinkOut::Parquet {
                factory, schema, ..
            } => PartsOut::Parquet(Box::new(ParquetRows {
                factory: factory.clone(),
                schema: schema.clone(),
                columns: new_builders(decoder.fields()),
                rows: 0,
                bytes: 0,
            })),
        };
        RecordParts {
            decoder,
            path: sink.path.clone(),
            record: Record::default(),
            counts: RowCounts::default(),
            out,
        }
    }

    /// What this encoder's rows counted.
    pub fn counts(&self) -> RowCounts {
        self.counts
    }

    fn werr(&self, detail: String) -> ExportError {
        write_error(&self.path, detail)
    }

    /// The records gathered as a part (none if there are none).
    fn take_part(&mut self) -> Result<Option<RecordPart>, ExportError> {
        let r = match &mut self.out {
            PartsOut::Csv(lines) => Ok(take_csv_part(lines)),
            PartsOut::Parquet(p) => p
                .encode_row_group()
                .map(|chunks| chunks.map(RecordPart::Parquet))
                .map_err(|e| format!("Parquet: {e}")),
        };
        r.map_err(|detail| self.werr(detail))
    }
}

impl ParquetRows {
    /// The gathered rows as one row group's encoded column chunks.
    fn encode_row_group(&mut self) -> Result<Option<Vec<ArrowColumnChunk>>, String> {
        if self.rows == 0 {
            return Ok(None);
        }
        let arrays: Vec<ArrayRef> = self
            .columns
            .iter_mut()
            .map(|b| -> ArrayRef {
                match b {
                    Builder::Utf8(b) => Arc::new(b.finish()),
                    Builder::Int64(b) => Arc::new(b.finish()),
                    Builder::Double(b) => Arc::new(b.finish()),
                }
            })
            .collect();
        self.rows = 0;
        self.bytes = 0;
        encode_row_group(&self.factory, &self.schema, arrays).map(Some)
    }
}

fn new_builders(fields: &[ExportField]) -> Vec<Builder> {
    fields
        .iter()
        .map(|f| match f.parquet_type {
            FieldType::Utf8 => Builder::Utf8(StringBuilder::new()),
            FieldType::Int64 => Builder::Int64(Int64Builder::new()),
            FieldType::Double => Builder::Double(Float64Builder::new()),
        })
        .collect()
}

impl PartEncoder for RecordParts<'_> {
    type Part = RecordPart;
    type Error = ExportError;

    fn write_row(&mut self, row: RowRef<'_>) -> Result<Option<RecordPart>, ExportError> {
        if !self
            .decoder
            .decode(row, &mut self.record, &mut self.counts)?
        {
            return Ok(None);
        }
        let full = match &mut self.out {
            PartsOut::Csv(lines) => {
                let fields = self.record.values().iter();
                csv_line::push_record(lines, fields.map(|v| v.as_deref().unwrap_or(b"")));
                lines.len() >= CSV_PART_BYTES
            }
            PartsOut::Parquet(p) => {
                let record_bytes: usize = self.record.values().iter().flatten().map(Vec::len).sum();
                if !within_arrow_offsets(p.bytes, record_bytes) {
                    return Err(ExportError::Row {
                        row: to_string_binary(row.row()),
                        reason: "its fields hold over 2 GiB, more than a Parquet utf8 column \
                                 of one row group can (export it as CSV)"
                            .into(),
                    });
                }
                p.bytes += record_bytes;
                for ((b, v), f) in p
                    .columns
                    .iter_mut()
                    .zip(self.record.values())
                    .zip(self.decoder.fields())
                {
                    let ferr = |reason: &str| ExportError::Field {
                        row: to_string_binary(row.row()),
                        field: f.name.clone(),
                        reason: reason.to_string(),
                    };
                    let Some(v) = v else {
                        match b {
                            Builder::Utf8(b) => b.append_null(),
                            Builder::Int64(b) => b.append_null(),
                            Builder::Double(b) => b.append_null(),
                        }
                        continue;
                    };
                    let text = std::str::from_utf8(v).map_err(|_| {
                        ferr("the value is not UTF-8, which a Parquet utf8 column cannot hold (export as CSV)")
                    })?;
                    match b {
                        Builder::Utf8(b) => b.append_value(text),
                        Builder::Int64(b) => b.append_value(
                            text.parse()
                                .map_err(|_| ferr("not a 64-bit integer (Parquet int64)"))?,
                        ),
                        Builder::Double(b) => b.append_value(
                            text.parse()
                                .map_err(|_| ferr("not a double (Parquet double)"))?,
                        ),
                    }
                }
                p.rows += 1;
                p.rows >= PARQUET_ROW_GROUP_ROWS || p.bytes >= PARQUET_ROW_GROUP_BYTES
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

#[cfg(test)]
mod tests {
    use super::*;
    use hfkit_format::cell::Cell;
    use hfkit_read::RowBuf;

    /// A row whose fields would take a Parquet row group's columns past 2 GiB (what Arrow's
    /// 32-bit offsets reach) is refused naming the row; one that fits is taken.
    #[test]
    fn a_row_group_refuses_records_past_arrow_offsets() {
        let text = "[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[rowkey]\nspec = 'k'\n\
                    [[column]]\nsource = \"k\"\ncell = \"d:k\"\ntimestamp = 1\n\
                    [[column]]\nsource = \"v\"\ncell = \"d:v\"\ntimestamp = 1\n";
        let schema = hfkit_table::TableSchema::from_toml_str(text, "t.toml", None).unwrap();
        let decoder = RecordDecoder::new(&schema.mapping, &["d".to_string()]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.parquet");
        let file = File::create(&path).unwrap();
        let sink = RecordSink::new(&decoder, ExportFormat::Parquet, file, &path).unwrap();
        let mut parts = RecordParts::new(&decoder, &sink);
        let gathered = |parts: &mut RecordParts<'_>| match &mut parts.out {
            PartsOut::Parquet(p) => (p.rows, p.bytes),
            PartsOut::Csv(_) => unreachable!("a Parquet sink"),
        };
        if let PartsOut::Parquet(p) = &mut parts.out {
            p.bytes = i32::MAX as usize - 10;
        }
        let mut row = RowBuf::new();
        let mut write = |parts: &mut RecordParts<'_>, key: &[u8], value: &[u8]| {
            row.start_row(key);
            row.push(&Cell::put(key, b"d", b"v", 1, value).as_ref());
            parts.write_row(row.as_row_ref())
        };
        // 3 bytes of key and 8 of value: one byte too many.
        let Err(e) = write(&mut parts, b"big", b"01234567") else {
            panic!("a row past 2 GiB of fields was taken");
        };
        assert!(
            matches!(&e, ExportError::Row { row, .. } if row == "big"),
            "{e}"
        );
        assert!(e.to_string().contains("2 GiB"), "{e}");
        assert_eq!(gathered(&mut parts), (0, i32::MAX as usize - 10));
        // 3 and 7: exactly at the limit, taken; the row group (past its byte bound) ends with it.
        let part = write(&mut parts, b"fit", b"0123456");
        assert!(matches!(part, Ok(Some(RecordPart::Parquet(_)))));
        assert_eq!(gathered(&mut parts), (0, 0));
    }
}
