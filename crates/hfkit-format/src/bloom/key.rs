//! Bloom types, parameters and keys: [`BloomType`] (which bytes a cell contributes, the Bloom
//! key, in the forms listed in the [`bloom`](crate::bloom) module doc), [`BloomKind`] (the
//! general or the delete-family Bloom), [`BloomParams`] and their defaults, and the meta
//! constants both the writer and the reader use. Spec: `formats/bloom.md` §"Keys" (the
//! meta's version and comparator: §"Meta block").

use super::hash::HashType;
use crate::block::BlockType;
use crate::cell::{write_key_parts, CellType, LATEST_TIMESTAMP, MAX_ROW_LEN};
use crate::error::{FormatError, Result};
use crate::fileinfo::{keys, FileInfo};

/// Bloom meta format version (`CompoundBloomFilterBase.VERSION`). On disk: DO NOT CHANGE.
pub const META_VERSION: i32 = 3;

/// Comparator class name stored in a ROWCOL Bloom's meta (its index keys are cell keys).
/// ROW, ROWPREFIX and delete-family metas store an empty name (raw byte order).
pub const ROWCOL_COMPARATOR: &str = "org.apache.hadoop.hbase.CellComparatorImpl";

/// Default `io.storefile.bloom.error.rate`.
pub const DEFAULT_ERROR_RATE: f32 = 0.01;
/// Default `io.storefile.bloom.block.size`: chunk size hint in bytes.
pub const DEFAULT_CHUNK_BYTE_SIZE_HINT: usize = 128 * 1024;
/// Default `io.storefile.bloom.max.fold` (also HBase's `MAX_ALLOWED_FOLD_FACTOR`).
pub const DEFAULT_MAX_FOLD: u32 = 7;
/// Default `hbase.hash.type` (`murmur`, code 1).
pub const DEFAULT_HASH_TYPE: HashType = HashType::Murmur;

/// A column family's general Bloom filter type (`BloomType`, minus `NONE`, which is `None`
/// wherever a type is optional).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BloomType {
    /// Key = row.
    Row,
    /// Key = row + qualifier.
    RowCol,
    /// Key = the first N bytes of the row (whole row when shorter); N in `1..=32767`.
    RowPrefixFixedLength(u32),
}

impl BloomType {
    /// HBase's enum name, as stored in FileInfo `BLOOM_FILTER_TYPE`.
    pub const fn hbase_name(self) -> &'static str {
        match self {
            BloomType::Row => "ROW",
            BloomType::RowCol => "ROWCOL",
            BloomType::RowPrefixFixedLength(_) => "ROWPREFIX_FIXED_LENGTH",
        }
    }

    /// Parses a Bloom type. Accepts HBase names (`NONE`, `ROW`, `ROWCOL`,
    /// `ROWPREFIX_FIXED_LENGTH:N`) and the CLI form (`none`, `row`, `rowcol`, `rowprefix:N`),
    /// case-insensitively. `Ok(None)` means no Bloom filter.
    pub fn parse(s: &str) -> Result<Option<BloomType>> {
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        let name = name.trim().to_ascii_uppercase();
        let t = match (name.as_str(), arg) {
            ("NONE", None) => return Ok(None),
            ("ROW", None) => BloomType::Row,
            ("ROWCOL", None) => BloomType::RowCol,
            ("ROWPREFIX" | "ROWPREFIX_FIXED_LENGTH", Some(n)) => {
                let n: u32 = n.trim().parse().map_err(|_| {
                    FormatError::Invalid(format!("Bloom prefix length {n:?} is not a number"))
                })?;
                BloomType::prefix(n)?
            }
            ("ROWPREFIX" | "ROWPREFIX_FIXED_LENGTH", None) => {
                return Err(FormatError::Invalid(format!(
                    "Bloom type {s:?} needs a prefix length, e.g. rowprefix:4"
                )))
            }
            _ => {
                return Err(FormatError::Invalid(format!(
                    "unknown Bloom type {s:?} (none, row, rowcol, rowprefix:N)"
                )))
            }
        };
        Ok(Some(t))
    }

    /// A ROWPREFIX_FIXED_LENGTH type, checking the length as HBase does (`1..=32767`).
    pub fn prefix(len: u32) -> Result<BloomType> {
        if len == 0 || len as usize > MAX_ROW_LEN {
            return Err(FormatError::Invalid(format!(
                "Bloom prefix length {len} not in 1..={MAX_ROW_LEN}"
            )));
        }
        Ok(BloomType::RowPrefixFixedLength(len))
    }

    /// The general Bloom type recorded in a file's FileInfo (`BLOOM_FILTER_TYPE`, and
    /// `BLOOM_FILTER_PARAM` for ROWPREFIX). `Ok(None)` when the file has no general Bloom.
    pub fn from_file_info(fi: &FileInfo) -> Result<Option<BloomType>> {
        let Some(raw) = fi.get(keys::BLOOM_FILTER_TYPE) else {
            return Ok(None);
        };
        let bad = |d: String| FormatError::corrupt("file info BLOOM_FILTER_TYPE", 0, d);
        let name = std::str::from_utf8(raw).map_err(|_| bad("not UTF-8".into()))?;
        match name {
            "NONE" => Ok(None),
            "ROW" => Ok(Some(BloomType::Row)),
            "ROWCOL" => Ok(Some(BloomType::RowCol)),
            "ROWPREFIX_FIXED_LENGTH" => {
                let n = fi.get_i32(keys::BLOOM_FILTER_PARAM).ok_or_else(|| {
                    bad("ROWPREFIX_FIXED_LENGTH without a 4-byte BLOOM_FILTER_PARAM".into())
                })?;
                let n = u32::try_from(n).map_err(|_| bad(format!("prefix length {n}")))?;
                BloomType::prefix(n)
                    .map(Some)
                    .map_err(|e| bad(e.to_string()))
            }
            other => Err(bad(format!("unknown type {other:?}"))),
        }
    }

    /// Appends the Bloom key of (`row`, `qualifier`) for this type to `out` (see the module
    /// table). It is hashed, used as a chunk's index key, and stored as LAST_BLOOM_KEY.
    pub fn write_key(self, row: &[u8], qualifier: &[u8], out: &mut Vec<u8>) {
        match self {
            BloomType::Row => out.extend_from_slice(row),
            BloomType::RowPrefixFixedLength(n) => {
                out.extend_from_slice(row.get(..n as usize).unwrap_or(row));
            }
            BloomType::RowCol => write_rowcol_key(row, qualifier, out),
        }
    }

    /// Whether chunk-index keys are cell keys in HBase cell order (ROWCOL) rather than raw
    /// bytes in unsigned lexicographic order.
    pub const fn uses_cell_order(self) -> bool {
        matches!(self, BloomType::RowCol)
    }
}

/// Appends the ROWCOL Bloom key (HBase's `RowColBloomHashKey` bytes): the flat key of (row,
/// empty family, qualifier, LATEST_TIMESTAMP, Maximum). `row` must be at most 32767 bytes.
pub fn write_rowcol_key(row: &[u8], qualifier: &[u8], out: &mut Vec<u8>) {
    write_key_parts(
        out,
        row,
        b"",
        qualifier,
        LATEST_TIMESTAMP,
        CellType::Maximum.code(),
    );
}

/// Which of a file's two Bloom filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BloomKind {
    /// The family's general Bloom (GENERAL_BLOOM_META), of the given type.
    General(BloomType),
    /// The delete-family Bloom (DELETE_FAMILY_BLOOM_META): ROW keys of DeleteFamily and
    /// DeleteFamilyVersion markers. HBase writes it whenever the general type is not ROWCOL.
    DeleteFamily,
}

impl BloomKind {
    /// The key type: the general type, or ROW for the delete-family Bloom.
    pub const fn bloom_type(self) -> BloomType {
        match self {
            BloomKind::General(t) => t,
            BloomKind::DeleteFamily => BloomType::Row,
        }
    }

    /// The block type of this Bloom's meta block.
    pub const fn meta_block_type(self) -> BlockType {
        match self {
            BloomKind::General(_) => BlockType::GeneralBloomMeta,
            BloomKind::DeleteFamily => BlockType::DeleteFamilyBloomMeta,
        }
    }

    /// The comparator name stored in the meta (empty for raw byte order).
    pub const fn comparator_name(self) -> &'static str {
        match self {
            BloomKind::General(BloomType::RowCol) => ROWCOL_COMPARATOR,
            _ => "",
        }
    }
}

/// Bloom tuning, HBase's `io.storefile.bloom.*` and `hbase.hash.type` settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BloomParams {
    /// Target false-positive rate per lookup (`io.storefile.bloom.error.rate`). For ROWCOL the
    /// per-key rate is `1 - sqrt(1 - error_rate)`, as a ROWCOL lookup probes two keys.
    pub error_rate: f32,
    /// Chunk size hint in bytes (`io.storefile.bloom.block.size`), rounded up to a multiple
    /// of `2^max_fold`.
    pub chunk_byte_size_hint: usize,
    /// How many times a chunk must be foldable in half (`io.storefile.bloom.max.fold`).
    pub max_fold: u32,
    /// Hash function (`hbase.hash.type`).
    pub hash_type: HashType,
}

impl Default for BloomParams {
    fn default() -> Self {
        BloomParams {
            error_rate: DEFAULT_ERROR_RATE,
            chunk_byte_size_hint: DEFAULT_CHUNK_BYTE_SIZE_HINT,
            max_fold: DEFAULT_MAX_FOLD,
            hash_type: DEFAULT_HASH_TYPE,
        }
    }
}

impl BloomParams {
    /// The per-key error rate HBase sizes chunks with, in HBase's float/double arithmetic:
    /// the configured float, or for the general ROWCOL Bloom `(float)(1 - sqrt(1 - err))`.
    pub fn chunk_error_rate(&self, kind: BloomKind) -> f64 {
        let err = self.error_rate as f64;
        match kind {
            BloomKind::General(BloomType::RowCol) => (1.0 - (1.0 - err).sqrt()) as f32 as f64,
            _ => err,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_bloom_types() {
        assert_eq!(BloomType::parse("none").unwrap(), None);
        assert_eq!(BloomType::parse("NONE").unwrap(), None);
        assert_eq!(BloomType::parse("row").unwrap(), Some(BloomType::Row));
        assert_eq!(BloomType::parse("ROWCOL").unwrap(), Some(BloomType::RowCol));
        assert_eq!(
            BloomType::parse("rowprefix:4").unwrap(),
            Some(BloomType::RowPrefixFixedLength(4))
        );
        assert_eq!(
            BloomType::parse("ROWPREFIX_FIXED_LENGTH:12").unwrap(),
            Some(BloomType::RowPrefixFixedLength(12))
        );
        for bad in [
            "rowprefix",
            "rowprefix:0",
            "rowprefix:x",
            "rowprefix:40000",
            "row:3",
            "bloom",
            "",
        ] {
            assert!(BloomType::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn key_forms() {
        let mut k = Vec::new();
        BloomType::RowCol.write_key(b"r1", b"q", &mut k);
        assert_eq!(
            k,
            [0, 2, b'r', b'1', 0, b'q', 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        k.clear();
        BloomType::RowPrefixFixedLength(3).write_key(b"row1", b"q", &mut k);
        assert_eq!(k, b"row");
        k.clear();
        BloomType::RowPrefixFixedLength(8).write_key(b"ab", b"q", &mut k);
        assert_eq!(k, b"ab");
        k.clear();
        BloomType::Row.write_key(b"ab", b"q", &mut k);
        assert_eq!(k, b"ab");
    }

    #[test]
    fn file_info_type() {
        let mut fi = FileInfo::new();
        assert_eq!(BloomType::from_file_info(&fi).unwrap(), None);
        fi.insert(keys::BLOOM_FILTER_TYPE, b"ROWPREFIX_FIXED_LENGTH".to_vec());
        assert!(BloomType::from_file_info(&fi).is_err());
        fi.insert_i32(keys::BLOOM_FILTER_PARAM, 3);
        assert_eq!(
            BloomType::from_file_info(&fi).unwrap(),
            Some(BloomType::RowPrefixFixedLength(3))
        );
        fi.insert(keys::BLOOM_FILTER_TYPE, b"ROWCOL".to_vec());
        assert_eq!(
            BloomType::from_file_info(&fi).unwrap(),
            Some(BloomType::RowCol)
        );
        fi.insert(keys::BLOOM_FILTER_TYPE, b"BOGUS".to_vec());
        assert!(BloomType::from_file_info(&fi).is_err());
    }

    #[test]
    fn error_rates() {
        let p = BloomParams::default();
        assert_eq!(
            p.chunk_error_rate(BloomKind::General(BloomType::Row)),
            0.009_999_999_776_482_582
        );
        assert_eq!(
            p.chunk_error_rate(BloomKind::General(BloomType::RowCol)),
            0.005_012_562_964_111_566_5
        );
        assert_eq!(
            p.chunk_error_rate(BloomKind::DeleteFamily),
            0.009_999_999_776_482_582
        );
    }
}
