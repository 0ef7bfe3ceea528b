//! An HBase snapshot copied between roots on a cluster (`formats/python.md` §"Snapshot copy on
//! Spark"): the driver begins the copy (`begin_snapshot_copy`: the plan, the staging directory
//! in the target root, held while the job runs) and commits it once; tasks copy their share of
//! the files (`copy_snapshot_files`). Each step is `hfkit_hbase::copy`'s, the CLI's `hfkit
//! hbase copy-snapshot`. Roots on a local or shared file system; an `s3://` root is refused by
//! name (the CLI copies from one).

use std::path::{Path, PathBuf};

use pyo3::prelude::*;

use crate::errors::HfkitError;
use crate::storage::remote;
use hfkit_hbase::copy::{copy_files, plan_copy, CopyFile, CopyPlan, StagedCopy, Throttle};
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
    plan: CopyPlan,
    to_copy: Vec<CopyFile>,
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
        let plan = &self.plan;
        let report = py
            .detach(|| staged.commit(plan, copied_bytes))
            .map_err(failure)?;
        serde_json::to_string(&report).map_err(failure)
    }

    /// Gives the copy up: its staging directory is removed.
    fn abort(&mut self) {
        self.staged = None;
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
        let to_copy = staged.to_copy(&plan)?;
        Ok::<_, hfkit_hbase::HBaseError>(SnapshotCopy {
            staged: Some(staged),
            plan,
            to_copy,
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
