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
use super::{HBaseError, Result};

pub use super::snapshot_info::{SnapshotInfo, SNAPSHOT_INFO_FILE, VERSION_1, VERSION_2};

/// The snapshots directory under the root.
pub const SNAPSHOT_DIR: &str = ".hbase-snapshot";
/// A v2 snapshot's consolidated manifest.
pub const DATA_MANIFEST_FILE: &str = "data.manifest";
/// Per-region manifests of a v2 snapshot in progress.
pub const REGION_MANIFEST_PREFIX: &str = "region-manifest.";

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
