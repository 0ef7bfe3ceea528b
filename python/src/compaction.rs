//! A table's compaction in steps for a cluster (`formats/python.md` §"Compaction on Spark"):
//! `plan_compaction` on the driver, `compact_store` in a task per store, `commit_compaction`
//! on the driver, each step `hfkit_table::compact`'s (plans, outputs and reports pass between
//! them as JSON text). Tables on a local or shared file system; an `s3://` table is refused by
//! name (its compaction is the CLI's `hfkit compact`).

use std::path::{Path, PathBuf};

use pyo3::prelude::*;

use crate::errors::{table_error, HfkitError};
use crate::storage;
use hfkit_table::compact::{CompactOptions, CompactionPlan, StoreOutput};
use hfkit_table::directory::Table;

fn open(table: &Path) -> PyResult<Table> {
    storage::local_table(table, "compact")
}

fn json_error(what: &str, e: serde_json::Error) -> PyErr {
    HfkitError::new_err(format!("{what}: {e}"))
}

/// The compaction `hfkit compact` would run now on `table`, as JSON: the manifest version,
/// `now_ms` and the stores with their input files by name.
#[pyfunction]
#[pyo3(signature = (table, major = false, all_files = false, region = None, family = None, now_ms = None))]
pub fn plan_compaction(
    py: Python<'_>,
    table: PathBuf,
    major: bool,
    all_files: bool,
    region: Option<String>,
    family: Option<String>,
    now_ms: Option<i64>,
) -> PyResult<String> {
    let t = open(&table)?;
    let opts = CompactOptions {
        major,
        all_files,
        region,
        family,
        now_ms: now_ms.unwrap_or_else(hfkit_format::cell::now_ms),
        ..CompactOptions::default()
    };
    let plan = py
        .detach(|| t.plan_compaction(&opts))
        .map_err(table_error)?;
    serde_json::to_string(&plan).map_err(|e| json_error("compaction plan", e))
}

/// Writes store `task` of `plan` (JSON, from `plan_compaction`) into the directory `out`;
/// returns the output as JSON (its path and the store's report).
#[pyfunction]
pub fn compact_store(
    py: Python<'_>,
    table: PathBuf,
    plan: &str,
    task: usize,
    out: PathBuf,
) -> PyResult<String> {
    let t = open(&table)?;
    let plan: CompactionPlan =
        serde_json::from_str(plan).map_err(|e| json_error("compaction plan", e))?;
    let output = py
        .detach(|| t.compact_store(&plan, task, &out))
        .map_err(table_error)?;
    serde_json::to_string(&output).map_err(|e| json_error("compaction output", e))
}

/// Commits the `outputs` (JSON, one per store, from `compact_store`) of `plan` in one manifest
/// commit; returns the report of `hfkit compact --json`.
#[pyfunction]
pub fn commit_compaction(
    py: Python<'_>,
    table: PathBuf,
    plan: &str,
    outputs: Vec<String>,
) -> PyResult<String> {
    let t = open(&table)?;
    let plan: CompactionPlan =
        serde_json::from_str(plan).map_err(|e| json_error("compaction plan", e))?;
    let outputs = outputs
        .iter()
        .map(|o| serde_json::from_str::<StoreOutput>(o))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| json_error("compaction output", e))?;
    let report = py
        .detach(|| t.commit_compaction(&plan, &outputs))
        .map_err(table_error)?;
    serde_json::to_string(&report).map_err(|e| json_error("compaction report", e))
}
