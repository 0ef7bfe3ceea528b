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
//!
//! On an x86-64 CPU with AVX-512 (BW and VL, detected once at run time) the loop is compiled
//! a second time with each qualifier and value of up to 32 bytes copied by one masked load and
//! one masked store: no branch on the length, which varies from cell to cell and which the
//! portable copy ([`copy_short`]) must branch on (1.0-1.4 ns of a lineitem cell's 61.5,
//! `append_probe`). Neither the standard library nor a crate offers a short copy without a
//! length branch, hence the intrinsics. Both versions write the same bytes (tested).

use std::cmp::Ordering;

use crate::bytes::copy_short;
use crate::cell::{CellRef, MAX_KEY_LEN, MAX_VALUE_LEN};

use super::key::order_in_row;
use super::stats::CellStats;

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
    #[cfg(target_arch = "x86_64")]
    if masked::available() {
        // SAFETY: the CPU has the features (tested just above).
        return unsafe { masked::write_run::<TAGS, MVCC>(run, prev, cells, stats) };
    }
    run_body::<TAGS, MVCC, false>(run, prev, cells, stats)
}

/// The loop with AVX-512 masked copies (see the module doc).
#[cfg(target_arch = "x86_64")]
mod masked {
    use super::*;
    use std::arch::x86_64::*;
    use std::sync::OnceLock;

    /// Whether this CPU has the instructions [`write_run`] uses (tested once).
    pub(super) fn available() -> bool {
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            std::is_x86_feature_detected!("avx512bw") && std::is_x86_feature_detected!("avx512vl")
        })
    }

    /// [`super::write_run`] compiled for AVX-512 BW/VL.
    ///
    /// # Safety
    ///
    /// The CPU must have the features ([`available`]).
    #[target_feature(enable = "avx512bw,avx512vl,avx2")]
    pub(super) unsafe fn write_run<const TAGS: bool, const MVCC: bool>(
        run: Run<'_>,
        prev: &CellRef<'_>,
        cells: &[CellRef<'_>],
        stats: &mut CellStats,
    ) -> RunDone {
        run_body::<TAGS, MVCC, true>(run, prev, cells, stats)
    }

    /// Copies `src` to `dst`: up to 32 bytes with one masked load and one masked store
    /// (the bytes outside the mask are neither read nor written, and never fault), longer
    /// slices by [`copy_short`].
    ///
    /// # Safety
    ///
    /// As [`copy_short`]'s, and the CPU must have AVX-512 BW and VL ([`available`]).
    #[inline(always)]
    pub(super) unsafe fn copy_masked(dst: *mut u8, src: &[u8]) {
        let n = src.len();
        if n > 32 {
            // SAFETY: the caller's contract.
            return unsafe { copy_short(dst, src) };
        }
        let mask: u32 = ((1u64 << n) - 1) as u32;
        // SAFETY: the mask covers `src`'s n bytes and `dst`'s n bytes, which the caller
        // makes valid; the CPU has the instructions (the caller's contract).
        unsafe {
            let v = _mm256_maskz_loadu_epi8(mask, src.as_ptr().cast());
            _mm256_mask_storeu_epi8(dst.cast(), mask, v);
        }
    }
}

/// A record's copy: masked ([`masked::copy_masked`]) or portable ([`copy_short`]).
///
/// # Safety
///
/// As [`copy_short`]'s; with `MASKED`, the CPU must have AVX-512 BW and VL.
#[inline(always)]
unsafe fn copy_any<const MASKED: bool>(dst: *mut u8, src: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if MASKED {
        // SAFETY: the caller's contract.
        return unsafe { masked::copy_masked(dst, src) };
    }
    // SAFETY: the caller's contract.
    unsafe { copy_short(dst, src) }
}

/// [`write_run`]'s loop; `MASKED` only where the CPU has AVX-512 BW and VL (the masked
/// instantiation is called by [`masked::write_run`] and by the tests, after
/// [`masked::available`]).
#[inline(always)]
fn run_body<const TAGS: bool, const MVCC: bool, const MASKED: bool>(
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
        // a one-byte sequence id (tested above). `MASKED` is set only where the CPU has the
        // masked copies' instructions (see `run_body`).
        unsafe {
            let d = payload.as_mut_ptr().add(len);
            d.cast::<[u8; 4]>()
                .write_unaligned(((head_len + q.len() + 9) as u32).to_be_bytes());
            d.add(4)
                .cast::<[u8; 4]>()
                .write_unaligned((v.len() as u32).to_be_bytes());
            copy_short(d.add(8), head);
            let d = d.add(8 + head_len);
            copy_any::<MASKED>(d, q);
            let d = d.add(q.len());
            d.cast::<[u8; 8]>()
                .write_unaligned(cell.timestamp.to_be_bytes());
            *d.add(8) = cell.cell_type.code();
            let d = d.add(9);
            copy_any::<MASKED>(d, v);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::CellType;

    /// The masked-copy instantiation (where the CPU has it) writes the same records, stops at
    /// the same cell and counts the same statistics as the portable one, for qualifiers and
    /// values of every length from 0 to 40 bytes (across the 32-byte masked limit) and each
    /// tags/MVCC layout.
    #[test]
    fn masked_and_portable_copies_write_the_same_run() {
        #[cfg(target_arch = "x86_64")]
        if !masked::available() {
            return;
        }
        let (row, family) = (b"row-0001".as_slice(), b"f".as_slice());
        let head = [&[0u8, 8][..], row, &[1], family].concat();
        let qualifiers: Vec<Vec<u8>> = (0..=40u8).map(|n| vec![b'q'; n as usize]).collect();
        let values: Vec<Vec<u8>> = (0..=40u8).map(|n| (0..n).rev().collect()).collect();
        // Qualifiers of growing length sort in order; the last cell repeats one (out of order).
        let mut cells: Vec<CellRef<'_>> = (0..=40)
            .map(|i| CellRef {
                row,
                family,
                qualifier: &qualifiers[i],
                timestamp: 1_700_000_000_000 + i as i64,
                cell_type: CellType::Put,
                value: &values[40 - i],
                tags: &[],
                seq_id: i as u64,
            })
            .collect();
        cells.push(cells[3]);
        let prev = CellRef {
            qualifier: b"",
            ..cells[0]
        };
        fn run_with<const TAGS: bool, const MVCC: bool, const MASKED: bool>(
            head: &[u8],
            prev: &CellRef<'_>,
            cells: &[CellRef<'_>],
        ) -> (Vec<u8>, usize, RunEnd, usize, usize, Option<usize>, u64) {
            let mut payload = b"earlier records".to_vec();
            let mut stats = CellStats::default();
            let run = Run {
                payload: &mut payload,
                head,
                row: cells[0].row,
                family: cells[0].family,
                block_bytes: 15,
                block_size: 1 << 20,
            };
            let d = run_body::<TAGS, MVCC, MASKED>(run, prev, &cells[1..], &mut stats);
            let s = stats.total_key_len + stats.total_value_len;
            (
                payload,
                d.cells,
                d.end,
                d.last_at,
                d.block_bytes,
                d.biggest,
                s,
            )
        }
        let portable = [
            run_with::<false, false, false>(&head, &prev, &cells),
            run_with::<false, true, false>(&head, &prev, &cells),
            run_with::<true, false, false>(&head, &prev, &cells),
            run_with::<true, true, false>(&head, &prev, &cells),
        ];
        // The whole run but the repeated cell, refused as out of order.
        assert_eq!(portable[0].1, 40);
        assert_eq!(portable[0].2, RunEnd::OutOfOrder);
        #[cfg(target_arch = "x86_64")]
        {
            let masked = [
                run_with::<false, false, true>(&head, &prev, &cells),
                run_with::<false, true, true>(&head, &prev, &cells),
                run_with::<true, false, true>(&head, &prev, &cells),
                run_with::<true, true, true>(&head, &prev, &cells),
            ];
            assert_eq!(masked, portable);
        }
    }
}
