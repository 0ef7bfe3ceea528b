//! [`HFileWriter`]: appending cells, with `append`'s order checks against the last cell, the
//! Bloom adds, the block cuts and the statistics, and `append_row`'s row at a time (its loop
//! over a row's plain cells is `run`'s). The sequencing and the contract are in the
//! [`writer`](crate::writer) module doc. Spec: `formats/hfile.md` §"File layout" and §"Data
//! blocks" (where a block is cut, appending); its Bloom filters: `formats/bloom.md` §"Writing".

use std::cmp::Ordering;
use std::io::Write;

use super::key::{order_in_row, KeyShape};
use super::options::WriterOptions;
use super::run;
use super::sink::{BlockCellEncoder, BlockSink};
use super::stats::CellStats;
use crate::block::{BlockEncoder, BlockSettings, BlockType};
use crate::bloom::{BloomType, BloomWriter};
use crate::bytes::{compare_bytes, equal_bytes};
use crate::cell::{compare_without_row, CellRef, KeyView};
use crate::encoding::{
    new_encoder, write_none_cell_headed, DataBlockEncoding, EncodingContext, NoneEncoder,
};
use crate::error::{FormatError, Result};
use crate::fileinfo::FileInfo;
use crate::index::DataIndexWriter;

/// Equal slices, by address first (a row's cells usually share one row slice).
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    (a.as_ptr() == b.as_ptr() && a.len() == b.len()) || equal_bytes(a, b)
}

/// Writes one HFile. See the module documentation for the sequencing.
pub struct HFileWriter<W: Write> {
    pub(super) opts: WriterOptions,
    pub(super) sink: BlockSink<W>,
    pub(super) cell_encoder: BlockCellEncoder,
    pub(super) payload: Vec<u8>,
    pub(super) block_open: bool,
    pub(super) index: DataIndexWriter,
    pub(super) general_bloom: Option<BloomWriter>,
    pub(super) delete_family_bloom: Option<BloomWriter>,
    pub(super) inline_buf: Vec<u8>,
    /// Flat key of the last appended cell (valid when `entry_count > 0`), unless
    /// `last_key_in_payload` says where it is in the open block instead.
    pub(super) last_key: Vec<u8>,
    /// While a NONE block is open, the last key is read from the block itself rather than
    /// copied per cell; [`settle_last_key`](Self::settle_last_key) copies it out.
    pub(super) last_key_in_payload: Option<(usize, usize)>,
    /// [`append_run`](Self::append_run)'s key start of the row (`u16 row length | row | u8
    /// family length | family`), kept for its buffer.
    pub(super) row_key_head: Vec<u8>,
    /// The parts of the last key, so the order check needs no parse (hot path).
    pub(super) last_shape: KeyShape,
    pub(super) first_key: Option<Vec<u8>>,
    pub(super) first_key_in_block: Option<Vec<u8>>,
    pub(super) last_key_of_prev_block: Option<Vec<u8>>,
    pub(super) entry_count: u64,
    pub(super) data_blocks: u64,
    pub(super) stats: CellStats,
    pub(super) biggest_key: Option<Vec<u8>>,
    pub(super) delete_family_count: i64,
    pub(super) first_data_block_offset: i64,
    pub(super) last_data_block_offset: i64,
    pub(super) total_uncompressed_bytes: u64,
    pub(super) extra_file_info: FileInfo,
    pub(super) failed: bool,
}

impl<W: Write> HFileWriter<W> {
    /// A writer that appends the file to `out` (which should be empty and buffered by the
    /// caller only if it is not a file: blocks are written whole).
    pub fn new(out: W, opts: WriterOptions) -> Result<HFileWriter<W>> {
        if opts.block_size == 0 {
            return Err(FormatError::Invalid("block size must be positive".into()));
        }
        let settings = BlockSettings {
            compression: opts.compression,
            compression_level: opts.compression_level,
            checksum_type: opts.checksum_type,
            bytes_per_checksum: opts.bytes_per_checksum,
        };
        let ctx = EncodingContext {
            include_tags: opts.include_tags,
            include_mvcc: opts.include_mvcc,
            compress_tags: opts.compress_tags,
        };
        let (general_bloom, delete_family_bloom) = if opts.store_file {
            let general = opts
                .bloom
                .map(|t| BloomWriter::general(t, opts.bloom_params))
                .transpose()?;
            let delete_family = if opts.bloom == Some(BloomType::RowCol) {
                None
            } else {
                Some(BloomWriter::delete_family(opts.bloom_params)?)
            };
            (general, delete_family)
        } else {
            if opts.bloom.is_some() {
                return Err(FormatError::Invalid(
                    "Bloom filters are written only in store files (store_file = true)".into(),
                ));
            }
            (None, None)
        };
        Ok(HFileWriter {
            general_bloom,
            delete_family_bloom,
            sink: BlockSink {
                out,
                pos: 0,
                prev_offsets: [-1; BlockType::CHAINS],
                encoder: BlockEncoder::new(settings)?,
            },
            cell_encoder: match opts.encoding {
                DataBlockEncoding::None => BlockCellEncoder::None(NoneEncoder::new(ctx)),
                other => BlockCellEncoder::Other(new_encoder(other, ctx)?),
            },
            payload: Vec::with_capacity(opts.block_size + 1024),
            block_open: false,
            index: DataIndexWriter::new(opts.index_block_size, opts.index_min_entries)?,
            inline_buf: Vec::new(),
            last_key: Vec::new(),
            last_key_in_payload: None,
            row_key_head: Vec::new(),
            last_shape: KeyShape::default(),
            first_key: None,
            first_key_in_block: None,
            last_key_of_prev_block: None,
            entry_count: 0,
            data_blocks: 0,
            stats: CellStats::default(),
            biggest_key: None,
            delete_family_count: 0,
            first_data_block_offset: -1,
            last_data_block_offset: -1,
            total_uncompressed_bytes: 0,
            extra_file_info: FileInfo::new(),
            opts,
            failed: false,
        })
    }

    /// The options the writer was made with.
    pub fn options(&self) -> &WriterOptions {
        &self.opts
    }

    /// Cells appended so far.
    pub fn entry_count(&self) -> u64 {
        self.entry_count
    }

    /// Bytes written so far (whole blocks only).
    pub fn bytes_written(&self) -> u64 {
        self.sink.pos
    }

    /// Adds a FileInfo entry of the caller's (e.g. `MAX_SEQ_ID_KEY`). Keys starting with
    /// `hfile.` are reserved for the writer.
    pub fn append_file_info(&mut self, key: &str, value: Vec<u8>) -> Result<()> {
        if key.starts_with("hfile.") {
            return Err(FormatError::Invalid(format!(
                "FileInfo key {key} is reserved"
            )));
        }
        self.extra_file_info.insert(key, value);
        Ok(())
    }

    /// Appends one cell. See the module documentation for the contract.
    pub fn append(&mut self, cell: &CellRef<'_>) -> Result<()> {
        let (dup, same_row) = self.check_next(cell)?;
        let r = self.append_unchecked(cell, dup, same_row);
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    /// `append`'s checks of `cell` against the last appended cell: the writer usable, the cell
    /// valid, of the file's family and in order. Returns whether it has the last cell's key (a
    /// duplicate, which never starts a block) and whether it has its row.
    #[inline(always)]
    pub(super) fn check_next(&self, cell: &CellRef<'_>) -> Result<(bool, bool)> {
        if self.failed {
            return Err(FormatError::Invalid(
                "writer failed earlier; the file is incomplete".into(),
            ));
        }
        cell.validate()?;
        let mut dup = false;
        let mut same_row = false;
        if self.entry_count > 0 {
            let last = self
                .last_shape
                .view(self.last_key())
                .ok_or_else(|| FormatError::Invalid("internal: last key unparsable".into()))?;
            if !equal_bytes(last.family, cell.family) {
                return Err(FormatError::Invalid(format!(
                    "an HFile holds one column family: cell {} has family '{}', the file's is '{}'",
                    self.entry_count,
                    String::from_utf8_lossy(cell.family),
                    String::from_utf8_lossy(last.family)
                )));
            }
            let row_order = compare_bytes(last.row, cell.row);
            same_row = row_order == Ordering::Equal;
            let order = if !same_row {
                row_order
            } else if !cell.family.is_empty() {
                // Same row and (checked above) same non-empty family: HBase's order reduces to
                // qualifier, then timestamp and type descending (no "minimum key" case).
                compare_bytes(last.qualifier, cell.qualifier)
                    .then(cell.timestamp.cmp(&last.timestamp))
                    .then(cell.cell_type.code().cmp(&last.type_code))
            } else {
                compare_without_row(&last, &KeyView::of(cell))
            };
            match order {
                Ordering::Greater => {
                    return Err(FormatError::OutOfOrder {
                        index: self.entry_count,
                        detail: "its key sorts before the previous cell's key".into(),
                    })
                }
                Ordering::Equal => dup = true,
                Ordering::Less => {}
            }
        }
        Ok((dup, same_row))
    }

    /// Appends the cells of one row, in HBase order: the same file, byte for byte, as
    /// [`append`](Self::append) of each cell in turn, and the same errors. The first cell is
    /// checked against the file's last cell; the others, which must have its row and family,
    /// only against the cell before them, so the row's own checks, its Bloom key and the
    /// writer's record of the last key are done once per row (the import pipeline's lanes
    /// hand over a row's cells together). A cell of another row or family is appended as
    /// `append` would.
    pub fn append_row(&mut self, cells: &[CellRef<'_>]) -> Result<()> {
        let Some(first) = cells.first() else {
            return Ok(());
        };
        if !matches!(self.cell_encoder, BlockCellEncoder::None(_)) {
            return cells.iter().try_for_each(|c| self.append(c));
        }
        let mut prev = first;
        let mut i = if self.start_row(first)? {
            // `first` is checked and in the Blooms: the run writes it and what follows.
            let (done, refused) = self.append_run(first, &mut prev, cells, true);
            if let Some(e) = refused {
                self.last_shape = KeyShape::of(prev);
                return Err(e);
            }
            if done == 0 {
                // `start_row` checked all that the run asks of its first cell.
                self.failed = true;
                return Err(FormatError::Invalid(
                    "internal: a row's checked first cell was not appended".into(),
                ));
            }
            done
        } else {
            self.append(first)?;
            1
        };
        while i < cells.len() {
            // The row's cells that need no block cut and no Bloom add, in one tight loop; the
            // cell it stops at (if any) goes the per-cell way below.
            let (done, refused) = self.append_run(first, &mut prev, &cells[i..], false);
            i += done;
            if let Some(e) = refused {
                self.last_shape = KeyShape::of(prev);
                return Err(e);
            }
            let Some(cell) = cells.get(i) else {
                break;
            };
            if !(same_bytes(cell.row, first.row) && same_bytes(cell.family, first.family)) {
                // Not this row after all: the per-cell path, from here on.
                self.last_shape = KeyShape::of(prev);
                return cells[i..].iter().try_for_each(|c| self.append(c));
            }
            // As `append`: a refused cell leaves the file as it was, a failed write ends it.
            let dup = match self.check_in_row(prev, cell) {
                Ok(dup) => dup,
                Err(e) => {
                    self.last_shape = KeyShape::of(prev);
                    return Err(e);
                }
            };
            if let Err(e) = self.append_in_row(cell, dup) {
                self.failed = true;
                return Err(e);
            }
            prev = cell;
            i += 1;
        }
        self.last_shape = KeyShape::of(prev);
        Ok(())
    }

    /// The first cell of a row, for [`append_row`](Self::append_row) of a NONE-encoded file:
    /// when the open block takes it without a cut and the general Bloom (if any) keys by row,
    /// checks it as [`append`](Self::append) does (same errors), offers it to the Blooms and
    /// returns true (the run then writes it). False leaves it to `append`.
    #[inline(always)]
    fn start_row(&mut self, first: &CellRef<'_>) -> Result<bool> {
        let bloom_by_row = self
            .general_bloom
            .as_ref()
            .is_none_or(BloomWriter::keys_by_row);
        if self.entry_count == 0
            || !self.block_open
            || !bloom_by_row
            || self.first_key_in_block.is_none()
        {
            return Ok(false);
        }
        let (dup, same_row) = self.check_next(first)?;
        if !dup
            && self
                .cell_encoder
                .encoded_bytes()
                .max(self.cell_encoder.unencoded_bytes())
                >= self.opts.block_size
        {
            // A block cut first: `append`'s way (which checks the cell again).
            return Ok(false);
        }
        self.offer_to_blooms(first, same_row);
        Ok(true)
    }

    /// [`append_row`](Self::append_row)'s hot loop, for a NONE-encoded file with a block open:
    /// appends `cells` from the start while they have `first`'s row and family, need no block
    /// cut and give the Blooms nothing to add (the row's Bloom key is in already; no
    /// delete-family cell), with the same checks as [`check_in_row`](Self::check_in_row)
    /// (`first_checked`: `cells[0]` is `first`, checked and offered to the Blooms by
    /// `start_row`). The run itself is [`run::write_run`]. Returns how many cells it appended
    /// (`prev` is the last of them) and the error of a refused cell, which it did not append.
    #[inline(always)]
    fn append_run<'c>(
        &mut self,
        first: &'c CellRef<'c>,
        prev: &mut &'c CellRef<'c>,
        cells: &'c [CellRef<'c>],
        first_checked: bool,
    ) -> (usize, Option<FormatError>) {
        let blooms_skip = self
            .general_bloom
            .as_ref()
            .is_none_or(BloomWriter::skips_same_row);
        if !self.block_open || !blooms_skip || self.first_key_in_block.is_none() {
            return (0, None);
        }
        let BlockCellEncoder::None(encoder) = &mut self.cell_encoder else {
            return (0, None);
        };
        let (ctx, block_bytes) = encoder.parts();
        let limit = self.opts.block_size;
        let payload = &mut self.payload;
        // The key's start, the same for every cell of the run: `first`'s row and family, which
        // are valid (`first` was checked before it was appended).
        let head = &mut self.row_key_head;
        head.clear();
        let row_len = (first.row.len() as u16).to_be_bytes();
        let family_len = [first.family.len() as u8];
        crate::bytes::extend_pieces(head, [&row_len, first.row, &family_len, first.family]);
        let mut bytes = *block_bytes;
        let mut n = 0usize;
        let mut last_at = 0usize;
        let mut biggest = None;
        let stats = &mut self.stats;
        if first_checked {
            // The row's first cell, checked and offered to the Blooms by `start_row`: written
            // whatever its tags and sequence id.
            last_at = payload.len();
            bytes += write_none_cell_headed(&ctx, head, first, payload);
            if stats.note(first, first.key_len()) {
                biggest = Some(0);
            }
            n = 1;
        }
        let run = run::Run {
            payload,
            head: head.as_slice(),
            row: first.row,
            family: first.family,
            block_bytes: bytes,
            block_size: limit,
        };
        let last = if n > 0 { first } else { *prev };
        let rest = &cells[n..];
        let done = match (ctx.include_tags, ctx.include_mvcc) {
            (true, true) => run::write_run::<true, true>(run, last, rest, stats),
            (true, false) => run::write_run::<true, false>(run, last, rest, stats),
            (false, true) => run::write_run::<false, true>(run, last, rest, stats),
            (false, false) => run::write_run::<false, false>(run, last, rest, stats),
        };
        if done.cells > 0 {
            last_at = done.last_at;
        }
        if let Some(i) = done.biggest {
            biggest = Some(n + i);
        }
        *block_bytes = done.block_bytes;
        n += done.cells;
        let refused = (done.end == run::RunEnd::OutOfOrder).then(|| FormatError::OutOfOrder {
            index: self.entry_count + n as u64,
            detail: "its key sorts before the previous cell's key".into(),
        });
        if n > 0 {
            let last = &cells[n - 1];
            self.last_key_in_payload = Some((last_at + 8, last_at + 8 + last.key_len()));
            *prev = last;
            self.entry_count += n as u64;
            if let Some(i) = biggest {
                self.biggest_key = Some(cells[i].key());
            }
        }
        (n, refused)
    }

    /// [`append_row`](Self::append_row)'s checks of `cell`, which has the row and family of
    /// `prev`, the cell appended just before it: whether it is valid and in order, and
    /// whether it has `prev`'s key (a duplicate, which never starts a block).
    #[inline(always)]
    fn check_in_row(&self, prev: &CellRef<'_>, cell: &CellRef<'_>) -> Result<bool> {
        cell.validate()?;
        match order_in_row(prev, cell) {
            Ordering::Greater => Err(FormatError::OutOfOrder {
                index: self.entry_count,
                detail: "its key sorts before the previous cell's key".into(),
            }),
            Ordering::Equal => Ok(true),
            Ordering::Less => Ok(false),
        }
    }

    /// [`append_row`](Self::append_row)'s per-cell write for a NONE-encoded file, after
    /// [`check_in_row`](Self::check_in_row). Leaves `last_shape` for the caller to set.
    #[inline(always)]
    fn append_in_row(&mut self, cell: &CellRef<'_>, dup: bool) -> Result<()> {
        self.offer_to_blooms(cell, true);
        self.make_room(dup)?;
        let cell_at = self.payload.len();
        let key_len = cell.key_len();
        self.cell_encoder.encode(cell, &mut self.payload)?;
        self.last_key_in_payload = Some((cell_at + 8, cell_at + 8 + key_len));
        if self.first_key_in_block.is_none() {
            self.first_key_in_block = Some(self.last_key().to_vec());
        }
        self.note_cell(cell, key_len);
        Ok(())
    }

    /// StoreFileWriter's order: the general Bloom, then the delete-family Bloom (which takes
    /// only DeleteFamily and DeleteFamilyVersion cells) and its count. `same_row`: `cell` has
    /// the row of the cell before it (a ROW or ROWPREFIX Bloom then has its key already).
    #[inline(always)]
    pub(super) fn offer_to_blooms(&mut self, cell: &CellRef<'_>, same_row: bool) {
        if let Some(b) = self.general_bloom.as_mut() {
            b.add_in_row(cell, same_row);
        }
        if cell.cell_type.is_delete_family_kind() {
            if let Some(b) = self.delete_family_bloom.as_mut() {
                b.add(cell);
            }
            if self.opts.store_file {
                self.delete_family_count += 1;
            }
        }
    }

    /// Before a cell is encoded: ends a full block unless the cell repeats the last key (equal
    /// keys never straddle blocks), and opens a block if none is open.
    #[inline(always)]
    fn make_room(&mut self, dup: bool) -> Result<()> {
        if !dup {
            self.cut_block_if_full()?;
        }
        if !self.block_open {
            self.new_block();
        }
        Ok(())
    }

    /// Ends the open block if it holds `block_size` bytes (encoded or unencoded), with the
    /// inline blocks that follow it.
    #[inline(always)]
    fn cut_block_if_full(&mut self) -> Result<()> {
        if self.block_open {
            let limit = self.opts.block_size;
            if self.cell_encoder.encoded_bytes() >= limit
                || self.cell_encoder.unencoded_bytes() >= limit
            {
                self.finish_block()?;
                self.write_inline_blocks(false)?;
            }
        }
        Ok(())
    }

    /// Counts an appended cell into the file's statistics (FileInfo and trailer).
    #[inline(always)]
    fn note_cell(&mut self, cell: &CellRef<'_>, key_len: usize) {
        if self.stats.note(cell, key_len) {
            self.biggest_key = Some(self.last_key().to_vec());
        }
        self.entry_count += 1;
    }

    /// The flat key of the last appended cell (empty before the first).
    fn last_key(&self) -> &[u8] {
        match self.last_key_in_payload {
            Some((from, to)) => &self.payload[from..to],
            None => &self.last_key,
        }
    }

    /// Copies the last key out of the open block into `last_key` (before the block's
    /// buffer is reused, and before the last key is reported).
    pub(super) fn settle_last_key(&mut self) {
        if let Some((from, to)) = self.last_key_in_payload.take() {
            self.last_key.clear();
            self.last_key.extend_from_slice(&self.payload[from..to]);
        }
    }

    fn append_unchecked(&mut self, cell: &CellRef<'_>, dup: bool, same_row: bool) -> Result<()> {
        self.offer_to_blooms(cell, same_row);
        self.make_room(dup)?;
        self.encode_into_block(cell)
    }

    /// `append`'s last step, once the cell is checked and offered to the Blooms and the open
    /// block has room: encodes it and records it as the last cell.
    pub(super) fn encode_into_block(&mut self, cell: &CellRef<'_>) -> Result<()> {
        let cell_at = self.payload.len();
        self.cell_encoder.encode(cell, &mut self.payload)?;

        let key_len = cell.key_len();
        // A NONE block holds the flat key right after the cell's two i32 lengths: point at it
        // rather than copying it per cell (hot path). Other encodings keep a copy.
        if self.opts.encoding == DataBlockEncoding::None
            && self.payload.len() >= cell_at + 8 + key_len
        {
            self.last_key_in_payload = Some((cell_at + 8, cell_at + 8 + key_len));
        } else {
            self.last_key_in_payload = None;
            self.last_key.clear();
            cell.write_key(&mut self.last_key);
        }
        debug_assert_eq!(self.last_key(), cell.key().as_slice());
        self.last_shape = KeyShape::of(cell);
        if self.first_key_in_block.is_none() {
            self.first_key_in_block = Some(self.last_key().to_vec());
        }
        if self.first_key.is_none() {
            self.first_key = Some(self.last_key().to_vec());
        }
        self.note_cell(cell, key_len);
        Ok(())
    }
}
