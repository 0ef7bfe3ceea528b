//! Parquet input: only the mapped columns are read, one reader per row group so row groups can
//! be read in parallel, values as the text a CSV export of the same data holds
//! ([`crate::source::columns`]: the text of each Arrow type). Spec: `formats/import.md` §"Sources".

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;

use crate::source::columns::ColumnBatch;
use crate::source::remote::ParquetFile;
use crate::source::{check_unique_columns, Batch, ColumnNames, SourceError};

pub use crate::source::columns::RowGroupError;

/// A Parquet file opened and its footer read (local, or on object storage).
fn open_file(path: &Path) -> Result<(ParquetFile, ArrowReaderMetadata), SourceError> {
    let f = ParquetFile::open(path)?;
    let m = ArrowReaderMetadata::load(&f, Default::default()).map_err(|e| perr(path, e))?;
    Ok((f, m))
}

/// The reader builder of a Parquet file: its footer read.
fn builder(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<ParquetFile>, SourceError> {
    let (f, m) = open_file(path)?;
    Ok(ParquetRecordBatchReaderBuilder::new_with_metadata(f, m))
}

/// The column names of a file's schema, which must be unique.
fn unique_names(path: &Path, schema: &arrow_schema::Schema) -> Result<Vec<String>, SourceError> {
    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    check_unique_columns(path, ColumnNames::ParquetSchema, &names)?;
    Ok(names)
}

/// Number of row groups in a Parquet file.
pub fn row_group_count(path: &Path) -> Result<usize, SourceError> {
    Ok(builder(path)?.metadata().num_row_groups())
}

/// The compressed size of each row group of a Parquet file (from its footer).
pub fn row_group_sizes(path: &Path) -> Result<Vec<u64>, SourceError> {
    let b = builder(path)?;
    Ok(b.metadata()
        .row_groups()
        .iter()
        .map(|g| u64::try_from(g.compressed_size()).unwrap_or(0))
        .collect())
}

/// Number of rows in a Parquet file (from its footer).
pub fn row_count(path: &Path) -> Result<u64, SourceError> {
    let b = builder(path)?;
    Ok(u64::try_from(b.metadata().file_metadata().num_rows()).unwrap_or(0))
}

/// Column names of a Parquet file (those of a file without row groups, which has no
/// [`ParquetSource`] to ask).
pub fn column_names(path: &Path) -> Result<Vec<String>, SourceError> {
    unique_names(path, builder(path)?.schema())
}

fn perr(path: &Path, e: impl std::fmt::Display) -> SourceError {
    SourceError::Parquet {
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// Reads one row group of a Parquet file in batches.
pub struct ParquetSource {
    path: Arc<PathBuf>,
    reader: ParquetRecordBatchReader,
    columns: Vec<String>,
    row_group: usize,
    /// Rows of this row group read so far.
    row: u64,
    /// Batches column by column ([`Batch::columns`]) instead of records.
    columnar: bool,
}

impl ParquetSource {
    /// Opens row group `row_group` of `path`, reading only `columns` (all when `None`).
    /// Unknown column names are an error naming them.
    pub fn open(
        path: &Path,
        columns: Option<&[String]>,
        row_group: usize,
        batch_size: usize,
    ) -> Result<ParquetSource, SourceError> {
        let (mut f, m) = open_file(path)?;
        let names = unique_names(path, m.schema())?;
        let (mask, columns) = match columns {
            None => (ProjectionMask::all(), names.clone()),
            Some(wanted) => {
                let mut idx = Vec::new();
                for w in wanted {
                    match names.iter().position(|n| n == w) {
                        Some(i) => idx.push(i),
                        None => {
                            return Err(perr(
                                path,
                                format!("no column '{w}' (columns: {})", names.join(", ")),
                            ))
                        }
                    }
                }
                // The reader returns projected columns in file order.
                let mut sorted = idx.clone();
                sorted.sort_unstable();
                sorted.dedup();
                let cols = sorted.iter().map(|&i| names[i].clone()).collect();
                (ProjectionMask::roots(m.parquet_schema(), sorted), cols)
            }
        };
        if row_group >= m.metadata().num_row_groups() {
            return Err(perr(path, format!("no row group {row_group}")));
        }
        // On object storage, the row group's projected column chunks in one request each.
        f.prefetch(path, m.metadata(), row_group, &mask)?;
        let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(f, m)
            .with_projection(mask)
            .with_row_groups(vec![row_group])
            .with_batch_size(batch_size.max(1))
            .build()
            .map_err(|e| perr(path, e))?;
        Ok(ParquetSource {
            path: Arc::new(path.to_path_buf()),
            reader,
            columns,
            row_group,
            row: 0,
            columnar: false,
        })
    }

    /// Makes [`ParquetSource::next_batch`] fill [`Batch::columns`] (records left empty): for
    /// the import, which reads each record's fields in place.
    pub fn columnar(mut self) -> ParquetSource {
        self.columnar = true;
        self
    }

    /// Column names, in field order of the records produced.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Reads the next Arrow batch into `batch` as text records. False at the end.
    pub fn next_batch(&mut self, batch: &mut Batch) -> Result<bool, SourceError> {
        batch.file = Some(self.path.clone());
        batch.lines.clear();
        batch.row_groups.clear();
        let Some(rb) = self.reader.next() else {
            batch.records.clear();
            batch.columns = None;
            return Ok(false);
        };
        let at = |source: RowGroupError| SourceError::RowGroup {
            path: self.path.to_path_buf(),
            row_group: self.row_group,
            source,
        };
        let rb = rb.map_err(|e| at(e.into()))?;
        match self.columnar {
            true => {
                batch.records.clear();
                // Into the batch's columns from its last use, reusing their buffers.
                let columns = batch.columns.get_or_insert_with(ColumnBatch::default);
                columns.render_into(&rb).map_err(at)?;
            }
            false => {
                batch.columns = None;
                render(&rb, batch).map_err(at)?;
            }
        }
        for _ in 0..rb.num_rows() {
            batch.lines.push(self.row);
            batch.row_groups.push(self.row_group);
            self.row += 1;
        }
        Ok(rb.num_rows() > 0)
    }
}

/// Renders a record batch into text records ([`crate::source::columns`]).
pub(crate) fn render(rb: &RecordBatch, batch: &mut Batch) -> Result<(), RowGroupError> {
    ColumnBatch::render(rb)?.to_records(&mut batch.records);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::DataType;
    use std::fs::File;

    use arrow_array::{Date32Array, Decimal128Array, Int64Array, StringArray};
    use arrow_schema::{Field, Schema};

    #[test]
    fn reused_records_render_every_row_in_place() {
        let n = 3 * 256 + 17;
        let ids: Vec<Option<i64>> = (0..n as i64)
            .map(|i| (i % 7 != 3).then_some(i * 11))
            .collect();
        let days: Vec<i32> = (0..n as i32).collect();
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("day", DataType::Date32, false),
        ]));
        let rb = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(ids.clone())),
                Arc::new(Date32Array::from(days)),
            ],
        )
        .unwrap();
        // A reused batch holding longer records first: each is cleared.
        let mut b = Batch {
            records: vec![csv::ByteRecord::from(vec!["x", "y", "z"]); n + 5],
            ..Batch::default()
        };
        render(&rb, &mut b).unwrap();
        assert_eq!(b.records.len(), n);
        for (i, rec) in b.records.iter().enumerate() {
            let id = ids[i].map(|v| v.to_string()).unwrap_or_default();
            let mut day = String::new();
            crate::source::columns::write_date(&mut day, i as i64);
            assert_eq!(rec.len(), 2, "row {i}");
            assert_eq!(&rec[0], id.as_bytes(), "row {i}");
            assert_eq!(&rec[1], day.as_bytes(), "row {i}");
        }
    }

    #[test]
    fn reads_projected_columns_of_a_row_group() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("price", DataType::Decimal128(15, 2), false),
            Field::new("day", DataType::Date32, false),
        ]));
        let rb = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![1, 2, 3])),
                Arc::new(StringArray::from(vec![Some("a"), None, Some("c")])),
                Arc::new(
                    Decimal128Array::from(vec![100, 250, 1])
                        .with_precision_and_scale(15, 2)
                        .unwrap(),
                ),
                Arc::new(Date32Array::from(vec![0, 1, 2])),
            ],
        )
        .unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(2))
            .build();
        let mut w =
            parquet::arrow::ArrowWriter::try_new(File::create(&path).unwrap(), schema, Some(props))
                .unwrap();
        w.write(&rb).unwrap();
        w.close().unwrap();
        assert_eq!(row_group_count(&path).unwrap(), 2);
        let cols = vec!["price".to_string(), "id".to_string(), "name".to_string()];
        let mut src = ParquetSource::open(&path, Some(&cols), 1, 100).unwrap();
        assert_eq!(src.columns(), ["id", "name", "price"]);
        let mut b = Batch::default();
        assert!(src.next_batch(&mut b).unwrap());
        assert_eq!(b.records.len(), 1);
        assert_eq!(&b.records[0][0], b"3");
        assert_eq!(&b.records[0][1], b"c");
        assert_eq!(&b.records[0][2], b"0.01");
        assert!(b.position(0).ends_with("row group 1, row 0"));
        let mut src = ParquetSource::open(&path, None, 0, 100).unwrap();
        assert!(src.next_batch(&mut b).unwrap());
        assert_eq!(&b.records[1][1], b"", "null renders empty");
        assert_eq!(&b.records[1][3], b"1970-01-02");
        let err = ParquetSource::open(&path, Some(&["nope".to_string()]), 0, 10)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("no column 'nope'"), "{err}");
    }

    #[test]
    fn duplicate_column_names_are_refused_with_both_positions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.parquet");
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("id", DataType::Int64, false),
        ]));
        let rb = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![1])),
                Arc::new(StringArray::from(vec![Some("a")])),
                Arc::new(Int64Array::from(vec![2])),
            ],
        )
        .unwrap();
        let mut w =
            parquet::arrow::ArrowWriter::try_new(File::create(&path).unwrap(), schema, None)
                .unwrap();
        w.write(&rb).unwrap();
        w.close().unwrap();
        for wanted in [None, Some(&["name".to_string()][..])] {
            let err = ParquetSource::open(&path, wanted, 0, 10)
                .err()
                .unwrap()
                .to_string();
            assert!(
                err.ends_with("d.parquet: schema: column 'id' appears twice, as columns 1 and 3"),
                "{err}"
            );
        }
    }
}
