//! HFile blocks: the 33-byte header, block types, and the three stages of a block's bytes
//! (on disk → verified → decompressed payload). Spec: `formats/hfile.md` §"Blocks".
//!
//! ```text
//! +0   8  magic                          block type (DATABLK*, IDXLEAF2, ...)
//! +8   4  onDiskSizeWithoutHeader        on-disk payload + checksum bytes
//! +12  4  uncompressedSizeWithoutHeader  payload bytes before compression
//! +16  8  prevBlockOffset                previous block of the same type, -1 for the first
//! +24  1  checksumType                   0 NULL, 1 CRC32, 2 CRC32C
//! +25  4  bytesPerChecksum
//! +29  4  onDiskDataSizeWithHeader       33 + on-disk payload (checksums excluded)
//! +33     on-disk payload, then ceil(onDiskDataSizeWithHeader / bytesPerChecksum) u32 checksums
//! ```

use super::bytes::Cursor;
use super::checksum::{self, ChecksumType, CHECKSUM_SIZE};
use super::compression::{Compression, Compressor, Decompressor};
use super::error::{FormatError, Hex8, Result};

/// Size of the magic field.
pub const MAGIC_LEN: usize = 8;
/// Size of the block header: magic + two i32 sizes + i64 prev offset + u8 checksum type +
/// i32 bytes per checksum + i32 on-disk data size.
pub const HEADER_LEN: usize = MAGIC_LEN + 4 + 4 + 8 + 1 + 4 + 4;

/// `BlockType`. Magics are on disk: DO NOT CHANGE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockType {
    Data,
    EncodedData,
    LeafIndex,
    BloomChunk,
    Meta,
    IntermediateIndex,
    RootIndex,
    FileInfo,
    GeneralBloomMeta,
    DeleteFamilyBloomMeta,
}

impl BlockType {
    pub const ALL: [BlockType; 10] = [
        BlockType::Data,
        BlockType::EncodedData,
        BlockType::LeafIndex,
        BlockType::BloomChunk,
        BlockType::Meta,
        BlockType::IntermediateIndex,
        BlockType::RootIndex,
        BlockType::FileInfo,
        BlockType::GeneralBloomMeta,
        BlockType::DeleteFamilyBloomMeta,
    ];

    pub const fn magic(self) -> &'static [u8; MAGIC_LEN] {
        match self {
            BlockType::Data => b"DATABLK*",
            BlockType::EncodedData => b"DATABLKE",
            BlockType::LeafIndex => b"IDXLEAF2",
            BlockType::BloomChunk => b"BLMFBLK2",
            BlockType::Meta => b"METABLKc",
            BlockType::IntermediateIndex => b"IDXINTE2",
            BlockType::RootIndex => b"IDXROOT2",
            BlockType::FileInfo => b"FILEINF2",
            BlockType::GeneralBloomMeta => b"BLMFMET2",
            BlockType::DeleteFamilyBloomMeta => b"DFBLMET2",
        }
    }

    pub fn from_magic(magic: &[u8]) -> Option<BlockType> {
        BlockType::ALL.into_iter().find(|t| t.magic()[..] == *magic)
    }

    /// HBase's name for the type, as `hbase hfile` prints it.
    pub const fn name(self) -> &'static str {
        match self {
            BlockType::Data => "DATA",
            BlockType::EncodedData => "ENCODED_DATA",
            BlockType::LeafIndex => "LEAF_INDEX",
            BlockType::BloomChunk => "BLOOM_CHUNK",
            BlockType::Meta => "META",
            BlockType::IntermediateIndex => "INTERMEDIATE_INDEX",
            BlockType::RootIndex => "ROOT_INDEX",
            BlockType::FileInfo => "FILE_INFO",
            BlockType::GeneralBloomMeta => "GENERAL_BLOOM_META",
            BlockType::DeleteFamilyBloomMeta => "DELETE_FAMILY_BLOOM_META",
        }
    }

    /// Index into the writer's per-type previous-offset table. ENCODED_DATA shares DATA's
    /// chain, so plain and encoded data blocks link to each other.
    pub const fn chain_id(self) -> usize {
        match self {
            BlockType::Data | BlockType::EncodedData => 0,
            BlockType::LeafIndex => 1,
            BlockType::BloomChunk => 2,
            BlockType::Meta => 3,
            BlockType::IntermediateIndex => 4,
            BlockType::RootIndex => 5,
            BlockType::FileInfo => 6,
            BlockType::GeneralBloomMeta => 7,
            BlockType::DeleteFamilyBloomMeta => 8,
        }
    }

    /// Number of distinct chains.
    pub const CHAINS: usize = 9;

    pub const fn is_data(self) -> bool {
        matches!(self, BlockType::Data | BlockType::EncodedData)
    }
}

/// A decoded block header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockHeader {
    pub block_type: BlockType,
    pub on_disk_size_without_header: u32,
    pub uncompressed_size_without_header: u32,
    pub prev_block_offset: i64,
    pub checksum_type: ChecksumType,
    pub bytes_per_checksum: u32,
    pub on_disk_data_size_with_header: u32,
}

impl BlockHeader {
    /// Total bytes the block occupies in the file.
    pub fn on_disk_size_with_header(&self) -> u64 {
        HEADER_LEN as u64 + self.on_disk_size_without_header as u64
    }

    /// Bytes of on-disk (compressed) payload.
    pub fn on_disk_payload_len(&self) -> usize {
        self.on_disk_data_size_with_header as usize - HEADER_LEN
    }

    /// Parses and sanity-checks the header at the start of `bytes`, found at file `offset`.
    pub fn parse(bytes: &[u8], offset: u64) -> Result<BlockHeader> {
        let mut c = Cursor::new(bytes, offset, "block header");
        let magic = c.take(MAGIC_LEN)?;
        let block_type = BlockType::from_magic(magic).ok_or_else(|| {
            let mut m = [0u8; 8];
            m.copy_from_slice(magic);
            FormatError::BadMagic {
                offset,
                found: Hex8(m),
            }
        })?;
        let on_disk_size_without_header = c.i32()?;
        let uncompressed_size_without_header = c.i32()?;
        let prev_block_offset = c.i64()?;
        let ck = c.u8()?;
        let bytes_per_checksum = c.i32()?;
        let on_disk_data_size_with_header = c.i32()?;
        let bad = |detail: String| FormatError::corrupt("block header", offset, detail);
        let checksum_type = ChecksumType::from_code(ck)
            .ok_or_else(|| bad(format!("unknown checksum type {ck}")))?;
        if on_disk_size_without_header < 0 || uncompressed_size_without_header < 0 {
            return Err(bad("negative size".into()));
        }
        if bytes_per_checksum < HEADER_LEN as i32 {
            return Err(bad(format!(
                "bytesPerChecksum {bytes_per_checksum} below 33"
            )));
        }
        if (on_disk_data_size_with_header as i64) < HEADER_LEN as i64
            || on_disk_data_size_with_header as i64
                > HEADER_LEN as i64 + on_disk_size_without_header as i64
        {
            return Err(bad(format!(
                "onDiskDataSizeWithHeader {on_disk_data_size_with_header} inconsistent with onDiskSizeWithoutHeader {on_disk_size_without_header}"
            )));
        }
        let h = BlockHeader {
            block_type,
            on_disk_size_without_header: on_disk_size_without_header as u32,
            uncompressed_size_without_header: uncompressed_size_without_header as u32,
            prev_block_offset,
            checksum_type,
            bytes_per_checksum: bytes_per_checksum as u32,
            on_disk_data_size_with_header: on_disk_data_size_with_header as u32,
        };
        let sums = checksum::chunk_count(
            h.on_disk_data_size_with_header as usize,
            h.bytes_per_checksum,
        ) * CHECKSUM_SIZE;
        if h.on_disk_data_size_with_header as u64 + sums as u64 != h.on_disk_size_with_header() {
            return Err(bad(format!(
                "onDiskSizeWithoutHeader {} does not equal payload {} plus {} checksum bytes",
                h.on_disk_size_without_header,
                h.on_disk_payload_len(),
                sums
            )));
        }
        Ok(h)
    }

    /// Appends the 33 header bytes.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.block_type.magic());
        out.extend_from_slice(&self.on_disk_size_without_header.to_be_bytes());
        out.extend_from_slice(&self.uncompressed_size_without_header.to_be_bytes());
        out.extend_from_slice(&self.prev_block_offset.to_be_bytes());
        out.push(self.checksum_type.code());
        out.extend_from_slice(&self.bytes_per_checksum.to_be_bytes());
        out.extend_from_slice(&self.on_disk_data_size_with_header.to_be_bytes());
    }
}

/// Block-level settings shared by every block of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSettings {
    pub compression: Compression,
    /// The codec's level; `None`: HBase's default (`Compressor::with_level`).
    pub compression_level: Option<i32>,
    pub checksum_type: ChecksumType,
    pub bytes_per_checksum: u32,
}

impl Default for BlockSettings {
    fn default() -> Self {
        BlockSettings {
            compression: Compression::None,
            compression_level: None,
            checksum_type: ChecksumType::Crc32c,
            bytes_per_checksum: checksum::DEFAULT_BYTES_PER_CHECKSUM,
        }
    }
}

/// Serializes blocks: compresses the payload, fills the header, computes the checksums.
pub struct BlockEncoder {
    settings: BlockSettings,
    compressor: Compressor,
    /// The block being encoded, header then on-disk payload. Never shortened, so the codec
    /// writes into it directly ([`Compressor::compress_at`]); its length is not the block's.
    block: Vec<u8>,
    /// The block's checksums.
    sums: Vec<u8>,
    /// The header's bytes (a buffer kept from block to block).
    header: Vec<u8>,
}

/// What [`BlockEncoder::encode`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodedBlock {
    /// Bytes of the block (header + on-disk payload + checksums).
    pub on_disk_size_with_header: u32,
    /// Payload bytes before compression.
    pub uncompressed_size_without_header: u32,
}

impl BlockEncoder {
    pub fn new(settings: BlockSettings) -> Result<BlockEncoder> {
        if settings.bytes_per_checksum < HEADER_LEN as u32 {
            return Err(FormatError::Invalid(format!(
                "bytes per checksum must be at least {HEADER_LEN}, got {}",
                settings.bytes_per_checksum
            )));
        }
        Ok(BlockEncoder {
            settings,
            compressor: Compressor::with_level(settings.compression, settings.compression_level)?,
            block: Vec::new(),
            sums: Vec::new(),
            header: Vec::with_capacity(HEADER_LEN),
        })
    }

    pub fn settings(&self) -> BlockSettings {
        self.settings
    }

    /// Encodes a whole block: returns what it is and its bytes, in two pieces to be written one
    /// after the other (header with the compressed `payload`, then the checksums).
    pub fn encode(
        &mut self,
        block_type: BlockType,
        payload: &[u8],
        prev_block_offset: i64,
    ) -> Result<(EncodedBlock, [&[u8]; 2])> {
        if self.block.len() < HEADER_LEN {
            self.block.resize(HEADER_LEN, 0);
        }
        let data_len = self
            .compressor
            .compress_at(payload, &mut self.block, HEADER_LEN)?;
        let sums =
            checksum::chunk_count(data_len, self.settings.bytes_per_checksum) * CHECKSUM_SIZE;
        if data_len + sums > i32::MAX as usize || payload.len() > i32::MAX as usize {
            return Err(FormatError::Invalid(format!(
                "block of {} bytes exceeds 2 GiB",
                data_len + sums
            )));
        }
        let header = BlockHeader {
            block_type,
            on_disk_size_without_header: (data_len - HEADER_LEN + sums) as u32,
            uncompressed_size_without_header: payload.len() as u32,
            prev_block_offset,
            checksum_type: self.settings.checksum_type,
            bytes_per_checksum: self.settings.bytes_per_checksum,
            on_disk_data_size_with_header: data_len as u32,
        };
        let mut hb = std::mem::take(&mut self.header);
        hb.clear();
        header.write(&mut hb);
        self.block[..HEADER_LEN].copy_from_slice(&hb);
        self.header = hb;
        // Checksums cover the header and the on-disk payload.
        self.sums.clear();
        checksum::append_checksums(
            self.settings.checksum_type,
            self.settings.bytes_per_checksum,
            &self.block[..data_len],
            &mut self.sums,
        );
        let encoded = EncodedBlock {
            on_disk_size_with_header: (data_len + self.sums.len()) as u32,
            uncompressed_size_without_header: payload.len() as u32,
        };
        Ok((encoded, [&self.block[..data_len], &self.sums]))
    }
}

/// Reads blocks out of a whole file held in memory (or memory-mapped).
pub struct BlockDecoder {
    decompressor: Decompressor,
}

impl BlockDecoder {
    pub fn new(compression: Compression) -> Result<BlockDecoder> {
        Ok(BlockDecoder {
            decompressor: Decompressor::new(compression)?,
        })
    }

    /// Reads the header of the block at `offset` in `file`.
    pub fn header_at(file: &[u8], offset: u64) -> Result<BlockHeader> {
        Self::header_in(file, 0, offset)
    }

    /// [`BlockDecoder::header_at`] in `bytes`, the file's bytes from offset `base` on (a range
    /// read from object storage, or the whole file when `base` is 0); errors name file offsets.
    pub fn header_in(bytes: &[u8], base: u64, offset: u64) -> Result<BlockHeader> {
        let start = offset
            .checked_sub(base)
            .and_then(|at| usize::try_from(at).ok())
            .ok_or_else(|| FormatError::corrupt("block", offset, "offset beyond memory"))?;
        let bytes = bytes.get(start..).ok_or(FormatError::Truncated {
            what: "block header",
            offset,
            needed: HEADER_LEN as u64,
            available: 0,
        })?;
        let h = BlockHeader::parse(bytes, offset)?;
        if h.on_disk_size_with_header() > bytes.len() as u64 {
            return Err(FormatError::Truncated {
                what: "block",
                offset,
                needed: h.on_disk_size_with_header(),
                available: bytes.len() as u64,
            });
        }
        Ok(h)
    }

    /// Reads the block at `offset`: parses its header, verifies its checksums, decompresses
    /// its payload into `payload` (cleared first). Returns the header.
    pub fn read(&mut self, file: &[u8], offset: u64, payload: &mut Vec<u8>) -> Result<BlockHeader> {
        self.read_in(file, 0, offset, payload)
    }

    /// [`BlockDecoder::read`] in `bytes`, the file's bytes from offset `base` on.
    pub fn read_in(
        &mut self,
        bytes: &[u8],
        base: u64,
        offset: u64,
        payload: &mut Vec<u8>,
    ) -> Result<BlockHeader> {
        let h = Self::header_in(bytes, base, offset)?;
        // `header_in` checked that the block lies inside `bytes`.
        let start = (offset - base) as usize;
        let data_end = start + h.on_disk_data_size_with_header as usize;
        let block_end = start + h.on_disk_size_with_header() as usize;
        checksum::verify_checksums(
            h.checksum_type,
            h.bytes_per_checksum,
            &bytes[start..data_end],
            &bytes[data_end..block_end],
            offset,
        )?;
        payload.clear();
        self.decompressor
            .decompress(
                &bytes[start + HEADER_LEN..data_end],
                h.uncompressed_size_without_header as usize,
                payload,
            )
            .map_err(|e| FormatError::corrupt("block payload", offset, e.to_string()))?;
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_len_is_33() {
        assert_eq!(HEADER_LEN, 33);
    }

    #[test]
    fn encode_then_read_every_codec_and_checksum() {
        let payload: Vec<u8> = (0..40_000u32).map(|i| (i % 13) as u8).collect();
        for compression in Compression::SUPPORTED {
            for checksum_type in [
                ChecksumType::Null,
                ChecksumType::Crc32,
                ChecksumType::Crc32c,
            ] {
                let settings = BlockSettings {
                    compression,
                    checksum_type,
                    bytes_per_checksum: 512,
                    ..BlockSettings::default()
                };
                let mut enc = BlockEncoder::new(settings).unwrap();
                let mut file = vec![7u8; 10];
                // Twice: the second block is encoded in the buffer the first one left.
                for _ in 0..2 {
                    file.truncate(10);
                    let (_, parts) = enc.encode(BlockType::Data, &payload, -1).unwrap();
                    parts.iter().for_each(|p| file.extend_from_slice(p));
                }
                let (e, _) = enc.encode(BlockType::Data, &payload, -1).unwrap();
                assert_eq!(file.len(), 10 + e.on_disk_size_with_header as usize);
                let mut dec = BlockDecoder::new(compression).unwrap();
                let mut out = Vec::new();
                let h = dec.read(&file, 10, &mut out).unwrap();
                assert_eq!(out, payload);
                assert_eq!(h.prev_block_offset, -1);
                if checksum_type != ChecksumType::Null {
                    let mut bad = file.clone();
                    bad[50] ^= 0x40;
                    let err = dec.read(&bad, 10, &mut out).unwrap_err();
                    assert!(
                        matches!(err, FormatError::ChecksumMismatch { offset: 10, .. }),
                        "{err}"
                    );
                }
            }
        }
    }

    #[test]
    fn bad_headers_are_errors() {
        assert!(matches!(
            BlockHeader::parse(b"NOTABLOCK-------------------------", 5),
            Err(FormatError::BadMagic { offset: 5, .. })
        ));
        let mut h = Vec::new();
        BlockHeader {
            block_type: BlockType::Data,
            on_disk_size_without_header: 100,
            uncompressed_size_without_header: 96,
            prev_block_offset: -1,
            checksum_type: ChecksumType::Crc32c,
            bytes_per_checksum: 16384,
            on_disk_data_size_with_header: 129,
        }
        .write(&mut h);
        assert!(BlockHeader::parse(&h, 0).is_ok());
        assert!(
            BlockDecoder::header_at(&h, 0).is_err(),
            "block longer than file"
        );
        h[24] = 9;
        assert!(BlockHeader::parse(&h, 0).is_err());
    }
}
