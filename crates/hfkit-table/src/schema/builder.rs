//! [`SchemaBuilder`]: assembles a [`TableSchema`] from either front end (TOML or shell), checking
//! the table name, family names and attributes as they come, then the whole table (no family,
//! whole-family checks, too many families, columns naming unknown families) in
//! [`SchemaBuilder::finish`]. Prose: `formats/schema.md` §"Names", §"Family attributes",
//! §"Warnings".

use std::collections::BTreeMap;

use super::attributes::{table_attribute, AttrError, AttrValue, FamilySchema};
use super::mapping::ParsedSchema;
use super::mapping::{DeleteScope, ImportMapping};
use super::names::{check_family_name, TableName, SYSTEM_NAMESPACE};
use super::table::{SplitSpec, TableSchema};
use crate::error::{At, Owner, SchemaError};

/// More families than this draws a warning (HBase's guidance: keep families few).
pub const FAMILY_COUNT_WARNING: usize = 3;

/// Assembles a [`TableSchema`] from either front end and applies the whole-table checks.
#[derive(Debug)]
pub struct SchemaBuilder {
    name: TableName,
    families: Vec<FamilySchema>,
    family_at: Vec<At>,
    pub splits: SplitSpec,
    pub attributes: BTreeMap<String, String>,
    pub metadata: BTreeMap<String, String>,
    pub configuration: BTreeMap<String, String>,
    pub warnings: Vec<String>,
}

impl SchemaBuilder {
    /// Starts a table; the name is checked like `TableName.valueOf`.
    pub fn new(name: &str, at: At) -> Result<SchemaBuilder, SchemaError> {
        let name = TableName::parse_parts(name).map_err(|reason| SchemaError::TableName {
            at,
            name: name.to_string(),
            reason,
        })?;
        let mut warnings = Vec::new();
        if name.namespace == SYSTEM_NAMESPACE {
            warnings.push(format!(
                "table '{}' is in HBase's system namespace '{SYSTEM_NAMESPACE}'",
                name.full_name()
            ));
        }
        Ok(SchemaBuilder {
            name,
            families: Vec::new(),
            family_at: Vec::new(),
            splits: SplitSpec::None,
            attributes: BTreeMap::new(),
            metadata: BTreeMap::new(),
            configuration: BTreeMap::new(),
            warnings,
        })
    }

    /// The table's name.
    pub fn table_name(&self) -> &TableName {
        &self.name
    }

    /// Checks a family name (`isLegalColumnFamilyName`).
    pub fn check_family_name(name: &str, at: &At) -> Result<(), SchemaError> {
        check_family_name(name.as_bytes()).map_err(|reason| SchemaError::FamilyName {
            at: at.clone(),
            name: name.to_string(),
            reason,
        })
    }

    /// The family already added under `name`.
    pub fn family_mut(&mut self, name: &str) -> Option<&mut FamilySchema> {
        self.families.iter_mut().find(|f| f.name == name)
    }

    /// Adds a family. With `replace`, a family of the same name is replaced with a warning (the
    /// shell's behaviour); otherwise it is an error.
    pub fn add_family(
        &mut self,
        family: FamilySchema,
        at: At,
        replace: bool,
    ) -> Result<(), SchemaError> {
        if let Some(i) = self.families.iter().position(|f| f.name == family.name) {
            if !replace {
                return Err(SchemaError::DuplicateFamily {
                    at,
                    family: family.name,
                });
            }
            self.warnings.push(format!(
                "{at}family '{}' already exists, the old one is replaced",
                family.name
            ));
            self.families[i] = family;
            self.family_at[i] = at;
            return Ok(());
        }
        self.families.push(family);
        self.family_at.push(at);
        Ok(())
    }

    /// Sets a table attribute by HBase's name (case-insensitive).
    pub fn set_table_attribute(&mut self, name: &str, v: &AttrValue) -> Result<(), AttrError> {
        let (key, value) = table_attribute(name, v)?;
        self.attributes.insert(key, value);
        Ok(())
    }

    /// Validates every family and the table as a whole.
    pub fn finish(self, table_at: At, mapping: ImportMapping) -> Result<ParsedSchema, SchemaError> {
        let SchemaBuilder {
            name,
            mut families,
            family_at,
            splits,
            attributes,
            metadata,
            configuration,
            mut warnings,
        } = self;
        if families.is_empty() {
            return Err(SchemaError::NoFamilies {
                at: table_at,
                table: name.full_name(),
            });
        }
        for (f, at) in families.iter_mut().zip(family_at) {
            f.validate()
                .map_err(|problem| SchemaError::InvalidAttribute {
                    at,
                    owner: Owner(Some(f.name.clone())),
                    attribute: problem.attribute.to_string(),
                    value: problem.value,
                    reason: problem.reason,
                })?;
        }
        if families.len() > FAMILY_COUNT_WARNING {
            warnings.push(format!(
                "table '{}' has {} column families; HBase works best with at most {FAMILY_COUNT_WARNING}",
                name.full_name(),
                families.len()
            ));
        }
        for c in &mapping.columns {
            if !families.iter().any(|f| f.name == c.family) {
                return Err(SchemaError::Mapping {
                    at: At(c.location.clone().map(Box::new)),
                    what: format!("column '{}'", c.source),
                    reason: format!("family '{}' is not a family of the table", c.family),
                });
            }
        }
        if let Some(op) = &mapping.operation {
            for d in &op.deletes {
                let named: Vec<&String> = match &d.scope {
                    DeleteScope::Row => Vec::new(),
                    DeleteScope::Families(f) => f.iter().collect(),
                    DeleteScope::Columns(c) | DeleteScope::Version(c) => {
                        c.iter().map(|(f, _)| f).collect()
                    }
                };
                if let Some(f) = named
                    .into_iter()
                    .find(|f| !families.iter().any(|x| &x.name == *f))
                {
                    return Err(SchemaError::Mapping {
                        at: At(op.location.clone().map(Box::new)),
                        what: format!("[[operation.delete]] value '{}'", d.value),
                        reason: format!("family '{f}' is not a family of the table"),
                    });
                }
            }
        }
        Ok(ParsedSchema {
            table: TableSchema {
                namespace: name.namespace,
                qualifier: name.qualifier,
                families,
                splits,
                attributes,
                metadata,
                configuration,
            },
            mapping,
            warnings,
        })
    }
}
