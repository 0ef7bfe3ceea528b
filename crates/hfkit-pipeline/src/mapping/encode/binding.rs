//! Compiling and binding the import mapping (`formats/schema.md` §"Import mapping",
//! §"Timestamps", §"Changes from input"): [`Compiled`] holds the schema's rowkey specs and
//! timestamp formats, compiled once and checked against the table; [`bind`] binds them, the
//! `[[column]]`s, `[[index]]`es, `[operation]` and `[explode]` to one input file's columns,
//! naming the schema's place of anything the file cannot satisfy.

use crate::error::ImportError;
use crate::mapping::rowkey::RowkeySpec;
use crate::mapping::timestamp::TimestampFormat;
use hfkit_format::cell::{CellLimit, CellType};
use hfkit_table::{
    DeleteScope, ImportMapping, IndexSchema, QualifierPart, TableSchema, TimestampSource, TtlSource,
};

use super::bound::{
    put_timestamp, Bound, BoundColumn, BoundDelete, BoundIndex, BoundOperation, BoundPart,
    BoundTimestamp, BoundTtl,
};

/// The schema's specs and formats, compiled once and checked against the table: shared by
/// the import and [`crate::plan`].
pub(crate) struct Compiled {
    pub spec: RowkeySpec,
    /// The `timestamp_format` of each `[[column]]`.
    pub ts_formats: Vec<TimestampFormat>,
    pub indexes: Vec<CompiledIndex>,
}

/// One `[[index]]`, compiled.
pub(crate) struct CompiledIndex {
    pub schema: IndexSchema,
    pub spec: RowkeySpec,
    pub ts_format: TimestampFormat,
}

impl Compiled {
    /// Parses the rowkey specs and timestamp formats and checks the mapping against the table.
    pub fn new(schema: &TableSchema, mapping: &ImportMapping) -> Result<Compiled, ImportError> {
        let spec_text = mapping
            .rowkey
            .as_deref()
            .ok_or_else(|| ImportError::Invalid("the schema has no [rowkey] spec".into()))?;
        let spec = RowkeySpec::parse(spec_text).map_err(|source| ImportError::Rowkey {
            context: format!(
                "{}[rowkey] spec",
                at_prefix(mapping.rowkey_location.as_ref())
            ),
            source,
        })?;
        let rowkey_ts = match &mapping.rowkey_timestamp_format {
            Some((text, at)) => TimestampFormat::parse(text)
                .map_err(|e| ImportError::Invalid(format!("{at}: [rowkey] {e}")))?,
            None => TimestampFormat::EpochMillis,
        };
        let spec = spec.with_timestamp_format(rowkey_ts.clone());
        if mapping.columns.is_empty() {
            return Err(ImportError::Invalid(
                "the schema maps no [[column]] to a cell".into(),
            ));
        }
        let families: Vec<&str> = schema.families.iter().map(|f| f.name.as_str()).collect();
        for c in &mapping.columns {
            if !families.contains(&c.family.as_str()) {
                return Err(ImportError::Invalid(format!(
                    "column '{}' maps to family '{}', which table {} does not have (families: {})",
                    c.source,
                    c.family,
                    schema.full_name(),
                    families.join(", ")
                )));
            }
        }
        if families.len() + mapping.indexes.len() > usize::from(u8::MAX) + 1 {
            return Err(ImportError::Invalid(format!(
                "{} families and {} index tables: at most 256 together",
                families.len(),
                mapping.indexes.len()
            )));
        }
        let ts_formats = mapping
            .columns
            .iter()
            .map(|c| {
                timestamp_format(c.timestamp_format.as_deref(), c.location.as_ref(), || {
                    format!("column '{}'", c.source)
                })
            })
            .collect::<Result<_, _>>()?;
        if let Some(op) = &mapping.operation {
            timestamp_format(op.timestamp_format.as_deref(), op.location.as_ref(), || {
                "[operation]".to_string()
            })?;
        }
        let mut indexes = Vec::new();
        for ix in &mapping.indexes {
            let what = format!("index {}", ix.full_name());
            let at = ix
                .rowkey_location
                .as_ref()
                .map(|l| format!("{l}: "))
                .unwrap_or_default();
            let ix_spec = RowkeySpec::parse(&ix.rowkey)
                .map_err(|source| ImportError::Rowkey {
                    context: format!("{at}{what}: rowkey"),
                    source,
                })?
                .with_timestamp_format(rowkey_ts.clone());
            indexes.push(CompiledIndex {
                spec: ix_spec,
                ts_format: timestamp_format(
                    ix.timestamp_format.as_deref(),
                    ix.location.as_ref(),
                    || what.clone(),
                )?,
                schema: ix.clone(),
            });
        }
        Ok(Compiled {
            spec,
            ts_formats,
            indexes,
        })
    }

    /// Every input field the import reads (the Parquet projection).
    pub fn wanted_fields(&self, mapping: &ImportMapping) -> Vec<String> {
        let mut wanted: Vec<String> = self.spec.fields().to_vec();
        for c in &mapping.columns {
            wanted.push(c.source.clone());
            if let TimestampSource::Field(f) = &c.timestamp {
                wanted.push(f.clone());
            }
            if let Some(TtlSource::Field(f)) = &c.ttl {
                wanted.push(f.clone());
            }
            for p in c.qualifier_template.iter().flatten() {
                if let QualifierPart::Field(f) = p {
                    wanted.push(f.clone());
                }
            }
        }
        for ix in &self.indexes {
            wanted.extend(ix.spec.fields().iter().cloned());
            if let TimestampSource::Field(f) = &ix.schema.timestamp {
                wanted.push(f.clone());
            }
        }
        if let Some(x) = &mapping.explode {
            wanted.push(x.field.clone());
        }
        if let Some(op) = &mapping.operation {
            wanted.push(op.field.clone());
            if let TimestampSource::Field(f) = &op.timestamp {
                wanted.push(f.clone());
            }
        }
        wanted.sort();
        wanted.dedup();
        wanted
    }

    /// The input fields the row keys read (main and index tables), for sampling them.
    pub fn key_fields(&self) -> Vec<String> {
        let mut wanted: Vec<String> = self.spec.fields().to_vec();
        for ix in &self.indexes {
            wanted.extend(ix.spec.fields().iter().cloned());
        }
        wanted.sort();
        wanted.dedup();
        wanted
    }
}

/// `"s.toml:12:8: "` for a schema location, `""` without one.
fn at_prefix(at: Option<&hfkit_table::Location>) -> String {
    at.map(|l| format!("{l}: ")).unwrap_or_default()
}

/// A compiled `timestamp_format` (epoch ms when none is given); a bad format is an error
/// naming `what` and where the schema wrote it.
fn timestamp_format(
    text: Option<&str>,
    at: Option<&hfkit_table::Location>,
    what: impl Fn() -> String,
) -> Result<TimestampFormat, ImportError> {
    match text {
        None => Ok(TimestampFormat::EpochMillis),
        Some(text) => TimestampFormat::parse(text)
            .map_err(|e| ImportError::Invalid(format!("{}{}: {e}", at_prefix(at), what()))),
    }
}

/// Binds the specs and mapping to one file's columns.
pub(crate) fn bind(
    compiled: &Compiled,
    mapping: &ImportMapping,
    families: &[&str],
    columns: &[String],
    path: &std::path::Path,
    import_time: i64,
) -> Result<Bound, ImportError> {
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let encoder = compiled
        .spec
        .compile(&names)
        .map_err(|source| ImportError::Rowkey {
            context: format!(
                "{}: {}[rowkey] spec",
                path.display(),
                at_prefix(mapping.rowkey_location.as_ref())
            ),
            source,
        })?;
    // `reader`: what in the schema reads the field, and where.
    let find = |name: &str, reader: &dyn Fn() -> String| -> Result<usize, ImportError> {
        names.iter().position(|n| *n == name).ok_or_else(|| {
            ImportError::Invalid(format!(
                "{}: missing column '{name}' (the file has: {}); {} reads it",
                path.display(),
                names.join(", "),
                reader()
            ))
        })
    };
    if import_time < 0 {
        let limit = CellLimit::NegativeTimestamp(import_time);
        return Err(ImportError::Invalid(format!("import time: {limit}")));
    }
    let timestamp =
        |source: &TimestampSource, format: &TimestampFormat, reader: &dyn Fn() -> String| {
            Ok::<_, ImportError>(match source {
                TimestampSource::ImportTime => BoundTimestamp::Fixed(import_time),
                TimestampSource::Fixed(t) => BoundTimestamp::Fixed(put_timestamp(*t, import_time)),
                TimestampSource::Field(f) => {
                    BoundTimestamp::Field(find(f, reader)?, f.clone(), format.clone(), import_time)
                }
            })
        };
    let mut bound = Vec::new();
    for (c, ts_format) in mapping.columns.iter().zip(&compiled.ts_formats) {
        let family = families
            .iter()
            .position(|f| *f == c.family)
            .ok_or_else(|| ImportError::Invalid(format!("unknown family '{}'", c.family)))?
            as u8;
        let reader = || format!("{}column '{}'", at_prefix(c.location.as_ref()), c.source);
        bound.push(BoundColumn {
            column: find(&c.source, &reader)?,
            family,
            family_len: c.family.len(),
            qualifier: c.qualifier.clone(),
            value_type: c.value_type,
            timestamp: timestamp(&c.timestamp, ts_format, &reader)?,
            template: match &c.qualifier_template {
                None => None,
                Some(parts) => Some(
                    parts
                        .iter()
                        .map(|p| match p {
                            QualifierPart::Literal(b) => Ok(BoundPart::Literal(b.clone())),
                            QualifierPart::Field(f) => {
                                find(f, &reader).map(|i| BoundPart::Column(i, f.clone()))
                            }
                        })
                        .collect::<Result<_, _>>()?,
                ),
            },
            ttl: match &c.ttl {
                None => None,
                Some(TtlSource::Fixed(ms)) => Some(BoundTtl::Fixed(*ms)),
                Some(TtlSource::Field(f)) => Some(BoundTtl::Field(find(f, &reader)?, f.clone())),
            },
            source: c.source.clone(),
        });
    }
    // A stable sort: columns mapped to the same cell keep their schema order.
    bound.sort_by(|a, b| (a.family, &a.qualifier).cmp(&(b.family, &b.qualifier)));
    let mut indexes = Vec::new();
    for (i, ix) in compiled.indexes.iter().enumerate() {
        let name = ix.schema.full_name();
        let reader = || format!("{}index {name}", at_prefix(ix.schema.location.as_ref()));
        indexes.push(BoundIndex {
            encoder: ix
                .spec
                .compile(&names)
                .map_err(|source| ImportError::Rowkey {
                    context: format!(
                        "{}: {}index {name}: rowkey",
                        path.display(),
                        at_prefix(ix.schema.rowkey_location.as_ref())
                    ),
                    source,
                })?,
            fields: ix
                .spec
                .fields()
                .iter()
                .map(|f| find(f, &reader))
                .collect::<Result<_, _>>()?,
            family: u8::try_from(families.len() + i)
                .map_err(|_| ImportError::Invalid("too many families and index tables".into()))?,
            family_len: ix.schema.family().name.len(),
            qualifier: ix.schema.qualifier.clone(),
            timestamp: timestamp(&ix.schema.timestamp, &ix.ts_format, &reader)?,
            name,
        });
    }
    let operation = match &mapping.operation {
        None => None,
        Some(op) => {
            let at = at_prefix(op.location.as_ref());
            let reader = || format!("{at}[operation]");
            let family_of = |name: &str| -> Result<(u8, usize), ImportError> {
                let f = families
                    .iter()
                    .position(|f| *f == name)
                    .ok_or_else(|| ImportError::Invalid(format!("unknown family '{name}'")))?;
                Ok((f as u8, name.len()))
            };
            let every_family = || {
                (0..families.len())
                    .map(|f| (f as u8, families[f].len()))
                    .collect()
            };
            let cells =
                |list: &[(String, Vec<u8>)]| -> Result<Vec<(u8, usize, Vec<u8>)>, ImportError> {
                    let mut v = list
                        .iter()
                        .map(|(f, q)| family_of(f).map(|(i, len)| (i, len, q.clone())))
                        .collect::<Result<Vec<_>, _>>()?;
                    v.sort_by(|a, b| (a.0, &a.2).cmp(&(b.0, &b.2)));
                    v.dedup();
                    Ok(v)
                };
            let mut deletes = Vec::new();
            for d in &op.deletes {
                let bound = match &d.scope {
                    DeleteScope::Row => BoundDelete::Families(every_family()),
                    DeleteScope::Families(f) if f.is_empty() => {
                        BoundDelete::Families(every_family())
                    }
                    DeleteScope::Families(f) => {
                        let mut v = f
                            .iter()
                            .map(|f| family_of(f))
                            .collect::<Result<Vec<_>, _>>()?;
                        v.sort();
                        v.dedup();
                        BoundDelete::Families(v)
                    }
                    DeleteScope::Columns(c) if c.is_empty() => {
                        BoundDelete::FilledColumns(CellType::DeleteColumn)
                    }
                    DeleteScope::Columns(c) => {
                        BoundDelete::Cells(CellType::DeleteColumn, cells(c)?)
                    }
                    DeleteScope::Version(c) if c.is_empty() => {
                        BoundDelete::FilledColumns(CellType::Delete)
                    }
                    DeleteScope::Version(c) => BoundDelete::Cells(CellType::Delete, cells(c)?),
                };
                deletes.push((d.value.as_bytes().to_vec(), bound));
            }
            let format =
                timestamp_format(op.timestamp_format.as_deref(), op.location.as_ref(), || {
                    "[operation]".to_string()
                })?;
            Some(BoundOperation {
                column: find(&op.field, &reader)?,
                field: op.field.clone(),
                put: op.put.iter().map(|p| p.as_bytes().to_vec()).collect(),
                deletes,
                timestamp: timestamp(&op.timestamp, &format, &reader)?,
            })
        }
    };
    let explode = match &mapping.explode {
        None => None,
        Some(x) => {
            let at = at_prefix(x.location.as_ref());
            let column = find(&x.field, &|| format!("{at}[explode]"))?;
            Some((column, x.field.clone(), x.delimiter.clone()))
        }
    };
    Ok(Bound {
        encoder,
        columns: bound,
        indexes,
        operation,
        explode,
    })
}
