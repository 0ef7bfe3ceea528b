//! [`Scanner`] (`formats/hfile.md` §"Reading"): the forward walk over every block from
//! offset 0 to the load-on-open section, decoding the data blocks and skipping the others;
//! the checks at its end against the trailer (last data block, entry count); seeks down the
//! index through the reader's block cache; and the bounds a half reader puts on both.

use std::sync::Arc;

use crate::block::{BlockDecoder, BlockType};
use crate::block_cache::CachedBlock;
use crate::cell::{compare_flat_keys, compare_keys, CellRef, KeyView};
use crate::encoding::{new_decoder, CellDecoder, DataBlockDecoder, Payload, SharedBlock};
use crate::error::{FormatError, Result};

use super::file::{HFileReader, HalfRange};

impl HFileReader {
    /// A scanner positioned before the first cell.
    pub fn scanner(&self) -> Result<Scanner<'_>> {
        Ok(Scanner {
            reader: self,
            blocks: self.block_decoder()?,
            decoder: None,
            block_offset: 0,
            next_block: Some(0),
            spare: Vec::new(),
            cells_from_first: Some(0),
            last_data_block: None,
            positioned: false,
            past_half: false,
        })
    }

    /// End of the blocks a scan walks: the load-on-open section, whose blocks opening found
    /// chained from there to the trailer.
    fn scanned_end(&self) -> u64 {
        self.trailer.load_on_open_data_offset
    }
}

/// A forward cursor over the cells of one file.
pub struct Scanner<'r> {
    reader: &'r HFileReader,
    blocks: BlockDecoder,
    decoder: Option<DataBlockDecoder>,
    /// Offset of the block the decoder reads.
    block_offset: u64,
    /// Offset to look for the next data block at, or `None` after the last one.
    next_block: Option<u64>,
    spare: Vec<u8>,
    /// Cells returned since the first cell of the file; `None` after a seek.
    cells_from_first: Option<u64>,
    /// Offset of the last data block loaded.
    last_data_block: Option<u64>,
    /// A `next` or `seek` has positioned the scanner (a top half starts at its split key).
    positioned: bool,
    /// A bottom half's scanner has reached its split key: no more cells.
    past_half: bool,
}

impl<'r> Scanner<'r> {
    /// Back to before the first cell, as a new scanner.
    fn restart(&mut self) {
        if let Some(old) = self.decoder.take() {
            self.spare = old.into_payload_vec();
        }
        self.block_offset = 0;
        self.next_block = Some(0);
        self.cells_from_first = Some(0);
        self.last_data_block = None;
    }

    /// Offset of the data block the current cell came from.
    pub fn block_offset(&self) -> u64 {
        self.block_offset
    }

    /// Loads the data block at or after `offset` (skipping inline and index blocks). False at
    /// the end of the scanned blocks, after checking the trailer against what the walk found.
    fn load_from(&mut self, offset: u64) -> Result<bool> {
        self.load(offset, false, None)
    }

    /// Installs a decoder over `payload`, the data block at `offset` (`next`: where the
    /// following block starts).
    fn install(
        &mut self,
        block_type: BlockType,
        payload: Payload,
        offset: u64,
        next: u64,
    ) -> Result<()> {
        if let Some(old) = self.decoder.take() {
            let spare = old.into_payload_vec();
            if spare.capacity() > 0 {
                self.spare = spare;
            }
        }
        self.decoder = Some(new_decoder(block_type, payload, self.reader.ctx, offset)?);
        self.block_offset = offset;
        self.last_data_block = Some(offset);
        self.next_block = Some(next);
        Ok(())
    }

    /// [`Scanner::load_from`]; with `cached`, a data block found at `offset` itself comes
    /// from, or goes into, the reader's block cache (if it has one). `size`: the on-disk size
    /// the index gives the block at `offset` (a file read by ranges reads just that).
    fn load(&mut self, mut offset: u64, cached: bool, mut size: Option<u64>) -> Result<bool> {
        let end = self.reader.scanned_end();
        let cache = match cached {
            true => self.reader.block_cache.get().cloned(),
            false => None,
        };
        let cached_block = cache.as_ref().and_then(|c| c.get(self.reader.id, offset));
        // (The cache holds index blocks too: a broken index naming one is read and refused
        // below, as without a cache.)
        if let Some(b) = cached_block.filter(|b| b.header.block_type.is_data()) {
            // Checked when it was read: a data block ending inside the scanned blocks.
            let next = offset + b.header.on_disk_size_with_header();
            self.install(
                b.header.block_type,
                Payload::Shared(b.payload),
                offset,
                next,
            )?;
            return Ok(true);
        }
        loop {
            if offset >= end {
                self.next_block = None;
                self.check_end()?;
                return Ok(false);
            }
            let mut payload = std::mem::take(&mut self.spare);
            let h = self.reader.read_block_sized(
                &mut self.blocks,
                offset,
                size.take(),
                &mut payload,
            )?;
            let next = offset + h.on_disk_size_with_header();
            if next > end {
                return Err(FormatError::corrupt(
                    "block",
                    offset,
                    format!("runs past the load-on-open section at {end}"),
                ));
            }
            if h.block_type.is_data() {
                let payload = match cache.as_ref() {
                    Some(c) => {
                        let shared = Arc::new(SharedBlock::new(payload));
                        let block = CachedBlock {
                            header: h,
                            payload: shared.clone(),
                        };
                        c.insert(self.reader.id, offset, block);
                        Payload::Shared(shared)
                    }
                    None => Payload::Owned(payload),
                };
                self.install(h.block_type, payload, offset, next)?;
                return Ok(true);
            }
            self.spare = payload;
            offset = next;
        }
    }

    /// At the end of the scanned blocks: the last data block must be where the trailer says,
    /// and a scan from the first cell must have decoded `entry_count` cells.
    fn check_end(&self) -> Result<()> {
        let t = &self.reader.trailer;
        if let Some(last) = self.last_data_block {
            if last as i64 != t.last_data_block_offset {
                return Err(FormatError::trailer_mismatch(
                    "last_data_block_offset",
                    t.last_data_block_offset,
                    format!("the last data block is at {last}"),
                ));
            }
        }
        if let Some(cells) = self.cells_from_first {
            if cells != t.entry_count {
                return Err(FormatError::trailer_mismatch(
                    "entry_count",
                    t.entry_count,
                    format!("the file holds {cells} cells (decoded to the end)"),
                ));
            }
        }
        Ok(())
    }

    /// The next cell, or `None` at the end of the file (of the half, for a half reader).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<CellRef<'_>>> {
        let found = match self.reader.half.as_ref() {
            Some(h) if h.range == HalfRange::Top && !self.positioned => {
                let key = h.split_key.clone();
                self.seek_in_file(&key)?
            }
            _ if self.past_half => false,
            _ => self.step()?,
        };
        self.positioned = true;
        self.finish_move(found)
    }

    /// [`Scanner::next`] without handing out the cell: true when there is one
    /// ([`Scanner::current`]). For cursors, such as a merge, that read the cell later.
    #[inline]
    pub fn advance(&mut self) -> Result<bool> {
        if self.reader.half.is_some() {
            return Ok(self.next()?.is_some());
        }
        self.positioned = true;
        self.step()
    }

    /// Advances to the next cell of the file, whatever the half; false at the end.
    #[inline]
    fn step(&mut self) -> Result<bool> {
        // The next cell of the open block (the common case, inlined), else the next block's.
        if self.step_in_block()? {
            return Ok(true);
        }
        self.step_to_next_block()
    }

    /// The open block's next cell (counted from the first of the file), if it has one.
    #[inline(always)]
    fn step_in_block(&mut self) -> Result<bool> {
        let Some(d) = self.decoder.as_mut() else {
            return Ok(false);
        };
        let found = d.advance()?;
        if found {
            if let Some(n) = self.cells_from_first.as_mut() {
                *n += 1;
            }
        }
        Ok(found)
    }

    /// [`Scanner::step`] at the end of the open block (or before the first): the next data
    /// block's first cell.
    #[inline(never)]
    fn step_to_next_block(&mut self) -> Result<bool> {
        loop {
            match self.next_block {
                Some(at) => {
                    if !self.load_from(at)? {
                        return Ok(false);
                    }
                }
                None => return Ok(false),
            }
            if self.step_in_block()? {
                return Ok(true);
            }
        }
    }

    /// The current cell after a move that found one (`found`), or `None`; a bottom half ends
    /// at the first cell ≥ its split key.
    fn finish_move(&mut self, found: bool) -> Result<Option<CellRef<'_>>> {
        if !found {
            return Ok(None);
        }
        if let Some(h) = self.reader.half.as_ref() {
            if h.range == HalfRange::Bottom {
                let split = KeyView::parse(&h.split_key);
                let beyond = match (self.decoder.as_ref().map(|d| d.cell()), split) {
                    (Some(c), Some(split)) => compare_keys(&KeyView::of(&c), &split).is_ge(),
                    _ => false,
                };
                if beyond {
                    self.past_half = true;
                    return Ok(None);
                }
            }
        }
        Ok(self.decoder.as_ref().map(|d| d.cell()))
    }

    /// Positions the scanner on the first cell whose key is ≥ `key` (a flat key, e.g.
    /// [`crate::cell::first_on_row`]) and returns it; [`Scanner::current`] is then that
    /// cell and [`Scanner::next`] the one after it. `None` when every cell is smaller. A half
    /// reader's seek stays inside its half.
    pub fn seek(&mut self, key: &[u8]) -> Result<Option<CellRef<'_>>> {
        self.positioned = true;
        self.past_half = false;
        let found = match self.reader.half.as_ref() {
            Some(h)
                if h.range == HalfRange::Top && compare_flat_keys(key, &h.split_key).is_lt() =>
            {
                let split = h.split_key.clone();
                self.seek_in_file(&split)?
            }
            _ => self.seek_in_file(key)?,
        };
        self.finish_move(found)
    }

    /// [`Scanner::seek`] over the whole file; true when it found a cell.
    fn seek_in_file(&mut self, key: &[u8]) -> Result<bool> {
        let target = KeyView::parse(key)
            .ok_or_else(|| FormatError::Invalid("seek key is not a valid cell key".into()))?;
        let Some(entry) = self.reader.locate_block(&mut self.blocks, key)? else {
            // Before the first block's first key: every cell is ≥ `key`, so this is a scan
            // from the first cell (and its end checks the cell count).
            self.restart();
            return self.step();
        };
        self.cells_from_first = None;
        let start = entry.offset;
        let size = Some(u64::from(entry.on_disk_size));
        if !self.load(start, true, size)? || self.block_offset != start {
            // The index names only data blocks: anything else there is a broken index (or a
            // wrong num_data_index_levels), never a reason to read on from a later block.
            return Err(FormatError::corrupt(
                "block index",
                start,
                "the index points at a block that is not a data block",
            ));
        }
        loop {
            let found = match self.decoder.as_mut() {
                Some(d) => d.seek(&target)?,
                None => false,
            };
            if found {
                return Ok(true);
            }
            let next = self.next_block;
            match next {
                Some(at) if self.load_from(at)? => continue,
                _ => return Ok(false),
            }
        }
    }

    /// The cell the scanner is on (after `next` or `seek` returned one).
    #[inline(always)]
    pub fn current(&self) -> Option<CellRef<'_>> {
        if self.past_half {
            return None;
        }
        self.decoder.as_ref().map(|d| d.cell())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::{first_on_row, Cell};
    use crate::writer::{HFileWriter, WriterOptions};

    /// Rows r00..r29, two cells each, in blocks of a few cells.
    fn reader() -> HFileReader {
        let opts = WriterOptions {
            block_size: 64,
            ..WriterOptions::default()
        };
        let mut w = HFileWriter::new(Vec::new(), opts).unwrap();
        for i in 0..30 {
            let row = format!("r{i:02}");
            for q in ["a", "b"] {
                let c = Cell::put(row.as_bytes(), b"f", q.as_bytes(), 1, b"v");
                w.append(&c.as_ref()).unwrap();
            }
        }
        HFileReader::from_bytes(w.finish().unwrap().0).unwrap()
    }

    fn rows(s: &mut Scanner<'_>, first: Option<CellRef<'_>>) -> Vec<String> {
        let mut out: Vec<String> = first
            .map(|c| String::from_utf8_lossy(c.row).into_owned())
            .into_iter()
            .collect();
        while let Some(c) = s.next().unwrap() {
            out.push(String::from_utf8_lossy(c.row).into_owned());
        }
        out.dedup();
        out
    }

    #[test]
    fn halves_split_the_cells_at_the_split_key() {
        let split = first_on_row(b"r10");
        let top = reader().into_half(split.clone(), HalfRange::Top).unwrap();
        let bottom = reader()
            .into_half(split.clone(), HalfRange::Bottom)
            .unwrap();
        assert_eq!(top.half(), Some((split.as_slice(), HalfRange::Top)));
        let mut s = top.scanner().unwrap();
        let got = rows(&mut s, None);
        assert_eq!(got.first().map(String::as_str), Some("r10"));
        assert_eq!(got.len(), 20);
        let mut s = bottom.scanner().unwrap();
        let got = rows(&mut s, None);
        assert_eq!(got.last().map(String::as_str), Some("r09"));
        assert_eq!(got.len(), 10);
        assert!(
            s.current().is_none(),
            "a bottom half ends before its split key"
        );

        // Seeks are clamped to the half.
        let mut s = top.scanner().unwrap();
        let first = s
            .seek(&first_on_row(b"r02"))
            .unwrap()
            .map(|c| c.row.to_vec());
        assert_eq!(first.as_deref(), Some(&b"r10"[..]));
        let first = s
            .seek(&first_on_row(b"r25"))
            .unwrap()
            .map(|c| c.row.to_vec());
        assert_eq!(first.as_deref(), Some(&b"r25"[..]));
        let mut s = bottom.scanner().unwrap();
        assert!(s.seek(&first_on_row(b"r10")).unwrap().is_none());
        assert!(s.seek(&first_on_row(b"r20")).unwrap().is_none());
        let first = s
            .seek(&first_on_row(b"r05"))
            .unwrap()
            .map(|c| c.row.to_vec());
        assert_eq!(first.as_deref(), Some(&b"r05"[..]));
        assert_eq!(rows(&mut s, None).len(), 5, "r05 (second cell) .. r09");

        // A split key outside the file: one half is everything, the other nothing.
        let all = reader()
            .into_half(first_on_row(b"a"), HalfRange::Top)
            .unwrap();
        assert_eq!(rows(&mut all.scanner().unwrap(), None).len(), 30);
        let none = reader()
            .into_half(first_on_row(b"a"), HalfRange::Bottom)
            .unwrap();
        assert!(rows(&mut none.scanner().unwrap(), None).is_empty());
        assert!(reader().into_half(vec![1, 2], HalfRange::Top).is_err());
    }
}
