//! The import mapping a TOML schema carries for the import pipeline: the rowkey spec,
//! [`ColumnMapping`]s (input field → cell, value type, timestamp source) and [`IndexSchema`]s
//! (index tables written in the same run). Specs are kept as text with their [`Location`];
//! the pipeline compiles them. Prose: `formats/schema.md` §"Import mapping" and §"Index tables".

use super::attributes::FamilySchema;
use super::table::TableSchema;
use crate::error::Location;

/// A schema with what came with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedSchema {
    pub table: TableSchema,
    /// Rowkey spec and column mappings (empty for the shell form).
    pub mapping: ImportMapping,
    /// Things HBase would accept but that deserve a look (more than 3 families, a family
    /// defined twice in the shell, the system namespace).
    pub warnings: Vec<String>,
}

/// Type of an input field stored as a cell value (`formats/rowkey.md` §"Cell values"); named
/// as the schema's `type` names it (also in a table's manifest, `columns`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    #[default]
    String,
    Int64,
    Double,
    Int16,
    Int32,
    Float32,
    Boolean,
    /// HBase's `Bytes.toBytes(BigDecimal)`.
    BigDecimal,
    /// Raw bytes spelled in hex.
    Hex,
    /// Raw bytes spelled in base64 (RFC 4648, padded).
    Base64,
}

impl ValueType {
    /// The names `type` takes, for messages.
    pub const NAMES: &'static str =
        "string, int64, double, int16, int32, float32, boolean, bigdecimal, hex or base64";

    pub fn from_name(s: &str) -> Option<ValueType> {
        match s {
            "string" => Some(ValueType::String),
            "int64" => Some(ValueType::Int64),
            "double" => Some(ValueType::Double),
            "int16" => Some(ValueType::Int16),
            "int32" => Some(ValueType::Int32),
            "float32" => Some(ValueType::Float32),
            "boolean" => Some(ValueType::Boolean),
            "bigdecimal" => Some(ValueType::BigDecimal),
            "hex" => Some(ValueType::Hex),
            "base64" => Some(ValueType::Base64),
            _ => None,
        }
    }

    /// The name `type` gives it (the inverse of [`ValueType::from_name`]).
    pub fn name(self) -> &'static str {
        match self {
            ValueType::String => "string",
            ValueType::Int64 => "int64",
            ValueType::Double => "double",
            ValueType::Int16 => "int16",
            ValueType::Int32 => "int32",
            ValueType::Float32 => "float32",
            ValueType::Boolean => "boolean",
            ValueType::BigDecimal => "bigdecimal",
            ValueType::Hex => "hex",
            ValueType::Base64 => "base64",
        }
    }
}

/// Where a cell's timestamp comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum TimestampSource {
    /// One timestamp for the whole import, chosen when it starts.
    #[default]
    ImportTime,
    /// A fixed value in epoch milliseconds.
    Fixed(i64),
    /// An input field holding epoch milliseconds as decimal text.
    Field(String),
}

/// One `[[column]]`: an input field stored as a cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnMapping {
    /// Input field name.
    pub source: String,
    /// Family (one of the table's) and qualifier of the cell.
    pub family: String,
    /// The qualifier; for a template, its text as written (for messages).
    pub qualifier: Vec<u8>,
    /// A qualifier taken from the record (`cell = "d:{tag}"`): its parts, in order; `None`
    /// for a fixed qualifier.
    pub qualifier_template: Option<Vec<QualifierPart>>,
    pub value_type: ValueType,
    pub timestamp: TimestampSource,
    /// How a [`TimestampSource::Field`] is read: `epoch_ms` (when `None`), `epoch_s` or a
    /// strftime format; kept as text, compiled by the import pipeline.
    pub timestamp_format: Option<String>,
    /// `ttl`: the cell's time to live in milliseconds, written as HBase's TTL tag (type 8);
    /// `None`: no tag (the family's TTL alone applies).
    pub ttl: Option<TtlSource>,
    /// Where it was written, for messages.
    pub location: Option<Location>,
}

/// A part of a qualifier template (`cell = "d:tag_{tag}"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QualifierPart {
    Literal(Vec<u8>),
    /// The bytes of this input field.
    Field(String),
}

impl QualifierPart {
    /// Parses a qualifier: `{field}` names a field, `{{` and `}}` are literal braces. `None`
    /// parts for a qualifier without a field (then the literal, unescaped, is the second
    /// value); an error names what is wrong.
    pub fn parse(text: &str) -> Result<(Option<Vec<QualifierPart>>, Vec<u8>), String> {
        let mut parts = Vec::new();
        let mut literal = Vec::new();
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' if chars.peek().map(|p| p.1) == Some('{') => {
                    chars.next();
                    literal.push(b'{');
                }
                '}' if chars.peek().map(|p| p.1) == Some('}') => {
                    chars.next();
                    literal.push(b'}');
                }
                '{' => {
                    let rest = &text[i + 1..];
                    let Some(end) = rest.find('}') else {
                        return Err(format!(
                            "qualifier '{text}': '{{' at character {} is not closed (write {{{{ for a brace)",
                            i + 1
                        ));
                    };
                    let name = &rest[..end];
                    if name.is_empty() || name.contains('{') {
                        return Err(format!(
                            "qualifier '{text}': expected a field name between '{{' and '}}'"
                        ));
                    }
                    if !literal.is_empty() {
                        parts.push(QualifierPart::Literal(std::mem::take(&mut literal)));
                    }
                    parts.push(QualifierPart::Field(name.to_string()));
                    for _ in 0..name.chars().count() + 1 {
                        chars.next();
                    }
                }
                '}' => {
                    return Err(format!(
                    "qualifier '{text}': '}}' at character {} has no '{{' (write }}}} for a brace)",
                    i + 1
                ))
                }
                c => {
                    let mut buf = [0u8; 4];
                    literal.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        if parts.is_empty() {
            return Ok((None, literal));
        }
        if !literal.is_empty() {
            parts.push(QualifierPart::Literal(literal));
        }
        Ok((Some(parts), text.as_bytes().to_vec()))
    }
}

/// Where a cell's TTL tag comes from (`[[column]] ttl`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TtlSource {
    /// A fixed TTL in milliseconds.
    Fixed(i64),
    /// An input field holding milliseconds as decimal text (empty: no tag).
    Field(String),
}

/// What a delete record removes (`[[operation.delete]] scope`), at the record's timestamp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeleteScope {
    /// The whole row: a DeleteFamily marker in every family of the table.
    Row,
    /// These families (every family of the table when empty): a DeleteFamily marker in each.
    Families(Vec<String>),
    /// Every version (at or before the timestamp) of these cells (`family`, `qualifier`): a
    /// DeleteColumn marker each. Empty: the mapped cells whose fields the record fills.
    Columns(Vec<(String, Vec<u8>)>),
    /// The version at the timestamp of these cells: a Delete marker each. Empty: as `Columns`.
    Version(Vec<(String, Vec<u8>)>),
}

/// One `[[operation.delete]]`: the operation value and what it deletes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeleteAction {
    pub value: String,
    pub scope: DeleteScope,
}

/// `[operation]`: an input field whose value says, per record, whether it writes its cells
/// (`put` values) or writes delete markers (`deletes`). Any other value rejects the record.
/// Prose: `formats/schema.md` §"Changes from input".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperationMapping {
    pub field: String,
    pub put: Vec<String>,
    pub deletes: Vec<DeleteAction>,
    /// The delete markers' timestamp (the import time by default).
    pub timestamp: TimestampSource,
    pub timestamp_format: Option<String>,
    pub location: Option<Location>,
}

/// One `[[index]]`: an index table written in the same import run. Each record whose index
/// fields are all non-empty (and that writes at least one main cell) gives one index cell: row
/// = the index rowkey spec, `family:qualifier` = [`IndexSchema::qualifier`] in the index table's
/// only family, value = the main row key. Prose: `formats/schema.md` §"Index tables".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexSchema {
    /// The index table: its name, its one family (with attributes) and its splits.
    pub table: TableSchema,
    /// Rowkey spec of the index rows (text, parsed by the pipeline).
    pub rowkey: String,
    pub rowkey_location: Option<Location>,
    /// Qualifier of the index cell (in `table.families[0]`).
    pub qualifier: Vec<u8>,
    pub timestamp: TimestampSource,
    /// As [`ColumnMapping::timestamp_format`].
    pub timestamp_format: Option<String>,
    /// Where the `[[index]]` was written, for messages.
    pub location: Option<Location>,
}

impl IndexSchema {
    /// The index table's full name (`ns:qualifier`, or the qualifier in `default`).
    pub fn full_name(&self) -> String {
        self.table.full_name()
    }

    /// The family of the index cell.
    pub fn family(&self) -> &FamilySchema {
        &self.table.families[0]
    }
}

/// How input records become cells: the rowkey spec (text, parsed by the pipeline) and columns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportMapping {
    pub rowkey: Option<String>,
    pub rowkey_location: Option<Location>,
    /// `[rowkey] timestamp_format`: how `reverse_ts` and `bucket` read their input (default
    /// epoch ms); kept as text like the spec.
    pub rowkey_timestamp_format: Option<(String, Location)>,
    pub columns: Vec<ColumnMapping>,
    /// `[[index]]` tables written in the same run.
    pub indexes: Vec<IndexSchema>,
    /// `[operation]`: records that delete as well as records that write.
    pub operation: Option<OperationMapping>,
    /// `[explode]`: several records (rows, cells) from one input record.
    pub explode: Option<ExplodeMapping>,
}

impl ImportMapping {
    /// What a table created from this mapping keeps of it for reads (`TableSetup`): its
    /// typed columns ([`ImportMapping::column_types`]) and its row key spec, by whose inverse
    /// reads show a key's fields (not kept when the spec reads timestamps in a format of its
    /// own, which the inverse would need too).
    pub fn kept_for_reads(
        &self,
    ) -> (
        std::collections::BTreeMap<String, ValueType>,
        Option<String>,
    ) {
        let rowkey = match self.rowkey_timestamp_format {
            None => self.rowkey.clone(),
            Some(_) => None,
        };
        (self.column_types(), rowkey)
    }

    /// The typed columns the mapping writes: `family:qualifier` (the qualifier as
    /// toStringBinary text) of each `[[column]]` with a fixed qualifier and a type other than
    /// `string`, so that reads can show their values as the schema typed them. A column mapped
    /// twice with two types is left out (its values are not of one type).
    pub fn column_types(&self) -> std::collections::BTreeMap<String, ValueType> {
        let mut out = std::collections::BTreeMap::new();
        let mut mixed = std::collections::BTreeSet::new();
        for c in self
            .columns
            .iter()
            .filter(|c| c.qualifier_template.is_none())
        {
            let name = format!("{}:{}", c.family, crate::to_string_binary(&c.qualifier));
            match out.insert(name.clone(), c.value_type) {
                Some(t) if t != c.value_type => {
                    mixed.insert(name);
                }
                _ => {}
            }
        }
        out.retain(|k, t| *t != ValueType::String && !mixed.contains(k));
        out
    }
}

/// `[explode]`: the input field holding a list, split on `delimiter`; each item makes a record
/// of its own, the record with `field` replaced by the item. Prose: `formats/schema.md`
/// §"Several rows or cells from one record".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExplodeMapping {
    pub field: String,
    pub delimiter: Vec<u8>,
    pub location: Option<Location>,
}

#[cfg(test)]
mod tests {
    use super::QualifierPart::{self, Field, Literal};
    use super::ValueType;

    #[test]
    fn value_type_names_are_the_schemas_and_the_manifests() {
        for name in ValueType::NAMES.replace(" or ", ", ").split(", ") {
            let t = ValueType::from_name(name).unwrap();
            assert_eq!(t.name(), name);
            assert_eq!(serde_json::to_value(t).unwrap(), name);
        }
    }

    #[test]
    fn qualifier_templates() {
        assert_eq!(QualifierPart::parse("email"), Ok((None, b"email".to_vec())));
        assert_eq!(QualifierPart::parse("a{{b}}"), Ok((None, b"a{b}".to_vec())));
        assert_eq!(
            QualifierPart::parse("tag_{tag}"),
            Ok((
                Some(vec![Literal(b"tag_".to_vec()), Field("tag".into())]),
                b"tag_{tag}".to_vec()
            ))
        );
        assert_eq!(
            QualifierPart::parse("{a}{{x}}{b}é"),
            Ok((
                Some(vec![
                    Field("a".into()),
                    Literal(b"{x}".to_vec()),
                    Field("b".into()),
                    Literal("é".as_bytes().to_vec()),
                ]),
                "{a}{{x}}{b}é".as_bytes().to_vec()
            ))
        );
        assert!(QualifierPart::parse("x{tag")
            .unwrap_err()
            .contains("is not closed"));
        assert!(QualifierPart::parse("x}")
            .unwrap_err()
            .contains("has no '{'"));
        assert!(QualifierPart::parse("{}")
            .unwrap_err()
            .contains("expected a field name"));
    }
}
