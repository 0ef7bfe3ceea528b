//! The import mapping run backwards (`formats/table.md` §"Row exports"): [`RecordDecoder`]
//! turns a row's key (through [`RowkeyInverse`]) and its newest cells into the record that
//! `hfkit import` with the same mapping reads back into the same cells, checking that every
//! source re-encodes to its very cell and that sources of one field agree.

use crate::mapping::rowkey::{
    KeyFields, KeyUse, Recovered, RowkeyInverse, RowkeySpec, VerifyScratch,
};
use crate::mapping::timestamp::TimestampFormat;
use crate::mapping::value::{decode_value_into, encode_value};
use crate::RowkeyError;
use hfkit_format::bytes::equal_bytes;
use hfkit_format::cell::CellRef;
use hfkit_read::RowRef;
use hfkit_table::{to_string_binary, ImportMapping, TimestampSource, ValueType};

use super::error::ExportError;
use super::format::{ExportField, FieldType, RowCounts};

/// Where a mapped column's timestamp comes from.
#[derive(Clone, Copy, Debug)]
enum ColumnTimestamp {
    ImportTime,
    Fixed(i64),
    /// A field (index into the record).
    Field(usize),
}

/// A `[[column]]` of the mapping.
#[derive(Clone, Debug)]
struct MappedColumn {
    /// Its source field (index into the record).
    field: usize,
    /// `family:qualifier`, for messages.
    name: String,
    value_type: ValueType,
    timestamp: ColumnTimestamp,
    /// How the import reads its timestamp field (`timestamp_format`), so the export writes it
    /// the same way.
    ts_format: TimestampFormat,
}

/// Where a field's value came from, in a row being decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// The value of column `i` (a string column's is exact; numbers are canonical).
    Value(usize),
    Key(Recovered),
    /// The timestamp of column `i`.
    Timestamp(usize),
}

/// The import mapping run backwards: a row's key and cells to the record that imports as them.
#[derive(Clone, Debug)]
pub struct RecordDecoder {
    inverse: RowkeyInverse,
    /// Record field of each spec field (slot).
    key_fields: Vec<usize>,
    fields: Vec<ExportField>,
    columns: Vec<MappedColumn>,
    /// (family, qualifier) → mapped columns, sorted.
    by_cell: Vec<(Vec<u8>, Vec<u8>, Vec<usize>)>,
}

impl RecordDecoder {
    /// Checks `mapping` against the table's `families` and the rowkey spec for inversion.
    pub fn new(mapping: &ImportMapping, families: &[String]) -> Result<RecordDecoder, ExportError> {
        let spec_text = mapping
            .rowkey
            .as_deref()
            .ok_or_else(|| ExportError::Mapping("the schema has no [rowkey] spec".into()))?;
        let rowkey_ts = match &mapping.rowkey_timestamp_format {
            Some((text, at)) => TimestampFormat::parse(text)
                .map_err(|e| ExportError::Mapping(format!("{at}: [rowkey] {e}")))?,
            None => TimestampFormat::EpochMillis,
        };
        let spec = RowkeySpec::parse(spec_text)
            .map_err(ExportError::Spec)?
            .with_timestamp_format(rowkey_ts);
        if mapping.columns.is_empty() {
            return Err(ExportError::Mapping(
                "the schema maps no [[column]] to a cell".into(),
            ));
        }
        let mut names: Vec<String> = spec.fields().to_vec();
        let mut index = |name: &str| match names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                names.push(name.to_string());
                names.len() - 1
            }
        };
        let key_fields: Vec<usize> = spec.fields().iter().map(|f| index(f)).collect();
        let mut columns = Vec::new();
        let mut by_cell: Vec<(Vec<u8>, Vec<u8>, Vec<usize>)> = Vec::new();
        // Mapping features whose fields a row of the table does not give back: refused by
        // name rather than written as records the import would not read the same way.
        if mapping.operation.is_some() {
            return Err(ExportError::Mapping(
                "the schema has an [operation]: a table holds no operation field to write \
                 (export with a schema without it)"
                    .into(),
            ));
        }
        if let Some(x) = &mapping.explode {
            return Err(ExportError::Mapping(format!(
                "the schema explodes field '{}' ([explode]): a row cannot be folded back into \
                 the records it came from",
                x.field
            )));
        }
        if let Some(c) = mapping.columns.iter().find(|c| c.ttl.is_some()) {
            return Err(ExportError::Mapping(format!(
                "column '{}' has a ttl: a cell's TTL tag is not written back as a field \
                 (export with a schema without it)",
                c.source
            )));
        }
        for (i, c) in mapping.columns.iter().enumerate() {
            if !families.contains(&c.family) {
                return Err(ExportError::Mapping(format!(
                    "column '{}' maps to family '{}', which the table does not have (families: {})",
                    c.source,
                    c.family,
                    families.join(", ")
                )));
            }
            if c.qualifier_template.is_some() {
                return Err(ExportError::Mapping(format!(
                    "column '{}': its qualifier '{}' is taken from the record, so its cells \
                     cannot be mapped back to one column",
                    c.source,
                    to_string_binary(&c.qualifier)
                )));
            }
            let field = index(&c.source);
            let timestamp = match &c.timestamp {
                TimestampSource::ImportTime => ColumnTimestamp::ImportTime,
                TimestampSource::Fixed(t) => ColumnTimestamp::Fixed(*t),
                TimestampSource::Field(f) => ColumnTimestamp::Field(index(f)),
            };
            let ts_format = match c.timestamp_format.as_deref() {
                None => TimestampFormat::EpochMillis,
                Some(f) => TimestampFormat::parse(f).map_err(|e| {
                    ExportError::Mapping(format!("column '{}': timestamp_format: {e}", c.source))
                })?,
            };
            columns.push(MappedColumn {
                field,
                name: format!("{}:{}", c.family, to_string_binary(&c.qualifier)),
                value_type: c.value_type,
                timestamp,
                ts_format,
            });
            let family = c.family.as_bytes();
            match by_cell
                .iter_mut()
                .find(|(f, q, _)| f == family && *q == c.qualifier)
            {
                Some((_, _, cols)) => cols.push(i),
                None => by_cell.push((family.to_vec(), c.qualifier.clone(), vec![i])),
            }
        }
        by_cell.sort();
        let elsewhere: Vec<&str> = mapping
            .columns
            .iter()
            .flat_map(|c| {
                let ts = match &c.timestamp {
                    TimestampSource::Field(f) => Some(f.as_str()),
                    _ => None,
                };
                std::iter::once(c.source.as_str()).chain(ts)
            })
            .collect();
        let inverse = spec.inverse(&elsewhere).map_err(ExportError::Spec)?;

        // Parquet types: text when any use needs the bytes as they are; int64 / double when
        // every use is numeric of that kind (pad and hashes take the canonical text too).
        let n = names.len();
        let (mut text, mut int, mut dbl) = (vec![false; n], vec![false; n], vec![false; n]);
        for (slot, u) in inverse.uses() {
            let f = key_fields[*slot];
            match u {
                KeyUse::Text => text[f] = true,
                KeyUse::Integer => int[f] = true,
                KeyUse::Float => dbl[f] = true,
                KeyUse::Digits | KeyUse::Hashed => {}
            }
        }
        for c in &columns {
            match c.value_type {
                ValueType::Int64 | ValueType::Int32 | ValueType::Int16 => int[c.field] = true,
                ValueType::Double | ValueType::Float32 => dbl[c.field] = true,
                ValueType::String
                | ValueType::Boolean
                | ValueType::BigDecimal
                | ValueType::Hex
                | ValueType::Base64 => text[c.field] = true,
            }
            if let ColumnTimestamp::Field(f) = c.timestamp {
                if c.ts_format == TimestampFormat::EpochMillis {
                    int[f] = true;
                } else {
                    text[f] = true;
                }
            }
        }
        let fields = names
            .into_iter()
            .enumerate()
            .map(|(i, name)| ExportField {
                name,
                parquet_type: match (text[i], int[i], dbl[i]) {
                    (false, true, false) => FieldType::Int64,
                    (false, false, true) => FieldType::Double,
                    _ => FieldType::Utf8,
                },
            })
            .collect();
        Ok(RecordDecoder {
            inverse,
            key_fields,
            fields,
            columns,
            by_cell,
        })
    }

    /// The record's fields, in order: the row key's fields, then each column's source and
    /// timestamp field, each once.
    pub fn fields(&self) -> &[ExportField] {
        &self.fields
    }

    /// The index into `by_cell` of the column `(family, qualifier)`; `hint` first (a row's
    /// cells come in the order of `by_cell`, so the next one is usually the one after the last).
    fn lookup(&self, family: &[u8], qualifier: &[u8], hint: usize) -> Option<usize> {
        if let Some((f, q, _)) = self.by_cell.get(hint) {
            if equal_bytes(f, family) && equal_bytes(q, qualifier) {
                return Some(hint);
            }
        }
        self.by_cell
            .binary_search_by(|(f, q, _)| (f.as_slice(), q.as_slice()).cmp(&(family, qualifier)))
            .ok()
    }

    fn describe(&self, s: Source) -> String {
        match s {
            Source::Value(c) => format!("column {}", self.columns[c].name),
            Source::Key(_) => "the row key".into(),
            Source::Timestamp(c) => format!("the timestamp of column {}", self.columns[c].name),
        }
    }

    /// Whether `text` imports as what source `s` holds in `cell` (`buf`: scratch).
    fn accepts(&self, s: Source, text: &[u8], cell: &CellRef<'_>, buf: &mut Vec<u8>) -> bool {
        match s {
            // A string column imports its field's bytes as they are (`encode_value`).
            Source::Value(c) if self.columns[c].value_type == ValueType::String => {
                equal_bytes(text, cell.value)
            }
            Source::Value(c) => {
                buf.clear();
                encode_value(self.columns[c].value_type, "", text, buf).is_ok()
                    && equal_bytes(buf, cell.value)
            }
            Source::Timestamp(c) => {
                self.columns[c].ts_format.to_millis(text).ok() == Some(cell.timestamp)
            }
            Source::Key(_) => true,
        }
    }

    /// Decodes `row` into `record` (one entry per field, `None` = empty; see
    /// [`Record::values`]). False, and no record, when none of the row's cells is in a mapped
    /// column.
    pub fn decode(
        &self,
        row: RowRef<'_>,
        record: &mut Record,
        counts: &mut RowCounts,
    ) -> Result<bool, ExportError> {
        let field_err = |field: usize, reason: String| ExportError::Field {
            row: to_string_binary(row.row()),
            field: self.fields[field].name.clone(),
            reason,
        };
        let key_err = |e: RowkeyError| ExportError::Row {
            row: to_string_binary(row.row()),
            reason: format!("row key: {e}"),
        };
        let Record {
            vals,
            src,
            cell_of,
            kf,
            key_values,
            spare,
            buf,
            verify,
        } = record;

        // The newest cell of each mapped column (a read returns the newest first).
        cell_of.clear();
        cell_of.resize(self.columns.len(), None);
        let mut mapped = 0u64;
        let mut hint = 0;
        for (i, c) in row.cells().enumerate() {
            match self.lookup(c.family, c.qualifier, hint) {
                None => counts.unmapped_cells += 1,
                Some(k) => {
                    mapped += 1;
                    hint = k + 1;
                    for &ci in &self.by_cell[k].2 {
                        cell_of[ci].get_or_insert(i);
                    }
                }
            }
        }
        if mapped == 0 {
            counts.rows_skipped += 1;
            return Ok(false);
        }
        let cell = |ci: usize| cell_of[ci].and_then(|i| row.cell(i));

        let n = self.fields.len();
        for v in vals.iter_mut() {
            recycle(spare, v.take());
        }
        vals.resize(n, None);
        src.clear();
        src.resize(n, None);

        // 1. String columns: exact.
        for (ci, col) in self.columns.iter().enumerate() {
            let Some(c) = cell(ci) else { continue };
            if c.value.is_empty() {
                return Err(field_err(
                    col.field,
                    format!(
                        "cell {} is empty, and an import writes no cell for an empty field",
                        col.name
                    ),
                ));
            }
            if col.value_type != ValueType::String {
                continue;
            }
            match (&vals[col.field], src[col.field]) {
                (None, _) => {
                    let mut v = spare.pop().unwrap_or_default();
                    v.extend_from_slice(c.value);
                    vals[col.field] = Some(v);
                    src[col.field] = Some(Source::Value(ci));
                }
                (Some(v), _) if equal_bytes(v, c.value) => {}
                (Some(v), s) => {
                    return Err(field_err(
                        col.field,
                        format!(
                            "{} holds '{}', but column {} holds '{}'",
                            s.map(|s| self.describe(s)).unwrap_or_default(),
                            to_string_binary(v),
                            col.name,
                            to_string_binary(c.value)
                        ),
                    ))
                }
            }
        }

        // 2. The row key: its invertible terms, checked against what is known.
        kf.values.resize(self.key_fields.len(), None);
        kf.recovered.clear();
        kf.recovered.resize(self.key_fields.len(), None);
        for (slot, &f) in self.key_fields.iter().enumerate() {
            kf.values[slot].clone_from(&vals[f]);
        }
        let deferred = self.inverse.decode(row.row(), kf).map_err(key_err)?;
        for (slot, &f) in self.key_fields.iter().enumerate() {
            if let Some(r) = kf.recovered[slot] {
                recycle(
                    spare,
                    std::mem::replace(&mut vals[f], kf.values[slot].take()),
                );
                src[f] = Some(Source::Key(r));
            }
        }

        // 3. Numbers and timestamps: fill what is unknown, and replace a canonical text from
        //    the key that does not import as this source's cell (the key is checked again).
        for (ci, col) in self.columns.iter().enumerate() {
            let Some(c) = cell(ci) else { continue };
            if col.value_type != ValueType::String {
                let mut text = spare.pop().unwrap_or_default();
                text.clear();
                if let Err(e) = value_text(col, &c, &mut text) {
                    recycle(spare, Some(text));
                    return Err(field_err(col.field, e.to_string()));
                }
                self.offer(
                    vals,
                    src,
                    col.field,
                    text,
                    Source::Value(ci),
                    &c,
                    buf,
                    spare,
                );
            }
            match col.timestamp {
                ColumnTimestamp::Field(f) => {
                    // In the column's timestamp format; one that drops part of the instant
                    // is caught by the check in step 5.
                    let text = col
                        .ts_format
                        .render(c.timestamp)
                        .unwrap_or_else(|| c.timestamp.to_string())
                        .into_bytes();
                    self.offer(vals, src, f, text, Source::Timestamp(ci), &c, buf, spare);
                }
                ColumnTimestamp::Fixed(t) if t == c.timestamp => {}
                ColumnTimestamp::Fixed(_) | ColumnTimestamp::ImportTime => {
                    counts.untimed_cells += 1
                }
            }
        }

        // 4. The key again, whole: deferred terms (salt, hash_prefix, bucket) and re-encoding.
        key_values.resize(self.key_fields.len(), None);
        for (slot, &f) in self.key_fields.iter().enumerate() {
            key_values[slot].clone_from(&vals[f]);
        }
        self.inverse
            .verify_in(row.row(), &deferred, key_values, verify)
            .map_err(key_err)?;

        // 5. Every column imports back as its cell.
        for (ci, col) in self.columns.iter().enumerate() {
            let Some(c) = cell(ci) else { continue };
            let mut check = |f: usize, s: Source| -> Result<(), ExportError> {
                let text = vals[f].as_deref().unwrap_or_default();
                if self.accepts(s, text, &c, buf) {
                    return Ok(());
                }
                let holds = match s {
                    Source::Timestamp(_) => format!("is {}", c.timestamp),
                    _ => {
                        let mut shown = Vec::new();
                        if value_text(col, &c, &mut shown).is_err() {
                            shown.clear();
                            shown.extend_from_slice(c.value);
                        }
                        format!("holds '{}'", to_string_binary(&shown))
                    }
                };
                Err(field_err(
                    f,
                    format!(
                        "{} gives '{}', but {} {holds}",
                        src[f].map(|s| self.describe(s)).unwrap_or_default(),
                        to_string_binary(text),
                        self.describe(s)
                    ),
                ))
            };
            check(col.field, Source::Value(ci))?;
            if let ColumnTimestamp::Field(f) = col.timestamp {
                check(f, Source::Timestamp(ci))?;
            }
        }

        counts.rows += 1;
        counts.cells += mapped;
        Ok(true)
    }

    /// Offers `text` from source `s` for field `f`.
    #[allow(clippy::too_many_arguments)]
    fn offer(
        &self,
        vals: &mut [Option<Vec<u8>>],
        src: &mut [Option<Source>],
        f: usize,
        text: Vec<u8>,
        s: Source,
        cell: &CellRef<'_>,
        buf: &mut Vec<u8>,
        spare: &mut Vec<Vec<u8>>,
    ) {
        let replace = match &vals[f] {
            None => true,
            Some(cur) => {
                src[f] == Some(Source::Key(Recovered::Canonical))
                    && !self.accepts(s, cur, cell, buf)
            }
        };
        if replace {
            recycle(spare, vals[f].replace(text));
            src[f] = Some(s);
        } else {
            recycle(spare, Some(text));
        }
    }
}

/// A decoded record ([`RecordDecoder::decode`]) and the buffers a decode reuses from row to
/// row, so that a row costs no allocation once the first rows have sized them.
#[derive(Debug, Default)]
pub struct Record {
    /// One entry per field, `None` = empty.
    vals: Vec<Option<Vec<u8>>>,
    src: Vec<Option<Source>>,
    /// Index into the row's cells of each mapped column's newest cell.
    cell_of: Vec<Option<usize>>,
    kf: KeyFields,
    key_values: Vec<Option<Vec<u8>>>,
    /// Emptied value buffers, for the next values.
    spare: Vec<Vec<u8>>,
    /// Scratch for encoding a value to compare it with its cell.
    buf: Vec<u8>,
    /// The key check's buffers.
    verify: VerifyScratch,
}

impl Record {
    /// The fields of the last record decoded (one entry per field, `None` = empty).
    pub fn values(&self) -> &[Option<Vec<u8>>] {
        &self.vals
    }
}

/// Keeps `v`'s buffer, emptied, for a later value.
fn recycle(spare: &mut Vec<Vec<u8>>, v: Option<Vec<u8>>) {
    if let Some(mut v) = v {
        v.clear();
        spare.push(v);
    }
}

/// A cell of a typed column whose value does not decode as its type.
#[derive(Debug, thiserror::Error)]
#[error("cell {column} holds {len} bytes, not {expected}")]
struct ValueWidthError {
    column: String,
    len: usize,
    /// What the type needs, e.g. "an int64 (8 bytes)".
    expected: &'static str,
}

/// A cell value as the text its column's type imports from (string: the bytes; numbers:
/// decimal; see `value::decode_value`), appended to `out`.
fn value_text(
    col: &MappedColumn,
    c: &CellRef<'_>,
    out: &mut Vec<u8>,
) -> Result<(), ValueWidthError> {
    decode_value_into(col.value_type, c.value, out).ok_or_else(|| ValueWidthError {
        column: col.name.clone(),
        len: c.value.len(),
        expected: match col.value_type {
            ValueType::Double => "a double (8 bytes)",
            ValueType::Int64 => "an int64 (8 bytes)",
            ValueType::Int32 => "an int32 (4 bytes)",
            ValueType::Int16 => "an int16 (2 bytes)",
            ValueType::Float32 => "a float32 (4 bytes)",
            ValueType::Boolean => "a boolean (1 byte)",
            _ => "a bigdecimal (a 4-byte scale and at most 16 bytes of digits)",
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::value::{double_bytes, long_bytes};
    use hfkit_format::cell::Cell;
    use hfkit_read::{Row, RowBuf};

    /// `r` in a row buffer, as a scan hands rows out.
    fn buffered(r: &Row) -> RowBuf {
        let mut b = RowBuf::new();
        b.start_row(&r.row);
        for c in &r.cells {
            b.push(&c.as_ref());
        }
        b
    }

    fn decoder(spec: &str, columns: &str) -> RecordDecoder {
        let text = format!(
            "[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[rowkey]\nspec = '{spec}'\n{columns}"
        );
        let s = hfkit_table::TableSchema::from_toml_str(&text, "t.toml", None).unwrap();
        RecordDecoder::new(&s.mapping, &["d".to_string()]).unwrap()
    }

    fn row(key: &[u8], cells: &[(&str, i64, &[u8])]) -> Row {
        Row {
            row: key.to_vec(),
            cells: cells
                .iter()
                .map(|(q, ts, v)| Cell::put(key, b"d", q.as_bytes(), *ts, v))
                .collect(),
        }
    }

    fn decode(d: &RecordDecoder, r: &Row) -> Result<Vec<String>, String> {
        let mut rec = Record::default();
        let mut counts = RowCounts::default();
        d.decode(buffered(r).as_row_ref(), &mut rec, &mut counts)
            .map_err(|e| e.to_string())?;
        Ok(rec
            .values()
            .iter()
            .map(|v| v.as_deref().map(to_string_binary).unwrap_or_default())
            .collect())
    }

    fn key(spec: &str, fields: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        RowkeySpec::parse(spec)
            .unwrap()
            .encode(
                &|n: &str| fields.iter().find(|(f, _)| *f == n).map(|(_, v)| *v),
                &mut out,
            )
            .unwrap();
        out
    }

    const N_X: &str = "[[column]]\nsource = \"n\"\ncell = \"d:n\"\ntimestamp = 1\n\
                       [[column]]\nsource = \"x\"\ncell = \"d:x\"\ntype = \"double\"\ntimestamp = 1\n";

    #[test]
    fn exact_sources_win_and_canonical_key_text_gives_way() {
        let spec = r#"pad(n, 6) + "_" + f64be(x)"#;
        let d = decoder(spec, N_X);
        let k = key(spec, &[("n", b"007"), ("x", b"-0")]);
        // The string column keeps its zeros; the double column keeps its sign, which the
        // key's f64be (0 and -0 encode alike) cannot tell.
        let r = row(&k, &[("n", 1, b"007"), ("x", 1, &double_bytes(-0.0))]);
        assert_eq!(decode(&d, &r).unwrap(), ["007", "-0"]);
        // Without the cells, the key's canonical texts.
        let r = row(&k, &[("x", 1, &double_bytes(0.0))]);
        assert_eq!(decode(&d, &r).unwrap(), ["7", "0"]);
        assert_eq!(
            d.fields()
                .iter()
                .map(|f| f.parquet_type)
                .collect::<Vec<_>>(),
            [FieldType::Utf8, FieldType::Double]
        );
    }

    #[test]
    fn a_record_reused_from_row_to_row_decodes_as_a_new_one() {
        let spec = r#"pad(n, 6) + "_" + f64be(x)"#;
        let d = decoder(spec, N_X);
        let k1 = key(spec, &[("n", b"007"), ("x", b"1.5")]);
        let k2 = key(spec, &[("n", b"8"), ("x", b"-2")]);
        let rows = [
            row(&k1, &[("n", 1, b"007"), ("x", 1, &double_bytes(1.5))]),
            // No d:n: the key's canonical text, not the last row's value.
            row(&k2, &[("x", 1, &double_bytes(-2.0))]),
            row(b"j", &[("other", 1, b"b")]),
            row(&k1, &[("n", 1, b"007")]),
            // An error leaves nothing the next row sees.
            row(&k2, &[("n", 1, b"9"), ("x", 1, &double_bytes(-2.0))]),
            row(&k2, &[("x", 1, &double_bytes(-2.0))]),
        ];
        let mut rec = Record::default();
        let mut counts = RowCounts::default();
        for r in &rows {
            let fresh = decode(&d, r);
            let reused = d
                .decode(buffered(r).as_row_ref(), &mut rec, &mut counts)
                .map_err(|e| e.to_string())
                .map(|written| {
                    let values = if written { rec.values() } else { &[] };
                    values
                        .iter()
                        .map(|v| v.as_deref().map(to_string_binary).unwrap_or_default())
                        .collect::<Vec<_>>()
                });
            match (fresh, reused) {
                (Ok(f), Ok(r)) if f == r => {}
                (Err(f), Err(r)) => assert_eq!(f, r),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(decode(&d, &rows[1]).unwrap(), ["8", "-2"]);
    }

    #[test]
    fn sources_of_one_field_must_agree() {
        // t is the value of d:w and the timestamp of d:v.
        let cols =
            "[[column]]\nsource = \"v\"\ncell = \"d:v\"\ntype = \"int64\"\ntimestamp = \"t\"\n\
                    [[column]]\nsource = \"t\"\ncell = \"d:w\"\ntimestamp = 5\n";
        let d = decoder("id", cols);
        let ok = row(b"k", &[("v", 100, &long_bytes(-3)), ("w", 5, b"100")]);
        assert_eq!(decode(&d, &ok).unwrap(), ["k", "-3", "100"]);
        let bad = row(b"k", &[("v", 200, &long_bytes(-3)), ("w", 5, b"100")]);
        assert_eq!(
            decode(&d, &bad).unwrap_err(),
            "row 'k': field 't': column d:w gives '100', but the timestamp of column d:v is 200"
        );
        // Only the timestamp: it is the field's value.
        let r = row(b"k", &[("v", 200, &long_bytes(7))]);
        assert_eq!(decode(&d, &r).unwrap(), ["k", "7", "200"]);
        // Two string columns of one field.
        let cols = "[[column]]\nsource = \"a\"\ncell = \"d:p\"\ntimestamp = 1\n\
                    [[column]]\nsource = \"a\"\ncell = \"d:q\"\ntimestamp = 1\n";
        let d = decoder("id", cols);
        let r = row(b"k", &[("p", 1, b"one"), ("q", 1, b"two")]);
        assert_eq!(
            decode(&d, &r).unwrap_err(),
            "row 'k': field 'a': column d:p holds 'one', but column d:q holds 'two'"
        );
    }

    #[test]
    fn what_a_record_cannot_carry_is_an_error_or_counted() {
        let d = decoder("id", N_X);
        let r = row(b"k", &[("n", 1, b"")]);
        assert_eq!(
            decode(&d, &r).unwrap_err(),
            "row 'k': field 'n': cell d:n is empty, and an import writes no cell for an empty field"
        );
        let r = row(b"k", &[("x", 1, b"1.5")]);
        assert_eq!(
            decode(&d, &r).unwrap_err(),
            "row 'k': field 'x': cell d:x holds 3 bytes, not a double (8 bytes)"
        );
        let mut rec = Record::default();
        let mut counts = RowCounts::default();
        let r = row(b"k", &[("n", 2, b"a"), ("other", 1, b"b")]);
        assert!(d
            .decode(buffered(&r).as_row_ref(), &mut rec, &mut counts)
            .unwrap());
        let r = row(b"j", &[("other", 1, b"b")]);
        assert!(!d
            .decode(buffered(&r).as_row_ref(), &mut rec, &mut counts)
            .unwrap());
        assert_eq!(
            counts,
            RowCounts {
                rows: 1,
                cells: 1,
                rows_skipped: 1,
                unmapped_cells: 2,
                untimed_cells: 1,
            }
        );
    }
}
