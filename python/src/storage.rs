//! Object storage from Python (`formats/python.md` §"Object storage", `formats/storage.md`):
//! the process's S3 settings (`configure_storage`, the `--s3-endpoint` of the CLI), the local
//! scratch directories that `write_region`, `create_tables`, `attach` and `Table` use for an
//! `s3://` location, and the object operations `hfkit.spark` publishes a bulk-load directory
//! with (list, server-side copy, create-only; a small object written, read, looked up or
//! removed; removal of a
//! prefix) and a download of a prefix.

use std::path::{Path, PathBuf};

use pyo3::prelude::*;

use crate::errors::HfkitError;
use hfkit_storage::{store_for, Location, PutCondition, StorageConfig, Store};
use hfkit_table::staging::{sweep, OwnedDir};

/// Scratch directories' name prefix, under the system's temporary directory (swept like every
/// staging directory of a dead process).
const SCRATCH_PREFIX: &str = "hfkit-py-";

/// An error of the storage layer as `HfkitError` (its message names the operation and URL).
pub fn storage_error(e: impl std::fmt::Display) -> PyErr {
    HfkitError::new_err(e.to_string())
}

/// The object-storage location `p` names (`s3://...`); `None` for a local path.
pub fn remote(p: &Path) -> PyResult<Option<Location>> {
    if !Location::is_remote_path(p) {
        return Ok(None);
    }
    Location::from_path(p).map(Some).map_err(storage_error)
}

/// A local directory of this process's, removed when dropped: where an `s3://` output is
/// written before it is uploaded, or a remote table is mirrored.
pub fn scratch() -> PyResult<OwnedDir> {
    let parent = std::env::temp_dir();
    sweep(&parent, SCRATCH_PREFIX);
    OwnedDir::create(&parent, SCRATCH_PREFIX)
        .map_err(|e| storage_error(format!("{}: {e}", parent.display())))
}

/// The directory table at `table`, which a Spark job's tasks reach as a path: a local or
/// shared file system. An `s3://` URL is refused by name, naming the CLI command `job` that
/// handles it.
pub fn local_table(table: &Path, job: &str) -> PyResult<hfkit_table::directory::Table> {
    if remote(table)?.is_some() {
        return Err(HfkitError::new_err(format!(
            "{}: {job} on Spark takes a table on a local or shared file system, not object \
             storage (use `hfkit {job}`)",
            table.display()
        )));
    }
    hfkit_table::directory::Table::open(table).map_err(crate::errors::table_error)
}

/// The store of `loc`.
pub fn store(loc: &Location) -> PyResult<Store> {
    store_for(loc).map_err(storage_error)
}

/// Sets this process's object-storage settings: `s3_endpoint` (an S3-compatible endpoint URL,
/// as `hfkit --s3-endpoint`); without it, `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`, and the
/// AWS region and credentials, from the environment and `~/.aws` as the CLI reads them.
#[pyfunction]
#[pyo3(signature = (s3_endpoint = None))]
pub fn configure_storage(s3_endpoint: Option<String>) {
    hfkit_storage::configure(StorageConfig::with_endpoint(s3_endpoint));
}

fn location(url: &Path) -> PyResult<Location> {
    Location::from_path(url).map_err(storage_error)
}

/// Every object (or file) below `url`: a list of (URL, size).
#[pyfunction]
pub fn list_objects(py: Python<'_>, url: PathBuf) -> PyResult<Vec<(String, u64)>> {
    let base = location(&url)?;
    let found = py.detach(|| store(&base)?.list(&base).map_err(storage_error))?;
    Ok(found
        .into_iter()
        .map(|o| (o.location.to_string(), o.size))
        .collect())
}

/// Copies the object `src` to `dst` within one store (server-side on S3); refuses to replace
/// a `dst` that exists when it looks (a HEAD before the copy: not atomic against a concurrent
/// writer of the same name, which `hfkit.spark` never has).
#[pyfunction]
pub fn copy_object(py: Python<'_>, src: PathBuf, dst: PathBuf) -> PyResult<()> {
    let (from, to) = (location(&src)?, location(&dst)?);
    py.detach(|| {
        let s = store(&to)?;
        if s.head(&to).map_err(storage_error)?.is_some() {
            return Err(storage_error(format!("{to}: copy: already exists")));
        }
        s.copy(&from, &to).map_err(storage_error)
    })
}

/// Writes `data` as the object `url` (replacing one there): the small records a load's tasks
/// and driver leave each other in its staging (`hfkit.spark`).
#[pyfunction]
pub fn put_object(py: Python<'_>, url: PathBuf, data: Vec<u8>) -> PyResult<()> {
    let loc = location(&url)?;
    py.detach(|| {
        store(&loc)?
            .put(&loc, data, PutCondition::Overwrite)
            .map(|_| ())
            .map_err(storage_error)
    })
}

/// The bytes of the one object (or file) `url`; `None` if there is none.
#[pyfunction]
pub fn get_object(py: Python<'_>, url: PathBuf) -> PyResult<Option<Vec<u8>>> {
    let loc = location(&url)?;
    py.detach(|| {
        let s = store(&loc)?;
        match s.read(&loc) {
            Ok(b) => Ok(Some(b)),
            // Gone (a marker removed by its task since it was listed), or a real failure.
            Err(e) => match s.head(&loc).map_err(storage_error)? {
                None => Ok(None),
                Some(_) => Err(storage_error(e)),
            },
        }
    })
}

/// The size of the one object (or file) `url`, or `None` if there is none.
#[pyfunction]
pub fn head_object(py: Python<'_>, url: PathBuf) -> PyResult<Option<u64>> {
    let loc = location(&url)?;
    py.detach(|| {
        store(&loc)?
            .head(&loc)
            .map(|o| o.map(|o| o.size))
            .map_err(storage_error)
    })
}

/// Deletes the one object (or file) `url`; nothing there is not an error.
#[pyfunction]
pub fn delete_object(py: Python<'_>, url: PathBuf) -> PyResult<()> {
    let loc = location(&url)?;
    py.detach(|| store(&loc)?.delete(&loc).map_err(storage_error))
}

/// Deletes every object (or file) below `url`; returns how many.
#[pyfunction]
pub fn delete_objects(py: Python<'_>, url: PathBuf) -> PyResult<usize> {
    let base = location(&url)?;
    py.detach(|| {
        let s = store(&base)?;
        let found = s.list(&base).map_err(storage_error)?;
        for o in &found {
            s.delete(&o.location).map_err(storage_error)?;
        }
        Ok(found.len())
    })
}

/// Downloads every object below `url` into the local directory `to`, at the same relative
/// paths; returns how many.
#[pyfunction]
pub fn download_objects(py: Python<'_>, url: PathBuf, to: PathBuf) -> PyResult<usize> {
    let base = location(&url)?;
    py.detach(|| {
        store(&base)?
            .download_tree(&base, &to)
            .map(|objects| objects.len())
            .map_err(storage_error)
    })
}
