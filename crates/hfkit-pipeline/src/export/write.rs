//! Writing exported records (`formats/table.md` §"Row exports"): [`RecordWriter`], the
//! table's [`RowWriter`] for row exports, decodes each row and writes the record as a CSV line
//! or into a Parquet row group (at most [`PARQUET_ROW_GROUP_ROWS`] rows or about
//! [`PARQUET_ROW_GROUP_BYTES`] of fields).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression as ParquetCompression;
use parquet::file::properties::WriterProperties;

use crate::cell_export::ExportFormat;
use hfkit_read::RowRef;
use hfkit_table::export::RowWriter;
use hfkit_table::to_string_binary;

use super::{
    ExportError, ExportField, FieldType, Record, RecordDecoder, RowCounts, PARQUET_ROW_GROUP_BYTES,
    PARQUET_ROW_GROUP_ROWS,
};

/// Parquet columns being gathered for one row group.
enum Builder {
    Utf8(StringBuilder),
    Int64(Int64Builder),
    Double(Float64Builder),
}

struct ParquetOut {
    writer: ArrowWriter<File>,
    schema: Arc<Schema>,
    columns: Vec<Builder>,
    rows: usize,
    bytes: usize,
}

enum Out {
    Csv(Box<csv::Writer<BufWriter<File>>>),
    Parquet(Box<ParquetOut>),
}

/// A [`RowWriter`]: each row decoded into a record and written as CSV or Parquet.
pub struct RecordWriter<'d> {
    decoder: &'d RecordDecoder,
    /// The destination, for messages.
    path: PathBuf,
    record: Record,
    counts: RowCounts,
    out: Out,
}

impl<'d> RecordWriter<'d> {
    /// A writer of `format` into `file` (destined for `path`); CSV gets its header here.
    pub fn new(
        decoder: &'d RecordDecoder,
        format: ExportFormat,
        file: File,
        path: &Path,
    ) -> Result<RecordWriter<'d>, ExportError> {
        let werr = |detail: String| ExportError::Write {
            path: path.to_path_buf(),
            detail,
        };
        let out = match format {
            ExportFormat::Csv => {
                let mut w = csv::Writer::from_writer(BufWriter::with_capacity(1 << 20, file));
                w.write_record(decoder.fields().iter().map(|f| f.name.as_str()))
                    .map_err(|e| werr(format!("CSV: {e}")))?;
                Out::Csv(Box::new(w))
            }
            ExportFormat::Parquet => {
                let schema = Arc::new(Schema::new(
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
                ));
                let props = WriterProperties::builder()
                    .set_compression(ParquetCompression::SNAPPY)
                    .set_max_row_group_row_count(Some(PARQUET_ROW_GROUP_ROWS))
                    .build();
                let writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
                    .map_err(|e| werr(format!("Parquet: {e}")))?;
                let mut p = ParquetOut {
                    writer,
                    schema,
                    columns: Vec::new(),
                    rows: 0,
                    bytes: 0,
                };
                p.columns = new_builders(decoder.fields());
                Out::Parquet(Box::new(p))
            }
        };
        Ok(RecordWriter {
            decoder,
            path: path.to_path_buf(),
            record: Record::default(),
            counts: RowCounts::default(),
            out,
        })
    }

    fn werr(&self, detail: String) -> ExportError {
        ExportError::Write {
            path: self.path.clone(),
            detail,
        }
    }

    /// Writes the gathered Parquet rows as one row group.
    fn flush_row_group(&mut self) -> Result<(), ExportError> {
        let Out::Parquet(p) = &mut self.out else {
            return Ok(());
        };
        if p.rows == 0 {
            return Ok(());
        }
        let arrays: Vec<ArrayRef> = p
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
        let r = RecordBatch::try_new(p.schema.clone(), arrays)
            .map_err(|e| e.to_string())
            .and_then(|batch| p.writer.write(&batch).map_err(|e| e.to_string()))
            .and_then(|()| p.writer.flush().map_err(|e| e.to_string()));
        p.rows = 0;
        p.bytes = 0;
        r.map_err(|e| self.werr(format!("Parquet: {e}")))
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

impl RowWriter for RecordWriter<'_> {
    type Output = RowCounts;
    type Error = ExportError;

    fn write_row(&mut self, row: RowRef<'_>) -> Result<(), ExportError> {
        if !self
            .decoder
            .decode(row, &mut self.record, &mut self.counts)?
        {
            return Ok(());
        }
        let full = match &mut self.out {
            Out::Csv(w) => {
                let r = w.write_record(
                    self.record
                        .values()
                        .iter()
                        .map(|v| v.as_deref().unwrap_or(b"")),
                );
                if let Err(e) = r {
                    return Err(self.werr(format!("CSV: {e}")));
                }
                false
            }
            Out::Parquet(p) => {
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
                    p.bytes += v.len();
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
            self.flush_row_group()?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<RowCounts, ExportError> {
        self.flush_row_group()?;
        let r = match self.out {
            Out::Csv(mut w) => w.flush().map_err(|e| format!("CSV: {e}")),
            Out::Parquet(p) => p
                .writer
                .into_inner()
                .map_err(|e| e.to_string())
                .and_then(|mut f| f.flush().map_err(|e| e.to_string()))
                .map_err(|e| format!("Parquet: {e}")),
        };
        r.map_err(|detail| ExportError::Write {
            path: self.path.clone(),
            detail,
        })?;
        Ok(self.counts)
    }
}
