//! hfkit: bulk-load and maintain Apache HBase tables as files, offline.
//!
//! The crate is layered; each layer depends only on the ones above it in this list:
//!
//! - [`format`]: the HFile v3 byte format (cells, blocks, checksums, compression, data block
//!   encodings, block index, Bloom filters, FileInfo, trailer) and the store-file writer,
//!   reader and verifier. Prose: `formats/hfile.md`, `formats/encodings.md`, `formats/bloom.md`.
//! - [`table`]: table schemas (TOML and HBase shell forms), family attributes and HBase's
//!   validation, region split points, and table directories (manifest, atomic attach).
//!   Prose: `formats/schema.md`, `formats/table.md`.
//! - [`pipeline`]: the import pipeline: sources, rowkey encoders, cell values, bounded-memory
//!   sort, region-partitioned output. Prose: `formats/import.md`, `formats/rowkey.md`.
//! - [`read`]: Get and Scan over a store's HFiles with HBase's delete / version / TTL semantics.
//!   Prose: `formats/read.md`.
//! - [`hbase`]: HBase's own on-disk layout (root directories, tables, regions, store files,
//!   HFileLinks, split references, snapshots), read and written offline; uses `format`,
//!   `read` and `table`. Prose: `formats/hbase-layout.md`.
//! - [`cli`]: the `hfkit` command line, a thin layer over the public API.
//!
//! Beside the layers, [`heap`]: the index min-heap both k-way merges (`read`, `pipeline`) use.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod cli;
pub mod format;
pub mod hbase;
pub mod heap;
pub mod pipeline;
pub mod read;
pub mod table;

/// Where unit tests find HBase's fixtures (shared with the integration tests).
#[cfg(test)]
pub(crate) mod test_fixtures;
