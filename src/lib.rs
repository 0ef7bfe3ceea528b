//! hfkit: offline Apache HBase HFile v3 tooling.
//!
//! The crate is layered; each layer depends only on the ones above it in this list:
//!
//! - [`format`]: the HFile v3 byte format (cells, blocks, checksums, compression, data block
//!   encodings, block index, Bloom filters, FileInfo, trailer) and the store-file writer and reader.
//!   Its prose specification is `formats/hfile.md`.
//! - [`table`]: table schemas (TOML and HBase shell forms), family attributes and HBase's
//!   validation, region split points. Prose: `formats/schema.md`.
//! - [`pipeline`]: the import pipeline's per-record encoders: the rowkey spec language and cell
//!   value encodings. Prose: `formats/rowkey.md`.
//! - [`cli`]: the `hfkit` command line, a thin layer over the public API.
//!
//! Upper layers (table, import pipeline, merge reader, maintenance) are built on `format`.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod cli;
pub mod format;
pub mod pipeline;
pub mod table;
