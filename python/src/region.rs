//! `write_region`: one region's bulk-load HFiles, every family of the main table and the index
//! tables' cells of its rows, from an iterable of record batches, by the import pipeline itself
//! (`run_import` over a [`RecordBatchInput`]: encode, route or sort with spill, write, publish).
//! The batches are pulled from Python on the pipeline's reader thread; the pipeline runs without
//! the GIL, on a thread pool of its own.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;
use arrow_pyarrow::FromPyArrow;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyIterator};

use crate::errors::{import_error, HfkitError};
use crate::schema::Schema;
use crate::storage;
use hfkit_format::cell::KeyView;
use hfkit_format::reader::HFileReader;
use hfkit_pipeline::import::output::OutputFile;
use hfkit_pipeline::import::remote_output::{check_empty, publish, PART_SIZE};
use hfkit_pipeline::import::{run_import, ImportOptions, ImportReport, InputFormat};
use hfkit_pipeline::source::arrow::{NextBatch, RecordBatchInput};

/// A Python error raised while the pipeline pulled a batch, kept to be raised again as itself.
pub(crate) type Raised = Arc<Mutex<Option<PyErr>>>;

/// The batches after `first` from `iter`, as the pipeline pulls them.
fn next_batches(first: RecordBatch, iter: Py<PyIterator>, raised: Raised) -> NextBatch {
    let mut first = Some(first);
    Box::new(move || {
        if let Some(b) = first.take() {
            return Some(Ok(b));
        }
        Python::attach(|py| {
            let item = iter.bind(py).clone().next()?;
            let batch = item.and_then(|o| RecordBatch::from_pyarrow_bound(&o));
            Some(batch.map_err(|e| {
                let message = e.to_string();
                if let Ok(mut slot) = raised.lock() {
                    slot.get_or_insert(e);
                }
                message
            }))
        })
    })
}

/// `batches` (an iterable of `pyarrow.RecordBatch`, all with the same columns) as an import's
/// input named `name`, pulled from Python as the pipeline reads, and where an error Python
/// raised meanwhile is kept; `None` when no batch has a row.
pub(crate) fn batch_input(
    batches: &Bound<'_, PyAny>,
    name: String,
) -> PyResult<Option<(RecordBatchInput, Raised)>> {
    let mut iter = batches.try_iter()?;
    let first = loop {
        match iter.next() {
            None => return Ok(None),
            Some(item) => {
                let b = RecordBatch::from_pyarrow_bound(&item?)?;
                if b.num_rows() > 0 {
                    break b;
                }
            }
        }
    };
    let columns = first
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let raised: Raised = Arc::default();
    let next = next_batches(first, iter.unbind(), raised.clone());
    let input = RecordBatchInput::new(PathBuf::from(name), columns, next)
        .map_err(|e| import_error(e.into()))?;
    Ok(Some((input, raised)))
}

/// Writes the HFiles of region `region` of the schema's table (and the index tables' cells of its
/// rows) from `batches` (an iterable of `pyarrow.RecordBatch`, all with the same columns) into
/// the bulk-load directory `out_dir` (`out_dir/<family>/<hfile>`, index tables under
/// `out_dir/.indexes/<qualifier>/`), which must not already hold HFiles. An `s3://` `out_dir`
/// is written locally first and uploaded when every file is written (no object on failure). Sorts within `memory`
/// bytes, spilling beyond. Cells without a timestamp get `import_time` (epoch ms; default now).
/// Returns one dict per file: path, table, family, region, first_row, last_row, cells, bytes.
/// A row of another region raises `ValueError` and leaves no file.
#[pyfunction]
#[pyo3(signature = (schema, region, batches, out_dir, memory = 256 << 20, threads = 1,
                    import_time = None, max_file_size = None, name = None))]
#[allow(clippy::too_many_arguments)]
pub fn write_region<'py>(
    py: Python<'py>,
    schema: &Schema,
    region: usize,
    batches: &Bound<'py, PyAny>,
    out_dir: PathBuf,
    memory: usize,
    threads: usize,
    import_time: Option<i64>,
    max_file_size: Option<u64>,
    name: Option<String>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let regions = schema.import_regions()?.clone();
    if region >= regions.main.len() {
        return Err(PyValueError::new_err(format!(
            "region {region}: table {} has {} regions",
            schema.parsed.table.full_name(),
            regions.main.len()
        )));
    }
    let name = name.unwrap_or_else(|| format!("region {region}"));
    let Some((input, raised)) = batch_input(batches, name)? else {
        return Ok(Vec::new());
    };
    // An `s3://` output: written into a scratch directory, uploaded once all is written.
    let remote = storage::remote(&out_dir)?;
    let staged = match &remote {
        Some(loc) => {
            py.detach(|| check_empty(loc, &schema_families(schema)))
                .map_err(storage::storage_error)?;
            Some(storage::scratch()?)
        }
        None => None,
    };
    let local_out = staged
        .as_ref()
        .map_or_else(|| out_dir.clone(), |s| s.path().join("out"));
    let mut opts = ImportOptions::new(Vec::new(), InputFormat::Parquet, local_out.clone());
    opts.record_batches = Some(input);
    opts.regions = Some(regions);
    opts.memory_budget = memory;
    opts.import_time = import_time.unwrap_or_else(hfkit_format::cell::now_ms);
    if let Some(m) = max_file_size {
        opts.max_file_size = m;
    }
    let parsed = &schema.parsed;
    let report = py.detach(|| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .map_err(|e| HfkitError::new_err(format!("threads: {e}")))?;
        pool.install(|| run_import(&parsed.table, &parsed.mapping, opts))
            .map_err(|e| match raised.lock().ok().and_then(|mut r| r.take()) {
                Some(original) => original,
                None => import_error(e),
            })
    })?;
    let files = written_files(schema, &report);
    if let Some(stray) = report.output_files.iter().find(|f| f.region != region) {
        for (_, f) in &files {
            let _ = std::fs::remove_file(&f.path);
        }
        return Err(PyValueError::new_err(format!(
            "rows of region {} in the input of region {region}: partition the rows by \
             Schema.regions first (no file was kept)",
            stray.region
        )));
    }
    let dicts = files
        .into_iter()
        .map(|(table, f)| {
            let shown = match &remote {
                Some(loc) => {
                    let rel = f.path.strip_prefix(&local_out).unwrap_or(&f.path);
                    loc.join(&rel.to_string_lossy()).to_string()
                }
                None => f.path.display().to_string(),
            };
            file_dict(py, &table, f, shown)
        })
        .collect::<PyResult<Vec<_>>>()?;
    if let Some(loc) = &remote {
        let trees = [(local_out.clone(), loc.clone())];
        py.detach(|| publish(&trees, PART_SIZE))
            .map_err(|e| storage::storage_error(format!("{loc}: uploading the output: {e}")))?;
    }
    Ok(dicts)
}

/// The main table's and every index table's families (what a bulk-load directory may hold).
fn schema_families(schema: &Schema) -> Vec<String> {
    let t = &schema.parsed.table;
    let mut out: Vec<String> = t.families.iter().map(|f| f.name.clone()).collect();
    for ix in &schema.parsed.mapping.indexes {
        for f in &ix.table.families {
            let q = &ix.table.qualifier;
            out.push(format!(
                "{}/{q}/{}",
                hfkit_pipeline::import::INDEX_BULK_DIR,
                f.name
            ));
        }
    }
    out
}

/// Every file the import wrote, with its table's name: the main table's, then each index's.
fn written_files<'r>(schema: &Schema, report: &'r ImportReport) -> Vec<(String, &'r OutputFile)> {
    let main = schema.parsed.table.full_name();
    let mut files: Vec<(String, &OutputFile)> = report
        .output_files
        .iter()
        .map(|f| (main.clone(), f))
        .collect();
    for ix in &report.indexes {
        files.extend(ix.output_files.iter().map(|f| (ix.name.clone(), f)));
    }
    files
}

/// The first and last row of an HFile.
pub fn first_last_rows(path: &Path) -> PyResult<(Vec<u8>, Vec<u8>)> {
    let reader = HFileReader::open(path).map_err(crate::errors::hfile_error)?;
    let first = {
        let mut s = reader.scanner().map_err(crate::errors::hfile_error)?;
        let c = s.next().map_err(crate::errors::hfile_error)?;
        c.map(|c| c.row.to_vec()).unwrap_or_default()
    };
    let last = reader
        .last_key()
        .and_then(KeyView::parse)
        .map(|k| k.row.to_vec())
        .unwrap_or_default();
    Ok((first, last))
}

/// What `write_region` returns of the file `f`, named `path` (its URL when uploaded).
fn file_dict<'py>(
    py: Python<'py>,
    table: &str,
    f: &OutputFile,
    path: String,
) -> PyResult<Bound<'py, PyDict>> {
    let (first, last) = first_last_rows(&f.path)?;
    let d = PyDict::new(py);
    d.set_item("path", path)?;
    d.set_item("table", table)?;
    d.set_item("family", &f.family)?;
    d.set_item("region", f.region)?;
    d.set_item("first_row", PyBytes::new(py, &first))?;
    d.set_item("last_row", PyBytes::new(py, &last))?;
    d.set_item("cells", f.cells)?;
    d.set_item("bytes", f.bytes)?;
    Ok(d)
}
