//! The k-way merge of the sorted runs and the last buffer (`formats/import.md` §"Sort and
//! spill"), and [`SortedCells`]: the sorter's output, in order, with duplicates dropped.

use std::cmp::Ordering;
use std::path::PathBuf;

use hfkit_format::bytes::equal_bytes;

use super::buffer::{Group, GroupCursor};
use super::error::SortError;
use super::record::{compare_keys, decode, Head, SortedCell};
use super::run::RunReader;

/// One sorted input of the merge: a spilled run, or the last buffer, still in memory.
pub(super) enum RunSource {
    File(RunReader),
    Memory {
        arena: Vec<u8>,
        entries: Vec<Group>,
        cursor: GroupCursor,
        head: Option<Head>,
    },
}

impl RunSource {
    /// The head record, if the source is not exhausted.
    fn head(&self) -> Option<SortedCell<'_>> {
        match self {
            RunSource::File(r) => r.head.map(|h| h.cell(&r.buf)),
            RunSource::Memory { arena, head, .. } => head.map(|h| h.cell(arena)),
        }
    }

    #[inline]
    fn head_fields(&self) -> Option<(&Head, &[u8])> {
        match self {
            RunSource::File(r) => r.head.as_ref().map(|h| (h, &r.buf[..])),
            RunSource::Memory { arena, head, .. } => head.as_ref().map(|h| (h, &arena[..])),
        }
    }

    /// Moves to the next record; false when exhausted.
    fn advance(&mut self) -> Result<bool, SortError> {
        match self {
            RunSource::File(r) => r.advance(),
            RunSource::Memory {
                arena,
                entries,
                cursor,
                head,
            } => {
                *head = match cursor.next(arena, entries) {
                    None => None,
                    Some(at) => Some(Head::parse(arena, at).ok_or_else(|| SortError::Corrupt {
                        path: PathBuf::from("(sort buffer)"),
                        detail: format!("bad record at {at}"),
                    })?),
                };
                Ok(head.is_some())
            }
        }
    }
}

/// Whether source `a`'s head comes before source `b`'s.
fn less(sources: &[RunSource], a: usize, b: usize) -> bool {
    let (Some((x, xb)), Some((y, yb))) = (sources[a].head_fields(), sources[b].head_fields())
    else {
        return false;
    };
    compare_keys(x.key(xb), y.key(yb)) == Ordering::Less
}

/// A k-way merge: `current` is the source holding the smallest head; `heap` is a binary
/// min-heap of the other non-exhausted sources, by head. After the current head is taken,
/// its source advances and stays current while its head is still below the heap's top (one
/// comparison per record, the usual case when runs hold long disjoint stretches); otherwise it
/// trades places with the top.
pub(super) struct Merge {
    sources: Vec<RunSource>,
    heap: Vec<usize>,
    current: Option<usize>,
}

impl Merge {
    /// A merge of `sources`: loads every source's first record and picks the smallest.
    pub(super) fn start(sources: Vec<RunSource>) -> Result<Merge, SortError> {
        let mut merge = Merge {
            sources,
            heap: Vec::new(),
            current: None,
        };
        for i in 0..merge.sources.len() {
            if merge.sources[i].advance()? {
                merge.push(i);
            }
        }
        merge.current = merge.pop();
        Ok(merge)
    }

    /// The smallest head.
    pub(super) fn head(&self) -> Option<SortedCell<'_>> {
        self.sources[self.current?].head()
    }

    /// Drops the smallest head and finds the next one.
    pub(super) fn advance(&mut self) -> Result<(), SortError> {
        let Some(cur) = self.current else {
            return Ok(());
        };
        if !self.sources[cur].advance()? {
            self.current = self.pop();
        } else if self
            .heap
            .first()
            .is_some_and(|&top| less(&self.sources, top, cur))
        {
            // The top goes current; `cur` takes its place at the root and sinks.
            self.current = Some(self.heap[0]);
            self.heap[0] = cur;
            self.sift_down(0);
        }
        Ok(())
    }

    fn push(&mut self, i: usize) {
        self.heap.push(i);
        let sources = &self.sources;
        let last = self.heap.len() - 1;
        hfkit_format::heap::sift_up(&mut self.heap, last, |a, b| less(sources, a, b));
    }

    fn pop(&mut self) -> Option<usize> {
        if self.heap.is_empty() {
            return None;
        }
        let top = self.heap.swap_remove(0);
        self.sift_down(0);
        Some(top)
    }

    fn sift_down(&mut self, k: usize) {
        let sources = &self.sources;
        hfkit_format::heap::sift_down(&mut self.heap, k, |a, b| less(sources, a, b));
    }
}

pub(super) enum Source {
    Memory {
        arena: Vec<u8>,
        entries: Vec<Group>,
        cursor: GroupCursor,
    },
    Runs(Merge),
}

/// The sorted, de-duplicated cells.
pub struct SortedCells {
    pub(super) source: Source,
    /// Coordinates of the record returned last (merging runs).
    pub(super) prev: Coordinates,
    pub(super) have_current: bool,
    pub(super) duplicates: u64,
    /// The run files still to merge (removed when dropped).
    pub(super) runs: Vec<PathBuf>,
    pub(super) spilled_runs: usize,
    pub(super) spilled_bytes: u64,
}

impl SortedCells {
    /// Duplicates dropped so far (equal family, row, qualifier and timestamp; last added wins).
    pub fn duplicates(&self) -> u64 {
        // Those of the buffer still in memory are counted by its cursor.
        let in_memory = match &self.source {
            Source::Memory { cursor, .. } => cursor.duplicates,
            Source::Runs(merge) => merge
                .sources
                .iter()
                .map(|s| match s {
                    RunSource::Memory { cursor, .. } => cursor.duplicates,
                    RunSource::File(_) => 0,
                })
                .sum(),
        };
        self.duplicates + in_memory
    }

    /// Buffers spilled to disk as runs.
    pub fn runs(&self) -> usize {
        self.spilled_runs
    }

    /// Bytes written to spill files (merging runs into fewer writes them again).
    pub fn spilled_bytes(&self) -> u64 {
        self.spilled_bytes
    }

    /// [`next`](Self::next) for an in-memory sort: records are read in place, not copied (the
    /// cursor has dropped the duplicates).
    fn next_in_memory(&mut self) -> Option<SortedCell<'_>> {
        let Source::Memory {
            arena,
            entries,
            cursor,
        } = &mut self.source
        else {
            return None;
        };
        let off = cursor.next(arena, entries)?;
        decode(&arena[off..])
    }

    /// The next cell, skipping duplicates.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<SortedCell<'_>>, SortError> {
        if matches!(self.source, Source::Memory { .. }) {
            return Ok(self.next_in_memory());
        }
        // From runs: `prev` holds the coordinates of the record returned before, and the
        // records with them that follow (lower ordinals) are skipped.
        let Source::Runs(merge) = &mut self.source else {
            return Ok(None);
        };
        if self.have_current {
            merge.advance()?;
        }
        loop {
            let dup = match merge.head() {
                None => {
                    self.have_current = false;
                    return Ok(None);
                }
                Some(c) => self.have_current && self.prev.is(&c),
            };
            if !dup {
                break;
            }
            self.duplicates += 1;
            merge.advance()?;
        }
        self.have_current = true;
        let c = merge.head();
        if let Some(c) = &c {
            self.prev.set(c);
        }
        Ok(c)
    }
}

/// The coordinates (family, row, qualifier, timestamp) of a record, kept while the record's
/// bytes are reused.
#[derive(Default)]
pub(super) struct Coordinates {
    family: u8,
    timestamp: i64,
    cell_type: u8,
    row_len: usize,
    /// Row, then qualifier.
    key: Vec<u8>,
}

impl Coordinates {
    fn set(&mut self, c: &SortedCell<'_>) {
        self.family = c.family;
        self.timestamp = c.timestamp;
        self.cell_type = c.cell_type.code();
        self.row_len = c.row.len();
        self.key.clear();
        self.key.extend_from_slice(c.row);
        self.key.extend_from_slice(c.qualifier);
    }

    /// [`SortedCell::same_coordinates`] against the kept copy.
    fn is(&self, c: &SortedCell<'_>) -> bool {
        self.family == c.family
            && self.timestamp == c.timestamp
            && self.cell_type == c.cell_type.code()
            && self.key.len() == c.row.len() + c.qualifier.len()
            && equal_bytes(&self.key[..self.row_len], c.row)
            && equal_bytes(&self.key[self.row_len..], c.qualifier)
    }
}

impl Drop for SortedCells {
    fn drop(&mut self) {
        for p in &self.runs {
            let _ = std::fs::remove_file(p);
        }
    }
}
