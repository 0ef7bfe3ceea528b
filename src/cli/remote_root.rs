//! Commands on an HBase root on object storage (`hbase.rootdir` on S3): `hbase ls`,
//! `describe`, `verify`, `get`, `scan`, `copy-snapshot` (its source), `compact` and
//! `table clone-hbase` run unchanged on a *root mirror* in a staging directory of their own
//! (`hbase::remote`: the layout's small files downloaded, each store file read from object
//! storage by byte ranges; `hbase::compact` makes its moves on the objects as on the mirror),
//! and name the root by its URL in what they print. Spec: `formats/hbase-layout.md` §"Roots on
//! object storage".

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

use super::command::Command;
use super::error::CliError;
use super::remote_table::{fail, substitute};
use super::table::TableCommand;
use crate::storage::Location;
use crate::table::staging::OwnedDir;

/// The mirrors' staging directories, under the system's temporary directory (`$TMPDIR`).
const MIRROR_PREFIX: &str = "hfkit-root-mirror-";

/// The root on object storage `cmd` reads, if it reads one.
fn remote_root(cmd: &Command) -> Option<&Path> {
    let root = match cmd {
        Command::Hbase(c) => c.read_root()?,
        Command::Table(TableCommand::CloneHbase(a)) => a.root(),
        _ => return None,
    };
    Location::is_remote_path(root).then_some(root)
}

/// Runs `cmd` when it reads an HBase root on object storage; `None` otherwise (the caller
/// runs it as usual). `args` are the command line `cmd` was parsed from: the mirror's path
/// replaces the root's URL in them, and they are parsed again.
pub(super) fn run(
    cmd: &Command,
    args: &[OsString],
    out: &mut dyn Write,
    dispatch: fn(Command, &mut dyn Write) -> Result<i32, CliError>,
) -> Option<Result<i32, CliError>> {
    let url = remote_root(cmd)?;
    Some(run_on_mirror(url, args, out, dispatch))
}

fn run_on_mirror(
    url: &Path,
    args: &[OsString],
    out: &mut dyn Write,
    dispatch: fn(Command, &mut dyn Write) -> Result<i32, CliError>,
) -> Result<i32, CliError> {
    let loc = Location::from_path(url).map_err(|e| CliError::usage(e.to_string()))?;
    // Mirrors of processes killed before they could remove theirs go first.
    crate::table::staging::sweep(&std::env::temp_dir(), MIRROR_PREFIX);
    let scratch = OwnedDir::create(&std::env::temp_dir(), MIRROR_PREFIX).map_err(fail)?;
    let mirror = scratch.path().join("root");
    std::fs::create_dir(&mirror).map_err(fail)?;
    crate::hbase::remote::mirror_root(&loc, &mirror).map_err(fail)?;
    let shown = |b: &[u8]| -> String {
        String::from_utf8_lossy(b)
            .replace(&mirror.display().to_string(), &url.display().to_string())
    };
    let mut args: Vec<OsString> = args.to_vec();
    substitute(&mut args, url, &mirror);
    let cli = <super::command::Cli as clap::Parser>::try_parse_from(&args).map_err(fail)?;
    let stats = args.iter().any(|a| a == "--stats");
    // A get's or scan's cells go straight out (they never name the root; a scan's may be
    // far larger than memory); other commands' reports are held to name the root by its URL.
    let streamed = matches!(
        &cli.command,
        Command::Hbase(super::hbase::HbaseCommand::Get(_) | super::hbase::HbaseCommand::Scan(_))
    );
    let mut held = Vec::new();
    let code = match streamed {
        true => dispatch(cli.command, out),
        false => dispatch(cli.command, &mut held),
    };
    // What a failed command printed (a verify's report of what is wrong) goes out too.
    out.write_all(shown(&held).as_bytes())?;
    let code = code.map_err(|e| CliError {
        message: shown(e.message.as_bytes()),
        ..e
    })?;
    if stats {
        let st = crate::storage::total_stats();
        let (requests, bytes) = crate::table::remote_read::file_reads();
        note!(
            "object storage: {} request(s), {} byte(s) read; of them {requests} request(s), {bytes} byte(s) by ranges of store files, the rest the listing and the layout's small files of {loc}",
            st.requests, st.bytes_read
        );
    }
    Ok(code)
}
