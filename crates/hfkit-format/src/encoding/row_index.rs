//! Encoding ROW_INDEX_V1 (id 7): NONE-format cells followed by an index of where each row
//! starts, so a reader can binary-search rows. Spec: `formats/encodings.md` §"ROW_INDEX_V1".
//!
//! ```text
//! payload: i16 7 | cells (exact NONE format, none.rs) | i32 numRows
//!          | i32 rowOffset[numRows]   (relative to the first cell; the first is 0)
//!          | i32 cellsBytes           (length of the cell section)
//! ```
//! A row starts at every cell whose row differs from the previous cell's (and at the first).
//! Counters: unencoded = NONE size; encoded = NONE size + 4 for each cell that starts a row.

use std::cmp::Ordering;

use super::codec::{CellDecoder, CellEncoder, EncodingContext, KeyLayout, Payload};
use super::kind::DataBlockEncoding;
use super::none::{write_none_cell, NoneDecoder};
use crate::cell::{compare_keys, CellRef, KeyView};
use crate::error::{FormatError, Result};

/// Bytes of the encoding id at the start of the payload.
pub const ID_LEN: usize = 2;
/// Bytes of `numRows` and of `cellsBytes`, and of each row offset.
pub const INT_LEN: usize = 4;

/// Writes ROW_INDEX_V1 blocks.
pub struct RowIndexEncoder {
    ctx: EncodingContext,
    cells_start: usize,
    row_offsets: Vec<u32>,
    prev_row: Vec<u8>,
    has_prev: bool,
    /// Cells in the current block (for the out-of-order error).
    cells: u64,
    unencoded: usize,
    encoded: usize,
}

impl RowIndexEncoder {
    pub fn new(ctx: EncodingContext) -> RowIndexEncoder {
        RowIndexEncoder {
            ctx,
            cells_start: ID_LEN,
            row_offsets: Vec::new(),
            prev_row: Vec::new(),
            has_prev: false,
            cells: 0,
            unencoded: 0,
            encoded: 0,
        }
    }
}

impl CellEncoder for RowIndexEncoder {
    fn start_block(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(&DataBlockEncoding::RowIndexV1.id().to_be_bytes());
        self.cells_start = out.len();
        self.row_offsets.clear();
        self.has_prev = false;
        self.cells = 0;
        self.unencoded = 0;
        self.encoded = 0;
    }

    fn encode(&mut self, cell: &CellRef<'_>, out: &mut Vec<u8>) -> Result<()> {
        cell.validate()?;
        let mut index_bytes = 0;
        let new_row = match self.has_prev {
            false => true,
            true => match self.prev_row.as_slice().cmp(cell.row) {
                Ordering::Less => true,
                Ordering::Equal => false,
                Ordering::Greater => {
                    return Err(FormatError::OutOfOrder {
                        index: self.cells,
                        detail: "row sorts before the previous cell's row in the same block".into(),
                    })
                }
            },
        };
        if new_row {
            self.row_offsets.push((out.len() - self.cells_start) as u32);
            self.prev_row.clear();
            self.prev_row.extend_from_slice(cell.row);
            index_bytes = INT_LEN;
        }
        self.has_prev = true;
        self.cells += 1;
        let size = write_none_cell(&self.ctx, cell, out);
        self.unencoded += size;
        self.encoded += size + index_bytes;
        Ok(())
    }

    fn finish_block(&mut self, out: &mut Vec<u8>) {
        let cells_bytes = out.len().saturating_sub(self.cells_start) as u32;
        out.extend_from_slice(&(self.row_offsets.len() as u32).to_be_bytes());
        for off in &self.row_offsets {
            out.extend_from_slice(&off.to_be_bytes());
        }
        out.extend_from_slice(&cells_bytes.to_be_bytes());
    }

    fn encoded_bytes(&self) -> usize {
        self.encoded
    }

    fn unencoded_bytes(&self) -> usize {
        self.unencoded
    }
}

/// Reads a ROW_INDEX_V1 block: a [`NoneDecoder`] over the cell section, plus the row index
/// for [`CellDecoder::seek`]. While scanning it checks that rows start exactly at the indexed
/// offsets.
pub struct RowIndexDecoder {
    cells: NoneDecoder,
    block_offset: u64,
    /// Payload offset of `rowOffset[0]`.
    index_at: usize,
    num_rows: usize,
    /// Index of the next row start expected while scanning.
    next_row: usize,
    /// Payload range of the current cell's row (to detect row changes).
    row: std::ops::Range<usize>,
    has_current: bool,
    broken: bool,
}

fn read_u32(payload: &[u8], at: usize) -> Option<u32> {
    let b = payload.get(at..at + INT_LEN)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

impl RowIndexDecoder {
    /// A decoder over a whole ENCODED_DATA payload (starting with the encoding id).
    pub fn new(
        payload: impl Into<Payload>,
        ctx: EncodingContext,
        block_offset: u64,
    ) -> Result<RowIndexDecoder> {
        let payload: Payload = payload.into();
        let corrupt = |detail: String| {
            FormatError::corrupt(
                "encoded data block",
                block_offset,
                format!("ROW_INDEX_V1: {detail}"),
            )
        };
        let len = payload.len();
        if len < ID_LEN + 2 * INT_LEN {
            return Err(corrupt(format!(
                "payload of {len} bytes is too short for its row index"
            )));
        }
        let id = u16::from_be_bytes([payload[0], payload[1]]);
        if id != DataBlockEncoding::RowIndexV1.id() {
            return Err(corrupt(format!("encoding id {id}")));
        }
        let cells_bytes = read_u32(&payload, len - INT_LEN).unwrap_or(u32::MAX) as usize;
        let cells_end = ID_LEN
            .checked_add(cells_bytes)
            .filter(|e| *e + 2 * INT_LEN <= len)
            .ok_or_else(|| {
                corrupt(format!(
                    "cell section of {cells_bytes} bytes does not fit a {len}-byte payload"
                ))
            })?;
        let num_rows = read_u32(&payload, cells_end).unwrap_or(u32::MAX) as usize;
        let index_at = cells_end + INT_LEN;
        let expected_len = num_rows
            .checked_mul(INT_LEN)
            .and_then(|n| n.checked_add(index_at + INT_LEN));
        if expected_len != Some(len) {
            return Err(corrupt(format!(
                "{num_rows} row offsets do not fit between the cell section ({cells_bytes} bytes) and the payload end ({len} bytes)"
            )));
        }
        if (num_rows == 0) != (cells_bytes == 0) {
            return Err(corrupt(format!(
                "{num_rows} rows in a {cells_bytes}-byte cell section"
            )));
        }
        let mut prev: Option<u32> = None;
        for i in 0..num_rows {
            let off = read_u32(&payload, index_at + i * INT_LEN).unwrap_or(u32::MAX);
            let ok = match prev {
                None => off == 0,
                Some(p) => off > p && (off as usize) < cells_bytes,
            };
            if !ok {
                return Err(corrupt(format!(
                    "row offset {i} is {off}, out of order or outside the cells"
                )));
            }
            prev = Some(off);
        }
        Ok(RowIndexDecoder {
            cells: NoneDecoder::with_range(payload, ID_LEN, cells_end, ctx, block_offset),
            block_offset,
            index_at,
            num_rows,
            next_row: 0,
            row: 0..0,
            has_current: false,
            broken: false,
        })
    }

    /// The payload offset of row `i`'s first cell.
    fn row_start(&self, i: usize) -> usize {
        ID_LEN + read_u32(self.cells.payload(), self.index_at + i * INT_LEN).unwrap_or(0) as usize
    }

    /// The row of the cell at payload offset `at`, read without moving the cursor.
    fn row_at(&self, at: usize) -> Option<&[u8]> {
        let p = self.cells.payload();
        let row_len = u16::from_be_bytes([*p.get(at + 8)?, *p.get(at + 9)?]) as usize;
        let key_len = read_u32(p, at)? as usize;
        if row_len + 2 > key_len {
            return None;
        }
        p.get(at + 10..at + 10 + row_len)
    }

    fn corrupt(&self, detail: String) -> FormatError {
        FormatError::corrupt(
            "encoded data block",
            self.block_offset,
            format!("ROW_INDEX_V1: {detail}"),
        )
    }
}

impl CellDecoder for RowIndexDecoder {
    fn advance(&mut self) -> Result<bool> {
        if self.broken {
            return Err(self.corrupt("advance after a corrupt cell".into()));
        }
        let result = self.cells.advance();
        let has = match result {
            Ok(h) => h,
            Err(e) => {
                self.broken = true;
                return Err(e);
            }
        };
        if !has {
            if self.next_row != self.num_rows {
                self.broken = true;
                return Err(self.corrupt(format!(
                    "row index lists {} rows, the cells hold {}",
                    self.num_rows, self.next_row
                )));
            }
            return Ok(false);
        }
        let at = self.cells.current_offset();
        let row_start = at + 8 + self.cells.layout().row.start;
        let row = row_start..row_start + self.cells.layout().row.len();
        let indexed = self.next_row < self.num_rows && self.row_start(self.next_row) == at;
        let p = self.cells.payload();
        let changed = !self.has_current || p.get(row.clone()) != p.get(self.row.clone());
        if indexed != changed {
            self.broken = true;
            return Err(self.corrupt(format!(
                "cell at payload byte {at} {} a row but the row index {} it",
                if changed { "starts" } else { "does not start" },
                if indexed { "lists" } else { "does not list" }
            )));
        }
        if indexed {
            self.next_row += 1;
        }
        self.row = row;
        self.has_current = true;
        Ok(true)
    }

    fn key(&self) -> &[u8] {
        self.cells.key()
    }

    fn layout(&self) -> &KeyLayout {
        self.cells.layout()
    }

    fn value(&self) -> &[u8] {
        self.cells.value()
    }

    fn tags(&self) -> &[u8] {
        self.cells.tags()
    }

    fn seq_id(&self) -> u64 {
        self.cells.seq_id()
    }

    fn rewind(&mut self) {
        self.cells.rewind();
        self.next_row = 0;
        self.row = 0..0;
        self.has_current = false;
        self.broken = false;
    }

    fn into_payload(self: Box<Self>) -> Vec<u8> {
        self.cells.into_payload_vec()
    }

    /// Binary-searches the row index for the first row ≥ the target's row, then scans from
    /// that row's first cell.
    fn seek(&mut self, target: &KeyView<'_>) -> Result<bool> {
        let (mut lo, mut hi) = (0usize, self.num_rows);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let at = self.row_start(mid);
            let row = self.row_at(at).ok_or_else(|| {
                self.corrupt(format!(
                    "row {mid} at payload byte {at} has a malformed key"
                ))
            })?;
            if row < target.row {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        self.rewind();
        if lo == self.num_rows {
            // Every row sorts before the target: position at the end.
            self.cells.reposition(usize::MAX);
            self.next_row = self.num_rows;
            return Ok(false);
        }
        let at = self.row_start(lo);
        self.cells.reposition(at);
        self.next_row = lo;
        while self.advance()? {
            if compare_keys(&self.layout().view(self.key()), target) != Ordering::Less {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
