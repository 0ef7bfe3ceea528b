//! `hfkit compact`, `hfkit table alter` (alias `hfkit alter`), `hfkit snapshot ...` and `hfkit export`: offline
//! maintenance over `table::compact`, `table::snapshot` and `table::export`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;

use super::error::{CliError, EXIT_OK};
use super::hfile::{bloom_arg, compression_arg, encoding_arg};
use crate::format::cell::now_ms;
use crate::pipeline::export::cells::{export_cells_as, ExportFormat};
use crate::table::compact::{CompactOptions, FamilyChanges, StoreCompaction};
use crate::table::directory::Table;
use crate::table::export::ExportReport;
use crate::table::schema::{AttrError, AttrValue, FamilySchema};
use crate::table::{BloomFilterKind, KeepDeletedCells, TableSchema};

#[derive(Debug, Subcommand)]
pub enum MaintCommand {
    /// Compact store files. Minor (default): HBase's ratio-based selection per store (at least
    /// 3 files, at most 10, ratio 1.2); a selection of every file of a store drops delete
    /// markers as a major compaction does. --major: every file, one output per store, deleted,
    /// expired and excess versions dropped. One commit for the whole run.
    #[command(after_help = examples!(
        "hfkit compact /tmp/hfkit-users --family i --all",
        "hfkit compact /tmp/hfkit-users --major --json",
    ))]
    Compact {
        /// The table directory (or `s3://` URL).
        table: PathBuf,
        /// Every file of each store, one output per store: deleted, expired and excess versions
        /// dropped, delete markers too.
        #[arg(long)]
        major: bool,
        /// Only this region (id, as `table describe` shows).
        #[arg(long)]
        region: Option<String>,
        /// Only this family.
        #[arg(long)]
        family: Option<String>,
        /// Minor: every file of each store instead of the ratio selection.
        #[arg(long)]
        all: bool,
        /// "Now" for TTL, epoch ms (default: the clock). Also `--now`, as get and scan.
        #[arg(long, value_name = "MS", alias = "now")]
        now_ms: Option<i64>,
        /// Machine-readable report: the manifest version committed and each store's inputs,
        /// cells in and out.
        #[arg(long)]
        json: bool,
    },
    /// Change a family's settings (same as `hfkit table alter`).
    #[command(hide = true)]
    Alter(AlterArgs),
    /// Snapshots: saved manifest versions that pin their files (no data is copied).
    #[command(subcommand)]
    Snapshot(SnapshotCommand),
    /// Export the table (or a snapshot): --to DIR a checked table copy (hard links or copies);
    /// --bulkload DIR a DIR/<family>/<hfile> tree for `hbase completebulkload`; --format csv or
    /// parquet with --to FILE: every cell a read returns, one per line / row; add --rows
    /// --schema S.toml for one record per row key with the fields of S's import mapping, which
    /// `hfkit import --schema S.toml` reads back into the same cells.
    #[command(after_help = examples!(
        "hfkit export /tmp/hfkit-users --format csv --rows --schema fixtures/seeds/users.toml --to /tmp/hfkit-users.csv --threads 2",
        "hfkit export /tmp/hfkit-users --format parquet --to /tmp/hfkit-users-cells.parquet --threads 2",
        "hfkit export /tmp/hfkit-users --bulkload /tmp/hfkit-users-bulk",
        "hfkit export /tmp/hfkit-users --to /tmp/hfkit-users-copy --json",
    ))]
    Export {
        /// The table directory (or `s3://` URL).
        table: PathBuf,
        /// Export this snapshot of the table instead of its live contents.
        #[arg(long)]
        snapshot: Option<String>,
        /// Destination: a table directory, or with --format the output file.
        #[arg(long, conflicts_with = "bulkload")]
        to: Option<PathBuf>,
        /// A new directory DIR/<family>/<hfile> for `hbase completebulkload` (one file per
        /// region and family).
        #[arg(long)]
        bulkload: Option<PathBuf>,
        /// Write every cell (or with --rows every row) to the file --to in this format.
        #[arg(long, value_enum, requires = "to")]
        format: Option<FormatArg>,
        /// With --format: one record per row key (newest version of each column) through the
        /// import mapping of --schema, instead of one per cell.
        #[arg(long, requires_all = ["format", "schema"])]
        rows: bool,
        /// The schema (TOML) whose [rowkey] spec and [[column]]s --rows inverts: the one the
        /// table was imported with.
        #[arg(long, requires = "rows")]
        schema: Option<PathBuf>,
        /// "Now" for TTL in cell exports, epoch ms (default: the clock). Also `--now`, as get
        /// and scan.
        #[arg(long, value_name = "MS", alias = "now")]
        now_ms: Option<i64>,
        /// With --format: threads that read and encode regions, each region whole to one
        /// (default: all cores). The file is the same for any number.
        #[arg(long, requires = "format")]
        threads: Option<usize>,
        /// With --format csv (cells): every value as stored (toStringBinary text), also those
        /// of the columns the table's schema typed, which are otherwise shown as their type
        /// shows them (`377`, not `\x00...\x01y`), as get and scan show them.
        #[arg(long, requires = "format", conflicts_with = "rows")]
        raw_values: bool,
        /// Machine-readable report: what was written, where, from which manifest version.
        #[arg(long)]
        json: bool,
    },
}

/// `hfkit table alter`: change a family's settings (a new manifest version). Files already
/// written keep their format; later attaches and compactions use the new settings.
#[derive(Debug, clap::Args)]
#[command(after_help = examples!(
    "hfkit table alter /tmp/hfkit-users --family s --compression ZSTD --versions 5",
    "hfkit table alter /tmp/hfkit-users --family h --ttl FOREVER --json",
    "hfkit table alter /tmp/hfkit-users --family s --configuration io.storefile.bloom.error.rate=0.001 --compress-tags false",
))]
pub struct AlterArgs {
    /// The table directory (or `s3://` URL).
    table: PathBuf,
    /// The family to change.
    #[arg(long)]
    family: String,
    /// NONE, GZ, SNAPPY, LZ4, ZSTD.
    #[arg(long)]
    compression: Option<String>,
    /// NONE, PREFIX, DIFF, FAST_DIFF, ROW_INDEX_V1.
    #[arg(long)]
    encoding: Option<String>,
    /// NONE, ROW, ROWCOL, ROWPREFIX_FIXED_LENGTH:<n> (or rowprefix:<n>).
    #[arg(long)]
    bloom: Option<String>,
    /// BLOCKSIZE: bytes, or a size as the schema and the HBase shell write it (`64KB`, `1MB`).
    #[arg(long)]
    block_size: Option<String>,
    /// VERSIONS: how many versions of a cell reads return and compactions keep.
    #[arg(long)]
    versions: Option<u32>,
    /// MIN_VERSIONS: versions kept even past TTL.
    #[arg(long)]
    min_versions: Option<u32>,
    /// TTL: seconds, FOREVER, or a duration as the schema and the HBase shell write it
    /// (`7 DAYS`, `90 MINUTES`).
    #[arg(long)]
    ttl: Option<String>,
    /// KEEP_DELETED_CELLS: whether deleted cells stay readable by time-range reads.
    #[arg(long, value_parser = keep_deleted_cells_arg())]
    keep_deleted_cells: Option<KeepDeletedCells>,
    /// COMPRESS_TAGS: whether files with tags compress them (HBase's default: true).
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    compress_tags: Option<bool>,
    /// Set a family CONFIGURATION key, as HBase's `CONFIGURATION => {'KEY' => 'VALUE'}`:
    /// io.storefile.bloom.block.size, io.storefile.bloom.error.rate,
    /// io.storefile.bloom.max.fold, hfile.index.block.max.size, hfile.index.block.min.entries,
    /// hbase.io.compress.zstd.level change the files written (checked here); others are kept.
    /// Repeatable.
    #[arg(long = "configuration", value_name = "KEY=VALUE")]
    configuration: Vec<String>,
    /// Remove a family CONFIGURATION key. Repeatable.
    #[arg(long = "unset-configuration", value_name = "KEY")]
    unset_configuration: Vec<String>,
    /// Machine-readable report: the family's settings before and after, the manifest version.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
pub enum SnapshotCommand {
    /// Save the live manifest as snapshot NAME.
    #[command(after_help = examples!("hfkit snapshot create /tmp/hfkit-users --snapshot before-cleanup"))]
    Create {
        /// The table directory (or `s3://` URL).
        table: PathBuf,
        #[command(flatten)]
        name: SnapshotName,
        /// Machine-readable report.
        #[arg(long)]
        json: bool,
    },
    /// List snapshots.
    #[command(after_help = examples!(
        "hfkit snapshot list /tmp/hfkit-users",
        "hfkit snapshot list /tmp/hfkit-users --json",
    ))]
    List {
        /// The table directory (or `s3://` URL).
        table: PathBuf,
        /// Machine-readable list.
        #[arg(long)]
        json: bool,
    },
    /// Delete snapshot NAME; files nothing else names are removed.
    #[command(after_help = examples!("hfkit snapshot delete /tmp/hfkit-users --snapshot before-cleanup"))]
    Delete {
        /// The table directory (or `s3://` URL).
        table: PathBuf,
        #[command(flatten)]
        name: SnapshotName,
        /// Machine-readable report: the snapshot and the files removed.
        #[arg(long)]
        json: bool,
    },
    /// Make snapshot NAME the live contents again (one commit).
    #[command(after_help = examples!("hfkit snapshot restore /tmp/hfkit-users --snapshot before-cleanup"))]
    Restore {
        /// The table directory (or `s3://` URL).
        table: PathBuf,
        #[command(flatten)]
        name: SnapshotName,
        /// Machine-readable report: the manifest version committed, its files, the files
        /// removed.
        #[arg(long)]
        json: bool,
    },
    /// Create a new table at NEW_DIR from snapshot NAME (hard links or copies).
    #[command(after_help = examples!(
        "hfkit snapshot clone /tmp/hfkit-users /tmp/hfkit-users-clone --snapshot before-cleanup --table-name app:users_clone",
    ))]
    Clone {
        /// The table directory.
        table: PathBuf,
        /// The new table directory (must not exist).
        new_dir: PathBuf,
        /// The older form `TABLE NAME NEW_DIR`: NEW_DIR after the snapshot's name.
        #[arg(hide = true, value_name = "NEW_DIR")]
        old_new_dir: Option<PathBuf>,
        /// The snapshot to clone (needed but in the older form).
        #[arg(long = "snapshot", value_name = "NAME")]
        snapshot: Option<String>,
        /// Table name in the new manifest (default: the same). Also `--name`, its older
        /// spelling.
        #[arg(long = "table-name", alias = "name", value_name = "NS:TABLE")]
        table_name: Option<String>,
        /// Machine-readable report: the new table's directory, name, manifest version, files.
        #[arg(long)]
        json: bool,
    },
}

/// The snapshot a command acts on: `--snapshot NAME`, as every command that reads a snapshot
/// takes it, or NAME after TABLE (the older form, kept).
#[derive(Debug, Args)]
pub struct SnapshotName {
    /// The snapshot's name.
    #[arg(
        long = "snapshot",
        value_name = "NAME",
        required_unless_present = "name",
        conflicts_with = "name"
    )]
    snapshot: Option<String>,
    /// The older form of --snapshot: NAME after TABLE.
    #[arg(hide = true)]
    name: Option<String>,
}

impl SnapshotName {
    fn get(self) -> Result<String, CliError> {
        self.snapshot
            .or(self.name)
            .ok_or_else(|| CliError::usage("give --snapshot NAME"))
    }
}

/// `--keep-deleted-cells`: `false`, `true` or `ttl`, listed in `--help`.
fn keep_deleted_cells_arg() -> impl TypedValueParser<Value = KeepDeletedCells> {
    PossibleValuesParser::new(["false", "true", "ttl"]).try_map(|s| s.parse::<KeepDeletedCells>())
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FormatArg {
    Csv,
    Parquet,
}

fn open(dir: &Path) -> Result<Table, CliError> {
    Table::open(dir).map_err(|e| CliError::failure(format!("{}: {e}", dir.display())))
}

fn fail(dir: &Path) -> impl Fn(crate::table::TableError) -> CliError + '_ {
    move |e| CliError::failure(format!("{}: {e}", dir.display()))
}

fn print_json(out: &mut dyn Write, v: &serde_json::Value) -> Result<(), CliError> {
    serde_json::to_writer_pretty(&mut *out, v)?;
    writeln!(out)?;
    Ok(())
}

pub fn run(cmd: MaintCommand, out: &mut dyn Write) -> Result<i32, CliError> {
    match cmd {
        MaintCommand::Compact {
            table,
            major,
            region,
            family,
            all,
            now_ms: now,
            json,
        } => {
            let t = open(&table)?;
            let opts = CompactOptions {
                major,
                region,
                family,
                all_files: all,
                now_ms: now.unwrap_or_else(now_ms),
                ..CompactOptions::default()
            };
            let r = t
                .compact_with_progress(&opts, &mut |s: &StoreCompaction| {
                    if super::progress::quiet() {
                        return;
                    }
                    note!(
                        "compacted {}/{}: {} files, {} cells -> {} cells ({} markers) in {} ms",
                        s.region,
                        s.family,
                        s.inputs.len(),
                        s.input_cells,
                        s.output_cells,
                        s.output_markers,
                        s.elapsed_ms
                    );
                })
                .map_err(fail(&table))?;
            if json {
                let v = serde_json::to_value(&r).map_err(|e| CliError::failure(e.to_string()))?;
                print_json(out, &v)?;
            } else {
                match r.version {
                    None if major => writeln!(
                        out,
                        "nothing to compact (a store of one file that a major compaction \
                         wrote under the family's current settings, no cell past its TTL, is \
                         left as it is)"
                    )?,
                    None => writeln!(out, "nothing to compact")?,
                    Some(v) => writeln!(
                        out,
                        "compacted {} stores ({} files -> {}) as manifest version {v}; {} files removed",
                        r.stores.len(),
                        r.stores.iter().map(|s| s.inputs.len()).sum::<usize>(),
                        r.stores.iter().filter(|s| s.output.is_some()).count(),
                        r.garbage_removed
                    )?,
                }
            }
            Ok(EXIT_OK)
        }
        MaintCommand::Alter(AlterArgs {
            table,
            family,
            compression,
            encoding,
            bloom,
            block_size,
            versions,
            min_versions,
            ttl,
            keep_deleted_cells,
            compress_tags,
            configuration,
            unset_configuration,
            json,
        }) => {
            let mut conf = Vec::new();
            for kv in &configuration {
                let (k, v) = kv.split_once('=').ok_or_else(|| {
                    CliError::usage(format!("--configuration '{kv}': expected KEY=VALUE"))
                })?;
                if k.trim().is_empty() {
                    return Err(CliError::usage(format!("--configuration '{kv}': no key")));
                }
                conf.push((k.trim().to_string(), Some(v.trim().to_string())));
            }
            conf.extend(unset_configuration.iter().map(|k| (k.clone(), None)));
            // TTL and BLOCKSIZE read by the schema's own attribute parser: the same forms and
            // ranges as a schema file (`formats/schema.md`).
            let attribute = |flag: &str, name: &str, v: &str| {
                let mut f = FamilySchema::new("-");
                f.set_attribute(name, &AttrValue::Str(v.to_string()))
                    .map(|()| f)
                    .map_err(|e| {
                        let why = match e {
                            AttrError::Invalid(why) => why,
                            AttrError::Unknown => format!("not a family attribute {name}"),
                        };
                        CliError::usage(format!("--{flag} '{v}': {why}"))
                    })
            };
            let ttl_seconds = match ttl.as_deref() {
                None => None,
                Some(v) => Some(attribute("ttl", "TTL", v)?.ttl_seconds),
            };
            let block_size = match block_size.as_deref() {
                None => None,
                Some(v) => Some(attribute("block-size", "BLOCKSIZE", v)?.block_size),
            };
            let changes = FamilyChanges {
                compression: compression.as_deref().map(compression_arg).transpose()?,
                data_block_encoding: encoding.as_deref().map(encoding_arg).transpose()?,
                bloom_filter: match bloom.as_deref() {
                    Some(b) => Some(BloomFilterKind::from(bloom_arg(b)?)),
                    None => None,
                },
                block_size,
                versions,
                min_versions,
                ttl_seconds,
                keep_deleted_cells,
                compress_tags,
                configuration: conf,
            };
            let t = open(&table)?;
            let f = t.alter(&family, &changes).map_err(fail(&table))?;
            let version = t.manifest().map_err(fail(&table))?.version;
            if json {
                let v = json!({"version": version, "family": f});
                print_json(out, &v)?;
            } else {
                writeln!(out, "{} (manifest version {version})", f.describe())?;
            }
            Ok(EXIT_OK)
        }
        MaintCommand::Snapshot(cmd) => snapshot(cmd, out),
        MaintCommand::Export {
            table,
            snapshot,
            to,
            bulkload,
            format,
            rows,
            schema,
            now_ms: now,
            threads,
            raw_values,
            json,
        } => {
            let t = open(&table)?;
            let snap = snapshot.as_deref();
            let threads = threads.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
            });
            if let (true, Some(schema), Some(file), Some(f)) = (rows, &schema, &to, format) {
                let export = RowExport {
                    schema,
                    snapshot: snap,
                    format: f,
                    file,
                    now,
                    threads,
                };
                return export_rows(&t, &table, &export, json, out);
            }
            let r: ExportReport = match (to, bulkload, format) {
                (Some(to), None, None) => t.export_table(snap, &to).map_err(fail(&table))?,
                (None, Some(dir), None) => t.export_bulkload(snap, &dir).map_err(fail(&table))?,
                (Some(file), None, Some(f)) => {
                    let format = match f {
                        FormatArg::Csv => ExportFormat::Csv,
                        FormatArg::Parquet => ExportFormat::Parquet,
                    };
                    let now = now.unwrap_or_else(now_ms);
                    if format == ExportFormat::Parquet {
                        crate::pipeline::sys::keep_freed_memory();
                    }
                    let scope = Default::default();
                    export_cells_as(&t, snap, format, &file, now, &scope, threads, raw_values)
                        .map_err(|e| CliError::failure(format!("{}: {e}", table.display())))?
                }
                _ => {
                    return Err(CliError::usage(
                        "export needs --to DIR, --bulkload DIR, or --format csv|parquet --to FILE",
                    ))
                }
            };
            if json {
                let v = serde_json::to_value(&r).map_err(|e| CliError::failure(e.to_string()))?;
                print_json(out, &v)?;
            } else {
                writeln!(
                    out,
                    "exported manifest version {}{} to {}: {} files, {} cells, {} bytes",
                    r.version,
                    snapshot_suffix(r.snapshot.as_deref()),
                    r.path.display(),
                    r.files,
                    r.cells,
                    r.bytes
                )?;
            }
            Ok(EXIT_OK)
        }
    }
}

/// What `export --rows` was asked for.
struct RowExport<'a> {
    schema: &'a Path,
    snapshot: Option<&'a str>,
    format: FormatArg,
    file: &'a Path,
    now: Option<i64>,
    threads: usize,
}

/// `export --rows --schema S`: one record per row key through S's import mapping.
fn export_rows(
    t: &Table,
    table: &Path,
    export: &RowExport<'_>,
    json: bool,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let RowExport {
        schema,
        snapshot,
        format,
        file,
        now,
        threads,
    } = *export;
    let parsed = TableSchema::from_file(schema).map_err(|e| CliError::failure(e.to_string()))?;
    let format = match format {
        FormatArg::Csv => ExportFormat::Csv,
        FormatArg::Parquet => ExportFormat::Parquet,
    };
    let r = crate::pipeline::export::export_rows(
        t,
        &parsed.mapping,
        format,
        file,
        snapshot,
        now.unwrap_or_else(now_ms),
        &Default::default(),
        threads,
    )
    .map_err(|e| CliError::failure(format!("{}: {e}", table.display())))?;
    let c = &r.counts;
    if c.unmapped_cells > 0 {
        note!(
            "hfkit: warning: {} cells in columns {} does not map were not exported ({} rows had only such cells)",
            c.unmapped_cells,
            schema.display(),
            c.rows_skipped
        );
    }
    if c.untimed_cells > 0 {
        note!(
            "hfkit: warning: the timestamps of {} cells are not in the export (their columns have a fixed timestamp that differs, or the import time); a re-import stamps them as the schema says",
            c.untimed_cells
        );
    }
    if json {
        let v = serde_json::to_value(&r).map_err(|e| CliError::failure(e.to_string()))?;
        print_json(out, &v)?;
    } else {
        let names: Vec<&str> = r.fields.iter().map(|f| f.name.as_str()).collect();
        writeln!(
            out,
            "exported manifest version {}{} to {}: {} rows ({} cells) with fields {}, {} bytes",
            r.version,
            snapshot_suffix(r.snapshot.as_deref()),
            r.path.display(),
            c.rows,
            c.cells,
            names.join(", "),
            r.bytes
        )?;
    }
    Ok(EXIT_OK)
}

fn snapshot(cmd: SnapshotCommand, out: &mut dyn Write) -> Result<i32, CliError> {
    match cmd {
        SnapshotCommand::Create { table, name, json } => {
            let name = name.get()?;
            let t = open(&table)?;
            let s = t.snapshot_create(&name).map_err(fail(&table))?;
            if json {
                let v = serde_json::to_value(&s).map_err(|e| CliError::failure(e.to_string()))?;
                print_json(out, &v)?;
            } else {
                writeln!(
                    out,
                    "snapshot {} of manifest version {}: {} files, {} cells, {} bytes",
                    s.name, s.manifest_version, s.files, s.cells, s.bytes
                )?;
            }
        }
        SnapshotCommand::List { table, json } => {
            let t = open(&table)?;
            let list = t.snapshots().map_err(fail(&table))?;
            if json {
                let v =
                    serde_json::to_value(&list).map_err(|e| CliError::failure(e.to_string()))?;
                print_json(out, &v)?;
            } else {
                for s in list {
                    writeln!(
                        out,
                        "{}\tversion {}\tcreated_ms {}\t{} files\t{} cells\t{} bytes",
                        s.name, s.manifest_version, s.created_ms, s.files, s.cells, s.bytes
                    )?;
                }
            }
        }
        SnapshotCommand::Delete { table, name, json } => {
            let name = name.get()?;
            let t = open(&table)?;
            let n = t.snapshot_delete(&name).map_err(fail(&table))?;
            if json {
                print_json(out, &json!({"deleted": name, "files_removed": n}))?;
            } else {
                writeln!(out, "deleted snapshot {name}; {n} files removed")?;
            }
        }
        SnapshotCommand::Restore { table, name, json } => {
            let name = name.get()?;
            let t = open(&table)?;
            let r = t.snapshot_restore(&name).map_err(fail(&table))?;
            if json {
                print_json(
                    out,
                    &json!({"restored": name, "version": r.version, "files": r.files,
                            "files_removed": r.garbage_removed}),
                )?;
            } else {
                writeln!(
                    out,
                    "restored snapshot {name} as manifest version {} ({} files); {} files removed",
                    r.version, r.files, r.garbage_removed
                )?;
            }
        }
        SnapshotCommand::Clone {
            table,
            new_dir,
            old_new_dir,
            snapshot,
            table_name,
            json,
        } => {
            let (name, new_dir) =
                match (snapshot, old_new_dir) {
                    (Some(name), None) => (name, new_dir),
                    (None, Some(dir)) => (new_dir.to_string_lossy().into_owned(), dir),
                    (Some(_), Some(_)) => return Err(CliError::usage(
                        "snapshot clone: TABLE NEW_DIR --snapshot NAME (or the older TABLE NAME \
                         NEW_DIR), not both",
                    )),
                    (None, None) => {
                        return Err(CliError::usage("snapshot clone: give --snapshot NAME"))
                    }
                };
            let t = open(&table)?;
            let c = t
                .snapshot_clone(&name, &new_dir, table_name.as_deref())
                .map_err(fail(&table))?;
            let m = c.manifest().map_err(fail(&new_dir))?;
            if json {
                print_json(
                    out,
                    &json!({"cloned": name, "path": new_dir.display().to_string(),
                            "table": m.table, "version": m.version, "files": m.files.len()}),
                )?;
            } else {
                writeln!(
                    out,
                    "cloned snapshot {name} to {} (table {}, {} files)",
                    new_dir.display(),
                    m.table,
                    m.files.len()
                )?;
            }
        }
    }
    Ok(EXIT_OK)
}

/// ` (snapshot NAME)` after an exported manifest version, when it came from a snapshot.
fn snapshot_suffix(snapshot: Option<&str>) -> String {
    snapshot
        .map(|s| format!(" (snapshot {s})"))
        .unwrap_or_default()
}

/// The table argument (object-storage tables run on a mirror: `remote_table`).
impl AlterArgs {
    pub(super) fn table(&self) -> &Path {
        &self.table
    }
}
