//! A compaction cut into tasks for a cluster (`hfkit.spark.compact`): the driver plans
//! ([`Table::plan_compaction`]), each task writes one store's output into a directory of its
//! own ([`Table::compact_store`]), and the driver commits every output in one manifest commit
//! ([`Table::commit_compaction`]): the steps [`Table::compact`] takes in one process, with the
//! same rules and outputs. A plan names files by name and carries the manifest version it was
//! made from; every step checks that the table is still at that version, so a table changed
//! meanwhile fails the compaction with nothing committed. Spec: `formats/table.md`
//! §"Compaction" and `formats/python.md` §"Compaction on Spark".

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::options::CompactOptions;
use super::place::next_manifest;
use super::report::{CompactReport, StoreCompaction};
use super::rewrite::Staged;
use super::select::Plan;
use crate::directory::Table;
use crate::manifest::Manifest;
use crate::TableError;
use hfkit_format::reader::HFileReader;

/// One store to compact, its input files by name, oldest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreTask {
    pub region: String,
    pub family: String,
    pub inputs: Vec<String>,
    /// Every file of the store: DROP_DELETES rules.
    pub all_files: bool,
}

/// What a compaction will do, made from one manifest version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionPlan {
    /// The manifest version the plan was made from.
    pub version: u64,
    /// "Now" for TTL and the outputs' creation time, epoch ms (one value for every task).
    pub now_ms: i64,
    pub stores: Vec<StoreTask>,
}

/// What a task wrote for store `task` of a plan: the output file (`None` when no cell was
/// left) and the store's report, whose `output` is the output's manifest entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreOutput {
    pub task: usize,
    pub path: Option<PathBuf>,
    pub report: StoreCompaction,
}

impl Table {
    /// Plans a compaction with `opts` (as [`Table::compact`] would do it now).
    pub fn plan_compaction(&self, opts: &CompactOptions) -> Result<CompactionPlan, TableError> {
        let m = self.manifest()?;
        check_scope(&m, opts)?;
        let stores = self
            .plan(&m, opts)?
            .into_iter()
            .map(|p| StoreTask {
                inputs: p.inputs.iter().map(|&i| m.files[i].name.clone()).collect(),
                region: p.region,
                family: p.family,
                all_files: p.all_files,
            })
            .collect();
        Ok(CompactionPlan {
            version: m.version,
            now_ms: opts.now_ms,
            stores,
        })
    }

    /// Writes the output of store `task` of `plan` into the directory `dir` (made if absent,
    /// fsynced): the merge, rules and writer of [`Table::compact`].
    pub fn compact_store(
        &self,
        plan: &CompactionPlan,
        task: usize,
        dir: &Path,
    ) -> Result<StoreOutput, TableError> {
        let m = self.manifest()?;
        let plans = plans_at(&m, plan)?;
        let p = plans.get(task).ok_or_else(|| {
            TableError::Invalid(format!(
                "compaction task {task}: the plan has {} stores",
                plans.len()
            ))
        })?;
        let fs = self.fs();
        fs.create_dir_all(dir).map_err(|e| TableError::io(dir, e))?;
        let opts = CompactOptions {
            now_ms: plan.now_ms,
            ..CompactOptions::default()
        };
        let (staged, report) = self.write_store(&m, p, task, &opts, dir)?;
        fs.sync_dir(dir).map_err(|e| TableError::io(dir, e))?;
        Ok(StoreOutput {
            task,
            path: staged.map(|s| s.path),
            report,
        })
    }

    /// Commits the tasks' `outputs` of `plan` (one per store) in one manifest commit: each
    /// output checked against what its task reported, moved into the table, every input
    /// replaced; then garbage collection, as [`Table::compact`]. Nothing is committed if the
    /// table changed since the plan, an output is missing or does not match its report.
    pub fn commit_compaction(
        &self,
        plan: &CompactionPlan,
        outputs: &[StoreOutput],
    ) -> Result<CompactReport, TableError> {
        let lock = self.lock()?;
        let mut garbage_removed = self.collect_garbage(&lock)?;
        let m = self.manifest()?;
        let plans = plans_at(&m, plan)?;
        let mut by_task: Vec<Option<&StoreOutput>> = vec![None; plans.len()];
        for o in outputs {
            let slot = by_task.get_mut(o.task).ok_or_else(|| {
                TableError::Invalid(format!(
                    "compaction output for task {}: no such store",
                    o.task
                ))
            })?;
            if slot.replace(o).is_some() {
                return Err(TableError::Invalid(format!(
                    "compaction task {}: two outputs",
                    o.task
                )));
            }
        }
        let mut staged = Vec::new();
        let mut stores = Vec::new();
        for (task, (p, o)) in plans.iter().zip(&by_task).enumerate() {
            let o = o.ok_or_else(|| {
                TableError::Invalid(format!(
                    "compaction of region {} family {}: no output",
                    p.region, p.family
                ))
            })?;
            let r = &o.report;
            if (r.region.as_str(), r.family.as_str()) != (p.region.as_str(), p.family.as_str()) {
                return Err(TableError::Invalid(format!(
                    "compaction task {task}: an output of region {} family {}, planned {} {}",
                    r.region, r.family, p.region, p.family
                )));
            }
            match (&o.path, &r.output) {
                (Some(path), Some(entry)) => {
                    check_output(path, entry.size, entry.entries)?;
                    staged.push(Staged {
                        plan_index: task,
                        path: path.clone(),
                        entry: entry.clone(),
                    });
                }
                (None, None) => {}
                _ => {
                    return Err(TableError::Invalid(format!(
                        "compaction task {task}: an output file without an entry, or the reverse"
                    )))
                }
            }
            stores.push(r.clone());
        }
        if plans.is_empty() {
            return Ok(CompactReport {
                version: None,
                stores,
                garbage_removed,
            });
        }
        let placed = self.place(&staged)?;
        let next = next_manifest(&m, &plans, &staged);
        // As `Table::compact`: outputs placed but not committed are garbage to the next run.
        self.commit(&next, &placed)?;
        garbage_removed += self.collect_garbage(&lock)?;
        Ok(CompactReport {
            version: Some(next.version),
            stores,
            garbage_removed,
        })
    }
}

/// Refuses a region or family the manifest does not have.
pub(super) fn check_scope(m: &Manifest, opts: &CompactOptions) -> Result<(), TableError> {
    if let Some(r) = &opts.region {
        if !m.regions.iter().any(|x| &x.id == r) {
            return Err(TableError::Invalid(format!("no region '{r}'")));
        }
    }
    if let Some(f) = &opts.family {
        if m.family(f).is_none() {
            return Err(TableError::Invalid(format!("no family '{f}'")));
        }
    }
    Ok(())
}

/// The plan's stores as positions in manifest `m`, which must be the version planned from.
fn plans_at(m: &Manifest, plan: &CompactionPlan) -> Result<Vec<Plan>, TableError> {
    if m.version != plan.version {
        return Err(TableError::Invalid(format!(
            "the table changed since the compaction was planned (manifest version {}, planned \
             from {}): nothing compacted; plan again",
            m.version, plan.version
        )));
    }
    plan.stores
        .iter()
        .map(|s| {
            let inputs = s
                .inputs
                .iter()
                .map(|name| {
                    m.files
                        .iter()
                        .position(|e| {
                            &e.name == name && e.region == s.region && e.family == s.family
                        })
                        .ok_or_else(|| {
                            TableError::Invalid(format!(
                                "compaction input {name} (region {}, family {}) is not in the \
                                 table",
                                s.region, s.family
                            ))
                        })
                })
                .collect::<Result<_, _>>()?;
            Ok(Plan {
                region: s.region.clone(),
                family: s.family.clone(),
                inputs,
                all_files: s.all_files,
            })
        })
        .collect()
}

/// Checks that the file at `path` is the output its task reported: its size, and the cell
/// count its trailer holds (the task verified every block before it reported).
fn check_output(path: &Path, size: u64, entries: u64) -> Result<(), TableError> {
    let bad = |detail: String| TableError::Corrupt {
        path: path.to_path_buf(),
        detail: format!("compaction output: {detail}"),
    };
    let got = std::fs::metadata(path)
        .map_err(|e| TableError::io(path, e))?
        .len();
    if got != size {
        return Err(bad(format!("{got} bytes, its task wrote {size}")));
    }
    let r = HFileReader::open(path).map_err(|e| bad(e.to_string()))?;
    let n = r.trailer().entry_count;
    if n != entries {
        return Err(bad(format!("{n} cells, its task wrote {entries}")));
    }
    Ok(())
}
