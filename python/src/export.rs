//! A table's export in parts for a cluster (`formats/python.md` §"Export on Spark"): the
//! driver holds the table's writers' lock (`lock_table`) and reads what to export
//! (`export_outline`), a task per region writes that region's part (`export_part`): the rows
//! or cells `hfkit export --format` writes for the region, read at the driver's manifest
//! version, without taking the lock the driver holds. Tables on a local or shared file system.

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{table_error, HfkitError};
use crate::schema::Schema;
use crate::storage;
use hfkit_pipeline::export::cells::{export_cells, ExportFormat};
use hfkit_pipeline::export::export_rows;
use hfkit_table::directory::{Table, WriterLock};
use hfkit_table::export::ExportScope;

fn open(table: &Path) -> PyResult<Table> {
    storage::local_table(table, "export")
}

fn format_of(format: &str) -> PyResult<ExportFormat> {
    match format {
        "csv" => Ok(ExportFormat::Csv),
        "parquet" => Ok(ExportFormat::Parquet),
        other => Err(HfkitError::new_err(format!(
            "format '{other}': expected csv or parquet"
        ))),
    }
}

/// The table's writers' lock, held until `release()` (or the end of a `with` block, or of the
/// process): no compaction, restore or garbage collection removes a file while it is held.
#[pyclass(module = "hfkit")]
pub struct TableLock {
    lock: Option<WriterLock>,
}

#[pymethods]
impl TableLock {
    fn release(&mut self) {
        self.lock = None;
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __exit__(
        &mut self,
        _t: Option<&Bound<'_, PyAny>>,
        _v: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) {
        self.lock = None;
    }
}

/// Takes `table`'s writers' lock (waiting while another writer holds it).
#[pyfunction]
pub fn lock_table(py: Python<'_>, table: PathBuf) -> PyResult<TableLock> {
    let t = open(&table)?;
    let lock = py.detach(|| t.lock()).map_err(table_error)?;
    Ok(TableLock { lock: Some(lock) })
}

/// The manifest version an export of `table` (or of its `snapshot`) reads, and its regions'
/// count.
#[pyfunction]
#[pyo3(signature = (table, snapshot = None))]
pub fn export_outline(table: PathBuf, snapshot: Option<String>) -> PyResult<(u64, usize)> {
    open(&table)?
        .export_outline(snapshot.as_deref())
        .map_err(table_error)
}

/// Writes the part of region `region` (its position) of an export of `table` (or of its
/// `snapshot`) at manifest `version` to the file `dest`: every cell (`rows_schema` None) or
/// one record per row through `rows_schema`'s mapping, as `format` (`csv`, `parquet`), as
/// `hfkit export --format` writes that region. The caller holds the table's lock. Returns
/// the counts: `cells`, `bytes`, and with rows `rows`, `rows_skipped`, `unmapped_cells`,
/// `untimed_cells`.
#[pyfunction]
#[pyo3(signature = (table, dest, format, region, version, now_ms, snapshot = None, rows_schema = None))]
#[allow(clippy::too_many_arguments)]
pub fn export_part<'py>(
    py: Python<'py>,
    table: PathBuf,
    dest: PathBuf,
    format: &str,
    region: usize,
    version: u64,
    now_ms: i64,
    snapshot: Option<String>,
    rows_schema: Option<PyRef<'py, Schema>>,
) -> PyResult<Bound<'py, PyDict>> {
    let t = open(&table)?;
    let format = format_of(format)?;
    let scope = ExportScope {
        regions: Some(region..region + 1),
        version: Some(version),
        lock_held_elsewhere: true,
    };
    let snap = snapshot.as_deref();
    let fail =
        |e: hfkit_pipeline::export::ExportError| table_error(format!("{}: {e}", table.display()));
    let out = PyDict::new(py);
    match rows_schema {
        None => {
            let r = py
                .detach(|| export_cells(&t, snap, format, &dest, now_ms, &scope, 1))
                .map_err(fail)?;
            out.set_item("cells", r.cells)?;
            out.set_item("bytes", r.bytes)?;
        }
        Some(s) => {
            let mapping = &s.parsed.mapping;
            let r = py
                .detach(|| export_rows(&t, mapping, format, &dest, snap, now_ms, &scope, 1))
                .map_err(fail)?;
            let c = &r.counts;
            out.set_item("rows", c.rows)?;
            out.set_item("cells", c.cells)?;
            out.set_item("rows_skipped", c.rows_skipped)?;
            out.set_item("unmapped_cells", c.unmapped_cells)?;
            out.set_item("untimed_cells", c.untimed_cells)?;
            out.set_item("bytes", r.bytes)?;
        }
    }
    Ok(out)
}
