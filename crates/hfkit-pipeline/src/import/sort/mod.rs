//! Sorting cells in bounded memory: an in-memory buffer that is sorted and spilled to disk as a
//! run when it reaches its budget, and a k-way merge of the runs. Spec: `formats/import.md`
//! §"Sort and spill".
//!
//! ```text
//! record (the buffer's; run files hold each written against the one before it, `run`):
//!   u8 family | u16 rowLen | u32 qualifierLen | u32 valueLen | i64 timestamp | u64 ordinal
//!   | u8 type | u16 tagsLen | row | qualifier | value | tags
//! order: family index, row, qualifier (unsigned bytes), timestamp desc, type desc (HBase's:
//!        DeleteFamily, DeleteColumn, Delete, Put), ordinal desc
//! ```
//!
//! `ordinal` is the input order. Cells equal in (family, row, qualifier, timestamp, type) are
//! duplicates: the one added last (highest ordinal) wins, the others are dropped and counted.
//! The buffer sorts *groups*, not cells: consecutive adds with the same family and row whose
//! (qualifier, timestamp desc) strictly increase extend one group (an import adds a record's
//! cells that way), so a 16-column record is one sort entry. Groups are ordered by a 24-byte
//! key (family index and the first 23 row bytes), then family and row; a group's cells are
//! already in order, and groups with the same family and row (the same row key in several
//! records) have their cells merged by the full order when they are read out. The sort runs
//! on rayon's thread pool, or, with [`CellSorter::with_background_spill`], a full buffer is
//! sorted and written on a spill thread while the next one fills.
//!
//! At the end the spilled runs and the last buffer (kept in memory) are merged by `Merge`:
//! the source with the smallest head stays current while its next head is below the top of a
//! binary heap of the others, so runs holding long disjoint stretches cost one comparison per
//! cell (the heap is `hfkit_format::heap`'s). Run files (`run`) hold the records, each written against
//! the one before it, in LZ4 blocks with a CRC32C each; a run's records are read in place
//! from its decompressed block.
//!
//! | module | owns |
//! |---|---|
//! | `record` | the record bytes, [`SortedCell`], the import order ([`compare`]) |
//! | `buffer` | the buffer's groups, their sort, and reading them out without duplicates |
//! | `spill` | writing a full buffer as a run (here or on the spill thread); merging runs into fewer |
//! | `run` | the run file format |
//! | `merge` | the k-way merge of runs and [`SortedCells`] |
//! | `error` | [`SortError`] |

mod buffer;
mod error;
mod merge;
mod record;
mod run;
mod spill;

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use hfkit_format::bytes::{compare_bytes, equal_bytes, extend_pieces};
use hfkit_format::cell::CellType;

use buffer::{sort_groups, Group, GroupCursor};
pub use error::SortError;
pub use merge::SortedCells;
use merge::{Coordinates, Merge, RunSource, Source};
pub use record::{compare, SortedCell, RECORD_HEADER};
use record::{decode, prefix_key};
use run::RunReader;
use spill::{merge_runs, write_run, SpillJob, Spiller};

/// Bookkeeping bytes per buffered group besides its records (sort key, offset, count).
pub const ENTRY_OVERHEAD: usize = 40;
/// Most run files merged at once: well under the usual limit of 1024 open files. Each open
/// run holds about [`RUN_READER_BYTES`], so a smaller budget merges fewer at once (its budget
/// divided by that, but at least [`MIN_MERGE_FAN_IN`]). More runs than that are first merged
/// into fewer (see [`CellSorter::finish`]).
pub const MERGE_FAN_IN: usize = 256;
/// Largest sort buffer, whatever the budget: a larger budget spills more runs of this size
/// rather than fewer, larger ones. On the VMs hfkit is measured on, first touching memory
/// costs more than merging more runs saves: lineitem SF1 CSV through the sort path
/// (`--no-lanes`), one thread, took 51.1 s with one 4 GB buffer (18.1 s of it system time,
/// peak RSS 4.1 GB) and 39.0-40.2 s with 256 MiB buffers (4.7-5.7 s system, 289 MiB); two
/// threads (two buffers), 27.4-32.1 s against 23.8-24.0 s.
pub const MAX_SORT_BUFFER: usize = 256 << 20;
/// Least run files merged at once, whatever the budget.
pub const MIN_MERGE_FAN_IN: usize = 16;
/// Memory of one run being merged: its block, decompressed and compressed.
pub const RUN_READER_BYTES: usize = 2 * run::RUN_BLOCK;

/// Accumulates cells, spilling sorted runs to `temp_dir` whenever the buffer reaches its
/// limit (records plus per-cell bookkeeping; see `buffer_limit`).
pub struct CellSorter {
    /// The whole memory budget.
    memory_budget: usize,
    /// Bytes a buffer holds before it is spilled: the budget (half of it for each of the two
    /// buffers with a spill thread), at most [`MAX_SORT_BUFFER`].
    buffer_limit: usize,
    temp_dir: PathBuf,
    arena: Vec<u8>,
    entries: Vec<Group>,
    /// Arena offset of the last record added (valid when `entries` is not empty).
    last_at: usize,
    runs: Vec<PathBuf>,
    /// Buffers spilled or being spilled (names the run files).
    spills: usize,
    next_ordinal: u64,
    duplicates: u64,
    spilled_bytes: u64,
    /// With [`CellSorter::with_background_spill`]: the thread that sorts and writes full
    /// buffers while the next one fills.
    spiller: Option<Spiller>,
    /// Most run files merged at once: as many as the whole budget holds, within
    /// [`MIN_MERGE_FAN_IN`]..=[`MERGE_FAN_IN`].
    fan_in: usize,
    /// Buffers spilled as runs (run files merged into fewer do not change it).
    spilled_runs: usize,
}

/// Bytes a sort buffer holds before it spills: the budget, or half of it for each of the two
/// buffers of a sorter with a spill thread, within 64 KiB..=[`MAX_SORT_BUFFER`].
fn buffer_limit(memory_budget: usize, two_buffers: bool) -> usize {
    let share = if two_buffers {
        memory_budget / 2
    } else {
        memory_budget
    };
    share.clamp(1 << 16, MAX_SORT_BUFFER)
}

impl CellSorter {
    /// A sorter that keeps at most about `memory_budget` bytes of cells in memory (in one
    /// buffer of at most [`MAX_SORT_BUFFER`]) and spills runs into `temp_dir` (which must
    /// exist; run files are removed when the sorter's output is dropped).
    pub fn new(memory_budget: usize, temp_dir: &Path) -> CellSorter {
        CellSorter {
            memory_budget,
            buffer_limit: buffer_limit(memory_budget, false),
            temp_dir: temp_dir.to_path_buf(),
            arena: Vec::new(),
            entries: Vec::new(),
            last_at: 0,
            runs: Vec::new(),
            spills: 0,
            next_ordinal: 0,
            duplicates: 0,
            spilled_bytes: 0,
            spiller: None,
            fan_in: (memory_budget / RUN_READER_BYTES).clamp(MIN_MERGE_FAN_IN, MERGE_FAN_IN),
            spilled_runs: 0,
        }
    }

    /// Merges at most `fan_in` (at least 2) run files at once instead of as many as the
    /// budget holds.
    pub fn with_merge_fan_in(mut self, fan_in: usize) -> CellSorter {
        self.fan_in = fan_in.max(2);
        self
    }

    /// Spills on a thread of its own: a full buffer is sorted and written there while the
    /// next one fills (each of the two gets half the memory budget, at most
    /// [`MAX_SORT_BUFFER`]). The cells come out the same either way.
    pub fn with_background_spill(mut self) -> CellSorter {
        self.buffer_limit = buffer_limit(self.memory_budget, true);
        self.spiller = Some(Spiller::start());
        self
    }

    /// Bytes held in memory now.
    pub fn buffered_bytes(&self) -> usize {
        self.arena.len() + self.entries.len() * ENTRY_OVERHEAD
    }

    /// Runs spilled so far.
    pub fn runs(&self) -> usize {
        self.spilled_runs
    }

    /// Adds a cell. Cells added later win over earlier ones with the same (family, row,
    /// qualifier, timestamp, type).
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        family: u8,
        row: &[u8],
        qualifier: &[u8],
        timestamp: i64,
        cell_type: CellType,
        value: &[u8],
        tags: &[u8],
    ) -> Result<(), SortError> {
        if row.len() > u16::MAX as usize
            || qualifier.len() > u32::MAX as usize
            || value.len() > u32::MAX as usize
            || tags.len() > u16::MAX as usize
        {
            return Err(SortError::TooLarge(format!(
                "row {} bytes, qualifier {}, value {}, tags {}",
                row.len(),
                qualifier.len(),
                value.len(),
                tags.len()
            )));
        }
        let need =
            RECORD_HEADER + row.len() + qualifier.len() + value.len() + tags.len() + ENTRY_OVERHEAD;
        if !self.entries.is_empty() && self.buffered_bytes() + need > self.buffer_limit {
            self.spill()?;
        }
        // Does this cell continue the last group (same family and row, strictly after)?
        let extends = !self.entries.is_empty()
            && decode(&self.arena[self.last_at..]).is_some_and(|p| {
                p.family == family
                    && equal_bytes(p.row, row)
                    && match compare_bytes(p.qualifier, qualifier) {
                        Ordering::Less => true,
                        Ordering::Equal => {
                            (p.timestamp, p.cell_type.code()) > (timestamp, cell_type.code())
                        }
                        Ordering::Greater => false,
                    }
            });
        let at = self.arena.len();
        let mut header = [0u8; RECORD_HEADER];
        header[0] = family;
        header[1..3].copy_from_slice(&(row.len() as u16).to_be_bytes());
        header[3..7].copy_from_slice(&(qualifier.len() as u32).to_be_bytes());
        header[7..11].copy_from_slice(&(value.len() as u32).to_be_bytes());
        header[11..19].copy_from_slice(&timestamp.to_be_bytes());
        header[19..27].copy_from_slice(&self.next_ordinal.to_be_bytes());
        header[27] = cell_type.code();
        header[28..30].copy_from_slice(&(tags.len() as u16).to_be_bytes());
        extend_pieces(&mut self.arena, [&header, row, qualifier, value, tags]);
        match self.entries.last_mut() {
            Some(g) if extends => g.count += 1,
            _ => self.entries.push(Group {
                key: prefix_key(family, row),
                at,
                count: 1,
            }),
        }
        self.last_at = at;
        self.next_ordinal += 1;
        Ok(())
    }

    fn sort_buffer(&mut self) {
        sort_groups(&self.arena, &mut self.entries, true);
    }

    /// Sorts the buffer and writes it as a run file (duplicates within it already dropped):
    /// here, or on the spill thread while the next buffer fills.
    fn spill(&mut self) -> Result<(), SortError> {
        let path = self.next_run_path();
        let waited = match self.spiller.as_mut() {
            None => {
                self.sort_buffer();
                let (bytes, duplicates) = write_run(&self.arena, &self.entries, &path)?;
                self.note_run(path, bytes, duplicates);
                self.arena.clear();
                self.entries.clear();
                return Ok(());
            }
            Some(spiller) => spiller.wait()?,
        };
        // The buffers the spill thread hands back (or new ones) become the next buffer.
        let (arena, entries) = match waited {
            Some(done) => {
                let (bytes, duplicates) = done.written?;
                self.note_run(done.path, bytes, duplicates);
                (done.arena, done.entries)
            }
            None => (Vec::new(), Vec::new()),
        };
        let job = SpillJob {
            arena: std::mem::replace(&mut self.arena, arena),
            entries: std::mem::replace(&mut self.entries, entries),
            path,
        };
        let sent = self.spiller.as_mut().is_some_and(|s| {
            s.busy = s.jobs.as_ref().is_some_and(|j| j.send(job).is_ok());
            s.busy
        });
        if !sent {
            return Err(SortError::Io {
                path: self.temp_dir.clone(),
                source: std::io::Error::other("the spill thread stopped"),
            });
        }
        Ok(())
    }

    /// A new run file's name.
    fn next_run_path(&mut self) -> PathBuf {
        let path = self.temp_dir.join(format!(
            "run-{:06}-{}.spill",
            self.spills,
            std::process::id()
        ));
        self.spills += 1;
        path
    }

    /// Merges run files, the oldest first, until at most the fan-in remain: each step merges
    /// just enough of them into one new run (all of them at most the fan-in) that the rest
    /// and it fit, so a record is rewritten as few times as it can be, and never at all when
    /// the runs fit already. Records are copied as they are, duplicates too: the final merge
    /// drops those (their ordinals still say which one wins).
    fn reduce_runs(&mut self) -> Result<(), SortError> {
        while self.runs.len() > self.fan_in {
            let k = (self.runs.len() - self.fan_in + 1).min(self.fan_in);
            let group: Vec<PathBuf> = self.runs.drain(..k).collect();
            let path = self.next_run_path();
            let merged = merge_runs(&group, &path);
            for p in &group {
                let _ = std::fs::remove_file(p);
            }
            match merged {
                Ok(bytes) => {
                    self.runs.push(path);
                    self.spilled_bytes += bytes;
                }
                Err(e) => {
                    let _ = std::fs::remove_file(&path);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Counts a run written.
    fn note_run(&mut self, path: PathBuf, bytes: u64, duplicates: u64) {
        self.runs.push(path);
        self.spilled_runs += 1;
        self.spilled_bytes += bytes;
        self.duplicates += duplicates;
    }

    /// Ends input; returns the cells in order, duplicates removed.
    pub fn finish(mut self) -> Result<SortedCells, SortError> {
        if let Some(mut spiller) = self.spiller.take() {
            if let Some(done) = spiller.wait()? {
                let (bytes, duplicates) = done.written?;
                self.note_run(done.path, bytes, duplicates);
            }
        }
        if self.runs.is_empty() {
            self.sort_buffer();
            return Ok(SortedCells {
                source: Source::Memory {
                    arena: std::mem::take(&mut self.arena),
                    entries: std::mem::take(&mut self.entries),
                    cursor: GroupCursor::default(),
                },
                prev: Coordinates::default(),
                have_current: false,
                duplicates: self.duplicates,
                runs: Vec::new(),
                spilled_runs: 0,
                spilled_bytes: 0,
            });
        }
        self.reduce_runs()?;
        let mut sources = Vec::with_capacity(self.runs.len() + 1);
        for p in &self.runs {
            sources.push(RunSource::File(RunReader::open(p)?));
        }
        if !self.entries.is_empty() {
            // The last buffer is merged from memory, not spilled and read back.
            self.sort_buffer();
            sources.push(RunSource::Memory {
                arena: std::mem::take(&mut self.arena),
                entries: std::mem::take(&mut self.entries),
                cursor: GroupCursor::default(),
                head: None,
            });
        }
        let merge = Merge::start(sources)?;
        Ok(SortedCells {
            source: Source::Runs(merge),
            prev: Coordinates::default(),
            have_current: false,
            duplicates: self.duplicates,
            runs: std::mem::take(&mut self.runs),
            spilled_runs: self.spilled_runs,
            spilled_bytes: self.spilled_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Flat = (u8, Vec<u8>, Vec<u8>, i64, Vec<u8>);

    fn collect(mut s: SortedCells) -> (Vec<Flat>, u64) {
        let mut out = Vec::new();
        while let Some(c) = s.next().unwrap() {
            out.push((
                c.family,
                c.row.to_vec(),
                c.qualifier.to_vec(),
                c.timestamp,
                c.value.to_vec(),
            ));
        }
        (out, s.duplicates())
    }

    /// A sorter that spills inline or on its own thread.
    fn sorter(budget: usize, dir: &Path, background: bool) -> CellSorter {
        let s = CellSorter::new(budget, dir);
        if background {
            s.with_background_spill()
        } else {
            s
        }
    }

    fn feed(sorter: &mut CellSorter, n: u32) {
        // Pseudo-random order, with every 10th cell a duplicate of an earlier one.
        let mut x: u32 = 12345;
        for i in 0..n {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let r = if i % 10 == 9 {
                (x % (i + 1)) % 997
            } else {
                x % 997
            };
            let row = format!("row{r:05}");
            let fam = (r % 2) as u8;
            let val = format!("v{i}");
            sorter
                .add(
                    fam,
                    row.as_bytes(),
                    b"q",
                    (r % 3) as i64,
                    CellType::Put,
                    val.as_bytes(),
                    &[],
                )
                .unwrap();
        }
    }

    /// `feed`'s `n` cells sorted in memory: the cells and the duplicates dropped.
    fn sorted_in_memory(dir: &Path, n: u32) -> (Vec<Flat>, u64) {
        let mut mem = CellSorter::new(1 << 30, dir);
        feed(&mut mem, n);
        collect(mem.finish().unwrap())
    }

    #[test]
    fn spilling_gives_the_same_cells_as_memory() {
        let dir = tempfile::tempdir().unwrap();
        let (a, da) = sorted_in_memory(dir.path(), 20_000);
        for background in [false, true] {
            let mut small = sorter(1 << 16, dir.path(), background);
            feed(&mut small, 20_000);
            assert!(small.spills > 5);
            let sorted = small.finish().unwrap();
            assert!(sorted.runs() > 5);
            let (b, db) = collect(sorted);
            assert_eq!(a, b, "background spill: {background}");
            assert_eq!(da, db);
        }
        assert_eq!(a.len() as u64 + da, 20_000);
        // Sorted, unique coordinates.
        for w in a.windows(2) {
            assert!((w[0].0, &w[0].1, &w[0].2, -w[0].3) < (w[1].0, &w[1].1, &w[1].2, -w[1].3));
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "run files removed"
        );
    }

    #[test]
    fn buffers_are_the_budget_or_its_half_at_most_256_mib() {
        assert_eq!(buffer_limit(64 << 20, false), 64 << 20);
        assert_eq!(buffer_limit(64 << 20, true), 32 << 20);
        assert_eq!(buffer_limit(4 << 30, false), 256 << 20);
        assert_eq!(buffer_limit(4 << 30, true), 256 << 20);
        assert_eq!(buffer_limit(1000, true), 1 << 16);
        let s = CellSorter::new(4 << 30, Path::new("."));
        assert_eq!((s.buffer_limit, s.fan_in), (256 << 20, MERGE_FAN_IN));
        let s = CellSorter::new(16 << 20, Path::new("."));
        assert_eq!((s.buffer_limit, s.fan_in), (16 << 20, 64));
        let s = CellSorter::new(1 << 16, Path::new("."));
        assert_eq!(s.fan_in, MIN_MERGE_FAN_IN);
    }

    /// More runs than the fan-in are first merged into fewer: the final merge opens at most
    /// the fan-in, and the cells and duplicate counts are those of an in-memory sort (the
    /// input's duplicates lie in different runs, some merged early, some not).
    #[test]
    fn runs_beyond_the_fan_in_are_merged_first() {
        let dir = tempfile::tempdir().unwrap();
        let (want, want_dups) = sorted_in_memory(dir.path(), 20_000);
        for fan_in in [2, 3, 7] {
            let mut s = CellSorter::new(1 << 16, dir.path()).with_merge_fan_in(fan_in);
            feed(&mut s, 20_000);
            let spilled = s.runs();
            assert!(spilled > 3 * fan_in, "{spilled} runs, fan-in {fan_in}");
            let sorted = s.finish().unwrap();
            let files = std::fs::read_dir(dir.path()).unwrap().count();
            assert!(
                files <= fan_in,
                "{files} run files left to merge, fan-in {fan_in}"
            );
            assert_eq!(sorted.runs(), spilled, "runs spilled, not runs left");
            let (got, dups) = collect(sorted);
            assert_eq!(got, want, "fan-in {fan_in}");
            assert_eq!(dups, want_dups, "fan-in {fan_in}");
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        }
    }

    #[test]
    fn the_last_duplicate_wins() {
        let dir = tempfile::tempdir().unwrap();
        for (budget, background) in [(1 << 16, false), (1 << 16, true), (1 << 30, false)] {
            let mut s = sorter(budget, dir.path(), background);
            for i in 0..5000u32 {
                s.add(
                    0,
                    b"r",
                    b"q",
                    7,
                    CellType::Put,
                    format!("{i}").as_bytes(),
                    &[],
                )
                .unwrap();
            }
            let (cells, dups) = collect(s.finish().unwrap());
            assert_eq!(cells.len(), 1);
            assert_eq!(cells[0].4, b"4999");
            assert_eq!(dups, 4999);
        }
    }

    /// Delete markers and Puts with the same coordinates are different cells, in HBase's order
    /// (type descending at one timestamp); tags come back with their cell, through spills.
    #[test]
    fn types_order_and_tags_survive_spills() {
        let dir = tempfile::tempdir().unwrap();
        for (budget, background) in [(1 << 12, false), (1 << 12, true), (1 << 30, false)] {
            let mut s = sorter(budget, dir.path(), background);
            let tag = [0u8, 9, 8, 0, 0, 0, 0, 0, 0, 0, 42];
            for r in 0..300u32 {
                let row = format!("r{r:04}");
                // Added in the wrong order, so that the sort has to put them right.
                s.add(0, row.as_bytes(), b"q", 5, CellType::Put, b"v", &tag)
                    .unwrap();
                s.add(0, row.as_bytes(), b"q", 5, CellType::Delete, b"", &[])
                    .unwrap();
                s.add(0, row.as_bytes(), b"", 5, CellType::DeleteFamily, b"", &[])
                    .unwrap();
                s.add(0, row.as_bytes(), b"q", 5, CellType::DeleteColumn, b"", &[])
                    .unwrap();
                s.add(0, row.as_bytes(), b"q", 5, CellType::Delete, b"", &[])
                    .unwrap();
            }
            let mut sorted = s.finish().unwrap();
            let mut got = Vec::new();
            while let Some(c) = sorted.next().unwrap() {
                got.push((
                    c.row.to_vec(),
                    c.qualifier.to_vec(),
                    c.cell_type,
                    c.tags.to_vec(),
                ));
            }
            assert_eq!(sorted.duplicates(), 300, "the second Delete of each row");
            let mut want = Vec::new();
            for r in 0..300u32 {
                let row = format!("r{r:04}").into_bytes();
                want.push((row.clone(), b"".to_vec(), CellType::DeleteFamily, vec![]));
                want.push((row.clone(), b"q".to_vec(), CellType::DeleteColumn, vec![]));
                want.push((row.clone(), b"q".to_vec(), CellType::Delete, vec![]));
                want.push((row, b"q".to_vec(), CellType::Put, tag.to_vec()));
            }
            assert_eq!(got, want);
        }
    }

    /// The error that reading `s`'s cells out ends with (when the merge starts or later).
    fn first_error(s: CellSorter) -> String {
        let mut sorted = match s.finish() {
            Ok(sorted) => sorted,
            Err(e) => return e.to_string(),
        };
        loop {
            match sorted.next() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("a damaged run read as whole"),
                Err(e) => return e.to_string(),
            }
        }
    }

    /// A flipped bit in a run file is caught by its block's checksum.
    #[test]
    fn a_damaged_run_is_an_error_not_other_cells() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = CellSorter::new(1 << 16, dir.path());
        feed(&mut s, 20_000);
        let run = s.runs[0].clone();
        let mut bytes = std::fs::read(&run).unwrap();
        // Runs are compressed: a run of 1 << 16 budget bytes is well under that on disk.
        assert!(bytes.len() < 1 << 15, "{} bytes", bytes.len());
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x40;
        std::fs::write(&run, &bytes).unwrap();
        let err = first_error(s);
        assert!(
            err.contains("block checksum mismatch") && err.contains(&run.display().to_string()),
            "{err}"
        );
    }

    /// Records larger than a run block, spilled among small ones, and a spill file cut short:
    /// the former merge whole, the latter is an error naming the file.
    #[test]
    fn large_records_and_truncated_runs() {
        let dir = tempfile::tempdir().unwrap();
        let big = |i: u32| vec![b'a' + (i % 26) as u8; run::RUN_BLOCK * 2 + i as usize];
        let mut s = CellSorter::new(1 << 16, dir.path());
        for i in 0..40u32 {
            let row = format!("r{:02}", (i * 7) % 40);
            let value = if i % 4 == 0 { big(i) } else { vec![i as u8] };
            s.add(0, row.as_bytes(), b"q", 1, CellType::Put, &value, &[])
                .unwrap();
        }
        assert!(s.runs() > 5, "{} runs", s.runs());
        let (cells, dups) = collect(s.finish().unwrap());
        assert_eq!((cells.len(), dups), (40, 0));
        for (k, c) in cells.iter().enumerate() {
            let i = (0..40u32).find(|i| (i * 7) % 40 == k as u32).unwrap();
            assert_eq!(c.1, format!("r{k:02}").as_bytes());
            let want = if i % 4 == 0 { big(i) } else { vec![i as u8] };
            assert_eq!(c.4, want, "row {k}");
        }

        let mut s = CellSorter::new(1 << 16, dir.path());
        feed(&mut s, 20_000);
        let run = s.runs[0].clone();
        let len = std::fs::metadata(&run).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&run)
            .unwrap()
            .set_len(len - 3)
            .unwrap();
        let err = first_error(s);
        assert!(
            err.contains("truncated block") && err.contains(&run.display().to_string()),
            "{err}"
        );
    }

    /// Records of a few cells each (as an import adds them: one row, qualifiers ascending,
    /// sometimes out of order), many repeating a row key of earlier records, with duplicate
    /// coordinates across and within records: the output equals a model (sort everything by
    /// the full order, keep the last added of equal coordinates), in memory and spilled.
    #[test]
    fn grouped_records_match_a_model() {
        let dir = tempfile::tempdir().unwrap();
        let mut x: u64 = 99;
        let mut rnd = |n: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % n
        };
        let mut input: Vec<Flat> = Vec::new();
        for i in 0..4000 {
            // Short rows, and rows that share more than the 23 bytes of the sort prefix
            // (some ending in zero bytes, which the prefix pads with).
            let n = rnd(300);
            let row = match rnd(4) {
                0 => format!("r{n:03}").into_bytes(),
                1 => format!("a-row-key-prefix-of-30-bytes-{n:03}").into_bytes(),
                2 => format!("a-row-key-prefix-of-2{}", n % 10).into_bytes(),
                _ => {
                    let mut r = format!("a-row-key-prefix-of-2{}", n % 10).into_bytes();
                    r.resize(r.len() + 1 + (n % 3) as usize, 0);
                    r
                }
            };
            let fam = rnd(2) as u8;
            let mut quals: Vec<u64> = (0..1 + rnd(6)).map(|_| rnd(8)).collect();
            if rnd(4) != 0 {
                quals.sort_unstable(); // usually ordered (duplicates within a record stay)
            }
            for q in quals {
                let ts = rnd(3) as i64;
                input.push((
                    fam,
                    row.clone(),
                    vec![b'a' + q as u8],
                    ts,
                    format!("{i}").into_bytes(),
                ));
            }
        }
        // Model: stable sort by (family, row, qualifier, ts desc) keeps input order on ties;
        // the last of each tie wins.
        let mut model: Vec<(usize, &Flat)> = input.iter().enumerate().collect();
        model.sort_by(|(_, a), (_, b)| (a.0, &a.1, &a.2, -a.3).cmp(&(b.0, &b.1, &b.2, -b.3)));
        let mut want: Vec<Flat> = Vec::new();
        for (_, c) in model {
            match want.last_mut() {
                Some(w) if (w.0, &w.1, &w.2, w.3) == (c.0, &c.1, &c.2, c.3) => *w = c.clone(),
                _ => want.push(c.clone()),
            }
        }
        for (budget, background) in [(1 << 30, false), (1 << 16, false), (1 << 16, true)] {
            let mut s = sorter(budget, dir.path(), background);
            for c in &input {
                s.add(c.0, &c.1, &c.2, c.3, CellType::Put, &c.4, &[])
                    .unwrap();
            }
            assert!(s.entries.len() < input.len() || s.spills > 0);
            let (got, dups) = collect(s.finish().unwrap());
            assert_eq!(got, want, "budget {budget}, background spill {background}");
            assert_eq!(got.len() as u64 + dups, input.len() as u64);
        }
    }
}
