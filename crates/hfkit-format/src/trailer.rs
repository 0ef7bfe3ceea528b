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
/// Oldest minor version read: 1 = blocks carry checksums and 33-byte headers (minor 0 had
/// 24-byte headers, which hfkit does not read).
pub const MIN_MINOR_VERSION: u32 = 1;
/// Most data index levels accepted: the 16 HBase's writer (and ours) stops at. Keys longer
/// than an index block reach it with few blocks: past `hfile.index.block.min.entries`, each
/// intermediate index block then holds one entry.
pub const MAX_INDEX_LEVELS: u32 = super::index::MAX_LEVELS;
/// Comparator name HBase master writes for user tables.
pub const COMPARATOR_INNER_STORE: &str = "org.apache.hadoop.hbase.InnerStoreCellComparator";
/// Comparator name HBase 2.x writes for user tables; readable by 2.x (including 2.4) and 3.x.
pub const COMPARATOR_KV: &str = "org.apache.hadoop.hbase.KeyValue$KVComparator";
/// Comparator name HBase master writes when a writer is given the plain cell comparator
/// (`CellComparatorImpl.COMPARATOR`).
pub const COMPARATOR_CELL_IMPL: &str = "org.apache.hadoop.hbase.CellComparatorImpl";
/// Comparator names every HBase reader maps to the normal cell comparator.
pub const USER_TABLE_COMPARATORS: [&str; 4] = [
    COMPARATOR_KV,
    "org.apache.hadoop.hbase.CellComparator",
    COMPARATOR_CELL_IMPL,
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
    ///
    /// The trailer is the one part of an HFile without a checksum, so this refuses what a
    /// flipped bit can make of it before anything trusts it: a file too short to hold a trailer
    /// or without its magic is "not an HFile (or truncated)"; every field a v3 writer always
    /// writes (1-12) must be present; the fields must agree with each other and with the file
    /// length ([`Trailer::check`]). What the rest of the file proves (the index, the cells) is
    /// checked against the trailer by the reader (`formats/hfile.md` §"Trailer").
    pub fn read(file: &[u8]) -> Result<Trailer> {
        let trailer = Trailer::decode(file)?;
        trailer.check(file.len() as u64)?;
        Ok(trailer)
    }

    /// Decodes the trailer at the end of `file` (magic, version, fields 1-12 present) without
    /// checking the fields against each other ([`Trailer::check`]).
    pub fn decode(file: &[u8]) -> Result<Trailer> {
        Trailer::decode_end(file, file.len() as u64)
    }

    /// [`Trailer::read`] from `end`, the last `end.len()` bytes of a file of `file_len` bytes
    /// (a range read of a file's end).
    pub fn read_end(end: &[u8], file_len: u64) -> Result<Trailer> {
        let trailer = Trailer::decode_end(end, file_len)?;
        trailer.check(file_len)?;
        Ok(trailer)
    }

    /// [`Trailer::decode`] from `end`, the last `end.len()` bytes of a file of `file_len` bytes.
    fn decode_end(end: &[u8], file_len: u64) -> Result<Trailer> {
        let len = usize::try_from(file_len).unwrap_or(usize::MAX);
        if len < TRAILER_SIZE || end.len() < TRAILER_SIZE {
            return Err(FormatError::NotAnHFile(format!(
                "{len} bytes, shorter than the {TRAILER_SIZE}-byte trailer every HFile ends with \
                 (not an HFile, or truncated)"
            )));
        }
        let at = len - TRAILER_SIZE;
        let file = &end[end.len() - TRAILER_SIZE..];
        let t = &file[..TRAILER_SIZE - VERSION_SIZE];
        if &t[..8] != TRAILER_MAGIC {
            return Err(FormatError::NotAnHFile(format!(
                "no trailer magic TRABLK\"$ at offset {at} ({TRAILER_SIZE} bytes before the end of \
                 {len}): not an HFile, or truncated"
            )));
        }
        let v = &file[TRAILER_SIZE - VERSION_SIZE..];
        let version = u32::from_be_bytes([v[0], v[1], v[2], v[3]]);
        let major = version & 0x00ff_ffff;
        let minor = version >> 24;
        if major != MAJOR_VERSION {
            return Err(FormatError::Unsupported(format!(
                "HFile major version {major} (minor {minor}); hfkit reads version 3"
            )));
        }
        if !(MIN_MINOR_VERSION..=MINOR_VERSION).contains(&minor) {
            return Err(FormatError::Unsupported(format!(
                "HFile version 3.{minor}; hfkit reads 3.{MIN_MINOR_VERSION} to 3.{MINOR_VERSION}"
            )));
        }
        let p = FileTrailerProto::decode_length_delimited(&t[8..]).map_err(|e| {
            FormatError::corrupt("trailer", at as u64 + 8, format!("protobuf: {e}"))
        })?;
        let missing = |field: &'static str| {
            FormatError::corrupt(
                "trailer",
                at as u64 + 8,
                format!("field {field} is missing (a v3 writer always writes fields 1-12)"),
            )
        };
        if p.encryption_key.is_some() {
            return Err(FormatError::Unsupported(
                "encrypted HFile (trailer has an encryption key)".into(),
            ));
        }
        // Each of fields 1-12, or the error naming the one that is missing.
        macro_rules! required {
            ($field:ident) => {
                p.$field.ok_or_else(|| missing(stringify!($field)))?
            };
        }
        let trailer = Trailer {
            file_info_offset: required!(file_info_offset),
            load_on_open_data_offset: required!(load_on_open_data_offset),
            uncompressed_data_index_size: required!(uncompressed_data_index_size),
            total_uncompressed_bytes: required!(total_uncompressed_bytes),
            data_index_count: required!(data_index_count),
            meta_index_count: required!(meta_index_count),
            entry_count: required!(entry_count),
            num_data_index_levels: required!(num_data_index_levels),
            first_data_block_offset: required!(first_data_block_offset) as i64,
            last_data_block_offset: required!(last_data_block_offset) as i64,
            comparator_class_name: required!(comparator_class_name),
            compression_codec: required!(compression_codec),
            encryption_key: None,
            major_version: major,
            minor_version: minor,
        };
        Ok(trailer)
    }

    /// Checks the fields against each other and against the file length:
    ///
    /// - a file with cells has data index entries, its first data block at offset 0 (nothing
    ///   precedes it in v3) and its last one before the load-on-open section; a file without
    ///   cells has neither, and both data block offsets are -1;
    /// - load-on-open section < FileInfo < trailer (the two root index blocks precede FileInfo);
    /// - 1 to [`MAX_INDEX_LEVELS`] index levels; the comparator is one HBase maps to the
    ///   user-table order (hfkit reads no other).
    ///
    /// What only the rest of the file can prove (the index's entries, the cells) the reader
    /// checks when it opens and scans the file.
    pub fn check(&self, file_len: u64) -> Result<()> {
        let mismatch = |field: &'static str, stated: i128, found: String| {
            Err(FormatError::trailer_mismatch(field, stated, found))
        };
        let trailer_at = Trailer::offset_in(file_len);
        if self.load_on_open_data_offset >= trailer_at {
            return mismatch(
                "load_on_open_data_offset",
                self.load_on_open_data_offset.into(),
                format!("the trailer starts at {trailer_at}"),
            );
        }
        if self.file_info_offset <= self.load_on_open_data_offset
            || self.file_info_offset >= trailer_at
        {
            return mismatch(
                "file_info_offset",
                self.file_info_offset.into(),
                format!(
                    "FileInfo follows the two root index blocks at {} and precedes the trailer at \
                     {trailer_at}",
                    self.load_on_open_data_offset
                ),
            );
        }
        if self.num_data_index_levels == 0 || self.num_data_index_levels > MAX_INDEX_LEVELS {
            return mismatch(
                "num_data_index_levels",
                self.num_data_index_levels.into(),
                format!("an index has 1 to {MAX_INDEX_LEVELS} levels"),
            );
        }
        let has_cells = self.entry_count > 0;
        if has_cells != (self.data_index_count > 0) {
            return mismatch(
                "entry_count",
                self.entry_count.into(),
                format!("data_index_count is {}", self.data_index_count),
            );
        }
        let (first, last) = (self.first_data_block_offset, self.last_data_block_offset);
        if has_cells {
            if first != 0 {
                return mismatch(
                    "first_data_block_offset",
                    first.into(),
                    "the first data block of a v3 file with cells is at offset 0".into(),
                );
            }
            if last < 0 || last as u64 >= self.load_on_open_data_offset {
                return mismatch(
                    "last_data_block_offset",
                    last.into(),
                    format!(
                        "data blocks lie before the load-on-open section at {}",
                        self.load_on_open_data_offset
                    ),
                );
            }
        } else if first != -1 || last != -1 {
            let (field, value) = if first != -1 {
                ("first_data_block_offset", first)
            } else {
                ("last_data_block_offset", last)
            };
            return mismatch(
                field,
                value.into(),
                "a file without cells has no data block (-1)".into(),
            );
        }
        if !USER_TABLE_COMPARATORS.contains(&self.comparator_class_name.as_str()) {
            return Err(FormatError::Unsupported(format!(
                "comparator {:?}; hfkit reads user-table files ({})",
                self.comparator_class_name,
                USER_TABLE_COMPARATORS.join(", ")
            )));
        }
        Ok(())
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
        assert_eq!(Trailer::decode(&out).unwrap(), t);
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
        assert_eq!(Trailer::decode(&out).unwrap(), t);
    }

    /// A file of `len` bytes ending with `t`.
    fn file_with(t: &Trailer, len: usize) -> Vec<u8> {
        let mut f = vec![0u8; len - TRAILER_SIZE];
        t.write(&mut f).unwrap();
        f
    }

    fn one_block_file() -> Trailer {
        Trailer {
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
            comparator_class_name: COMPARATOR_KV.into(),
            compression_codec: 2,
            encryption_key: None,
            major_version: 3,
            minor_version: 3,
        }
    }

    #[test]
    fn fields_must_agree_with_each_other_and_the_file_length() {
        let good = one_block_file();
        assert_eq!(Trailer::read(&file_with(&good, 4577)).unwrap(), good);
        let field = |t: Trailer, len: usize| match Trailer::read(&file_with(&t, len)) {
            Err(FormatError::TrailerMismatch(m)) => m.field,
            other => panic!("{t:?}: {other:?}"),
        };
        let t = |f: &dyn Fn(&mut Trailer)| {
            let mut t = one_block_file();
            f(&mut t);
            t
        };
        assert_eq!(field(t(&|t| t.entry_count = 0), 4577), "entry_count");
        assert_eq!(field(t(&|t| t.data_index_count = 0), 4577), "entry_count");
        assert_eq!(
            field(t(&|t| t.first_data_block_offset = 32), 4577),
            "first_data_block_offset"
        );
        assert_eq!(
            field(t(&|t| t.last_data_block_offset = 64), 4577),
            "last_data_block_offset"
        );
        assert_eq!(
            field(t(&|t| t.last_data_block_offset = -1), 4577),
            "last_data_block_offset"
        );
        assert_eq!(
            field(t(&|t| t.num_data_index_levels = 0), 4577),
            "num_data_index_levels"
        );
        assert_eq!(
            field(t(&|t| t.file_info_offset = 64), 4577),
            "file_info_offset"
        );
        assert_eq!(field(good.clone(), 4200), "file_info_offset");
        assert_eq!(field(good.clone(), 4100), "load_on_open_data_offset");
        let empty = t(&|t| {
            t.entry_count = 0;
            t.data_index_count = 0;
            t.first_data_block_offset = -1;
            t.last_data_block_offset = -1;
        });
        assert!(Trailer::read(&file_with(&empty, 4577)).is_ok());
        let mut e2 = empty.clone();
        e2.last_data_block_offset = 0;
        assert_eq!(field(e2, 4577), "last_data_block_offset");
        let mut other = good.clone();
        other.comparator_class_name = "org.apache.hadoop.hbase.KeyValue$MetaComparator".into();
        assert!(matches!(
            Trailer::read(&file_with(&other, 4577)),
            Err(FormatError::Unsupported(_))
        ));
        let mut minor = good;
        minor.minor_version = 7;
        assert!(matches!(
            Trailer::read(&file_with(&minor, 4577)),
            Err(FormatError::Unsupported(_))
        ));
    }

    #[test]
    fn a_missing_field_is_named() {
        let mut out = TRAILER_MAGIC.to_vec();
        let proto = FileTrailerProto {
            file_info_offset: Some(167),
            ..Default::default()
        };
        proto.encode_length_delimited(&mut out).unwrap();
        out.resize(TRAILER_SIZE - 4, 0);
        out.extend_from_slice(&[3, 0, 0, 3]);
        let e = Trailer::read(&out).unwrap_err().to_string();
        assert!(e.contains("load_on_open_data_offset is missing"), "{e}");
    }

    #[test]
    fn what_is_not_an_hfile_is_called_so() {
        let short = Trailer::read(b"hello, world\n").unwrap_err().to_string();
        assert!(
            short.starts_with("not an HFile: 13 bytes, shorter than the 4096-byte trailer"),
            "{short}"
        );
        let text = vec![b'x'; 10_000];
        let e = Trailer::read(&text).unwrap_err().to_string();
        assert!(
            e.contains("no trailer magic") && e.contains("not an HFile, or truncated"),
            "{e}"
        );
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
