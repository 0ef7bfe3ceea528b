//! The HFile v3 format layer: everything about bytes on disk, no directories or tables.
//!
//! | module | owns | spec section (`formats/hfile.md`) |
//! |---|---|---|
//! | [`bytes`] | big-endian cursor, VInt/VLong, compressed int | Primitive encodings |
//! | [`cell`] | KeyValue model, flat key, HBase order | Cells |
//! | [`checksum`] | CRC32C / CRC32 / NULL over chunks | Checksums |
//! | [`compression`] | codec ids and Hadoop block framing | Compression |
//! | [`block`] | 33-byte header, block types, encode/decode | Blocks |
//! | [`encoding`] | cell layouts inside data blocks | Data blocks, `formats/encodings.md` |
//! | [`proto`], [`trailer`], [`fileinfo`] | trailer and FileInfo | Trailer, FileInfo |
//! | [`bloom`] | compound Bloom filters: hashes, chunks, writer, reader | Bloom filters, `formats/bloom.md` |

pub mod block;
pub mod block_cache;
pub mod bloom;
pub mod bytes;
pub mod cell;
pub mod checksum;
pub mod compression;
pub mod encoding;
pub mod error;
pub mod fileinfo;
pub mod heap;
pub mod hex;
pub mod index;
pub mod inline;
pub mod proto;
pub mod reader;
pub mod text;
pub mod trailer;
pub mod verify;
pub mod writer;

pub use error::{FormatError, Result};
