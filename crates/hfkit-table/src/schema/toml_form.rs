//! The TOML schema file: parsed by toml into [`super::toml_doc`]'s serde types (syntax, unknown
//! keys and value types are the library's, located by it), then checked for meaning here and
//! assembled with a [`SchemaBuilder`] into a [`ParsedSchema`] with its [`ImportMapping`]. Every
//! error names `file:line:column` (of the key for an attribute, of the value otherwise, of the
//! section header for what a section lacks). Prose: `formats/schema.md` §"Sections",
//! §"Splits", §"Import mapping", §"Index tables".

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::attributes::{attr_error, AttrError, AttrValue, FamilySchema};
use super::builder::SchemaBuilder;
use super::mapping::{
    ColumnMapping, DeleteAction, DeleteScope, ExplodeMapping, ImportMapping, IndexSchema,
    OperationMapping, ParsedSchema, QualifierPart, TimestampSource, TtlSource, ValueType,
};
use super::table::{explicit_keys, SplitSpec};
use super::toml_doc::{
    key_offset, located, AttrSection, ColumnSection, FamilySection, IndexSection, OperationSection,
    RowkeySection, SchemaDoc, SplitsSection, TableSection, TargetSection, TargetsDoc, Timestamp,
};
use crate::error::{At, Location, SchemaError};
use crate::split::SplitAlgorithm;

/// Parses TOML schema text of one table (see [`super::TableSchema::from_toml_str`]); a file
/// of several `[[table]]` sections is refused here (only [`read_targets`] takes it).
pub(super) fn read(
    text: &str,
    source: &str,
    base_dir: Option<&Path>,
) -> Result<ParsedSchema, SchemaError> {
    let mut targets = read_targets(text, source, base_dir)?;
    match targets.len() {
        1 => Ok(targets.remove(0)),
        n => Err(SchemaError::Syntax {
            at: At::from(Location::of_offset(source, text, 0)),
            message: format!(
                "{n} [[table]] sections: only `hfkit import` and `bulk_load_files` \
                 (`Schema.load_targets`) write several tables from one schema"
            ),
        }),
    }
}

/// Parses TOML schema text: one table (`[table]`), or one per `[[table]]` section in
/// document order (`formats/schema.md` §"Several tables from one input").
pub(super) fn read_targets(
    text: &str,
    source: &str,
    base_dir: Option<&Path>,
) -> Result<Vec<ParsedSchema>, SchemaError> {
    let root = DeTable::parse(text).map_err(|e| SchemaError::Syntax {
        at: At::from(Location::of_offset(
            source,
            text,
            e.span().map_or(0, |s| s.start),
        )),
        message: format!("TOML: {}", e.message().trim()),
    })?;
    let r = TomlReader {
        text,
        source,
        base_dir,
        root: root.get_ref(),
    };
    if matches!(
        r.root.get("table").map(Spanned::get_ref),
        Some(DeValue::Array(_))
    ) {
        let doc = TargetsDoc::deserialize(toml::de::Deserializer::from(root.clone()))
            .map_err(|e| located(&e, r.root, |offset| r.at(offset)))?;
        return r.targets(doc);
    }
    let doc = SchemaDoc::deserialize(toml::de::Deserializer::from(root.clone()))
        .map_err(|e| located(&e, r.root, |offset| r.at(offset)))?;
    Ok(vec![r.schema(doc)?])
}

struct TomlReader<'a> {
    text: &'a str,
    source: &'a str,
    base_dir: Option<&'a Path>,
    /// The document as toml parsed it, for the places of keys.
    root: &'a DeTable<'a>,
}

impl TomlReader<'_> {
    fn location(&self, offset: usize) -> Location {
        Location::of_offset(self.source, self.text, offset)
    }

    fn at(&self, offset: usize) -> At {
        At::from(self.location(offset))
    }

    /// The place of the key whose value is written at `value_offset`.
    fn key_at(&self, value_offset: usize) -> At {
        self.at(key_offset(self.root, value_offset))
    }

    fn syntax(&self, offset: usize, message: impl Into<String>) -> SchemaError {
        SchemaError::Syntax {
            at: self.at(offset),
            message: message.into(),
        }
    }

    /// Each `[[table]]` as a schema of its own; no two may name the same table, nor two the
    /// same directory (a table's directory under `--table ROOT` is `ROOT/<qualifier>`), nor
    /// may an index table of one be another.
    fn targets(&self, doc: TargetsDoc) -> Result<Vec<ParsedSchema>, SchemaError> {
        let mut out: Vec<ParsedSchema> = Vec::new();
        for v in doc.table.0 {
            let span = v.span();
            let TargetSection(mut doc) = v.into_inner();
            if doc
                .table
                .as_ref()
                .is_none_or(|t| t.get_ref().0.name.is_none())
            {
                return Err(self.syntax(span.start, "[[table]] needs name = \"namespace:table\""));
            }
            doc.table = doc
                .table
                .map(|t| Spanned::new(span.clone(), t.into_inner()));
            let parsed = self.schema(doc)?;
            let taken: Vec<&str> = out
                .iter()
                .flat_map(|o| {
                    std::iter::once(&o.table).chain(o.mapping.indexes.iter().map(|x| &x.table))
                })
                .map(|t| t.qualifier.as_str())
                .collect();
            let mut mine = std::iter::once(&parsed.table)
                .chain(parsed.mapping.indexes.iter().map(|x| &x.table));
            if let Some(t) = mine.find(|t| taken.contains(&t.qualifier.as_str())) {
                return Err(SchemaError::Mapping {
                    at: self.at(span.start),
                    what: format!("[[table]] '{}'", parsed.table.full_name()),
                    reason: format!(
                        "'{}' is already a table of this schema: every table (and index table) \
                         needs a qualifier of its own, its directory under --table ROOT",
                        t.qualifier
                    ),
                });
            }
            out.push(parsed);
        }
        Ok(out)
    }

    fn schema(&self, doc: SchemaDoc) -> Result<ParsedSchema, SchemaError> {
        let Some(table) = doc.table else {
            return Err(self.syntax(0, "missing [table] section with name = \"...\""));
        };
        let table_at = self.at(table.span().start);
        let mut b = self.table(table)?;
        for f in doc.family.map(|f| f.0).unwrap_or_default() {
            self.family(&mut b, f)?;
        }
        if let Some(s) = doc.splits {
            b.splits = self.splits(s)?;
        }
        let mut mapping = ImportMapping::default();
        if let Some(r) = doc.rowkey {
            self.rowkey(&mut mapping, r)?;
        }
        for (i, c) in doc
            .column
            .map(|c| c.0)
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            mapping.columns.push(self.column(i, c)?);
        }
        let mut index_warnings = Vec::new();
        for (i, v) in doc
            .index
            .map(|x| x.0)
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            let (index, warnings) = self.index(i, v)?;
            let at = At(index.location.clone().map(Box::new));
            let name = index.full_name();
            if name == b.table_name().full_name() {
                return Err(SchemaError::Mapping {
                    at,
                    what: format!("index '{name}'"),
                    reason: "an index table must not be the table itself".into(),
                });
            }
            if mapping.indexes.iter().any(|x| x.full_name() == name) {
                return Err(SchemaError::Mapping {
                    at,
                    what: format!("index '{name}'"),
                    reason: "defined twice".into(),
                });
            }
            index_warnings.extend(warnings);
            mapping.indexes.push(index);
        }
        if let Some(op) = doc.operation {
            mapping.operation = Some(self.operation(op)?);
        }
        if let Some(x) = doc.explode {
            let location = self.location(x.span().start);
            let x = x.into_inner();
            let at = At::from(location.clone());
            let mapping_error = |at: At, reason: &str| SchemaError::Mapping {
                at,
                what: "[explode]".into(),
                reason: reason.into(),
            };
            let field = x
                .field
                .filter(|f| !f.is_empty())
                .ok_or_else(|| mapping_error(at, "needs field = \"name\""))?;
            let delimiter = match x.delimiter {
                None => b",".to_vec(),
                Some(d) if d.get_ref().is_empty() => {
                    return Err(mapping_error(
                        self.at(d.span().start),
                        "delimiter must not be empty",
                    ))
                }
                Some(d) => d.into_inner().into_bytes(),
            };
            mapping.explode = Some(ExplodeMapping {
                field,
                delimiter,
                location: Some(location),
            });
        }
        let mut parsed = b.finish(table_at, mapping)?;
        parsed.warnings.extend(index_warnings);
        Ok(parsed)
    }

    /// `[table]`: the name, then the table attributes in document order.
    fn table(&self, v: Spanned<TableSection>) -> Result<SchemaBuilder, SchemaError> {
        let start = v.span().start;
        let TableSection(t) = v.into_inner();
        let Some(name) = &t.name else {
            return Err(self.syntax(start, "[table] needs name = \"namespace:table\""));
        };
        let mut b = SchemaBuilder::new(name.get_ref(), self.at(name.span().start))?;
        t.maps_into(&mut b.metadata, &mut b.configuration);
        self.set_attributes(&t.attributes, None, |k, v| b.set_table_attribute(k, v))?;
        Ok(b)
    }

    /// One `[[family]]`.
    fn family(&self, b: &mut SchemaBuilder, v: Spanned<FamilySection>) -> Result<(), SchemaError> {
        let start = v.span().start;
        let FamilySection(mut t) = v.into_inner();
        let name = t
            .name
            .take()
            .or_else(|| t.upper_name.take())
            .ok_or_else(|| self.syntax(start, "[[family]] needs name = \"...\""))?;
        let name_at = self.at(name.span().start);
        SchemaBuilder::check_family_name(name.get_ref(), &name_at)?;
        let mut f = FamilySchema::new(name.get_ref());
        self.family_attributes(&mut f, t)?;
        b.add_family(f, name_at, false)
    }

    /// The attributes, `METADATA` and `CONFIGURATION` of a family table.
    fn family_attributes(&self, f: &mut FamilySchema, t: AttrSection) -> Result<(), SchemaError> {
        t.maps_into(&mut f.metadata, &mut f.configuration);
        let name = f.name.clone();
        self.set_attributes(&t.attributes, Some(&name), |k, v| f.set_attribute(k, v))
    }

    /// Sets each attribute with `set`, in document order; a refusal is located at the
    /// attribute's key and names `family` (the table when `None`).
    fn set_attributes(
        &self,
        attributes: &[(Spanned<String>, AttrValue)],
        family: Option<&str>,
        mut set: impl FnMut(&str, &AttrValue) -> Result<(), AttrError>,
    ) -> Result<(), SchemaError> {
        for (key, value) in attributes {
            set(key.get_ref(), value).map_err(|e| {
                attr_error(e, self.at(key.span().start), family, key.get_ref(), value)
            })?;
        }
        Ok(())
    }

    /// `[splits]` (and `[index.splits]`): one of keys, file, algorithm + regions, sample.
    fn splits(&self, v: Spanned<SplitsSection>) -> Result<SplitSpec, SchemaError> {
        /// The keys that choose the splits, by position: the second one in the file is the error.
        enum Given {
            Keys(Vec<Spanned<String>>),
            File(String),
            Algorithm(String),
            Sample(usize),
        }
        let at = self.at(v.span().start);
        let s = v.into_inner();
        let mut given: Vec<(usize, Given)> = Vec::new();
        if let Some(k) = s.keys {
            given.push((k.span().start, Given::Keys(k.into_inner().0)));
        }
        if let Some(f) = s.file {
            given.push((f.span().start, Given::File(f.into_inner())));
        }
        if let Some(a) = s.algorithm {
            given.push((a.span().start, Given::Algorithm(a.into_inner())));
        }
        if let Some(n) = s.sample {
            given.push((n.span().start, Given::Sample(n.into_inner().0)));
        }
        given.sort_by_key(|(offset, _)| *offset);
        let mut spec: Option<SplitSpec> = None;
        let mut algo: Option<(SplitAlgorithm, At)> = None;
        let mut set = |s: SplitSpec, at: At| -> Result<(), SchemaError> {
            if spec.is_some() {
                return Err(SchemaError::Splits {
                    at,
                    reason: "use only one of keys, file, algorithm or sample".into(),
                });
            }
            spec = Some(s);
            Ok(())
        };
        for (offset, g) in given {
            let (key_at, value_at) = (self.key_at(offset), self.at(offset));
            match g {
                Given::Keys(keys) => {
                    let keys = keys
                        .into_iter()
                        .map(|k| {
                            let at = self.at(k.span().start);
                            (k.into_inner(), at)
                        })
                        .collect();
                    set(explicit_keys(keys)?, key_at)?;
                }
                Given::File(p) => {
                    let p = PathBuf::from(p);
                    let p = match self.base_dir {
                        Some(base) if p.is_relative() => base.join(p),
                        _ => p,
                    };
                    set(SplitSpec::File(p), key_at)?;
                }
                Given::Algorithm(name) => {
                    let Some(a) = SplitAlgorithm::from_name(&name) else {
                        return Err(SchemaError::UnknownSplitAlgorithm { at: value_at, name });
                    };
                    algo = Some((a, key_at));
                }
                Given::Sample(n) => {
                    if n < 2 {
                        return Err(SchemaError::Splits {
                            at: value_at,
                            reason: format!(
                                "sample = {n}: the number of regions must be greater than 1"
                            ),
                        });
                    }
                    set(SplitSpec::Sampled { regions: n }, key_at)?;
                }
            }
        }
        let (first_row, last_row) = (s.first_row, s.last_row);
        match (algo, s.regions.map(|n| n.0)) {
            (Some((a, a_at)), Some(n)) => {
                if n < 2 {
                    return Err(SchemaError::Splits {
                        at: a_at,
                        reason: format!(
                            "regions = {n}: the number of regions must be greater than 1"
                        ),
                    });
                }
                let s = SplitSpec::Algorithm {
                    algo: a,
                    regions: n,
                    first_row,
                    last_row,
                };
                // Check now so errors point at the schema, not at import time.
                s.regions(None).map_err(|e| SchemaError::Splits {
                    at: a_at.clone(),
                    reason: e.to_string(),
                })?;
                set(s, a_at)?;
            }
            (Some((_, a_at)), None) => {
                return Err(SchemaError::Splits {
                    at: a_at,
                    reason: "algorithm needs regions = N".into(),
                })
            }
            (None, Some(_)) => {
                return Err(SchemaError::Splits {
                    at,
                    reason: "regions needs algorithm = \"HexStringSplit\" (or DecimalStringSplit, \
                             UniformSplit)"
                        .into(),
                })
            }
            (None, None) => {
                if first_row.is_some() || last_row.is_some() {
                    return Err(SchemaError::Splits {
                        at,
                        reason: "first_row/last_row need an algorithm".into(),
                    });
                }
            }
        }
        Ok(spec.unwrap_or_default())
    }

    /// `[rowkey]`: the spec and the format its time functions read.
    fn rowkey(&self, mapping: &mut ImportMapping, r: RowkeySection) -> Result<(), SchemaError> {
        if let Some(spec) = r.spec {
            if spec.get_ref().trim().is_empty() {
                return Err(self.syntax(spec.span().start, "[rowkey] spec is empty"));
            }
            mapping.rowkey_location = Some(self.location(spec.span().start));
            mapping.rowkey = Some(spec.into_inner());
        }
        if let Some(f) = r.timestamp_format {
            let location = self.location(f.span().start);
            mapping.rowkey_timestamp_format = Some((f.into_inner(), location));
        }
        Ok(())
    }

    /// `cell = "family:qualifier"`, split; the error names `what`.
    fn cell<'c>(
        &self,
        cell: &'c Spanned<String>,
        what: &str,
    ) -> Result<(&'c str, &'c str), SchemaError> {
        cell.get_ref()
            .split_once(':')
            .ok_or_else(|| SchemaError::Mapping {
                at: self.at(cell.span().start),
                what: what.to_string(),
                reason: format!("cell '{}' must be family:qualifier", cell.get_ref()),
            })
    }

    /// `timestamp_format` only with `timestamp = "field"`; returns the format.
    fn timestamp_format(
        &self,
        format: Option<Spanned<String>>,
        timestamp: &TimestampSource,
        what: &str,
    ) -> Result<Option<String>, SchemaError> {
        match format {
            Some(f) if !matches!(timestamp, TimestampSource::Field(_)) => {
                Err(SchemaError::Mapping {
                    at: self.at(f.span().start),
                    what: what.to_string(),
                    reason: "timestamp_format needs timestamp = \"field\" (the field it reads)"
                        .into(),
                })
            }
            f => Ok(f.map(Spanned::into_inner)),
        }
    }

    /// One `[[column]]` (the `index`-th).
    fn column(
        &self,
        index: usize,
        v: Spanned<ColumnSection>,
    ) -> Result<ColumnMapping, SchemaError> {
        let location = self.location(v.span().start);
        let c = v.into_inner();
        let what = match &c.source {
            Some(s) => format!("column '{s}'"),
            None => format!("column #{}", index + 1),
        };
        let value_type = match &c.value_type {
            None => ValueType::String,
            Some(t) => ValueType::from_name(t.get_ref()).ok_or_else(|| {
                self.syntax(
                    t.span().start,
                    format!("type '{}': expected {}", t.get_ref(), ValueType::NAMES),
                )
            })?,
        };
        let at = At::from(location.clone());
        let Some(source) = c.source else {
            return Err(SchemaError::Mapping {
                at,
                what,
                reason: "needs source = \"field\"".into(),
            });
        };
        let Some(cell) = &c.cell else {
            return Err(SchemaError::Mapping {
                at,
                what,
                reason: "needs cell = \"family:qualifier\"".into(),
            });
        };
        let (family, qualifier) = self.cell(cell, &what)?;
        let timestamp = timestamp_source(c.timestamp);
        let timestamp_format = self.timestamp_format(c.timestamp_format, &timestamp, &what)?;
        let (qualifier_template, qualifier) =
            QualifierPart::parse(qualifier).map_err(|reason| SchemaError::Mapping {
                at: self.at(cell.span().start),
                what: what.clone(),
                reason,
            })?;
        let ttl = c.ttl.map(|t| match t {
            Timestamp::Fixed(ms) => TtlSource::Fixed(ms),
            Timestamp::Field(f) => TtlSource::Field(f),
        });
        Ok(ColumnMapping {
            source,
            family: family.to_string(),
            qualifier,
            qualifier_template,
            value_type,
            timestamp,
            timestamp_format,
            ttl,
            location: Some(location),
        })
    }

    /// `[operation]`: `field`, `put` values (default `I`, `U`), the delete markers'
    /// `timestamp` and `timestamp_format`, and `[[operation.delete]]` (`value`, `scope` = row |
    /// family | columns | version, `families`, `cells`).
    fn operation(&self, v: Spanned<OperationSection>) -> Result<OperationMapping, SchemaError> {
        let location = self.location(v.span().start);
        let at = At::from(location.clone());
        let o = v.into_inner();
        let what = "[operation]";
        let mapping_error = |at: At, reason: String| SchemaError::Mapping {
            at,
            what: what.to_string(),
            reason,
        };
        let field = o
            .field
            .map(Spanned::into_inner)
            .filter(|f| !f.is_empty())
            .ok_or_else(|| mapping_error(at.clone(), "needs field = \"name\"".into()))?;
        let put = o
            .put
            .unwrap_or_else(|| vec!["I".to_string(), "U".to_string()]);
        let timestamp = timestamp_source(o.timestamp);
        let timestamp_format = self.timestamp_format(o.timestamp_format, &timestamp, what)?;
        let mut deletes: Vec<DeleteAction> = Vec::new();
        for d in o.delete.map(|d| d.0).unwrap_or_default() {
            let d_at = self.at(d.span().start);
            let d = d.into_inner();
            let Some(value) = d.value else {
                return Err(mapping_error(
                    d_at,
                    "[[operation.delete]] needs value = \"...\"".into(),
                ));
            };
            if put.contains(&value) || deletes.iter().any(|x| x.value == value) {
                return Err(mapping_error(
                    d_at,
                    format!("operation value '{value}' is given twice"),
                ));
            }
            let cells = |list: Option<Vec<Spanned<String>>>| {
                list.unwrap_or_default()
                    .iter()
                    .map(|c| {
                        self.cell(c, what)
                            .map(|(f, q)| (f.to_string(), q.as_bytes().to_vec()))
                    })
                    .collect::<Result<Vec<_>, _>>()
            };
            let scope_name = d.scope.as_ref().map(|s| s.get_ref().as_str());
            let scope = match scope_name {
                None | Some("row") => DeleteScope::Row,
                Some("family") => DeleteScope::Families(
                    d.families
                        .unwrap_or_default()
                        .into_iter()
                        .map(Spanned::into_inner)
                        .collect(),
                ),
                Some("columns") => DeleteScope::Columns(cells(d.cells)?),
                Some("version") => DeleteScope::Version(cells(d.cells)?),
                Some(other) => {
                    let s_at = self.at(d.scope.as_ref().map_or(0, |s| s.span().start));
                    return Err(mapping_error(
                        s_at,
                        format!("scope '{other}': expected row, family, columns or version"),
                    ));
                }
            };
            deletes.push(DeleteAction { value, scope });
        }
        if let Some(dup) = put.iter().enumerate().find(|(i, p)| put[..*i].contains(p)) {
            return Err(mapping_error(
                at,
                format!("operation value '{}' is given twice", dup.1),
            ));
        }
        Ok(OperationMapping {
            field,
            put,
            deletes,
            timestamp,
            timestamp_format,
            location: Some(location),
        })
    }

    /// One `[[index]]` (the `index`-th): `name`, `rowkey`, `cell = "family:qualifier"`,
    /// optional `timestamp` and `timestamp_format` (as in `[[column]]`), optional
    /// `[index.family]` attributes and `[index.splits]` (as `[splits]`). Returns the index with
    /// the warnings of its table.
    fn index(
        &self,
        index: usize,
        v: Spanned<IndexSection>,
    ) -> Result<(IndexSchema, Vec<String>), SchemaError> {
        let location = self.location(v.span().start);
        let at = At::from(location.clone());
        let x = v.into_inner();
        if let Some(r) = &x.rowkey {
            if r.get_ref().trim().is_empty() {
                return Err(self.syntax(r.span().start, "[[index]] rowkey is empty"));
            }
        }
        let splits = match x.splits {
            Some(s) => self.splits(s)?,
            None => SplitSpec::None,
        };
        let what = match &x.name {
            Some(n) => format!("index '{}'", n.get_ref()),
            None => format!("index #{}", index + 1),
        };
        let missing = |key: &str| SchemaError::Mapping {
            at: at.clone(),
            what: what.clone(),
            reason: format!("needs {key}"),
        };
        let name = x
            .name
            .ok_or_else(|| missing("name = \"namespace:table\""))?;
        let rowkey = x.rowkey.ok_or_else(|| missing("rowkey = '<spec>'"))?;
        let cell = x
            .cell
            .ok_or_else(|| missing("cell = \"family:qualifier\""))?;
        let (family, qualifier) = self.cell(&cell, &what)?;
        let timestamp = timestamp_source(x.timestamp);
        let timestamp_format = self.timestamp_format(x.timestamp_format, &timestamp, &what)?;
        let family_at = self.at(cell.span().start);
        SchemaBuilder::check_family_name(family, &family_at)?;
        let mut f = FamilySchema::new(family);
        if let Some(attrs) = x.family {
            let FamilySection(mut t) = attrs.into_inner();
            if let Some(n) = t.name.take().or_else(|| t.upper_name.take()) {
                if n.get_ref() != family {
                    return Err(SchemaError::Mapping {
                        at: self.at(n.span().start),
                        what,
                        reason: format!(
                            "[index.family] name must be the family of cell '{}' ('{family}')",
                            cell.get_ref()
                        ),
                    });
                }
            }
            self.family_attributes(&mut f, t)?;
        }
        let mut b = SchemaBuilder::new(name.get_ref(), self.at(name.span().start))?;
        b.add_family(f, family_at, false)?;
        b.splits = splits;
        let parsed = b.finish(at, ImportMapping::default())?;
        Ok((
            IndexSchema {
                table: parsed.table,
                rowkey_location: Some(self.location(rowkey.span().start)),
                rowkey: rowkey.into_inner(),
                qualifier: qualifier.as_bytes().to_vec(),
                timestamp,
                timestamp_format,
                location: Some(location),
            },
            parsed.warnings,
        ))
    }
}

/// `timestamp = <epoch ms>` or `timestamp = "field"`; the import time without one.
fn timestamp_source(t: Option<Timestamp>) -> TimestampSource {
    match t {
        None => TimestampSource::ImportTime,
        Some(Timestamp::Fixed(ms)) => TimestampSource::Fixed(ms),
        Some(Timestamp::Field(f)) => TimestampSource::Field(f),
    }
}

#[cfg(test)]
mod tests;
