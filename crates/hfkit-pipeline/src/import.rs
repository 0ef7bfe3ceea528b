//! The import driver: a schema and its mapping plus input files in, a bulk-load directory and a
//! report out. Spec: `formats/import.md`.
//!
//! ```text
//! 1 plan regions  the target tables' own, or the splits' ([`crate::import::regions`]: for sample = N,
//!                 of the row keys of the input's first records)
//! 2 open outputs  BulkOutput per table (main, each index), its directory guarded ([`outputs`])
//! 3 read/encode   each input file in order, each batch of records (parsed ahead on reader
//!                 threads when there is more than one thread, several Parquet row groups at
//!                 once; [`crate::source::input`]) encoded in parallel ([`crate::mapping::encode`]): row key,
//!                 then one cell per non-empty mapped field, then one cell per [[index]]
//!                 (row = index key, value = the row key) when the record wrote a cell and has
//!                 every index field; rejected records → error (default) or the bad-rows file
//! 4 route/sort    in input order, cells → the router ([`crate::import::route`]): each store (region,
//!                 family) whose input is still in order is a lane written straight to its
//!                 files (by lane-writer threads when there is more than one thread), the rest
//!                 → sorter (index cells under sorter family numbers after the table's families)
//! 5 write         sorter.finish() → cells in HBase order, duplicates dropped (last input wins)
//!                 → outputs (with >1 thread on a writer thread fed 1 MiB batches, so merge and
//!                 write overlap); every file of every table sealed, then all published
//! 6 report        what the phases counted ([`report::ImportStats`]) and the outputs wrote,
//!                 with the design and hidden-cell warnings ([`report`])
//! ```
//!
//! Any error leaves no output: temporary files and spill runs are removed.

pub mod dry_run;
pub mod identity;
mod options;
pub mod output;
mod outputs;
pub mod regions;
pub mod remote_output;
mod report;
pub mod retention;
pub mod route;
pub mod runs;
pub mod sort;
pub mod splits;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use self::outputs::TableOutputs;
use self::report::{import_report, Finished, ImportStats};
use crate::import::output::LANE_MEMORY;
use crate::import::route::{LaneSink, Router};
use crate::import::sort::CellSorter;
use crate::mapping::encode::{bind, encode_batch, Bound, Compiled, Encoded, Rejection};
use crate::source::arrow::RecordBatchInput;
use crate::source::input::{open_input, read_units};
use crate::source::Batch;
use hfkit_table::staging::{self, OwnedDir};
use hfkit_table::{ImportMapping, IndexSchema, TableSchema};

pub use self::options::{ImportOptions, Progress, ProgressFn};
pub use self::report::{FamilyReport, ImportReport, IndexReport, RegionReport};
pub use crate::error::ImportError;
pub use crate::import::regions::{import_regions, ImportRegions, DEFAULT_SAMPLE_ROWS};
pub use crate::source::input::{InputFormat, InputRange, DEFAULT_BATCH_ROWS};

/// Name prefix of a run's spill directory (in `--temp-dir`, else in the output directory).
pub const SPILL_DIR_PREFIX: &str = ".hfkit-spill-";

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
        let Some((_, columns)) = open_input(path, format, &wanted, 1, false, None)? else {
            continue;
        };
        bind(&compiled, mapping, &families, &columns, path, 0)?;
    }
    Ok(())
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

/// Runs an import: the phases of the module doc, one after the other.
pub fn run_import(
    schema: &TableSchema,
    mapping: &ImportMapping,
    mut opts: ImportOptions,
) -> Result<ImportReport, ImportError> {
    let started = Instant::now();
    let compiled = Compiled::new(schema, mapping)?;
    let record_batches = opts.record_batches.take();
    // Phase 1: plan regions.
    let targets = Targets::plan(schema, mapping, &mut opts, record_batches.is_some())?;
    // Phase 2: open outputs.
    let mut outputs = TableOutputs::open(
        schema,
        mapping,
        &opts,
        &targets.regions.main,
        &targets.index_dirs,
        &targets.regions.indexes,
    )?;
    // After the outputs: on a failure, removed before their directories are.
    let spill_dir = spill_dir(&opts)?;
    // Phases 3 and 4: read and encode, route and sort.
    let threads = rayon::current_num_threads();
    let ticker = Ticker::new(opts.progress.take(), targets.input_bytes);
    let mut ingest = Ingest::new(
        &compiled,
        mapping,
        schema,
        &opts,
        &targets,
        spill_dir.path(),
        ticker,
    )?;
    let lane_threads = if ingest.lanes > 0 { threads } else { 1 };
    outputs.with_lane_sink(lane_threads, |sink| ingest.read_all(sink, record_batches))?;
    let ingested = ingest.finish()?;
    // Phase 5: write.
    let stats = write_sorted(ingested, &mut outputs, schema.families.len(), threads)?;
    drop(spill_dir);
    let (main, indexes) = outputs.publish()?;
    // Phase 6: report.
    let finished = Finished {
        main,
        indexes,
        index_dirs: &targets.index_dirs,
        regions: &targets.regions.main,
        index_regions: &targets.regions.indexes,
    };
    let bad_rows = opts.bad_rows.as_deref();
    let mut report = import_report(schema, mapping, stats, finished, bad_rows);
    report.wall_seconds = started.elapsed().as_secs_f64();
    report.peak_rss_bytes = crate::sys::peak_rss_bytes();
    Ok(report)
}

/// Phase 1: where each table of the import goes and over which regions.
struct Targets {
    /// Each index table's bulk-load directory, in schema order.
    index_dirs: Vec<PathBuf>,
    regions: ImportRegions,
    /// Bytes of all the inputs.
    input_bytes: u64,
}

impl Targets {
    /// The index tables' directories (each its own), and the regions: the tables' own
    /// (`opts.regions`, taken), or from the splits (a sample of row keys first, when some
    /// table's splits are sampled). `record_batches`: the import has record batches to read.
    fn plan(
        schema: &TableSchema,
        mapping: &ImportMapping,
        opts: &mut ImportOptions,
        record_batches: bool,
    ) -> Result<Targets, ImportError> {
        if opts.inputs.is_empty() && !record_batches {
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
                    "index table {} would be written to {}, which another table of this import \
                     uses; give each index its own directory",
                    mapping.indexes[i].full_name(),
                    d.display()
                )));
            }
        }
        let input_bytes = opts
            .inputs
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        let regions = match opts.regions.take() {
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
        Ok(Targets {
            index_dirs,
            regions,
            input_bytes,
        })
    }
}

/// This run's spill directory, removed on every exit path (when dropped); the ones killed
/// imports left in the same place are removed first.
fn spill_dir(opts: &ImportOptions) -> Result<OwnedDir, ImportError> {
    let parent = opts.temp_dir.as_ref().unwrap_or(&opts.out_dir);
    staging::sweep(parent, SPILL_DIR_PREFIX);
    OwnedDir::create(parent, SPILL_DIR_PREFIX).map_err(|source| ImportError::Io {
        path: parent.clone(),
        source,
    })
}

/// Progress, handed to the callback at most every 500 ms while the import reads and writes.
struct Ticker {
    progress: Progress,
    last: Instant,
    callback: Option<ProgressFn>,
}

impl Ticker {
    fn new(callback: Option<ProgressFn>, total_input_bytes: u64) -> Ticker {
        Ticker {
            progress: Progress {
                phase: "reading",
                total_input_bytes,
                ..Progress::default()
            },
            last: Instant::now(),
            callback,
        }
    }

    /// When the last report is 500 ms old: `update`, then a report.
    fn tick(&mut self, update: impl FnOnce(&mut Progress)) {
        if self.last.elapsed().as_millis() >= 500 {
            self.last = Instant::now();
            update(&mut self.progress);
            self.report();
        }
    }

    /// A report now.
    fn report(&mut self) {
        if let Some(cb) = self.callback.as_mut() {
            cb(&self.progress);
        }
    }
}

/// Phases 3 and 4: reads and encodes every input in order, routes the cells of each store to
/// its lane or to the sorter, and puts rejected records in the bad-rows file (or stops).
struct Ingest<'a> {
    compiled: &'a Compiled,
    mapping: &'a ImportMapping,
    families: Vec<&'a str>,
    opts: &'a ImportOptions,
    router: Router,
    /// Most lanes open at once (0: every cell goes to the sorter).
    lanes: usize,
    sorter: CellSorter,
    bad_rows: Option<BadRows>,
    stats: ImportStats,
    ticker: Ticker,
    /// Each worker's slice of the batch being imported; its buffers are reused.
    encoded: Vec<Encoded>,
    /// Input progress: bytes of the inputs done, the size of the one being read and what its
    /// records read so far amount to (when that estimates its bytes: an uncompressed text
    /// input).
    input: InputProgress,
}

/// See [`Ingest::input`].
#[derive(Default)]
struct InputProgress {
    done: u64,
    size: u64,
    estimated: u64,
    estimate: bool,
}

impl<'a> Ingest<'a> {
    /// The router (lanes take their memory out of the budget), the sorter (with the rest,
    /// spilling into `spill_dir`) and the bad-rows file.
    fn new(
        compiled: &'a Compiled,
        mapping: &'a ImportMapping,
        schema: &'a TableSchema,
        opts: &'a ImportOptions,
        targets: &Targets,
        spill_dir: &Path,
        ticker: Ticker,
    ) -> Result<Ingest<'a>, ImportError> {
        let families: Vec<&str> = schema.families.iter().map(|f| f.name.as_str()).collect();
        let max_lanes = if opts.streaming {
            Router::lanes_for(opts.memory_budget)
        } else {
            0
        };
        let regions = &targets.regions;
        let lane_splits = std::iter::repeat_n(regions.main.split_keys().to_vec(), families.len())
            .chain(regions.indexes.iter().map(|r| r.split_keys().to_vec()))
            .collect();
        let family_names = outputs::sorter_family_names(schema, mapping);
        let router = Router::new(lane_splits, family_names, max_lanes);
        let sorter_budget = opts.memory_budget.saturating_sub(max_lanes * LANE_MEMORY);
        let mut sorter = CellSorter::new(sorter_budget, spill_dir);
        if rayon::current_num_threads() > 1 {
            // A full buffer is sorted and spilled on a thread of its own while the next fills.
            sorter = sorter.with_background_spill();
        }
        let bad_rows = opts.bad_rows.as_deref().map(BadRows::create).transpose()?;
        Ok(Ingest {
            compiled,
            mapping,
            families,
            opts,
            router,
            lanes: max_lanes,
            sorter,
            bad_rows,
            stats: ImportStats {
                input_bytes: targets.input_bytes,
                ..ImportStats::new(mapping.indexes.len())
            },
            ticker,
            encoded: Vec::new(),
            input: InputProgress::default(),
        })
    }

    /// Reads every input, then the record batches; lanes' cells go to `sink`, the rest to the
    /// sorter.
    fn read_all(
        &mut self,
        sink: &mut dyn LaneSink,
        record_batches: Option<RecordBatchInput>,
    ) -> Result<(), ImportError> {
        let (opts, compiled, mapping) = (self.opts, self.compiled, self.mapping);
        let wanted = compiled.wanted_fields(mapping);
        let threads = rayon::current_num_threads();
        if opts.input_range.is_some() && opts.inputs.len() != 1 {
            return Err(ImportError::Invalid(format!(
                "a range of an input is read from one input, not {}",
                opts.inputs.len()
            )));
        }
        for path in &opts.inputs {
            // Parquet records are encoded where their fields are, column by column (an
            // `[explode]` builds a record per list item, from records).
            let columnar = mapping.explode.is_none();
            let Some((units, columns)) = open_input(
                path,
                &opts.format,
                &wanted,
                opts.batch_rows,
                columnar,
                opts.input_range,
            )?
            else {
                continue;
            };
            let families = &self.families;
            let bound = bind(
                compiled,
                mapping,
                families,
                &columns,
                path,
                opts.import_time,
            )?;
            let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            let compressed = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "gz" | "zst" | "bz2" | "xz"));
            self.input.size = size;
            self.input.estimated = 0;
            self.input.estimate = !compressed;
            read_units(units, threads, &mut |batch: &Batch| {
                self.batch(batch, &bound, sink)
            })?;
            self.input.done += size;
            self.ticker.progress.input_bytes = self.input.done;
        }
        if let Some(input) = record_batches {
            let families = &self.families;
            let (name, columns) = (&input.name, &input.columns);
            let bound = bind(compiled, mapping, families, columns, name, opts.import_time)?;
            read_units(vec![input.reader()], threads, &mut |batch: &Batch| {
                self.batch(batch, &bound, sink)
            })?;
        }
        self.router.flush(sink)
    }

    /// One batch: encoded, its rejected records dealt with, its cells routed.
    fn batch(
        &mut self,
        batch: &Batch,
        bound: &Bound,
        sink: &mut dyn LaneSink,
    ) -> Result<(), ImportError> {
        ImportError::check_interrupt()?;
        if let (Some(line), Some(file)) = (batch.unterminated_line, &batch.file) {
            self.stats.unterminated.push((file.to_path_buf(), line));
        }
        encode_batch(batch, bound, &mut self.encoded);
        for e in &self.encoded {
            self.stats.keys.add(e);
        }
        if self.encoded.iter().any(|e| !e.rejected.is_empty()) {
            self.reject(batch)?;
        }
        let n_main = self.families.len();
        for e in &self.encoded {
            self.router.route(e, &mut self.sorter, sink)?;
            for c in &e.cells {
                match usize::from(c.family).checked_sub(n_main) {
                    None => self.stats.added += 1,
                    Some(i) => self.stats.index_added[i] += 1,
                }
            }
        }
        self.stats.rows_read += batch.len() as u64;
        if self.input.estimate && batch.columns.is_none() {
            // A record's fields and their separators, and its line end.
            self.input.estimated += batch
                .records
                .iter()
                .map(|r| (r.as_slice().len() + r.len()) as u64)
                .sum::<u64>();
            self.ticker.progress.input_bytes =
                self.input.done + self.input.estimated.min(self.input.size);
        }
        self.ticker.progress.rows = self.stats.rows_read;
        self.ticker.progress.cells = self.stats.added + self.stats.index_added.iter().sum::<u64>();
        self.ticker.tick(|_| ());
        Ok(())
    }

    /// The batch's rejected records, in input order: the first one stops the import, or each
    /// goes to the bad-rows file (one more than `max_bad_rows` stops it).
    #[cold]
    fn reject(&mut self, batch: &Batch) -> Result<(), ImportError> {
        let mut rejected: Vec<&(usize, Rejection)> = self
            .encoded
            .iter()
            .flat_map(|e| e.rejected.iter())
            .collect();
        rejected.sort_by_key(|r| r.0);
        let Some(bad_rows) = self.bad_rows.as_mut() else {
            let Some((i, reason)) = rejected.first() else {
                return Ok(());
            };
            return Err(ImportError::Record {
                position: batch.record_position(*i),
                reason: Box::new(reason.clone()),
            });
        };
        for (i, reason) in rejected {
            self.stats.rows_rejected += 1;
            bad_rows.write(batch, *i, reason)?;
            let count = self.stats.rows_rejected;
            if let Some(max) = self.opts.max_bad_rows.filter(|m| count > *m) {
                return Err(ImportError::TooManyBadRows {
                    count,
                    max,
                    last: batch.record_position(*i),
                    reason: Box::new(reason.clone()),
                });
            }
        }
        Ok(())
    }

    /// The input is read: the bad-rows file is flushed.
    fn finish(self) -> Result<Ingested, ImportError> {
        if let Some(b) = self.bad_rows {
            b.finish()?;
        }
        Ok(Ingested {
            router: self.router,
            sorter: self.sorter,
            stats: self.stats,
            ticker: self.ticker,
        })
    }
}

/// What reading leaves for writing: the lanes' counts, the sorter's cells, the counts so far.
struct Ingested {
    router: Router,
    sorter: CellSorter,
    stats: ImportStats,
    ticker: Ticker,
}

/// Phase 5: writes the sorter's cells (the main table's families, then each index's) to
/// `outputs`, and counts what the outputs hold, the lanes' cells included. The spill runs are
/// done with when it returns.
fn write_sorted(
    ingested: Ingested,
    outputs: &mut TableOutputs,
    n_main: usize,
    threads: usize,
) -> Result<ImportStats, ImportError> {
    let Ingested {
        router,
        sorter,
        mut stats,
        mut ticker,
    } = ingested;
    ticker.progress.phase = "writing";
    let streamed_all: u64 = (0..n_main + stats.index_written.len())
        .map(|f| router.streamed(f))
        .sum();
    let encoded = stats.added + stats.index_added.iter().sum::<u64>();
    ticker.progress.cells_to_write = encoded.saturating_sub(streamed_all);
    ticker.report();
    let mut sorted = sorter.finish()?;
    stats.streamed_cells = (0..n_main).map(|f| router.streamed(f)).sum();
    (stats.lanes_taken_back, stats.cells_re_read) = router.taken();
    stats.written = stats.streamed_cells;
    for (i, n) in stats.index_written.iter_mut().enumerate() {
        *n = router.streamed(n_main + i);
    }
    let mut written = 0u64;
    outputs.write_sorted(&mut sorted, threads, &mut |f: usize| {
        match f.checked_sub(n_main) {
            None => stats.written += 1,
            Some(i) => {
                if let Some(n) = stats.index_written.get_mut(i) {
                    *n += 1;
                }
            }
        }
        written += 1;
        if written.is_multiple_of(1 << 16) {
            ticker.tick(|p| p.cells_written = written);
        }
    })?;
    stats.spilled_runs = sorted.runs();
    stats.spilled_bytes = sorted.spilled_bytes();
    Ok(stats)
}

/// The `--bad-rows` file: a line per rejected record, `position TAB reason TAB fields` (the
/// fields joined by `,`).
struct BadRows {
    writer: BufWriter<File>,
    path: PathBuf,
}

impl BadRows {
    fn create(path: &Path) -> Result<BadRows, ImportError> {
        let file = File::create(path).map_err(|source| ImportError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(BadRows {
            writer: BufWriter::new(file),
            path: path.to_path_buf(),
        })
    }

    /// Record `i` of `batch`, rejected for `reason`.
    fn write(&mut self, batch: &Batch, i: usize, reason: &Rejection) -> Result<(), ImportError> {
        let fields = batch.fields_text(i);
        let position = batch.record_position(i);
        writeln!(self.writer, "{position}\t{reason}\t{}", fields.join(",")).map_err(|source| {
            ImportError::Io {
                path: self.path.clone(),
                source,
            }
        })
    }

    fn finish(mut self) -> Result<(), ImportError> {
        self.writer.flush().map_err(|source| ImportError::Io {
            path: self.path,
            source,
        })
    }
}
