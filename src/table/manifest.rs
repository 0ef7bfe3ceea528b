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

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::fsops::Fs;
use super::TableError;
use crate::format::bloom::BloomType;
use crate::format::compression::Compression;
use crate::format::encoding::DataBlockEncoding;
use crate::format::writer::{BulkLoadInfo, WriterOptions};

/// File name of the pointer to the live manifest.
pub const CURRENT: &str = "CURRENT";
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
}

/// A column family and the settings its store files are written and read with, named as
/// HBase's family attributes are.
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
}

impl FamilyEntry {
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
        }
    }

    /// The entry for a family of a parsed schema.
    pub fn from_schema(f: &crate::table::FamilySchema) -> FamilyEntry {
        use crate::table::{BloomFilterKind, KeepDeletedCells};
        FamilyEntry {
            name: f.name.clone(),
            versions: f.versions,
            min_versions: f.min_versions,
            ttl_seconds: f.ttl_seconds,
            keep_deleted_cells: match f.keep_deleted_cells {
                KeepDeletedCells::False => "FALSE",
                KeepDeletedCells::True => "TRUE",
                KeepDeletedCells::Ttl => "TTL",
            }
            .into(),
            compression: f.compression.name().into(),
            data_block_encoding: f.data_block_encoding.name().into(),
            bloom_filter: match f.bloom {
                BloomFilterKind::RowPrefixFixedLength(n) => format!("ROWPREFIX_FIXED_LENGTH:{n}"),
                other => other.name().into(),
            },
            block_size: f.block_size,
        }
    }

    /// One line in the HBase shell's attribute style, for `table describe` and `alter`.
    pub fn describe(&self) -> String {
        format!(
            "family {}: VERSIONS {}, MIN_VERSIONS {}, TTL {}, KEEP_DELETED_CELLS {}, COMPRESSION {}, DATA_BLOCK_ENCODING {}, BLOOMFILTER {}, BLOCKSIZE {}",
            self.name,
            self.versions,
            self.min_versions,
            self.ttl_seconds.map(|t| t.to_string()).unwrap_or_else(|| "FOREVER".into()),
            self.keep_deleted_cells,
            self.compression,
            self.data_block_encoding,
            self.bloom_filter,
            self.block_size
        )
    }

    /// The writer options a bulk-load file of this family is written with.
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
        Ok(WriterOptions {
            block_size: self.block_size.max(1) as usize,
            compression,
            encoding,
            bloom,
            create_time,
            bulk_load: Some(BulkLoadInfo {
                timestamp: create_time,
                task: "hfkit".into(),
                exclude_from_minor_compaction: false,
            }),
            ..WriterOptions::default()
        })
    }
}

/// One manifest version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    pub version: u64,
    /// Table name, `namespace:qualifier`.
    pub table: String,
    pub families: Vec<FamilyEntry>,
    /// Next sequence id to hand out.
    pub next_seq_id: u64,
    pub regions: Vec<RegionEntry>,
    pub files: Vec<StoreFileEntry>,
}

impl Manifest {
    /// An empty manifest (version 0) over `regions`.
    pub fn new(table: &str, families: Vec<FamilyEntry>, regions: Vec<RegionEntry>) -> Manifest {
        Manifest {
            format_version: FORMAT_VERSION,
            version: 0,
            table: table.to_string(),
            families,
            next_seq_id: 1,
            regions,
            files: Vec::new(),
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

    /// The index of the region holding `row`.
    pub fn region_of(&self, row: &[u8]) -> Option<usize> {
        let i = self
            .regions
            .partition_point(|r| r.start_key.as_slice() <= row);
        i.checked_sub(1).filter(|&i| self.regions[i].contains(row))
    }

    /// Checks the regions chain: first starts at the empty key, each ends where the next
    /// starts, the last ends at the empty key.
    pub fn check_regions(&self) -> Result<(), String> {
        let Some(first) = self.regions.first() else {
            return Err("the table has no regions".into());
        };
        if !first.start_key.is_empty() {
            return Err("the first region does not start at the empty key".into());
        }
        for w in self.regions.windows(2) {
            if w[0].end_key != w[1].start_key || w[0].end_key.is_empty() {
                return Err(format!("regions {} and {} do not chain", w[0].id, w[1].id));
            }
        }
        if self.regions.last().is_some_and(|r| !r.end_key.is_empty()) {
            return Err("the last region does not end at the empty key".into());
        }
        Ok(())
    }
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
    let actual = crc32c::crc32c(&bytes);
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
        let pointer = format!("{name} {:08x}\n", crc32c::crc32c(&bytes));
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
        s.serialize_str(&crate::format::text::hex(b))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        if s.is_empty() {
            return Ok(Vec::new());
        }
        crate::format::text::parse_hex(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::fsops::{FaultFs, RealFs};

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
