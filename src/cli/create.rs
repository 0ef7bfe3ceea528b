//! `hfkit table create`, and the tables an `hfkit import --table` opens or creates (removed
//! again when the import fails): a table directory made from a schema, over the regions its
//! splits give (`formats/import.md` §"Into a table", `formats/schema.md` §"Splits").

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::import::{load_schema, InputArgs};
use super::{CliError, EXIT_OK};
use crate::pipeline::import::{check_inputs, check_mapping, has_mapping, import_regions};
use crate::pipeline::import::{ImportOptions, ImportRegions};
use crate::pipeline::source::expand_paths;
use crate::table::directory::{Table, INDEX_DIR};
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
    let t = create_table(dir, &parsed.table, &regions)?;
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

/// Tables an `import --table` created: removed again (back to an absent or empty directory)
/// unless the import succeeded, so that a failed import leaves no table it made.
#[derive(Default)]
pub(super) struct CreatedTables(Vec<(PathBuf, bool)>);

impl CreatedTables {
    /// `dir` was just created; `existed`: as an empty directory.
    fn add(&mut self, dir: &Path, existed: bool) {
        self.0.push((dir.to_path_buf(), existed));
    }

    /// The import succeeded: the tables stay.
    pub(super) fn keep(&mut self) {
        self.0.clear();
    }
}

impl Drop for CreatedTables {
    fn drop(&mut self) {
        for (dir, existed) in self.0.drain(..).rev() {
            let _ = std::fs::remove_dir_all(&dir);
            if existed {
                let _ = std::fs::create_dir(&dir);
            } else if let Some(indexes) = dir.parent().filter(|p| p.ends_with(INDEX_DIR)) {
                // The table's `indexes/`, when this import made it (and so it is empty).
                let _ = std::fs::remove_dir(indexes);
            }
        }
    }
}

/// The tables of an `import --table`: the main table at `main_dir`, then each index table at
/// its directory (`index_dirs`, schema order). A table that exists is opened (an index table
/// must hold the table its schema names) and keeps its regions: its splits, `sample` included,
/// are not used (a note on stderr says so for `sample`). The others are created with the
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
                let existed = dir.exists();
                tables.push(create_table(dir, schema, r)?);
                created.add(dir, existed);
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
/// as the manifest keeps them) over `regions`.
fn create_table(dir: &Path, schema: &TableSchema, regions: &Regions) -> Result<Table, CliError> {
    let families = schema
        .families
        .iter()
        .map(FamilyEntry::from_schema)
        .collect();
    Table::create_with_attributes(
        dir,
        &schema.full_name(),
        Attributes::of_table(schema),
        families,
        regions.split_keys(),
    )
    .map_err(|e| CliError::failure(format!("{}: {e}", dir.display())))
}
