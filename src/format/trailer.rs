//! The fixed file trailer. Spec: `formats/hfile.md` §"Trailer".
//!
//! ```text
//! exactly 4096 bytes at the end of a v3 file:
//! +0      8  "TRABLK\"$"
//! +8      n  varint length + FileTrailerProto (fields 1-12 always written, in field order)
//! +8+n       zero padding
//! +4092   4  u32 BE (minor << 24) | major   = 03 00 00 03 for v3.3
//! ```

use prost::Message;

use super::compression::Compression;
use super::error::{FormatError, Result};
use super::proto::FileTrailerProto;

/// Trailer magic.
pub const TRAILER_MAGIC: &[u8; 8] = b"TRABLK\"$";
/// Size of a v3 trailer.
pub const TRAILER_SIZE: usize = 4096;
/// Size of the version field at the end of the trailer.
const VERSION_SIZE: usize = 4;
/// HFile major version written.
pub const MAJOR_VERSION: u32 = 3;
/// HFile minor version written: 3 = index keys may be shortened ("fake") keys.
pub const MINOR_VERSION: u32 = 3;
/// Comparator name HBase master writes for user tables.
pub const COMPARATOR_INNER_STORE: &str = "org.apache.hadoop.hbase.InnerStoreCellComparator";
/// Comparator name HBase 2.x writes for user tables; readable by 2.x (including 2.4) and 3.x.
pub const COMPARATOR_KV: &str = "org.apache.hadoop.hbase.KeyValue$KVComparator";
/// Comparator names every HBase reader maps to the normal cell comparator.
pub const USER_TABLE_COMPARATORS: [&str; 4] = [
    COMPARATOR_KV,
    "org.apache.hadoop.hbase.CellComparator",
    "org.apache.hadoop.hbase.CellComparatorImpl",
    COMPARATOR_INNER_STORE,
];

/// The decoded trailer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trailer {
    pub file_info_offset: u64,
    pub load_on_open_data_offset: u64,
    pub uncompressed_data_index_size: u64,
    pub total_uncompressed_bytes: u64,
    pub data_index_count: u32,
    pub meta_index_count: u32,
    pub entry_count: u64,
    pub num_data_index_levels: u32,
    /// -1 when the file has no data block.
    pub first_data_block_offset: i64,
    /// Offset of the start of the last data block; -1 when none.
    pub last_data_block_offset: i64,
    pub comparator_class_name: String,
    /// Raw codec id (see [`Compression::from_id`]).
    pub compression_codec: u32,
    pub encryption_key: Option<Vec<u8>>,
    pub major_version: u32,
    pub minor_version: u32,
}

impl Trailer {
    /// The codec, if its id is known.
    pub fn compression(&self) -> Option<Compression> {
        Compression::from_id(self.compression_codec)
    }

    /// Appends the 4096-byte trailer.
    pub fn write(&self, out: &mut Vec<u8>) -> Result<()> {
        let proto = FileTrailerProto {
            file_info_offset: Some(self.file_info_offset),
            load_on_open_data_offset: Some(self.load_on_open_data_offset),
            uncompressed_data_index_size: Some(self.uncompressed_data_index_size),
            total_uncompressed_bytes: Some(self.total_uncompressed_bytes),
            data_index_count: Some(self.data_index_count),
            meta_index_count: Some(self.meta_index_count),
            entry_count: Some(self.entry_count),
            num_data_index_levels: Some(self.num_data_index_levels),
            first_data_block_offset: Some(self.first_data_block_offset as u64),
            last_data_block_offset: Some(self.last_data_block_offset as u64),
            comparator_class_name: Some(self.comparator_class_name.clone()),
            compression_codec: Some(self.compression_codec),
            encryption_key: self.encryption_key.clone(),
            key_namespace: None,
            kek_metadata: None,
            kek_checksum: None,
        };
        let start = out.len();
        out.extend_from_slice(TRAILER_MAGIC);
        proto
            .encode_length_delimited(out)
            .map_err(|e| FormatError::Invalid(format!("trailer: {e}")))?;
        if out.len() - start > TRAILER_SIZE - VERSION_SIZE {
            return Err(FormatError::Invalid(
                "trailer protobuf exceeds 4092 bytes".into(),
            ));
        }
        out.resize(start + TRAILER_SIZE - VERSION_SIZE, 0);
        let version = (self.minor_version << 24) | (self.major_version & 0x00ff_ffff);
        out.extend_from_slice(&version.to_be_bytes());
        Ok(())
    }

    /// Reads the trailer from the end of a whole file.
    pub fn read(file: &[u8]) -> Result<Trailer> {
        let len = file.len();
        if len < VERSION_SIZE {
            return Err(FormatError::Truncated {
                what: "trailer",
                offset: 0,
                needed: TRAILER_SIZE as u64,
                available: len as u64,
            });
        }
        let v = &file[len - VERSION_SIZE..];
        let version = u32::from_be_bytes([v[0], v[1], v[2], v[3]]);
        let major = version & 0x00ff_ffff;
        let minor = version >> 24;
        if major != 3 {
            return Err(FormatError::Unsupported(format!(
                "HFile major version {major} (minor {minor}); hfkit reads version 3"
            )));
        }
        if len < TRAILER_SIZE {
            return Err(FormatError::Truncated {
                what: "trailer",
                offset: 0,
                needed: TRAILER_SIZE as u64,
                available: len as u64,
            });
        }
        let at = len - TRAILER_SIZE;
        let t = &file[at..len - VERSION_SIZE];
        if &t[..8] != TRAILER_MAGIC {
            return Err(FormatError::corrupt(
                "trailer",
                at as u64,
                "missing TRABLK\"$ magic",
            ));
        }
        let p = FileTrailerProto::decode_length_delimited(&t[8..]).map_err(|e| {
            FormatError::corrupt("trailer", at as u64 + 8, format!("protobuf: {e}"))
        })?;
        Ok(Trailer {
            file_info_offset: p.file_info_offset.unwrap_or(0),
            load_on_open_data_offset: p.load_on_open_data_offset.unwrap_or(0),
            uncompressed_data_index_size: p.uncompressed_data_index_size.unwrap_or(0),
            total_uncompressed_bytes: p.total_uncompressed_bytes.unwrap_or(0),
            data_index_count: p.data_index_count.unwrap_or(0),
            meta_index_count: p.meta_index_count.unwrap_or(0),
            entry_count: p.entry_count.unwrap_or(0),
            num_data_index_levels: p.num_data_index_levels.unwrap_or(1),
            first_data_block_offset: p.first_data_block_offset.map(|x| x as i64).unwrap_or(-1),
            last_data_block_offset: p.last_data_block_offset.map(|x| x as i64).unwrap_or(-1),
            comparator_class_name: p.comparator_class_name.unwrap_or_default(),
            compression_codec: p.compression_codec.unwrap_or(Compression::None.id()),
            encryption_key: p.encryption_key,
            major_version: major,
            minor_version: minor,
        })
    }

    /// Offset where the trailer starts in a file of `file_len` bytes.
    pub fn offset_in(file_len: u64) -> u64 {
        file_len.saturating_sub(TRAILER_SIZE as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_example_trailer_bytes() {
        // reference §14: the trailer of the one-cell file.
        let t = Trailer {
            file_info_offset: 167,
            load_on_open_data_offset: 64,
            uncompressed_data_index_size: 29,
            total_uncompressed_bytes: 4499,
            data_index_count: 1,
            meta_index_count: 0,
            entry_count: 1,
            num_data_index_levels: 1,
            first_data_block_offset: 0,
            last_data_block_offset: 0,
            comparator_class_name: COMPARATOR_INNER_STORE.into(),
            compression_codec: 2,
            encryption_key: None,
            major_version: 3,
            minor_version: 3,
        };
        let mut out = Vec::new();
        t.write(&mut out).unwrap();
        assert_eq!(out.len(), TRAILER_SIZE);
        let mut want = b"TRABLK\"$".to_vec();
        want.extend_from_slice(&[
            0x4a, 0x08, 0xa7, 0x01, 0x10, 0x40, 0x18, 0x1d, 0x20, 0x93, 0x23,
        ]);
        want.extend_from_slice(&[
            0x28, 1, 0x30, 0, 0x38, 1, 0x40, 1, 0x48, 0, 0x50, 0, 0x5a, 0x30,
        ]);
        want.extend_from_slice(COMPARATOR_INNER_STORE.as_bytes());
        want.extend_from_slice(&[0x60, 0x02]);
        assert_eq!(&out[..want.len()], &want[..]);
        assert_eq!(&out[4092..], &[3, 0, 0, 3]);
        assert_eq!(Trailer::read(&out).unwrap(), t);
    }

    #[test]
    fn minus_one_offsets_round_trip() {
        let t = Trailer {
            file_info_offset: 1,
            load_on_open_data_offset: 0,
            uncompressed_data_index_size: 0,
            total_uncompressed_bytes: 0,
            data_index_count: 0,
            meta_index_count: 0,
            entry_count: 0,
            num_data_index_levels: 1,
            first_data_block_offset: -1,
            last_data_block_offset: -1,
            comparator_class_name: COMPARATOR_KV.into(),
            compression_codec: 3,
            encryption_key: None,
            major_version: 3,
            minor_version: 3,
        };
        let mut out = Vec::new();
        t.write(&mut out).unwrap();
        assert_eq!(Trailer::read(&out).unwrap(), t);
    }

    #[test]
    fn garbage_trailers_are_errors() {
        assert!(Trailer::read(&[]).is_err());
        assert!(Trailer::read(&[0, 0, 0, 3]).is_err());
        let mut f = vec![0u8; 4096];
        f[4095] = 3;
        f[4092] = 3;
        assert!(Trailer::read(&f).is_err());
        f[..8].copy_from_slice(TRAILER_MAGIC);
        f[8] = 0x7f;
        assert!(Trailer::read(&f).is_err());
    }
}
