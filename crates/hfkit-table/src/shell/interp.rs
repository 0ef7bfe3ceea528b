//! The meaning of a parsed `create` statement, after HBase shell's `admin.rb`
//! (`formats/schema.md` §"HBase shell form"): the table name, families with their attributes,
//! table options and split points, built into a [`ParsedSchema`] with every error located.

use super::parse::{Spanned, Val};
use crate::error::{At, Location, Owner, SchemaError};
use crate::schema::{
    attr_error, explicit_keys, AttrValue, FamilySchema, ImportMapping, ParsedSchema, SchemaBuilder,
    SplitSpec,
};
use crate::split::SplitAlgorithm;

pub(super) struct Interpreter<'a> {
    pub(super) text: &'a str,
    pub(super) source: &'a str,
}

impl Interpreter<'_> {
    fn at(&self, offset: usize) -> At {
        At::from(Location::of_offset(self.source, self.text, offset))
    }

    fn err(&self, offset: usize, message: impl Into<String>) -> SchemaError {
        SchemaError::Syntax {
            at: self.at(offset),
            message: message.into(),
        }
    }

    pub(super) fn create(&self, args: Vec<Spanned>) -> Result<ParsedSchema, SchemaError> {
        let mut it = args.into_iter();
        let Some(first) = it.next() else {
            return Err(self.err(0, "expected a table name"));
        };
        let Val::Str(name) = &first.val else {
            return Err(self.err(
                first.offset,
                format!("table name must be a string, not {}", first.val.describe()),
            ));
        };
        let mut b = SchemaBuilder::new(name, self.at(first.offset))?;
        let mut flat = Vec::new();
        for a in it {
            flatten(a, &mut flat);
        }
        let mut splits_set = false;
        for a in flat {
            match &a.val {
                Val::Str(family) => {
                    let at = self.at(a.offset);
                    SchemaBuilder::check_family_name(family, &at)?;
                    b.add_family(FamilySchema::new(family), at, true)?;
                }
                Val::Hash(pairs) if pairs.iter().any(|(k, _)| k.val.as_name() == Some("NAME")) => {
                    self.family(&mut b, pairs, a.offset)?;
                }
                Val::Hash(pairs) => {
                    self.table_options(&mut b, pairs, &mut splits_set)?;
                }
                other => {
                    return Err(self.err(
                        a.offset,
                        format!(
                            "expected a family name or a hash, found {}",
                            other.describe()
                        ),
                    ))
                }
            }
        }
        b.finish(self.at(first.offset), ImportMapping::default())
    }

    fn scalar(&self, v: &Spanned, key: &str) -> Result<AttrValue, SchemaError> {
        match &v.val {
            Val::Str(s) | Val::Const(s) => Ok(AttrValue::Str(s.clone())),
            Val::Int(i) => Ok(AttrValue::Int(*i)),
            Val::Bool(b) => Ok(AttrValue::Bool(*b)),
            other => Err(self.err(
                v.offset,
                format!(
                    "{key} must be a string, number or boolean, not {}",
                    other.describe()
                ),
            )),
        }
    }

    /// `METADATA => {...}` / `CONFIGURATION => {...}`: values kept as strings (Ruby's `to_s`).
    fn string_map(
        &self,
        v: &Spanned,
        key: &str,
    ) -> Result<std::collections::BTreeMap<String, String>, SchemaError> {
        let Val::Hash(pairs) = &v.val else {
            return Err(self.err(v.offset, format!("{key} must be a hash")));
        };
        let mut m = std::collections::BTreeMap::new();
        for (k, val) in pairs {
            let name = k
                .val
                .as_name()
                .ok_or_else(|| self.err(k.offset, format!("{key} keys must be strings")))?;
            m.insert(name.to_string(), self.scalar(val, key)?.as_plain_string());
        }
        Ok(m)
    }

    fn key<'v>(&self, k: &'v Spanned) -> Result<&'v str, SchemaError> {
        k.val.as_name().ok_or_else(|| {
            self.err(
                k.offset,
                format!("expected an attribute name, found {}", k.val.describe()),
            )
        })
    }

    fn family(
        &self,
        b: &mut SchemaBuilder,
        pairs: &[(Spanned, Spanned)],
        offset: usize,
    ) -> Result<(), SchemaError> {
        let Some((_, name_v)) = pairs.iter().find(|(k, _)| k.val.as_name() == Some("NAME")) else {
            return Err(self.err(offset, "column family must have a NAME"));
        };
        let Val::Str(name) = &name_v.val else {
            return Err(self.err(
                name_v.offset,
                format!("NAME must be a string, not {}", name_v.val.describe()),
            ));
        };
        let at = self.at(name_v.offset);
        SchemaBuilder::check_family_name(name, &at)?;
        // Like the shell, a family named again starts from its earlier definition.
        let mut f = b
            .family_mut(name)
            .cloned()
            .unwrap_or_else(|| FamilySchema::new(name));
        for (k, v) in pairs {
            let key = self.key(k)?;
            match key {
                "NAME" => {}
                "METADATA" => f.metadata.extend(self.string_map(v, "METADATA")?),
                "CONFIGURATION" => f.configuration.extend(self.string_map(v, "CONFIGURATION")?),
                _ => {
                    let value = self.scalar(v, key)?;
                    f.set_attribute(key, &value)
                        .map_err(|e| attr_error(e, self.at(k.offset), Some(name), key, &value))?;
                }
            }
        }
        b.add_family(f, at, true)
    }

    fn table_options(
        &self,
        b: &mut SchemaBuilder,
        pairs: &[(Spanned, Spanned)],
        splits_set: &mut bool,
    ) -> Result<(), SchemaError> {
        let find = |name: &str| pairs.iter().find(|(k, _)| k.val.as_name() == Some(name));
        let splits = find("SPLITS");
        let splits_file = find("SPLITS_FILE");
        let numregions = find("NUMREGIONS");
        let splitalgo = find("SPLITALGO");
        let mut spec = None;
        let first_split_key = [splits, splits_file, numregions, splitalgo]
            .into_iter()
            .flatten()
            .next();
        if let Some((k, _)) = first_split_key {
            if *splits_set {
                return Err(SchemaError::Splits {
                    at: self.at(k.offset),
                    reason: "splits are given more than once".into(),
                });
            }
            *splits_set = true;
        }
        let kinds = u8::from(splits.is_some())
            + u8::from(splits_file.is_some())
            + u8::from(numregions.is_some() || splitalgo.is_some());
        if let (true, Some((k, _))) = (kinds > 1, first_split_key) {
            return Err(SchemaError::Splits {
                at: self.at(k.offset),
                reason: "use only one of SPLITS, SPLITS_FILE or NUMREGIONS + SPLITALGO".into(),
            });
        }
        if let Some((_, v)) = splits {
            let Val::Array(items) = &v.val else {
                return Err(self.err(v.offset, "SPLITS must be an array of strings"));
            };
            let mut keys = Vec::new();
            for item in items {
                let Val::Str(s) = &item.val else {
                    return Err(self.err(
                        item.offset,
                        format!("a split key must be a string, not {}", item.val.describe()),
                    ));
                };
                keys.push((s.clone(), self.at(item.offset)));
            }
            spec = Some(explicit_keys(keys)?);
        }
        if let Some((_, v)) = splits_file {
            let Val::Str(path) = &v.val else {
                return Err(self.err(v.offset, "SPLITS_FILE must be a string"));
            };
            spec = Some(SplitSpec::File(path.into()));
        }
        if let Some((k, _)) = numregions.or(splitalgo) {
            let Some((_, n)) = numregions else {
                return Err(SchemaError::Splits {
                    at: self.at(k.offset),
                    reason: "number of regions must be specified (NUMREGIONS)".into(),
                });
            };
            let Some((_, algo)) = splitalgo else {
                return Err(SchemaError::Splits {
                    at: self.at(k.offset),
                    reason: "split algorithm must be specified (SPLITALGO)".into(),
                });
            };
            let Val::Int(n_regions) = n.val else {
                return Err(self.err(
                    n.offset,
                    format!("NUMREGIONS must be an integer, not {}", n.val.describe()),
                ));
            };
            if n_regions <= 1 {
                return Err(SchemaError::Splits {
                    at: self.at(n.offset),
                    reason: format!("number of regions must be greater than 1, got {n_regions}"),
                });
            }
            let name = algo
                .val
                .as_name()
                .ok_or_else(|| self.err(algo.offset, "SPLITALGO must be a string"))?;
            let a = SplitAlgorithm::from_name(name).ok_or_else(|| {
                SchemaError::UnknownSplitAlgorithm {
                    at: self.at(algo.offset),
                    name: name.to_string(),
                }
            })?;
            let regions = usize::try_from(n_regions).unwrap_or(usize::MAX);
            let s = SplitSpec::Algorithm {
                algo: a,
                regions,
                first_row: None,
                last_row: None,
            };
            s.regions(None).map_err(|e| SchemaError::Splits {
                at: self.at(n.offset),
                reason: e.to_string(),
            })?;
            spec = Some(s);
        }
        if let Some(s) = spec {
            b.splits = s;
        }
        for (k, v) in pairs {
            let key = self.key(k)?;
            match key {
                "SPLITS" | "SPLITS_FILE" | "NUMREGIONS" | "SPLITALGO" => {}
                "METHOD" => {
                    if v.val.as_name() != Some("table_att") {
                        return Err(
                            self.err(v.offset, "table_att is currently the only supported METHOD")
                        );
                    }
                }
                "METADATA" => b.metadata.extend(self.string_map(v, "METADATA")?),
                "CONFIGURATION" => b.configuration.extend(self.string_map(v, "CONFIGURATION")?),
                _ => {
                    let value = self.scalar(v, key)?;
                    b.set_table_attribute(key, &value).map_err(|e| match e {
                        crate::schema::AttrError::Unknown => SchemaError::UnknownAttribute {
                            at: self.at(k.offset),
                            owner: Owner(None),
                            attribute: key.to_string(),
                        },
                        other => attr_error(other, self.at(k.offset), None, key, &value),
                    })?;
                }
            }
        }
        Ok(())
    }
}

/// `args.flatten.compact`.
fn flatten(v: Spanned, out: &mut Vec<Spanned>) {
    match v.val {
        Val::Array(items) => items.into_iter().for_each(|i| flatten(i, out)),
        Val::Nil => {}
        _ => out.push(v),
    }
}
