//! The rewrite of a store's files into one (`formats/table.md` §"Compaction", §"Rules" and
//! §"Output"): HBase's compaction matcher over a merge of the files, and the staged, fsynced
//! and verified output file of each store a compaction takes.

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::options::CompactOptions;
use super::report::StoreCompaction;
use super::select::Plan;
use crate::directory::{check_written, unique_hex, Table, WrittenFile};
use crate::manifest::{Manifest, StoreFileEntry};
use crate::read::family_read_settings;
use crate::TableError;
use hfkit_format::cell::{CellRef, CellType, KeyView};
use hfkit_format::checksum::Crc32cWriter;
use hfkit_format::fileinfo::keys;
use hfkit_format::reader::HFileReader;
use hfkit_format::writer::HFileWriter;
use hfkit_read::matcher::{
    cell_ttl_expired, oldest_unexpired_ts, ColumnTracker, DeleteResult, DeleteTracker, MatchCode,
};
use hfkit_read::{FamilyReadSettings, KeepDeletedCells, MergeScanner, ReadError};

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
            crate::check_interrupt()?;
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

/// An output written and fsynced under staging.
pub(super) struct Staged {
    pub(super) plan_index: usize,
    pub(super) path: PathBuf,
    pub(super) entry: StoreFileEntry,
}

impl Table {
    /// Writes every plan's output under `staging` (fsynced).
    pub(super) fn write_all(
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
        let cells_in =
            |plan: &Plan| -> u64 { plan.inputs.iter().map(|&i| m.files[i].entries).sum() };
        crate::progress::phase(
            "compacting",
            crate::progress::Unit::Cells,
            plans.iter().map(cells_in).sum(),
        );
        for (pi, plan) in plans.iter().enumerate() {
            let (s, report) = self.write_store(m, plan, pi, opts, staging)?;
            staged.extend(s);
            progress(&report);
            crate::progress::done(cells_in(plan));
            reports.push(report);
        }
        self.fs()
            .sync_dir(staging)
            .map_err(|e| TableError::io(staging, e))?;
        Ok((staged, reports))
    }

    /// Writes one plan's output under `staging` (the plan's index `pi` goes with it): the
    /// output, if any cell is left, and the store's report.
    pub(super) fn write_store(
        &self,
        m: &Manifest,
        plan: &Plan,
        pi: usize,
        opts: &CompactOptions,
        staging: &Path,
    ) -> Result<(Option<Staged>, StoreCompaction), TableError> {
        let mut staged = None;
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
        let file = Crc32cWriter::new(file);
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
        let written = WrittenFile {
            path: path.clone(),
            size: f.written(),
            cells: summary.entry_count,
            crc32c: f.crc32c(),
        };
        drop(f);
        let output = if summary.entry_count == 0 {
            let _ = std::fs::remove_file(&path);
            None
        } else {
            self.fs()
                .sync_file(&path)
                .map_err(|e| TableError::io(&path, e))?;
            // Its bytes on disk are the ones written, and hold the cells written
            // (`formats/table.md` §"Checks before data is replaced, deleted or handed out").
            check_written(&written).map_err(|detail| TableError::Corrupt {
                path: path.clone(),
                detail: format!("compaction output failed its check: {detail}"),
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
                // Nothing a second major compaction would drop, while the settings hold.
                compacted_under: (plan.all_files && counts.markers == 0 && !include_tags)
                    .then(|| fam.fingerprint())
                    .flatten(),
            };
            staged = Some(Staged {
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
        Ok((staged, report))
    }
}
