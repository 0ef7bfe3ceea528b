//! The scan behind [`append_records`](super::HFileWriter::append_records) (`records.rs`):
//! which of the caller's records are *plain* ones that the open block takes as they are, read
//! with their checks, Bloom keys and statistics, and the parsing of one record's lengths and
//! key fields. `formats/hfile.md` §"Data blocks".

use std::cmp::Ordering;

use super::key::KeyShape;
use super::stats::CellStats;
use crate::bloom::BloomWriter;
use crate::bytes::{compare_bytes, equal_bytes, vlong_total_len, Cursor};
use crate::cell::{CellRef, CellType, MAX_KEY_LEN, MAX_ROW_LEN, MAX_VALUE_LEN};
use crate::encoding::EncodingContext;
use crate::error::{FormatError, Result};

/// What `records` calls its positions in errors.
const WHAT: &str = "cell record";

/// The cell types of plain records.
const PUT: u8 = CellType::Put.code();
const DELETE: u8 = CellType::Delete.code();
const DELETE_COLUMN: u8 = CellType::DeleteColumn.code();

/// The shortest key of a non-empty family: row length, family length, one family byte,
/// timestamp and type.
const KEY_MIN: usize = 2 + 1 + 1 + 8 + 1;

/// The last appended cell, as [`scan_plain`] compares the next one with it.
#[derive(Clone, Copy)]
pub(super) struct Prev<'a> {
    row: &'a [u8],
    family: &'a [u8],
    /// The key's family length byte and family (every plain record has the same).
    family_head: &'a [u8],
    qualifier: &'a [u8],
    /// [`leading_word`] of the qualifier.
    qualifier_word: u64,
    timestamp: i64,
    type_code: u8,
}

impl<'a> Prev<'a> {
    pub(super) fn of(shape: KeyShape, key: &'a [u8]) -> Option<Prev<'a>> {
        let v = shape.view(key)?;
        let column_at = 2 + v.row.len();
        let qualifier_at = column_at + 1 + v.family.len();
        Some(Prev {
            row: v.row,
            family: v.family,
            family_head: key.get(column_at..qualifier_at)?,
            qualifier: v.qualifier,
            qualifier_word: leading_word(key, qualifier_at, v.qualifier.len())?,
            timestamp: v.timestamp,
            type_code: v.type_code,
        })
    }
}

/// What [`scan_plain`] works with besides the records.
pub(super) struct ScanState<'w> {
    pub(super) ctx: EncodingContext,
    /// Bytes in the open block, and the size at which it is cut.
    pub(super) block_bytes: usize,
    pub(super) block_size: usize,
    pub(super) bloom: Option<&'w mut BloomWriter>,
    pub(super) stats: &'w mut CellStats,
}

/// What [`scan_plain`] accepted: the records `at .. end`.
pub(super) struct Scan {
    pub(super) end: usize,
    /// Whether it stopped at a plain record that starts a new block.
    pub(super) cut: bool,
    pub(super) cells: u64,
    /// The offset of the last accepted record (when `cells > 0`).
    pub(super) last_at: usize,
    /// The offset of the record that became the file's biggest cell, if one did.
    pub(super) biggest_at: Option<usize>,
}

/// Reads `records` from `at` while each is a *plain* record the open block takes as it is,
/// and offers each to the general Bloom and counts it into the statistics as `append` would.
/// A plain record is a whole one, of the last cell's (non-empty) family, with a row within
/// HBase's limit, a key and value within theirs, a Put, Delete or DeleteColumn (the
/// delete-family kinds go to the delete-family Bloom), no tags and a one-byte sequence id
/// (the forms `append` writes the same way), in order after the cell before it, and not one
/// that would start a new block (a new key in a block that holds `block_size` bytes). It
/// stops at the first record that is not; `append` then takes that one (and refuses it if it
/// must).
pub(super) fn scan_plain<'a>(
    records: &'a [u8],
    at: usize,
    prev: Prev<'a>,
    st: ScanState<'_>,
) -> Scan {
    match (st.ctx.include_tags, st.ctx.include_mvcc) {
        (true, true) => scan_layout::<true, true>(records, at, prev, st),
        (true, false) => scan_layout::<true, false>(records, at, prev, st),
        (false, true) => scan_layout::<false, true>(records, at, prev, st),
        (false, false) => scan_layout::<false, false>(records, at, prev, st),
    }
}

/// [`scan_plain`] for one record layout (tags length and sequence id fields present or not).
///
/// The hot loop of `append_records` (every cell; each of these measured on lineitem cells,
/// `examples/format_bench.rs`): what does not change from record to record (the family, the
/// layout, the Bloom's kind) is read once, the family compared as one word; rows are first
/// tested for equality, and a row's qualifiers ordered by their leading 8 bytes as one word
/// when those differ; the tags length and sequence id are read as one word and late, after
/// the key's checks (the load of a record's end waits for its lengths, and it is mostly the
/// first touch of a new cache line); the statistics are kept in locals ([`Tally`]) and added
/// to the file's once; the Bloom is offered only a row's first cell when it keys by row. A
/// row's further Puts, when the Bloom keys by row, go through [`scan_same_row`], a loop of
/// half the instructions.
#[inline(never)]
fn scan_layout<'a, const TAGS: bool, const MVCC: bool>(
    records: &'a [u8],
    at: usize,
    prev: Prev<'a>,
    st: ScanState<'_>,
) -> Scan {
    let ScanState {
        ctx: _,
        block_bytes,
        block_size,
        mut bloom,
        stats,
    } = st;
    let mut out = Scan {
        end: at,
        cut: false,
        cells: 0,
        last_at: at,
        biggest_at: None,
    };
    let family = prev.family;
    if family.is_empty() {
        return out;
    }
    // The key's family length byte and family, as every plain record has them; when they
    // fit in a word, compared as one (the low bytes of a little-endian load).
    let family_head = prev.family_head;
    let family_word = (family_head.len() <= 8).then(|| {
        let mut w = [0u8; 8];
        w[..family_head.len()].copy_from_slice(family_head);
        let mask = u64::MAX >> (8 * (8 - family_head.len()));
        (mask, u64::from_le_bytes(w))
    });
    let tail = tail_len::<TAGS, MVCC>();
    // The previous cell's row, qualifier (and its leading word), timestamp and type.
    let (mut prev_row, mut prev_qualifier) = (prev.row, prev.qualifier);
    let mut prev_word = prev.qualifier_word;
    let (mut prev_ts, mut prev_type) = (prev.timestamp, prev.type_code);
    // Whether a row's later cells add nothing to the Bloom (`skips_same_row`: one keyed by
    // row, once it holds a key); it can only turn true, after an add.
    let mut skips_same_row = bloom.as_ref().is_none_or(|b| b.skips_same_row());
    // Records from this offset on start a new block when they start a new key: the block
    // holds `block_size` bytes by then.
    let cut_from = (block_size + at).saturating_sub(block_bytes);
    let mut tally = Tally::new(at, stats.biggest_len);
    let huge = records.len() > MAX_VALUE_LEN;
    let mut tries = SameRowTries::default();
    let mut pos = at;
    while let Some((key_len, value_len)) = record_lengths(records, pos) {
        let key_at = pos + 8;
        let value_at = key_at + key_len;
        let tail_at = value_at + value_len;
        // The record's end: within `records` (the tail's fields are read further down, once
        // the key is checked, so that the load has time).
        if tail_at + tail > records.len() {
            break;
        }
        // (A whole record of a buffer under 2 GiB has its key and value within HBase's
        // limits, so those two are tested only for larger buffers.)
        if key_len < KEY_MIN || (huge && (key_len > MAX_KEY_LEN || value_len > MAX_VALUE_LEN)) {
            break;
        }
        // u16 row length | row | u8 family length | family | qualifier | i64 ts | u8 type,
        // with the file's family.
        // SAFETY: `key_at .. value_at` lies within `records`: the record's end, after it,
        // does (tested above).
        let key = unsafe { records.get_unchecked(key_at..value_at) };
        let row_len = usize::from(u16::from_be_bytes([key[0], key[1]]));
        let column_at = 2 + row_len;
        let qualifier_at = column_at + family_head.len();
        if row_len > MAX_ROW_LEN || qualifier_at + 9 > key_len {
            break;
        }
        // The key holds 8 bytes from `column_at` (at least the family head and the 9 bytes
        // of timestamp and type follow it).
        let head_word =
            u64::from_le_bytes(key[column_at..column_at + 8].try_into().unwrap_or_default());
        let same_family = match family_word {
            Some((mask, word)) => head_word & mask == word,
            None => equal_bytes(&key[column_at..qualifier_at], family_head),
        };
        if !same_family {
            break;
        }
        let row = &key[2..column_at];
        let qualifier = &key[qualifier_at..key_len - 9];
        // The key has the timestamp's 8 bytes after the qualifier.
        let word = leading_word(key, qualifier_at, qualifier.len()).unwrap_or_default();
        let mut ts = [0u8; 8];
        ts.copy_from_slice(&key[key_len - 9..key_len - 1]);
        let timestamp = i64::from_be_bytes(ts);
        let type_code = key[key_len - 1];
        if type_code != PUT && type_code != DELETE && type_code != DELETE_COLUMN {
            break;
        }
        // Rows first as equal or not (a row's cells are most of the records), then the
        // qualifiers by their leading words, which decide unless those are equal.
        let same_row = equal_bytes(prev_row, row);
        let order = if !same_row {
            compare_bytes(prev_row, row)
        } else if prev_word != word {
            prev_word.cmp(&word)
        } else {
            compare_bytes(prev_qualifier, qualifier)
                .then(timestamp.cmp(&prev_ts))
                .then(type_code.cmp(&prev_type))
        };
        match order {
            Ordering::Greater => break,
            Ordering::Less if pos >= cut_from => {
                out.cut = true;
                break;
            }
            _ => {}
        }
        let Some(seq_id) = plain_tail::<TAGS, MVCC>(records, tail_at) else {
            break;
        };
        if !(same_row && skips_same_row) {
            if let Some(b) = bloom.as_deref_mut() {
                let cell = CellRef {
                    row,
                    family,
                    qualifier,
                    timestamp,
                    cell_type: CellType::from_code(type_code).unwrap_or(CellType::Put),
                    value: &records[value_at..tail_at],
                    tags: &[],
                    seq_id: u64::from(seq_id),
                };
                b.add_in_row(&cell, same_row);
                skips_same_row = b.skips_same_row();
            }
        }
        tally.note(pos, key_len, value_len, timestamp, type_code, seq_id);
        pos = tail_at + tail;
        (prev_row, prev_qualifier, prev_word) = (row, qualifier, word);
        (prev_ts, prev_type) = (timestamp, type_code);
        if skips_same_row && !huge && tries.now() {
            // The row's further Puts, in the lean loop; it stops at the first record it does
            // not take for sure, which this loop then reads in full.
            let row_head = &key[..qualifier_at];
            let taken = tally.cells;
            pos = scan_same_row::<TAGS, MVCC>(
                records, pos, row_head, word, timestamp, cut_from, &mut tally,
            );
            let took = tally.cells > taken;
            tries.took(took);
            if took {
                // The last record taken is the previous cell now (its row is this one's).
                let Some((last, _)) = key_of(records, tally.last_at) else {
                    break;
                };
                let Some(q) = last.get(qualifier_at..last.len().saturating_sub(9)) else {
                    break;
                };
                prev_qualifier = q;
                prev_word = leading_word(last, qualifier_at, q.len()).unwrap_or_default();
                prev_type = PUT;
            }
        }
    }
    out.last_at = tally.last_at;
    out.cells = tally.cells;
    out.biggest_at = tally.biggest_at;
    out.end = pos;
    tally.add_to(stats, (pos - at) as u64, tail);
    out
}

/// When [`scan_layout`] hands a row's further cells to [`scan_same_row`]: after each record
/// it takes, unless calls took none of late. After such a call the next 1, 2, 4 ... 64 records
/// (doubling with each call in a row that takes none) do without, and a call that takes some
/// ends the wait. A file of one-cell rows, or of rows whose further cells the lean loop leaves
/// (other versions of a column, deletes), then pays for a call (~11 ns) every 64 records
/// rather than for every row.
#[derive(Default)]
pub(super) struct SameRowTries {
    wait: u32,
    skip: u32,
}

impl SameRowTries {
    /// Whether to call after this record.
    pub(super) fn now(&mut self) -> bool {
        if self.skip == 0 {
            return true;
        }
        self.skip -= 1;
        false
    }

    /// What the call took: some records or none.
    pub(super) fn took(&mut self, some: bool) {
        if some {
            self.wait = 0;
        } else {
            self.wait = (self.wait * 2).clamp(1, 64);
            self.skip = self.wait;
        }
    }
}

/// The bytes a record of the layout has after its value: the tags length, the sequence id
/// (a plain record's is one byte).
#[inline(always)]
const fn tail_len<const TAGS: bool, const MVCC: bool>() -> usize {
    2 * TAGS as usize + MVCC as usize
}

/// The sequence id of the record whose value ends at `tail_at` (0 without MVCC), if its tail
/// is a plain record's: no tags, a one-byte sequence id. Reads the last byte before the tail
/// (there is one: the key) and the tail as one word.
#[inline(always)]
fn plain_tail<const TAGS: bool, const MVCC: bool>(records: &[u8], tail_at: usize) -> Option<u8> {
    let tail = tail_len::<TAGS, MVCC>();
    let w = records.get(tail_at - 1..tail_at + tail)?;
    let mut tail_word = [0u8; 4];
    tail_word[..1 + tail].copy_from_slice(w);
    let tail_word = u32::from_be_bytes(tail_word) >> (8 * (3 - tail));
    if TAGS && (tail_word >> (8 * usize::from(MVCC))) & 0xffff != 0 {
        return None;
    }
    let seq_id = if MVCC { tail_word as u8 } else { 0 };
    (seq_id < 0x80).then_some(seq_id)
}

/// A row's further cells after the one [`scan_layout`] took last (at `tally.last_at`), while
/// each is, for sure, a plain Put that goes into the open block: a whole record whose key
/// starts with `row_head` (the row length, the row and the family head of the cell before),
/// whose qualifier is above the one before (so the cell is in order and a new key; first by
/// the qualifiers' leading words, the last one's is `word`), with the timestamp of the cell
/// before, at an offset before `cut_from`, with a plain tail. Counts each into `tally` and
/// returns where it stopped; the record there (if any) is `scan_layout`'s to read in full.
/// The caller's Bloom must key by row and hold this row already (a row's further cells add
/// nothing to it), and `records` be under 2 GiB (its records' keys and values are within
/// HBase's limits).
fn scan_same_row<const TAGS: bool, const MVCC: bool>(
    records: &[u8],
    at: usize,
    row_head: &[u8],
    word: u64,
    timestamp: i64,
    cut_from: usize,
    tally: &mut Tally,
) -> usize {
    let rows = SameRow {
        records,
        cut_from,
        word,
        prev_at: tally.last_at,
        timestamp,
    };
    // The row head compared as two words of its size or less, or as bytes when longer.
    let (pos, run) = match row_head.len() {
        16..=32 => rows.scan::<TAGS, MVCC, _>(at, HeadWords::<u128>::of(row_head)),
        8..=15 => rows.scan::<TAGS, MVCC, _>(at, HeadWords::<u64>::of(row_head)),
        4..=7 => rows.scan::<TAGS, MVCC, _>(at, HeadWords::<u32>::of(row_head)),
        _ => rows.scan::<TAGS, MVCC, _>(at, row_head),
    };
    if run.cells() > 0 {
        tally.add_puts(records, at..pos, tail_len::<TAGS, MVCC>(), timestamp, &run);
    }
    pos
}

/// [`scan_same_row`]'s loop ([`scan`](Self::scan)), for one layout and one way of comparing
/// row heads, kept apart so that its few values stay in registers: on lineitem cells it runs
/// 90 instructions a cell where `scan_layout` runs 180 (callgrind, `examples/write_probe`).
struct SameRow<'a> {
    records: &'a [u8],
    cut_from: usize,
    /// The leading word of the last cell's qualifier.
    word: u64,
    /// The offset of the last cell's record.
    prev_at: usize,
    /// The last cell's timestamp, which the row's further cells must have: a row's cells
    /// mostly share one (an import's do), and the loop then keeps no time range.
    timestamp: i64,
}

/// What [`SameRow::scan`] took: the [`Tally`] fields it keeps, in the form its loop keeps
/// them.
struct PutRun {
    /// `key_len + 2^32` summed over the records taken: the keys' bytes in the low 32 bits
    /// (`records` is under 2 GiB), the count of cells in the high ones. One add a cell.
    keys_and_cells: u64,
    last_at: usize,
    /// The biggest cell's size among them.
    biggest: i64,
    max_seq: u8,
}

impl PutRun {
    fn cells(&self) -> u64 {
        self.keys_and_cells >> 32
    }

    fn key_sum(&self) -> u64 {
        self.keys_and_cells & u64::from(u32::MAX)
    }
}

impl SameRow<'_> {
    #[inline(never)]
    fn scan<const TAGS: bool, const MVCC: bool, H: RowHead>(
        &self,
        at: usize,
        row_head: H,
    ) -> (usize, PutRun) {
        let records = self.records;
        let tail = tail_len::<TAGS, MVCC>();
        let head_len = row_head.len();
        let mut word = self.word;
        let mut run = PutRun {
            keys_and_cells: 0,
            last_at: self.prev_at,
            biggest: 0,
            max_seq: 0,
        };
        // The timestamp as its bytes in the key, loaded as a word.
        let timestamp = u64::from_ne_bytes(self.timestamp.to_be_bytes());
        let mut pos = at;
        while let Some((key_len, value_len)) = record_lengths(records, pos) {
            let key_at = pos + 8;
            let tail_at = key_at + key_len + value_len;
            if tail_at + tail > records.len() || key_len < head_len + 9 || pos >= self.cut_from {
                break;
            }
            // SAFETY: the key lies within `records`: the record's end, after it, does.
            let key = unsafe { records.get_unchecked(key_at..key_at + key_len) };
            if !row_head.starts(key) {
                break;
            }
            let next_word = leading_word(key, head_len, key_len - 9 - head_len).unwrap_or_default();
            let ts =
                u64::from_ne_bytes(key[key_len - 9..key_len - 1].try_into().unwrap_or_default());
            if next_word < word
                || (next_word == word && !qualifier_after(records, run.last_at, key, head_len))
                || ts != timestamp
                || key[key_len - 1] != PUT
            {
                break;
            }
            let Some(seq_id) = plain_tail::<TAGS, MVCC>(records, tail_at) else {
                break;
            };
            run.keys_and_cells += key_len as u64 + (1 << 32);
            run.biggest = run.biggest.max((12 + key_len + value_len) as i64);
            run.max_seq = run.max_seq.max(seq_id);
            run.last_at = pos;
            word = next_word;
            pos = tail_at + tail;
        }
        (pos, run)
    }
}

/// Whether `key`'s qualifier, after its row head of `head_len` bytes, is above that of the
/// record at `prev_at`, which has the same row head (their leading words are equal).
#[cold]
#[inline(never)]
fn qualifier_after(records: &[u8], prev_at: usize, key: &[u8], head_len: usize) -> bool {
    let Some((prev, _)) = key_of(records, prev_at) else {
        return false;
    };
    let prev_qualifier = prev.get(head_len..prev.len().saturating_sub(9));
    let qualifier = key.get(head_len..key.len().saturating_sub(9));
    match (prev_qualifier, qualifier) {
        (Some(p), Some(q)) => compare_bytes(p, q) == Ordering::Less,
        _ => false,
    }
}

/// A row head (the row length, row and family head that start a key) as [`SameRow::scan`]
/// compares keys with it.
trait RowHead: Copy {
    fn len(&self) -> usize;
    /// Whether `key`, which has at least `len` bytes, starts with this row head.
    fn starts(&self, key: &[u8]) -> bool;
}

/// A row head of one to two words: its first and its last word (overlapping in the middle).
#[derive(Clone, Copy)]
struct HeadWords<W> {
    first: W,
    last: W,
    len: usize,
}

/// A row head longer than two words: compared byte for byte.
impl RowHead for &[u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }

    fn starts(&self, key: &[u8]) -> bool {
        key.get(..self.len()) == Some(*self)
    }
}

macro_rules! head_words {
    ($w:ty) => {
        impl HeadWords<$w> {
            const SIZE: usize = std::mem::size_of::<$w>();

            /// The first word of `b`, which has one.
            #[inline(always)]
            fn first(b: &[u8]) -> $w {
                <$w>::from_ne_bytes(b[..Self::SIZE].try_into().unwrap_or_default())
            }

            /// The last word of `b`, which has one.
            #[inline(always)]
            fn last(b: &[u8]) -> $w {
                <$w>::from_ne_bytes(b[b.len() - Self::SIZE..].try_into().unwrap_or_default())
            }

            /// `head`, of one to two words.
            fn of(head: &[u8]) -> Self {
                HeadWords {
                    first: Self::first(head),
                    last: Self::last(head),
                    len: head.len(),
                }
            }
        }

        impl RowHead for HeadWords<$w> {
            #[inline(always)]
            fn len(&self) -> usize {
                self.len
            }

            #[inline(always)]
            fn starts(&self, key: &[u8]) -> bool {
                let head = &key[..self.len];
                Self::first(head) == self.first && Self::last(head) == self.last
            }
        }
    };
}
head_words!(u32);
head_words!(u64);
head_words!(u128);

/// The statistics of the records a scan took (`CellStats::note`'s, for cells without tags),
/// kept in locals and added to the file's once ([`add_to`](Self::add_to)).
struct Tally {
    cells: u64,
    /// The offset of the last record taken (the scan's start while none is).
    last_at: usize,
    key_sum: u64,
    /// The biggest cell's size so far (the file's before the scan), and the offset of the
    /// record that became it during the scan, if one did.
    biggest: i64,
    biggest_at: Option<usize>,
    ts_min: i64,
    ts_max: i64,
    put_min: i64,
    delete_column: bool,
    max_seq: u8,
}

impl Tally {
    fn new(at: usize, biggest: i64) -> Tally {
        Tally {
            cells: 0,
            last_at: at,
            key_sum: 0,
            biggest,
            biggest_at: None,
            ts_min: i64::MAX,
            ts_max: i64::MIN,
            put_min: i64::MAX,
            delete_column: false,
            max_seq: 0,
        }
    }

    /// Counts the record at `at`.
    #[inline(always)]
    fn note(
        &mut self,
        at: usize,
        key_len: usize,
        value_len: usize,
        timestamp: i64,
        type_code: u8,
        seq_id: u8,
    ) {
        self.key_sum += key_len as u64;
        let size = (12 + key_len + value_len) as i64;
        if size > self.biggest {
            self.biggest = size;
            self.biggest_at = Some(at);
        }
        self.max_seq = self.max_seq.max(seq_id);
        self.ts_min = self.ts_min.min(timestamp);
        self.ts_max = self.ts_max.max(timestamp);
        if type_code == PUT {
            self.put_min = self.put_min.min(timestamp);
        } else {
            self.delete_column |= type_code == DELETE_COLUMN;
        }
        self.last_at = at;
        self.cells += 1;
    }

    /// Counts the Puts a [`SameRow::scan`] took, the records in `taken` (with `tail` bytes
    /// after each value), all at `timestamp`, the last counted cell's.
    fn add_puts(
        &mut self,
        records: &[u8],
        taken: std::ops::Range<usize>,
        tail: usize,
        timestamp: i64,
        run: &PutRun,
    ) {
        self.cells += run.cells();
        self.key_sum += run.key_sum();
        self.last_at = run.last_at;
        if run.biggest > self.biggest {
            // The first record of that size became the biggest cell.
            self.biggest = run.biggest;
            let mut pos = taken.start;
            while let Some((key_len, value_len)) =
                record_lengths(records, pos).filter(|_| pos < taken.end)
            {
                if (12 + key_len + value_len) as i64 == run.biggest {
                    self.biggest_at = Some(pos);
                    break;
                }
                pos += 8 + key_len + value_len + tail;
            }
        }
        self.max_seq = self.max_seq.max(run.max_seq);
        // The time range holds the timestamp already (the last counted cell's); the earliest
        // Put may not, when that was a delete.
        self.put_min = self.put_min.min(timestamp);
    }

    /// Adds the records taken, `bytes` of records with `tail` bytes after each value, to the
    /// file's statistics.
    fn add_to(&self, stats: &mut CellStats, bytes: u64, tail: usize) {
        if self.cells == 0 {
            return;
        }
        stats.total_key_len += self.key_sum;
        // The values are the bytes taken less the records' other fields.
        stats.total_value_len += bytes - (8 + tail) as u64 * self.cells - self.key_sum;
        stats.biggest_len = self.biggest;
        stats.max_seq_id = stats.max_seq_id.max(u64::from(self.max_seq));
        stats.earliest_put = stats.earliest_put.min(self.put_min);
        stats.time_range.include(self.ts_min, CellType::Put);
        stats.time_range.include(self.ts_max, CellType::Put);
        if self.delete_column {
            stats.time_range.include(0, CellType::Put);
        }
    }
}

/// The first 8 bytes of the `len` bytes at `key[at..]`, big-endian, the bytes past `len`
/// zeroed: two such words compare as their slices do, unless they are equal (then the
/// slices may still differ past 8 bytes, or in length). `None` if the key has no 8 bytes
/// there (a key has at least 9 after its qualifier).
#[inline(always)]
fn leading_word(key: &[u8], at: usize, len: usize) -> Option<u64> {
    let bytes: [u8; 8] = key.get(at..at + 8)?.try_into().ok()?;
    let mask = if len >= 8 {
        u64::MAX
    } else {
        !(u64::MAX >> (8 * len))
    };
    Some(u64::from_be_bytes(bytes) & mask)
}

/// The key of the (accepted, so whole and well formed) record at `at`, and its offset.
pub(super) fn key_of(records: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let (key_len, _) = record_lengths(records, at)?;
    Some((records.get(at + 8..at + 8 + key_len)?, at + 8))
}

/// The key and value lengths of the record at `at` (its first 8 bytes), if `records` holds
/// them.
#[inline(always)]
fn record_lengths(records: &[u8], at: usize) -> Option<(usize, usize)> {
    let h = records.get(at..at + 8)?;
    Some((
        u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as usize,
        u32::from_be_bytes([h[4], h[5], h[6], h[7]]) as usize,
    ))
}

/// The cell of the record at `at` and the record's length, or why it is not a whole record
/// of this layout (the errors of `append`'s own checks come after, from `append`). A record
/// cut short is reported from its start: the bytes it needed from there and those there were.
pub(super) fn parse_record<'a>(
    records: &'a [u8],
    at: usize,
    ctx: &EncodingContext,
) -> Result<(CellRef<'a>, usize)> {
    parse_record_fields(records, at, ctx).map_err(|e| match e {
        FormatError::Truncated {
            what,
            offset,
            needed,
            available,
        } => {
            let into = offset.saturating_sub(at as u64);
            FormatError::Truncated {
                what,
                offset: at as u64,
                needed: needed.saturating_add(into),
                available: available.saturating_add(into),
            }
        }
        other => other,
    })
}

fn parse_record_fields<'a>(
    records: &'a [u8],
    at: usize,
    ctx: &EncodingContext,
) -> Result<(CellRef<'a>, usize)> {
    let mut c = Cursor::new(records.get(at..).unwrap_or_default(), at as u64, WHAT);
    let key_len = c.u32()? as usize;
    let value_len = c.u32()? as usize;
    let key_offset = c.offset();
    let key = c.take(key_len)?;
    let value = c.take(value_len)?;
    let tags = if ctx.include_tags {
        let n = c.u16()?;
        c.take(usize::from(n))?
    } else {
        &[]
    };
    let seq_id = if ctx.include_mvcc {
        let seq_at = c.offset();
        let first = c.rest().first().copied().unwrap_or(0) as i8;
        let n = vlong_total_len(first);
        let v = c.vlong()?;
        // `append` writes a sequence id in its shortest form: any other would not be this
        // cell's record. (A u64 past i64::MAX is stored as the negative i64 of its bits, as
        // `append` writes it.)
        if crate::bytes::vlong_size(v) != n {
            return Err(FormatError::corrupt(
                WHAT,
                seq_at,
                format!("sequence id {v} is not a vlong in its shortest form"),
            ));
        }
        v as u64
    } else {
        0
    };
    let view = crate::cell::KeyView::parse_at(key, WHAT, key_offset)?;
    let cell_type = CellType::from_code(view.type_code).ok_or_else(|| {
        FormatError::corrupt(
            WHAT,
            key_offset + key_len as u64 - 1,
            format!("unknown cell type {}", view.type_code),
        )
    })?;
    let cell = CellRef {
        row: view.row,
        family: view.family,
        qualifier: view.qualifier,
        timestamp: view.timestamp,
        cell_type,
        value,
        tags,
        seq_id,
    };
    Ok((cell, c.position()))
}
