//! [`CellStats`]: what the file info says of the cells written, added to cell by cell (by
//! `append`, and by the row and record paths for a run of cells). Spec: `formats/hfile.md`
//! §"FileInfo".

use crate::cell::{CellRef, CellType};
use crate::fileinfo::TimeRangeTracker;

/// What the file info says of the cells written (HBase's key and value lengths, biggest cell,
/// MAX_MEMSTORE_TS, MAX_TAGS_LEN, TIMERANGE, EARLIEST_PUT_TS), added to cell by cell. A copy,
/// so the row path can keep it in a local for a run of cells.
#[derive(Clone, Copy, Debug)]
pub(super) struct CellStats {
    pub(super) total_key_len: u64,
    pub(super) total_value_len: u64,
    pub(super) biggest_len: i64,
    pub(super) max_seq_id: u64,
    pub(super) max_tags_len: usize,
    pub(super) time_range: TimeRangeTracker,
    pub(super) earliest_put: i64,
}

impl Default for CellStats {
    fn default() -> Self {
        CellStats {
            total_key_len: 0,
            total_value_len: 0,
            biggest_len: 0,
            max_seq_id: 0,
            max_tags_len: 0,
            time_range: TimeRangeTracker::default(),
            earliest_put: i64::MAX,
        }
    }
}

impl CellStats {
    /// Adds a cell whose key is `key_len` bytes; true when it is the biggest cell so far.
    #[inline(always)]
    pub(super) fn note(&mut self, cell: &CellRef<'_>, key_len: usize) -> bool {
        self.total_key_len += key_len as u64;
        self.total_value_len += cell.value.len() as u64;
        let tags_part = if cell.tags.is_empty() {
            0
        } else {
            2 + cell.tags.len()
        };
        let size = (4 + 8 + key_len + cell.value.len() + tags_part) as i64;
        let biggest = self.biggest_len < size;
        if biggest {
            self.biggest_len = size;
        }
        self.max_seq_id = self.max_seq_id.max(cell.seq_id);
        self.max_tags_len = self.max_tags_len.max(cell.tags.len());
        if cell.cell_type == CellType::Put {
            self.earliest_put = self.earliest_put.min(cell.timestamp);
        }
        self.time_range.include(cell.timestamp, cell.cell_type);
        biggest
    }
}
