//! An HBase snapshot copied from one root directory to another, as HBase's `ExportSnapshot`
//! does: every HFile the snapshot names (through links and references: the file that holds
//! the bytes) under the target's `archive/data/<ns>/<table>/<region>/<family>/`, at the path
//! it has in the source's archive, and the snapshot's own directory (`.snapshotinfo`,
//! `data.manifest`, a v1 snapshot's region directories) copied byte for byte, visible last.
//! Spec: `formats/hbase-layout.md` §"Copy of a snapshot between roots".
//!
//! Staged and committed as [`super::export`] does (the same staging names, so a killed copy
//! is rolled back by the next export or copy into the root): the copies in
//! `.hbase-snapshot/.tmp/hfkit-export-<name>.<32 hex>/archive/`, each verified in full; the
//! list of moves; the moves into `archive/`; the staging directory renamed to
//! `.hbase-snapshot/<name>`. A copy is cut into parts by [`CopyPlan`], so that the files can
//! be copied by several threads or by Spark tasks ([`copy_files`]), and committed once
//! ([`StagedCopy::commit`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::export::{commit_staged, recover_killed_exports, Staged, STAGING_PREFIX};
use super::manifest::Manifest;
use super::names::ARCHIVE_DIR;
use super::snapshot::{snapshot_dir, SNAPSHOT_DIR};
use super::{HBaseError, HBaseRoot, Result};
use hfkit_storage::Location;
use hfkit_table::staging::OwnedDir;

/// The directory, under the root, of snapshots in progress (HBase's working directory).
const WORKING_DIR: &str = ".tmp";
/// The staged copies' directory inside the staging directory (as an export's).
const STAGED_FILES: &str = "archive";

/// One HFile to copy: where its bytes are, and where it goes below the target root.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CopyFile {
    /// The source file (a mirror's placeholder when `object` is set).
    pub from: PathBuf,
    /// The object holding the bytes, for a source root on object storage.
    pub object: Option<String>,
    /// The path below the target root: `archive/data/<ns>/<table>/<region>/<family>/<hfile>`.
    pub rel: String,
    pub size: u64,
}

/// What a snapshot copy moves: its HFiles (each once) and its own directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CopyPlan {
    pub snapshot: String,
    /// The snapshot's directory in the source root.
    pub snapshot_dir: PathBuf,
    pub files: Vec<CopyFile>,
}

/// What a copy did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CopyReport {
    pub snapshot_dir: PathBuf,
    /// HFiles the snapshot names (each once).
    pub files: usize,
    /// Of them, already in the target's archive with the same bytes (an earlier copy).
    pub files_present: usize,
    /// Bytes copied.
    pub bytes: u64,
}

/// The HFiles and the directory of snapshot `name` of `root` to copy.
pub fn plan_copy(root: &HBaseRoot, name: &str) -> Result<CopyPlan> {
    let m = root.snapshot(name)?;
    let mut files: Vec<CopyFile> = Vec::new();
    for r in &m.regions {
        for ff in &r.families {
            let family = String::from_utf8_lossy(&ff.family).into_owned();
            for f in &ff.files {
                let resolved = m.resolve(r, &family, f)?;
                let rel = archive_rel(&m, &resolved.path)?;
                if files.iter().any(|c| c.rel == rel) {
                    continue;
                }
                files.push(CopyFile {
                    from: resolved.path,
                    object: resolved.object.map(|o| o.to_string()),
                    rel,
                    size: resolved.size,
                });
            }
        }
    }
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(CopyPlan {
        snapshot: name.to_string(),
        snapshot_dir: snapshot_dir(root.dir(), name),
        files,
    })
}

/// Where the HFile at `path` (in `data/`, `archive/`, `.tmp/` or `mobdir/` of `m`'s root) goes
/// below the target root: its path in the archive.
fn archive_rel(m: &Manifest, path: &Path) -> Result<String> {
    let rel = path.strip_prefix(&m.root).map_err(|_| {
        HBaseError::Invalid(format!(
            "{}: not under the root {}",
            path.display(),
            m.root.display()
        ))
    })?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let below = match parts.first().map(String::as_str) {
        Some(ARCHIVE_DIR) | Some(".tmp") | Some("mobdir") => &parts[1..],
        Some(_) => &parts[..],
        None => &parts[..],
    };
    Ok(format!("{ARCHIVE_DIR}/{}", below.join("/")))
}

/// A bandwidth cap shared by the threads of one copy: at most `bytes_per_second` on average
/// since the copy started (HBase's `-bandwidth`, in bytes).
pub struct Throttle {
    bytes_per_second: u64,
    started: Instant,
    sent: AtomicU64,
}

impl Throttle {
    pub fn new(bytes_per_second: u64) -> Throttle {
        Throttle {
            bytes_per_second: bytes_per_second.max(1),
            started: Instant::now(),
            sent: AtomicU64::new(0),
        }
    }

    /// Accounts `n` bytes, sleeping until the average is back under the cap.
    fn take(&self, n: u64) {
        let sent = self.sent.fetch_add(n, Ordering::Relaxed) + n;
        let due = Duration::from_secs_f64(sent as f64 / self.bytes_per_second as f64);
        if let Some(wait) = due.checked_sub(self.started.elapsed()) {
            std::thread::sleep(wait);
        }
    }
}

/// Copies `f` to `to` (written under a temporary name, renamed when complete and verified in
/// full against the source's cell count), at most as fast as `throttle` allows. A copy that is
/// there already (a retried task's) is verified and kept.
fn copy_one(
    f: &CopyFile,
    to: &Path,
    throttle: Option<&Throttle>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<u64> {
    let object = f
        .object
        .as_deref()
        .map(Location::parse)
        .transpose()
        .map_err(|e| HBaseError::Invalid(e.to_string()))?;
    let source = match &object {
        Some(o) => super::remote::open_object(o, f.size, &f.from)?,
        None => hfkit_format::reader::HFileReader::open(&f.from).map_err(|source| {
            HBaseError::Format {
                path: f.from.clone(),
                source,
            }
        })?,
    };
    let cells = source.trailer().entry_count;
    let verified =
        |p: &Path| hfkit_table::directory::verify_copy(&f.from, p, cells).map_err(HBaseError::from);
    if to.metadata().is_ok_and(|m| m.len() == f.size) && verified(to).is_ok() {
        progress(f.size);
        return Ok(0);
    }
    if let Some(d) = to.parent() {
        std::fs::create_dir_all(d).map_err(|e| HBaseError::io(d, e))?;
    }
    let part = to.with_extension(format!("part-{}", hfkit_table::directory::unique_hex()));
    let result = (|| -> Result<u64> {
        let mut out = std::fs::File::create(&part).map_err(|e| HBaseError::io(&part, e))?;
        let mut offset = 0u64;
        const CHUNK: u64 = 4 << 20;
        let mut local = match &object {
            None => Some(std::fs::File::open(&f.from).map_err(|e| HBaseError::io(&f.from, e))?),
            Some(_) => None,
        };
        while offset < f.size {
            hfkit_table::check_interrupt()?;
            let n = CHUNK.min(f.size - offset);
            if let Some(t) = throttle {
                t.take(n);
            }
            let bytes = match (&mut local, &object) {
                (Some(file), _) => {
                    use std::io::Read;
                    let mut buf = vec![0u8; n as usize];
                    file.read_exact(&mut buf)
                        .map_err(|e| HBaseError::io(&f.from, e))?;
                    buf
                }
                (None, Some(o)) => {
                    let store = hfkit_storage::store_for(o)
                        .map_err(|e| HBaseError::Invalid(e.to_string()))?;
                    store
                        .read_range(o, offset..offset + n)
                        .map_err(|e| HBaseError::Invalid(e.to_string()))?
                        .to_vec()
                }
                (None, None) => unreachable!("a source is a file or an object"),
            };
            use std::io::Write;
            out.write_all(&bytes)
                .map_err(|e| HBaseError::io(&part, e))?;
            offset += n;
            progress(n);
        }
        out.sync_all().map_err(|e| HBaseError::io(&part, e))?;
        verified(&part)?;
        std::fs::rename(&part, to).map_err(|e| HBaseError::io(to, e))?;
        Ok(f.size)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    result
}

/// Copies `files` into the staging directory `staging` (at `staging/<rel>`) with `threads`
/// threads, all of them under `throttle`; returns the bytes copied. Files already staged and
/// sound are kept (a retried Spark task's).
pub fn copy_files(
    files: &[CopyFile],
    staging: &Path,
    threads: usize,
    throttle: Option<&Throttle>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<u64> {
    let next = AtomicUsize::new(0);
    let bytes = AtomicU64::new(0);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| -> Result<()> {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(f) = files.get(i) else {
                            return Ok(());
                        };
                        match copy_one(f, &staging.join(&f.rel), throttle, progress) {
                            Ok(n) => {
                                bytes.fetch_add(n, Ordering::Relaxed);
                            }
                            Err(e) => {
                                next.store(files.len(), Ordering::Relaxed);
                                return Err(e);
                            }
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join()
                .map_err(|_| HBaseError::Invalid("a copy thread panicked".into()))??;
        }
        Ok(bytes.load(Ordering::Relaxed))
    })
}

/// A copy in progress into a target root: its staging directory, held (locked) while this
/// lives, removed when it is dropped uncommitted.
pub struct StagedCopy {
    root: PathBuf,
    name: String,
    staging: OwnedDir,
}

impl StagedCopy {
    /// Begins the copy of snapshot `name` into the root `root` (created when absent): refuses
    /// a name the target has, rolls back killed exports and copies, makes the staging
    /// directory.
    pub fn begin(root: &Path, name: &str) -> Result<StagedCopy> {
        let final_dir = snapshot_dir(root, name);
        if final_dir.exists() {
            return Err(HBaseError::Invalid(format!(
                "{}: snapshot '{name}' already exists",
                root.display()
            )));
        }
        let working = root.join(SNAPSHOT_DIR).join(WORKING_DIR);
        recover_killed_exports(root)?;
        let staging = OwnedDir::create(&working, &format!("{STAGING_PREFIX}{name}."))
            .map_err(|e| HBaseError::io(&working, e))?;
        Ok(StagedCopy {
            root: root.to_path_buf(),
            name: name.to_string(),
            staging,
        })
    }

    /// The staging directory, where [`copy_files`] puts the copies.
    pub fn path(&self) -> &Path {
        self.staging.path()
    }

    /// The files of `plan` to copy: those the target's archive does not hold with the same
    /// bytes already (an earlier copy of the snapshot).
    pub fn to_copy(&self, files: &[CopyFile]) -> Result<Vec<CopyFile>> {
        let mut out = Vec::new();
        for f in files {
            if !same_bytes(f, &self.root.join(&f.rel))? {
                out.push(f.clone());
            }
        }
        Ok(out)
    }

    /// Commits the copy of `plan` whose files are staged: each staged copy checked once more
    /// (present, of its size), the files already in the target's archive (the same bytes,
    /// checked) left there, the snapshot's directory copied byte for byte, then moved and
    /// renamed as an export is. Returns the report.
    pub fn commit(self, plan: &CopyPlan, copied_bytes: u64) -> Result<CopyReport> {
        let dir = plan.snapshot_dir.clone();
        self.commit_with(&plan.files, copied_bytes, |staging| {
            copy_snapshot_dir(&dir, staging)
        })
    }

    /// [`StagedCopy::commit`] of `files`, with the snapshot's own files put into the staging
    /// directory by `place` (a copy's from the source snapshot, an export's written).
    pub fn commit_with(
        self,
        files: &[CopyFile],
        copied_bytes: u64,
        place: impl FnOnce(&Path) -> Result<()>,
    ) -> Result<CopyReport> {
        let staging = self.staging.path();
        let mut staged = Vec::new();
        let mut report = CopyReport {
            snapshot_dir: snapshot_dir(&self.root, &self.name),
            files: files.len(),
            files_present: 0,
            bytes: copied_bytes,
        };
        for f in files {
            let copy = staging.join(&f.rel);
            let archived = self.root.join(&f.rel);
            if !copy.exists() {
                // Not copied: the archive holds it (checked again), or a task lost it.
                if same_bytes(f, &archived)? {
                    report.files_present += 1;
                    continue;
                }
                return Err(HBaseError::corrupt(&copy, "not staged: no task copied it"));
            }
            let size = copy
                .metadata()
                .map(|m| m.len())
                .map_err(|e| HBaseError::io(&copy, e))?;
            if size != f.size {
                return Err(HBaseError::corrupt(
                    &copy,
                    format!("staged with {size} bytes, the source has {}", f.size),
                ));
            }
            if archived.exists() {
                return Err(HBaseError::corrupt(
                    &archived,
                    format!(
                        "exists in the archive with other bytes than {}",
                        f.from.display()
                    ),
                ));
            }
            staged.push(Staged {
                staged: copy,
                archived,
            });
        }
        place(staging)?;
        let final_dir = snapshot_dir(&self.root, &self.name);
        commit_staged(&self.root, staging, &staged, &final_dir)?;
        Ok(report)
    }
}

/// Whether the file at `path` holds exactly the bytes of `f` (false when absent).
fn same_bytes(f: &CopyFile, path: &Path) -> Result<bool> {
    if !path.metadata().is_ok_and(|m| m.len() == f.size) {
        return Ok(false);
    }
    let source = match f.object.as_deref() {
        Some(o) => {
            let o = Location::parse(o).map_err(|e| HBaseError::Invalid(e.to_string()))?;
            hfkit_storage::store_for(&o)
                .and_then(|s| s.read(&o))
                .map_err(|e| HBaseError::Invalid(e.to_string()))?
        }
        None => std::fs::read(&f.from).map_err(|e| HBaseError::io(&f.from, e))?,
    };
    let there = std::fs::read(path).map_err(|e| HBaseError::io(path, e))?;
    Ok(source == there)
}

/// Copies the files of the snapshot directory `from` (not its `archive/`, which a snapshot
/// directory never has) into `to`, byte for byte, fsynced.
pub fn copy_snapshot_dir(from: &Path, to: &Path) -> Result<()> {
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = from.join(&rel);
        for e in std::fs::read_dir(&dir).map_err(|e| HBaseError::io(&dir, e))? {
            let e = e.map_err(|err| HBaseError::io(&dir, err))?;
            let r = rel.join(e.file_name());
            if r.as_os_str() == STAGED_FILES {
                continue;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                std::fs::create_dir_all(to.join(&r)).map_err(|err| HBaseError::io(&r, err))?;
                stack.push(r);
            } else {
                let bytes =
                    std::fs::read(e.path()).map_err(|err| HBaseError::io(&e.path(), err))?;
                let dest = to.join(&r);
                std::fs::write(&dest, bytes)
                    .and_then(|()| std::fs::File::open(&dest)?.sync_all())
                    .map_err(|err| HBaseError::io(&dest, err))?;
            }
        }
    }
    Ok(())
}

/// Copies snapshot `name` of `src` into the root `dest` with `threads` threads and at most
/// `bandwidth` bytes a second (see the module's documentation); `progress` gets the bytes to
/// copy and gives the callback told of each chunk copied.
pub fn copy_snapshot(
    src: &HBaseRoot,
    name: &str,
    dest: &Path,
    threads: usize,
    bandwidth: Option<u64>,
    progress: &dyn Fn(u64) -> Box<dyn Fn(u64) + Sync>,
) -> Result<CopyReport> {
    let plan = plan_copy(src, name)?;
    let staged = StagedCopy::begin(dest, name)?;
    let throttle = bandwidth.map(Throttle::new);
    let files = staged.to_copy(&plan.files)?;
    // The bytes to copy, then a callback for the bytes as they are copied.
    let each = progress(files.iter().map(|f| f.size).sum());
    let bytes = copy_files(&files, staged.path(), threads, throttle.as_ref(), &*each)?;
    staged.commit(&plan, bytes)
}
