//! `hfkit import`: the import pipeline on the command line. The tables an `import --table`
//! creates, and `hfkit table create`, are in [`super::create`]; the schema loading and input
//! options it shares with `hfkit plan` and `table create` are in [`super::input`].

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use super::create::{open_or_create_tables, target_regions, warn_of_index_beside, CreatedTables};
use super::error::{CliError, EXIT_ALREADY_IMPORTED, EXIT_FAILURE, EXIT_OK};
use super::input::InputArgs;
use super::remote_table::Mirror;
use crate::pipeline::error::ImportError;
use crate::pipeline::import::dry_run::{dry_run, render_text as render_dry_run};
use crate::pipeline::import::{
    check_inputs, default_index_dirs,
    identity::{import_identity, IDENTITY_FILE},
    import_regions, run_import, ImportOptions, Progress,
};
use crate::pipeline::source::expand_paths;
use crate::storage::Location;
use crate::table::directory::{AttachOptions, Table, WrittenFile, INDEX_DIR, STAGING_DIR};
use crate::table::staging::OwnedDir;
use crate::table::{ParsedSchema, TableError, TableSchema};

mod tables;

/// Name prefix of an import's staging directory in a table's `.tmp/` (with `--table`).
const IMPORT_STAGING_PREFIX: &str = "import-";

const IMPORT_HELP: &str = concat!(
    "\
The schema file (TOML; see formats/schema.md) names the table, its families and their
attributes, the split points, the rowkey spec and the column mapping. Inputs may be globs
('data/*.csv.gz'), expanded by hfkit.

Index tables ([[index]] in the schema) are written in the same run, each under the path you
named, by its table qualifier: with --table T a table directory T/indexes/<qualifier> (a table
of its own: get, scan, check it there); with --out DIR a bulk-load directory
DIR/.indexes/<qualifier> (which `hbase completebulkload DIR` and `hfkit attach T DIR` skip;
load it into the index table on its own); or DIR/<qualifier> with --index-out DIR.

Without --bad-rows the first bad record stops the import with its file, line (or Parquet row
group and row), column and reason, and nothing is written. With --bad-rows FILE, a rejected
record is written there with its position and reason, counted, and skipped, and the import
goes on (as ImportTsv's importtsv.skip.bad.lines): any number of them, or at most
--max-bad-rows N (one more stops the import, and nothing is written).

--dry-run reads and encodes every record as the import would, prints the cells, delete markers
and bytes each table, region and family would get and every record that would be rejected, and
writes nothing (not even --out, the table or --bad-rows).

Reruns: with --table the import records its identity in the table's manifest (--job-id ID, or
a SHA-256 of the schema file, the options that change cells and each input's name, size and
content). The same import into the same table again is refused with exit code 3 and nothing
done, so a scheduler can rerun a job after a failure without loading twice; --force imports it
again (its cells shadow the first load's as duplicates).

Several tables: a schema of [[table]] sections imports the input into each table in the
schema's order, to --table ROOT/<table> or --out OUT/<table>/<family>/<hfile>. Every table's
records are checked first (a bad one changes no table); each table is then attached on its own,
and the same import run again skips the tables that already hold it.

Exit codes: 0 success, 1 bad input or schema (nothing written), 2 wrong command line, 3 already
imported into --table (nothing done).

",
    examples!(
        "hfkit import --schema fixtures/seeds/users.toml fixtures/seeds/users.csv --table /tmp/hfkit-users",
        "hfkit import --schema fixtures/seeds/users.toml fixtures/seeds/users.csv --out /tmp/hfkit-bulk --report /tmp/hfkit-report.json",
        "hfkit import --schema fixtures/seeds/orders.toml 'fixtures/seeds/ord*.csv' --table /tmp/hfkit-orders --memory 64MB",
        "hfkit import --schema fixtures/seeds/users.toml fixtures/seeds/users.csv --dry-run",
        "hfkit import --schema fixtures/seeds/sale_lines.toml fixtures/seeds/sale_lines.csv --table /tmp/hfkit-shop",
        "hfkit import --schema fixtures/seeds/accounts.toml fixtures/seeds/accounts-day1.csv --table /tmp/hfkit-accounts",
        "hfkit import --schema fixtures/seeds/accounts.toml fixtures/seeds/accounts-day2.csv --table /tmp/hfkit-accounts --job-id accounts-day-2 --exclude-from-minor-compaction",
    ),
);

#[derive(Clone, Debug, Args)]
#[command(after_help = IMPORT_HELP)]
pub struct ImportArgs {
    /// Table schema with its import mapping (TOML).
    #[arg(long)]
    schema: PathBuf,
    /// Input files or globs (CSV/TSV, optionally .gz or .zst; or Parquet).
    #[arg(required = true)]
    inputs: Vec<String>,
    /// Bulk-load output directory (DIR/<family>/<hfile>); must not already hold HFiles.
    #[arg(long, required_unless_present_any = ["table", "dry_run"])]
    out: Option<PathBuf>,
    /// Attach the result to this table directory in the same run (created from the schema if
    /// it does not exist).
    #[arg(long)]
    table: Option<PathBuf>,
    /// Where index tables go: DIR/<index table qualifier> (default: TABLE/indexes/<qualifier>
    /// with --table, OUT/.indexes/<qualifier> with --out).
    #[arg(long)]
    index_out: Option<PathBuf>,
    #[command(flatten)]
    input: InputArgs,
    /// Records (from the start of the input) sampled for `[splits] sample = N`.
    #[arg(long, default_value_t = crate::pipeline::import::DEFAULT_SAMPLE_ROWS)]
    sample_rows: usize,
    /// Memory for sorting before spilling to disk (e.g. 512MB, 4GB). Default: a quarter of RAM.
    /// A bound, not a target: cells are sorted in buffers of at most 256 MiB (more of them
    /// spill), and the budget sets how many spilled runs are merged at once.
    #[arg(long)]
    memory: Option<String>,
    /// Sort every cell, even for stores (region and family) whose input arrives in row-key
    /// order; by default such a store is written straight to its files, without sorting.
    #[arg(long)]
    no_lanes: bool,
    /// Directory for spill files (default: inside the output directory). The run spills into
    /// a directory of its own there (.hfkit-spill-<id>), removed when it ends; those of killed
    /// runs are removed by the next import.
    #[arg(long)]
    temp_dir: Option<PathBuf>,
    /// Roll to a new HFile (at a row boundary) past this size (default 10GB).
    #[arg(long)]
    max_file_size: Option<String>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Cell timestamp for mapped columns without one, epoch ms (default: now).
    #[arg(long)]
    timestamp: Option<i64>,
    /// Write rejected records here (position, reason, fields) and go on.
    #[arg(long)]
    bad_rows: Option<PathBuf>,
    /// Most rejected records tolerated (default: no limit); needs --bad-rows.
    #[arg(long, requires = "bad_rows")]
    max_bad_rows: Option<u64>,
    /// Write a machine-readable report (JSON) here; `-` for standard output (the summary
    /// lines then go to standard error).
    #[arg(long)]
    report: Option<PathBuf>,
    /// The import's identity (default: a SHA-256 of the schema file, the options that change
    /// cells and the inputs' names, sizes and contents): recorded in the table's manifest with
    /// --table; with --out, written to OUT/_hfkit-import-id for `hfkit attach` to record. An
    /// import whose identity the table records is refused (exit code 3).
    #[arg(long)]
    job_id: Option<String>,
    /// With --table: import even if the table records the same import already.
    #[arg(long, requires = "table")]
    force: bool,
    /// Flag the written files EXCLUDE_FROM_MINOR_COMPACTION (as HBase's bulk load can): minor
    /// compactions leave them out until a major compaction.
    #[arg(long)]
    exclude_from_minor_compaction: bool,
    /// Read and encode every record, and report what would be written per table, region and
    /// family and every record that would be rejected; write nothing (no table, no
    /// directory, no --bad-rows file). Exit code 1 when the import would stop on a bad record.
    #[arg(long)]
    dry_run: bool,
    /// The global --quiet: no progress and no summary.
    #[arg(skip)]
    quiet: bool,
}

/// A size in bytes: `4GB`, `512MB`, `64MiB`, `1 GB 512 MB` (units are powers of 1024, so
/// `MiB` and `MB` mean the same), or a plain number.
pub(super) fn parse_size(name: &str, s: &str) -> Result<u64, CliError> {
    let binary = s.len() > 2
        && s.is_char_boundary(s.len() - 2)
        && s[s.len() - 2..].eq_ignore_ascii_case("ib");
    let normalized = if binary {
        format!("{}B", &s[..s.len() - 2])
    } else {
        s.to_string()
    };
    crate::table::schema::parse_size_bytes(&normalized)
        .ok()
        .filter(|n| *n > 0)
        .map(|n| n as u64)
        .ok_or_else(|| {
            CliError::usage(format!(
                "--{name}: '{s}' is not a size such as 512MB, 64MiB or 4GB"
            ))
        })
}

pub fn import(mut a: ImportArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    a.quiet = super::progress::quiet();
    // `--report -`: the report is standard output's, the summary lines go to standard error.
    let mut stderr = std::io::stderr();
    let out: &mut dyn Write = if report_to_stdout(&a) {
        &mut stderr
    } else {
        out
    };
    let mut targets =
        TableSchema::targets_from_file(&a.schema).map_err(|e| CliError::failure(e.to_string()))?;
    for w in targets.iter().flat_map(|t| &t.warnings) {
        note!("hfkit: warning: {w}");
    }
    if let Some(t) = a.threads {
        set_threads(t)?;
    }
    let code = if targets.len() > 1 {
        tables::import_tables(a, targets, out)?
    } else {
        let parsed = targets.remove(0);
        match a.table.clone().filter(|t| Location::is_remote_path(t)) {
            Some(url) => {
                let mirror = Mirror::for_import(&url)?;
                import_on_mirror(a, parsed, &mirror, out)?
            }
            None => import_table(a, parsed, out)?,
        }
    };
    Ok(code)
}

/// An import error as the command line reports it; a stop asked for by a signal exits with
/// 128 + the signal's number, saying that nothing was changed.
pub(super) fn import_failure(e: ImportError) -> CliError {
    match e {
        ImportError::Interrupted { signal } => CliError::interrupted(signal),
        e => CliError::failure(e.to_string()),
    }
}

/// Most worker threads `--threads` gets: four per core. More only adds switching (5,000
/// threads cost 22 CPU-s on a 200-row file), and a typo such as 100000 would stall the
/// machine.
fn max_threads() -> usize {
    4 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Sizes the process's worker thread pool, once, before any table is imported (every table
/// of a several-table import shares it); more than [`max_threads`] is capped with a note. In a
/// process whose pool was already sized (the library used twice), the same size is fine and
/// another is an error.
fn set_threads(asked: usize) -> Result<(), CliError> {
    let cap = max_threads();
    let n = asked.clamp(1, cap);
    if asked > cap {
        note!(
            "hfkit: note: --threads {asked}: using {cap} (4 per core; more threads only add \
             switching)"
        );
    }
    match rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
    {
        Ok(()) => Ok(()),
        Err(_) if rayon::current_num_threads() == n => Ok(()),
        Err(e) => Err(CliError::failure(format!(
            "--threads {n}: this process's worker pool already has {} threads: {e}",
            rayon::current_num_threads()
        ))),
    }
}

/// `import --table URL` for a table on object storage: the import runs on `mirror` (the
/// table's latest version, mirrored locally), which is then committed as the table's next
/// version (formats/table.md §"Tables on object storage"). Messages name the table by its URL.
fn import_on_mirror(
    a: ImportArgs,
    parsed: ParsedSchema,
    mirror: &Mirror,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let mut one = a;
    one.table = Some(mirror.path().to_path_buf());
    let mut buffered = Vec::new();
    let code = import_table(one, parsed, &mut buffered).map_err(|e| mirror.shown_error(e))?;
    mirror.commit(&[])?;
    out.write_all(&mirror.shown(&buffered))?;
    Ok(code)
}

fn import_table(a: ImportArgs, parsed: ParsedSchema, out: &mut dyn Write) -> Result<i32, CliError> {
    let inputs = expand_paths(&a.inputs).map_err(|e| CliError::failure(e.to_string()))?;
    let format = a.input.format(&inputs)?;
    let families: Vec<String> = parsed
        .table
        .families
        .iter()
        .map(|f| f.name.clone())
        .collect();
    let remote_out = super::remote_out::RemoteOut::prepare(
        a.out.as_deref(),
        a.index_out.as_deref(),
        a.temp_dir.as_deref(),
        &families,
    )?;
    let out_dir = match (&a.out, &a.table) {
        (Some(o), _) => remote_out.as_ref().map_or(o.clone(), |r| r.local_out(o)),
        // Staged inside the table (below, once it exists); a dry run writes nothing.
        (None, Some(_)) => PathBuf::new(),
        (None, None) if a.dry_run => PathBuf::new(),
        (None, None) => return Err(CliError::usage("give --out DIR or --table TABLE")),
    };
    let indexes = &parsed.mapping.indexes;
    // Each index table: where it goes (a table directory with --table, else a bulk-load
    // directory), always under the path the user named.
    let index_dirs: Vec<PathBuf> = match (&a.index_out, &a.table) {
        (Some(root), _) => {
            let root = remote_out
                .as_ref()
                .map_or(root.clone(), |r| r.local_index_root(root));
            indexes
                .iter()
                .map(|ix| root.join(&ix.table.qualifier))
                .collect()
        }
        (None, Some(t)) => indexes
            .iter()
            .map(|ix| t.join(INDEX_DIR).join(&ix.table.qualifier))
            .collect(),
        (None, None) => default_index_dirs(&out_dir, indexes),
    };
    let mut opts = ImportOptions::new(inputs, format, out_dir.clone());
    opts.sample_rows = a.sample_rows;
    opts.index_out = Some(index_dirs.clone());
    opts.memory_budget = match &a.memory {
        Some(m) => parse_size("memory", m)? as usize,
        // A quarter of the machine's memory (of 8 GiB where it is unknown).
        None => (crate::pipeline::sys::total_memory().unwrap_or(8 << 30) / 4) as usize,
    };
    opts.temp_dir = a.temp_dir.clone();
    opts.streaming = !a.no_lanes;
    opts.exclude_from_minor_compaction = a.exclude_from_minor_compaction;
    if let Some(s) = &a.max_file_size {
        opts.max_file_size = parse_size("max-file-size", s)?;
    }
    if let Some(t) = a.timestamp {
        opts.import_time = t;
    }
    opts.bad_rows = a.bad_rows.clone();
    opts.max_bad_rows = a.max_bad_rows;
    if !a.quiet {
        opts.progress = Some(progress_reporter());
    }
    if a.dry_run {
        return dry_run_import(&a, &parsed, &opts, &index_dirs, out);
    }
    // With --table: the checks the import makes of the schema and each input's fields first
    // (nothing is created for an import that cannot run), then the tables, opened, or created
    // with the regions their splits give; the import writes exactly the tables' regions.
    let mut created = CreatedTables::default();
    let (table, index_tables) = match &a.table {
        Some(t) => {
            if a.index_out.is_none() {
                for (ix, dir) in parsed.mapping.indexes.iter().zip(&index_dirs) {
                    warn_of_index_beside(t, dir, &ix.table);
                }
            }
            check_inputs(&parsed.table, &parsed.mapping, &opts.inputs, &opts.format)
                .map_err(|e| CliError::failure(e.to_string()))?;
            let (mut tables, regions) =
                open_or_create_tables(&parsed, t, &index_dirs, &opts, &mut created)?;
            opts.regions = Some(regions);
            let main = tables.remove(0);
            (Some(main), tables)
        }
        None => (None, Vec::new()),
    };
    // With --table: the import's identity, and whether the table already holds it (then
    // nothing is read or written, unless --force).
    // Only an import that records it computes it (with --table, or --out with --job-id): the
    // digest reads every input once more.
    let id = if table.is_some() || a.job_id.is_some() {
        import_identity(
            a.job_id.as_deref(),
            &std::fs::read(&a.schema)
                .map_err(|e| CliError::failure(format!("{}: {e}", a.schema.display())))?,
            &a.cell_options(),
            &opts.inputs,
        )
        .map_err(|e| CliError::failure(e.to_string()))?
    } else {
        String::new()
    };
    let mut identity = None;
    if let Some(t) = &table {
        let id = id.clone();
        let m = t.manifest().map_err(|e| CliError::failure(e.to_string()))?;
        let earlier = m.import_record(&id).map(|r| r.version);
        if let (Some(version), false) = (earlier, a.force) {
            return Err(already_imported(&a, t.dir(), &id, version));
        }
        identity = Some((id, earlier));
    }
    // With --table, each table's output is staged in a directory of this run's own under the
    // table's .tmp/, held while the run lasts (garbage collection, the attaches' included,
    // leaves it alone) and removed when the run ends, whatever the outcome.
    let mut stagings = Vec::new();
    if let Some(t) = &table {
        for it in index_tables.iter().chain([t]) {
            let tmp = it.dir().join(STAGING_DIR);
            let staged = OwnedDir::create(&tmp, IMPORT_STAGING_PREFIX)
                .map_err(|e| CliError::failure(format!("{}: {e}", tmp.display())))?;
            stagings.push(staged);
        }
        let paths: Vec<PathBuf> = stagings.iter().map(|s| s.path().to_path_buf()).collect();
        if let Some((main, ixs)) = paths.split_last() {
            opts.out_dir = main.clone();
            opts.index_out = Some(ixs.to_vec());
        }
    }
    let out_dir = opts.out_dir.clone();
    let report = run_import(&parsed.table, &parsed.mapping, opts).map_err(import_failure)?;
    // A stop asked for while the last cells were written: before anything is attached.
    ImportError::check_interrupt().map_err(import_failure)?;
    // Index tables first: an index entry whose row is not yet visible is harmless to a reader
    // that follows it to the main table; a row missing from its index is not. A table that
    // got no file (the input held no cells for it) is left as it is. Each attach checks the
    // files against what this run wrote (size, cells, CRC32C) rather than decoding them again
    // (formats/table.md §"Attach of files this process wrote").
    #[cfg(debug_assertions)]
    damage_for_tests(&report.output_files);
    let mut attach = None;
    if let Some(t) = &table {
        let attached = || -> Result<_, CliError> {
            for ((it, staging), ix) in index_tables.iter().zip(&stagings).zip(&report.indexes) {
                if ix.files > 0 {
                    let written = written_files(&ix.output_files);
                    let opts = AttachOptions::default();
                    it.attach_written(staging.path(), &opts, None, &written)
                        .map_err(|e| {
                            CliError::failure(format!(
                                "{}: attach failed: {e}",
                                created.shown(it.dir()).display()
                            ))
                        })?;
                }
            }
            if report.files == 0 {
                return Ok(None);
            }
            let import = identity.as_ref().map(|(id, _)| (id.as_str(), a.force));
            let written = written_files(&report.output_files);
            t.attach_written(&out_dir, &AttachOptions::default(), import, &written)
                .map(Some)
                .map_err(|e| match e {
                    TableError::AlreadyImported { id, version } => {
                        already_imported(&a, t.dir(), &id, version)
                    }
                    e => CliError::failure(format!(
                        "{}: attach failed: {e}",
                        created.shown(t.dir()).display()
                    )),
                })
        };
        let r = attached();
        drop(stagings);
        attach = r?;
    }
    // With --out and --job-id: the identity goes with the files, for `hfkit attach` to record
    // (without --job-id the directory holds the files alone, as before).
    if table.is_none() && a.job_id.is_some() && report.files > 0 {
        let p = out_dir.join(IDENTITY_FILE);
        std::fs::write(&p, format!("{id}\n"))
            .map_err(|e| CliError::failure(format!("{}: {e}", p.display())))?;
    }
    if let Some(r) = remote_out {
        r.publish()?;
    }
    created.publish()?;
    for w in &report.warnings {
        note!("hfkit: warning: {w}");
    }
    if let Some(p) = &a.report {
        let mut v = serde_json::to_value(&report).map_err(|e| CliError::failure(e.to_string()))?;
        if let Some(at) = &attach {
            v["attached"] = serde_json::json!({"manifest_version": at.version, "seq_id": at.seq_id, "files": at.files.len()});
        }
        // null when the import records no identity (--out without --job-id).
        v["import_id"] = serde_json::json!(Some(&id).filter(|id| !id.is_empty()));
        if let Some((_, earlier)) = &identity {
            // "new", or "forced" over the attach of the same import as manifest version N.
            v["rerun"] = match earlier {
                None => serde_json::json!("new"),
                Some(n) => serde_json::json!({"forced": {"earlier_manifest_version": n}}),
            };
        }
        let text =
            serde_json::to_string_pretty(&v).map_err(|e| CliError::failure(e.to_string()))?;
        write_report(p, &text).map_err(|e| CliError::failure(format!("{}: {e}", p.display())))?;
    }
    if !a.quiet {
        writeln!(
            out,
            "imported {} rows ({} rejected) into {} cells ({} duplicates dropped) in {} files, {:.1} MB, across {} regions in {:.1}s ({:.0} cells/s); peak RSS {:.0} MB",
            report.rows_read,
            report.rows_rejected,
            report.cells,
            report.duplicate_cells,
            report.files,
            report.output_bytes as f64 / 1e6,
            report.regions.len(),
            report.wall_seconds,
            report.cells as f64 / report.wall_seconds.max(1e-9),
            report.peak_rss_bytes as f64 / 1e6
        )?;
        writeln!(
            out,
            "{} cells written straight to their region's files (input in row-key order), {} sorted ({} spilled runs)",
            report.streamed_cells,
            report.cells.saturating_sub(report.streamed_cells),
            report.spilled_runs
        )?;
        match (&attach, &table) {
            (Some(at), Some(t)) => {
                writeln!(
                    out,
                    "attached to {} as manifest version {}",
                    created.shown(t.dir()).display(),
                    at.version
                )?;
                if let Some((id, earlier)) = &identity {
                    match earlier {
                        None => writeln!(out, "import id {id} recorded")?,
                        Some(n) => writeln!(
                            out,
                            "import id {id} recorded again (--force: it was attached as manifest version {n} already)"
                        )?,
                    }
                }
            }
            (None, Some(t)) => writeln!(
                out,
                "no cells: nothing attached to {} (manifest version {} unchanged)",
                created.shown(t.dir()).display(),
                Table::open(&created.shown(t.dir()))
                    .and_then(|t| t.manifest())
                    .map_err(|e| CliError::failure(e.to_string()))?
                    .version
            )?,
            (_, None) if report.files == 0 => {
                writeln!(out, "no cells: no files written to {}", out_dir.display())?
            }
            (_, None) => {}
        }
        for (ix, dir) in report.indexes.iter().zip(&index_dirs) {
            writeln!(
                out,
                "index {}: {} cells ({} records without an entry, {} duplicates dropped) in {} files across {} regions {} {}",
                ix.name,
                ix.cells,
                ix.rows_without_entry,
                ix.duplicate_cells,
                ix.files,
                ix.regions.len(),
                match (&a.table, ix.files) {
                    (None, _) => "in",
                    (Some(_), 0) => "nothing attached to",
                    (Some(_), _) => "attached to",
                },
                dir.display()
            )?;
        }
    }
    Ok(EXIT_OK)
}

/// `import --dry-run`: the import's checks, the regions it would write (an existing table's,
/// else the schema's splits), every record encoded and counted; nothing written but the
/// report.
fn dry_run_import(
    a: &ImportArgs,
    parsed: &ParsedSchema,
    opts: &ImportOptions,
    index_dirs: &[PathBuf],
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let failure = |e: &dyn std::fmt::Display| CliError::failure(e.to_string());
    check_inputs(&parsed.table, &parsed.mapping, &opts.inputs, &opts.format)
        .map_err(|e| failure(&e))?;
    let regions = match &a.table {
        Some(t) => target_regions(parsed, t, index_dirs, opts)?.2,
        None => {
            let r = import_regions(
                &parsed.table,
                &parsed.mapping,
                &opts.inputs,
                &opts.format,
                opts.sample_rows,
            )
            .map_err(|e| failure(&e))?;
            std::iter::once(r.main).chain(r.indexes).collect()
        }
    };
    let report = dry_run(
        &parsed.table,
        &parsed.mapping,
        &opts.inputs,
        &opts.format,
        &regions,
        opts.import_time,
    )
    .map_err(|e| failure(&e))?;
    if let Some(p) = &a.report {
        let text = serde_json::to_string_pretty(&report).map_err(|e| failure(&e))?;
        write_report(p, &text).map_err(|e| failure(&format!("{}: {e}", p.display())))?;
    }
    if !a.quiet {
        out.write_all(render_dry_run(&report).as_bytes())?;
    }
    // The real import stops at the first bad record without --bad-rows, and past
    // --max-bad-rows with it.
    let stops = match (&a.bad_rows, a.max_bad_rows) {
        (None, _) => report.records_rejected > 0,
        (Some(_), Some(max)) => report.records_rejected > max,
        (Some(_), None) => false,
    };
    Ok(if stops { EXIT_FAILURE } else { EXIT_OK })
}

/// Whether `--report -` asks for the report on standard output.
fn report_to_stdout(a: &ImportArgs) -> bool {
    a.report.as_deref() == Some(Path::new("-"))
}

/// Writes the JSON report `text` to the file `p`, or to standard output for `-`.
fn write_report(p: &Path, text: &str) -> std::io::Result<()> {
    if p == Path::new("-") {
        let mut o = std::io::stdout().lock();
        writeln!(o, "{text}")?;
        return o.flush();
    }
    std::fs::write(p, format!("{text}\n"))
}

/// The refusal of an import `table` already holds (as manifest `version`); with --report, the
/// report says so (`{"import_id", "refused": {"attached_as_manifest_version"}}`).
fn already_imported(a: &ImportArgs, table: &Path, id: &str, version: u64) -> CliError {
    let mut message = format!(
        "{}: this import (id {id}) was already attached as manifest version {version}: \
         nothing done (--force imports it again)",
        table.display()
    );
    if let Some(p) = &a.report {
        let v = serde_json::json!({
            "import_id": id,
            "refused": {"attached_as_manifest_version": version},
        });
        if let Err(e) = write_report(p, &format!("{v:#}")) {
            message.push_str(&format!("; and the report: {}: {e}", p.display()));
        }
    }
    CliError {
        message,
        code: EXIT_ALREADY_IMPORTED,
        io_kind: None,
    }
}

impl ImportArgs {
    /// The options that change the import's cells, for its identity: how the inputs are read,
    /// and --timestamp when given (without it each run stamps its own time, and is still the
    /// same import).
    fn cell_options(&self) -> Vec<(&'static str, String)> {
        let i = &self.input;
        let mut o = vec![
            ("format", format!("{:?}", i.format)),
            ("delimiter", format!("{:?}", i.delimiter)),
            ("quote", i.quote.clone()),
            ("escape", format!("{:?}", i.escape)),
            ("comment", format!("{:?}", i.comment)),
            ("no_header", i.no_header.to_string()),
            ("columns", format!("{:?}", i.columns)),
        ];
        if let Some(t) = self.timestamp {
            o.push(("timestamp", t.to_string()));
        }
        o
    }
}

/// Progress on stderr: a bar on a terminal, a plain line every few seconds otherwise. While
/// reading: input bytes against the inputs' size, rows and cells, rows per second of reading;
/// while writing: the sorted cells written against those to write.
fn progress_reporter() -> Box<dyn FnMut(&Progress) + Send> {
    let started = Instant::now();
    // When reading ended: the reading rate stops there.
    let mut read_for: Option<f64> = None;
    let mut reading_rate = move |p: &Progress| {
        let secs = match (p.phase, read_for) {
            ("writing", None) => *read_for.insert(started.elapsed().as_secs_f64()),
            (_, Some(s)) => s,
            _ => started.elapsed().as_secs_f64(),
        };
        p.rows as f64 / secs.max(1e-9)
    };
    let style = |template: &str| {
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
    };
    if std::io::stderr().is_terminal() {
        let mut bar = indicatif::ProgressBar::new(0);
        bar.set_style(style(
            "{spinner} {msg} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ETA {eta}",
        ));
        let mut writing = false;
        Box::new(move |p: &Progress| {
            let rate = reading_rate(p);
            if p.phase == "writing" {
                let msg = format!(
                    "writing: {} rows, {} cells read ({rate:.0} rows/s)",
                    p.rows, p.cells
                );
                if !writing {
                    // A bar of its own, set up before it is drawn: no frame shows the bytes
                    // read against the cells to write.
                    writing = true;
                    bar.finish_and_clear();
                    bar = indicatif::ProgressBar::hidden()
                        .with_style(style(
                            "{spinner} {msg} [{elapsed_precise}] {wide_bar} {pos}/{len} cells ETA {eta}",
                        ))
                        .with_message(msg.clone());
                    bar.set_length(p.cells_to_write);
                    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                }
                bar.set_length(p.cells_to_write);
                bar.set_position(p.cells_written.min(p.cells_to_write));
                bar.set_message(msg);
            } else {
                bar.set_length(p.total_input_bytes);
                bar.set_position(p.input_bytes.min(p.total_input_bytes));
                bar.set_message(format!(
                    "{}: {} rows, {} cells, {rate:.0} rows/s",
                    p.phase, p.rows, p.cells
                ));
            }
        })
    } else {
        let mut last = Instant::now() - std::time::Duration::from_secs(10);
        Box::new(move |p: &Progress| {
            let rate = reading_rate(p);
            if last.elapsed().as_secs() >= 5 {
                last = Instant::now();
                match p.phase {
                    "writing" => note!(
                        "hfkit: writing {} of {} sorted cells ({} rows read at {rate:.0} rows/s), {:.0}s",
                        p.cells_written,
                        p.cells_to_write,
                        p.rows,
                        started.elapsed().as_secs_f64()
                    ),
                    phase => note!(
                        "hfkit: {phase} {} rows, {} cells, {:.0} MB of {:.0} MB input, {:.0}s",
                        p.rows,
                        p.cells,
                        p.input_bytes as f64 / 1e6,
                        p.total_input_bytes as f64 / 1e6,
                        started.elapsed().as_secs_f64()
                    ),
                }
            }
        })
    }
}

/// What the import recorded of each file it wrote, for the attach to check them against.
fn written_files(files: &[crate::pipeline::import::output::OutputFile]) -> Vec<WrittenFile> {
    files
        .iter()
        .map(|f| WrittenFile {
            path: f.path.clone(),
            size: f.bytes,
            cells: f.cells,
            crc32c: f.crc32c,
        })
        .collect()
}

/// Test hook, in debug builds only: with `HFKIT_TEST_DAMAGE_BEFORE_ATTACH` set, flips one byte
/// in the middle of the first file the import wrote, after it was written and before the
/// attach, as a disk or another process could (`tests/it/attach_written.rs`).
#[cfg(debug_assertions)]
fn damage_for_tests(files: &[crate::pipeline::import::output::OutputFile]) {
    use std::io::{Read, Seek, SeekFrom};
    if std::env::var_os("HFKIT_TEST_DAMAGE_BEFORE_ATTACH").is_none() {
        return;
    }
    let Some(f) = files.first() else { return };
    let at = f.bytes / 2;
    let damage = || -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&f.path)?;
        let mut b = [0u8; 1];
        file.seek(SeekFrom::Start(at))?;
        file.read_exact(&mut b)?;
        file.seek(SeekFrom::Start(at))?;
        file.write_all(&[b[0] ^ 0x5a])
    };
    // A hook that could not damage the file leaves it intact: the test then sees the import
    // succeed, and fails.
    let _ = damage();
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_take_decimal_style_and_binary_unit_names() {
        for (text, bytes) in [
            ("64MiB", 64u64 << 20),
            ("64MB", 64 << 20),
            ("4GiB", 4 << 30),
            ("4gb", 4 << 30),
            ("512kib", 512 << 10),
            ("1000", 1000),
        ] {
            assert_eq!(parse_size("memory", text).ok(), Some(bytes), "{text}");
        }
        for bad in ["", "MiB", "64XiB", "0", "-5MB"] {
            assert!(parse_size("memory", bad).is_err(), "{bad}");
        }
    }
}
