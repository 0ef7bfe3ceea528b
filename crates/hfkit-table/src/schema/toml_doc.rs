//! The TOML schema file's structure as serde types that keep spans ([`toml::Spanned`]): the
//! sections and their keys (`#[serde(deny_unknown_fields)]`), the type of every value, and
//! [`located`], which turns a `toml::de::Error` into a [`SchemaError`] at the error's exact
//! position, naming the key (from the document's key path at that position) and what was
//! expected. Unknown keys and wrong types are found by serde and toml; what the values mean is
//! checked by [`super::toml_form`]. Prose: `formats/schema.md` §"Sections".

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Unexpected};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::attributes::AttrValue;
use crate::error::{At, SchemaError};

/// A whole schema file.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub(super) struct SchemaDoc {
    pub table: Option<Spanned<TableSection>>,
    pub family: Option<Tables<FamilySection>>,
    pub splits: Option<Spanned<SplitsSection>>,
    pub rowkey: Option<RowkeySection>,
    pub column: Option<Tables<ColumnSection>>,
    pub index: Option<Tables<IndexSection>>,
    pub operation: Option<Spanned<OperationSection>>,
    pub explode: Option<Spanned<ExplodeSection>>,
}

/// `[explode]`: a list field whose items each make a record of their own.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub(super) struct ExplodeSection {
    pub field: Option<String>,
    pub delimiter: Option<Spanned<String>>,
}

/// `[splits]` and `[index.splits]`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub(super) struct SplitsSection {
    pub keys: Option<Spanned<KeyList>>,
    pub file: Option<Spanned<String>>,
    pub algorithm: Option<Spanned<String>>,
    pub regions: Option<Count>,
    pub first_row: Option<String>,
    pub last_row: Option<String>,
    pub sample: Option<Spanned<Count>>,
}

/// `[rowkey]`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub(super) struct RowkeySection {
    pub spec: Option<Spanned<String>>,
    pub timestamp_format: Option<Spanned<String>>,
}

/// One `[[column]]`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub(super) struct ColumnSection {
    pub source: Option<String>,
    pub cell: Option<Spanned<String>>,
    #[serde(rename = "type")]
    pub value_type: Option<Spanned<String>>,
    pub timestamp: Option<Timestamp>,
    pub timestamp_format: Option<Spanned<String>>,
    pub ttl: Option<Timestamp>,
}

/// `[operation]`: the field that says whether a record writes cells or deletes them.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub(super) struct OperationSection {
    pub field: Option<Spanned<String>>,
    pub put: Option<Vec<String>>,
    pub timestamp: Option<Timestamp>,
    pub timestamp_format: Option<Spanned<String>>,
    pub delete: Option<Tables<DeleteSection>>,
}

/// One `[[operation.delete]]`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub(super) struct DeleteSection {
    pub value: Option<String>,
    pub scope: Option<Spanned<String>>,
    pub families: Option<Vec<Spanned<String>>>,
    pub cells: Option<Vec<Spanned<String>>>,
}

/// One `[[index]]`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub(super) struct IndexSection {
    pub name: Option<Spanned<String>>,
    pub rowkey: Option<Spanned<String>>,
    pub cell: Option<Spanned<String>>,
    pub timestamp: Option<Timestamp>,
    pub timestamp_format: Option<Spanned<String>>,
    pub family: Option<Spanned<FamilySection>>,
    pub splits: Option<Spanned<SplitsSection>>,
}

/// The keys of a section that refuses unknown ones, as its "unknown key" message lists them:
/// `None` for a path that is no such section.
fn section_keys(section: &[Seg<'_>]) -> Option<&'static str> {
    let keys: Vec<&str> = section
        .iter()
        .filter_map(|s| match s {
            Seg::Key(k, _) => Some(*k),
            Seg::Index(_) => None,
        })
        .collect();
    // The sections under a `[[table]]` take the keys they take at the top level.
    let keys = match keys.as_slice() {
        ["table", rest @ ..] if !rest.is_empty() => rest,
        all => all,
    };
    Some(match keys {
        [] => {
            "[table], [[family]], [splits], [rowkey], [[column]], [[index]], [operation], [explode]"
        }
        ["explode"] => "field, delimiter",
        ["splits"] | ["index", "splits"] => {
            "keys, file, algorithm, regions, first_row, last_row or sample"
        }
        ["rowkey"] => "spec, timestamp_format",
        ["column"] => "source, cell, type, timestamp, timestamp_format, ttl",
        ["operation"] => "field, put, timestamp, timestamp_format, [[operation.delete]]",
        ["operation", "delete"] => "value, scope, families, cells",
        ["index"] => {
            "name, rowkey, cell, timestamp, timestamp_format, [index.family], [index.splits]"
        }
        _ => return None,
    })
}

/// A table of HBase attributes: `[table]` or a family (`[[family]]`, `[index.family]`).
/// Attribute names are matched case-insensitively later, so they are kept in document order
/// with their spans; `METADATA` and `CONFIGURATION` (any case) are tables of scalars.
#[derive(Default)]
pub(super) struct AttrSection {
    /// `name`.
    pub name: Option<Spanned<String>>,
    /// A family's `NAME`, used when there is no `name`.
    pub upper_name: Option<Spanned<String>>,
    pub attributes: Vec<(Spanned<String>, AttrValue)>,
    pub metadata: Option<BTreeMap<String, String>>,
    pub configuration: Option<BTreeMap<String, String>>,
}

impl AttrSection {
    /// Replaces `metadata` and `configuration` with the section's, where it gives them.
    pub fn maps_into(
        &self,
        metadata: &mut BTreeMap<String, String>,
        configuration: &mut BTreeMap<String, String>,
    ) {
        if let Some(m) = &self.metadata {
            metadata.clone_from(m);
        }
        if let Some(c) = &self.configuration {
            configuration.clone_from(c);
        }
    }
}

/// `[table]`: `name` (lower-case only; `NAME` is an unknown table attribute), attributes.
pub(super) struct TableSection(pub AttrSection);

/// A family: `name` or `NAME` (other spellings of it are ignored), attributes.
pub(super) struct FamilySection(pub AttrSection);

struct AttrSectionVisitor {
    family: bool,
}

impl<'de> de::Visitor<'de> for AttrSectionVisitor {
    type Value = AttrSection;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AttrSection, A::Error> {
        let mut s = AttrSection::default();
        while let Some(key) = map.next_key::<Spanned<String>>()? {
            self.entry(&mut s, key, &mut map)?;
        }
        Ok(s)
    }
}

impl AttrSectionVisitor {
    /// Reads the value of `key`, one entry of an attribute section, into `s`.
    fn entry<'de, A: MapAccess<'de>>(
        &self,
        s: &mut AttrSection,
        key: Spanned<String>,
        map: &mut A,
    ) -> Result<(), A::Error> {
        let k = key.get_ref().as_str();
        if is_datetime_key(k) {
            return Err(de::Error::invalid_type(
                Unexpected::Other("datetime"),
                &"a table",
            ));
        }
        match k.to_ascii_uppercase().as_str() {
            _ if k == "name" => s.name = Some(map.next_value()?),
            "NAME" if self.family && k == "NAME" => s.upper_name = Some(map.next_value()?),
            "NAME" if self.family => {
                map.next_value::<IgnoredAny>()?;
            }
            "METADATA" => s.metadata = Some(map.next_value::<StringMap>()?.0),
            "CONFIGURATION" => s.configuration = Some(map.next_value::<StringMap>()?.0),
            _ => {
                let value = map.next_value()?;
                s.attributes.push((key, value));
            }
        }
        Ok(())
    }
}

/// A schema file of several target tables (`formats/schema.md` §"Several tables from one
/// input"): nothing but `[[table]]` sections.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub(super) struct TargetsDoc {
    pub table: Tables<TargetSection>,
}

/// One `[[table]]`: its `name` and table attributes, as `[table]`, and under it every section
/// a one-table schema has at its top level (`[[table.family]]`, `[table.rowkey]`, ...),
/// kept as a [`SchemaDoc`] of its own.
pub(super) struct TargetSection(pub SchemaDoc);

impl<'de> Deserialize<'de> for TargetSection {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = TargetSection;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TargetSection, A::Error> {
                let attrs = AttrSectionVisitor { family: false };
                let mut t = AttrSection::default();
                let mut doc = SchemaDoc {
                    table: None,
                    family: None,
                    splits: None,
                    rowkey: None,
                    column: None,
                    index: None,
                    operation: None,
                    explode: None,
                };
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    match key.get_ref().as_str() {
                        "family" => doc.family = Some(map.next_value()?),
                        "splits" => doc.splits = Some(map.next_value()?),
                        "rowkey" => doc.rowkey = Some(map.next_value()?),
                        "column" => doc.column = Some(map.next_value()?),
                        "index" => doc.index = Some(map.next_value()?),
                        "operation" => doc.operation = Some(map.next_value()?),
                        "explode" => doc.explode = Some(map.next_value()?),
                        _ => attrs.entry(&mut t, key, &mut map)?,
                    }
                }
                // The span is set by the reader, which knows where the section starts.
                doc.table = Some(Spanned::new(0..0, TableSection(t)));
                Ok(TargetSection(doc))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for TableSection {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(AttrSectionVisitor { family: false })
            .map(TableSection)
    }
}

impl<'de> Deserialize<'de> for FamilySection {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(AttrSectionVisitor { family: true })
            .map(FamilySection)
    }
}

/// toml hands a datetime to a visitor as a map with one private key: a datetime given where a
/// table belongs must be refused, not read as a table.
fn is_datetime_key(key: &str) -> bool {
    key.starts_with("$__toml_private")
}

/// `METADATA` / `CONFIGURATION`: a table of scalars, kept as strings.
struct StringMap(BTreeMap<String, String>);

impl<'de> Deserialize<'de> for StringMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = StringMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StringMap, A::Error> {
                let mut m = BTreeMap::new();
                while let Some(k) = map.next_key::<String>()? {
                    if is_datetime_key(&k) {
                        return Err(de::Error::invalid_type(
                            Unexpected::Other("datetime"),
                            &self,
                        ));
                    }
                    let v: AttrValue = map.next_value()?;
                    m.insert(k, v.as_plain_string());
                }
                Ok(StringMap(m))
            }
        }
        d.deserialize_map(V)
    }
}

/// An attribute value: a string, an integer (within `i64`) or a boolean.
impl<'de> Deserialize<'de> for AttrValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = AttrValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, integer or boolean")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<AttrValue, E> {
                Ok(AttrValue::Str(s.to_string()))
            }
            fn visit_i64<E: de::Error>(self, i: i64) -> Result<AttrValue, E> {
                Ok(AttrValue::Int(i))
            }
            fn visit_u64<E: de::Error>(self, u: u64) -> Result<AttrValue, E> {
                i64::try_from(u)
                    .map(AttrValue::Int)
                    .map_err(|_| E::invalid_value(Unexpected::Unsigned(u), &IN_I64))
            }
            fn visit_i128<E: de::Error>(self, _: i128) -> Result<AttrValue, E> {
                Err(E::invalid_value(Unexpected::Other("integer"), &IN_I64))
            }
            fn visit_u128<E: de::Error>(self, _: u128) -> Result<AttrValue, E> {
                Err(E::invalid_value(Unexpected::Other("integer"), &IN_I64))
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<AttrValue, E> {
                Ok(AttrValue::Bool(b))
            }
        }
        d.deserialize_any(V)
    }
}

const IN_I64: &str = "an integer within the range of a 64-bit signed integer";

/// A count (`regions`, `sample`): a non-negative integer.
pub(super) struct Count(pub usize);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative integer")
            }
            fn visit_i64<E: de::Error>(self, i: i64) -> Result<Count, E> {
                usize::try_from(i)
                    .map(Count)
                    .map_err(|_| E::invalid_value(Unexpected::Signed(i), &self))
            }
            fn visit_u64<E: de::Error>(self, u: u64) -> Result<Count, E> {
                usize::try_from(u)
                    .map(Count)
                    .map_err(|_| E::invalid_value(Unexpected::Unsigned(u), &self))
            }
            fn visit_i128<E: de::Error>(self, _: i128) -> Result<Count, E> {
                Err(E::invalid_value(Unexpected::Other("integer"), &self))
            }
            fn visit_u128<E: de::Error>(self, _: u128) -> Result<Count, E> {
                Err(E::invalid_value(Unexpected::Other("integer"), &self))
            }
        }
        d.deserialize_any(V)
    }
}

/// `[splits] keys`: an array of strings, each with its position.
pub(super) struct KeyList(pub Vec<Spanned<String>>);

impl<'de> Deserialize<'de> for KeyList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = KeyList;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of strings")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<KeyList, A::Error> {
                let mut keys = Vec::new();
                while let Some(k) = seq.next_element()? {
                    keys.push(k);
                }
                Ok(KeyList(keys))
            }
        }
        d.deserialize_seq(V)
    }
}

/// `[[name]]`: an array of tables, each with its position.
pub(super) struct Tables<T>(pub Vec<Spanned<T>>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Tables<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> de::Visitor<'de> for V<T> {
            type Value = Tables<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of tables")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tables<T>, A::Error> {
                let mut items = Vec::new();
                while let Some(t) = seq.next_element()? {
                    items.push(t);
                }
                Ok(Tables(items))
            }
        }
        d.deserialize_seq(V(PhantomData))
    }
}

/// `timestamp`: epoch milliseconds (a non-negative integer) or a field name (a non-empty
/// string).
pub(super) enum Timestamp {
    Fixed(i64),
    Field(String),
}

const TIMESTAMP_RANGE: &str = "in 0..=i64::MAX";

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Timestamp;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("epoch milliseconds (integer) or a field name (string)")
            }
            fn visit_i64<E: de::Error>(self, i: i64) -> Result<Timestamp, E> {
                if i < 0 {
                    return Err(E::invalid_value(Unexpected::Signed(i), &TIMESTAMP_RANGE));
                }
                Ok(Timestamp::Fixed(i))
            }
            fn visit_u64<E: de::Error>(self, u: u64) -> Result<Timestamp, E> {
                i64::try_from(u)
                    .map(Timestamp::Fixed)
                    .map_err(|_| E::invalid_value(Unexpected::Unsigned(u), &TIMESTAMP_RANGE))
            }
            fn visit_i128<E: de::Error>(self, _: i128) -> Result<Timestamp, E> {
                Err(E::invalid_value(
                    Unexpected::Other("integer"),
                    &TIMESTAMP_RANGE,
                ))
            }
            fn visit_u128<E: de::Error>(self, _: u128) -> Result<Timestamp, E> {
                Err(E::invalid_value(
                    Unexpected::Other("integer"),
                    &TIMESTAMP_RANGE,
                ))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Timestamp, E> {
                if s.is_empty() {
                    return Err(E::invalid_value(Unexpected::Str(s), &self));
                }
                Ok(Timestamp::Field(s.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

// ---------------------------------------------------------------------------------------------
// Errors

/// One step of the path to a place in the document: a key or an array index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seg<'a> {
    /// A key and the byte offset where it is written.
    Key(&'a str, usize),
    Index(usize),
}

/// The path to the innermost key or value of `table` whose span holds `offset`, and the value
/// (of that key).
fn find_in_table<'a, 'i>(
    table: &'a DeTable<'i>,
    offset: usize,
    path: &mut Vec<Seg<'a>>,
) -> Option<&'a DeValue<'i>> {
    for (k, v) in table.iter() {
        path.push(Seg::Key(k.get_ref().as_ref(), k.span().start));
        if k.span().contains(&offset) {
            return Some(v.get_ref());
        }
        if let Some(found) = find_in_value(v, offset, path) {
            return Some(found);
        }
        path.pop();
    }
    None
}

fn find_in_value<'a, 'i>(
    v: &'a Spanned<DeValue<'i>>,
    offset: usize,
    path: &mut Vec<Seg<'a>>,
) -> Option<&'a DeValue<'i>> {
    let inner = match v.get_ref() {
        DeValue::Table(t) => find_in_table(t, offset, path),
        DeValue::Array(a) => a.iter().enumerate().find_map(|(i, item)| {
            path.push(Seg::Index(i));
            let found = find_in_value(item, offset, path);
            if found.is_none() {
                path.pop();
            }
            found
        }),
        _ => None,
    };
    inner.or_else(|| v.span().contains(&offset).then(|| v.get_ref()))
}

/// Where the key of the value written at `value_offset` is written (`value_offset` itself when
/// it is no value of a key).
pub(super) fn key_offset(root: &DeTable<'_>, value_offset: usize) -> usize {
    let mut path = Vec::new();
    find_in_table(root, value_offset, &mut path);
    match path.last() {
        Some(Seg::Key(_, offset)) => *offset,
        _ => value_offset,
    }
}

/// `[table]`, `[[family]]`, `[index.splits]`: the section `path` leads to.
fn section_label(path: &[Seg<'_>]) -> String {
    let keys: Vec<&str> = path
        .iter()
        .filter_map(|s| match s {
            Seg::Key(k, _) => Some(*k),
            Seg::Index(_) => None,
        })
        .collect();
    match path.last() {
        Some(Seg::Index(_)) => format!("[[{}]]", keys.join(".")),
        _ => format!("[{}]", keys.join(".")),
    }
}

/// `[splits] regions`, `[splits] keys[1]`, `[[family]]`: the item `path` leads to.
fn item_label(path: &[Seg<'_>]) -> String {
    let Some(key_at) = path.iter().rposition(|s| matches!(s, Seg::Key(..))) else {
        return "the schema".into();
    };
    if key_at == 0 {
        // A top-level section given as something else.
        return section_label(path);
    }
    let mut label = format!("{} ", section_label(&path[..key_at]));
    for s in &path[key_at..] {
        match s {
            Seg::Key(k, _) => label.push_str(k),
            Seg::Index(i) => label.push_str(&format!("[{i}]")),
        }
    }
    label
}

/// TOML's name of a value's type.
fn toml_type(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "string",
        DeValue::Integer(_) => "integer",
        DeValue::Float(_) => "float",
        DeValue::Boolean(_) => "boolean",
        DeValue::Datetime(_) => "datetime",
        DeValue::Array(_) => "array",
        DeValue::Table(_) => "table",
    }
}

/// The `expected` part of serde's `invalid type: ..., expected E` / `invalid value: ...`.
fn expected_of<'m>(message: &'m str, prefix: &str) -> Option<&'m str> {
    let rest = message.strip_prefix(prefix)?;
    let at = rest.rfind(", expected ")?;
    Some(&rest[at + ", expected ".len()..])
}

/// The [`SchemaError`] for an error of deserializing `root` into a [`SchemaDoc`]: at the error's
/// position (`at` turns a byte offset into a place), naming the key or value there.
pub(super) fn located(
    e: &toml::de::Error,
    root: &DeTable<'_>,
    at: impl Fn(usize) -> At,
) -> SchemaError {
    let offset = e.span().map_or(0, |s| s.start);
    let mut path = Vec::new();
    let value = find_in_table(root, offset, &mut path);
    let message = e.message();
    let at = at(offset);
    let item = item_label(&path);
    if let Some(field) = message.strip_prefix("unknown field `") {
        if matches!(value, Some(DeValue::Datetime(_))) {
            // A datetime where a section belongs (toml shows it as a map with a private key).
            return SchemaError::WrongValue {
                at,
                item,
                expected: "a table".into(),
                found: Some("datetime"),
            };
        }
        if let Some((Seg::Key(key, _), section)) = path.split_last() {
            let expected = section_keys(section).filter(|_| field.starts_with(&format!("{key}`")));
            if let Some(expected) = expected {
                return SchemaError::UnknownKey {
                    at,
                    key: key.to_string(),
                    section: (!section.is_empty()).then(|| section_label(section)),
                    expected,
                };
            }
        }
    }
    if let Some(expected) = expected_of(message, "invalid type: ") {
        return SchemaError::WrongValue {
            at,
            item,
            expected: expected.to_string(),
            found: value.map(toml_type),
        };
    }
    if let Some(expected) = expected_of(message, "invalid value: ") {
        return SchemaError::WrongValue {
            at,
            item,
            expected: expected.to_string(),
            found: None,
        };
    }
    SchemaError::Syntax {
        at,
        message: format!("{item}: {message}"),
    }
}

#[cfg(test)]
mod tests;
