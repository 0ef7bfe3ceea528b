//! Inline block writers: writers whose blocks are interleaved with data blocks in the
//! scanned section (leaf index blocks, Bloom chunks). Spec: `formats/hfile.md` §"File layout".
//!
//! At every data-block boundary, and once more when the file is closed, the HFile writer asks
//! each inline writer, in registration order (data index, general Bloom, delete-family Bloom):
//!
//! ```text
//! while writer.should_write_block(closing):
//!     payload = writer.write_inline_block()
//!     (offset, on-disk size) = append block of writer.block_type() with payload
//!     writer.block_written(offset, on_disk_size_with_header, uncompressed_size)
//! ```
//! This mirrors HBase's `InlineBlockWriter` so that block order, and so the file's bytes, match.

use super::block::BlockType;

/// A writer whose blocks the HFile writer interleaves with data blocks.
pub trait InlineBlockWriter {
    /// Whether a block is ready to be written now. `closing` is true for the final call at
    /// close, when partly filled blocks must be written too.
    fn should_write_block(&mut self, closing: bool) -> bool;
    /// The type of the block [`InlineBlockWriter::write_inline_block`] produces.
    fn block_type(&self) -> BlockType;
    /// Appends the next block's uncompressed payload to `out`.
    fn write_inline_block(&mut self, out: &mut Vec<u8>);
    /// Records where that block landed.
    fn block_written(&mut self, offset: u64, on_disk_size_with_header: u32, uncompressed_size: u32);
}
