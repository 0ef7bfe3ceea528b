//! Column family attributes and table attributes as HBase reads them: [`FamilySchema`] with
//! HBase's defaults, [`FamilySchema::set_attribute`] (names case-insensitive, values in the
//! forms HBase's shell takes), the whole-family checks, and [`table_attribute`]. Both schema
//! front ends (TOML and shell) give values as [`AttrValue`]s. Prose: `formats/schema.md`
//! §"Family attributes" and §"Table attributes".

use std::collections::BTreeMap;

use super::units::{parse_interval_seconds, parse_size_bytes, TTL_FOREVER};
use crate::error::{At, Owner, SchemaError};
use hfkit_format::bloom::BloomType;
use hfkit_format::compression::Compression;
use hfkit_format::encoding::DataBlockEncoding;
pub use hfkit_read::KeepDeletedCells;

/// `ColumnFamilyDescriptorBuilder.DEFAULT_MAX_VERSIONS`.
pub const DEFAULT_VERSIONS: u32 = 1;
/// `ColumnFamilyDescriptorBuilder.DEFAULT_MIN_VERSIONS`.
pub const DEFAULT_MIN_VERSIONS: u32 = 0;
/// `HConstants.DEFAULT_BLOCKSIZE`: 64 KiB.
pub const DEFAULT_BLOCK_SIZE: u32 = 64 * 1024;
/// Smallest and largest block size HBase's table sanity checks accept.
pub const MIN_BLOCK_SIZE: u32 = 1024;
pub const MAX_BLOCK_SIZE: u32 = 16 * 1024 * 1024;
/// Family configuration key holding the ROWPREFIX_FIXED_LENGTH Bloom prefix length.
pub const ROW_PREFIX_LENGTH_KEY: &str = "RowPrefixBloomFilter.prefix_length";

/// A table's Bloom filter setting as a schema states it (`BLOOMFILTER`; the prefix length of
/// `ROWPREFIX_FIXED_LENGTH` comes from the family configuration `RowPrefixBloomFilter.prefix_length`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BloomFilterKind {
    None,
    /// HBase's default.
    #[default]
    Row,
    RowCol,
    RowPrefixFixedLength(u32),
}

impl BloomFilterKind {
    /// HBase's `BloomType` name.
    pub const fn name(self) -> &'static str {
        match self {
            BloomFilterKind::None => "NONE",
            BloomFilterKind::Row => "ROW",
            BloomFilterKind::RowCol => "ROWCOL",
            BloomFilterKind::RowPrefixFixedLength(_) => "ROWPREFIX_FIXED_LENGTH",
        }
    }

    /// The manifest's form (`bloom_filter`): the name, with `:<n>` after ROWPREFIX_FIXED_LENGTH.
    pub fn manifest_form(self) -> String {
        match self {
            BloomFilterKind::RowPrefixFixedLength(n) => format!("{}:{n}", self.name()),
            other => other.name().into(),
        }
    }
}

impl From<Option<BloomType>> for BloomFilterKind {
    /// The setting of a parsed Bloom type (`None`: no Bloom filter).
    fn from(t: Option<BloomType>) -> Self {
        match t {
            None => BloomFilterKind::None,
            Some(BloomType::Row) => BloomFilterKind::Row,
            Some(BloomType::RowCol) => BloomFilterKind::RowCol,
            Some(BloomType::RowPrefixFixedLength(n)) => BloomFilterKind::RowPrefixFixedLength(n),
        }
    }
}

/// One column family with HBase's attributes. Built with [`FamilySchema::new`] (HBase's
/// defaults) and [`FamilySchema::set_attribute`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilySchema {
    pub name: String,
    /// `VERSIONS`, default 1, at least 1.
    pub versions: u32,
    /// `MIN_VERSIONS`, default 0, at most `versions`.
    pub min_versions: u32,
    /// `TTL` in seconds; `None` is FOREVER (HBase's default, stored as 2147483647).
    pub ttl_seconds: Option<u64>,
    /// `COMPRESSION`, default NONE.
    pub compression: Compression,
    /// `BLOOMFILTER`, default ROW.
    pub bloom: BloomFilterKind,
    /// `BLOCKSIZE` in bytes, default 65536.
    pub block_size: u32,
    /// `DATA_BLOCK_ENCODING`, default NONE.
    pub data_block_encoding: DataBlockEncoding,
    /// `KEEP_DELETED_CELLS`, default FALSE.
    pub keep_deleted_cells: KeepDeletedCells,
    /// `IN_MEMORY`, default false.
    pub in_memory: bool,
    /// `COMPRESS_TAGS`, default true.
    pub compress_tags: bool,
    /// Other known attributes (`BLOCKCACHE`, `REPLICATION_SCOPE`, `IS_MOB`, ...) in HBase's
    /// string form, by upper-case name.
    pub attributes: BTreeMap<String, String>,
    /// `METADATA => {...}`: user key/values stored with the family descriptor.
    pub metadata: BTreeMap<String, String>,
    /// `CONFIGURATION => {...}`: per-family configuration overrides.
    pub configuration: BTreeMap<String, String>,
}

/// An attribute value as written, before interpretation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttrValue {
    Str(String),
    Int(i64),
    Bool(bool),
}

impl std::fmt::Display for AttrValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttrValue::Str(s) => write!(f, "'{s}'"),
            AttrValue::Int(i) => write!(f, "{i}"),
            AttrValue::Bool(b) => write!(f, "{b}"),
        }
    }
}

impl AttrValue {
    /// The value as HBase would store it in a descriptor map.
    pub fn as_plain_string(&self) -> String {
        match self {
            AttrValue::Str(s) => s.clone(),
            AttrValue::Int(i) => i.to_string(),
            AttrValue::Bool(b) => b.to_string(),
        }
    }
}

/// What [`FamilySchema::validate`] found wrong with a whole family: the attribute, its value
/// and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyProblem {
    pub attribute: &'static str,
    pub value: String,
    pub reason: String,
}

/// Why an attribute was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttrError {
    Unknown,
    Invalid(String),
}

/// Family attributes HBase knows and we keep as strings without interpreting them, by kind.
const FAMILY_BOOL_ATTRS: &[&str] = &[
    "BLOCKCACHE",
    "CACHE_DATA_ON_WRITE",
    "CACHE_INDEX_ON_WRITE",
    "CACHE_BLOOMS_ON_WRITE",
    "EVICT_BLOCKS_ON_CLOSE",
    "PREFETCH_BLOCKS_ON_OPEN",
    "NEW_VERSION_BEHAVIOR",
    "IS_MOB",
];
const COMPACTION_COMPRESSION_ATTRS: &[&str] = &[
    "COMPRESSION_COMPACT",
    "COMPRESSION_COMPACT_MAJOR",
    "COMPRESSION_COMPACT_MINOR",
];
const ENCRYPTION_ATTRS: &[&str] = &["ENCRYPTION", "ENCRYPTION_KEY", "ENCRYPTION_KEY_NAMESPACE"];

/// Table attributes (`create 't', 'f', {MAX_FILESIZE => ...}` or `[table]` keys), by kind.
const TABLE_BOOL_ATTRS: &[&str] = &[
    "READONLY",
    "COMPACTION_ENABLED",
    "SPLIT_ENABLED",
    "MERGE_ENABLED",
    "NORMALIZATION_ENABLED",
    "REGION_MEMSTORE_REPLICATION",
];
const TABLE_INT_ATTRS: &[&str] = &[
    "NORMALIZER_TARGET_REGION_COUNT",
    "NORMALIZER_TARGET_REGION_SIZE",
    "NORMALIZER_TARGET_REGION_SIZE_MB",
    "PRIORITY",
    "REGION_REPLICATION",
];
const TABLE_SIZE_ATTRS: &[&str] = &["MAX_FILESIZE", "MEMSTORE_FLUSHSIZE"];
const TABLE_STRING_ATTRS: &[&str] = &["FLUSH_POLICY", "SPLIT_POLICY", "ERASURE_CODING_POLICY"];
const DURABILITY_VALUES: &[&str] = &[
    "USE_DEFAULT",
    "SKIP_WAL",
    "ASYNC_WAL",
    "SYNC_WAL",
    "FSYNC_WAL",
];

fn invalid(reason: impl Into<String>) -> AttrError {
    AttrError::Invalid(reason.into())
}

fn invalid_unit(e: super::units::UnitError) -> AttrError {
    AttrError::Invalid(e.to_string())
}

/// A Java `Boolean` from `true`/`false` (HBase's shell maps any other string to false; we refuse it).
fn attr_bool(v: &AttrValue) -> Result<bool, AttrError> {
    match v {
        AttrValue::Bool(b) => Ok(*b),
        AttrValue::Str(s) if s.eq_ignore_ascii_case("true") => Ok(true),
        AttrValue::Str(s) if s.eq_ignore_ascii_case("false") => Ok(false),
        _ => Err(invalid("expected true or false")),
    }
}

/// A Java `int` (`Integer.valueOf`) within `range`.
fn attr_int(v: &AttrValue, range: std::ops::RangeInclusive<i64>) -> Result<i64, AttrError> {
    let n = match v {
        AttrValue::Int(i) => *i,
        AttrValue::Str(s) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| invalid("expected an integer"))?,
        AttrValue::Bool(_) => return Err(invalid("expected an integer")),
    };
    if range.contains(&n) {
        Ok(n)
    } else {
        Err(invalid(format!(
            "must be between {} and {}",
            range.start(),
            range.end()
        )))
    }
}

/// An enum name, case-insensitively, returned upper-case.
fn attr_enum(v: &AttrValue, allowed: &[&str]) -> Result<String, AttrError> {
    let s = match v {
        AttrValue::Str(s) => s.to_ascii_uppercase(),
        AttrValue::Bool(b) => b.to_string().to_ascii_uppercase(),
        AttrValue::Int(_) => String::new(),
    };
    if allowed.contains(&s.as_str()) {
        Ok(s)
    } else {
        Err(invalid(format!("expected one of {}", allowed.join(", "))))
    }
}

impl FamilySchema {
    /// A family with HBase's defaults (`ColumnFamilyDescriptorBuilder.of(name)`). The name is
    /// checked by [`super::SchemaBuilder::add_family`], not here.
    pub fn new(name: &str) -> FamilySchema {
        FamilySchema {
            name: name.to_string(),
            versions: DEFAULT_VERSIONS,
            min_versions: DEFAULT_MIN_VERSIONS,
            ttl_seconds: None,
            compression: Compression::None,
            bloom: BloomFilterKind::Row,
            block_size: DEFAULT_BLOCK_SIZE,
            data_block_encoding: DataBlockEncoding::None,
            keep_deleted_cells: KeepDeletedCells::False,
            in_memory: false,
            compress_tags: true,
            attributes: BTreeMap::new(),
            metadata: BTreeMap::new(),
            configuration: BTreeMap::new(),
        }
    }

    /// Sets one attribute by HBase's name (case-insensitive). `METADATA`, `CONFIGURATION` and
    /// `NAME` are not attributes here: the front ends handle them.
    pub fn set_attribute(&mut self, name: &str, v: &AttrValue) -> Result<(), AttrError> {
        let key = name.to_ascii_uppercase();
        match key.as_str() {
            "VERSIONS" => self.versions = attr_int(v, 1..=i64::from(i32::MAX))? as u32,
            "MIN_VERSIONS" => self.min_versions = attr_int(v, 0..=i64::from(i32::MAX))? as u32,
            "TTL" => {
                let secs = match v {
                    AttrValue::Int(i) => *i,
                    AttrValue::Str(s) => parse_interval_seconds(s).map_err(invalid_unit)?,
                    AttrValue::Bool(_) => return Err(invalid("expected seconds or FOREVER")),
                };
                if secs <= 0 || secs > TTL_FOREVER {
                    return Err(invalid(format!(
                        "TTL must be positive and at most {TTL_FOREVER} seconds (FOREVER)"
                    )));
                }
                self.ttl_seconds = (secs != TTL_FOREVER).then_some(secs as u64);
            }
            "BLOCKSIZE" => {
                let bytes = match v {
                    AttrValue::Int(i) => *i,
                    AttrValue::Str(s) => parse_size_bytes(s).map_err(invalid_unit)?,
                    AttrValue::Bool(_) => return Err(invalid("expected a size in bytes")),
                };
                if !(i64::from(MIN_BLOCK_SIZE)..=i64::from(MAX_BLOCK_SIZE)).contains(&bytes) {
                    return Err(invalid(format!(
                        "block size must be between {MIN_BLOCK_SIZE} (1K) and {MAX_BLOCK_SIZE} (16MB)"
                    )));
                }
                self.block_size = bytes as u32;
            }
            "COMPRESSION" => {
                let c = parse_compression(v)?;
                if !Compression::SUPPORTED.contains(&c) {
                    return Err(invalid(format!(
                        "HBase knows {}, but hfkit cannot write it (supported: {})",
                        c.name(),
                        supported_compressions()
                    )));
                }
                self.compression = c;
            }
            k if COMPACTION_COMPRESSION_ATTRS.contains(&k) => {
                let c = parse_compression(v)?;
                self.attributes.insert(key, c.name().to_string());
            }
            "DATA_BLOCK_ENCODING" => {
                let names: Vec<&str> = DataBlockEncoding::ALL.iter().map(|e| e.name()).collect();
                let s = attr_enum(v, &names)?;
                self.data_block_encoding = DataBlockEncoding::from_name(&s)
                    .ok_or_else(|| invalid(format!("expected one of {}", names.join(", "))))?;
            }
            "INDEX_BLOCK_ENCODING" => {
                let s = attr_enum(v, &["NONE"])?;
                self.attributes.insert(key, s);
            }
            "BLOOMFILTER" => {
                self.bloom =
                    match attr_enum(v, &["NONE", "ROW", "ROWCOL", "ROWPREFIX_FIXED_LENGTH"])?
                        .as_str()
                    {
                        "NONE" => BloomFilterKind::None,
                        "ROW" => BloomFilterKind::Row,
                        "ROWCOL" => BloomFilterKind::RowCol,
                        // The length is taken from the configuration in `validate`.
                        _ => BloomFilterKind::RowPrefixFixedLength(0),
                    };
            }
            "KEEP_DELETED_CELLS" => {
                let names = KeepDeletedCells::ALL.map(KeepDeletedCells::name);
                self.keep_deleted_cells = attr_enum(v, &names)?
                    .parse()
                    .map_err(|e: hfkit_read::UnknownKeepDeletedCells| invalid(e.to_string()))?;
            }
            "IN_MEMORY" => self.in_memory = attr_bool(v)?,
            "COMPRESS_TAGS" => self.compress_tags = attr_bool(v)?,
            k if FAMILY_BOOL_ATTRS.contains(&k) => {
                let b = attr_bool(v)?;
                self.attributes.insert(key, b.to_string());
            }
            "REPLICATION_SCOPE" => {
                let n = attr_int(v, 0..=1)?;
                self.attributes.insert(key, n.to_string());
            }
            "DFS_REPLICATION" => {
                let n = attr_int(v, 0..=i64::from(i16::MAX))?;
                self.attributes.insert(key, n.to_string());
            }
            "MOB_THRESHOLD" => {
                let n = attr_int(v, 0..=i64::MAX)?;
                self.attributes.insert(key, n.to_string());
            }
            "MOB_COMPACT_PARTITION_POLICY" => {
                let s = attr_enum(v, &["DAILY", "WEEKLY", "MONTHLY"])?;
                self.attributes.insert(key, s);
            }
            "IN_MEMORY_COMPACTION" => {
                let s = attr_enum(v, &["NONE", "BASIC", "EAGER", "ADAPTIVE"])?;
                self.attributes.insert(key, s);
            }
            "STORAGE_POLICY" => {
                let AttrValue::Str(s) = v else {
                    return Err(invalid("expected a policy name"));
                };
                self.attributes.insert(key, s.to_ascii_uppercase());
            }
            k if ENCRYPTION_ATTRS.contains(&k) => {
                return Err(invalid("hfkit does not write encrypted store files"));
            }
            _ => return Err(AttrError::Unknown),
        }
        Ok(())
    }

    /// The checks HBase makes on a whole family (`setMaxVersions`, `TableDescriptorChecker`,
    /// `BloomFilterUtil.getBloomFilterParam`); resolves the ROWPREFIX_FIXED_LENGTH prefix length.
    pub(crate) fn validate(&mut self) -> Result<(), FamilyProblem> {
        if self.min_versions > self.versions {
            return Err(FamilyProblem {
                attribute: "MIN_VERSIONS",
                value: self.min_versions.to_string(),
                reason: format!("must not exceed VERSIONS ({})", self.versions),
            });
        }
        if let BloomFilterKind::RowPrefixFixedLength(_) = self.bloom {
            let raw = self
                .configuration
                .get(ROW_PREFIX_LENGTH_KEY)
                .or_else(|| self.metadata.get(ROW_PREFIX_LENGTH_KEY));
            let Some(raw) = raw else {
                return Err(FamilyProblem {
                    attribute: "BLOOMFILTER",
                    value: "ROWPREFIX_FIXED_LENGTH".into(),
                    reason: format!("needs CONFIGURATION => {{'{ROW_PREFIX_LENGTH_KEY}' => 'N'}}"),
                });
            };
            match raw.trim().parse::<u32>() {
                Ok(n) if n > 0 && n as usize <= hfkit_format::cell::MAX_ROW_LEN => {
                    self.bloom = BloomFilterKind::RowPrefixFixedLength(n);
                }
                _ => {
                    return Err(FamilyProblem {
                        attribute: "BLOOMFILTER",
                        value: "ROWPREFIX_FIXED_LENGTH".into(),
                        reason: format!("{ROW_PREFIX_LENGTH_KEY} = '{raw}' must be in 1..=32767"),
                    })
                }
            }
        }
        Ok(())
    }
}

fn supported_compressions() -> String {
    Compression::SUPPORTED
        .iter()
        .map(|c| c.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_compression(v: &AttrValue) -> Result<Compression, AttrError> {
    let AttrValue::Str(s) = v else {
        return Err(invalid("expected a compression name"));
    };
    Compression::from_name(s).ok_or_else(|| {
        invalid("expected one of NONE, GZ, SNAPPY, LZ4, ZSTD, LZO, BZIP2, LZMA, BROTLI")
    })
}

/// Checks a table attribute by HBase's name (case-insensitive); returns the upper-case name and
/// the value in HBase's string form.
pub fn table_attribute(name: &str, v: &AttrValue) -> Result<(String, String), AttrError> {
    let key = name.to_ascii_uppercase();
    let value = match key.as_str() {
        k if TABLE_BOOL_ATTRS.contains(&k) => attr_bool(v)?.to_string(),
        k if TABLE_INT_ATTRS.contains(&k) => {
            let min = if k == "REGION_REPLICATION" { 1 } else { 0 };
            attr_int(v, min..=i64::MAX)?.to_string()
        }
        k if TABLE_SIZE_ATTRS.contains(&k) => {
            let n = match v {
                AttrValue::Int(i) => *i,
                AttrValue::Str(s) => parse_size_bytes(s).map_err(invalid_unit)?,
                AttrValue::Bool(_) => return Err(invalid("expected a size in bytes")),
            };
            if n <= 0 {
                return Err(invalid("must be positive"));
            }
            n.to_string()
        }
        k if TABLE_STRING_ATTRS.contains(&k) => match v {
            AttrValue::Str(s) => s.clone(),
            _ => return Err(invalid("expected a string")),
        },
        "DURABILITY" => attr_enum(v, DURABILITY_VALUES)?,
        _ => return Err(AttrError::Unknown),
    };
    Ok((key, value))
}

/// Turns an attribute refusal into a located [`SchemaError`].
pub(crate) fn attr_error(
    e: AttrError,
    at: At,
    family: Option<&str>,
    key: &str,
    value: &AttrValue,
) -> SchemaError {
    let owner = Owner(family.map(str::to_string));
    match e {
        AttrError::Unknown => SchemaError::UnknownAttribute {
            at,
            owner,
            attribute: key.to_string(),
        },
        AttrError::Invalid(reason) => SchemaError::InvalidAttribute {
            at,
            owner,
            attribute: key.to_ascii_uppercase(),
            value: value.to_string(),
            reason,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_hbase_defaults() {
        let f = FamilySchema::new("d");
        assert_eq!(f.versions, 1);
        assert_eq!(f.min_versions, 0);
        assert_eq!(f.ttl_seconds, None);
        assert_eq!(f.compression, Compression::None);
        assert_eq!(f.bloom, BloomFilterKind::Row);
        assert_eq!(f.block_size, 65536);
        assert_eq!(f.data_block_encoding, DataBlockEncoding::None);
        assert_eq!(f.keep_deleted_cells, KeepDeletedCells::False);
        assert!(!f.in_memory);
        assert!(f.compress_tags);
    }
}
