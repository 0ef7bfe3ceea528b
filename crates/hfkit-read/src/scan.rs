//! File selection, the per-store row reader, [`get`] and [`scan`].

use hfkit_format::bloom::BloomQuery;
use hfkit_format::bytes::equal_bytes;
use hfkit_format::cell::{first_on_row, Cell, CellRef, CellType};
use hfkit_format::reader::HFileReader;
use std::cmp::Ordering;

use super::matcher::{oldest_unexpired_ts, MatchCode, MatcherConfig, QueryMatcher};
use super::merge::{file_label, MergeScanner};
use super::row::{RowBuf, RowRef};
use super::{ReadError, ReadOptions, ReadStats, Result, Row, Store};

/// Which columns of a family a read wants: `None` = not this family, `Some(None)` = all,
/// `Some(Some(qs))` = those qualifiers.
fn family_columns(opts: &ReadOptions, family: &[u8]) -> Option<Option<Vec<Vec<u8>>>> {
    if opts.columns.is_empty() {
        return Some(None);
    }
    let mut quals = Vec::new();
    let mut found = false;
    for (f, q) in &opts.columns {
        if f.as_slice() != family {
            continue;
        }
        found = true;
        match q {
            None => return Some(None),
            Some(q) => quals.push(q.clone()),
        }
    }
    found.then_some(Some(quals))
}

pub(super) fn validate(opts: &ReadOptions) -> Result<()> {
    opts.time_range.validate()?;
    if opts.max_versions == 0 {
        return Err(ReadError::Options("max_versions must be at least 1".into()));
    }
    if opts.raw && opts.columns.iter().any(|(_, q)| q.is_some()) {
        // HBase: "Cannot specify any column for a raw scan".
        return Err(ReadError::Options(
            "a raw read takes whole families, not columns".into(),
        ));
    }
    Ok(())
}

/// The smallest row greater than every row starting with `prefix`; `None` when unbounded.
fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut p = prefix.to_vec();
    while let Some(last) = p.pop() {
        if last != 0xFF {
            p.push(last + 1);
            return Some(p);
        }
    }
    None
}

/// The row range `[start, stop)` of a scan (`stop = None`: unbounded).
pub fn row_range(opts: &ReadOptions) -> (Vec<u8>, Option<Vec<u8>>) {
    let mut start = opts.start_row.clone();
    let mut stop = (!opts.stop_row.is_empty()).then(|| opts.stop_row.clone());
    if let Some(p) = &opts.prefix {
        if p.as_slice() > start.as_slice() {
            start = p.clone();
        }
        if let Some(ps) = prefix_successor(p) {
            stop = Some(match stop {
                Some(s) if s < ps => s,
                _ => ps,
            });
        }
    }
    (start, stop)
}

/// Why a file is not read, or `None` to read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Skip {
    TimeRange,
    Ttl,
    KeyRange,
    Bloom,
}

/// Row constraint of a file selection.
enum RowFilter<'a> {
    /// A Get: exactly this row, with this Bloom query.
    Get(&'a [u8], BloomQuery<'a>),
    /// A scan of `[start, stop)`.
    Range(&'a [u8], Option<&'a [u8]>),
}

/// Whether file `index` of `store` (`reader`) can be left unread (its row and time bounds,
/// worked out once per file: [`HFileReader::bounds`]; its Bloom filter for a get).
fn should_skip(
    reader: &HFileReader,
    index: usize,
    store: &Store,
    opts: &ReadOptions,
    rows: &RowFilter<'_>,
) -> Result<Option<Skip>> {
    let bounds = reader.bounds();
    if let Some((fmin, fmax)) = bounds.time_range {
        let tr = opts.time_range;
        // HBase `TimeRange.includesTimeRange` (file range inclusive). An all-time query never
        // skips (HBase would skip a file holding only timestamps outside [0, i64::MAX)).
        let overlaps = fmin < tr.max && fmax >= tr.min;
        if !tr.is_all_time() && !overlaps {
            return Ok(Some(Skip::TimeRange));
        }
        // Whole-file expiry is only safe when no version survives TTL.
        if store.settings.min_versions == 0
            && fmax < oldest_unexpired_ts(&store.settings, opts.raw, opts.now_ms)
        {
            return Ok(Some(Skip::Ttl));
        }
    }
    if reader.is_empty() {
        return Ok(Some(Skip::KeyRange));
    }
    let (first, last) = (bounds.first_row.as_deref(), bounds.last_row.as_deref());
    match rows {
        RowFilter::Get(row, query) => {
            let outside = |bound: Option<&[u8]>, side| {
                bound.is_some_and(|b| hfkit_format::bytes::compare_bytes(row, b) == side)
            };
            if outside(first, Ordering::Less) || outside(last, Ordering::Greater) {
                return Ok(Some(Skip::KeyRange));
            }
            if !reader
                .might_contain(*query)
                .map_err(|e| ReadError::format(&file_label(reader, index), e))?
            {
                return Ok(Some(Skip::Bloom));
            }
        }
        RowFilter::Range(start, stop) => {
            if last.is_some_and(|l| l < *start)
                || stop.is_some_and(|s| first.is_some_and(|f| f >= s))
            {
                return Ok(Some(Skip::KeyRange));
            }
        }
    }
    Ok(None)
}

/// The files of `store` a read needs, counting the others in `stats`.
fn select_files<'s>(
    store: &'s Store,
    opts: &ReadOptions,
    rows: &RowFilter<'_>,
    stats: &mut ReadStats,
) -> Result<Vec<(&'s HFileReader, u64)>> {
    let mut out = Vec::new();
    for (i, (reader, seq)) in store.files.iter().enumerate() {
        stats.files_considered += 1;
        match should_skip(reader, i, store, opts, rows)? {
            None => {
                stats.files_read += 1;
                out.push((reader.as_ref(), *seq));
            }
            Some(Skip::TimeRange) => stats.skipped_time_range += 1,
            Some(Skip::Ttl) => stats.skipped_ttl += 1,
            Some(Skip::KeyRange) => stats.skipped_key_range += 1,
            Some(Skip::Bloom) => stats.skipped_bloom += 1,
        }
    }
    Ok(out)
}

/// One store being read: its merge and its matcher.
struct Cursor<'r> {
    family: &'r [u8],
    merge: MergeScanner<'r>,
    matcher: QueryMatcher,
    column: Vec<u8>,
}

impl<'r> Cursor<'r> {
    fn new(
        store: &'r Store,
        files: Vec<(&'r HFileReader, u64)>,
        opts: &ReadOptions,
        columns: Option<Vec<Vec<u8>>>,
    ) -> Result<Cursor<'r>> {
        let matcher = QueryMatcher::new(MatcherConfig {
            settings: store.settings.clone(),
            max_versions: opts.max_versions,
            time_range: opts.time_range,
            raw: opts.raw,
            now_ms: opts.now_ms,
            columns,
        });
        Ok(Cursor {
            family: &store.family,
            merge: MergeScanner::new(files)?,
            matcher,
            column: Vec::new(),
        })
    }

    fn peek_row(&self) -> Option<&[u8]> {
        self.merge.peek().map(|c| c.row)
    }

    /// Consumes every cell of `row` (the cursor must be on it or past it), handing the ones
    /// the matcher includes to `out` (while they are still in the decoded block).
    fn read_row(&mut self, row: &[u8], out: &mut impl FnMut(&CellRef<'_>)) -> Result<()> {
        self.matcher.new_row();
        loop {
            let Some(c) = self.merge.peek() else {
                return Ok(());
            };
            if !equal_bytes(c.row, row) {
                return Ok(());
            }
            if !equal_bytes(c.family, self.family) {
                return Err(ReadError::WrongFamily {
                    file: self.merge.peek_label().unwrap_or("?").to_string(),
                    expected: String::from_utf8_lossy(self.family).into_owned(),
                    found: String::from_utf8_lossy(c.family).into_owned(),
                });
            }
            let code = self.matcher.matches(&c);
            if code.includes() {
                out(&c);
            }
            match code {
                MatchCode::Include | MatchCode::Skip => self.merge.advance()?,
                MatchCode::SeekNextRow | MatchCode::IncludeAndSeekNextRow => {
                    return self.skip_row(row);
                }
                MatchCode::SeekNextCol | MatchCode::IncludeAndSeekNextCol => {
                    // As HBase (HBASE-18471): from an empty-qualifier cell other than a
                    // DeleteFamily, only the cell itself is passed, so that the row's
                    // DeleteFamily / DeleteFamilyVersion markers are still seen.
                    if c.qualifier.is_empty() && c.cell_type != CellType::DeleteFamily {
                        self.merge.advance()?;
                    } else {
                        self.column.clear();
                        self.column.extend_from_slice(c.qualifier);
                        self.skip_column(row)?;
                    }
                }
            }
        }
    }

    fn skip_column(&mut self, row: &[u8]) -> Result<()> {
        loop {
            self.merge.advance()?;
            match self.merge.peek() {
                Some(c)
                    if equal_bytes(c.row, row)
                        && equal_bytes(c.family, self.family)
                        && equal_bytes(c.qualifier, &self.column) => {}
                _ => return Ok(()),
            }
        }
    }

    fn skip_row(&mut self, row: &[u8]) -> Result<()> {
        loop {
            self.merge.advance()?;
            match self.merge.peek() {
                Some(c) if equal_bytes(c.row, row) => {}
                _ => return Ok(()),
            }
        }
    }
}

/// Stores to read for `opts`, in family order, with their column selections.
fn stores_to_read<'s>(
    stores: &'s [Store],
    opts: &ReadOptions,
) -> Vec<(&'s Store, Option<Vec<Vec<u8>>>)> {
    let mut v: Vec<_> = stores
        .iter()
        .filter_map(|s| family_columns(opts, &s.family).map(|cols| (s, cols)))
        .collect();
    v.sort_by(|a, b| a.0.family.cmp(&b.0.family));
    v
}

/// [`stores_to_read`] for a read of every column (no `columns` in its options) of stores
/// already in family order, as a table's regions keep them: the stores themselves, with no
/// list made (a get asks once per row).
fn all_stores_in_order(stores: &[Store], opts: &ReadOptions) -> bool {
    opts.columns.is_empty() && stores.is_sorted_by(|a, b| a.family <= b.family)
}

/// Reads one row. See [`get_with_stats`].
pub fn get(stores: &[Store], row: &[u8], opts: &ReadOptions) -> Result<Vec<Cell>> {
    Ok(get_with_stats(stores, row, opts)?.0)
}

/// Reads one row of `stores` (start/stop/prefix/limit/reverse are ignored), skipping files by
/// time range, TTL, row range and Bloom filter (a RowCol query when exactly one column of the
/// family is requested, else a Row query). Returns the cells and the file statistics.
pub fn get_with_stats(
    stores: &[Store],
    row: &[u8],
    opts: &ReadOptions,
) -> Result<(Vec<Cell>, ReadStats)> {
    validate(opts)?;
    let mut stats = ReadStats::default();
    let mut cells = Vec::new();
    // Made for the first store with a file to read: most gets of absent rows read none.
    let mut seek_key = Vec::new();
    let listed;
    let to_read: &mut dyn Iterator<Item = (&Store, Option<Vec<Vec<u8>>>)> =
        if all_stores_in_order(stores, opts) {
            &mut stores.iter().map(|s| (s, None))
        } else {
            listed = stores_to_read(stores, opts);
            &mut listed.into_iter()
        };
    for (store, columns) in to_read {
        let query = match columns.as_deref() {
            Some([q]) => BloomQuery::RowCol {
                row,
                family: &store.family,
                qualifier: q,
            },
            _ => BloomQuery::Row(row),
        };
        let files = select_files(store, opts, &RowFilter::Get(row, query), &mut stats)?;
        if files.is_empty() {
            continue;
        }
        if seek_key.is_empty() {
            seek_key = first_on_row(row);
        }
        let mut cursor = Cursor::new(store, files, opts, columns)?;
        cursor.merge.seek(&seek_key)?;
        if cursor.peek_row() == Some(row) {
            cursor.read_row(row, &mut |c| cells.push(c.to_owned()))?;
        }
    }
    Ok((cells, stats))
}

/// Scans rows of `stores` per `opts`: rows in `[start_row, stop_row)` ∩ `prefix`, at most
/// `limit` of them, rows without cells left out; in descending order when `reverse`.
///
/// Reverse scans make a first forward pass that collects the row keys of the range (memory:
/// one copy of every row key in the range), then read each row with a seek, last row first.
pub fn scan<'s>(stores: &'s [Store], opts: &ReadOptions) -> Result<RowScanner<'s>> {
    validate(opts)?;
    let (start, stop) = row_range(opts);
    let empty = stop.as_ref().is_some_and(|s| *s <= start);
    let mut stats = ReadStats::default();
    let mut cursors = Vec::new();
    if !empty {
        for (store, columns) in stores_to_read(stores, opts) {
            let files = select_files(
                store,
                opts,
                &RowFilter::Range(&start, stop.as_deref()),
                &mut stats,
            )?;
            if files.is_empty() {
                continue;
            }
            let mut cursor = Cursor::new(store, files, opts, columns)?;
            if start.is_empty() {
                cursor.merge.seek_to_first()?;
            } else {
                cursor.merge.seek(&first_on_row(&start))?;
            }
            cursors.push(cursor);
        }
    }
    let mut scanner = RowScanner {
        cursors,
        stop,
        limit: opts.limit,
        returned: 0,
        stats,
        done: empty,
        row: Vec::new(),
        buf: RowBuf::new(),
        has_row: false,
        reverse_rows: None,
    };
    if opts.reverse && !empty {
        scanner.collect_reverse_rows()?;
    }
    Ok(scanner)
}

/// Rows of a scan; also an [`Iterator`] of `Result<Row>`. Stops after the first error.
pub struct RowScanner<'s> {
    cursors: Vec<Cursor<'s>>,
    stop: Option<Vec<u8>>,
    limit: Option<usize>,
    returned: usize,
    stats: ReadStats,
    done: bool,
    row: Vec<u8>,
    /// The cells of the row last returned.
    buf: RowBuf,
    /// `buf` holds a row that [`RowScanner::current_row`] returns.
    has_row: bool,
    /// Reverse scans: the rows still to read, in ascending order (popped from the end).
    reverse_rows: Option<Vec<Vec<u8>>>,
}

impl RowScanner<'_> {
    /// Which files the scan reads and which it skipped.
    pub fn stats(&self) -> ReadStats {
        self.stats
    }

    fn beyond_stop(&self, row: &[u8]) -> bool {
        self.stop.as_deref().is_some_and(|s| row >= s)
    }

    fn collect_reverse_rows(&mut self) -> Result<()> {
        let mut rows: Vec<Vec<u8>> = Vec::new();
        for i in 0..self.cursors.len() {
            while let Some(r) = self.cursors[i].peek_row() {
                if self.beyond_stop(r) {
                    break;
                }
                let r = r.to_vec();
                self.cursors[i].skip_row(&r)?;
                rows.push(r);
            }
        }
        rows.sort();
        rows.dedup();
        self.reverse_rows = Some(rows);
        Ok(())
    }

    /// The next row with at least one cell as an owned [`Row`], or `None` at the end.
    pub fn next_row(&mut self) -> Result<Option<Row>> {
        Ok(self.next_row_ref()?.map(|r| r.to_row()))
    }

    /// The next row with at least one cell, its cells borrowed from the scanner's buffer (no
    /// allocation per cell), or `None` at the end.
    pub fn next_row_ref(&mut self) -> Result<Option<RowRef<'_>>> {
        self.advance_row()?;
        Ok(self.current_row())
    }

    /// The row the last [`RowScanner::advance_row`] that returned true moved to.
    pub fn current_row(&self) -> Option<RowRef<'_>> {
        self.has_row.then(|| self.buf.as_row_ref())
    }

    /// Moves to the next row with at least one cell ([`RowScanner::current_row`]); false at
    /// the end. After an error the scan is over.
    pub fn advance_row(&mut self) -> Result<bool> {
        self.has_row = false;
        let r = self.advance_row_inner();
        match r {
            Ok(found) => self.has_row = found,
            Err(_) => self.done = true,
        }
        r
    }

    fn advance_row_inner(&mut self) -> Result<bool> {
        loop {
            if self.done || self.limit.is_some_and(|l| self.returned >= l) {
                self.done = true;
                return Ok(false);
            }
            let mut row = std::mem::take(&mut self.row);
            row.clear();
            if let Some(pending) = self.reverse_rows.as_mut() {
                let Some(r) = pending.pop() else {
                    self.done = true;
                    return Ok(false);
                };
                row = r;
                let key = first_on_row(&row);
                for c in &mut self.cursors {
                    c.merge.seek(&key)?;
                }
            } else {
                let mut best: Option<&[u8]> = None;
                for c in &self.cursors {
                    if let Some(r) = c.peek_row() {
                        if best.is_none_or(|b| r < b) {
                            best = Some(r);
                        }
                    }
                }
                let Some(best) = best else {
                    self.done = true;
                    return Ok(false);
                };
                row.extend_from_slice(best);
                if self.beyond_stop(&row) {
                    self.done = true;
                    return Ok(false);
                }
            }
            let buf = &mut self.buf;
            buf.start_row(&row);
            for c in &mut self.cursors {
                if c.peek_row().is_some_and(|r| equal_bytes(r, &row)) {
                    c.read_row(&row, &mut |cell| buf.push(cell))?;
                }
            }
            self.row = row;
            if !buf.is_empty() {
                self.returned += 1;
                return Ok(true);
            }
        }
    }
}

impl Iterator for RowScanner<'_> {
    type Item = Result<Row>;

    fn next(&mut self) -> Option<Result<Row>> {
        self.next_row().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_range() {
        assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_successor(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_successor(b"\xff\xff"), None);
        let opts = ReadOptions {
            start_row: b"a".to_vec(),
            stop_row: b"abz".to_vec(),
            prefix: Some(b"ab".to_vec()),
            ..Default::default()
        };
        assert_eq!(row_range(&opts), (b"ab".to_vec(), Some(b"abz".to_vec())));
    }
}
