//! Blocks out (`formats/hfile.md` §"Blocks", §"Block index"): cutting a data block and adding
//! its index entry, and the inline blocks (leaf index, Bloom chunks) between data blocks,
//! written through the block sink (`sink`).

use std::io::Write;

use crate::block::HEADER_LEN;
use crate::cell::KeyView;
use crate::error::{FormatError, Result};
use crate::index::midpoint_key;
use crate::inline::InlineBlockWriter;

use super::append::HFileWriter;
use super::sink::BlockCellEncoder;

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
