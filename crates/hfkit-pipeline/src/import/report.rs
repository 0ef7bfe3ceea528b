//! The import's last phase: what it counted ([`ImportStats`]) and what its outputs wrote, as
//! the report (`--report` JSON, and the summary), with HBase's table-design warnings and the
//! families whose cells reads will not return (`formats/import.md` §"Cells hidden at import").

use std::path::PathBuf;

use crate::import::output::{OutputFile, OutputReport};
use crate::import::regions::{hot_region_warnings, key_warnings};
use crate::import::retention::HiddenCells;
use crate::mapping::encode::KeyStats;
use hfkit_table::{FamilySchema, ImportMapping, Regions, TableSchema};

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
/// ([`crate::import::retention`]).
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

/// What the phases count, for the report.
#[derive(Debug, Default)]
pub(super) struct ImportStats {
    pub rows_read: u64,
    pub rows_rejected: u64,
    /// Cells encoded for the main table, duplicates included; for each index table.
    pub added: u64,
    pub index_added: Vec<u64>,
    /// Cells written (by lanes, or out of the sorter) for the main table; for each index.
    pub written: u64,
    pub index_written: Vec<u64>,
    /// The main table's row keys.
    pub keys: KeyStats,
    pub input_bytes: u64,
    pub streamed_cells: u64,
    pub lanes_taken_back: u64,
    pub cells_re_read: u64,
    pub spilled_runs: usize,
    pub spilled_bytes: u64,
    /// CSV inputs whose last line (this one) has no line end.
    pub unterminated: Vec<(PathBuf, u64)>,
}

impl ImportStats {
    /// Counters for `indexes` index tables.
    pub fn new(indexes: usize) -> ImportStats {
        ImportStats {
            index_added: vec![0; indexes],
            index_written: vec![0; indexes],
            ..ImportStats::default()
        }
    }
}

/// The finished outputs of an import: the main table's, each index table's and its directory.
pub(super) struct Finished<'a> {
    pub main: OutputReport,
    pub indexes: Vec<OutputReport>,
    pub index_dirs: &'a [PathBuf],
    pub regions: &'a Regions,
    pub index_regions: &'a [Regions],
}

/// The report of an import that counted `stats` and wrote `out`; `bad_rows` where it put the
/// records it rejected. Wall time and peak memory are the caller's.
pub(super) fn import_report(
    schema: &TableSchema,
    mapping: &ImportMapping,
    stats: ImportStats,
    out: Finished<'_>,
    bad_rows: Option<&std::path::Path>,
) -> ImportReport {
    let families: Vec<&str> = schema.families.iter().map(|f| f.name.as_str()).collect();
    let keys = &stats.keys;
    let mut report = ImportReport {
        rows_read: stats.rows_read,
        rows_rejected: stats.rows_rejected,
        cells: stats.written,
        duplicate_cells: stats.added - stats.written,
        input_bytes: stats.input_bytes,
        output_bytes: out.main.files.iter().map(|f| f.bytes).sum(),
        files: out.main.files.len(),
        regions: region_reports(out.regions, &out.main),
        rowkey_len_min: keys.len_min,
        rowkey_len_mean: keys.mean_len(),
        rowkey_len_max: keys.len_max,
        spilled_runs: stats.spilled_runs,
        spilled_bytes: stats.spilled_bytes,
        streamed_cells: stats.streamed_cells,
        lanes_taken_back: stats.lanes_taken_back,
        cells_re_read: stats.cells_re_read,
        families: family_reports(&families, &out.main),
        output_files: out.main.files,
        ..ImportReport::default()
    };
    let accepted = report.rows_read - report.rows_rejected;
    for (i, ix_out) in out.indexes.into_iter().enumerate() {
        let ix = &mapping.indexes[i];
        let (added, written) = (stats.index_added[i], stats.index_written[i]);
        report.indexes.push(IndexReport {
            name: ix.full_name(),
            dir: out.index_dirs[i].display().to_string(),
            cells: written,
            duplicate_cells: added - written,
            rows_without_entry: accepted.saturating_sub(added),
            files: ix_out.files.len(),
            output_bytes: ix_out.files.iter().map(|f| f.bytes).sum(),
            regions: region_reports(&out.index_regions[i], &ix_out),
            families: family_reports(&[ix.family().name.as_str()], &ix_out),
            output_files: ix_out.files,
        });
    }
    report.warnings = design_warnings(&report, keys);
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
    for (file, line) in &stats.unterminated {
        report.warnings.push(format!(
            "{}: line {line}, the last line, has no line end: the file may have been cut short \
             (its record was imported; check the file's source)",
            file.display()
        ));
    }
    if let (Some(p), n @ 1..) = (bad_rows, report.rows_rejected) {
        report.warnings.push(format!(
            "{n} rejected records were skipped; they are in {}",
            p.display()
        ));
    }
    report
}

/// Per-region report lines of a finished output.
fn region_reports(regions: &Regions, out: &OutputReport) -> Vec<RegionReport> {
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
fn family_reports(names: &[&str], out: &OutputReport) -> Vec<FamilyReport> {
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

/// The cells of each of `regions`, for [`hot_region_warnings`].
fn region_cells(regions: &[RegionReport]) -> impl Iterator<Item = (&str, &str, f64)> {
    regions.iter().map(|reg| {
        (
            reg.start_key.as_str(),
            reg.end_key.as_str(),
            reg.cells as f64,
        )
    })
}

/// HBase table-design warnings (hot regions, monotonic keys, key length), and index tables
/// whose keys collide.
fn design_warnings(r: &ImportReport, keys: &KeyStats) -> Vec<String> {
    let mut w = hot_region_warnings("", region_cells(&r.regions));
    w.extend(key_warnings(keys, false));
    for ix in &r.indexes {
        w.extend(hot_region_warnings(
            &format!("index {}: ", ix.name),
            region_cells(&ix.regions),
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
    schemas: &[FamilySchema],
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
