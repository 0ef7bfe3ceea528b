//! `hfile cells|info|verify --region DIR`: every store file of a region directory, as
//! HBase's HFilePrettyPrinter `-r` prints every file of a region: a table's `data/<region>/`
//! or an HBase region's `<root>/data/<ns>/<table>/<encoded name>/`, its family directories'
//! files in name order. Split references and HFileLinks are not HFiles (`hfkit hbase describe`
//! resolves them): each is named and skipped.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::error::{CliError, EXIT_OK};

/// The HFiles of the region directory `dir` (family directories' files, sorted), and the
/// references and links found beside them.
fn region_files(dir: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), CliError> {
    let fail = |e: std::io::Error| CliError::failure(format!("{}: {e}", dir.display()));
    let listed = |d: &Path| -> Result<Vec<PathBuf>, CliError> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .map_err(fail)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .map_err(fail)?;
        v.retain(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        });
        v.sort();
        Ok(v)
    };
    let (mut files, mut skipped) = (Vec::new(), Vec::new());
    for family in listed(dir)? {
        if !family.is_dir() || family.file_name().is_some_and(|n| n == "recovered.edits") {
            continue;
        }
        for f in listed(&family)?.into_iter().filter(|f| f.is_file()) {
            let name = f
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            // A reference is `<hfile>.<parent region>`, a link `<table>=<region>-<hfile>`.
            match name.contains('.') || name.contains('=') {
                true => skipped.push(f),
                false => files.push(f),
            }
        }
    }
    if files.is_empty() && skipped.is_empty() {
        return Err(CliError::failure(format!(
            "{}: no store file (expected a region directory: <family>/<hfile>)",
            dir.display()
        )));
    }
    Ok((files, skipped))
}

/// Runs `one` on every HFile of the region directory `dir`: in text, each file's output after
/// a line `== PATH`; with `json`, the outputs as one JSON array. A file that fails is reported
/// on standard error and the others still run. The exit code is the worst.
pub(super) fn each_file(
    dir: &Path,
    json: bool,
    out: &mut dyn Write,
    mut one: impl FnMut(&Path, &mut dyn Write) -> Result<i32, CliError>,
) -> Result<i32, CliError> {
    let (files, skipped) = region_files(dir)?;
    for s in &skipped {
        note!(
            "hfkit: {}: a split reference or HFileLink, not an HFile: skipped (`hfkit hbase \
             describe` resolves it)",
            s.display()
        );
    }
    let mut code = EXIT_OK;
    let mut parts = Vec::new();
    for f in &files {
        let mut buf = Vec::new();
        if !json {
            writeln!(out, "== {}", f.display())?;
        }
        let w: &mut dyn Write = if json { &mut buf } else { &mut *out };
        match one(f, w) {
            Ok(c) => code = code.max(c),
            Err(e) => {
                note!("hfkit: {}", e.message);
                code = code.max(e.code);
            }
        }
        if json && !buf.is_empty() {
            parts.push(String::from_utf8_lossy(&buf).trim_end().to_string());
        }
    }
    if json {
        writeln!(out, "[{}]", parts.join(",\n"))?;
    }
    Ok(code)
}
