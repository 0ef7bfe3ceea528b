//! The sort buffer's groups (`formats/import.md` §"Sort and spill"): consecutive records of
//! one family and row, in order, that the buffer sorts as one entry by a prefix of their key,
//! and the cursor that reads sorted groups out as sorted records without duplicates.

use std::cmp::Ordering;

use rayon::slice::ParallelSliceMut;

use hfkit_format::bytes::{compare_bytes, equal_bytes};

use super::record::{compare, decode, record_len};

/// A run of consecutive records in the arena with one family and row, in order.
#[derive(Clone, Copy, Debug)]
pub(super) struct Group {
    pub(super) key: [u64; 3],
    /// Arena offset of the first record.
    pub(super) at: usize,
    /// Records in the group.
    pub(super) count: u32,
}

/// Reads sorted groups out as sorted records (arena offsets), without duplicates. Only groups
/// that share a family and row can hold cells with the same coordinates (a group's own cells
/// strictly increase): their cells are merged by the full order, and of equal coordinates
/// only the first (the highest ordinal, the last added) is kept.
#[derive(Default)]
pub(super) struct GroupCursor {
    /// Next group.
    pos: usize,
    /// Next record of the current single group, and how many are left.
    within: usize,
    left: u32,
    /// Records of several groups with one family and row, fully sorted.
    merged: Vec<usize>,
    merged_pos: usize,
    /// Records dropped as duplicates so far.
    pub(super) duplicates: u64,
}

impl GroupCursor {
    /// Offset of the next record in order, if any.
    pub(super) fn next(&mut self, arena: &[u8], groups: &[Group]) -> Option<usize> {
        if self.merged_pos < self.merged.len() {
            self.merged_pos += 1;
            return Some(self.merged[self.merged_pos - 1]);
        }
        if self.left == 0 {
            if let Some(ahead) = groups.get(self.pos + PREFETCH_AHEAD) {
                prefetch_group(arena, ahead);
            }
            let g = *groups.get(self.pos)?;
            let mut end = self.pos + 1;
            while end < groups.len() && same_family_row(arena, &groups[end], &g) {
                end += 1;
            }
            if end == self.pos + 1 {
                self.within = g.at;
                self.left = g.count;
            } else {
                self.merged.clear();
                self.merged_pos = 0;
                for h in &groups[self.pos..end] {
                    let mut at = h.at;
                    for _ in 0..h.count {
                        self.merged.push(at);
                        at += record_len(&arena[at..]).unwrap_or(0);
                    }
                }
                self.merged.sort_unstable_by(|&x, &y| {
                    match (decode(&arena[x..]), decode(&arena[y..])) {
                        (Some(a), Some(b)) => compare(&a, &b),
                        (a, b) => {
                            debug_assert!(
                                a.is_some() && b.is_some(),
                                "every record the sorter wrote decodes"
                            );
                            Ordering::Equal
                        }
                    }
                });
                let before = self.merged.len();
                // `dedup_by` drops the later of two neighbours: the lower ordinal.
                self.merged.dedup_by(|&mut x, &mut kept| {
                    match (decode(&arena[x..]), decode(&arena[kept..])) {
                        (Some(a), Some(b)) => a.same_coordinates(&b),
                        (a, b) => {
                            debug_assert!(
                                a.is_some() && b.is_some(),
                                "every record the sorter wrote decodes"
                            );
                            false
                        }
                    }
                });
                self.duplicates += (before - self.merged.len()) as u64;
                self.pos = end;
                return self.next(arena, groups);
            }
            self.pos += 1;
        }
        let at = self.within;
        self.within += record_len(&arena[at..]).unwrap_or(0);
        self.left -= 1;
        Some(at)
    }
}

/// How many groups ahead of the one being read out [`GroupCursor`] asks for the bytes of.
const PREFETCH_AHEAD: usize = 6;

/// Asks the CPU to start loading a group's bytes (64 a record, at most 2 KiB, within the
/// arena). Sorted groups lie scattered over the arena, so reading them out in order would
/// otherwise wait on memory at each group (a tenth of a shuffled import's CPU time).
#[inline(always)]
fn prefetch_group(arena: &[u8], g: &Group) {
    #[cfg(target_arch = "x86_64")]
    {
        let end = arena
            .len()
            .min(g.at.saturating_add((g.count as usize).saturating_mul(64).min(2048)));
        let mut at = g.at;
        while at < end {
            // SAFETY: a prefetch is a hint: it never faults, reads nothing into the program
            // and changes no memory; the address lies inside `arena` besides.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    arena.as_ptr().wrapping_add(at).cast(),
                );
            }
            at += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (arena, g);
}

/// Whether two groups hold the same family and row.
fn same_family_row(arena: &[u8], a: &Group, b: &Group) -> bool {
    a.key == b.key
        && match (decode(&arena[a.at..]), decode(&arena[b.at..])) {
            (Some(x), Some(y)) => x.family == y.family && equal_bytes(x.row, y.row),
            _ => false,
        }
}

/// Sorts a buffer's groups (see the module documentation), on rayon's pool or on this thread.
pub(super) fn sort_groups(arena: &[u8], entries: &mut [Group], parallel: bool) {
    let order = |x: &Group, y: &Group| {
        x.key
            .cmp(&y.key)
            .then_with(|| match (decode(&arena[x.at..]), decode(&arena[y.at..])) {
                (Some(a), Some(b)) => a
                    .family
                    .cmp(&b.family)
                    .then_with(|| compare_bytes(a.row, b.row)),
                (a, b) => {
                    debug_assert!(
                        a.is_some() && b.is_some(),
                        "every record the sorter wrote decodes"
                    );
                    Ordering::Equal
                }
            })
    };
    if parallel {
        entries.par_sort_unstable_by(order);
    } else {
        entries.sort_unstable_by(order);
    }
}
