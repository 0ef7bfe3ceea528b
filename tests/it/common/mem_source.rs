//! An in-memory [`RangeSource`] that counts the ranged reads made of it, for tests of the
//! reader's reads by ranges (`tests/it/ranged_read.rs`, `tests/it/reader_garbage.rs`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hfkit::format::reader::{HFileReader, RangeReads, RangeSource};

/// A file in memory, read by ranges; every read is recorded.
pub struct MemSource {
    bytes: Vec<u8>,
    reads: Mutex<Vec<(u64, u64)>>,
    bytes_read: AtomicU64,
}

impl MemSource {
    pub fn new(bytes: Vec<u8>) -> Arc<MemSource> {
        Arc::new(MemSource {
            bytes,
            reads: Mutex::new(Vec::new()),
            bytes_read: AtomicU64::new(0),
        })
    }

    /// (offset, length) of every read so far, in order.
    pub fn reads(&self) -> Vec<(u64, u64)> {
        self.reads.lock().unwrap().clone()
    }

    /// Forgets the reads so far.
    pub fn clear(&self) {
        self.reads.lock().unwrap().clear();
        self.bytes_read.store(0, Ordering::Relaxed);
    }

    pub fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }
}

impl RangeSource for MemSource {
    fn file_len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_range(&self, offset: u64, len: u64) -> std::io::Result<Vec<u8>> {
        self.reads.lock().unwrap().push((offset, len));
        self.bytes_read.fetch_add(len, Ordering::Relaxed);
        let end = offset
            .checked_add(len)
            .filter(|&e| e <= self.bytes.len() as u64);
        match end {
            Some(end) => Ok(self.bytes[offset as usize..end as usize].to_vec()),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "range past the end",
            )),
        }
    }

    fn name(&self) -> String {
        "mem://file".into()
    }
}

/// Opens `source` as a reader of ranges.
pub fn open_ranged(source: &Arc<MemSource>) -> hfkit::format::Result<HFileReader> {
    HFileReader::from_source(source.clone())
}

/// Read sizes small enough that a file of a few KiB is read in many windows: the trailer
/// alone at open, read-ahead from 64 bytes to 1 KiB.
pub const TINY_READS: RangeReads = RangeReads {
    open_read: 4096,
    min_readahead: 64,
    max_readahead: 1024,
};

/// Opens `source` with [`TINY_READS`].
pub fn open_tiny(source: &Arc<MemSource>) -> hfkit::format::Result<HFileReader> {
    HFileReader::from_source_with(source.clone(), TINY_READS)
}
