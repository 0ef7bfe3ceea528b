//! The interface every data block encoding implements, for the writer and the reader:
//! [`EncodingContext`] (what every cell record carries besides key and value, fixed per file),
//! [`CellEncoder`] and [`CellDecoder`] with its [`KeyLayout`] of the current key, and the
//! [`Payload`] a decoder reads (with, for a block a cache shares, the [`SeekIndex`] a NONE
//! decoder makes of it on its second seek, `formats/hfile.md` §"Reading").
//! Spec: `formats/hfile.md` §"Data blocks" and `formats/encodings.md` (the per-file context
//! in its introduction, the counters in `formats/encodings.md` §"Block sizing counters").

use std::cmp::Ordering;
use std::ops::{Deref, Range};
use std::sync::atomic::{self, AtomicBool};
use std::sync::{Arc, OnceLock};

use crate::cell::{compare_keys, CellRef, CellType, KeyView};
use crate::error::{FormatError, Result};

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
            n += crate::bytes::vlong_size(cell.seq_id as i64);
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

/// A decoded block's bytes, as a decoder reads them: owned (the buffer goes back to its
/// scanner for the next block, [`CellDecoder::into_payload`]) or shared with a block cache
/// (`crate::block_cache`), so a cached block is decoded in place, not copied.
#[derive(Clone, Debug)]
pub enum Payload {
    Owned(Vec<u8>),
    Shared(Arc<SharedBlock>),
}

/// A decoded block that a block cache and the decoders of many gets share: its bytes, and
/// the [`SeekIndex`] a NONE decoder makes of it on its second seek (`formats/hfile.md`
/// §"Reading", block cache), so that later seeks search instead of stepping over every
/// record from the block's start. The first seek steps: a block read for one get and then
/// evicted costs what it cost before.
#[derive(Debug, Default)]
pub struct SharedBlock {
    bytes: Vec<u8>,
    seeks: AtomicBool,
    seek_index: OnceLock<Option<SeekIndex>>,
}

impl SharedBlock {
    pub fn new(bytes: Vec<u8>) -> SharedBlock {
        SharedBlock {
            bytes,
            seeks: AtomicBool::new(false),
            seek_index: OnceLock::new(),
        }
    }

    /// The block's seek index: `None` on the first call (that seek steps from the start),
    /// made by `make` on the second, then kept (`None` from `make`: the block has none, and
    /// seeks step over its records).
    pub fn seek_index(&self, make: impl FnOnce() -> Option<SeekIndex>) -> Option<&SeekIndex> {
        if let Some(made) = self.seek_index.get() {
            return made.as_ref();
        }
        if !self.seeks.swap(true, atomic::Ordering::Relaxed) {
            return None;
        }
        self.seek_index.get_or_init(make).as_ref()
    }

    /// Bytes a seek index may take besides the block's: at most one 4-byte offset per
    /// [`SeekIndex::STRIDE`] bytes of records, plus one (a block cache counts this too).
    pub fn seek_index_bound(len: usize) -> usize {
        4 * (len / SeekIndex::STRIDE + 1) + std::mem::size_of::<SeekIndex>()
    }
}

impl Deref for SharedBlock {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

/// Offsets of some of a NONE block's records, in order, no two closer than [`Self::STRIDE`]
/// bytes, made only of a block whose records all parse and whose rows never decrease: a seek
/// binary-searches them for the last one whose row sorts before the target's and steps from
/// there, where it would otherwise step from the block's first record. It starts where a
/// step from the first record would pass by, so it finds the same cell.
#[derive(Debug, PartialEq, Eq)]
pub struct SeekIndex {
    /// The payload range and context the offsets were read with (a decoder with others does
    /// not use it).
    pub range: Range<usize>,
    pub ctx: EncodingContext,
    pub offsets: Box<[u32]>,
}

impl SeekIndex {
    /// The least distance in bytes between two indexed records: a seek steps over at most
    /// about this many bytes of records after its search, and the index takes at most 4 bytes
    /// per this many of the block (1.6% of it).
    pub const STRIDE: usize = 256;
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
