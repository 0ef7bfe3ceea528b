//! What a compaction did: [`StoreCompaction`] for each store and [`CompactReport`] for the run.
//! Spec: `formats/table.md` §"Compaction", §"Steps and crash safety".

use serde::Serialize;

use crate::manifest::StoreFileEntry;

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
