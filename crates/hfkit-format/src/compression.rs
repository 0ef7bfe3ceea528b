//! Block compression: codec ids and the exact stream framing HBase writes.
//! Spec: `formats/hfile.md` §"Compression".
//!
//! Only the payload after the 33-byte block header is compressed; every block type is.
//!
//! ```text
//! GZ:                  one gzip member (RFC 1952), header 1f8b 0800 00000000 00 00, deflate level 6
//! SNAPPY, LZ4, ZSTD:   Hadoop block framing (BlockCompressorStream):
//!                        u32 rawLen | u32 compLen | compLen bytes of raw codec output
//!                      payloads above the codec's MAX_INPUT: one rawLen, then one
//!                      [compLen | bytes] per MAX_INPUT slice, then an empty group (u32 0)
//! ZSTD (Hadoop native ZStandardCodec): a plain zstd frame with no framing; read only,
//!                      recognised by the zstd magic 28 b5 2f fd at the start of the payload
//! ```
//!
//! The codecs are maintained crates (`flate2` on zlib, `snap`, `lz4_flex`, `zstd`); only the
//! framing is written here, because no crate implements Hadoop's block framing.

use std::io::{Read, Write};

use super::error::{FormatError, Result};

/// Hadoop's default codec buffer (`io.compression.codec.*.buffersize`).
const CODEC_BUFFER_SIZE: usize = 256 * 1024;
/// Largest input slice Hadoop's Snappy codec compresses as one chunk: buffer - (buffer/6 + 32).
pub const SNAPPY_MAX_INPUT: usize = CODEC_BUFFER_SIZE - (CODEC_BUFFER_SIZE / 6 + 32);
/// Largest input slice Hadoop's LZ4 codec compresses as one chunk: buffer - (buffer/255 + 16).
pub const LZ4_MAX_INPUT: usize = CODEC_BUFFER_SIZE - (CODEC_BUFFER_SIZE / 255 + 16);
/// Largest input slice HBase's zstd codec compresses as one chunk: buffer - (buffer/6 + 32).
pub const ZSTD_MAX_INPUT: usize = CODEC_BUFFER_SIZE - (CODEC_BUFFER_SIZE / 6 + 32);
/// zstd level HBase uses by default (`hbase.io.compress.zstd.level`).
pub const ZSTD_DEFAULT_LEVEL: i32 = 3;
/// zstd levels HBase's codec accepts (`ZstdCodec`, zstd-jni): 1 to 22.
pub const ZSTD_LEVELS: std::ops::RangeInclusive<i32> = 1..=22;
/// Deflate level of HBase's GZ codec by default (Hadoop's `zlib.compress.level`
/// DEFAULT_COMPRESSION, zlib's 6).
pub const GZ_DEFAULT_LEVEL: i32 = 6;
/// Deflate levels Hadoop's `zlib.compress.level` names (NO_COMPRESSION 0 to BEST_COMPRESSION 9).
pub const GZ_LEVELS: std::ops::RangeInclusive<i32> = 0..=9;
/// zstd frame magic, little-endian 0xFD2FB528.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// Most bytes a decompressed payload may claim, whatever its header says (2 GiB - 1).
pub const MAX_UNCOMPRESSED_SIZE: usize = i32::MAX as usize;

/// `Compression.Algorithm`. The ids are stored in the trailer: DO NOT CHANGE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Compression {
    Lzo,
    Gz,
    #[default]
    None,
    Snappy,
    Lz4,
    Bzip2,
    Zstd,
    Lzma,
    Brotli,
}

impl Compression {
    /// The codecs hfkit reads and writes.
    pub const SUPPORTED: [Compression; 5] = [
        Compression::None,
        Compression::Gz,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    /// Trailer id (ordinal of HBase's enum).
    pub const fn id(self) -> u32 {
        match self {
            Compression::Lzo => 0,
            Compression::Gz => 1,
            Compression::None => 2,
            Compression::Snappy => 3,
            Compression::Lz4 => 4,
            Compression::Bzip2 => 5,
            Compression::Zstd => 6,
            Compression::Lzma => 7,
            Compression::Brotli => 8,
        }
    }

    pub const fn from_id(id: u32) -> Option<Compression> {
        Some(match id {
            0 => Compression::Lzo,
            1 => Compression::Gz,
            2 => Compression::None,
            3 => Compression::Snappy,
            4 => Compression::Lz4,
            5 => Compression::Bzip2,
            6 => Compression::Zstd,
            7 => Compression::Lzma,
            8 => Compression::Brotli,
            _ => return None,
        })
    }

    /// HBase's upper-case name, as in the shell (`COMPRESSION => 'SNAPPY'`).
    pub const fn name(self) -> &'static str {
        match self {
            Compression::Lzo => "LZO",
            Compression::Gz => "GZ",
            Compression::None => "NONE",
            Compression::Snappy => "SNAPPY",
            Compression::Lz4 => "LZ4",
            Compression::Bzip2 => "BZIP2",
            Compression::Zstd => "ZSTD",
            Compression::Lzma => "LZMA",
            Compression::Brotli => "BROTLI",
        }
    }

    /// Parses a name case-insensitively (`gz`, `GZ`, `snappy`, ...).
    pub fn from_name(s: &str) -> Option<Compression> {
        let up = s.to_ascii_uppercase();
        (0..=8)
            .filter_map(Compression::from_id)
            .find(|c| c.name() == up || (up == "GZIP" && *c == Compression::Gz))
    }

    fn unsupported(self) -> FormatError {
        FormatError::Unsupported(format!("{} compression", self.name()))
    }

    /// Largest ratio of uncompressed to compressed bytes the codec can produce (with slack),
    /// used to refuse headers that claim more output than the input can justify.
    fn max_ratio(self) -> usize {
        match self {
            Compression::None => 1,
            Compression::Snappy => 64,
            Compression::Lz4 => 256,
            Compression::Gz => 1100,
            _ => 1 << 16,
        }
    }
}

/// Compresses block payloads with one codec, keeping codec state between blocks.
pub struct Compressor {
    codec: Compression,
    /// The codec's level (GZ; zstd's is in its context).
    level: i32,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    snappy: snap::raw::Encoder,
}

impl Compressor {
    /// A compressor for `codec` at HBase's default level; errors for codecs hfkit cannot
    /// write.
    pub fn new(codec: Compression) -> Result<Compressor> {
        Compressor::with_level(codec, None)
    }

    /// A compressor for `codec` at `level` (`None`: HBase's default): zstd 1 to 22
    /// (`hbase.io.compress.zstd.level`), GZ 0 to 9 (`zlib.compress.level`); the other codecs
    /// have no level in HBase, and one given is an error.
    pub fn with_level(codec: Compression, level: Option<i32>) -> Result<Compressor> {
        if !Compression::SUPPORTED.contains(&codec) {
            return Err(codec.unsupported());
        }
        let level = match (codec, level) {
            (Compression::Zstd, None) => ZSTD_DEFAULT_LEVEL,
            (Compression::Gz, None) => GZ_DEFAULT_LEVEL,
            (_, None) => 0,
            (Compression::Zstd, Some(l)) if ZSTD_LEVELS.contains(&l) => l,
            (Compression::Gz, Some(l)) if GZ_LEVELS.contains(&l) => l,
            (Compression::Zstd | Compression::Gz, Some(l)) => {
                let r = if codec == Compression::Zstd {
                    ZSTD_LEVELS
                } else {
                    GZ_LEVELS
                };
                return Err(FormatError::Invalid(format!(
                    "{} compression level {l}: expected {} to {}",
                    codec.name(),
                    r.start(),
                    r.end()
                )));
            }
            (_, Some(l)) => {
                return Err(FormatError::Invalid(format!(
                    "{} compression has no level (got {l})",
                    codec.name()
                )))
            }
        };
        let zstd = if codec == Compression::Zstd {
            let mut c = zstd::bulk::Compressor::new(level).map_err(|e| codec_err(codec, e))?;
            c.include_checksum(false).map_err(|e| codec_err(codec, e))?;
            c.include_contentsize(true)
                .map_err(|e| codec_err(codec, e))?;
            Some(c)
        } else {
            None
        };
        Ok(Compressor {
            codec,
            level,
            zstd,
            snappy: snap::raw::Encoder::new(),
        })
    }

    pub fn codec(&self) -> Compression {
        self.codec
    }

    /// Writes the framed compressed form of `raw` into `buf` from `at` and returns where it
    /// ends. `buf` is lengthened (with zeros) when it is too short and never shortened: a
    /// caller that keeps one buffer for its blocks (the block encoder) has the codecs write
    /// straight into it, with no zeroing and no copy per block. Bytes of `buf` past the
    /// returned end are unspecified.
    pub fn compress_at(&mut self, raw: &[u8], buf: &mut Vec<u8>, at: usize) -> Result<usize> {
        let codec = self.codec;
        match codec {
            Compression::None => {
                let end = at + raw.len();
                room(buf, end);
                buf[at..end].copy_from_slice(raw);
                Ok(end)
            }
            Compression::Gz => {
                let mut member = Vec::new();
                let mut enc = flate2::GzBuilder::new()
                    .operating_system(0)
                    .write(&mut member, flate2::Compression::new(self.level as u32));
                enc.write_all(raw).map_err(|e| codec_err(codec, e))?;
                enc.finish().map_err(|e| codec_err(codec, e))?;
                let end = at + member.len();
                room(buf, end);
                buf[at..end].copy_from_slice(&member);
                Ok(end)
            }
            Compression::Snappy | Compression::Lz4 | Compression::Zstd => {
                let max_input = match codec {
                    Compression::Snappy => SNAPPY_MAX_INPUT,
                    Compression::Lz4 => LZ4_MAX_INPUT,
                    _ => ZSTD_MAX_INPUT,
                };
                let mut end = at + 4;
                room(buf, end);
                buf[at..end].copy_from_slice(&(raw.len() as u32).to_be_bytes());
                for slice in raw.chunks(max_input) {
                    let data_at = end + 4;
                    let bound = self.bound(slice.len())?;
                    room(buf, data_at + bound);
                    let n = self.compress_chunk(slice, &mut buf[data_at..data_at + bound])?;
                    buf[end..data_at].copy_from_slice(&(n as u32).to_be_bytes());
                    end = data_at + n;
                }
                if raw.len() > max_input {
                    // BlockCompressorStream.finish() after a multi-chunk write emits an empty group.
                    room(buf, end + 4);
                    buf[end..end + 4].copy_from_slice(&[0; 4]);
                    end += 4;
                }
                Ok(end)
            }
            _ => Err(codec.unsupported()),
        }
    }

    /// The most bytes the codec writes for `len` input bytes.
    fn bound(&self, len: usize) -> Result<usize> {
        Ok(match self.codec {
            Compression::Snappy => snap::raw::max_compress_len(len),
            Compression::Lz4 => lz4_flex::block::get_maximum_output_size(len),
            Compression::Zstd => zstd::zstd_safe::compress_bound(len),
            other => return Err(other.unsupported()),
        })
    }

    /// Compresses one slice into `dst` (at least [`bound`](Self::bound) bytes); returns the
    /// bytes written.
    fn compress_chunk(&mut self, slice: &[u8], dst: &mut [u8]) -> Result<usize> {
        let codec = self.codec;
        match codec {
            Compression::Snappy => self
                .snappy
                .compress(slice, dst)
                .map_err(|e| codec_err(codec, e)),
            Compression::Lz4 => {
                lz4_flex::block::compress_into(slice, dst).map_err(|e| codec_err(codec, e))
            }
            _ => {
                let z = self.zstd.as_mut().ok_or_else(|| codec.unsupported())?;
                z.compress_to_buffer(slice, dst)
                    .map_err(|e| codec_err(codec, e))
            }
        }
    }
}

/// Lengthens `buf` to `len` bytes (zeros) if it is shorter.
fn room(buf: &mut Vec<u8>, len: usize) {
    if buf.len() < len {
        buf.resize(len, 0);
    }
}

/// Decompresses block payloads for one codec.
pub struct Decompressor {
    codec: Compression,
    zstd: Option<zstd::bulk::Decompressor<'static>>,
    snappy: snap::raw::Decoder,
}

impl Decompressor {
    pub fn new(codec: Compression) -> Result<Decompressor> {
        if !Compression::SUPPORTED.contains(&codec) {
            return Err(codec.unsupported());
        }
        let zstd = if codec == Compression::Zstd {
            Some(zstd::bulk::Decompressor::new().map_err(|e| codec_err(codec, e))?)
        } else {
            None
        };
        Ok(Decompressor {
            codec,
            zstd,
            snappy: snap::raw::Decoder::new(),
        })
    }

    pub fn codec(&self) -> Compression {
        self.codec
    }

    /// Appends to `out` exactly `raw_len` bytes decoded from the framed payload `input`, or
    /// fails. Never allocates more than `raw_len` (which must itself be plausible for the
    /// input's size) for the output.
    pub fn decompress(&mut self, input: &[u8], raw_len: usize, out: &mut Vec<u8>) -> Result<()> {
        let codec = self.codec;
        if raw_len > MAX_UNCOMPRESSED_SIZE
            || raw_len
                > input
                    .len()
                    .saturating_mul(codec.max_ratio())
                    .saturating_add(64)
        {
            return Err(FormatError::Codec {
                codec: codec.name(),
                detail: format!(
                    "{raw_len} uncompressed bytes cannot come from {} compressed bytes",
                    input.len()
                ),
            });
        }
        let start = out.len();
        match codec {
            Compression::None => {
                if input.len() != raw_len {
                    return Err(FormatError::Codec {
                        codec: codec.name(),
                        detail: format!("payload is {} bytes, header says {raw_len}", input.len()),
                    });
                }
                out.extend_from_slice(input);
            }
            Compression::Gz => {
                out.reserve(raw_len);
                let mut dec = flate2::read::MultiGzDecoder::new(input).take(raw_len as u64 + 1);
                dec.read_to_end(out).map_err(|e| codec_err(codec, e))?;
            }
            Compression::Zstd if input.starts_with(&ZSTD_MAGIC) => {
                out.reserve(raw_len);
                let dec =
                    zstd::stream::read::Decoder::new(input).map_err(|e| codec_err(codec, e))?;
                dec.take(raw_len as u64 + 1)
                    .read_to_end(out)
                    .map_err(|e| codec_err(codec, e))?;
            }
            Compression::Snappy | Compression::Lz4 | Compression::Zstd => {
                out.reserve(raw_len);
                self.decode_block_framing(input, raw_len, out)?;
            }
            _ => return Err(codec.unsupported()),
        }
        let produced = out.len() - start;
        if produced != raw_len {
            out.truncate(start);
            return Err(FormatError::Codec {
                codec: codec.name(),
                detail: format!("decompressed to {produced} bytes, header says {raw_len}"),
            });
        }
        Ok(())
    }

    /// Hadoop block framing: groups of [rawLen][compLen chunk]... until the input ends.
    fn decode_block_framing(
        &mut self,
        input: &[u8],
        raw_len: usize,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let codec = self.codec;
        let start = out.len();
        let mut pos = 0usize;
        let read_u32 = |pos: &mut usize| -> Result<usize> {
            let b = input
                .get(*pos..*pos + 4)
                .ok_or_else(|| FormatError::Codec {
                    codec: codec.name(),
                    detail: format!("block framing truncated at byte {}", *pos),
                })?;
            *pos += 4;
            Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
        };
        while pos < input.len() {
            let group_len = read_u32(&mut pos)?;
            let group_end = out.len() - start + group_len;
            if group_end > raw_len {
                return Err(FormatError::Codec {
                    codec: codec.name(),
                    detail: format!(
                        "framing group of {group_len} bytes overruns the {raw_len}-byte payload"
                    ),
                });
            }
            while out.len() - start < group_end {
                let clen = read_u32(&mut pos)?;
                let chunk = input
                    .get(pos..pos + clen)
                    .ok_or_else(|| FormatError::Codec {
                        codec: codec.name(),
                        detail: format!("chunk of {clen} bytes at byte {pos} overruns the payload"),
                    })?;
                pos += clen;
                let room = group_end - (out.len() - start);
                self.decompress_chunk(chunk, room, out)?;
            }
        }
        Ok(())
    }

    /// Decodes one raw codec chunk that must produce at most `room` bytes.
    fn decompress_chunk(&mut self, chunk: &[u8], room: usize, out: &mut Vec<u8>) -> Result<()> {
        let codec = self.codec;
        let at = out.len();
        match codec {
            Compression::Snappy => {
                let n = snap::raw::decompress_len(chunk).map_err(|e| codec_err(codec, e))?;
                if n > room {
                    return Err(too_big(codec, n, room));
                }
                out.resize(at + n, 0);
                self.snappy
                    .decompress(chunk, &mut out[at..])
                    .map_err(|e| codec_err(codec, e))?;
            }
            Compression::Lz4 => {
                out.resize(at + room, 0);
                let n = lz4_flex::block::decompress_into(chunk, &mut out[at..])
                    .map_err(|e| codec_err(codec, e))?;
                out.truncate(at + n);
            }
            Compression::Zstd => {
                let z = self.zstd.as_mut().ok_or_else(|| codec.unsupported())?;
                out.resize(at + room, 0);
                let n = z
                    .decompress_to_buffer(chunk, &mut out[at..])
                    .map_err(|e| codec_err(codec, e))?;
                out.truncate(at + n);
            }
            _ => return Err(codec.unsupported()),
        }
        if out.len() == at && !chunk.is_empty() && room > 0 {
            return Err(FormatError::Codec {
                codec: codec.name(),
                detail: "a chunk decoded to nothing".into(),
            });
        }
        Ok(())
    }
}

fn too_big(codec: Compression, n: usize, room: usize) -> FormatError {
    FormatError::Codec {
        codec: codec.name(),
        detail: format!("chunk decodes to {n} bytes where {room} remain"),
    }
}

fn codec_err(codec: Compression, e: impl std::fmt::Display) -> FormatError {
    FormatError::Codec {
        codec: codec.name(),
        detail: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The framed compressed form of `raw`, alone in a buffer.
    fn framed_form(c: &mut Compressor, raw: &[u8]) -> Vec<u8> {
        let mut buf = Vec::new();
        let end = c.compress_at(raw, &mut buf, 0).unwrap();
        buf.truncate(end);
        buf
    }

    fn sample(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| ((i * 7) % 251) as u8 ^ ((i / 1000) as u8))
            .collect()
    }

    #[test]
    fn round_trip_every_codec_and_size() {
        for codec in Compression::SUPPORTED {
            let mut c = Compressor::new(codec).unwrap();
            let mut d = Decompressor::new(codec).unwrap();
            for n in [
                0usize,
                1,
                100,
                65536,
                SNAPPY_MAX_INPUT,
                SNAPPY_MAX_INPUT + 1,
                600_000,
            ] {
                let raw = sample(n);
                let framed = framed_form(&mut c, &raw);
                let mut back = Vec::new();
                d.decompress(&framed, raw.len(), &mut back).unwrap();
                assert_eq!(back, raw, "{codec:?} {n}");
            }
        }
    }

    #[test]
    fn block_framing_layout() {
        let raw = sample(1000);
        let framed = framed_form(&mut Compressor::new(Compression::Snappy).unwrap(), &raw);
        assert_eq!(&framed[0..4], &1000u32.to_be_bytes());
        let clen = u32::from_be_bytes([framed[4], framed[5], framed[6], framed[7]]) as usize;
        assert_eq!(framed.len(), 8 + clen);
        // Multi-chunk: one rawLen, several chunks, one empty trailing group.
        let big = sample(LZ4_MAX_INPUT * 2 + 5);
        let framed = framed_form(&mut Compressor::new(Compression::Lz4).unwrap(), &big);
        assert_eq!(&framed[0..4], &(big.len() as u32).to_be_bytes());
        assert_eq!(&framed[framed.len() - 4..], &[0, 0, 0, 0]);
    }

    #[test]
    fn gzip_header_is_javas() {
        let framed = framed_form(&mut Compressor::new(Compression::Gz).unwrap(), b"hello");
        assert_eq!(&framed[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn raw_zstd_frame_is_read() {
        let raw = sample(5000);
        let frame = zstd::bulk::compress(&raw, 3).unwrap();
        let mut back = Vec::new();
        Decompressor::new(Compression::Zstd)
            .unwrap()
            .decompress(&frame, raw.len(), &mut back)
            .unwrap();
        assert_eq!(back, raw);
    }

    #[test]
    fn lies_and_garbage_are_errors() {
        for codec in Compression::SUPPORTED {
            let mut d = Decompressor::new(codec).unwrap();
            let mut out = Vec::new();
            assert!(
                d.decompress(&[1, 2, 3], 1 << 30, &mut out).is_err(),
                "{codec:?}"
            );
            assert!(
                d.decompress(&[0, 0, 0, 9, 0, 0, 0, 2, 0xff, 0xff], 9, &mut out)
                    .is_err(),
                "{codec:?}"
            );
            let framed = framed_form(&mut Compressor::new(codec).unwrap(), b"abcdefgh");
            assert!(
                d.decompress(&framed, 9, &mut out).is_err(),
                "{codec:?} wrong length"
            );
        }
    }
}
