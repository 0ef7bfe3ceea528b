//! Compaction: rewriting a store's files into one, with HBase's compaction rules. Spec:
//! `formats/table.md` §"Compaction" (`alter`, which changes a family's settings, is
//! [`crate::alter`]).
//!
//! ```text
//! per store (region × family):
//!   select   major: every file; minor: HBase's ratio-based policy (or every file on request)
//!   merge    read::MergeScanner over the selected files (bounded memory: one block per file)
//!   match    CompactionMatcher: RETAIN_DELETES (subset) or DROP_DELETES (every file)
//!   write    HFileWriter with the family's current settings → .tmp/compact-<id>/<name>, fsync
//! commit:    place outputs under data/, fsync; one manifest commit replaces every input by its
//!            output; garbage collection then removes inputs no snapshot still names
//! ```

//!
//! | module | owns | prose |
//! |---|---|---|
//! | `select` | which stores and files a compaction takes (HBase's ratio-based minor selection) | §"Selection" |
//! | `rewrite` | the compaction matcher and the rewrite of a store's files into one staged output | §"Rules", §"Output" |
//! | this module | the options and reports, placing the outputs and the one manifest commit | §"Steps and crash safety" |
//! | `distributed` | the same steps cut into a plan, a task per store and a commit, for a cluster | `python.md` §"Compaction on Spark" |

mod distributed;
mod rewrite;
mod select;

use std::path::PathBuf;

use serde::Serialize;

use super::directory::{unique_hex, Table, DATA_DIR, STAGING_DIR};
use super::manifest::{Manifest, StoreFileEntry};
use super::read::family_read_settings;
use super::TableError;
use hfkit_read::Store;
use std::sync::Arc;

pub use crate::alter::FamilyChanges;
pub use distributed::{CompactionPlan, StoreOutput, StoreTask};
pub use rewrite::major_compact_store;
use rewrite::Staged;
use select::Plan;
pub use select::{select_minor, Candidate};

/// HBase's minor-compaction selection settings (`CompactionConfiguration` defaults).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CompactionPolicy {
    /// `hbase.hstore.compaction.ratio`.
    pub ratio: f64,
    /// `hbase.hstore.compaction.min` (at least 2).
    pub min_files: usize,
    /// `hbase.hstore.compaction.max`.
    pub max_files: usize,
    /// `hbase.hstore.compaction.min.size`: files at most this big always qualify. HBase's
    /// default is the memstore flush size, 128 MiB.
    pub min_compact_size: u64,
    /// `hbase.hstore.compaction.max.size`: larger files (oldest first) are left out.
    pub max_compact_size: u64,
    /// `hbase.hstore.blockingStoreFiles`: with this many files a store "may be stuck" and the
    /// newest `min_files` are compacted even when the ratio selects nothing.
    pub blocking_files: usize,
}

impl Default for CompactionPolicy {
    fn default() -> Self {
        CompactionPolicy {
            ratio: 1.2,
            min_files: 3,
            max_files: 10,
            min_compact_size: 128 << 20,
            max_compact_size: u64::MAX,
            blocking_files: 16,
        }
    }
}

/// What to compact.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompactOptions {
    /// Every file of each store, dropping deleted, expired and excess cells and the markers.
    pub major: bool,
    /// Only this region (id).
    pub region: Option<String>,
    /// Only this family.
    pub family: Option<String>,
    /// Minor: every file of each store instead of the ratio-based selection.
    pub all_files: bool,
    /// "Now" for TTL, epoch ms (injected; compaction never reads the clock for semantics).
    pub now_ms: i64,
    pub policy: CompactionPolicy,
}

/// What happened to one store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct StoreCompaction {
    pub region: String,
    pub family: String,
    /// Input file names, oldest first.
    pub inputs: Vec<String>,
    pub input_cells: u64,
    pub input_bytes: u64,
    /// The new file; `None` when every cell was dropped.
    pub output: Option<StoreFileEntry>,
    /// Every file of the store was compacted: DROP_DELETES rules, MAJOR_COMPACTION_KEY = true.
    pub all_files: bool,
    /// Cells written.
    pub output_cells: u64,
    /// Delete markers written.
    pub output_markers: u64,
    pub elapsed_ms: u64,
}

/// What a compaction did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CompactReport {
    /// Manifest version published; `None` when no store had anything to compact.
    pub version: Option<u64>,
    pub stores: Vec<StoreCompaction>,
    /// Files removed by garbage collection (inputs no snapshot names, and leftovers).
    pub garbage_removed: usize,
}

/// The stores (one per family, family order) of `region` in manifest `m`, files in manifest
/// order with their sequence ids, ready for `read::get` / `read::scan`.
pub fn open_region_stores(t: &Table, m: &Manifest, region: &str) -> Result<Vec<Store>, TableError> {
    let mut stores = Vec::new();
    for f in &m.families {
        let mut files = Vec::new();
        for e in m
            .files
            .iter()
            .filter(|e| e.region == region && e.family == f.name)
        {
            let r = t.open_store_file(e)?;
            files.push((Arc::new(r), e.seq_id));
        }
        stores.push(Store {
            family: f.name.as_bytes().to_vec(),
            settings: family_read_settings(f)?,
            files,
        });
    }
    Ok(stores)
}

impl Table {
    /// Compacts the selected stores (see the module documentation); one manifest commit for
    /// all of them. `progress` is called after each store is written.
    pub fn compact_with_progress(
        &self,
        opts: &CompactOptions,
        progress: &mut dyn FnMut(&StoreCompaction),
    ) -> Result<CompactReport, TableError> {
        let lock = self.lock()?;
        let mut garbage_removed = self.collect_garbage(&lock)?;
        let m = self.manifest()?;
        distributed::check_scope(&m, opts)?;
        let plans = self.plan(&m, opts)?;
        if plans.is_empty() {
            return Ok(CompactReport {
                version: None,
                stores: Vec::new(),
                garbage_removed,
            });
        }
        let staging = self
            .dir()
            .join(STAGING_DIR)
            .join(format!("compact-{}", unique_hex()));
        let result = self.write_all(&m, &plans, opts, &staging, progress);
        let (staged, stores) = match result {
            Ok(x) => x,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(e);
            }
        };
        let placed = match self.place(&staged) {
            Ok(p) => p,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(e);
            }
        };
        let next = next_manifest(&m, &plans, &staged);
        let committed = self.commit(&next, &placed);
        let _ = std::fs::remove_dir_all(&staging);
        committed?;
        garbage_removed += self.collect_garbage(&lock)?;
        Ok(CompactReport {
            version: Some(next.version),
            stores,
            garbage_removed,
        })
    }

    /// [`Table::compact_with_progress`] without progress reports.
    pub fn compact(&self, opts: CompactOptions) -> Result<CompactReport, TableError> {
        self.compact_with_progress(&opts, &mut |_| {})
    }

    /// Renames staged outputs into `data/<region>/<family>/` and fsyncs the directories. On
    /// failure the outputs already placed are removed.
    fn place(&self, staged: &[Staged]) -> Result<Vec<PathBuf>, TableError> {
        let mut placed = Vec::new();
        let result = self.place_into(staged, &mut placed);
        if result.is_err() {
            for p in &placed {
                let _ = std::fs::remove_file(p);
            }
        }
        result.map(|()| placed)
    }

    /// [`Table::place`]; paths are pushed to `placed` as they are made.
    fn place_into(&self, staged: &[Staged], placed: &mut Vec<PathBuf>) -> Result<(), TableError> {
        let fs = self.fs();
        let mut synced = std::collections::BTreeSet::new();
        for s in staged {
            let fam_dir = self
                .dir()
                .join(DATA_DIR)
                .join(&s.entry.region)
                .join(&s.entry.family);
            fs.create_dir_all(&fam_dir)
                .map_err(|e| TableError::io(&fam_dir, e))?;
            let dest = fam_dir.join(&s.entry.name);
            fs.rename(&s.path, &dest)
                .map_err(|e| TableError::io(&dest, e))?;
            placed.push(dest);
            synced.insert(fam_dir);
        }
        let mut parents = std::collections::BTreeSet::new();
        for d in &synced {
            fs.sync_dir(d).map_err(|e| TableError::io(d, e))?;
            if let Some(p) = d.parent() {
                parents.insert(p.to_path_buf());
            }
        }
        for d in parents {
            fs.sync_dir(&d).map_err(|e| TableError::io(&d, e))?;
        }
        let data = self.dir().join(DATA_DIR);
        if !staged.is_empty() {
            fs.sync_dir(&data).map_err(|e| TableError::io(&data, e))?;
        }
        Ok(())
    }
}

/// The manifest after the swap: each plan's inputs removed, its output (if any) at the place
/// of its oldest input, so that per store the files stay in sequence-id order.
fn next_manifest(m: &Manifest, plans: &[Plan], staged: &[Staged]) -> Manifest {
    let mut next = m.clone();
    next.version += 1;
    let mut replace: std::collections::HashMap<usize, Option<StoreFileEntry>> =
        std::collections::HashMap::new();
    for (pi, plan) in plans.iter().enumerate() {
        let out = staged
            .iter()
            .find(|s| s.plan_index == pi)
            .map(|s| s.entry.clone());
        let first = plan.inputs.iter().copied().min();
        for &i in &plan.inputs {
            replace.insert(i, None);
        }
        if let Some(f) = first {
            replace.insert(f, out);
        }
    }
    next.files = m
        .files
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match replace.get(&i) {
            None => Some(e.clone()),
            Some(out) => out.clone(),
        })
        .collect();
    next
}
