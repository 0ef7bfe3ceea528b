//! The manifest: the one source of truth for which store files are live in a table, and the
//! checksummed `CURRENT` pointer that publishes a manifest version atomically.
//! Spec: `formats/table.md` §"Manifest" and §"Commit protocol".
//!
//! ```text
//! TABLE/CURRENT                            "manifest-00000000000000000042.json <crc32c hex>\n"
//! TABLE/manifests/manifest-<version>.json  immutable once written; JSON, keys as hex
//! ```
//!
//! Publishing version N+1: write `manifests/manifest-N+1.json` under a temporary name, fsync,
//! rename, fsync `manifests/`; write `CURRENT.tmp` (name + CRC32C of the manifest bytes), fsync,
//! rename over `CURRENT`, fsync the table directory. A reader reads `CURRENT` once and then
//! only that manifest version, so it sees one whole version for the whole of a read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::fsops::Fs;
use super::TableError;
use hfkit_format::bloom::BloomType;
use hfkit_format::checksum::crc32c;
use hfkit_format::compression::Compression;
use hfkit_format::encoding::DataBlockEncoding;
use hfkit_format::writer::{BulkLoadInfo, WriterOptions};

/// File name of the pointer to the live manifest.
pub const CURRENT: &str = "CURRENT";
/// Directory of store files.
pub const DATA_DIR: &str = "data";
/// Directory of manifest versions.
pub const MANIFEST_DIR: &str = "manifests";
/// Manifest format version written in every manifest.
pub const FORMAT_VERSION: u32 = 1;

/// A region: rows in `[start_key, end_key)`; empty end key = unbounded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionEntry {
    /// Directory name under `data/`.
    pub id: String,
    #[serde(with = "hex_bytes")]
    pub start_key: Vec<u8>,
    #[serde(with = "hex_bytes")]
    pub end_key: Vec<u8>,
}

impl RegionEntry {
    /// True when `row` falls in this region.
    pub fn contains(&self, row: &[u8]) -> bool {
        row >= self.start_key.as_slice()
            && (self.end_key.is_empty() || row < self.end_key.as_slice())
    }
}

/// A live store file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreFileEntry {
    pub region: String,
    pub family: String,
    /// File name within `data/<region>/<family>/`.
    pub name: String,
    /// Sequence id: every cell of the file carries it; later attaches win ties.
    pub seq_id: u64,
    pub size: u64,
    pub entries: u64,
    #[serde(with = "hex_bytes")]
    pub first_row: Vec<u8>,
    #[serde(with = "hex_bytes")]
    pub last_row: Vec<u8>,
    pub min_ts: i64,
    pub max_ts: i64,
    /// Set on the output of a compaction of every file of its store that left no delete
    /// marker and no tag: the [`FamilyEntry::fingerprint`] of the family's settings it was
    /// written under. A major compaction leaves a store of this one file alone while the
    /// settings are the same and no cell's TTL has run out, as HBase's compaction policy
    /// leaves a single major-compacted file (formats/table.md §"Compaction").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compacted_under: Option<String>,
}

/// A column family and the settings its store files are written and read with, named as
/// HBase's family attributes are, and every other attribute its schema gave (kept, shown by
/// `table describe`). Fields added after the first manifests have serde defaults (HBase's),
/// so older manifests load unchanged.
///
/// The codec, encoding, Bloom and KEEP_DELETED_CELLS fields stay HBase's strings and are typed
/// where they are used ([`FamilyEntry::writer_options`], `family_read_settings`): the entry also
/// describes HBase's own stores, whose descriptors may name a codec hfkit cannot write but must
/// still be read (formats/table.md §"Manifest — `table::manifest`").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FamilyEntry {
    pub name: String,
    /// VERSIONS.
    pub versions: u32,
    /// MIN_VERSIONS.
    pub min_versions: u32,
    /// TTL in seconds; `None` = FOREVER.
    pub ttl_seconds: Option<u64>,
    /// KEEP_DELETED_CELLS: `FALSE`, `TRUE` or `TTL`.
    pub keep_deleted_cells: String,
    /// COMPRESSION (HBase name).
    pub compression: String,
    /// DATA_BLOCK_ENCODING (HBase name).
    pub data_block_encoding: String,
    /// BLOOMFILTER: `NONE`, `ROW`, `ROWCOL` or `ROWPREFIX_FIXED_LENGTH:<n>`.
    pub bloom_filter: String,
    /// BLOCKSIZE in bytes.
    pub block_size: u32,
    /// IN_MEMORY (default false).
    #[serde(default)]
    pub in_memory: bool,
    /// COMPRESS_TAGS (default true).
    #[serde(default = "default_true")]
    pub compress_tags: bool,
    /// The family's other attributes (`BLOCKCACHE`, `REPLICATION_SCOPE`, `IS_MOB`, ...),
    /// METADATA and CONFIGURATION (e.g. the ROWPREFIX Bloom length); keys of the entry itself
    /// in the JSON.
    #[serde(flatten)]
    pub other: Attributes,
}

/// Attributes kept as HBase's descriptors keep them, beyond those hfkit interprets: known
/// attributes by upper-case name in HBase's string form (a table's `MAX_FILESIZE`, a family's
/// `BLOCKCACHE`, ...), `METADATA` (user key/values) and `CONFIGURATION` (configuration
/// overrides). Each map is left out of the JSON when empty.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attributes {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub configuration: BTreeMap<String, String>,
}

fn default_true() -> bool {
    true
}

impl FamilyEntry {
    /// A fingerprint of every setting of the family (MD5 of its manifest JSON, hex): equal
    /// while nothing of the family changed, so that a file compacted under it needs no second
    /// major compaction ([`StoreFileEntry::compacted_under`]).
    /// `None` if the entry does not serialize (it always does: then no file counts as
    /// compacted under it).
    pub fn fingerprint(&self) -> Option<String> {
        use md5::Digest;
        let json = serde_json::to_vec(self).ok()?;
        Some(
            md5::Md5::digest(&json)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
        )
    }

    /// A family with HBase's defaults (VERSIONS 1, BLOOMFILTER ROW, BLOCKSIZE 65536, ...).
    pub fn new(name: &str) -> FamilyEntry {
        FamilyEntry {
            name: name.to_string(),
            versions: 1,
            min_versions: 0,
            ttl_seconds: None,
            keep_deleted_cells: "FALSE".into(),
            compression: "NONE".into(),
            data_block_encoding: "NONE".into(),
            bloom_filter: "ROW".into(),
            block_size: 65536,
            in_memory: false,
            compress_tags: true,
            other: Attributes::default(),
        }
    }

    /// The entry for a family of a parsed schema: every attribute it has.
    pub fn from_schema(f: &crate::FamilySchema) -> FamilyEntry {
        FamilyEntry {
            name: f.name.clone(),
            versions: f.versions,
            min_versions: f.min_versions,
            ttl_seconds: f.ttl_seconds,
            keep_deleted_cells: f.keep_deleted_cells.name().into(),
            compression: f.compression.name().into(),
            data_block_encoding: f.data_block_encoding.name().into(),
            bloom_filter: f.bloom.manifest_form(),
            block_size: f.block_size,
            in_memory: f.in_memory,
            compress_tags: f.compress_tags,
            other: Attributes {
                attributes: f.attributes.clone(),
                metadata: f.metadata.clone(),
                configuration: f.configuration.clone(),
            },
        }
    }

    /// The family as the HBase shell's `describe` prints it: `{NAME => 'd', BLOOMFILTER =>
    /// 'ROW', IN_MEMORY => 'false', VERSIONS => '1', ..., METADATA => {...}, CONFIGURATION =>
    /// {...}}` (`table describe`, `alter`). The attributes HBase always shows come first, in
    /// its order; then any other attribute set, `METADATA` and `CONFIGURATION`.
    pub fn describe(&self) -> String {
        let (bloom, prefix) = match self.bloom_filter.split_once(':') {
            Some((kind, n)) => (kind, Some(n)),
            None => (self.bloom_filter.as_str(), None),
        };
        let ttl = match self.ttl_seconds {
            Some(t) => crate::schema::format_interval_seconds(t),
            None => "FOREVER".into(),
        };
        let attr = |key: &str, default: &str| {
            self.other
                .attributes
                .get(key)
                .cloned()
                .unwrap_or_else(|| default.to_string())
        };
        let mut shown: Vec<(&str, String)> = vec![
            ("BLOOMFILTER", bloom.to_string()),
            ("IN_MEMORY", self.in_memory.to_string()),
            ("VERSIONS", self.versions.to_string()),
            ("KEEP_DELETED_CELLS", self.keep_deleted_cells.clone()),
            ("DATA_BLOCK_ENCODING", self.data_block_encoding.clone()),
            ("COMPRESSION", self.compression.clone()),
            ("TTL", ttl),
            ("MIN_VERSIONS", self.min_versions.to_string()),
            ("BLOCKCACHE", attr("BLOCKCACHE", "true")),
            ("BLOCKSIZE", self.block_size.to_string()),
            ("REPLICATION_SCOPE", attr("REPLICATION_SCOPE", "0")),
        ];
        if !self.compress_tags {
            shown.push(("COMPRESS_TAGS", "false".into()));
        }
        for (k, v) in &self.other.attributes {
            if k != "BLOCKCACHE" && k != "REPLICATION_SCOPE" {
                shown.push((k, v.clone()));
            }
        }
        let mut parts: Vec<String> = shown
            .into_iter()
            .map(|(k, v)| format!("{k} => {}", shell_quote(&v)))
            .collect();
        // A manifest written before the configuration was kept has the prefix length only in
        // BLOOMFILTER: show it where HBase keeps it.
        let mut configuration = self.other.configuration.clone();
        if let Some(n) = prefix {
            let key = crate::schema::ROW_PREFIX_LENGTH_KEY;
            if !self.other.metadata.contains_key(key) {
                configuration
                    .entry(key.to_string())
                    .or_insert_with(|| n.to_string());
            }
        }
        parts.extend(shell_maps(&self.other.metadata, &configuration));
        format!(
            "{{NAME => {}, {}}}",
            shell_quote(&self.name),
            parts.join(", ")
        )
    }

    /// The writer options a bulk-load file of this family is written with: its attributes and
    /// the writer settings of its CONFIGURATION (`writer_settings`).
    pub fn writer_options(&self, create_time: i64) -> Result<WriterOptions, TableError> {
        let bad = |what: &str, v: &str| {
            TableError::Invalid(format!("family {}: {what} '{v}' is not valid", self.name))
        };
        let compression = Compression::from_name(&self.compression)
            .filter(|c| Compression::SUPPORTED.contains(c))
            .ok_or_else(|| bad("COMPRESSION", &self.compression))?;
        let encoding = DataBlockEncoding::from_name(&self.data_block_encoding)
            .ok_or_else(|| bad("DATA_BLOCK_ENCODING", &self.data_block_encoding))?;
        let bloom = BloomType::parse(&self.bloom_filter)
            .map_err(|_| bad("BLOOMFILTER", &self.bloom_filter))?;
        let mut o = WriterOptions {
            block_size: self.block_size.max(1) as usize,
            compression,
            encoding,
            bloom,
            create_time,
            bulk_load: Some(BulkLoadInfo {
                timestamp: create_time,
                task: "hfkit".into(),
                exclude_from_minor_compaction: false,
                major_compaction: true,
            }),
            ..WriterOptions::default()
        };
        crate::writer_settings::apply(&self.name, &self.other.configuration, &mut o)?;
        Ok(o)
    }
}

impl Attributes {
    /// A table's attributes, METADATA and CONFIGURATION, as its schema gave them.
    pub fn of_table(t: &crate::TableSchema) -> Attributes {
        Attributes {
            attributes: t.attributes.clone(),
            metadata: t.metadata.clone(),
            configuration: t.configuration.clone(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.attributes.is_empty() && self.metadata.is_empty() && self.configuration.is_empty()
    }

    /// A table's, as the HBase shell's `describe` prints them after the table name:
    /// `{TABLE_ATTRIBUTES => {MAX_FILESIZE => '10737418240', METADATA => {'owner' => 'x'},
    /// CONFIGURATION => {...}}}`; `None` when there are none (HBase then prints nothing).
    pub fn describe_table(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let mut parts: Vec<String> = self
            .attributes
            .iter()
            .map(|(k, v)| format!("{k} => {}", shell_quote(v)))
            .collect();
        parts.extend(shell_maps(&self.metadata, &self.configuration));
        Some(format!("{{TABLE_ATTRIBUTES => {{{}}}}}", parts.join(", ")))
    }
}

/// A string as a single-quoted Ruby literal (`\` and `'` escaped), as the shell reads it back.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// `METADATA => {'k' => 'v', ...}` and `CONFIGURATION => {...}`, for the non-empty maps.
fn shell_maps(
    metadata: &BTreeMap<String, String>,
    configuration: &BTreeMap<String, String>,
) -> Vec<String> {
    [("METADATA", metadata), ("CONFIGURATION", configuration)]
        .into_iter()
        .filter(|(_, map)| !map.is_empty())
        .map(|(name, map)| {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{} => {}", shell_quote(k), shell_quote(v)))
                .collect();
            format!("{name} => {{{}}}", entries.join(", "))
        })
        .collect()
}

/// One manifest version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    pub version: u64,
    /// Table name, `namespace:qualifier`.
    pub table: String,
    /// Table attributes, METADATA and CONFIGURATION (absent when there are none).
    #[serde(default, skip_serializing_if = "Attributes::is_empty")]
    pub table_attributes: Attributes,
    pub families: Vec<FamilyEntry>,
    /// Next sequence id to hand out.
    pub next_seq_id: u64,
    pub regions: Vec<RegionEntry>,
    pub files: Vec<StoreFileEntry>,
    /// The imports attached to the table by identity (`import --table`), oldest first, so that
    /// the same import run again is refused (absent when there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<ImportRecord>,
    /// The value types of the columns the table's schema typed (`family:qualifier` →
    /// `int64`, ...), by which reads show values (absent when none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub columns: BTreeMap<String, crate::ValueType>,
    /// The `[rowkey] spec` of the schema the table was created from, by whose inverse reads
    /// show a row key's fields (absent when none, or when the spec reads timestamps in a
    /// format of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rowkey: Option<String>,
}

/// An import attached to the table: its identity (`formats/import.md` §"Reruns") and the
/// manifest version and sequence id its files were attached with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportRecord {
    pub id: String,
    pub version: u64,
    pub seq_id: u64,
}

impl Manifest {
    /// The record of the import with identity `id`, if it was attached.
    pub fn import_record(&self, id: &str) -> Option<&ImportRecord> {
        self.imports.iter().find(|r| r.id == id)
    }

    /// An empty manifest (version 0) over `regions`, without table attributes.
    pub fn new(table: &str, families: Vec<FamilyEntry>, regions: Vec<RegionEntry>) -> Manifest {
        Manifest {
            format_version: FORMAT_VERSION,
            version: 0,
            table: table.to_string(),
            table_attributes: Attributes::default(),
            families,
            next_seq_id: 1,
            regions,
            files: Vec::new(),
            imports: Vec::new(),
            columns: BTreeMap::new(),
            rowkey: None,
        }
    }

    /// The family named `name`.
    pub fn family(&self, name: &str) -> Option<&FamilyEntry> {
        self.families.iter().find(|f| f.name == name)
    }

    /// Regions for the given sorted split keys (region ids `r00000`, `r00001`, ...).
    pub fn regions_from_splits(splits: &[Vec<u8>]) -> Vec<RegionEntry> {
        let mut bounds = vec![Vec::new()];
        bounds.extend(splits.iter().cloned());
        bounds.push(Vec::new());
        bounds
            .windows(2)
            .enumerate()
            .map(|(i, w)| RegionEntry {
                id: format!("r{i:05}"),
                start_key: w[0].clone(),
                end_key: w[1].clone(),
            })
            .collect()
    }

    /// The split keys of the regions: each region's start key but the first's (the inverse of
    /// [`Manifest::regions_from_splits`]).
    pub fn split_keys(&self) -> Vec<Vec<u8>> {
        self.regions
            .iter()
            .skip(1)
            .map(|r| r.start_key.clone())
            .collect()
    }

    /// The index of the region holding `row`.
    pub fn region_of(&self, row: &[u8]) -> Option<usize> {
        let i = self
            .regions
            .partition_point(|r| r.start_key.as_slice() <= row);
        i.checked_sub(1).filter(|&i| self.regions[i].contains(row))
    }

    /// Checks the regions chain: first starts at the empty key, each ends where the next
    /// starts, the last ends at the empty key.
    pub fn check_regions(&self) -> Result<(), RegionChainError> {
        let Some(first) = self.regions.first() else {
            return Err(RegionChainError::NoRegions);
        };
        if !first.start_key.is_empty() {
            return Err(RegionChainError::FirstStart);
        }
        for w in self.regions.windows(2) {
            if w[0].end_key != w[1].start_key || w[0].end_key.is_empty() {
                return Err(RegionChainError::Gap(w[0].id.clone(), w[1].id.clone()));
            }
        }
        if self.regions.last().is_some_and(|r| !r.end_key.is_empty()) {
            return Err(RegionChainError::LastEnd);
        }
        Ok(())
    }
}

/// Why a manifest's regions are not one chain from the empty key to the empty key
/// ([`Manifest::check_regions`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegionChainError {
    #[error("the table has no regions")]
    NoRegions,
    #[error("the first region does not start at the empty key")]
    FirstStart,
    /// Region ids of the two neighbours that do not meet.
    #[error("regions {0} and {1} do not chain")]
    Gap(String, String),
    #[error("the last region does not end at the empty key")]
    LastEnd,
}

/// File name of manifest `version`.
pub fn manifest_file_name(version: u64) -> String {
    format!("manifest-{version:020}.json")
}

/// Reads the live manifest of the table at `dir`.
pub fn read_current(dir: &Path) -> Result<Manifest, TableError> {
    let pointer_path = dir.join(CURRENT);
    let pointer =
        std::fs::read_to_string(&pointer_path).map_err(|e| TableError::io(&pointer_path, e))?;
    let mut parts = pointer.split_ascii_whitespace();
    let (Some(name), Some(crc), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(TableError::Corrupt {
            path: pointer_path,
            detail: "expected '<manifest file> <crc32c>'".into(),
        });
    };
    if name.contains('/') || !name.starts_with("manifest-") {
        return Err(TableError::Corrupt {
            path: pointer_path,
            detail: format!("'{name}' is not a manifest file name"),
        });
    }
    let crc = u32::from_str_radix(crc, 16).map_err(|_| TableError::Corrupt {
        path: pointer_path.clone(),
        detail: format!("'{crc}' is not a hex CRC32C"),
    })?;
    let path = dir.join(MANIFEST_DIR).join(name);
    let bytes = std::fs::read(&path).map_err(|e| TableError::io(&path, e))?;
    let actual = crc32c(&bytes);
    if actual != crc {
        return Err(TableError::Corrupt {
            path,
            detail: format!("CRC32C {actual:08x} does not match CURRENT's {crc:08x}"),
        });
    }
    serde_json::from_slice(&bytes).map_err(|e| TableError::Corrupt {
        path,
        detail: format!("manifest JSON: {e}"),
    })
}

/// Publishes `manifest` as the live version (see the module documentation for the steps).
/// Returns the manifest file's path. On failure the temporary files are removed, and the
/// manifest file too unless `CURRENT` names it (then the commit happened, and only its
/// durability is in doubt).
pub fn publish(fs: &dyn Fs, dir: &Path, manifest: &Manifest) -> Result<PathBuf, TableError> {
    let bytes = serde_json::to_vec_pretty(manifest)
        .map_err(|e| TableError::Invalid(format!("manifest: {e}")))?;
    let mdir = dir.join(MANIFEST_DIR);
    let name = manifest_file_name(manifest.version);
    let final_path = mdir.join(&name);
    let tmp = mdir.join(format!("{name}.tmp"));
    let ptmp = dir.join(format!("{CURRENT}.tmp"));
    let published = (|| {
        fs.write_file(&tmp, &bytes)
            .map_err(|e| TableError::io(&tmp, e))?;
        fs.rename(&tmp, &final_path)
            .map_err(|e| TableError::io(&final_path, e))?;
        fs.sync_dir(&mdir).map_err(|e| TableError::io(&mdir, e))?;
        let pointer = format!("{name} {:08x}\n", crc32c(&bytes));
        fs.write_file(&ptmp, pointer.as_bytes())
            .map_err(|e| TableError::io(&ptmp, e))?;
        let cur = dir.join(CURRENT);
        fs.rename(&ptmp, &cur)
            .map_err(|e| TableError::io(&cur, e))?;
        fs.sync_dir(dir).map_err(|e| TableError::io(dir, e))
    })();
    if let Err(e) = published {
        let _ = std::fs::remove_file(&tmp);
        let _ = std::fs::remove_file(&ptmp);
        if !read_current(dir).is_ok_and(|live| live.version == manifest.version) {
            let _ = std::fs::remove_file(&final_path);
        }
        return Err(e);
    }
    Ok(final_path)
}

/// Serde helpers: bytes as lowercase hex strings.
pub mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hfkit_format::text::hex(b))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        if s.is_empty() {
            return Ok(Vec::new());
        }
        hfkit_format::text::parse_hex(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fsops::{FaultFs, RealFs};

    fn regions() -> Vec<RegionEntry> {
        vec![
            RegionEntry {
                id: "r0".into(),
                start_key: vec![],
                end_key: b"m".to_vec(),
            },
            RegionEntry {
                id: "r1".into(),
                start_key: b"m".to_vec(),
                end_key: vec![],
            },
        ]
    }

    #[test]
    fn publish_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(MANIFEST_DIR)).unwrap();
        let mut m = Manifest::new("default:t", vec![FamilyEntry::new("f")], regions());
        publish(&RealFs, dir.path(), &m).unwrap();
        assert_eq!(read_current(dir.path()).unwrap(), m);
        m.version = 1;
        m.next_seq_id = 7;
        publish(&RealFs, dir.path(), &m).unwrap();
        assert_eq!(read_current(dir.path()).unwrap(), m);
        assert_eq!(m.region_of(b"a"), Some(0));
        assert_eq!(m.region_of(b"m"), Some(1));
        assert_eq!(m.region_of(b"zz"), Some(1));
        m.check_regions().unwrap();
    }

    #[test]
    fn a_failed_publish_leaves_the_previous_version_live() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(MANIFEST_DIR)).unwrap();
        let v0 = Manifest::new("default:t", vec![FamilyEntry::new("f")], regions());
        publish(&RealFs, dir.path(), &v0).unwrap();
        let mut v1 = v0.clone();
        v1.version = 1;
        v1.next_seq_id = 2;
        for fail_at in 0..6 {
            let fs = FaultFs::new(fail_at);
            let r = publish(&fs, dir.path(), &v1);
            let live = read_current(dir.path()).unwrap();
            if r.is_err() {
                assert!(live == v0 || live == v1, "fault {fail_at}");
            } else {
                assert_eq!(live, v1);
            }
        }
    }

    /// A manifest as hfkit wrote them before family and table attributes were kept.
    const OLD_MANIFEST: &str = r#"{
  "format_version": 1,
  "version": 3,
  "table": "ns:t",
  "families": [
    {
      "name": "d",
      "versions": 2,
      "min_versions": 0,
      "ttl_seconds": 86400,
      "keep_deleted_cells": "FALSE",
      "compression": "GZ",
      "data_block_encoding": "NONE",
      "bloom_filter": "ROWPREFIX_FIXED_LENGTH:4",
      "block_size": 65536
    }
  ],
  "next_seq_id": 4,
  "regions": [{"id": "r00000", "start_key": "", "end_key": ""}],
  "files": []
}"#;

    #[test]
    fn old_manifests_load_with_hbase_defaults() {
        let m: Manifest = serde_json::from_str(OLD_MANIFEST).unwrap();
        assert!(m.table_attributes.is_empty());
        let d = &m.families[0];
        assert!(!d.in_memory && d.compress_tags);
        assert!(d.other.is_empty());
        let back: Manifest = serde_json::from_slice(&serde_json::to_vec(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        // The prefix length, kept only in BLOOMFILTER then, is shown where HBase keeps it.
        assert_eq!(
            d.describe(),
            "{NAME => 'd', BLOOMFILTER => 'ROWPREFIX_FIXED_LENGTH', IN_MEMORY => 'false', \
             VERSIONS => '2', KEEP_DELETED_CELLS => 'FALSE', DATA_BLOCK_ENCODING => 'NONE', \
             COMPRESSION => 'GZ', TTL => '86400 SECONDS (1 DAY)', MIN_VERSIONS => '0', \
             BLOCKCACHE => 'true', BLOCKSIZE => '65536', REPLICATION_SCOPE => '0', \
             CONFIGURATION => {'RowPrefixBloomFilter.prefix_length' => '4'}}"
        );
        assert_eq!(m.table_attributes.describe_table(), None);
    }

    #[test]
    fn every_schema_attribute_is_kept_exactly_and_described() {
        let parsed = crate::TableSchema::from_toml_str(
            r#"
[table]
name = "ns:t"
MAX_FILESIZE = "1GB"
READONLY = true
[table.METADATA]
owner = "it's me"
[table.CONFIGURATION]
"hbase.hstore.blockingStoreFiles" = 20
[[family]]
name = "d"
IN_MEMORY = true
COMPRESS_TAGS = false
BLOCKCACHE = false
REPLICATION_SCOPE = 1
IS_MOB = true
STORAGE_POLICY = "ALL_SSD"
[family.METADATA]
k = 'a\b'
[family.CONFIGURATION]
"hbase.hstore.compaction.min" = 5
"#,
            "s.toml",
            None,
        )
        .unwrap();
        let t = &parsed.table;
        let mut m = Manifest::new(
            &t.full_name(),
            t.families.iter().map(FamilyEntry::from_schema).collect(),
            regions(),
        );
        m.table_attributes = Attributes::of_table(t);
        let json = serde_json::to_vec_pretty(&m).unwrap();
        let back: Manifest = serde_json::from_slice(&json).unwrap();
        assert_eq!(back, m);
        assert_eq!(serde_json::to_vec_pretty(&back).unwrap(), json);
        let d = &back.families[0];
        let f = &t.families[0];
        assert_eq!(
            (d.in_memory, d.compress_tags, &d.other.attributes),
            (true, false, &f.attributes)
        );
        assert_eq!(
            (&d.other.metadata, &d.other.configuration),
            (&f.metadata, &f.configuration)
        );
        assert_eq!(
            d.describe(),
            "{NAME => 'd', BLOOMFILTER => 'ROW', IN_MEMORY => 'true', VERSIONS => '1', \
             KEEP_DELETED_CELLS => 'FALSE', DATA_BLOCK_ENCODING => 'NONE', COMPRESSION => 'NONE', \
             TTL => 'FOREVER', MIN_VERSIONS => '0', BLOCKCACHE => 'false', BLOCKSIZE => '65536', \
             REPLICATION_SCOPE => '1', COMPRESS_TAGS => 'false', IS_MOB => 'true', \
             STORAGE_POLICY => 'ALL_SSD', METADATA => {'k' => 'a\\\\b'}, \
             CONFIGURATION => {'hbase.hstore.compaction.min' => '5'}}"
        );
        assert_eq!(
            back.table_attributes.describe_table().unwrap(),
            "{TABLE_ATTRIBUTES => {MAX_FILESIZE => '1073741824', READONLY => 'true', \
             METADATA => {'owner' => 'it\\'s me'}, \
             CONFIGURATION => {'hbase.hstore.blockingStoreFiles' => '20'}}}"
        );
    }

    #[test]
    fn corrupt_pointer_or_manifest_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(MANIFEST_DIR)).unwrap();
        let m = Manifest::new("default:t", vec![FamilyEntry::new("f")], regions());
        let path = publish(&RealFs, dir.path(), &m).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[5] ^= 1;
        std::fs::write(&path, bytes).unwrap();
        assert!(matches!(
            read_current(dir.path()),
            Err(TableError::Corrupt { .. })
        ));
        std::fs::write(dir.path().join(CURRENT), "../etc/passwd 0").unwrap();
        assert!(read_current(dir.path()).is_err());
    }
}
