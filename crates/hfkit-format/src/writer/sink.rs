//! The block sink and the data block's cell encoder (`formats/hfile.md` §"Blocks", §"Data
//! blocks"): the sink writes each block with its header and checksums and keeps the per-type
//! previous-block chain; the cell encoder calls NONE's encoder directly and the others through
//! the [`CellEncoder`] trait object.

use std::io::Write;

use crate::block::{BlockEncoder, BlockType};
use crate::cell::CellRef;
use crate::encoding::{CellEncoder, NoneEncoder};
use crate::error::{FormatError, Result};

/// Appends blocks to the output, tracking offsets and the per-type previous-block chain.
pub(super) struct BlockSink<W: Write> {
    pub(super) out: W,
    pub(super) pos: u64,
    pub(super) prev_offsets: [i64; BlockType::CHAINS],
    pub(super) encoder: BlockEncoder,
}

impl<W: Write> BlockSink<W> {
    /// Writes one block; returns its offset and on-disk size (header and checksums included).
    pub(super) fn write_block(
        &mut self,
        block_type: BlockType,
        payload: &[u8],
    ) -> Result<(u64, u32)> {
        let chain = block_type.chain_id();
        let (e, parts) = self
            .encoder
            .encode(block_type, payload, self.prev_offsets[chain])?;
        let offset = self.pos;
        for part in parts {
            self.out.write_all(part).map_err(|e| {
                FormatError::io(
                    format!("writing {} block at offset {offset}", block_type.name()),
                    e,
                )
            })?;
        }
        self.prev_offsets[chain] = offset as i64;
        self.pos += e.on_disk_size_with_header as u64;
        Ok((offset, e.on_disk_size_with_header))
    }
}

/// The data block encoder: NONE (the common case) called directly so its per-cell work
/// inlines into `append`; the other encodings through the [`CellEncoder`] trait object.
pub(super) enum BlockCellEncoder {
    None(NoneEncoder),
    Other(Box<dyn CellEncoder>),
}

impl BlockCellEncoder {
    #[inline]
    pub(super) fn encoder(&mut self) -> &mut dyn CellEncoder {
        match self {
            BlockCellEncoder::None(e) => e,
            BlockCellEncoder::Other(e) => e.as_mut(),
        }
    }

    #[inline]
    pub(super) fn encode(&mut self, cell: &CellRef<'_>, out: &mut Vec<u8>) -> Result<()> {
        match self {
            BlockCellEncoder::None(e) => e.encode(cell, out),
            BlockCellEncoder::Other(e) => e.encode(cell, out),
        }
    }

    #[inline]
    pub(super) fn encoded_bytes(&self) -> usize {
        match self {
            BlockCellEncoder::None(e) => e.encoded_bytes(),
            BlockCellEncoder::Other(e) => e.encoded_bytes(),
        }
    }

    #[inline]
    pub(super) fn unencoded_bytes(&self) -> usize {
        match self {
            BlockCellEncoder::None(e) => e.unencoded_bytes(),
            BlockCellEncoder::Other(e) => e.unencoded_bytes(),
        }
    }
}
