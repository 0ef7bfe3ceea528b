//! The table model: [`TableSchema`] (name, families, table attributes), where its split keys
//! come from ([`SplitSpec`], explicit keys checked as HBase's `createTable` checks them), and
//! the entry points reading a schema file in either form into a [`ParsedSchema`]. Prose:
//! `formats/schema.md` §"Sections" and §"Splits".

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::attributes::FamilySchema;
use super::names::TableName;
use crate::error::{At, SchemaError};
use crate::split::{read_splits_file, sample_splits, to_bytes_binary, Regions, SplitAlgorithm};

/// Where a table's split keys come from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SplitSpec {
    /// One region.
    #[default]
    None,
    /// Explicit keys (`SPLITS => [...]`, `keys = [...]`), already checked non-empty and unique.
    Explicit(Vec<Vec<u8>>),
    /// A splits file (`SPLITS_FILE`, `file = `), one `Bytes.toBytesBinary` key per line.
    File(PathBuf),
    /// A pre-split algorithm (`NUMREGIONS` + `SPLITALGO`), optionally with first/last rows.
    Algorithm {
        algo: SplitAlgorithm,
        regions: usize,
        first_row: Option<String>,
        last_row: Option<String>,
    },
    /// Cut at quantiles of a sample of the input's encoded row keys.
    Sampled { regions: usize },
}

impl SplitSpec {
    /// The regions this spec describes. `sample` (encoded row keys, any order) is used only by
    /// [`SplitSpec::Sampled`], which fails without one.
    pub fn regions(&self, sample: Option<&[Vec<u8>]>) -> Result<Regions, SchemaError> {
        match self {
            SplitSpec::None => Ok(Regions::single()),
            SplitSpec::Explicit(keys) => Regions::new(keys.clone()),
            SplitSpec::File(path) => Regions::new(read_splits_file(path)?),
            SplitSpec::Algorithm {
                algo,
                regions,
                first_row,
                last_row,
            } => {
                let mut s = algo.splitter();
                if let Some(r) = first_row {
                    s.set_first_row(r)?;
                }
                if let Some(r) = last_row {
                    s.set_last_row(r)?;
                }
                Regions::from_sorted(s.split(*regions)?)
            }
            SplitSpec::Sampled { regions } => match sample {
                Some(keys) => Regions::from_sorted(sample_splits(keys, *regions)),
                None => Err(SchemaError::Splits {
                    at: At::default(),
                    reason: format!("sample = {regions} needs a sample of row keys"),
                }),
            },
        }
    }
}

/// A table: name, families, split points and HBase table attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSchema {
    pub namespace: String,
    pub qualifier: String,
    pub families: Vec<FamilySchema>,
    pub splits: SplitSpec,
    /// Known table attributes (`MAX_FILESIZE`, `DURABILITY`, ...) in HBase's string form.
    pub attributes: BTreeMap<String, String>,
    pub metadata: BTreeMap<String, String>,
    pub configuration: BTreeMap<String, String>,
}

impl TableSchema {
    /// `qualifier`, or `namespace:qualifier` outside the default namespace.
    pub fn full_name(&self) -> String {
        TableName {
            namespace: self.namespace.clone(),
            qualifier: self.qualifier.clone(),
        }
        .full_name()
    }

    /// The family named `name`.
    pub fn family(&self, name: &str) -> Option<&FamilySchema> {
        self.families.iter().find(|f| f.name == name)
    }
}

/// Checks explicit split keys as HBase's `createTable` would (non-empty, unique), with the
/// location of each key.
pub(crate) fn explicit_keys(keys: Vec<(String, At)>) -> Result<SplitSpec, SchemaError> {
    let mut out: Vec<Vec<u8>> = Vec::with_capacity(keys.len());
    let mut seen: BTreeMap<Vec<u8>, ()> = BTreeMap::new();
    for (text, at) in keys {
        let key = to_bytes_binary(&text).map_err(|e| SchemaError::SplitKey {
            at: at.clone(),
            key: text.clone(),
            reason: e.to_string(),
        })?;
        if key.is_empty() {
            return Err(SchemaError::SplitKey {
                at,
                key: text,
                reason: "an empty split key must not be passed in the split keys".into(),
            });
        }
        if seen.insert(key.clone(), ()).is_some() {
            return Err(SchemaError::SplitKey {
                at,
                key: text,
                reason: "all split keys must be unique; this one appears more than once".into(),
            });
        }
        out.push(key);
    }
    Ok(SplitSpec::Explicit(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{
        BloomFilterKind, KeepDeletedCells, ParsedSchema, TimestampSource, ValueType,
    };
    use hfkit_format::compression::Compression;
    use hfkit_format::encoding::DataBlockEncoding;

    fn toml(text: &str) -> Result<ParsedSchema, SchemaError> {
        TableSchema::from_toml_str(text, "s.toml", None)
    }

    const FULL: &str = r#"
[table]
name = "ns:users"
MAX_FILESIZE = "10GB"
DURABILITY = "async_wal"

[table.METADATA]
owner = "team-a"

[[family]]
name = "d"
VERSIONS = 3
MIN_VERSIONS = 1
compression = "snappy"
BLOOMFILTER = "ROWPREFIX_FIXED_LENGTH"
TTL = "7 DAYS"
BLOCKSIZE = "32KB"
DATA_BLOCK_ENCODING = "fast_diff"
KEEP_DELETED_CELLS = "ttl"
IN_MEMORY = true
COMPRESS_TAGS = false
BLOCKCACHE = "false"
REPLICATION_SCOPE = 1

[family.CONFIGURATION]
"RowPrefixBloomFilter.prefix_length" = "4"

[family.METADATA]
note = 7

[[family]]
name = "i"

[splits]
algorithm = "HexStringSplit"
regions = 16

[rowkey]
spec = 'salt(16, user_id) + "_" + pad(order_id, 10)'

[[column]]
source = "email"
cell = "i:email"

[[column]]
source = "amount"
cell = "d:amt"
type = "int64"
timestamp = "updated_at"

[[column]]
source = "price"
cell = "d:"
type = "double"
timestamp = 1700000000000
"#;

    #[test]
    fn full_toml_example() {
        let p = toml(FULL).unwrap();
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let t = &p.table;
        assert_eq!(
            (t.namespace.as_str(), t.qualifier.as_str()),
            ("ns", "users")
        );
        assert_eq!(t.full_name(), "ns:users");
        assert_eq!(t.attributes["MAX_FILESIZE"], (10u64 << 30).to_string());
        assert_eq!(t.attributes["DURABILITY"], "ASYNC_WAL");
        assert_eq!(t.metadata["owner"], "team-a");
        let d = t.family("d").unwrap();
        assert_eq!(d.versions, 3);
        assert_eq!(d.min_versions, 1);
        assert_eq!(d.compression, Compression::Snappy);
        assert_eq!(d.bloom, BloomFilterKind::RowPrefixFixedLength(4));
        assert_eq!(d.ttl_seconds, Some(7 * 86400));
        assert_eq!(d.block_size, 32768);
        assert_eq!(d.data_block_encoding, DataBlockEncoding::FastDiff);
        assert_eq!(d.keep_deleted_cells, KeepDeletedCells::Ttl);
        assert!(d.in_memory);
        assert!(!d.compress_tags);
        assert_eq!(d.attributes["BLOCKCACHE"], "false");
        assert_eq!(d.attributes["REPLICATION_SCOPE"], "1");
        assert_eq!(d.metadata["note"], "7");
        assert_eq!(t.family("i").unwrap(), &FamilySchema::new("i"));
        assert_eq!(
            t.splits,
            SplitSpec::Algorithm {
                algo: SplitAlgorithm::HexString,
                regions: 16,
                first_row: None,
                last_row: None
            }
        );
        assert_eq!(t.splits.regions(None).unwrap().len(), 16);
        let m = &p.mapping;
        assert_eq!(
            m.rowkey.as_deref(),
            Some(r#"salt(16, user_id) + "_" + pad(order_id, 10)"#)
        );
        assert_eq!(
            m.rowkey_location.as_ref().unwrap().to_string(),
            "s.toml:39:8"
        );
        assert_eq!(m.columns.len(), 3);
        assert_eq!(m.columns[0].source, "email");
        assert_eq!(
            (
                m.columns[0].family.as_str(),
                m.columns[0].qualifier.as_slice()
            ),
            ("i", &b"email"[..])
        );
        assert_eq!(m.columns[0].value_type, ValueType::String);
        assert_eq!(m.columns[0].timestamp, TimestampSource::ImportTime);
        assert_eq!(m.columns[1].value_type, ValueType::Int64);
        assert_eq!(
            m.columns[1].timestamp,
            TimestampSource::Field("updated_at".into())
        );
        assert_eq!(m.columns[2].qualifier, b"");
        assert_eq!(m.columns[2].value_type, ValueType::Double);
        assert_eq!(
            m.columns[2].timestamp,
            TimestampSource::Fixed(1_700_000_000_000)
        );
    }

    #[test]
    fn schema_files_of_either_form() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("s.toml");
        std::fs::write(&t, FULL).unwrap();
        assert_eq!(TableSchema::from_file(&t).unwrap().table.qualifier, "users");
        assert_eq!(
            TableSchema::from_toml_file(&t)
                .unwrap()
                .table
                .families
                .len(),
            2
        );
        let s = dir.path().join("create.rb");
        std::fs::write(&s, "# made by hand\ncreate 'ns:t', 'f'\n").unwrap();
        assert_eq!(
            TableSchema::from_file(&s).unwrap().table.full_name(),
            "ns:t"
        );
        let e = TableSchema::from_file(&dir.path().join("none")).unwrap_err();
        assert!(matches!(e, SchemaError::Io { .. }));
    }
}
