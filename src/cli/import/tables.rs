//! `hfkit import` of a schema of several `[[table]]` sections: each table imported as a
//! one-table schema by [`super::import_table`], in the schema's order (formats/import.md
//! §"Several tables").

use std::io::Write;
use std::path::PathBuf;

use super::{import_table, ImportArgs};
use crate::cli::error::{CliError, EXIT_ALREADY_IMPORTED, EXIT_OK};
use crate::cli::remote_table::Mirror;
use crate::pipeline::import::check_inputs;
use crate::pipeline::source::expand_paths;
use crate::storage::Location;
use crate::table::ParsedSchema;

/// A schema of several `[[table]]` sections (formats/import.md §"Several tables"): each table
/// is imported as a one-table schema would be, one after another in the schema's order, into
/// `ROOT/<qualifier>` (`--table ROOT`) or `OUT/<qualifier>` (`--out OUT`). Every table's
/// mapping is checked against every input before anything is written. Each table's attach is
/// atomic on its own and records the import's identity (the same for every table: the whole
/// schema file, the options, the inputs); a rerun of the same import skips the tables that
/// already hold it and imports the others, so a run stopped between two tables is finished by
/// running it again.
pub(super) fn import_tables(
    a: ImportArgs,
    targets: Vec<ParsedSchema>,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    if a.index_out.is_some() {
        return Err(CliError::usage(
            "--index-out: not with a schema of several [[table]] sections (each table's index \
             tables go under its own directory)",
        ));
    }
    let inputs = expand_paths(&a.inputs).map_err(|e| CliError::failure(e.to_string()))?;
    let format = a.input.format(&inputs)?;
    for t in &targets {
        check_inputs(&t.table, &t.mapping, &inputs, &format)
            .map_err(|e| CliError::failure(format!("table {}: {e}", t.table.full_name())))?;
    }
    // With --table s3://ROOT, each table ROOT/<qualifier> is mirrored locally (its latest
    // version, or nothing for a new table): the import of each table runs on its mirror, which
    // is committed as that table's next version before the next table is imported, as a local
    // table is attached (formats/table.md §"Tables on object storage").
    let mirrors: Vec<Option<Mirror>> = targets
        .iter()
        .map(|t| match &a.table {
            Some(root) if Location::is_remote_path(root) => {
                Mirror::for_import(&root.join(&t.table.qualifier)).map(Some)
            }
            _ => Ok(None),
        })
        .collect::<Result<_, _>>()?;
    let table_of = |i: usize, q: &str| match &mirrors[i] {
        Some(m) => Some(m.path().to_path_buf()),
        None => a.table.as_ref().map(|r| r.join(q)),
    };
    // Without --bad-rows a bad record stops an import: every table's records are read and
    // encoded first (a dry run of each), so that one bad for a later table stops the run
    // before any table is changed.
    if !a.dry_run && a.bad_rows.is_none() {
        for (i, t) in targets.iter().enumerate() {
            let mut check = a.clone();
            check.dry_run = true;
            check.quiet = false;
            check.report = None;
            check.table = table_of(i, &t.table.qualifier);
            check.out = None;
            let mut listing = Vec::new();
            let name = t.table.full_name();
            let shown = |e: CliError| match &mirrors[i] {
                Some(m) => m.shown_error(e),
                None => e,
            };
            let code = import_table(check, t.clone(), &mut listing).map_err(|e| {
                let e = shown(e);
                CliError::failure(format!("table {name}: {}; no table was changed", e.message))
            })?;
            if code != EXIT_OK {
                return Err(CliError::failure(format!(
                    "table {name}: bad records; no table was changed:\n{}",
                    String::from_utf8_lossy(&listing).trim_end()
                )));
            }
        }
    }
    let suffixed = |p: &Option<PathBuf>, q: &str| {
        p.as_ref().map(|p| {
            let mut s = p.clone().into_os_string();
            s.push(format!(".{q}"));
            PathBuf::from(s)
        })
    };
    let (mut code, mut skipped, mut done) = (EXIT_OK, Vec::new(), Vec::new());
    for (i, t) in targets.into_iter().enumerate() {
        let q = t.table.qualifier.clone();
        let name = t.table.full_name();
        let mut one = a.clone();
        one.table = table_of(i, &q);
        one.out = a.out.as_ref().map(|o| o.join(&q));
        one.report = suffixed(&a.report, &q);
        one.bad_rows = suffixed(&a.bad_rows, &q);
        if !a.quiet {
            writeln!(out, "table {name}:")?;
        }
        let imported = match &mirrors[i] {
            None => import_table(one, t, out),
            Some(m) => {
                let mut buffered = Vec::new();
                import_table(one, t, &mut buffered)
                    .and_then(|c| {
                        m.commit(&[])?;
                        out.write_all(&m.shown(&buffered))?;
                        Ok(c)
                    })
                    .map_err(|e| m.shown_error(e))
            }
        };
        match imported {
            Err(e) if e.code == EXIT_ALREADY_IMPORTED => {
                note!("hfkit: table {name}: {}; skipped", e.message);
                skipped.push(name);
            }
            Err(e) => {
                let before =
                    if done.is_empty() && skipped.is_empty() {
                        "no table was changed".to_string()
                    } else {
                        format!(
                        "the tables before it ({}) hold this import; run the same import again \
                         to finish (they are skipped)",
                        done.iter().chain(&skipped).cloned().collect::<Vec<_>>().join(", ")
                    )
                    };
                return Err(CliError {
                    message: format!("table {name}: {}; {before}", e.message),
                    ..e
                });
            }
            Ok(c) => {
                code = code.max(c);
                done.push(name);
            }
        }
    }
    if done.is_empty() && !a.dry_run {
        return Err(CliError {
            message: format!(
                "every table ({}) already holds this import: nothing done (--force imports it again)",
                skipped.join(", ")
            ),
            code: EXIT_ALREADY_IMPORTED,
            io_kind: None,
        });
    }
    Ok(code)
}
