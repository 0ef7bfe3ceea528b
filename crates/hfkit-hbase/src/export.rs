//! An hfkit table (or one of its snapshots) exported as an HBase snapshot into an HBase root
//! directory, laid out as HBase's `ExportSnapshot` leaves one: the store files under
//! `archive/data/<ns>/<table>/<encoded region>/<family>/`, `.snapshotinfo` and `data.manifest`
//! in `.hbase-snapshot/<name>/`. `clone_snapshot` / `restore_snapshot` in HBase then make a
//! table of it. Spec: `formats/hbase-layout.md` §"Export as an HBase snapshot".
//!
//! ```text
//! .hbase-snapshot/.tmp/hfkit-export-<name>.<32 hex>/          staging, flock held by the export
//!     archive/<encoded>/<family>/<file>                       1. the copies
//!     .snapshotinfo, data.manifest                            2. the snapshot, naming them
//! .hbase-snapshot/.tmp/hfkit-export-<name>.<32 hex>.moves     3. the archive paths to move to
//! archive/data/<ns>/<table>/<encoded>/<family>/<file>         4. the copies, moved
//! .hbase-snapshot/<name>/                                     5. the staging dir, renamed
//! ```
//!
//! The snapshot becomes visible last (5). A killed export leaves its staging directory (no
//! longer locked) and perhaps its list of moves: the next export removes the copies it staged
//! and the files it moved into the archive (a move whose copy is no longer staged), unless the
//! rename was done.

use std::path::{Path, PathBuf};

use prost::Message;
use serde::Serialize;

use super::descriptor::TableDescriptor;
use super::names::{archive_table_dir, is_hfile_name, ARCHIVE_DIR};
use super::proto;
use super::region::RegionInfo;
use super::snapshot::{
    snapshot_dir, SnapshotInfo, DATA_MANIFEST_FILE, SNAPSHOT_DIR, SNAPSHOT_INFO_FILE, VERSION_2,
};
use super::{HBaseError, Result};
use hfkit_table::directory::{verify_copy, Table};
use hfkit_table::manifest::StoreFileEntry;
use hfkit_table::staging::{is_owned, OwnedDir};
use hfkit_table::TableName;

/// The directory, under the root, of snapshots in progress (HBase's working directory).
const WORKING_DIR: &str = ".tmp";
/// What an export's staging directory in [`WORKING_DIR`] is named, before `<name>.<32 hex>`.
pub const STAGING_PREFIX: &str = "hfkit-export-";
/// The suffix of a staging directory's list of moves, beside it.
const MOVES_SUFFIX: &str = ".moves";
/// The test hook's variable ([`super::pause_for_tests`]; phases `copied`, `moved`).
const EXPORT_PAUSE_VAR: &str = "HFKIT_TEST_EXPORT_PAUSE";
/// The staging directory's subdirectory of copies.
const STAGED_FILES: &str = "archive";

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
pub fn check_name(name: &str) -> Result<()> {
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
/// absent). Holds the table's writer lock so that no compaction removes files meanwhile. First
/// cleans up what killed exports into `root` left ([`recover_killed_exports`]). On failure the
/// snapshot does not exist and neither do the copies this export made.
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
    let working = root.join(SNAPSHOT_DIR).join(WORKING_DIR);
    recover_killed_exports(root)?;
    let staging = OwnedDir::create(&working, &format!("{STAGING_PREFIX}{}.", opts.name))
        .map_err(|e| HBaseError::io(&working, e))?;
    let descriptor = TableDescriptor::from_families(table.clone(), &m.families);
    let export = Export {
        t,
        root,
        staging: staging.path(),
        table: &table,
    };
    let result = export.write(opts, &m, descriptor, &final_dir);
    if result.is_err() && staging.path().exists() {
        // Not renamed: the snapshot does not exist; nothing it names may stay.
        let _ = roll_back(root, staging.path());
    }
    result
}

/// The staging directory of an export: `<dir>.moves` beside it.
fn moves_file(staging: &Path) -> PathBuf {
    let mut p = staging.as_os_str().to_owned();
    p.push(MOVES_SUFFIX);
    PathBuf::from(p)
}

/// Removes what killed exports left in `root`'s working directory: each staging directory no
/// live process holds, after undoing its moves ([`roll_back`]); a list of moves whose staging
/// directory is gone (its export renamed it: done). Returns how many it cleaned up.
pub fn recover_killed_exports(root: &Path) -> Result<usize> {
    let working = root.join(SNAPSHOT_DIR).join(WORKING_DIR);
    let entries = match std::fs::read_dir(&working) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(HBaseError::io(&working, e)),
    };
    let mut cleaned = 0;
    for e in entries.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with(STAGING_PREFIX) {
            continue;
        }
        let path = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            if is_owned(&path) {
                continue;
            }
            roll_back(root, &path)?;
            std::fs::remove_dir_all(&path).map_err(|err| HBaseError::io(&path, err))?;
            cleaned += 1;
        } else if let Some(dir) = name.strip_suffix(MOVES_SUFFIX) {
            if !working.join(dir).exists() {
                remove_if_present(&path)?;
                cleaned += 1;
            }
        }
    }
    Ok(cleaned)
}

/// Undoes the moves of the export staged in `staging` (not renamed, so its snapshot does not
/// exist): every archive file its list of moves names whose copy is no longer staged was moved
/// there by it, and is removed; then the list. Paths in the list are relative to the root and
/// under `archive/`; another one is an error naming the list.
fn roll_back(root: &Path, staging: &Path) -> Result<()> {
    let moves = moves_file(staging);
    let text = match std::fs::read_to_string(&moves) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(HBaseError::io(&moves, e)),
    };
    for line in text.lines().filter(|l| !l.is_empty()) {
        let (archived, staged) = line.split_once('\t').ok_or_else(|| {
            HBaseError::corrupt(
                &moves,
                format!("not '<archive path>\\t<staged path>': {line}"),
            )
        })?;
        let (archived, staged) = (Path::new(archived), Path::new(staged));
        let inside = |p: &Path, first: &str| {
            p.is_relative()
                && p.components()
                    .next()
                    .is_some_and(|c| c.as_os_str() == first)
                && p.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
        };
        if !inside(archived, ARCHIVE_DIR) || !inside(staged, STAGED_FILES) {
            return Err(HBaseError::corrupt(
                &moves,
                format!("names a path outside the archive or the staging directory: {line}"),
            ));
        }
        if !staging.join(staged).exists() {
            remove_if_present(&root.join(archived))?;
        }
    }
    remove_if_present(&moves)
}

fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(HBaseError::io(path, e)),
        _ => Ok(()),
    }
}

/// What an export writes: each store file with its path below the table's archive directory
/// (`<encoded region>/<family>/<exported name>`), and the bytes of the snapshot's
/// `.snapshotinfo` and `data.manifest`.
pub struct ExportPlan {
    pub files: Vec<(StoreFileEntry, String)>,
    pub info: Vec<u8>,
    pub manifest: Vec<u8>,
}

/// The export of `m` (an hfkit manifest) as snapshot `opts.name` of HBase table `table` whose
/// descriptor is `descriptor`: one region per hfkit region (region id = the creation time),
/// each store file under its exported name (see the module documentation).
pub fn plan_export(
    table: &TableName,
    m: &hfkit_table::manifest::Manifest,
    descriptor: TableDescriptor,
    opts: &ExportOptions,
) -> ExportPlan {
    let mut files = Vec::new();
    let mut region_manifests = Vec::new();
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
        let mut family_files = Vec::new();
        for f in &m.families {
            let entries = m
                .files
                .iter()
                .filter(|e| e.region == r.id && e.family == f.name);
            let mut store_files = Vec::new();
            for e in entries {
                let name = exported_name(e);
                debug_assert!(is_hfile_name(&name));
                files.push((
                    e.clone(),
                    format!("{}/{}/{name}", info.encoded_name(), f.name),
                ));
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
    ExportPlan {
        files,
        info: info.to_proto().encode_to_vec(),
        manifest: manifest.encode_to_vec(),
    }
}

/// One export's fixed parts.
struct Export<'a> {
    t: &'a Table,
    root: &'a Path,
    /// The staging directory (locked).
    staging: &'a Path,
    table: &'a TableName,
}

/// A copy staged for the archive: where it is, where it goes.
pub(crate) struct Staged {
    pub(crate) staged: PathBuf,
    pub(crate) archived: PathBuf,
}

impl Export<'_> {
    /// Stages the copies and the snapshot, lists the moves, moves the copies into the archive
    /// and renames the staging directory to `final_dir` (the module documentation's steps).
    fn write(
        &self,
        opts: &ExportOptions,
        m: &hfkit_table::manifest::Manifest,
        descriptor: TableDescriptor,
        final_dir: &Path,
    ) -> Result<ExportReport> {
        let mut report = ExportReport {
            snapshot_dir: final_dir.to_path_buf(),
            table: self.table.full_name(),
            regions: m.regions.len(),
            files: 0,
            files_present: 0,
            bytes: 0,
        };
        let plan = plan_export(self.table, m, descriptor, opts);
        let mut staged = Vec::new();
        hfkit_table::progress::phase(
            "copying",
            hfkit_table::progress::Unit::Files,
            plan.files.len() as u64,
        );
        for (e, rel) in &plan.files {
            hfkit_table::check_interrupt()?;
            match self.stage(e, Path::new(rel))? {
                Some(s) => staged.push(s),
                None => report.files_present += 1,
            }
            super::pause_for_tests(EXPORT_PAUSE_VAR, "copied", staged.len());
            report.files += 1;
            report.bytes += e.size;
            hfkit_table::progress::done(1);
        }
        let (info, manifest) = (&plan.info, &plan.manifest);
        write_synced(&self.staging.join(SNAPSHOT_INFO_FILE), info)?;
        write_synced(&self.staging.join(DATA_MANIFEST_FILE), manifest)?;
        commit_staged(self.root, self.staging, &staged, final_dir)?;
        Ok(report)
    }

    /// Copies (hard-links) `e` to the staging directory at `archive/<rel>`, fsynced and
    /// verified; `None` when the archive holds it already (an earlier export) with its size.
    fn stage(&self, e: &StoreFileEntry, rel: &Path) -> Result<Option<Staged>> {
        let archived = archive_table_dir(self.root, self.table).join(rel);
        let from = self.t.file_path(e);
        self.t.open_store_file(e)?;
        match std::fs::metadata(&archived) {
            Ok(meta) if meta.len() == e.size => {
                verify_copy(&from, &archived, e.entries)?;
                return Ok(None);
            }
            Ok(_) => {
                return Err(HBaseError::corrupt(
                    &archived,
                    format!(
                        "exists in the archive with another size than {}",
                        from.display()
                    ),
                ))
            }
            Err(_) => {}
        }
        let staged = self.staging.join(STAGED_FILES).join(rel);
        if let Some(d) = staged.parent() {
            std::fs::create_dir_all(d).map_err(|err| HBaseError::io(d, err))?;
        }
        if std::fs::hard_link(&from, &staged).is_err() {
            std::fs::copy(&from, &staged).map_err(|err| HBaseError::io(&staged, err))?;
        }
        std::fs::File::open(&staged)
            .and_then(|f| f.sync_all())
            .map_err(|err| HBaseError::io(&staged, err))?;
        verify_copy(&from, &staged, e.entries)?;
        Ok(Some(Staged { staged, archived }))
    }
}

/// Commits a staging directory of `root` (an export's or a snapshot copy's) holding the
/// snapshot's files and, under `archive/`, the `staged` copies: fsyncs them, lists the moves,
/// moves the copies into the archive, removes the emptied `archive/`, renames the staging
/// directory to `final_dir` (the snapshot appears), and removes the list.
pub(crate) fn commit_staged(
    root: &Path,
    staging: &Path,
    staged: &[Staged],
    final_dir: &Path,
) -> Result<()> {
    sync_tree(&staging.join(STAGED_FILES))?;
    sync_dir(staging)?;
    move_into_archive(root, staging, staged)?;
    let staged_files = staging.join(STAGED_FILES);
    if staged_files.exists() {
        std::fs::remove_dir_all(&staged_files).map_err(|e| HBaseError::io(&staged_files, e))?;
    }
    std::fs::rename(staging, final_dir).map_err(|e| HBaseError::io(final_dir, e))?;
    if let Some(parent) = final_dir.parent() {
        sync_dir(parent)?;
    }
    // Done: a list left behind is removed by the next export.
    let _ = remove_if_present(&moves_file(staging));
    Ok(())
}

/// Lists the moves (fsynced) beside the staging directory, then moves each staged copy to its
/// archive path, and fsyncs the archive directories.
fn move_into_archive(root: &Path, staging: &Path, staged: &[Staged]) -> Result<()> {
    let rel = |p: &Path, base: &Path| {
        p.strip_prefix(base).map(Path::to_path_buf).map_err(|_| {
            HBaseError::Invalid(format!("{} is not under {}", p.display(), base.display()))
        })
    };
    let mut list = String::new();
    for s in staged {
        let a = rel(&s.archived, root)?;
        let st = rel(&s.staged, staging)?;
        list.push_str(&format!("{}\t{}\n", a.display(), st.display()));
    }
    // Written whole in the staging directory, then renamed beside it: a list is never
    // read half-written (a kill before the rename leaves it to go with the directory).
    let moves = moves_file(staging);
    let draft = staging.join(MOVES_SUFFIX);
    write_synced(&draft, list.as_bytes())?;
    std::fs::rename(&draft, &moves).map_err(|e| HBaseError::io(&moves, e))?;
    if let Some(working) = moves.parent() {
        sync_dir(working)?;
    }
    let mut dirs = std::collections::BTreeSet::new();
    for (i, s) in staged.iter().enumerate() {
        if let Some(d) = s.archived.parent() {
            std::fs::create_dir_all(d).map_err(|e| HBaseError::io(d, e))?;
            dirs.insert(d.to_path_buf());
        }
        std::fs::rename(&s.staged, &s.archived).map_err(|e| HBaseError::io(&s.archived, e))?;
        super::pause_for_tests(EXPORT_PAUSE_VAR, "moved", i + 1);
    }
    for d in &dirs {
        sync_dir(d)?;
    }
    Ok(())
}

/// Fsyncs every directory under `dir` (and `dir`), when it exists.
fn sync_tree(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| HBaseError::io(&d, e))? {
            let p = e.map_err(|err| HBaseError::io(&d, err))?.path();
            if p.is_dir() {
                stack.push(p);
            }
        }
        sync_dir(&d)?;
    }
    Ok(())
}

/// Writes `bytes` to the new file `path` and fsyncs it.
pub fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A killed export's list of moves: the files it moved (copy no longer staged) are
    /// removed, the others kept; a line naming a path outside the archive is an error naming
    /// the list, and nothing is removed for it.
    #[test]
    fn roll_back_removes_only_what_the_export_moved() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let staging = root.join(".hbase-snapshot/.tmp/hfkit-export-s.0123");
        let archive = root.join("archive/data/default/t/r/f");
        std::fs::create_dir_all(staging.join("archive/r/f")).unwrap();
        std::fs::create_dir_all(&archive).unwrap();
        for n in ["moved", "not_moved", "other"] {
            std::fs::write(archive.join(n), b"x").unwrap();
        }
        std::fs::write(staging.join("archive/r/f/not_moved"), b"x").unwrap();
        let list = "archive/data/default/t/r/f/moved\tarchive/r/f/moved\n\
                    archive/data/default/t/r/f/not_moved\tarchive/r/f/not_moved\n";
        std::fs::write(moves_file(&staging), list).unwrap();
        roll_back(root, &staging).unwrap();
        assert!(!archive.join("moved").exists());
        assert!(archive.join("not_moved").is_file() && archive.join("other").is_file());
        assert!(!moves_file(&staging).exists());

        std::fs::write(
            moves_file(&staging),
            "data/default/t/r/f/other\tarchive/r/f/x\n",
        )
        .unwrap();
        let err = roll_back(root, &staging).unwrap_err().to_string();
        assert!(err.contains(".moves") && err.contains("outside"), "{err}");
        std::fs::write(moves_file(&staging), "archive/../data/x\tarchive/r/f/x\n").unwrap();
        assert!(roll_back(root, &staging).is_err());
        assert!(archive.join("other").is_file());
    }
}
