//! [`HFileReader`], an open HFile (`formats/hfile.md` §"Reading"): its bytes (mapped, in
//! memory, or read by ranges), what opening found (trailer, FileInfo, indexes, Bloom metas),
//! block reads, the walk down the data index, the mid key, the file's bounds, Bloom probes,
//! and the half of the file a reader may be restricted to. Opening itself is `open`'s, the
//! scan and seeks `scanner`'s.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};

use super::ranged::{RangeReads, RangeSource, RangedFile};
use crate::block::{BlockDecoder, BlockHeader, BlockType};
use crate::block_cache::{BlockCache, CachedBlock};
use crate::bloom::{BloomQuery, BloomReader};
use crate::cell::KeyView;
use crate::compression::Compression;
use crate::encoding::{DataBlockEncoding, EncodingContext, SharedBlock};
use crate::error::{FormatError, Result};
use crate::fileinfo::{keys, FileInfo};
use crate::index::{find_block, parse_non_root, search_non_root, IndexEntry, MidKeyMetadata};
use crate::trailer::Trailer;

/// The bytes of an open file.
pub(super) enum Backing {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
    /// Read by ranges: only the file's end is held.
    Ranged(Box<RangedFile>),
}

impl Backing {
    pub(super) fn len(&self) -> u64 {
        match self {
            Backing::Mapped(m) => m.len() as u64,
            Backing::Owned(v) => v.len() as u64,
            Backing::Ranged(r) => r.len(),
        }
    }

    /// The file's bytes from an offset to its end, at least from the load-on-open section
    /// on: (that offset, the bytes).
    pub(super) fn end(&self) -> (u64, &[u8]) {
        match self {
            Backing::Mapped(m) => (0, m),
            Backing::Owned(v) => (0, v),
            Backing::Ranged(r) => r.end(),
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
pub(super) struct Half {
    /// A flat key (for a region split: first-on-row of the split row).
    pub(super) split_key: Vec<u8>,
    pub(super) range: HalfRange,
}

/// An open HFile.
pub struct HFileReader {
    pub(super) backing: Backing,
    pub(super) path: Option<PathBuf>,
    pub(super) trailer: Trailer,
    pub(super) compression: Compression,
    pub(super) file_info: FileInfo,
    pub(super) ctx: EncodingContext,
    pub(super) encoding: DataBlockEncoding,
    pub(super) root_index: Vec<IndexEntry>,
    pub(super) mid_key: Option<MidKeyMetadata>,
    pub(super) meta_index: Vec<IndexEntry>,
    pub(super) general_bloom_meta: Option<(u64, Vec<u8>)>,
    pub(super) delete_family_bloom_meta: Option<(u64, Vec<u8>)>,
    pub(super) general_bloom: Option<BloomReader>,
    pub(super) delete_family_bloom: Option<BloomReader>,
    pub(super) load_on_open: Vec<LoadOnOpenBlock>,
    pub(super) half: Option<Half>,
    /// Unique within the process: this reader's key in a [`BlockCache`].
    pub(super) id: u64,
    /// The cache seeks read data blocks through, once set.
    pub(super) block_cache: OnceLock<Arc<BlockCache>>,
    /// What every read's file selection asks, worked out once ([`HFileReader::bounds`]).
    pub(super) bounds: OnceLock<FileBounds>,
}

/// A file's rows and timestamps as its metadata bounds them: what a read checks before it
/// reads the file (a get asks for every file of its region).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileBounds {
    /// The row of the first data index key (a lower bound of the first cell's row).
    pub first_row: Option<Vec<u8>>,
    /// The row of `hfile.LASTKEY`.
    pub last_row: Option<Vec<u8>>,
    /// FileInfo `TIMERANGE` (min, max), when present and well-formed.
    pub time_range: Option<(i64, i64)>,
    /// FileInfo `LAST_BLOOM_KEY`: no key after it is in the general Bloom filter.
    pub last_bloom_key: Option<Vec<u8>>,
}

/// The next [`HFileReader`] id.
pub(super) static NEXT_READER_ID: AtomicU64 = AtomicU64::new(0);

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

    /// Opens a file read by byte ranges (a store file on object storage): reads and keeps its
    /// end (trailer and load-on-open section); every other block is read when a scan, seek or
    /// Bloom query needs it (`formats/hfile.md` §"Reading by ranges").
    pub fn from_source(source: std::sync::Arc<dyn RangeSource>) -> Result<HFileReader> {
        HFileReader::from_source_with(source, RangeReads::default())
    }

    /// [`HFileReader::from_source`] with other read sizes.
    pub fn from_source_with(
        source: std::sync::Arc<dyn RangeSource>,
        reads: RangeReads,
    ) -> Result<HFileReader> {
        let file = RangedFile::open(source, reads)?;
        HFileReader::from_backing(Backing::Ranged(Box::new(file)))
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

    /// The file's length in bytes.
    pub fn file_len(&self) -> u64 {
        self.backing.len()
    }

    /// The whole file (for a file read by ranges: read with one request the first time, then
    /// kept).
    pub fn bytes(&self) -> Result<&[u8]> {
        match &self.backing {
            Backing::Mapped(m) => Ok(m),
            Backing::Owned(v) => Ok(v),
            Backing::Ranged(r) => r.whole(),
        }
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

    /// The file's row and time bounds ([`FileBounds`]), parsed on the first call and kept.
    pub fn bounds(&self) -> &FileBounds {
        self.bounds.get_or_init(|| {
            let row = |k: &[u8]| KeyView::parse(k).map(|k| k.row.to_vec());
            FileBounds {
                first_row: self.root_index.first().and_then(|e| row(&e.key)),
                last_row: self.last_key().and_then(row),
                time_range: self.file_info.time_range(),
                last_bloom_key: self.file_info.get(keys::LAST_BLOOM_KEY).map(<[u8]>::to_vec),
            }
        })
    }

    /// Makes seeks ([`Scanner::seek`](super::Scanner::seek), so gets) read data blocks through
    /// `cache`, shared with other readers; a sequential scan reads past it. Only the first call
    /// takes effect.
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
        self.read_block_sized(dec, offset, None, payload)
    }

    /// [`HFileReader::read_block`] of a block whose on-disk size (with header) an index or
    /// Bloom meta gave: a file read by ranges reads exactly that many bytes, where a scan's
    /// read (`None`) reads ahead. The size is a hint; the block's own header decides.
    pub fn read_block_sized(
        &self,
        dec: &mut BlockDecoder,
        offset: u64,
        size: Option<u64>,
        payload: &mut Vec<u8>,
    ) -> Result<BlockHeader> {
        let trailer_at = Trailer::offset_in(self.file_len());
        if offset >= trailer_at {
            return Err(FormatError::corrupt(
                "block",
                offset,
                "offset is inside the trailer",
            ));
        }
        match &self.backing {
            Backing::Ranged(r) => r.read_block(dec, offset, size, trailer_at, payload),
            Backing::Mapped(_) | Backing::Owned(_) => {
                let (_, bytes) = self.backing.end();
                dec.read(&bytes[..trailer_at as usize], offset, payload)
            }
        }
    }

    /// The file's mid key, as HBase's `BlockIndexReader.midkey` finds it: the entry the trailer's
    /// mid-key metadata names in its leaf index block (a multi-level index), else the middle
    /// root entry (`rootCount / 2`); `None` for an empty file.
    pub fn mid_key(&self) -> Result<Option<Vec<u8>>> {
        if self.root_index.is_empty() {
            return Ok(None);
        }
        let Some(m) = self
            .mid_key_metadata()
            .filter(|_| self.trailer.num_data_index_levels > 1)
        else {
            return Ok(Some(self.root_index[self.root_index.len() / 2].key.clone()));
        };
        let mut dec = self.block_decoder()?;
        let mut payload = Vec::new();
        let size = Some(u64::from(m.leaf_on_disk_size));
        self.read_block_sized(&mut dec, m.leaf_offset, size, &mut payload)?;
        let entries = parse_non_root(&payload, m.leaf_offset)?;
        let entry = entries.get(m.index_in_leaf as usize).ok_or_else(|| {
            FormatError::corrupt(
                "mid-key metadata",
                m.leaf_offset,
                format!(
                    "entry {} of a leaf index block of {} entries",
                    m.index_in_leaf,
                    entries.len()
                ),
            )
        })?;
        Ok(Some(entry.key.clone()))
    }

    /// The offset of the data block that may hold `key` (a flat key), following the index
    /// down from the root; `None` when `key` sorts before the first block's index key.
    pub fn locate_block(&self, dec: &mut BlockDecoder, key: &[u8]) -> Result<Option<IndexEntry>> {
        let Some(i) = find_block(&self.root_index, key) else {
            return Ok(None);
        };
        let mut entry = self.root_index[i].clone();
        for level in 1..self.trailer.num_data_index_levels {
            let CachedBlock { header: h, payload } = self.index_block(dec, &entry)?;
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
            // A key before the child's first (fake) key still belongs to its first entry.
            entry = search_non_root(&payload, entry.offset, key)?;
        }
        Ok(Some(entry))
    }
}

impl HFileReader {
    /// The index block `entry` names, through the block cache when there is one (a get on a
    /// file read by ranges then reads each index block once).
    fn index_block(&self, dec: &mut BlockDecoder, entry: &IndexEntry) -> Result<CachedBlock> {
        let cache = self.block_cache.get();
        if let Some(b) = cache.and_then(|c| c.get(self.id, entry.offset)) {
            return Ok(b);
        }
        let mut payload = Vec::new();
        let size = Some(u64::from(entry.on_disk_size));
        let header = self.read_block_sized(dec, entry.offset, size, &mut payload)?;
        let block = CachedBlock {
            header,
            payload: Arc::new(SharedBlock::new(payload)),
        };
        if let Some(c) = cache {
            c.insert(self.id, entry.offset, block.clone());
        }
        Ok(block)
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
        let last = r.bounds().last_bloom_key.as_deref();
        let dec = &mut self.dec;
        bloom.might_contain(query, last, &mut |offset, size| {
            let dec = match dec {
                Some(d) => d,
                None => dec.insert(r.block_decoder()?),
            };
            let mut payload = Vec::new();
            let h = r.read_block_sized(dec, offset, Some(size as u64), &mut payload)?;
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
