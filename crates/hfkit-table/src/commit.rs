//! The commit step every table write ends with: publish the next manifest version, and on a
//! failure either report that the commit happened but may not be durable, or undo what the
//! write placed. Spec: `formats/table.md` §"Commit protocol".
//!
//! ```text
//! publish(next)        manifest file, fsync, CURRENT.tmp, rename over CURRENT, fsync
//!   ok                 → committed
//!   failed, CURRENT names next.version
//!                      → NotDurable (the change is visible; its placed files must stay)
//!   failed otherwise   → the placed files are removed; the table is as it was
//! ```
//!
//! Attach, compaction, alter and snapshot restore all commit through [`Table::commit`]; it is
//! the code that makes them crash-safe, written once.

use std::path::PathBuf;

use super::directory::Table;
use super::manifest::{self, Manifest};
use super::TableError;

impl Table {
    /// Publishes `next` as the live manifest. `placed` are the files this write put under
    /// `data/` for it (none for alter and restore): on a failure before the commit point they
    /// are removed, so the table is exactly as it was; after it (`CURRENT` names
    /// `next.version`), the error is [`TableError::NotDurable`] and they stay.
    /// A stop asked for before (SIGINT, SIGTERM: [`crate::check_interrupt`]) commits nothing:
    /// the placed files are removed and the error is [`TableError::Interrupted`].
    pub fn commit(&self, next: &Manifest, placed: &[PathBuf]) -> Result<(), TableError> {
        if let Err(e) = crate::check_interrupt() {
            for p in placed {
                let _ = std::fs::remove_file(p);
            }
            return Err(e);
        }
        let Err(e) = manifest::publish(self.fs(), self.dir(), next) else {
            return Ok(());
        };
        if self
            .manifest()
            .is_ok_and(|live| live.version == next.version)
        {
            return Err(TableError::NotDurable {
                version: next.version,
                detail: e.to_string(),
            });
        }
        for p in placed {
            let _ = std::fs::remove_file(p);
        }
        Err(e)
    }
}
