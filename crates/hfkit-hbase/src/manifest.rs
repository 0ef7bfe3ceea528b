//! The regions and store files of an HBase table or snapshot, in one model (HBase's
//! `SnapshotRegionManifest`, which HBase also builds from a table directory offline):
//! [`Manifest`] → [`RegionManifest`] → [`FamilyFiles`] → [`StoreFile`]. Built here from a table
//! directory (region directories, `.regioninfo`, store listing by the family's store-file
//! tracker: the directory, or the FILE tracker's `.filelist`); snapshots build it in
//! `super::snapshot`. Spec: `formats/hbase-layout.md` §"Regions", §"Store file trackers".

use std::path::{Path, PathBuf};

use prost::Message;

use super::descriptor::{FamilyDescriptor, TableDescriptor};
use super::names::StoreFileName;
use super::proto;
use super::reference::Reference;
use super::region::{live_regions, RegionInfo, REGION_INFO_FILE};
use super::{HBaseError, Result};
use hfkit_table::TableName;

/// The FILE store-file tracker's directory inside a store directory.
pub const FILELIST_DIR: &str = ".filelist";
/// Largest `.filelist` file HBase reads.
const MAX_FILELIST_SIZE: usize = 16 << 20;
/// The newest `StoreFileList` version HBase (and hfkit) understands.
const FILELIST_VERSION: u64 = 2;

/// Where a manifest's store files live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A table directory `data/<ns>/<table>`: names are files of its store directories.
    Table { dir: PathBuf },
    /// A snapshot `.hbase-snapshot/<name>`: names are resolved as HFileLinks to the
    /// snapshot's table (`data/`, then `archive/`, ...).
    Snapshot {
        dir: PathBuf,
        description: super::snapshot_info::SnapshotInfo,
    },
}

/// One store file of a region's family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreFile {
    /// Its name in the store directory (HFile, HFileLink or reference name).
    pub name: String,
    /// A reference's split key and half (from the manifest, `.filelist`, or the file).
    pub reference: Option<Reference>,
    /// Size the manifest recorded (of the referred file for references), if any. The FILE
    /// tracker's lists record 0 for references and links (see [`super::verify`]).
    pub file_size: Option<u64>,
}

/// The store files of one family of a region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyFiles {
    pub family: Vec<u8>,
    pub files: Vec<StoreFile>,
}

/// One region and its store files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionManifest {
    pub info: RegionInfo,
    pub families: Vec<FamilyFiles>,
    /// False for a split or merge parent (see [`live_regions`]): it is listed, never read.
    pub live: bool,
}

/// A table's (or a snapshot's) descriptor, regions and store files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    pub root: PathBuf,
    /// The root on object storage that `root` mirrors ([`super::remote`]), if it is a mirror:
    /// its store files are then read from there.
    pub remote: Option<hfkit_storage::Location>,
    pub descriptor: TableDescriptor,
    /// In HBase's region order for tables, manifest order for snapshots.
    pub regions: Vec<RegionManifest>,
    pub source: Source,
}

impl Manifest {
    pub fn table(&self) -> &TableName {
        &self.descriptor.table
    }

    /// The table or snapshot directory.
    pub fn dir(&self) -> &Path {
        match &self.source {
            Source::Table { dir } | Source::Snapshot { dir, .. } => dir,
        }
    }

    /// The live regions, in key order.
    pub fn live_regions(&self) -> Vec<&RegionManifest> {
        let mut v: Vec<&RegionManifest> = self.regions.iter().filter(|r| r.live).collect();
        v.sort_by(|a, b| a.info.compare(&b.info));
        v
    }

    /// Marks split and merge parents as not live; an error naming `what` when the live
    /// regions overlap or leave a hole.
    pub(crate) fn mark_live(regions: &mut [RegionManifest], what: &Path) -> Result<()> {
        // A snapshot's MOB region (its MOB files) is no key range: never live, never checked.
        let keyed: Vec<usize> = (0..regions.len())
            .filter(|&i| !regions[i].info.is_mob_region())
            .collect();
        let infos: Vec<RegionInfo> = keyed.iter().map(|&i| regions[i].info.clone()).collect();
        let live = live_regions(&infos).map_err(|e| HBaseError::content(what, e))?;
        for r in regions.iter_mut() {
            r.live = false;
        }
        for (&i, l) in keyed.iter().zip(live) {
            regions[i].live = l;
        }
        Ok(())
    }

    /// Reads the table at `table_dir` (under `root`): its descriptor, every region directory
    /// (named by its encoded name, holding `.regioninfo`) and the store files of each family
    /// of the descriptor.
    pub fn from_table_dir(root: &Path, table_dir: &Path) -> Result<Manifest> {
        let (_, descriptor) = TableDescriptor::read_dir(table_dir)?;
        let mut regions = Vec::new();
        for dir in region_dirs(table_dir)? {
            let info = RegionInfo::read_file(&dir.join(REGION_INFO_FILE))?;
            if info.is_mob_region() {
                // A clone's MOB region info, written into the table directory by HBase's
                // RestoreSnapshotHelper: no region of the table (hbase:meta never lists it).
                continue;
            }
            let dir_name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if info.encoded_name() != dir_name {
                return Err(HBaseError::corrupt(
                    &dir.join(REGION_INFO_FILE),
                    format!(
                        "describes region {} (encoded name {}), not the region of directory {dir_name}",
                        info.region_name_string(),
                        info.encoded_name()
                    ),
                ));
            }
            if info.table != descriptor.table {
                return Err(HBaseError::corrupt(
                    &dir.join(REGION_INFO_FILE),
                    format!(
                        "region of table {}, in the directory of table {}",
                        info.table.full_name(),
                        descriptor.table.full_name()
                    ),
                ));
            }
            let families = read_families(&dir, &descriptor, false)?;
            regions.push(RegionManifest {
                info,
                families,
                live: true,
            });
        }
        regions.sort_by(|a, b| a.info.compare(&b.info));
        Manifest::mark_live(&mut regions, table_dir)?;
        Ok(Manifest {
            root: root.to_path_buf(),
            remote: None,
            descriptor,
            regions,
            source: Source::Table {
                dir: table_dir.to_path_buf(),
            },
        })
    }

    /// The family descriptor of `family`, or an error naming the region.
    pub fn family(&self, region: &RegionManifest, family: &[u8]) -> Result<&FamilyDescriptor> {
        self.descriptor.family(family).ok_or_else(|| {
            HBaseError::Invalid(format!(
                "region {} lists family '{}', which table {} does not have",
                region.info.encoded_name(),
                String::from_utf8_lossy(family),
                self.table().full_name()
            ))
        })
    }
}

/// The region directories of a table directory (names of lowercase hex digits, as HBase's
/// `RegionDirFilter`), sorted.
pub(crate) fn region_dirs(table_dir: &Path) -> Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(table_dir)
        .map_err(|e| HBaseError::io(table_dir, e))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            !n.is_empty() && n.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        })
        .map(|e| e.path())
        .collect();
    v.sort();
    Ok(v)
}

/// The store files of each family of `descriptor` in the region directory `dir`: per the
/// family's tracker for a table; every file (empty markers included) for a v1 snapshot's region
/// (`v1_snapshot`).
pub(crate) fn read_families(
    dir: &Path,
    descriptor: &TableDescriptor,
    v1_snapshot: bool,
) -> Result<Vec<FamilyFiles>> {
    let mut families = Vec::new();
    for f in &descriptor.families {
        let store_dir = dir.join(f.name_str());
        let files = if v1_snapshot {
            list_dir(&store_dir, true)?
        } else {
            list_store(&store_dir, &descriptor.store_file_tracker(f))?
        };
        families.push(FamilyFiles {
            family: f.name.clone(),
            files,
        });
    }
    Ok(families)
}

/// The store files of the store directory `store_dir` per its tracker: the FILE tracker's
/// `.filelist`, or (DEFAULT and others) the directory listing, as HBase's
/// `StoreFileInfo.isValid` filters it: files only, empty files skipped unless they are links.
/// A file whose name is no store file name is an error naming it.
pub fn list_store(store_dir: &Path, tracker: &str) -> Result<Vec<StoreFile>> {
    if tracker == "FILE" {
        return read_filelist(store_dir);
    }
    list_dir(store_dir, false)
}

/// The store files in `store_dir`; `markers`: empty files are store files too (a v1
/// snapshot's).
fn list_dir(store_dir: &Path, markers: bool) -> Result<Vec<StoreFile>> {
    let entries = match std::fs::read_dir(store_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(HBaseError::io(store_dir, e)),
    };
    let mut files = Vec::new();
    for e in entries {
        let e = e.map_err(|err| HBaseError::io(store_dir, err))?;
        let path = e.path();
        let meta = e.metadata().map_err(|err| HBaseError::io(&path, err))?;
        if meta.is_dir() {
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        // Hadoop's checksum side files of a local filesystem.
        if name.starts_with('.') && name.ends_with(".crc") {
            continue;
        }
        let kind = StoreFileName::parse(&name).ok_or_else(|| {
            HBaseError::corrupt(
                &path,
                "not a store file name (HFile, HFileLink or reference)",
            )
        })?;
        if meta.len() == 0 && !markers && !matches!(kind, StoreFileName::Link(_)) {
            // HBase skips these too ("HBASE-646 DATA LOSS?").
            continue;
        }
        let reference = match kind {
            StoreFileName::Reference { .. } => Some(Reference::read_file(&path)?),
            _ => None,
        };
        files.push(StoreFile {
            name,
            reference,
            file_size: None,
        });
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(files)
}

/// The FILE tracker's store file list (`StoreFileListFile.load`, read-only): among
/// `.filelist/f1.<ts>` and `f2.<ts>`, the files of the greatest `<ts>` that read whole; of
/// those, the list with the greater timestamp. A list failing its CRC is an error; a
/// truncated one is skipped, as HBase skips a half-written file.
fn read_filelist(store_dir: &Path) -> Result<Vec<StoreFile>> {
    let dir = store_dir.join(FILELIST_DIR);
    let Some((_, list)) = load_filelist(store_dir)? else {
        return Ok(Vec::new());
    };
    let mut files = Vec::new();
    for e in list.store_file {
        let reference = match &e.reference {
            Some(r) => Some(
                Reference::from_proto(r)
                    .map_err(|d| HBaseError::content(&dir, d.in_store_file(&e.name)))?,
            ),
            None => match StoreFileName::parse(&e.name) {
                Some(StoreFileName::Reference { .. }) => {
                    Some(Reference::read_file(&store_dir.join(&e.name))?)
                }
                _ => None,
            },
        };
        files.push(StoreFile {
            name: e.name,
            reference,
            file_size: Some(e.size),
        });
    }
    Ok(files)
}

/// The FILE tracker's current list of the store at `store_dir` and the sequence id of its
/// track files (`.filelist/f1.<seq>`), as [`read_filelist`] chooses it; `None` without one.
pub fn load_filelist(store_dir: &Path) -> Result<Option<(u64, proto::StoreFileList)>> {
    let dir = store_dir.join(FILELIST_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(HBaseError::io(&dir, e)),
    };
    let mut by_ts: std::collections::BTreeMap<u64, Vec<PathBuf>> = Default::default();
    for e in entries.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        let (prefix, ts) = match name.split_once('.') {
            Some((p, t)) => (p.to_string(), t.parse::<u64>().ok()),
            None => (name.clone(), Some(0)),
        };
        let Some(ts) = ts.filter(|_| prefix == "f1" || prefix == "f2") else {
            continue;
        };
        if e.file_type().is_ok_and(|t| t.is_file()) {
            by_ts.entry(ts).or_default().push(e.path());
        }
    }
    for (seq, paths) in by_ts.iter().rev() {
        if paths.len() > 2 {
            return Err(HBaseError::corrupt(
                &dir,
                format!(
                    "{} track files share one sequence id (at most 2)",
                    paths.len()
                ),
            ));
        }
        let mut best: Option<proto::StoreFileList> = None;
        for p in paths {
            if let Some(list) = read_filelist_file(p)? {
                if best.as_ref().is_none_or(|b| list.timestamp > b.timestamp) {
                    best = Some(list);
                }
            }
        }
        if let Some(list) = best {
            return Ok(Some((*seq, list)));
        }
    }
    Ok(None)
}

/// One track file: `i32 length`, `StoreFileList`, `i32 CRC32`; `None` when truncated.
fn read_filelist_file(path: &Path) -> Result<Option<proto::StoreFileList>> {
    let bytes = std::fs::read(path).map_err(|e| HBaseError::io(path, e))?;
    let Some(len) = bytes
        .get(..4)
        .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    else {
        return Ok(None);
    };
    if len <= 0 || len as usize > MAX_FILELIST_SIZE {
        return Err(HBaseError::corrupt(
            path,
            format!("invalid store file list length {len}"),
        ));
    }
    let len = len as usize;
    let (Some(data), Some(crc)) = (bytes.get(4..4 + len), bytes.get(4 + len..8 + len)) else {
        return Ok(None);
    };
    let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    let actual = crc32fast::hash(data);
    if expected != actual {
        return Err(HBaseError::corrupt(
            path,
            format!("store file list checksum mismatch: stored {expected:#010x}, computed {actual:#010x}"),
        ));
    }
    let list = proto::StoreFileList::decode(data)
        .map_err(|e| HBaseError::corrupt(path, format!("not a StoreFileList: {e}")))?;
    if list.version.unwrap_or(1) > FILELIST_VERSION {
        return Err(HBaseError::corrupt(
            path,
            format!(
                "store file list version {} is newer than {FILELIST_VERSION}",
                list.version.unwrap_or(1)
            ),
        ));
    }
    Ok(Some(list))
}

/// The bytes of a FILE-tracker list file.
pub fn filelist_file_bytes(list: &proto::StoreFileList) -> Vec<u8> {
    let data = list.encode_to_vec();
    let mut b = (data.len() as i32).to_be_bytes().to_vec();
    b.extend_from_slice(&data);
    b.extend_from_slice(&crc32fast::hash(&data).to_be_bytes());
    b
}
