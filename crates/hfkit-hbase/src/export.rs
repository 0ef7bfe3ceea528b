//! An hfkit table (or one of its snapshots) exported as an HBase snapshot into an HBase root
//! directory, laid out as HBase's `ExportSnapshot` leaves one: the store files under
//! `archive/data/<ns>/<table>/<encoded region>/<family>/`, then `.snapshotinfo` and
//! `data.manifest` written under `.hbase-snapshot/.tmp/<name>/` and renamed to
//! `.hbase-snapshot/<name>/`. `clone_snapshot` / `restore_snapshot` in HBase then make a table
//! of it. Spec: `formats/hbase-layout.md` §"Export as an HBase snapshot".

use std::path::{Path, PathBuf};

use prost::Message;
use serde::Serialize;

use super::descriptor::TableDescriptor;
use super::names::{archive_table_dir, is_hfile_name};
use super::proto;
use super::region::RegionInfo;
use super::snapshot::{
    snapshot_dir, SnapshotInfo, DATA_MANIFEST_FILE, SNAPSHOT_DIR, SNAPSHOT_INFO_FILE, VERSION_2,
};
use super::{HBaseError, Result};
use hfkit_table::directory::{verify_copy, Table};
use hfkit_table::manifest::StoreFileEntry;
use hfkit_table::TableName;

/// What to export, and as what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportOptions {
    /// The HBase snapshot's name.
    pub name: String,
    /// Export this hfkit snapshot instead of the live table.
    pub from_snapshot: Option<String>,
    /// The HBase table name (default: the hfkit table's).
    pub table: Option<String>,
    /// The snapshot's creation time, also every region's id (epoch ms).
    pub creation_time: i64,
}

/// What an export wrote.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExportReport {
    pub snapshot_dir: PathBuf,
    pub table: String,
    pub regions: usize,
    pub files: usize,
    /// Files already in the archive with the same size (an earlier export), not copied again.
    pub files_present: usize,
    pub bytes: u64,
}

/// The HFile name HBase will read `e` under: its hex part and `_SeqId_<seq>_`, so that HBase
/// treats it as the bulk load it is and gives its cells the file's sequence id.
pub fn exported_name(e: &StoreFileEntry) -> String {
    let hex_end = e
        .name
        .bytes()
        .position(|b| !matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        .unwrap_or(e.name.len());
    format!("{}_SeqId_{}_", &e.name[..hex_end], e.seq_id)
}

/// Checks a snapshot name as HBase does (`TableName.isLegalTableQualifierName`).
fn check_name(name: &str) -> Result<()> {
    let first_ok = name
        .chars()
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphanumeric());
    if !first_ok
        || !name
            .chars()
            .all(|c| matches!(c, '_' | '-' | '.') || c.is_ascii_alphanumeric())
    {
        return Err(HBaseError::Invalid(format!(
            "snapshot name '{name}': letters, digits, '_', '-' and '.' only, not starting with '-' or '.'"
        )));
    }
    Ok(())
}

/// Exports `t` (see the module documentation) into the root directory `root` (created when
/// absent). Holds the table's writer lock so that no compaction removes files meanwhile. On
/// failure the snapshot does not exist and the archive files this export added are removed.
pub fn export_snapshot(t: &Table, root: &Path, opts: &ExportOptions) -> Result<ExportReport> {
    check_name(&opts.name)?;
    let _lock = t.lock()?;
    let m = match &opts.from_snapshot {
        Some(s) => t.snapshot(s)?.manifest,
        None => t.manifest()?,
    };
    let table = TableName::parse(opts.table.as_deref().unwrap_or(&m.table))
        .map_err(|e| HBaseError::Invalid(e.to_string()))?;
    let final_dir = snapshot_dir(root, &opts.name);
    if final_dir.exists() {
        return Err(HBaseError::Invalid(format!(
            "{}: snapshot '{}' already exists",
            root.display(),
            opts.name
        )));
    }
    let descriptor = TableDescriptor::from_families(table.clone(), &m.families);
    let mut added: Vec<PathBuf> = Vec::new();
    let work = root.join(SNAPSHOT_DIR).join(".tmp").join(&opts.name);
    let result = write(
        t, root, opts, &m, &table, descriptor, &work, &final_dir, &mut added,
    );
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&work);
        for p in &added {
            let _ = std::fs::remove_file(p);
        }
    }
    result
}

#[allow(clippy::too_many_arguments)]
fn write(
    t: &Table,
    root: &Path,
    opts: &ExportOptions,
    m: &hfkit_table::manifest::Manifest,
    table: &TableName,
    descriptor: TableDescriptor,
    work: &Path,
    final_dir: &Path,
    added: &mut Vec<PathBuf>,
) -> Result<ExportReport> {
    let mut report = ExportReport {
        snapshot_dir: final_dir.to_path_buf(),
        table: table.full_name(),
        regions: m.regions.len(),
        files: 0,
        files_present: 0,
        bytes: 0,
    };
    let archive = archive_table_dir(root, table);
    let mut region_manifests = Vec::new();
    let mut dirs = std::collections::BTreeSet::new();
    for r in &m.regions {
        let info = RegionInfo {
            table: table.clone(),
            start_key: r.start_key.clone(),
            end_key: r.end_key.clone(),
            region_id: opts.creation_time.max(0) as u64,
            offline: false,
            split: false,
            replica_id: 0,
        };
        let encoded = info.encoded_name();
        let mut family_files = Vec::new();
        for f in &m.families {
            let mut store_files = Vec::new();
            for e in m
                .files
                .iter()
                .filter(|e| e.region == r.id && e.family == f.name)
            {
                let name = exported_name(e);
                debug_assert!(is_hfile_name(&name));
                let dir = archive.join(&encoded).join(&f.name);
                std::fs::create_dir_all(&dir).map_err(|err| HBaseError::io(&dir, err))?;
                dirs.insert(dir.clone());
                let to = dir.join(&name);
                let from = t.file_path(e);
                t.open_store_file(e)?;
                match std::fs::metadata(&to) {
                    Ok(meta) if meta.len() == e.size => report.files_present += 1,
                    Ok(_) => {
                        return Err(HBaseError::corrupt(
                            &to,
                            format!(
                                "exists in the archive with another size than {}",
                                from.display()
                            ),
                        ))
                    }
                    Err(_) => {
                        if std::fs::hard_link(&from, &to).is_err() {
                            std::fs::copy(&from, &to).map_err(|err| HBaseError::io(&to, err))?;
                        }
                        added.push(to.clone());
                        std::fs::File::open(&to)
                            .and_then(|f| f.sync_all())
                            .map_err(|err| HBaseError::io(&to, err))?;
                    }
                }
                verify_copy(&from, &to, e.entries)?;
                report.files += 1;
                report.bytes += e.size;
                store_files.push(proto::SnapshotStoreFile {
                    name,
                    reference: None,
                    file_size: Some(e.size),
                });
            }
            if !store_files.is_empty() {
                family_files.push(proto::FamilyFiles {
                    family_name: f.name.as_bytes().to_vec(),
                    store_files,
                });
            }
        }
        region_manifests.push(proto::SnapshotRegionManifest {
            version: None,
            region_info: info.to_proto(),
            family_files,
        });
    }
    for d in &dirs {
        sync_dir(d)?;
    }
    let info = SnapshotInfo {
        name: opts.name.clone(),
        table: table.full_name(),
        creation_time: opts.creation_time,
        snapshot_type: "FLUSH".into(),
        version: VERSION_2,
        owner: None,
        ttl: 0,
    };
    let manifest = proto::SnapshotDataManifest {
        table_schema: descriptor.to_proto(),
        region_manifests,
    };
    std::fs::create_dir_all(work).map_err(|e| HBaseError::io(work, e))?;
    write_synced(
        &work.join(SNAPSHOT_INFO_FILE),
        &info.to_proto().encode_to_vec(),
    )?;
    write_synced(&work.join(DATA_MANIFEST_FILE), &manifest.encode_to_vec())?;
    sync_dir(work)?;
    std::fs::rename(work, final_dir).map_err(|e| HBaseError::io(final_dir, e))?;
    if let Some(parent) = final_dir.parent() {
        sync_dir(parent)?;
    }
    Ok(report)
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::File::create(path).map_err(|e| HBaseError::io(path, e))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| HBaseError::io(path, e))
}

fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| HBaseError::io(dir, e))
}
