//! Spilled run files: the sorter's records, in order, in Snappy-compressed blocks with a
//! CRC32C each. Spec: `formats/import.md` §"Sort and spill".
//!
//! ```text
//! run file := block*
//! block    := u32 rawLen | u32 storedLen | u32 crc32c | stored      (big-endian)
//!   stored = Snappy (raw format) of rawLen bytes of whole records; crc32c covers rawLen,
//!   storedLen and stored. A block holds records up to RUN_BLOCK bytes, or one larger record.
//! ```
//!
//! Why compressed: a run holds every cell of the input with its 28-byte sort header, about
//! 7 times the bytes of a CSV input, and an import larger than memory spills nearly all of it
//! once; Snappy shrinks that about 4-fold, so the temporary directory needs that much less
//! room and the page cache or disk that much less writing. Why a checksum: a run is read back
//! as the import's data, so a damaged temporary file must be an error, never other cells.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::error::SortError;
use super::record::{record_len, Head, RECORD_HEADER};
use hfkit_format::checksum::{crc32c, crc32c_append};

/// Bytes of records a block holds (a larger record is a block of its own). Snappy compresses
/// 64 KiB fragments independently, so larger blocks would not compress better.
pub(super) const RUN_BLOCK: usize = 128 * 1024;

/// Block header: raw length, stored length, CRC32C.
const BLOCK_HEADER: usize = 12;

/// Writes records to a run file, a block at a time.
pub(super) struct RunWriter {
    path: PathBuf,
    file: File,
    raw: Vec<u8>,
    stored: Vec<u8>,
    encoder: snap::raw::Encoder,
    /// Bytes written to the file so far.
    written: u64,
}

impl RunWriter {
    pub(super) fn create(path: &Path) -> Result<RunWriter, SortError> {
        let file = File::create(path).map_err(|source| SortError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(RunWriter {
            path: path.to_path_buf(),
            file,
            raw: Vec::with_capacity(RUN_BLOCK),
            stored: Vec::new(),
            encoder: snap::raw::Encoder::new(),
            written: 0,
        })
    }

    /// Appends one whole record.
    pub(super) fn push(&mut self, record: &[u8]) -> Result<(), SortError> {
        if !self.raw.is_empty() && self.raw.len() + record.len() > RUN_BLOCK {
            self.write_block()?;
        }
        self.raw.extend_from_slice(record);
        Ok(())
    }

    /// Writes the last block; returns the file's size.
    pub(super) fn finish(mut self) -> Result<u64, SortError> {
        if !self.raw.is_empty() {
            self.write_block()?;
        }
        self.file.flush().map_err(|e| self.io(e))?;
        Ok(self.written)
    }

    fn write_block(&mut self) -> Result<(), SortError> {
        let raw_len = u32::try_from(self.raw.len())
            .map_err(|_| SortError::TooLarge(format!("record of {} bytes", self.raw.len())))?;
        self.stored
            .resize(snap::raw::max_compress_len(self.raw.len()), 0);
        let n = self
            .encoder
            .compress(&self.raw, &mut self.stored)
            .map_err(|e| self.io(std::io::Error::other(e)))?;
        let stored_len = u32::try_from(n)
            .map_err(|_| SortError::TooLarge(format!("record of {} bytes", self.raw.len())))?;
        let mut header = [0u8; BLOCK_HEADER];
        header[0..4].copy_from_slice(&raw_len.to_be_bytes());
        header[4..8].copy_from_slice(&stored_len.to_be_bytes());
        let crc = crc32c_append(crc32c(&header[..8]), &self.stored[..n]);
        header[8..12].copy_from_slice(&crc.to_be_bytes());
        self.file.write_all(&header).map_err(|e| self.io(e))?;
        self.file
            .write_all(&self.stored[..n])
            .map_err(|e| self.io(e))?;
        self.written += (BLOCK_HEADER + n) as u64;
        self.raw.clear();
        Ok(())
    }

    fn io(&self, source: std::io::Error) -> SortError {
        SortError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

/// Reads a run file a block at a time; the current record (the run's head) is read in place
/// in the decompressed block.
pub(super) struct RunReader {
    path: PathBuf,
    file: File,
    stored: Vec<u8>,
    /// The current block's records.
    pub(super) buf: Vec<u8>,
    /// Start of the head record in `buf` (or of the next one to read).
    pos: usize,
    decoder: snap::raw::Decoder,
    /// The head record; `None` before the first and after the last.
    pub(super) head: Option<Head>,
}

impl RunReader {
    pub(super) fn open(path: &Path) -> Result<RunReader, SortError> {
        let file = File::open(path).map_err(|source| SortError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(RunReader {
            path: path.to_path_buf(),
            file,
            stored: Vec::new(),
            buf: Vec::new(),
            pos: 0,
            decoder: snap::raw::Decoder::new(),
            head: None,
        })
    }

    /// Moves to the next record; false at the end of the run.
    pub(super) fn advance(&mut self) -> Result<bool, SortError> {
        if let Some(h) = self.head.take() {
            self.pos += h.len();
        }
        if self.pos == self.buf.len() && !self.read_block()? {
            return Ok(false);
        }
        let len = record_len(&self.buf[self.pos..])
            .filter(|&len| self.pos + len <= self.buf.len())
            .ok_or_else(|| self.corrupt("a record crosses its block's end"))?;
        let head = Head::parse(&self.buf[..self.pos + len], self.pos)
            .ok_or_else(|| self.corrupt("bad record"))?;
        self.head = Some(head);
        Ok(true)
    }

    /// Loads the next block into `buf`; false at a clean end of the run (no byte left).
    fn read_block(&mut self) -> Result<bool, SortError> {
        let mut header = [0u8; BLOCK_HEADER];
        match self.read_full(&mut header)? {
            0 => return Ok(false),
            BLOCK_HEADER => {}
            _ => return Err(self.corrupt("truncated block header")),
        }
        let raw_len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let stored_len = u32::from_be_bytes([header[4], header[5], header[6], header[7]]) as usize;
        let crc = u32::from_be_bytes([header[8], header[9], header[10], header[11]]);
        if raw_len < RECORD_HEADER || stored_len > snap::raw::max_compress_len(raw_len) {
            return Err(self.corrupt("bad block header"));
        }
        // Grown only as far as the file has bytes: a damaged length cannot make it allocate
        // more than the file holds.
        self.stored.clear();
        let got = (&mut self.file)
            .take(stored_len as u64)
            .read_to_end(&mut self.stored)
            .map_err(|e| self.io(e))?;
        if got != stored_len {
            return Err(self.corrupt("truncated block"));
        }
        if crc32c_append(crc32c(&header[..8]), &self.stored) != crc {
            return Err(self.corrupt("block checksum mismatch"));
        }
        if snap::raw::decompress_len(&self.stored).ok() != Some(raw_len) {
            return Err(self.corrupt("block length does not match its header"));
        }
        self.buf.resize(raw_len, 0);
        self.decoder
            .decompress(&self.stored, &mut self.buf)
            .map_err(|e| self.corrupt(&format!("block does not decompress: {e}")))?;
        self.pos = 0;
        Ok(true)
    }

    /// Reads until `buf` is full or the file ends; the bytes read.
    fn read_full(&mut self, buf: &mut [u8]) -> Result<usize, SortError> {
        let mut n = 0;
        while n < buf.len() {
            match self.file.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io(e)),
            }
        }
        Ok(n)
    }

    fn io(&self, source: std::io::Error) -> SortError {
        SortError::Io {
            path: self.path.clone(),
            source,
        }
    }

    fn corrupt(&self, detail: &str) -> SortError {
        SortError::Corrupt {
            path: self.path.clone(),
            detail: detail.into(),
        }
    }
}
