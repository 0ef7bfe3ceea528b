//! `Schema`: a table schema with its import mapping (the TOML form of `formats/schema.md`),
//! the regions an import writes (the splits', or a table's own given with `with_regions`), and
//! the import's row keys and region numbers of whole record batches. Picklable (its TOML text
//! and regions), so that a Spark job ships it to its tasks.

use std::path::PathBuf;

use arrow_array::{Array, Int32Array, RecordBatch};
use arrow_pyarrow::{PyArrowType, ToPyArrow};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::errors::{import_error, schema_error, HfkitError};
use hfkit_pipeline::import::{import_regions, ImportRegions, InputFormat, DEFAULT_SAMPLE_ROWS};
use hfkit_pipeline::source::arrow as arrow_input;
use hfkit_table::{ParsedSchema, Regions, TableSchema};

#[pyclass(module = "hfkit._hfkit", frozen)]
pub struct Schema {
    pub parsed: ParsedSchema,
    toml: String,
    source: String,
    base_dir: Option<PathBuf>,
    /// For a schema of several `[[table]]` sections, the position of this one's (the TOML
    /// text is the whole file's); `None` for a schema of one table.
    target: Option<usize>,
    /// `None` for `[splits] sample = N` until regions are given.
    regions: Option<ImportRegions>,
}

impl Schema {
    fn new(
        toml: String,
        source: String,
        base_dir: Option<PathBuf>,
        target: Option<usize>,
        regions: Option<ImportRegions>,
    ) -> PyResult<Schema> {
        let parsed = match target {
            None => TableSchema::from_toml_str(&toml, &source, base_dir.as_deref()).map(Some),
            Some(i) => TableSchema::targets_from_toml_str(&toml, &source, base_dir.as_deref())
                .map(|mut all| (i < all.len()).then(|| all.swap_remove(i))),
        }
        .map_err(|e| schema_error(&e))?
        .ok_or_else(|| schema_error(&format!("{source}: no [[table]] section {target:?}")))?;
        hfkit_pipeline::import::check_mapping(&parsed.table, &parsed.mapping)
            .map_err(import_error)?;
        let regions = match regions {
            Some(r) => Some(r),
            // The splits' regions, unless one is sampled (there is no input to sample).
            None => import_regions(
                &parsed.table,
                &parsed.mapping,
                &[],
                &InputFormat::Parquet,
                0,
            )
            .ok()
            .filter(|_| !sampled(&parsed)),
        };
        Ok(Schema {
            parsed,
            toml,
            source,
            base_dir,
            target,
            regions,
        })
    }

    /// The regions the import writes, or an error saying how to give them.
    pub fn import_regions(&self) -> PyResult<&ImportRegions> {
        self.regions.as_ref().ok_or_else(|| {
            HfkitError::new_err(format!(
                "{}: [splits] sample = N cuts the table at the quantiles of the input's row \
                 keys: sample them (Schema.with_sampled_regions(parquet files); bulk_load \
                 samples the DataFrame's first rows itself), or use an existing table's \
                 regions (Schema.with_regions, or bulk_load(table=...)), or write the split \
                 points hfkit plan prints as [splits] keys",
                self.source
            ))
        })
    }

    fn batch_keys(
        &self,
        batch: &RecordBatch,
        name: Option<String>,
        number: usize,
    ) -> PyResult<arrow_array::BinaryArray> {
        let name = PathBuf::from(name.unwrap_or_else(|| "record batch".into()));
        arrow_input::row_keys(
            &self.parsed.table,
            &self.parsed.mapping,
            batch,
            name,
            number,
        )
        .map_err(import_error)
    }
}

/// Split points: the main table's, and each index table's.
type SplitPoints = (Vec<Vec<u8>>, Vec<Vec<Vec<u8>>>);

/// Whether a table of the schema has `[splits] sample = N`.
fn sampled(parsed: &ParsedSchema) -> bool {
    let s = |t: &TableSchema| matches!(t.splits, hfkit_table::SplitSpec::Sampled { .. });
    s(&parsed.table) || parsed.mapping.indexes.iter().any(|ix| s(&ix.table))
}

fn split_keys(py: Python<'_>, r: &Regions) -> Vec<Py<PyBytes>> {
    r.split_keys()
        .iter()
        .map(|k| PyBytes::new(py, k).unbind())
        .collect()
}

#[pymethods]
impl Schema {
    /// The schema file at `path` (TOML).
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Schema> {
        let toml = std::fs::read_to_string(&path)
            .map_err(|e| schema_error(&format!("{}: {e}", path.display())))?;
        let base = path.parent().map(PathBuf::from);
        Schema::new(toml, path.display().to_string(), base, None, None)
    }

    /// Every table of the schema file at `path`, in document order: one per `[[table]]`
    /// section (`formats/schema.md` §"Several tables from one input"), or the one `[table]`.
    #[staticmethod]
    fn load_targets(path: PathBuf) -> PyResult<Vec<Schema>> {
        let toml = std::fs::read_to_string(&path)
            .map_err(|e| schema_error(&format!("{}: {e}", path.display())))?;
        let base = path.parent().map(PathBuf::from);
        let source = path.display().to_string();
        let n = TableSchema::targets_from_toml_str(&toml, &source, base.as_deref())
            .map_err(|e| schema_error(&e))?
            .len();
        if n == 1 {
            return Ok(vec![Schema::new(toml, source, base, None, None)?]);
        }
        (0..n)
            .map(|i| Schema::new(toml.clone(), source.clone(), base.clone(), Some(i), None))
            .collect()
    }

    /// A schema from its TOML text; `source` names it in errors, `base_dir` is where paths in it
    /// are relative to.
    #[staticmethod]
    #[pyo3(signature = (text, source = "<schema>".to_string(), base_dir = None))]
    fn from_toml(text: String, source: String, base_dir: Option<PathBuf>) -> PyResult<Schema> {
        Schema::new(text, source, base_dir, None, None)
    }

    /// This schema over other regions: a table's own split points (`main`) and each index
    /// table's (`indexes`, schema order), as an import into existing tables writes them.
    #[pyo3(signature = (main, indexes = None))]
    fn with_regions(
        &self,
        main: Vec<Vec<u8>>,
        indexes: Option<Vec<Vec<Vec<u8>>>>,
    ) -> PyResult<Schema> {
        let n = self.parsed.mapping.indexes.len();
        let indexes = indexes.unwrap_or_else(|| vec![Vec::new(); n]);
        if indexes.len() != n {
            return Err(HfkitError::new_err(format!(
                "split points of {} index tables for {n}",
                indexes.len()
            )));
        }
        let regions = ImportRegions {
            main: Regions::from_sorted(main).map_err(|e| schema_error(&e))?,
            indexes: indexes
                .into_iter()
                .map(Regions::from_sorted)
                .collect::<Result<_, _>>()
                .map_err(|e| schema_error(&e))?,
        };
        Schema::new(
            self.toml.clone(),
            self.source.clone(),
            self.base_dir.clone(),
            self.target,
            Some(regions),
        )
    }

    /// This schema over the regions `[splits] sample = N` (and each `[index.splits] sample`)
    /// cut from the row keys of the first `sample_rows` records of the files `inputs` (Parquet,
    /// or with `format` and `csv` as `input_splits` takes them, CSV), exactly as `hfkit
    /// import` samples its input (`formats/schema.md` §"Splits"); the other kinds of splits
    /// are the schema's own, as without a sample.
    #[pyo3(signature = (inputs, sample_rows = DEFAULT_SAMPLE_ROWS, format = None, csv = None))]
    fn with_sampled_regions(
        &self,
        py: Python<'_>,
        inputs: Vec<PathBuf>,
        sample_rows: usize,
        format: Option<String>,
        csv: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Schema> {
        let parsed = &self.parsed;
        let fmt = match (&format, csv) {
            (None, None) => InputFormat::Parquet,
            _ => crate::input_format::input_format(format.as_deref(), &inputs, csv)?,
        };
        let regions = py
            .detach(|| import_regions(&parsed.table, &parsed.mapping, &inputs, &fmt, sample_rows))
            .map_err(import_error)?;
        Schema::new(
            self.toml.clone(),
            self.source.clone(),
            self.base_dir.clone(),
            self.target,
            Some(regions),
        )
    }

    /// Whether a table of the schema cuts its regions from a sample of the input
    /// (`[splits] sample = N`): such a schema needs `with_sampled_regions` or `with_regions`.
    #[getter]
    fn samples_splits(&self) -> bool {
        sampled(&self.parsed)
    }

    /// The table's full name (`ns:qualifier`).
    #[getter]
    fn name(&self) -> String {
        self.parsed.table.full_name()
    }

    /// The table's qualifier: its directory's name under the root of a schema of several
    /// tables, as `hfkit import` places them.
    #[getter]
    fn qualifier(&self) -> String {
        self.parsed.table.qualifier.clone()
    }

    /// The main table's families, in schema order.
    #[getter]
    fn families(&self) -> Vec<String> {
        self.parsed
            .table
            .families
            .iter()
            .map(|f| f.name.clone())
            .collect()
    }

    /// Each `[[index]]` table's qualifier (its directory name), in schema order.
    #[getter]
    fn index_tables(&self) -> Vec<String> {
        let ixs = &self.parsed.mapping.indexes;
        ixs.iter().map(|ix| ix.table.qualifier.clone()).collect()
    }

    /// The schema's TOML text.
    #[getter]
    fn toml(&self) -> String {
        self.toml.clone()
    }

    /// The main table's split points (region `i` starts at `split_points()[i-1]`).
    fn split_points(&self, py: Python<'_>) -> PyResult<Vec<Py<PyBytes>>> {
        Ok(split_keys(py, &self.import_regions()?.main))
    }

    /// Each index table's split points, in schema order.
    fn index_split_points(&self, py: Python<'_>) -> PyResult<Vec<Vec<Py<PyBytes>>>> {
        let r = self.import_regions()?;
        Ok(r.indexes.iter().map(|r| split_keys(py, r)).collect())
    }

    /// Number of regions of the main table.
    fn region_count(&self) -> PyResult<usize> {
        Ok(self.import_regions()?.main.len())
    }

    /// The main table's row key of every row of `batch` (a `pyarrow.BinaryArray`), by the
    /// import's encoder; a row whose key cannot be encoded raises `InputError` naming it
    /// (`name`: the input, `number`: the batch's number in it).
    #[pyo3(signature = (batch, name = None, number = 0))]
    fn row_keys<'py>(
        &self,
        py: Python<'py>,
        batch: PyArrowType<RecordBatch>,
        name: Option<String>,
        number: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let keys = py.detach(|| self.batch_keys(&batch.0, name, number))?;
        keys.to_data().to_pyarrow(py)
    }

    /// The main table's region (0-based, in key order) of every row of `batch`, a
    /// `pyarrow.Int32Array`: what a Spark job partitions by.
    #[pyo3(signature = (batch, name = None, number = 0))]
    fn regions<'py>(
        &self,
        py: Python<'py>,
        batch: PyArrowType<RecordBatch>,
        name: Option<String>,
        number: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let regions = &self.import_regions()?.main;
        let ids = py.detach(|| -> PyResult<Int32Array> {
            let keys = self.batch_keys(&batch.0, name, number)?;
            Ok(keys
                .iter()
                .map(|k| k.map(|k| regions.region_of(k) as i32))
                .collect())
        })?;
        ids.to_data().to_pyarrow(py)
    }

    /// Pickles as (TOML text, source, base dir, target, regions).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let s = slf.get();
        let restore = py.get_type::<Schema>().getattr("_restore")?;
        let regions = s.regions.as_ref().map(|r| {
            (
                split_keys(py, &r.main),
                r.indexes
                    .iter()
                    .map(|r| split_keys(py, r))
                    .collect::<Vec<_>>(),
            )
        });
        let args = (
            s.toml.clone(),
            s.source.clone(),
            s.base_dir.clone(),
            s.target,
            regions,
        )
            .into_pyobject(py)?;
        PyTuple::new(py, [restore, args.into_any()])
    }

    #[staticmethod]
    fn _restore(
        toml: String,
        source: String,
        base_dir: Option<PathBuf>,
        target: Option<usize>,
        regions: Option<SplitPoints>,
    ) -> PyResult<Schema> {
        let s = Schema::new(toml, source, base_dir, target, None)?;
        match regions {
            Some((main, indexes)) => s.with_regions(main, Some(indexes)),
            None => Ok(s),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Schema({:?}, table {})",
            self.source,
            self.parsed.table.full_name()
        )
    }
}
