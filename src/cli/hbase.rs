//! `hfkit hbase ...`: HBase's own root directories, offline, over `crate::hbase`: list, describe,
//! verify, get and scan tables and snapshots. (`hfkit table clone-hbase` is here too.)

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use super::error::{CliError, EXIT_OK};
use super::read::{get_from, scan_from, CommonReadArgs, ReadFormat, ScanQueryArgs};
use crate::format::cell::now_ms;
use crate::format::text::hex;
use crate::hbase::manifest::{Manifest, Source};
use crate::hbase::verify::regions_in_order;
use crate::hbase::HBaseRoot;
use crate::table::to_string_binary;

const CLONE_AFTER_HELP: &str = concat!(
    "\
Creates a table directory (see `hfkit table --help`) from an HBase table or snapshot of an
HBase root directory, offline: its live regions become the table's regions, its HFiles (found
through links in data/ or archive/) are hard-linked (or copied) as they are, and split
references are rewritten as their half with the family's settings. Files keep HBase's order:
they are attached in sequence id order. All or nothing: on failure DEST is not created.

",
    examples!(
        "hfkit table clone-hbase /tmp/hbase-root /tmp/hfkit-users-from-hbase --snapshot users_20240101 --name app:users_clone",
        "hfkit table clone-hbase /tmp/hbase-live t1 /tmp/hfkit-t1",
    ),
);

const EXPORT_AFTER_HELP: &str = concat!(
    "\
Writes an hfkit table (or one of its snapshots) into an HBase root directory as an HBase
snapshot, laid out as HBase's ExportSnapshot leaves one: the store files (hard-linked, or copied
across filesystems, and verified) under archive/data/<ns>/<table>/<encoded region>/<family>/,
then .hbase-snapshot/<name>/ with .snapshotinfo (format v2, FLUSH) and data.manifest (the
families' attributes under HBase's names, one region per hfkit region, exact file sizes). In
HBase: clone_snapshot '<name>', '<table>'. Files keep their _SeqId_<n>_ names, so HBase gives
their cells the sequence ids hfkit reads them with. The copies are staged under
.hbase-snapshot/.tmp/hfkit-export-<name>.*/ and the snapshot appears last; what a killed export
left there (and moved into archive/) is removed by the next export into the same root.
ROOT may be on object storage (s3://bucket/hbase): the export is made locally, then its files
are written, the snapshot's .snapshotinfo last (formats/hbase-layout.md, section Export into a
root on object storage).

",
    examples!(
        "hfkit hbase export-snapshot /tmp/hfkit-users /tmp/hbase-root --name users_20240101",
        "hfkit hbase export-snapshot /tmp/hfkit-users-copy /tmp/hbase-root --name users_copy --hbase-table app:users_copy",
    ),
);

const COPY_AFTER_HELP: &str = concat!(
    "\
Copies an HBase snapshot from one root directory to another, as HBase's ExportSnapshot does:
every HFile the snapshot names (the file holding the bytes, found through links in data/ or
archive/, and a reference's parent file) is copied to the target's
archive/data/<ns>/<table>/<region>/<family>/, verified in full, and the snapshot's directory
(.snapshotinfo, data.manifest) is copied byte for byte and appears last, so that HBase sees the
whole snapshot or none (clone_snapshot then makes a table of it). Files the target's archive
holds already with the same bytes are not copied again. --threads copies several files at once
(ExportSnapshot's -mappers); --bandwidth caps the whole copy (ExportSnapshot's -bandwidth, per
mapper there). SRC may be on object storage (s3://bucket/hbase). A killed copy is rolled back
by the next copy or export into DEST. On Spark: hfkit.spark.copy_snapshot.

",
    examples!(
        "hfkit hbase copy-snapshot /tmp/hbase-root /tmp/hbase-root-2 --snapshot users_20240101 --threads 2",
        "hfkit hbase copy-snapshot /tmp/hbase-root /tmp/hbase-root-3 --snapshot users_copy --bandwidth 50",
    ),
);

const COMPACT_AFTER_HELP: &str = concat!(
    "\
Major-compacts the stores of an HBase table in place, offline, as HBase's CompactionTool does:
per store (region x family) one new HFile with HBase's major-compaction rules (delete markers,
masked, expired and excess versions dropped, KEEP_DELETED_CELLS honoured; cells keep their
sequence ids), written under the region's .tmp/ and verified, then moved into the store; the
old files are moved to archive/data/<ns>/<table>/<region>/<family>/ as HBase's HFileArchiver
does, so snapshots naming them still read.

Refused, with nothing changed, when HBase may be using the table: a region server has
write-ahead logs under WALs/, or a region of the table has files under .tmp/, recovered.edits/,
.splits/ or .merges/. HBase keeps whether a table is enabled only in hbase:meta: stop HBase (or
disable the table) first. A split daughter's references are compacted away (read as their
half of the parent's file, then archived), as HBase does; a FILE store-file-tracker store
commits by a new .filelist track file naming the output instead of the inputs. What a killed
run left is cleaned up by the next: its own outputs (.tmp/<family>/hfkit-compact-*) are
removed, inputs it had compacted but not archived are archived.

ROOT may be s3://bucket/prefix (hbase.rootdir on S3): the store files are read by byte ranges,
each output is written locally, verified, then uploaded to its store (no rename: the upload is
the commit, or the new .filelist's for a FILE-tracker store), and inputs are archived by
server-side copies; a lock object under the root's .tmp/ keeps a second run out.

",
    examples!(
        "hfkit hbase compact /tmp/hbase-live t1 --region 3997d7168c1693a7e337a840fa1290a5 --family cf2",
        "hfkit hbase compact /tmp/hbase-live t1",
    ),
);

const LS_AFTER_HELP: &str = concat!(
    "\
Lists the namespaces' tables (with their regions; split and merge parents, whose directories
HBase keeps until its CatalogJanitor runs, are counted apart) and the snapshots of an HBase root
directory (hbase.rootdir), read offline: nothing is written.

",
    examples!("hfkit hbase ls /tmp/hbase-root",),
);

const DESCRIBE_AFTER_HELP: &str = concat!(
    "\
Shows a table's or a snapshot's schema as the HBase shell's `describe` prints it, its regions
(split parents marked: they are never read) and every store file: its kind (hfile, link,
reference top/bottom), the HFile it resolves to (through data/, archive/, .tmp/, mobdir/) and
that file's size.

",
    examples!(
        "hfkit hbase describe /tmp/hbase-root --snapshot users_20240101 --json",
        "hfkit hbase describe /tmp/hbase-live ns1:t2",
    ),
);

const VERIFY_AFTER_HELP: &str = concat!(
    "\
Checks every store file of a snapshot (or table): it resolves (links through data/ then
archive/, references to their parent region's file), has the size the manifest recorded,
verifies as an HFile and reads to its end. Prints per store the files, cells and a SHA-256 of
its cells, and the total over the live regions (split parents left out: their cells are their
daughters'). A digest covers each cell's row, family, qualifier, timestamp, type, value and
tags (its canonical line, in HBase's cell order), not its sequence id, file, or region: the
same cells give the same digest in a copy (clone-hbase, export-snapshot), one changed cell
another. Exit 0 when sound, 1 with every problem (file and reason) otherwise.

",
    examples!(
        "hfkit hbase verify /tmp/hbase-root --snapshot users_20240101",
        "hfkit hbase verify /tmp/hbase-live ns1:t2",
    ),
);

const GET_AFTER_HELP: &str = concat!(
    "\
Reads one row of an HBase table or snapshot, offline, with HBase's read semantics and the
options and formats of `hfkit get` (see `hfkit get --help`). Store files are read as HBase reads
them: links resolved, split references as their half, cells with their own sequence ids.

",
    examples!(
        "hfkit hbase get /tmp/hbase-root --snapshot users_20240101 7700000000 --format json",
        "hfkit hbase get /tmp/hbase-live t1 b1 --column cf1 --versions 3",
    ),
);

const SCAN_AFTER_HELP: &str = concat!(
    "\
Scans an HBase table or snapshot, offline, region after region (split parents are not read:
their rows are in their daughters), with the options and formats of `hfkit scan` (see `hfkit
scan --help`).

",
    examples!(
        "hfkit hbase scan /tmp/hbase-root --snapshot users_20240101 --limit 3",
        "hfkit hbase scan /tmp/hbase-live ns1:t2 --start r05 --limit 10",
    ),
);

/// A table or a snapshot of a root directory.
#[derive(Debug, Args)]
pub struct Target {
    /// The HBase root directory (hbase.rootdir): a local path or s3://bucket/prefix.
    root: PathBuf,
    /// The table (`name` or `namespace:name`).
    #[arg(required_unless_present = "snapshot")]
    table: Option<String>,
    /// A snapshot instead of a table.
    #[arg(long, value_name = "NAME", conflicts_with = "table")]
    snapshot: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum HbaseCommand {
    /// List the tables and snapshots of an HBase root directory.
    #[command(after_help = LS_AFTER_HELP)]
    Ls {
        /// The HBase root directory (hbase.rootdir): a local path or s3://bucket/prefix.
        root: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Show a table's or snapshot's schema, regions and store files.
    #[command(after_help = DESCRIBE_AFTER_HELP)]
    Describe {
        #[command(flatten)]
        target: Target,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Verify a snapshot's (or table's) store files; per-store cell counts and digests.
    #[command(after_help = VERIFY_AFTER_HELP)]
    Verify {
        #[command(flatten)]
        target: Target,
        /// Machine-readable report on standard output (`ok`, `stores` with their digests,
        /// `total_cells`, `total_sha256`, `problems`), also when not sound (exit 1).
        #[arg(long)]
        json: bool,
    },
    /// Read one row of a table or snapshot.
    #[command(after_help = GET_AFTER_HELP, allow_missing_positional = true)]
    Get(GetArgs),
    /// Scan rows of a table or snapshot.
    #[command(after_help = SCAN_AFTER_HELP)]
    Scan(ScanArgs),
    /// Export an hfkit table (or one of its snapshots) as an HBase snapshot.
    #[command(after_help = EXPORT_AFTER_HELP)]
    ExportSnapshot(ExportArgs),
    /// Copy an HBase snapshot to another root directory (HBase's ExportSnapshot).
    #[command(after_help = COPY_AFTER_HELP)]
    CopySnapshot {
        /// The HBase root directory holding the snapshot: a local path or s3://bucket/prefix.
        src: PathBuf,
        /// The HBase root directory to copy it into (created when absent).
        dest: PathBuf,
        /// The snapshot.
        #[arg(long, value_name = "NAME")]
        snapshot: String,
        /// Files copied at once.
        #[arg(long, value_name = "N", default_value_t = 1)]
        threads: usize,
        /// At most this many megabytes a second, for the whole copy.
        #[arg(long, value_name = "MB")]
        bandwidth: Option<f64>,
        /// Machine-readable report.
        #[arg(long)]
        json: bool,
    },
    /// Major-compact an HBase table's stores in place, offline (HBase's CompactionTool).
    #[command(after_help = COMPACT_AFTER_HELP)]
    Compact {
        /// The HBase root directory (hbase.rootdir).
        root: PathBuf,
        /// The table (`name` or `namespace:name`).
        table: String,
        /// Only this region (encoded name).
        #[arg(long, value_name = "ENCODED")]
        region: Option<String>,
        /// Only this family.
        #[arg(long, value_name = "F")]
        family: Option<String>,
        /// "Now" for TTL, in epoch ms (default: the current time). Also `--now-ms`.
        #[arg(long, value_name = "MS", alias = "now-ms")]
        now: Option<i64>,
        /// Machine-readable report.
        #[arg(long)]
        json: bool,
    },
}

/// `hfkit hbase export-snapshot TABLE ROOT --name S`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The hfkit table directory.
    table: PathBuf,
    /// The HBase root directory to write into (created when absent): a local path or
    /// s3://bucket/prefix.
    root: PathBuf,
    /// Name of the HBase snapshot.
    #[arg(long, value_name = "NAME")]
    name: String,
    /// Export this hfkit snapshot instead of the live table.
    #[arg(long, value_name = "NAME")]
    snapshot: Option<String>,
    /// HBase table name (default: the hfkit table's).
    #[arg(long = "hbase-table", value_name = "NS:TABLE")]
    hbase_table: Option<String>,
    /// Machine-readable report.
    #[arg(long)]
    json: bool,
}

/// `hfkit hbase get ROOT [TABLE] ROW [--snapshot S]`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// The HBase root directory (hbase.rootdir): a local path or s3://bucket/prefix.
    root: PathBuf,
    /// The table (omit with --snapshot).
    table: Option<String>,
    /// The row (toStringBinary text, `\xNN` escapes).
    row: String,
    /// A snapshot instead of a table.
    #[arg(long, value_name = "NAME", conflicts_with = "table")]
    snapshot: Option<String>,
    #[command(flatten)]
    common: CommonReadArgs,
    #[command(flatten)]
    mob: MobArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ReadFormat,
}

/// `hfkit hbase scan ROOT (TABLE | --snapshot S)`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    #[command(flatten)]
    target: Target,
    #[command(flatten)]
    query: ScanQueryArgs,
    #[command(flatten)]
    mob: MobArgs,
}

/// `hfkit table clone-hbase ROOT [TABLE] DEST [--snapshot S]`.
#[derive(Debug, Args)]
#[command(after_help = CLONE_AFTER_HELP, allow_missing_positional = true)]
pub struct CloneArgs {
    /// The HBase root directory (hbase.rootdir): a local path or s3://bucket/prefix.
    root: PathBuf,
    /// The HBase table (omit with --snapshot).
    table: Option<String>,
    /// The table directory to create (absent or empty).
    dest: PathBuf,
    /// Clone this snapshot instead of a table.
    #[arg(long, value_name = "NAME", conflicts_with = "table")]
    snapshot: Option<String>,
    /// Name of the new table (default: the HBase table's).
    #[arg(long, value_name = "NS:TABLE")]
    name: Option<String>,
    /// Machine-readable report.
    #[arg(long)]
    json: bool,
}

/// `hfkit table clone-hbase`.
pub fn clone(a: CloneArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let m = load(&a.root, a.table.as_deref(), a.snapshot.as_deref())?;
    let r = crate::hbase::clone::clone_to_table(&m, &a.dest, a.name.as_deref(), now_ms())
        .map_err(failure)?;
    if a.json {
        writeln!(out, "{}", json!(r))?;
    } else {
        writeln!(
            out,
            "cloned {} into {}: {} region(s), {} file(s) linked, {} reference half(s) rewritten ({} empty), {} MOB family file(s) rewritten with their values, manifest version {}",
            m.table().full_name(),
            r.table.display(),
            r.regions,
            r.files_linked,
            r.halves_written,
            r.empty_halves,
            r.mob_files_resolved,
            r.version
        )?;
    }
    Ok(EXIT_OK)
}

/// The resolver of `m`'s MOB reference cells (none without MOB families); with `--raw`, none,
/// and a note that references are shown as stored.
fn mob_resolver(m: &Manifest, raw: bool, mob: &MobArgs) -> Option<crate::hbase::mob::MobResolver> {
    let r = crate::hbase::mob::MobResolver::of(m)?.empty_on_miss(mob.empty_value_on_mob_miss);
    if raw {
        note!(
            "hfkit: note: --raw: the MOB families' reference cells are shown as stored (value: \
             length and MOB file name), not resolved"
        );
        return None;
    }
    Some(r)
}

/// After a read: a warning when references were read as empty values.
fn note_mob_misses(r: Option<&crate::hbase::mob::MobResolver>) {
    if let Some((n, Some(first))) = r.map(|r| r.misses()).filter(|m| m.0 > 0) {
        note!(
            "hfkit: warning: {n} MOB reference(s) read as empty values \
             (--empty-value-on-mob-miss); the first: {first}"
        );
    }
}

/// How a read treats MOB references it cannot resolve.
#[derive(Debug, Args)]
pub struct MobArgs {
    /// A MOB reference whose MOB file is missing or damaged (or lacks its cell) reads as its
    /// key with an empty value, with a warning, instead of failing the read (HBase's
    /// `empty.value.on.mobcell.miss` scan attribute).
    #[arg(long)]
    empty_value_on_mob_miss: bool,
}

/// `r` as a read's cell resolver.
fn resolving(r: &crate::hbase::mob::MobResolver) -> super::read::BoxedCellResolver<'_> {
    Box::new(move |c| r.resolve(c).map_err(failure))
}

fn failure(e: impl std::fmt::Display) -> CliError {
    CliError::failure(e.to_string())
}

fn open_root(root: &Path) -> Result<HBaseRoot, CliError> {
    HBaseRoot::open(root).map_err(failure)
}

/// The manifest of `table` or `snapshot` in `root`.
fn load(root: &Path, table: Option<&str>, snapshot: Option<&str>) -> Result<Manifest, CliError> {
    let r = open_root(root)?;
    match (table, snapshot) {
        (_, Some(s)) => r.snapshot(s).map_err(failure),
        (Some(t), None) => r.table(t).map_err(failure),
        (None, None) => Err(CliError::usage("give a TABLE or --snapshot NAME")),
    }
}

impl Target {
    fn load(&self) -> Result<Manifest, CliError> {
        load(&self.root, self.table.as_deref(), self.snapshot.as_deref())
    }
}

impl HbaseCommand {
    /// The HBase root a command reads from (`None` for the commands that write one), or
    /// compacts in place: on object storage, it is read through a root mirror.
    pub fn read_root(&self) -> Option<&Path> {
        match self {
            HbaseCommand::Ls { root, .. } => Some(root),
            HbaseCommand::Describe { target, .. } | HbaseCommand::Verify { target, .. } => {
                Some(&target.root)
            }
            HbaseCommand::Scan(a) => Some(&a.target.root),
            HbaseCommand::Get(a) => Some(&a.root),
            HbaseCommand::CopySnapshot { src, .. } => Some(src),
            HbaseCommand::Compact { root, .. } => Some(root),
            HbaseCommand::ExportSnapshot(_) => None,
        }
    }
}

impl CloneArgs {
    /// The HBase root read.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

pub fn run(cmd: HbaseCommand, out: &mut dyn Write) -> Result<i32, CliError> {
    match cmd {
        HbaseCommand::Ls { root, json } => ls(&root, json, out),
        HbaseCommand::Describe { target, json } => describe(&target.load()?, json, out),
        HbaseCommand::Verify { target, json } => verify_cmd(&target.load()?, json, out),
        HbaseCommand::Get(a) => {
            let m = load(&a.root, a.table.as_deref(), a.snapshot.as_deref())?;
            let reader = m.reader().map_err(failure)?;
            let mob = mob_resolver(&m, a.common.raw(), &a.mob);
            let resolve = mob.as_ref().map(|r| resolving(r));
            let code = get_from(
                &reader,
                &a.row,
                &a.common,
                a.format,
                resolve.as_deref(),
                out,
            );
            note_mob_misses(mob.as_ref());
            code
        }
        HbaseCommand::Scan(a) => {
            let m = a.target.load()?;
            let reader = m.reader().map_err(failure)?;
            let mob = mob_resolver(&m, a.query.raw(), &a.mob);
            let resolve = mob.as_ref().map(|r| resolving(r));
            let code = scan_from(&reader, &a.query, resolve.as_deref(), out);
            note_mob_misses(mob.as_ref());
            code
        }
        HbaseCommand::ExportSnapshot(a) => export_snapshot(a, out),
        HbaseCommand::CopySnapshot {
            src,
            dest,
            snapshot,
            threads,
            bandwidth,
            json,
        } => {
            if threads == 0 || threads > 64 {
                return Err(CliError::usage("--threads: 1 to 64"));
            }
            let bandwidth = match bandwidth {
                Some(mb) if mb.is_finite() && mb > 0.0 => Some((mb * 1e6) as u64),
                Some(_) => return Err(CliError::usage("--bandwidth: a positive number of MB/s")),
                None => None,
            };
            let root = open_root(&src)?;
            let shown = std::cell::OnceCell::new();
            let progress = |total: u64| -> Box<dyn Fn(u64) + Sync> {
                let p = std::sync::Arc::new(super::progress::Progress::new(
                    "hbase copy-snapshot",
                    total,
                    super::progress::Unit::Bytes,
                ));
                let _ = shown.set(p.clone());
                Box::new(move |n| p.add(n))
            };
            let r = crate::hbase::copy::copy_snapshot(
                &root, &snapshot, &dest, threads, bandwidth, &progress,
            );
            if let Some(p) = shown.get() {
                p.finish();
            }
            let r = r.map_err(failure)?;
            if json {
                writeln!(out, "{}", json!(r))?;
            } else {
                writeln!(
                    out,
                    "copied snapshot {snapshot} of {} to {}: {} file(s) ({} already there), {} bytes copied",
                    src.display(),
                    r.snapshot_dir.display(),
                    r.files,
                    r.files_present,
                    r.bytes
                )?;
            }
            Ok(EXIT_OK)
        }
        HbaseCommand::Compact {
            root,
            table,
            region,
            family,
            now,
            json,
        } => {
            let m = load(&root, Some(&table), None)?;
            let opts = crate::hbase::compact::CompactOptions {
                now_ms: now.unwrap_or_else(now_ms),
                region,
                family,
            };
            let r = crate::hbase::compact::compact_in_place(&m, &opts).map_err(failure)?;
            if json {
                writeln!(out, "{}", json!(r))?;
                return Ok(EXIT_OK);
            }
            for s in &r.stores {
                writeln!(
                    out,
                    "{}/{}: {} file(s) -> {} ({} cells, {} delete markers); inputs archived",
                    s.region,
                    s.family,
                    s.inputs.len(),
                    s.output
                        .as_deref()
                        .unwrap_or("no file (every cell dropped)"),
                    s.output_cells,
                    s.output_markers
                )?;
            }
            writeln!(out, "{} store(s) compacted", r.stores.len())?;
            Ok(EXIT_OK)
        }
    }
}

/// The local staging directories of exports into roots on object storage, under `$TMPDIR`.
const EXPORT_STAGING_PREFIX: &str = "hfkit-hbase-export-";

fn export_snapshot(a: ExportArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let t = crate::table::directory::Table::open(&a.table)
        .map_err(|e| CliError::failure(format!("{}: {e}", a.table.display())))?;
    let opts = crate::hbase::export::ExportOptions {
        name: a.name,
        from_snapshot: a.snapshot,
        table: a.hbase_table,
        creation_time: now_ms(),
    };
    let r = match crate::storage::Location::is_remote_path(&a.root) {
        true => {
            let url = crate::storage::Location::from_path(&a.root)
                .map_err(|e| CliError::usage(e.to_string()))?;
            // Killed runs' staging first, then this run's own (removed when dropped).
            let tmp = std::env::temp_dir();
            crate::table::staging::sweep(&tmp, EXPORT_STAGING_PREFIX);
            let scratch = crate::table::staging::OwnedDir::create(&tmp, EXPORT_STAGING_PREFIX)
                .map_err(failure)?;
            crate::hbase::export_s3::export_snapshot_to(&t, &url, &opts, scratch.path())
                .map_err(failure)?
        }
        false => crate::hbase::export::export_snapshot(&t, &a.root, &opts).map_err(failure)?,
    };
    if a.json {
        writeln!(out, "{}", json!(r))?;
    } else {
        writeln!(
            out,
            "exported {} as HBase snapshot {} of table {}: {} region(s), {} file(s) ({} already archived), {} bytes",
            a.table.display(),
            r.snapshot_dir.display(),
            r.table,
            r.regions,
            r.files,
            r.files_present,
            r.bytes
        )?;
    }
    Ok(EXIT_OK)
}

fn ls(root: &Path, as_json: bool, out: &mut dyn Write) -> Result<i32, CliError> {
    let r = open_root(root)?;
    let mut tables = Vec::new();
    let mut unreadable = 0;
    for t in r.tables().map_err(failure)? {
        let name = format!("{}:{}", t.namespace, t.qualifier);
        match r.table(&name) {
            Ok(m) => {
                let parents = m.regions.iter().filter(|x| !x.live).count();
                tables.push(json!({
                    "table": name,
                    "regions": m.regions.len() - parents,
                    "parents": parents,
                    "families": m.descriptor.sorted_families().iter().map(|f| f.name_str()).collect::<Vec<_>>(),
                }));
            }
            Err(e) => {
                unreadable += 1;
                tables.push(json!({"table": name, "error": e.to_string()}));
            }
        }
    }
    let snapshots: Vec<Value> = r
        .snapshots()
        .map_err(failure)?
        .into_iter()
        .map(|s| {
            json!({"snapshot": s.name, "table": s.table, "type": s.snapshot_type,
                   "version": s.version, "creation_time": s.creation_time})
        })
        .collect();
    if as_json {
        let v = json!({
            "root": root.display().to_string(),
            "version": r.version().map_err(failure)?,
            "cluster_id": r.cluster_id().map_err(failure)?,
            "tables": tables,
            "snapshots": snapshots,
        });
        writeln!(out, "{v}")?;
        return ls_result(unreadable);
    }
    writeln!(
        out,
        "{} (hbase.version {}, cluster id {})",
        root.display(),
        r.version().map_err(failure)?.unwrap_or_else(|| "-".into()),
        r.cluster_id()
            .map_err(failure)?
            .unwrap_or_else(|| "-".into())
    )?;
    for t in &tables {
        if let Some(e) = t.get("error").and_then(Value::as_str) {
            writeln!(
                out,
                "TABLE     {}  ERROR {e}",
                t["table"].as_str().unwrap_or("")
            )?;
            continue;
        }
        let families: Vec<&str> = t["families"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let parents = t["parents"].as_u64().unwrap_or(0);
        let parents = if parents > 0 {
            format!(" (+{parents} split/merge parent(s))")
        } else {
            String::new()
        };
        writeln!(
            out,
            "TABLE     {}  {} region(s){parents}  families {}",
            t["table"].as_str().unwrap_or(""),
            t["regions"],
            families.join(", ")
        )?;
    }
    for s in &snapshots {
        writeln!(
            out,
            "SNAPSHOT  {}  table {}  {} v{}  created {}",
            s["snapshot"].as_str().unwrap_or(""),
            s["table"].as_str().unwrap_or(""),
            s["type"].as_str().unwrap_or(""),
            s["version"],
            s["creation_time"]
        )?;
    }
    writeln!(
        out,
        "{} table(s), {} snapshot(s)",
        tables.len(),
        snapshots.len()
    )?;
    ls_result(unreadable)
}

/// Exit 1 when a table could not be read (each was listed with its error).
fn ls_result(unreadable: usize) -> Result<i32, CliError> {
    match unreadable {
        0 => Ok(EXIT_OK),
        n => Err(CliError::failure(format!(
            "{n} table(s) could not be read (listed with ERROR)"
        ))),
    }
}

fn key_text(k: &[u8]) -> String {
    to_string_binary(k)
}

fn describe(m: &Manifest, as_json: bool, out: &mut dyn Write) -> Result<i32, CliError> {
    let (what, dir) = match &m.source {
        Source::Table { dir } => (format!("Table {}", m.table().full_name()), dir),
        Source::Snapshot { dir, description } => (
            format!(
                "Snapshot {} of table {} ({} v{}, created {})",
                description.name,
                description.table,
                description.snapshot_type,
                description.version,
                description.creation_time
            ),
            dir,
        ),
    };
    let mut regions = Vec::new();
    for r in regions_in_order(m) {
        let mut files = Vec::new();
        for ff in &r.families {
            let family = String::from_utf8_lossy(&ff.family).into_owned();
            for f in &ff.files {
                let mut v = json!({"family": family, "name": f.name});
                match m.resolve(r, &family, f) {
                    Ok(res) => {
                        v["kind"] = json!(res.kind());
                        v["path"] = json!(res.path.display().to_string());
                        v["size"] = json!(res.size);
                        if let Some(rf) = &res.reference {
                            v["split_key"] = json!(hex(&rf.split_key));
                            v["split_row"] = json!(rf.split_row().map(key_text));
                        }
                    }
                    Err(e) => v["error"] = json!(e.to_string()),
                }
                files.push(v);
            }
        }
        regions.push(json!({
            "encoded_name": r.info.encoded_name(),
            "region_name": r.info.region_name_string(),
            "start_key": key_text(&r.info.start_key),
            "end_key": key_text(&r.info.end_key),
            "region_id": r.info.region_id,
            "live": r.live,
            "split": r.info.split,
            "offline": r.info.offline,
            "files": files,
        }));
    }
    if as_json {
        let v = json!({
            "what": what,
            "dir": dir.display().to_string(),
            "describe": m.descriptor.describe(),
            "regions": regions,
        });
        writeln!(out, "{v}")?;
        return Ok(EXIT_OK);
    }
    writeln!(out, "{what}: {}", dir.display())?;
    writeln!(out, "{}", m.descriptor.describe())?;
    for r in &regions {
        let state = if r["live"].as_bool() == Some(true) {
            ""
        } else {
            "  split/merge parent (not read)"
        };
        writeln!(
            out,
            "REGION {}  [{}, {})  id {}{state}",
            r["encoded_name"].as_str().unwrap_or(""),
            r["start_key"].as_str().unwrap_or(""),
            r["end_key"].as_str().unwrap_or(""),
            r["region_id"]
        )?;
        for f in r["files"].as_array().into_iter().flatten() {
            let s = |k: &str| f[k].as_str().unwrap_or("").to_string();
            if f.get("error").is_some() {
                writeln!(
                    out,
                    "  {}  {}  ERROR {}",
                    s("family"),
                    s("name"),
                    s("error")
                )?;
                continue;
            }
            let split = match f.get("split_row").and_then(Value::as_str) {
                Some(row) => format!(" at '{row}'"),
                None => String::new(),
            };
            writeln!(
                out,
                "  {}  {}  {}{split}  {} bytes  {}",
                s("family"),
                s("name"),
                s("kind"),
                f["size"],
                s("path")
            )?;
        }
    }
    Ok(EXIT_OK)
}

/// [`verify`] of `m` with live progress (files).
fn verify_showing_progress(m: &Manifest) -> crate::hbase::verify::VerifyReport {
    use super::progress::{Progress, Unit};
    let p = Progress::new(
        "hbase verify",
        crate::hbase::verify::file_count(m),
        Unit::Files,
    );
    let report = crate::hbase::verify::verify_with_progress(m, &|n| p.add(n));
    p.finish();
    report
}

fn verify_cmd(m: &Manifest, json: bool, out: &mut dyn Write) -> Result<i32, CliError> {
    if json {
        let report = verify_showing_progress(m);
        let (kind, name) = match &m.source {
            Source::Snapshot { description: d, .. } => ("snapshot", d.name.clone()),
            _ => ("table", m.table().full_name()),
        };
        let stores: Vec<serde_json::Value> = report
            .stores
            .iter()
            .map(|s| {
                serde_json::json!({"region": s.region, "family": s.family, "files": s.files,
                                   "cells": s.cells, "sha256": s.sha256})
            })
            .collect();
        let doc = serde_json::json!({
            kind: name,
            "table": m.table().full_name(),
            "ok": report.is_ok(),
            "stores": stores,
            "total_cells": report.total_cells,
            "total_sha256": report.total_sha256,
            "problems": report.problems,
        });
        writeln!(out, "{doc:#}")?;
        return if report.is_ok() {
            Ok(EXIT_OK)
        } else {
            Err(CliError::failure(format!(
                "{} problem(s); the first: {}",
                report.problems.len(),
                report.problems[0]
            )))
        };
    }
    if let Source::Snapshot { description: d, .. } = &m.source {
        writeln!(
            out,
            "snapshot: name={} table={} type={} version={} creation_time={}",
            d.name, d.table, d.snapshot_type, d.version, d.creation_time
        )?;
    } else {
        writeln!(out, "table: {}", m.table().full_name())?;
    }
    let report = verify_showing_progress(m);
    for s in &report.stores {
        writeln!(
            out,
            "store {}/{} files={} cells={} sha256={}",
            s.region, s.family, s.files, s.cells, s.sha256
        )?;
    }
    writeln!(
        out,
        "total_cells={} sha256={}",
        report.total_cells, report.total_sha256
    )?;
    if report.is_ok() {
        writeln!(out, "OK")?;
        return Ok(EXIT_OK);
    }
    for p in &report.problems {
        writeln!(out, "PROBLEM {p}")?;
    }
    Err(CliError::failure(format!(
        "{} problem(s); the first: {}",
        report.problems.len(),
        report.problems[0]
    )))
}
