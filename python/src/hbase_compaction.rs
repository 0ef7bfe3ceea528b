//! An HBase table's offline major compaction on a cluster (`formats/python.md` §"HBase
//! compaction on Spark"): the driver begins it (`HBaseCompaction`: the table's lock, the checks
//! that HBase is not using it, what a killed run left cleaned up, the stores planned), tasks
//! write a store each under its region's `.tmp/` (`compact_hbase_store`), and the driver
//! commits the outputs store after store. Each step is `hfkit_hbase::compact`'s, the CLI's
//! `hfkit hbase compact`. Roots on a local or shared file system; an `s3://` root is refused
//! by name (the CLI compacts it).

use std::path::{Path, PathBuf};

use pyo3::prelude::*;

use crate::errors::HfkitError;
use crate::storage::remote;
use hfkit_hbase::compact::{
    commit_planned, discard_staged, lock, prepare, write_planned_store, CompactOptions,
    CompactReport, CompactionLock, Prepared, StagedStore, StorePlan,
};
use hfkit_hbase::manifest::Manifest;
use hfkit_hbase::HBaseRoot;

fn failure(e: impl std::fmt::Display) -> PyErr {
    HfkitError::new_err(e.to_string())
}

fn json_error(what: &str, e: serde_json::Error) -> PyErr {
    HfkitError::new_err(format!("{what}: {e}"))
}

/// The table `table` of the root `root`, on a local or shared file system.
fn open(root: &Path, table: &str) -> PyResult<Manifest> {
    if remote(root)?.is_some() {
        return Err(HfkitError::new_err(format!(
            "{}: an HBase compaction on Spark takes a root on a local or shared file system, \
             not object storage (use `hfkit hbase compact`)",
            root.display()
        )));
    }
    HBaseRoot::open(root)
        .and_then(|r| r.table(table))
        .map_err(failure)
}

/// An HBase table's compaction begun: the table held (locked) until `commit()` or `abort()`.
#[pyclass(module = "hfkit")]
pub struct HBaseCompaction {
    m: Manifest,
    now_ms: i64,
    prepared: Prepared,
    lock: Option<CompactionLock>,
}

#[pymethods]
impl HBaseCompaction {
    /// Begins the major compaction of `table` (`name` or `namespace:name`) of the HBase root
    /// `root` (only `region` / `family` when given; `now_ms`: "now" for TTL, default the
    /// clock), as `hfkit hbase compact` does.
    #[new]
    #[pyo3(signature = (root, table, region = None, family = None, now_ms = None))]
    fn new(
        py: Python<'_>,
        root: PathBuf,
        table: String,
        region: Option<String>,
        family: Option<String>,
        now_ms: Option<i64>,
    ) -> PyResult<HBaseCompaction> {
        let m = open(&root, &table)?;
        let opts = CompactOptions {
            now_ms: now_ms.unwrap_or_else(hfkit_format::cell::now_ms),
            region,
            family,
        };
        let (held, prepared) = py
            .detach(|| {
                let held = lock(&m)?;
                let prepared = prepare(&m, &opts, &held)?;
                Ok::<_, hfkit_hbase::HBaseError>((held, prepared))
            })
            .map_err(failure)?;
        Ok(HBaseCompaction {
            m,
            now_ms: opts.now_ms,
            prepared,
            lock: Some(held),
        })
    }

    /// The stores to compact, each as JSON (`region`, `family`, `inputs`): a task's part.
    fn stores(&self) -> PyResult<Vec<String>> {
        self.prepared
            .stores
            .iter()
            .map(|s| serde_json::to_string(s).map_err(|e| json_error("store", e)))
            .collect()
    }

    /// "Now" for TTL, the same in every task.
    #[getter]
    fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// Commits the tasks' outputs (JSON, one per store, from `compact_hbase_store`) store
    /// after store, removes every other output staged, and releases the table; returns the
    /// report of `hfkit hbase compact --json`.
    fn commit(&mut self, py: Python<'_>, staged: Vec<String>) -> PyResult<String> {
        let held = self
            .lock
            .take()
            .ok_or_else(|| HfkitError::new_err("the compaction has ended"))?;
        let staged = staged
            .iter()
            .map(|s| serde_json::from_str::<StagedStore>(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| json_error("staged store", e))?;
        let (m, now_ms) = (&self.m, self.now_ms);
        let result = py.detach(|| {
            commit_planned(m, &staged, now_ms, &held).inspect_err(|_| {
                let _ = discard_staged(m, &held);
            })
        });
        result.map_err(failure)?;
        let report = CompactReport {
            stores: staged.into_iter().map(|s| s.report).collect(),
            leftovers_removed: self.prepared.leftovers_removed.clone(),
            compacted_archived: self.prepared.compacted_archived.clone(),
        };
        serde_json::to_string(&report).map_err(|e| json_error("report", e))
    }

    /// Removes every output staged and releases the table: nothing was changed.
    fn abort(&mut self, py: Python<'_>) -> PyResult<()> {
        if let Some(held) = self.lock.take() {
            let m = &self.m;
            py.detach(|| discard_staged(m, &held)).map_err(failure)?;
        }
        Ok(())
    }
}

/// Writes the major compaction of `store` (JSON, from `HBaseCompaction.stores()`) of `table`
/// of the root `root` under its region's `.tmp/`, verified; returns the staged output as JSON.
#[pyfunction]
pub fn compact_hbase_store(
    py: Python<'_>,
    root: PathBuf,
    table: String,
    store: &str,
    now_ms: i64,
) -> PyResult<String> {
    let m = open(&root, &table)?;
    let store: StorePlan = serde_json::from_str(store).map_err(|e| json_error("store", e))?;
    let staged = py
        .detach(|| write_planned_store(&m, &store, now_ms))
        .map_err(failure)?;
    serde_json::to_string(&staged).map_err(|e| json_error("staged store", e))
}
