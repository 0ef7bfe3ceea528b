//! `hfkit table ...` and `hfkit attach`: directory tables over `table::directory`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde_json::json;

use super::error::{CliError, EXIT_ALREADY_IMPORTED, EXIT_OK};
use crate::format::text::{hex, parse_hex};
use crate::pipeline::import::identity::IDENTITY_FILE;
use crate::pipeline::plan::chart::{bar, mark_hot, write as write_chart, RegionBar};
use crate::table::directory::{AttachOptions, Table};
use crate::table::{to_string_binary, TableError};

#[derive(Debug, Subcommand)]
pub enum TableCommand {
    /// Create an empty table directory from a schema file or an HBase shell `create` statement,
    /// e.g. --hbase-shell "create 'ns:t', {NAME => 'd', VERSIONS => 3}, SPLITS => ['m']".
    #[command(after_help = examples!(
        "hfkit table create /tmp/hfkit-events --schema fixtures/seeds/events.toml",
        "hfkit table create /tmp/hfkit-t --hbase-shell \"create 'ns:t', {NAME => 'd', VERSIONS => 3}, SPLITS => ['m']\"",
    ))]
    Create(super::create::CreateArgs),
    /// Show the table's families, regions (each with a bar: its cells against the largest
    /// region's) and live store files (each by its path, for `hfile info`), and the index
    /// tables imported with it (under TABLE/indexes/).
    #[command(after_help = examples!(
        "hfkit table describe /tmp/hfkit-users",
        "hfkit table describe /tmp/hfkit-users --json",
        "hfkit table describe /tmp/hfkit-users --chart /tmp/hfkit-users.svg",
    ))]
    Describe {
        /// The table directory (or `s3://` URL).
        table: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Also write an SVG chart of the regions to FILE: a bar per region, its cells (and
        /// below it its bytes) against the largest region's, its files, hot regions (over
        /// twice the mean cells) in red.
        #[arg(long, value_name = "FILE.svg")]
        chart: Option<PathBuf>,
    },
    /// Check that every live file exists, has its recorded size, verifies and lies in its
    /// region; list orphaned files. Exit 0 when sound, 1 otherwise.
    #[command(after_help = examples!(
        "hfkit table check /tmp/hfkit-users",
        "hfkit table check /tmp/hfkit-users/indexes/users_by_email --json",
    ))]
    Check {
        /// The table directory (or `s3://` URL).
        table: PathBuf,
        /// Machine-readable report on standard output (`ok`, `version`, `files`, `cells`,
        /// `problems`, `orphans`), also when the table is not sound (exit 1).
        #[arg(long)]
        json: bool,
    },
    /// Change a family's settings (compression, encoding, Bloom, block size, VERSIONS,
    /// MIN_VERSIONS, TTL, KEEP_DELETED_CELLS) for later writes: a new manifest version.
    Alter(super::maint::AlterArgs),
    /// Create a table directory from a table or snapshot of an HBase root directory (offline).
    CloneHbase(super::hbase::CloneArgs),
}

fn open(dir: &Path) -> Result<Table, CliError> {
    Table::open(dir).map_err(|e| CliError::failure(format!("{}: {e}", dir.display())))
}

pub fn run(cmd: TableCommand, out: &mut dyn Write) -> Result<i32, CliError> {
    match cmd {
        TableCommand::Create(args) => super::create::table_create(args, out),
        TableCommand::Describe { table, json, chart } => {
            describe(&table, json, chart.as_deref(), out)
        }
        TableCommand::Check { table, json } => check(&table, json, out),
        TableCommand::Alter(args) => {
            super::maint::run(super::maint::MaintCommand::Alter(args), out)
        }
        TableCommand::CloneHbase(args) => super::hbase::clone(args, out),
    }
}

/// `table describe --json`: the manifest, with each key (a region's `start_key`/`end_key`, a
/// file's `first_row`/`last_row`, hex in the manifest) also as toStringBinary text
/// (`start_key_text`, ...), as the text form shows them, and each file's `path` (`path_of`:
/// of the `i`-th file) for `hfile info` and the like.
fn with_text_keys(v: &mut serde_json::Value, path_of: impl Fn(usize) -> String) {
    let text = |o: &mut serde_json::Map<String, serde_json::Value>, keys: &[&str]| {
        for k in keys {
            let bytes = o
                .get(*k)
                .and_then(|h| h.as_str())
                .and_then(|h| parse_hex(h).ok());
            if let Some(b) = bytes {
                o.insert(format!("{k}_text"), json!(to_string_binary(&b)));
            }
        }
    };
    for r in v["regions"].as_array_mut().into_iter().flatten() {
        if let Some(o) = r.as_object_mut() {
            text(o, &["start_key", "end_key"]);
        }
    }
    for (i, f) in v["files"].as_array_mut().into_iter().flatten().enumerate() {
        if let Some(o) = f.as_object_mut() {
            text(o, &["first_row", "last_row"]);
            o.insert("path".into(), json!(path_of(i)));
        }
    }
}

fn describe(
    dir: &Path,
    as_json: bool,
    chart: Option<&Path>,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let t = open(dir)?;
    let m = t.manifest().map_err(|e| CliError::failure(e.to_string()))?;
    let mut bars: Vec<RegionBar> = m
        .regions
        .iter()
        .map(|r| {
            let files: Vec<_> = m.files.iter().filter(|e| e.region == r.id).collect();
            RegionBar {
                label: format!("{} [{}", r.id, show_key(&r.start_key)),
                cells: files.iter().map(|e| e.entries).sum(),
                bytes: Some(files.iter().map(|e| e.size).sum()),
                files: Some(files.len()),
                hot: false,
            }
        })
        .collect();
    mark_hot(&mut bars);
    if let Some(path) = chart {
        let title = format!(
            "{} (manifest version {}): cells and bytes per region",
            m.table, m.version
        );
        write_chart(path, &title, &bars).map_err(CliError::failure)?;
    }
    if as_json {
        let mut v = serde_json::to_value(&m).map_err(|e| CliError::failure(e.to_string()))?;
        with_text_keys(&mut v, |i| t.file_path(&m.files[i]).display().to_string());
        serde_json::to_writer_pretty(&mut *out, &v)?;
        writeln!(out)?;
        return Ok(EXIT_OK);
    }
    writeln!(
        out,
        "table {} (manifest version {}, next sequence id {})",
        m.table, m.version, m.next_seq_id
    )?;
    if let Some(attrs) = m.table_attributes.describe_table() {
        writeln!(out, "{}, {attrs}", m.table)?;
    }
    for f in &m.families {
        writeln!(out, "{}", f.describe())?;
    }
    if !m.columns.is_empty() {
        let typed: Vec<String> = m
            .columns
            .iter()
            .map(|(c, t)| format!("{c} {}", t.name()))
            .collect();
        writeln!(
            out,
            "typed columns (get and scan show their values decoded): {}",
            typed.join(", ")
        )?;
    }
    let most = bars.iter().map(|b| b.cells).max().unwrap_or(0);
    for (r, b) in m.regions.iter().zip(&bars) {
        let files: Vec<_> = m.files.iter().filter(|e| e.region == r.id).collect();
        let (cells, bytes) = (b.cells, b.bytes.unwrap_or_default());
        writeln!(
            out,
            "region {} [{}, {}): {} files, {} cells, {} bytes {}{}",
            r.id,
            show_key(&r.start_key),
            show_key(&r.end_key),
            files.len(),
            cells,
            bytes,
            bar(cells, most, 20),
            if b.hot { " HOT" } else { "" }
        )?;
        // Each store file by its path (an `s3://` table's by its URL), for `hfile info` etc.
        for e in files {
            writeln!(
                out,
                "  {} {}: {} cells, {} bytes, sequence id {}",
                e.family,
                t.file_path(e).display(),
                e.entries,
                e.size,
                e.seq_id
            )?;
        }
    }
    for ix in t.index_tables() {
        let name = Table::open(&ix)
            .and_then(|i| i.manifest())
            .map(|m| m.table)
            .unwrap_or_else(|e| format!("unreadable: {e}"));
        writeln!(out, "index table {name}: {}", ix.display())?;
    }
    Ok(EXIT_OK)
}

fn show_key(k: &[u8]) -> String {
    if k.is_empty() {
        "''".into()
    } else if k.iter().all(|b| b.is_ascii_graphic()) {
        String::from_utf8_lossy(k).to_string()
    } else {
        format!("0x{}", hex(k))
    }
}

fn check(dir: &Path, json: bool, out: &mut dyn Write) -> Result<i32, CliError> {
    let t = open(dir)?;
    let total = t
        .manifest()
        .map(|m| m.files.iter().map(|e| e.size).sum())
        .unwrap_or(0);
    let p = super::progress::Progress::new("table check", total, super::progress::Unit::Bytes);
    let r = t
        .check_with_progress(&|n| p.add(n))
        .map_err(|e| CliError::failure(format!("{}: {e}", dir.display())));
    p.finish();
    let r = r?;
    if json {
        let report = serde_json::json!({
            "table": dir.display().to_string(),
            "ok": r.is_ok(),
            "version": r.version,
            "files": r.files,
            "cells": r.cells,
            "problems": r.problems,
            "orphans": r.orphans.iter().map(|o| o.display().to_string()).collect::<Vec<_>>(),
        });
        writeln!(out, "{report:#}")?;
        return if r.is_ok() {
            Ok(EXIT_OK)
        } else {
            Err(CliError::failure(format!(
                "{}: {} problem(s)",
                dir.display(),
                r.problems.len()
            )))
        };
    }
    for o in &r.orphans {
        writeln!(
            out,
            "orphan (not in the manifest; removed by the next writer): {}",
            o.display()
        )?;
    }
    if r.is_ok() {
        writeln!(
            out,
            "{}: OK (manifest version {}, {} files, {} cells)",
            dir.display(),
            r.version,
            r.files,
            r.cells
        )?;
        Ok(EXIT_OK)
    } else {
        let mut msg = format!("{}: {} problem(s)", dir.display(), r.problems.len());
        for p in &r.problems {
            msg.push_str(&format!("\n  {p}"));
        }
        Err(CliError::failure(msg))
    }
}

/// `hfkit attach TABLE DIR`.
pub fn attach(
    table: &Path,
    bulk_dir: &Path,
    opts: &AttachOptions,
    force: bool,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let t = open(table)?;
    // The identity an `import --out` left with its files (`formats/import.md` §"Reruns").
    let id_file = bulk_dir.join(IDENTITY_FILE);
    let id = match std::fs::read_to_string(&id_file) {
        Ok(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(CliError::failure(format!("{}: {e}", id_file.display()))),
    };
    let r = t
        .attach_import(bulk_dir, opts, id.as_deref().map(|id| (id, force)))
        .map_err(|e| match e {
            TableError::AlreadyImported { .. } => CliError {
                message: format!("{}: {e}", table.display()),
                code: EXIT_ALREADY_IMPORTED,
                io_kind: None,
            },
            e => CliError::failure(format!("{}: {e}", table.display())),
        })?;
    print_attach(&r, id.as_deref(), as_json, out)
}

/// Prints what an attach did (text or JSON); `id`: the import identity it recorded.
pub(super) fn print_attach(
    r: &crate::table::directory::AttachReport,
    id: Option<&str>,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    if as_json {
        let v = json!({
            "version": r.version,
            "seq_id": r.seq_id,
            "files": r.files.len(),
            "cells": r.files.iter().map(|f| f.entries).sum::<u64>(),
            "bytes": r.files.iter().map(|f| f.size).sum::<u64>(),
            "split_inputs": r.split_inputs,
            "skipped": r.skipped.iter().map(|(p, why)| json!({"file": p.display().to_string(), "reason": why})).collect::<Vec<_>>(),
            "garbage_removed": r.garbage_removed,
            "import_id": id,
            "ignored_families": r.ignored_families.iter().map(|(d, n)| json!({"dir": d.display().to_string(), "files": n})).collect::<Vec<_>>(),
        });
        serde_json::to_writer_pretty(&mut *out, &v)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "attached {} files ({} cells) as manifest version {} with sequence id {}; {} input(s) split at region boundaries",
            r.files.len(),
            r.files.iter().map(|f| f.entries).sum::<u64>(),
            r.version,
            r.seq_id,
            r.split_inputs
        )?;
        for (p, why) in &r.skipped {
            writeln!(out, "skipped {}: {why}", p.display())?;
        }
        if let Some(id) = id {
            writeln!(out, "import id {id} recorded")?;
        }
        for (d, n) in &r.ignored_families {
            writeln!(
                out,
                "ignored {}: not a family of the table ({n} files)",
                d.display()
            )?;
        }
    }
    Ok(EXIT_OK)
}
