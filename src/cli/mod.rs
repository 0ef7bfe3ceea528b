//! The `hfkit` command line: a thin layer over the library's public API.
//!
//! Exit codes (also in `--help`): 0 success; 1 the input is bad or a file failed verification
//! (the message names the file and the line, or the block offset); 2 the command line itself
//! is wrong. Output to a closed pipe (`hfkit ... | head`) ends quietly with 0.

// Lines to stderr go through `note!`, which cannot panic.
#![deny(clippy::print_stderr)]

#[macro_use]
mod examples;
#[macro_use]
mod stderr;

mod command;
mod create;
mod error;
mod hbase;
mod help;
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

pub use command::{Cli, Command};
pub use error::{CliError, EXIT_ALREADY_IMPORTED, EXIT_FAILURE, EXIT_OK, EXIT_USAGE};
pub use help::help_command;

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
