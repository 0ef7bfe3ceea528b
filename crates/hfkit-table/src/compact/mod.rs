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
//! | `options` | what to compact: the options and HBase's minor-selection policy | §"Steps and crash safety", §"Selection" |
//! | `report` | the reports: what happened to each store, and to the run | §"Steps and crash safety" |
//! | `place` | placing the outputs and the manifest for the one commit, each input replaced by its output | §"Steps and crash safety" |
//! | this module | the steps in one process ([`Table::compact`]), and a region's stores opened for reading | §"Steps and crash safety" |
//! | `distributed` | the same steps cut into a plan, a task per store and a commit, for a cluster | `python.md` §"Compaction on Spark" |

mod distributed;
mod options;
mod place;
mod report;
mod rewrite;
mod select;

use super::directory::{unique_hex, Table, STAGING_DIR};
use super::manifest::Manifest;
use super::read::family_read_settings;
use super::TableError;
use hfkit_read::Store;
use std::sync::Arc;

pub use crate::alter::FamilyChanges;
pub use distributed::{CompactionPlan, StoreOutput, StoreTask};
pub use options::{CompactOptions, CompactionPolicy};
pub use report::{CompactReport, StoreCompaction};
pub use rewrite::major_compact_store;
pub use select::{select_minor, Candidate};

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
        let next = place::next_manifest(&m, &plans, &staged);
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
}
