//! The import driver: a schema and its mapping plus input files in, a bulk-load directory and a
//! report out. Spec: `formats/import.md`.
//!
//! ```text
//! for each input file (in order), for each batch of records:
//!     encode records in parallel (rayon): row key, then one cell per non-empty mapped field
//!     in input order: rejected records → error (default) or the bad-rows file; cells → sorter
//! sorter.finish() → cells in HBase order, duplicates dropped (last input wins)
//!     → BulkOutput: one or more HFiles per region and family, published all at once
//! ```
//!
//! Any error leaves no output: temporary files and spill runs are removed.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;

use super::output::{BulkOutput, OutputError, OutputFamily, OutputFile};
use super::parquet_source::{self, ParquetSource};
use super::rowkey::{FieldSource, RowkeyEncoder, RowkeySpec};
use super::sort::{CellSorter, SortError};
use super::source::{Batch, CsvOptions, CsvSource, SourceError};
use super::timestamp::TimestampFormat;
use super::value::encode_value;
use super::RowkeyError;
use crate::format::cell::{CellType, MAX_ROW_LEN};
use crate::format::writer::BulkLoadInfo;
use crate::table::manifest::FamilyEntry;
use crate::table::{ImportMapping, Regions, SchemaError, TableSchema, TimestampSource, ValueType};

/// Records per batch handed to the parallel encoders.
pub const DEFAULT_BATCH_ROWS: usize = 16 * 1024;
/// Records sampled (from the start of the input) for `sample = N` splits.
pub const DEFAULT_SAMPLE_ROWS: usize = 100_000;

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
type BatchReader = Box<dyn FnMut(&mut Batch) -> Result<bool, SourceError>>;

/// How to run an import.
pub struct ImportOptions {
    pub inputs: Vec<PathBuf>,
    pub format: InputFormat,
    pub out_dir: PathBuf,
    /// Bytes of cells kept in memory before a sorted run is spilled.
    pub memory_budget: usize,
    /// Where runs are spilled (default: a hidden directory inside `out_dir`).
    pub temp_dir: Option<PathBuf>,
    pub max_file_size: u64,
    /// Epoch ms: the timestamp of cells without one, the files' create and bulk-load time.
    pub import_time: i64,
    /// Rejected records go here (with their reason) instead of failing the import.
    pub bad_rows: Option<PathBuf>,
    pub max_bad_rows: u64,
    pub batch_rows: usize,
    pub sample_rows: usize,
    pub progress: Option<ProgressFn>,
}

impl ImportOptions {
    pub fn new(inputs: Vec<PathBuf>, format: InputFormat, out_dir: PathBuf) -> ImportOptions {
        ImportOptions {
            inputs,
            format,
            out_dir,
            memory_budget: 1 << 30,
            temp_dir: None,
            max_file_size: super::output::DEFAULT_MAX_FILE_SIZE,
            import_time: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0),
            bad_rows: None,
            max_bad_rows: 0,
            batch_rows: DEFAULT_BATCH_ROWS,
            sample_rows: DEFAULT_SAMPLE_ROWS,
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
    pub spilled_bytes: u64,
    pub wall_seconds: f64,
    pub peak_rss_bytes: u64,
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub output_files: Vec<OutputFile>,
}

/// A column mapping bound to one file's columns.
struct BoundColumn {
    column: usize,
    family: u8,
    qualifier: Vec<u8>,
    value_type: ValueType,
    timestamp: BoundTimestamp,
    source: String,
}

enum BoundTimestamp {
    Fixed(i64),
    /// Input column, field name, format.
    Field(usize, String, TimestampFormat),
}

/// A cell encoded by a worker: byte ranges (offset, length) into its arena.
struct EncodedCell {
    family: u8,
    row: (u32, u32),
    qualifier: (u32, u32),
    timestamp: i64,
    value: (u32, u32),
}

fn slice(arena: &[u8], (at, len): (u32, u32)) -> &[u8] {
    &arena[at as usize..(at + len) as usize]
}

/// What one worker produced for a slice of a batch.
#[derive(Default)]
struct Encoded {
    arena: Vec<u8>,
    cells: Vec<EncodedCell>,
    rejected: Vec<(usize, String)>,
    key_len_sum: u64,
    key_len_min: usize,
    key_len_max: usize,
    keys: u64,
    /// Row keys in input order, for the monotonic-keys check (first key of each record).
    last_key: Vec<u8>,
    ascending: u64,
}

struct RecordFields<'a>(&'a csv::ByteRecord);

impl FieldSource for RecordFields<'_> {
    fn field(&self, column: usize) -> Option<&[u8]> {
        self.0.get(column)
    }
}

/// Runs an import.
pub fn run_import(
    schema: &TableSchema,
    mapping: &ImportMapping,
    mut opts: ImportOptions,
) -> Result<ImportReport, ImportError> {
    let started = Instant::now();
    let spec_text = mapping
        .rowkey
        .as_deref()
        .ok_or_else(|| ImportError::Invalid("the schema has no [rowkey] spec".into()))?;
    let spec = RowkeySpec::parse(spec_text).map_err(|source| ImportError::Rowkey {
        context: "[rowkey] spec".into(),
        source,
    })?;
    let spec = match &mapping.rowkey_timestamp_format {
        Some((text, at)) => spec.with_timestamp_format(
            TimestampFormat::parse(text)
                .map_err(|e| ImportError::Invalid(format!("{at}: [rowkey] {e}")))?,
        ),
        None => spec,
    };
    let ts_formats = column_timestamp_formats(mapping)?;
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
    if opts.inputs.is_empty() {
        return Err(ImportError::Invalid("no input files".into()));
    }
    let total_input_bytes: u64 = opts
        .inputs
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();

    // Regions (a sample of row keys first, when the splits are sampled).
    let sample = if matches!(schema.splits, crate::table::SplitSpec::Sampled { .. }) {
        Some(sample_keys(&spec, &opts)?)
    } else {
        None
    };
    let regions = schema.splits.regions(sample.as_deref())?;

    // Output and sorter.
    let out_families: Vec<OutputFamily> = schema
        .families
        .iter()
        .map(|f| {
            let mut o = FamilyEntry::from_schema(f)
                .writer_options(opts.import_time)
                .map_err(|e| ImportError::Invalid(e.to_string()))?;
            o.bulk_load = Some(BulkLoadInfo {
                timestamp: opts.import_time,
                task: "hfkit-import".into(),
                exclude_from_minor_compaction: false,
            });
            Ok(OutputFamily {
                name: f.name.clone(),
                options: o,
            })
        })
        .collect::<Result<_, ImportError>>()?;
    let mut dir_guard = OutputDirGuard {
        dir: opts.out_dir.clone(),
        created: !opts.out_dir.exists(),
        families: schema.families.iter().map(|f| f.name.clone()).collect(),
        armed: true,
    };
    std::fs::create_dir_all(&opts.out_dir).map_err(|source| ImportError::Io {
        path: opts.out_dir.clone(),
        source,
    })?;
    let mut output = BulkOutput::new(
        &opts.out_dir,
        out_families,
        regions.split_keys().to_vec(),
        opts.max_file_size,
    )?;
    let temp_dir = match &opts.temp_dir {
        Some(t) => t.clone(),
        None => opts
            .out_dir
            .join(format!(".hfkit-spill-{}", std::process::id())),
    };
    std::fs::create_dir_all(&temp_dir).map_err(|source| ImportError::Io {
        path: temp_dir.clone(),
        source,
    })?;
    let _cleanup = RemoveDirOnDrop(temp_dir.clone(), opts.temp_dir.is_none());
    let mut sorter = CellSorter::new(opts.memory_budget, &temp_dir);

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

    let inputs = opts.inputs.clone();
    for path in &inputs {
        let mut units: Vec<BatchReader> = Vec::new();
        let columns: Vec<String>;
        match &opts.format {
            InputFormat::Csv(csv_opts) => {
                let mut src = CsvSource::open(path, csv_opts)?;
                columns = src.columns().to_vec();
                let n = opts.batch_rows;
                units.push(Box::new(move |b| src.next_batch(b, n)));
            }
            InputFormat::Parquet => {
                let mut wanted: Vec<String> = spec.fields().to_vec();
                for c in &mapping.columns {
                    wanted.push(c.source.clone());
                    if let TimestampSource::Field(f) = &c.timestamp {
                        wanted.push(f.clone());
                    }
                }
                wanted.sort();
                wanted.dedup();
                let groups = parquet_source::row_group_count(path)?;
                let mut cols = None;
                for g in 0..groups {
                    let mut src = ParquetSource::open(path, Some(&wanted), g, opts.batch_rows)?;
                    cols.get_or_insert_with(|| src.columns().to_vec());
                    units.push(Box::new(move |b| src.next_batch(b)));
                }
                columns = cols.unwrap_or_default();
            }
        }
        let bound = bind(
            &spec,
            mapping,
            &ts_formats,
            &families,
            &columns,
            path,
            opts.import_time,
        )?;
        let mut batch = Batch::default();
        for mut next in units {
            while next(&mut batch)? {
                let encoded = encode_batch(&batch, &bound.0, &bound.1);
                for e in &encoded {
                    key_len_sum += e.key_len_sum;
                    keys += e.keys;
                    ascending += e.ascending;
                    if e.keys > 0 {
                        report.rowkey_len_min = report.rowkey_len_min.min(e.key_len_min);
                        report.rowkey_len_max = report.rowkey_len_max.max(e.key_len_max);
                    }
                }
                // Chunk boundaries: compare each chunk's first key with the previous chunk's last.
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
                                if report.rows_rejected > opts.max_bad_rows {
                                    return Err(ImportError::TooManyBadRows {
                                        count: report.rows_rejected,
                                        max: opts.max_bad_rows,
                                        last: format!("{}: {reason}", batch.position(*i)),
                                    });
                                }
                            }
                        }
                    }
                }
                for e in &encoded {
                    // The monotonic-keys check across worker slices.
                    if let Some(first) = e.cells.first() {
                        if !prev_key.is_empty() && slice(&e.arena, first.row) >= prev_key.as_slice()
                        {
                            ascending += 1;
                        }
                    }
                    for c in &e.cells {
                        let a = &e.arena;
                        sorter.add(
                            c.family,
                            slice(a, c.row),
                            slice(a, c.qualifier),
                            c.timestamp,
                            CellType::Put,
                            slice(a, c.value),
                        )?;
                        report.cells += 1;
                    }
                    if let Some(last) = e.cells.last() {
                        prev_key.clear();
                        prev_key.extend_from_slice(slice(&e.arena, last.row));
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
            }
        }
        progress.input_bytes += std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    }
    if let Some((mut w, p)) = bad_rows.take() {
        w.flush()
            .map_err(|source| ImportError::Io { path: p, source })?;
    }
    report.input_bytes = total_input_bytes;

    // Sort and write.
    progress.phase = "writing";
    if let Some(cb) = opts.progress.as_mut() {
        cb(&progress);
    }
    let mut sorted = sorter.finish()?;
    let fam_names: Vec<Vec<u8>> = families.iter().map(|f| f.as_bytes().to_vec()).collect();
    let mut written = 0u64;
    while let Some(c) = sorted.next()? {
        let family = fam_names
            .get(c.family as usize)
            .ok_or_else(|| ImportError::Invalid("internal: family index out of range".into()))?;
        output.append(c.family as usize, &c.cell(family))?;
        written += 1;
        if written.is_multiple_of(1 << 20) && last_tick.elapsed().as_millis() >= 500 {
            last_tick = Instant::now();
            progress.cells = written;
            if let Some(cb) = opts.progress.as_mut() {
                cb(&progress);
            }
        }
    }
    report.duplicate_cells = sorted.duplicates();
    report.spilled_runs = sorted.runs();
    report.spilled_bytes = sorted.spilled_bytes();
    report.cells -= report.duplicate_cells;
    drop(sorted);
    let out = output.finish()?;
    report.files = out.files.len();
    report.output_bytes = out.files.iter().map(|f| f.bytes).sum();
    report.regions = (0..regions.len())
        .map(|i| {
            let stores = out.stores.get(i).cloned().unwrap_or_default();
            RegionReport {
                start_key: crate::table::to_string_binary(regions.start_key(i)),
                end_key: crate::table::to_string_binary(regions.end_key(i)),
                cells: stores.iter().map(|s| s.cells).sum(),
                bytes: stores.iter().map(|s| s.bytes).sum(),
                files: stores.iter().map(|s| s.files).sum(),
            }
        })
        .collect();
    report.output_files = out.files;
    if keys == 0 {
        report.rowkey_len_min = 0;
    } else {
        report.rowkey_len_mean = key_len_sum as f64 / keys as f64;
    }
    report.warnings = design_warnings(&report, keys, ascending);
    report.wall_seconds = started.elapsed().as_secs_f64();
    report.peak_rss_bytes = peak_rss_bytes();
    dir_guard.armed = false;
    Ok(report)
}

/// On a failed import, removes the (then empty) family directories and the output directory
/// if the import created it.
struct OutputDirGuard {
    dir: PathBuf,
    created: bool,
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
        if self.created {
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

/// HBase table-design warnings (hot regions, monotonic keys, key length).
fn design_warnings(r: &ImportReport, keys: u64, ascending: u64) -> Vec<String> {
    let mut w = Vec::new();
    if r.regions.len() > 1 && r.cells > 0 {
        let mean = r.cells as f64 / r.regions.len() as f64;
        for reg in &r.regions {
            if reg.cells as f64 > 2.0 * mean {
                w.push(format!(
                    "region [{}, {}) holds {} cells, more than twice the mean {:.0}: a hot region; consider salting the row key or different split points",
                    reg.start_key, reg.end_key, reg.cells, mean
                ));
            }
        }
    }
    if keys > 1000 && ascending as f64 >= 0.99 * (keys - 1) as f64 {
        w.push("row keys arrive in increasing order: in HBase, live writes with such keys all hit one region; consider a salt or hash prefix".into());
    }
    if keys > 0 && !(10.0..=100.0).contains(&r.rowkey_len_mean) {
        w.push(format!(
            "mean row key length is {:.1} bytes; HBase practice keeps row keys between 10 and 100 bytes",
            r.rowkey_len_mean
        ));
    }
    w
}

/// The compiled `timestamp_format` of each `[[column]]` (epoch ms when none is given); a bad
/// format is an error naming the column and where the schema wrote it.
fn column_timestamp_formats(mapping: &ImportMapping) -> Result<Vec<TimestampFormat>, ImportError> {
    mapping
        .columns
        .iter()
        .map(|c| match &c.timestamp_format {
            None => Ok(TimestampFormat::EpochMillis),
            Some(text) => TimestampFormat::parse(text).map_err(|e| {
                let at = c
                    .location
                    .as_ref()
                    .map(|l| format!("{l}: "))
                    .unwrap_or_default();
                ImportError::Invalid(format!("{at}column '{}': {e}", c.source))
            }),
        })
        .collect()
}

/// Binds the spec and mapping to one file's columns.
fn bind(
    spec: &RowkeySpec,
    mapping: &ImportMapping,
    ts_formats: &[TimestampFormat],
    families: &[&str],
    columns: &[String],
    path: &Path,
    import_time: i64,
) -> Result<(RowkeyEncoder, Vec<BoundColumn>), ImportError> {
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let encoder = spec.compile(&names).map_err(|source| ImportError::Rowkey {
        context: path.display().to_string(),
        source,
    })?;
    let find = |name: &str| -> Result<usize, ImportError> {
        names.iter().position(|n| *n == name).ok_or_else(|| {
            ImportError::Invalid(format!(
                "{}: missing column '{name}' (the file has: {})",
                path.display(),
                names.join(", ")
            ))
        })
    };
    let mut bound = Vec::new();
    for (c, ts_format) in mapping.columns.iter().zip(ts_formats) {
        let family = families
            .iter()
            .position(|f| *f == c.family)
            .ok_or_else(|| ImportError::Invalid(format!("unknown family '{}'", c.family)))?
            as u8;
        bound.push(BoundColumn {
            column: find(&c.source)?,
            family,
            qualifier: c.qualifier.clone(),
            value_type: c.value_type,
            timestamp: match &c.timestamp {
                TimestampSource::ImportTime => BoundTimestamp::Fixed(import_time),
                TimestampSource::Fixed(t) => BoundTimestamp::Fixed(*t),
                TimestampSource::Field(f) => {
                    BoundTimestamp::Field(find(f)?, f.clone(), ts_format.clone())
                }
            },
            source: c.source.clone(),
        });
    }
    Ok((encoder, bound))
}

/// Encodes a batch in parallel slices; results in input order.
fn encode_batch(batch: &Batch, encoder: &RowkeyEncoder, columns: &[BoundColumn]) -> Vec<Encoded> {
    let n = batch.records.len();
    let threads = rayon::current_num_threads().max(1);
    let chunk = n.div_ceil(threads * 4).max(256);
    let starts: Vec<usize> = (0..n).step_by(chunk).collect();
    starts
        .par_iter()
        .map(|&start| {
            let end = (start + chunk).min(n);
            let mut enc = encoder.clone();
            let mut out = Encoded {
                key_len_min: usize::MAX,
                ..Encoded::default()
            };
            for i in start..end {
                encode_record(&batch.records[i], i, &mut enc, columns, &mut out);
            }
            out
        })
        .collect()
}

fn encode_record(
    rec: &csv::ByteRecord,
    index: usize,
    enc: &mut RowkeyEncoder,
    columns: &[BoundColumn],
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
    for c in columns {
        let Some(v) = rec.get(c.column) else {
            reject(out, format!("column '{}': missing", c.source));
            return;
        };
        if v.is_empty() {
            continue; // an empty or null field writes no cell
        }
        let ts = match &c.timestamp {
            BoundTimestamp::Fixed(t) => *t,
            BoundTimestamp::Field(i, name, format) => {
                match format.to_millis(rec.get(*i).unwrap_or_default()) {
                    Ok(t) => t,
                    Err(e) => {
                        reject(out, format!("timestamp field '{name}': {e}"));
                        return;
                    }
                }
            }
        };
        let q_at = out.arena.len();
        out.arena.extend_from_slice(&c.qualifier);
        let v_at = out.arena.len();
        if let Err(e) = encode_value(c.value_type, &c.source, v, &mut out.arena) {
            reject(out, e.to_string());
            return;
        }
        let v_len = out.arena.len() - v_at;
        out.cells.push(EncodedCell {
            family: c.family,
            row,
            qualifier: (q_at as u32, c.qualifier.len() as u32),
            timestamp: ts,
            value: (v_at as u32, v_len as u32),
        });
    }
    out.keys += 1;
    out.key_len_sum += key_len as u64;
    out.key_len_min = out.key_len_min.min(key_len);
    out.key_len_max = out.key_len_max.max(key_len);
    let key = &out.arena[arena_at..arena_at + key_len];
    if out.keys > 1 && key >= out.last_key.as_slice() {
        out.ascending += 1;
    }
    out.last_key.clear();
    out.last_key
        .extend_from_slice(&out.arena[arena_at..arena_at + key_len]);
}

/// Encoded row keys of the first `sample_rows` records, for sampled split points.
fn sample_keys(spec: &RowkeySpec, opts: &ImportOptions) -> Result<Vec<Vec<u8>>, ImportError> {
    let mut keys = Vec::new();
    for path in &opts.inputs {
        let mut batch = Batch::default();
        let (mut next, columns): (BatchReader, Vec<String>) = match &opts.format {
            InputFormat::Csv(o) => {
                let mut s = CsvSource::open(path, o)?;
                let c = s.columns().to_vec();
                (Box::new(move |b| s.next_batch(b, 8192)), c)
            }
            InputFormat::Parquet => {
                let mut s = ParquetSource::open(path, Some(spec.fields()), 0, 8192)?;
                let c = s.columns().to_vec();
                (Box::new(move |b| s.next_batch(b)), c)
            }
        };
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        let mut enc = spec.compile(&names).map_err(|source| ImportError::Rowkey {
            context: path.display().to_string(),
            source,
        })?;
        while keys.len() < opts.sample_rows && next(&mut batch)? {
            for rec in &batch.records {
                let mut k = Vec::new();
                if enc.encode(&RecordFields(rec), &mut k).is_ok() {
                    keys.push(k);
                }
            }
        }
        if keys.len() >= opts.sample_rows {
            break;
        }
    }
    Ok(keys)
}

/// Peak resident set size of this process (Linux `VmHWM`), 0 where unknown.
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

struct RemoveDirOnDrop(PathBuf, bool);

impl Drop for RemoveDirOnDrop {
    fn drop(&mut self) {
        if self.1 {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Regions of a schema without sampling (for `hfkit plan` with explicit splits).
pub fn fixed_regions(schema: &TableSchema) -> Result<Regions, SchemaError> {
    schema.splits.regions(None)
}
