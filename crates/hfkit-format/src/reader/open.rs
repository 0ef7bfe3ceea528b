//! Opening an HFile (`formats/hfile.md` §"Reading", §"The trailer is never trusted alone"):
//! the trailer, then the load-on-open section read block by block from
//! `load_on_open_data_offset` to the trailer (data index root, meta index, FileInfo, Bloom
//! metas), each block's type and the trailer's counts and offsets checked against what is
//! there, and the encoding context and Bloom readers made from FileInfo.

use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::OnceLock;

use crate::block::{BlockDecoder, BlockHeader, BlockType};
use crate::bloom::{BloomKind, BloomReader, BloomType};
use crate::encoding::{DataBlockEncoding, EncodingContext};
use crate::error::{FormatError, Result};
use crate::fileinfo::{keys, FileInfo};
use crate::index::{parse_root, IndexEntry, MidKeyMetadata, MID_KEY_METADATA_SIZE};
use crate::trailer::Trailer;

use super::file::{Backing, HFileReader, LoadOnOpenBlock, NEXT_READER_ID};

impl HFileReader {
    pub(super) fn from_backing(backing: Backing) -> Result<HFileReader> {
        let file_len = backing.len();
        let (base, bytes) = backing.end();
        let trailer = Trailer::read_end(bytes, file_len)?;
        let compression = trailer.compression().ok_or_else(|| {
            FormatError::Unsupported(format!(
                "compression codec id {}",
                trailer.compression_codec
            ))
        })?;
        let trailer_at = Trailer::offset_in(file_len);
        let mut section = Section {
            dec: BlockDecoder::new(compression)?,
            end: (base, bytes),
            blocks: Vec::new(),
        };
        let mut payload = Vec::new();
        let mut at = trailer.load_on_open_data_offset;

        // Data index root.
        let h = section.read(at, &[BlockType::RootIndex], &mut payload)?;
        let (root_index, used) = parse_root(
            &payload,
            trailer.data_index_count as usize,
            at,
            "data index root",
        )?;
        let mid_key = check_root_index(&trailer, &root_index, &payload[used..], at)?;
        at += h.on_disk_size_with_header();

        // Meta index.
        let h = section.read(at, &[BlockType::RootIndex], &mut payload)?;
        let (meta_index, used) = parse_root(
            &payload,
            trailer.meta_index_count as usize,
            at,
            "meta index",
        )?;
        if used != payload.len() {
            return Err(FormatError::trailer_mismatch(
                "meta_index_count",
                trailer.meta_index_count,
                format!(
                    "the meta index block at {at} holds {} more bytes after that many entries",
                    payload.len() - used
                ),
            ));
        }
        at += h.on_disk_size_with_header();

        // FileInfo.
        if at != trailer.file_info_offset {
            return Err(FormatError::trailer_mismatch(
                "file_info_offset",
                trailer.file_info_offset,
                format!("the block after the two root index blocks is at {at}"),
            ));
        }
        let h = section.read(at, &[BlockType::FileInfo], &mut payload)?;
        let file_info = FileInfo::from_payload(&payload, at)?;
        at += h.on_disk_size_with_header();

        // Bloom metas, until the trailer.
        let mut general_bloom_meta = None;
        let mut delete_family_bloom_meta = None;
        while at < trailer_at {
            let h = section.read(
                at,
                &[
                    BlockType::GeneralBloomMeta,
                    BlockType::DeleteFamilyBloomMeta,
                ],
                &mut payload,
            )?;
            let slot = if h.block_type == BlockType::GeneralBloomMeta {
                &mut general_bloom_meta
            } else {
                &mut delete_family_bloom_meta
            };
            *slot = Some((at, payload.clone()));
            at += h.on_disk_size_with_header();
        }
        if at != trailer_at {
            return Err(FormatError::corrupt(
                "load-on-open section",
                at,
                "last block overruns the trailer",
            ));
        }

        let ctx = EncodingContext {
            include_tags: file_info.contains(keys::MAX_TAGS_LEN),
            include_mvcc: file_info.get_i32(keys::KEY_VALUE_VERSION) == Some(1),
            compress_tags: file_info.get_bool(keys::TAGS_COMPRESSED).unwrap_or(false),
        };
        let encoding = match file_info.get_str(keys::DATA_BLOCK_ENCODING) {
            None => DataBlockEncoding::None,
            Some(name) => DataBlockEncoding::from_name(name)
                .ok_or_else(|| FormatError::Unsupported(format!("data block encoding {name}")))?,
        };
        let general_bloom = match &general_bloom_meta {
            Some((offset, payload)) => {
                let t = BloomType::from_file_info(&file_info)?.ok_or_else(|| {
                    FormatError::corrupt(
                        "file info",
                        trailer.file_info_offset,
                        "Bloom meta block but no BLOOM_FILTER_TYPE",
                    )
                })?;
                Some(BloomReader::from_meta(
                    payload,
                    *offset,
                    BloomKind::General(t),
                )?)
            }
            None => None,
        };
        let delete_family_bloom = match &delete_family_bloom_meta {
            Some((offset, payload)) => Some(BloomReader::from_meta(
                payload,
                *offset,
                BloomKind::DeleteFamily,
            )?),
            None => None,
        };
        let load_on_open = section.blocks;
        Ok(HFileReader {
            general_bloom,
            delete_family_bloom,
            backing,
            path: None,
            trailer,
            compression,
            file_info,
            ctx,
            encoding,
            root_index,
            mid_key,
            meta_index,
            general_bloom_meta,
            delete_family_bloom_meta,
            load_on_open,
            half: None,
            id: NEXT_READER_ID.fetch_add(1, AtomicOrdering::Relaxed),
            block_cache: OnceLock::new(),
            bounds: OnceLock::new(),
        })
    }
}

/// Checks the data index root against the trailer: it holds exactly `data_index_count`
/// entries (what follows them is the 16-byte mid-key metadata of a multi-level index, or
/// nothing); a one-level index names the first data block at `first_data_block_offset` and
/// the last at `last_data_block_offset`. Returns the mid-key metadata.
fn check_root_index(
    trailer: &Trailer,
    root: &[IndexEntry],
    rest: &[u8],
    at: u64,
) -> Result<Option<MidKeyMetadata>> {
    let multi_level = trailer.num_data_index_levels > 1;
    let expected_rest = if multi_level && !root.is_empty() {
        MID_KEY_METADATA_SIZE
    } else {
        0
    };
    if rest.len() != expected_rest {
        return Err(FormatError::trailer_mismatch(
            "data_index_count",
            trailer.data_index_count,
            format!(
                "the data index root at {at} holds {} bytes after that many entries, expected {} \
                 for a {}-level index",
                rest.len(),
                expected_rest,
                trailer.num_data_index_levels
            ),
        ));
    }
    if multi_level {
        return match rest.is_empty() {
            true => Ok(None),
            false => Ok(Some(MidKeyMetadata::parse(rest, at)?)),
        };
    }
    if let (Some(first), Some(last)) = (root.first(), root.last()) {
        if first.offset as i64 != trailer.first_data_block_offset {
            return Err(FormatError::trailer_mismatch(
                "first_data_block_offset",
                trailer.first_data_block_offset,
                format!("the index names the first data block at {}", first.offset),
            ));
        }
        if last.offset as i64 != trailer.last_data_block_offset {
            return Err(FormatError::trailer_mismatch(
                "last_data_block_offset",
                trailer.last_data_block_offset,
                format!("the index names the last data block at {}", last.offset),
            ));
        }
    }
    Ok(None)
}

/// The load-on-open section being read: its blocks, one after another, each checked for its
/// type and recorded with its offset.
struct Section<'a> {
    dec: BlockDecoder,
    /// The file's bytes from an offset to its end, trailer included.
    end: (u64, &'a [u8]),
    blocks: Vec<LoadOnOpenBlock>,
}

impl Section<'_> {
    /// Reads the block at `offset`, which must be of an `allowed` type, into `payload`.
    fn read(
        &mut self,
        offset: u64,
        allowed: &[BlockType],
        payload: &mut Vec<u8>,
    ) -> Result<BlockHeader> {
        let (base, bytes) = self.end;
        let limit = bytes.len().saturating_sub(crate::trailer::TRAILER_SIZE);
        let h = self.dec.read_in(&bytes[..limit], base, offset, payload)?;
        if !allowed.contains(&h.block_type) {
            return Err(FormatError::corrupt(
                "load-on-open section",
                offset,
                format!(
                    "found a {} block where {} was expected",
                    h.block_type.name(),
                    allowed
                        .iter()
                        .map(|t| t.name())
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            ));
        }
        self.blocks.push(LoadOnOpenBlock { offset, header: h });
        Ok(h)
    }
}
