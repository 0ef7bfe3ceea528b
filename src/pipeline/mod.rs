//! The import pipeline: sources → rowkey encoders → cells → bounded-memory sort → region
//! partitioning → bulk-load HFiles. Spec: `formats/import.md`.
//!
//! | module | owns |
//! |---|---|
//! | [`output`] | region-partitioned, rolling bulk-load HFiles, published all at once |
//! | [`source`] | CSV/TSV (plain, gzip, zstd) and Parquet inputs, in positioned batches |
//! | [`parquet_source`] | Parquet row groups, projected, rendered as CSV-equivalent text |
//! | [`sort`] | sorting cells within a memory budget, spilling runs, merging them |

pub mod output;
pub mod parquet_source;
pub mod sort;
pub mod source;
