//! Encoding NONE: cells stored as HBase's KeyValue serialization.
//! Spec: `formats/hfile.md` §"Data blocks".
//!
//! ```text
//! i32 keyLength | i32 valueLength | key | value
//! [u16 tagsLength | tags]   iff the file includes tags (even when tagsLength = 0)
//! [VLong seqId]             iff the file includes MVCC
//! ```
//! Cells are concatenated; the payload has no count and no trailer. ROW_INDEX_V1 reuses this
//! record format, so [`NoneDecoder`] can start at a payload offset and stop before a limit.
//!
//! Reading takes two ways to the same result: a fast path that reads a record's lengths with
//! one bounds check each and accepts it only when everything fits, and the checking cursor,
//! which names what is wrong, for any record the fast path refuses (a test holds the two equal
//! on every truncation and byte change of a block). Writing stores each record with one
//! capacity check ([`write_none_cell`]).
//!
//! A seek in a block a cache shares starts from the block's [`SeekIndex`] (made by the second
//! seek in it, [`NoneDecoder::make_seek_index`]): a binary search for the last indexed record
//! whose row sorts before the target's, then the same steps as from the block's start (a
//! proptest holds both ways to the same cell). Spec: `formats/hfile.md` §"Reading".

use std::ops::Range;

use super::codec::{CellDecoder, CellEncoder, EncodingContext, KeyLayout, Payload, SeekIndex};
use crate::bytes::{copy_short, put_vlong, vlong_total_len, Cursor};
use crate::cell::{compare_keys, CellRef, KeyView};
use crate::error::{FormatError, Result};

/// Writes NONE-format cells.
pub struct NoneEncoder {
    ctx: EncodingContext,
    bytes: usize,
}

impl NoneEncoder {
    pub fn new(ctx: EncodingContext) -> NoneEncoder {
        NoneEncoder { ctx, bytes: 0 }
    }

    /// The encoding context and the count of the open block's bytes, for a caller that writes
    /// cells with [`write_none_cell`] itself (the writer's row path) and adds what it wrote.
    #[inline]
    pub(crate) fn parts(&mut self) -> (EncodingContext, &mut usize) {
        (self.ctx, &mut self.bytes)
    }
}

/// Appends one cell in NONE format; returns the bytes written.
///
/// The writer's hot path: one capacity check, the fixed-size fields stored directly and the
/// variable pieces copied by [`copy_short`], no bounds check or
/// length update per piece.
#[inline(always)]
pub(crate) fn write_none_cell(
    ctx: &EncodingContext,
    cell: &CellRef<'_>,
    out: &mut Vec<u8>,
) -> usize {
    let head_len = 2 + cell.row.len() + 1 + cell.family.len();
    // SAFETY: the closure stores u16 row length | row | u8 family length | family, which is
    // `head_len` bytes, at `d`, reading only the cell's row and family.
    write_record(ctx, cell, head_len, out, |mut d| unsafe {
        d.cast::<[u8; 2]>()
            .write_unaligned((cell.row.len() as u16).to_be_bytes());
        d = d.add(2);
        copy_short(d, cell.row);
        d = d.add(cell.row.len());
        *d = cell.family.len() as u8;
        d = d.add(1);
        copy_short(d, cell.family);
    })
}

/// [`write_none_cell`] for a cell whose key starts with `key_head`, the encoding of its row
/// and family (`u16 row length | row | u8 family length | family`), built once for the cells
/// of a row: one copy instead of four stores. The caller guarantees that `key_head` is that.
#[inline(always)]
pub(crate) fn write_none_cell_headed(
    ctx: &EncodingContext,
    key_head: &[u8],
    cell: &CellRef<'_>,
    out: &mut Vec<u8>,
) -> usize {
    // SAFETY: the closure copies `key_head`, `key_head.len()` bytes, to `d`.
    write_record(ctx, cell, key_head.len(), out, |d| unsafe {
        copy_short(d, key_head)
    })
}

/// Appends `cell`'s NONE record whose key starts with `head_len` bytes of row and family,
/// stored by `write_head` at the pointer it is given (which must write exactly `head_len`
/// bytes there and read nothing of `out`); returns the bytes written.
#[inline(always)]
fn write_record(
    ctx: &EncodingContext,
    cell: &CellRef<'_>,
    head_len: usize,
    out: &mut Vec<u8>,
    write_head: impl FnOnce(*mut u8),
) -> usize {
    let start = out.len();
    let key_len = head_len + cell.qualifier.len() + 9;
    let tags = if ctx.include_tags {
        2 + cell.tags.len()
    } else {
        0
    };
    let mvcc = usize::from(ctx.include_mvcc && cell.seq_id <= 127);
    let total = 8 + key_len + cell.value.len() + tags + mvcc;
    out.reserve(total);
    // SAFETY: `reserve` made room for `total` bytes after `start`. The stores below write
    // 4 + 4 + head + qualifier + 8 + 1 + value (+ 2 + tags) (+ 1) bytes, in order and without
    // gaps (`write_head` exactly `head_len`); that sum is `total` (the key is head + qualifier
    // + 8 + 1 bytes, `key_len`). Reads stay inside the cell's slices and what `write_head`
    // reads, none of which can overlap `out`'s spare capacity. So `start .. start + total` is
    // initialised before the length is set.
    unsafe {
        let d = out.as_mut_ptr().add(start);
        d.cast::<[u8; 4]>()
            .write_unaligned((key_len as u32).to_be_bytes());
        d.add(4)
            .cast::<[u8; 4]>()
            .write_unaligned((cell.value.len() as u32).to_be_bytes());
        write_head(d.add(8));
        let mut d = d.add(8 + head_len);
        copy_short(d, cell.qualifier);
        d = d.add(cell.qualifier.len());
        d.cast::<[u8; 8]>()
            .write_unaligned(cell.timestamp.to_be_bytes());
        *d.add(8) = cell.cell_type.code();
        d = d.add(9);
        copy_short(d, cell.value);
        d = d.add(cell.value.len());
        if ctx.include_tags {
            d.cast::<[u8; 2]>()
                .write_unaligned((cell.tags.len() as u16).to_be_bytes());
            d = d.add(2);
            copy_short(d, cell.tags);
            d = d.add(cell.tags.len());
        }
        if mvcc == 1 {
            *d = cell.seq_id as u8; // put_vlong's one-byte form
        }
        out.set_len(start + total);
    }
    if ctx.include_mvcc && mvcc == 0 {
        put_vlong(out, cell.seq_id as i64);
    }
    out.len() - start
}

impl CellEncoder for NoneEncoder {
    fn start_block(&mut self, _out: &mut Vec<u8>) {
        self.bytes = 0;
    }

    #[inline]
    fn encode(&mut self, cell: &CellRef<'_>, out: &mut Vec<u8>) -> Result<()> {
        self.bytes += write_none_cell(&self.ctx, cell, out);
        Ok(())
    }

    fn finish_block(&mut self, _out: &mut Vec<u8>) {}

    #[inline]
    fn encoded_bytes(&self) -> usize {
        self.bytes
    }

    #[inline]
    fn unencoded_bytes(&self) -> usize {
        self.bytes
    }
}

/// Reads NONE-format cells from `payload[start..end]`.
pub struct NoneDecoder {
    payload: Payload,
    ctx: EncodingContext,
    /// File offset of the block, for errors.
    block_offset: u64,
    start: usize,
    end: usize,
    /// Where the next cell starts.
    next: usize,
    /// Offset of the current cell's record.
    current: usize,
    // Invariant (what `cell` relies on to slice without checks): `key`, `value` and `tags`
    // lie within `payload`, and `layout`'s row, family and qualifier within `key` (ranges
    // relative to the key's start). They are set together, only by `with_range` (all empty)
    // and by `advance` / `advance_checked` from a record read within the payload and a key
    // layout parsed from that record's key; `payload` is never changed.
    key: Range<usize>,
    value: Range<usize>,
    tags: Range<usize>,
    seq_id: u64,
    layout: KeyLayout,
}

impl NoneDecoder {
    /// A decoder over the whole payload, starting `start` bytes in.
    pub fn new(
        payload: impl Into<Payload>,
        start: usize,
        ctx: EncodingContext,
        block_offset: u64,
    ) -> NoneDecoder {
        let payload = payload.into();
        let end = payload.len();
        NoneDecoder::with_range(payload, start, end, ctx, block_offset)
    }

    /// A decoder over `payload[start..end]`.
    pub fn with_range(
        payload: Payload,
        start: usize,
        end: usize,
        ctx: EncodingContext,
        block_offset: u64,
    ) -> NoneDecoder {
        let end = end.min(payload.len());
        let start = start.min(end);
        NoneDecoder {
            payload,
            ctx,
            block_offset,
            start,
            end,
            next: start,
            current: start,
            key: 0..0,
            value: 0..0,
            tags: 0..0,
            seq_id: 0,
            layout: KeyLayout::default(),
        }
    }

    /// Offset (within the payload) of the current cell's record.
    pub fn current_offset(&self) -> usize {
        self.current
    }

    /// Positions the cursor so that the next `advance` reads the cell at `offset`.
    pub fn reposition(&mut self, offset: usize) {
        self.next = offset.clamp(self.start, self.end);
    }

    /// The payload.
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    fn corrupt(&self, detail: String) -> FormatError {
        FormatError::corrupt(
            "data block",
            self.block_offset,
            format!("cell at payload byte {}: {detail}", self.next),
        )
    }
}

impl NoneDecoder {
    /// The row and total length of the record at payload offset `at`, read from its length
    /// fields only; `None` when anything does not fit (then [`CellDecoder::advance`] reads
    /// the record and names what is wrong).
    #[inline]
    fn record_row(&self, at: usize) -> Option<(&[u8], usize)> {
        let r = self.payload.get(at..self.end)?;
        let word = |i: usize| -> Option<usize> {
            Some(u32::from_be_bytes(r.get(i..i + 4)?.try_into().ok()?) as usize)
        };
        let (klen, vlen) = (word(0)?, word(4)?);
        let row_len = u16::from_be_bytes(r.get(8..10)?.try_into().ok()?) as usize;
        if 2 + row_len > klen {
            return None;
        }
        let row = r.get(10..10 + row_len)?;
        let mut len = 8usize.checked_add(klen)?.checked_add(vlen)?;
        if self.ctx.include_tags {
            let tags = u16::from_be_bytes(r.get(len..len + 2)?.try_into().ok()?) as usize;
            len += 2 + tags;
        }
        if self.ctx.include_mvcc {
            len += vlong_total_len(*r.get(len)? as i8);
        }
        (len <= r.len()).then_some((row, len))
    }
}

impl NoneDecoder {
    /// Where a seek for `row` may start stepping, from the shared block's seek index (made
    /// here on the block's second seek): the last indexed record whose row sorts before
    /// `row`. `None`: from the start (the first seek, no index, or no indexed row before
    /// `row`).
    #[inline]
    fn indexed_start(&self, row: &[u8]) -> Option<usize> {
        let Payload::Shared(block) = &self.payload else {
            return None;
        };
        let index = block.seek_index(|| self.make_seek_index())?;
        if index.range != (self.start..self.end) || index.ctx != self.ctx {
            return None;
        }
        let before = index
            .offsets
            .partition_point(|&at| self.record_row(at as usize).is_some_and(|(r, _)| r < row));
        let at = *index.offsets.get(before.checked_sub(1)?)? as usize;
        Some(at)
    }

    /// The seek index of this decoder's records: every record's lengths read as a seek
    /// reads them, and an offset kept at least [`SeekIndex::STRIDE`] bytes after the last
    /// one kept. `None` when a record does not parse, the records do not end where the block
    /// does, or a row sorts before the one of the record ahead of it (a seek then steps from
    /// the start, reaching what it reached before; the scan that decodes such a block names
    /// what is wrong).
    fn make_seek_index(&self) -> Option<SeekIndex> {
        let mut offsets = Vec::with_capacity((self.end - self.start) / SeekIndex::STRIDE + 1);
        let mut at = self.start;
        let mut last_kept = None::<usize>;
        let mut prev_row: &[u8] = &[];
        while at < self.end {
            let (row, len) = self.record_row(at)?;
            if row < prev_row {
                return None;
            }
            if last_kept.is_none_or(|k| at - k >= SeekIndex::STRIDE) {
                offsets.push(u32::try_from(at).ok()?);
                last_kept = Some(at);
            }
            prev_row = row;
            at += len;
        }
        (at == self.end).then(|| SeekIndex {
            range: self.start..self.end,
            ctx: self.ctx,
            offsets: offsets.into_boxed_slice(),
        })
    }
}

/// Byte ranges of one NONE record within the payload.
struct Record {
    key: Range<usize>,
    value: Range<usize>,
    tags: Range<usize>,
    seq_id: u64,
    /// Where the next record starts.
    end: usize,
}

impl NoneDecoder {
    /// The record at payload offset `at`, when every length in it fits inside the block;
    /// `None` otherwise (then [`NoneDecoder::advance_checked`] reads it and names what is
    /// wrong). The fast path of [`CellDecoder::advance`]: one bounds check per field.
    #[inline(always)]
    fn record_at(&self, at: usize) -> Option<Record> {
        let r = self.payload.get(at..self.end)?;
        let word = |i: usize| -> Option<usize> {
            Some(u32::from_be_bytes(r.get(i..i + 4)?.try_into().ok()?) as usize)
        };
        let (klen, vlen) = (word(0)?, word(4)?);
        let key = 8..8usize.checked_add(klen)?;
        let value = key.end..key.end.checked_add(vlen)?;
        let mut pos = value.end;
        let tags = if self.ctx.include_tags {
            let n = u16::from_be_bytes(r.get(pos..pos.checked_add(2)?)?.try_into().ok()?) as usize;
            pos += 2;
            let t = pos..pos + n;
            pos += n;
            t
        } else {
            pos..pos
        };
        let seq_id = if self.ctx.include_mvcc {
            let first = *r.get(pos)? as i8;
            let n = vlong_total_len(first);
            let v = if n == 1 {
                i64::from(first)
            } else {
                let x = r
                    .get(pos + 1..pos + n)?
                    .iter()
                    .fold(0i64, |x, b| (x << 8) | i64::from(*b));
                if first < -120 {
                    !x
                } else {
                    x
                }
            };
            pos += n;
            v as u64
        } else {
            0
        };
        if pos > r.len() {
            return None;
        }
        Some(Record {
            key: at + key.start..at + key.end,
            value: at + value.start..at + value.end,
            tags: at + tags.start..at + tags.end,
            seq_id,
            end: at + pos,
        })
    }

    /// [`CellDecoder::advance`] through the checking cursor, which names what is wrong with
    /// a record the fast path could not read.
    #[cold]
    fn advance_checked(&mut self) -> Result<bool> {
        if self.next >= self.end {
            return Ok(false);
        }
        let region = &self.payload[self.next..self.end];
        let mut c = Cursor::new(region, self.block_offset, "cell");
        let parsed = (|| -> Result<(usize, usize, usize, usize, u64)> {
            let klen = c.u32()? as usize;
            let vlen = c.u32()? as usize;
            c.skip(klen)?;
            c.skip(vlen)?;
            let tags_len = if self.ctx.include_tags {
                c.u16()? as usize
            } else {
                0
            };
            c.skip(tags_len)?;
            let seq = if self.ctx.include_mvcc {
                c.vlong()? as u64
            } else {
                0
            };
            Ok((klen, vlen, tags_len, c.position(), seq))
        })();
        let (klen, vlen, tags_len, total, seq) = parsed.map_err(|e| self.corrupt(e.to_string()))?;
        let base = self.next;
        let key = base + 8..base + 8 + klen;
        let layout = KeyLayout::parse(&self.payload[key.clone()], self.block_offset)
            .map_err(|e| self.corrupt(e.to_string()))?;
        let value = key.end..key.end + vlen;
        let tags_start = value.end + if self.ctx.include_tags { 2 } else { 0 };
        self.current = base;
        self.key = key;
        self.value = value;
        self.tags = tags_start..tags_start + tags_len;
        self.seq_id = seq;
        self.layout = layout;
        self.next = base + total;
        Ok(true)
    }
}

impl CellDecoder for NoneDecoder {
    /// HBase's `blockSeek`: records whose row sorts before the target's are stepped over by
    /// their length fields alone; from the first other one, cells are decoded (and checked)
    /// and compared in full.
    fn seek(&mut self, target: &KeyView<'_>) -> Result<bool> {
        self.rewind();
        if let Some(at) = self.indexed_start(target.row) {
            self.next = at;
        }
        while let Some((row, len)) = self.record_row(self.next) {
            if row >= target.row {
                break;
            }
            self.next += len;
        }
        while self.advance()? {
            if compare_keys(&self.layout.view(self.key()), target).is_ge() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    #[inline(always)]
    fn advance(&mut self) -> Result<bool> {
        if self.next >= self.end {
            return Ok(false);
        }
        if let Some(r) = self.record_at(self.next) {
            if let Some(layout) = KeyLayout::parse_valid(&self.payload[r.key.clone()]) {
                self.current = self.next;
                self.next = r.end;
                self.key = r.key;
                self.value = r.value;
                self.tags = r.tags;
                self.seq_id = r.seq_id;
                self.layout = layout;
                return Ok(true);
            }
        }
        self.advance_checked()
    }

    #[inline]
    fn key(&self) -> &[u8] {
        &self.payload[self.key.clone()]
    }

    /// The cell from one read of the payload, its slices taken without bounds checks: the
    /// checks were made once, when the record was read (see the struct's invariant). The six
    /// checks per cell cost a table scan 2.6% (15.5 against 15.9M cells/s,
    /// `benches/read_bench.sh`, AMD EPYC): a merge reads the current cell more than once.
    #[inline(always)]
    fn cell(&self) -> CellRef<'_> {
        let p: &[u8] = &self.payload;
        let l = &self.layout;
        debug_assert!(self.key.start <= self.key.end && self.key.end <= p.len());
        debug_assert!(self.value.start <= self.value.end && self.value.end <= p.len());
        debug_assert!(self.tags.start <= self.tags.end && self.tags.end <= p.len());
        debug_assert!([&l.row, &l.family, &l.qualifier]
            .iter()
            .all(|r| r.start <= r.end && r.end <= self.key.len()));
        // SAFETY: the struct's invariant: `key`, `value` and `tags` lie within the payload
        // (which never changes), and the layout's row, family and qualifier within `key`.
        unsafe {
            let key = p.get_unchecked(self.key.clone());
            CellRef {
                row: key.get_unchecked(l.row.clone()),
                family: key.get_unchecked(l.family.clone()),
                qualifier: key.get_unchecked(l.qualifier.clone()),
                timestamp: l.timestamp,
                cell_type: l.cell_type,
                value: p.get_unchecked(self.value.clone()),
                tags: p.get_unchecked(self.tags.clone()),
                seq_id: self.seq_id,
            }
        }
    }

    #[inline]
    fn layout(&self) -> &KeyLayout {
        &self.layout
    }

    #[inline]
    fn value(&self) -> &[u8] {
        &self.payload[self.value.clone()]
    }

    #[inline]
    fn tags(&self) -> &[u8] {
        &self.payload[self.tags.clone()]
    }

    #[inline]
    fn seq_id(&self) -> u64 {
        self.seq_id
    }

    fn rewind(&mut self) {
        self.next = self.start;
    }

    fn into_payload(self: Box<Self>) -> Vec<u8> {
        (*self).into_payload_vec()
    }
}

impl NoneDecoder {
    /// [`CellDecoder::into_payload`] for a decoder held by value.
    pub fn into_payload_vec(self) -> Vec<u8> {
        self.payload.into_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::{Cell, CellType, CellTypeOwned, KeyView};

    fn cells() -> Vec<Cell> {
        let mut v = Vec::new();
        for i in 0..50u32 {
            let mut c = Cell::put(
                format!("row{i:03}").as_bytes(),
                b"f",
                b"q",
                1000 - i as i64,
                &i.to_be_bytes(),
            );
            if i % 7 == 0 {
                c.tags = vec![0, 2, 1, i as u8];
            }
            if i % 5 == 0 {
                c.cell_type = CellTypeOwned(CellType::DeleteColumn);
                c.value.clear();
            }
            c.seq_id = i as u64 * 1000;
            v.push(c);
        }
        v
    }

    /// A NONE block payload of `cells`.
    fn block(ctx: EncodingContext, cells: &[Cell]) -> Vec<u8> {
        let mut enc = NoneEncoder::new(ctx);
        let mut payload = Vec::new();
        enc.start_block(&mut payload);
        for c in cells {
            enc.encode(&c.as_ref(), &mut payload).unwrap();
        }
        enc.finish_block(&mut payload);
        payload
    }

    proptest::proptest! {
        /// `cell`, which slices without bounds checks, gives what the checked accessors give
        /// (`key`, `value`, `tags` and the layout's own `cell`) for every cell read from any
        /// bytes, valid records damaged at a random place or not: the invariant it relies on
        /// holds after whatever `advance` accepts (in debug builds `cell` also asserts it).
        #[test]
        fn unchecked_cell_equals_the_checked_one(
            damage in proptest::collection::vec((0usize..4096, proptest::prelude::any::<u8>()), 0..4),
            noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
            tags in proptest::prelude::any::<bool>(),
            mvcc in proptest::prelude::any::<bool>(),
        ) {
            let ctx = EncodingContext { include_tags: tags, include_mvcc: mvcc, compress_tags: false };
            let mut payload = block(ctx, &cells()[..20]);
            for (at, byte) in damage {
                let len = payload.len().max(1);
                if let Some(b) = payload.get_mut(at % len) {
                    *b = byte;
                }
            }
            payload.extend_from_slice(&noise);
            let mut dec = NoneDecoder::new(payload, 0, ctx, 0);
            let mut read = 0;
            while let Ok(true) = dec.advance() {
                let want = dec.layout().cell(dec.key(), dec.value(), dec.tags(), dec.seq_id());
                proptest::prop_assert_eq!(dec.cell(), want);
                read += 1;
                proptest::prop_assert!(read <= 1 + dec.payload().len() / 8);
            }
        }
    }

    #[test]
    fn round_trip_with_and_without_tags_and_mvcc() {
        for (tags, mvcc) in [(false, false), (true, false), (false, true), (true, true)] {
            let ctx = EncodingContext {
                include_tags: tags,
                include_mvcc: mvcc,
                compress_tags: false,
            };
            let mut enc = NoneEncoder::new(ctx);
            let mut payload = Vec::new();
            enc.start_block(&mut payload);
            let cells = cells();
            for c in &cells {
                enc.encode(&c.as_ref(), &mut payload).unwrap();
            }
            enc.finish_block(&mut payload);
            assert_eq!(enc.encoded_bytes(), payload.len());
            let mut dec = NoneDecoder::new(payload, 0, ctx, 0);
            for c in &cells {
                assert!(dec.advance().unwrap());
                let got = dec.cell();
                assert_eq!(got.row, &c.row[..]);
                assert_eq!(got.value, &c.value[..]);
                assert_eq!(got.tags, if tags { &c.tags[..] } else { &[][..] });
                assert_eq!(got.seq_id, if mvcc { c.seq_id } else { 0 });
            }
            assert!(!dec.advance().unwrap());
            let target = cells[20].as_ref();
            assert!(dec.seek(&KeyView::of(&target)).unwrap());
            assert_eq!(dec.cell().row, &cells[20].row[..]);
        }
    }

    /// A decoded cell's key, value, tags and sequence id.
    type Decoded = (Vec<u8>, Vec<u8>, Vec<u8>, u64);

    /// Every cell a decoder gives until the end or an error (`true` at an error).
    fn decode_all(d: &mut NoneDecoder, checked: bool) -> (Vec<Decoded>, bool) {
        let mut out = Vec::new();
        loop {
            let step = match checked {
                true if d.next < d.end => d.advance_checked(),
                true => Ok(false),
                false => d.advance(),
            };
            match step {
                Ok(true) => {
                    let c = d.cell();
                    out.push((
                        d.key().to_vec(),
                        c.value.to_vec(),
                        c.tags.to_vec(),
                        c.seq_id,
                    ));
                }
                Ok(false) => return (out, false),
                Err(_) => return (out, true),
            }
        }
    }

    /// The fast path of `advance` and the checking cursor agree on every record: the same
    /// cells, and an error at the same cell, for every truncation and every single-byte change
    /// of a block (lengths, keys, tags, MVCC varints).
    #[test]
    fn fast_path_reads_every_damaged_block_as_the_checking_cursor_does() {
        for (tags, mvcc) in [(false, false), (true, true)] {
            let ctx = EncodingContext {
                include_tags: tags,
                include_mvcc: mvcc,
                compress_tags: false,
            };
            let payload = block(ctx, &cells()[..6]);
            let mut variants = Vec::new();
            for n in 0..=payload.len() {
                variants.push(payload[..n].to_vec());
            }
            for i in 0..payload.len() {
                for x in [0x01u8, 0x80, 0xFF] {
                    let mut v = payload.clone();
                    v[i] ^= x;
                    variants.push(v);
                }
            }
            for v in variants {
                let fast = decode_all(&mut NoneDecoder::new(v.clone(), 0, ctx, 0), false);
                let checked = decode_all(&mut NoneDecoder::new(v.clone(), 0, ctx, 0), true);
                assert_eq!(fast, checked, "block {v:?}");
            }
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let ctx = EncodingContext {
            include_tags: true,
            include_mvcc: true,
            compress_tags: false,
        };
        for bytes in [
            vec![0u8, 0, 0, 200, 0, 0, 0, 1, 1],
            vec![
                0, 0, 0, 12, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            ],
        ] {
            let mut d = NoneDecoder::new(bytes, 0, ctx, 4096);
            assert!(d.advance().is_err());
        }
    }
}
