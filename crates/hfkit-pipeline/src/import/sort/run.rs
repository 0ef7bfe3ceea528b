//! Spilled run files: the sorter's records, in order, in LZ4-compressed blocks with a
//! CRC32C each. Spec: `formats/import.md` §"Sort and spill".
//!
//! ```text
//! run file := block*
//! block    := u32 rawLen | u32 storedLen | u32 crc32c | stored      (big-endian)
//!   stored = LZ4 (block format) of rawLen bytes of whole records; crc32c covers rawLen,
//!   storedLen and stored. A block holds records up to RUN_BLOCK bytes, or one larger record.
//! record   := u8 flags | [u8 family | vlong rowLen | row]    unless flags & SAME_ROW
//!             | [i64 timestamp] unless SAME_TS | [u8 type] unless SAME_TYPE
//!             | vlong qualifierLen | vlong valueLen | [vlong tagsLen]  if flags & TAGS
//!             | vlong (ordinal - the previous record's ordinal, wrapping)
//!             | qualifier | value | tags
//!   SAME_* say the field equals the previous record's of the same block (a block's first
//!   record has no previous one, and 0 stands for its previous ordinal); vlong is Hadoop's.
//! ```
//!
//! Why this record and not the buffer's: a run holds every cell it spills, and the buffer's
//! record repeats the row and a 30-byte header in each of a row's cells. Written against the
//! record before it, a cell of the same row costs its qualifier, its value and 4 bytes: fewer
//! bytes to compress, write, read and decompress (lineitem's runs 2.75 times smaller on disk).
//! Why compressed: an import larger than memory spills nearly all of its cells once; LZ4
//! shrinks them further, so the temporary directory needs that much less room and the page
//! cache or disk that much less writing. Why a checksum: a run is read
//! back as the import's data, so a damaged temporary file must be an error, never other cells.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::error::SortError;
use super::record::{Head, SortedCell};
use hfkit_format::bytes::{equal_bytes, extend_pieces, put_vlong, Cursor};
use hfkit_format::cell::CellType;
use hfkit_format::checksum::{crc32c, crc32c_append};

/// Bytes of records a block holds (a larger record is a block of its own). LZ4 looks back at
/// most 64 KiB for a match, so larger blocks would hardly compress better.
pub(super) const RUN_BLOCK: usize = 128 * 1024;

/// Block header: raw length, stored length, CRC32C.
const BLOCK_HEADER: usize = 12;

/// A record's family and row are the previous record's.
const SAME_ROW: u8 = 1;
/// A record's timestamp is the previous record's.
const SAME_TS: u8 = 2;
/// A record's type is the previous record's.
const SAME_TYPE: u8 = 4;
/// A record has tags (and their length).
const TAGS: u8 = 8;
/// Most bytes of a record besides its row, qualifier, value and tags: flags, family, four
/// vlongs of at most 9 bytes, timestamp, type, and the row's length (a vlong).
const MOST_RECORD_HEAD: usize = 1 + 1 + 9 + 8 + 1 + 4 * 9;

/// What a record is written against: the block's previous record.
#[derive(Clone, Copy)]
struct Previous {
    family: u8,
    /// Where its row lies in the block.
    row_at: usize,
    row_len: usize,
    timestamp: i64,
    cell_type: u8,
    ordinal: u64,
}

/// Parses the run record at `buf[at..]`, written against `prev` (the block's previous record,
/// `None` for its first); `None` when the bytes are not a whole record.
fn parse_record(buf: &[u8], at: usize, prev: Option<&Head>) -> Option<Head> {
    let mut c = Cursor::new(buf.get(at..)?, 0, "run record");
    let flags = c.u8().ok()?;
    if flags & !(SAME_ROW | SAME_TS | SAME_TYPE | TAGS) != 0 {
        return None;
    }
    let (family, row_at, row) = if flags & SAME_ROW != 0 {
        let p = prev?;
        (p.family, p.row_at, p.row)
    } else {
        let family = c.u8().ok()?;
        let row = u16::try_from(c.vlong().ok()?).ok()?;
        let row_at = at + c.position();
        c.skip(usize::from(row)).ok()?;
        (family, row_at, row)
    };
    let timestamp = if flags & SAME_TS != 0 {
        prev?.timestamp
    } else {
        c.i64().ok()?
    };
    let cell_type = if flags & SAME_TYPE != 0 {
        prev?.cell_type
    } else {
        CellType::from_code(c.u8().ok()?)?
    };
    let qualifier = u32::try_from(c.vlong().ok()?).ok()?;
    let value = u32::try_from(c.vlong().ok()?).ok()?;
    let tags = if flags & TAGS != 0 {
        u16::try_from(c.vlong().ok()?).ok()?
    } else {
        0
    };
    let delta = c.vlong().ok()? as u64;
    let ordinal = prev.map_or(0, |p| p.ordinal).wrapping_add(delta);
    let body_at = at + c.position();
    c.skip(qualifier as usize + value as usize + usize::from(tags))
        .ok()?;
    Some(Head {
        row_at,
        body_at,
        family,
        row,
        qualifier,
        value,
        timestamp,
        ordinal,
        cell_type,
        tags,
    })
}

/// Writes records to a run file, a block at a time.
pub(super) struct RunWriter {
    path: PathBuf,
    file: File,
    raw: Vec<u8>,
    stored: Vec<u8>,
    /// Bytes written to the file so far.
    written: u64,
    /// The block's last record, if any.
    prev: Option<Previous>,
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
            written: 0,
            prev: None,
        })
    }

    /// Appends a record (the row no longer than `u16::MAX` bytes, the tags too).
    pub(super) fn push(&mut self, c: &SortedCell<'_>) -> Result<(), SortError> {
        let (row_len, tags_len) = (c.row.len(), c.tags.len());
        if row_len > usize::from(u16::MAX) || tags_len > usize::from(u16::MAX) {
            return Err(SortError::TooLarge(format!(
                "row {row_len} bytes, tags {tags_len}"
            )));
        }
        let most = MOST_RECORD_HEAD + row_len + c.qualifier.len() + c.value.len() + tags_len;
        if !self.raw.is_empty() && self.raw.len() + most > RUN_BLOCK {
            self.write_block()?;
        }
        let raw = &mut self.raw;
        let prev = self.prev;
        let code = c.cell_type.code();
        let same_row = prev.is_some_and(|p| {
            p.family == c.family && equal_bytes(&raw[p.row_at..p.row_at + p.row_len], c.row)
        });
        let same_ts = prev.is_some_and(|p| p.timestamp == c.timestamp);
        let same_type = prev.is_some_and(|p| p.cell_type == code);
        let mut flags = 0;
        if same_row {
            flags |= SAME_ROW;
        }
        if same_ts {
            flags |= SAME_TS;
        }
        if same_type {
            flags |= SAME_TYPE;
        }
        if tags_len > 0 {
            flags |= TAGS;
        }
        raw.push(flags);
        let row_at = match prev {
            Some(p) if same_row => p.row_at,
            _ => {
                raw.push(c.family);
                put_vlong(raw, row_len as i64);
                raw.extend_from_slice(c.row);
                raw.len() - row_len
            }
        };
        if !same_ts {
            raw.extend_from_slice(&c.timestamp.to_be_bytes());
        }
        if !same_type {
            raw.push(code);
        }
        put_vlong(raw, c.qualifier.len() as i64);
        put_vlong(raw, c.value.len() as i64);
        if tags_len > 0 {
            put_vlong(raw, tags_len as i64);
        }
        let before = prev.map_or(0, |p| p.ordinal);
        put_vlong(raw, c.ordinal.wrapping_sub(before) as i64);
        extend_pieces(raw, [c.qualifier, c.value, c.tags]);
        self.prev = Some(Previous {
            family: c.family,
            row_at,
            row_len,
            timestamp: c.timestamp,
            cell_type: code,
            ordinal: c.ordinal,
        });
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
            .resize(lz4_flex::block::get_maximum_output_size(self.raw.len()), 0);
        let n = lz4_flex::block::compress_into(&self.raw, &mut self.stored)
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
        self.prev = None;
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
/// in the decompressed block (its row may be an earlier record's there).
pub(super) struct RunReader {
    path: PathBuf,
    file: File,
    stored: Vec<u8>,
    /// The current block's records.
    pub(super) buf: Vec<u8>,
    /// Start of the head record in `buf` (or of the next one to read).
    pos: usize,
    /// The head record; `None` before the first and after the last.
    pub(super) head: Option<Head>,
    /// The record before the head in its block, if any.
    prev: Option<Head>,
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
            head: None,
            prev: None,
        })
    }

    /// Moves to the next record; false at the end of the run.
    pub(super) fn advance(&mut self) -> Result<bool, SortError> {
        if let Some(h) = self.head.take() {
            self.pos = h.end();
            self.prev = Some(h);
        }
        if self.pos >= self.buf.len() && !self.read_block()? {
            return Ok(false);
        }
        let head = parse_record(&self.buf, self.pos, self.prev.as_ref())
            .ok_or_else(|| self.corrupt("bad record, or a record crosses its block's end"))?;
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
        if raw_len == 0 || stored_len > lz4_flex::block::get_maximum_output_size(raw_len) {
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
        self.buf.resize(raw_len, 0);
        let n = lz4_flex::block::decompress_into(&self.stored, &mut self.buf)
            .map_err(|e| self.corrupt(&format!("block does not decompress: {e}")))?;
        if n != raw_len {
            return Err(self.corrupt("block length does not match its header"));
        }
        self.pos = 0;
        self.prev = None;
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A cell as the tests own it: family, row, qualifier, timestamp, type code, ordinal,
    /// value, tags.
    type Owned = (u8, Vec<u8>, Vec<u8>, i64, u8, u64, Vec<u8>, Vec<u8>);

    fn cell(c: &Owned) -> SortedCell<'_> {
        SortedCell {
            family: c.0,
            row: &c.1,
            qualifier: &c.2,
            timestamp: c.3,
            ordinal: c.5,
            cell_type: CellType::from_code(c.4).unwrap_or(CellType::Put),
            value: &c.6,
            tags: &c.7,
        }
    }

    /// Cells that often repeat the family, row, timestamp and type of the one before (as a
    /// run's do), with values now and then larger than a block.
    fn cells() -> impl Strategy<Value = Vec<Owned>> {
        let codes = prop::sample::select(CellType::ALL.map(|t| t.code()).to_vec());
        let one = (
            0u8..3,
            prop::sample::select(vec![
                vec![],
                b"r".to_vec(),
                b"r\0".to_vec(),
                b"row-0001".to_vec(),
            ]),
            prop::collection::vec(any::<u8>(), 0..4),
            prop::sample::select(vec![0i64, -1, 7, i64::MAX, i64::MIN]),
            codes,
            any::<u64>(),
            prop_oneof![
                8 => prop::collection::vec(any::<u8>(), 0..40),
                1 => (0..3usize).prop_map(|k| vec![k as u8; RUN_BLOCK + k * 1000]),
            ],
            prop::collection::vec(any::<u8>(), 0..3),
        );
        prop::collection::vec(one, 0..300)
    }

    fn write_all(path: &Path, cells: &[Owned]) {
        let mut w = RunWriter::create(path).unwrap();
        for c in cells {
            w.push(&cell(c)).unwrap();
        }
        w.finish().unwrap();
    }

    fn read_all(path: &Path) -> Result<Vec<Owned>, SortError> {
        let mut r = RunReader::open(path)?;
        let mut out = Vec::new();
        while r.advance()? {
            let h = r.head.as_ref().map(|h| h.cell(&r.buf));
            if let Some(c) = h {
                out.push((
                    c.family,
                    c.row.to_vec(),
                    c.qualifier.to_vec(),
                    c.timestamp,
                    c.cell_type.code(),
                    c.ordinal,
                    c.value.to_vec(),
                    c.tags.to_vec(),
                ));
            }
        }
        Ok(out)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Every record comes back as it was written, whatever it shares with the one before.
        #[test]
        fn records_read_back_as_written(input in cells()) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("run");
            write_all(&path, &input);
            prop_assert_eq!(read_all(&path).unwrap(), input);
        }

        /// A run file of any bytes reads as records or ends in an error, never a panic.
        #[test]
        fn any_bytes_read_without_panic(
            input in cells(),
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            raw_block in prop::collection::vec(any::<u8>(), 1..200),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("run");
            write_all(&path, &input);
            let mut bytes = std::fs::read(&path).unwrap();
            if !bytes.is_empty() {
                for (i, b) in &flips {
                    let i = i.index(bytes.len());
                    bytes[i] ^= b;
                }
            }
            std::fs::write(&path, &bytes).unwrap();
            let _ = read_all(&path);
            // A block with a valid checksum and compression whose records are any bytes.
            let mut stored = vec![0; lz4_flex::block::get_maximum_output_size(raw_block.len())];
            let n = lz4_flex::block::compress_into(&raw_block, &mut stored).unwrap();
            let mut file = Vec::new();
            file.extend_from_slice(&(raw_block.len() as u32).to_be_bytes());
            file.extend_from_slice(&(n as u32).to_be_bytes());
            let crc = crc32c_append(crc32c(&file[..8]), &stored[..n]);
            file.extend_from_slice(&crc.to_be_bytes());
            file.extend_from_slice(&stored[..n]);
            std::fs::write(&path, &file).unwrap();
            let _ = read_all(&path);
        }
    }
}
