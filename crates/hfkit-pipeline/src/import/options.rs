//! How to run an import: [`ImportOptions`], and the [`Progress`] its callback is handed.
//! Spec: `formats/import.md`.

use std::path::PathBuf;

use crate::import::regions::{ImportRegions, DEFAULT_SAMPLE_ROWS};
use crate::source::arrow::RecordBatchInput;
use crate::source::input::{InputFormat, InputRange, DEFAULT_BATCH_ROWS};

/// Progress, reported now and then.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub phase: &'static str,
    pub rows: u64,
    /// Cells encoded (every table's).
    pub cells: u64,
    /// Input bytes read: while a file is read, estimated from its records (uncompressed CSV
    /// and TSV; other inputs count when they end), exact at each file's end.
    pub input_bytes: u64,
    pub total_input_bytes: u64,
    /// The writing phase: cells written of those left to write (the sorted ones; cells
    /// streamed to their files while reading are written already).
    pub cells_written: u64,
    pub cells_to_write: u64,
}

/// A progress callback.
pub type ProgressFn = Box<dyn FnMut(&Progress) + Send>;

/// How to run an import.
pub struct ImportOptions {
    pub inputs: Vec<PathBuf>,
    pub format: InputFormat,
    /// Record batches imported after `inputs` (a program's rows rather than a file's; see
    /// [`crate::source::arrow`]). With them, `regions` should be given: sampled splits sample
    /// only `inputs`.
    pub record_batches: Option<RecordBatchInput>,
    pub out_dir: PathBuf,
    /// Bulk-load directory of each `[[index]]` table, in schema order (default:
    /// [`default_index_dirs`](super::default_index_dirs), inside `out_dir`).
    pub index_out: Option<Vec<PathBuf>>,
    /// Bytes of cells kept in memory before a sorted run is spilled.
    pub memory_budget: usize,
    /// Where runs are spilled (default: `out_dir`). Each run spills into a directory of its
    /// own there, `.hfkit-spill-<32 hex>` ([`SPILL_DIR_PREFIX`](super::SPILL_DIR_PREFIX)), held while it runs and
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
    /// [`crate::import::route`]); off, every cell goes through the sorter.
    pub streaming: bool,
    /// The regions to write: the target tables' own, when they exist. `None`: the schema's
    /// splits ([`import_regions`](crate::import::regions::import_regions)), sampling the input for `sample = N`.
    pub regions: Option<ImportRegions>,
    pub progress: Option<ProgressFn>,
    /// Flag every written file `EXCLUDE_FROM_MINOR_COMPACTION` (HBase's and hfkit's minor
    /// compactions leave it out; `formats/table.md` §"Selection").
    pub exclude_from_minor_compaction: bool,
    /// Only this part of the input (one input only): a task of a distributed import.
    pub input_range: Option<InputRange>,
    /// Write *run files* (`formats/python.md` §"Bulk load of files"): HFiles with no
    /// compression, no data block encoding and no Bloom filter, to be merged into the final
    /// files by [`crate::import::runs`], whatever the families ask for.
    pub run_files: bool,
}

impl ImportOptions {
    pub fn new(inputs: Vec<PathBuf>, format: InputFormat, out_dir: PathBuf) -> ImportOptions {
        let now_ms = hfkit_format::cell::now_ms();
        ImportOptions {
            inputs,
            format,
            record_batches: None,
            out_dir,
            index_out: None,
            memory_budget: 1 << 30,
            temp_dir: None,
            max_file_size: crate::import::output::DEFAULT_MAX_FILE_SIZE,
            import_time: now_ms,
            now_ms,
            bad_rows: None,
            max_bad_rows: None,
            batch_rows: DEFAULT_BATCH_ROWS,
            sample_rows: DEFAULT_SAMPLE_ROWS,
            streaming: true,
            regions: None,
            progress: None,
            exclude_from_minor_compaction: false,
            input_range: None,
            run_files: false,
        }
    }
}
