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

use super::encode::{slice, Encoded, EncodedCell};
use super::error::ImportError;
use super::output::{BulkOutput, OutputError, LANE_MEMORY};
use super::sort::CellSorter;
use hfkit_format::bytes::{compare_bytes, copy_short};
use hfkit_format::cell::{CellRef, CellType};
use hfkit_format::reader::HFileReader;

enum Lane {
    Unused,
    /// Groups not yet written are staged in `staged` (see [`stage`]) and written a batch at a
    /// time, so that one lane's file, block, Bloom chunk and compressor stay in cache while it
    /// is written.
    Streaming {
        last_row: Vec<u8>,
        staged: Vec<u8>,
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
    /// Writes the staged groups of the lane (`f`, `region`) and leaves `staged` empty.
    fn write(&mut self, f: usize, region: usize, staged: &mut Vec<u8>) -> Result<(), ImportError>;
    /// Takes the lane back (everything written to it before): its files, in order.
    fn take(&mut self, f: usize, region: usize) -> Result<Vec<PathBuf>, ImportError>;
}

impl LaneSink for Outputs<'_> {
    fn write(&mut self, f: usize, region: usize, staged: &mut Vec<u8>) -> Result<(), ImportError> {
        let (out, of) = self.of(f)?;
        write_staged(staged, out, of, region)
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
    fn write(&mut self, f: usize, region: usize, staged: &mut Vec<u8>) -> Result<(), ImportError> {
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
            } => {
                outs.write(f, region, &mut staged)?;
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
    /// A router for the sorter families whose tables have the given split keys (one entry per
    /// family); `max_open` lanes at most (0: every cell goes to the sorter).
    pub fn new(splits: Vec<Vec<Vec<u8>>>, max_open: usize) -> Router {
        Router {
            lanes: splits.iter().map(|_| Vec::new()).collect(),
            streamed: vec![0; splits.len()],
            splits,
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
            // A lane takes Puts without tags (its staging format has neither a type nor tags):
            // a group with a delete marker or a TTL tag goes through the sorter.
            let mut ordered = first.is_plain_put();
            while j < cells.len() && cells[j].family == first.family && cells[j].row == first.row {
                let (p, q) = (&cells[j - 1], &cells[j]);
                ordered &= match compare_bytes(slice(a, p.qualifier), slice(a, q.qualifier)) {
                    Ordering::Less => true,
                    Ordering::Equal => p.timestamp > q.timestamp,
                    Ordering::Greater => false,
                } && q.is_plain_put();
                j += 1;
            }
            self.group(a, &cells[i..j], ordered, sorter, sink)?;
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
        let lanes = &mut self.lanes[f];
        if lanes.is_empty() {
            lanes.resize_with(splits.len() + 1, || Lane::Unused);
        }
        let lane = &mut lanes[region];
        match lane {
            Lane::Streaming { last_row, staged } => {
                if ordered && compare_bytes(last_row, row) == Ordering::Less {
                    last_row.clear();
                    last_row.extend_from_slice(row);
                    stage(staged, a, row, group)?;
                    if staged.len() >= STAGE_BYTES {
                        sink.write(f, region, staged)?;
                    }
                    self.streamed[f] += group.len() as u64;
                    return Ok(());
                } else {
                    // Out of order: the lane's cells go back through the sorter.
                    sink.write(f, region, staged)?;
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
                stage(&mut staged, a, row, group)?;
                *lane = Lane::Streaming {
                    last_row: row.to_vec(),
                    staged,
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
                if let Lane::Streaming { staged, .. } = lane {
                    if !staged.is_empty() {
                        sink.write(f, region, staged)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Appends a group to a lane's staging buffer:
/// `u16 rowLen | u32 cells | row | (u32 qualifierLen | u32 valueLen | i64 timestamp |
/// qualifier | value) * cells`.
fn stage(
    staged: &mut Vec<u8>,
    a: &[u8],
    row: &[u8],
    group: &[EncodedCell],
) -> Result<(), ImportError> {
    let too_large = || ImportError::Invalid("internal: cell too large to stage".into());
    let row_len = u16::try_from(row.len()).map_err(|_| too_large())?;
    let cells = u32::try_from(group.len()).map_err(|_| too_large())?;
    let mut total = 6 + row.len();
    for c in group {
        total += 16 + slice(a, c.qualifier).len() + slice(a, c.value).len();
    }
    staged.reserve(total);
    // Hot path (every streamed cell): the pieces stored straight into reserved space, small
    // ones by `copy_short`, rather than a capacity check and a `memcpy` call per piece.
    // SAFETY: `reserve` made room for `total` bytes after `start`; the stores below write
    // 2 + 4 + row, then per cell 4 + 4 + 8 + qualifier + value bytes, in order and without
    // gaps, which is `total` (the qualifier and value are the slices measured above). The
    // sources are `row` and `a`, which cannot overlap `staged`'s spare capacity. So
    // `start .. start + total` is initialised before the length is set.
    unsafe {
        let start = staged.len();
        let mut d = staged.as_mut_ptr().add(start);
        d.cast::<[u8; 2]>().write_unaligned(row_len.to_le_bytes());
        d.add(2)
            .cast::<[u8; 4]>()
            .write_unaligned(cells.to_le_bytes());
        d = d.add(6);
        copy_short(d, row);
        d = d.add(row.len());
        for c in group {
            let (q, v) = (slice(a, c.qualifier), slice(a, c.value));
            d.cast::<[u8; 4]>()
                .write_unaligned((q.len() as u32).to_le_bytes());
            d.add(4)
                .cast::<[u8; 4]>()
                .write_unaligned((v.len() as u32).to_le_bytes());
            d.add(8)
                .cast::<[u8; 8]>()
                .write_unaligned(c.timestamp.to_le_bytes());
            d = d.add(16);
            copy_short(d, q);
            d = d.add(q.len());
            copy_short(d, v);
            d = d.add(v.len());
        }
        staged.set_len(start + total);
    }
    Ok(())
}

/// Writes a lane's staged groups to its file and empties the buffer.
fn write_staged(
    staged: &mut Vec<u8>,
    out: &mut BulkOutput,
    of: usize,
    region: usize,
) -> Result<(), ImportError> {
    let family = out
        .family_name(of)
        .ok_or_else(|| ImportError::Invalid("internal: family out of range".into()))?
        .as_bytes()
        .to_vec();
    let mut at = 0;
    let mut row_cells = Vec::new();
    while at < staged.len() {
        let (row, cells, next) = group_at(staged, at).ok_or_else(malformed)?;
        at = next;
        row_cells.clear();
        for _ in 0..cells {
            let h = staged.get(at..at + 16).ok_or_else(malformed)?;
            let q_len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
            let v_len = u32::from_le_bytes([h[4], h[5], h[6], h[7]]) as usize;
            let mut ts = [0u8; 8];
            ts.copy_from_slice(&h[8..16]);
            let body = staged
                .get(at + 16..at + 16 + q_len + v_len)
                .ok_or_else(malformed)?;
            row_cells.push(CellRef {
                row: &staged[row.clone()],
                family: &family,
                qualifier: &body[..q_len],
                timestamp: i64::from_le_bytes(ts),
                cell_type: CellType::Put,
                value: &body[q_len..],
                tags: &[],
                seq_id: 0,
            });
            at += 16 + q_len + v_len;
        }
        out.append_row_to_lane(of, region, &row_cells)?;
    }
    drop(row_cells);
    staged.clear();
    Ok(())
}

fn malformed() -> ImportError {
    ImportError::Invalid("internal: malformed staging buffer".into())
}

/// The row (as a range of `staged`) and cell count of the group at `at`, and where its cells
/// start.
fn group_at(staged: &[u8], at: usize) -> Option<(std::ops::Range<usize>, u32, usize)> {
    let h = staged.get(at..at + 6)?;
    let row_len = usize::from(u16::from_le_bytes([h[0], h[1]]));
    let cells = u32::from_le_bytes([h[2], h[3], h[4], h[5]]);
    let row = at + 6..at + 6 + row_len;
    staged.get(row.clone())?;
    Some((row.clone(), cells, row.end))
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
