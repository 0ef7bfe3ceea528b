//! [`append_records`](HFileWriter::append_records): cells handed to the writer already in the
//! file's own record layout, HBase's KeyValue serialization (`formats/hfile.md` §"Data
//! blocks", encoding NONE):
//!
//! ```text
//! u32 keyLength | u32 valueLength | key | value
//! [u16 tagsLength | tags]    iff the file includes tags
//! [VLong sequence id]        iff the file includes MVCC
//! ```
//!
//! This is the form HBase's own writer is handed cells in (a `KeyValue` is these bytes), and
//! the form a caller that buffers cells anyway (the import's lanes) can keep them in at no
//! extra cost. For a NONE-encoded file the writer then does not serialize cells at all: it
//! reads each record's lengths and key fields for its checks, Blooms and statistics, and
//! copies runs of records into the open block as they are; a block that starts and ends inside
//! one call is not even copied, but compressed straight from the caller's buffer (it is *lent*,
//! [`Lent`]). Everything else goes the way of
//! [`append`](HFileWriter::append), one record at a time: a record that is not a *plain* one
//! (see [`scan_plain`]), the first record of a file and of each block, a block cut, and every
//! record of a file with another encoding. So the file is, byte for byte, the one `append`
//! of each cell writes (tested), and a record the writer refuses gets `append`'s error, or a
//! [`FormatError::Corrupt`] naming its byte offset when it is not a whole record.

use std::io::Write;

use super::append::HFileWriter;
use super::key::KeyShape;
use crate::cell::CellRef;
use crate::encoding::EncodingContext;
use crate::error::Result;
use crate::writer::plain_scan::{key_of, parse_record, scan_plain, Prev, ScanState};
use crate::writer::sink::BlockCellEncoder;

impl<W: Write> HFileWriter<W> {
    /// Appends the cells of `records`, each in this file's record layout (module doc), in
    /// HBase order: the same file, byte for byte, as [`append`](Self::append) of each cell in
    /// turn. `records` holds whole records. They are appended up to the first one refused
    /// (out of order, invalid, not a whole record), whose error is returned; the file stays
    /// as it was before that record. A failed write (I/O, compression) leaves the writer
    /// unusable, as with `append`.
    pub fn append_records(&mut self, records: &[u8]) -> Result<()> {
        let ctx = self.encoding_context();
        let mut lent = None;
        let result = self.append_records_lending(records, &ctx, &mut lent);
        if let Some(l) = lent {
            self.take_back(records, l);
        }
        result
    }

    /// [`append_records`](Self::append_records)'s loop. Leaves in `lent` the open block if
    /// its bytes are still `records`' (the caller then copies them into the payload).
    fn append_records_lending(
        &mut self,
        records: &[u8],
        ctx: &EncodingContext,
        lent: &mut Option<Lent>,
    ) -> Result<()> {
        let mut at = 0;
        while at < records.len() {
            let prev_in_records = lent.as_ref().and_then(|l| l.last_key.clone());
            if let Some(run) = self.append_plain_run(records, at, ctx, prev_in_records) {
                if let Some(last_key) = run.last_key {
                    match lent.as_mut() {
                        Some(l) => {
                            l.to = run.end;
                            l.last_key = Some(last_key);
                        }
                        None => {
                            let key_at = self.payload.len() + (last_key.start - at);
                            self.payload.extend_from_slice(&records[at..run.end]);
                            self.last_key_in_payload = Some((key_at, key_at + last_key.len()));
                        }
                    }
                }
                at = run.end;
                if at == records.len() {
                    break;
                }
                if run.cut {
                    if let Some(l) = lent.take() {
                        let (cell, len) = match parse_record(records, at, ctx) {
                            Ok(parsed) => parsed,
                            Err(e) => {
                                self.take_back(records, l);
                                return Err(e);
                            }
                        };
                        self.cut_lent_block(records, l, &cell)?;
                        *lent = self.lend(records, at, len);
                        at += len;
                        continue;
                    }
                }
            }
            if let Some(l) = lent.take() {
                self.take_back(records, l);
            }
            let (cell, len) = parse_record(records, at, ctx)?;
            self.append(&cell)?;
            *lent = self.lend(records, at, len);
            at += len;
        }
        Ok(())
    }

    /// The record layout of this file's cells.
    fn encoding_context(&self) -> EncodingContext {
        EncodingContext {
            include_tags: self.opts.include_tags,
            include_mvcc: self.opts.include_mvcc,
            compress_tags: self.opts.compress_tags,
        }
    }

    /// After `append` of the record at `records[at..at + len]`: when that record opened a NONE
    /// block and is, byte for byte, the block's payload, the block from then on is lent from
    /// `records`.
    fn lend(&self, records: &[u8], at: usize, len: usize) -> Option<Lent> {
        let first = records.get(at..at + len)?;
        (!self.failed
            && self.block_open
            && matches!(self.cell_encoder, BlockCellEncoder::None(_))
            && self.payload.as_slice() == first)
            .then_some(Lent {
                from: at,
                to: at + len,
                last_key: None,
            })
    }

    /// Makes the payload the lent block's bytes again (its first record is there already)
    /// and points the last key into it.
    fn take_back(&mut self, records: &[u8], l: Lent) {
        let have = l.from + self.payload.len();
        if let Some(rest) = records.get(have..l.to) {
            self.payload.extend_from_slice(rest);
        }
        if let Some(k) = l.last_key {
            self.last_key_in_payload = Some((k.start - l.from, k.end - l.from));
        }
    }

    /// Appends `cell`, a plain record that starts a new block (a run stopped at it for that),
    /// after the lent block `l`: `append`'s checks, Bloom adds and block cut, with the cut
    /// block compressed straight from `records`.
    fn cut_lent_block(&mut self, records: &[u8], l: Lent, cell: &CellRef<'_>) -> Result<()> {
        if let Some(k) = l.last_key.clone() {
            // The last key, out of `records` (the index's midpoint and the next block's
            // previous key are taken from it).
            self.last_key.clear();
            self.last_key.extend_from_slice(&records[k]);
            self.last_key_in_payload = None;
        }
        let full = self.cell_encoder.encoded_bytes() >= self.opts.block_size;
        let same_row = match self.check_next(cell) {
            Ok((false, same_row)) if full => same_row,
            other => {
                // Not what the run saw: leave the block to `append`'s way.
                self.take_back(records, l);
                return match other {
                    Err(e) => Err(e),
                    Ok(_) => self.append(cell),
                };
            }
        };
        let block = records.get(l.from..l.to).unwrap_or_default();
        let r = self.offer_and_cut(cell, same_row, block);
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    /// `append`'s steps after its checks, for a cell that starts a new block after the lent
    /// block `block`.
    fn offer_and_cut(&mut self, cell: &CellRef<'_>, same_row: bool, block: &[u8]) -> Result<()> {
        self.offer_to_blooms(cell, same_row);
        self.finish_block_of(Some(block))?;
        self.write_inline_blocks(false)?;
        self.new_block();
        self.encode_into_block(cell)
    }

    /// Takes the plain records of `records` from `at` that the open NONE block takes as they
    /// are ([`scan_plain`]): counts them into the file's statistics, Blooms and block size
    /// and makes the last of them the file's last cell, but leaves the bytes to the caller
    /// (to copy into the payload or lend). `prev_in_records`: the last cell's key, when it is
    /// in `records` rather than in the writer. `None` when the writer is not in a state to
    /// take a run (no NONE block open with a cell in it, or failed); the record at the run's
    /// end (if any) goes `append`'s way.
    fn append_plain_run(
        &mut self,
        records: &[u8],
        at: usize,
        ctx: &EncodingContext,
        prev_in_records: Option<std::ops::Range<usize>>,
    ) -> Option<Run> {
        if self.failed
            || self.entry_count == 0
            || !self.block_open
            || self.first_key_in_block.is_none()
        {
            return None;
        }
        let BlockCellEncoder::None(encoder) = &mut self.cell_encoder else {
            return None;
        };
        let (_, block_bytes) = encoder.parts();
        let prev_key: &[u8] = match (prev_in_records, self.last_key_in_payload) {
            (Some(k), _) => records.get(k)?,
            (None, Some((from, to))) => self.payload.get(from..to)?,
            (None, None) => &self.last_key,
        };
        let prev = Prev::of(self.last_shape, prev_key)?;
        let scan = scan_plain(
            records,
            at,
            prev,
            ScanState {
                ctx: *ctx,
                block_bytes: *block_bytes,
                block_size: self.opts.block_size,
                bloom: self.general_bloom.as_mut(),
                stats: &mut self.stats,
            },
        );
        let mut run = Run {
            end: scan.end,
            cut: scan.cut,
            last_key: None,
        };
        if scan.cells == 0 {
            return Some(run);
        }
        let (last_key, last_key_at) = key_of(records, scan.last_at)?;
        self.last_shape = KeyShape::of_key(last_key)?;
        if let Some(b) = scan.biggest_at {
            self.biggest_key = Some(key_of(records, b)?.0.to_vec());
        }
        *block_bytes += scan.end - at;
        self.entry_count += scan.cells;
        run.last_key = Some(last_key_at..last_key_at + last_key.len());
        Some(run)
    }
}

/// A block whose bytes are `records[from..to]` of an `append_records` call rather than the
/// payload's, which holds its first record only. `last_key`: the last cell's key in
/// `records`, once a run has taken records after the first.
struct Lent {
    from: usize,
    to: usize,
    last_key: Option<std::ops::Range<usize>>,
}

/// What [`append_plain_run`](HFileWriter::append_plain_run) took: the records up to `end`,
/// the last one's key (`None`: none taken), and whether the record at `end` starts a block.
struct Run {
    end: usize,
    cut: bool,
    last_key: Option<std::ops::Range<usize>>,
}

#[cfg(test)]
mod tests {
    use super::super::plain_scan::SameRowTries;

    #[test]
    fn same_row_tries_wait_longer_after_each_call_that_takes_none() {
        let mut tries = SameRowTries::default();
        let mut calls = Vec::new();
        for record in 0..300 {
            if tries.now() {
                calls.push(record);
                // Calls take none before record 150, then some.
                tries.took(record >= 150);
            }
        }
        // Waits of 1, 2, 4 ... 64 records, then 64 again; the call at 199 takes some, and
        // every record after it calls.
        let mut want = vec![0, 2, 5, 10, 19, 36, 69, 134, 199];
        want.extend(200..300);
        assert_eq!(calls, want);
    }
}
