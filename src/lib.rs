//! hfkit: offline Apache HBase HFile v3 tooling.
//!
//! The crate is layered; each layer depends only on the ones above it in this list:
//!
//! - [`format`]: the HFile v3 byte format (cells, blocks, checksums, compression, data block
//!   encodings, block index, Bloom filters, FileInfo, trailer) and the store-file writer and reader.
//!   Its prose specification is `formats/hfile.md`.
//! - [`read`]: Get and Scan over a store's HFiles with HBase's delete / version / TTL semantics
//!   (`formats/read.md`).
//! - [`cli`]: the `hfkit` command line, a thin layer over the public API.
//!
//! Upper layers (table, import pipeline, merge reader, maintenance) are built on `format`.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod cli;
pub mod format;
pub mod read;
pub mod table;
