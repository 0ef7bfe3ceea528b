//! Cells: HBase's KeyValue model, its flat key serialization and its sort order.
//! Spec: `formats/hfile.md` §"Cells".
//!
//! ```text
//! flat key:  u16 rowLen | row | u8 familyLen | family | qualifier | i64 timestamp | u8 type
//!            keyLen = rowLen + familyLen + qualifierLen + 12   (no qualifier length is stored)
//! ```
//!
//! Order (`CellComparatorImpl`): row ascending (unsigned bytes), then family, qualifier
//! ascending, timestamp descending, type code descending; a key with type Minimum and empty
//! family and qualifier sorts after every other key of its row ("last on row"). The sequence
//! id (MVCC) breaks remaining ties, newest first, but is not part of the stored key.

use std::cmp::Ordering;

use super::bytes::compare_bytes;
use super::error::{FormatError, Result};

/// Bytes of a flat key that are not row, family or qualifier: 2 + 1 + 8 + 1.
pub const KEY_INFRASTRUCTURE_SIZE: usize = 2 + 1 + 8 + 1;
/// Longest row HBase accepts (`Short.MAX_VALUE`).
pub const MAX_ROW_LEN: usize = i16::MAX as usize;
/// Longest family name HBase accepts (`Byte.MAX_VALUE`).
pub const MAX_FAMILY_LEN: usize = i8::MAX as usize;
/// `HConstants.LATEST_TIMESTAMP`.
pub const LATEST_TIMESTAMP: i64 = i64::MAX;
/// Longest value HBase accepts (`HConstants.MAXIMUM_VALUE_LENGTH`, `Integer.MAX_VALUE - 1`).
pub const MAX_VALUE_LEN: usize = i32::MAX as usize - 1;
/// Longest key HBase accepts (`Integer.MAX_VALUE`).
pub const MAX_KEY_LEN: usize = i32::MAX as usize;

/// The current time as an HBase timestamp: milliseconds since the epoch
/// (`EnvironmentEdgeManager.currentTime`); 0 on a clock before 1970.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
/// Longest tags area HBase accepts (`KeyValue.MAX_TAGS_LENGTH`).
pub const MAX_TAGS_LEN: usize = u16::MAX as usize;

/// A limit HBase puts on cells, and the cell that broke it. [`check_lengths`] holds every cell
/// a file may hold to the length limits; [`check_mutation`] adds what HBase's client refuses in
/// a Put or Delete (an empty row, a negative timestamp), for cells that enter from outside.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CellLimit {
    /// `Mutation.checkRow`: "Row length is 0".
    #[error("row is empty; HBase refuses a cell without a row")]
    EmptyRow,
    #[error("row is {0} bytes; HBase allows at most {MAX_ROW_LEN}")]
    RowTooLong(usize),
    #[error("family is {0} bytes; HBase allows at most {MAX_FAMILY_LEN}")]
    FamilyTooLong(usize),
    /// Row, family and qualifier with [`KEY_INFRASTRUCTURE_SIZE`].
    #[error("key is {0} bytes; HBase allows at most {MAX_KEY_LEN}")]
    KeyTooLong(usize),
    #[error("value is {0} bytes; HBase allows at most {MAX_VALUE_LEN}")]
    ValueTooLong(usize),
    #[error("tags area is {0} bytes; at most {MAX_TAGS_LEN}")]
    TagsTooLong(usize),
    /// `Put.addColumn` / `Delete.addColumn`: "Timestamp cannot be negative".
    #[error("timestamp {0} is negative; HBase refuses timestamps before 1970-01-01T00:00:00Z")]
    NegativeTimestamp(i64),
}

/// The length limits of `KeyValue.checkParameters` (row ≤ 32767 bytes, family ≤ 127, key ≤
/// 2^31-1, value ≤ 2^31-2) and of tags (≤ 65535 bytes), for a cell of these part lengths.
#[inline]
pub fn check_lengths(
    row: usize,
    family: usize,
    qualifier: usize,
    value: usize,
    tags: usize,
) -> std::result::Result<(), CellLimit> {
    let key = row
        .saturating_add(family)
        .saturating_add(qualifier)
        .saturating_add(KEY_INFRASTRUCTURE_SIZE);
    if row > MAX_ROW_LEN {
        Err(CellLimit::RowTooLong(row))
    } else if family > MAX_FAMILY_LEN {
        Err(CellLimit::FamilyTooLong(family))
    } else if key > MAX_KEY_LEN {
        Err(CellLimit::KeyTooLong(key))
    } else if value > MAX_VALUE_LEN {
        Err(CellLimit::ValueTooLong(value))
    } else if tags > MAX_TAGS_LEN {
        Err(CellLimit::TagsTooLong(tags))
    } else {
        Ok(())
    }
}

/// Everything HBase's client refuses in a cell of a Put or Delete: an empty row
/// (`Mutation.checkRow`), a negative timestamp (`addColumn`), and the limits of
/// [`check_lengths`]. `hfkit import` and `hfkit hfile write` hold the cells they take in to it;
/// cells read from files (which HBase's bulk load accepts as they are) are not.
#[inline]
pub fn check_mutation(
    row: usize,
    family: usize,
    qualifier: usize,
    value: usize,
    tags: usize,
    timestamp: i64,
) -> std::result::Result<(), CellLimit> {
    if row == 0 {
        return Err(CellLimit::EmptyRow);
    }
    if timestamp < 0 {
        return Err(CellLimit::NegativeTimestamp(timestamp));
    }
    check_lengths(row, family, qualifier, value, tags)
}

/// `KeyValue.Type`. The codes are on disk: DO NOT CHANGE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CellType {
    Minimum,
    Put,
    Delete,
    DeleteFamilyVersion,
    DeleteColumn,
    DeleteFamily,
    Maximum,
}

impl CellType {
    /// Every type, in code order.
    pub const ALL: [CellType; 7] = [
        CellType::Minimum,
        CellType::Put,
        CellType::Delete,
        CellType::DeleteFamilyVersion,
        CellType::DeleteColumn,
        CellType::DeleteFamily,
        CellType::Maximum,
    ];

    /// The on-disk type byte.
    pub const fn code(self) -> u8 {
        match self {
            CellType::Minimum => 0,
            CellType::Put => 4,
            CellType::Delete => 8,
            CellType::DeleteFamilyVersion => 10,
            CellType::DeleteColumn => 12,
            CellType::DeleteFamily => 14,
            CellType::Maximum => 255,
        }
    }

    /// The type for an on-disk byte, if it is one HBase defines.
    pub const fn from_code(code: u8) -> Option<CellType> {
        Some(match code {
            0 => CellType::Minimum,
            4 => CellType::Put,
            8 => CellType::Delete,
            10 => CellType::DeleteFamilyVersion,
            12 => CellType::DeleteColumn,
            14 => CellType::DeleteFamily,
            255 => CellType::Maximum,
            _ => return None,
        })
    }

    /// HBase's name for the type (as `KeyValue.Type.name()`).
    pub const fn name(self) -> &'static str {
        match self {
            CellType::Minimum => "Minimum",
            CellType::Put => "Put",
            CellType::Delete => "Delete",
            CellType::DeleteFamilyVersion => "DeleteFamilyVersion",
            CellType::DeleteColumn => "DeleteColumn",
            CellType::DeleteFamily => "DeleteFamily",
            CellType::Maximum => "Maximum",
        }
    }

    /// Parses an HBase type name.
    pub fn from_name(name: &str) -> Option<CellType> {
        CellType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// True for the delete markers (Delete, DeleteColumn, DeleteFamily, DeleteFamilyVersion).
    pub const fn is_delete(self) -> bool {
        matches!(
            self,
            CellType::Delete
                | CellType::DeleteColumn
                | CellType::DeleteFamily
                | CellType::DeleteFamilyVersion
        )
    }

    /// True for the two family-wide markers that feed the delete-family Bloom filter.
    pub const fn is_delete_family_kind(self) -> bool {
        matches!(self, CellType::DeleteFamily | CellType::DeleteFamilyVersion)
    }
}

/// A cell whose byte fields borrow from elsewhere (a block buffer, an input record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellRef<'a> {
    pub row: &'a [u8],
    pub family: &'a [u8],
    pub qualifier: &'a [u8],
    pub timestamp: i64,
    pub cell_type: CellType,
    pub value: &'a [u8],
    /// The serialized tags area (each tag: u16 length, u8 type, value); empty when none.
    pub tags: &'a [u8],
    /// MVCC / sequence id. Stored only in files that include MVCC; 0 for bulk loads.
    pub seq_id: u64,
}

/// An owned cell.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Cell {
    pub row: Vec<u8>,
    pub family: Vec<u8>,
    pub qualifier: Vec<u8>,
    pub timestamp: i64,
    pub cell_type: CellTypeOwned,
    pub value: Vec<u8>,
    pub tags: Vec<u8>,
    pub seq_id: u64,
}

/// [`CellType`] with a `Default` (Put), so that [`Cell`] can derive `Default`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CellTypeOwned(pub CellType);

impl Default for CellTypeOwned {
    fn default() -> Self {
        CellTypeOwned(CellType::Put)
    }
}

impl Cell {
    /// A Put with no tags and sequence id 0.
    pub fn put(row: &[u8], family: &[u8], qualifier: &[u8], timestamp: i64, value: &[u8]) -> Cell {
        Cell {
            row: row.to_vec(),
            family: family.to_vec(),
            qualifier: qualifier.to_vec(),
            timestamp,
            cell_type: CellTypeOwned(CellType::Put),
            value: value.to_vec(),
            tags: Vec::new(),
            seq_id: 0,
        }
    }

    /// The cell's type.
    pub fn cell_type(&self) -> CellType {
        self.cell_type.0
    }

    /// Borrows the cell.
    pub fn as_ref(&self) -> CellRef<'_> {
        CellRef {
            row: &self.row,
            family: &self.family,
            qualifier: &self.qualifier,
            timestamp: self.timestamp,
            cell_type: self.cell_type.0,
            value: &self.value,
            tags: &self.tags,
            seq_id: self.seq_id,
        }
    }
}

impl<'a> CellRef<'a> {
    /// Copies the cell.
    pub fn to_owned(&self) -> Cell {
        Cell {
            row: self.row.to_vec(),
            family: self.family.to_vec(),
            qualifier: self.qualifier.to_vec(),
            timestamp: self.timestamp,
            cell_type: CellTypeOwned(self.cell_type),
            value: self.value.to_vec(),
            tags: self.tags.to_vec(),
            seq_id: self.seq_id,
        }
    }

    /// Length of the flat key.
    #[inline]
    pub fn key_len(&self) -> usize {
        self.row.len() + self.family.len() + self.qualifier.len() + KEY_INFRASTRUCTURE_SIZE
    }

    /// Appends the flat key.
    #[inline]
    pub fn write_key(&self, out: &mut Vec<u8>) {
        write_key_parts(
            out,
            self.row,
            self.family,
            self.qualifier,
            self.timestamp,
            self.cell_type.code(),
        );
    }

    /// The flat key as a new vector.
    pub fn key(&self) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.key_len());
        self.write_key(&mut k);
        k
    }

    /// Checks the limits HBase puts on a cell ([`check_lengths`]; tags well formed).
    #[inline]
    pub fn validate(&self) -> Result<()> {
        // Hot path (every appended cell): plain length checks, tags walked only when present.
        if self.row.len() <= MAX_ROW_LEN
            && self.family.len() <= MAX_FAMILY_LEN
            && self.key_len() <= MAX_KEY_LEN
            && self.value.len() <= MAX_VALUE_LEN
            && self.tags.is_empty()
        {
            return Ok(());
        }
        self.validate_slow()
    }

    #[cold]
    fn validate_slow(&self) -> Result<()> {
        check_lengths(
            self.row.len(),
            self.family.len(),
            self.qualifier.len(),
            self.value.len(),
            self.tags.len(),
        )
        .map_err(|e| FormatError::Invalid(e.to_string()))?;
        check_tags(self.tags)
    }

    /// [`check_mutation`] of this cell.
    pub fn check_mutation(&self) -> std::result::Result<(), CellLimit> {
        check_mutation(
            self.row.len(),
            self.family.len(),
            self.qualifier.len(),
            self.value.len(),
            self.tags.len(),
            self.timestamp,
        )
    }
}

/// Checks that a tags area is a sequence of whole tags (u16 length ≥ 1, then that many bytes).
pub fn check_tags(tags: &[u8]) -> Result<()> {
    let mut i = 0usize;
    while i < tags.len() {
        if i + 2 > tags.len() {
            return Err(FormatError::Invalid(format!(
                "tags area ends inside a tag length at byte {i}"
            )));
        }
        let len = u16::from_be_bytes([tags[i], tags[i + 1]]) as usize;
        if len == 0 {
            return Err(FormatError::Invalid(format!(
                "tag at byte {i} has length 0 (no type byte)"
            )));
        }
        i += 2 + len;
        if i > tags.len() {
            return Err(FormatError::Invalid(format!(
                "tag ending at byte {i} overruns the tags area"
            )));
        }
    }
    Ok(())
}

/// Appends a flat key built from its parts.
#[inline]
pub fn write_key_parts(
    out: &mut Vec<u8>,
    row: &[u8],
    family: &[u8],
    qualifier: &[u8],
    ts: i64,
    type_code: u8,
) {
    out.reserve(row.len() + family.len() + qualifier.len() + KEY_INFRASTRUCTURE_SIZE);
    out.extend_from_slice(&(row.len() as u16).to_be_bytes());
    out.extend_from_slice(row);
    out.push(family.len() as u8);
    out.extend_from_slice(family);
    out.extend_from_slice(qualifier);
    out.extend_from_slice(&ts.to_be_bytes());
    out.push(type_code);
}

/// A parsed view of a flat key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyView<'a> {
    pub row: &'a [u8],
    pub family: &'a [u8],
    pub qualifier: &'a [u8],
    pub timestamp: i64,
    pub type_code: u8,
}

impl<'a> KeyView<'a> {
    /// Parses a flat key; `None` when its lengths do not fit.
    #[inline]
    pub fn parse(key: &'a [u8]) -> Option<KeyView<'a>> {
        if key.len() < KEY_INFRASTRUCTURE_SIZE {
            return None;
        }
        let row_len = u16::from_be_bytes([key[0], key[1]]) as usize;
        let fam_at = 2 + row_len;
        if fam_at + 1 + 9 > key.len() {
            return None;
        }
        let fam_len = key[fam_at] as usize;
        let qual_at = fam_at + 1 + fam_len;
        let ts_at = key.len() - 9;
        if qual_at > ts_at {
            return None;
        }
        let mut ts = [0u8; 8];
        ts.copy_from_slice(&key[ts_at..ts_at + 8]);
        Some(KeyView {
            row: &key[2..fam_at],
            family: &key[fam_at + 1..qual_at],
            qualifier: &key[qual_at..ts_at],
            timestamp: i64::from_be_bytes(ts),
            type_code: key[key.len() - 1],
        })
    }

    /// Parses a flat key, or reports it as corrupt at `offset`.
    pub fn parse_at(key: &'a [u8], what: &'static str, offset: u64) -> Result<KeyView<'a>> {
        KeyView::parse(key).ok_or_else(|| FormatError::corrupt(what, offset, "malformed cell key"))
    }

    /// The key of a cell.
    pub fn of(cell: &CellRef<'a>) -> KeyView<'a> {
        KeyView {
            row: cell.row,
            family: cell.family,
            qualifier: cell.qualifier,
            timestamp: cell.timestamp,
            type_code: cell.cell_type.code(),
        }
    }

    /// Serializes the key.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_key_parts(
            &mut out,
            self.row,
            self.family,
            self.qualifier,
            self.timestamp,
            self.type_code,
        );
        out
    }
}

/// HBase's cell order on two keys (`CellComparatorImpl.compare`, ignoring sequence ids).
pub fn compare_keys(a: &KeyView<'_>, b: &KeyView<'_>) -> Ordering {
    match compare_bytes(a.row, b.row) {
        Ordering::Equal => {}
        o => return o,
    }
    compare_without_row(a, b)
}

/// [`compare_keys`] for keys of the same row.
#[inline]
pub fn compare_without_row(a: &KeyView<'_>, b: &KeyView<'_>) -> Ordering {
    let minimum = CellType::Minimum.code();
    if a.family.is_empty() && a.qualifier.is_empty() && a.type_code == minimum {
        return Ordering::Greater;
    }
    if b.family.is_empty() && b.qualifier.is_empty() && b.type_code == minimum {
        return Ordering::Less;
    }
    compare_bytes(a.family, b.family)
        .then_with(|| compare_bytes(a.qualifier, b.qualifier))
        .then_with(|| b.timestamp.cmp(&a.timestamp))
        .then_with(|| b.type_code.cmp(&a.type_code))
}

/// HBase's order on two flat keys. A malformed key (never produced by this crate's decoders,
/// which validate keys) falls back to raw byte order so the function stays total.
pub fn compare_flat_keys(a: &[u8], b: &[u8]) -> Ordering {
    match (KeyView::parse(a), KeyView::parse(b)) {
        (Some(x), Some(y)) => compare_keys(&x, &y),
        _ => a.cmp(b),
    }
}

/// HBase's order on cells, ignoring the sequence id.
pub fn compare_cells(a: &CellRef<'_>, b: &CellRef<'_>) -> Ordering {
    compare_keys(&KeyView::of(a), &KeyView::of(b))
}

/// The search key that sorts before every cell of `row` ("first on row").
pub fn first_on_row(row: &[u8]) -> Vec<u8> {
    let mut k = Vec::new();
    write_key_parts(
        &mut k,
        row,
        b"",
        b"",
        LATEST_TIMESTAMP,
        CellType::Maximum.code(),
    );
    k
}

/// The search key that sorts before every cell of `row`, `family`, `qualifier`.
pub fn first_on_column(row: &[u8], family: &[u8], qualifier: &[u8]) -> Vec<u8> {
    let mut k = Vec::new();
    write_key_parts(
        &mut k,
        row,
        family,
        qualifier,
        LATEST_TIMESTAMP,
        CellType::Maximum.code(),
    );
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(row: &[u8], fam: &[u8], q: &[u8], ts: i64, t: CellType) -> Vec<u8> {
        let mut k = Vec::new();
        write_key_parts(&mut k, row, fam, q, ts, t.code());
        k
    }

    #[test]
    fn worked_example_key_bytes() {
        // reference §14: row "r1", family "f", qualifier "q", ts 1700000000000, Put
        let k = key(b"r1", b"f", b"q", 1_700_000_000_000, CellType::Put);
        assert_eq!(
            k,
            [0, 2, b'r', b'1', 1, b'f', b'q', 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0, 4]
        );
        let v = KeyView::parse(&k).unwrap();
        assert_eq!(
            (v.row, v.family, v.qualifier),
            (&b"r1"[..], &b"f"[..], &b"q"[..])
        );
        assert_eq!(v.timestamp, 1_700_000_000_000);
    }

    #[test]
    fn order_rules() {
        let a = key(b"r", b"f", b"q", 5, CellType::Put);
        let newer = key(b"r", b"f", b"q", 6, CellType::Put);
        let del = key(b"r", b"f", b"q", 5, CellType::DeleteColumn);
        let q2 = key(b"r", b"f", b"q2", 9, CellType::Put);
        let r2 = key(b"r\x00", b"f", b"", 1, CellType::Put);
        let last_on_row = key(b"r", b"", b"", 0, CellType::Minimum);
        assert_eq!(
            compare_flat_keys(&newer, &a),
            Ordering::Less,
            "ts descending"
        );
        assert_eq!(
            compare_flat_keys(&del, &a),
            Ordering::Less,
            "type descending"
        );
        assert_eq!(compare_flat_keys(&a, &q2), Ordering::Less);
        assert_eq!(
            compare_flat_keys(&q2, &last_on_row),
            Ordering::Less,
            "last on row"
        );
        assert_eq!(compare_flat_keys(&last_on_row, &r2), Ordering::Less);
        assert_eq!(compare_flat_keys(&first_on_row(b"r"), &a), Ordering::Less);
    }

    #[test]
    fn parse_rejects_bad_lengths() {
        assert!(KeyView::parse(&[0, 5, 1, 2]).is_none());
        assert!(KeyView::parse(&[0, 0, 200, 0, 0, 0, 0, 0, 0, 0, 0, 4]).is_none());
    }

    #[test]
    fn tags_are_checked() {
        assert!(check_tags(&[0, 2, 1, 9]).is_ok());
        assert!(check_tags(&[0, 0]).is_err());
        assert!(check_tags(&[0, 5, 1]).is_err());
        assert!(check_tags(&[0]).is_err());
    }

    #[test]
    fn mutation_limits_are_hbase_client_limits() {
        assert_eq!(check_mutation(1, 1, 0, 0, 0, 0), Ok(()));
        assert_eq!(
            check_mutation(
                MAX_ROW_LEN,
                MAX_FAMILY_LEN,
                0,
                MAX_VALUE_LEN,
                MAX_TAGS_LEN,
                i64::MAX
            ),
            Ok(())
        );
        assert_eq!(check_mutation(0, 1, 0, 0, 0, 0), Err(CellLimit::EmptyRow));
        assert_eq!(
            check_mutation(1, 1, 0, 0, 0, -1),
            Err(CellLimit::NegativeTimestamp(-1))
        );
        assert_eq!(
            check_mutation(MAX_ROW_LEN + 1, 1, 0, 0, 0, 0),
            Err(CellLimit::RowTooLong(MAX_ROW_LEN + 1))
        );
        assert_eq!(
            check_mutation(1, MAX_FAMILY_LEN + 1, 0, 0, 0, 0),
            Err(CellLimit::FamilyTooLong(128))
        );
        let q = MAX_KEY_LEN - KEY_INFRASTRUCTURE_SIZE - 2;
        assert_eq!(check_lengths(1, 1, q, 0, 0), Ok(()));
        assert_eq!(
            check_lengths(1, 1, q + 1, 0, 0),
            Err(CellLimit::KeyTooLong(MAX_KEY_LEN + 1))
        );
        assert_eq!(
            check_lengths(1, 1, 0, MAX_VALUE_LEN + 1, 0),
            Err(CellLimit::ValueTooLong(i32::MAX as usize))
        );
        assert_eq!(
            check_lengths(1, 1, 0, 0, MAX_TAGS_LEN + 1),
            Err(CellLimit::TagsTooLong(65536))
        );
        // Files may hold what the client refuses (HBase bulk-loads them as they are).
        assert_eq!(check_lengths(0, 1, 0, 0, 0), Ok(()));
        let c = Cell::put(b"", b"f", b"q", -5, b"v");
        assert!(c.as_ref().validate().is_ok());
        assert_eq!(c.as_ref().check_mutation(), Err(CellLimit::EmptyRow));
        assert_eq!(
            CellLimit::NegativeTimestamp(-5).to_string(),
            "timestamp -5 is negative; HBase refuses timestamps before 1970-01-01T00:00:00Z"
        );
    }
}
