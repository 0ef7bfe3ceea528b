//! Data block encodings: how cells are laid out inside a data block's payload.
//! Spec: `formats/hfile.md` §"Data blocks" and `formats/encodings.md`.
//!
//! One interface serves the writer and the reader:
//! - [`CellEncoder`]: the writer calls `start_block`, then `encode` per cell, then
//!   `finish_block`, all appending to the block's payload buffer. `encoded_bytes` /
//!   `unencoded_bytes` are HBase's counters that decide where a block is cut.
//! - [`CellDecoder`]: a cursor over one block's (decompressed) payload, yielding cells one at
//!   a time without allocating per cell, with `seek` to the first cell ≥ a key.
//!
//! ```text
//! id (i16 at the head of every ENCODED_DATA payload; DO NOT CHANGE):
//!   NONE 0 (never written in a block), PREFIX 2, DIFF 3, FAST_DIFF 4, ROW_INDEX_V1 7
//! ```
//!
//! Modules: `none` (NONE, also the cell format of ROW_INDEX_V1), `delta` (what PREFIX, DIFF
//! and FAST_DIFF share: framing, common prefix, record suffix, generic encoder/decoder),
//! `prefix`, `diff`, `fast_diff`, `row_index`, and `tags` (tag compression).

use std::cmp::Ordering;
use std::ops::{Deref, Range};
use std::sync::Arc;

use super::block::BlockType;
use super::cell::{compare_keys, CellRef, CellType, KeyView};
use super::error::{FormatError, Result};

pub mod delta;
pub mod diff;
pub mod fast_diff;
mod none;
pub mod prefix;
pub mod row_index;
pub mod tags;

#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod golden_tests;
#[cfg(test)]
pub(crate) mod proptests;

pub use diff::{DiffDecoder, DiffEncoder};
pub use fast_diff::{FastDiffDecoder, FastDiffEncoder};
pub(crate) use none::write_none_cell_headed;
pub use none::{NoneDecoder, NoneEncoder};
pub use prefix::{PrefixDecoder, PrefixEncoder};
pub use row_index::{RowIndexDecoder, RowIndexEncoder};

/// `DataBlockEncoding`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DataBlockEncoding {
    #[default]
    None,
    Prefix,
    Diff,
    FastDiff,
    RowIndexV1,
}

impl DataBlockEncoding {
    pub const ALL: [DataBlockEncoding; 5] = [
        DataBlockEncoding::None,
        DataBlockEncoding::Prefix,
        DataBlockEncoding::Diff,
        DataBlockEncoding::FastDiff,
        DataBlockEncoding::RowIndexV1,
    ];

    pub const fn id(self) -> u16 {
        match self {
            DataBlockEncoding::None => 0,
            DataBlockEncoding::Prefix => 2,
            DataBlockEncoding::Diff => 3,
            DataBlockEncoding::FastDiff => 4,
            DataBlockEncoding::RowIndexV1 => 7,
        }
    }

    pub fn from_id(id: u16) -> Option<DataBlockEncoding> {
        DataBlockEncoding::ALL.into_iter().find(|e| e.id() == id)
    }

    /// HBase's enum name, as stored in FileInfo `DATA_BLOCK_ENCODING`.
    pub const fn name(self) -> &'static str {
        match self {
            DataBlockEncoding::None => "NONE",
            DataBlockEncoding::Prefix => "PREFIX",
            DataBlockEncoding::Diff => "DIFF",
            DataBlockEncoding::FastDiff => "FAST_DIFF",
            DataBlockEncoding::RowIndexV1 => "ROW_INDEX_V1",
        }
    }

    /// Parses a name case-insensitively (`fast_diff`, `FAST_DIFF`).
    pub fn from_name(s: &str) -> Option<DataBlockEncoding> {
        let up = s.to_ascii_uppercase();
        DataBlockEncoding::ALL.into_iter().find(|e| e.name() == up)
    }

    /// The block type data blocks of this encoding use.
    pub const fn block_type(self) -> BlockType {
        match self {
            DataBlockEncoding::None => BlockType::Data,
            _ => BlockType::EncodedData,
        }
    }
}

/// What every cell record carries besides key and value, fixed per file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct EncodingContext {
    /// Cells carry a tags length (and tags). FileInfo has `hfile.MAX_TAGS_LEN`.
    pub include_tags: bool,
    /// Cells end with a VLong MVCC / sequence id. FileInfo has `KEY_VALUE_VERSION` = 1.
    pub include_mvcc: bool,
    /// Tags in encoded blocks are dictionary-compressed. FileInfo `hfile.TAGS_COMPRESSED`.
    pub compress_tags: bool,
}

impl EncodingContext {
    /// Size of a cell in NONE format: what HBase counts as "unencoded" bytes.
    pub fn unencoded_size(&self, cell: &CellRef<'_>) -> usize {
        let mut n = 8 + cell.key_len() + cell.value.len();
        if self.include_tags {
            n += 2 + cell.tags.len();
        }
        if self.include_mvcc {
            n += super::bytes::vlong_size(cell.seq_id as i64);
        }
        n
    }
}

/// Writes cells into a data block payload.
///
/// REQUIRES: cells are given in HBase order; `start_block` is called on an empty payload
/// buffer before the first cell of each block.
pub trait CellEncoder: Send {
    /// Resets per-block state and writes any payload prefix (encoding id, size placeholder).
    fn start_block(&mut self, out: &mut Vec<u8>);
    /// Appends one cell.
    fn encode(&mut self, cell: &CellRef<'_>, out: &mut Vec<u8>) -> Result<()>;
    /// Completes the payload (patches sizes, appends a row index).
    fn finish_block(&mut self, out: &mut Vec<u8>);
    /// Bytes this block's cells took in the encoded form, as HBase counts them.
    fn encoded_bytes(&self) -> usize;
    /// Bytes this block's cells would take in NONE format.
    fn unencoded_bytes(&self) -> usize;
}

/// A cursor over the cells of one data block.
///
/// After `advance` returns `Ok(true)`, `key`, `value`, `tags`, `seq_id` and `cell` describe
/// the current cell; the key is guaranteed well-formed (validated by `advance`).
pub trait CellDecoder: Send {
    /// Moves to the next cell; `Ok(false)` at the end of the block.
    fn advance(&mut self) -> Result<bool>;
    /// The current cell's flat key.
    fn key(&self) -> &[u8];
    /// The parsed layout of [`CellDecoder::key`].
    fn layout(&self) -> &KeyLayout;
    fn value(&self) -> &[u8];
    fn tags(&self) -> &[u8];
    fn seq_id(&self) -> u64;
    /// Goes back to before the first cell.
    fn rewind(&mut self);
    /// Gives the payload buffer back for reuse.
    fn into_payload(self: Box<Self>) -> Vec<u8>;

    /// The current cell (always inlined: a scan builds it where it uses it).
    #[inline(always)]
    fn cell(&self) -> CellRef<'_> {
        self.layout()
            .cell(self.key(), self.value(), self.tags(), self.seq_id())
    }

    /// Positions on the first cell whose key is ≥ `target`, searching from the start of the
    /// block. `Ok(false)` when every cell of the block is smaller (the cursor is then at the end).
    fn seek(&mut self, target: &KeyView<'_>) -> Result<bool> {
        self.rewind();
        while self.advance()? {
            if compare_keys(&self.layout().view(self.key()), target) != Ordering::Less {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Byte ranges of a validated flat key, so a decoder can hand out [`CellRef`]s cheaply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyLayout {
    pub row: Range<usize>,
    pub family: Range<usize>,
    pub qualifier: Range<usize>,
    pub timestamp: i64,
    pub cell_type: CellType,
}

impl Default for KeyLayout {
    fn default() -> Self {
        KeyLayout {
            row: 0..0,
            family: 0..0,
            qualifier: 0..0,
            timestamp: 0,
            cell_type: CellType::Put,
        }
    }
}

impl KeyLayout {
    /// Validates `key` (lengths consistent, known type) and records its layout. `offset` is
    /// the file offset of the block, for the error.
    pub fn parse(key: &[u8], offset: u64) -> Result<KeyLayout> {
        if let Some(layout) = KeyLayout::parse_valid(key) {
            return Ok(layout);
        }
        let v = KeyView::parse(key)
            .ok_or_else(|| FormatError::corrupt("cell key", offset, "malformed key lengths"))?;
        Err(FormatError::corrupt(
            "cell key",
            offset,
            format!("unknown cell type {}", v.type_code),
        ))
    }

    /// [`KeyLayout::parse`] without the error: `None` for a malformed key or unknown type.
    #[inline(always)]
    pub fn parse_valid(key: &[u8]) -> Option<KeyLayout> {
        let v = KeyView::parse(key)?;
        let cell_type = CellType::from_code(v.type_code)?;
        let row_end = 2 + v.row.len();
        let fam_start = row_end + 1;
        let fam_end = fam_start + v.family.len();
        let q_end = fam_end + v.qualifier.len();
        Some(KeyLayout {
            row: 2..row_end,
            family: fam_start..fam_end,
            qualifier: fam_end..q_end,
            timestamp: v.timestamp,
            cell_type,
        })
    }

    /// The key view of `key`, which must be the key this layout was parsed from.
    #[inline]
    pub fn view<'a>(&self, key: &'a [u8]) -> KeyView<'a> {
        KeyView {
            row: &key[self.row.clone()],
            family: &key[self.family.clone()],
            qualifier: &key[self.qualifier.clone()],
            timestamp: self.timestamp,
            type_code: self.cell_type.code(),
        }
    }

    /// A cell from this layout's key and the other parts.
    #[inline(always)]
    pub fn cell<'a>(
        &self,
        key: &'a [u8],
        value: &'a [u8],
        tags: &'a [u8],
        seq_id: u64,
    ) -> CellRef<'a> {
        CellRef {
            row: &key[self.row.clone()],
            family: &key[self.family.clone()],
            qualifier: &key[self.qualifier.clone()],
            timestamp: self.timestamp,
            cell_type: self.cell_type,
            value,
            tags,
            seq_id,
        }
    }
}

/// An encoder for `encoding`.
pub fn new_encoder(
    encoding: DataBlockEncoding,
    ctx: EncodingContext,
) -> Result<Box<dyn CellEncoder>> {
    match encoding {
        DataBlockEncoding::None => Ok(Box::new(NoneEncoder::new(ctx))),
        DataBlockEncoding::Prefix => Ok(Box::new(PrefixEncoder::new(ctx))),
        DataBlockEncoding::Diff => Ok(Box::new(DiffEncoder::new(ctx))),
        DataBlockEncoding::FastDiff => Ok(Box::new(FastDiffEncoder::new(ctx))),
        DataBlockEncoding::RowIndexV1 => Ok(Box::new(RowIndexEncoder::new(ctx))),
    }
}

/// A decoded block's bytes, as a decoder reads them: owned (the buffer goes back to its
/// scanner for the next block, [`CellDecoder::into_payload`]) or shared with a block cache
/// (`crate::block_cache`), so a cached block is decoded in place, not copied.
#[derive(Clone, Debug)]
pub enum Payload {
    Owned(Vec<u8>),
    Shared(Arc<Vec<u8>>),
}

impl Payload {
    /// The buffer for reuse: the owned one, or a new empty one for a shared payload.
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            Payload::Owned(v) => v,
            Payload::Shared(_) => Vec::new(),
        }
    }
}

impl Deref for Payload {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            Payload::Owned(v) => v,
            Payload::Shared(v) => v,
        }
    }
}

impl From<Vec<u8>> for Payload {
    fn from(v: Vec<u8>) -> Payload {
        Payload::Owned(v)
    }
}

/// A data block's decoder, as [`new_decoder`] gives it: a NONE block's (most files') held by
/// its type, so that the per-cell calls of a scan or a check (`advance`, `cell`) are direct and
/// inline into the caller's loop, the cell built where it is used; the other encodings'
/// through the trait object, whose cell comes back through memory from a call (a table scan
/// 14.0 -> 15.0M cells/s with `advance` and `cell` inlined, `benches/read_bench.sh`, AMD EPYC).
pub enum DataBlockDecoder {
    None(NoneDecoder),
    Encoded(Box<dyn CellDecoder>),
}

impl DataBlockDecoder {
    /// [`CellDecoder::into_payload`] for a decoder held by value.
    pub fn into_payload_vec(self) -> Vec<u8> {
        match self {
            DataBlockDecoder::None(d) => d.into_payload_vec(),
            DataBlockDecoder::Encoded(d) => d.into_payload(),
        }
    }
}

impl CellDecoder for DataBlockDecoder {
    #[inline(always)]
    fn advance(&mut self) -> Result<bool> {
        match self {
            DataBlockDecoder::None(d) => d.advance(),
            DataBlockDecoder::Encoded(d) => d.advance(),
        }
    }

    fn key(&self) -> &[u8] {
        match self {
            DataBlockDecoder::None(d) => d.key(),
            DataBlockDecoder::Encoded(d) => d.key(),
        }
    }

    fn layout(&self) -> &KeyLayout {
        match self {
            DataBlockDecoder::None(d) => d.layout(),
            DataBlockDecoder::Encoded(d) => d.layout(),
        }
    }

    fn value(&self) -> &[u8] {
        match self {
            DataBlockDecoder::None(d) => d.value(),
            DataBlockDecoder::Encoded(d) => d.value(),
        }
    }

    fn tags(&self) -> &[u8] {
        match self {
            DataBlockDecoder::None(d) => d.tags(),
            DataBlockDecoder::Encoded(d) => d.tags(),
        }
    }

    fn seq_id(&self) -> u64 {
        match self {
            DataBlockDecoder::None(d) => d.seq_id(),
            DataBlockDecoder::Encoded(d) => d.seq_id(),
        }
    }

    fn rewind(&mut self) {
        match self {
            DataBlockDecoder::None(d) => d.rewind(),
            DataBlockDecoder::Encoded(d) => d.rewind(),
        }
    }

    fn into_payload(self: Box<Self>) -> Vec<u8> {
        (*self).into_payload_vec()
    }

    /// One match for the whole cell (the default would match once per part).
    #[inline(always)]
    fn cell(&self) -> CellRef<'_> {
        match self {
            DataBlockDecoder::None(d) => d.cell(),
            DataBlockDecoder::Encoded(d) => d.cell(),
        }
    }

    fn seek(&mut self, target: &KeyView<'_>) -> Result<bool> {
        match self {
            DataBlockDecoder::None(d) => d.seek(target),
            DataBlockDecoder::Encoded(d) => d.seek(target),
        }
    }
}

/// A decoder for one data block's payload. DATA blocks are NONE-encoded; ENCODED_DATA blocks
/// name their encoding in their first two bytes. `offset` is the block's file offset.
pub fn new_decoder(
    block_type: BlockType,
    payload: impl Into<Payload>,
    ctx: EncodingContext,
    offset: u64,
) -> Result<DataBlockDecoder> {
    let payload = payload.into();
    let encoded = |d: Box<dyn CellDecoder>| Ok(DataBlockDecoder::Encoded(d));
    match block_type {
        BlockType::Data => Ok(DataBlockDecoder::None(NoneDecoder::new(
            payload, 0, ctx, offset,
        ))),
        BlockType::EncodedData => {
            if payload.len() < 2 {
                return Err(FormatError::corrupt(
                    "encoded data block",
                    offset,
                    "payload shorter than its encoding id",
                ));
            }
            let id = u16::from_be_bytes([payload[0], payload[1]]);
            match DataBlockEncoding::from_id(id) {
                Some(DataBlockEncoding::Prefix) => {
                    encoded(Box::new(PrefixDecoder::new(payload, ctx, offset)?))
                }
                Some(DataBlockEncoding::Diff) => {
                    encoded(Box::new(DiffDecoder::new(payload, ctx, offset)?))
                }
                Some(DataBlockEncoding::FastDiff) => {
                    encoded(Box::new(FastDiffDecoder::new(payload, ctx, offset)?))
                }
                Some(DataBlockEncoding::RowIndexV1) => {
                    encoded(Box::new(RowIndexDecoder::new(payload, ctx, offset)?))
                }
                Some(DataBlockEncoding::None) | None => Err(FormatError::corrupt(
                    "encoded data block",
                    offset,
                    format!("unknown encoding id {id}"),
                )),
            }
        }
        other => Err(FormatError::corrupt(
            "data block",
            offset,
            format!("{} block where a data block was expected", other.name()),
        )),
    }
}
