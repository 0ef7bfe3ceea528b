//! HBase snapshots: `.hbase-snapshot/<name>/` with `.snapshotinfo` (SnapshotDescription) and
//! `data.manifest` (format v2), or, for snapshots in progress, `region-manifest.*` files, or
//! the legacy v1 layout (region directories with `.regioninfo` and one file per store file).
//! Read into a [`Manifest`]. Spec: `formats/hbase-layout.md` §"Snapshots".

use std::path::{Path, PathBuf};

use prost::Message;

use super::descriptor::TableDescriptor;
use super::manifest::{read_families, FamilyFiles, Manifest, RegionManifest, Source, StoreFile};
use super::proto;
use super::reference::Reference;
use super::region::{RegionInfo, REGION_INFO_FILE};
use super::{ContentError, HBaseError, Result};
use hfkit_table::TableName;

/// The snapshots directory under the root.
pub const SNAPSHOT_DIR: &str = ".hbase-snapshot";
/// A snapshot's description file.
pub const SNAPSHOT_INFO_FILE: &str = ".snapshotinfo";
/// A v2 snapshot's consolidated manifest.
pub const DATA_MANIFEST_FILE: &str = "data.manifest";
/// Per-region manifests of a v2 snapshot in progress.
pub const REGION_MANIFEST_PREFIX: &str = "region-manifest.";
/// The manifest format version of v1 snapshots.
pub const VERSION_1: i32 = 0;
/// The manifest format version HBase writes today.
pub const VERSION_2: i32 = 2;

/// A snapshot's description (`.snapshotinfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotInfo {
    pub name: String,
    /// `ns:qualifier`, or the qualifier alone in the default namespace.
    pub table: String,
    pub creation_time: i64,
    /// `DISABLED`, `FLUSH` or `SKIPFLUSH`.
    pub snapshot_type: String,
    pub version: i32,
    pub owner: Option<String>,
    pub ttl: i64,
}

impl SnapshotInfo {
    /// From the message; an error for an unknown type.
    pub fn from_proto(p: &proto::SnapshotDescription) -> Result<SnapshotInfo, ContentError> {
        let t = p.r#type.unwrap_or(proto::SnapshotType::Flush as i32);
        let snapshot_type = match proto::SnapshotType::try_from(t) {
            Ok(proto::SnapshotType::Disabled) => "DISABLED",
            Ok(proto::SnapshotType::Flush) => "FLUSH",
            Ok(proto::SnapshotType::SkipFlush) => "SKIPFLUSH",
            Err(_) => return Err(ContentError::SnapshotType(t)),
        };
        Ok(SnapshotInfo {
            name: p.name.clone(),
            table: p.table.clone().unwrap_or_default(),
            creation_time: p.creation_time.unwrap_or(0),
            snapshot_type: snapshot_type.into(),
            version: p.version.unwrap_or(VERSION_1),
            owner: p.owner.clone(),
            ttl: p.ttl.unwrap_or(0),
        })
    }

    /// The message HBase writes for a FLUSH snapshot of format v2.
    pub fn to_proto(&self) -> proto::SnapshotDescription {
        let t = match self.snapshot_type.as_str() {
            "DISABLED" => proto::SnapshotType::Disabled,
            "SKIPFLUSH" => proto::SnapshotType::SkipFlush,
            _ => proto::SnapshotType::Flush,
        };
        proto::SnapshotDescription {
            name: self.name.clone(),
            table: Some(self.table.clone()),
            creation_time: Some(self.creation_time),
            r#type: Some(t as i32),
            version: Some(self.version),
            owner: self.owner.clone(),
            ttl: (self.ttl != 0).then_some(self.ttl),
            max_file_size: None,
        }
    }

    /// Reads `.snapshotinfo` of the snapshot directory `dir`.
    pub fn read(dir: &Path) -> Result<SnapshotInfo> {
        let path = dir.join(SNAPSHOT_INFO_FILE);
        let bytes = std::fs::read(&path).map_err(|e| HBaseError::io(&path, e))?;
        let p = proto::SnapshotDescription::decode(bytes.as_slice()).map_err(|e| {
            HBaseError::corrupt(&path, format!("unable to parse snapshot description: {e}"))
        })?;
        SnapshotInfo::from_proto(&p).map_err(|e| HBaseError::content(&path, e))
    }

    /// The snapshot's table.
    pub fn table_name(&self, path: &Path) -> Result<TableName> {
        TableName::parse(&self.table)
            .map_err(|e| HBaseError::corrupt(&path.join(SNAPSHOT_INFO_FILE), format!("table: {e}")))
    }
}

/// `<root>/.hbase-snapshot/<name>`.
pub fn snapshot_dir(root: &Path, name: &str) -> PathBuf {
    root.join(SNAPSHOT_DIR).join(name)
}

/// Reads snapshot `name` of `root` (see the module documentation).
pub fn read_snapshot(root: &Path, name: &str) -> Result<Manifest> {
    let dir = snapshot_dir(root, name);
    if !dir.join(SNAPSHOT_INFO_FILE).is_file() {
        return Err(HBaseError::Invalid(format!(
            "{}: no snapshot named '{name}'",
            root.display()
        )));
    }
    let info = SnapshotInfo::read(&dir)?;
    let table = info.table_name(&dir)?;
    let (descriptor, mut regions) = match info.version {
        VERSION_2 => read_v2(&dir)?,
        VERSION_1 => read_v1(&dir)?,
        v => {
            return Err(HBaseError::corrupt(
                &dir.join(SNAPSHOT_INFO_FILE),
                format!("invalid snapshot manifest version {v}"),
            ))
        }
    };
    if descriptor.table != table {
        return Err(HBaseError::corrupt(
            &dir,
            format!(
                "the snapshot is of table {}, its table descriptor of {}",
                table.full_name(),
                descriptor.table.full_name()
            ),
        ));
    }
    for r in &regions {
        if r.info.table != table {
            return Err(HBaseError::corrupt(
                &dir,
                format!(
                    "region {} is of table {}, the snapshot of {}",
                    r.info.encoded_name(),
                    r.info.table.full_name(),
                    table.full_name()
                ),
            ));
        }
    }
    Manifest::mark_live(&mut regions, &dir)?;
    Ok(Manifest {
        root: root.to_path_buf(),
        remote: None,
        descriptor,
        regions,
        source: Source::Snapshot {
            dir,
            description: info,
        },
    })
}

fn region_from_proto(path: &Path, m: &proto::SnapshotRegionManifest) -> Result<RegionManifest> {
    let info = RegionInfo::from_proto(&m.region_info).map_err(|e| HBaseError::content(path, e))?;
    let mut families = Vec::new();
    for f in &m.family_files {
        let mut files = Vec::new();
        for sf in &f.store_files {
            let reference = sf
                .reference
                .as_ref()
                .map(Reference::from_proto)
                .transpose()
                .map_err(|e| HBaseError::content(path, e.in_store_file(&sf.name)))?;
            files.push(StoreFile {
                name: sf.name.clone(),
                reference,
                file_size: sf.file_size,
            });
        }
        families.push(FamilyFiles {
            family: f.family_name.clone(),
            files,
        });
    }
    Ok(RegionManifest {
        info,
        families,
        live: true,
    })
}

/// v2: `data.manifest`, or `region-manifest.*` and a `.tabledesc` while in progress.
fn read_v2(dir: &Path) -> Result<(TableDescriptor, Vec<RegionManifest>)> {
    let path = dir.join(DATA_MANIFEST_FILE);
    match std::fs::read(&path) {
        Ok(bytes) => {
            let m = proto::SnapshotDataManifest::decode(bytes.as_slice()).map_err(|e| {
                HBaseError::corrupt(&path, format!("unable to parse data manifest: {e}"))
            })?;
            let descriptor = TableDescriptor::from_proto(&m.table_schema)
                .map_err(|e| HBaseError::content(&path, e))?;
            let regions = m
                .region_manifests
                .iter()
                .map(|r| region_from_proto(&path, r))
                .collect::<Result<Vec<_>>>()?;
            Ok((descriptor, regions))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let (_, descriptor) = TableDescriptor::read_dir(dir).map_err(|_| {
                HBaseError::corrupt(
                    &path,
                    "missing, and no table descriptor for the region manifests of a snapshot in progress",
                )
            })?;
            let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
                .map_err(|e| HBaseError::io(dir, e))?
                .filter_map(|e| e.ok())
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(REGION_MANIFEST_PREFIX)
                })
                .map(|e| e.path())
                .collect();
            names.sort();
            let mut regions = Vec::new();
            for p in names {
                let bytes = std::fs::read(&p).map_err(|e| HBaseError::io(&p, e))?;
                let m = proto::SnapshotRegionManifest::decode(bytes.as_slice()).map_err(|e| {
                    HBaseError::corrupt(&p, format!("unable to parse region manifest: {e}"))
                })?;
                regions.push(region_from_proto(&p, &m)?);
            }
            regions.extend(read_v1_regions(dir, &descriptor)?);
            Ok((descriptor, regions))
        }
        Err(e) => Err(HBaseError::io(&path, e)),
    }
}

/// v1: `.tabledesc` and region directories holding `.regioninfo` and, per family, one file
/// per store file (empty, or a reference's content).
fn read_v1(dir: &Path) -> Result<(TableDescriptor, Vec<RegionManifest>)> {
    let (_, descriptor) = TableDescriptor::read_dir(dir)?;
    let regions = read_v1_regions(dir, &descriptor)?;
    Ok((descriptor, regions))
}

fn read_v1_regions(dir: &Path, descriptor: &TableDescriptor) -> Result<Vec<RegionManifest>> {
    let mut regions = Vec::new();
    for rdir in super::manifest::region_dirs(dir)? {
        let info_path = rdir.join(REGION_INFO_FILE);
        if !info_path.is_file() {
            continue;
        }
        let info = RegionInfo::read_file(&info_path)?;
        let families = read_families(&rdir, descriptor, true)?;
        regions.push(RegionManifest {
            info,
            families,
            live: true,
        });
    }
    Ok(regions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_snapshot_type_is_a_typed_error_naming_the_file() {
        let info = SnapshotInfo {
            name: "s".into(),
            table: "t".into(),
            creation_time: 1,
            snapshot_type: "FLUSH".into(),
            version: VERSION_2,
            owner: None,
            ttl: 0,
        };
        let mut p = info.to_proto();
        assert_eq!(SnapshotInfo::from_proto(&p).unwrap(), info);
        p.r#type = Some(9);
        assert!(matches!(
            SnapshotInfo::from_proto(&p),
            Err(ContentError::SnapshotType(9))
        ));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SNAPSHOT_INFO_FILE), p.encode_to_vec()).unwrap();
        match SnapshotInfo::read(dir.path()) {
            Err(HBaseError::Content {
                path,
                source: ContentError::SnapshotType(9),
            }) => assert_eq!(path, dir.path().join(SNAPSHOT_INFO_FILE)),
            other => panic!("{other:?}"),
        }
    }
}
