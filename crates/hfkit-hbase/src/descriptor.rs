//! Table and column-family descriptors in HBase's layout: the `.tabledesc/.tableinfo.*` files
//! and `TableSchema` messages, the attributes hfkit reads and writes (under HBase's names), and
//! the text of HBase's `TableDescriptor.toString()` (what the shell's `describe` shows).
//! Spec: `formats/hbase-layout.md` §"Table descriptors".

use std::path::{Path, PathBuf};

use prost::Message;

use super::proto::{self, BytesBytesPair, NameStringPair};
use super::{pb_magic, ContentError, HBaseError, Result};
use hfkit_read::FamilyReadSettings;
use hfkit_table::manifest::FamilyEntry;
use hfkit_table::read::family_read_settings;
use hfkit_table::schema::{ROW_PREFIX_LENGTH_KEY, TTL_FOREVER};
use hfkit_table::{to_string_binary, TableName};

/// The descriptor directory of a table (and of a v1 snapshot).
pub const TABLEINFO_DIR: &str = ".tabledesc";
/// Prefix of descriptor file names: `.tableinfo.<seq, 10 digits>[.<length>]`.
pub const TABLEINFO_PREFIX: &str = ".tableinfo";
/// The table or family attribute (or configuration key) choosing the store-file tracker.
pub const TRACKER_IMPL: &str = "hbase.store.file-tracker.impl";

/// Family attributes HBase's `describe` prints as attributes (the others go under METADATA).
const FAMILY_RESERVED: &[&str] = &[
    "BLOOMFILTER",
    "REPLICATION_SCOPE",
    "VERSIONS",
    "MIN_VERSIONS",
    "COMPRESSION",
    "TTL",
    "BLOCKSIZE",
    "IN_MEMORY",
    "BLOCKCACHE",
    "KEEP_DELETED_CELLS",
    "DATA_BLOCK_ENCODING",
    "INDEX_BLOCK_ENCODING",
    "ENCRYPTION",
    "ENCRYPTION_KEY",
    "ENCRYPTION_KEY_NAMESPACE",
    "IS_MOB",
    "MOB_THRESHOLD",
    "MOB_COMPACT_PARTITION_POLICY",
];

/// Family attributes [`FamilyDescriptor::family_entry`] reads into the entry's own fields.
const FAMILY_INTERPRETED: &[&str] = &[
    "VERSIONS",
    "MIN_VERSIONS",
    "TTL",
    "BLOCKSIZE",
    "KEEP_DELETED_CELLS",
    "COMPRESSION",
    "DATA_BLOCK_ENCODING",
    "BLOOMFILTER",
    "IN_MEMORY",
    "COMPRESS_TAGS",
];

/// Family attributes with the values `ColumnFamilyDescriptorBuilder` gives every new family
/// ([`FamilyDescriptor::from_family_entry`] writes them): kept by an entry only when they
/// differ.
const FAMILY_BUILDER_DEFAULTS: &[(&str, &str)] = &[
    ("INDEX_BLOCK_ENCODING", "NONE"),
    ("REPLICATION_SCOPE", "0"),
    ("BLOCKCACHE", "true"),
];

/// Table attributes HBase's `describe` prints as attributes (the others go under METADATA).
const TABLE_RESERVED: &[&str] = &[
    "MAX_FILESIZE",
    "READONLY",
    "MEMSTORE_FLUSHSIZE",
    "DURABILITY",
    "REGION_REPLICATION",
    "PRIORITY",
    "ERASURE_CODING_POLICY",
    "IS_META",
];

/// A column family: name, attributes and configuration, in stored order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyDescriptor {
    pub name: Vec<u8>,
    pub attributes: Vec<(Vec<u8>, Vec<u8>)>,
    pub configuration: Vec<(String, String)>,
}

/// A table descriptor: name, attributes, configuration and families, in stored order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableDescriptor {
    pub table: TableName,
    pub attributes: Vec<(Vec<u8>, Vec<u8>)>,
    pub configuration: Vec<(String, String)>,
    pub families: Vec<FamilyDescriptor>,
}

fn pairs(v: &[BytesBytesPair]) -> Vec<(Vec<u8>, Vec<u8>)> {
    v.iter()
        .map(|p| (p.first.clone(), p.second.clone()))
        .collect()
}

fn to_pairs(v: &[(Vec<u8>, Vec<u8>)]) -> Vec<BytesBytesPair> {
    v.iter()
        .map(|(a, b)| BytesBytesPair {
            first: a.clone(),
            second: b.clone(),
        })
        .collect()
}

fn strings(v: &[NameStringPair]) -> Vec<(String, String)> {
    v.iter()
        .map(|p| (p.name.clone(), p.value.clone()))
        .collect()
}

fn to_strings(v: &[(String, String)]) -> Vec<NameStringPair> {
    v.iter()
        .map(|(a, b)| NameStringPair {
            name: a.clone(),
            value: b.clone(),
        })
        .collect()
}

fn lookup<'a>(v: &'a [(Vec<u8>, Vec<u8>)], key: &str) -> Option<&'a [u8]> {
    v.iter()
        .find(|(k, _)| k.as_slice() == key.as_bytes())
        .map(|(_, val)| val.as_slice())
}

impl FamilyDescriptor {
    /// The family name as text.
    pub fn name_str(&self) -> String {
        String::from_utf8_lossy(&self.name).into_owned()
    }

    /// An attribute's value as text.
    pub fn value(&self, key: &str) -> Option<String> {
        lookup(&self.attributes, key).map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// A configuration entry.
    pub fn config(&self, key: &str) -> Option<&str> {
        self.configuration
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The family as an hfkit [`FamilyEntry`] (HBase's defaults for absent attributes). The
    /// error ([`HBaseError::FamilyAttribute`]) names the family, attribute and value.
    pub fn family_entry(&self) -> Result<FamilyEntry> {
        let name = self.name_str();
        let mut e = FamilyEntry::new(&name);
        let bad = |key: &'static str, value: &str| HBaseError::FamilyAttribute {
            family: name.clone(),
            key,
            value: value.to_string(),
        };
        let int = |k: &'static str| -> Result<Option<i64>> {
            self.value(k)
                .map(|v| v.trim().parse::<i64>().map_err(|_| bad(k, &v)))
                .transpose()
        };
        if let Some(v) = int("VERSIONS")? {
            e.versions = u32::try_from(v).map_err(|_| bad("VERSIONS", &v.to_string()))?;
        }
        if let Some(v) = int("MIN_VERSIONS")? {
            e.min_versions = u32::try_from(v).map_err(|_| bad("MIN_VERSIONS", &v.to_string()))?;
        }
        if let Some(v) = int("TTL")? {
            if v <= 0 || v > TTL_FOREVER {
                return Err(bad("TTL", &v.to_string()));
            }
            e.ttl_seconds = (v != TTL_FOREVER).then_some(v as u64);
        }
        if let Some(v) = int("BLOCKSIZE")? {
            e.block_size = u32::try_from(v).map_err(|_| bad("BLOCKSIZE", &v.to_string()))?;
        }
        if let Some(v) = self.value("KEEP_DELETED_CELLS") {
            e.keep_deleted_cells = v.to_ascii_uppercase();
        }
        if let Some(v) = self.value("COMPRESSION") {
            e.compression = v.to_ascii_uppercase();
        }
        if let Some(v) = self.value("DATA_BLOCK_ENCODING") {
            e.data_block_encoding = v.to_ascii_uppercase();
        }
        if let Some(v) = self.value("BLOOMFILTER") {
            let v = v.to_ascii_uppercase();
            e.bloom_filter = if v == "ROWPREFIX_FIXED_LENGTH" {
                let n = self
                    .config(ROW_PREFIX_LENGTH_KEY)
                    .map(str::to_string)
                    .or_else(|| self.value(ROW_PREFIX_LENGTH_KEY))
                    .ok_or_else(|| bad("BLOOMFILTER", &v))?;
                format!("ROWPREFIX_FIXED_LENGTH:{}", n.trim())
            } else {
                v
            };
        }
        if let Some(v) = self.value("IN_MEMORY") {
            e.in_memory = v.trim().eq_ignore_ascii_case("true");
        }
        if let Some(v) = self.value("COMPRESS_TAGS") {
            e.compress_tags = !v.trim().eq_ignore_ascii_case("false");
        }
        // Every other attribute and the configuration, kept (MOB settings, user metadata,
        // HBase's writer keys): a clone and a compaction write as the family says.
        let prefix = e.bloom_filter.starts_with("ROWPREFIX_FIXED_LENGTH:");
        for (k, v) in &self.attributes {
            let key = String::from_utf8_lossy(k).into_owned();
            let value = String::from_utf8_lossy(v).into_owned();
            let default = FAMILY_BUILDER_DEFAULTS.contains(&(key.as_str(), value.as_str()));
            if FAMILY_INTERPRETED.contains(&key.as_str())
                || default
                || (prefix && key == ROW_PREFIX_LENGTH_KEY)
            {
                continue;
            }
            let attribute = FAMILY_RESERVED.contains(&key.as_str())
                || key
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
            match attribute {
                true => e.other.attributes.insert(key, value),
                false => e.other.metadata.insert(key, value),
            };
        }
        for (k, v) in &self.configuration {
            if !(prefix && k == ROW_PREFIX_LENGTH_KEY) {
                e.other.configuration.insert(k.clone(), v.clone());
            }
        }
        Ok(e)
    }

    /// The settings reads of this family use.
    pub fn read_settings(&self) -> Result<FamilyReadSettings> {
        Ok(family_read_settings(&self.family_entry()?)?)
    }

    /// The family of an hfkit table, with the attributes HBase's `ColumnFamilyDescriptorBuilder`
    /// writes for a new family, in the order HBase stores them.
    pub fn from_family_entry(f: &FamilyEntry) -> FamilyDescriptor {
        let (bloom, prefix) = match f.bloom_filter.split_once(':') {
            Some((b, n)) => (b.to_string(), Some(n.to_string())),
            None => (f.bloom_filter.clone(), None),
        };
        let ttl = f
            .ttl_seconds
            .map_or(TTL_FOREVER.to_string(), |t| t.to_string());
        let attrs: [(&str, String); 12] = [
            ("INDEX_BLOCK_ENCODING", "NONE".into()),
            ("VERSIONS", f.versions.to_string()),
            ("KEEP_DELETED_CELLS", f.keep_deleted_cells.clone()),
            ("DATA_BLOCK_ENCODING", f.data_block_encoding.clone()),
            ("TTL", ttl),
            ("MIN_VERSIONS", f.min_versions.to_string()),
            ("REPLICATION_SCOPE", "0".into()),
            ("BLOOMFILTER", bloom),
            ("IN_MEMORY", "false".into()),
            ("COMPRESSION", f.compression.clone()),
            ("BLOCKCACHE", "true".into()),
            ("BLOCKSIZE", f.block_size.to_string()),
        ];
        let mut attributes: Vec<(Vec<u8>, Vec<u8>)> = attrs
            .into_iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.into_bytes()))
            .collect();
        let mut set =
            |k: &str, v: &str| match attributes.iter_mut().find(|(x, _)| x == k.as_bytes()) {
                Some((_, old)) => *old = v.as_bytes().to_vec(),
                None => attributes.push((k.as_bytes().to_vec(), v.as_bytes().to_vec())),
            };
        set("IN_MEMORY", if f.in_memory { "true" } else { "false" });
        if !f.compress_tags {
            set("COMPRESS_TAGS", "false");
        }
        // The family's other attributes and its METADATA: one map in HBase's descriptor.
        for (k, v) in f.other.attributes.iter().chain(&f.other.metadata) {
            set(k, v);
        }
        let mut configuration: Vec<(String, String)> = prefix
            .clone()
            .map(|n| vec![(ROW_PREFIX_LENGTH_KEY.to_string(), n)])
            .unwrap_or_default();
        for (k, v) in &f.other.configuration {
            if !(prefix.is_some() && k == ROW_PREFIX_LENGTH_KEY) {
                configuration.push((k.clone(), v.clone()));
            }
        }
        FamilyDescriptor {
            name: f.name.as_bytes().to_vec(),
            attributes,
            configuration,
        }
    }

    /// HBase's `ColumnFamilyDescriptor.toString()`: `{NAME => 'f', KEY => 'value', ...}`.
    pub fn describe(&self) -> String {
        let mut s = format!("{{NAME => '{}'", self.name_str());
        let mut metadata = Vec::new();
        for (k, v) in &self.attributes {
            let key = String::from_utf8_lossy(k).into_owned();
            let value = pretty(&key, &to_string_binary(v));
            if FAMILY_RESERVED.contains(&key.as_str()) {
                s.push_str(&format!(", {key} => '{value}'"));
            } else {
                metadata.push(format!("'{key}' => '{value}'"));
            }
        }
        if !metadata.is_empty() {
            s.push_str(&format!(", METADATA => {{{}}}", metadata.join(", ")));
        }
        if !self.configuration.is_empty() {
            let c: Vec<String> = self
                .configuration
                .iter()
                .map(|(k, v)| format!("'{k}' => '{}'", pretty(k, v)))
                .collect();
            s.push_str(&format!(", CONFIGURATION => {{{}}}", c.join(", ")));
        }
        s.push('}');
        s
    }

    fn to_proto(&self) -> proto::ColumnFamilySchema {
        proto::ColumnFamilySchema {
            name: self.name.clone(),
            attributes: to_pairs(&self.attributes),
            configuration: to_strings(&self.configuration),
        }
    }
}

/// `PrettyPrinter.format` for the keys HBase formats: TTL as a time interval, BLOCKSIZE,
/// MAX_FILESIZE and MEMSTORE_FLUSHSIZE as byte sizes; others as they are.
fn pretty(key: &str, value: &str) -> String {
    let Ok(n) = value.parse::<i64>() else {
        return value.to_string();
    };
    match key {
        "TTL" => human_interval(n),
        "BLOCKSIZE" | "MAX_FILESIZE" | "MEMSTORE_FLUSHSIZE" => human_bytes(n),
        _ => value.to_string(),
    }
}

/// `PrettyPrinter.humanReadableTTL`, including its plural rule for the seconds part (which
/// looks at the minutes).
fn human_interval(interval: i64) -> String {
    if interval == i64::from(i32::MAX) {
        return "FOREVER".into();
    }
    if interval < 60 {
        return format!("{interval} SECOND{}", if interval == 1 { "" } else { "S" });
    }
    let days = interval / 86_400;
    let hours = (interval - days * 86_400) / 3_600;
    let minutes = (interval - days * 86_400 - hours * 3_600) / 60;
    let seconds = interval - days * 86_400 - hours * 3_600 - minutes * 60;
    let mut s = format!("{interval} SECONDS (");
    let plural = |n: i64| if n == 1 { "" } else { "S" };
    if days > 0 {
        s.push_str(&format!("{days} DAY{}", plural(days)));
    }
    if hours > 0 {
        let sep = if days > 0 { " " } else { "" };
        s.push_str(&format!("{sep}{hours} HOUR{}", plural(hours)));
    }
    if minutes > 0 {
        let sep = if days + hours > 0 { " " } else { "" };
        s.push_str(&format!("{sep}{minutes} MINUTE{}", plural(minutes)));
    }
    if seconds > 0 {
        let sep = if days + hours + minutes > 0 { " " } else { "" };
        s.push_str(&format!("{sep}{seconds} SECOND{}", plural(minutes)));
    }
    s.push(')');
    s
}

/// `PrettyPrinter.humanReadableByte`.
fn human_bytes(size: i64) -> String {
    const KB: i64 = 1 << 10;
    if size < KB {
        return format!("{size} B");
    }
    let units = [
        ("TB", KB << 30),
        ("GB", KB << 20),
        ("MB", KB << 10),
        ("KB", KB),
    ];
    let mut rest = size;
    let mut parts = Vec::new();
    for (name, unit) in units {
        let n = rest / unit;
        rest -= n * unit;
        if n > 0 {
            parts.push(format!("{n}{name}"));
        }
    }
    if rest > 0 {
        parts.push(format!("{rest}B"));
    }
    format!("{size} B ({})", parts.join(" "))
}

impl TableDescriptor {
    /// The family named `name`.
    pub fn family(&self, name: &[u8]) -> Option<&FamilyDescriptor> {
        self.families.iter().find(|f| f.name == name)
    }

    /// The families in name order (as HBase keeps them).
    pub fn sorted_families(&self) -> Vec<&FamilyDescriptor> {
        let mut v: Vec<&FamilyDescriptor> = self.families.iter().collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// An attribute's value as text.
    pub fn value(&self, key: &str) -> Option<String> {
        lookup(&self.attributes, key).map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// The store-file tracker a family's stores use (`hbase.store.file-tracker.impl`,
    /// upper-case: `DEFAULT`, `FILE`, `MIGRATION` or a class name): the family's attributes,
    /// then its configuration, then the table's attributes and configuration.
    pub fn store_file_tracker(&self, family: &FamilyDescriptor) -> String {
        family
            .value(TRACKER_IMPL)
            .or_else(|| family.config(TRACKER_IMPL).map(str::to_string))
            .or_else(|| self.value(TRACKER_IMPL))
            .or_else(|| {
                self.configuration
                    .iter()
                    .find(|(k, _)| k == TRACKER_IMPL)
                    .map(|(_, v)| v.clone())
            })
            .map(|v| v.to_ascii_uppercase())
            .unwrap_or_else(|| "DEFAULT".into())
    }

    /// A descriptor from its protobuf message.
    pub fn from_proto(p: &proto::TableSchema) -> Result<TableDescriptor, ContentError> {
        let name = p.table_name.as_ref().ok_or(ContentError::NoTableName)?;
        let ns = String::from_utf8_lossy(&name.namespace);
        let q = String::from_utf8_lossy(&name.qualifier);
        let table = TableName::parse(&format!("{ns}:{q}"))?;
        Ok(TableDescriptor {
            table,
            attributes: pairs(&p.attributes),
            configuration: strings(&p.configuration),
            families: p
                .column_families
                .iter()
                .map(|f| FamilyDescriptor {
                    name: f.name.clone(),
                    attributes: pairs(&f.attributes),
                    configuration: strings(&f.configuration),
                })
                .collect(),
        })
    }

    /// The protobuf message.
    pub fn to_proto(&self) -> proto::TableSchema {
        proto::TableSchema {
            table_name: Some(proto::TableName {
                namespace: self.table.namespace.as_bytes().to_vec(),
                qualifier: self.table.qualifier.as_bytes().to_vec(),
            }),
            attributes: to_pairs(&self.attributes),
            column_families: self.families.iter().map(|f| f.to_proto()).collect(),
            configuration: to_strings(&self.configuration),
        }
    }

    /// The descriptor of an hfkit table's families, as HBase writes one for a new user table.
    pub fn from_families(table: TableName, families: &[FamilyEntry]) -> TableDescriptor {
        TableDescriptor {
            table,
            attributes: vec![(b"IS_META".to_vec(), b"false".to_vec())],
            configuration: Vec::new(),
            families: families
                .iter()
                .map(FamilyDescriptor::from_family_entry)
                .collect(),
        }
    }

    /// HBase's `TableDescriptor.toString()`: `'name', {TABLE_ATTRIBUTES => {...}}, {NAME =>
    /// 'f', ...}, ...` (families in name order; IS_META only when true).
    pub fn describe(&self) -> String {
        let mut s = format!("'{}'", self.table.full_name());
        let mut reserved = Vec::new();
        let mut user = Vec::new();
        for (k, v) in &self.attributes {
            let key = String::from_utf8_lossy(k).into_owned();
            if TABLE_RESERVED.contains(&key.as_str()) || key.starts_with("coprocessor$") {
                if key == "IS_META" && !String::from_utf8_lossy(v).eq_ignore_ascii_case("true") {
                    continue;
                }
                reserved.push((k.clone(), key, v));
            } else {
                user.push((k.clone(), key, v));
            }
        }
        reserved.sort();
        user.sort();
        if !reserved.is_empty() || !user.is_empty() {
            let mut parts: Vec<String> = reserved
                .iter()
                .map(|(_, k, v)| format!("{k} => '{}'", pretty(k, &to_string_binary(v))))
                .collect();
            if !user.is_empty() {
                let u: Vec<String> = user
                    .iter()
                    .map(|(_, k, v)| format!("'{k}' => '{}'", pretty(k, &to_string_binary(v))))
                    .collect();
                parts.push(format!("METADATA => {{{}}}", u.join(", ")));
            }
            s.push_str(&format!(
                ", {{TABLE_ATTRIBUTES => {{{}}}}}",
                parts.join(", ")
            ));
        }
        for f in self.sorted_families() {
            s.push_str(", ");
            s.push_str(&f.describe());
        }
        s
    }

    /// The bytes of a `.tableinfo` file: `PBUF` + the message.
    pub fn to_file_bytes(&self) -> Vec<u8> {
        let mut b = hfkit_format::fileinfo::PB_MAGIC.to_vec();
        b.extend(self.to_proto().encode_to_vec());
        b
    }

    /// Reads the current descriptor of the table at `table_dir` (`FSTableDescriptors`): the
    /// `.tabledesc/.tableinfo.*` file with the greatest name that reads whole and parses (a
    /// newer half-written one is skipped, as HBase does). Returns its path too.
    pub fn read_dir(table_dir: &Path) -> Result<(PathBuf, TableDescriptor)> {
        let dir = table_dir.join(TABLEINFO_DIR);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .map_err(|e| HBaseError::io(&dir, e))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(TABLEINFO_PREFIX))
            .collect();
        names.sort_by(|a, b| b.cmp(a));
        let mut first_problem = None;
        for name in names {
            let path = dir.join(&name);
            match read_tableinfo(&path, &name) {
                Ok(td) => return Ok((path, td)),
                Err(e) => {
                    first_problem.get_or_insert(e);
                }
            }
        }
        Err(first_problem.unwrap_or_else(|| {
            HBaseError::corrupt(&dir, "no .tableinfo file (the table has no descriptor)")
        }))
    }
}

/// Reads one `.tableinfo` file, checking its length against the one in its name.
fn read_tableinfo(path: &Path, name: &str) -> Result<TableDescriptor> {
    let bytes = std::fs::read(path).map_err(|e| HBaseError::io(path, e))?;
    let mut parts = name[TABLEINFO_PREFIX.len()..].split('.').skip(1);
    let _seq = parts.next();
    if let Some(len) = parts.next().and_then(|l| l.parse::<usize>().ok()) {
        if bytes.len() != len {
            return Err(HBaseError::corrupt(
                path,
                format!("{} bytes, the name says {len} (half written?)", bytes.len()),
            ));
        }
    }
    let body = pb_magic(path, &bytes)?;
    let p = proto::TableSchema::decode(body)
        .map_err(|e| HBaseError::corrupt(path, format!("not a TableSchema: {e}")))?;
    TableDescriptor::from_proto(&p).map_err(|e| HBaseError::content(path, e))
}

/// The name of the first descriptor file of a table holding `bytes`.
pub fn tableinfo_file_name(seq: u32, bytes: &[u8]) -> String {
    format!("{TABLEINFO_PREFIX}.{seq:010}.{}", bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hbase_pretty_printing() {
        assert_eq!(human_interval(2147483647), "FOREVER");
        assert_eq!(human_interval(315360000), "315360000 SECONDS (3650 DAYS)");
        assert_eq!(human_interval(1), "1 SECOND");
        assert_eq!(
            human_interval(90061),
            "90061 SECONDS (1 DAY 1 HOUR 1 MINUTE 1 SECOND)"
        );
        // HBase pluralises the seconds by the minutes.
        assert_eq!(human_interval(3602), "3602 SECONDS (1 HOUR 2 SECONDS)");
        assert_eq!(
            human_interval(3662),
            "3662 SECONDS (1 HOUR 1 MINUTE 2 SECOND)"
        );
        assert_eq!(human_bytes(4096), "4096 B (4KB)");
        assert_eq!(human_bytes(65536), "65536 B (64KB)");
        assert_eq!(human_bytes(1034), "1034 B (1KB 10B)");
        assert_eq!(human_bytes(512), "512 B");
    }

    #[test]
    fn family_entries_round_trip_through_hbase_attributes() {
        let mut f = FamilyEntry::new("cf");
        f.versions = 5;
        f.min_versions = 1;
        f.ttl_seconds = Some(600);
        f.keep_deleted_cells = "TTL".into();
        f.compression = "GZ".into();
        f.data_block_encoding = "FAST_DIFF".into();
        f.bloom_filter = "ROWPREFIX_FIXED_LENGTH:4".into();
        f.block_size = 8192;
        let d = FamilyDescriptor::from_family_entry(&f);
        assert_eq!(d.family_entry().unwrap(), f);
        // Every other setting too: IN_MEMORY, COMPRESS_TAGS, MOB attributes, user metadata,
        // HBase's writer keys in the configuration.
        let mut g = f.clone();
        g.in_memory = true;
        g.compress_tags = false;
        for (k, v) in [
            ("IS_MOB", "true"),
            ("MOB_THRESHOLD", "10"),
            ("BLOCKCACHE", "false"),
        ] {
            g.other.attributes.insert(k.into(), v.into());
        }
        g.other.metadata.insert("owner".into(), "x".into());
        g.other
            .configuration
            .insert("io.storefile.bloom.block.size".into(), "512".into());
        let dg = FamilyDescriptor::from_family_entry(&g);
        assert_eq!(dg.family_entry().unwrap(), g);
        let shown = dg.describe();
        for part in [
            "IS_MOB => 'true'",
            "MOB_THRESHOLD => '10'",
            "IN_MEMORY => 'true'",
            "'COMPRESS_TAGS' => 'false'",
            "BLOCKCACHE => 'false'",
            "'owner' => 'x'",
            "'io.storefile.bloom.block.size' => '512'",
        ] {
            assert!(shown.contains(part), "{part}: {shown}");
        }
        assert_eq!(
            FamilyDescriptor::from_family_entry(&FamilyEntry::new("f")).describe(),
            "{NAME => 'f', INDEX_BLOCK_ENCODING => 'NONE', VERSIONS => '1', \
             KEEP_DELETED_CELLS => 'FALSE', DATA_BLOCK_ENCODING => 'NONE', TTL => 'FOREVER', \
             MIN_VERSIONS => '0', REPLICATION_SCOPE => '0', BLOOMFILTER => 'ROW', \
             IN_MEMORY => 'false', COMPRESSION => 'NONE', BLOCKCACHE => 'true', \
             BLOCKSIZE => '65536 B (64KB)'}"
        );
        assert!(d
            .describe()
            .ends_with("CONFIGURATION => {'RowPrefixBloomFilter.prefix_length' => '4'}}"));
        let mut bad = d.clone();
        bad.attributes.push((b"VERSIONS".to_vec(), b"x".to_vec()));
        bad.attributes
            .retain(|(k, v)| k != b"VERSIONS" || v == b"x");
        assert_eq!(
            bad.family_entry().unwrap_err().to_string(),
            "family cf: VERSIONS 'x' is not valid"
        );
    }

    #[test]
    fn descriptor_errors_are_typed() {
        let mut d = FamilyDescriptor::from_family_entry(&FamilyEntry::new("cf"));
        d.attributes.retain(|(k, _)| k != b"TTL");
        d.attributes.push((b"TTL".to_vec(), b"-5".to_vec()));
        match d.family_entry() {
            Err(HBaseError::FamilyAttribute { family, key, value }) => {
                assert_eq!((family.as_str(), key, value.as_str()), ("cf", "TTL", "-5"))
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            d.read_settings(),
            Err(HBaseError::FamilyAttribute { key: "TTL", .. })
        ));
        let table = TableName::parse("ns:t").unwrap();
        let mut p = TableDescriptor::from_families(table, &[FamilyEntry::new("f")]).to_proto();
        p.table_name = None;
        assert!(matches!(
            TableDescriptor::from_proto(&p),
            Err(ContentError::NoTableName)
        ));
    }
}
