//! `hfkit table create`, and the tables an `hfkit import --table` opens or creates (removed
//! again when the import fails): a table directory made from a schema, over the regions its
//! splits give (`formats/import.md` §"Into a table", `formats/schema.md` §"Splits").

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::error::{CliError, EXIT_OK};
use super::input::{load_schema, InputArgs};
use crate::pipeline::import::{check_inputs, check_mapping, has_mapping, import_regions};
use crate::pipeline::import::{ImportOptions, ImportRegions};
use crate::pipeline::source::expand_paths;
use crate::table::directory::Table;
use crate::table::manifest::{Attributes, FamilyEntry, CURRENT};
use crate::table::{ImportMapping, ParsedSchema, Regions, SplitSpec, TableSchema};

const CREATE_HELP: &str = "\
A schema file (TOML) that carries an import mapping is checked as an import checks it before
creating anything: the rowkey specs parse, the timestamp formats compile, the columns map to
families of the table; with --input, also that every field they read is one of each input's.

[splits] sample = N cuts the table at the quantiles of the row keys of the input's first
--sample-rows records, as `hfkit import` does; give --input FILE... to sample (or create the
table by importing into it with `hfkit import --table`). Examples:

  hfkit table create tables/orders --schema orders.toml
  hfkit table create tables/events --schema events.toml --input 'data/2024-*.csv.gz'
  hfkit table create tables/t --hbase-shell \"create 'ns:t', {NAME => 'd', VERSIONS => 3}, SPLITS => ['m']\"";

/// `hfkit table create`.
#[derive(Debug, Args)]
#[command(after_help = CREATE_HELP)]
pub struct CreateArgs {
    /// The table directory to create (absent or empty).
    pub table: PathBuf,
    /// Schema file (TOML, or a text file holding a shell `create` statement).
    #[arg(long)]
    pub schema: Option<PathBuf>,
    /// An HBase shell `create` statement.
    #[arg(long)]
    pub hbase_shell: Option<String>,
    /// Input files or globs (as for `hfkit import`): their row keys are sampled for
    /// `[splits] sample = N`, and the schema's mapping is checked against their fields.
    #[arg(long, num_args = 1.., requires = "schema")]
    pub input: Vec<String>,
    #[command(flatten)]
    pub input_format: InputArgs,
    /// Records (from the start of the input) sampled for `[splits] sample = N`.
    #[arg(long, default_value_t = crate::pipeline::import::DEFAULT_SAMPLE_ROWS)]
    pub sample_rows: usize,
    /// Machine-readable report: the table's name, directory, manifest version, families and
    /// regions (start and end keys as toStringBinary text).
    #[arg(long)]
    pub json: bool,
}

/// `hfkit table create DIR (--schema S [--input FILE...] | --hbase-shell "create ...")`.
pub fn table_create(a: CreateArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let dir = a.table.as_path();
    let parsed = match (&a.schema, &a.hbase_shell) {
        (Some(p), None) => load_schema(p)?,
        (None, Some(text)) => {
            let p = TableSchema::from_shell(text).map_err(|e| CliError::failure(e.to_string()))?;
            for w in &p.warnings {
                note!("hfkit: warning: {w}");
            }
            p
        }
        _ => {
            return Err(CliError::usage(
                "give exactly one of --schema FILE or --hbase-shell \"create ...\"",
            ))
        }
    };
    let failure = |e: crate::pipeline::import::ImportError| CliError::failure(e.to_string());
    let regions = if a.input.is_empty() {
        if has_mapping(&parsed.mapping) {
            check_mapping(&parsed.table, &parsed.mapping).map_err(failure)?;
        }
        if let SplitSpec::Sampled { regions } = parsed.table.splits {
            return Err(CliError::failure(format!(
                "{}: [splits] sample = {regions} cuts the table at the quantiles of the input's \
                 row keys, and there is no input to sample: give --input FILE... (its first \
                 --sample-rows records are sampled, as hfkit import samples them), or create \
                 the table by importing into it (hfkit import --table {}), or write the split \
                 points hfkit plan --regions {regions} prints as [splits] keys",
                a.schema.as_deref().unwrap_or(Path::new("")).display(),
                dir.display()
            )));
        }
        parsed
            .table
            .splits
            .regions(None)
            .map_err(|e| CliError::failure(e.to_string()))?
    } else {
        let inputs = expand_paths(&a.input).map_err(|e| CliError::failure(e.to_string()))?;
        let format = a.input_format.format(&inputs)?;
        check_inputs(&parsed.table, &parsed.mapping, &inputs, &format).map_err(failure)?;
        // Index tables are not created here: only the main table's splits are sampled.
        let main_only = ImportMapping {
            indexes: Vec::new(),
            ..parsed.mapping.clone()
        };
        import_regions(&parsed.table, &main_only, &inputs, &format, a.sample_rows)
            .map_err(failure)?
            .main
    };
    let t = create_table(
        dir,
        &parsed.table,
        &regions,
        parsed.mapping.kept_for_reads(),
    )?;
    let m = t.manifest().map_err(|e| CliError::failure(e.to_string()))?;
    if a.json {
        let regions: Vec<serde_json::Value> = m
            .regions
            .iter()
            .map(|r| {
                serde_json::json!({"id": r.id,
                    "start_key": crate::table::to_string_binary(&r.start_key),
                    "end_key": crate::table::to_string_binary(&r.end_key)})
            })
            .collect();
        let v = serde_json::json!({
            "table": m.table,
            "path": dir.display().to_string(),
            "version": m.version,
            "families": m.families.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
            "regions": regions,
        });
        writeln!(out, "{v:#}")?;
        return Ok(EXIT_OK);
    }
    writeln!(
        out,
        "created table {} at {} with {} families and {} regions",
        m.table,
        dir.display(),
        m.families.len(),
        m.regions.len()
    )?;
    Ok(EXIT_OK)
}

/// Tables an `import --table` creates, each built in a directory of this run's own beside its
/// final place ([`crate::table::staging::beside`]) and renamed there by [`publish`] once the
/// import has attached its data: a new table appears with its first data, in one step. A run
/// that fails, is stopped or is killed leaves no table it made (a killed run's directory is
/// swept by the next builder of the same table); an empty directory given as the table stays
/// as it was.
///
/// [`publish`]: CreatedTables::publish
#[derive(Default)]
pub(super) struct CreatedTables(Vec<Created>, Vec<(PathBuf, PathBuf)>);

/// One table being created: where it is built, where it goes.
struct Created {
    staged: crate::table::staging::OwnedDir,
    dest: PathBuf,
    /// The parent directory this run made for it (a new table's `indexes/`), removed again
    /// with it when the import does not succeed.
    made_parent: Option<PathBuf>,
}

impl CreatedTables {
    /// The directory to create the table `dest` in: a new one beside it.
    fn stage(&mut self, dest: &Path) -> Result<PathBuf, CliError> {
        let made_parent = dest
            .parent()
            .filter(|p| !p.as_os_str().is_empty() && !p.exists())
            .map(Path::to_path_buf);
        let staged = crate::table::staging::beside(dest)
            .map_err(|e| CliError::failure(format!("{}: {e}", dest.display())))?;
        let path = staged.path().to_path_buf();
        self.0.push(Created {
            staged,
            dest: dest.to_path_buf(),
            made_parent,
        });
        Ok(path)
    }

    /// Where `dir`, a table of this run, is shown (and will be): a staged table's path at its
    /// destination.
    pub(super) fn shown(&self, dir: &Path) -> PathBuf {
        let staged = self.0.iter().map(|c| (c.staged.path(), &c.dest));
        let published = self.1.iter().map(|(s, d)| (s.as_path(), d));
        for (from, to) in staged.chain(published) {
            if let Ok(rel) = dir.strip_prefix(from) {
                return match rel.as_os_str().is_empty() {
                    true => to.clone(),
                    false => to.join(rel),
                };
            }
        }
        dir.to_path_buf()
    }

    /// The import succeeded: each new table is renamed to its place (onto the empty
    /// directory given, if one was), and its parent directory synced.
    pub(super) fn publish(&mut self) -> Result<(), CliError> {
        for c in self.0.drain(..) {
            let fail = |e: std::io::Error| CliError::failure(format!("{}: {e}", c.dest.display()));
            std::fs::rename(c.staged.path(), &c.dest).map_err(fail)?;
            self.1.push((c.staged.path().to_path_buf(), c.dest.clone()));
            if let Some(parent) = c.dest.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::File::open(parent)
                    .and_then(|d| d.sync_all())
                    .map_err(fail)?;
            }
        }
        Ok(())
    }
}

impl Drop for CreatedTables {
    /// Not published: each staged table removed, and the parent directory made for it.
    fn drop(&mut self) {
        for c in self.0.drain(..).rev() {
            let parent = c.made_parent.clone();
            drop(c);
            if let Some(p) = parent {
                let _ = std::fs::remove_dir(p);
            }
        }
    }
}

/// The tables of an `import --table`: the main table at `main_dir`, then each index table at
/// its directory (`index_dirs`, schema order). A table that exists is opened (an index table
/// must hold the table its schema names) and keeps its regions: its splits, `sample` included,
/// are not used (a note on stderr says so for `sample`). The others are created, staged in
/// `created` (an index table under a new main table inside the main table's staging), with the
/// regions their splits give, sampling the inputs for `sample = N` exactly as an `--out`
/// import does. Returns the tables and their regions, for the import to write.
pub(super) fn open_or_create_tables(
    parsed: &ParsedSchema,
    main_dir: &Path,
    index_dirs: &[PathBuf],
    opts: &ImportOptions,
    created: &mut CreatedTables,
) -> Result<(Vec<Table>, ImportRegions), CliError> {
    let (targets, existing, mut regions) = target_regions(parsed, main_dir, index_dirs, opts)?;
    let mut tables = Vec::new();
    for (((dir, schema), table), r) in targets.into_iter().zip(existing).zip(&regions) {
        match table {
            Some(t) => tables.push(t),
            None => {
                // Inside a table this run creates (an index table of a new main table):
                // created there, it moves with it.
                let within = created
                    .0
                    .iter()
                    .find_map(|c| Some(c.staged.path().join(dir.strip_prefix(&c.dest).ok()?)));
                let at = match within {
                    Some(at) => {
                        if let Some(parent) = at.parent() {
                            std::fs::create_dir_all(parent).map_err(|e| {
                                CliError::failure(format!("{}: {e}", parent.display()))
                            })?;
                        }
                        at
                    }
                    None => created.stage(dir)?,
                };
                // The main table keeps its schema's column types and row key spec.
                let columns = match schema.full_name() == parsed.table.full_name() {
                    true => parsed.mapping.kept_for_reads(),
                    false => Default::default(),
                };
                tables.push(create_table(&at, schema, r, columns).map_err(|e| {
                    CliError {
                        message: e
                            .message
                            .replace(&at.display().to_string(), &dir.display().to_string()),
                        ..e
                    }
                })?);
            }
        }
    }
    let main = regions.remove(0);
    Ok((
        tables,
        ImportRegions {
            main,
            indexes: regions,
        },
    ))
}

/// The directories and schemas of the main table and each index table, the tables among them
/// that exist (opened), and the regions an import writes for each: an existing table's own, or
/// those its schema's splits give (sampled from the inputs for `sample = n`). Creates nothing
/// (`import --dry-run` uses it as it is).
#[allow(clippy::type_complexity)]
pub(super) fn target_regions<'p>(
    parsed: &'p ParsedSchema,
    main_dir: &'p Path,
    index_dirs: &'p [PathBuf],
    opts: &ImportOptions,
) -> Result<
    (
        Vec<(&'p Path, &'p TableSchema)>,
        Vec<Option<Table>>,
        Vec<Regions>,
    ),
    CliError,
> {
    let failure = |e: &dyn std::fmt::Display| CliError::failure(e.to_string());
    let targets: Vec<(&Path, &TableSchema, bool)> =
        std::iter::once((main_dir, &parsed.table, false))
            .chain(
                parsed
                    .mapping
                    .indexes
                    .iter()
                    .zip(index_dirs)
                    .map(|(ix, dir)| (dir.as_path(), &ix.table, true)),
            )
            .collect();
    let mut existing = Vec::new();
    for (dir, schema, check_name) in &targets {
        existing.push(open_existing(dir, schema, check_name.then_some(*schema))?);
    }
    // Only the splits of the tables to create are used (and sampled for).
    let mut to_create = parsed.clone();
    if existing[0].is_some() {
        to_create.table.splits = SplitSpec::None;
    }
    for (ix, e) in to_create.mapping.indexes.iter_mut().zip(&existing[1..]) {
        if e.is_some() {
            ix.table.splits = SplitSpec::None;
        }
    }
    let planned = import_regions(
        &to_create.table,
        &to_create.mapping,
        &opts.inputs,
        &opts.format,
        opts.sample_rows,
    )
    .map_err(|e| failure(&e))?;
    let mut planned = std::iter::once(planned.main).chain(planned.indexes);
    let mut regions = Vec::new();
    for ((dir, schema, _), table) in targets.iter().zip(&existing) {
        let r = planned.next().unwrap_or_default();
        match table {
            Some(t) => {
                let m = t.manifest().map_err(|e| failure(&e))?;
                if let SplitSpec::Sampled { regions: n } = schema.splits {
                    note!(
                        "hfkit: note: {} exists with {} regions, which an import does not \
                         change: its [splits] sample = {n} is not used",
                        dir.display(),
                        m.regions.len()
                    );
                }
                regions.push(Regions::from_sorted(m.split_keys()).map_err(|e| failure(&e))?);
            }
            None => regions.push(r),
        }
    }
    let targets = targets.into_iter().map(|(d, s, _)| (d, s)).collect();
    Ok((targets, existing, regions))
}

/// The table at `dir`, or `None` when there is none. With `schema`, the table must be the one
/// it names.
fn open_existing(
    dir: &Path,
    table_schema: &TableSchema,
    schema: Option<&TableSchema>,
) -> Result<Option<Table>, CliError> {
    if !dir.join(CURRENT).exists() {
        return Ok(None);
    }
    let t = Table::open(dir).map_err(|e| CliError::failure(e.to_string()))?;
    let m = t.manifest().map_err(|e| CliError::failure(e.to_string()))?;
    // Before any input is read: every family the schema writes must be one of the table's
    // (HBase's bulk load refuses files of a family its table lacks).
    let missing: Vec<&str> = table_schema
        .families
        .iter()
        .map(|f| f.name.as_str())
        .filter(|f| m.family(f).is_none())
        .collect();
    if !missing.is_empty() {
        let names = |v: Vec<&str>| v.join(", ");
        return Err(CliError::failure(format!(
            "{}: table {} has the families {}; the schema's table {} has {}, and {} {} not \
             a family of the table (create the table anew from this schema, or import with \
             the schema the table was made from)",
            dir.display(),
            m.table,
            names(m.families.iter().map(|f| f.name.as_str()).collect()),
            table_schema.full_name(),
            names(
                table_schema
                    .families
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect()
            ),
            names(missing.clone()),
            if missing.len() == 1 { "is" } else { "are" },
        )));
    }
    if let Some(schema) = schema {
        if m.table != schema.full_name() {
            return Err(CliError::failure(format!(
                "{} holds table {}, not {}",
                dir.display(),
                m.table,
                schema.full_name()
            )));
        }
    }
    Ok(Some(t))
}

/// Before index tables went inside their table's directory (`formats/import.md` §"Index
/// tables"), an import put them next to it: says so when such a table is there and `dir`, where
/// this import writes, is not a table yet (the entries of both together are the index).
pub(super) fn warn_of_index_beside(table: &Path, dir: &Path, schema: &TableSchema) {
    let Some(beside) = table.parent().map(|p| p.join(&schema.qualifier)) else {
        return;
    };
    let holds_it = || {
        Table::open(&beside)
            .and_then(|t| t.manifest())
            .is_ok_and(|m| m.table == schema.full_name())
    };
    if !dir.join("CURRENT").exists() && holds_it() {
        note!(
            "hfkit: warning: index table {} of an earlier import is at {}; this import writes it to {} (move the old one there first to keep one index: mv {} {})",
            schema.full_name(),
            beside.display(),
            dir.display(),
            beside.display(),
            dir.display()
        );
    }
}

/// Creates a table directory from a schema: its families and table attributes (all of them,
/// as the manifest keeps them) and what reads use of its mapping (`kept`: typed columns and
/// the row key spec) over `regions`.
fn create_table(
    dir: &Path,
    schema: &TableSchema,
    regions: &Regions,
    kept: (
        std::collections::BTreeMap<String, crate::table::ValueType>,
        Option<String>,
    ),
) -> Result<Table, CliError> {
    let (columns, rowkey) = kept;
    let families = schema
        .families
        .iter()
        .map(FamilyEntry::from_schema)
        .collect();
    let setup = crate::table::directory::TableSetup {
        attributes: Attributes::of_table(schema),
        columns,
        rowkey,
    };
    Table::create_with_attributes(
        dir,
        &schema.full_name(),
        setup,
        families,
        regions.split_keys(),
    )
    .map_err(|e| CliError::failure(format!("{}: {e}", dir.display())))
}
