//! The canonical cell text form shared with the HBase fixtures (`../shared/fixtures/README.md`):
//! one cell per line,
//!
//! ```text
//! row_hex family_hex qualifier_hex timestamp type value_hex tags_hex [seqid]
//! ```
//! lowercase hex, `-` for empty bytes, type by HBase name, seqid only when asked for.

use std::fmt::Write as _;

use super::cell::{Cell, CellRef, CellType, CellTypeOwned};

/// Appends `bytes` as lowercase hex, or `-` when empty.
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    if bytes.is_empty() {
        out.push('-');
        return;
    }
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
}

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
    push_hex(out, cell.family);
    out.push(' ');
    push_hex(out, cell.qualifier);
    let _ = write!(out, " {} {} ", cell.timestamp, cell.cell_type.name());
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

/// Decodes hex (or `-` for empty).
pub fn parse_hex(s: &str) -> Result<Vec<u8>, String> {
    if s == "-" {
        return Ok(Vec::new());
    }
    if !s.len().is_multiple_of(2) {
        return Err(format!("hex field '{s}' has an odd number of digits"));
    }
    let digit = |c: u8| -> Result<u8, String> {
        match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            b'A'..=b'F' => Ok(c - b'A' + 10),
            _ => Err(format!("'{}' is not a hex digit in '{s}'", c as char)),
        }
    };
    s.as_bytes()
        .chunks(2)
        .map(|p| Ok(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

/// Parses one cell line. The error says which field is wrong.
pub fn parse_cell_line(line: &str) -> Result<Cell, String> {
    let f: Vec<&str> = line.split_ascii_whitespace().collect();
    if f.len() != 7 && f.len() != 8 {
        return Err(format!(
            "expected 7 or 8 space-separated fields (row family qualifier timestamp type value tags [seqid]), found {}",
            f.len()
        ));
    }
    let field = |i: usize, name: &str| {
        parse_hex(f[i]).map_err(|e| format!("field {} ({name}): {e}", i + 1))
    };
    let timestamp = f[3].parse::<i64>().map_err(|_| {
        format!(
            "field 4 (timestamp): '{}' is not a signed 64-bit integer",
            f[3]
        )
    })?;
    let cell_type = CellType::from_name(f[4]).ok_or_else(|| {
        format!(
            "field 5 (type): '{}' is not one of Put, Delete, DeleteColumn, DeleteFamily, DeleteFamilyVersion",
            f[4]
        )
    })?;
    let seq_id = match f.get(7) {
        Some(s) => s
            .parse::<u64>()
            .map_err(|_| format!("field 8 (seqid): '{s}' is not an unsigned integer"))?,
        None => 0,
    };
    Ok(Cell {
        row: field(0, "row")?,
        family: field(1, "family")?,
        qualifier: field(2, "qualifier")?,
        timestamp,
        cell_type: CellTypeOwned(cell_type),
        value: field(5, "value")?,
        tags: field(6, "tags")?,
        seq_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn errors_name_the_field() {
        assert!(parse_cell_line("aa bb").unwrap_err().contains("7 or 8"));
        assert!(parse_cell_line("aa bb cc x Put - -")
            .unwrap_err()
            .contains("timestamp"));
        assert!(parse_cell_line("aa bb cc 1 Putt - -")
            .unwrap_err()
            .contains("type"));
        assert!(parse_cell_line("aa bb c 1 Put - -")
            .unwrap_err()
            .contains("qualifier"));
        assert!(parse_cell_line("aa bb cc 1 Put zz -")
            .unwrap_err()
            .contains("value"));
    }
}
