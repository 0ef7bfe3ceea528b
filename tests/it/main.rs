//! hfkit's integration tests, in one test binary (one link of arrow and parquet instead of one
//! per file). Each module is one area; `common` holds what they share (the fixture lookup, the
//! `hfkit` runner, scratch directories, the layout checker).

// Tests: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

mod attach_options;
mod attach_written;
mod bloom_end_to_end;
mod cli;
mod damaged_files;
mod export_roundtrip;
mod formats_docs;
mod hbase_fixtures;
mod hbase_layout;
mod hbase_mob;
mod hbase_writer_options;
mod house;
mod import_cell_ttl;
mod import_changes;
mod import_dry_run;
mod import_errors;
mod import_index;
mod import_lanes;
mod import_mapping;
mod import_matrix;
mod import_reruns;
mod import_seeds;
mod import_spill_parquet;
mod import_tables;
mod import_timestamps;
mod interrupt;
mod kill;
mod leftovers;
mod maintenance;
mod progress;
mod proptest_hfile;
mod ranged_read;
mod read_model;
mod read_semantics;
mod reader_garbage;
mod readme;
mod s3_faults;
mod s3_hbase_root;
mod s3_io;
mod s3_read;
mod s3_table;
mod s3_tls;
mod table_attach;
mod table_create;
mod table_read;
#[cfg(unix)]
mod table_symlinks;
mod typed_values;
