//! The FileInfo block: a sorted map of byte keys to byte values. Spec: `formats/hfile.md`
//! §"FileInfo".
//!
//! ```text
//! payload = "PBUF" | varint length | FileInfoProto { repeated BytesBytesPair map_entry = 1 }
//! entries sorted by unsigned key bytes (so upper-case keys precede "hfile." keys)
//! legacy (read only): i32 count, then per entry VInt len + key, 1 class byte, VInt len + value
//! ```

use std::collections::BTreeMap;

use prost::Message;

use super::bytes::Cursor;
use super::error::{FormatError, Result};
use super::proto::{BytesBytesPair, FileInfoProto};

/// Protobuf magic that prefixes PB-encoded metadata.
pub const PB_MAGIC: &[u8; 4] = b"PBUF";

/// Standard FileInfo keys (exact bytes).
pub mod keys {
    pub const LASTKEY: &str = "hfile.LASTKEY";
    pub const AVG_KEY_LEN: &str = "hfile.AVG_KEY_LEN";
    pub const AVG_VALUE_LEN: &str = "hfile.AVG_VALUE_LEN";
    pub const CREATE_TIME_TS: &str = "hfile.CREATE_TIME_TS";
    pub const KEY_OF_BIGGEST_CELL: &str = "hfile.KEY_OF_BIGGEST_CELL";
    pub const LEN_OF_BIGGEST_CELL: &str = "hfile.LEN_OF_BIGGEST_CELL";
    pub const MAX_TAGS_LEN: &str = "hfile.MAX_TAGS_LEN";
    pub const TAGS_COMPRESSED: &str = "hfile.TAGS_COMPRESSED";
    pub const MAX_MEMSTORE_TS_KEY: &str = "MAX_MEMSTORE_TS_KEY";
    pub const KEY_VALUE_VERSION: &str = "KEY_VALUE_VERSION";
    pub const DATA_BLOCK_ENCODING: &str = "DATA_BLOCK_ENCODING";
    pub const INDEX_BLOCK_ENCODING: &str = "INDEX_BLOCK_ENCODING";
    pub const TIMERANGE: &str = "TIMERANGE";
    pub const EARLIEST_PUT_TS: &str = "EARLIEST_PUT_TS";
    pub const MAX_SEQ_ID_KEY: &str = "MAX_SEQ_ID_KEY";
    pub const MAJOR_COMPACTION_KEY: &str = "MAJOR_COMPACTION_KEY";
    pub const EXCLUDE_FROM_MINOR_COMPACTION: &str = "EXCLUDE_FROM_MINOR_COMPACTION";
    pub const BULKLOAD_SOURCE_TASK: &str = "BULKLOAD_SOURCE_TASK";
    pub const BULKLOAD_TIMESTAMP: &str = "BULKLOAD_TIMESTAMP";
    pub const BLOOM_FILTER_TYPE: &str = "BLOOM_FILTER_TYPE";
    pub const BLOOM_FILTER_PARAM: &str = "BLOOM_FILTER_PARAM";
    pub const LAST_BLOOM_KEY: &str = "LAST_BLOOM_KEY";
    pub const DELETE_FAMILY_COUNT: &str = "DELETE_FAMILY_COUNT";
    pub const HISTORICAL: &str = "HISTORICAL";
    pub const COMPACTION_EVENT_KEY: &str = "COMPACTION_EVENT_KEY";
}

/// Value encodings of the standard keys, for display.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    I32,
    I64,
    Bool,
    Str,
    Key,
    TimeRange,
    Bytes,
}

/// How a known key's value is encoded.
pub fn value_kind(key: &[u8]) -> ValueKind {
    use keys::*;
    let k = std::str::from_utf8(key).unwrap_or("");
    match k {
        AVG_KEY_LEN | AVG_VALUE_LEN | MAX_TAGS_LEN | KEY_VALUE_VERSION | BLOOM_FILTER_PARAM => {
            ValueKind::I32
        }
        CREATE_TIME_TS | LEN_OF_BIGGEST_CELL | MAX_MEMSTORE_TS_KEY | EARLIEST_PUT_TS
        | MAX_SEQ_ID_KEY | BULKLOAD_TIMESTAMP | DELETE_FAMILY_COUNT => ValueKind::I64,
        TAGS_COMPRESSED | MAJOR_COMPACTION_KEY | EXCLUDE_FROM_MINOR_COMPACTION | HISTORICAL => {
            ValueKind::Bool
        }
        DATA_BLOCK_ENCODING | INDEX_BLOCK_ENCODING | BULKLOAD_SOURCE_TASK | BLOOM_FILTER_TYPE => {
            ValueKind::Str
        }
        LASTKEY | KEY_OF_BIGGEST_CELL => ValueKind::Key,
        TIMERANGE => ValueKind::TimeRange,
        _ => ValueKind::Bytes,
    }
}

/// FileInfo: keys sorted by unsigned bytes, as HBase's `TreeMap` keeps them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileInfo {
    pub entries: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl FileInfo {
    pub fn new() -> FileInfo {
        FileInfo::default()
    }

    pub fn insert(&mut self, key: &str, value: Vec<u8>) {
        self.entries.insert(key.as_bytes().to_vec(), value);
    }
    pub fn insert_i32(&mut self, key: &str, v: i32) {
        self.insert(key, v.to_be_bytes().to_vec());
    }
    pub fn insert_i64(&mut self, key: &str, v: i64) {
        self.insert(key, v.to_be_bytes().to_vec());
    }
    pub fn insert_bool(&mut self, key: &str, v: bool) {
        self.insert(key, vec![if v { 0xff } else { 0 }]);
    }

    pub fn get(&self, key: &str) -> Option<&[u8]> {
        self.entries.get(key.as_bytes()).map(|v| v.as_slice())
    }
    pub fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key.as_bytes())
    }
    /// An i32 value; `None` when absent or not 4 bytes.
    pub fn get_i32(&self, key: &str) -> Option<i32> {
        self.get(key)
            .and_then(|v| v.try_into().ok())
            .map(i32::from_be_bytes)
    }
    /// An i64 value; `None` when absent or not 8 bytes.
    pub fn get_i64(&self, key: &str) -> Option<i64> {
        self.get(key)
            .and_then(|v| v.try_into().ok())
            .map(i64::from_be_bytes)
    }
    /// A boolean (any non-zero byte is true).
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(|v| v.first()).map(|b| *b != 0)
    }
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(|v| std::str::from_utf8(v).ok())
    }
    /// TIMERANGE as (min, max); accepts the raw 16-byte form and the PB form.
    pub fn time_range(&self) -> Option<(i64, i64)> {
        let v = self.get(keys::TIMERANGE)?;
        if v.len() == 16 {
            let (a, b) = v.split_at(8);
            return Some((
                i64::from_be_bytes(a.try_into().ok()?),
                i64::from_be_bytes(b.try_into().ok()?),
            ));
        }
        None
    }

    /// The block payload: "PBUF" + delimited FileInfoProto.
    pub fn to_payload(&self) -> Vec<u8> {
        let proto = FileInfoProto {
            map_entry: self
                .entries
                .iter()
                .map(|(k, v)| BytesBytesPair {
                    first: k.clone(),
                    second: v.clone(),
                })
                .collect(),
        };
        let mut out = PB_MAGIC.to_vec();
        out.reserve(proto.encoded_len() + 5);
        proto.encode_length_delimited(&mut out).unwrap_or_default();
        out
    }

    /// Parses a FileInfo payload (PB, or the legacy Writable map). `offset` is the block's.
    pub fn from_payload(payload: &[u8], offset: u64) -> Result<FileInfo> {
        let mut entries = BTreeMap::new();
        if let Some(rest) = payload.strip_prefix(&PB_MAGIC[..]) {
            let p = FileInfoProto::decode_length_delimited(rest)
                .map_err(|e| FormatError::corrupt("file info", offset, format!("protobuf: {e}")))?;
            for e in p.map_entry {
                entries.insert(e.first, e.second);
            }
        } else {
            let mut c = Cursor::new(payload, offset, "file info");
            let n = c.i32()?;
            if n < 0 || n as usize > payload.len() {
                return Err(FormatError::corrupt(
                    "file info",
                    offset,
                    format!("entry count {n}"),
                ));
            }
            for _ in 0..n {
                let kl = c.vint_len()?;
                let k = c.take(kl)?.to_vec();
                c.u8()?;
                let vl = c.vint_len()?;
                let v = c.take(vl)?.to_vec();
                entries.insert(k, v);
            }
        }
        Ok(FileInfo { entries })
    }
}

/// The FileInfo TIMERANGE of a file's cells, as HBase's `TimeRangeTracker` keeps it: the
/// smallest and largest timestamp, where a DeleteColumn or DeleteFamily marker also counts 0.
/// Empty: `i64::MAX..-1`. The writer keeps it; verification recomputes it to compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimeRangeTracker {
    pub(crate) min: i64,
    pub(crate) max: i64,
}

impl Default for TimeRangeTracker {
    fn default() -> Self {
        TimeRangeTracker {
            min: i64::MAX,
            max: -1,
        }
    }
}

impl TimeRangeTracker {
    /// Adds a cell of `cell_type` at `timestamp`.
    #[inline(always)]
    pub(crate) fn include(&mut self, timestamp: i64, cell_type: crate::cell::CellType) {
        use crate::cell::CellType;
        self.min = self.min.min(timestamp);
        self.max = self.max.max(timestamp);
        if matches!(cell_type, CellType::DeleteColumn | CellType::DeleteFamily) {
            self.min = self.min.min(0);
            self.max = self.max.max(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_by_bytes_and_round_trips() {
        let mut fi = FileInfo::new();
        fi.insert_i32(keys::AVG_KEY_LEN, 16);
        fi.insert_i32(keys::KEY_VALUE_VERSION, 1);
        fi.insert_bool(keys::MAJOR_COMPACTION_KEY, true);
        let p = fi.to_payload();
        assert_eq!(&p[..4], b"PBUF");
        let names: Vec<_> = fi.entries.keys().cloned().collect();
        assert_eq!(names[0], b"KEY_VALUE_VERSION".to_vec());
        assert_eq!(FileInfo::from_payload(&p, 0).unwrap(), fi);
        assert_eq!(fi.get_bool(keys::MAJOR_COMPACTION_KEY), Some(true));
    }

    #[test]
    fn legacy_and_garbage() {
        let mut legacy = 1i32.to_be_bytes().to_vec();
        legacy.extend_from_slice(&[1, b'k', 0, 2, b'v', b'w']);
        let fi = FileInfo::from_payload(&legacy, 0).unwrap();
        assert_eq!(fi.get("k"), Some(&b"vw"[..]));
        assert!(FileInfo::from_payload(b"PBUF\xff\xff", 0).is_err());
        assert!(FileInfo::from_payload(&[0x7f, 0, 0, 0], 0).is_err());
    }
}
