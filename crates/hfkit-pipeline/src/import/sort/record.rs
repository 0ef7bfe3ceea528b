//! The sorter's record: one cell in the bytes the buffer and the run files hold, its decoding,
//! and the import order on records (`formats/import.md` §"Sort and spill").
//!
//! ```text
//! record := u8 family | u16 rowLen | u32 qualifierLen | u32 valueLen | i64 timestamp
//!           | u64 ordinal | u8 type | u16 tagsLen | row | qualifier | value | tags  (big-endian)
//! order  := family index, row, qualifier (unsigned bytes), timestamp desc, type desc,
//!           ordinal desc
//! ```

use std::cmp::Ordering;

use hfkit_format::bytes::{compare_bytes, equal_bytes};
use hfkit_format::cell::CellType;

/// Bytes of a record before its row, qualifier and value.
pub const RECORD_HEADER: usize = 1 + 2 + 4 + 4 + 8 + 8 + 1 + 2;

/// A decoded record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortedCell<'a> {
    pub family: u8,
    pub row: &'a [u8],
    pub qualifier: &'a [u8],
    pub timestamp: i64,
    pub ordinal: u64,
    pub cell_type: CellType,
    pub value: &'a [u8],
    /// Serialized tags (HBase's `u16 length | u8 type | value` each), empty without.
    pub tags: &'a [u8],
}

impl<'a> SortedCell<'a> {
    /// Same (family, row, qualifier, timestamp, type): duplicates for an import.
    pub(super) fn same_coordinates(&self, o: &SortedCell<'_>) -> bool {
        self.family == o.family
            && self.timestamp == o.timestamp
            && self.cell_type == o.cell_type
            && equal_bytes(self.row, o.row)
            && equal_bytes(self.qualifier, o.qualifier)
    }
}

pub(super) fn record_len(rec: &[u8]) -> Option<usize> {
    let h = rec.get(..RECORD_HEADER)?;
    let row = u16::from_be_bytes([h[1], h[2]]) as usize;
    let q = u32::from_be_bytes([h[3], h[4], h[5], h[6]]) as usize;
    let v = u32::from_be_bytes([h[7], h[8], h[9], h[10]]) as usize;
    let t = usize::from(u16::from_be_bytes([h[28], h[29]]));
    Some(RECORD_HEADER + row + q + v + t)
}

/// Decodes the record at the start of `rec` (which holds at least the whole record).
pub(super) fn decode(rec: &[u8]) -> Option<SortedCell<'_>> {
    let h = rec.get(..RECORD_HEADER)?;
    let row = u16::from_be_bytes([h[1], h[2]]) as usize;
    let q = u32::from_be_bytes([h[3], h[4], h[5], h[6]]) as usize;
    let v = u32::from_be_bytes([h[7], h[8], h[9], h[10]]) as usize;
    let mut ts = [0u8; 8];
    ts.copy_from_slice(&h[11..19]);
    let mut ord = [0u8; 8];
    ord.copy_from_slice(&h[19..27]);
    let t = usize::from(u16::from_be_bytes([h[28], h[29]]));
    let body = rec.get(RECORD_HEADER..RECORD_HEADER + row + q + v + t)?;
    Some(SortedCell {
        family: h[0],
        row: &body[..row],
        qualifier: &body[row..row + q],
        timestamp: i64::from_be_bytes(ts),
        ordinal: u64::from_be_bytes(ord),
        cell_type: CellType::from_code(h[27])?,
        value: &body[row + q..row + q + v],
        tags: &body[row + q + v..],
    })
}

/// A record's fields, parsed once, and where its bytes lie in its buffer: a record of the
/// buffer's layout ([`Head::parse`]), or of a run block's, whose row may be an earlier
/// record's (`run`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Head {
    /// Where the row starts.
    pub(super) row_at: usize,
    /// Where the qualifier starts (the value and the tags follow it).
    pub(super) body_at: usize,
    pub(super) family: u8,
    pub(super) row: u16,
    pub(super) qualifier: u32,
    pub(super) value: u32,
    pub(super) timestamp: i64,
    pub(super) ordinal: u64,
    pub(super) cell_type: CellType,
    pub(super) tags: u16,
}

impl Head {
    /// Parses the buffer record at `buf[at..]`, which must hold all of it.
    pub(super) fn parse(buf: &[u8], at: usize) -> Option<Head> {
        let c = decode(buf.get(at..)?)?;
        Some(Head {
            row_at: at + RECORD_HEADER,
            body_at: at + RECORD_HEADER + c.row.len(),
            family: c.family,
            row: c.row.len() as u16,
            qualifier: c.qualifier.len() as u32,
            value: c.value.len() as u32,
            timestamp: c.timestamp,
            ordinal: c.ordinal,
            cell_type: c.cell_type,
            tags: c.tags.len() as u16,
        })
    }

    /// Where the record's bytes end (its tags' end).
    pub(super) fn end(&self) -> usize {
        self.body_at + self.qualifier as usize + self.value as usize + usize::from(self.tags)
    }

    /// The record's sort key, from the buffer it was parsed in (unchanged since).
    #[inline(always)]
    pub(super) fn key<'a>(&self, buf: &'a [u8]) -> SortKey<'a> {
        let row = self.row_at;
        let q = self.body_at;
        let end = q + self.qualifier as usize;
        (
            self.family,
            &buf[row..row + self.row as usize],
            &buf[q..end],
            self.timestamp,
            self.cell_type.code(),
            self.ordinal,
        )
    }

    /// The record, from the buffer it was parsed in (unchanged since).
    #[inline]
    pub(super) fn cell<'a>(&self, buf: &'a [u8]) -> SortedCell<'a> {
        let row = self.row_at;
        let q = self.body_at;
        let v = q + self.qualifier as usize;
        let t = v + self.value as usize;
        SortedCell {
            family: self.family,
            row: &buf[row..row + self.row as usize],
            qualifier: &buf[q..v],
            timestamp: self.timestamp,
            ordinal: self.ordinal,
            cell_type: self.cell_type,
            value: &buf[v..t],
            tags: &buf[t..t + usize::from(self.tags)],
        }
    }
}

/// What the import order compares: family, row, qualifier, timestamp, type code, ordinal.
pub(super) type SortKey<'a> = (u8, &'a [u8], &'a [u8], i64, u8, u64);

/// The import order on two records (see the module documentation).
pub fn compare(a: &SortedCell<'_>, b: &SortedCell<'_>) -> Ordering {
    compare_keys(
        (
            a.family,
            a.row,
            a.qualifier,
            a.timestamp,
            a.cell_type.code(),
            a.ordinal,
        ),
        (
            b.family,
            b.row,
            b.qualifier,
            b.timestamp,
            b.cell_type.code(),
            b.ordinal,
        ),
    )
}

/// [`compare`] on the keys alone (timestamp, type and ordinal descending). Always inlined: the
/// merge calls it once per cell, and a call passes both keys through memory.
#[inline(always)]
pub(super) fn compare_keys(a: SortKey<'_>, b: SortKey<'_>) -> Ordering {
    a.0.cmp(&b.0)
        .then_with(|| compare_bytes(a.1, b.1))
        .then_with(|| compare_bytes(a.2, b.2))
        .then_with(|| b.3.cmp(&a.3))
        .then_with(|| b.4.cmp(&a.4))
        .then_with(|| b.5.cmp(&a.5))
}

/// Family and the first 23 row bytes, zero-padded, as three big-endian words: comparing these
/// orders most pairs without decoding the records (a shorter row compares as its zero-padded
/// form, which never inverts the order; equal prefixes fall back to the full comparison). 23
/// bytes cover most row keys whole (HBase practice: 10-100 bytes), where 15 left each row of a
/// 16-byte key such as `salt_orderkey_line` tied with the other lines of its order.
pub(super) fn prefix_key(family: u8, row: &[u8]) -> [u64; 3] {
    let mut k = [0u8; 24];
    k[0] = family;
    let n = row.len().min(23);
    k[1..1 + n].copy_from_slice(&row[..n]);
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&k[i * 8..i * 8 + 8]);
        u64::from_be_bytes(w)
    };
    [word(0), word(1), word(2)]
}
