//! Values as the table's schema typed them (formats/table.md §"Typed values"): a table created
//! from a schema keeps the value type of each `[[column]]` with a fixed qualifier and a type
//! other than `string` (the manifest's `columns`), and `get` and `scan` show such a column's
//! values decoded, as the import read them (`int64` as a decimal number, `boolean` as
//! `true`/`false`, `hex` as hex, ...; JSON gets numbers and booleans), instead of HBase's
//! `Bytes.toStringBinary` text, and so do CSV cell exports (`crate::cell_export`).
//! `--raw-values` shows every value as stored. A value that is not one of its type (a wrong
//! length, written by another tool) is shown as stored.

use std::collections::HashMap;

use serde_json::Value;

use hfkit_format::cell::CellRef;
use hfkit_table::manifest::Manifest;
use hfkit_table::{to_bytes_binary, ValueType};

/// The typed columns of a table: family → qualifier → type.
#[derive(Default)]
pub struct ColumnTypes {
    families: HashMap<Vec<u8>, HashMap<Vec<u8>, ValueType>>,
}

impl ColumnTypes {
    /// The table's typed columns; none with `raw` (`--raw-values`).
    pub fn of(m: &Manifest, raw: bool) -> ColumnTypes {
        let mut t = ColumnTypes::default();
        if raw {
            return t;
        }
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

    /// The value of `c` as its column's type shows it, when it is typed and of its type.
    pub fn text(&self, c: &CellRef<'_>) -> Option<String> {
        decoded(self.type_of(c)?, c)
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
    String::from_utf8(crate::value::decode_value(ty, c.value)?).ok()
}
