//! Blocks out (`formats/hfile.md` §"Blocks", §"Block index"): the sink that writes each block
//! with its header and checksums and keeps the per-type previous-block chain, the data block's
//! cell encoder, cutting a data block and adding its index entry, and the inline blocks (leaf
//! index, Bloom chunks) between data blocks.

use std::io::Write;

use crate::block::{BlockEncoder, BlockType, HEADER_LEN};
use crate::cell::{CellRef, KeyView};
use crate::encoding::{CellEncoder, NoneEncoder};
use crate::error::{FormatError, Result};
use crate::index::midpoint_key;
use crate::inline::InlineBlockWriter;

use super::HFileWriter;

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

impl<W: Write> HFileWriter<W> {
    pub(super) fn new_block(&mut self) {
        self.settle_last_key();
        self.payload.clear();
        self.cell_encoder.encoder().start_block(&mut self.payload);
        self.block_open = true;
        self.first_key_in_block = None;
        if self.entry_count > 0 {
            // The previous block's buffer is reused (this runs at every block cut).
            let prev = self.last_key_of_prev_block.get_or_insert_with(Vec::new);
            prev.clear();
            prev.extend_from_slice(&self.last_key);
        }
    }

    pub(super) fn finish_block(&mut self) -> Result<()> {
        self.finish_block_of(None)
    }

    /// Ends the open data block, whose payload is `borrowed` when given (a NONE block whose
    /// records are the caller's, [`append_records`](HFileWriter::append_records)) and the
    /// writer's own otherwise.
    pub(super) fn finish_block_of(&mut self, borrowed: Option<&[u8]>) -> Result<()> {
        if !self.block_open || self.cell_encoder.unencoded_bytes() == 0 {
            return Ok(());
        }
        let payload: &[u8] = match borrowed {
            Some(records) if matches!(self.cell_encoder, BlockCellEncoder::None(_)) => records,
            Some(_) => {
                return Err(FormatError::Invalid(
                    "internal: a borrowed block of an encoding other than NONE".into(),
                ))
            }
            None => {
                self.cell_encoder.encoder().finish_block(&mut self.payload);
                &self.payload
            }
        };
        let block_type = self.opts.encoding.block_type();
        let (offset, size) = self.sink.write_block(block_type, payload)?;
        if self.first_data_block_offset < 0 {
            self.first_data_block_offset = offset as i64;
        }
        self.last_data_block_offset = offset as i64;
        self.data_blocks += 1;
        self.total_uncompressed_bytes += (HEADER_LEN + payload.len()) as u64;
        let right_bytes = self.first_key_in_block.take().ok_or_else(|| {
            FormatError::Invalid("internal: data block without a first cell".into())
        })?;
        let right = KeyView::parse(&right_bytes)
            .ok_or_else(|| FormatError::Invalid("internal: first key unparsable".into()))?;
        let left = self
            .last_key_of_prev_block
            .as_deref()
            .and_then(KeyView::parse);
        let key = midpoint_key(left.as_ref(), &right);
        self.index.add_entry(key, offset, size)?;
        self.block_open = false;
        Ok(())
    }

    /// Runs the inline-block protocol for every inline writer, in HBase's order.
    pub(super) fn write_inline_blocks(&mut self, closing: bool) -> Result<()> {
        // (An array, not a Vec: this runs at every block cut.)
        let writers: [Option<&mut dyn InlineBlockWriter>; 3] = [
            Some(&mut self.index),
            self.general_bloom
                .as_mut()
                .map(|b| b as &mut dyn InlineBlockWriter),
            self.delete_family_bloom
                .as_mut()
                .map(|b| b as &mut dyn InlineBlockWriter),
        ];
        for w in writers.into_iter().flatten() {
            while w.should_write_block(closing) {
                self.inline_buf.clear();
                w.write_inline_block(&mut self.inline_buf);
                let (offset, size) = self.sink.write_block(w.block_type(), &self.inline_buf)?;
                w.block_written(offset, size, self.inline_buf.len() as u32);
                self.total_uncompressed_bytes += (HEADER_LEN + self.inline_buf.len()) as u64;
            }
        }
        Ok(())
    }
}
