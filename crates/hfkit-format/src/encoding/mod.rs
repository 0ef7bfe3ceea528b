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
//! Modules: `kind` ([`DataBlockEncoding`]: ids, names, block types), `codec` (the interface:
//! [`EncodingContext`], the encoder and decoder traits, [`KeyLayout`], [`Payload`]), `none`
//! (NONE, also the cell format of ROW_INDEX_V1), `delta` (what PREFIX, DIFF and FAST_DIFF
//! share: framing, common prefix, record suffix, generic encoder/decoder), `prefix`, `diff`,
//! `fast_diff`, `row_index`, and `tags` (tag compression).

use super::block::BlockType;
use super::cell::{CellRef, KeyView};
use super::error::{FormatError, Result};

mod codec;
pub mod delta;
pub mod diff;
pub mod fast_diff;
mod kind;
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

pub use codec::{
    CellDecoder, CellEncoder, EncodingContext, KeyLayout, Payload, SeekIndex, SharedBlock,
};
pub use diff::{DiffDecoder, DiffEncoder};
pub use fast_diff::{FastDiffDecoder, FastDiffEncoder};
pub use kind::DataBlockEncoding;
pub(crate) use none::write_none_cell_headed;
pub use none::{NoneDecoder, NoneEncoder};
pub use prefix::{PrefixDecoder, PrefixEncoder};
pub use row_index::{RowIndexDecoder, RowIndexEncoder};

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
