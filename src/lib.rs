//! hfkit: bulk-load and maintain Apache HBase tables as files, offline.
//!
//! The library is a cargo workspace of layer crates. Each depends only on the ones above it
//! in this list, and the compiler holds the order (a crate cannot name one it does not
//! depend on):
//!
//! - [`format`] (`hfkit-format`): the HFile v3 byte format (cells, blocks, checksums,
//!   compression, data block encodings, block index, Bloom filters, FileInfo, trailer) and
//!   the store-file writer, reader and verifier; beside it, [`heap`], the index min-heap both
//!   k-way merges use. Prose: `formats/hfile.md`, `formats/encodings.md`, `formats/bloom.md`.
//! - [`read`] (`hfkit-read`): Get and Scan over a store's HFiles with HBase's delete /
//!   version / TTL semantics. Prose: `formats/read.md`.
//! - [`table`] (`hfkit-table`): table schemas (TOML and HBase shell forms), region split
//!   points, and table directories (manifest, atomic attach, reads, compaction, snapshots,
//!   export). Prose: `formats/schema.md`, `formats/table.md`.
//! - [`hbase`] (`hfkit-hbase`): HBase's own on-disk layout (root directories, regions,
//!   HFileLinks, split references, snapshots), read and written offline. Prose:
//!   `formats/hbase-layout.md`.
//! - [`pipeline`] (`hfkit-pipeline`): the import pipeline (sources, rowkey encoders,
//!   bounded-memory sort, region-partitioned output) and row and cell exports (CSV, Parquet).
//!   Prose: `formats/import.md`, `formats/rowkey.md`.
//! - [`cli`] (this crate): the `hfkit` command line, a thin layer over the crates above.
//!
//! A program that only reads or writes HFiles depends on `hfkit-format` alone; one that
//! imports depends on `hfkit-pipeline`; neither compiles clap or indicatif, and only the
//! pipeline compiles arrow and parquet.

pub use hfkit_format as format;
pub use hfkit_format::heap;
pub use hfkit_hbase as hbase;
pub use hfkit_pipeline as pipeline;
pub use hfkit_read as read;
pub use hfkit_storage as storage;
pub use hfkit_table as table;

pub mod cli;
