//! The HFile reader: open, scan, seek. Spec: `formats/hfile.md` §"Reading".
//!
//! ```text
//! open:  trailer (last 4096 bytes) → load-on-open section at load_on_open_data_offset:
//!        ROOT_INDEX (data index root [+ mid-key]) | ROOT_INDEX (meta index) | FILE_INFO |
//!        [GENERAL_BLOOM_META] [DELETE_FAMILY_BLOOM_META]
//! scan:  blocks from offset 0, walking offset + onDiskSizeWithHeader to the load-on-open
//!        section, decoding the data blocks and skipping the others
//! seek:  root → intermediate → leaf (last entry ≤ key at each level) → data block → first cell ≥ key
//! ```
//!
//! A reader may be restricted to one half of its file ([`HFileReader::into_half`], HBase's
//! `HalfStoreFileReader` for the reference files a region split leaves): its scanners then
//! return only the cells on that side of the split key. Everything else (index, FileInfo,
//! Bloom filters, entry count) stays the whole file's, a superset of the half's.
//!
//! Every block read is checksum-verified before it is decompressed or decoded; any
//! inconsistency is a [`FormatError`] naming the offset. No input can make the reader panic or
//! allocate more than the file's own sizes justify.
//!
//! The trailer has no checksum, so no trailer field is trusted alone (`formats/hfile.md`
//! §"Trailer"): [`Trailer::read`] checks the fields against each other and the file length;
//! opening checks them against the load-on-open section (it must chain block by block from
//! `load_on_open_data_offset` to the trailer, the root index must hold exactly
//! `data_index_count` entries, a one-level index must start at `first_data_block_offset` and
//! end at `last_data_block_offset`); a scan walks every block up to the load-on-open section
//! instead of stopping where the trailer says the data ends, and when it reaches the end it
//! checks the last data block's offset, and the cells it decoded from the first one, against
//! the trailer. So a scan can never end early because of a trailer field: it returns every
//! cell or fails.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, OnceLock};

use super::block::{BlockDecoder, BlockHeader, BlockType};
use super::block_cache::{BlockCache, CachedBlock};
use super::bloom::{BloomKind, BloomQuery, BloomReader, BloomType};
use super::cell::{compare_flat_keys, compare_keys, CellRef, KeyView};
use super::compression::Compression;
use super::encoding::{new_decoder, CellDecoder, DataBlockEncoding, EncodingContext, Payload};
use super::error::{FormatError, Result};
use super::fileinfo::{keys, FileInfo};
use super::index::{
    find_block, parse_non_root, parse_root, IndexEntry, MidKeyMetadata, MID_KEY_METADATA_SIZE,
};
use super::trailer::Trailer;

/// The bytes of an open file.
enum Backing {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Mapped(m) => m,
            Backing::Owned(v) => v,
        }
    }
}

/// A block of the load-on-open section, as found at open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadOnOpenBlock {
    pub offset: u64,
    pub header: BlockHeader,
}

/// Which side of a split key a half reader returns (HBase's `Reference.Range`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfRange {
    /// Cells whose key is ≥ the split key.
    Top,
    /// Cells whose key is < the split key.
    Bottom,
}

/// The half of a file a reader is restricted to.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Half {
    /// A flat key (for a region split: first-on-row of the split row).
    split_key: Vec<u8>,
    range: HalfRange,
}

/// An open HFile.
pub struct HFileReader {
    backing: Backing,
    path: Option<PathBuf>,
    trailer: Trailer,
    compression: Compression,
    file_info: FileInfo,
    ctx: EncodingContext,
    encoding: DataBlockEncoding,
    root_index: Vec<IndexEntry>,
    mid_key: Option<MidKeyMetadata>,
    meta_index: Vec<IndexEntry>,
    general_bloom_meta: Option<(u64, Vec<u8>)>,
    delete_family_bloom_meta: Option<(u64, Vec<u8>)>,
    general_bloom: Option<BloomReader>,
    delete_family_bloom: Option<BloomReader>,
    load_on_open: Vec<LoadOnOpenBlock>,
    half: Option<Half>,
    /// Unique within the process: this reader's key in a [`BlockCache`].
    id: u64,
    /// The cache seeks read data blocks through, once set.
    block_cache: OnceLock<Arc<BlockCache>>,
}

/// The next [`HFileReader`] id.
static NEXT_READER_ID: AtomicU64 = AtomicU64::new(0);

impl std::fmt::Debug for HFileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HFileReader")
            .field("path", &self.path)
            .field("trailer", &self.trailer)
            .field("half", &self.half)
            .finish_non_exhaustive()
    }
}

impl HFileReader {
    /// Opens the file at `path` (memory-mapped; HFiles are immutable once written).
    pub fn open(path: impl AsRef<Path>) -> Result<HFileReader> {
        let path = path.as_ref();
        let file = File::open(path)
            .map_err(|e| FormatError::io(format!("opening {}", path.display()), e))?;
        let meta = file
            .metadata()
            .map_err(|e| FormatError::io(format!("reading metadata of {}", path.display()), e))?;
        if meta.is_dir() {
            return Err(FormatError::NotAnHFile(format!(
                "{} is a directory",
                path.display()
            )));
        }
        let len = meta.len();
        let backing = if len == 0 {
            Backing::Owned(Vec::new())
        } else {
            // SAFETY: the map is read-only and HFiles are never modified after they are
            // written; a file truncated underneath us is outside this contract (as for any
            // mmap-based reader).
            let map = unsafe { memmap2::Mmap::map(&file) }
                .map_err(|e| FormatError::io(format!("mapping {}", path.display()), e))?;
            Backing::Mapped(map)
        };
        let mut r = HFileReader::from_backing(backing)?;
        r.path = Some(path.to_path_buf());
        Ok(r)
    }

    /// Opens a file held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<HFileReader> {
        HFileReader::from_backing(Backing::Owned(bytes))
    }

    fn from_backing(backing: Backing) -> Result<HFileReader> {
        let bytes = backing.bytes();
        let trailer = Trailer::read(bytes)?;
        let compression = trailer.compression().ok_or_else(|| {
            FormatError::Unsupported(format!(
                "compression codec id {}",
                trailer.compression_codec
            ))
        })?;
        let trailer_at = Trailer::offset_in(bytes.len() as u64);
        let mut dec = BlockDecoder::new(compression)?;
        let mut payload = Vec::new();
        let mut load_on_open = Vec::new();
        let mut at = trailer.load_on_open_data_offset;

        // Data index root.
        let h = read_expect(&mut dec, bytes, at, &[BlockType::RootIndex], &mut payload)?;
        load_on_open.push(LoadOnOpenBlock {
            offset: at,
            header: h,
        });
        let (root_index, used) = parse_root(
            &payload,
            trailer.data_index_count as usize,
            at,
            "data index root",
        )?;
        let mid_key = check_root_index(&trailer, &root_index, &payload[used..], at)?;
        at += h.on_disk_size_with_header();

        // Meta index.
        let h = read_expect(&mut dec, bytes, at, &[BlockType::RootIndex], &mut payload)?;
        load_on_open.push(LoadOnOpenBlock {
            offset: at,
            header: h,
        });
        let (meta_index, used) = parse_root(
            &payload,
            trailer.meta_index_count as usize,
            at,
            "meta index",
        )?;
        if used != payload.len() {
            return Err(FormatError::trailer_mismatch(
                "meta_index_count",
                trailer.meta_index_count,
                format!(
                    "the meta index block at {at} holds {} more bytes after that many entries",
                    payload.len() - used
                ),
            ));
        }
        at += h.on_disk_size_with_header();

        // FileInfo.
        if at != trailer.file_info_offset {
            return Err(FormatError::trailer_mismatch(
                "file_info_offset",
                trailer.file_info_offset,
                format!("the block after the two root index blocks is at {at}"),
            ));
        }
        let h = read_expect(&mut dec, bytes, at, &[BlockType::FileInfo], &mut payload)?;
        load_on_open.push(LoadOnOpenBlock {
            offset: at,
            header: h,
        });
        let file_info = FileInfo::from_payload(&payload, at)?;
        at += h.on_disk_size_with_header();

        // Bloom metas, until the trailer.
        let mut general_bloom_meta = None;
        let mut delete_family_bloom_meta = None;
        while at < trailer_at {
            let h = read_expect(
                &mut dec,
                bytes,
                at,
                &[
                    BlockType::GeneralBloomMeta,
                    BlockType::DeleteFamilyBloomMeta,
                ],
                &mut payload,
            )?;
            load_on_open.push(LoadOnOpenBlock {
                offset: at,
                header: h,
            });
            let slot = if h.block_type == BlockType::GeneralBloomMeta {
                &mut general_bloom_meta
            } else {
                &mut delete_family_bloom_meta
            };
            *slot = Some((at, payload.clone()));
            at += h.on_disk_size_with_header();
        }
        if at != trailer_at {
            return Err(FormatError::corrupt(
                "load-on-open section",
                at,
                "last block overruns the trailer",
            ));
        }

        let ctx = EncodingContext {
            include_tags: file_info.contains(keys::MAX_TAGS_LEN),
            include_mvcc: file_info.get_i32(keys::KEY_VALUE_VERSION) == Some(1),
            compress_tags: file_info.get_bool(keys::TAGS_COMPRESSED).unwrap_or(false),
        };
        let encoding = match file_info.get_str(keys::DATA_BLOCK_ENCODING) {
            None => DataBlockEncoding::None,
            Some(name) => DataBlockEncoding::from_name(name)
                .ok_or_else(|| FormatError::Unsupported(format!("data block encoding {name}")))?,
        };
        let general_bloom = match &general_bloom_meta {
            Some((offset, payload)) => {
                let t = BloomType::from_file_info(&file_info)?.ok_or_else(|| {
                    FormatError::corrupt(
                        "file info",
                        trailer.file_info_offset,
                        "Bloom meta block but no BLOOM_FILTER_TYPE",
                    )
                })?;
                Some(BloomReader::from_meta(
                    payload,
                    *offset,
                    BloomKind::General(t),
                )?)
            }
            None => None,
        };
        let delete_family_bloom = match &delete_family_bloom_meta {
            Some((offset, payload)) => Some(BloomReader::from_meta(
                payload,
                *offset,
                BloomKind::DeleteFamily,
            )?),
            None => None,
        };
        Ok(HFileReader {
            general_bloom,
            delete_family_bloom,
            backing,
            path: None,
            trailer,
            compression,
            file_info,
            ctx,
            encoding,
            root_index,
            mid_key,
            meta_index,
            general_bloom_meta,
            delete_family_bloom_meta,
            load_on_open,
            half: None,
            id: NEXT_READER_ID.fetch_add(1, AtomicOrdering::Relaxed),
            block_cache: OnceLock::new(),
        })
    }

    /// This reader restricted to one half of the file, as HBase reads a reference file: its
    /// scanners return only the cells whose key is ≥ `split_key` ([`HalfRange::Top`]) or
    /// < `split_key` ([`HalfRange::Bottom`]); seeks are clamped to the half. `split_key` is a
    /// flat key (a reference stores first-on-row of the split row).
    pub fn into_half(mut self, split_key: Vec<u8>, range: HalfRange) -> Result<HFileReader> {
        if KeyView::parse(&split_key).is_none() {
            return Err(FormatError::Invalid(
                "the split key of a half file is not a valid cell key".into(),
            ));
        }
        self.half = Some(Half { split_key, range });
        Ok(self)
    }

    /// The split key and side this reader is restricted to, if it reads a half.
    pub fn half(&self) -> Option<(&[u8], HalfRange)> {
        self.half
            .as_ref()
            .map(|h| (h.split_key.as_slice(), h.range))
    }

    /// The whole file.
    pub fn bytes(&self) -> &[u8] {
        self.backing.bytes()
    }
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
    pub fn trailer(&self) -> &Trailer {
        &self.trailer
    }
    pub fn compression(&self) -> Compression {
        self.compression
    }
    pub fn file_info(&self) -> &FileInfo {
        &self.file_info
    }
    pub fn encoding_context(&self) -> EncodingContext {
        self.ctx
    }
    pub fn encoding(&self) -> DataBlockEncoding {
        self.encoding
    }
    pub fn root_index(&self) -> &[IndexEntry] {
        &self.root_index
    }
    pub fn mid_key_metadata(&self) -> Option<MidKeyMetadata> {
        self.mid_key
    }
    pub fn meta_index(&self) -> &[IndexEntry] {
        &self.meta_index
    }
    pub fn load_on_open_blocks(&self) -> &[LoadOnOpenBlock] {
        &self.load_on_open
    }
    /// (offset, payload) of the general Bloom meta block, if the file has one.
    pub fn general_bloom_meta(&self) -> Option<(u64, &[u8])> {
        self.general_bloom_meta
            .as_ref()
            .map(|(o, p)| (*o, p.as_slice()))
    }
    /// (offset, payload) of the delete-family Bloom meta block, if the file has one.
    pub fn delete_family_bloom_meta(&self) -> Option<(u64, &[u8])> {
        self.delete_family_bloom_meta
            .as_ref()
            .map(|(o, p)| (*o, p.as_slice()))
    }
    /// The general Bloom filter, if the file has one.
    pub fn general_bloom(&self) -> Option<&BloomReader> {
        self.general_bloom.as_ref()
    }
    /// The delete-family Bloom filter, if the file has one.
    pub fn delete_family_bloom(&self) -> Option<&BloomReader> {
        self.delete_family_bloom.as_ref()
    }

    /// Asks the general Bloom filter whether the file may hold cells for `query`. `Ok(true)`
    /// when there is no Bloom (or it cannot tell); `Ok(false)` means the file certainly holds
    /// no such cell and need not be read. An empty file holds nothing.
    /// The general Bloom keeps every chunk it has loaded (see [`BloomReader`]), so a query
    /// reads no block after the first that needed its chunk.
    pub fn might_contain(&self, query: BloomQuery<'_>) -> Result<bool> {
        self.bloom_probe()?.might_contain(query)
    }

    /// A Bloom prober that keeps one block decoder for the chunks it loads, for many queries.
    pub fn bloom_probe(&self) -> Result<BloomProbe<'_>> {
        Ok(BloomProbe {
            reader: self,
            dec: None,
        })
    }

    /// Number of cells (trailer entry count; a full scan fails if the file holds another
    /// number).
    pub fn entry_count(&self) -> u64 {
        self.trailer.entry_count
    }

    /// True when the file has no data block (its index is empty; opening checked that the
    /// trailer agrees).
    pub fn is_empty(&self) -> bool {
        self.root_index.is_empty()
    }
    /// The last key (FileInfo LASTKEY), if any cell.
    pub fn last_key(&self) -> Option<&[u8]> {
        self.file_info.get(keys::LASTKEY)
    }

    /// Makes seeks ([`Scanner::seek`], so gets) read data blocks through `cache`, shared
    /// with other readers; a sequential scan reads past it. Only the first call takes effect.
    pub fn set_block_cache(&self, cache: Arc<BlockCache>) {
        let _ = self.block_cache.set(cache);
    }

    /// A block decoder (decompression state) for this file's codec.
    pub fn block_decoder(&self) -> Result<BlockDecoder> {
        BlockDecoder::new(self.compression)
    }

    /// Reads, verifies and decompresses the block at `offset` into `payload`.
    pub fn read_block(
        &self,
        dec: &mut BlockDecoder,
        offset: u64,
        payload: &mut Vec<u8>,
    ) -> Result<BlockHeader> {
        let trailer_at = Trailer::offset_in(self.bytes().len() as u64);
        if offset >= trailer_at {
            return Err(FormatError::corrupt(
                "block",
                offset,
                "offset is inside the trailer",
            ));
        }
        dec.read(&self.bytes()[..trailer_at as usize], offset, payload)
    }

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

    /// The offset of the data block that may hold `key` (a flat key), following the index
    /// down from the root; `None` when `key` sorts before the first block's index key.
    pub fn locate_block(&self, dec: &mut BlockDecoder, key: &[u8]) -> Result<Option<IndexEntry>> {
        let Some(mut i) = find_block(&self.root_index, key) else {
            return Ok(None);
        };
        let mut entry = self.root_index[i].clone();
        let mut payload = Vec::new();
        for level in 1..self.trailer.num_data_index_levels {
            let h = self.read_block(dec, entry.offset, &mut payload)?;
            let want = if level + 1 == self.trailer.num_data_index_levels {
                BlockType::LeafIndex
            } else {
                BlockType::IntermediateIndex
            };
            if h.block_type != want {
                return Err(FormatError::corrupt(
                    "block index",
                    entry.offset,
                    format!(
                        "expected {} block, found {}",
                        want.name(),
                        h.block_type.name()
                    ),
                ));
            }
            let entries = parse_non_root(&payload, entry.offset)?;
            // A key before the child's first (fake) key still belongs to its first entry.
            i = find_block(&entries, key).unwrap_or_default();
            entry = entries.get(i).cloned().ok_or_else(|| {
                FormatError::corrupt("block index", entry.offset, "empty index block")
            })?;
        }
        Ok(Some(entry))
    }
}

/// Checks the data index root against the trailer: it holds exactly `data_index_count`
/// entries (what follows them is the 16-byte mid-key metadata of a multi-level index, or
/// nothing); a one-level index names the first data block at `first_data_block_offset` and
/// the last at `last_data_block_offset`. Returns the mid-key metadata.
fn check_root_index(
    trailer: &Trailer,
    root: &[IndexEntry],
    rest: &[u8],
    at: u64,
) -> Result<Option<MidKeyMetadata>> {
    let multi_level = trailer.num_data_index_levels > 1;
    let expected_rest = if multi_level && !root.is_empty() {
        MID_KEY_METADATA_SIZE
    } else {
        0
    };
    if rest.len() != expected_rest {
        return Err(FormatError::trailer_mismatch(
            "data_index_count",
            trailer.data_index_count,
            format!(
                "the data index root at {at} holds {} bytes after that many entries, expected {} \
                 for a {}-level index",
                rest.len(),
                expected_rest,
                trailer.num_data_index_levels
            ),
        ));
    }
    if multi_level {
        return match rest.is_empty() {
            true => Ok(None),
            false => Ok(Some(MidKeyMetadata::parse(rest, at)?)),
        };
    }
    if let (Some(first), Some(last)) = (root.first(), root.last()) {
        if first.offset as i64 != trailer.first_data_block_offset {
            return Err(FormatError::trailer_mismatch(
                "first_data_block_offset",
                trailer.first_data_block_offset,
                format!("the index names the first data block at {}", first.offset),
            ));
        }
        if last.offset as i64 != trailer.last_data_block_offset {
            return Err(FormatError::trailer_mismatch(
                "last_data_block_offset",
                trailer.last_data_block_offset,
                format!("the index names the last data block at {}", last.offset),
            ));
        }
    }
    Ok(None)
}

fn read_expect(
    dec: &mut BlockDecoder,
    bytes: &[u8],
    offset: u64,
    allowed: &[BlockType],
    payload: &mut Vec<u8>,
) -> Result<BlockHeader> {
    let limit = Trailer::offset_in(bytes.len() as u64) as usize;
    let h = dec.read(&bytes[..limit.min(bytes.len())], offset, payload)?;
    if !allowed.contains(&h.block_type) {
        return Err(FormatError::corrupt(
            "load-on-open section",
            offset,
            format!(
                "found a {} block where {} was expected",
                h.block_type.name(),
                allowed
                    .iter()
                    .map(|t| t.name())
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        ));
    }
    Ok(h)
}

/// A forward cursor over the cells of one file.
pub struct Scanner<'r> {
    reader: &'r HFileReader,
    blocks: BlockDecoder,
    decoder: Option<Box<dyn CellDecoder>>,
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
            self.spare = old.into_payload();
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
        self.load(offset, false)
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
            let spare = old.into_payload();
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
    /// from, or goes into, the reader's block cache (if it has one).
    fn load(&mut self, mut offset: u64, cached: bool) -> Result<bool> {
        let end = self.reader.scanned_end();
        let cache = match cached {
            true => self.reader.block_cache.get().cloned(),
            false => None,
        };
        if let Some(b) = cache.as_ref().and_then(|c| c.get(self.reader.id, offset)) {
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
            let h = self
                .reader
                .read_block(&mut self.blocks, offset, &mut payload)?;
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
                        let shared = Arc::new(payload);
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

    /// Advances to the next cell of the file, whatever the half; false at the end.
    fn step(&mut self) -> Result<bool> {
        loop {
            if let Some(d) = self.decoder.as_mut() {
                if d.advance()? {
                    if let Some(n) = self.cells_from_first.as_mut() {
                        *n += 1;
                    }
                    return Ok(true);
                }
            }
            match self.next_block {
                Some(at) => {
                    if !self.load_from(at)? {
                        return Ok(false);
                    }
                }
                None => return Ok(false),
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
        if !self.load(start, true)? || self.block_offset != start {
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
    pub fn current(&self) -> Option<CellRef<'_>> {
        if self.past_half {
            return None;
        }
        self.decoder.as_ref().map(|d| d.cell())
    }
}

/// Answers Bloom queries against one file; the file's [`BloomReader`] keeps the chunks.
pub struct BloomProbe<'r> {
    reader: &'r HFileReader,
    /// Made on the first chunk read.
    dec: Option<BlockDecoder>,
}

impl BloomProbe<'_> {
    /// See [`HFileReader::might_contain`].
    pub fn might_contain(&mut self, query: BloomQuery<'_>) -> Result<bool> {
        let r = self.reader;
        if r.is_empty() {
            return Ok(false);
        }
        let Some(bloom) = r.general_bloom.as_ref() else {
            return Ok(true);
        };
        let last = r.file_info.get(keys::LAST_BLOOM_KEY);
        let dec = &mut self.dec;
        bloom.might_contain(query, last, &mut |offset, size| {
            let dec = match dec {
                Some(d) => d,
                None => dec.insert(r.block_decoder()?),
            };
            let mut payload = Vec::new();
            let h = r.read_block(dec, offset, &mut payload)?;
            if h.block_type != BlockType::BloomChunk || h.on_disk_size_with_header() != size as u64
            {
                return Err(FormatError::corrupt(
                    "Bloom chunk index",
                    offset,
                    format!(
                        "points at a {} block of {} bytes",
                        h.block_type.name(),
                        h.on_disk_size_with_header()
                    ),
                ));
            }
            Ok(payload)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_not_an_hfile() {
        let dir = std::env::temp_dir();
        let e = HFileReader::open(&dir).unwrap_err().to_string();
        assert!(
            e.starts_with("not an HFile: ") && e.ends_with("is a directory"),
            "{e}"
        );
    }
}

#[cfg(test)]
mod half_tests {
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
