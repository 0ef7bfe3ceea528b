//! Tables and HFiles from Python: `create_tables` (a table directory and its index tables from a
//! schema, as `hfkit import --table` creates them), `attach` (many bulk-load directories, one
//! commit per table: index tables first, as the CLI attaches them), `Table` get/scan and `HFile`
//! cells as record batches of cells, `HFile.info()` and `.verify()`.
//!
//! A record batch of cells has the columns `row`, `family`, `qualifier` (binary), `timestamp`
//! (int64), `type` (string: Put, Delete, DeleteColumn, DeleteFamily...) and `value` (binary).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_pyarrow::ToPyArrow;
use arrow_schema::{DataType, Field, Schema as ArrowSchema};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors::{hfile_error, table_error, HfkitError};
use crate::schema::Schema;
use crate::storage;
use hfkit_format::cell::CellRef;
use hfkit_format::reader::HFileReader;
use hfkit_pipeline::import::INDEX_BULK_DIR;
use hfkit_pipeline::mapping::typed::ColumnTypes;
use hfkit_read::ReadOptions;
use hfkit_storage::Location;
use hfkit_table::directory::{AttachOptions, Table as TableDir, INDEX_DIR};
use hfkit_table::manifest::{Attributes, FamilyEntry};
use hfkit_table::read::TableReader;
use hfkit_table::remote::{self, CopySource, RemoteTable};
use hfkit_table::staging::OwnedDir;
use hfkit_table::TableSchema;

/// Cells gathered into the columns of a record batch of cells; with `types`, a `decoded`
/// column: a typed column's value as its type shows it (formats/table.md §"Typed values"),
/// null for the others.
#[derive(Default)]
struct CellColumns {
    row: BinaryBuilder,
    family: BinaryBuilder,
    qualifier: BinaryBuilder,
    timestamp: Int64Builder,
    kind: StringBuilder,
    value: BinaryBuilder,
    decoded: Option<(StringBuilder, ColumnTypes)>,
}

impl CellColumns {
    /// Columns that decode the typed columns of `types` (none with `raw_values`).
    fn typed(types: Option<ColumnTypes>) -> CellColumns {
        CellColumns {
            decoded: types.map(|t| (StringBuilder::new(), t)),
            ..CellColumns::default()
        }
    }

    fn push(&mut self, c: &CellRef<'_>) {
        self.row.append_value(c.row);
        self.family.append_value(c.family);
        self.qualifier.append_value(c.qualifier);
        self.timestamp.append_value(c.timestamp);
        self.kind.append_value(c.cell_type.name());
        self.value.append_value(c.value);
        if let Some((column, types)) = &mut self.decoded {
            column.append_option(types.text(c));
        }
    }

    fn finish<'py>(mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let bin = |n: &str| Field::new(n, DataType::Binary, false);
        let schema = ArrowSchema::new(vec![
            bin("row"),
            bin("family"),
            bin("qualifier"),
            Field::new("timestamp", DataType::Int64, false),
            Field::new("type", DataType::Utf8, false),
            bin("value"),
        ]);
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.row.finish()),
            Arc::new(self.family.finish()),
            Arc::new(self.qualifier.finish()),
            Arc::new(self.timestamp.finish()),
            Arc::new(self.kind.finish()),
            Arc::new(self.value.finish()),
        ];
        let mut fields = schema.fields().to_vec();
        if let Some((mut decoded, _)) = self.decoded.take() {
            fields.push(Arc::new(Field::new("decoded", DataType::Utf8, true)));
            columns.push(Arc::new(decoded.finish()));
        }
        let batch = RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns)
            .map_err(|e| HfkitError::new_err(e.to_string()))?;
        batch.to_pyarrow(py)
    }
}

/// Creates the table directory `path` and its index tables (`path/indexes/<qualifier>`) from
/// `schema`, over the schema's regions; existing ones are left as they are. On `s3://`, each is
/// created locally and committed as its first version, index tables first, as the CLI creates
/// remote tables. Returns the paths of the tables created.
#[pyfunction]
pub fn create_tables(py: Python<'_>, schema: &Schema, path: PathBuf) -> PyResult<Vec<String>> {
    let regions = schema.import_regions()?;
    let remote = storage::remote(&path)?;
    let scratch = remote.as_ref().map(|_| storage::scratch()).transpose()?;
    let root = scratch
        .as_ref()
        .map_or_else(|| path.clone(), |s| s.path().join("table"));
    let ixs = &schema.parsed.mapping.indexes;
    let mut targets: Vec<(String, &TableSchema, &hfkit_table::Regions)> =
        vec![(String::new(), &schema.parsed.table, &regions.main)];
    targets.extend(
        ixs.iter()
            .zip(&regions.indexes)
            .map(|(ix, r)| (format!("{INDEX_DIR}/{}", ix.table.qualifier), &ix.table, r)),
    );
    if remote.is_some() {
        // Index tables committed first, as the CLI commits them.
        targets.rotate_left(1);
    }
    let mut created = Vec::new();
    for (i, (rel, table, regions)) in targets.into_iter().enumerate() {
        // The main table keeps its schema's column types and row key spec (rel: "" for it).
        let columns = match rel.is_empty() {
            true => schema.parsed.mapping.kept_for_reads(),
            false => Default::default(),
        };
        let dir = match &remote {
            None if rel.is_empty() => root.clone(),
            None => root.join(&rel),
            Some(_) => root.join(i.to_string()),
        };
        match &remote {
            None => {
                if TableDir::open(&dir).is_ok() {
                    continue;
                }
                create_table(&dir, table, regions.split_keys(), columns.clone())?;
                created.push(dir.display().to_string());
            }
            Some(loc) => {
                let at = if rel.is_empty() {
                    loc.clone()
                } else {
                    loc.join(&rel)
                };
                let rt = RemoteTable::at(&at).map_err(table_error)?;
                if py.detach(|| rt.exists()).map_err(table_error)? {
                    continue;
                }
                create_table(&dir, table, regions.split_keys(), columns.clone())?;
                py.detach(|| rt.commit(&dir, None))
                    .map_err(|e| table_error(format!("{at}: {e}")))?;
                created.push(at.to_string());
            }
        }
    }
    Ok(created)
}

fn create_table(
    dir: &Path,
    t: &TableSchema,
    splits: &[Vec<u8>],
    kept: (
        std::collections::BTreeMap<String, hfkit_table::ValueType>,
        Option<String>,
    ),
) -> PyResult<()> {
    let families = t.families.iter().map(FamilyEntry::from_schema).collect();
    let (columns, rowkey) = kept;
    let setup = hfkit_table::directory::TableSetup {
        attributes: Attributes::of_table(t),
        columns,
        rowkey,
    };
    TableDir::create_with_attributes(dir, &t.full_name(), setup, families, splits)
        .map(|_| ())
        .map_err(|e| table_error(format!("{}: {e}", dir.display())))
}

/// Whether a bulk-load directory holds an HFile (`DIR/<family>/<file>`, names starting with `.`
/// or `_` not counted, as attach reads it).
fn holds_hfiles(dir: &Path) -> bool {
    let visible = |e: &std::fs::DirEntry| !e.file_name().to_string_lossy().starts_with(['.', '_']);
    let Ok(families) = std::fs::read_dir(dir) else {
        return false;
    };
    families.flatten().filter(visible).any(|f| {
        std::fs::read_dir(f.path())
            .map(|files| files.flatten().filter(visible).any(|e| e.path().is_file()))
            .unwrap_or(false)
    })
}

/// Attaches the bulk-load directories `dirs` (as `write_region` wrote them) to the table at
/// `table`: each index table (`table/indexes/<qualifier>`) gets every `DIR/.indexes/<qualifier>`
/// in one commit, then the main table every `DIR` in one commit. Directories without HFiles are
/// passed over. At most `max_files_per_region_family` files (HBase's
/// `hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily`, default 32) go to one region and
/// family of a table; more fails the attach, nothing attached. Returns {table path: manifest
/// version published}.
#[pyfunction]
#[pyo3(signature = (table, dirs, max_files_per_region_family = None))]
pub fn attach<'py>(
    py: Python<'py>,
    table: PathBuf,
    dirs: Vec<PathBuf>,
    max_files_per_region_family: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = AttachOptions {
        max_files_per_region_family,
        ..AttachOptions::default()
    };
    let remote_table = storage::remote(&table)?;
    let any_remote = dirs.iter().any(|d| Location::is_remote_path(d));
    let scratch = (remote_table.is_some() || any_remote)
        .then(storage::scratch)
        .transpose()?;
    let (dirs, sources) = match &scratch {
        Some(s) => downloaded(py, &dirs, s.path())?,
        None => (dirs, Vec::new()),
    };
    if let (Some(loc), Some(s)) = (&remote_table, &scratch) {
        // Objects in the table's bucket are copied server-side rather than uploaded again.
        let sources: Vec<CopySource> = sources
            .into_iter()
            .filter(|c| c.location.bucket().is_some() && c.location.bucket() == loc.bucket())
            .collect();
        return attach_remote(py, loc, &dirs, &opts, s.path(), &sources);
    }
    let main =
        TableDir::open(&table).map_err(|e| table_error(format!("{}: {e}", table.display())))?;
    let mut commits: Vec<(TableDir, Vec<PathBuf>)> = Vec::new();
    for it in main.index_tables() {
        let Some(q) = it.file_name() else { continue };
        let sub: Vec<PathBuf> = dirs
            .iter()
            .map(|d| d.join(INDEX_BULK_DIR).join(q))
            .filter(|d| holds_hfiles(d))
            .collect();
        let t = TableDir::open(&it).map_err(|e| table_error(format!("{}: {e}", it.display())))?;
        commits.push((t, sub));
    }
    let main_dirs = dirs.iter().filter(|d| holds_hfiles(d)).cloned().collect();
    commits.push((main, main_dirs));
    let done = PyDict::new(py);
    for (t, sub) in commits {
        if sub.is_empty() {
            continue;
        }
        let refs: Vec<&Path> = sub.iter().map(PathBuf::as_path).collect();
        let report = py
            .detach(|| t.attach_import_all(&refs, &opts, None))
            .map_err(|e| table_error(format!("{}: attach failed: {e}", t.dir().display())))?;
        done.set_item(t.dir().display().to_string(), report.version)?;
    }
    Ok(done)
}

/// `dirs` with each `s3://` one replaced by its download into `scratch`, and what each
/// downloaded object was (for a server-side copy of it).
fn downloaded(
    py: Python<'_>,
    dirs: &[PathBuf],
    scratch: &Path,
) -> PyResult<(Vec<PathBuf>, Vec<CopySource>)> {
    let mut local = Vec::new();
    let mut sources = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        match storage::remote(d)? {
            Some(src) => {
                let to = scratch.join(format!("bulk-{i}"));
                sources.extend(
                    py.detach(|| {
                        let store = hfkit_storage::store_for(&src)?;
                        remote::download_sources(&store, &src, &to)
                    })
                    .map_err(|e| table_error(format!("{src}: {e}")))?,
                );
                local.push(to);
            }
            None => local.push(d.clone()),
        }
    }
    Ok((local, sources))
}

/// `attach` to a table on object storage, of local directories (`s3://` ones downloaded
/// first): each index table with files (`DIR/.indexes/<qualifier>`, which must exist at
/// `table/indexes/<qualifier>`) attached in one commit, then the table in one commit, each on
/// a mirror of its latest version in `scratch`, committed create-only, and again onto a newer
/// version when another writer committed first (`formats/table.md` §"Tables on object
/// storage").
fn attach_remote<'py>(
    py: Python<'py>,
    loc: &Location,
    local: &[PathBuf],
    opts: &AttachOptions,
    scratch: &Path,
    sources: &[CopySource],
) -> PyResult<Bound<'py, PyDict>> {
    let mut qualifiers: Vec<String> = local
        .iter()
        .flat_map(|d| {
            std::fs::read_dir(d.join(INDEX_BULK_DIR))
                .into_iter()
                .flatten()
                .flatten()
        })
        .filter(|e| holds_hfiles(&e.path()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    qualifiers.sort();
    qualifiers.dedup();
    let mut commits: Vec<(Location, Vec<PathBuf>)> = qualifiers
        .iter()
        .map(|q| {
            let sub = local.iter().map(|d| d.join(INDEX_BULK_DIR).join(q));
            (
                loc.join(&format!("{INDEX_DIR}/{q}")),
                sub.filter(|d| holds_hfiles(d)).collect(),
            )
        })
        .collect();
    commits.push((
        loc.clone(),
        local.iter().filter(|d| holds_hfiles(d)).cloned().collect(),
    ));
    let done = PyDict::new(py);
    for (i, (at, sub)) in commits.into_iter().enumerate() {
        if sub.is_empty() {
            continue;
        }
        let refs: Vec<&Path> = sub.iter().map(PathBuf::as_path).collect();
        let work = scratch.join(format!("attach-{i}"));
        let report = py
            .detach(|| {
                let rt = RemoteTable::at(&at)?;
                remote::attach_all(&rt, &refs, opts, &work, sources)
            })
            .map_err(|e| table_error(format!("{at}: attach failed: {e}")))?;
        done.set_item(at.to_string(), report.version)?;
    }
    Ok(done)
}

/// Read options from the keyword arguments of `get` and `scan`.
fn read_options(columns: Option<Vec<String>>, versions: u32, raw: bool) -> ReadOptions {
    let columns = columns
        .unwrap_or_default()
        .into_iter()
        .map(|c| match c.split_once(':') {
            Some((f, q)) => (f.as_bytes().to_vec(), Some(q.as_bytes().to_vec())),
            None => (c.into_bytes(), None),
        })
        .collect();
    ReadOptions {
        columns,
        max_versions: versions.max(1),
        raw,
        now_ms: hfkit_format::cell::now_ms(),
        ..ReadOptions::default()
    }
}

/// A table directory, read with HBase's get and scan semantics.
/// On `s3://`, a read mirror of the live version (its manifest, made when the `Table` is made
/// and removed with it) whose store files are read from object storage by byte ranges, as
/// the CLI reads a remote table.
#[pyclass(module = "hfkit._hfkit", frozen)]
pub struct Table {
    reader: TableReader,
    _mirror: Option<OwnedDir>,
}

#[pymethods]
impl Table {
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Table> {
        let (dir, mirror) = match storage::remote(&path)? {
            None => (path.clone(), None),
            Some(loc) => {
                let scratch = storage::scratch()?;
                let dir = scratch.path().join("table");
                let found = py
                    .detach(|| RemoteTable::at(&loc)?.read_mirror(&dir))
                    .map_err(|e| table_error(format!("{loc}: {e}")))?;
                if found.is_none() {
                    return Err(table_error(format!(
                        "{loc}: no table there (no manifests/manifest-*.json)"
                    )));
                }
                (dir, Some(scratch))
            }
        };
        let t =
            TableDir::open(&dir).map_err(|e| table_error(format!("{}: {e}", path.display())))?;
        let reader = TableReader::open(&t).map_err(table_error)?;
        Ok(Table {
            reader,
            _mirror: mirror,
        })
    }

    /// The cells of row `row` (a record batch of cells: row, family, qualifier, timestamp,
    /// type, value as stored, and `decoded`: the value of a column the table's schema typed as
    /// its type shows it, `377` for an int64, null for other columns; left out with
    /// `raw_values`); `columns`: "family" or "family:qualifier" names.
    #[pyo3(signature = (row, columns = None, versions = 1, raw = false, raw_values = false))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        row: Vec<u8>,
        columns: Option<Vec<String>>,
        versions: u32,
        raw: bool,
        raw_values: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let opts = read_options(columns, versions, raw);
        let (cells, _) = py
            .detach(|| self.reader.get(&row, &opts))
            .map_err(table_error)?;
        let mut out = CellColumns::typed(self.types(raw_values));
        for c in &cells {
            out.push(&c.as_ref());
        }
        out.finish(py)
    }

    /// The cells of the rows in `[start, stop)` (and with `prefix`), at most `limit` rows, in
    /// one record batch of cells (as `get`'s, `decoded` too).
    #[pyo3(signature = (start = None, stop = None, prefix = None, limit = None,
                        columns = None, versions = 1, raw = false, reverse = false,
                        raw_values = false))]
    #[allow(clippy::too_many_arguments)]
    fn scan<'py>(
        &self,
        py: Python<'py>,
        start: Option<Vec<u8>>,
        stop: Option<Vec<u8>>,
        prefix: Option<Vec<u8>>,
        limit: Option<usize>,
        columns: Option<Vec<String>>,
        versions: u32,
        raw: bool,
        reverse: bool,
        raw_values: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let types = self.types(raw_values);
        let mut opts = read_options(columns, versions, raw);
        opts.start_row = start.unwrap_or_default();
        opts.stop_row = stop.unwrap_or_default();
        opts.prefix = prefix;
        opts.limit = limit;
        opts.reverse = reverse;
        let out = py.detach(|| -> Result<CellColumns, hfkit_table::TableError> {
            let mut out = CellColumns::typed(types);
            let mut rows = self.reader.scan(&opts)?;
            // Each row's cells borrowed from the scanner (no owned row per row).
            while let Some(r) = rows.next_row_ref()? {
                for c in r.cells() {
                    out.push(&c);
                }
            }
            Ok(out)
        });
        out.map_err(table_error)?.finish(py)
    }

    /// The table's split points (region `i` starts at `split_points()[i-1]`).
    fn split_points(&self, py: Python<'_>) -> Vec<Py<PyBytes>> {
        self.reader
            .manifest()
            .split_keys()
            .iter()
            .map(|k| PyBytes::new(py, k).unbind())
            .collect()
    }

    /// The live manifest's version.
    #[getter]
    fn version(&self) -> u64 {
        self.reader.manifest().version
    }

    /// The columns the table's schema typed: {"family:qualifier": type}, as `hfkit table
    /// describe` lists them.
    #[getter]
    fn typed_columns(&self) -> std::collections::BTreeMap<String, String> {
        self.reader
            .manifest()
            .columns
            .iter()
            .map(|(c, t)| (c.clone(), t.name().to_string()))
            .collect()
    }
}

impl Table {
    /// The typed columns whose values reads decode; none with `raw_values`.
    fn types(&self, raw_values: bool) -> Option<ColumnTypes> {
        (!raw_values).then(|| ColumnTypes::of(self.reader.manifest(), false))
    }
}

/// One HFile.
#[pyclass(module = "hfkit._hfkit", frozen)]
pub struct HFile {
    reader: HFileReader,
    path: PathBuf,
}

#[pymethods]
impl HFile {
    #[new]
    fn new(path: PathBuf) -> PyResult<HFile> {
        let reader = HFileReader::open(&path)
            .map_err(|e| hfile_error(format!("{}: {e}", path.display())))?;
        Ok(HFile { reader, path })
    }

    /// Every cell of the file, in order, as one record batch of cells.
    fn cells<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let out = py.detach(
            || -> Result<CellColumns, hfkit_format::error::FormatError> {
                let mut out = CellColumns::default();
                let mut s = self.reader.scanner()?;
                while let Some(c) = s.next()? {
                    out.push(&c);
                }
                Ok(out)
            },
        );
        out.map_err(|e| hfile_error(format!("{}: {e}", self.path.display())))?
            .finish(py)
    }

    /// What the trailer and FileInfo say: entries, compression, data block encoding, first and
    /// last row, time range, and every FileInfo entry (bytes).
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let (first, last) = super::region::first_last_rows(&self.path)?;
        d.set_item("path", self.path.display().to_string())?;
        d.set_item("entries", self.reader.entry_count())?;
        d.set_item("compression", format!("{:?}", self.reader.compression()))?;
        d.set_item("encoding", format!("{:?}", self.reader.encoding()))?;
        d.set_item("first_row", PyBytes::new(py, &first))?;
        d.set_item("last_row", PyBytes::new(py, &last))?;
        d.set_item("time_range", self.reader.file_info().time_range())?;
        let fi = PyDict::new(py);
        for (k, v) in &self.reader.file_info().entries {
            fi.set_item(PyBytes::new(py, k), PyBytes::new(py, v))?;
        }
        d.set_item("file_info", fi)?;
        Ok(d)
    }

    /// Verifies every block, the index, the Bloom filter, the trailer and FileInfo against the
    /// cells: {"ok", "cells", "blocks", "problems"}.
    fn verify<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let v = py.detach(|| hfkit_format::verify::verify(&self.reader));
        let d = PyDict::new(py);
        d.set_item("ok", v.is_ok())?;
        d.set_item("cells", v.cells)?;
        d.set_item("blocks", v.blocks)?;
        let problems: Vec<String> = v.problems.iter().map(|p| p.to_string()).collect();
        d.set_item("problems", problems)?;
        Ok(d)
    }
}
