//! Table schemas: the model ([`TableSchema`], [`FamilySchema`], [`SplitSpec`]), HBase's defaults
//! and validation rules, the TOML schema file, and the [`ImportMapping`] a schema file carries
//! for the import pipeline. Prose: `formats/schema.md`.
//!
//! ```text
//! schema file (TOML)        [table] [[family]]... [splits] [rowkey] [[column]]...
//! shell statement           create 'ns:t', {NAME => 'f', ...}, ..., SPLITS => [...]   (super::shell)
//!        \                      /
//!         SchemaBuilder: names checked as TableName / isLegalColumnFamilyName,
//!                        attributes checked one by one (FamilySchema::set_attribute),
//!                        then per family (VERSIONS >= 1, MIN_VERSIONS <= VERSIONS, TTL > 0,
//!                        1 KiB <= BLOCKSIZE <= 16 MiB, ROWPREFIX bloom has a prefix length)
//!         -> ParsedSchema { table: TableSchema, mapping: ImportMapping, warnings }
//! ```
//!
//! Attribute names are HBase's (`VERSIONS`, `BLOOMFILTER`, ...), matched case-insensitively;
//! an unknown name is an error naming it. Values follow HBase's parsers (the shell's duration
//! and size strings for `TTL` and `BLOCKSIZE`, enum names case-insensitively).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::error::{At, Location, Owner, SchemaError};
use super::split::{read_splits_file, sample_splits, to_bytes_binary, Regions, SplitAlgorithm};
use hfkit_format::cell::MAX_FAMILY_LEN;
use hfkit_format::compression::Compression;
use hfkit_format::encoding::DataBlockEncoding;

/// `HConstants.FOREVER`: a TTL of `Integer.MAX_VALUE` seconds means "never expires".
pub const TTL_FOREVER: i64 = i32::MAX as i64;
/// `ColumnFamilyDescriptorBuilder.DEFAULT_MAX_VERSIONS`.
pub const DEFAULT_VERSIONS: u32 = 1;
/// `ColumnFamilyDescriptorBuilder.DEFAULT_MIN_VERSIONS`.
pub const DEFAULT_MIN_VERSIONS: u32 = 0;
/// `HConstants.DEFAULT_BLOCKSIZE`: 64 KiB.
pub const DEFAULT_BLOCK_SIZE: u32 = 64 * 1024;
/// Smallest and largest block size HBase's table sanity checks accept.
pub const MIN_BLOCK_SIZE: u32 = 1024;
pub const MAX_BLOCK_SIZE: u32 = 16 * 1024 * 1024;
/// More families than this draws a warning (HBase's guidance: keep families few).
pub const FAMILY_COUNT_WARNING: usize = 3;
/// Family configuration key holding the ROWPREFIX_FIXED_LENGTH Bloom prefix length.
pub const ROW_PREFIX_LENGTH_KEY: &str = "RowPrefixBloomFilter.prefix_length";
/// The namespace of tables named without one.
pub const DEFAULT_NAMESPACE: &str = "default";
/// HBase's system namespace.
pub const SYSTEM_NAMESPACE: &str = "hbase";
/// A family may not be named like the region's WAL-replay directory.
const RECOVERED_EDITS_DIR: &str = "recovered.edits";
/// Names ZooKeeper reserves, refused for namespaces and tables.
const DISALLOWED_TABLE_NAME: &str = "zookeeper";

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
}

/// `KEEP_DELETED_CELLS`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeepDeletedCells {
    #[default]
    False,
    True,
    Ttl,
}

impl KeepDeletedCells {
    pub const fn name(self) -> &'static str {
        match self {
            KeepDeletedCells::False => "FALSE",
            KeepDeletedCells::True => "TRUE",
            KeepDeletedCells::Ttl => "TTL",
        }
    }
}

/// A validated table name: namespace (`default` when none was given) and qualifier.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TableName {
    pub namespace: String,
    pub qualifier: String,
}

impl TableName {
    /// Parses `qualifier` or `namespace:qualifier` (split at the first `:`, as
    /// `TableName.valueOf(String)` does) and checks both parts as HBase does.
    pub fn parse(name: &str) -> Result<TableName, SchemaError> {
        let err = |reason: String| SchemaError::TableName {
            at: At::default(),
            name: name.to_string(),
            reason,
        };
        let (ns, q) = match name.split_once(':') {
            Some((ns, q)) => (ns, q),
            None => (DEFAULT_NAMESPACE, name),
        };
        check_namespace(ns).map_err(err)?;
        check_qualifier(q).map_err(err)?;
        Ok(TableName {
            namespace: ns.to_string(),
            qualifier: q.to_string(),
        })
    }

    /// HBase's `getNameAsString`: the qualifier alone in the default namespace, else `ns:qualifier`.
    pub fn full_name(&self) -> String {
        if self.namespace == DEFAULT_NAMESPACE {
            self.qualifier.clone()
        } else {
            format!("{}:{}", self.namespace, self.qualifier)
        }
    }
}

/// Java's `Character.isAlphabetic || Character.isDigit` on one UTF-16 unit. Characters outside
/// the Basic Multilingual Plane are two surrogate units in Java, neither of which passes, so they
/// are refused here too. Digits are ASCII only (Java also takes other scripts' decimal digits;
/// refusing those is the safe side).
fn java_word_char(c: char) -> bool {
    (c as u32) <= 0xFFFF && (c.is_alphabetic() || c.is_ascii_digit())
}

/// `TableName.isLegalNamespaceName`.
fn check_namespace(ns: &str) -> Result<(), String> {
    if ns.is_empty() {
        return Err("namespace name must not be empty".into());
    }
    if ns == DISALLOWED_TABLE_NAME {
        return Err(format!(
            "namespaces may not be named '{DISALLOWED_TABLE_NAME}'"
        ));
    }
    for (i, c) in ns.chars().enumerate() {
        if !(java_word_char(c) || c == '_') {
            return Err(format!(
                "illegal character '{}' at {i} of namespace '{ns}': namespaces may only contain \
                 letters, digits and '_'",
                c.escape_default()
            ));
        }
    }
    Ok(())
}

/// `TableName.isLegalTableQualifierName`.
fn check_qualifier(q: &str) -> Result<(), String> {
    if q.is_empty() {
        return Err("table qualifier must not be empty".into());
    }
    if q.starts_with('.') || q.starts_with('-') {
        return Err(format!("qualifier '{q}' must not start with '.' or '-'"));
    }
    if q == DISALLOWED_TABLE_NAME {
        return Err(format!("tables may not be named '{DISALLOWED_TABLE_NAME}'"));
    }
    for (i, c) in q.chars().enumerate() {
        if !(java_word_char(c) || c == '_' || c == '-' || c == '.') {
            return Err(format!(
                "illegal character '{}' at {i} of qualifier '{q}': table qualifiers may only \
                 contain letters, digits, '_', '-' and '.'",
                c.escape_default()
            ));
        }
    }
    Ok(())
}

/// `ColumnFamilyDescriptorBuilder.isLegalColumnFamilyName`, plus the 127-byte family limit of
/// the cell format.
pub fn check_family_name(name: &[u8]) -> Result<(), String> {
    if name.is_empty() {
        return Err("column family name can not be empty".into());
    }
    if name[0] == b'.' {
        return Err("column family names cannot start with a period".into());
    }
    // Java's Character.isISOControl on a signed byte: 0x00-0x1F and 0x7F (0x80-0x9F are
    // negative there and pass).
    if let Some(&b) = name
        .iter()
        .find(|&&b| b < 0x20 || b == 0x7F || b == b':' || b == b'\\' || b == b'/')
    {
        return Err(format!(
            "illegal character 0x{b:02X}: column family names cannot contain control \
             characters, ':', '\\' or '/'"
        ));
    }
    if name == RECOVERED_EDITS_DIR.as_bytes() {
        return Err(format!(
            "column family name cannot be '{RECOVERED_EDITS_DIR}'"
        ));
    }
    if name.len() > MAX_FAMILY_LEN {
        return Err(format!(
            "{} bytes, more than the maximum of {MAX_FAMILY_LEN}",
            name.len()
        ));
    }
    Ok(())
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

/// `PrettyPrinter.valueOf(s, TIME_INTERVAL)`: `FOREVER`, a number of seconds, or
/// `[N SECONDS (] [d DAYS] [h HOURS] [m MINUTES] [s SECONDS] [)]` (case-insensitive, singular or
/// plural); with the `N SECONDS (` prefix the parts must add up to N.
pub fn parse_interval_seconds(s: &str) -> Result<i64, String> {
    const UNITS: &[(&str, i64)] = &[
        ("DAY", 86_400),
        ("HOUR", 3_600),
        ("MINUTE", 60),
        ("SECOND", 1),
    ];
    if s.trim().eq_ignore_ascii_case("FOREVER") {
        return Ok(TTL_FOREVER);
    }
    if let Ok(n) = s.trim().parse::<i64>() {
        return Ok(n);
    }
    let err = || format!("'{s}' is not FOREVER, a number of seconds or e.g. '7 DAYS 12 HOURS'");
    let up = s.to_ascii_uppercase();
    parse_units(&up, "SECOND", UNITS, |unit, rest| {
        // Words: the unit, then an optional plural 'S'.
        let r = rest.strip_prefix(unit)?;
        Some(r.strip_prefix('S').unwrap_or(r))
    })
    .ok_or_else(err)
}

/// `PrettyPrinter.format(s, TIME_INTERVAL)`, the inverse of [`parse_interval_seconds`]:
/// `FOREVER`, `30 SECONDS`, `1 SECOND`, `90061 SECONDS (1 DAY 1 HOUR 1 MINUTE 1 SECOND)`.
pub fn format_interval_seconds(secs: u64) -> String {
    let plural = |n: u64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "S" });
    if secs >= TTL_FOREVER as u64 {
        return "FOREVER".into();
    }
    if secs < 60 {
        return plural(secs, "SECOND");
    }
    let parts: Vec<String> = [
        (secs / 86_400, "DAY"),
        (secs % 86_400 / 3_600, "HOUR"),
        (secs % 3_600 / 60, "MINUTE"),
        (secs % 60, "SECOND"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, unit)| plural(n, unit))
    .collect();
    format!("{secs} SECONDS ({})", parts.join(" "))
}

/// `PrettyPrinter.valueOf(s, BYTE)`: a number of bytes, or `[N B (] [t TB] [g GB] [m MB] [k KB]
/// [b B] [)]` (case-insensitive; `T`, `G`, `M`, `K` without the `B` too).
pub fn parse_size_bytes(s: &str) -> Result<i64, String> {
    const UNITS: &[(&str, i64)] = &[
        ("T", 1 << 40),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("K", 1 << 10),
        ("", 1),
    ];
    if let Ok(n) = s.trim().parse::<i64>() {
        return Ok(n);
    }
    let up = s.to_ascii_uppercase();
    parse_units(&up, "", UNITS, |unit, rest| {
        let r = rest.strip_prefix(unit)?;
        Some(r.strip_prefix('B').unwrap_or(r))
    })
    .ok_or_else(|| format!("'{s}' is not a number of bytes or e.g. '64KB', '1 GB 512 MB'"))
}

/// The shared shape of HBase's interval and size patterns: an optional `N <prefix_unit> (`,
/// then `number unit` parts in the order of `units` (each at most once), then an optional `)`.
fn parse_units(
    s: &str,
    prefix_unit: &str,
    units: &[(&str, i64)],
    strip_unit: impl for<'s> Fn(&str, &'s str) -> Option<&'s str>,
) -> Option<i64> {
    fn number(s: &str) -> Option<(i64, &str)> {
        let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        if end == 0 {
            return None;
        }
        Some((s[..end].parse().ok()?, s[end..].trim_start()))
    }
    let mut rest = s.trim();
    let mut expected = None;
    // Optional "N SECONDS (" / "N B (" prefix.
    if let Some((n, r)) = number(rest) {
        if let Some(r) = strip_unit(prefix_unit, r) {
            if let Some(r) = r.trim_start().strip_prefix('(') {
                expected = Some(n);
                rest = r.trim_start();
            }
        }
    }
    let mut total: i64 = 0;
    let mut next_unit = 0;
    let mut parts = 0;
    while let Some((n, r)) = number(rest) {
        let mut matched = None;
        for (i, (unit, mult)) in units.iter().enumerate().skip(next_unit) {
            if let Some(after) = strip_unit(unit, r) {
                // An empty unit (plain bytes) only matches at the end or before ')'.
                if unit.is_empty() && !(after.trim().is_empty() || after.trim() == ")") {
                    continue;
                }
                matched = Some((i, *mult, after));
                break;
            }
        }
        let (i, mult, after) = matched?;
        total = total.checked_add(n.checked_mul(mult)?)?;
        next_unit = i + 1;
        rest = after.trim_start();
        parts += 1;
    }
    let rest = rest.strip_prefix(')').unwrap_or(rest).trim();
    if !rest.is_empty() || parts == 0 {
        return None;
    }
    match expected {
        Some(n) if n != total => None,
        _ => Some(total),
    }
}

impl FamilySchema {
    /// A family with HBase's defaults (`ColumnFamilyDescriptorBuilder.of(name)`). The name is
    /// checked by [`SchemaBuilder::add_family`], not here.
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
                    AttrValue::Str(s) => parse_interval_seconds(s).map_err(AttrError::Invalid)?,
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
                    AttrValue::Str(s) => parse_size_bytes(s).map_err(AttrError::Invalid)?,
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
                self.keep_deleted_cells = match attr_enum(v, &["FALSE", "TRUE", "TTL"])?.as_str() {
                    "TRUE" => KeepDeletedCells::True,
                    "TTL" => KeepDeletedCells::Ttl,
                    _ => KeepDeletedCells::False,
                };
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
    /// On failure returns (attribute, value, reason).
    fn validate(&mut self) -> Result<(), (&'static str, String, String)> {
        if self.min_versions > self.versions {
            return Err((
                "MIN_VERSIONS",
                self.min_versions.to_string(),
                format!("must not exceed VERSIONS ({})", self.versions),
            ));
        }
        if let BloomFilterKind::RowPrefixFixedLength(_) = self.bloom {
            let raw = self
                .configuration
                .get(ROW_PREFIX_LENGTH_KEY)
                .or_else(|| self.metadata.get(ROW_PREFIX_LENGTH_KEY));
            let Some(raw) = raw else {
                return Err((
                    "BLOOMFILTER",
                    "ROWPREFIX_FIXED_LENGTH".into(),
                    format!("needs CONFIGURATION => {{'{ROW_PREFIX_LENGTH_KEY}' => 'N'}}"),
                ));
            };
            match raw.trim().parse::<u32>() {
                Ok(n) if n > 0 && n as usize <= hfkit_format::cell::MAX_ROW_LEN => {
                    self.bloom = BloomFilterKind::RowPrefixFixedLength(n);
                }
                _ => {
                    return Err((
                        "BLOOMFILTER",
                        "ROWPREFIX_FIXED_LENGTH".into(),
                        format!("{ROW_PREFIX_LENGTH_KEY} = '{raw}' must be in 1..=32767"),
                    ))
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

    /// Parses a TOML schema file (see `formats/schema.md`). Relative `[splits] file` paths are
    /// resolved against the file's directory.
    pub fn from_toml_file(path: &Path) -> Result<ParsedSchema, SchemaError> {
        let text = std::fs::read_to_string(path).map_err(|source| SchemaError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let base = path.parent().map(Path::to_path_buf);
        TableSchema::from_toml_str(&text, &path.display().to_string(), base.as_deref())
    }

    /// Parses TOML schema text. `source` names it in errors; `base_dir` resolves relative
    /// splits-file paths (kept as written when `None`).
    pub fn from_toml_str(
        text: &str,
        source: &str,
        base_dir: Option<&Path>,
    ) -> Result<ParsedSchema, SchemaError> {
        TomlReader {
            text,
            source,
            base_dir,
        }
        .read()
    }

    /// Parses an HBase shell `create` statement (see [`super::shell`]).
    pub fn from_shell(text: &str) -> Result<ParsedSchema, SchemaError> {
        super::shell::parse_create(text)
    }

    /// Reads a schema file in either form: text whose first word is `create` is a shell
    /// statement, anything else TOML.
    pub fn from_file(path: &Path) -> Result<ParsedSchema, SchemaError> {
        let text = std::fs::read_to_string(path).map_err(|source| SchemaError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let first_word = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .and_then(|l| l.split(|c: char| !c.is_ascii_alphanumeric()).next());
        if first_word == Some("create") {
            super::shell::parse_create_from(&text, &path.display().to_string())
        } else {
            let base = path.parent().map(Path::to_path_buf);
            TableSchema::from_toml_str(&text, &path.display().to_string(), base.as_deref())
        }
    }
}

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

/// Type of an input field stored as a cell value (`formats/rowkey.md` §"Cell values").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ValueType {
    #[default]
    String,
    Int64,
    Double,
}

impl ValueType {
    pub fn from_name(s: &str) -> Option<ValueType> {
        match s {
            "string" => Some(ValueType::String),
            "int64" => Some(ValueType::Int64),
            "double" => Some(ValueType::Double),
            _ => None,
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
    pub qualifier: Vec<u8>,
    pub value_type: ValueType,
    pub timestamp: TimestampSource,
    /// How a [`TimestampSource::Field`] is read: `epoch_ms` (when `None`), `epoch_s` or a
    /// strftime format; kept as text, compiled by the import pipeline.
    pub timestamp_format: Option<String>,
    /// Where it was written, for messages.
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
}

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
        let name = TableName::parse(name).map_err(|e| match e {
            SchemaError::TableName { name, reason, .. } => {
                SchemaError::TableName { at, name, reason }
            }
            other => other,
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
                    AttrValue::Str(s) => parse_size_bytes(s).map_err(AttrError::Invalid)?,
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
                .map_err(|(attribute, value, reason)| SchemaError::InvalidAttribute {
                    at,
                    owner: Owner(Some(f.name.clone())),
                    attribute: attribute.to_string(),
                    value,
                    reason,
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

/// Checks explicit split keys as HBase's `createTable` would (non-empty, unique), with the
/// location of each key.
pub(crate) fn explicit_keys(keys: Vec<(String, At)>) -> Result<SplitSpec, SchemaError> {
    let mut out: Vec<Vec<u8>> = Vec::with_capacity(keys.len());
    let mut seen: BTreeMap<Vec<u8>, ()> = BTreeMap::new();
    for (text, at) in keys {
        let key = to_bytes_binary(&text).map_err(|reason| SchemaError::SplitKey {
            at: at.clone(),
            key: text.clone(),
            reason,
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

// ---------------------------------------------------------------------------------------------
// TOML form

struct TomlReader<'a> {
    text: &'a str,
    source: &'a str,
    base_dir: Option<&'a Path>,
}

type TomlValue<'i> = Spanned<DeValue<'i>>;

impl<'a> TomlReader<'a> {
    fn at(&self, offset: usize) -> At {
        At::from(Location::of_offset(self.source, self.text, offset))
    }

    fn syntax(&self, offset: usize, message: impl Into<String>) -> SchemaError {
        SchemaError::Syntax {
            at: self.at(offset),
            message: message.into(),
        }
    }

    fn read(&self) -> Result<ParsedSchema, SchemaError> {
        let root = DeTable::parse(self.text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            self.syntax(offset, format!("TOML: {}", e.message().trim()))
        })?;
        let root = root.get_ref();
        let mut table = None;
        let mut families = None;
        let mut splits = None;
        let mut rowkey = None;
        let mut columns = None;
        let mut indexes = None;
        for (k, v) in root.iter() {
            match k.get_ref().as_ref() {
                "table" => table = Some(v),
                "family" => families = Some(v),
                "splits" => splits = Some(v),
                "rowkey" => rowkey = Some(v),
                "column" => columns = Some(v),
                "index" => indexes = Some(v),
                other => {
                    return Err(self.syntax(
                        k.span().start,
                        format!(
                            "unknown section '{other}' (expected [table], [[family]], [splits], \
                             [rowkey], [[column]], [[index]])"
                        ),
                    ))
                }
            }
        }
        let Some(table) = table else {
            return Err(self.syntax(0, "missing [table] section with name = \"...\""));
        };
        let table_at = self.at(table.span().start);
        let mut b = self.read_table(table)?;
        if let Some(fams) = families {
            for f in self.array_of_tables(fams, "family")? {
                self.read_family(&mut b, f)?;
            }
        }
        if let Some(s) = splits {
            b.splits = self.read_splits(s)?;
        }
        let mut mapping = ImportMapping::default();
        if let Some(r) = rowkey {
            let t = self.table_of(r, "[rowkey]")?;
            for (k, v) in t.iter() {
                match k.get_ref().as_ref() {
                    "spec" => {
                        let s = self.string(v, "[rowkey] spec")?;
                        if s.trim().is_empty() {
                            return Err(self.syntax(v.span().start, "[rowkey] spec is empty"));
                        }
                        mapping.rowkey = Some(s.to_string());
                        mapping.rowkey_location =
                            Some(Location::of_offset(self.source, self.text, v.span().start));
                    }
                    "timestamp_format" => {
                        let s = self.string(v, "[rowkey] timestamp_format")?;
                        mapping.rowkey_timestamp_format = Some((
                            s.to_string(),
                            Location::of_offset(self.source, self.text, v.span().start),
                        ));
                    }
                    other => {
                        return Err(self.syntax(
                            k.span().start,
                            format!(
                            "unknown key '{other}' in [rowkey] (expected spec, timestamp_format)"
                        ),
                        ))
                    }
                }
            }
        }
        if let Some(cols) = columns {
            for (i, c) in self
                .array_of_tables(cols, "column")?
                .into_iter()
                .enumerate()
            {
                mapping.columns.push(self.read_column(i, c)?);
            }
        }
        let mut index_warnings = Vec::new();
        if let Some(ix) = indexes {
            for (i, v) in self.array_of_tables(ix, "index")?.into_iter().enumerate() {
                let (index, warnings) = self.read_index(i, v)?;
                let at = At(index.location.clone().map(Box::new));
                let name = index.full_name();
                if name == b.name.full_name() {
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
        }
        let mut parsed = b.finish(table_at, mapping)?;
        parsed.warnings.extend(index_warnings);
        Ok(parsed)
    }

    /// One `[[index]]`: `name`, `rowkey`, `cell = "family:qualifier"`, optional `timestamp`
    /// and `timestamp_format` (as in `[[column]]`), optional `[index.family]` attributes and
    /// `[index.splits]` (as `[splits]`).
    fn read_index(
        &self,
        index: usize,
        v: &TomlValue<'_>,
    ) -> Result<(IndexSchema, Vec<String>), SchemaError> {
        let t = self.table_of(v, "[[index]]")?;
        let location = Location::of_offset(self.source, self.text, v.span().start);
        let at = At::from(location.clone());
        let mut name = None;
        let mut rowkey = None;
        let mut cell = None;
        let mut timestamp = TimestampSource::ImportTime;
        let mut timestamp_format = None;
        let mut family_attrs = None;
        let mut splits = SplitSpec::None;
        for (k, val) in t.iter() {
            match k.get_ref().as_ref() {
                "name" => {
                    name = Some((
                        self.string(val, "[[index]] name")?,
                        self.at(val.span().start),
                    ))
                }
                "rowkey" => {
                    let s = self.string(val, "[[index]] rowkey")?;
                    if s.trim().is_empty() {
                        return Err(self.syntax(val.span().start, "[[index]] rowkey is empty"));
                    }
                    rowkey = Some((
                        s.to_string(),
                        Location::of_offset(self.source, self.text, val.span().start),
                    ));
                }
                "cell" => cell = Some((self.string(val, "[[index]] cell")?, val.span().start)),
                "timestamp" => timestamp = self.timestamp_source(val)?,
                "timestamp_format" => {
                    timestamp_format = Some((
                        self.string(val, "[[index]] timestamp_format")?.to_string(),
                        val.span().start,
                    ))
                }
                "family" => family_attrs = Some(val),
                "splits" => splits = self.read_splits(val)?,
                other => {
                    return Err(self.syntax(
                        k.span().start,
                        format!(
                            "unknown key '{other}' in [[index]] (expected name, rowkey, cell, \
                             timestamp, timestamp_format, [index.family], [index.splits])"
                        ),
                    ))
                }
            }
        }
        let what = match &name {
            Some((n, _)) => format!("index '{n}'"),
            None => format!("index #{}", index + 1),
        };
        let missing = |key: &str| SchemaError::Mapping {
            at: at.clone(),
            what: what.clone(),
            reason: format!("needs {key}"),
        };
        let (name, name_at) = name.ok_or_else(|| missing("name = \"namespace:table\""))?;
        let (rowkey, rowkey_location) = rowkey.ok_or_else(|| missing("rowkey = '<spec>'"))?;
        let (cell, cell_offset) = cell.ok_or_else(|| missing("cell = \"family:qualifier\""))?;
        let Some((family, qualifier)) = cell.split_once(':') else {
            return Err(SchemaError::Mapping {
                at: self.at(cell_offset),
                what,
                reason: format!("cell '{cell}' must be family:qualifier"),
            });
        };
        if let Some((_, offset)) = &timestamp_format {
            if !matches!(timestamp, TimestampSource::Field(_)) {
                return Err(SchemaError::Mapping {
                    at: self.at(*offset),
                    what,
                    reason: "timestamp_format needs timestamp = \"field\" (the field it reads)"
                        .into(),
                });
            }
        }
        let family_at = self.at(cell_offset);
        SchemaBuilder::check_family_name(family, &family_at)?;
        let mut f = FamilySchema::new(family);
        if let Some(attrs) = family_attrs {
            let t = self.table_of(attrs, "[index.family]")?;
            if let Some(n) = t.get("name").or_else(|| t.get("NAME")) {
                if self.string(n, "[index.family] name")? != family {
                    return Err(SchemaError::Mapping {
                        at: self.at(n.span().start),
                        what,
                        reason: format!(
                            "[index.family] name must be the family of cell '{cell}' ('{family}')"
                        ),
                    });
                }
            }
            self.family_attributes(&mut f, t)?;
        }
        let mut b = SchemaBuilder::new(name, name_at)?;
        b.add_family(f, family_at, false)?;
        b.splits = splits;
        let parsed = b.finish(at, ImportMapping::default())?;
        Ok((
            IndexSchema {
                table: parsed.table,
                rowkey,
                rowkey_location: Some(rowkey_location),
                qualifier: qualifier.as_bytes().to_vec(),
                timestamp,
                timestamp_format: timestamp_format.map(|(f, _)| f),
                location: Some(location),
            },
            parsed.warnings,
        ))
    }

    /// `timestamp = <epoch ms>` or `timestamp = "field"`.
    fn timestamp_source(&self, val: &TomlValue<'_>) -> Result<TimestampSource, SchemaError> {
        Ok(match val.get_ref() {
            DeValue::Integer(i) => TimestampSource::Fixed(
                i64::from_str_radix(i.as_str(), i.radix())
                    .ok()
                    .filter(|ts| *ts >= 0)
                    .ok_or_else(|| {
                        self.syntax(val.span().start, "timestamp must be in 0..=i64::MAX")
                    })?,
            ),
            DeValue::String(s) if !s.is_empty() => TimestampSource::Field(s.to_string()),
            _ => {
                return Err(self.syntax(
                    val.span().start,
                    "timestamp must be epoch milliseconds (integer) or a field name (string)",
                ))
            }
        })
    }

    fn table_of<'v, 'i>(
        &self,
        v: &'v TomlValue<'i>,
        what: &str,
    ) -> Result<&'v DeTable<'i>, SchemaError> {
        v.get_ref()
            .as_table()
            .ok_or_else(|| self.syntax(v.span().start, format!("{what} must be a table")))
    }

    fn array_of_tables<'v, 'i>(
        &self,
        v: &'v TomlValue<'i>,
        name: &str,
    ) -> Result<Vec<&'v TomlValue<'i>>, SchemaError> {
        let arr = v.get_ref().as_array().ok_or_else(|| {
            self.syntax(
                v.span().start,
                format!("'{name}' must be written [[{name}]]"),
            )
        })?;
        for item in arr.iter() {
            if !item.get_ref().is_table() {
                return Err(self.syntax(
                    item.span().start,
                    format!("each [[{name}]] must be a table"),
                ));
            }
        }
        Ok(arr.iter().collect())
    }

    fn string<'v>(&self, v: &'v TomlValue<'_>, what: &str) -> Result<&'v str, SchemaError> {
        v.get_ref().as_str().ok_or_else(|| {
            self.syntax(
                v.span().start,
                format!("{what} must be a string, not {}", v.get_ref().type_str()),
            )
        })
    }

    fn uint(&self, v: &TomlValue<'_>, what: &str) -> Result<usize, SchemaError> {
        v.get_ref()
            .as_integer()
            .and_then(|i| usize::from_str_radix(i.as_str(), i.radix()).ok())
            .ok_or_else(|| {
                self.syntax(
                    v.span().start,
                    format!("{what} must be a non-negative integer"),
                )
            })
    }

    /// A scalar attribute value.
    fn attr_value(&self, v: &TomlValue<'_>, attribute: &str) -> Result<AttrValue, SchemaError> {
        match v.get_ref() {
            DeValue::String(s) => Ok(AttrValue::Str(s.to_string())),
            DeValue::Boolean(b) => Ok(AttrValue::Bool(*b)),
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .map(AttrValue::Int)
                .map_err(|_| {
                    self.syntax(v.span().start, format!("{attribute}: integer out of range"))
                }),
            other => Err(self.syntax(
                v.span().start,
                format!(
                    "{attribute} must be a string, integer or boolean, not {}",
                    other.type_str()
                ),
            )),
        }
    }

    /// `METADATA` / `CONFIGURATION`: a table of scalars, kept as strings.
    fn string_map(
        &self,
        v: &TomlValue<'_>,
        what: &str,
    ) -> Result<BTreeMap<String, String>, SchemaError> {
        let t = self.table_of(v, what)?;
        let mut m = BTreeMap::new();
        for (k, val) in t.iter() {
            let value = self.attr_value(val, &format!("{what}.{}", k.get_ref()))?;
            m.insert(k.get_ref().to_string(), value.as_plain_string());
        }
        Ok(m)
    }

    fn read_table(&self, v: &TomlValue<'_>) -> Result<SchemaBuilder, SchemaError> {
        let t = self.table_of(v, "[table]")?;
        let Some(name) = t.get("name") else {
            return Err(self.syntax(v.span().start, "[table] needs name = \"namespace:table\""));
        };
        let mut b = SchemaBuilder::new(
            self.string(name, "[table] name")?,
            self.at(name.span().start),
        )?;
        for (k, val) in t.iter() {
            let key = k.get_ref().as_ref();
            let at = self.at(k.span().start);
            match key.to_ascii_uppercase().as_str() {
                "NAME" if key == "name" => {}
                "METADATA" => b.metadata = self.string_map(val, "[table] METADATA")?,
                "CONFIGURATION" => {
                    b.configuration = self.string_map(val, "[table] CONFIGURATION")?
                }
                _ => {
                    let value = self.attr_value(val, key)?;
                    b.set_table_attribute(key, &value)
                        .map_err(|e| attr_error(e, at, None, key, &value))?;
                }
            }
        }
        Ok(b)
    }

    fn read_family(&self, b: &mut SchemaBuilder, v: &TomlValue<'_>) -> Result<(), SchemaError> {
        let t = self.table_of(v, "[[family]]")?;
        let name_val = t
            .get("name")
            .or_else(|| t.get("NAME"))
            .ok_or_else(|| self.syntax(v.span().start, "[[family]] needs name = \"...\""))?;
        let name = self.string(name_val, "family name")?;
        let name_at = self.at(name_val.span().start);
        SchemaBuilder::check_family_name(name, &name_at)?;
        let mut f = FamilySchema::new(name);
        self.family_attributes(&mut f, t)?;
        b.add_family(f, name_at, false)
    }

    /// The attributes, `METADATA` and `CONFIGURATION` of a family table (`name` is skipped).
    fn family_attributes(&self, f: &mut FamilySchema, t: &DeTable<'_>) -> Result<(), SchemaError> {
        let name = f.name.clone();
        for (k, val) in t.iter() {
            let key = k.get_ref().as_ref();
            let at = self.at(k.span().start);
            match key.to_ascii_uppercase().as_str() {
                "NAME" => {}
                "METADATA" => {
                    f.metadata = self.string_map(val, &format!("family '{name}' METADATA"))?
                }
                "CONFIGURATION" => {
                    f.configuration =
                        self.string_map(val, &format!("family '{name}' CONFIGURATION"))?
                }
                _ => {
                    let value = self.attr_value(val, key)?;
                    f.set_attribute(key, &value)
                        .map_err(|e| attr_error(e, at, Some(&name), key, &value))?;
                }
            }
        }
        Ok(())
    }

    fn read_splits(&self, v: &TomlValue<'_>) -> Result<SplitSpec, SchemaError> {
        let t = self.table_of(v, "[splits]")?;
        let at = self.at(v.span().start);
        let mut spec: Option<SplitSpec> = None;
        let mut algo: Option<(SplitAlgorithm, At)> = None;
        let mut regions: Option<usize> = None;
        let mut first_row = None;
        let mut last_row = None;
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
        for (k, val) in t.iter() {
            let key_at = self.at(k.span().start);
            match k.get_ref().as_ref() {
                "keys" => {
                    let arr = val.get_ref().as_array().ok_or_else(|| {
                        self.syntax(
                            val.span().start,
                            "[splits] keys must be an array of strings",
                        )
                    })?;
                    let mut keys = Vec::new();
                    for item in arr.iter() {
                        keys.push((
                            self.string(item, "a split key")?.to_string(),
                            self.at(item.span().start),
                        ));
                    }
                    set(explicit_keys(keys)?, key_at)?;
                }
                "file" => {
                    let p = PathBuf::from(self.string(val, "[splits] file")?);
                    let p = match self.base_dir {
                        Some(base) if p.is_relative() => base.join(p),
                        _ => p,
                    };
                    set(SplitSpec::File(p), key_at)?;
                }
                "algorithm" => {
                    let name = self.string(val, "[splits] algorithm")?;
                    let a = SplitAlgorithm::from_name(name).ok_or_else(|| {
                        SchemaError::UnknownSplitAlgorithm {
                            at: self.at(val.span().start),
                            name: name.to_string(),
                        }
                    })?;
                    algo = Some((a, key_at));
                }
                "regions" => regions = Some(self.uint(val, "[splits] regions")?),
                "first_row" => {
                    first_row = Some(self.string(val, "[splits] first_row")?.to_string())
                }
                "last_row" => last_row = Some(self.string(val, "[splits] last_row")?.to_string()),
                "sample" => {
                    let n = self.uint(val, "[splits] sample")?;
                    if n < 2 {
                        return Err(SchemaError::Splits {
                            at: self.at(val.span().start),
                            reason: format!(
                                "sample = {n}: the number of regions must be greater than 1"
                            ),
                        });
                    }
                    set(SplitSpec::Sampled { regions: n }, key_at)?;
                }
                other => {
                    return Err(self.syntax(
                        k.span().start,
                        format!(
                            "unknown key '{other}' in [splits] (expected keys, file, algorithm, \
                             regions, first_row, last_row or sample)"
                        ),
                    ))
                }
            }
        }
        match (algo, regions) {
            (Some((a, a_at)), Some(n)) => {
                if n < 2 {
                    return Err(SchemaError::Splits {
                        at: a_at,
                        reason: format!("regions = {n}: the number of regions must be greater than 1"),
                    });
                }
                let s = SplitSpec::Algorithm { algo: a, regions: n, first_row, last_row };
                // Check now so errors point at the schema, not at import time.
                s.regions(None).map_err(|e| SchemaError::Splits { at: a_at.clone(), reason: e.to_string() })?;
                set(s, a_at)?;
            }
            (Some((_, a_at)), None) => {
                return Err(SchemaError::Splits { at: a_at, reason: "algorithm needs regions = N".into() })
            }
            (None, Some(_)) => {
                return Err(SchemaError::Splits {
                    at,
                    reason: "regions needs algorithm = \"HexStringSplit\" (or DecimalStringSplit, UniformSplit)".into(),
                })
            }
            (None, None) => {
                if first_row.is_some() || last_row.is_some() {
                    return Err(SchemaError::Splits { at, reason: "first_row/last_row need an algorithm".into() });
                }
            }
        }
        Ok(spec.unwrap_or_default())
    }

    fn read_column(&self, index: usize, v: &TomlValue<'_>) -> Result<ColumnMapping, SchemaError> {
        let t = self.table_of(v, "[[column]]")?;
        let location = Location::of_offset(self.source, self.text, v.span().start);
        let what = |source: &Option<String>| match source {
            Some(s) => format!("column '{s}'"),
            None => format!("column #{}", index + 1),
        };
        let mut source = None;
        let mut cell = None;
        let mut value_type = ValueType::String;
        let mut timestamp = TimestampSource::ImportTime;
        let mut timestamp_format = None;
        for (k, val) in t.iter() {
            match k.get_ref().as_ref() {
                "source" => source = Some(self.string(val, "[[column]] source")?.to_string()),
                "cell" => cell = Some((self.string(val, "[[column]] cell")?.to_string(), val.span().start)),
                "type" => {
                    let s = self.string(val, "[[column]] type")?;
                    value_type = ValueType::from_name(s).ok_or_else(|| {
                        self.syntax(val.span().start, format!("type '{s}': expected string, int64 or double"))
                    })?;
                }
                "timestamp" => timestamp = self.timestamp_source(val)?,
                "timestamp_format" => {
                    timestamp_format = Some((
                        self.string(val, "[[column]] timestamp_format")?.to_string(),
                        val.span().start,
                    ))
                }
                other => {
                    return Err(self.syntax(
                        k.span().start,
                        format!("unknown key '{other}' in [[column]] (expected source, cell, type, timestamp, timestamp_format)"),
                    ))
                }
            }
        }
        let at = At::from(location.clone());
        let Some(source_name) = source.clone() else {
            return Err(SchemaError::Mapping {
                at,
                what: what(&source),
                reason: "needs source = \"field\"".into(),
            });
        };
        let Some((cell, cell_offset)) = cell else {
            return Err(SchemaError::Mapping {
                at,
                what: what(&source),
                reason: "needs cell = \"family:qualifier\"".into(),
            });
        };
        let Some((family, qualifier)) = cell.split_once(':') else {
            return Err(SchemaError::Mapping {
                at: self.at(cell_offset),
                what: what(&source),
                reason: format!("cell '{cell}' must be family:qualifier"),
            });
        };
        if let Some((_, offset)) = &timestamp_format {
            if !matches!(timestamp, TimestampSource::Field(_)) {
                return Err(SchemaError::Mapping {
                    at: self.at(*offset),
                    what: what(&source),
                    reason: "timestamp_format needs timestamp = \"field\" (the field it reads)"
                        .into(),
                });
            }
        }
        Ok(ColumnMapping {
            source: source_name,
            family: family.to_string(),
            qualifier: qualifier.as_bytes().to_vec(),
            value_type,
            timestamp,
            timestamp_format: timestamp_format.map(|(f, _)| f),
            location: Some(location),
        })
    }
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

    fn toml(text: &str) -> Result<ParsedSchema, SchemaError> {
        TableSchema::from_toml_str(text, "s.toml", None)
    }

    fn err(text: &str) -> String {
        toml(text).unwrap_err().to_string()
    }

    #[test]
    fn table_names() {
        let t = TableName::parse("ns:users").unwrap();
        assert_eq!(
            (t.namespace.as_str(), t.qualifier.as_str()),
            ("ns", "users")
        );
        assert_eq!(t.full_name(), "ns:users");
        let t = TableName::parse("users.v2-x_1").unwrap();
        assert_eq!(t.namespace, "default");
        assert_eq!(t.full_name(), "users.v2-x_1");
        assert_eq!(TableName::parse("default:t").unwrap().full_name(), "t");
        assert!(TableName::parse("Ünïcode_表").is_ok());
        for bad in [
            "",
            "ns:",
            ":t",
            ".t",
            "-t",
            "a b",
            "ns-x:t",
            "zookeeper",
            "zookeeper:t",
            "a:b:c",
            "t/x",
            "t\u{1F600}",
        ] {
            assert!(TableName::parse(bad).is_err(), "{bad:?} should be refused");
        }
        let e = TableName::parse("ns-x:t").unwrap_err().to_string();
        assert!(e.contains("'ns-x:t'") && e.contains("namespace"), "{e}");
    }

    #[test]
    fn family_names() {
        for ok in ["d", "info", "a.b", "x-y", "\u{e9}", "f\u{85}"] {
            assert!(check_family_name(ok.as_bytes()).is_ok(), "{ok:?}");
        }
        for bad in [
            "",
            ".d",
            "a:b",
            "a/b",
            "a\\b",
            "a\tb",
            "a\x7fb",
            "recovered.edits",
        ] {
            assert!(
                check_family_name(bad.as_bytes()).is_err(),
                "{bad:?} should be refused"
            );
        }
        assert!(check_family_name(&[b'f'; 128]).is_err());
        assert!(check_family_name(&[b'f'; 127]).is_ok());
    }

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

    #[test]
    fn intervals_and_sizes() {
        assert_eq!(parse_interval_seconds("FOREVER"), Ok(TTL_FOREVER));
        assert_eq!(parse_interval_seconds("forever"), Ok(TTL_FOREVER));
        assert_eq!(parse_interval_seconds("86400"), Ok(86400));
        assert_eq!(parse_interval_seconds("1 DAY"), Ok(86400));
        assert_eq!(
            parse_interval_seconds("7 days 12 hours"),
            Ok(7 * 86400 + 12 * 3600)
        );
        assert_eq!(parse_interval_seconds("1 HOUR 1 MINUTE 1 SECOND"), Ok(3661));
        assert_eq!(parse_interval_seconds("2MINUTES"), Ok(120));
        assert_eq!(
            parse_interval_seconds("90061 SECONDS (1 DAY 1 HOUR 1 MINUTE 1 SECOND)"),
            Ok(90061)
        );
        assert!(parse_interval_seconds("90000 SECONDS (1 DAY 1 HOUR 1 MINUTE 1 SECOND)").is_err());
        assert!(
            parse_interval_seconds("1 HOUR 1 DAY").is_err(),
            "units out of order"
        );
        assert!(parse_interval_seconds("1 WEEK").is_err());
        assert!(parse_interval_seconds("").is_err());
        assert_eq!(parse_size_bytes("65536"), Ok(65536));
        assert_eq!(parse_size_bytes("64KB"), Ok(65536));
        assert_eq!(parse_size_bytes("64k"), Ok(65536));
        assert_eq!(parse_size_bytes("1 GB 512 MB"), Ok(1536 << 20));
        assert_eq!(parse_size_bytes("1 KB 10"), Ok(1034));
        assert_eq!(parse_size_bytes("1034 B (1KB 10B)"), Ok(1034));
        assert!(parse_size_bytes("64 XB").is_err());
    }

    #[test]
    fn intervals_print_as_hbase_prints_them_and_parse_back() {
        assert_eq!(format_interval_seconds(1), "1 SECOND");
        assert_eq!(format_interval_seconds(59), "59 SECONDS");
        assert_eq!(format_interval_seconds(604_800), "604800 SECONDS (7 DAYS)");
        assert_eq!(
            format_interval_seconds(90_061),
            "90061 SECONDS (1 DAY 1 HOUR 1 MINUTE 1 SECOND)"
        );
        assert_eq!(format_interval_seconds(TTL_FOREVER as u64), "FOREVER");
        for secs in [1u64, 60, 61, 3_600, 86_399, 86_400, 2_592_000, 123_456_789] {
            let text = format_interval_seconds(secs);
            assert_eq!(parse_interval_seconds(&text), Ok(secs as i64), "{text}");
        }
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
    fn splits_forms() {
        let base = "[table]\nname = \"t\"\n[[family]]\nname = \"f\"\n";
        let p = toml(&format!("{base}[splits]\nkeys = [\"b\", \"a\\\\x00\"]\n")).unwrap();
        assert_eq!(
            p.table.splits,
            SplitSpec::Explicit(vec![b"b".to_vec(), b"a\x00".to_vec()])
        );
        assert_eq!(
            p.table.splits.regions(None).unwrap().split_keys(),
            [b"a\x00".to_vec(), b"b".to_vec()]
        );
        let p = TableSchema::from_toml_str(
            &format!("{base}[splits]\nfile = \"s.txt\"\n"),
            "x",
            Some(Path::new("/d")),
        )
        .unwrap();
        assert_eq!(p.table.splits, SplitSpec::File(PathBuf::from("/d/s.txt")));
        let p = toml(&format!("{base}[splits]\nsample = 8\n")).unwrap();
        assert_eq!(p.table.splits, SplitSpec::Sampled { regions: 8 });
        assert!(p.table.splits.regions(None).is_err());
        let sample: Vec<Vec<u8>> = (0..80u8).map(|i| vec![i]).collect();
        assert_eq!(p.table.splits.regions(Some(&sample)).unwrap().len(), 8);
        let p = toml(&format!(
            "{base}[splits]\nalgorithm = \"org.apache.hadoop.hbase.util.RegionSplitter$UniformSplit\"\nregions = 4\nlast_row = \"\\\\xFF\"\n"
        ))
        .unwrap();
        let keys = p.table.splits.regions(None).unwrap();
        assert_eq!(keys.split_keys(), [vec![0x40], vec![0x80], vec![0xC0]]);
        assert!(toml(base).unwrap().table.splits == SplitSpec::None);

        let e = err(&format!("{base}[splits]\nkeys = [\"a\", \"b\", \"a\"]\n"));
        assert!(
            e.starts_with("s.toml:6:19: split key 'a'") && e.contains("unique"),
            "{e}"
        );
        let e = err(&format!("{base}[splits]\nkeys = [\"\"]\n"));
        assert!(
            e.starts_with("s.toml:6:9: split key ''") && e.contains("empty"),
            "{e}"
        );
        let e = err(&format!("{base}[splits]\nkeys = [\"a\"]\nsample = 3\n"));
        assert!(e.contains("only one of"), "{e}");
        let e = err(&format!("{base}[splits]\nalgorithm = \"HexStringSplit\"\n"));
        assert!(e.contains("needs regions"), "{e}");
        let e = err(&format!(
            "{base}[splits]\nalgorithm = \"MD5StringSplit\"\nregions = 3\n"
        ));
        assert!(
            e.starts_with("s.toml:6:13: unknown split algorithm 'MD5StringSplit'"),
            "{e}"
        );
        let e = err(&format!(
            "{base}[splits]\nalgorithm = \"DecimalStringSplit\"\nregions = 1\n"
        ));
        assert!(e.contains("greater than 1"), "{e}");
        let e = err(&format!("{base}[splits]\nregion = 3\n"));
        assert!(
            e.starts_with("s.toml:6:1: unknown key 'region' in [splits]"),
            "{e}"
        );
    }

    #[test]
    fn errors_name_the_item() {
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nVERSION = 3\n");
        assert_eq!(e, "s.toml:5:1: family 'd': unknown attribute 'VERSION'");
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nversions = 0\n");
        assert_eq!(
            e,
            "s.toml:5:1: family 'd': attribute VERSIONS = 0: must be between 1 and 2147483647"
        );
        let e = err(
            "[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nVERSIONS = 2\nMIN_VERSIONS = 3\n",
        );
        assert_eq!(
            e,
            "s.toml:4:8: family 'd': attribute MIN_VERSIONS = 3: must not exceed VERSIONS (2)"
        );
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nCOMPRESSION = \"LZO\"\n");
        assert!(e.starts_with("s.toml:5:1: family 'd': attribute COMPRESSION = 'LZO': HBase knows LZO, but hfkit cannot write it"), "{e}");
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nCOMPRESSION = \"FAST\"\n");
        assert!(e.contains("expected one of NONE, GZ"), "{e}");
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nBLOOMFILTER = \"ROWPREFIX_FIXED_LENGTH\"\n");
        assert!(
            e.contains("family 'd': attribute BLOOMFILTER")
                && e.contains("RowPrefixBloomFilter.prefix_length"),
            "{e}"
        );
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nTTL = 0\n");
        assert!(e.contains("TTL must be positive"), "{e}");
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nTTL = \"soon\"\n");
        assert!(e.contains("attribute TTL = 'soon'"), "{e}");
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nBLOCKSIZE = 512\n");
        assert!(e.contains("between 1024 (1K) and 16777216 (16MB)"), "{e}");
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nIN_MEMORY = \"yes\"\n");
        assert!(e.contains("expected true or false"), "{e}");
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nENCRYPTION = \"AES\"\n");
        assert!(e.contains("encrypted"), "{e}");
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \".d\"\n");
        assert_eq!(
            e,
            "s.toml:4:8: family name '.d': column family names cannot start with a period"
        );
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[[family]]\nname = \"d\"\n");
        assert_eq!(e, "s.toml:6:8: family 'd' is defined twice");
        let e = err("[table]\nname = \"t\"\n");
        assert_eq!(e, "s.toml:1:1: table 't' has no column family");
        let e = err("[table]\nname = \"bad name\"\n[[family]]\nname = \"d\"\n");
        assert!(e.starts_with("s.toml:2:8: table name 'bad name'"), "{e}");
        let e = err("[table]\nname = \"t\"\nCOLOR = 1\n[[family]]\nname = \"d\"\n");
        assert_eq!(e, "s.toml:3:1: table: unknown attribute 'COLOR'");
        let e = err("[tabel]\nname = \"t\"\n");
        assert!(e.starts_with("s.toml:1:2: unknown section 'tabel'"), "{e}");
        let e = err("[table]\nname = \n");
        assert!(e.starts_with("s.toml:2:") && e.contains("TOML"), "{e}");
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[[column]]\nsource = \"a\"\ncell = \"x:q\"\n");
        assert_eq!(
            e,
            "s.toml:5:1: column 'a': family 'x' is not a family of the table"
        );
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[[column]]\nsource = \"a\"\ncell = \"dq\"\n");
        assert_eq!(
            e,
            "s.toml:7:8: column 'a': cell 'dq' must be family:qualifier"
        );
        let e =
            err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[[column]]\ncell = \"d:q\"\n");
        assert_eq!(e, "s.toml:5:1: column #1: needs source = \"field\"");
        let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[[column]]\nsource = \"a\"\ncell = \"d:q\"\ntype = \"int\"\n");
        assert!(e.starts_with("s.toml:8:8: type 'int'"), "{e}");
    }

    #[test]
    fn warnings_do_not_fail() {
        let p = toml("[table]\nname = \"hbase:t\"\n[[family]]\nname = \"a\"\n[[family]]\nname = \"b\"\n[[family]]\nname = \"c\"\n[[family]]\nname = \"d\"\n").unwrap();
        assert_eq!(p.table.families.len(), 4);
        assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
        assert!(p.warnings[0].contains("system namespace"));
        assert!(p.warnings[1].contains("4 column families"));
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
