//! Compaction and `alter`: rewriting a store's files into one, with HBase's compaction rules,
//! and changing a family's settings. Spec: `formats/table.md` §"Compaction".
//!
//! ```text
//! per store (region × family):
//!   select   major: every file; minor: HBase's ratio-based policy (or every file on request)
//!   merge    read::MergeScanner over the selected files (bounded memory: one block per file)
//!   match    CompactionMatcher: RETAIN_DELETES (subset) or DROP_DELETES (every file)
//!   write    HFileWriter with the family's current settings → .tmp/compact-<id>/<name>, fsync
//! commit:    place outputs under data/, fsync; one manifest commit replaces every input by its
//!            output; garbage collection then removes inputs no snapshot still names
//! ```

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::directory::{unique_hex, verify_store_file, Table, DATA_DIR, STAGING_DIR};
use super::manifest::{FamilyEntry, Manifest, StoreFileEntry};
use super::read::family_read_settings;
use super::schema::BloomFilterKind;
use super::TableError;
use hfkit_format::cell::{CellRef, CellType, KeyView};
use hfkit_format::compression::Compression;
use hfkit_format::encoding::DataBlockEncoding;
use hfkit_format::fileinfo::keys;
use hfkit_format::reader::HFileReader;
use hfkit_format::writer::HFileWriter;
use hfkit_read::matcher::{
    cell_ttl_expired, oldest_unexpired_ts, ColumnTracker, DeleteResult, DeleteTracker, MatchCode,
};
use hfkit_read::{FamilyReadSettings, KeepDeletedCells, MergeScanner, ReadError, Store};

/// HBase's minor-compaction selection settings (`CompactionConfiguration` defaults).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CompactionPolicy {
    /// `hbase.hstore.compaction.ratio`.
    pub ratio: f64,
    /// `hbase.hstore.compaction.min` (at least 2).
    pub min_files: usize,
    /// `hbase.hstore.compaction.max`.
    pub max_files: usize,
    /// `hbase.hstore.compaction.min.size`: files at most this big always qualify. HBase's
    /// default is the memstore flush size, 128 MiB.
    pub min_compact_size: u64,
    /// `hbase.hstore.compaction.max.size`: larger files (oldest first) are left out.
    pub max_compact_size: u64,
    /// `hbase.hstore.blockingStoreFiles`: with this many files a store "may be stuck" and the
    /// newest `min_files` are compacted even when the ratio selects nothing.
    pub blocking_files: usize,
}

impl Default for CompactionPolicy {
    fn default() -> Self {
        CompactionPolicy {
            ratio: 1.2,
            min_files: 3,
            max_files: 10,
            min_compact_size: 128 << 20,
            max_compact_size: u64::MAX,
            blocking_files: 16,
        }
    }
}

/// What to compact.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompactOptions {
    /// Every file of each store, dropping deleted, expired and excess cells and the markers.
    pub major: bool,
    /// Only this region (id).
    pub region: Option<String>,
    /// Only this family.
    pub family: Option<String>,
    /// Minor: every file of each store instead of the ratio-based selection.
    pub all_files: bool,
    /// "Now" for TTL, epoch ms (injected; compaction never reads the clock for semantics).
    pub now_ms: i64,
    pub policy: CompactionPolicy,
}

/// What happened to one store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StoreCompaction {
    pub region: String,
    pub family: String,
    /// Input file names, oldest first.
    pub inputs: Vec<String>,
    pub input_cells: u64,
    pub input_bytes: u64,
    /// The new file; `None` when every cell was dropped.
    pub output: Option<StoreFileEntry>,
    /// Every file of the store was compacted: DROP_DELETES rules, MAJOR_COMPACTION_KEY = true.
    pub all_files: bool,
    /// Cells written.
    pub output_cells: u64,
    /// Delete markers written.
    pub output_markers: u64,
    pub elapsed_ms: u64,
}

/// What a compaction did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CompactReport {
    /// Manifest version published; `None` when no store had anything to compact.
    pub version: Option<u64>,
    pub stores: Vec<StoreCompaction>,
    /// Files removed by garbage collection (inputs no snapshot names, and leftovers).
    pub garbage_removed: usize,
}

/// Changes to a family's settings (`None` = unchanged).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FamilyChanges {
    pub compression: Option<Compression>,
    pub data_block_encoding: Option<DataBlockEncoding>,
    pub bloom_filter: Option<BloomFilterKind>,
    pub block_size: Option<u32>,
    pub versions: Option<u32>,
    pub min_versions: Option<u32>,
    /// `Some(None)` = FOREVER.
    pub ttl_seconds: Option<Option<u64>>,
    pub keep_deleted_cells: Option<KeepDeletedCells>,
}

/// The stores (one per family, family order) of `region` in manifest `m`, files in manifest
/// order with their sequence ids, ready for `read::get` / `read::scan`.
pub fn open_region_stores(t: &Table, m: &Manifest, region: &str) -> Result<Vec<Store>, TableError> {
    let mut stores = Vec::new();
    for f in &m.families {
        let mut files = Vec::new();
        for e in m
            .files
            .iter()
            .filter(|e| e.region == region && e.family == f.name)
        {
            let r = t.open_store_file(e)?;
            files.push((Arc::new(r), e.seq_id));
        }
        stores.push(Store {
            family: f.name.as_bytes().to_vec(),
            settings: family_read_settings(f)?,
            files,
        });
    }
    Ok(stores)
}

/// One candidate file of a minor selection, oldest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub size: u64,
    /// FileInfo `EXCLUDE_FROM_MINOR_COMPACTION`.
    pub exclude_from_minor: bool,
}

/// HBase's ratio-based minor selection over a store's files (oldest first). Returns the
/// selected index range (empty = nothing to do). Steps, after `SortedCompactionPolicy` and
/// `RatioBasedCompactionPolicy`:
///
/// 1. Files flagged `EXCLUDE_FROM_MINOR_COMPACTION` are not candidates. HBase removes them
///    from the list; to keep the selection contiguous in sequence-id order, only the files
///    newer than the newest flagged one are candidates here.
/// 2. Leading (oldest) files larger than `max_compact_size` are left out.
/// 3. From the oldest candidate on, a file is skipped while at least `min_files` candidates
///    remain and its size exceeds `max(min_compact_size, ratio × sum of the sizes of the next
///    max_files − 1 newer files)`.
/// 4. When that leaves nothing and the store has `blocking_files` files or more, the newest
///    `min_files` are taken.
/// 5. Fewer than `min_files` selected: nothing. More than `max_files`: the oldest `max_files`.
pub fn select_minor(files: &[Candidate], p: &CompactionPolicy) -> std::ops::Range<usize> {
    let min_files = p.min_files.max(2);
    let max_files = p.max_files.max(min_files);
    let mut lo = files
        .iter()
        .rposition(|c| c.exclude_from_minor)
        .map_or(0, |i| i + 1);
    while lo < files.len() && files[lo].size > p.max_compact_size {
        lo += 1;
    }
    let cand = &files[lo..];
    let n = cand.len();
    if n == 0 {
        return 0..0;
    }
    // sum[i] = size[i] + ... + size[i + max_files - 2] (clipped at n).
    let mut sum = vec![0u64; n + 1];
    for i in (0..n).rev() {
        let too_far = i + max_files - 1;
        sum[i] = cand[i].size.saturating_add(sum[i + 1])
            - if too_far < n { cand[too_far].size } else { 0 };
    }
    let mut start = 0;
    while n - start >= min_files
        && cand[start].size
            > p.min_compact_size
                .max((sum[start + 1] as f64 * p.ratio) as u64)
    {
        start += 1;
    }
    if start >= n && files.len() >= p.blocking_files && n >= min_files {
        start = n - min_files;
    }
    let count = n - start;
    if count < min_files {
        return 0..0;
    }
    let end = start + count.min(max_files);
    lo + start..lo + end
}

/// Which compaction rules apply (HBase's scan types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rules {
    /// A subset of the store's files: markers kept (except redundant ones).
    RetainDeletes,
    /// Every file of the store: markers dropped unless KEEP_DELETED_CELLS keeps them.
    DropDeletes { earliest_put_ts: i64 },
}

/// HBase's compaction query matcher (`MinorCompactionScanQueryMatcher` /
/// `MajorCompactionScanQueryMatcher`) for one store, fed a row's cells in store order.
/// Offline there are no open scanners: every cell is below the read point.
struct CompactionMatcher {
    rules: Rules,
    deletes: DeleteTracker,
    columns: ColumnTracker,
    keep: KeepDeletedCells,
    min_versions: u32,
    oldest: i64,
    now: i64,
}

impl CompactionMatcher {
    fn new(settings: &FamilyReadSettings, rules: Rules, now: i64) -> CompactionMatcher {
        let oldest = oldest_unexpired_ts(settings, false, now);
        // Minor compactions keep every version (see `formats/table.md` §Compaction: HBase would
        // also count versions within the selected files, which can hide versions a read
        // would show); duplicates are still dropped.
        let columns = match rules {
            Rules::RetainDeletes => ColumnTracker::new(None, 0, u32::MAX, i64::MIN),
            Rules::DropDeletes { .. } => {
                ColumnTracker::new(None, settings.min_versions, settings.versions, oldest)
            }
        };
        CompactionMatcher {
            rules,
            deletes: DeleteTracker::default(),
            columns,
            keep: settings.keep_deleted_cells,
            min_versions: settings.min_versions,
            oldest,
            now,
        }
    }

    fn new_row(&mut self) {
        self.deletes.reset();
        self.columns.reset();
    }

    /// `CompactionScanQueryMatcher.trackDelete`.
    fn track_delete(&mut self, cell: &CellRef<'_>) {
        if self.keep == KeepDeletedCells::False
            || (self.keep == KeepDeletedCells::Ttl && cell.timestamp < self.oldest)
        {
            self.deletes.add(cell);
        }
    }

    fn matches(&mut self, cell: &CellRef<'_>) -> MatchCode {
        let ts = cell.timestamp;
        // preCheck: expired with MIN_VERSIONS = 0 ends the column; per-cell TTL skips.
        if self.min_versions == 0 && ts < self.oldest {
            return MatchCode::SeekNextCol;
        }
        if cell_ttl_expired(cell, self.now) {
            return MatchCode::Skip;
        }
        if cell.cell_type.is_delete() {
            match self.rules {
                Rules::RetainDeletes => {
                    if self.deletes.is_redundant_delete(cell) {
                        if cell.qualifier.is_empty() && cell.cell_type != CellType::DeleteFamily {
                            return MatchCode::Skip;
                        }
                        return MatchCode::SeekNextCol;
                    }
                    self.track_delete(cell);
                    return MatchCode::Include;
                }
                Rules::DropDeletes { earliest_put_ts } => {
                    self.track_delete(cell);
                    let keep_marker = self.keep == KeepDeletedCells::True
                        || (self.keep == KeepDeletedCells::Ttl && ts >= self.oldest);
                    if !keep_marker {
                        return MatchCode::Skip;
                    }
                    if ts < earliest_put_ts {
                        return MatchCode::SeekNextCol;
                    }
                    // A kept DeleteFamily / DeleteFamilyVersion masks every column of the row.
                    // HBase passes it through the version count of the empty-qualifier column,
                    // where newer empty-qualifier Puts can push it out and bring back the Puts
                    // it masked in other columns; we keep it (see formats/table.md).
                    if cell.cell_type.is_delete_family_kind() {
                        return MatchCode::Include;
                    }
                    // Kept: goes through version counting (not counted itself).
                }
            }
        } else if !self.deletes.is_empty() {
            match self.deletes.is_deleted(cell) {
                DeleteResult::NotDeleted => {}
                DeleteResult::FamilyDeleted | DeleteResult::ColumnDeleted => {
                    return MatchCode::SeekNextCol;
                }
                DeleteResult::VersionDeleted | DeleteResult::FamilyVersionDeleted => {
                    return MatchCode::Skip;
                }
            }
        }
        self.columns.check_versions(cell)
    }
}

/// Counters of one store's merge.
#[derive(Default)]
struct MergeCounts {
    cells: u64,
    markers: u64,
}

/// Merges `files` (oldest first) through `matcher` into `writer`.
fn merge_store<W: std::io::Write>(
    family: &[u8],
    files: &[(Arc<HFileReader>, u64)],
    matcher: &mut CompactionMatcher,
    writer: &mut HFileWriter<W>,
) -> Result<MergeCounts, TableError> {
    let read_err = |e: ReadError| TableError::Invalid(e.to_string());
    let mut merge =
        MergeScanner::new(files.iter().map(|(r, s)| (r.as_ref(), *s))).map_err(read_err)?;
    merge.seek_to_first().map_err(read_err)?;
    let mut counts = MergeCounts::default();
    let mut row: Vec<u8> = Vec::new();
    let mut column: Vec<u8> = Vec::new();
    let mut first = true;
    while let Some(c) = merge.peek() {
        if c.family != family {
            return Err(TableError::Invalid(format!(
                "{}: cell of family '{}' in the store of family '{}'",
                merge.peek_label().unwrap_or("?"),
                String::from_utf8_lossy(c.family),
                String::from_utf8_lossy(family)
            )));
        }
        if first || c.row != row.as_slice() {
            first = false;
            row.clear();
            row.extend_from_slice(c.row);
            matcher.new_row();
        }
        let code = matcher.matches(&c);
        if code.includes() {
            writer.append(&c)?;
            counts.cells += 1;
            if c.cell_type.is_delete() {
                counts.markers += 1;
            }
        }
        match code {
            MatchCode::Include | MatchCode::Skip => merge.advance().map_err(read_err)?,
            MatchCode::SeekNextRow | MatchCode::IncludeAndSeekNextRow => loop {
                merge.advance().map_err(read_err)?;
                match merge.peek() {
                    Some(n) if n.row == row.as_slice() => {}
                    _ => break,
                }
            },
            MatchCode::SeekNextCol | MatchCode::IncludeAndSeekNextCol => {
                // As the read path (HBASE-18471): from an empty-qualifier cell other than a
                // DeleteFamily only the cell itself is passed.
                if c.qualifier.is_empty() && c.cell_type != CellType::DeleteFamily {
                    merge.advance().map_err(read_err)?;
                } else {
                    column.clear();
                    column.extend_from_slice(c.qualifier);
                    loop {
                        merge.advance().map_err(read_err)?;
                        match merge.peek() {
                            Some(n) if n.row == row.as_slice() && n.qualifier == column => {}
                            _ => break,
                        }
                    }
                }
            }
        }
    }
    Ok(counts)
}

/// Merges one store's `files` (oldest first; sequence ids as in [`Store::files`]) into
/// `writer` with HBase's major-compaction rules (every file of the store: DROP_DELETES), for
/// stores kept outside a table directory (HBase's own layout, `hfkit_hbase`). Returns the
/// cells and the delete markers written.
pub fn major_compact_store<W: std::io::Write>(
    family: &[u8],
    settings: &FamilyReadSettings,
    files: &[(Arc<HFileReader>, u64)],
    now_ms: i64,
    writer: &mut HFileWriter<W>,
) -> Result<(u64, u64), TableError> {
    // A file without EARLIEST_PUT_TS counts as holding a very old Put.
    let earliest_put_ts = files
        .iter()
        .map(|(r, _)| {
            r.file_info()
                .get_i64(keys::EARLIEST_PUT_TS)
                .unwrap_or(i64::MIN)
        })
        .min()
        .unwrap_or(i64::MAX);
    let rules = Rules::DropDeletes { earliest_put_ts };
    let mut matcher = CompactionMatcher::new(settings, rules, now_ms);
    let counts = merge_store(family, files, &mut matcher, writer)?;
    Ok((counts.cells, counts.markers))
}

/// A store chosen for compaction.
struct Plan {
    region: String,
    family: String,
    /// Indices into the manifest's `files`, oldest first.
    inputs: Vec<usize>,
    all_files: bool,
}

/// An output written and fsynced under staging.
struct Staged {
    plan_index: usize,
    path: PathBuf,
    entry: StoreFileEntry,
}

impl Table {
    /// Compacts the selected stores (see the module documentation); one manifest commit for
    /// all of them. `progress` is called after each store is written.
    pub fn compact_with_progress(
        &self,
        opts: &CompactOptions,
        progress: &mut dyn FnMut(&StoreCompaction),
    ) -> Result<CompactReport, TableError> {
        let lock = self.lock()?;
        let mut garbage_removed = self.collect_garbage(&lock)?;
        let m = self.manifest()?;
        if let Some(r) = &opts.region {
            if !m.regions.iter().any(|x| &x.id == r) {
                return Err(TableError::Invalid(format!("no region '{r}'")));
            }
        }
        if let Some(f) = &opts.family {
            if m.family(f).is_none() {
                return Err(TableError::Invalid(format!("no family '{f}'")));
            }
        }
        let plans = self.plan(&m, opts)?;
        if plans.is_empty() {
            return Ok(CompactReport {
                version: None,
                stores: Vec::new(),
                garbage_removed,
            });
        }
        let staging = self
            .dir()
            .join(STAGING_DIR)
            .join(format!("compact-{}", unique_hex()));
        let result = self.write_all(&m, &plans, opts, &staging, progress);
        let (staged, stores) = match result {
            Ok(x) => x,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(e);
            }
        };
        let placed = match self.place(&staged) {
            Ok(p) => p,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(e);
            }
        };
        let next = next_manifest(&m, &plans, &staged);
        let committed = self.commit(&next, &placed);
        let _ = std::fs::remove_dir_all(&staging);
        committed?;
        garbage_removed += self.collect_garbage(&lock)?;
        Ok(CompactReport {
            version: Some(next.version),
            stores,
            garbage_removed,
        })
    }

    /// [`Table::compact_with_progress`] without progress reports.
    pub fn compact(&self, opts: CompactOptions) -> Result<CompactReport, TableError> {
        self.compact_with_progress(&opts, &mut |_| {})
    }

    /// Chooses the stores and files to compact.
    fn plan(&self, m: &Manifest, opts: &CompactOptions) -> Result<Vec<Plan>, TableError> {
        let mut plans = Vec::new();
        for region in &m.regions {
            if opts.region.as_ref().is_some_and(|r| *r != region.id) {
                continue;
            }
            for fam in &m.families {
                if opts.family.as_ref().is_some_and(|f| *f != fam.name) {
                    continue;
                }
                let mut idx: Vec<usize> = (0..m.files.len())
                    .filter(|&i| m.files[i].region == region.id && m.files[i].family == fam.name)
                    .collect();
                // Oldest first: sequence id, then manifest position (a later file wins ties).
                idx.sort_by_key(|&i| (m.files[i].seq_id, i));
                if idx.is_empty() {
                    continue;
                }
                let chosen: Vec<usize> = if opts.major || opts.all_files {
                    idx.clone()
                } else {
                    let mut cands = Vec::with_capacity(idx.len());
                    for &i in &idx {
                        let e = &m.files[i];
                        let r = self.open_store_file(e)?;
                        cands.push(Candidate {
                            size: e.size,
                            exclude_from_minor: r
                                .file_info()
                                .get_bool(keys::EXCLUDE_FROM_MINOR_COMPACTION)
                                .unwrap_or(false),
                        });
                    }
                    idx[select_minor(&cands, &opts.policy)].to_vec()
                };
                if chosen.is_empty() {
                    continue;
                }
                plans.push(Plan {
                    region: region.id.clone(),
                    family: fam.name.clone(),
                    all_files: chosen.len() == idx.len(),
                    inputs: chosen,
                });
            }
        }
        Ok(plans)
    }

    /// Writes every plan's output under `staging` (fsynced).
    fn write_all(
        &self,
        m: &Manifest,
        plans: &[Plan],
        opts: &CompactOptions,
        staging: &Path,
        progress: &mut dyn FnMut(&StoreCompaction),
    ) -> Result<(Vec<Staged>, Vec<StoreCompaction>), TableError> {
        self.fs()
            .create_dir_all(staging)
            .map_err(|e| TableError::io(staging, e))?;
        let mut staged = Vec::new();
        let mut reports = Vec::new();
        for (pi, plan) in plans.iter().enumerate() {
            let started = std::time::Instant::now();
            let fam = m
                .family(&plan.family)
                .ok_or_else(|| TableError::Invalid(format!("family {} vanished", plan.family)))?;
            let settings = family_read_settings(fam)?;
            let mut files = Vec::new();
            let mut include_tags = false;
            let mut earliest_put_ts = i64::MAX;
            for &i in &plan.inputs {
                let e = &m.files[i];
                let r = self.open_store_file(e)?;
                let fi = r.file_info();
                include_tags |= fi
                    .get_i32(keys::MAX_TAGS_LEN)
                    .map(|n| n > 0)
                    .unwrap_or(r.encoding_context().include_tags);
                // A file without EARLIEST_PUT_TS counts as holding a very old Put.
                earliest_put_ts =
                    earliest_put_ts.min(fi.get_i64(keys::EARLIEST_PUT_TS).unwrap_or(i64::MIN));
                files.push((Arc::new(r), e.seq_id));
            }
            let rules = if plan.all_files {
                Rules::DropDeletes { earliest_put_ts }
            } else {
                Rules::RetainDeletes
            };
            let max_seq = plan
                .inputs
                .iter()
                .map(|&i| m.files[i].seq_id)
                .max()
                .unwrap_or(0);
            let mut wopts = fam.writer_options(opts.now_ms)?;
            wopts.bulk_load = None;
            wopts.include_tags = include_tags;
            wopts.include_mvcc = true;
            let name = format!("{}_SeqId_{max_seq}_", unique_hex());
            let path = staging.join(&name);
            let file = std::fs::File::create(&path).map_err(|e| TableError::io(&path, e))?;
            let mut w = HFileWriter::new(BufWriter::with_capacity(1 << 20, file), wopts)?;
            w.append_file_info(
                keys::MAX_SEQ_ID_KEY,
                (max_seq as i64).to_be_bytes().to_vec(),
            )?;
            w.append_file_info(
                keys::MAJOR_COMPACTION_KEY,
                vec![if plan.all_files { 0xff } else { 0 }],
            )?;
            let mut matcher = CompactionMatcher::new(&settings, rules, opts.now_ms);
            let counts = merge_store(fam.name.as_bytes(), &files, &mut matcher, &mut w)?;
            let (buf, summary) = w.finish()?;
            let f = buf
                .into_inner()
                .map_err(|e| TableError::io(&path, e.into_error()))?;
            drop(f);
            let output = if summary.entry_count == 0 {
                let _ = std::fs::remove_file(&path);
                None
            } else {
                self.fs()
                    .sync_file(&path)
                    .map_err(|e| TableError::io(&path, e))?;
                verify_store_file(&path, summary.entry_count).map_err(|detail| {
                    TableError::Corrupt {
                        path: path.clone(),
                        detail: format!("compaction output failed verification: {detail}"),
                    }
                })?;
                let row_of = |k: &Option<Vec<u8>>| {
                    k.as_deref()
                        .and_then(KeyView::parse)
                        .map(|k| k.row.to_vec())
                        .unwrap_or_default()
                };
                let (min_ts, max_ts) = summary.time_range.unwrap_or((i64::MIN, i64::MAX));
                let entry = StoreFileEntry {
                    region: plan.region.clone(),
                    family: plan.family.clone(),
                    name,
                    seq_id: max_seq,
                    size: summary.file_size,
                    entries: summary.entry_count,
                    first_row: row_of(&summary.first_key),
                    last_row: row_of(&summary.last_key),
                    min_ts,
                    max_ts,
                };
                staged.push(Staged {
                    plan_index: pi,
                    path,
                    entry: entry.clone(),
                });
                Some(entry)
            };
            let report = StoreCompaction {
                region: plan.region.clone(),
                family: plan.family.clone(),
                inputs: plan
                    .inputs
                    .iter()
                    .map(|&i| m.files[i].name.clone())
                    .collect(),
                input_cells: plan.inputs.iter().map(|&i| m.files[i].entries).sum(),
                input_bytes: plan.inputs.iter().map(|&i| m.files[i].size).sum(),
                output,
                all_files: plan.all_files,
                output_cells: counts.cells,
                output_markers: counts.markers,
                elapsed_ms: started.elapsed().as_millis() as u64,
            };
            progress(&report);
            reports.push(report);
        }
        self.fs()
            .sync_dir(staging)
            .map_err(|e| TableError::io(staging, e))?;
        Ok((staged, reports))
    }

    /// Renames staged outputs into `data/<region>/<family>/` and fsyncs the directories. On
    /// failure the outputs already placed are removed.
    fn place(&self, staged: &[Staged]) -> Result<Vec<PathBuf>, TableError> {
        let mut placed = Vec::new();
        let result = self.place_into(staged, &mut placed);
        if result.is_err() {
            for p in &placed {
                let _ = std::fs::remove_file(p);
            }
        }
        result.map(|()| placed)
    }

    /// [`Table::place`]; paths are pushed to `placed` as they are made.
    fn place_into(&self, staged: &[Staged], placed: &mut Vec<PathBuf>) -> Result<(), TableError> {
        let fs = self.fs();
        let mut synced = std::collections::BTreeSet::new();
        for s in staged {
            let fam_dir = self
                .dir()
                .join(DATA_DIR)
                .join(&s.entry.region)
                .join(&s.entry.family);
            fs.create_dir_all(&fam_dir)
                .map_err(|e| TableError::io(&fam_dir, e))?;
            let dest = fam_dir.join(&s.entry.name);
            fs.rename(&s.path, &dest)
                .map_err(|e| TableError::io(&dest, e))?;
            placed.push(dest);
            synced.insert(fam_dir);
        }
        let mut parents = std::collections::BTreeSet::new();
        for d in &synced {
            fs.sync_dir(d).map_err(|e| TableError::io(d, e))?;
            if let Some(p) = d.parent() {
                parents.insert(p.to_path_buf());
            }
        }
        for d in parents {
            fs.sync_dir(&d).map_err(|e| TableError::io(&d, e))?;
        }
        let data = self.dir().join(DATA_DIR);
        if !staged.is_empty() {
            fs.sync_dir(&data).map_err(|e| TableError::io(&data, e))?;
        }
        Ok(())
    }

    /// Changes family `family`'s settings in a new manifest version. Files already written
    /// keep their encoding; later attaches (splits) and compactions use the new settings,
    /// and reads and compactions use the new VERSIONS / MIN_VERSIONS / TTL /
    /// KEEP_DELETED_CELLS at once.
    pub fn alter(&self, family: &str, changes: &FamilyChanges) -> Result<FamilyEntry, TableError> {
        let lock = self.lock()?;
        self.collect_garbage(&lock)?;
        let m = self.manifest()?;
        let mut next = m.clone();
        let f = next
            .families
            .iter_mut()
            .find(|f| f.name == family)
            .ok_or_else(|| TableError::Invalid(format!("no family '{family}'")))?;
        if let Some(v) = changes.compression {
            f.compression = v.name().into();
        }
        if let Some(v) = changes.data_block_encoding {
            f.data_block_encoding = v.name().into();
        }
        if let Some(v) = changes.bloom_filter {
            f.bloom_filter = v.manifest_form();
            // HBase keeps the ROWPREFIX_FIXED_LENGTH prefix length in the family configuration.
            if let BloomFilterKind::RowPrefixFixedLength(n) = v {
                f.other
                    .configuration
                    .insert(crate::schema::ROW_PREFIX_LENGTH_KEY.into(), n.to_string());
            }
        }
        if let Some(v) = changes.block_size {
            f.block_size = v;
        }
        if let Some(v) = changes.versions {
            f.versions = v;
        }
        if let Some(v) = changes.min_versions {
            f.min_versions = v;
        }
        if let Some(v) = changes.ttl_seconds {
            f.ttl_seconds = v;
        }
        if let Some(v) = changes.keep_deleted_cells {
            f.keep_deleted_cells = v.name().into();
        }
        validate_family(f)?;
        let out = f.clone();
        if next == m {
            return Ok(out);
        }
        next.version += 1;
        self.commit(&next, &[])?;
        Ok(out)
    }
}

/// Checks a family's settings as HBase's `ColumnFamilyDescriptor` validation does for the
/// attributes `alter` can change.
fn validate_family(f: &FamilyEntry) -> Result<(), TableError> {
    let bad = |msg: String| TableError::Invalid(format!("family {}: {msg}", f.name));
    if f.versions == 0 {
        return Err(bad("VERSIONS must be at least 1".into()));
    }
    if f.min_versions > f.versions {
        return Err(bad(format!(
            "MIN_VERSIONS {} is larger than VERSIONS {}",
            f.min_versions, f.versions
        )));
    }
    if f.ttl_seconds == Some(0) {
        return Err(bad("TTL must be positive (or FOREVER)".into()));
    }
    if f.block_size == 0 {
        return Err(bad("BLOCKSIZE must be positive".into()));
    }
    family_read_settings(f)?;
    f.writer_options(0)?;
    Ok(())
}

/// The manifest after the swap: each plan's inputs removed, its output (if any) at the place
/// of its oldest input, so that per store the files stay in sequence-id order.
fn next_manifest(m: &Manifest, plans: &[Plan], staged: &[Staged]) -> Manifest {
    let mut next = m.clone();
    next.version += 1;
    let mut replace: std::collections::HashMap<usize, Option<StoreFileEntry>> =
        std::collections::HashMap::new();
    for (pi, plan) in plans.iter().enumerate() {
        let out = staged
            .iter()
            .find(|s| s.plan_index == pi)
            .map(|s| s.entry.clone());
        let first = plan.inputs.iter().copied().min();
        for &i in &plan.inputs {
            replace.insert(i, None);
        }
        if let Some(f) = first {
            replace.insert(f, out);
        }
    }
    next.files = m
        .files
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match replace.get(&i) {
            None => Some(e.clone()),
            Some(out) => out.clone(),
        })
        .collect();
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(sizes: &[u64]) -> Vec<Candidate> {
        sizes
            .iter()
            .map(|&size| Candidate {
                size,
                exclude_from_minor: false,
            })
            .collect()
    }

    fn p() -> CompactionPolicy {
        CompactionPolicy {
            min_compact_size: 10,
            ..CompactionPolicy::default()
        }
    }

    #[test]
    fn ratio_selection_skips_big_old_files() {
        // 100 > 1.2 × (50+23+12+12) = 116.4? no → selected from the start.
        assert_eq!(select_minor(&c(&[100, 50, 23, 12, 12]), &p()), 0..5);
        // 250 > 1.2 × 97: skipped; 50 ≤ 1.2 × 47: start.
        assert_eq!(select_minor(&c(&[250, 50, 23, 12, 12]), &p()), 1..5);
        // Too few files left.
        assert_eq!(select_minor(&c(&[999, 100, 1]), &p()), 0..0);
        assert_eq!(select_minor(&c(&[5, 5]), &p()), 0..0);
        // Small files always qualify; at most max_files, the oldest.
        assert_eq!(select_minor(&c(&[1; 15]), &p()), 0..10);
        // Excluded files are barriers.
        let mut v = c(&[1, 1, 1, 1, 1]);
        v[1].exclude_from_minor = true;
        assert_eq!(select_minor(&v, &p()), 2..5);
        // Sizes falling by 3× each: every file outweighs the newer ones; nothing qualifies.
        let big: Vec<u64> = (0..16).map(|i| 3u64.pow(20 - i)).collect();
        assert_eq!(select_minor(&c(&big), &p()), 0..0);
    }
}
