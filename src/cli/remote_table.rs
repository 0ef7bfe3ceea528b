//! Commands on a table on object storage (`s3://bucket/prefix`). Each runs the local command
//! unchanged on a *mirror* of the table in a staging directory of its own (`table::remote`):
//! gets, scans and exports of cells or rows on a read mirror, whose store files are read from
//! object storage by byte ranges (`table::remote_read`); a check and an export copying files on
//! a mirror holding the live files, downloaded; writes on a mirror of the latest manifest, whose
//! result is then committed by creating the next manifest version create-only. An attach (or
//! `import --table`) that loses the version to another writer is attached again onto the new
//! latest version; a compaction, alter or snapshot that loses fails, leaving the table as the
//! winner made it. Spec: `formats/table.md` §"Tables on object storage".

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::command::Command;
use super::error::CliError;
use super::maint::{MaintCommand, SnapshotCommand};
use super::table::TableCommand;
use crate::storage::{store_for, Location};
use crate::table::directory::AttachReport;
use crate::table::remote::{rebase_attach, CopySource, Latest, RemoteError, RemoteTable};
use crate::table::staging::OwnedDir;

/// The mirrors' staging directories, under the system's temporary directory (`$TMPDIR`).
const MIRROR_PREFIX: &str = "hfkit-mirror-";

/// What a command does to its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Reads: nothing committed. `ranged`: a read mirror, whose store files are read from
    /// object storage by byte ranges (gets, scans, exports of cells or rows); else a mirror
    /// with the live files downloaded (a check verifies every byte; an export as a table or
    /// bulk-load directory copies the files).
    Read { ranged: bool },
    /// Adds files (attach, import --table): committed, rebased when another writer wins.
    Attach,
    /// Creates the table.
    Create,
    /// Changes the manifest otherwise (compact, alter, snapshot): committed, or fails when
    /// another writer wins.
    Change { files: bool },
}

/// The remote table a command works on, and how; `None` for a local table (or none).
fn plan(cmd: &Command) -> Option<(PathBuf, Mode)> {
    let (table, mode): (&Path, Mode) = match cmd {
        Command::Get(a) => (a.table(), Mode::Read { ranged: true }),
        Command::Scan(a) => (a.table(), Mode::Read { ranged: true }),
        Command::Attach { table, .. } => (table, Mode::Attach),
        Command::Table(TableCommand::Create(a)) => (&a.table, Mode::Create),
        Command::Table(TableCommand::Describe { table, .. }) => {
            (table, Mode::Read { ranged: true })
        }
        Command::Table(TableCommand::Check { table, .. }) => (table, Mode::Read { ranged: false }),
        Command::Maint(MaintCommand::Compact { table, .. }) => {
            (table, Mode::Change { files: true })
        }
        Command::Maint(MaintCommand::Export { table, format, .. }) => (
            table,
            Mode::Read {
                ranged: format.is_some(),
            },
        ),
        Command::Maint(MaintCommand::Snapshot(SnapshotCommand::Create { table, .. })) => {
            (table, Mode::Change { files: false })
        }
        Command::Maint(MaintCommand::Snapshot(SnapshotCommand::List { table, .. })) => {
            (table, Mode::Read { ranged: true })
        }
        Command::Maint(MaintCommand::Snapshot(SnapshotCommand::Delete { table, .. })) => {
            (table, Mode::Change { files: false })
        }
        Command::Maint(MaintCommand::Snapshot(SnapshotCommand::Restore { table, .. })) => {
            (table, Mode::Change { files: true })
        }
        Command::Maint(MaintCommand::Alter(a)) | Command::Table(TableCommand::Alter(a)) => {
            (a.table(), Mode::Change { files: false })
        }
        _ => return None,
    };
    Location::is_remote_path(table).then(|| (table.to_path_buf(), mode))
}

pub(super) fn fail(e: impl std::fmt::Display) -> CliError {
    CliError::failure(e.to_string())
}

/// Runs `cmd` when its table is on object storage; `None` when it is not (the caller runs it
/// as usual). `args` are the command line `cmd` was parsed from: the mirror's path replaces
/// the table's URL in them, and they are parsed again.
pub(super) fn run(
    cmd: &Command,
    args: &[OsString],
    out: &mut dyn Write,
    dispatch: fn(Command, &mut dyn Write) -> Result<i32, CliError>,
) -> Option<Result<i32, CliError>> {
    let (url, mode) = plan(cmd)?;
    Some(run_remote(cmd, &url, mode, args, out, dispatch))
}

fn run_remote(
    cmd: &Command,
    url: &Path,
    mode: Mode,
    args: &[OsString],
    out: &mut dyn Write,
    dispatch: fn(Command, &mut dyn Write) -> Result<i32, CliError>,
) -> Result<i32, CliError> {
    let mut m = Mirror::open(url, mode)?;
    let mut args: Vec<OsString> = args.to_vec();
    substitute(&mut args, url, &m.path);
    // An attach of a bulk-load directory on object storage: read (into the scratch
    // directory) for the local attach to verify; on the table's bucket, its files are then
    // copied server-side rather than uploaded back (formats/table.md §"Attach from object
    // storage").
    let mut sources = Vec::new();
    if let Command::Attach { dir, .. } = cmd {
        if Location::is_remote_path(dir) {
            let local = m.scratch.path().join("bulk");
            m.also_shown = Some((local.clone(), dir.to_path_buf()));
            sources = download_tree(dir, &local)?;
            if !same_bucket(dir, &m.loc) {
                sources.clear();
            }
            substitute(&mut args, dir, &local);
        }
    }
    let cli = <super::command::Cli as clap::Parser>::try_parse_from(&args).map_err(fail)?;
    // A get's or scan's cells go straight out (their output never names the table; a scan's
    // may be far larger than memory); other commands' reports are held to name the table
    // by its URL.
    let streamed = matches!(cli.command, Command::Get(_) | Command::Scan(_));
    let mut buffered = Vec::new();
    let code = match streamed {
        true => dispatch(cli.command, out),
        false => dispatch(cli.command, &mut buffered),
    };
    let code = match code {
        Ok(c) => c,
        Err(e) => {
            // What a failed command printed (a check's report of what is wrong) goes out as
            // it would locally; nothing is committed.
            out.write_all(&m.shown(&buffered))?;
            return Err(m.shown_error(e));
        }
    };
    let buffered = m.shown(&buffered);
    if let Mode::Read { ranged } = mode {
        out.write_all(&buffered)?;
        if args.iter().any(|a| a == "--stats") {
            let st = crate::storage::total_stats();
            let loc = &m.loc;
            match ranged {
                true => {
                    let (requests, bytes) = crate::table::remote_read::file_reads();
                    note!(
                        "object storage: {} request(s), {} byte(s) read; of them {requests} request(s), {bytes} byte(s) by ranges of store files, the rest the live manifest, listings and snapshots of {loc}",
                        st.requests, st.bytes_read
                    );
                }
                false => note!(
                    "object storage: {} request(s), {} byte(s) read (the live manifest and every live file of {loc}, downloaded)",
                    st.requests, st.bytes_read
                ),
            }
        }
        return Ok(code);
    }
    let rebased = m.commit(&sources)?;
    // An attach that was rebased reports the version it got, not the mirror's.
    match (rebased, cmd) {
        (Some(r), Command::Attach { json, .. }) => super::table::print_attach(&r, None, *json, out),
        _ => {
            out.write_all(&removed_after_grace(&buffered, gc_grace()))?;
            Ok(code)
        }
    }
}

/// A report's "N files removed" (compact, snapshot delete or restore) as it is on object
/// storage: the files leave the table at once, their objects only when a commit at least the
/// garbage grace period later collects them (formats/table.md §"Tables on object storage").
fn removed_after_grace(report: &[u8], grace: i64) -> Vec<u8> {
    let text = String::from_utf8_lossy(report);
    if !text.contains(" files removed") {
        return report.to_vec();
    }
    text.replace(
        " files removed",
        &format!(
            " files removed from the table (their objects stay for readers of older versions \
             and are deleted by the first commit {grace} s or more after this one: \
             HFKIT_S3_GC_GRACE_SECONDS)"
        ),
    )
    .into_bytes()
}

/// A table on object storage mirrored into a staging directory of this run's own, for a local
/// command to work on: opened per its [`Mode`], committed back by [`Mirror::commit`], the
/// staging directory removed when dropped.
pub(super) struct Mirror {
    loc: Location,
    /// The table's URL as the user gave it (messages name the table by it).
    url: PathBuf,
    table: RemoteTable,
    scratch: OwnedDir,
    /// The mirror: `scratch/table`.
    path: PathBuf,
    mode: Mode,
    /// The version mirrored (`None`: no table there yet).
    base: Option<Latest>,
    /// The index tables mirrored under `path/indexes/`, each with its version.
    indexes: Vec<(String, Option<Latest>)>,
    /// Another local copy that messages name by its URL (an attach's bulk-load directory).
    also_shown: Option<(PathBuf, PathBuf)>,
}

impl Mirror {
    /// Mirrors the table at `url` (an `s3://` location) for a command of `mode`.
    fn open(url: &Path, mode: Mode) -> Result<Mirror, CliError> {
        let loc = Location::from_path(url).map_err(|e| CliError::usage(e.to_string()))?;
        let table = RemoteTable::at(&loc).map_err(fail)?;
        // Mirrors of processes killed before they could remove theirs go first.
        crate::table::staging::sweep(&std::env::temp_dir(), MIRROR_PREFIX);
        let scratch = OwnedDir::create(&std::env::temp_dir(), MIRROR_PREFIX).map_err(fail)?;
        let mirror = scratch.path().join("table");
        let (base, indexes) = match mode {
            Mode::Create => {
                if table.exists().map_err(fail)? {
                    return Err(CliError::failure(format!(
                        "{loc}: a table already exists there"
                    )));
                }
                (None, Vec::new())
            }
            Mode::Read { .. } | Mode::Change { .. } => {
                let base = match mode {
                    Mode::Read { ranged: true } => table.read_mirror(&mirror),
                    Mode::Read { ranged: false } | Mode::Change { files: true } => {
                        table.mirror(&mirror, true)
                    }
                    _ => table.mirror(&mirror, false),
                }
                .map_err(fail)?;
                if base.is_none() {
                    return Err(CliError::failure(format!(
                        "{loc}: no table there (no manifests/manifest-*.json)"
                    )));
                }
                // Index tables too (manifests only): `table describe` lists them.
                if matches!(mode, Mode::Read { .. }) {
                    mirror_indexes(&loc, &mirror)?;
                }
                (base, Vec::new())
            }
            Mode::Attach => {
                let base = table.mirror(&mirror, false).map_err(fail)?;
                let indexes = mirror_indexes(&loc, &mirror)?;
                (base, indexes)
            }
        };
        Ok(Mirror {
            loc,
            url: url.to_path_buf(),
            table,
            scratch,
            path: mirror,
            mode,
            base,
            indexes,
            also_shown: None,
        })
    }

    /// Mirrors the table at `url` for an import into it (`import --table URL`).
    pub(super) fn for_import(url: &Path) -> Result<Mirror, CliError> {
        Mirror::open(url, Mode::Attach)
    }

    /// The local mirror of the table.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// `b` with the mirror's path (and the other local copy's) shown as the URL.
    pub(super) fn shown(&self, b: &[u8]) -> Vec<u8> {
        let mut t = String::from_utf8_lossy(b).replace(
            &self.path.display().to_string(),
            &self.url.display().to_string(),
        );
        if let Some((local, dir)) = &self.also_shown {
            t = t.replace(&local.display().to_string(), &dir.display().to_string());
        }
        t.into_bytes()
    }

    /// `e` with its message naming the table by its URL.
    pub(super) fn shown_error(&self, e: CliError) -> CliError {
        CliError {
            message: String::from_utf8_lossy(&self.shown(e.message.as_bytes())).into_owned(),
            ..e
        }
    }

    /// Commits what the command changed in the mirror: the index tables first (as locally: an
    /// index entry whose row is not yet visible is harmless; a row missing from its index is
    /// not), then the table (files with the bytes of one of `sources` copied server-side);
    /// then removes what dead writers left. An attach that lost to another writer is attached
    /// again, and its report returned.
    pub(super) fn commit(&self, sources: &[CopySource]) -> Result<Option<AttachReport>, CliError> {
        // A stop asked for before the commit: nothing is committed.
        if let Some(signal) = crate::storage::interrupt::requested() {
            return Err(CliError::interrupted(signal));
        }
        let (loc, mirror, mode) = (&self.loc, &self.path, self.mode);
        let ix_dir = mirror.join(crate::table::directory::INDEX_DIR);
        let ix_table = |q: &str| {
            RemoteTable::at(&loc.join(&format!("{}/{q}", crate::table::directory::INDEX_DIR)))
                .map_err(fail)
        };
        for (q, ix_base) in &self.indexes {
            commit(
                &ix_table(q)?,
                &ix_dir.join(q),
                ix_base.as_ref(),
                mode,
                self.scratch.path(),
                &[],
            )?;
        }
        for q in list_dirs(&ix_dir)
            .iter()
            .filter(|q| !self.indexes.iter().any(|(n, _)| n == *q))
        {
            commit(
                &ix_table(q)?,
                &ix_dir.join(q),
                None,
                mode,
                self.scratch.path(),
                &[],
            )?;
        }
        let mut rebased = None;
        let made = mirror.join(crate::table::manifest::CURRENT).exists();
        if made {
            rebased = commit(
                &self.table,
                mirror,
                self.base.as_ref(),
                mode,
                self.scratch.path(),
                sources,
            )?;
        }
        // The next writer removes what dead ones left (formats/table.md); where there is no
        // table (a dry run of an import into a new one), there is nothing to collect.
        if made || self.base.is_some() {
            if let Err(e) = self.table.collect_garbage(gc_grace()) {
                note!("hfkit: warning: {loc}: garbage collection: {e}");
            }
        }
        Ok(rebased)
    }
}

/// Data files no version names are deleted once this old (seconds, by the store's clock):
/// `$HFKIT_S3_GC_GRACE_SECONDS`, else an hour, far longer than any commit takes.
fn gc_grace() -> i64 {
    std::env::var("HFKIT_S3_GC_GRACE_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3600)
}

/// Commits the mirror `dir` of `table` (files with the bytes of one of `sources` copied
/// server-side); an attach that lost is attached again, and its report returned.
fn commit(
    table: &RemoteTable,
    dir: &Path,
    base: Option<&Latest>,
    mode: Mode,
    scratch: &Path,
    sources: &[CopySource],
) -> Result<Option<AttachReport>, CliError> {
    match table.commit_copying(dir, base, sources) {
        Ok(_) => Ok(None),
        Err(RemoteError::Conflict { version, .. }) if mode == Mode::Attach => {
            // Created by another writer meanwhile, or a version taken: attach again.
            let r = rebase_attach(table, dir, base, scratch, sources).map_err(fail)?;
            note!(
                "hfkit: note: {}: another writer committed version {version} first; attached again as version {} (sequence id {})",
                table.root(),
                r.version,
                r.seq_id
            );
            Ok(Some(r))
        }
        Err(RemoteError::Conflict { version, .. }) if mode == Mode::Create => {
            Err(CliError::failure(format!(
                "{}: a table already exists there (version {version})",
                table.root()
            )))
        }
        Err(e) => Err(fail(e)),
    }
}

/// The index tables of the remote table at `loc`, mirrored into `mirror/indexes/<name>`.
fn mirror_indexes(
    loc: &Location,
    mirror: &Path,
) -> Result<Vec<(String, Option<Latest>)>, CliError> {
    let ix_root = loc.join(crate::table::directory::INDEX_DIR);
    let store = store_for(&ix_root).map_err(fail)?;
    let mut names: Vec<String> = store
        .list(&ix_root)
        .map_err(fail)?
        .iter()
        .filter_map(|i| {
            let rel = i.location.relative_to(&ix_root)?;
            rel.contains("/manifests/")
                .then(|| rel.split('/').next().unwrap_or("").to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    let mut out = Vec::new();
    for q in names {
        let t = RemoteTable::at(&ix_root.join(&q)).map_err(fail)?;
        let dir = mirror.join(crate::table::directory::INDEX_DIR).join(&q);
        let base = t.mirror(&dir, false).map_err(fail)?;
        out.push((q, base));
    }
    Ok(out)
}

fn list_dirs(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}

/// Replaces the argument `from` by `to`.
pub(super) fn substitute(args: &mut [OsString], from: &Path, to: &Path) {
    if let Some(a) = args
        .iter_mut()
        .skip(1)
        .find(|a| Path::new(a.as_os_str()) == from)
    {
        *a = to.as_os_str().to_os_string();
    }
}

/// True when the object-storage path `url` is in the bucket of `table`.
fn same_bucket(url: &Path, table: &Location) -> bool {
    match Location::from_path(url) {
        Ok(u) => u.bucket().is_some() && u.bucket() == table.bucket(),
        Err(_) => false,
    }
}

/// Downloads every object below `url` into the local directory `to`: what each was (its
/// ETag as listed, the bytes read), for a server-side copy of it.
fn download_tree(url: &Path, to: &Path) -> Result<Vec<CopySource>, CliError> {
    let base = Location::from_path(url).map_err(|e| CliError::usage(e.to_string()))?;
    let store = store_for(&base).map_err(fail)?;
    crate::table::remote::download_sources(&store, &base, to).map_err(fail)
}
