//! The command line's definition: [`Cli`] (the global options) and [`Command`] (the commands,
//! each with its arguments from the module that runs it), and the `hfkit --help` text after
//! them. Spec: formats/storage.md §"Locations" (`--s3-endpoint`); the commands' own sections are
//! named by the modules that run them.

use clap::{Parser, Subcommand};

// The modules that run the commands, one `use` each (`super::{...}` would name the parent).
use super::hbase;
use super::hfile;
use super::import;
use super::maint;
use super::packaging;
use super::plan;
use super::read;
use super::table;

const AFTER_HELP: &str = "\
Exit codes:
  0  success
  1  bad input or a corrupt file (the message names the file and line, or the block offset)
  2  the command line is wrong
  3  import --table: the same import was already attached to the table (nothing done)

Cells on the command line and in cell files use the canonical text form, one cell per line:
  row_hex family_hex qualifier_hex timestamp type value_hex tags_hex [seqid]
with lowercase hex, '-' for empty bytes, and type one of Put, Delete, DeleteColumn,
DeleteFamily, DeleteFamilyVersion.

Every command's --help ends with examples that run as written from a checkout of hfkit, on the
bundled data (fixtures/seeds, fixtures/users.cells.txt). They build on each other: the first
two of `hfkit import --help` create the table /tmp/hfkit-users and the bulk-load directory
/tmp/hfkit-bulk most others use, and `hfkit hfile write --help` the file
/tmp/hfkit-sample.hfile the other hfile commands read.";

/// hfkit: bulk-load and maintain Apache HBase tables as files, offline.
#[derive(Debug, Parser)]
#[command(name = "hfkit", version, about, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// The S3 endpoint for s3:// locations (an S3-compatible store: MinIO, Ceph, a loopback
    /// test server; http:// allowed), for the commands that take them (formats/storage.md
    /// §"Locations"; refused by the others). Credentials and region come from the AWS
    /// environment variables or ~/.aws files.
    #[arg(long, global = true, value_name = "URL")]
    pub s3_endpoint: Option<String>,
    /// No progress (no bar on a terminal, no periodic lines otherwise) and, for an import, no
    /// summary. Warnings and errors are still printed.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inspect, verify and write single HFiles (HBase HFile v3).
    #[command(subcommand)]
    Hfile(hfile::HfileCommand),
    /// Import CSV/TSV/Parquet files into bulk-load HFiles (and optionally attach them).
    Import(Box<import::ImportArgs>),
    /// Before importing: split points and expected rows and cells per region for a sample of
    /// the input, hot regions flagged.
    Plan(Box<plan::PlanArgs>),
    /// Directory tables: create, describe, check.
    #[command(subcommand)]
    Table(table::TableCommand),
    /// Attach a bulk-load directory (DIR/<family>/<hfile>) to a table: all files become visible
    /// in one commit, or none; files crossing region boundaries are split.
    #[command(after_help = examples!(
        "hfkit attach /tmp/hfkit-users/indexes/users_by_email /tmp/hfkit-bulk/.indexes/users_by_email",
        "hfkit attach /tmp/hfkit-users /tmp/hfkit-bulk --json",
        "hfkit attach /tmp/hfkit-users /tmp/hfkit-bulk --no-split --ignore-unknown-families",
    ))]
    Attach {
        /// The table directory (or `s3://` URL).
        table: std::path::PathBuf,
        /// The bulk-load directory: DIR/<family>/<hfile> (`import --out`'s, or HBase's).
        dir: std::path::PathBuf,
        /// Machine-readable report.
        #[arg(long)]
        json: bool,
        /// Refuse (attach nothing) when a file straddles region boundaries, instead of
        /// splitting it.
        #[arg(long)]
        no_split: bool,
        /// Skip family directories the table does not have (counted in the report) instead of
        /// failing.
        #[arg(long)]
        ignore_unknown_families: bool,
        /// DIR holds region directories, each a bulk-load directory:
        /// DIR/<region>/<family>/<hfile>.
        #[arg(long)]
        region_dirs: bool,
        /// Refuse (attach nothing) when the load gives a region more than N files of one
        /// family (HBase's hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily, default 32).
        #[arg(long, value_name = "N")]
        max_files_per_region_family: Option<usize>,
        /// Attach even if the table records the import that wrote DIR (DIR/_hfkit-import-id)
        /// already.
        #[arg(long)]
        force: bool,
    },
    /// Read one row of a table directory (all families, or the --column ones).
    Get(read::GetArgs),
    /// Scan rows of a table directory across regions, in row order (or reversed).
    Scan(read::ScanArgs),
    /// HBase's own root directories (hbase.rootdir), offline: list, describe, verify, get,
    /// scan tables and snapshots.
    #[command(
        subcommand,
        after_help = "\
The examples of the hbase commands use two roots: /tmp/hbase-root, made from the bundled seed by
the first example of `hfkit hbase export-snapshot --help` (an HBase snapshot users_20240101 of
the table the README's \"Try it\" imports), and /tmp/hbase-live, an HBase root with live tables
(one copied from HDFS; hfkit's tests use the HBase-written fixture root
../shared/fixtures/hbase-layout/root1, with tables t1 and ns1:t2)."
    )]
    Hbase(hbase::HbaseCommand),
    /// Offline maintenance: compact, alter, snapshot, export.
    #[command(flatten)]
    Maint(maint::MaintCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(packaging::CompletionsArgs),
    /// Print hfkit's manual page (roff), or write one page per command into a directory.
    Man(packaging::ManArgs),
}
