//! The writer's row loop: a run of one row's cells written into the open NONE data block
//! (`formats/hfile.md` §"Data blocks"), for [`append_row`](super::HFileWriter::append_row).
//!
//! A bulk import hands the writer rows of cells that share the row and family slices, with
//! no tags and sequence id 0. For those the loop does per cell only what no earlier step
//! did: the length limits of the qualifier and value, the order against the cell before,
//! the block-size test and the record's stores. Everything about the file's tags and MVCC
//! layout is fixed per instantiation (two const parameters), the record is stored through
//! one pointer with one capacity test, and the file's statistics are counted in the same
//! pass (splitting checks, stores and statistics into three passes was measured slower). A
//! cell that is not of that kind ends the run; the caller's per-cell path takes it.

use std::cmp::Ordering;

use crate::bytes::copy_short;
use crate::cell::{CellRef, MAX_KEY_LEN, MAX_VALUE_LEN};

use super::{order_in_row, CellStats};

/// Why [`write_run`] stopped before the end of its cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RunEnd {
    /// Every cell was written.
    Done,
    /// The cell at the returned count is not a plain cell of the row (other row or family
    /// slice, tags, a sequence id over 127 in an MVCC file, a delete-family cell, a length
    /// over the limits), or it needs a block cut first: the per-cell path decides.
    Handover,
    /// The cell at the returned count sorts before the one written before it.
    OutOfOrder,
}

/// What [`write_run`] works with: the open block and the run's fixed parts.
pub(super) struct Run<'a> {
    /// The open block's payload (NONE records).
    pub(super) payload: &'a mut Vec<u8>,
    /// The key's start shared by the run: `u16 row length | row | u8 family length | family`.
    pub(super) head: &'a [u8],
    /// The row and family slices every cell of the run must have (compared by address).
    pub(super) row: &'a [u8],
    pub(super) family: &'a [u8],
    /// Bytes in the open block, and the size at which it is cut.
    pub(super) block_bytes: usize,
    pub(super) block_size: usize,
}

/// What [`write_run`] did.
pub(super) struct RunDone {
    /// Cells written, from the start of `cells`.
    pub(super) cells: usize,
    /// Why it stopped.
    pub(super) end: RunEnd,
    /// The payload offset of the last record written (if any).
    pub(super) last_at: usize,
    /// The block's bytes after the records written.
    pub(super) block_bytes: usize,
    /// The index in `cells` of the cell that became the file's biggest, if one did.
    pub(super) biggest: Option<usize>,
}

/// Writes `cells` from the start while they are plain cells of the run's row, in order
/// after `prev` (the cell written before them) and need no block cut, and counts them into
/// `stats`.
#[inline(never)]
pub(super) fn write_run<const TAGS: bool, const MVCC: bool>(
    run: Run<'_>,
    prev: &CellRef<'_>,
    cells: &[CellRef<'_>],
    stats: &mut CellStats,
) -> RunDone {
    let Run {
        payload,
        head,
        row,
        family,
        mut block_bytes,
        block_size,
    } = run;
    let head_len = head.len();
    // A qualifier up to this length keeps the key within MAX_KEY_LEN.
    let qualifier_max = MAX_KEY_LEN.saturating_sub(head_len + 9);
    let fixed = 8 + head_len + 9 + if TAGS { 2 } else { 0 } + usize::from(MVCC);
    let mut len = payload.len();
    let mut last_at = len;
    let mut last = prev;
    let mut end = RunEnd::Done;
    let mut biggest = None;
    let mut counted = *stats;
    let mut count = 0usize;
    for (i, cell) in cells.iter().enumerate() {
        let (q, v) = (cell.qualifier, cell.value);
        let plain = std::ptr::eq(cell.row, row)
            & std::ptr::eq(cell.family, family)
            & cell.tags.is_empty()
            & (!MVCC | (cell.seq_id <= 127))
            & (q.len() <= qualifier_max)
            & (v.len() <= MAX_VALUE_LEN)
            & !cell.cell_type.is_delete_family_kind();
        if !plain && !plain_after_all::<MVCC>(cell, row, family, qualifier_max) {
            end = RunEnd::Handover;
            break;
        }
        match order_in_row(last, cell) {
            Ordering::Greater => {
                end = RunEnd::OutOfOrder;
                break;
            }
            Ordering::Less if block_bytes >= block_size => {
                end = RunEnd::Handover;
                break;
            }
            _ => {}
        }
        let record = fixed + q.len() + v.len();
        if payload.capacity() - len < record {
            // SAFETY: `len` bytes are initialised (the records written so far).
            unsafe { payload.set_len(len) };
            payload.reserve(record);
        }
        // SAFETY: `payload` has room for `record` bytes after `len` (tested just above). The
        // stores write 4 + 4 + head + qualifier + 8 + 1 + value (+ 2) (+ 1) bytes, which is
        // `record`, in order and without gaps, reading only the cell's slices and `head`,
        // which cannot overlap the payload's spare capacity. The cell has no tags and (MVCC)
        // a one-byte sequence id (tested above).
        unsafe {
            let d = payload.as_mut_ptr().add(len);
            d.cast::<[u8; 4]>()
                .write_unaligned(((head_len + q.len() + 9) as u32).to_be_bytes());
            d.add(4)
                .cast::<[u8; 4]>()
                .write_unaligned((v.len() as u32).to_be_bytes());
            copy_short(d.add(8), head);
            let d = d.add(8 + head_len);
            copy_short(d, q);
            let d = d.add(q.len());
            d.cast::<[u8; 8]>()
                .write_unaligned(cell.timestamp.to_be_bytes());
            *d.add(8) = cell.cell_type.code();
            let d = d.add(9);
            copy_short(d, v);
            let d = d.add(v.len());
            if TAGS {
                d.cast::<[u8; 2]>().write_unaligned([0, 0]);
            }
            if MVCC {
                // put_vlong's one-byte form.
                *d.add(if TAGS { 2 } else { 0 }) = cell.seq_id as u8;
            }
        }
        if counted.note(cell, head_len + q.len() + 9) {
            biggest = Some(i);
        }
        last_at = len;
        len += record;
        block_bytes += record;
        last = cell;
        count = i + 1;
    }
    // SAFETY: `len` bytes are initialised: the payload's and the records written above.
    unsafe { payload.set_len(len) };
    *stats = counted;
    RunDone {
        cells: count,
        end,
        last_at,
        block_bytes,
        biggest,
    }
}

/// The plain test of [`write_run`] with the row and family compared by bytes rather than by
/// address (a caller whose cells carry copies of the row).
#[cold]
fn plain_after_all<const MVCC: bool>(
    cell: &CellRef<'_>,
    row: &[u8],
    family: &[u8],
    qualifier_max: usize,
) -> bool {
    cell.row == row
        && cell.family == family
        && cell.tags.is_empty()
        && (!MVCC || cell.seq_id <= 127)
        && cell.qualifier.len() <= qualifier_max
        && cell.value.len() <= MAX_VALUE_LEN
        && !cell.cell_type.is_delete_family_kind()
}
