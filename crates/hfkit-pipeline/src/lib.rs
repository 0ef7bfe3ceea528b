//! The import pipeline, in folders by stage, as the data flows: sources → the mapping (rowkey
//! encoders, values, cells) → the import (regions, routing and sorting, bulk-load HFiles) →
//! and back out: exports and plans. Spec: `formats/import.md`, `formats/rowkey.md`.
//!
//! | stage | module | owns | prose |
//! |---|---|---|---|
//! | read | [`source`] | CSV/TSV (plain, gzip, zstd) inputs, in positioned batches | `import.md` §"Sources" |
//! | | [`source::parquet`] | Parquet row groups, projected | `import.md` §"Sources" |
//! | | [`source::columns`] | Arrow batches as text fields, column by column (records, or read in place by the import) | `import.md` §"Sources" |
//! | | `source::remote` | inputs on object storage: globs by listing, CSV streamed, Parquet by ranged reads | `storage.md`, `import.md` §"Sources" |
//! | | [`source::arrow`] | record batches handed in by a program (the Python package), rendered as Parquet's; their row keys | `import.md` §"Sources" |
//! | | [`source::input`] | an import's input files opened as batch readers, read ahead on threads in input order | `import.md` §"Sources" |
//! | map | [`mapping::rowkey`] | the rowkey spec language: parse once, compile against the input's columns, encode per row; its inverse | `rowkey.md` |
//! | | [`mapping::timestamp`] | timestamps from fields: epoch ms, epoch s, strftime formats | `schema.md` §"Timestamps" |
//! | | [`mapping::value`] | cell value encodings (`string`, `int64`, `double` as HBase's `Bytes.toBytes`) | `rowkey.md` §"Cell values" |
//! | | [`mapping::encode`] | a record → its cells: the mapping compiled, bound to a file's columns, run on batches in parallel; why a record is rejected | `import.md` §"Rejected records" |
//! | | [`mapping::typed`] | a table's typed columns and row key spec: stored values and keys shown as the schema typed them | `table.md` §"Typed values" |
//! | import | [`import`] | the driver, in phases: regions, outputs, read and encode, route and sort, write, report | `import.md` |
//! | | [`import::regions`] | the tables' regions from the splits or a sample of row keys; hot-region and row-key warnings | `schema.md` §"Splits" |
//! | | [`import::route`] | a store's cells straight to its file while they arrive in order, else to the sorter | `import.md` §"Lanes" |
//! | | [`import::sort`] | sorting cells within a memory budget, spilling runs, merging them | `import.md` §"Sort and spill" |
//! | | [`import::output`] | region-partitioned, rolling bulk-load HFiles, published all at once | `import.md` §"Output" |
//! | | [`import::remote_output`] | a bulk-load output published to object storage: streamed multipart uploads, completed together | `import.md` §"Output on object storage" |
//! | | [`import::retention`] | what HBase will not return of an import's cells: past TTL, beyond VERSIONS | `import.md` §"Cells hidden at import" |
//! | | [`import::dry_run`] | `import --dry-run`: the import's reading and encoding, nothing written | `import.md` |
//! | out | [`export`] | the mapping run backwards: a table's rows as the records an import reads back (CSV, Parquet) | `table.md` §"Export", `rowkey.md` §"Inverting a spec" |
//! | | [`export::cells`] | every cell of a table as CSV lines or Parquet rows | `table.md` §"Export" |
//! | | [`plan`] | `hfkit plan`: a sample through the import's encoders, counted per region, scaled; its charts | `import.md` §"Plan" |
//! | shared | [`error`], `quote`, [`sys`] | the stages' error enums; quoting in messages; what `/proc` says (peak RSS, memory, CPU time) | |
//!
//! Each stage has its own error enum; the import driver reports them with the file, line and
//! field at fault.

pub mod error;
pub mod export;
pub mod import;
pub mod mapping;
pub mod plan;
mod quote;
pub mod source;
pub mod sys;

pub use error::RowkeyError;
pub use mapping::rowkey::{FieldSource, RowkeyEncoder, RowkeySpec};
