//! The import driver: a schema and its mapping plus input files in, a bulk-load directory and a
//! report out. Spec: `formats/import.md`.
//!
//! ```text
//! for each input file (in order), for each batch of records (parsed ahead on reader threads
//! when there is more than one thread, several Parquet row groups at once):
//!     encode records in parallel (rayon): row key, then one cell per non-empty mapped field,
//!     then one cell per [[index]] (row = index key, value = the row key) when the record
//!     wrote a cell and has every index field
//!     in input order: rejected records → error (default) or the bad-rows file; cells → the
//!     router: each store (region, family) whose input is still in order is a lane written
//!     straight to its files, the rest → sorter (index cells under sorter family numbers after
//!     the table's families)
//! sorter.finish() → cells in HBase order, duplicates dropped (last input wins)
//!   → outputs (with >1 thread on a writer thread fed 1 MiB batches, so merge and write overlap)
//!     → BulkOutput per table (main, each index): one or more HFiles per region and family;
//!       every file of every table sealed, then all published
//! ```
//!
//! Any error leaves no output: temporary files and spill runs are removed.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;

use super::error::quote;
use super::output::{BulkOutput, OutputError, OutputFamily, OutputFile};
use super::parquet_source::{self, ParquetSource};
use super::retention::{HiddenCells, Retention};
use super::route::{run_lane_writer, LaneSink, Outputs, Router, ThreadSink};
use super::rowkey::{FieldSource, RowkeyEncoder, RowkeySpec};
use super::sort::{CellSorter, SortError};
use super::source::{Batch, CsvOptions, CsvSource, SourceError};
use super::timestamp::TimestampFormat;
use super::value::encode_value;
use super::RowkeyError;
use hfkit_format::bytes::{equal_bytes, extend_pieces, extend_short};
use hfkit_format::cell::{
    check_mutation, CellLimit, CellRef, CellType, LATEST_TIMESTAMP, MAX_ROW_LEN,
};
use hfkit_format::writer::BulkLoadInfo;
use hfkit_table::manifest::FamilyEntry;
use hfkit_table::read::family_read_settings;
use hfkit_table::staging::{self, OwnedDir};
use hfkit_table::{
    ImportMapping, IndexSchema, Regions, SchemaError, SplitSpec, TableSchema, TimestampSource,
    ValueType,
};

/// Records per batch handed to the parallel encoders.
pub const DEFAULT_BATCH_ROWS: usize = 16 * 1024;
/// Records sampled (from the start of the input) for `sample = N` splits.
pub const DEFAULT_SAMPLE_ROWS: usize = 100_000;
/// Name prefix of a run's spill directory (in `--temp-dir`, else in the output directory).
pub const SPILL_DIR_PREFIX: &str = ".hfkit-spill-";

/// Errors of an import; each names where it happened.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Schema(#[from] SchemaError),
    #[error("{context}: {source}")]
    Rowkey {
        context: String,
        #[source]
        source: RowkeyError,
    },
    /// A record that cannot be imported.
    #[error("{position}: {reason}")]
    Record { position: String, reason: String },
    #[error("{count} rejected records, more than --max-bad-rows {max}; last: {last}")]
    TooManyBadRows { count: u64, max: u64, last: String },
    #[error(transparent)]
    Sort(#[from] SortError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
}

/// Input file format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputFormat {
    Csv(CsvOptions),
    Parquet,
}

/// Progress, reported now and then.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub phase: &'static str,
    pub rows: u64,
    pub cells: u64,
    pub input_bytes: u64,
    pub total_input_bytes: u64,
}

/// A progress callback.
pub type ProgressFn = Box<dyn FnMut(&Progress) + Send>;

/// Reads the next batch of an input; false at its end.
pub(crate) type BatchReader = Box<dyn FnMut(&mut Batch) -> Result<bool, SourceError> + Send>;

/// How to run an import.
pub struct ImportOptions {
    pub inputs: Vec<PathBuf>,
    pub format: InputFormat,
    pub out_dir: PathBuf,
    /// Bulk-load directory of each `[[index]]` table, in schema order (default:
    /// [`default_index_dirs`], inside `out_dir`).
    pub index_out: Option<Vec<PathBuf>>,
    /// Bytes of cells kept in memory before a sorted run is spilled.
    pub memory_budget: usize,
    /// Where runs are spilled (default: `out_dir`). Each run spills into a directory of its
    /// own there, `.hfkit-spill-<32 hex>` ([`SPILL_DIR_PREFIX`]), held while it runs and
    /// removed when it ends; a run removes those that killed runs left.
    pub temp_dir: Option<PathBuf>,
    pub max_file_size: u64,
    /// Epoch ms: the timestamp of cells without one, the files' create and bulk-load time.
    pub import_time: i64,
    /// Epoch ms: "now" for counting cells already past their family's TTL (default: the clock
    /// when the options were made; not `import_time`, which may be set to any instant).
    pub now_ms: i64,
    /// Rejected records go here (with their reason) instead of failing the import.
    pub bad_rows: Option<PathBuf>,
    /// Most records rejected into `bad_rows` before the import fails (`None`: no limit).
    pub max_bad_rows: Option<u64>,
    pub batch_rows: usize,
    pub sample_rows: usize,
    /// Write a store's cells straight to its file while they arrive in order (see
    /// [`super::route`]); off, every cell goes through the sorter.
    pub streaming: bool,
    /// The regions to write: the target tables' own, when they exist. `None`: the schema's
    /// splits ([`import_regions`]), sampling the input for `sample = N`.
    pub regions: Option<ImportRegions>,
    pub progress: Option<ProgressFn>,
}

impl ImportOptions {
    pub fn new(inputs: Vec<PathBuf>, format: InputFormat, out_dir: PathBuf) -> ImportOptions {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        ImportOptions {
            inputs,
            format,
            out_dir,
            index_out: None,
            memory_budget: 1 << 30,
            temp_dir: None,
            max_file_size: super::output::DEFAULT_MAX_FILE_SIZE,
            import_time: now_ms,
            now_ms,
            bad_rows: None,
            max_bad_rows: None,
            batch_rows: DEFAULT_BATCH_ROWS,
            sample_rows: DEFAULT_SAMPLE_ROWS,
            streaming: true,
            regions: None,
            progress: None,
        }
    }
}

/// Per-region totals.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RegionReport {
    pub start_key: String,
    pub end_key: String,
    pub cells: u64,
    pub bytes: u64,
    pub files: u32,
}

/// What an import did (serialised as the `--report` JSON).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ImportReport {
    pub rows_read: u64,
    pub rows_rejected: u64,
    pub cells: u64,
    pub duplicate_cells: u64,
    pub input_bytes: u64,
    pub output_bytes: u64,
    pub files: usize,
    pub regions: Vec<RegionReport>,
    pub rowkey_len_min: usize,
    pub rowkey_len_mean: f64,
    pub rowkey_len_max: usize,
    pub spilled_runs: usize,
    /// Bytes of the spilled run files on disk (compressed).
    pub spilled_bytes: u64,
    /// Cells written straight to their store's file because that store's input arrived in
    /// order (no sort, no spill); the rest went through the sorter.
    pub streamed_cells: u64,
    /// Stores whose input turned out of order after they had started streaming, and the cells
    /// re-read from their files into the sorter.
    pub lanes_taken_back: u64,
    pub cells_re_read: u64,
    pub wall_seconds: f64,
    pub peak_rss_bytes: u64,
    pub warnings: Vec<String>,
    /// Per family of the main table, in schema order: its cells and those reads will not return.
    pub families: Vec<FamilyReport>,
    /// The `[[index]]` tables written in the same run, in schema order.
    pub indexes: Vec<IndexReport>,
    #[serde(skip)]
    pub output_files: Vec<OutputFile>,
}

/// What an import wrote for one index table.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct IndexReport {
    /// The index table's name.
    pub name: String,
    /// Its bulk-load directory.
    pub dir: String,
    pub cells: u64,
    /// Index cells dropped because another had the same row (and timestamp): the last read wins.
    pub duplicate_cells: u64,
    /// Imported records that gave no index cell (an index field empty, or no main cell).
    pub rows_without_entry: u64,
    pub files: usize,
    pub output_bytes: u64,
    pub regions: Vec<RegionReport>,
    /// The index table's family.
    pub families: Vec<FamilyReport>,
    #[serde(skip)]
    pub output_files: Vec<OutputFile>,
}

/// One family's cells in the output, and those HBase will not return right after the load
/// ([`super::retention`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FamilyReport {
    pub name: String,
    pub cells: u64,
    /// Already past the family's TTL at import time (reads skip them; a major compaction
    /// drops them).
    pub expired_by_ttl: u64,
    /// Versions of a column beyond the family's VERSIONS within this import (reads return the
    /// newest VERSIONS; a major compaction drops the rest).
    pub beyond_versions: u64,
}

/// A column mapping bound to one file's columns.
struct BoundColumn {
    column: usize,
    family: u8,
    family_len: usize,
    qualifier: Vec<u8>,
    value_type: ValueType,
    timestamp: BoundTimestamp,
    source: String,
}

#[derive(Clone)]
enum BoundTimestamp {
    Fixed(i64),
    /// Input column, field name, format, and the import time (see [`put_timestamp`]).
    Field(usize, String, TimestampFormat, i64),
}

impl BoundTimestamp {
    /// The timestamp of record `rec`, or why it has none.
    #[inline]
    fn of(&self, rec: &csv::ByteRecord) -> Result<i64, String> {
        match self {
            BoundTimestamp::Fixed(t) => Ok(*t),
            BoundTimestamp::Field(i, name, format, now) => Self::parse(rec, *i, name, format, *now),
        }
    }

    #[inline(never)]
    fn parse(
        rec: &csv::ByteRecord,
        i: usize,
        name: &str,
        format: &TimestampFormat,
        now: i64,
    ) -> Result<i64, String> {
        format
            .to_millis(rec.get(i).unwrap_or_default())
            .map(|t| put_timestamp(t, now))
            .map_err(|e| format!("timestamp field '{name}': {e}"))
    }
}

/// The timestamp a cell given `ts` gets, `now` being the import time: HBase's
/// `LATEST_TIMESTAMP` (i64::MAX) is not a time but "now", which a region server replaces with
/// its clock in a Put and `HFileOutputFormat2`'s writer with its own start time
/// (`updateLatestStamp`); every other value is kept.
fn put_timestamp(ts: i64, now: i64) -> i64 {
    if ts == LATEST_TIMESTAMP {
        now
    } else {
        ts
    }
}

/// Why a record is rejected for a cell HBase would refuse (`check_mutation`): the limit, named
/// by the field that broke it. `row` names where the cell's row came from, `value` its value.
#[cold]
fn refused_cell(
    limit: CellLimit,
    rec: &csv::ByteRecord,
    timestamp: &BoundTimestamp,
    row: &str,
    value: &str,
) -> String {
    match (limit, timestamp) {
        (CellLimit::NegativeTimestamp(_), BoundTimestamp::Field(i, name, ..)) => format!(
            "timestamp field '{name}': '{}': {limit}",
            quote(rec.get(*i).unwrap_or_default())
        ),
        (CellLimit::NegativeTimestamp(_), BoundTimestamp::Fixed(_)) => {
            format!("timestamp: {limit}")
        }
        (CellLimit::EmptyRow | CellLimit::RowTooLong(_), _) => format!("{row}: {limit}"),
        _ => format!("{value}: {limit}"),
    }
}

/// An `[[index]]` bound to one file's columns.
struct BoundIndex {
    name: String,
    encoder: RowkeyEncoder,
    /// Input columns the index rowkey reads: an empty one means no index cell for the record.
    fields: Vec<usize>,
    /// Sorter family number: after the main table's families.
    family: u8,
    family_len: usize,
    qualifier: Vec<u8>,
    timestamp: BoundTimestamp,
}

/// The spec, the mapping and the indexes bound to one file's columns.
pub(crate) struct Bound {
    encoder: RowkeyEncoder,
    /// In HBase order (family, then qualifier; schema order on ties, so that a later column
    /// mapped to the same cell wins): a record's cells come out already sorted.
    columns: Vec<BoundColumn>,
    indexes: Vec<BoundIndex>,
}

/// A cell encoded by a worker: byte ranges (offset, length) into its arena.
pub(crate) struct EncodedCell {
    pub family: u8,
    pub row: (u32, u32),
    pub qualifier: (u32, u32),
    pub timestamp: i64,
    pub value: (u32, u32),
}

pub(crate) fn slice(arena: &[u8], (at, len): (u32, u32)) -> &[u8] {
    &arena[at as usize..(at + len) as usize]
}

/// What one worker produced for a slice of a batch.
#[derive(Default)]
pub(crate) struct Encoded {
    pub arena: Vec<u8>,
    /// Main-table cells of each record, then its index cells (sorter family numbers past the
    /// table's families).
    pub cells: Vec<EncodedCell>,
    pub rejected: Vec<(usize, String)>,
    pub key_len_sum: u64,
    pub key_len_min: usize,
    pub key_len_max: usize,
    pub keys: u64,
    /// Main row keys: the first and the last of this slice (input order), for the
    /// monotonic-keys check across slices.
    pub first_key: Vec<u8>,
    pub last_key: Vec<u8>,
    pub ascending: u64,
}

impl Encoded {
    /// Empties it for the next batch, keeping its buffers.
    fn reset(&mut self) {
        self.arena.clear();
        self.cells.clear();
        self.rejected.clear();
        self.key_len_sum = 0;
        self.key_len_min = usize::MAX;
        self.key_len_max = 0;
        self.keys = 0;
        self.first_key.clear();
        self.last_key.clear();
        self.ascending = 0;
    }
}

struct RecordFields<'a>(&'a csv::ByteRecord);

impl FieldSource for RecordFields<'_> {
    fn field(&self, column: usize) -> Option<&[u8]> {
        self.0.get(column)
    }
}

/// The schema's specs and formats, compiled once and checked against the table: shared by
/// [`run_import`] and [`super::plan`].
pub(crate) struct Compiled {
    pub spec: RowkeySpec,
    /// The `timestamp_format` of each `[[column]]`.
    pub ts_formats: Vec<TimestampFormat>,
    pub indexes: Vec<CompiledIndex>,
}

/// One `[[index]]`, compiled.
pub(crate) struct CompiledIndex {
    pub schema: IndexSchema,
    pub spec: RowkeySpec,
    pub ts_format: TimestampFormat,
}

impl Compiled {
    /// Parses the rowkey specs and timestamp formats and checks the mapping against the table.
    pub fn new(schema: &TableSchema, mapping: &ImportMapping) -> Result<Compiled, ImportError> {
        let spec_text = mapping
            .rowkey
            .as_deref()
            .ok_or_else(|| ImportError::Invalid("the schema has no [rowkey] spec".into()))?;
        let spec = RowkeySpec::parse(spec_text).map_err(|source| ImportError::Rowkey {
            context: format!(
                "{}[rowkey] spec",
                at_prefix(mapping.rowkey_location.as_ref())
            ),
            source,
        })?;
        let rowkey_ts = match &mapping.rowkey_timestamp_format {
            Some((text, at)) => TimestampFormat::parse(text)
                .map_err(|e| ImportError::Invalid(format!("{at}: [rowkey] {e}")))?,
            None => TimestampFormat::EpochMillis,
        };
        let spec = spec.with_timestamp_format(rowkey_ts.clone());
        if mapping.columns.is_empty() {
            return Err(ImportError::Invalid(
                "the schema maps no [[column]] to a cell".into(),
            ));
        }
        let families: Vec<&str> = schema.families.iter().map(|f| f.name.as_str()).collect();
        for c in &mapping.columns {
            if !families.contains(&c.family.as_str()) {
                return Err(ImportError::Invalid(format!(
                    "column '{}' maps to family '{}', which table {} does not have (families: {})",
                    c.source,
                    c.family,
                    schema.full_name(),
                    families.join(", ")
                )));
            }
        }
        if families.len() + mapping.indexes.len() > usize::from(u8::MAX) + 1 {
            return Err(ImportError::Invalid(format!(
                "{} families and {} index tables: at most 256 together",
                families.len(),
                mapping.indexes.len()
            )));
        }
        let ts_formats = mapping
            .columns
            .iter()
            .map(|c| {
                timestamp_format(c.timestamp_format.as_deref(), c.location.as_ref(), || {
                    format!("column '{}'", c.source)
                })
            })
            .collect::<Result<_, _>>()?;
        let mut indexes = Vec::new();
        for ix in &mapping.indexes {
            let what = format!("index {}", ix.full_name());
            let at = ix
                .rowkey_location
                .as_ref()
                .map(|l| format!("{l}: "))
                .unwrap_or_default();
            let ix_spec = RowkeySpec::parse(&ix.rowkey)
                .map_err(|source| ImportError::Rowkey {
                    context: format!("{at}{what}: rowkey"),
                    source,
                })?
                .with_timestamp_format(rowkey_ts.clone());
            indexes.push(CompiledIndex {
                spec: ix_spec,
                ts_format: timestamp_format(
                    ix.timestamp_format.as_deref(),
                    ix.location.as_ref(),
                    || what.clone(),
                )?,
                schema: ix.clone(),
            });
        }
        Ok(Compiled {
            spec,
            ts_formats,
            indexes,
        })
    }

    /// Every input field the import reads (the Parquet projection).
    pub fn wanted_fields(&self, mapping: &ImportMapping) -> Vec<String> {
        let mut wanted: Vec<String> = self.spec.fields().to_vec();
        for c in &mapping.columns {
            wanted.push(c.source.clone());
            if let TimestampSource::Field(f) = &c.timestamp {
                wanted.push(f.clone());
            }
        }
        for ix in &self.indexes {
            wanted.extend(ix.spec.fields().iter().cloned());
            if let TimestampSource::Field(f) = &ix.schema.timestamp {
                wanted.push(f.clone());
            }
        }
        wanted.sort();
        wanted.dedup();
        wanted
    }
}

/// `"s.toml:12:8: "` for a schema location, `""` without one.
fn at_prefix(at: Option<&hfkit_table::Location>) -> String {
    at.map(|l| format!("{l}: ")).unwrap_or_default()
}

/// A compiled `timestamp_format` (epoch ms when none is given); a bad format is an error
/// naming `what` and where the schema wrote it.
fn timestamp_format(
    text: Option<&str>,
    at: Option<&hfkit_table::Location>,
    what: impl Fn() -> String,
) -> Result<TimestampFormat, ImportError> {
    match text {
        None => Ok(TimestampFormat::EpochMillis),
        Some(text) => TimestampFormat::parse(text)
            .map_err(|e| ImportError::Invalid(format!("{}{}: {e}", at_prefix(at), what()))),
    }
}

/// Whether a schema carries an import mapping (`[rowkey]`, `[[column]]` or `[[index]]`).
pub fn has_mapping(mapping: &ImportMapping) -> bool {
    mapping.rowkey.is_some() || !mapping.columns.is_empty() || !mapping.indexes.is_empty()
}

/// The checks an import makes of a schema before it reads anything: the rowkey specs (main
/// and index) parse, every timestamp format compiles, the mapping fits the table. Errors name
/// the schema file, line and column. `table create` runs them too.
pub fn check_mapping(schema: &TableSchema, mapping: &ImportMapping) -> Result<(), ImportError> {
    Compiled::new(schema, mapping).map(|_| ())
}

/// [`check_mapping`], then the checks an import makes of each input when it opens it: every
/// field the rowkey specs, columns and timestamps read is one of the input's. Reads only each
/// input's header (CSV) or schema (Parquet).
pub fn check_inputs(
    schema: &TableSchema,
    mapping: &ImportMapping,
    inputs: &[PathBuf],
    format: &InputFormat,
) -> Result<(), ImportError> {
    let compiled = Compiled::new(schema, mapping)?;
    let families: Vec<&str> = schema.families.iter().map(|f| f.name.as_str()).collect();
    let wanted = compiled.wanted_fields(mapping);
    for path in inputs {
        let Some((_, columns)) = open_input(path, format, &wanted, 1)? else {
            continue;
        };
        bind(&compiled, mapping, &families, &columns, path, 0)?;
    }
    Ok(())
}

/// The regions of an import's tables: the main table's and each index table's (schema order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportRegions {
    pub main: Regions,
    pub indexes: Vec<Regions>,
}

/// The regions the schema's `[splits]` (and each `[index.splits]`) give. When one says
/// `sample = N`, the row keys of the first `sample_rows` records of `inputs` are sampled, as
/// the import samples them (`formats/schema.md` §"Splits").
pub fn import_regions(
    schema: &TableSchema,
    mapping: &ImportMapping,
    inputs: &[PathBuf],
    format: &InputFormat,
    sample_rows: usize,
) -> Result<ImportRegions, ImportError> {
    let compiled = Compiled::new(schema, mapping)?;
    let sampled = |s: &SplitSpec| matches!(s, SplitSpec::Sampled { .. });
    let sample =
        if sampled(&schema.splits) || mapping.indexes.iter().any(|ix| sampled(&ix.table.splits)) {
            Some(sample_keys(&compiled, inputs, format, sample_rows)?)
        } else {
            None
        };
    let main = schema
        .splits
        .regions(sample.as_ref().map(|s| s.main.as_slice()))?;
    let indexes = mapping
        .indexes
        .iter()
        .enumerate()
        .map(|(i, ix)| {
            ix.table
                .splits
                .regions(
                    sample
                        .as_ref()
                        .and_then(|s| s.indexes.get(i))
                        .map(Vec::as_slice),
                )
                .map_err(|e| ImportError::Invalid(format!("index {}: {e}", ix.full_name())))
        })
        .collect::<Result<_, _>>()?;
    Ok(ImportRegions { main, indexes })
}

/// Where the index tables' bulk-load directories go inside the main one: a name starting with
/// `.`, which `hbase completebulkload` (not a legal family name) and `hfkit attach` skip.
pub const INDEX_BULK_DIR: &str = ".indexes";

/// Bulk-load directories of the index tables when none are given: inside `out_dir`, under
/// [`INDEX_BULK_DIR`], each named after its index table's qualifier.
pub fn default_index_dirs(out_dir: &Path, indexes: &[IndexSchema]) -> Vec<PathBuf> {
    indexes
        .iter()
        .map(|ix| out_dir.join(INDEX_BULK_DIR).join(&ix.table.qualifier))
        .collect()
}

/// Writer options of a family of the output, with the bulk-load FileInfo, and its retention
/// at `now_ms`.
fn output_family(
    f: &hfkit_table::FamilySchema,
    import_time: i64,
    now_ms: i64,
) -> Result<OutputFamily, ImportError> {
    let entry = FamilyEntry::from_schema(f);
    let invalid = |e: hfkit_table::TableError| ImportError::Invalid(e.to_string());
    let mut o = entry.writer_options(import_time).map_err(invalid)?;
    let retention = Retention::new(&family_read_settings(&entry).map_err(invalid)?, now_ms);
    o.bulk_load = Some(BulkLoadInfo {
        timestamp: import_time,
        task: "hfkit-import".into(),
        exclude_from_minor_compaction: false,
    });
    Ok(OutputFamily {
        name: f.name.clone(),
        options: o,
        retention,
    })
}

/// Creates `dir` (remembering which of it and its parents did not exist) and a guard that
/// removes what a failed import leaves of it.
fn guarded_dir(dir: &Path, families: Vec<String>) -> Result<OutputDirGuard, ImportError> {
    let created = dir
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    let guard = OutputDirGuard {
        dir: dir.to_path_buf(),
        created,
        families,
        armed: true,
    };
    std::fs::create_dir_all(dir).map_err(|source| ImportError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    Ok(guard)
}

/// Per-region report lines of a finished output.
fn region_reports(regions: &Regions, out: &super::output::OutputReport) -> Vec<RegionReport> {
    (0..regions.len())
        .map(|i| {
            let stores = out.stores.get(i).cloned().unwrap_or_default();
            RegionReport {
                start_key: hfkit_table::to_string_binary(regions.start_key(i)),
                end_key: hfkit_table::to_string_binary(regions.end_key(i)),
                cells: stores.iter().map(|s| s.cells).sum(),
                bytes: stores.iter().map(|s| s.bytes).sum(),
                files: stores.iter().map(|s| s.files).sum(),
            }
        })
        .collect()
}

/// Per-family totals of a finished output, families in `names` order.
fn family_reports(names: &[&str], out: &super::output::OutputReport) -> Vec<FamilyReport> {
    names
        .iter()
        .enumerate()
        .map(|(f, name)| {
            let mut hidden = HiddenCells::default();
            let mut cells = 0;
            for store in out.stores.iter().filter_map(|region| region.get(f)) {
                cells += store.cells;
                hidden.add(store.hidden);
            }
            FamilyReport {
                name: name.to_string(),
                cells,
                expired_by_ttl: hidden.expired,
                beyond_versions: hidden.beyond_versions,
            }
        })
        .collect()
}

/// Runs an import.
pub fn run_import(
    schema: &TableSchema,
    mapping: &ImportMapping,
    mut opts: ImportOptions,
) -> Result<ImportReport, ImportError> {
    let started = Instant::now();
    let compiled = Compiled::new(schema, mapping)?;
    let families: Vec<&str> = schema.families.iter().map(|f| f.name.as_str()).collect();
    if opts.inputs.is_empty() {
        return Err(ImportError::Invalid("no input files".into()));
    }
    let index_dirs = match &opts.index_out {
        Some(dirs) if dirs.len() == mapping.indexes.len() => dirs.clone(),
        Some(dirs) => {
            return Err(ImportError::Invalid(format!(
                "{} index output directories for {} index tables",
                dirs.len(),
                mapping.indexes.len()
            )))
        }
        None => default_index_dirs(&opts.out_dir, &mapping.indexes),
    };
    for (i, d) in index_dirs.iter().enumerate() {
        if *d == opts.out_dir || index_dirs[..i].contains(d) {
            return Err(ImportError::Invalid(format!(
                "index table {} would be written to {}, which another table of this import uses; \
                 give each index its own directory",
                mapping.indexes[i].full_name(),
                d.display()
            )));
        }
    }
    let total_input_bytes: u64 = opts
        .inputs
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();

    // Regions: the tables' own, or from the splits (a sample of row keys first, when some
    // table's splits are sampled).
    let ImportRegions {
        main: regions,
        indexes: index_regions,
    } = match opts.regions.take() {
        Some(r) if r.indexes.len() == mapping.indexes.len() => r,
        Some(r) => {
            return Err(ImportError::Invalid(format!(
                "regions of {} index tables for {} index tables",
                r.indexes.len(),
                mapping.indexes.len()
            )))
        }
        None => import_regions(
            schema,
            mapping,
            &opts.inputs,
            &opts.format,
            opts.sample_rows,
        )?,
    };

    // Outputs and sorter. The main directory's guard first: the index tables' directories are
    // inside it by default, and on a failure guards are dropped in reverse.
    let mut dir_guard = guarded_dir(
        &opts.out_dir,
        schema.families.iter().map(|f| f.name.clone()).collect(),
    )?;
    let mut index_guards = Vec::new();
    let mut index_outputs = Vec::new();
    for ((ix, dir), ix_regions) in mapping.indexes.iter().zip(&index_dirs).zip(&index_regions) {
        // Newest first: a vector drops in order, and a later one's directory may be inside a
        // parent an earlier one created.
        index_guards.insert(0, guarded_dir(dir, vec![ix.family().name.clone()])?);
        index_outputs.push(BulkOutput::new(
            dir,
            vec![output_family(ix.family(), opts.import_time, opts.now_ms)?],
            ix_regions.split_keys().to_vec(),
            opts.max_file_size,
        )?);
    }
    let out_families: Vec<OutputFamily> = schema
        .families
        .iter()
        .map(|f| output_family(f, opts.import_time, opts.now_ms))
        .collect::<Result<_, ImportError>>()?;
    let mut output = BulkOutput::new(
        &opts.out_dir,
        out_families,
        regions.split_keys().to_vec(),
        opts.max_file_size,
    )?;
    // Runs are spilled into a directory of this run's own, removed on every exit path; the
    // ones killed imports left in the same place go first.
    let spill_parent = opts.temp_dir.as_ref().unwrap_or(&opts.out_dir);
    staging::sweep(spill_parent, SPILL_DIR_PREFIX);
    let spill_dir =
        OwnedDir::create(spill_parent, SPILL_DIR_PREFIX).map_err(|source| ImportError::Io {
            path: spill_parent.clone(),
            source,
        })?;
    let temp_dir = spill_dir.path().to_path_buf();
    // Lanes take their memory out of the budget; the sorter gets the rest.
    let fam_names: Vec<Vec<u8>> = families
        .iter()
        .map(|f| f.as_bytes().to_vec())
        .chain(
            mapping
                .indexes
                .iter()
                .map(|ix| ix.family().name.as_bytes().to_vec()),
        )
        .collect();
    let max_lanes = if opts.streaming {
        Router::lanes_for(opts.memory_budget)
    } else {
        0
    };
    let lane_splits = std::iter::repeat_n(regions.split_keys().to_vec(), families.len())
        .chain(index_regions.iter().map(|r| r.split_keys().to_vec()))
        .collect();
    let mut router = Router::new(lane_splits, max_lanes);
    let mut sorter = CellSorter::new(
        opts.memory_budget
            .saturating_sub(max_lanes * super::output::LANE_MEMORY),
        &temp_dir,
    );
    if rayon::current_num_threads() > 1 {
        // A full buffer is sorted and spilled on a thread of its own while the next fills.
        sorter = sorter.with_background_spill();
    }

    let mut bad_rows = match &opts.bad_rows {
        Some(p) => Some((
            BufWriter::new(File::create(p).map_err(|source| ImportError::Io {
                path: p.clone(),
                source,
            })?),
            p.clone(),
        )),
        None => None,
    };
    let mut report = ImportReport {
        rowkey_len_min: usize::MAX,
        ..ImportReport::default()
    };
    let mut progress = Progress {
        phase: "reading",
        total_input_bytes,
        ..Progress::default()
    };
    let mut last_tick = Instant::now();
    let mut key_len_sum = 0u64;
    let mut keys = 0u64;
    let mut ascending = 0u64;
    let mut prev_key: Vec<u8> = Vec::new();
    let n_main = families.len();
    let mut index_added = vec![0u64; mapping.indexes.len()];

    let inputs = opts.inputs.clone();
    let wanted = compiled.wanted_fields(mapping);
    let mut encoded = Vec::new();
    let threads = rayon::current_num_threads();
    // Reads every input; lanes' cells go to `sink`, the rest to the sorter.
    let mut read_all = |sink: &mut dyn LaneSink| -> Result<(), ImportError> {
        for path in &inputs {
            let Some((units, columns)) = open_input(path, &opts.format, &wanted, opts.batch_rows)?
            else {
                continue;
            };
            let bound = bind(
                &compiled,
                mapping,
                &families,
                &columns,
                path,
                opts.import_time,
            )?;
            let mut each_batch = |batch: &Batch| -> Result<(), ImportError> {
                encode_batch(batch, &bound, &mut encoded);
                for e in &encoded {
                    key_len_sum += e.key_len_sum;
                    keys += e.keys;
                    ascending += e.ascending;
                    if e.keys > 0 {
                        report.rowkey_len_min = report.rowkey_len_min.min(e.key_len_min);
                        report.rowkey_len_max = report.rowkey_len_max.max(e.key_len_max);
                    }
                }
                let mut rejected: Vec<&(usize, String)> =
                    encoded.iter().flat_map(|e| e.rejected.iter()).collect();
                rejected.sort_by_key(|r| r.0);
                if let Some((i, reason)) = rejected.first() {
                    match bad_rows.as_mut() {
                        None => {
                            return Err(ImportError::Record {
                                position: batch.position(*i),
                                reason: reason.clone(),
                            })
                        }
                        Some((w, p)) => {
                            for (i, reason) in &rejected {
                                report.rows_rejected += 1;
                                let rec: Vec<String> = batch.records[*i]
                                    .iter()
                                    .map(|f| String::from_utf8_lossy(f).to_string())
                                    .collect();
                                writeln!(
                                    w,
                                    "{}\t{}\t{}",
                                    batch.position(*i),
                                    reason,
                                    rec.join(",")
                                )
                                .map_err(|source| {
                                    ImportError::Io {
                                        path: p.clone(),
                                        source,
                                    }
                                })?;
                                if let Some(max) =
                                    opts.max_bad_rows.filter(|m| report.rows_rejected > *m)
                                {
                                    return Err(ImportError::TooManyBadRows {
                                        count: report.rows_rejected,
                                        max,
                                        last: format!("{}: {reason}", batch.position(*i)),
                                    });
                                }
                            }
                        }
                    }
                }
                for e in &encoded {
                    // The monotonic-keys check across worker slices: each slice's first key
                    // against the previous slice's last.
                    if e.keys > 0 {
                        if !prev_key.is_empty() && e.first_key >= prev_key {
                            ascending += 1;
                        }
                        prev_key.clone_from(&e.last_key);
                    }
                    router.route(e, &mut sorter, sink)?;
                    for c in &e.cells {
                        match usize::from(c.family).checked_sub(n_main) {
                            None => report.cells += 1,
                            Some(i) => index_added[i] += 1,
                        }
                    }
                }
                report.rows_read += batch.records.len() as u64;
                progress.rows = report.rows_read;
                progress.cells = report.cells;
                if last_tick.elapsed().as_millis() >= 500 {
                    last_tick = Instant::now();
                    if let Some(cb) = opts.progress.as_mut() {
                        cb(&progress);
                    }
                }
                Ok(())
            };
            if threads > 1 {
                read_ahead(units, threads, &mut each_batch)?;
            } else {
                let mut batch = Batch::default();
                for mut next in units {
                    while next(&mut batch)? {
                        each_batch(&batch)?;
                    }
                }
            }
            progress.input_bytes += std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        }
        router.flush(sink)
    };
    if threads > 1 && max_lanes > 0 {
        // Lanes are written by writer threads (one per thread of the pool, each with outputs
        // of its own, gathered afterwards) while this one reads and encodes.
        let mut siblings: Vec<(BulkOutput, Vec<BulkOutput>)> = (1..threads.min(8))
            .map(|_| {
                (
                    output.sibling(),
                    index_outputs.iter().map(BulkOutput::sibling).collect(),
                )
            })
            .collect();
        let mut all: Vec<Outputs> = std::iter::once(Outputs {
            main: &mut output,
            indexes: &mut index_outputs,
            n_main,
        })
        .chain(siblings.iter_mut().map(|(main, indexes)| Outputs {
            main,
            indexes,
            n_main,
        }))
        .collect();
        std::thread::scope(|scope| -> Result<(), ImportError> {
            let (to_reader, spares) = std::sync::mpsc::channel();
            let mut writers = Vec::new();
            let mut handles = Vec::new();
            for outs in all.iter_mut() {
                let (to_writer, messages) = std::sync::mpsc::sync_channel(LANE_WRITER_QUEUE);
                let to_reader = to_reader.clone();
                writers.push(to_writer);
                handles.push(scope.spawn(move || run_lane_writer(messages, to_reader, outs)));
            }
            let mut sink = ThreadSink { writers, spares };
            let read = read_all(&mut sink);
            drop(sink); // ends the writers' loops
            let mut written = Ok(());
            for h in handles {
                let r = h
                    .join()
                    .map_err(|_| ImportError::Invalid("internal: a lane writer panicked".into()))?;
                written = written.and(r);
            }
            // A writer's own error explains a failed send.
            written.and(read)
        })?;
        drop(all);
        for (main, indexes) in siblings {
            output.absorb(main)?;
            for (o, sibling) in index_outputs.iter_mut().zip(indexes) {
                o.absorb(sibling)?;
            }
        }
    } else {
        read_all(&mut Outputs {
            main: &mut output,
            indexes: &mut index_outputs,
            n_main,
        })?;
    }
    if let Some((mut w, p)) = bad_rows.take() {
        w.flush()
            .map_err(|source| ImportError::Io { path: p, source })?;
    }
    report.input_bytes = total_input_bytes;

    // Sort and write: the sorter yields the main table's families, then each index's.
    progress.phase = "writing";
    if let Some(cb) = opts.progress.as_mut() {
        cb(&progress);
    }
    let mut sorted = sorter.finish()?;
    let mut written = 0u64;
    report.streamed_cells = (0..n_main).map(|f| router.streamed(f)).sum();
    (report.lanes_taken_back, report.cells_re_read) = router.taken();
    let mut main_written = report.streamed_cells;
    let mut index_written: Vec<u64> = (0..mapping.indexes.len())
        .map(|i| router.streamed(n_main + i))
        .collect();
    let mut count = |f: usize| {
        match f.checked_sub(n_main) {
            None => main_written += 1,
            Some(i) => {
                if let Some(n) = index_written.get_mut(i) {
                    *n += 1;
                }
            }
        }
        written += 1;
        if written.is_multiple_of(1 << 20) && last_tick.elapsed().as_millis() >= 500 {
            last_tick = Instant::now();
            progress.cells = written;
            if let Some(cb) = opts.progress.as_mut() {
                cb(&progress);
            }
        }
    };
    // The sorted cells are copied into batches and written a row at a time (the writer's row
    // path). With more than one thread, merging and writing overlap: this thread fills the
    // batches and a writer thread that owns the outputs writes them.
    let mut fill = |batch: &mut Vec<u8>| -> Result<bool, ImportError> {
        while let Some(c) = sorted.next()? {
            count(usize::from(c.family));
            push_batch_cell(batch, &c);
            if batch.len() >= BATCH_BYTES {
                return Ok(true);
            }
        }
        Ok(false)
    };
    let mut batch = Vec::with_capacity(BATCH_BYTES + 4096);
    if rayon::current_num_threads() > 1 {
        std::thread::scope(|scope| -> Result<(), ImportError> {
            // Created in the scope so that an early return drops the sender, which ends the
            // writer's loop before the scope joins it.
            let (to_writer, batches) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
            let (to_reader, spares) = std::sync::mpsc::channel::<Vec<u8>>();
            let outputs = (&mut output, &mut index_outputs);
            let fam_names = &fam_names;
            let writer = scope.spawn(move || -> Result<(), ImportError> {
                let (output, index_outputs) = outputs;
                for batch in batches {
                    write_batch(&batch, fam_names, n_main, output, index_outputs)?;
                    let _ = to_reader.send(batch);
                }
                Ok(())
            });
            loop {
                let more = fill(&mut batch)?;
                let next = spares
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(BATCH_BYTES + 4096));
                // An error stops the writer, and its join reports it.
                if to_writer.send(std::mem::replace(&mut batch, next)).is_err() || !more {
                    break;
                }
                batch.clear(); // a recycled batch still holds its cells
            }
            drop(to_writer);
            writer
                .join()
                .map_err(|_| ImportError::Invalid("internal: the writer thread panicked".into()))?
        })?;
    } else {
        loop {
            let more = fill(&mut batch)?;
            write_batch(&batch, &fam_names, n_main, &mut output, &mut index_outputs)?;
            batch.clear();
            if !more {
                break;
            }
        }
    }
    report.duplicate_cells = report.cells - main_written;
    report.cells = main_written;
    report.spilled_runs = sorted.runs();
    report.spilled_bytes = sorted.spilled_bytes();
    drop(sorted);
    // Every file of every table complete and synced before any is published.
    output.seal()?;
    for o in &mut index_outputs {
        o.seal()?;
    }
    let mut index_finished = Vec::new();
    for o in index_outputs {
        index_finished.push(o.finish()?);
    }
    let out = output.finish()?;
    report.files = out.files.len();
    report.output_bytes = out.files.iter().map(|f| f.bytes).sum();
    report.regions = region_reports(&regions, &out);
    report.families = family_reports(&families, &out);
    report.output_files = out.files;
    let accepted = report.rows_read - report.rows_rejected;
    for (i, ix_out) in index_finished.into_iter().enumerate() {
        let ix = &mapping.indexes[i];
        report.indexes.push(IndexReport {
            name: ix.full_name(),
            dir: index_dirs[i].display().to_string(),
            cells: index_written[i],
            duplicate_cells: index_added[i] - index_written[i],
            rows_without_entry: accepted.saturating_sub(index_added[i]),
            files: ix_out.files.len(),
            output_bytes: ix_out.files.iter().map(|f| f.bytes).sum(),
            regions: region_reports(&index_regions[i], &ix_out),
            families: family_reports(&[ix.family().name.as_str()], &ix_out),
            output_files: ix_out.files,
        });
    }
    if keys == 0 {
        report.rowkey_len_min = 0;
    } else {
        report.rowkey_len_mean = key_len_sum as f64 / keys as f64;
    }
    report.warnings = design_warnings(&report, keys, ascending);
    report
        .warnings
        .extend(hidden_cell_warnings("", &report.families, &schema.families));
    for (ix_report, ix) in report.indexes.iter().zip(&mapping.indexes) {
        report.warnings.extend(hidden_cell_warnings(
            &format!("index {}: ", ix_report.name),
            &ix_report.families,
            std::slice::from_ref(ix.family()),
        ));
    }
    if let (Some(p), n @ 1..) = (&opts.bad_rows, report.rows_rejected) {
        report.warnings.push(format!(
            "{n} rejected records were skipped; they are in {}",
            p.display()
        ));
    }
    report.wall_seconds = started.elapsed().as_secs_f64();
    report.peak_rss_bytes = super::sys::peak_rss_bytes();
    dir_guard.armed = false;
    for g in &mut index_guards {
        g.armed = false;
    }
    Ok(report)
}

/// Full lane staging buffers (128 KiB each) queued for each lane-writer thread. Deep enough
/// that the importing thread rarely waits for one writer while another is idle (lineitem SF1,
/// 2 threads: 4 left the CPU idle 1.7-2.5 s a run, 16 about 0.9 s; 10.4 -> 9.6 s).
const LANE_WRITER_QUEUE: usize = 16;

/// Batches each reader thread parses ahead of the importer.
const READ_AHEAD_BATCHES: usize = 2;

/// What a reader thread sends: a batch of its current unit, or the end of that unit.
enum ReadAhead {
    Batch(Batch),
    UnitDone,
}

/// Runs an input's batch readers (its units: one per Parquet row group, one for a CSV file)
/// on `readers` threads of their own, parsing ahead while this thread encodes and routes,
/// and hands every batch to `each` in input order: unit by unit, each unit's batches in order.
///
/// Unit `u` is read by thread `u % readers`, which reads its units in order; this thread takes
/// unit `u`'s batches from that thread's channel (bounded, [`READ_AHEAD_BATCHES`] deep) until
/// the unit's end. So several row groups are decoded at once, the order stays the input's,
/// and at most `readers * (READ_AHEAD_BATCHES + 1) + 1` batches are in flight (each reader's
/// queued ones and the one it fills, and the one being imported).
fn read_ahead(
    units: Vec<BatchReader>,
    readers: usize,
    each: &mut dyn FnMut(&Batch) -> Result<(), ImportError>,
) -> Result<(), ImportError> {
    let n_units = units.len();
    let readers = readers.clamp(1, n_units.max(1));
    let mut per_reader: Vec<Vec<BatchReader>> = (0..readers).map(|_| Vec::new()).collect();
    for (u, unit) in units.into_iter().enumerate() {
        per_reader[u % readers].push(unit);
    }
    std::thread::scope(|scope| -> Result<(), ImportError> {
        let mut filled = Vec::with_capacity(readers);
        let mut to_readers = Vec::with_capacity(readers);
        for mine in per_reader {
            let (to_importer, rx) =
                std::sync::mpsc::sync_channel::<Result<ReadAhead, SourceError>>(READ_AHEAD_BATCHES);
            let (to_reader, empties) = std::sync::mpsc::channel::<Batch>();
            filled.push(rx);
            to_readers.push(to_reader);
            scope.spawn(move || {
                for mut next in mine {
                    loop {
                        let mut batch = empties.try_recv().unwrap_or_default();
                        // A failed send means the importer stopped (on an error).
                        match next(&mut batch) {
                            Ok(true) => {
                                if to_importer.send(Ok(ReadAhead::Batch(batch))).is_err() {
                                    return;
                                }
                            }
                            Ok(false) => {
                                if to_importer.send(Ok(ReadAhead::UnitDone)).is_err() {
                                    return;
                                }
                                break;
                            }
                            Err(e) => {
                                let _ = to_importer.send(Err(e));
                                return;
                            }
                        }
                    }
                }
            });
        }
        // On an error the receivers are dropped here, which ends every reader's next send.
        for u in 0..n_units {
            let r = u % readers;
            loop {
                // A reader sends its error before it ends; a channel closed before the end
                // of its unit means the reader died, and the unit is not whole.
                let msg = filled[r].recv().map_err(|_| {
                    ImportError::Invalid("internal: an input reader thread panicked".into())
                })?;
                match msg? {
                    ReadAhead::Batch(batch) => {
                        each(&batch)?;
                        let _ = to_readers[r].send(batch);
                    }
                    ReadAhead::UnitDone => break,
                }
            }
        }
        Ok(())
    })
}

/// Bytes of sorted cells handed to the writer thread at a time.
const BATCH_BYTES: usize = 1 << 20;

/// Appends one sorted cell to a writer-thread batch:
/// `u8 family | u8 type | u16 rowLen | u32 qualifierLen | u32 valueLen | i64 ts | row | q | v`.
fn push_batch_cell(batch: &mut Vec<u8>, c: &crate::sort::SortedCell<'_>) {
    let mut h = [0u8; 20];
    h[0] = c.family;
    h[1] = c.cell_type.code();
    h[2..4].copy_from_slice(&(c.row.len() as u16).to_be_bytes());
    h[4..8].copy_from_slice(&(c.qualifier.len() as u32).to_be_bytes());
    h[8..12].copy_from_slice(&(c.value.len() as u32).to_be_bytes());
    h[12..20].copy_from_slice(&c.timestamp.to_be_bytes());
    extend_pieces(batch, [&h, c.row, c.qualifier, c.value]);
}

/// The cell at `at` of a batch (family index, cell, offset of the next), `None` at the end
/// (or on a malformed record, which `push_batch_cell` never writes).
fn batch_cell<'a>(
    batch: &'a [u8],
    at: usize,
    fam_names: &'a [Vec<u8>],
) -> Option<(usize, CellRef<'a>, usize)> {
    let h = batch.get(at..at + 20)?;
    let f = usize::from(h[0]);
    let cell_type = CellType::from_code(h[1])?;
    let row_len = usize::from(u16::from_be_bytes([h[2], h[3]]));
    let q_len = u32::from_be_bytes([h[4], h[5], h[6], h[7]]) as usize;
    let v_len = u32::from_be_bytes([h[8], h[9], h[10], h[11]]) as usize;
    let mut ts = [0u8; 8];
    ts.copy_from_slice(&h[12..20]);
    let body = at + 20;
    let end = body + row_len + q_len + v_len;
    let b = batch.get(body..end)?;
    let cell = CellRef {
        row: &b[..row_len],
        family: fam_names.get(f)?,
        qualifier: &b[row_len..row_len + q_len],
        timestamp: i64::from_be_bytes(ts),
        cell_type,
        value: &b[row_len + q_len..],
        tags: &[],
        seq_id: 0,
    };
    Some((f, cell, end))
}

/// Writes a batch of sorted cells (records of [`push_batch_cell`]) to the main table's output
/// or to its index tables', a row (of one family) at a time. A row cut by the end of a batch
/// goes on in the next one: the writer's row path takes it as `append` of each cell would.
fn write_batch(
    batch: &[u8],
    fam_names: &[Vec<u8>],
    n_main: usize,
    output: &mut BulkOutput,
    index_outputs: &mut [BulkOutput],
) -> Result<(), ImportError> {
    let mut write = |f: usize, row: &[CellRef<'_>]| -> Result<(), ImportError> {
        match f.checked_sub(n_main) {
            None => output.append_row(f, row)?,
            Some(i) => index_outputs
                .get_mut(i)
                .ok_or_else(|| ImportError::Invalid("internal: index family out of range".into()))?
                .append_row(0, row)?,
        }
        Ok(())
    };
    let mut row: Vec<CellRef<'_>> = Vec::with_capacity(64);
    let mut row_family = 0;
    let mut at = 0;
    while let Some((f, cell, next)) = batch_cell(batch, at, fam_names) {
        if row
            .first()
            .is_some_and(|r| f != row_family || !equal_bytes(r.row, cell.row))
        {
            write(row_family, &row)?;
            row.clear();
        }
        row_family = f;
        row.push(cell);
        at = next;
    }
    if at != batch.len() {
        return Err(ImportError::Invalid(format!(
            "internal: malformed sorted-cell batch at byte {at}"
        )));
    }
    if !row.is_empty() {
        write(row_family, &row)?;
    }
    Ok(())
}

/// An opened input: its batch readers and its column names.
pub(crate) type OpenInput = (Vec<BatchReader>, Vec<String>);

/// Opens one input: its readers (one per Parquet row group, in order; one for a CSV file) and
/// its column names. Parquet files are read projected to `wanted`; one without row groups has
/// no reader, and the columns of its schema. `None` for a CSV file without a single line: no
/// record, and no header to check the mapping against.
pub(crate) fn open_input(
    path: &Path,
    format: &InputFormat,
    wanted: &[String],
    batch_rows: usize,
) -> Result<Option<OpenInput>, ImportError> {
    let mut units: Vec<BatchReader> = Vec::new();
    match format {
        InputFormat::Csv(csv_opts) => {
            let mut src = CsvSource::open(path, csv_opts)?;
            if src.is_empty() {
                return Ok(None);
            }
            let columns = src.columns().to_vec();
            units.push(Box::new(move |b| src.next_batch(b, batch_rows)));
            Ok(Some((units, columns)))
        }
        InputFormat::Parquet => {
            let groups = parquet_source::row_group_count(path)?;
            let mut cols = None;
            for g in 0..groups {
                let mut src = ParquetSource::open(path, Some(wanted), g, batch_rows)?;
                cols.get_or_insert_with(|| src.columns().to_vec());
                units.push(Box::new(move |b| src.next_batch(b)));
            }
            let columns = match cols {
                Some(c) => c,
                None => parquet_source::column_names(path)?,
            };
            Ok(Some((units, columns)))
        }
    }
}

/// On a failed import, removes the (then empty) family directories, and the output directory
/// and those of its parents the import created.
struct OutputDirGuard {
    dir: PathBuf,
    /// `dir` and its parents that did not exist, deepest first.
    created: Vec<PathBuf>,
    families: Vec<String>,
    armed: bool,
}

impl Drop for OutputDirGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        for f in &self.families {
            let _ = std::fs::remove_dir(self.dir.join(f));
        }
        for d in &self.created {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// HBase table-design warnings (hot regions, monotonic keys, key length), and index tables
/// whose keys collide.
fn design_warnings(r: &ImportReport, keys: u64, ascending: u64) -> Vec<String> {
    let mut w = hot_region_warnings(
        "",
        r.regions.iter().map(|reg| {
            (
                reg.start_key.as_str(),
                reg.end_key.as_str(),
                reg.cells as f64,
            )
        }),
    );
    w.extend(key_warnings(keys, ascending, r.rowkey_len_mean));
    for ix in &r.indexes {
        w.extend(hot_region_warnings(
            &format!("index {}: ", ix.name),
            ix.regions.iter().map(|reg| {
                (
                    reg.start_key.as_str(),
                    reg.end_key.as_str(),
                    reg.cells as f64,
                )
            }),
        ));
        if ix.duplicate_cells > 0 {
            w.push(format!(
                "index {}: {} index cells had the row key of another and were dropped (the last \
                 one read wins); make the index rowkey unique, e.g. by appending the main key's fields",
                ix.name, ix.duplicate_cells
            ));
        }
    }
    w
}

/// Families some of whose cells reads will not return right after the import: past the TTL,
/// or beyond VERSIONS (`schemas` in the order of `families`).
fn hidden_cell_warnings(
    prefix: &str,
    families: &[FamilyReport],
    schemas: &[hfkit_table::FamilySchema],
) -> Vec<String> {
    let mut w = Vec::new();
    for (f, schema) in families.iter().zip(schemas) {
        if f.expired_by_ttl > 0 {
            w.push(format!(
                "{prefix}family {}: {} of its {} cells are already past the family's TTL ({} s) at import time: reads will not return them and a major compaction drops them; check their timestamps (or raise TTL)",
                f.name,
                f.expired_by_ttl,
                f.cells,
                schema.ttl_seconds.unwrap_or_default()
            ));
        }
        if f.beyond_versions > 0 {
            w.push(format!(
                "{prefix}family {}: {} of its {} cells are versions beyond the family's VERSIONS ({}) within this import: reads return the newest {} of each column and a major compaction drops the rest",
                f.name, f.beyond_versions, f.cells, schema.versions, schema.versions
            ));
        }
    }
    w
}

/// Regions holding more than twice the mean number of cells: `(start, end, cells)` each.
pub(crate) fn hot_region_warnings<'a>(
    prefix: &str,
    regions: impl Iterator<Item = (&'a str, &'a str, f64)>,
) -> Vec<String> {
    let regions: Vec<(&str, &str, f64)> = regions.collect();
    let total: f64 = regions.iter().map(|r| r.2).sum();
    let mut w = Vec::new();
    if regions.len() > 1 && total > 0.0 {
        let mean = total / regions.len() as f64;
        for (start, end, cells) in &regions {
            if *cells > 2.0 * mean {
                w.push(format!(
                    "{prefix}region [{start}, {end}) holds {cells:.0} cells, more than twice the mean {mean:.0}: a hot region; consider salting the row key or different split points",
                ));
            }
        }
    }
    w
}

/// Keys arriving in increasing order; mean key length outside HBase's advice.
pub(crate) fn key_warnings(keys: u64, ascending: u64, mean_len: f64) -> Vec<String> {
    let mut w = Vec::new();
    if keys > 1000 && ascending as f64 >= 0.99 * (keys - 1) as f64 {
        w.push("row keys arrive in increasing order: in HBase, live writes with such keys all hit one region; consider a salt or hash prefix".into());
    }
    if keys > 0 && !(10.0..=100.0).contains(&mean_len) {
        w.push(format!(
            "mean row key length is {mean_len:.1} bytes; HBase practice keeps row keys between 10 and 100 bytes",
        ));
    }
    w
}

/// Binds the specs and mapping to one file's columns.
pub(crate) fn bind(
    compiled: &Compiled,
    mapping: &ImportMapping,
    families: &[&str],
    columns: &[String],
    path: &Path,
    import_time: i64,
) -> Result<Bound, ImportError> {
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let encoder = compiled
        .spec
        .compile(&names)
        .map_err(|source| ImportError::Rowkey {
            context: format!(
                "{}: {}[rowkey] spec",
                path.display(),
                at_prefix(mapping.rowkey_location.as_ref())
            ),
            source,
        })?;
    // `reader`: what in the schema reads the field, and where.
    let find = |name: &str, reader: &dyn Fn() -> String| -> Result<usize, ImportError> {
        names.iter().position(|n| *n == name).ok_or_else(|| {
            ImportError::Invalid(format!(
                "{}: missing column '{name}' (the file has: {}); {} reads it",
                path.display(),
                names.join(", "),
                reader()
            ))
        })
    };
    if import_time < 0 {
        let limit = CellLimit::NegativeTimestamp(import_time);
        return Err(ImportError::Invalid(format!("import time: {limit}")));
    }
    let timestamp =
        |source: &TimestampSource, format: &TimestampFormat, reader: &dyn Fn() -> String| {
            Ok::<_, ImportError>(match source {
                TimestampSource::ImportTime => BoundTimestamp::Fixed(import_time),
                TimestampSource::Fixed(t) => BoundTimestamp::Fixed(put_timestamp(*t, import_time)),
                TimestampSource::Field(f) => {
                    BoundTimestamp::Field(find(f, reader)?, f.clone(), format.clone(), import_time)
                }
            })
        };
    let mut bound = Vec::new();
    for (c, ts_format) in mapping.columns.iter().zip(&compiled.ts_formats) {
        let family = families
            .iter()
            .position(|f| *f == c.family)
            .ok_or_else(|| ImportError::Invalid(format!("unknown family '{}'", c.family)))?
            as u8;
        let reader = || format!("{}column '{}'", at_prefix(c.location.as_ref()), c.source);
        bound.push(BoundColumn {
            column: find(&c.source, &reader)?,
            family,
            family_len: c.family.len(),
            qualifier: c.qualifier.clone(),
            value_type: c.value_type,
            timestamp: timestamp(&c.timestamp, ts_format, &reader)?,
            source: c.source.clone(),
        });
    }
    // A stable sort: columns mapped to the same cell keep their schema order.
    bound.sort_by(|a, b| (a.family, &a.qualifier).cmp(&(b.family, &b.qualifier)));
    let mut indexes = Vec::new();
    for (i, ix) in compiled.indexes.iter().enumerate() {
        let name = ix.schema.full_name();
        let reader = || format!("{}index {name}", at_prefix(ix.schema.location.as_ref()));
        indexes.push(BoundIndex {
            encoder: ix
                .spec
                .compile(&names)
                .map_err(|source| ImportError::Rowkey {
                    context: format!(
                        "{}: {}index {name}: rowkey",
                        path.display(),
                        at_prefix(ix.schema.rowkey_location.as_ref())
                    ),
                    source,
                })?,
            fields: ix
                .spec
                .fields()
                .iter()
                .map(|f| find(f, &reader))
                .collect::<Result<_, _>>()?,
            family: u8::try_from(families.len() + i)
                .map_err(|_| ImportError::Invalid("too many families and index tables".into()))?,
            family_len: ix.schema.family().name.len(),
            qualifier: ix.schema.qualifier.clone(),
            timestamp: timestamp(&ix.schema.timestamp, &ix.ts_format, &reader)?,
            name,
        });
    }
    Ok(Bound {
        encoder,
        columns: bound,
        indexes,
    })
}

/// Encodes a batch in parallel slices into `out` (one [`Encoded`] per slice, in input order;
/// its buffers are reused from the previous batch, so a steady import allocates nothing here).
pub(crate) fn encode_batch(batch: &Batch, bound: &Bound, out: &mut Vec<Encoded>) {
    let n = batch.records.len();
    let threads = rayon::current_num_threads().max(1);
    let chunk = n.div_ceil(threads * 4).max(256);
    let slices = n.div_ceil(chunk);
    out.resize_with(slices, Encoded::default);
    out.truncate(slices);
    out.par_iter_mut().enumerate().for_each(|(k, out)| {
        let start = k * chunk;
        let end = (start + chunk).min(n);
        let mut enc = bound.encoder.clone();
        let mut ix_enc: Vec<RowkeyEncoder> =
            bound.indexes.iter().map(|ix| ix.encoder.clone()).collect();
        out.reset();
        for i in start..end {
            encode_record(&batch.records[i], i, &mut enc, &mut ix_enc, bound, out);
        }
    });
}

fn encode_record(
    rec: &csv::ByteRecord,
    index: usize,
    enc: &mut RowkeyEncoder,
    ix_enc: &mut [RowkeyEncoder],
    bound: &Bound,
    out: &mut Encoded,
) {
    let arena_at = out.arena.len();
    let cells_at = out.cells.len();
    let reject = |out: &mut Encoded, reason: String| {
        out.arena.truncate(arena_at);
        out.cells.truncate(cells_at);
        out.rejected.push((index, reason));
    };
    let fields = RecordFields(rec);
    if let Err(e) = enc.encode(&fields, &mut out.arena) {
        reject(out, format!("row key: {e}"));
        return;
    }
    let key_len = out.arena.len() - arena_at;
    if key_len > MAX_ROW_LEN {
        reject(
            out,
            format!("row key is {key_len} bytes, more than HBase's maximum of {MAX_ROW_LEN}"),
        );
        return;
    }
    let row = (arena_at as u32, key_len as u32);
    for c in &bound.columns {
        let Some(v) = rec.get(c.column) else {
            reject(out, format!("column '{}': missing", c.source));
            return;
        };
        if v.is_empty() {
            continue; // an empty or null field writes no cell
        }
        let ts = match c.timestamp.of(rec) {
            Ok(t) => t,
            Err(reason) => {
                reject(out, reason);
                return;
            }
        };
        let q_at = out.arena.len();
        extend_short(&mut out.arena, &c.qualifier);
        let v_at = out.arena.len();
        if c.value_type == ValueType::String {
            extend_short(&mut out.arena, v); // the common case, without the call
        } else if let Err(e) = encode_value(c.value_type, &c.source, v, &mut out.arena) {
            reject(out, e.to_string());
            return;
        }
        let v_len = out.arena.len() - v_at;
        let q_len = c.qualifier.len();
        if let Err(limit) = check_mutation(key_len, c.family_len, q_len, v_len, 0, ts) {
            let value = format!("column '{}'", c.source);
            reject(
                out,
                refused_cell(limit, rec, &c.timestamp, "row key", &value),
            );
            return;
        }
        out.cells.push(EncodedCell {
            family: c.family,
            row,
            qualifier: (q_at as u32, c.qualifier.len() as u32),
            timestamp: ts,
            value: (v_at as u32, v_len as u32),
        });
    }
    // Index cells: only for a row that exists (wrote a cell) and whose index fields are all
    // present; the value is the main row key.
    if out.cells.len() > cells_at {
        for (ix, ix_enc) in bound.indexes.iter().zip(ix_enc.iter_mut()) {
            if ix
                .fields
                .iter()
                .any(|&c| rec.get(c).is_none_or(<[u8]>::is_empty))
            {
                continue;
            }
            let k_at = out.arena.len();
            if let Err(e) = ix_enc.encode(&fields, &mut out.arena) {
                reject(out, format!("index {}: row key: {e}", ix.name));
                return;
            }
            let k_len = out.arena.len() - k_at;
            let ts = match ix.timestamp.of(rec) {
                Ok(t) => t,
                Err(reason) => {
                    reject(out, format!("index {}: {reason}", ix.name));
                    return;
                }
            };
            let q_len = ix.qualifier.len();
            if let Err(limit) = check_mutation(k_len, ix.family_len, q_len, key_len, 0, ts) {
                let reason = refused_cell(limit, rec, &ix.timestamp, "row key", "value");
                reject(out, format!("index {}: {reason}", ix.name));
                return;
            }
            let q_at = out.arena.len();
            out.arena.extend_from_slice(&ix.qualifier);
            out.cells.push(EncodedCell {
                family: ix.family,
                row: (k_at as u32, k_len as u32),
                qualifier: (q_at as u32, ix.qualifier.len() as u32),
                timestamp: ts,
                value: row,
            });
        }
    }
    out.keys += 1;
    out.key_len_sum += key_len as u64;
    out.key_len_min = out.key_len_min.min(key_len);
    out.key_len_max = out.key_len_max.max(key_len);
    let key = &out.arena[arena_at..arena_at + key_len];
    if out.keys == 1 {
        out.first_key.clear();
        out.first_key.extend_from_slice(key);
    } else if key >= out.last_key.as_slice() {
        out.ascending += 1;
    }
    out.last_key.clear();
    out.last_key
        .extend_from_slice(&out.arena[arena_at..arena_at + key_len]);
}

/// Encoded row keys of the first `sample_rows` records, for sampled split points: the main
/// table's, and each index table's (of the records with all its index fields present).
pub(crate) struct KeySample {
    pub main: Vec<Vec<u8>>,
    pub indexes: Vec<Vec<Vec<u8>>>,
}

/// Samples the row keys of the first `sample_rows` records of `inputs` (in order), skipping
/// records whose key cannot be encoded.
pub(crate) fn sample_keys(
    compiled: &Compiled,
    inputs: &[PathBuf],
    format: &InputFormat,
    sample_rows: usize,
) -> Result<KeySample, ImportError> {
    let mut sample = KeySample {
        main: Vec::new(),
        indexes: vec![Vec::new(); compiled.indexes.len()],
    };
    let mut wanted: Vec<String> = compiled.spec.fields().to_vec();
    for ix in &compiled.indexes {
        wanted.extend(ix.spec.fields().iter().cloned());
    }
    wanted.sort();
    wanted.dedup();
    let mut records = 0usize;
    'inputs: for path in inputs {
        let Some((units, columns)) = open_input(path, format, &wanted, 8192)? else {
            continue;
        };
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        let compile = |spec: &RowkeySpec| {
            spec.compile(&names).map_err(|source| ImportError::Rowkey {
                context: path.display().to_string(),
                source,
            })
        };
        let mut enc = compile(&compiled.spec)?;
        let mut ix_enc: Vec<(RowkeyEncoder, Vec<usize>)> = Vec::new();
        for ix in &compiled.indexes {
            let e = compile(&ix.spec)?;
            let cols = ix
                .spec
                .fields()
                .iter()
                .filter_map(|f| names.iter().position(|n| n == f))
                .collect();
            ix_enc.push((e, cols));
        }
        let mut batch = Batch::default();
        for mut next in units {
            while next(&mut batch)? {
                for rec in &batch.records {
                    if records >= sample_rows {
                        break 'inputs;
                    }
                    records += 1;
                    let mut k = Vec::new();
                    if enc.encode(&RecordFields(rec), &mut k).is_ok() {
                        sample.main.push(k);
                    }
                    for ((e, cols), keys) in ix_enc.iter_mut().zip(&mut sample.indexes) {
                        if cols
                            .iter()
                            .any(|&c| rec.get(c).is_none_or(<[u8]>::is_empty))
                        {
                            continue;
                        }
                        let mut k = Vec::new();
                        if e.encode(&RecordFields(rec), &mut k).is_ok() {
                            keys.push(k);
                        }
                    }
                }
            }
        }
    }
    Ok(sample)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit that yields `batches` batches of one record each, naming (unit, batch); with
    /// `fail_at`, an error instead of that batch.
    fn unit(u: usize, batches: usize, fail_at: Option<usize>) -> BatchReader {
        let mut i = 0;
        Box::new(move |b: &mut Batch| {
            if Some(i) == fail_at {
                return Err(SourceError::Invalid(format!("unit {u} failed at {i}")));
            }
            if i == batches {
                return Ok(false);
            }
            b.records.clear();
            b.records
                .push(csv::ByteRecord::from(vec![format!("{u}/{i}")]));
            i += 1;
            Ok(true)
        })
    }

    fn seen(units: Vec<BatchReader>, readers: usize) -> (Vec<String>, Option<String>) {
        let mut got = Vec::new();
        let r = read_ahead(units, readers, &mut |b: &Batch| {
            got.push(String::from_utf8_lossy(&b.records[0][0]).to_string());
            Ok(())
        });
        (got, r.err().map(|e| e.to_string()))
    }

    #[test]
    fn read_ahead_keeps_input_order_with_parallel_readers() {
        // Units of uneven length (some empty), read by 1..5 threads: always unit by unit.
        let lens = [3, 0, 5, 1, 7, 2, 0, 4];
        let want: Vec<String> = lens
            .iter()
            .enumerate()
            .flat_map(|(u, &n)| (0..n).map(move |i| format!("{u}/{i}")))
            .collect();
        for readers in 1..=5 {
            let units = lens
                .iter()
                .enumerate()
                .map(|(u, &n)| unit(u, n, None))
                .collect();
            assert_eq!(
                seen(units, readers),
                (want.clone(), None),
                "{readers} readers"
            );
        }
        assert_eq!(seen(Vec::new(), 3), (Vec::new(), None));
    }

    #[test]
    fn read_ahead_stops_at_a_units_error_after_the_batches_before_it() {
        for readers in 1..=3 {
            let units = vec![unit(0, 2, None), unit(1, 5, Some(3)), unit(2, 4, None)];
            let (got, err) = seen(units, readers);
            assert_eq!(
                got,
                ["0/0", "0/1", "1/0", "1/1", "1/2"],
                "{readers} readers"
            );
            assert_eq!(err.as_deref(), Some("unit 1 failed at 3"));
        }
    }

    #[test]
    fn read_ahead_passes_on_the_importers_error() {
        let units = (0..4).map(|u| unit(u, 50, None)).collect();
        let mut n = 0;
        let r = read_ahead(units, 2, &mut |_b: &Batch| {
            n += 1;
            if n == 60 {
                return Err(ImportError::Invalid("stop".into()));
            }
            Ok(())
        });
        assert_eq!(r.err().map(|e| e.to_string()).as_deref(), Some("stop"));
        assert_eq!(n, 60);
    }
}
