//! A table on disk: create, open, attach bulk-load directories, check, collect garbage.
//! Spec: `formats/table.md`.
//!
//! ```text
//! TABLE/
//!   CURRENT                          pointer to the live manifest (name + CRC32C)
//!   manifests/manifest-<v>.json      manifest versions (immutable)
//!   data/<region>/<family>/<file>    store files; live only if the manifest names them
//!   .tmp/                            staging for attaches in progress
//!   .lock                            advisory lock: one writer at a time; readers never lock
//!   indexes/<qualifier>/             index tables an import wrote with this one: tables of
//!                                    their own, which nothing done to TABLE reads or removes
//! ```
//!
//! Attach (`Table::attach`) makes every file of a bulk-load directory visible in one manifest
//! commit, or none of them: files are verified, split at region boundaries when they straddle
//! them, linked (or copied; a symbolic link is followed, never stored) into `data/` and
//! fsynced, and only then is a new manifest
//! published. A crash at any point leaves the previous manifest live; files it does not name
//! are invisible and are removed by the next writer.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use super::fsops::{follow_links, store_file_link, Fs, RealFs};
use super::manifest::{self, Attributes, FamilyEntry, Manifest, StoreFileEntry, MANIFEST_DIR};
use super::TableError;
use hfkit_format::cell::KeyView;
use hfkit_format::error::FormatError;
use hfkit_format::reader::HFileReader;
use hfkit_format::verify::verify;
use hfkit_format::writer::HFileWriter;

/// Directory of store files.
pub const DATA_DIR: &str = "data";
/// Staging directory for attaches in progress.
pub const STAGING_DIR: &str = ".tmp";
/// The writers' advisory lock file.
pub const LOCK_FILE: &str = ".lock";
/// Directory of the index tables imported with the table (`INDEX_DIR/<qualifier>/`, each a
/// table directory of its own). Garbage collection, check, compaction, snapshots and exports
/// of the table never look inside it.
pub const INDEX_DIR: &str = "indexes";
/// Most files one attach may add to one region and family (HBase's
/// `hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily`).
pub const MAX_FILES_PER_REGION_FAMILY: usize = 32;

/// An open table directory.
#[derive(Clone)]
pub struct Table {
    dir: PathBuf,
    fs: Arc<dyn Fs>,
}

/// Held while a writer changes the table; released on drop.
pub struct WriterLock {
    _file: File,
}

/// What an attach did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachReport {
    /// Manifest version published.
    pub version: u64,
    /// Sequence id given to every attached file.
    pub seq_id: u64,
    pub files: Vec<StoreFileEntry>,
    /// Input files that straddled region boundaries and were split.
    pub split_inputs: usize,
    /// Input files skipped, with the reason (empty files).
    pub skipped: Vec<(PathBuf, String)>,
    /// Leftover files of earlier, interrupted writers that were removed first.
    pub garbage_removed: usize,
}

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

/// One input file of an attach, verified.
struct Input {
    path: PathBuf,
    family: String,
    reader: HFileReader,
    first_row: Vec<u8>,
    last_row: Vec<u8>,
}

/// Verifies the store file at `path` in full (`format::verify`: every block's checksum, the
/// index, the Bloom filter, the trailer and FileInfo against the cells) and that it holds
/// `cells` cells; the problem found, if any. What deletes or replaces data, or hands files out
/// (compaction outputs, snapshot restore, clone, export), calls this on the files it relies
/// on: `formats/table.md` §"Checks".
pub fn verify_store_file(path: &Path, cells: u64) -> Result<(), String> {
    let reader = HFileReader::open(path).map_err(|e| e.to_string())?;
    let v = verify(&reader);
    match v.problems.first() {
        Some(p) => Err(p.to_string()),
        None if v.cells != cells => Err(format!("{} cells, {cells} expected", v.cells)),
        None => Ok(()),
    }
}

/// [`verify_store_file`] of the copy at `copy` of table file `source`, as an error naming the
/// source.
pub fn verify_copy(source: &Path, copy: &Path, cells: u64) -> Result<(), TableError> {
    verify_store_file(copy, cells).map_err(|detail| TableError::Corrupt {
        path: source.to_path_buf(),
        detail: format!("failed verification ({detail})"),
    })
}

impl Table {
    /// Creates a table at `dir` (which must not exist or be empty) with the given families and
    /// region split keys (sorted, unique, non-empty).
    pub fn create(
        dir: &Path,
        table: &str,
        families: Vec<FamilyEntry>,
        splits: &[Vec<u8>],
    ) -> Result<Table, TableError> {
        Table::create_with_attributes(dir, table, Attributes::default(), families, splits)
    }

    /// [`Table::create`] with table attributes, METADATA and CONFIGURATION, kept in the
    /// manifest.
    pub fn create_with_attributes(
        dir: &Path,
        table: &str,
        attributes: Attributes,
        families: Vec<FamilyEntry>,
        splits: &[Vec<u8>],
    ) -> Result<Table, TableError> {
        if families.is_empty() {
            return Err(TableError::Invalid(
                "a table needs at least one family".into(),
            ));
        }
        for f in &families {
            f.writer_options(0)?;
        }
        if splits.iter().any(|s| s.is_empty()) || splits.windows(2).any(|w| w[0] >= w[1]) {
            return Err(TableError::Invalid(
                "split keys must be non-empty, sorted and unique".into(),
            ));
        }
        if dir.exists() {
            let mut it = std::fs::read_dir(dir).map_err(|e| TableError::io(dir, e))?;
            if it.next().is_some() {
                return Err(TableError::Invalid(format!(
                    "{} exists and is not empty",
                    dir.display()
                )));
            }
        }
        let mut m = Manifest::new(table, families, Manifest::regions_from_splits(splits));
        m.table_attributes = attributes;
        m.check_regions()?;
        // Built beside `dir` and renamed into place when complete: a process killed half-way
        // leaves no half-made table, and its staging is removed by the next create.
        let staged = super::staging::beside(dir).map_err(|e| TableError::io(dir, e))?;
        let s = staged.path();
        for d in [s.join(MANIFEST_DIR), s.join(DATA_DIR), s.join(STAGING_DIR)] {
            RealFs
                .create_dir_all(&d)
                .map_err(|e| TableError::io(&d, e))?;
        }
        manifest::publish(&RealFs, s, &m)?;
        RealFs.rename(s, dir).map_err(|e| TableError::io(dir, e))?;
        drop(staged);
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            let _ = RealFs.sync_dir(parent);
        }
        Ok(Table {
            dir: dir.to_path_buf(),
            fs: Arc::new(RealFs),
        })
    }

    /// Opens the table at `dir`.
    pub fn open(dir: &Path) -> Result<Table, TableError> {
        let t = Table {
            dir: dir.to_path_buf(),
            fs: Arc::new(RealFs),
        };
        t.manifest()?;
        Ok(t)
    }

    /// The same table, with commits going through `fs` (tests inject faults this way).
    pub fn with_fs(mut self, fs: Arc<dyn Fs>) -> Table {
        self.fs = fs;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The filesystem commits go through.
    pub(crate) fn fs(&self) -> &dyn Fs {
        self.fs.as_ref()
    }

    /// The live manifest. A reader reads it once and uses that version for its whole read.
    pub fn manifest(&self) -> Result<Manifest, TableError> {
        manifest::read_current(&self.dir)
    }

    /// Path of a live store file.
    pub fn file_path(&self, e: &StoreFileEntry) -> PathBuf {
        self.dir
            .join(DATA_DIR)
            .join(&e.region)
            .join(&e.family)
            .join(&e.name)
    }

    /// Opens store file `e` and checks it against what the manifest recorded when the file was
    /// attached or written: its length and its trailer's entry count. (A full scan then checks
    /// the entry count against the cells it decodes, so a compaction, which scans every input
    /// to its end, never drops cells a damaged trailer hides: `formats/table.md` §"Checks".)
    /// A file that cannot be opened is [`TableError::Io`] (for a vanished file) or
    /// [`TableError::Corrupt`], both naming its path.
    pub fn open_store_file(&self, e: &StoreFileEntry) -> Result<HFileReader, TableError> {
        let path = self.file_path(e);
        let reader = match HFileReader::open(&path) {
            Ok(r) => r,
            Err(FormatError::Io { source, .. }) => return Err(TableError::Io { path, source }),
            Err(err) => {
                return Err(TableError::Corrupt {
                    path,
                    detail: err.to_string(),
                })
            }
        };
        let len = reader.bytes().len() as u64;
        let detail = if len != e.size {
            format!("{len} bytes, the manifest says {}", e.size)
        } else if reader.entry_count() != e.entries {
            format!(
                "trailer entry_count is {}, the manifest says {} cells",
                reader.entry_count(),
                e.entries
            )
        } else {
            return Ok(reader);
        };
        Err(TableError::Corrupt { path, detail })
    }

    /// The index tables under [`INDEX_DIR`] (directories holding a `CURRENT`), sorted.
    pub fn index_tables(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(self.dir.join(INDEX_DIR))
            .into_iter()
            .flatten()
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| p.join(manifest::CURRENT).is_file())
            .collect();
        out.sort();
        out
    }

    /// Takes the writers' lock, waiting for another writer to finish.
    pub fn lock(&self) -> Result<WriterLock, TableError> {
        let path = self.dir.join(LOCK_FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| TableError::io(&path, e))?;
        file.lock().map_err(|e| TableError::io(&path, e))?;
        Ok(WriterLock { _file: file })
    }

    /// Removes what neither the live manifest nor any snapshot names: leftovers of writers
    /// that died, inputs of finished compactions, files of deleted snapshots. That is every
    /// such file under `data/` (then the directories there left empty), every entry of `.tmp/`
    /// but the directories a live process holds (an import staging its output, see
    /// [`super::staging`]), unpublished manifests, `CURRENT.tmp` and `snapshots/*.tmp`.
    /// Returns how many files and staging entries it removed. Requires the writers' lock (so
    /// no writer is in flight). A snapshot that cannot be read stops the collection with an
    /// error before anything is removed.
    pub fn collect_garbage(&self, _lock: &WriterLock) -> Result<usize, TableError> {
        let m = self.manifest()?;
        let live = self.referenced_files(&m)?;
        let mut removed = super::snapshot::remove_snapshot_leftovers(self);
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
                super::staging::remove_if_unowned(&p).unwrap_or(false)
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
        for s in super::snapshot::list_snapshots(self)? {
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
            .filter(|p| p.is_symlink() || !p.is_dir() || !super::staging::is_owned(p))
            .collect();
        out.sort();
        out
    }

    /// Checks that every live file exists (a regular file, not a symbolic link), has the recorded
    /// size, verifies, and lies within its region; reports orphans.
    pub fn check(&self) -> Result<CheckReport, TableError> {
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
        match super::snapshot::list_snapshots(self) {
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

    /// Attaches the HFiles of a bulk-load directory (`DIR/<family>/<hfile>`, as written by
    /// `hfkit import --out` or HBase's `HFileOutputFormat2`). All or nothing.
    pub fn attach(&self, bulk_dir: &Path) -> Result<AttachReport, TableError> {
        self.attach_all(&[bulk_dir])
    }

    /// [`Table::attach`] of several bulk-load directories (the outputs of many tasks) in one
    /// commit: every file of every directory becomes visible at once, or none.
    pub fn attach_all(&self, bulk_dirs: &[&Path]) -> Result<AttachReport, TableError> {
        let lock = self.lock()?;
        let garbage_removed = self.collect_garbage(&lock)?;
        let m = self.manifest()?;
        let mut skipped = Vec::new();
        let mut inputs = Vec::new();
        for bulk_dir in bulk_dirs {
            inputs.extend(self.discover(bulk_dir, &m, &mut skipped)?);
        }
        if inputs.is_empty() && skipped.is_empty() {
            let dirs: Vec<String> = bulk_dirs.iter().map(|d| d.display().to_string()).collect();
            return Err(TableError::Invalid(format!(
                "{}: no HFiles found (expected DIR/<family>/<hfile>)",
                dirs.join(", ")
            )));
        }
        let seq_id = m.next_seq_id;
        let staging = self
            .dir
            .join(STAGING_DIR)
            .join(format!("attach-{}", unique_hex()));
        let mut placed: Vec<PathBuf> = Vec::new();
        let result = self.place_all(&m, &inputs, seq_id, &staging, &mut placed);
        let (entries, split_inputs) = match result {
            Ok(x) => x,
            Err(e) => {
                for p in &placed {
                    let _ = std::fs::remove_file(p);
                }
                let _ = std::fs::remove_dir_all(&staging);
                return Err(e);
            }
        };
        let mut next = m.clone();
        next.version += 1;
        next.next_seq_id += 1;
        next.files.extend(entries.iter().cloned());
        let committed = self.commit(&next, &placed);
        let _ = std::fs::remove_dir_all(&staging);
        committed?;
        drop(lock);
        Ok(AttachReport {
            version: next.version,
            seq_id,
            files: entries,
            split_inputs,
            skipped,
            garbage_removed,
        })
    }

    /// Lists and verifies the input files.
    fn discover(
        &self,
        bulk_dir: &Path,
        m: &Manifest,
        skipped: &mut Vec<(PathBuf, String)>,
    ) -> Result<Vec<Input>, TableError> {
        let mut inputs = Vec::new();
        let mut unknown = Vec::new();
        for (fd, kind) in bulk_entries(bulk_dir)? {
            if !kind.is_dir() {
                continue;
            }
            let family = fd
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            if m.family(&family).is_none() {
                unknown.push(family);
                continue;
            }
            for (path, kind) in bulk_entries(&fd)? {
                if !kind.is_file() {
                    continue;
                }
                let reader = HFileReader::open(&path)
                    .map_err(|e| TableError::Invalid(format!("{}: {e}", path.display())))?;
                let v = verify(&reader);
                if let Some(p) = v.problems.first() {
                    return Err(TableError::Invalid(format!(
                        "{}: failed verification: {p}{}",
                        path.display(),
                        if v.problems.len() > 1 {
                            format!(" (and {} more problems)", v.problems.len() - 1)
                        } else {
                            String::new()
                        }
                    )));
                }
                if reader.is_empty() {
                    skipped.push((path, "empty file".into()));
                    continue;
                }
                let (first_row, first_family) = {
                    let mut s = reader.scanner()?;
                    let c = s.next()?.ok_or_else(|| {
                        TableError::Invalid(format!("{}: no first cell", path.display()))
                    })?;
                    (c.row.to_vec(), c.family.to_vec())
                };
                let last = reader.last_key().and_then(KeyView::parse).ok_or_else(|| {
                    TableError::Invalid(format!("{}: no valid LASTKEY", path.display()))
                })?;
                if first_family != family.as_bytes() || last.family != family.as_bytes() {
                    return Err(TableError::Invalid(format!(
                        "{}: holds cells of family '{}' but sits in directory '{family}'",
                        path.display(),
                        String::from_utf8_lossy(&first_family)
                    )));
                }
                let last_row = last.row.to_vec();
                inputs.push(Input {
                    path,
                    family: family.clone(),
                    reader,
                    first_row,
                    last_row,
                });
            }
        }
        if !unknown.is_empty() {
            return Err(TableError::Invalid(format!(
                "{}: families not in table {}: {}",
                bulk_dir.display(),
                m.table,
                unknown.join(", ")
            )));
        }
        Ok(inputs)
    }

    /// Places every input into `data/`, splitting straddling files. Returns the entries and how
    /// many inputs were split. Paths created are pushed to `placed` as they are made.
    fn place_all(
        &self,
        m: &Manifest,
        inputs: &[Input],
        seq_id: u64,
        staging: &Path,
        placed: &mut Vec<PathBuf>,
    ) -> Result<(Vec<StoreFileEntry>, usize), TableError> {
        let mut entries = Vec::new();
        let mut split_inputs = 0;
        let mut per_store: std::collections::HashMap<(String, String), usize> = Default::default();
        for input in inputs {
            let ri = m
                .region_of(&input.first_row)
                .ok_or_else(|| TableError::Invalid("regions do not cover the key space".into()))?;
            let rj = m
                .region_of(&input.last_row)
                .ok_or_else(|| TableError::Invalid("regions do not cover the key space".into()))?;
            let pieces: Vec<(usize, PathBuf, bool)> = if ri == rj {
                vec![(ri, input.path.clone(), false)]
            } else {
                split_inputs += 1;
                self.split_input(m, input, staging)?
                    .into_iter()
                    .map(|(r, p)| (r, p, true))
                    .collect()
            };
            for (region_idx, src, staged) in pieces {
                let region = &m.regions[region_idx];
                let n = per_store
                    .entry((region.id.clone(), input.family.clone()))
                    .or_default();
                *n += 1;
                if *n > MAX_FILES_PER_REGION_FAMILY {
                    return Err(TableError::Invalid(format!(
                        "more than {MAX_FILES_PER_REGION_FAMILY} files for region {} family {} in one attach",
                        region.id, input.family
                    )));
                }
                let fam_dir = self.dir.join(DATA_DIR).join(&region.id).join(&input.family);
                self.fs
                    .create_dir_all(&fam_dir)
                    .map_err(|e| TableError::io(&fam_dir, e))?;
                let name = format!("{}_SeqId_{seq_id}_", unique_hex());
                let dest = fam_dir.join(&name);
                if staged {
                    self.fs
                        .rename(&src, &dest)
                        .map_err(|e| TableError::io(&dest, e))?;
                } else {
                    self.fs
                        .link_or_copy(&src, &dest)
                        .map_err(|e| TableError::io(&dest, e))?;
                }
                placed.push(dest.clone());
                self.fs
                    .sync_dir(&fam_dir)
                    .map_err(|e| TableError::io(&fam_dir, e))?;
                for d in [fam_dir.parent(), fam_dir.parent().and_then(Path::parent)]
                    .into_iter()
                    .flatten()
                {
                    self.fs.sync_dir(d).map_err(|e| TableError::io(d, e))?;
                }
                let reader = HFileReader::open(&dest)?;
                let size = std::fs::metadata(&dest)
                    .map_err(|e| TableError::io(&dest, e))?
                    .len();
                let first_row = {
                    let mut s = reader.scanner()?;
                    s.next()?.map(|c| c.row.to_vec()).unwrap_or_default()
                };
                let last_row = reader
                    .last_key()
                    .and_then(KeyView::parse)
                    .map(|k| k.row.to_vec())
                    .unwrap_or_default();
                let (min_ts, max_ts) = reader
                    .file_info()
                    .time_range()
                    .unwrap_or((i64::MIN, i64::MAX));
                entries.push(StoreFileEntry {
                    region: region.id.clone(),
                    family: input.family.clone(),
                    name,
                    seq_id,
                    size,
                    entries: reader.entry_count(),
                    first_row,
                    last_row,
                    min_ts,
                    max_ts,
                });
            }
        }
        Ok((entries, split_inputs))
    }

    /// Rewrites a straddling input as one file per region it covers (family settings), in
    /// `staging`. Returns (region index, staged path) pairs.
    fn split_input(
        &self,
        m: &Manifest,
        input: &Input,
        staging: &Path,
    ) -> Result<Vec<(usize, PathBuf)>, TableError> {
        let family = m
            .family(&input.family)
            .ok_or_else(|| TableError::Invalid(format!("family {} vanished", input.family)))?;
        self.fs
            .create_dir_all(staging)
            .map_err(|e| TableError::io(staging, e))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let mut opts = family.writer_options(now)?;
        opts.include_tags = input.reader.encoding_context().include_tags || opts.include_tags;
        let mut out = Vec::new();
        let mut scanner = input.reader.scanner()?;
        let mut current: Option<(usize, HFileWriter<Vec<u8>>)> = None;
        let finish = |cur: Option<(usize, HFileWriter<Vec<u8>>)>,
                      out: &mut Vec<(usize, PathBuf)>|
         -> Result<(), TableError> {
            if let Some((region, w)) = cur {
                let (bytes, _) = w.finish()?;
                let p = staging.join(format!("{}.{region}", unique_hex()));
                self.fs
                    .write_file(&p, &bytes)
                    .map_err(|e| TableError::io(&p, e))?;
                out.push((region, p));
            }
            Ok(())
        };
        while let Some(cell) = scanner.next()? {
            let region = m
                .region_of(cell.row)
                .ok_or_else(|| TableError::Invalid("regions do not cover the key space".into()))?;
            if current.as_ref().map(|(r, _)| *r) != Some(region) {
                finish(current.take(), &mut out)?;
                current = Some((region, HFileWriter::new(Vec::new(), opts.clone())?));
            }
            if let Some((_, w)) = current.as_mut() {
                w.append(&cell)?;
            }
        }
        finish(current.take(), &mut out)?;
        self.fs
            .sync_dir(staging)
            .map_err(|e| TableError::io(staging, e))?;
        Ok(out)
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

/// The entries of a bulk-load directory or of one of its family directories that attach reads,
/// sorted, each with its type (of the target, for a link): names starting with `.` or `_` are left out,
/// symbolic links are followed, and one that leads nowhere is an error naming it (a family or a
/// file silently left out would be data missing from the table).
fn bulk_entries(dir: &Path) -> Result<Vec<(PathBuf, std::fs::FileType)>, TableError> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| TableError::io(dir, e))? {
        let p = e.map_err(|e| TableError::io(dir, e))?.path();
        if p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(['_', '.']))
        {
            continue;
        }
        let target = follow_links(&p).map_err(|e| TableError::Invalid(e.to_string()))?;
        let md = std::fs::metadata(&target).map_err(|e| TableError::io(&p, e))?;
        out.push((p, md.file_type()));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// 32 hex characters unique within this machine (time, process id, counter).
pub fn unique_hex() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    format!(
        "{nanos:016x}{:08x}{:08x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}
