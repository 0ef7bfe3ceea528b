//! The `hfkit` command line: a thin layer over the library's public API.
//!
//! Exit codes (also in `--help`): 0 success; 1 the input is bad or a file failed verification
//! (the message names the file and the line, or the block offset); 2 the command line itself
//! is wrong. Output to a closed pipe (`hfkit ... | head`) ends quietly with 0.

// Lines to stderr go through `note!`, which cannot panic.
#![deny(clippy::print_stderr)]

/// A command's `--help` examples: `Examples (...):` and one indented command per line. They
/// run as written from a checkout of hfkit (`tests/it/cli/help.rs` runs every one), so they use the
/// bundled data and build on each other as `hfkit --help` says.
macro_rules! examples {
    ($($line:literal),+ $(,)?) => {
        concat!(
            "Examples (from a checkout of hfkit; see `hfkit --help`):",
            $("\n  ", $line),+
        )
    };
}

/// `eprintln!` that never panics: warnings, progress and notes go through [`stderr_line`],
/// which drops the line when stderr cannot take it (closed, a closed pipe, a full disk),
/// where `eprintln!` would panic and end the run with 101 after its work is done.
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::cli::stderr_line(format_args!($($arg)*))
    };
}

mod create;
mod hbase;
mod hfile;
mod import;
mod input;
mod location;
mod maint;
mod packaging;
mod plan;
mod progress;
mod read;
mod remote_out;
mod remote_root;
mod remote_table;
mod table;

use std::io::{self, Write};

use clap::{Parser, Subcommand};

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: bad input data, a corrupt file, or a failed verification.
pub const EXIT_FAILURE: i32 = 1;
/// Exit code: the command line is wrong.
pub const EXIT_USAGE: i32 = 2;
/// Exit code: `import --table` refused an import the table already holds (nothing done).
pub const EXIT_ALREADY_IMPORTED: i32 = 3;

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

/// An error the CLI reports: a message, its exit code (failure or usage), and the kind of the
/// I/O error behind it, if one is.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub code: i32,
    /// Writing the output to a closed pipe is `BrokenPipe`: the run then ends quietly.
    pub io_kind: Option<io::ErrorKind>,
}

impl CliError {
    /// The error of a run stopped by `signal` before it committed anything.
    pub(crate) fn interrupted(signal: i32) -> CliError {
        CliError {
            message: format!(
                "interrupted by {}: stopped before committing; what this run staged was removed, \
                 and nothing was changed",
                crate::storage::interrupt::signal_name(signal)
            ),
            code: 128 + signal,
            io_kind: None,
        }
    }

    pub fn failure(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: EXIT_FAILURE,
            io_kind: None,
        }
    }
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: EXIT_USAGE,
            io_kind: None,
        }
    }
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        CliError {
            io_kind: Some(e.kind()),
            ..CliError::failure(e.to_string())
        }
    }
}

impl From<serde_json::Error> for CliError {
    /// JSON written to the output: an I/O error keeps its kind.
    fn from(e: serde_json::Error) -> Self {
        CliError {
            io_kind: e.io_error_kind(),
            ..CliError::failure(e.to_string())
        }
    }
}

/// Writes one line to stderr, or nothing when stderr cannot take it; see [`note!`].
pub(crate) fn stderr_line(args: std::fmt::Arguments<'_>) {
    let mut err = io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

/// The command line as its help, manual pages and completions show it: `--s3-endpoint` offered
/// by the commands that take an `s3://` location only (`location::OBJECT_STORAGE`). Parsing
/// uses [`Cli`] itself, where the option is global, and `location::check` refuses it by name
/// where it has no effect.
pub fn help_command() -> clap::Command {
    fn offer(cmd: clap::Command, path: &str, arg: &clap::Arg) -> clap::Command {
        let names: Vec<String> = cmd
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .collect();
        let mut cmd = cmd;
        for name in names {
            let sub_path = match path {
                "" => name.clone(),
                p => format!("{p} {name}"),
            };
            let takes = location::OBJECT_STORAGE.iter().any(|(c, _)| *c == sub_path);
            cmd = cmd.mut_subcommand(&name, |sub| {
                let sub = if takes { sub.arg(arg.clone()) } else { sub };
                offer(sub, &sub_path, arg)
            });
        }
        cmd
    }
    let root = <Cli as clap::CommandFactory>::command();
    let Some(arg) = root
        .get_arguments()
        .find(|a| a.get_id() == "s3_endpoint")
        .cloned()
    else {
        return root;
    };
    let root = root.mut_arg("s3_endpoint", |a| a.global(false).hide(true));
    offer(root, "", &arg.global(false))
}

/// Runs the CLI with `args` (including the program name) and returns the exit code.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    // Help and version as `help_command` shows them; any other outcome of that parse is left
    // to the parse below.
    if let Err(e) = help_command().try_get_matches_from(&args) {
        use clap::error::ErrorKind;
        if matches!(
            e.kind(),
            ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        ) {
            let _ = e.print();
            return if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
        }
    }
    let root = <Cli as clap::CommandFactory>::command();
    let parsed = root
        .clone()
        .try_get_matches_from(&args)
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m).map(|c| (c, m)));
    let (cli, command_path) = match parsed {
        Ok((c, matches)) => {
            // Every path is a local path or a location the command takes, before it runs.
            if let Err(e) = location::check(&root, &matches) {
                note!("hfkit: {}", e.message);
                return e.code;
            }
            (c, location::command_path(&root, &matches))
        }
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return code;
        }
    };
    hfkit_storage::configure(hfkit_storage::StorageConfig::with_endpoint(
        cli.s3_endpoint.clone(),
    ));
    progress::set_quiet(cli.quiet);
    // The phases and work of the command's layers, shown for the whole run (an import shows
    // its reading and writing itself; the phases around them, here).
    let _progress = progress::receive_for(&command_path);
    if stops_at_safe_points(&cli.command) {
        catch_interrupts();
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let result = match remote_table::run(&cli.command, &args, &mut out, dispatch) {
        Some(r) => r,
        None => match remote_root::run(&cli.command, &args, &mut out, dispatch) {
            Some(r) => r,
            None => dispatch(cli.command, &mut out),
        },
    };
    let result = after_interrupt(result);
    let flushed = out.flush().map_err(CliError::from);
    match result.and_then(|code| flushed.map(|()| code)) {
        Ok(code) => code,
        Err(e) if e.io_kind == Some(io::ErrorKind::BrokenPipe) => EXIT_OK,
        Err(e) => {
            note!("hfkit: {}", e.message);
            e.code
        }
    }
}

/// Whether `cmd` writes a table, a root or a bulk-load directory: SIGINT (Ctrl-C) and SIGTERM
/// then ask it to stop at a safe point (`storage::interrupt`: between batches, rows, files or
/// stores, and before its commit) instead of ending it at once, so that it removes what it
/// staged and says so. Reading commands end at once (they leave nothing to remove).
fn stops_at_safe_points(cmd: &Command) -> bool {
    match cmd {
        Command::Import(_) | Command::Attach { .. } | Command::Maint(_) => true,
        Command::Table(t) => matches!(
            t,
            table::TableCommand::Create(_)
                | table::TableCommand::Alter(_)
                | table::TableCommand::CloneHbase(_)
        ),
        Command::Hbase(h) => {
            h.read_root().is_none()
                || matches!(
                    h,
                    hbase::HbaseCommand::CopySnapshot { .. } | hbase::HbaseCommand::Compact { .. }
                )
        }
        _ => false,
    }
}

/// SIGINT and SIGTERM set the stop flag (`storage::interrupt`) instead of ending the process.
fn catch_interrupts() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for signal in [SIGINT, SIGTERM] {
        let flag = crate::storage::interrupt::flag();
        if let Err(e) = signal_hook::flag::register_usize(signal, flag, signal as usize) {
            note!("hfkit: warning: cannot catch signal {signal} ({e}): it ends the run at once");
        }
    }
}

/// The outcome of a command once a stop was asked for: a writer that stopped at a safe point
/// failed with the layer's "interrupted" error, reported as one line saying nothing was
/// changed, exit 128 + the signal (130, 143); one that had begun its commit finished it, and
/// exits so too, saying it is complete.
fn after_interrupt(result: Result<i32, CliError>) -> Result<i32, CliError> {
    let Some(signal) = crate::storage::interrupt::requested() else {
        return result;
    };
    match result {
        Err(e) if e.code != 128 + signal && e.message.contains("interrupted by") => {
            Err(CliError::interrupted(signal))
        }
        Err(e) => Err(e),
        Ok(_) => {
            note!(
                "hfkit: interrupted by {} once the command had committed: it is complete (as printed)",
                crate::storage::interrupt::signal_name(signal)
            );
            Ok(128 + signal)
        }
    }
}

/// Runs one parsed command.
fn dispatch(command: Command, out: &mut dyn Write) -> Result<i32, CliError> {
    match command {
        Command::Hfile(cmd) => hfile::run(cmd, out),
        Command::Table(cmd) => table::run(cmd, out),
        Command::Import(args) => import::import(*args, out),
        Command::Plan(args) => plan::plan(*args, out),
        Command::Attach {
            table,
            dir,
            json,
            no_split,
            ignore_unknown_families,
            region_dirs,
            max_files_per_region_family,
            force,
        } => {
            let opts = crate::table::directory::AttachOptions {
                no_split,
                ignore_unknown_families,
                region_dirs,
                max_files_per_region_family,
            };
            table::attach(&table, &dir, &opts, force, json, out)
        }
        Command::Get(args) => read::get(args, out),
        Command::Scan(args) => read::scan(args, out),
        Command::Hbase(cmd) => hbase::run(cmd, out),
        Command::Maint(cmd) => maint::run(cmd, out),
        Command::Completions(args) => packaging::completions(args, out),
        Command::Man(args) => packaging::man(args, out),
    }
}
