//! Snapshots: named, saved copies of a manifest version. Spec: `formats/table.md`
//! §"Snapshots".
//!
//! ```text
//! TABLE/snapshots/<name>.json    {"format_version":1,"name":..,"created_ms":..,"manifest":{..}}
//! ```
//!
//! A snapshot copies no store file: it pins the files its manifest names, and garbage collection
//! keeps every file that the live manifest or any snapshot names. Creating one writes a small
//! JSON file (temporary name, fsync, rename, fsync `snapshots/`), so its cost does not depend on
//! the table's size. Restore publishes the snapshot's manifest as the next live version (one
//! commit; a store file that is a symbolic link is refused); clone builds a new table directory
//! whose files are hard links (or copies) of the snapshot's files, never symbolic links, staged
//! next to the destination and renamed into place when complete.

use std::path::{Path, PathBuf};

use hfkit_format::cell::now_ms;
use serde::{Deserialize, Serialize};

use super::directory::{verify_copy, Table, DATA_DIR, STAGING_DIR};
use super::fsops::{store_file_link, Fs};
use super::manifest::{self, Manifest, MANIFEST_DIR};
use super::TableError;

/// Directory of snapshot files.
pub const SNAPSHOT_DIR: &str = "snapshots";
/// Snapshot file format version.
pub const SNAPSHOT_FORMAT_VERSION: u32 = 1;
/// Longest snapshot name.
pub const MAX_SNAPSHOT_NAME_LEN: usize = 128;

/// A snapshot file: the manifest version it saved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub format_version: u32,
    pub name: String,
    /// Epoch ms when it was taken.
    pub created_ms: i64,
    pub manifest: Manifest,
}

/// A summary line of a snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SnapshotInfo {
    pub name: String,
    pub table: String,
    pub created_ms: i64,
    /// The manifest version it saved.
    pub manifest_version: u64,
    pub files: usize,
    pub cells: u64,
    pub bytes: u64,
}

impl Snapshot {
    pub fn info(&self) -> SnapshotInfo {
        SnapshotInfo {
            name: self.name.clone(),
            table: self.manifest.table.clone(),
            created_ms: self.created_ms,
            manifest_version: self.manifest.version,
            files: self.manifest.files.len(),
            cells: self.manifest.files.iter().map(|f| f.entries).sum(),
            bytes: self.manifest.files.iter().map(|f| f.size).sum(),
        }
    }
}

/// What a restore did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoreReport {
    /// Manifest version published.
    pub version: u64,
    pub files: usize,
    /// Files no longer named by anything, removed after the commit.
    pub garbage_removed: usize,
}

/// Checks a snapshot name: 1 to 128 characters of `[A-Za-z0-9_.-]`, not starting with `.` or
/// `-` (HBase's rule for snapshot names is that of table qualifiers).
pub fn validate_name(name: &str) -> Result<(), TableError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_SNAPSHOT_NAME_LEN
        && !name.starts_with(['.', '-'])
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(TableError::Invalid(format!(
            "snapshot name '{name}': use 1 to {MAX_SNAPSHOT_NAME_LEN} characters of [A-Za-z0-9_.-], not starting with '.' or '-'"
        )))
    }
}

fn snapshot_path(t: &Table, name: &str) -> PathBuf {
    t.dir().join(SNAPSHOT_DIR).join(format!("{name}.json"))
}

/// Reads one snapshot file.
fn read_snapshot(path: &Path) -> Result<Snapshot, TableError> {
    let bytes = std::fs::read(path).map_err(|e| TableError::io(path, e))?;
    let s: Snapshot = serde_json::from_slice(&bytes).map_err(|e| TableError::Corrupt {
        path: path.to_path_buf(),
        detail: format!("snapshot JSON: {e}"),
    })?;
    if s.format_version != SNAPSHOT_FORMAT_VERSION {
        return Err(TableError::Corrupt {
            path: path.to_path_buf(),
            detail: format!("snapshot format version {} is unknown", s.format_version),
        });
    }
    Ok(s)
}

/// Every snapshot of the table, by name. An unreadable snapshot is an error (garbage
/// collection must not guess which files it pins).
pub fn list_snapshots(t: &Table) -> Result<Vec<Snapshot>, TableError> {
    let dir = t.dir().join(SNAPSHOT_DIR);
    let rd = match std::fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(TableError::io(&dir, e)),
    };
    let mut out = Vec::new();
    for e in rd {
        let p = e.map_err(|e| TableError::io(&dir, e))?.path();
        let is_snapshot = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(".json") && !n.starts_with('.'));
        if is_snapshot {
            out.push(read_snapshot(&p)?);
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Removes temporary snapshot files of writers that died; returns how many.
pub(crate) fn remove_snapshot_leftovers(t: &Table) -> usize {
    let dir = t.dir().join(SNAPSHOT_DIR);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return 0;
    };
    let mut n = 0;
    for e in rd.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "tmp") && std::fs::remove_file(&p).is_ok() {
            n += 1;
        }
    }
    n
}

impl Table {
    /// Saves the live manifest as snapshot `name` (which must not exist). Copies no data.
    pub fn snapshot_create(&self, name: &str) -> Result<SnapshotInfo, TableError> {
        validate_name(name)?;
        let lock = self.lock()?;
        self.collect_garbage(&lock)?;
        let path = snapshot_path(self, name);
        if path.exists() {
            return Err(TableError::Invalid(format!(
                "snapshot '{name}' already exists"
            )));
        }
        let snap = Snapshot {
            format_version: SNAPSHOT_FORMAT_VERSION,
            name: name.to_string(),
            created_ms: now_ms(),
            manifest: self.manifest()?,
        };
        let bytes = serde_json::to_vec_pretty(&snap)
            .map_err(|e| TableError::Invalid(format!("snapshot: {e}")))?;
        let dir = self.dir().join(SNAPSHOT_DIR);
        let fs = self.fs();
        fs.create_dir_all(&dir)
            .map_err(|e| TableError::io(&dir, e))?;
        let tmp = dir.join(format!("{name}.json.tmp"));
        let written = fs
            .write_file(&tmp, &bytes)
            .map_err(|e| TableError::io(&tmp, e))
            .and_then(|()| fs.rename(&tmp, &path).map_err(|e| TableError::io(&path, e)));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        fs.sync_dir(&dir).map_err(|e| TableError::io(&dir, e))?;
        // The first snapshot also creates `snapshots/` itself.
        fs.sync_dir(self.dir())
            .map_err(|e| TableError::io(self.dir(), e))?;
        Ok(snap.info())
    }

    /// Every snapshot, by name.
    pub fn snapshots(&self) -> Result<Vec<SnapshotInfo>, TableError> {
        Ok(list_snapshots(self)?.iter().map(Snapshot::info).collect())
    }

    /// The snapshot named `name`.
    pub fn snapshot(&self, name: &str) -> Result<Snapshot, TableError> {
        validate_name(name)?;
        let path = snapshot_path(self, name);
        if !path.exists() {
            return Err(TableError::Invalid(format!("no snapshot named '{name}'")));
        }
        read_snapshot(&path)
    }

    /// Deletes snapshot `name`; files only it referenced are removed. Returns how many files
    /// garbage collection removed.
    pub fn snapshot_delete(&self, name: &str) -> Result<usize, TableError> {
        validate_name(name)?;
        let lock = self.lock()?;
        let path = snapshot_path(self, name);
        if !path.exists() {
            return Err(TableError::Invalid(format!("no snapshot named '{name}'")));
        }
        let dir = self.dir().join(SNAPSHOT_DIR);
        self.fs()
            .remove_file(&path)
            .map_err(|e| TableError::io(&path, e))?;
        self.fs()
            .sync_dir(&dir)
            .map_err(|e| TableError::io(&dir, e))?;
        self.collect_garbage(&lock)
    }

    /// Makes snapshot `name`'s manifest (families, regions, files) live again, in one commit.
    /// Sequence ids keep increasing: the next attach still gets a fresh, higher one. A store
    /// file that is missing, has another size, or is a symbolic link is refused.
    pub fn snapshot_restore(&self, name: &str) -> Result<RestoreReport, TableError> {
        let lock = self.lock()?;
        self.collect_garbage(&lock)?;
        let snap = self.snapshot(name)?;
        let live = self.manifest()?;
        // The restore makes these files the table and lets garbage collection delete the
        // live files no snapshot names: every one is verified in full first.
        for e in &snap.manifest.files {
            self.open_store_file(e)?;
            let p = self.file_path(e);
            if let Some(why) = store_file_link(&p) {
                return Err(TableError::Corrupt {
                    path: p,
                    detail: why,
                });
            }
            verify_copy(&p, &p, e.entries)?;
        }
        let mut next = snap.manifest.clone();
        next.version = live.version + 1;
        next.next_seq_id = live.next_seq_id.max(snap.manifest.next_seq_id);
        self.commit(&next, &[])?;
        let garbage_removed = self.collect_garbage(&lock)?;
        Ok(RestoreReport {
            version: next.version,
            files: next.files.len(),
            garbage_removed,
        })
    }

    /// Creates a new table at `new_dir` (absent or empty) holding snapshot `name`'s contents:
    /// its store files are hard links of the snapshot's files, or copies across filesystems.
    /// `table_name` renames the table in the new manifest.
    pub fn snapshot_clone(
        &self,
        name: &str,
        new_dir: &Path,
        table_name: Option<&str>,
    ) -> Result<Table, TableError> {
        let snap = self.snapshot(name)?;
        let mut m = snap.manifest;
        if let Some(n) = table_name {
            m.table = n.to_string();
        }
        materialize(self, &m, new_dir)
    }
}

/// Builds a table at `dest` (absent or empty) whose live manifest is `m` (version reset to 0)
/// and whose files are links or copies of `src`'s files. The table is staged in a sibling
/// directory ([`super::staging::beside`]) and renamed to `dest` once complete and fsynced.
pub(crate) fn materialize(src: &Table, m: &Manifest, dest: &Path) -> Result<Table, TableError> {
    if dest.exists() {
        let mut it = std::fs::read_dir(dest).map_err(|e| TableError::io(dest, e))?;
        if it.next().is_some() {
            return Err(TableError::Invalid(format!(
                "{} exists and is not empty",
                dest.display()
            )));
        }
    }
    let parent = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    // Held while it is built, removed if that fails; the next copy to `dest` removes one a
    // killed process left.
    let staging = super::staging::beside(dest).map_err(|e| TableError::io(dest, e))?;
    build_copy(src, m, staging.path(), dest, &parent)?;
    drop(staging);
    Table::open(dest)
}

fn build_copy(
    src: &Table,
    m: &Manifest,
    staging: &Path,
    dest: &Path,
    parent: &Path,
) -> Result<(), TableError> {
    let fs: &dyn Fs = src.fs();
    for d in [
        staging.to_path_buf(),
        staging.join(MANIFEST_DIR),
        staging.join(DATA_DIR),
        staging.join(STAGING_DIR),
    ] {
        fs.create_dir_all(&d).map_err(|e| TableError::io(&d, e))?;
    }
    let mut dirs = std::collections::BTreeSet::new();
    crate::progress::phase(
        "copying",
        crate::progress::Unit::Files,
        m.files.len() as u64,
    );
    for e in &m.files {
        let fam_dir = staging.join(DATA_DIR).join(&e.region).join(&e.family);
        if dirs.insert(fam_dir.clone()) {
            fs.create_dir_all(&fam_dir)
                .map_err(|err| TableError::io(&fam_dir, err))?;
        }
        crate::check_interrupt()?;
        let to = fam_dir.join(&e.name);
        // Checked before it is handed out: the copy is verified in full, so a damaged source
        // file fails the clone or export and nothing appears at the destination.
        src.open_store_file(e)?;
        fs.link_or_copy(&src.file_path(e), &to)
            .map_err(|err| TableError::io(&to, err))?;
        verify_copy(&src.file_path(e), &to, e.entries)?;
        crate::progress::done(1);
    }
    // Family directories, then region directories, then data/.
    let mut region_dirs = std::collections::BTreeSet::new();
    for d in &dirs {
        fs.sync_dir(d).map_err(|e| TableError::io(d, e))?;
        if let Some(r) = d.parent() {
            region_dirs.insert(r.to_path_buf());
        }
    }
    for d in &region_dirs {
        fs.sync_dir(d).map_err(|e| TableError::io(d, e))?;
    }
    let data = staging.join(DATA_DIR);
    fs.sync_dir(&data).map_err(|e| TableError::io(&data, e))?;
    let mut out = m.clone();
    out.version = 0;
    manifest::publish(fs, staging, &out)?;
    fs.rename(staging, dest)
        .map_err(|e| TableError::io(dest, e))?;
    fs.sync_dir(parent).map_err(|e| TableError::io(parent, e))?;
    Ok(())
}
