//! Arrow record batches as an import's input, handed in by a program instead of read from files
//! (the Python package's `write_region`, one Spark task's rows): each batch's values rendered as
//! text exactly as a Parquet file's are ([`crate::source::parquet`]), so the same data gives the
//! same cells from a file or from batches; and the row keys of such batches, by the import's own
//! encoders, for partitioning rows by region before they are imported. Errors name a record as
//! a Parquet file's are named, the input's name standing for the file and the batch's number
//! (from 0) for the row group: "NAME: row group B, row R". Spec: `formats/import.md` §"Sources".

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::builder::BinaryBuilder;
use arrow_array::{BinaryArray, RecordBatch};

use crate::error::ImportError;
use crate::mapping::encode::{Compiled, RecordFields, Rejection};
use crate::source::input::BatchReader;
use crate::source::parquet::render;
use crate::source::{check_unique_columns, Batch, ColumnNames, SourceError};
use hfkit_format::cell::MAX_ROW_LEN;
use hfkit_table::{ImportMapping, TableSchema};

/// Hands out the input's next record batch; `None` at its end, `Err` when the program that
/// makes them failed (its message).
pub type NextBatch = Box<dyn FnMut() -> Option<Result<RecordBatch, String>> + Send>;

/// A stream of record batches to import ([`crate::import::ImportOptions::record_batches`]).
pub struct RecordBatchInput {
    /// What errors name as the input's file (a Spark partition, a caller's label).
    pub name: PathBuf,
    /// The columns of every batch, in order.
    pub columns: Vec<String>,
    pub next: NextBatch,
}

impl RecordBatchInput {
    /// The input's columns are checked (unique names); batches with other columns are refused
    /// when they arrive.
    pub fn new(
        name: PathBuf,
        columns: Vec<String>,
        next: NextBatch,
    ) -> Result<RecordBatchInput, SourceError> {
        check_unique_columns(&name, ColumnNames::ParquetSchema, &columns)?;
        Ok(RecordBatchInput {
            name,
            columns,
            next,
        })
    }

    /// The input as the importer's batch reader: batch `b`'s records are at "row group b, row
    /// r"; batches without rows are passed over.
    pub(crate) fn reader(self) -> BatchReader {
        let RecordBatchInput {
            name,
            columns,
            mut next,
        } = self;
        let path = Arc::new(name);
        let mut number = 0usize;
        Box::new(move |batch: &mut Batch| loop {
            let Some(rb) = next() else {
                batch.records.clear();
                return Ok(false);
            };
            let rb = rb.map_err(|detail| SourceError::Parquet {
                path: path.to_path_buf(),
                detail,
            })?;
            let b = number;
            number += 1;
            render_batch(&rb, &columns, &path, b, batch)?;
            if !batch.records.is_empty() {
                return Ok(true);
            }
        })
    }
}

/// Renders record batch number `b` of input `path` into `batch`, its records positioned; a
/// batch whose columns are not `columns` is refused.
fn render_batch(
    rb: &RecordBatch,
    columns: &[String],
    path: &Arc<PathBuf>,
    b: usize,
    batch: &mut Batch,
) -> Result<(), SourceError> {
    let schema = rb.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    if names != columns {
        return Err(SourceError::Parquet {
            path: path.to_path_buf(),
            detail: format!(
                "record batch {b} has columns [{}], not the input's [{}]",
                names.join(", "),
                columns.join(", ")
            ),
        });
    }
    render(rb, batch).map_err(|source| SourceError::RowGroup {
        path: path.to_path_buf(),
        row_group: b,
        source,
    })?;
    batch.file = Some(path.clone());
    batch.lines.clear();
    batch.lines.extend(0..rb.num_rows() as u64);
    batch.row_groups.clear();
    batch.row_groups.resize(rb.num_rows(), b);
    Ok(())
}

/// The main table's row key of every record of `rb` (batch number `b` of input `name`), by the
/// import's encoder: the first record whose key cannot be encoded (or is longer than HBase
/// takes) is an error naming it, field and reason, as the import's is.
pub fn row_keys(
    schema: &TableSchema,
    mapping: &ImportMapping,
    rb: &RecordBatch,
    name: PathBuf,
    b: usize,
) -> Result<BinaryArray, ImportError> {
    let compiled = Compiled::new(schema, mapping)?;
    let schema_ref = rb.schema();
    let columns: Vec<String> = schema_ref
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let path = Arc::new(name);
    let mut encoder = compiled
        .spec
        .compile(&names)
        .map_err(|source| ImportError::Rowkey {
            context: format!("{}: [rowkey] spec", path.display()),
            source,
        })?;
    let mut batch = Batch::default();
    render_batch(rb, &columns, &path, b, &mut batch)?;
    let mut keys = BinaryBuilder::with_capacity(batch.records.len(), batch.records.len() * 16);
    let mut key = Vec::new();
    for (i, rec) in batch.records.iter().enumerate() {
        key.clear();
        let reason = match encoder.encode(&RecordFields(rec), &mut key) {
            Err(e) => Some(Rejection::RowKey(e)),
            Ok(()) if key.len() > MAX_ROW_LEN => Some(Rejection::RowKeyTooLong {
                len: key.len(),
                max: MAX_ROW_LEN,
            }),
            Ok(()) => None,
        };
        if let Some(reason) = reason {
            return Err(ImportError::Record {
                position: batch.record_position(i),
                reason: Box::new(reason),
            });
        }
        keys.append_value(&key);
    }
    Ok(keys.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, StringArray};

    fn batch(names: &[&str], rows: &[&str]) -> RecordBatch {
        let cols: Vec<(&str, ArrayRef)> = names
            .iter()
            .map(|n| (*n, Arc::new(StringArray::from(rows.to_vec())) as ArrayRef))
            .collect();
        RecordBatch::try_from_iter(cols).unwrap()
    }

    fn input(batches: Vec<RecordBatch>) -> BatchReader {
        let mut it = batches.into_iter();
        let columns = vec!["a".to_string(), "b".to_string()];
        let next: NextBatch = Box::new(move || it.next().map(Ok));
        RecordBatchInput::new(PathBuf::from("part 3"), columns, next)
            .unwrap()
            .reader()
    }

    #[test]
    fn batches_are_positioned_by_number_and_empty_ones_passed_over() {
        let mut read = input(vec![
            batch(&["a", "b"], &["x", "y"]),
            batch(&["a", "b"], &[]),
            batch(&["a", "b"], &["z"]),
        ]);
        let mut b = Batch::default();
        assert!(read(&mut b).unwrap());
        assert_eq!(&b.records[1][0], b"y");
        assert_eq!(b.position(1), "part 3: row group 0, row 1");
        assert!(read(&mut b).unwrap());
        assert_eq!(b.records.len(), 1);
        assert_eq!(b.position(0), "part 3: row group 2, row 0");
        assert!(!read(&mut b).unwrap());
    }

    #[test]
    fn a_batch_with_other_columns_is_refused_naming_both() {
        let mut read = input(vec![batch(&["a", "c"], &["x"])]);
        let err = read(&mut Batch::default()).err().unwrap().to_string();
        assert_eq!(
            err,
            "part 3: record batch 0 has columns [a, c], not the input's [a, b]"
        );
        let next: NextBatch = Box::new(|| None);
        let dup = vec!["a".to_string(), "a".to_string()];
        assert!(RecordBatchInput::new(PathBuf::from("p"), dup, next).is_err());
    }
}
