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

/// Appends `bytes` as lowercase hex, or `-` when empty.
#[inline]
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    if bytes.is_empty() {
        out.push('-');
        return;
    }
    // SAFETY: only ASCII hex digits are written, so the string stays UTF-8.
    let v = unsafe { out.as_mut_vec() };
    let (start, n) = (v.len(), bytes.len() * 2);
    v.reserve(n);
    // Written straight into the reserved bytes (no zero-fill first: a scan's cell lines
    // spent a fifth of their formatting there), four bytes to eight digits at a time.
    let spare = &mut v.spare_capacity_mut()[..n];
    let (words, tail) = bytes.split_at(bytes.len() / 4 * 4);
    let (word_out, tail_out) = spare.split_at_mut(words.len() * 2);
    for (to, from) in word_out.chunks_exact_mut(8).zip(words.chunks_exact(4)) {
        let digits = hex_of_four([from[0], from[1], from[2], from[3]]);
        for (slot, d) in to.iter_mut().zip(digits) {
            slot.write(d);
        }
    }
    for (pair, b) in tail_out.chunks_exact_mut(2).zip(tail) {
        let [hi, lo] = HEX_PAIRS[*b as usize];
        pair[0].write(hi);
        pair[1].write(lo);
    }
    // SAFETY: the `n` bytes after `start` were written just above (`word_out` and
    // `tail_out` split those `n` exactly, each filled whole).
    unsafe { v.set_len(start + n) };
}

/// The eight lowercase hex digits of four bytes, computed in one 64-bit word: each byte
/// spread into a 16-bit lane, its high nibble in the lane's first byte and its low nibble in
/// the second, then every nibble `d` made `'0' + d`, plus `'a' - '0' - 10` where `d > 9`
/// (no carry crosses a byte: every sum stays under 0x67).
#[inline(always)]
fn hex_of_four(b: [u8; 4]) -> [u8; 8] {
    const NIBBLES: u64 = 0x000F_000F_000F_000F;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let x = u64::from(u32::from_le_bytes(b));
    let x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    let x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    let d = ((x >> 4) & NIBBLES) | ((x & NIBBLES) << 8);
    let over_nine = ((d + ONES * 6) >> 4) & ONES;
    (d + ONES * b'0' as u64 + over_nine * u64::from(b'a' - b'0' - 10)).to_le_bytes()
}

/// The two lowercase hex digits of each byte.
const HEX_PAIRS: [[u8; 2]; 256] = {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [DIGITS[i >> 4], DIGITS[i & 15]];
        i += 1;
    }
    t
};

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

/// Writes cell lines for a reader of many cells: the hex of a row once for all of its cells,
/// a column's hex once per place ([`ColumnTexts`]), a timestamp's digits once while cells
/// share it ([`TimestampText`]).
#[derive(Debug, Default)]
pub struct CellLines {
    row_hex: String,
    columns: ColumnTexts,
    timestamp: TimestampText,
}

impl CellLines {
    /// Starts the cells of `row`.
    pub fn start_row(&mut self, row: &[u8]) {
        self.row_hex.clear();
        push_hex(&mut self.row_hex, row);
        self.row_hex.push(' ');
        self.columns.start_row();
    }

    /// Appends the line of `cell` (without the newline), of the row last started.
    pub fn push(&mut self, out: &mut String, cell: &CellRef<'_>, with_seq_id: bool) {
        out.push_str(&self.row_hex);
        self.columns
            .push(out, cell.family, cell.qualifier, push_column_hex);
        self.timestamp.push(out, cell.timestamp);
        out.push(' ');
        push_cell_line_end(out, cell, with_seq_id);
    }
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
        /// Lines written by `CellLines` (rows, columns and timestamps remembered) are the
        /// lines `push_cell_line` writes alone, over rows whose columns move, repeat or run
        /// past the places remembered, and any bytes.
        #[test]
        fn cell_lines_write_what_push_cell_line_writes(
            rows in proptest::collection::vec(
                (
                    proptest::collection::vec(proptest::num::u8::ANY, 0..6),
                    proptest::collection::vec(
                        (0u8..3, 0u8..4, 0i64..3, proptest::collection::vec(proptest::num::u8::ANY, 0..12)),
                        0..8,
                    ),
                    0usize..2,
                ),
                0..12,
            ),
            seq in proptest::bool::ANY,
        ) {
            let mut lines = CellLines::default();
            let (mut cached, mut plain) = (String::new(), String::new());
            for (row, cells, wide) in &rows {
                lines.start_row(row);
                // A wide row goes past the places remembered.
                let extra = if *wide == 1 { COLUMN_TEXT_PLACES + 3 } else { 0 };
                let many = cells.iter().cycle().take(cells.len() + extra.min(cells.len() * 400));
                for (f, q, ts, value) in many {
                    let family = [b'f', *f];
                    // Qualifiers of one length and different bytes too.
                    let qualifier: &[u8] = [&b""[..], b"a", b"b", b"ab"][usize::from(*q)];
                    let c = CellRef {
                        row,
                        family: &family[..usize::from(*f % 2) + 1],
                        qualifier,
                        timestamp: *ts - 1,
                        cell_type: CellType::Put,
                        value,
                        tags: &[],
                        seq_id: u64::from(*f),
                    };
                    lines.push(&mut cached, &c, seq);
                    cached.push('\n');
                    push_cell_line(&mut plain, &c, seq);
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
