//! The native steps of a bulk load of files on a cluster (`formats/python.md` §"Bulk load of
//! files"), each run by a Spark task (or the driver) on file names and split descriptions, never
//! on rows:
//!
//! * [`input_splits`] (driver): the inputs cut into splits (`pipeline::import::splits`);
//! * [`import_split`] (stage 1, a task per split): the import pipeline over one split, writing
//!   *run files* (uncompressed HFiles, a file per region and family) into a directory of the
//!   task attempt's own;
//! * [`merge_region`] (stage 2, a task per region of each table): one region's run files of
//!   every split merged into its final HFiles (`pipeline::import::runs`).
//!
//! Directories may be `s3://` URLs: run files and outputs are then written in a local scratch
//! directory and uploaded when complete; runs on object storage are downloaded before a merge.

use std::path::{Path, PathBuf};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors::{import_error, HfkitError};
use crate::input_format::input_format;
use crate::schema::Schema;
use crate::storage;
use hfkit_format::cell::KeyView;
use hfkit_format::reader::HFileReader;
use hfkit_pipeline::import::output::OutputFile;
use hfkit_pipeline::import::remote_output::{publish, PART_SIZE};
use hfkit_pipeline::import::runs::{merge_runs, RunFile};
use hfkit_pipeline::import::splits::input_splits as cut_splits;
use hfkit_pipeline::import::{run_import, ImportOptions, InputFormat, InputRange, INDEX_BULK_DIR};
use hfkit_pipeline::source::expand_paths;

/// The inputs (paths, globs, `s3://` URLs) cut into splits of about `split_bytes`: plain CSV
/// files into byte ranges, compressed ones (and every CSV file with `multiline`: quoted fields
/// holding line ends) whole, Parquet files into runs of row groups. One dict per split, in
/// input order: `path`, `kind` (`whole`, `bytes`, `row_groups`), `start`, `end` (bytes or row
/// groups; `None` for `whole` and for a last byte range reaching the file's end), `bytes`.
#[pyfunction]
#[pyo3(signature = (inputs, format = None, csv = None, split_bytes = 128 << 20, multiline = false))]
pub fn input_splits<'py>(
    py: Python<'py>,
    inputs: Vec<String>,
    format: Option<String>,
    csv: Option<&Bound<'py, PyDict>>,
    split_bytes: u64,
    multiline: bool,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let paths = py
        .detach(|| expand_paths(&inputs))
        .map_err(|e| import_error(e.into()))?;
    let fmt = input_format(format.as_deref(), &paths, csv)?;
    let splits = py
        .detach(|| cut_splits(&paths, &fmt, split_bytes, multiline))
        .map_err(import_error)?;
    splits
        .into_iter()
        .map(|s| {
            let d = PyDict::new(py);
            d.set_item("path", s.path.display().to_string())?;
            let (kind, start, end) = match s.range {
                None => ("whole", None, None),
                Some(InputRange::Bytes { start, end }) => {
                    ("bytes", Some(start), (end != u64::MAX).then_some(end))
                }
                Some(InputRange::RowGroups { first, end }) => {
                    ("row_groups", Some(first as u64), Some(end as u64))
                }
            };
            d.set_item("kind", kind)?;
            d.set_item("start", start)?;
            d.set_item("end", end)?;
            d.set_item("bytes", s.bytes)?;
            Ok(d)
        })
        .collect()
}

/// The range a split dict describes.
fn split_range(split: &Bound<'_, PyDict>) -> PyResult<(PathBuf, Option<InputRange>)> {
    let item = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        split
            .get_item(k)?
            .ok_or_else(|| PyValueError::new_err(format!("split: no '{k}'")))
    };
    let path: String = item("path")?.extract()?;
    let kind: String = item("kind")?.extract()?;
    let start: Option<u64> = item("start")?.extract()?;
    let end: Option<u64> = item("end")?.extract()?;
    let range = match kind.as_str() {
        "whole" => None,
        "bytes" => Some(InputRange::Bytes {
            start: start.unwrap_or(0),
            end: end.unwrap_or(u64::MAX),
        }),
        "row_groups" => Some(InputRange::RowGroups {
            first: start.unwrap_or(0) as usize,
            end: end.map_or(usize::MAX, |e| e as usize),
        }),
        k => return Err(PyValueError::new_err(format!("split: unknown kind '{k}'"))),
    };
    Ok((PathBuf::from(path), range))
}

/// Stage 1: imports one split (a dict of [`input_splits`]) through the schema (over its
/// regions: `Schema.with_regions` or the splits') into bulk-load HFiles (with `run_files`,
/// uncompressed run files for a merge) under `out_dir`
/// (`out_dir/<family>/`, index tables under `out_dir/.indexes/<qualifier>/`), which must not
/// hold files yet. A bad record raises `InputError` naming the file (and the split) and line.
/// Returns `rows_read`, `rows_rejected`, `input_bytes` and `files` (one dict per run file:
/// `path`, `table` (0 the main table, i the i-th index table), `family`, `region`, `cells`,
/// `bytes`, `first_key`, `last_key`).
#[pyfunction]
#[pyo3(signature = (schema, split, out_dir, format = None, csv = None, memory = 256 << 20,
                    import_time = None, run_files = false))]
#[allow(clippy::too_many_arguments)]
pub fn import_split<'py>(
    py: Python<'py>,
    schema: &Schema,
    split: &Bound<'py, PyDict>,
    out_dir: PathBuf,
    format: Option<String>,
    csv: Option<&Bound<'py, PyDict>>,
    memory: usize,
    import_time: Option<i64>,
    run_files: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let (path, range) = split_range(split)?;
    let fmt = input_format(format.as_deref(), std::slice::from_ref(&path), csv)?;
    let output = local_output(&out_dir)?;
    let mut opts = ImportOptions::new(vec![path], fmt, output.2.clone());
    opts.input_range = range;
    stage_one(
        py,
        schema,
        opts,
        output,
        memory,
        import_time,
        run_files,
        None,
    )
}

/// Stage 1 of a bulk load of a DataFrame routed by hfkit (`formats/python.md` §"The DataFrame
/// path"): the rows of `batches` (an iterable of `pyarrow.RecordBatch`, one Spark partition's,
/// in order) imported as [`import_split`] imports a split: every region's cells, a file per
/// region and family, into `out_dir`. `name` names the input in errors (a bad record is
/// "NAME: row group B, row R", B the batch's number). Returns what `import_split` returns.
#[pyfunction]
#[pyo3(signature = (schema, batches, out_dir, memory = 256 << 20, import_time = None,
                    run_files = false, name = None))]
#[allow(clippy::too_many_arguments)]
pub fn import_batches<'py>(
    py: Python<'py>,
    schema: &Schema,
    batches: &Bound<'py, PyAny>,
    out_dir: PathBuf,
    memory: usize,
    import_time: Option<i64>,
    run_files: bool,
    name: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let Some((input, raised)) =
        crate::region::batch_input(batches, name.unwrap_or_else(|| "partition".into()))?
    else {
        let out = PyDict::new(py);
        out.set_item("rows_read", 0)?;
        out.set_item("rows_rejected", 0)?;
        out.set_item("input_bytes", 0)?;
        out.set_item("files", Vec::<Bound<'py, PyDict>>::new())?;
        return Ok(out);
    };
    let output = local_output(&out_dir)?;
    let mut opts = ImportOptions::new(Vec::new(), InputFormat::Parquet, output.2.clone());
    opts.record_batches = Some(input);
    stage_one(
        py,
        schema,
        opts,
        output,
        memory,
        import_time,
        run_files,
        Some(raised),
    )
}

/// The import of one stage-1 task (`opts`: its input set), over the schema's regions, on one
/// thread, into `output` (from [`local_output`], uploaded at the end for `s3://`): the dict
/// [`import_split`] returns. `raised`: a Python error the input raised, raised again as itself.
#[allow(clippy::too_many_arguments)]
fn stage_one<'py>(
    py: Python<'py>,
    schema: &Schema,
    mut opts: ImportOptions,
    output: LocalOutput,
    memory: usize,
    import_time: Option<i64>,
    run_files: bool,
    raised: Option<crate::region::Raised>,
) -> PyResult<Bound<'py, PyDict>> {
    let (remote, staged, local_out) = output;
    opts.regions = Some(schema.import_regions()?.clone());
    opts.run_files = run_files;
    opts.memory_budget = memory;
    opts.import_time = import_time.unwrap_or_else(hfkit_format::cell::now_ms);
    let parsed = &schema.parsed;
    let report = py.detach(|| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .map_err(|e| HfkitError::new_err(format!("threads: {e}")))?;
        pool.install(|| run_import(&parsed.table, &parsed.mapping, opts))
            .map_err(
                |e| match raised.as_ref().and_then(|r| r.lock().ok()?.take()) {
                    Some(original) => original,
                    None => import_error(e),
                },
            )
    })?;
    let mut files: Vec<(usize, &OutputFile)> = report.output_files.iter().map(|f| (0, f)).collect();
    for (i, ix) in report.indexes.iter().enumerate() {
        files.extend(ix.output_files.iter().map(|f| (i + 1, f)));
    }
    let out = PyDict::new(py);
    out.set_item("rows_read", report.rows_read)?;
    out.set_item("rows_rejected", report.rows_rejected)?;
    out.set_item("input_bytes", report.input_bytes)?;
    let dicts = files
        .into_iter()
        .map(|(table, f)| file_dict(py, table, f, shown(&remote, &local_out, &f.path)))
        .collect::<PyResult<Vec<_>>>()?;
    out.set_item("files", dicts)?;
    upload(py, &remote, &local_out)?;
    drop(staged);
    Ok(out)
}

/// Stage 2: merges run files (`(path, family, order)`: `order` the split's position, a later
/// split's cell winning) of region `region` of table `table` (0 the main table, i the i-th
/// index table) into its final HFiles in `out_dir` (`out_dir/<family>/`, or for an index
/// table `out_dir/.indexes/<qualifier>/<family>/`, so that `attach(table, [out_dir])` takes
/// either). Returns one dict per file, as `import_split`'s.
#[pyfunction]
#[pyo3(signature = (schema, table, region, runs, out_dir, import_time = None,
                    max_file_size = None, exclude_from_minor_compaction = false))]
#[allow(clippy::too_many_arguments)]
pub fn merge_region<'py>(
    py: Python<'py>,
    schema: &Schema,
    table: usize,
    region: usize,
    runs: Vec<(String, String, u64)>,
    out_dir: PathBuf,
    import_time: Option<i64>,
    max_file_size: Option<u64>,
    exclude_from_minor_compaction: bool,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let regions = schema.import_regions()?;
    let parsed = &schema.parsed;
    let (families, table_regions, sub) = match table {
        0 => (&parsed.table.families, &regions.main, PathBuf::new()),
        i => {
            let ix = parsed.mapping.indexes.get(i - 1).ok_or_else(|| {
                PyValueError::new_err(format!("table {i}: the schema has no such index table"))
            })?;
            let r = regions.indexes.get(i - 1).ok_or_else(|| {
                PyValueError::new_err(format!("table {i}: no regions for this index table"))
            })?;
            (
                &ix.table.families,
                r,
                Path::new(INDEX_BULK_DIR).join(&ix.table.qualifier),
            )
        }
    };
    if region >= table_regions.len() {
        return Err(PyValueError::new_err(format!(
            "region {region}: table {table} has {} regions",
            table_regions.len()
        )));
    }
    // Runs on object storage are read from a local copy.
    let fetched = storage::scratch()?;
    let mut run_files = Vec::new();
    for (i, (path, family, order)) in runs.into_iter().enumerate() {
        let p = PathBuf::from(&path);
        let local = match storage::remote(&p)? {
            None => p,
            Some(loc) => {
                let to = fetched.path().join(format!("run-{i}"));
                py.detach(|| {
                    storage::store(&loc)?
                        .download(&loc, &to)
                        .map_err(storage::storage_error)
                })?;
                to
            }
        };
        run_files.push(RunFile {
            path: local,
            family,
            order,
        });
    }
    let (remote, staged, local_out) = local_output(&out_dir)?;
    let dir = local_out.join(&sub);
    let mut opts = ImportOptions::new(Vec::new(), InputFormat::Parquet, dir.clone());
    opts.import_time = import_time.unwrap_or_else(hfkit_format::cell::now_ms);
    opts.exclude_from_minor_compaction = exclude_from_minor_compaction;
    if let Some(m) = max_file_size {
        opts.max_file_size = m;
    }
    let split_keys = table_regions.split_keys().to_vec();
    let report = py
        .detach(move || merge_runs(families, split_keys, region, &run_files, &dir, &opts))
        .map_err(import_error)?;
    drop(fetched);
    let dicts = report
        .files
        .iter()
        .map(|f| file_dict(py, table, f, shown(&remote, &local_out, &f.path)))
        .collect::<PyResult<Vec<_>>>()?;
    upload(py, &remote, &local_out)?;
    drop(staged);
    Ok(dicts)
}

/// Where a step writes ([`local_output`]): the `s3://` location (if any), the scratch directory
/// standing in for it, and the local directory written.
type LocalOutput = (
    Option<hfkit_storage::Location>,
    Option<hfkit_table::staging::OwnedDir>,
    PathBuf,
);

/// Where a step writes: `out_dir` itself, or for an `s3://` one a local scratch directory
/// (uploaded by [`upload`]).
fn local_output(out_dir: &Path) -> PyResult<LocalOutput> {
    let remote = storage::remote(out_dir)?;
    let staged = match &remote {
        Some(_) => Some(storage::scratch()?),
        None => None,
    };
    let local = staged
        .as_ref()
        .map_or_else(|| out_dir.to_path_buf(), |s| s.path().join("out"));
    Ok((remote, staged, local))
}

/// A written file's name as returned: its URL once uploaded.
fn shown(remote: &Option<hfkit_storage::Location>, local_out: &Path, path: &Path) -> String {
    match remote {
        Some(loc) => {
            let rel = path.strip_prefix(local_out).unwrap_or(path);
            loc.join(&rel.to_string_lossy()).to_string()
        }
        None => path.display().to_string(),
    }
}

/// Uploads what a step wrote locally for an `s3://` output (all objects, or none).
fn upload(py: Python<'_>, remote: &Option<hfkit_storage::Location>, local: &Path) -> PyResult<()> {
    if let Some(loc) = remote {
        if local.exists() {
            let trees = [(local.to_path_buf(), loc.clone())];
            py.detach(|| publish(&trees, PART_SIZE))
                .map_err(|e| storage::storage_error(format!("{loc}: uploading: {e}")))?;
        }
    }
    Ok(())
}

fn file_dict<'py>(
    py: Python<'py>,
    table: usize,
    f: &OutputFile,
    path: String,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let (first, last) = key_range(&f.path)?;
    d.set_item("path", path)?;
    d.set_item("table", table)?;
    d.set_item("family", &f.family)?;
    d.set_item("region", f.region)?;
    d.set_item("cells", f.cells)?;
    d.set_item("bytes", f.bytes)?;
    d.set_item("first_key", PyBytes::new(py, &first))?;
    d.set_item("last_key", PyBytes::new(py, &last))?;
    Ok(d)
}

/// The first and last cell keys (flat keys) of a written file.
fn key_range(path: &Path) -> PyResult<(Vec<u8>, Vec<u8>)> {
    let r = HFileReader::open(path).map_err(crate::errors::hfile_error)?;
    let mut s = r.scanner().map_err(crate::errors::hfile_error)?;
    let first = match s.next().map_err(crate::errors::hfile_error)? {
        Some(c) => KeyView::of(&c).to_bytes(),
        None => Vec::new(),
    };
    Ok((first, r.last_key().map(<[u8]>::to_vec).unwrap_or_default()))
}

/// Whether files with these `(first_key, last_key)` ranges (as the steps return them) hold
/// no two cells of the same coordinates and do not interleave: then they can be published as
/// they are, one region's files of several splits, with the cells one import would write.
#[pyfunction]
pub fn keys_disjoint(ranges: Vec<(Vec<u8>, Vec<u8>)>) -> PyResult<bool> {
    let mut parsed = Vec::new();
    for (first, last) in &ranges {
        match (KeyView::parse(first), KeyView::parse(last)) {
            (Some(f), Some(l)) => parsed.push((f, l)),
            _ => return Ok(false),
        }
    }
    Ok(hfkit_pipeline::import::runs::disjoint(&mut parsed).is_some())
}
