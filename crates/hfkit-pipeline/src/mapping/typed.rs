//! Values as the table's schema typed them (formats/table.md §"Typed values"): a table created
//! from a schema keeps the value type of each `[[column]]` with a fixed qualifier and a type
//! other than `string` (the manifest's `columns`), and `get` and `scan` show such a column's
//! values decoded, as the import read them (`int64` as a decimal number, `boolean` as
//! `true`/`false`, `hex` as hex, ...; JSON gets numbers and booleans), instead of HBase's
//! `Bytes.toStringBinary` text, and so do CSV cell exports (`crate::export::cells`).
//! `--raw-values` shows every value as stored. A value that is not one of its type (a wrong
//! length, written by another tool) is shown as stored. A table also keeps its `[rowkey]
//! spec` (the manifest's `rowkey`), whose inverse (`formats/rowkey.md` §"Inverting a spec")
//! gives a row key's fields back.

/// The maps a cell's column is looked up in, once per cell shown or exported: aHash, where
/// `std`'s SipHash took a fifth of a CSV cell export of a typed table.
type HashMap<K, V> = std::collections::HashMap<K, V, ahash::RandomState>;

use serde_json::Value;

use crate::mapping::rowkey::{RowkeyInverse, RowkeySpec};
use hfkit_format::cell::CellRef;
use hfkit_table::manifest::Manifest;
use hfkit_table::{to_bytes_binary, ValueType};

/// The typed columns of a table: family → qualifier → type; and its row key spec's inverse.
#[derive(Default)]
pub struct ColumnTypes {
    families: HashMap<Vec<u8>, HashMap<Vec<u8>, ValueType>>,
    /// The inverse of the table's `[rowkey] spec` (`Manifest::rowkey`), when it has one that
    /// inverts from the key alone.
    rowkey: Option<RowkeyInverse>,
}

impl ColumnTypes {
    /// The table's typed columns; none with `raw` (`--raw-values`).
    pub fn of(m: &Manifest, raw: bool) -> ColumnTypes {
        let mut t = ColumnTypes::default();
        if raw {
            return t;
        }
        t.rowkey = m
            .rowkey
            .as_deref()
            .and_then(|spec| RowkeySpec::parse(spec).ok())
            .and_then(|spec| spec.inverse(&[]).ok());
        for (column, ty) in &m.columns {
            let Some((family, qualifier)) = column.split_once(':') else {
                continue;
            };
            let Ok(qualifier) = to_bytes_binary(qualifier) else {
                continue;
            };
            t.families
                .entry(family.as_bytes().to_vec())
                .or_default()
                .insert(qualifier, *ty);
        }
        t
    }

    fn type_of(&self, c: &CellRef<'_>) -> Option<ValueType> {
        if self.families.is_empty() {
            return None;
        }
        self.families.get(c.family)?.get(c.qualifier).copied()
    }

    /// The fields of row key `key` as its spec's inverse gives them back (name, text), in the
    /// spec's order; `None` when the table keeps no invertible spec or `key` is not one of it
    /// (written by another tool: the fields must encode to exactly `key`).
    pub fn row_fields(&self, key: &[u8]) -> Option<Vec<(String, String)>> {
        let inv = self.rowkey.as_ref()?;
        let mut fields = inv.fields();
        let deferred = inv.decode(key, &mut fields).ok()?;
        inv.verify(key, &deferred, &fields.values).ok()?;
        let names = inv.spec().fields().iter().cloned();
        names
            .zip(fields.values)
            .map(|(n, v)| v.map(|v| (n, String::from_utf8_lossy(&v).into_owned())))
            .collect()
    }

    /// The value of `c` as its column's type shows it, when it is typed and of its type.
    pub fn text(&self, c: &CellRef<'_>) -> Option<String> {
        decoded(self.type_of(c)?, c)
    }

    /// [`ColumnTypes::text`] appended to `out` (a buffer the caller keeps from cell to cell),
    /// and handed back as text; `None`, and `out` as it was, when `c` is not typed or not of
    /// its type.
    pub fn push_text<'b>(&self, c: &CellRef<'_>, out: &'b mut Vec<u8>) -> Option<&'b str> {
        let ty = self.type_of(c)?;
        let start = out.len();
        crate::mapping::value::decode_value_into(ty, c.value, out)?;
        if std::str::from_utf8(&out[start..]).is_err() {
            out.truncate(start);
            return None;
        }
        std::str::from_utf8(&out[start..]).ok()
    }

    /// The value of `c` as JSON: a number or a boolean for those types, else text; `None`
    /// when it is not typed (or not of its type).
    pub fn json(&self, c: &CellRef<'_>) -> Option<Value> {
        let ty = self.type_of(c)?;
        let text = decoded(ty, c)?;
        Some(match ty {
            ValueType::Int64 | ValueType::Int32 | ValueType::Int16 => text
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or(Value::String(text)),
            ValueType::Double | ValueType::Float32 => text
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .unwrap_or(Value::String(text)),
            ValueType::Boolean => Value::Bool(text == "true"),
            _ => Value::String(text),
        })
    }
}

/// The value of `c` as text of type `ty`; `None` when it is not a value of the type.
fn decoded(ty: ValueType, c: &CellRef<'_>) -> Option<String> {
    String::from_utf8(crate::mapping::value::decode_value(ty, c.value)?).ok()
}
