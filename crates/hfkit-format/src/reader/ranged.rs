//! Files read by byte ranges (`formats/hfile.md` §"Reading by ranges"): a store file on
//! object storage is never downloaded whole to read it. Opening reads the file's end (the
//! trailer and, usually in the same request, the load-on-open section) and keeps it for as
//! long as the reader lives; a block elsewhere is read with one ranged request of exactly its
//! size when the index or Bloom meta gave it (a get's leaf index, Bloom chunk and data
//! block), and a sequential scan reads ahead in windows that double from [`MIN_READAHEAD`]
//! to [`MAX_READAHEAD`], so a short scan reads little and a long one makes few requests.
//!
//! The bytes are checked exactly as a mapped file's are (every block's checksums before it
//! is decoded, the trailer against the load-on-open section): only where they come from
//! differs. The source ([`RangeSource`]) is implemented by the storage layer; this module
//! knows nothing of object stores.

use std::sync::{Arc, Mutex, OnceLock};

use crate::block::{BlockDecoder, BlockHeader, HEADER_LEN};
use crate::error::{FormatError, Result};
use crate::trailer::{Trailer, TRAILER_SIZE};

/// What opening reads first from the end of a file: the trailer and, for all but very large
/// files, the whole load-on-open section (root index, meta index, FileInfo, Bloom metas).
pub const OPEN_READ: u64 = 64 * 1024;
/// The first read-ahead of a sequential scan.
pub const MIN_READAHEAD: u64 = 256 * 1024;
/// The largest read-ahead of a sequential scan.
pub const MAX_READAHEAD: u64 = 8 * 1024 * 1024;

/// How a file read by ranges is read: [`OPEN_READ`], [`MIN_READAHEAD`] and
/// [`MAX_READAHEAD`] by default (tests make them tiny so that every path is taken on small
/// files).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeReads {
    /// Bytes read from the end of the file at open (at least the trailer's 4096).
    pub open_read: u64,
    /// The first read-ahead of a sequential scan.
    pub min_readahead: u64,
    /// The largest.
    pub max_readahead: u64,
}

impl Default for RangeReads {
    fn default() -> Self {
        RangeReads {
            open_read: OPEN_READ,
            min_readahead: MIN_READAHEAD,
            max_readahead: MAX_READAHEAD,
        }
    }
}

/// A file whose bytes are read by ranges (a store file on object storage).
pub trait RangeSource: Send + Sync {
    /// The file's length in bytes (known before reading: from the listing or the manifest).
    fn file_len(&self) -> u64;
    /// Exactly the bytes `offset .. offset + len` of the file; fewer bytes is an error.
    fn read_range(&self, offset: u64, len: u64) -> std::io::Result<Vec<u8>>;
    /// The file's name for errors (a URL).
    fn name(&self) -> String;
}

/// File bytes from offset `at` on.
struct Span {
    at: u64,
    bytes: Vec<u8>,
}

impl Span {
    fn end(&self) -> u64 {
        self.at + self.bytes.len() as u64
    }
    fn covers(&self, offset: u64, len: u64) -> bool {
        offset >= self.at && offset + len <= self.end()
    }
}

/// The last range read for blocks before the kept end, and how far the next sequential read
/// reaches ahead.
struct Window {
    span: Option<Arc<Span>>,
    readahead: u64,
}

/// The bytes of a ranged file that a reader holds: its end, read at open, and a window on
/// the rest.
pub(super) struct RangedFile {
    source: Arc<dyn RangeSource>,
    len: u64,
    /// From the load-on-open section (or earlier) to the end of the file.
    end: Span,
    window: Mutex<Window>,
    reads: RangeReads,
    /// The whole file, read once when something asks for all of it (verification).
    whole: OnceLock<Vec<u8>>,
}

impl RangedFile {
    /// Reads the end of `source`: [`OPEN_READ`] bytes, then, when the trailer says the
    /// load-on-open section starts earlier, the bytes from there. A file too short to hold a
    /// trailer is read whole (opening then reports it as such).
    pub(super) fn open(source: Arc<dyn RangeSource>, reads: RangeReads) -> Result<RangedFile> {
        let len = source.file_len();
        let first = len.min(reads.open_read.max(TRAILER_SIZE as u64));
        let mut bytes = fetch(&*source, len - first, first)?;
        let mut at = len - first;
        if len >= TRAILER_SIZE as u64 {
            let trailer = Trailer::read_end(&bytes, len)?;
            let lo = trailer.load_on_open_data_offset;
            if lo < at {
                let mut all = fetch(&*source, lo, at - lo)?;
                all.extend_from_slice(&bytes);
                bytes = all;
                at = lo;
            }
        }
        Ok(RangedFile {
            source,
            len,
            end: Span { at, bytes },
            window: Mutex::new(Window {
                span: None,
                readahead: reads.min_readahead,
            }),
            reads,
            whole: OnceLock::new(),
        })
    }

    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// The kept end of the file: (offset of its first byte, bytes up to the end of the file).
    pub(super) fn end(&self) -> (u64, &[u8]) {
        (self.end.at, &self.end.bytes)
    }

    /// The whole file, read with one request the first time.
    pub(super) fn whole(&self) -> Result<&[u8]> {
        if let Some(b) = self.whole.get() {
            return Ok(b);
        }
        let bytes = fetch(&*self.source, 0, self.len)?;
        Ok(self.whole.get_or_init(|| bytes))
    }

    /// Reads, verifies and decompresses the block at `offset` (before `limit`, the trailer)
    /// into `payload`. `size`: the block's on-disk size with header when an index or Bloom
    /// meta gave it (one request of exactly that size), `None` for a sequential scan (read
    /// ahead).
    pub(super) fn read_block(
        &self,
        dec: &mut BlockDecoder,
        offset: u64,
        size: Option<u64>,
        limit: u64,
        payload: &mut Vec<u8>,
    ) -> Result<BlockHeader> {
        if offset >= self.end.at {
            let kept = (limit - self.end.at) as usize;
            return dec.read_in(&self.end.bytes[..kept], self.end.at, offset, payload);
        }
        let span = self.span_for(offset, size, limit)?;
        dec.read_in(&span.bytes, span.at, offset, payload)
    }

    /// A span holding the whole block at `offset` when the file has it before `limit` (else
    /// as much as there is: decoding then reports the block truncated, as for a local file).
    /// A sized read fetches the block alone; a scan's read continues the window (the part of
    /// the block already in it is kept, never read twice) with twice the last read-ahead.
    fn span_for(&self, offset: u64, size: Option<u64>, limit: u64) -> Result<Arc<Span>> {
        let header = HEADER_LEN as u64;
        let mut w = self.window.lock().unwrap_or_else(|e| e.into_inner());
        let old = w.span.clone();
        if let Some(span) = old.as_ref().filter(|s| s.covers(offset, header)) {
            let need = block_size(span, offset).unwrap_or(header);
            if span.covers(offset, need) {
                return Ok(span.clone());
            }
        }
        let mut span = match size {
            Some(s) => Span {
                at: offset,
                bytes: self.fetch_to(offset, offset + s.max(header), limit)?,
            },
            None => {
                let kept = old.filter(|s| offset >= s.at && offset <= s.end());
                w.readahead = match kept {
                    Some(_) => (w.readahead * 2).min(self.reads.max_readahead),
                    None => self.reads.min_readahead,
                };
                let bytes = match &kept {
                    Some(s) => s.bytes[(offset - s.at) as usize..].to_vec(),
                    None => Vec::new(),
                };
                let from = offset + bytes.len() as u64;
                // Up to the kept end (its bytes are held), but at least the rest of the block.
                let ahead = (from + w.readahead).min(self.end.at.max(from + header));
                let partial = Span { at: offset, bytes };
                let block_end = block_size(&partial, offset).map_or(0, |n| offset + n);
                let mut bytes = partial.bytes;
                bytes.extend(self.fetch_to(from, ahead.max(block_end), limit)?);
                Span { at: offset, bytes }
            }
        };
        // A block longer than what was read (a sized read whose size was wrong): the rest.
        if let Some(need) = block_size(&span, offset) {
            if !span.covers(offset, need) && span.end() < limit {
                let rest = self.fetch_to(span.end(), offset + need, limit)?;
                span.bytes.extend(rest);
            }
        }
        let span = Arc::new(span);
        w.span = Some(span.clone());
        Ok(span)
    }

    /// The bytes `from .. to`, cut at `limit`: read from the source up to the kept end,
    /// copied from it after.
    fn fetch_to(&self, from: u64, to: u64, limit: u64) -> Result<Vec<u8>> {
        let to = to.min(limit);
        let mut bytes = fetch(
            &*self.source,
            from,
            to.min(self.end.at).saturating_sub(from),
        )?;
        if to > self.end.at {
            let start = (from.max(self.end.at) - self.end.at) as usize;
            bytes.extend_from_slice(&self.end.bytes[start..(to - self.end.at) as usize]);
        }
        Ok(bytes)
    }
}

/// The on-disk size (with header) of the block at `offset` as its header in `span` says, if
/// the span holds a header that parses.
fn block_size(span: &Span, offset: u64) -> Option<u64> {
    let start = usize::try_from(offset.checked_sub(span.at)?).ok()?;
    let h = BlockHeader::parse(span.bytes.get(start..)?, offset).ok()?;
    Some(h.on_disk_size_with_header())
}

/// Reads `len` bytes at `offset` of `source`, checking the count.
fn fetch(source: &dyn RangeSource, offset: u64, len: u64) -> Result<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    let what = || {
        format!(
            "reading bytes {offset}..{} of {}",
            offset + len,
            source.name()
        )
    };
    let bytes = source
        .read_range(offset, len)
        .map_err(|e| FormatError::io(what(), e))?;
    if bytes.len() as u64 != len {
        return Err(FormatError::io(
            what(),
            std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("got {} bytes", bytes.len()),
            ),
        ));
    }
    Ok(bytes)
}
