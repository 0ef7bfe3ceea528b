//! Cell value encodings: how an input field's text becomes a cell value.
//! Prose: `formats/rowkey.md` §"Cell values".
//!
//! ```text
//! string   the field's bytes, unchanged
//! int64    Bytes.toBytes(long):   8 bytes, big-endian two's complement   (42 -> 00 00 00 00 00 00 00 2A)
//! double   Bytes.toBytes(double): Double.doubleToRawLongBits, then as int64  (1.5 -> 3F F8 00 .. 00)
//! ```
//!
//! These are HBase's own value encodings (readable with `Bytes.toLong` / `Bytes.toDouble`); they
//! are not order-preserving for negative numbers, which is irrelevant for values. Row keys use
//! the ordered encodings of [`super::rowkey`].

use super::error::{quote, RowkeyError};
use hfkit_table::ValueType;

/// Appends the cell value of `text` (input field `field`) encoded as `ty`.
pub fn encode_value(
    ty: ValueType,
    field: &str,
    text: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), RowkeyError> {
    match ty {
        ValueType::String => {
            out.extend_from_slice(text);
            Ok(())
        }
        ValueType::Int64 => encode_int64(field, text, out),
        ValueType::Double => encode_double(field, text, out),
    }
}

/// `Bytes.toBytes(long)`: 8 bytes, big-endian.
pub fn long_bytes(v: i64) -> [u8; 8] {
    v.to_be_bytes()
}

/// `Bytes.toBytes(double)`: the raw IEEE 754 bits (`doubleToRawLongBits`), big-endian.
pub fn double_bytes(v: f64) -> [u8; 8] {
    v.to_bits().to_be_bytes()
}

/// Parses decimal text (optional sign) as an `int64` value and appends `Bytes.toBytes(long)`.
/// `field` names the input field in errors.
pub fn encode_int64(field: &str, text: &[u8], out: &mut Vec<u8>) -> Result<(), RowkeyError> {
    let v = std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| RowkeyError::NotANumber {
            what: format!("field '{field}'"),
            value: quote(text),
            expected: "a 64-bit decimal integer (int64)",
        })?;
    out.extend_from_slice(&long_bytes(v));
    Ok(())
}

/// Parses decimal text (`1.5`, `-2e10`, `inf`, `NaN`) as a `double` value and appends
/// `Bytes.toBytes(double)`. `field` names the input field in errors.
pub fn encode_double(field: &str, text: &[u8], out: &mut Vec<u8>) -> Result<(), RowkeyError> {
    let v = std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .ok_or_else(|| RowkeyError::NotANumber {
            what: format!("field '{field}'"),
            value: quote(text),
            expected: "a decimal floating-point number (double)",
        })?;
    out.extend_from_slice(&double_bytes(v));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_bytes_match_hbase() {
        assert_eq!(long_bytes(0), [0; 8]);
        assert_eq!(long_bytes(42), [0, 0, 0, 0, 0, 0, 0, 0x2A]);
        assert_eq!(long_bytes(-1), [0xFF; 8]);
        assert_eq!(long_bytes(i64::MIN), [0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            long_bytes(1_700_000_000_000),
            [0, 0, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x00]
        );
    }

    #[test]
    fn double_bytes_match_hbase() {
        assert_eq!(double_bytes(1.5), [0x3F, 0xF8, 0, 0, 0, 0, 0, 0]);
        assert_eq!(double_bytes(-2.0), [0xC0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(double_bytes(0.0), [0; 8]);
        // Raw bits: -0.0 keeps its sign, unlike the ordered row key encoding.
        assert_eq!(double_bytes(-0.0), [0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(double_bytes(f64::INFINITY), [0x7F, 0xF0, 0, 0, 0, 0, 0, 0]);
        // Java's canonical NaN 0x7ff8000000000000 is also Rust's.
        assert_eq!(double_bytes(f64::NAN), [0x7F, 0xF8, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn encode_by_type() {
        let mut out = Vec::new();
        encode_value(ValueType::String, "s", b"-2", &mut out).unwrap();
        encode_value(ValueType::Int64, "n", b"-2", &mut out).unwrap();
        encode_value(ValueType::Double, "d", b"-2", &mut out).unwrap();
        let want = [
            b"-2".as_slice(),
            &long_bytes(-2),
            &[0xC0, 0, 0, 0, 0, 0, 0, 0],
        ]
        .concat();
        assert_eq!(out, want);
    }

    #[test]
    fn encode_from_text() {
        let mut out = Vec::new();
        encode_int64("n", b"-2", &mut out).unwrap();
        encode_double("d", b"1.5", &mut out).unwrap();
        assert_eq!(
            out,
            [
                [0xFF; 7].as_slice(),
                &[0xFE],
                &[0x3F, 0xF8, 0, 0, 0, 0, 0, 0]
            ]
            .concat()
        );
        let e = encode_int64("amount", b"12.5", &mut out)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "field 'amount': '12.5' is not a 64-bit decimal integer (int64)"
        );
        let e = encode_double("price", b"", &mut out)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "field 'price': '' is not a decimal floating-point number (double)"
        );
    }
}
