//! Routing encoded cells: straight into their store's file while the store's input arrives in
//! order, through the sorter otherwise. Spec: `formats/import.md` §"Lanes".
//!
//! A *store* is one (table family, region). Much real input reaches each store already in
//! row-key order: exports ordered by a primary key, time series keyed by device and time,
//! salted keys whose bucket is their region (`salt(16, id) + pad(id, 10)`). For such a store
//! the sort, the spill and the merge are pure cost, so each store starts as a *lane*: a file
//! of its own, written as the cells arrive. A record's cells of one family form a *group* (one
//! row, cells in HBase order); a lane accepts a group whose row is strictly greater than the
//! lane's last row. The first group that is not (an earlier row, the same row again, cells
//! that are not strictly ordered) ends the lane: what the lane wrote is read back from its
//! files into the sorter, which from then on takes every cell of that store. Either way the
//! store's files hold exactly what the sorter alone would have written: the same cells,
//! duplicates resolved the same way (a lane never sees two cells with the same coordinates,
//! since its rows strictly increase).
//!
//! ```text
//! group (family f, row r) → store (f, region of r)
//!   Unused    → Streaming (if streaming is on, the group is ordered and a lane is free) | Sorted
//!   Streaming → append when r > last row, else take the lane back: re-read its files into
//!               the sorter, then Sorted
//!   Sorted    → sorter
//! ```
//!
//! Open lanes hold memory ([`LANE_MEMORY`] each, counted against `--memory`); past the limit a
//! store goes to the sorter from its first group.

use std::cmp::Ordering;
use std::path::PathBuf;

use crate::error::ImportError;
use crate::import::output::{BulkOutput, OutputError, LANE_MEMORY};
use crate::import::sort::CellSorter;
use crate::mapping::encode::{slice, Encoded, EncodedCell};
use hfkit_format::bytes::{compare_bytes, copy_short};
use hfkit_format::cell::{CellRef, CellType, KeyView};
use hfkit_format::reader::HFileReader;

enum Lane {
    Unused,
    /// Groups not yet written are staged in `staged` (see [`stage`]) and written a batch at a
    /// time, so that one lane's file, block, Bloom chunk and compressor stay in cache while it
    /// is written.
    Streaming {
        last_row: Vec<u8>,
        staged: Vec<u8>,
        meta: Staged,
    },
    Sorted,
}

/// Bytes staged per lane before they are written.
pub const STAGE_BYTES: usize = 128 * 1024;

/// The outputs an import writes: the main table's and each index table's (one family each).
pub(crate) struct Outputs<'a> {
    pub main: &'a mut BulkOutput,
    pub indexes: &'a mut [BulkOutput],
    /// Families of the main table (sorter family numbers past these are index tables).
    pub n_main: usize,
}

impl Outputs<'_> {
    /// The output of sorter family `f` and the family's index within it.
    pub fn of(&mut self, f: usize) -> Result<(&mut BulkOutput, usize), ImportError> {
        match f.checked_sub(self.n_main) {
            None => Ok((&mut *self.main, f)),
            Some(i) => {
                self.indexes.get_mut(i).map(|o| (o, 0)).ok_or_else(|| {
                    ImportError::Invalid("internal: index family out of range".into())
                })
            }
        }
    }
}

/// Where lanes' staged cells are written: the outputs themselves ([`Outputs`], on the
/// importing thread), or lane-writer threads that own them ([`ThreadSink`]).
pub(crate) trait LaneSink {
    /// Writes the staged groups of the lane (`f`, `region`) and leaves `staged` empty (and
    /// `meta` reset).
    fn write(
        &mut self,
        f: usize,
        region: usize,
        staged: &mut Vec<u8>,
        meta: &mut Staged,
    ) -> Result<(), ImportError>;
    /// Takes the lane back (everything written to it before): its files, in order.
    fn take(&mut self, f: usize, region: usize) -> Result<Vec<PathBuf>, ImportError>;
}

impl LaneSink for Outputs<'_> {
    fn write(
        &mut self,
        f: usize,
        region: usize,
        staged: &mut Vec<u8>,
        meta: &mut Staged,
    ) -> Result<(), ImportError> {
        let (out, of) = self.of(f)?;
        let m = std::mem::take(meta);
        write_staged(staged, m, out, of, region)
    }
    fn take(&mut self, f: usize, region: usize) -> Result<Vec<PathBuf>, ImportError> {
        let (out, of) = self.of(f)?;
        Ok(out.take_lane(of, region)?)
    }
}

/// A message to the lane-writer thread.
pub(crate) enum LaneMessage {
    Write {
        f: usize,
        region: usize,
        staged: Vec<u8>,
        meta: Staged,
    },
    Take {
        f: usize,
        region: usize,
        reply: std::sync::mpsc::Sender<Result<Vec<PathBuf>, ImportError>>,
    },
}

/// Hands full staging buffers to lane-writer threads ([`run_lane_writer`]), so that reading
/// and encoding overlap compressing and writing; each lane always goes to the same writer
/// (lanes spread over writers by region and family). Buffers come back for reuse.
pub(crate) struct ThreadSink {
    pub writers: Vec<std::sync::mpsc::SyncSender<LaneMessage>>,
    pub spares: std::sync::mpsc::Receiver<Vec<u8>>,
}

impl ThreadSink {
    fn writer(
        &self,
        f: usize,
        region: usize,
    ) -> Result<&std::sync::mpsc::SyncSender<LaneMessage>, ImportError> {
        let n = self.writers.len().max(1);
        self.writers
            .get((region + f * 7) % n)
            .ok_or_else(writer_gone)
    }
}

/// The writer thread has stopped: on an error, which joining it reports.
fn writer_gone() -> ImportError {
    ImportError::Invalid("internal: the lane writer stopped".into())
}

impl LaneSink for ThreadSink {
    fn write(
        &mut self,
        f: usize,
        region: usize,
        staged: &mut Vec<u8>,
        meta: &mut Staged,
    ) -> Result<(), ImportError> {
        let spare = self
            .spares
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(STAGE_BYTES + 4096));
        let full = std::mem::replace(staged, spare);
        self.writer(f, region)?
            .send(LaneMessage::Write {
                f,
                region,
                staged: full,
                meta: std::mem::take(meta),
            })
            .map_err(|_| writer_gone())
    }
    fn take(&mut self, f: usize, region: usize) -> Result<Vec<PathBuf>, ImportError> {
        let (reply, answer) = std::sync::mpsc::channel();
        self.writer(f, region)?
            .send(LaneMessage::Take { f, region, reply })
            .map_err(|_| writer_gone())?;
        answer.recv().map_err(|_| writer_gone())?
    }
}

/// The lane-writer thread's loop: writes what it is sent until the sender is dropped.
pub(crate) fn run_lane_writer(
    messages: std::sync::mpsc::Receiver<LaneMessage>,
    spares: std::sync::mpsc::Sender<Vec<u8>>,
    outs: &mut Outputs<'_>,
) -> Result<(), ImportError> {
    for m in messages {
        match m {
            LaneMessage::Write {
                f,
                region,
                mut staged,
                mut meta,
            } => {
                outs.write(f, region, &mut staged, &mut meta)?;
                let _ = spares.send(staged);
            }
            LaneMessage::Take { f, region, reply } => {
                let _ = reply.send(outs.take(f, region));
            }
        }
    }
    Ok(())
}

/// Sends each group of cells to its store's lane or to the sorter.
pub(crate) struct Router {
    /// Split keys of each sorter family's table.
    splits: Vec<Vec<Vec<u8>>>,
    /// Each sorter family's name (lanes stage cells with their keys whole).
    families: Vec<Vec<u8>>,
    /// `lanes[f][region]`, sized on first use.
    lanes: Vec<Vec<Lane>>,
    open: usize,
    max_open: usize,
    /// Cells now in lane files, by sorter family number.
    streamed: Vec<u64>,
    /// Lanes taken back, and the cells they had written.
    taken: u64,
    refed: u64,
}

impl Router {
    /// A router for the sorter families whose tables have the given split keys and names
    /// (one entry per family); `max_open` lanes at most (0: every cell goes to the sorter).
    pub fn new(splits: Vec<Vec<Vec<u8>>>, families: Vec<Vec<u8>>, max_open: usize) -> Router {
        Router {
            lanes: splits.iter().map(|_| Vec::new()).collect(),
            streamed: vec![0; splits.len()],
            splits,
            families,
            open: 0,
            max_open,
            taken: 0,
            refed: 0,
        }
    }

    /// How many lanes fit in `memory_budget`: a quarter of it.
    pub fn lanes_for(memory_budget: usize) -> usize {
        (memory_budget / 4 / LANE_MEMORY).clamp(1, 4096)
    }

    /// Cells of sorter family `f` written by lanes (and kept).
    pub fn streamed(&self, f: usize) -> u64 {
        self.streamed.get(f).copied().unwrap_or(0)
    }

    /// Lanes taken back, and the cells re-read from them into the sorter.
    pub fn taken(&self) -> (u64, u64) {
        (self.taken, self.refed)
    }

    /// Routes the cells of one encoded slice, in order.
    pub fn route(
        &mut self,
        e: &Encoded,
        sorter: &mut CellSorter,
        sink: &mut dyn LaneSink,
    ) -> Result<(), ImportError> {
        let a = &e.arena;
        let cells = &e.cells;
        let mut i = 0;
        while i < cells.len() {
            let first = &cells[i];
            let mut j = i + 1;
            // A lane takes Puts without tags (it stages every cell as a Put without tags): a
            // group with a delete marker or a TTL tag goes through the sorter.
            let mut ordered = first.is_plain_put();
            // A column more than once (older versions after the newest).
            let mut repeated = false;
            while j < cells.len() && cells[j].family == first.family && cells[j].row == first.row {
                let (p, q) = (&cells[j - 1], &cells[j]);
                ordered &= match compare_bytes(slice(a, p.qualifier), slice(a, q.qualifier)) {
                    Ordering::Less => true,
                    Ordering::Equal => {
                        repeated = true;
                        p.timestamp > q.timestamp
                    }
                    Ordering::Greater => false,
                } && q.is_plain_put();
                j += 1;
            }
            self.group(a, &cells[i..j], ordered, repeated, sorter, sink)?;
            i = j;
        }
        Ok(())
    }

    /// One record's cells of one family (one row).
    fn group(
        &mut self,
        a: &[u8],
        group: &[EncodedCell],
        ordered: bool,
        repeated: bool,
        sorter: &mut CellSorter,
        sink: &mut dyn LaneSink,
    ) -> Result<(), ImportError> {
        let f = usize::from(group[0].family);
        let row = slice(a, group[0].row);
        let splits = self
            .splits
            .get(f)
            .ok_or_else(|| ImportError::Invalid("internal: family out of range".into()))?;
        let region = hfkit_table::region_of_row(splits, row);
        let family = self
            .families
            .get(f)
            .ok_or_else(|| ImportError::Invalid("internal: family out of range".into()))?;
        let lanes = &mut self.lanes[f];
        if lanes.is_empty() {
            lanes.resize_with(splits.len() + 1, || Lane::Unused);
        }
        let lane = &mut lanes[region];
        match lane {
            Lane::Streaming {
                last_row,
                staged,
                meta,
            } => {
                if ordered && compare_bytes(last_row, row) == Ordering::Less {
                    last_row.clear();
                    last_row.extend_from_slice(row);
                    meta.add_group(staged.len(), repeated);
                    stage(staged, a, row, family, group)?;
                    if staged.len() >= STAGE_BYTES {
                        sink.write(f, region, staged, meta)?;
                    }
                    self.streamed[f] += group.len() as u64;
                    return Ok(());
                } else {
                    // Out of order: the lane's cells go back through the sorter.
                    sink.write(f, region, staged, meta)?;
                    *lane = Lane::Sorted;
                    self.open -= 1;
                    self.taken += 1;
                    for path in sink.take(f, region)? {
                        let n = refeed(&path, f, sorter)?;
                        self.refed += n;
                        self.streamed[f] -= n;
                        let _ = std::fs::remove_file(&path);
                    }
                }
            }
            Lane::Unused if ordered && self.open < self.max_open => {
                let mut staged = Vec::with_capacity(STAGE_BYTES + 4096);
                let mut meta = Staged::default();
                meta.add_group(0, repeated);
                stage(&mut staged, a, row, family, group)?;
                *lane = Lane::Streaming {
                    last_row: row.to_vec(),
                    staged,
                    meta,
                };
                self.open += 1;
                self.streamed[f] += group.len() as u64;
                return Ok(());
            }
            Lane::Unused => *lane = Lane::Sorted,
            Lane::Sorted => {}
        }
        for c in group {
            let (qualifier, value) = (slice(a, c.qualifier), slice(a, c.value));
            let tags = slice(a, c.tags);
            sorter.add(
                c.family,
                row,
                qualifier,
                c.timestamp,
                c.cell_type,
                value,
                tags,
            )?;
        }
        Ok(())
    }

    /// Writes what the lanes still have staged: call once the input is read.
    pub fn flush(&mut self, sink: &mut dyn LaneSink) -> Result<(), ImportError> {
        for (f, lanes) in self.lanes.iter_mut().enumerate() {
            for (region, lane) in lanes.iter_mut().enumerate() {
                if let Lane::Streaming { staged, meta, .. } = lane {
                    if !staged.is_empty() {
                        sink.write(f, region, staged, meta)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// What a lane's staging buffer holds besides its records: where its last group starts, and
/// whether any group has a column more than once.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Staged {
    last_group_at: usize,
    repeated: bool,
}

impl Staged {
    /// A group staged from offset `at` on.
    fn add_group(&mut self, at: usize, repeated: bool) {
        self.last_group_at = at;
        self.repeated |= repeated;
    }
}

/// Appends a group (one row's Puts of one family, in order) to a lane's staging buffer, as
/// the records of the file it goes to (`formats/hfile.md` §"Data blocks", NONE; the layout of
/// an import's files, [`STAGED_LAYOUT`](crate::import::output::STAGED_LAYOUT)): per cell `u32 keyLength | u32 valueLength | key |
/// value | u16 tagsLength 0 | sequence id 0`, so the lane's writer takes them as they are
/// (`HFileWriter::append_records`).
fn stage(
    staged: &mut Vec<u8>,
    a: &[u8],
    row: &[u8],
    family: &[u8],
    group: &[EncodedCell],
) -> Result<(), ImportError> {
    let too_large = || ImportError::Invalid("internal: cell too large to stage".into());
    let row_len = u16::try_from(row.len()).map_err(|_| too_large())?;
    let family_len = u8::try_from(family.len()).map_err(|_| too_large())?;
    // The key's row and family, the same for every cell of the group.
    let head_len = 2 + row.len() + 1 + family.len();
    let mut total = 0usize;
    for c in group {
        total += 8 + head_len + slice(a, c.qualifier).len() + 9 + slice(a, c.value).len() + 3;
    }
    staged.reserve(total);
    // Hot path (every streamed cell): the pieces stored straight into reserved space, small
    // ones by `copy_short`, rather than a capacity check and a `memcpy` call per piece.
    // SAFETY: `reserve` made room for `total` bytes after `start`; the stores below write per
    // cell 4 + 4 + (2 + row + 1 + family) + qualifier + 8 + 1 + value + 3 bytes, in order and
    // without gaps, which is the sum taken above (the qualifier and value are the slices
    // measured there). The sources are `row`, `family` and `a`, which cannot overlap `staged`'s
    // spare capacity. So `start .. start + total` is initialised before the length is set.
    unsafe {
        let start = staged.len();
        let mut d = staged.as_mut_ptr().add(start);
        for c in group {
            let (q, v) = (slice(a, c.qualifier), slice(a, c.value));
            let key_len = head_len + q.len() + 9;
            d.cast::<[u8; 4]>()
                .write_unaligned((key_len as u32).to_be_bytes());
            d.add(4)
                .cast::<[u8; 4]>()
                .write_unaligned((v.len() as u32).to_be_bytes());
            d.add(8)
                .cast::<[u8; 2]>()
                .write_unaligned(row_len.to_be_bytes());
            d = d.add(10);
            copy_short(d, row);
            d = d.add(row.len());
            *d = family_len;
            d = d.add(1);
            copy_short(d, family);
            d = d.add(family.len());
            copy_short(d, q);
            d = d.add(q.len());
            d.cast::<[u8; 8]>()
                .write_unaligned(c.timestamp.to_be_bytes());
            *d.add(8) = CellType::Put.code();
            d = d.add(9);
            copy_short(d, v);
            d = d.add(v.len());
            d.cast::<[u8; 3]>().write_unaligned([0, 0, 0]);
            d = d.add(3);
        }
        staged.set_len(start + total);
    }
    Ok(())
}

/// Writes a lane's staged groups to its file and empties the buffer: all at once when the
/// output can take them so (`BulkOutput::append_records_to_lane`), else row by row.
fn write_staged(
    staged: &mut Vec<u8>,
    meta: Staged,
    out: &mut BulkOutput,
    of: usize,
    region: usize,
) -> Result<(), ImportError> {
    if staged.is_empty() {
        return Ok(());
    }
    let last_row = staged_row(staged, meta.last_group_at).ok_or_else(malformed)?;
    if !out.append_records_to_lane(of, region, staged, last_row, meta.repeated)? {
        let family = out
            .family_name(of)
            .ok_or_else(|| ImportError::Invalid("internal: family out of range".into()))?
            .as_bytes()
            .to_vec();
        let mut row_cells = Vec::new();
        let mut at = 0;
        while at < staged.len() {
            row_cells.clear();
            at = staged_group(staged, at, &family, &mut row_cells).ok_or_else(malformed)?;
            out.append_row_to_lane(of, region, &row_cells)?;
        }
    }
    staged.clear();
    Ok(())
}

fn malformed() -> ImportError {
    ImportError::Invalid("internal: malformed staging buffer".into())
}

/// The row of the staged record at `at`.
fn staged_row(staged: &[u8], at: usize) -> Option<&[u8]> {
    let key = staged_record(staged, at)?.0;
    let row_len = usize::from(u16::from_be_bytes([*key.first()?, *key.get(1)?]));
    key.get(2..2 + row_len)
}

/// The key and value of the staged record at `at`, and where the next one starts.
fn staged_record(staged: &[u8], at: usize) -> Option<(&[u8], &[u8], usize)> {
    let h = staged.get(at..at + 8)?;
    let key_len = u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as usize;
    let value_len = u32::from_be_bytes([h[4], h[5], h[6], h[7]]) as usize;
    let key = staged.get(at + 8..at + 8 + key_len)?;
    let value = staged.get(at + 8 + key_len..at + 8 + key_len + value_len)?;
    Some((key, value, at + 8 + key_len + value_len + 3))
}

/// The cells of the group (one row) staged at `at`, into `cells`; returns where the next
/// group starts.
fn staged_group<'s>(
    staged: &'s [u8],
    mut at: usize,
    family: &'s [u8],
    cells: &mut Vec<CellRef<'s>>,
) -> Option<usize> {
    while at < staged.len() {
        let (key, value, next) = staged_record(staged, at)?;
        let k = KeyView::parse(key)?;
        if cells.first().is_some_and(|first| first.row != k.row) {
            break;
        }
        cells.push(CellRef {
            // The group's one row slice (the writer's row loop compares rows by address).
            row: cells.first().map_or(k.row, |first| first.row),
            family,
            qualifier: k.qualifier,
            timestamp: k.timestamp,
            cell_type: CellType::Put,
            value,
            tags: &[],
            seq_id: 0,
        });
        at = next;
    }
    Some(at)
}

/// Adds the cells of a lane file to the sorter as family `f`; returns how many.
fn refeed(path: &std::path::Path, f: usize, sorter: &mut CellSorter) -> Result<u64, ImportError> {
    let format = |source| OutputError::Format {
        path: path.to_path_buf(),
        source,
    };
    let reader = HFileReader::open(path).map_err(format)?;
    let mut scanner = reader.scanner().map_err(format)?;
    let mut n = 0;
    let family = u8::try_from(f).map_err(|_| ImportError::Invalid("too many families".into()))?;
    while let Some(c) = scanner.next().map_err(format)? {
        sorter.add(
            family,
            c.row,
            c.qualifier,
            c.timestamp,
            c.cell_type,
            c.value,
            c.tags,
        )?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::output::OutputFamily;
    use crate::import::retention::Retention;
    use hfkit_format::cell::Cell;
    use hfkit_format::writer::WriterOptions;

    /// `rows` rows of 3 columns (the second twice, an older version after the newer, in every
    /// fifth row), in order, as the encoder hands them to the router.
    fn groups(rows: usize) -> (Vec<u8>, Vec<Vec<EncodedCell>>, Vec<bool>) {
        let mut arena = Vec::new();
        let mut put = |bytes: &[u8]| {
            let at = arena.len() as u32;
            arena.extend_from_slice(bytes);
            (at, bytes.len() as u32)
        };
        let mut out = Vec::new();
        let mut repeated = Vec::new();
        // Sorted rows, as one lane's input must be; both regions (split at "50").
        let mut keys: Vec<String> = (0..rows)
            .map(|r| format!("{:02}-{r:06}", r * 97 % 100))
            .collect();
        keys.sort();
        for (r, key) in keys.iter().enumerate() {
            let row = put(key.as_bytes());
            let mut cells = Vec::new();
            let versions = if r % 5 == 3 { 2 } else { 1 };
            for (q, n) in [("c1", 1), ("c2", versions), ("c3", 1)] {
                for v in 0..n {
                    cells.push(EncodedCell {
                        family: 0,
                        row,
                        qualifier: put(q.as_bytes()),
                        timestamp: 1_700_000_000_000 - v,
                        cell_type: CellType::Put,
                        value: put(format!("value {r} {q} {v}").as_bytes()),
                        tags: (0, 0),
                    });
                }
            }
            repeated.push(versions > 1);
            out.push(cells);
        }
        (arena, out, repeated)
    }

    fn output(dir: &std::path::Path, retention: Retention, max_file_size: u64) -> BulkOutput {
        let fam = OutputFamily {
            name: "f".into(),
            options: WriterOptions {
                block_size: 512,
                ..WriterOptions::default()
            },
            retention,
        };
        BulkOutput::new(dir, vec![fam], vec![b"50".to_vec()], max_file_size).unwrap()
    }

    /// The files' cells, file by file, and the stores' totals.
    fn written(out: BulkOutput) -> (Vec<Vec<Cell>>, Vec<Vec<crate::import::output::StoreStats>>) {
        let report = out.finish().unwrap();
        let mut files: Vec<(usize, Vec<Cell>)> = report
            .files
            .iter()
            .map(|f| {
                let r = HFileReader::open(&f.path).unwrap();
                let mut s = r.scanner().unwrap();
                let mut cells = Vec::new();
                while let Some(c) = s.next().unwrap() {
                    cells.push(c.to_owned());
                }
                (f.region, cells)
            })
            .collect();
        files.sort_by_key(|(region, cells)| (*region, cells.first().map(|c| c.row.clone())));
        let stores = report
            .stores
            .iter()
            .map(|r| {
                r.iter()
                    .map(|s| crate::import::output::StoreStats {
                        bytes: 0,
                        ..s.clone()
                    })
                    .collect()
            })
            .collect();
        (files.into_iter().map(|f| f.1).collect(), stores)
    }

    /// Staged records written through `write_staged` (all at once, or row by row where the
    /// output cannot take them so) give the files and store totals of each row appended by
    /// `append_row_to_lane`: with every version kept, with VERSIONS 1 (older versions
    /// hidden), with a TTL, and with files that roll.
    #[test]
    fn staged_records_write_what_rows_write() {
        let (arena, groups, repeated) = groups(600);
        let ttl = Retention {
            versions: u32::MAX,
            min_versions: 0,
            oldest_unexpired_ts: 1_700_000_000_000,
        };
        let one_version = Retention {
            versions: 1,
            ..Retention::KEEP_ALL
        };
        for (retention, max_file_size) in [
            (Retention::KEEP_ALL, 1 << 30),
            (one_version, 1 << 30),
            (ttl, 1 << 30),
            (Retention::KEEP_ALL, 4000),
        ] {
            let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            let mut rows = output(a.path(), retention, max_file_size);
            let mut staged_out = output(b.path(), retention, max_file_size);
            let splits = vec![b"50".to_vec()];
            let mut staged = [Vec::new(), Vec::new()];
            let mut meta = [Staged::default(); 2];
            for (g, &rep) in groups.iter().zip(&repeated) {
                let row = slice(&arena, g[0].row);
                let region = hfkit_table::region_of_row(&splits, row);
                let cells: Vec<CellRef<'_>> = g
                    .iter()
                    .map(|c| CellRef {
                        row,
                        family: b"f",
                        qualifier: slice(&arena, c.qualifier),
                        timestamp: c.timestamp,
                        cell_type: CellType::Put,
                        value: slice(&arena, c.value),
                        tags: &[],
                        seq_id: 0,
                    })
                    .collect();
                rows.append_row_to_lane(0, region, &cells).unwrap();
                meta[region].add_group(staged[region].len(), rep);
                stage(&mut staged[region], &arena, row, b"f", g).unwrap();
                if staged[region].len() >= 2000 {
                    let m = std::mem::take(&mut meta[region]);
                    write_staged(&mut staged[region], m, &mut staged_out, 0, region).unwrap();
                }
            }
            for region in 0..2 {
                let m = std::mem::take(&mut meta[region]);
                write_staged(&mut staged[region], m, &mut staged_out, 0, region).unwrap();
            }
            let (want, got) = (written(rows), written(staged_out));
            let case = format!("{retention:?}, max file size {max_file_size}");
            assert_eq!(got.1, want.1, "{case}: store totals");
            assert_eq!(got.0.len(), want.0.len(), "{case}: files");
            assert!(got.0 == want.0, "{case}: cells");
        }
    }
}
