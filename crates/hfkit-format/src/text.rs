//! The canonical cell text form shared with the HBase fixtures (`../shared/fixtures/README.md`):
//! one cell per line,
//!
//! ```text
//! row_hex family_hex qualifier_hex timestamp type value_hex tags_hex [seqid]
//! ```
//! lowercase hex, `-` for empty bytes, type by HBase name, seqid only when asked for.

use std::fmt::Write as _;

use super::bytes::equal_bytes;
use super::cell::{Cell, CellLimit, CellRef, CellType, CellTypeOwned};
pub use super::hex::push_hex;
use super::hex::write_hex;

/// Lowercase hex of `bytes` (empty string for empty input).
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    if !bytes.is_empty() {
        push_hex(&mut s, bytes);
    }
    s
}

/// Appends one cell line (without the newline).
pub fn push_cell_line(out: &mut String, cell: &CellRef<'_>, with_seq_id: bool) {
    push_hex(out, cell.row);
    out.push(' ');
    push_column_hex(out, cell.family, cell.qualifier);
    out.push_str(itoa::Buffer::new().format(cell.timestamp));
    out.push(' ');
    push_cell_line_end(out, cell, with_seq_id);
}

/// Appends a cell line's column: `family_hex qualifier_hex `.
fn push_column_hex(out: &mut String, family: &[u8], qualifier: &[u8]) {
    push_hex(out, family);
    out.push(' ');
    push_hex(out, qualifier);
    out.push(' ');
}

/// The places in a row whose columns [`ColumnTexts`] remembers: the first this many cells.
const COLUMN_TEXT_PLACES: usize = 256;

/// A column's text (family and qualifier, as a writer of many cells shows them) made once
/// while the rows hold their columns in the same places: the `i`-th cell of a row is
/// remembered with its column, and its text reused when the next row's `i`-th cell is of the
/// same column (the rows of a bulk-loaded table hold the same columns in the same order).
#[derive(Debug, Default)]
pub struct ColumnTexts {
    /// The cell of the row being written.
    at: usize,
    /// By place in a row: a column (family then qualifier), the family's length, its text.
    places: Vec<(Vec<u8>, usize, String)>,
}

impl ColumnTexts {
    /// Starts a row.
    pub fn start_row(&mut self) {
        self.at = 0;
    }

    /// Appends the text of the next cell's column (`family`, `qualifier`), made by `make` when
    /// this place of the row held another column (or is past the places remembered).
    #[inline]
    pub fn push(
        &mut self,
        out: &mut String,
        family: &[u8],
        qualifier: &[u8],
        make: impl Fn(&mut String, &[u8], &[u8]),
    ) {
        let at = self.at;
        self.at += 1;
        let (f, q) = (family, qualifier);
        if at >= COLUMN_TEXT_PLACES {
            return make(out, f, q);
        }
        match self.places.get_mut(at) {
            Some((column, family_len, text))
                if *family_len == f.len()
                    && column.len() == f.len() + q.len()
                    && equal_bytes(&column[..f.len()], f)
                    && equal_bytes(&column[f.len()..], q) =>
            {
                out.push_str(text);
            }
            slot => {
                let mut text = String::new();
                make(&mut text, f, q);
                out.push_str(&text);
                let entry = ([f, q].concat(), f.len(), text);
                match slot {
                    Some(s) => *s = entry,
                    None => self.places.push(entry),
                }
            }
        }
    }
}

/// A timestamp's digits made once while the cells share it (a bulk load's do).
#[derive(Debug, Default)]
pub struct TimestampText {
    timestamp: Option<i64>,
    text: String,
}

impl TimestampText {
    /// Appends `timestamp` in decimal.
    #[inline]
    pub fn push(&mut self, out: &mut String, timestamp: i64) {
        if self.timestamp != Some(timestamp) {
            self.timestamp = Some(timestamp);
            self.text.clear();
            self.text.push_str(itoa::Buffer::new().format(timestamp));
        }
        out.push_str(&self.text);
    }
}

/// Text copied into a line 16 bytes at a time: `bytes[..len]`, then zeros up to a multiple
/// of 16 (so a copy never reads past `bytes`, and writes at most 15 bytes past `len`).
#[derive(Debug, Default)]
struct Chunked {
    bytes: Vec<u8>,
    len: usize,
}

impl Chunked {
    /// Holds `text`.
    fn set(&mut self, text: &str) {
        self.len = text.len();
        self.bytes.clear();
        self.bytes.extend_from_slice(text.as_bytes());
        self.bytes.resize(text.len().next_multiple_of(16), 0);
    }

    /// Copies the text to `dst`, with up to 15 bytes of padding after it.
    ///
    /// # Safety
    /// `dst` must be valid for writes of `self.bytes.len()` bytes.
    #[inline(always)]
    unsafe fn copy_to(&self, dst: *mut u8) {
        for (k, chunk) in self.bytes.chunks_exact(16).enumerate() {
            // SAFETY: `chunk` is 16 readable bytes; the caller's room covers
            // `dst + 16 * k .. + 16` (`bytes.len()` is a multiple of 16).
            unsafe {
                let word = chunk.as_ptr().cast::<[u8; 16]>().read_unaligned();
                dst.add(16 * k).cast::<[u8; 16]>().write_unaligned(word);
            }
        }
    }
}

/// What a line writes between the row and the value, remembered for one place of a row:
/// `family_hex qualifier_hex timestamp type `, for a column (family then qualifier), a
/// timestamp and a type.
#[derive(Debug)]
struct Place {
    column: Vec<u8>,
    family_len: usize,
    timestamp: i64,
    cell_type: CellType,
    text: Chunked,
}

impl Place {
    #[inline(always)]
    fn holds(&self, cell: &CellRef<'_>) -> bool {
        let (f, q) = (cell.family, cell.qualifier);
        self.timestamp == cell.timestamp
            && self.cell_type == cell.cell_type
            && self.family_len == f.len()
            && self.column.len() == f.len() + q.len()
            && equal_bytes(&self.column[..f.len()], f)
            && equal_bytes(&self.column[f.len()..], q)
    }

    /// Makes this place hold `cell`'s column, timestamp and type (`scratch`: a buffer kept).
    #[cold]
    fn set(&mut self, cell: &CellRef<'_>, scratch: &mut String) {
        scratch.clear();
        push_column_hex(scratch, cell.family, cell.qualifier);
        scratch.push_str(itoa::Buffer::new().format(cell.timestamp));
        scratch.push(' ');
        scratch.push_str(cell.cell_type.name());
        scratch.push(' ');
        self.text.set(scratch);
        self.column.clear();
        self.column.extend_from_slice(cell.family);
        self.column.extend_from_slice(cell.qualifier);
        self.family_len = cell.family.len();
        self.timestamp = cell.timestamp;
        self.cell_type = cell.cell_type;
    }
}

/// Writes cell lines for a reader of many cells, each line in one pass into room reserved
/// once: the hex of a row made once for all of its cells, and what comes between the row and
/// the value (column, timestamp, type) made once per place in a row while the rows hold the
/// same there (the rows of a bulk-loaded table hold the same columns in the same order, at
/// one timestamp); both copied 16 bytes at a time, the value's digits by [`write_hex`].
/// The lines are those of [`push_cell_line`].
#[derive(Debug, Default)]
pub struct CellLines {
    /// `row_hex `.
    row: Chunked,
    /// The cell of the row being written.
    at: usize,
    /// By place in a row: the first `COLUMN_TEXT_PLACES` cells, then one place for all the
    /// cells after them.
    places: Vec<Place>,
    scratch: String,
}

impl CellLines {
    /// Starts the cells of `row`.
    pub fn start_row(&mut self, row: &[u8]) {
        self.scratch.clear();
        push_hex(&mut self.scratch, row);
        self.scratch.push(' ');
        self.row.set(&self.scratch);
        self.at = 0;
    }

    /// Appends the line of `cell` (of the row last started, without its sequence id) and a
    /// newline.
    #[inline]
    pub fn push_line(&mut self, out: &mut String, cell: &CellRef<'_>) {
        let at = self.at.min(COLUMN_TEXT_PLACES);
        self.at += 1;
        if !matches!(self.places.get(at), Some(p) if p.holds(cell)) {
            set_place(&mut self.places, &mut self.scratch, at, cell);
        }
        let place = &self.places[at];
        let (value, tags) = (cell.value, cell.tags);
        // The copies' padding (15 bytes each at most), the value's and the tags' digits or
        // `-`, two spaces and the newline.
        let room = self.row.bytes.len() + place.text.bytes.len() + 2 * (value.len() + tags.len());
        // SAFETY: only ASCII is written within the length set (copies of ASCII text, hex
        // digits, spaces, `-`, newline), so the string stays UTF-8.
        let v = unsafe { out.as_mut_vec() };
        v.reserve(room + 8);
        let start = v.len();
        // SAFETY: `reserve` made room for `room + 8` bytes after `start`, and the writes below
        // stay within it: the row's copy writes `row.bytes.len()` bytes from `start`, the
        // place's `text.bytes.len()` from `start + row.len` (≤ its padded length), the value
        // `max(2 * value.len(), 1)` bytes after that, then a space, the tags'
        // `max(2 * tags.len(), 1)`, and the newline. Every byte up to the length set is
        // written (each copy's padding is overwritten by what follows it or lies past the end).
        unsafe {
            let base = v.as_mut_ptr().add(start);
            self.row.copy_to(base);
            let mut n = self.row.len;
            place.text.copy_to(base.add(n));
            n += place.text.len;
            n += write_field_hex(base.add(n), value);
            *base.add(n) = b' ';
            n += 1;
            n += write_field_hex(base.add(n), tags);
            *base.add(n) = b'\n';
            n += 1;
            v.set_len(start + n);
        }
    }
}

/// Makes place `at` of `places` hold `cell`'s column, timestamp and type (adding the places
/// up to it).
#[cold]
#[inline(never)]
fn set_place(places: &mut Vec<Place>, scratch: &mut String, at: usize, cell: &CellRef<'_>) {
    while places.len() <= at {
        places.push(Place {
            column: Vec::new(),
            family_len: 0,
            timestamp: 0,
            cell_type: CellType::Put,
            text: Chunked::default(),
        });
    }
    places[at].set(cell, scratch);
}

/// Writes `bytes` as hex at `dst`, or `-` when empty; returns how many bytes it wrote.
///
/// # Safety
/// `dst` must be valid for writes of `max(2 * bytes.len(), 1)` bytes.
#[inline(always)]
unsafe fn write_field_hex(dst: *mut u8, bytes: &[u8]) -> usize {
    if bytes.is_empty() {
        // SAFETY: the caller's room for one byte.
        unsafe { *dst = b'-' };
        return 1;
    }
    // SAFETY: the caller's room for `2 * bytes.len()` bytes.
    unsafe { write_hex(dst, bytes) };
    2 * bytes.len()
}

/// Appends what follows the timestamp in a cell line: type, value, tags, sequence id.
fn push_cell_line_end(out: &mut String, cell: &CellRef<'_>, with_seq_id: bool) {
    out.push_str(cell.cell_type.name());
    out.push(' ');
    push_hex(out, cell.value);
    out.push(' ');
    push_hex(out, cell.tags);
    if with_seq_id {
        let _ = write!(out, " {}", cell.seq_id);
    }
}

/// One cell line as a new string.
pub fn cell_line(cell: &CellRef<'_>, with_seq_id: bool) -> String {
    let mut s = String::new();
    push_cell_line(&mut s, cell, with_seq_id);
    s
}

/// Value of each byte as a hex digit; 0xFF for a byte that is not one.
const HEX_DIGITS: [u8; 256] = {
    let mut t = [0xFFu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// Why a hex field does not decode.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HexError {
    #[error("hex field '{field}' has an odd number of digits")]
    OddLength { field: String },
    /// `offset`: the byte's place in the field, from 0.
    #[error("'{}' is not a hex digit in '{field}'", char::from(*byte))]
    NotADigit {
        byte: u8,
        offset: usize,
        field: String,
    },
}

/// Why a cell line does not parse: the field (numbered from 1, as the messages say) and what
/// is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CellLineError {
    #[error(
        "expected 7 or 8 space-separated fields (row family qualifier timestamp type value tags [seqid]), found {found}"
    )]
    FieldCount { found: usize },
    #[error("field 4 (timestamp): '{text}' is not a signed 64-bit integer")]
    Timestamp { text: String },
    #[error(
        "field 5 (type): '{text}' is not one of Put, Delete, DeleteColumn, DeleteFamily, DeleteFamilyVersion"
    )]
    Type { text: String },
    #[error("field 8 (seqid): '{text}' is not an unsigned integer")]
    SeqId { text: String },
    #[error("field {field} ({name}): {source}")]
    Hex {
        field: usize,
        name: &'static str,
        source: HexError,
    },
}

impl CellLineError {
    /// The field that is wrong (1-8); `None` when the line has the wrong number of fields.
    pub fn field(&self) -> Option<usize> {
        match self {
            CellLineError::FieldCount { .. } => None,
            CellLineError::Timestamp { .. } => Some(4),
            CellLineError::Type { .. } => Some(5),
            CellLineError::SeqId { .. } => Some(8),
            CellLineError::Hex { field, .. } => Some(*field),
        }
    }
}

/// Appends the bytes that hex `s` (or `-` for empty) spells to `out`; on an error `out` may
/// hold some of them.
pub fn decode_hex_into(s: &[u8], out: &mut Vec<u8>) -> Result<(), HexError> {
    if s == b"-" {
        return Ok(());
    }
    let shown = || String::from_utf8_lossy(s).into_owned();
    if !s.len().is_multiple_of(2) {
        return Err(HexError::OddLength { field: shown() });
    }
    out.reserve(s.len() / 2);
    for (i, pair) in s.chunks_exact(2).enumerate() {
        let (hi, lo) = (HEX_DIGITS[pair[0] as usize], HEX_DIGITS[pair[1] as usize]);
        if (hi | lo) > 15 {
            let (byte, offset) = if hi > 15 {
                (pair[0], 2 * i)
            } else {
                (pair[1], 2 * i + 1)
            };
            return Err(HexError::NotADigit {
                byte,
                offset,
                field: shown(),
            });
        }
        out.push(hi << 4 | lo);
    }
    Ok(())
}

/// Decodes hex (or `-` for empty).
pub fn parse_hex(s: &str) -> Result<Vec<u8>, HexError> {
    let mut out = Vec::new();
    decode_hex_into(s.as_bytes(), &mut out)?;
    Ok(out)
}

/// Parses cell lines without allocating per line: each line's byte fields are decoded into
/// one buffer that the next line reuses (`hfkit hfile write` reads millions of lines).
#[derive(Default)]
pub struct CellLineParser {
    bytes: Vec<u8>,
}

impl CellLineParser {
    /// Parses one cell line (without its line end). The error says which field is wrong.
    pub fn parse(&mut self, line: &[u8]) -> Result<CellRef<'_>, CellLineError> {
        let mut f: [&[u8]; 8] = [&[]; 8];
        let mut n = 0;
        for field in line
            .split(|b| b.is_ascii_whitespace())
            .filter(|f| !f.is_empty())
        {
            if n == f.len() {
                n += 1;
                break;
            }
            f[n] = field;
            n += 1;
        }
        if n != 7 && n != 8 {
            let found = line
                .split(|b| b.is_ascii_whitespace())
                .filter(|f| !f.is_empty())
                .count();
            return Err(CellLineError::FieldCount { found });
        }
        let text = |i: usize| String::from_utf8_lossy(f[i]).into_owned();
        let timestamp = std::str::from_utf8(f[3])
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
            .ok_or_else(|| CellLineError::Timestamp { text: text(3) })?;
        let cell_type = std::str::from_utf8(f[4])
            .ok()
            .and_then(CellType::from_name)
            .ok_or_else(|| CellLineError::Type { text: text(4) })?;
        let seq_id = if n == 8 {
            std::str::from_utf8(f[7])
                .ok()
                .and_then(|t| t.parse::<u64>().ok())
                .ok_or_else(|| CellLineError::SeqId { text: text(7) })?
        } else {
            0
        };
        // Row, family, qualifier, value and tags, one after another in `bytes`.
        self.bytes.clear();
        let mut ends = [0usize; 5];
        for (k, (i, name)) in [
            (0, "row"),
            (1, "family"),
            (2, "qualifier"),
            (5, "value"),
            (6, "tags"),
        ]
        .into_iter()
        .enumerate()
        {
            decode_hex_into(f[i], &mut self.bytes).map_err(|source| CellLineError::Hex {
                field: i + 1,
                name,
                source,
            })?;
            ends[k] = self.bytes.len();
        }
        let b = &self.bytes;
        Ok(CellRef {
            row: &b[..ends[0]],
            family: &b[ends[0]..ends[1]],
            qualifier: &b[ends[1]..ends[2]],
            timestamp,
            cell_type,
            value: &b[ends[2]..ends[3]],
            tags: &b[ends[3]..ends[4]],
            seq_id,
        })
    }
}

/// The field of a cell line that holds what broke `limit`, as parse errors name it.
pub fn limit_field(limit: &CellLimit) -> &'static str {
    match limit {
        CellLimit::EmptyRow | CellLimit::RowTooLong(_) => "field 1 (row)",
        CellLimit::FamilyTooLong(_) => "field 2 (family)",
        CellLimit::KeyTooLong(_) => "fields 1-3 (row, family, qualifier)",
        CellLimit::NegativeTimestamp(_) => "field 4 (timestamp)",
        CellLimit::ValueTooLong(_) => "field 6 (value)",
        CellLimit::TagsTooLong(_) => "field 7 (tags)",
    }
}

/// Parses one cell line. The error says which field is wrong.
pub fn parse_cell_line(line: &str) -> Result<Cell, CellLineError> {
    let mut parser = CellLineParser::default();
    let c = parser.parse(line.as_bytes())?;
    Ok(Cell {
        row: c.row.to_vec(),
        family: c.family.to_vec(),
        qualifier: c.qualifier.to_vec(),
        timestamp: c.timestamp,
        cell_type: CellTypeOwned(c.cell_type),
        value: c.value.to_vec(),
        tags: c.tags.to_vec(),
        seq_id: c.seq_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
            /// Lines written by `CellLines` (rows, columns, timestamps and types remembered, lines
            /// written in one pass) are the lines `push_cell_line` writes alone, over rows whose
            /// columns move, repeat or run past the places remembered, and any bytes (rows, values
            /// and tags of every length the hex steps treat apart).
            #[test]
            fn cell_lines_write_what_push_cell_line_writes(
                rows in proptest::collection::vec(
                    (
                        proptest::collection::vec(proptest::num::u8::ANY, 0..40),
                        proptest::collection::vec(
                            (
                                (0u8..3, 0u8..4, 0i64..3, 0usize..3),
                                proptest::collection::vec(proptest::num::u8::ANY, 0..40),
                                proptest::collection::vec(proptest::num::u8::ANY, 0..3),
                            ),
                            0..8,
                        ),
                        0usize..2,
                    ),
                    0..12,
                ),
    ) {
                let mut lines = CellLines::default();
                let (mut cached, mut plain) = (String::new(), String::new());
                for (row, cells, wide) in &rows {
                    lines.start_row(row);
                    // A wide row goes past the places remembered.
                    let extra = if *wide == 1 { COLUMN_TEXT_PLACES + 3 } else { 0 };
                    let many = cells.iter().cycle().take(cells.len() + extra.min(cells.len() * 400));
                    for ((f, q, ts, t), value, tags) in many {
                        let family = [b'f', *f];
                        // Qualifiers of one length and different bytes too.
                        let qualifier: &[u8] = [&b""[..], b"a", b"b", b"ab"][usize::from(*q)];
                        let types = [CellType::Put, CellType::Delete, CellType::DeleteFamily];
                        // Tags only now and then (most cells have none).
                        let tags: &[u8] = if *ts == 2 { tags } else { &[] };
                        let c = CellRef {
                            row,
                            family: &family[..usize::from(*f % 2) + 1],
                            qualifier,
                            timestamp: [-1, 0, 1_700_000_000_000][*ts as usize],
                            cell_type: types[*t],
                            value,
                            tags,
                            seq_id: u64::from(*f) << 40,
                        };
                        lines.push_line(&mut cached, &c);
                        push_cell_line(&mut plain, &c, false);
                        plain.push('\n');
                    }
                }
                proptest::prop_assert_eq!(cached, plain);
            }
        }

    /// Every byte value, at every offset in a string already holding text, gives the two
    /// digits `format!` gives.
    #[test]
    fn push_hex_writes_every_byte_as_format_does() {
        let all: Vec<u8> = (0..=255u8).collect();
        for prefix in ["", "x", "row "] {
            for len in [0, 1, 2, 7, 255, 256] {
                let mut s = String::from(prefix);
                push_hex(&mut s, &all[..len]);
                let want = match len {
                    0 => "-".to_string(),
                    _ => all[..len].iter().map(|b| format!("{b:02x}")).collect(),
                };
                assert_eq!(s, format!("{prefix}{want}"));
            }
        }
    }

    #[test]
    fn readme_example_round_trips() {
        let line = "726f7731 6366 71 1700000000000 Put 76616c -";
        let c = parse_cell_line(line).unwrap();
        assert_eq!(c.row, b"row1");
        assert_eq!(c.value, b"val");
        assert_eq!(cell_line(&c.as_ref(), false), line);
        assert_eq!(cell_line(&c.as_ref(), true), format!("{line} 0"));
    }

    #[test]
    fn the_parser_reuses_its_buffer_and_takes_any_ascii_whitespace() {
        let mut p = CellLineParser::default();
        let first = p.parse(b"726f7731 6366 71 5 Put 76616c -\n").unwrap();
        assert_eq!((first.row, first.value), (&b"row1"[..], &b"val"[..]));
        let second = p
            .parse(b"  72\t6366  - -9 DeleteFamily - 0001ab 42\r\n")
            .unwrap();
        assert_eq!(second.row, b"r");
        assert_eq!(second.qualifier, b"");
        assert_eq!(second.timestamp, -9);
        assert_eq!(second.cell_type, CellType::DeleteFamily);
        assert_eq!(second.tags, [0, 1, 0xab]);
        assert_eq!(second.seq_id, 42);
        let err = p.parse(b"72 63 71 1 Put 7g -").unwrap_err();
        assert_eq!(
            err,
            CellLineError::Hex {
                field: 6,
                name: "value",
                source: HexError::NotADigit {
                    byte: b'g',
                    offset: 1,
                    field: "7g".into()
                }
            }
        );
        assert_eq!(
            err.to_string(),
            "field 6 (value): 'g' is not a hex digit in '7g'"
        );
        let err = p.parse(b"72 63 71 1 Put 7 - 0 9").unwrap_err();
        assert_eq!(err, CellLineError::FieldCount { found: 9 });
        assert!(err.to_string().contains("found 9"), "{err}");
    }

    #[test]
    fn errors_name_the_field() {
        let err = |line: &str| parse_cell_line(line).unwrap_err();
        assert!(err("aa bb").to_string().contains("7 or 8"));
        assert_eq!(err("aa bb").field(), None);
        for (line, field, name) in [
            ("aa bb cc x Put - -", 4, "timestamp"),
            ("aa bb cc 1 Putt - -", 5, "type"),
            ("aa bb c 1 Put - -", 3, "qualifier"),
            ("aa bb cc 1 Put zz -", 6, "value"),
            ("aa bb cc 1 Put - - x", 8, "seqid"),
        ] {
            let e = err(line);
            assert_eq!(e.field(), Some(field), "{line}");
            assert!(e.to_string().contains(name), "{e}");
        }
    }
}
