//! An HBase snapshot copied between roots, or an hfkit table exported as one, on a cluster
//! (`formats/python.md` §"Snapshot copy on Spark"): the driver begins the job
//! (`begin_snapshot_copy` or `begin_snapshot_export`: the files, the staging directory in the
//! target root, held while the job runs) and commits it once; tasks copy their share of the
//! files (`copy_snapshot_files`). Each step is `hfkit_hbase::copy`'s (with `export`'s plan),
//! the CLI's `hfkit hbase copy-snapshot` and `export-snapshot`. Roots and tables on a local or
//! shared file system; `s3://` is refused by name (the CLI does those).

use std::path::{Path, PathBuf};

use pyo3::prelude::*;

use crate::errors::HfkitError;
use crate::storage::remote;
use hfkit_hbase::copy::{copy_files, plan_copy, CopyFile, StagedCopy, Throttle};
use hfkit_hbase::HBaseRoot;

fn failure(e: impl std::fmt::Display) -> PyErr {
    HfkitError::new_err(e.to_string())
}

fn local_root(root: &Path) -> PyResult<()> {
    if remote(root)?.is_some() {
        return Err(HfkitError::new_err(format!(
            "{}: a snapshot copy on Spark takes roots on a local or shared file system, not \
             object storage (use `hfkit hbase copy-snapshot`)",
            root.display()
        )));
    }
    Ok(())
}

/// A snapshot copy begun in a target root: its staging directory held (locked) until
/// `commit()` or `abort()` (or the end of the process: the next copy or export into the root
/// rolls it back).
#[pyclass(module = "hfkit")]
pub struct SnapshotCopy {
    staged: Option<StagedCopy>,
    /// Every file of the snapshot, and of them those to copy.
    files: Vec<CopyFile>,
    to_copy: Vec<CopyFile>,
    /// How the snapshot's own files are made at the commit.
    place: Place,
    /// An export's table lock, held until the commit: no compaction removes a file a task
    /// copies.
    _lock: Option<hfkit_table::directory::WriterLock>,
}

/// The snapshot's own files: a copy's, from the source snapshot's directory; an export's,
/// written.
enum Place {
    Dir(PathBuf),
    Files(Vec<(&'static str, Vec<u8>)>),
}

#[pymethods]
impl SnapshotCopy {
    /// The staging directory the tasks copy into.
    fn staging(&self) -> PyResult<String> {
        let s = self
            .staged
            .as_ref()
            .ok_or_else(|| HfkitError::new_err("the snapshot copy has ended"))?;
        Ok(s.path().display().to_string())
    }

    /// The files to copy (those the target does not hold already), as JSON: `from`, `object`,
    /// `rel`, `size` each.
    fn files(&self) -> PyResult<String> {
        serde_json::to_string(&self.to_copy).map_err(failure)
    }

    /// Commits the copy (the files staged by the tasks, `copied_bytes` in all): the snapshot
    /// appears in the target root. Returns `hfkit hbase copy-snapshot --json`'s report.
    fn commit(&mut self, py: Python<'_>, copied_bytes: u64) -> PyResult<String> {
        let staged = self
            .staged
            .take()
            .ok_or_else(|| HfkitError::new_err("the snapshot copy has ended"))?;
        let (files, place) = (&self.files, &self.place);
        let report = py
            .detach(|| {
                staged.commit_with(files, copied_bytes, |staging| match place {
                    Place::Dir(d) => hfkit_hbase::copy::copy_snapshot_dir(d, staging),
                    Place::Files(v) => {
                        for (name, bytes) in v {
                            hfkit_hbase::export::write_synced(&staging.join(name), bytes)?;
                        }
                        Ok(())
                    }
                })
            })
            .map_err(failure)?;
        self._lock = None;
        serde_json::to_string(&report).map_err(failure)
    }

    /// Gives the copy up: its staging directory is removed.
    fn abort(&mut self) {
        self.staged = None;
        self._lock = None;
    }
}

/// Begins the copy of snapshot `snapshot` of the root `src` into the root `dest` (created when
/// absent): refuses a name `dest` has, rolls back killed copies and exports there.
#[pyfunction]
pub fn begin_snapshot_copy(
    py: Python<'_>,
    src: PathBuf,
    dest: PathBuf,
    snapshot: String,
) -> PyResult<SnapshotCopy> {
    local_root(&src)?;
    local_root(&dest)?;
    py.detach(|| {
        let root = HBaseRoot::open(&src)?;
        let plan = plan_copy(&root, &snapshot)?;
        let staged = StagedCopy::begin(&dest, &snapshot)?;
        let to_copy = staged.to_copy(&plan.files)?;
        Ok::<_, hfkit_hbase::HBaseError>(SnapshotCopy {
            staged: Some(staged),
            files: plan.files,
            to_copy,
            place: Place::Dir(plan.snapshot_dir),
            _lock: None,
        })
    })
    .map_err(failure)
}

/// Begins the export of the hfkit table `table` (or of its `snapshot`) as HBase snapshot
/// `name` of HBase table `hbase_table` (default: the table's) into the root `root` (created
/// when absent), as `hfkit hbase export-snapshot` does, with `creation_time` (epoch ms; the
/// regions' id too; default now). The table's writers' lock is held until the commit.
#[pyfunction]
#[pyo3(signature = (table, root, name, hbase_table = None, snapshot = None, creation_time = None))]
pub fn begin_snapshot_export(
    py: Python<'_>,
    table: PathBuf,
    root: PathBuf,
    name: String,
    hbase_table: Option<String>,
    snapshot: Option<String>,
    creation_time: Option<i64>,
) -> PyResult<SnapshotCopy> {
    use hfkit_hbase::export::{check_name, plan_export, ExportOptions};
    let t = crate::storage::local_table(&table, "export-snapshot")?;
    local_root(&root)?;
    py.detach(|| {
        check_name(&name)?;
        let lock = t.lock()?;
        let m = match &snapshot {
            Some(s) => t.snapshot(s)?.manifest,
            None => t.manifest()?,
        };
        let table_name = hfkit_table::TableName::parse(hbase_table.as_deref().unwrap_or(&m.table))
            .map_err(|e| hfkit_hbase::HBaseError::Invalid(e.to_string()))?;
        let opts = ExportOptions {
            name: name.clone(),
            from_snapshot: snapshot.clone(),
            table: hbase_table.clone(),
            creation_time: creation_time.unwrap_or_else(hfkit_format::cell::now_ms),
        };
        let descriptor =
            hfkit_hbase::TableDescriptor::from_families(table_name.clone(), &m.families);
        let plan = plan_export(&table_name, &m, descriptor, &opts);
        let archive = hfkit_hbase::names::archive_table_dir(Path::new(""), &table_name);
        let files: Vec<CopyFile> = plan
            .files
            .iter()
            .map(|(e, rel)| CopyFile {
                from: t.file_path(e),
                object: None,
                rel: archive.join(rel).to_string_lossy().replace('\\', "/"),
                size: e.size,
            })
            .collect();
        let staged = StagedCopy::begin(&root, &name)?;
        let to_copy = staged.to_copy(&files)?;
        Ok::<_, hfkit_hbase::HBaseError>(SnapshotCopy {
            staged: Some(staged),
            files,
            to_copy,
            place: Place::Files(vec![
                (hfkit_hbase::snapshot::SNAPSHOT_INFO_FILE, plan.info),
                (hfkit_hbase::snapshot::DATA_MANIFEST_FILE, plan.manifest),
            ]),
            _lock: Some(lock),
        })
    })
    .map_err(failure)
}

/// Copies `files` (JSON, a share of `SnapshotCopy.files()`) into `staging`, `threads` at once,
/// at most `bandwidth_mb` megabytes a second in all (per task, as ExportSnapshot's
/// `-bandwidth` is per mapper); returns the bytes copied. A file staged already and sound (a
/// retried task's) is kept.
#[pyfunction]
#[pyo3(signature = (files, staging, bandwidth_mb = None, threads = 1))]
pub fn copy_snapshot_files(
    py: Python<'_>,
    files: &str,
    staging: PathBuf,
    bandwidth_mb: Option<f64>,
    threads: usize,
) -> PyResult<u64> {
    let files: Vec<CopyFile> = serde_json::from_str(files).map_err(failure)?;
    let throttle = match bandwidth_mb {
        Some(mb) if mb.is_finite() && mb > 0.0 => Some(Throttle::new((mb * 1e6) as u64)),
        Some(mb) => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "bandwidth_mb: {mb}: not a positive number"
            )))
        }
        None => None,
    };
    py.detach(|| copy_files(&files, &staging, threads, throttle.as_ref(), &|_| {}))
        .map_err(failure)
}
