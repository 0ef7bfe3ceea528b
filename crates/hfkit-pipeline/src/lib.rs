//! The import pipeline: sources → rowkey encoders → cells → bounded-memory sort → region
//! partitioning → bulk-load HFiles. Spec: `formats/import.md`, `formats/rowkey.md`.
//!
//! | module | owns | prose |
//! |---|---|---|
//! | [`source`] | CSV/TSV (plain, gzip, zstd) inputs, in positioned batches | `import.md` §"Sources" |
//! | [`parquet_source`] | Parquet row groups, projected | `import.md` §"Sources" |
//! | [`columns`] | Arrow batches as text fields, column by column (records, or read in place by the import) | `import.md` §"Sources" |
//! | `remote_input` | inputs on object storage: globs by listing, CSV streamed, Parquet by ranged reads | `storage.md`, `import.md` §"Sources" |
//! | [`arrow_input`] | record batches handed in by a program (the Python package), rendered as Parquet's; their row keys | `import.md` §"Sources" |
//! | [`rowkey`] | the rowkey spec language: parse once, compile against the input's columns, encode per row | `rowkey.md` |
//! | [`timestamp`] | timestamps from fields: epoch ms, epoch s, strftime formats | `schema.md` §"Timestamps" |
//! | [`value`] | cell value encodings (`string`, `int64`, `double` as HBase's `Bytes.toBytes`) | `rowkey.md` §"Cell values" |
//! | [`encode`] | a record → its cells: the mapping compiled, bound to a file's columns, run on batches in parallel; why a record is rejected | `import.md` §"Rejected records" |
//! | [`input`] | an import's input files opened as batch readers, read ahead on threads in input order | `import.md` §"Sources" |
//! | [`regions`] | the tables' regions from the splits or a sample of row keys; hot-region and row-key warnings | `schema.md` §"Splits" |
//! | [`route`] | a store's cells straight to its file while they arrive in order, else to the sorter | `import.md` §"Lanes" |
//! | [`sort`] | sorting cells within a memory budget, spilling runs, merging them | `import.md` §"Sort and spill" |
//! | [`import`] | the driver, in phases: regions, outputs, read and encode, route and sort, write, report | `import.md` |
//! | [`plan`] | `hfkit plan`: a sample through the import's encoders, counted per region, scaled | `import.md` §"Plan" |
//! | [`remote_output`] | a bulk-load output published to object storage: streamed multipart uploads, completed together | `import.md` §"Output on object storage" |
//! | [`output`] | region-partitioned, rolling bulk-load HFiles, published all at once | `import.md` §"Output" |
//! | [`retention`] | what HBase will not return of an import's cells: past TTL, beyond VERSIONS | `import.md` §"Cells hidden at import" |
//! | [`typed`] | a table's typed columns: stored values shown as the schema typed them | `table.md` §"Typed values" |
//! | [`export`] | the mapping run backwards: a table's rows as the records an import reads back (CSV, Parquet) | `table.md` §"Export", `rowkey.md` §"Inverting a spec" |
//! | [`sys`] | what `/proc` says: peak RSS, the machine's memory, CPU time | |
//!
//! Each stage has its own error enum; the import driver reports them with the file, line and
//! field at fault.

pub mod arrow_input;
pub mod cell_export;
pub mod columns;
pub mod dry_run;
pub mod encode;
pub mod error;
pub mod export;
pub mod import;
pub mod input;
pub mod output;
pub mod parquet_source;
pub mod plan;
mod quote;
pub mod regions;
mod remote_input;
pub mod remote_output;
pub mod retention;
pub mod route;
pub mod rowkey;
pub mod sort;
pub mod source;
pub mod sys;
pub mod timestamp;
pub mod typed;
pub mod value;

pub use error::RowkeyError;
pub use rowkey::{FieldSource, RowkeyEncoder, RowkeySpec};
