//! Arrow record batches as the text fields of records, column by column
//! (`formats/import.md` §"Sources": the text of each Arrow type):
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
//!
//! [`ColumnBatch::render`] turns each column into a [`ColumnText`] once per batch: string and
//! binary columns are kept as the Arrow arrays (their bytes are the fields, never copied),
//! every other column is written as text into one buffer ([`ColumnBatch::render_into`] writes a
//! reader's next batch into the buffers of its last, and converts each day's date once per
//! input). An import encodes its records
//! straight from it: [`ColumnBatch::fill_rows`] puts a run of rows' field slices into a small
//! table, column by column, and each row is encoded from its part of the table; other readers
//! take [`csv::ByteRecord`]s ([`ColumnBatch::to_records`]). Building a record per row was most
//! of a Parquet import's own cost (a copy and bookkeeping per field, ~8 ns); reading a field at
//! a time from the columns cost a mispredicted jump on the column's kind per field (3.7% of a
//! lineitem import, `benches/README.md`).

use std::fmt::Write as _;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{
    Array, BinaryArray, LargeBinaryArray, LargeStringArray, RecordBatch, StringArray,
    StringViewArray,
};
use arrow_schema::{DataType, TimeUnit};

use crate::mapping::timestamp::civil_from_days;
use arrow_schema::ArrowError;

/// Why a row group's records cannot be read (the file and row group are the
/// [`SourceError::RowGroup`](crate::source::SourceError::RowGroup)'s).
#[derive(Debug, thiserror::Error)]
pub enum RowGroupError {
    /// The Parquet reader's own error (a damaged page, a failed decompression...).
    #[error(transparent)]
    Read(#[from] ArrowError),
    /// A column of a type that has no text form here (see the module doc of `parquet_source`).
    #[error("column type {0} is not supported")]
    UnsupportedType(DataType),
}

/// One column of a batch as text fields.
#[derive(Clone, Debug)]
pub enum ColumnText {
    Utf8(StringArray),
    LargeUtf8(LargeStringArray),
    Utf8View(StringViewArray),
    Binary(BinaryArray),
    LargeBinary(LargeBinaryArray),
    /// Values written as text: value `i` is `bytes[ends[i - 1]..ends[i]]` (from 0 for the
    /// first); a null is empty.
    Text {
        bytes: Vec<u8>,
        ends: Vec<usize>,
    },
}

impl ColumnText {
    /// The text of value `i` (empty for a null).
    #[inline]
    pub fn value(&self, i: usize) -> &[u8] {
        match self {
            ColumnText::Text { bytes, ends } => {
                let start = match i {
                    0 => 0,
                    _ => ends[i - 1],
                };
                &bytes[start..ends[i]]
            }
            ColumnText::Utf8(a) => match a.is_null(i) {
                true => b"",
                false => a.value(i).as_bytes(),
            },
            ColumnText::LargeUtf8(a) => match a.is_null(i) {
                true => b"",
                false => a.value(i).as_bytes(),
            },
            ColumnText::Utf8View(a) => match a.is_null(i) {
                true => b"",
                false => a.value(i).as_bytes(),
            },
            ColumnText::Binary(a) => match a.is_null(i) {
                true => b"",
                false => a.value(i),
            },
            ColumnText::LargeBinary(a) => match a.is_null(i) {
                true => b"",
                false => a.value(i),
            },
        }
    }

    /// Puts the text of values `rows` into `table`, a row-major table of `stride` fields a
    /// row: value `r` at `table[(r - rows.start) * stride + column]`. One match per column
    /// and run of rows, where reading a field at a time would branch on the column's kind
    /// per field (an indirect jump the CPU mispredicts as the row's columns alternate kinds).
    pub fn fill<'a>(
        &'a self,
        rows: std::ops::Range<usize>,
        table: &mut [&'a [u8]],
        stride: usize,
        column: usize,
    ) {
        let slots = table.iter_mut().skip(column).step_by(stride.max(1));
        match self {
            ColumnText::Text { bytes, ends } => {
                let mut start = match rows.start {
                    0 => 0,
                    i => ends[i - 1],
                };
                for (slot, &end) in slots.zip(&ends[rows]) {
                    *slot = &bytes[start..end];
                    start = end;
                }
            }
            ColumnText::Utf8View(a) if a.null_count() == 0 => {
                for (slot, r) in slots.zip(rows) {
                    *slot = a.value(r).as_bytes();
                }
            }
            _ => {
                for (slot, r) in slots.zip(rows) {
                    *slot = self.value(r);
                }
            }
        }
    }

    /// Renders `col` (see the module doc).
    pub fn render(col: &dyn Array) -> Result<ColumnText, RowGroupError> {
        ColumnText::render_with(col, &mut Reuse::default())
    }

    /// [`render`](Self::render), writing text into a buffer kept from an earlier batch and
    /// dates through the memo of the days seen, when `reuse` has them.
    fn render_with(col: &dyn Array, reuse: &mut Reuse) -> Result<ColumnText, RowGroupError> {
        match col.data_type() {
            DataType::Utf8 => return Ok(ColumnText::Utf8(col.as_string::<i32>().clone())),
            DataType::LargeUtf8 => {
                return Ok(ColumnText::LargeUtf8(col.as_string::<i64>().clone()))
            }
            DataType::Utf8View => return Ok(ColumnText::Utf8View(col.as_string_view().clone())),
            DataType::Binary => return Ok(ColumnText::Binary(col.as_binary::<i32>().clone())),
            DataType::LargeBinary => {
                return Ok(ColumnText::LargeBinary(col.as_binary::<i64>().clone()))
            }
            _ => {}
        }
        let mut t = reuse.text(col.len());
        match col.data_type() {
            DataType::Boolean => {
                let a = col.as_boolean();
                t.each(col, |i, out| {
                    out.extend_from_slice(if a.value(i) { b"true" } else { b"false" })
                })
            }
            DataType::Int8 => t.integers::<Int8Type>(col),
            DataType::Int16 => t.integers::<Int16Type>(col),
            DataType::Int32 => t.integers::<Int32Type>(col),
            DataType::Int64 => t.integers::<Int64Type>(col),
            DataType::UInt8 => t.integers::<UInt8Type>(col),
            DataType::UInt16 => t.integers::<UInt16Type>(col),
            DataType::UInt32 => t.integers::<UInt32Type>(col),
            DataType::UInt64 => t.integers::<UInt64Type>(col),
            // Rust's shortest round-trip form (not ryu's, which writes exponents).
            DataType::Float32 => {
                let a = col.as_primitive::<Float32Type>();
                t.formatted(col, |i, s| write!(s, "{}", a.value(i)))
            }
            DataType::Float64 => {
                let a = col.as_primitive::<Float64Type>();
                t.formatted(col, |i, s| write!(s, "{}", a.value(i)))
            }
            DataType::Decimal128(_, scale) => {
                let a = col.as_primitive::<Decimal128Type>();
                let scale = *scale;
                t.each(col, |i, out| write_decimal(out, a.value(i), scale))
            }
            DataType::Date32 => {
                let a = col.as_primitive::<Date32Type>();
                t.dates(col, |i| i64::from(a.value(i)), &mut reuse.dates)
            }
            DataType::Date64 => {
                let a = col.as_primitive::<Date64Type>();
                t.dates(col, |i| a.value(i).div_euclid(86_400_000), &mut reuse.dates)
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
                t.each(col, |i, out| {
                    out.extend_from_slice(b.format(ms(i)).as_bytes())
                })
            }
            other => return Err(RowGroupError::UnsupportedType(other.clone())),
        }
        Ok(ColumnText::Text {
            bytes: t.bytes,
            ends: t.ends,
        })
    }
}

/// What rendering keeps from one batch to the next ([`ColumnBatch::render_into`]): the text
/// columns' buffers, so a batch's text is written into memory already allocated and touched
/// (not fresh pages from the allocator each batch), and the text of the days seen.
#[derive(Clone, Debug, Default)]
struct Reuse {
    texts: Vec<Text>,
    dates: DateMemo,
}

impl Reuse {
    /// An empty text column with room for `n` values: a kept buffer when there is one.
    fn text(&mut self, n: usize) -> Text {
        match self.texts.pop() {
            Some(mut t) => {
                t.bytes.clear();
                t.ends.clear();
                t.ends.reserve(n);
                t
            }
            None => Text::with_capacity(n),
        }
    }
}

/// The text of days already converted, in a small table indexed by the day (an input's dates
/// usually span a few years, and its date columns the same years), so a date is converted once
/// per input rather than once per batch and column. A slot holds one day; another day with
/// the same index replaces it.
#[derive(Clone, Debug, Default)]
struct DateMemo {
    /// `DATE_SLOTS` slots of (day, text), allocated at the first date; `i64::MIN`: empty.
    slots: Vec<(i64, [u8; 10])>,
}

const DATE_SLOTS: usize = 4096;

impl DateMemo {
    /// Appends the text of day `d` (days since 1970-01-01) to `out`.
    #[inline]
    fn push(&mut self, d: i64, out: &mut Vec<u8>) {
        if self.slots.is_empty() {
            self.slots = vec![(i64::MIN, [0; 10]); DATE_SLOTS];
        }
        let slot = &mut self.slots[d.rem_euclid(DATE_SLOTS as i64) as usize];
        if slot.0 == d {
            out.extend_from_slice(&slot.1);
            return;
        }
        match four_digit_year_date(d) {
            Some(text) => {
                out.extend_from_slice(&text);
                *slot = (d, text);
            }
            None => {
                let mut buf = String::new();
                write_date(&mut buf, d);
                out.extend_from_slice(buf.as_bytes());
            }
        }
    }
}

/// A text column being written.
#[derive(Clone, Debug)]
struct Text {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Text {
    fn with_capacity(n: usize) -> Text {
        Text {
            bytes: Vec::with_capacity(n * 8),
            ends: Vec::with_capacity(n),
        }
    }

    /// Writes `f(i)`'s text for each value, or nothing where the column is null.
    fn each(&mut self, col: &dyn Array, mut f: impl FnMut(usize, &mut Vec<u8>)) {
        let nulls = col.null_count() > 0;
        for i in 0..col.len() {
            if !(nulls && col.is_null(i)) {
                f(i, &mut self.bytes);
            }
            self.ends.push(self.bytes.len());
        }
    }

    fn integers<T: ArrowPrimitiveType>(&mut self, col: &dyn Array)
    where
        T::Native: itoa::Integer,
    {
        let a = col.as_primitive::<T>();
        let mut b = itoa::Buffer::new();
        self.each(col, |i, out| {
            out.extend_from_slice(b.format(a.value(i)).as_bytes())
        });
    }

    /// Writes `write(i, buf)`'s text for each value.
    fn formatted(
        &mut self,
        col: &dyn Array,
        mut write: impl FnMut(usize, &mut String) -> std::fmt::Result,
    ) {
        let mut buf = String::new();
        self.each(col, |i, out| {
            buf.clear();
            let _ = write(i, &mut buf);
            out.extend_from_slice(buf.as_bytes());
        });
    }

    /// Writes the date of `days(i)` for each value, through `memo`.
    fn dates(&mut self, col: &dyn Array, days: impl Fn(usize) -> i64, memo: &mut DateMemo) {
        self.each(col, |i, out| memo.push(days(i), out));
    }
}

/// A record batch's columns as text fields.
#[derive(Clone, Debug, Default)]
pub struct ColumnBatch {
    rows: usize,
    columns: Vec<ColumnText>,
    reuse: Reuse,
}

impl ColumnBatch {
    /// Renders every column of `rb`.
    pub fn render(rb: &RecordBatch) -> Result<ColumnBatch, RowGroupError> {
        let mut batch = ColumnBatch::default();
        batch.render_into(rb)?;
        Ok(batch)
    }

    /// Renders every column of `rb` in place of this batch's, writing the text into the
    /// buffers of the columns it replaces (a reader renders each of its batches into one of
    /// the same few `ColumnBatch`es). On an error the batch is left empty.
    pub fn render_into(&mut self, rb: &RecordBatch) -> Result<(), RowGroupError> {
        self.rows = 0;
        for column in self.columns.drain(..) {
            if let ColumnText::Text { bytes, ends } = column {
                self.reuse.texts.push(Text { bytes, ends });
            }
        }
        for c in rb.columns() {
            match ColumnText::render_with(c.as_ref(), &mut self.reuse) {
                Ok(column) => self.columns.push(column),
                Err(e) => {
                    self.columns.clear();
                    return Err(e);
                }
            }
        }
        self.rows = rb.num_rows();
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The fields of `rows` into `table` (cleared first), row by row: row `r`'s are
    /// `table[(r - rows.start) * width..][..width]`, `width` being the batch's column count
    /// ([`ColumnText::fill`]). An import encodes a run of rows from such a table.
    pub fn fill_rows<'a>(&'a self, rows: std::ops::Range<usize>, table: &mut Vec<&'a [u8]>) {
        let width = self.columns.len();
        table.clear();
        table.resize(rows.len() * width, &[]);
        for (c, column) in self.columns.iter().enumerate() {
            column.fill(rows.clone(), table, width, c);
        }
    }

    /// The number of columns.
    pub fn width(&self) -> usize {
        self.columns.len()
    }

    /// Writes row `row` into `rec` (cleared first).
    pub fn record(&self, row: usize, rec: &mut csv::ByteRecord) {
        rec.clear();
        for c in &self.columns {
            rec.push_field(c.value(row));
        }
    }

    /// Every row as a record, into `records` (reused: resized to the rows, each cleared).
    pub fn to_records(&self, records: &mut Vec<csv::ByteRecord>) {
        records.resize_with(self.rows, csv::ByteRecord::new);
        records.truncate(self.rows);
        for (i, rec) in records.iter_mut().enumerate() {
            self.record(i, rec);
        }
    }
}

/// `v / 10^scale` with exactly `scale` fraction digits.
pub(crate) fn write_decimal(out: &mut Vec<u8>, v: i128, scale: i8) {
    let mut b = itoa::Buffer::new();
    if scale <= 0 {
        let v = v.saturating_mul(10i128.pow(u32::from(scale.unsigned_abs())));
        out.extend_from_slice(b.format(v).as_bytes());
        return;
    }
    if v < 0 {
        out.push(b'-');
    }
    let a = v.unsigned_abs();
    let scale = scale as u32;
    // In 64 bits when the value fits (every price and quantity does): 128-bit division and
    // formatting cost several times more.
    match (u64::try_from(a), scale) {
        // The usual scales (money's is 2) with their divisions by constants.
        (Ok(a), 1) => push_scaled::<1>(out, a),
        (Ok(a), 2) => push_scaled::<2>(out, a),
        (Ok(a), 3) => push_scaled::<3>(out, a),
        (Ok(a), 4) => push_scaled::<4>(out, a),
        (Ok(a), ..=19) => {
            let p = 10u64.pow(scale);
            push_whole_and_fraction(out, a / p, a % p, scale);
        }
        _ => {
            let p = 10u128.pow(scale);
            push_whole_and_fraction(out, a / p, a % p, scale);
        }
    }
}

/// `a / 10^S` with exactly `S` fraction digits (`S` from 1 to 4), the fraction written digit
/// by digit.
#[inline(always)]
fn push_scaled<const S: u32>(out: &mut Vec<u8>, a: u64) {
    let p = 10u64.pow(S);
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(a / p).as_bytes());
    let mut frac = a % p;
    let mut text = [b'.'; 5];
    for d in text[1..=S as usize].iter_mut().rev() {
        *d = b'0' + (frac % 10) as u8;
        frac /= 10;
    }
    out.extend_from_slice(&text[..=S as usize]);
}

/// `whole.frac`, `frac` zero-padded to `scale` digits.
fn push_whole_and_fraction<T: itoa::Integer>(out: &mut Vec<u8>, whole: T, frac: T, scale: u32) {
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(whole).as_bytes());
    out.push(b'.');
    let frac = b.format(frac);
    out.resize(
        out.len() + (scale as usize).saturating_sub(frac.len()),
        b'0',
    );
    out.extend_from_slice(frac.as_bytes());
}

/// Days since 1970-01-01 as `YYYY-MM-DD` (proleptic Gregorian).
pub(crate) fn write_date(out: &mut String, days: i64) {
    match four_digit_year_date(days) {
        Some(text) => out.extend(text.iter().map(|&b| char::from(b))),
        None => {
            let (y, m, d) = civil_from_days(days);
            let _ = write!(out, "{y:04}-{m:02}-{d:02}");
        }
    }
}

/// [`write_date`]'s text of a day in the years 0 to 9999 (every other year is `None`), built
/// in place.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::rowkey::FieldSource;

    /// A string-view column without nulls (its own loop in `fill`): short values held in the
    /// view and long ones in a data buffer, from every start row.
    #[test]
    fn views_without_nulls_fill_their_values() {
        let values = [
            "",
            "short",
            "twelve bytes",
            "thirteen byte",
            "a longer comment, in a buffer",
        ];
        let col = ColumnText::render(&StringViewArray::from(values.to_vec())).unwrap();
        assert!(matches!(col, ColumnText::Utf8View(_)));
        for from in 0..values.len() {
            let mut table = vec![&b"?"[..]; 2 * (values.len() - from)];
            col.fill(from..values.len(), &mut table, 2, 1);
            for (k, v) in values[from..].iter().enumerate() {
                assert_eq!(table[2 * k], b"?", "the other column's slot is left alone");
                assert_eq!(table[2 * k + 1], v.as_bytes());
            }
        }
    }

    fn decimal_text(v: i128, scale: i8) -> String {
        let mut got = Vec::new();
        write_decimal(&mut got, v, scale);
        String::from_utf8(got).unwrap()
    }

    /// The text `format!` gives a decimal.
    fn decimal_by_fmt(v: i128, scale: i8) -> String {
        if scale <= 0 {
            return (v * 10i128.pow(scale.unsigned_abs() as u32)).to_string();
        }
        let p = 10u128.pow(scale as u32);
        let sign = if v < 0 { "-" } else { "" };
        let a = v.unsigned_abs();
        format!("{sign}{}.{:0w$}", a / p, a % p, w = scale as usize)
    }

    proptest::proptest! {
        /// Every scale's text, for values around the 64-bit boundary as well as small ones.
        #[test]
        fn decimals_render_as_fmt_would(
            v in -(1i128 << 66)..(1i128 << 66),
            small in -100_000i128..100_000,
            scale in 0i8..=38,
        ) {
            proptest::prop_assert_eq!(decimal_text(v, scale), decimal_by_fmt(v, scale));
            proptest::prop_assert_eq!(decimal_text(small, scale), decimal_by_fmt(small, scale));
        }
    }

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
            (0, 1),
            (-9, 1),
            (100_000, 3),
            (-99_999, 4),
            (i128::from(u64::MAX), 4),
            (-i128::from(u64::MAX) - 1, 3),
        ] {
            assert_eq!(
                decimal_text(v, scale),
                decimal_by_fmt(v, scale),
                "{v} scale {scale}"
            );
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
        let mut d = Vec::new();
        write_decimal(&mut d, 1_795_455, 2);
        assert_eq!(d, b"17954.55");
        d.clear();
        write_decimal(&mut d, -5, 2);
        assert_eq!(d, b"-0.05");
    }

    /// Batches rendered one after another into one `ColumnBatch` (its text buffers and date
    /// memo kept) give each batch's own fields, the same as a fresh render: nothing of the
    /// batch before is left, whatever the types and row counts; days whose memo slots
    /// collide (4096 apart) each keep their own date.
    #[test]
    fn batches_rendered_into_one_column_batch_are_each_their_own() {
        use arrow_array::{ArrayRef, Date32Array, Decimal128Array, Int64Array};
        use arrow_schema::{Field, Schema};
        use std::sync::Arc;
        let batch_of = |cols: Vec<ArrayRef>| {
            let fields: Vec<Field> = cols
                .iter()
                .enumerate()
                .map(|(i, c)| Field::new(format!("c{i}"), c.data_type().clone(), true))
                .collect();
            RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap()
        };
        let days = |d: Vec<Option<i32>>| -> ArrayRef { Arc::new(Date32Array::from(d)) };
        let batches = [
            batch_of(vec![
                Arc::new(Int64Array::from(vec![123_456_789, -1, 0])),
                days(vec![Some(10_000), Some(0), None]),
                Arc::new(
                    Decimal128Array::from(vec![Some(1_795_455), None, Some(-5)])
                        .with_precision_and_scale(15, 2)
                        .unwrap(),
                ),
            ]),
            // Fewer rows, other types in other places; day 10_000 + 4096 takes the slot of
            // 10_000, then 10_000 comes back.
            batch_of(vec![
                days(vec![Some(10_000 + 4096), Some(10_000)]),
                Arc::new(StringArray::from(vec!["x", "yz"])),
                Arc::new(Int64Array::from(vec![7, 8])),
            ]),
            batch_of(vec![
                Arc::new(Int64Array::from(vec![Some(42), None, Some(5), Some(6)])),
                days(vec![Some(-1), Some(10_000 + 4096), Some(10_000), Some(-1)]),
            ]),
        ];
        let fields = |b: &ColumnBatch| {
            let mut records = Vec::new();
            b.to_records(&mut records);
            records
                .iter()
                .map(|r| r.iter().map(<[u8]>::to_vec).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        };
        let mut kept = ColumnBatch::default();
        for rb in &batches {
            kept.render_into(rb).unwrap();
            let fresh = ColumnBatch::render(rb).unwrap();
            assert_eq!(kept.len(), rb.num_rows());
            assert_eq!(fields(&kept), fields(&fresh));
        }
        assert_eq!(
            fields(&kept)[1],
            [b"".to_vec(), b"2008-08-05".to_vec()],
            "{:?}",
            fields(&kept)
        );
        assert_eq!(fields(&kept)[0][1], b"1969-12-31");
        assert_eq!(fields(&kept)[2][1], b"1997-05-19");
    }

    /// Every string and binary type read in place, and the other types written as text, give
    /// the fields the records give; a null is an empty field in both.
    #[test]
    fn fields_read_in_place_equal_the_records() {
        use arrow_array::{
            ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array,
            TimestampMicrosecondArray, UInt64Array,
        };
        use arrow_schema::{Field, Schema};
        use std::sync::Arc;
        let strs = vec![Some("a"), None, Some("héllo"), Some("")];
        let bins: Vec<Option<&[u8]>> = vec![Some(b"\x00\xff"), Some(b"x"), None, Some(b"")];
        let cols: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(strs.clone())),
            Arc::new(LargeStringArray::from(strs.clone())),
            Arc::new(StringViewArray::from(strs.clone())),
            Arc::new(BinaryArray::from(bins.clone())),
            Arc::new(LargeBinaryArray::from(bins)),
            Arc::new(BooleanArray::from(vec![
                Some(true),
                Some(false),
                None,
                Some(true),
            ])),
            Arc::new(Int32Array::from(vec![
                Some(-7),
                None,
                Some(0),
                Some(i32::MAX),
            ])),
            Arc::new(UInt64Array::from(vec![
                Some(u64::MAX),
                Some(1),
                Some(2),
                None,
            ])),
            Arc::new(Float64Array::from(vec![
                Some(0.1),
                Some(-2.5),
                None,
                Some(1e21),
            ])),
            Arc::new(
                Decimal128Array::from(vec![Some(1_795_455), None, Some(-5), Some(0)])
                    .with_precision_and_scale(15, 2)
                    .unwrap(),
            ),
            Arc::new(Date32Array::from(vec![
                Some(0),
                Some(10_000),
                Some(10_000),
                None,
            ])),
            Arc::new(TimestampMicrosecondArray::from(vec![
                Some(1_700_000_000_123_456),
                None,
                Some(-1),
                Some(0),
            ])),
        ];
        let fields: Vec<Field> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| Field::new(format!("c{i}"), c.data_type().clone(), true))
            .collect();
        let rb = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap();
        let batch = ColumnBatch::render(&rb).unwrap();
        let mut records = Vec::new();
        batch.to_records(&mut records);
        let want: Vec<Vec<&str>> = vec![
            vec![
                "a",
                "a",
                "a",
                "\u{0}\u{ff}",
                "\u{0}\u{ff}",
                "true",
                "-7",
                "18446744073709551615",
                "0.1",
                "17954.55",
                "1970-01-01",
                "1700000000123",
            ],
            vec![
                "",
                "",
                "",
                "x",
                "x",
                "false",
                "",
                "1",
                "-2.5",
                "",
                "1997-05-19",
                "",
            ],
            vec![
                "héllo",
                "héllo",
                "héllo",
                "",
                "",
                "",
                "0",
                "2",
                "",
                "-0.05",
                "1997-05-19",
                "-1",
            ],
            vec![
                "",
                "",
                "",
                "",
                "",
                "true",
                "2147483647",
                "",
                "1000000000000000000000",
                "0.00",
                "",
                "0",
            ],
        ];
        // Every run of rows a table can hold, from every start.
        let mut table = Vec::new();
        for from in 0..want.len() {
            for to in from..=want.len() {
                batch.fill_rows(from..to, &mut table);
                assert_eq!(table.len(), (to - from) * batch.width());
                for (r, fields) in (from..to).zip(table.chunks_exact(batch.width())) {
                    for (c, w) in want[r].iter().enumerate() {
                        let w: Vec<u8> = match c {
                            3 | 4 => w.chars().map(|ch| ch as u8).collect(),
                            _ => w.as_bytes().to_vec(),
                        };
                        assert_eq!(fields.field(c), Some(w.as_slice()), "row {r} column {c}");
                        assert_eq!(&records[r][c], w.as_slice(), "row {r} column {c}");
                    }
                    assert_eq!(fields.field(want[r].len()), None);
                }
            }
        }
        // A batch held column by column: its length, and a record's fields for messages.
        let b = crate::source::Batch {
            columns: Some(batch),
            ..Default::default()
        };
        assert_eq!(b.len(), 4);
        assert_eq!(b.fields_text(2)[..3], ["héllo", "héllo", "héllo"]);
        assert_eq!(b.fields_text(1)[6], "");
    }
}
