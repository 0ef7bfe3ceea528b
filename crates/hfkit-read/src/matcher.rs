//! The query matcher: every delete / version / TTL / time-range rule of an HBase user Get or Scan
//! over one store, as a per-cell state machine fed cells in store order (see [`super::merge`]).
//! Rules: `formats/read.md` §"Matcher"; the table in [`crate`] summarises the markers.
//!
//! Structure (mirrors HBase's `NormalUserScanQueryMatcher` / `RawScanQueryMatcher`):
//!
//! ```text
//! match(cell):
//!   explicit columns all served             → SeekNextRow
//!   not raw, MIN_VERSIONS = 0, ts expired   → next column (or row)
//!   not raw, per-cell TTL tag expired       → Skip
//!   not raw, delete marker                  → DeleteTracker.add if applicable; Skip
//!   not raw, deleted by the tracker         → next column (family/column delete) or Skip (version)
//!   ts ≥ range max → Skip;  ts < range min  → next column
//!   column tracker (wildcard or explicit)   → Include / Skip / SeekNextCol / Include+Seek…
//! ```
//!
//! The matcher never reads the system clock: `now_ms` comes from the caller.

use hfkit_format::bytes::{equal_bytes, extend_short};
use hfkit_format::cell::{CellRef, CellType};

use super::{FamilyReadSettings, KeepDeletedCells, TimeRange};

/// What the store scanner should do with the cell just matched (HBase's `MatchCode`, minus the
/// filter- and scan-level codes this crate has no use for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchCode {
    /// Return the cell; continue with the next one.
    Include,
    /// Return the cell; skip the rest of its column.
    IncludeAndSeekNextCol,
    /// Return the cell; skip the rest of the row (in this store).
    IncludeAndSeekNextRow,
    /// Drop the cell; continue with the next one.
    Skip,
    /// Drop the cell and the rest of its column.
    SeekNextCol,
    /// Drop the cell and the rest of the row (in this store).
    SeekNextRow,
}

impl MatchCode {
    /// Whether the cell is part of the result.
    pub fn includes(self) -> bool {
        matches!(
            self,
            MatchCode::Include
                | MatchCode::IncludeAndSeekNextCol
                | MatchCode::IncludeAndSeekNextRow
        )
    }
}

/// Tag type of a per-cell TTL (`TagType.TTL_TAG_TYPE`); value: i64 milliseconds.
pub const TTL_TAG_TYPE: u8 = 8;

/// HBase's "no TTL" family setting (`HConstants.FOREVER`, seconds).
pub const TTL_FOREVER: u64 = i32::MAX as u64;

/// `oldestUnexpiredTS`: cells with `ts` below it are expired. Raw reads: 0 (nothing with a
/// non-negative timestamp expires); no TTL: `i64::MIN`.
pub fn oldest_unexpired_ts(settings: &FamilyReadSettings, raw: bool, now_ms: i64) -> i64 {
    if raw {
        return 0;
    }
    match settings.ttl_seconds {
        Some(s) if s < TTL_FOREVER => now_ms.saturating_sub((s as i64).saturating_mul(1000)),
        _ => i64::MIN,
    }
}

/// Result of [`DeleteTracker::is_deleted`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeleteResult {
    NotDeleted,
    /// Covered by a DeleteFamily (every column, ts ≤ marker).
    FamilyDeleted,
    /// Covered by a DeleteFamilyVersion (every column, ts == marker).
    FamilyVersionDeleted,
    /// Covered by a DeleteColumn (this column, ts ≤ marker).
    ColumnDeleted,
    /// Covered by a Delete (this column, ts == marker).
    VersionDeleted,
}

/// Per-row delete state (HBase's `ScanDeleteTracker`). Reset at every row.
#[derive(Debug, Default)]
pub struct DeleteTracker {
    family_stamp: Option<i64>,
    family_version_stamps: Vec<i64>,
    /// The current column delete: qualifier, type, timestamp.
    column: Option<(CellType, i64)>,
    column_qualifier: Vec<u8>,
}

impl DeleteTracker {
    pub fn reset(&mut self) {
        self.family_stamp = None;
        self.family_version_stamps.clear();
        self.column = None;
        self.column_qualifier.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.family_stamp.is_none()
            && self.family_version_stamps.is_empty()
            && self.column.is_none()
    }

    /// Whether a marker adds nothing to what the tracker already masks (HBase's
    /// `ScanDeleteTracker.isRedundantDelete`, used by minor compactions): a DeleteFamily or
    /// DeleteFamilyVersion at or below the DeleteFamily stamp, or a Delete / DeleteColumn
    /// covered by that stamp or by a DeleteColumn of the same column at or above it.
    pub fn is_redundant_delete(&self, cell: &CellRef<'_>) -> bool {
        let ts = cell.timestamp;
        let by_family = self.family_stamp.is_some_and(|f| ts <= f);
        match cell.cell_type {
            CellType::DeleteFamily | CellType::DeleteFamilyVersion => by_family,
            CellType::Delete | CellType::DeleteColumn => {
                by_family
                    || self.column.is_some_and(|(t, dts)| {
                        t == CellType::DeleteColumn
                            && self.column_qualifier == cell.qualifier
                            && ts <= dts
                    })
            }
            _ => false,
        }
    }

    /// Records a delete marker (cells arrive in store order).
    pub fn add(&mut self, cell: &CellRef<'_>) {
        let ts = cell.timestamp;
        if self.family_stamp.is_some_and(|f| ts <= f) {
            return; // already covered by a DeleteFamily
        }
        match cell.cell_type {
            CellType::DeleteFamily => self.family_stamp = Some(ts),
            CellType::DeleteFamilyVersion if !self.family_version_stamps.contains(&ts) => {
                self.family_version_stamps.push(ts);
            }
            CellType::DeleteFamilyVersion => {}
            t @ (CellType::Delete | CellType::DeleteColumn) => {
                if let Some((cur, _)) = self.column {
                    // A less specific marker for the same column is ignored.
                    if t.code() < cur.code() && self.column_qualifier == cell.qualifier {
                        return;
                    }
                }
                self.column = Some((t, ts));
                self.column_qualifier.clear();
                self.column_qualifier.extend_from_slice(cell.qualifier);
            }
            _ => {}
        }
    }

    /// Whether a Put is masked by the markers seen so far in its row.
    pub fn is_deleted(&mut self, cell: &CellRef<'_>) -> DeleteResult {
        let ts = cell.timestamp;
        if self.family_stamp.is_some_and(|f| ts <= f) {
            return DeleteResult::FamilyDeleted;
        }
        if self.family_version_stamps.contains(&ts) {
            return DeleteResult::FamilyVersionDeleted;
        }
        if let Some((t, dts)) = self.column {
            if self.column_qualifier == cell.qualifier {
                if t == CellType::DeleteColumn {
                    return DeleteResult::ColumnDeleted;
                }
                if ts == dts {
                    return DeleteResult::VersionDeleted;
                }
                // An older version: the Delete no longer applies.
                self.column = None;
            } else {
                // Store order: a different qualifier here is a later column.
                self.column = None;
            }
        }
        DeleteResult::NotDeleted
    }
}

/// Column / version tracking (HBase's `ScanWildcardColumnTracker` and `ExplicitColumnTracker`).
#[derive(Debug)]
pub enum ColumnTracker {
    Wildcard(WildcardTracker),
    Explicit(ExplicitTracker),
}

/// Every column of the family.
#[derive(Debug)]
pub struct WildcardTracker {
    max_versions: u32,
    min_versions: u32,
    oldest: i64,
    has_column: bool,
    column: Vec<u8>,
    count: u32,
    /// (ts, type code) of the last included cell of the column, for duplicate elimination.
    latest: Option<(i64, u8)>,
}

/// Requested qualifiers only.
#[derive(Debug)]
pub struct ExplicitTracker {
    max_versions: u32,
    min_versions: u32,
    oldest: i64,
    /// Sorted, distinct.
    columns: Vec<Vec<u8>>,
    counts: Vec<u32>,
    index: usize,
    latest_ts: Option<i64>,
}

impl ColumnTracker {
    /// `explicit`: the requested qualifiers (sorted and deduplicated here); `None` = wildcard.
    pub fn new(
        explicit: Option<Vec<Vec<u8>>>,
        min_versions: u32,
        max_versions: u32,
        oldest: i64,
    ) -> ColumnTracker {
        match explicit {
            Some(mut cols) if !cols.is_empty() => {
                cols.sort();
                cols.dedup();
                let n = cols.len();
                ColumnTracker::Explicit(ExplicitTracker {
                    max_versions,
                    min_versions,
                    oldest,
                    columns: cols,
                    counts: vec![0; n],
                    index: 0,
                    latest_ts: None,
                })
            }
            _ => ColumnTracker::Wildcard(WildcardTracker {
                max_versions,
                min_versions,
                oldest,
                has_column: false,
                column: Vec::new(),
                count: 0,
                latest: None,
            }),
        }
    }

    pub fn reset(&mut self) {
        match self {
            ColumnTracker::Wildcard(w) => {
                w.has_column = false;
                w.column.clear();
                w.count = 0;
                w.latest = None;
            }
            ColumnTracker::Explicit(e) => {
                e.index = 0;
                e.counts.iter_mut().for_each(|c| *c = 0);
                e.latest_ts = None;
            }
        }
    }

    /// All requested columns served (explicit only).
    pub fn done(&self) -> bool {
        match self {
            ColumnTracker::Wildcard(_) => false,
            ColumnTracker::Explicit(e) => e.index >= e.columns.len(),
        }
    }

    /// Expired cells end the column early when MIN_VERSIONS is 0 (`ColumnTracker.isDone`).
    pub fn is_done(&self, ts: i64) -> bool {
        let (min, oldest) = match self {
            ColumnTracker::Wildcard(w) => (w.min_versions, w.oldest),
            ColumnTracker::Explicit(e) => (e.min_versions, e.oldest),
        };
        min == 0 && ts < oldest
    }

    /// Done with `cell`'s column: where to go next.
    pub fn next_row_or_next_column(&mut self, cell: &CellRef<'_>) -> MatchCode {
        match self {
            ColumnTracker::Wildcard(_) => MatchCode::SeekNextCol,
            ColumnTracker::Explicit(e) => {
                e.done_with_column(cell.qualifier);
                if e.index >= e.columns.len() {
                    MatchCode::SeekNextRow
                } else {
                    MatchCode::SeekNextCol
                }
            }
        }
    }

    /// Is the cell's column wanted (explicit), `Include` if so.
    pub fn check_column(&mut self, cell: &CellRef<'_>) -> MatchCode {
        match self {
            ColumnTracker::Wildcard(_) => MatchCode::Include,
            ColumnTracker::Explicit(e) => loop {
                let Some(col) = e.columns.get(e.index) else {
                    return MatchCode::SeekNextRow;
                };
                match cell.qualifier.cmp(col.as_slice()) {
                    std::cmp::Ordering::Equal => return MatchCode::Include,
                    std::cmp::Ordering::Less => {
                        e.latest_ts = None;
                        return MatchCode::SeekNextCol;
                    }
                    std::cmp::Ordering::Greater => {
                        e.latest_ts = None;
                        e.index += 1;
                    }
                }
            },
        }
    }

    /// Version counting for a cell whose column is wanted.
    pub fn check_versions(&mut self, cell: &CellRef<'_>) -> MatchCode {
        let ts = cell.timestamp;
        let code = cell.cell_type.code();
        match self {
            ColumnTracker::Wildcard(w) => {
                if !w.has_column || !equal_bytes(&w.column, cell.qualifier) {
                    // A new column (store order guarantees it sorts after the previous one).
                    w.has_column = true;
                    w.column.clear();
                    extend_short(&mut w.column, cell.qualifier);
                    w.count = 0;
                    w.latest = None;
                } else if w.latest == Some((ts, code)) {
                    return MatchCode::Skip; // duplicate: the first (newest sequence id) won
                }
                if !cell.cell_type.is_delete() {
                    w.count += 1;
                }
                if w.count > w.max_versions {
                    return MatchCode::SeekNextCol;
                }
                if w.count <= w.min_versions || ts >= w.oldest {
                    w.latest = Some((ts, code));
                    MatchCode::Include
                } else {
                    MatchCode::SeekNextCol
                }
            }
            ColumnTracker::Explicit(e) => {
                if e.latest_ts == Some(ts) {
                    return MatchCode::Skip;
                }
                let Some(count) = e.counts.get_mut(e.index) else {
                    return MatchCode::SeekNextRow;
                };
                *count += 1;
                let count = *count;
                if count >= e.max_versions || (count >= e.min_versions && ts < e.oldest) {
                    e.index += 1;
                    e.latest_ts = None;
                    if e.index >= e.columns.len() {
                        return MatchCode::IncludeAndSeekNextRow;
                    }
                    return MatchCode::IncludeAndSeekNextCol;
                }
                e.latest_ts = Some(ts);
                MatchCode::Include
            }
        }
    }
}

impl ExplicitTracker {
    fn done_with_column(&mut self, qualifier: &[u8]) {
        while let Some(col) = self.columns.get(self.index) {
            let cmp = qualifier.cmp(col.as_slice());
            self.latest_ts = None;
            if cmp == std::cmp::Ordering::Less {
                return;
            }
            self.index += 1;
            if cmp == std::cmp::Ordering::Equal {
                return;
            }
        }
    }
}

/// Everything the matcher needs to know about the query, for one store.
#[derive(Clone, Debug)]
pub struct MatcherConfig {
    pub settings: FamilyReadSettings,
    /// Requested versions (before capping by the family's VERSIONS).
    pub max_versions: u32,
    pub time_range: TimeRange,
    pub raw: bool,
    pub now_ms: i64,
    /// Requested qualifiers; `None` = the whole family.
    pub columns: Option<Vec<Vec<u8>>>,
}

/// The per-store query matcher. Call [`QueryMatcher::new_row`] at each row, then
/// [`QueryMatcher::matches`] on the row's cells in store order.
#[derive(Debug)]
pub struct QueryMatcher {
    deletes: DeleteTracker,
    columns: ColumnTracker,
    time_range: TimeRange,
    raw: bool,
    now: i64,
    oldest: i64,
    see_past_delete_markers: bool,
}

impl QueryMatcher {
    pub fn new(cfg: MatcherConfig) -> QueryMatcher {
        let oldest = oldest_unexpired_ts(&cfg.settings, cfg.raw, cfg.now_ms);
        let versions = if cfg.raw {
            cfg.max_versions
        } else {
            cfg.max_versions.min(cfg.settings.versions)
        };
        QueryMatcher {
            deletes: DeleteTracker::default(),
            columns: ColumnTracker::new(cfg.columns, cfg.settings.min_versions, versions, oldest),
            time_range: cfg.time_range,
            raw: cfg.raw,
            now: cfg.now_ms,
            oldest,
            see_past_delete_markers: cfg.settings.keep_deleted_cells != KeepDeletedCells::False,
        }
    }

    /// The `oldestUnexpiredTS` this matcher uses.
    pub fn oldest_unexpired_ts(&self) -> i64 {
        self.oldest
    }

    /// Starts a new row: clears delete and column state.
    pub fn new_row(&mut self) {
        self.deletes.reset();
        self.columns.reset();
    }

    /// Decides what to do with the next cell of the current row.
    pub fn matches(&mut self, cell: &CellRef<'_>) -> MatchCode {
        if self.columns.done() {
            return MatchCode::SeekNextRow;
        }
        let ts = cell.timestamp;
        if self.columns.is_done(ts) {
            return self.columns.next_row_or_next_column(cell);
        }
        if !self.raw {
            if cell_ttl_expired(cell, self.now) {
                return MatchCode::Skip;
            }
            if cell.cell_type.is_delete() {
                let applies = if self.see_past_delete_markers {
                    self.time_range.within(ts)
                } else {
                    self.time_range.within_or_after(ts)
                };
                if applies {
                    self.deletes.add(cell);
                }
                return MatchCode::Skip;
            }
            if !self.deletes.is_empty() {
                match self.deletes.is_deleted(cell) {
                    DeleteResult::NotDeleted => {}
                    DeleteResult::FamilyDeleted | DeleteResult::ColumnDeleted => {
                        return self.columns.next_row_or_next_column(cell);
                    }
                    DeleteResult::VersionDeleted | DeleteResult::FamilyVersionDeleted => {
                        return MatchCode::Skip;
                    }
                }
            }
        }
        match self.time_range.compare(ts) {
            std::cmp::Ordering::Greater => return MatchCode::Skip,
            std::cmp::Ordering::Less => return self.columns.next_row_or_next_column(cell),
            std::cmp::Ordering::Equal => {}
        }
        let code = self.columns.check_column(cell);
        if code != MatchCode::Include {
            return code;
        }
        self.columns.check_versions(cell)
    }
}

/// Per-cell TTL (tag type 8, i64 ms): expired when `ts + ttl < now`. Only the first TTL tag
/// counts; a malformed tags area or value is ignored (the cell is not expired by it).
pub fn cell_ttl_expired(cell: &CellRef<'_>, now: i64) -> bool {
    let tags = cell.tags;
    let mut i = 0usize;
    while i + 3 <= tags.len() {
        let len = u16::from_be_bytes([tags[i], tags[i + 1]]) as usize;
        let end = i + 2 + len;
        if len == 0 || end > tags.len() {
            return false;
        }
        if tags[i + 2] == TTL_TAG_TYPE {
            let Ok(v) = <[u8; 8]>::try_from(&tags[i + 3..end]) else {
                return false;
            };
            let ttl = i64::from_be_bytes(v);
            return cell.timestamp.checked_add(ttl).is_some_and(|exp| exp < now);
        }
        i = end;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(q: &'static [u8], ts: i64, t: CellType) -> CellRef<'static> {
        CellRef {
            row: b"r",
            family: b"f",
            qualifier: q,
            timestamp: ts,
            cell_type: t,
            value: b"",
            tags: b"",
            seq_id: 0,
        }
    }

    #[test]
    fn delete_tracker_rules() {
        let mut d = DeleteTracker::default();
        d.add(&c(b"a", 10, CellType::DeleteColumn));
        d.add(&c(b"a", 8, CellType::Delete)); // less specific: ignored
        assert_eq!(
            d.is_deleted(&c(b"a", 9, CellType::Put)),
            DeleteResult::ColumnDeleted
        );
        assert_eq!(
            d.is_deleted(&c(b"b", 9, CellType::Put)),
            DeleteResult::NotDeleted
        );
        d.add(&c(b"b", 7, CellType::Delete));
        assert_eq!(
            d.is_deleted(&c(b"b", 7, CellType::Put)),
            DeleteResult::VersionDeleted
        );
        assert_eq!(
            d.is_deleted(&c(b"b", 6, CellType::Put)),
            DeleteResult::NotDeleted
        );
        d.reset();
        d.add(&c(b"", 5, CellType::DeleteFamily));
        d.add(&c(b"", 9, CellType::DeleteFamilyVersion)); // cannot happen in order, but kept
        d.add(&c(b"", 4, CellType::DeleteFamilyVersion)); // covered: ignored
        assert_eq!(
            d.is_deleted(&c(b"x", 5, CellType::Put)),
            DeleteResult::FamilyDeleted
        );
        assert_eq!(
            d.is_deleted(&c(b"x", 9, CellType::Put)),
            DeleteResult::FamilyVersionDeleted
        );
        assert_eq!(
            d.is_deleted(&c(b"x", 6, CellType::Put)),
            DeleteResult::NotDeleted
        );
    }

    #[test]
    fn cell_ttl_tag() {
        let mut tags = vec![0, 9, TTL_TAG_TYPE];
        tags.extend_from_slice(&100i64.to_be_bytes());
        let leaked: &'static [u8] = Box::leak(tags.into_boxed_slice());
        let mut cell = c(b"q", 1000, CellType::Put);
        cell.tags = leaked;
        assert!(!cell_ttl_expired(&cell, 1100));
        assert!(cell_ttl_expired(&cell, 1101));
    }

    #[test]
    fn explicit_tracker_returns_first_expired_beyond_min_versions() {
        // HBase's ExplicitColumnTracker (as read from source): with MIN_VERSIONS = 1 the first
        // expired version beyond MIN_VERSIONS is included (and ends the column).
        let mut t = ColumnTracker::new(Some(vec![b"q".to_vec()]), 1, 3, 100);
        assert_eq!(
            t.check_column(&c(b"q", 150, CellType::Put)),
            MatchCode::Include
        );
        assert_eq!(
            t.check_versions(&c(b"q", 150, CellType::Put)),
            MatchCode::Include
        );
        assert_eq!(
            t.check_versions(&c(b"q", 50, CellType::Put)),
            MatchCode::IncludeAndSeekNextRow
        );
        // The wildcard tracker drops it.
        let mut w = ColumnTracker::new(None, 1, 3, 100);
        assert_eq!(
            w.check_versions(&c(b"q", 150, CellType::Put)),
            MatchCode::Include
        );
        assert_eq!(
            w.check_versions(&c(b"q", 50, CellType::Put)),
            MatchCode::SeekNextCol
        );
    }
}
