//! The HFile reader: open, scan, seek. Spec: `formats/hfile.md` §"Reading".
//!
//! ```text
//! open:  trailer (last 4096 bytes) → load-on-open section at load_on_open_data_offset:
//!        ROOT_INDEX (data index root [+ mid-key]) | ROOT_INDEX (meta index) | FILE_INFO |
//!        [GENERAL_BLOOM_META] [DELETE_FAMILY_BLOOM_META]
//! scan:  data blocks from first_data_block_offset, walking offset + onDiskSizeWithHeader and
//!        skipping inline blocks, up to last_data_block_offset
//! seek:  root → intermediate → leaf (last entry ≤ key at each level) → data block → first cell ≥ key
//! ```
//!
//! Every block read is checksum-verified before it is decompressed or decoded; any
//! inconsistency is a [`FormatError`] naming the offset. No input can make the reader panic or
//! allocate more than the file's own sizes justify.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::block::{BlockDecoder, BlockHeader, BlockType};
use super::bloom::{BloomKind, BloomQuery, BloomReader, BloomType};
use super::cell::{CellRef, KeyView};
use super::compression::Compression;
use super::encoding::{new_decoder, CellDecoder, DataBlockEncoding, EncodingContext};
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
}

impl std::fmt::Debug for HFileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HFileReader")
            .field("path", &self.path)
            .field("trailer", &self.trailer)
            .finish_non_exhaustive()
    }
}

impl HFileReader {
    /// Opens the file at `path` (memory-mapped; HFiles are immutable once written).
    pub fn open(path: impl AsRef<Path>) -> Result<HFileReader> {
        let path = path.as_ref();
        let file = File::open(path)
            .map_err(|e| FormatError::io(format!("opening {}", path.display()), e))?;
        let len = file
            .metadata()
            .map_err(|e| FormatError::io(format!("reading metadata of {}", path.display()), e))?
            .len();
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
        if trailer.load_on_open_data_offset >= trailer_at || trailer.file_info_offset >= trailer_at
        {
            return Err(FormatError::corrupt(
                "trailer",
                trailer_at,
                format!(
                    "load-on-open offset {} / file info offset {} not before the trailer at {trailer_at}",
                    trailer.load_on_open_data_offset, trailer.file_info_offset
                ),
            ));
        }
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
        let mid_key =
            if trailer.num_data_index_levels > 1 && payload.len() - used >= MID_KEY_METADATA_SIZE {
                Some(MidKeyMetadata::parse(&payload[used..], at)?)
            } else {
                None
            };
        at += h.on_disk_size_with_header();

        // Meta index.
        let h = read_expect(&mut dec, bytes, at, &[BlockType::RootIndex], &mut payload)?;
        load_on_open.push(LoadOnOpenBlock {
            offset: at,
            header: h,
        });
        let (meta_index, _) = parse_root(
            &payload,
            trailer.meta_index_count as usize,
            at,
            "meta index",
        )?;
        at += h.on_disk_size_with_header();

        // FileInfo.
        if at != trailer.file_info_offset {
            return Err(FormatError::corrupt(
                "load-on-open section",
                at,
                format!(
                    "FILE_INFO expected here, trailer says {}",
                    trailer.file_info_offset
                ),
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
        })
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
    pub fn might_contain(&self, query: BloomQuery<'_>) -> Result<bool> {
        self.bloom_probe()?.might_contain(query)
    }

    /// A Bloom prober that keeps the chunks it has loaded, for many queries.
    pub fn bloom_probe(&self) -> Result<BloomProbe<'_>> {
        Ok(BloomProbe {
            reader: self,
            dec: self.block_decoder()?,
            chunks: std::collections::HashMap::new(),
        })
    }

    /// Number of cells (trailer entry count).
    pub fn entry_count(&self) -> u64 {
        self.trailer.entry_count
    }
    /// The last key (FileInfo LASTKEY), if any cell.
    pub fn last_key(&self) -> Option<&[u8]> {
        self.file_info.get(keys::LASTKEY)
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
            next_block: self.first_data_block(),
            spare: Vec::new(),
        })
    }

    fn first_data_block(&self) -> Option<u64> {
        (self.trailer.first_data_block_offset >= 0 && self.trailer.entry_count > 0)
            .then_some(self.trailer.first_data_block_offset as u64)
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
}

impl<'r> Scanner<'r> {
    /// Offset of the data block the current cell came from.
    pub fn block_offset(&self) -> u64 {
        self.block_offset
    }

    /// Loads the data block at or after `offset` (skipping inline blocks). False when none.
    fn load_from(&mut self, mut offset: u64) -> Result<bool> {
        let last = self.reader.trailer.last_data_block_offset;
        loop {
            if last < 0 || offset > last as u64 {
                self.next_block = None;
                return Ok(false);
            }
            let mut payload = std::mem::take(&mut self.spare);
            let h = self
                .reader
                .read_block(&mut self.blocks, offset, &mut payload)?;
            let next = offset + h.on_disk_size_with_header();
            if h.block_type.is_data() {
                if let Some(old) = self.decoder.take() {
                    self.spare = old.into_payload();
                }
                self.decoder = Some(new_decoder(h.block_type, payload, self.reader.ctx, offset)?);
                self.block_offset = offset;
                self.next_block = Some(next);
                return Ok(true);
            }
            self.spare = payload;
            offset = next;
        }
    }

    /// The next cell, or `None` at the end of the file.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<CellRef<'_>>> {
        loop {
            if let Some(d) = self.decoder.as_mut() {
                if d.advance()? {
                    break;
                }
            }
            match self.next_block {
                Some(at) => {
                    if !self.load_from(at)? {
                        return Ok(None);
                    }
                }
                None => return Ok(None),
            }
        }
        Ok(self.decoder.as_ref().map(|d| d.cell()))
    }

    /// Positions the scanner on the first cell whose key is ≥ `key` (a flat key, e.g.
    /// [`crate::format::cell::first_on_row`]) and returns it; [`Scanner::current`] is then that
    /// cell and [`Scanner::next`] the one after it. `None` when every cell is smaller.
    pub fn seek(&mut self, key: &[u8]) -> Result<Option<CellRef<'_>>> {
        let target = KeyView::parse(key)
            .ok_or_else(|| FormatError::Invalid("seek key is not a valid cell key".into()))?;
        let entry = self.reader.locate_block(&mut self.blocks, key)?;
        let start = match entry {
            Some(e) => e.offset,
            None => match self.reader.first_data_block() {
                Some(o) => o,
                None => return Ok(None),
            },
        };
        if !self.load_from(start)? {
            return Ok(None);
        }
        loop {
            let found = match self.decoder.as_mut() {
                Some(d) => d.seek(&target)?,
                None => false,
            };
            if found {
                return Ok(self.decoder.as_ref().map(|d| d.cell()));
            }
            let next = self.next_block;
            match next {
                Some(at) if self.load_from(at)? => continue,
                _ => return Ok(None),
            }
        }
    }

    /// The cell the scanner is on (after `next` or `seek` returned one).
    pub fn current(&self) -> Option<CellRef<'_>> {
        self.decoder.as_ref().map(|d| d.cell())
    }
}

/// Answers Bloom queries against one file, caching the chunks it loads.
pub struct BloomProbe<'r> {
    reader: &'r HFileReader,
    dec: BlockDecoder,
    chunks: std::collections::HashMap<u64, Vec<u8>>,
}

impl BloomProbe<'_> {
    /// See [`HFileReader::might_contain`].
    pub fn might_contain(&mut self, query: BloomQuery<'_>) -> Result<bool> {
        let r = self.reader;
        if r.trailer.entry_count == 0 {
            return Ok(false);
        }
        let Some(bloom) = r.general_bloom.as_ref() else {
            return Ok(true);
        };
        let last = r.file_info.get(keys::LAST_BLOOM_KEY);
        let (dec, chunks) = (&mut self.dec, &mut self.chunks);
        bloom.might_contain(query, last, &mut |offset, size| {
            if let Some(p) = chunks.get(&offset) {
                return Ok(p.clone());
            }
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
            if chunks.len() >= 64 {
                chunks.clear();
            }
            chunks.insert(offset, payload.clone());
            Ok(payload)
        })
    }
}
