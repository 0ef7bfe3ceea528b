//! What the table names and what it does not: garbage collection of the files no manifest
//! version or snapshot names and of dead writers' staging (`formats/table.md` §"Writers and
//! garbage"), and `check`, which verifies every live file and reports orphans (§"Check").

use std::path::{Path, PathBuf};

use super::table::{Table, WriterLock, STAGING_DIR};
use crate::fsops::store_file_link;
use crate::manifest::{self, Manifest, DATA_DIR, MANIFEST_DIR};
use crate::TableError;
use hfkit_format::reader::HFileReader;
use hfkit_format::verify::verify;

/// What `check` found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    pub version: u64,
    pub files: usize,
    pub cells: u64,
    pub problems: Vec<String>,
    /// Files under `data/` that neither the manifest nor a snapshot names, and entries of
    /// `.tmp/` that no live writer holds.
    pub orphans: Vec<PathBuf>,
}

impl CheckReport {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

impl Table {
    /// Removes what neither the live manifest nor any snapshot names: leftovers of writers
    /// that died, inputs of finished compactions, files of deleted snapshots. That is every
    /// such file under `data/` (then the directories there left empty), every entry of `.tmp/`
    /// but the directories a live process holds (an import staging its output, see
    /// [`crate::staging`]), unpublished manifests, `CURRENT.tmp` and `snapshots/*.tmp`.
    /// Returns how many files and staging entries it removed. Requires the writers' lock (so
    /// no writer is in flight). A snapshot that cannot be read stops the collection with an
    /// error before anything is removed.
    pub fn collect_garbage(&self, _lock: &WriterLock) -> Result<usize, TableError> {
        let m = self.manifest()?;
        let live = self.referenced_files(&m)?;
        let mut removed = crate::snapshot::remove_snapshot_leftovers(self);
        for p in self.orphans(&live)? {
            if std::fs::remove_file(&p).is_ok() {
                removed += 1;
            }
        }
        remove_empty_dirs(&self.dir.join(DATA_DIR));
        for p in self.staging_leftovers() {
            let gone = if p.is_symlink() || !p.is_dir() {
                std::fs::remove_file(&p).is_ok()
            } else {
                crate::staging::remove_if_unowned(&p).unwrap_or(false)
            };
            if gone {
                removed += 1;
            }
        }
        // Manifest files newer than the live version were never published.
        let mdir = self.dir.join(MANIFEST_DIR);
        for e in std::fs::read_dir(&mdir).map_err(|e| TableError::io(&mdir, e))? {
            let p = e.map_err(|e| TableError::io(&mdir, e))?.path();
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            if (name.ends_with(".tmp") || name > manifest::manifest_file_name(m.version))
                && std::fs::remove_file(&p).is_ok()
            {
                removed += 1;
            }
        }
        let cur_tmp = self.dir.join(format!("{}.tmp", manifest::CURRENT));
        if cur_tmp.exists() && std::fs::remove_file(&cur_tmp).is_ok() {
            removed += 1;
        }
        Ok(removed)
    }

    /// Paths of the files the manifest `m` or any snapshot names.
    fn referenced_files(
        &self,
        m: &Manifest,
    ) -> Result<std::collections::HashSet<PathBuf>, TableError> {
        let mut live: std::collections::HashSet<PathBuf> =
            m.files.iter().map(|e| self.file_path(e)).collect();
        for s in crate::snapshot::list_snapshots(self)? {
            live.extend(s.manifest.files.iter().map(|e| self.file_path(e)));
        }
        Ok(live)
    }

    /// Files under `data/` not in `live`.
    fn orphans(
        &self,
        live: &std::collections::HashSet<PathBuf>,
    ) -> Result<Vec<PathBuf>, TableError> {
        let mut out = Vec::new();
        let mut stack = vec![self.dir.join(DATA_DIR)];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd {
                let p = e.map_err(|e| TableError::io(&d, e))?.path();
                if p.is_dir() {
                    stack.push(p);
                } else if !live.contains(&p) {
                    out.push(p);
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Entries of `.tmp/` that no live process holds: what writers that died left there.
    fn staging_leftovers(&self) -> Vec<PathBuf> {
        let staging = self.dir.join(STAGING_DIR);
        let Ok(rd) = std::fs::read_dir(&staging) else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_symlink() || !p.is_dir() || !crate::staging::is_owned(p))
            .collect();
        out.sort();
        out
    }

    /// Checks that every live file exists (a regular file, not a symbolic link), has the recorded
    /// size, verifies, and lies within its region; reports orphans.
    pub fn check(&self) -> Result<CheckReport, TableError> {
        self.check_with_progress(&|_| {})
    }

    /// [`Table::check`], calling `progress` with each file's size once it is checked.
    pub fn check_with_progress(&self, progress: &dyn Fn(u64)) -> Result<CheckReport, TableError> {
        let m = self.manifest()?;
        let mut r = CheckReport {
            version: m.version,
            files: m.files.len(),
            ..CheckReport::default()
        };
        if let Err(e) = m.check_regions() {
            r.problems.push(e.to_string());
        }
        for e in &m.files {
            progress(e.size);
            let p = self.file_path(e);
            let Some(region) = m.regions.iter().find(|x| x.id == e.region) else {
                r.problems.push(format!(
                    "{}: region {} is not in the manifest",
                    p.display(),
                    e.region
                ));
                continue;
            };
            if m.family(&e.family).is_none() {
                r.problems.push(format!(
                    "{}: family {} is not in the manifest",
                    p.display(),
                    e.family
                ));
            }
            if let Some(why) = store_file_link(&p) {
                r.problems.push(format!("{}: {why}", p.display()));
            }
            match std::fs::metadata(&p) {
                Err(err) => {
                    r.problems.push(format!("{}: {err}", p.display()));
                    continue;
                }
                Ok(md) if md.len() != e.size => {
                    r.problems.push(format!(
                        "{}: {} bytes, manifest says {}",
                        p.display(),
                        md.len(),
                        e.size
                    ));
                }
                Ok(_) => {}
            }
            match HFileReader::open(&p) {
                Err(err) => r.problems.push(format!("{}: {err}", p.display())),
                Ok(reader) => {
                    let v = verify(&reader);
                    r.cells += v.cells;
                    if v.cells != e.entries {
                        r.problems.push(format!(
                            "{}: {} cells, the manifest says {}",
                            p.display(),
                            v.cells,
                            e.entries
                        ));
                    }
                    for prob in v.problems {
                        r.problems.push(format!("{}: {prob}", p.display()));
                    }
                    if !region.contains(&e.first_row) || !region.contains(&e.last_row) {
                        r.problems.push(format!(
                            "{}: rows fall outside region {}",
                            p.display(),
                            region.id
                        ));
                    }
                }
            }
        }
        match crate::snapshot::list_snapshots(self) {
            Ok(snaps) => {
                for s in snaps {
                    for e in &s.manifest.files {
                        let p = self.file_path(e);
                        if !p.is_file() {
                            r.problems.push(format!(
                                "{}: named by snapshot {} but missing",
                                p.display(),
                                s.name
                            ));
                        }
                    }
                }
            }
            Err(e) => r.problems.push(format!("snapshots: {e}")),
        }
        let live = self
            .referenced_files(&m)
            .unwrap_or_else(|_| m.files.iter().map(|e| self.file_path(e)).collect());
        r.orphans = self.orphans(&live)?;
        r.orphans.extend(self.staging_leftovers());
        Ok(r)
    }
}

/// Removes the directories under `dir` (not `dir` itself) that hold no file, deepest first.
fn remove_empty_dirs(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            let p = e.path();
            remove_empty_dirs(&p);
            // Fails, as it should, when the directory is not empty.
            let _ = std::fs::remove_dir(&p);
        }
    }
}
