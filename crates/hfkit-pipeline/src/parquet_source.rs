//! Parquet input: only the mapped columns are read, one reader per row group so row groups can
//! be read in parallel, values rendered as the text a CSV export of the same data holds.
//! Spec: `formats/import.md` §"Sources".
//!
//! | Arrow type | text |
//! |---|---|
//! | Utf8, LargeUtf8, Utf8View, Binary, LargeBinary | the bytes |
//! | Int*, UInt* | decimal |
//! | Float32, Float64 | shortest round-trip decimal |
//! | Decimal128(p, s) | decimal with exactly `s` fraction digits (`17954.55`) |
//! | Date32, Date64 | `YYYY-MM-DD` |
//! | Timestamp(unit) | epoch milliseconds |
//! | Boolean | `true` / `false` |
//! | null | empty field (writes no cell) |

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{ArrowError, DataType, TimeUnit};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;

use super::remote_input::ParquetFile;
use super::source::{check_unique_columns, Batch, ColumnNames, SourceError};
use super::timestamp::civil_from_days;

/// Why a row group's records cannot be read (the file and row group are the
/// [`SourceError::RowGroup`]'s).
#[derive(Debug, thiserror::Error)]
pub enum RowGroupError {
    /// The Parquet reader's own error (a damaged page, a failed decompression...).
    #[error(transparent)]
    Read(#[from] ArrowError),
    /// A column of a type that has no text form here (see the module doc).
    #[error("column type {0} is not supported")]
    UnsupportedType(DataType),
}

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
        })
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
            return Ok(false);
        };
        let at = |source: RowGroupError| SourceError::RowGroup {
            path: self.path.to_path_buf(),
            row_group: self.row_group,
            source,
        };
        let rb = rb.map_err(|e| at(e.into()))?;
        render(&rb, batch).map_err(at)?;
        for _ in 0..rb.num_rows() {
            batch.lines.push(self.row);
            batch.row_groups.push(self.row_group);
            self.row += 1;
        }
        Ok(rb.num_rows() > 0)
    }
}

/// Rows rendered together: every column of these rows before the next ones, so the records
/// being filled stay in the cache. (Column by column over a whole batch of 16K rows, each
/// field pushed missed the cache: a tenth of a Parquet import's CPU on lineitem.)
const RENDER_ROWS: usize = 256;

/// Renders a record batch into text records, [`RENDER_ROWS`] rows at a time and those a column
/// at a time (the column's type decided once per column and run of rows, integers through
/// `itoa`: per-value dispatch and `fmt` were most of the source's time).
pub(crate) fn render(rb: &RecordBatch, batch: &mut Batch) -> Result<(), RowGroupError> {
    let n = rb.num_rows();
    batch.records.resize_with(n, csv::ByteRecord::new);
    batch.records.truncate(n);
    for (run, records) in batch.records.chunks_mut(RENDER_ROWS).enumerate() {
        for r in records.iter_mut() {
            r.clear();
        }
        for col in rb.columns() {
            render_column(col.as_ref(), run * RENDER_ROWS, records)?;
        }
    }
    Ok(())
}

/// Pushes `f(from + i)` as field of record `i`, or an empty field where the column is null.
fn each(
    col: &dyn Array,
    from: usize,
    records: &mut [csv::ByteRecord],
    mut f: impl FnMut(usize, &mut csv::ByteRecord),
) {
    let nulls = col.null_count() > 0;
    for (i, rec) in (from..).zip(records.iter_mut()) {
        if nulls && col.is_null(i) {
            rec.push_field(b"");
        } else {
            f(i, rec);
        }
    }
}

fn integers<T: ArrowPrimitiveType>(col: &dyn Array, from: usize, records: &mut [csv::ByteRecord])
where
    T::Native: itoa::Integer,
{
    let a = col.as_primitive::<T>();
    let mut b = itoa::Buffer::new();
    each(col, from, records, |i, rec| {
        rec.push_field(b.format(a.value(i)).as_bytes())
    });
}

/// Pushes `write(i, buf)`'s text for each value.
fn texts(
    col: &dyn Array,
    from: usize,
    records: &mut [csv::ByteRecord],
    mut write: impl FnMut(usize, &mut String),
) {
    let mut buf = String::new();
    each(col, from, records, |i, rec| {
        buf.clear();
        write(i, &mut buf);
        rec.push_field(buf.as_bytes());
    });
}

fn render_column(
    col: &dyn Array,
    from: usize,
    records: &mut [csv::ByteRecord],
) -> Result<(), RowGroupError> {
    use std::fmt::Write;
    match col.data_type() {
        DataType::Utf8 => {
            let a = col.as_string::<i32>();
            each(col, from, records, |i, rec| {
                rec.push_field(a.value(i).as_bytes())
            });
        }
        DataType::LargeUtf8 => {
            let a = col.as_string::<i64>();
            each(col, from, records, |i, rec| {
                rec.push_field(a.value(i).as_bytes())
            });
        }
        DataType::Utf8View => {
            let a = col.as_string_view();
            each(col, from, records, |i, rec| {
                rec.push_field(a.value(i).as_bytes())
            });
        }
        DataType::Binary => {
            let a = col.as_binary::<i32>();
            each(col, from, records, |i, rec| rec.push_field(a.value(i)));
        }
        DataType::LargeBinary => {
            let a = col.as_binary::<i64>();
            each(col, from, records, |i, rec| rec.push_field(a.value(i)));
        }
        DataType::Boolean => {
            let a = col.as_boolean();
            each(col, from, records, |i, rec| {
                rec.push_field(if a.value(i) { b"true" } else { b"false" })
            });
        }
        DataType::Int8 => integers::<Int8Type>(col, from, records),
        DataType::Int16 => integers::<Int16Type>(col, from, records),
        DataType::Int32 => integers::<Int32Type>(col, from, records),
        DataType::Int64 => integers::<Int64Type>(col, from, records),
        DataType::UInt8 => integers::<UInt8Type>(col, from, records),
        DataType::UInt16 => integers::<UInt16Type>(col, from, records),
        DataType::UInt32 => integers::<UInt32Type>(col, from, records),
        DataType::UInt64 => integers::<UInt64Type>(col, from, records),
        // Rust's shortest round-trip form, as before (not ryu's, which writes exponents).
        DataType::Float32 => {
            let a = col.as_primitive::<Float32Type>();
            texts(col, from, records, |i, s| {
                let _ = write!(s, "{}", a.value(i));
            });
        }
        DataType::Float64 => {
            let a = col.as_primitive::<Float64Type>();
            texts(col, from, records, |i, s| {
                let _ = write!(s, "{}", a.value(i));
            });
        }
        DataType::Decimal128(_, scale) => {
            let a = col.as_primitive::<Decimal128Type>();
            let scale = *scale;
            texts(col, from, records, |i, s| {
                write_decimal(s, a.value(i), scale)
            });
        }
        DataType::Date32 => {
            let a = col.as_primitive::<Date32Type>();
            dates(col, from, records, |i| i64::from(a.value(i)));
        }
        DataType::Date64 => {
            let a = col.as_primitive::<Date64Type>();
            dates(col, from, records, |i| a.value(i).div_euclid(86_400_000));
        }
        DataType::Timestamp(unit, _) => {
            let ms: Box<dyn Fn(usize) -> i64> = match unit {
                TimeUnit::Second => {
                    let a = col.as_primitive::<TimestampSecondType>();
                    Box::new(move |i| a.value(i).saturating_mul(1000))
                }
                TimeUnit::Millisecond => {
                    let a = col.as_primitive::<TimestampMillisecondType>();
                    Box::new(move |i| a.value(i))
                }
                TimeUnit::Microsecond => {
                    let a = col.as_primitive::<TimestampMicrosecondType>();
                    Box::new(move |i| a.value(i).div_euclid(1000))
                }
                TimeUnit::Nanosecond => {
                    let a = col.as_primitive::<TimestampNanosecondType>();
                    Box::new(move |i| a.value(i).div_euclid(1_000_000))
                }
            };
            let mut b = itoa::Buffer::new();
            each(col, from, records, |i, rec| {
                rec.push_field(b.format(ms(i)).as_bytes())
            });
        }
        other => return Err(RowGroupError::UnsupportedType(other.clone())),
    }
    Ok(())
}

/// `v / 10^scale` with exactly `scale` fraction digits.
fn write_decimal(out: &mut String, v: i128, scale: i8) {
    let mut b = itoa::Buffer::new();
    if scale <= 0 {
        out.push_str(b.format(v.saturating_mul(10i128.pow(u32::from(scale.unsigned_abs())))));
        return;
    }
    if v < 0 {
        out.push('-');
    }
    let a = v.unsigned_abs();
    let scale = scale as u32;
    // In 64 bits when the value fits (every price and quantity does): 128-bit division and
    // formatting cost several times more.
    match u64::try_from(a) {
        Ok(a) if scale <= 19 => {
            let p = 10u64.pow(scale);
            push_whole_and_fraction(out, a / p, a % p, scale);
        }
        _ => {
            let p = 10u128.pow(scale);
            push_whole_and_fraction(out, a / p, a % p, scale);
        }
    }
}

/// `whole.frac`, `frac` zero-padded to `scale` digits.
fn push_whole_and_fraction<T: itoa::Integer>(out: &mut String, whole: T, frac: T, scale: u32) {
    let mut b = itoa::Buffer::new();
    out.push_str(b.format(whole));
    out.push('.');
    let frac = b.format(frac);
    for _ in frac.len()..scale as usize {
        out.push('0');
    }
    out.push_str(frac);
}

/// Days since 1970-01-01 as `YYYY-MM-DD` (proleptic Gregorian).
fn write_date(out: &mut String, days: i64) {
    match four_digit_year_date(days) {
        Some(text) => out.extend(text.iter().map(|&b| char::from(b))),
        None => {
            use std::fmt::Write;
            let (y, m, d) = civil_from_days(days);
            let _ = write!(out, "{y:04}-{m:02}-{d:02}");
        }
    }
}

/// [`write_date`]'s text of a day in the years 0 to 9999 (every other year is `None`), built
/// in place: Parquet dates are pushed as fields straight from it.
fn four_digit_year_date(days: i64) -> Option<[u8; 10]> {
    let (y, m, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) {
        return None;
    }
    let (m, d) = (i64::from(m), i64::from(d));
    let digit = |v: i64| b'0' + v as u8;
    Some([
        digit(y / 1000),
        digit(y / 100 % 10),
        digit(y / 10 % 10),
        digit(y % 10),
        b'-',
        digit(m / 10),
        digit(m % 10),
        b'-',
        digit(d / 10),
        digit(d % 10),
    ])
}

/// Pushes the date of `days(i)` for each value.
fn dates(
    col: &dyn Array,
    from: usize,
    records: &mut [csv::ByteRecord],
    days: impl Fn(usize) -> i64,
) {
    let mut buf = String::new();
    each(col, from, records, |i, rec| {
        match four_digit_year_date(days(i)) {
            Some(text) => rec.push_field(&text),
            None => {
                buf.clear();
                write_date(&mut buf, days(i));
                rec.push_field(buf.as_bytes());
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

    #[test]
    fn decimals_and_dates_render_as_fmt_would() {
        for (v, scale) in [
            (0i128, 2i8),
            (1, 2),
            (-1, 2),
            (1_795_455, 2),
            (-1_795_455, 2),
            (7, 0),
            (-7, -2),
            (123_456_789, 5),
            (i128::MAX, 10),
            (i128::from(u64::MAX), 2),
            (-i128::from(u64::MAX), 19),
            (i128::from(u64::MAX) + 1, 19),
            (5, 19),
            (5, 20),
            (-12_345, 38),
        ] {
            let mut got = String::new();
            write_decimal(&mut got, v, scale);
            let want = if scale <= 0 {
                (v * 10i128.pow(scale.unsigned_abs() as u32)).to_string()
            } else {
                let p = 10u128.pow(scale as u32);
                let sign = if v < 0 { "-" } else { "" };
                let a = v.unsigned_abs();
                format!("{sign}{}.{:0w$}", a / p, a % p, w = scale as usize)
            };
            assert_eq!(got, want, "{v} scale {scale}");
        }
        for (days, want) in [
            (0, "1970-01-01"),
            (-1, "1969-12-31"),
            (10_957, "2000-01-01"),
            (-719_468, "0000-03-01"),
            (2_932_896, "9999-12-31"),
            (2_932_897, "10000-01-01"),
        ] {
            let mut got = String::new();
            write_date(&mut got, days);
            assert_eq!(got, want, "{days}");
        }
    }
    use arrow_array::{Date32Array, Decimal128Array, Int64Array, StringArray};
    use arrow_schema::{Field, Schema};

    #[test]
    fn dates_and_decimals_render_as_csv_text() {
        let mut s = String::new();
        write_date(&mut s, 0);
        assert_eq!(s, "1970-01-01");
        s.clear();
        write_date(&mut s, 10_000);
        assert_eq!(s, "1997-05-19");
        s.clear();
        write_date(&mut s, -1);
        assert_eq!(s, "1969-12-31");
        s.clear();
        write_decimal(&mut s, 1_795_455, 2);
        assert_eq!(s, "17954.55");
        s.clear();
        write_decimal(&mut s, -5, 2);
        assert_eq!(s, "-0.05");
    }

    #[test]
    fn batches_longer_than_a_run_of_rows_render_every_row_in_place() {
        let n = 3 * RENDER_ROWS + 17;
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
            write_date(&mut day, i as i64);
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
