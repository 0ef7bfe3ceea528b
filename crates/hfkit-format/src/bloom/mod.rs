//! Compound Bloom filters: HBase's per-file Bloom filter made of fixed-size chunks, each its own
//! BLOOM_CHUNK block, plus a meta block that indexes them. Spec: `formats/bloom.md` (the Bloom
//! part of `formats/hfile.md`; its blocks are in `formats/hfile.md` §"Blocks").
//!
//! | module | owns |
//! |---|---|
//! | [`hash`] | Jenkins / Murmur / Murmur3 exactly as HBase computes them |
//! | [`chunk`] | one chunk: sizing, bit positions, add, test, folding |
//! | `key` | Bloom types, parameters, which bytes a cell contributes (the Bloom key) |
//! | [`writer`] | [`BloomWriter`]: new-key rules, chunking, inline blocks, meta payload, FileInfo |
//! | [`reader`] | [`BloomReader`]: meta parsing and HBase's lookup rules |
//!
//! ```text
//! Bloom key (hashed bytes = chunk-index key = LAST_BLOOM_KEY, one form per type):
//!   ROW                        row
//!   ROWPREFIX_FIXED_LENGTH(P)  row[0 .. min(P, rowLen)]
//!   ROWCOL                     u16 rowLen | row | 00 | qualifier | 7FFFFFFFFFFFFFFF | FF
//!                              (flat key of row, EMPTY family, qualifier, LATEST_TIMESTAMP, Maximum)
//! delete-family Bloom          row of each DeleteFamily / DeleteFamilyVersion cell (ROW rules)
//! ```
//! The three forms coincide because HBase builds the ROWCOL index key and LAST_BLOOM_KEY from
//! `createFirstOnRowCol`, which drops the family (confirmed on HBase-written files).

pub mod chunk;
pub mod hash;
mod key;
pub mod reader;
pub mod writer;

pub use hash::HashType;
pub use key::{
    write_rowcol_key, BloomKind, BloomParams, BloomType, DEFAULT_CHUNK_BYTE_SIZE_HINT,
    DEFAULT_ERROR_RATE, DEFAULT_HASH_TYPE, DEFAULT_MAX_FOLD, META_VERSION, ROWCOL_COMPARATOR,
};
pub use reader::{BloomMeta, BloomQuery, BloomReader, ChunkLocation};
pub use writer::BloomWriter;

#[cfg(test)]
pub(crate) mod test_support {
    //! Shared test helpers: HBase's Bloom fixtures and reading their Bloom structures.
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use crate::block::{BlockDecoder, BlockType};
    use crate::fileinfo::FileInfo;
    use crate::trailer::{Trailer, TRAILER_SIZE};

    /// Names (without extension) of the fixtures that have a `.bloom.txt`, for test `test`
    /// (`None`: skipped, see [`hfkit_testkit`]).
    pub fn bloom_fixtures(test: &str) -> Option<(PathBuf, Vec<String>)> {
        let dir = hfkit_testkit::dir(test, "hbase")?;
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                e.ok()?
                    .file_name()
                    .into_string()
                    .ok()?
                    .strip_suffix(".bloom.txt")
                    .map(String::from)
            })
            .collect();
        names.sort();
        Some((dir, names))
    }

    /// `key=value` lines of a `.options` file.
    pub fn options(dir: &std::path::Path, name: &str) -> BTreeMap<String, String> {
        std::fs::read_to_string(dir.join(format!("{name}.options")))
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                l.split_once('=')
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            })
            .collect()
    }

    /// What a test needs from an HBase-written file.
    pub struct BloomFile {
        pub file_info: FileInfo,
        /// (offset of the meta block, payload) of GENERAL_BLOOM_META.
        pub general_meta: Option<(u64, Vec<u8>)>,
        /// Same for DELETE_FAMILY_BLOOM_META.
        pub delete_family_meta: Option<(u64, Vec<u8>)>,
        /// Every BLOOM_CHUNK block: offset → (on-disk size with header, decompressed payload).
        pub chunks: BTreeMap<u64, (u32, Vec<u8>)>,
    }

    /// Walks every block of `file` and collects the Bloom structures and FileInfo.
    pub fn read_bloom_file(file: &[u8]) -> BloomFile {
        let trailer = Trailer::read(file).unwrap();
        let mut dec = BlockDecoder::new(trailer.compression().unwrap()).unwrap();
        let end = (file.len() - TRAILER_SIZE) as u64;
        let mut out = BloomFile {
            file_info: FileInfo::default(),
            general_meta: None,
            delete_family_meta: None,
            chunks: BTreeMap::new(),
        };
        let mut off = 0u64;
        let mut payload = Vec::new();
        while off < end {
            let h = BlockDecoder::header_at(file, off).unwrap();
            let wanted = matches!(
                h.block_type,
                BlockType::BloomChunk
                    | BlockType::GeneralBloomMeta
                    | BlockType::DeleteFamilyBloomMeta
                    | BlockType::FileInfo
            );
            if wanted {
                dec.read(file, off, &mut payload).unwrap();
                match h.block_type {
                    BlockType::BloomChunk => {
                        out.chunks
                            .insert(off, (h.on_disk_size_with_header() as u32, payload.clone()));
                    }
                    BlockType::GeneralBloomMeta => out.general_meta = Some((off, payload.clone())),
                    BlockType::DeleteFamilyBloomMeta => {
                        out.delete_family_meta = Some((off, payload.clone()))
                    }
                    _ => {
                        assert!(off >= trailer.load_on_open_data_offset);
                        assert_eq!(off, trailer.file_info_offset);
                        out.file_info = FileInfo::from_payload(&payload, off).unwrap();
                    }
                }
            }
            off += h.on_disk_size_with_header();
        }
        assert_eq!(off, end, "blocks end where the trailer starts");
        out
    }
}
