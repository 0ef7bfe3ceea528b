//! An HBase root directory (`hbase.rootdir`): `hbase.version`, `hbase.id`, the tables under
//! `data/<namespace>/<table>/` and the snapshots under `.hbase-snapshot/`. Spec:
//! `formats/hbase-layout.md` §"Root directory".

use std::path::{Path, PathBuf};

use prost::Message;

use super::descriptor::TABLEINFO_DIR;
use super::manifest::Manifest;
use super::names::{self, DATA_DIR};
use super::proto;
use super::snapshot::{self, SnapshotInfo, SNAPSHOT_DIR, SNAPSHOT_INFO_FILE};
use super::{pb_magic, HBaseError, Result};
use hfkit_table::TableName;

/// The file-system layout version file.
pub const VERSION_FILE: &str = "hbase.version";
/// The cluster id file.
pub const CLUSTER_ID_FILE: &str = "hbase.id";

/// An HBase root directory.
#[derive(Clone, Debug)]
pub struct HBaseRoot {
    dir: PathBuf,
    /// The root on object storage `dir` mirrors ([`super::remote`]), if it is a mirror.
    remote: Option<hfkit_storage::Location>,
}

fn sorted_dir_names(dir: &Path) -> Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(HBaseError::io(dir, e)),
    };
    let mut v: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    Ok(v)
}

impl HBaseRoot {
    /// Opens the root directory at `dir`: it must hold `data/`, or `.hbase-snapshot/` (the
    /// target of a snapshot export); `hbase.version`, if present, must be readable.
    pub fn open(dir: &Path) -> Result<HBaseRoot> {
        if !dir.join(DATA_DIR).is_dir() && !dir.join(SNAPSHOT_DIR).is_dir() {
            return Err(HBaseError::Invalid(format!(
                "{}: not an HBase root directory (no {DATA_DIR}/ or {SNAPSHOT_DIR}/)",
                dir.display()
            )));
        }
        let root = HBaseRoot {
            dir: dir.to_path_buf(),
            remote: super::remote::mirrored_root(dir)?,
        };
        root.version()?;
        Ok(root)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The layout version in `hbase.version` (`"8"` for every HBase since 0.96), if present.
    pub fn version(&self) -> Result<Option<String>> {
        let path = self.dir.join(VERSION_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(HBaseError::io(&path, e)),
        };
        let body = pb_magic(&path, &bytes)?;
        let v = proto::HBaseVersionFileContent::decode(body)
            .map_err(|e| HBaseError::corrupt(&path, format!("not a version file: {e}")))?;
        Ok(Some(v.version))
    }

    /// The cluster id in `hbase.id`, if present.
    pub fn cluster_id(&self) -> Result<Option<String>> {
        let path = self.dir.join(CLUSTER_ID_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(HBaseError::io(&path, e)),
        };
        let body = pb_magic(&path, &bytes)?;
        let v = proto::ClusterId::decode(body)
            .map_err(|e| HBaseError::corrupt(&path, format!("not a cluster id file: {e}")))?;
        Ok(Some(v.cluster_id))
    }

    /// Every table with a descriptor directory, by namespace then name.
    pub fn tables(&self) -> Result<Vec<TableName>> {
        let data = self.dir.join(DATA_DIR);
        let mut out = Vec::new();
        for ns in sorted_dir_names(&data)? {
            for t in sorted_dir_names(&data.join(&ns))? {
                if data.join(&ns).join(&t).join(TABLEINFO_DIR).is_dir() {
                    out.push(TableName {
                        namespace: ns.clone(),
                        qualifier: t,
                    });
                }
            }
        }
        Ok(out)
    }

    /// The table named `name` (`qualifier` or `namespace:qualifier`).
    pub fn table(&self, name: &str) -> Result<Manifest> {
        let table = TableName::parse(name).map_err(|e| HBaseError::Invalid(e.to_string()))?;
        let dir = names::table_dir(&self.dir, &table);
        if !dir.join(TABLEINFO_DIR).is_dir() {
            return Err(HBaseError::Invalid(format!(
                "{}: no table {} (no {})",
                self.dir.display(),
                table.full_name(),
                dir.join(TABLEINFO_DIR).display()
            )));
        }
        let mut m = Manifest::from_table_dir(&self.dir, &dir)?;
        m.remote = self.remote.clone();
        Ok(m)
    }

    /// Every completed snapshot (`.hbase-snapshot/<name>/.snapshotinfo`; the `.tmp` working
    /// directory is not one), by name.
    pub fn snapshots(&self) -> Result<Vec<SnapshotInfo>> {
        let dir = self.dir.join(SNAPSHOT_DIR);
        let mut out = Vec::new();
        for name in sorted_dir_names(&dir)? {
            let d = dir.join(&name);
            if name.starts_with('.') || !d.join(SNAPSHOT_INFO_FILE).is_file() {
                continue;
            }
            out.push(SnapshotInfo::read(&d)?);
        }
        Ok(out)
    }

    /// Snapshot `name`.
    pub fn snapshot(&self, name: &str) -> Result<Manifest> {
        let mut m = snapshot::read_snapshot(&self.dir, name)?;
        m.remote = self.remote.clone();
        Ok(m)
    }

    /// The root on object storage this directory mirrors ([`super::remote`]), if any.
    pub fn remote(&self) -> Option<&hfkit_storage::Location> {
        self.remote.as_ref()
    }
}
