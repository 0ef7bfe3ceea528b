//! Cell value encodings: how an input field's text becomes a cell value.
//! Prose: `formats/rowkey.md` §"Cell values".
//!
//! ```text
//! string   the field's bytes, unchanged
//! int64    Bytes.toBytes(long):   8 bytes, big-endian two's complement   (42 -> 00 00 00 00 00 00 00 2A)
//! double   Bytes.toBytes(double): Double.doubleToRawLongBits, then as int64  (1.5 -> 3F F8 00 .. 00)
//! int16    Bytes.toBytes(short):  2 bytes, big-endian                  (-2 -> FF FE)
//! int32    Bytes.toBytes(int):    4 bytes, big-endian                  (42 -> 00 00 00 2A)
//! float32  Bytes.toBytes(float):  Float.floatToRawIntBits, big-endian  (1.5 -> 3F C0 00 00)
//! boolean  Bytes.toBytes(boolean): one byte, FF true / 00 false (text true|false|1|0, any case)
//! bigdecimal Bytes.toBytes(BigDecimal): i32 scale big-endian, then the unscaled value's
//!          BigInteger.toByteArray (minimal two's complement, big-endian)
//!                                     (123.45 -> 00 00 00 02 30 39; -1 -> 00 00 00 00 FF)
//! hex      the bytes the hex digits spell                               (0aFF -> 0A FF)
//! base64   the bytes the base64 text (RFC 4648, padded) spells         (AQI= -> 01 02)
//! ```
//!
//! These are HBase's own value encodings (readable with `Bytes.toLong` / `Bytes.toDouble`); they
//! are not order-preserving for negative numbers, which is irrelevant for values. Row keys use
//! the ordered encodings of [`crate::mapping::rowkey`].

use base64::Engine;

use crate::error::{quote, RowkeyError};
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
        ValueType::Int16 => {
            let v: i16 = parse(field, text, "a 16-bit decimal integer (int16)")?;
            out.extend_from_slice(&v.to_be_bytes());
            Ok(())
        }
        ValueType::Int32 => {
            let v: i32 = parse(field, text, "a 32-bit decimal integer (int32)")?;
            out.extend_from_slice(&v.to_be_bytes());
            Ok(())
        }
        ValueType::Float32 => {
            let v: f32 = parse(field, text, "a decimal floating-point number (float32)")?;
            out.extend_from_slice(&v.to_bits().to_be_bytes());
            Ok(())
        }
        ValueType::Boolean => {
            let v = match text.to_ascii_lowercase().as_slice() {
                b"true" | b"1" => true,
                b"false" | b"0" => false,
                _ => return Err(not_a(field, text, "true, false, 1 or 0 (boolean)")),
            };
            out.push(if v { 0xFF } else { 0x00 });
            Ok(())
        }
        ValueType::BigDecimal => {
            let (unscaled, scale) = parse_decimal(text).ok_or_else(|| {
                not_a(
                    field,
                    text,
                    "a decimal number of at most 38 significant digits (bigdecimal)",
                )
            })?;
            out.extend_from_slice(&scale.to_be_bytes());
            out.extend_from_slice(&big_integer_bytes(unscaled));
            Ok(())
        }
        ValueType::Hex => {
            let at = out.len();
            hfkit_format::text::decode_hex_into(text, out).map_err(|_| {
                out.truncate(at);
                not_a(field, text, "hex digits, two per byte (hex)")
            })
        }
        ValueType::Base64 => base64::engine::general_purpose::STANDARD
            .decode_vec(text, out)
            .map_err(|_| not_a(field, text, "base64 text, RFC 4648 with padding (base64)")),
    }
}

/// The value of cell bytes `v` as the text its type imports from: the inverse of
/// [`encode_value`] (decimal numbers, `true`/`false`, lowercase hex, padded base64); `None`
/// when `v` is not a value of the type (a wrong length).
pub fn decode_value(ty: ValueType, v: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    decode_value_into(ty, v, &mut out)?;
    Some(out)
}

/// [`decode_value`] appended to `out` (which a row export reuses from cell to cell); on `None`
/// `out` is as it was.
pub fn decode_value_into(ty: ValueType, v: &[u8], out: &mut Vec<u8>) -> Option<()> {
    use std::io::Write as _;
    // Writes into a Vec cannot fail.
    let put = |out: &mut Vec<u8>, args: std::fmt::Arguments<'_>| {
        let _ = out.write_fmt(args);
    };
    match ty {
        ValueType::String => out.extend_from_slice(v),
        ValueType::Int64 | ValueType::Int16 | ValueType::Int32 => {
            let n: i64 = match ty {
                ValueType::Int16 => i16::from_be_bytes(v.try_into().ok()?).into(),
                ValueType::Int32 => i32::from_be_bytes(v.try_into().ok()?).into(),
                _ => i64::from_be_bytes(v.try_into().ok()?),
            };
            out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes())
        }
        // As `rowkey::format_f64`.
        ValueType::Double => put(
            out,
            format_args!("{}", f64::from_be_bytes(v.try_into().ok()?)),
        ),
        ValueType::Float32 => put(
            out,
            format_args!("{}", f32::from_be_bytes(v.try_into().ok()?)),
        ),
        ValueType::Boolean => match v {
            [0] => out.extend_from_slice(b"false"),
            [_] => out.extend_from_slice(b"true"),
            _ => return None,
        },
        ValueType::BigDecimal => {
            let scale = i32::from_be_bytes(v.get(..4)?.try_into().ok()?);
            let digits = v.get(4..).filter(|d| !d.is_empty() && d.len() <= 16)?;
            let mut b = [if digits[0] & 0x80 != 0 { 0xFF } else { 0 }; 16];
            b[16 - digits.len()..].copy_from_slice(digits);
            out.extend_from_slice(format_decimal(i128::from_be_bytes(b), scale).as_bytes())
        }
        ValueType::Hex => {
            for b in v {
                put(out, format_args!("{b:02x}"))
            }
        }
        ValueType::Base64 => out.extend_from_slice(
            base64::engine::general_purpose::STANDARD
                .encode(v)
                .as_bytes(),
        ),
    }
    Some(())
}

fn not_a(field: &str, text: &[u8], expected: &'static str) -> RowkeyError {
    RowkeyError::NotANumber {
        what: format!("field '{field}'"),
        value: quote(text),
        expected,
    }
}

fn parse<T: std::str::FromStr>(
    field: &str,
    text: &[u8],
    expected: &'static str,
) -> Result<T, RowkeyError> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse::<T>().ok())
        .ok_or_else(|| not_a(field, text, expected))
}

/// Decimal text as `java.math.BigDecimal(String)` reads it: an optional sign, digits with an
/// optional point, an optional exponent (`e`/`E`); the unscaled value and the scale (digits
/// after the point minus the exponent). `None` past 38 significant digits or a scale beyond i32.
fn parse_decimal(text: &[u8]) -> Option<(i128, i32)> {
    let s = std::str::from_utf8(text).ok()?;
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i64>().ok()?),
        None => (s, 0),
    };
    let (negative, digits) = match mantissa.as_bytes().first()? {
        b'-' => (true, &mantissa[1..]),
        b'+' => (false, &mantissa[1..]),
        _ => (false, mantissa),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut unscaled: i128 = 0;
    for c in int.bytes().chain(frac.bytes()) {
        if !c.is_ascii_digit() {
            return None;
        }
        unscaled = unscaled
            .checked_mul(10)?
            .checked_add(i128::from(c - b'0'))?;
    }
    if unscaled >= 10i128.pow(38) {
        return None;
    }
    let scale = i32::try_from(frac.len() as i64 - exponent).ok()?;
    Some((if negative { -unscaled } else { unscaled }, scale))
}

/// `BigInteger.toByteArray()`: the minimal two's-complement big-endian bytes (at least one).
fn big_integer_bytes(v: i128) -> Vec<u8> {
    let b = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let redundant = (b[start] == 0x00 && b[start + 1] & 0x80 == 0)
            || (b[start] == 0xFF && b[start + 1] & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    b[start..].to_vec()
}

/// `BigDecimal.toString()`-like plain text of `unscaled × 10^-scale`, without an exponent
/// (`12345, 2` -> `123.45`; `1, -3` -> `1000`), which [`parse_decimal`] reads back as a number
/// of the same value (the scale may differ when it was negative).
fn format_decimal(unscaled: i128, scale: i32) -> String {
    let negative = unscaled < 0;
    let digits = unscaled.unsigned_abs().to_string();
    let body = if scale <= 0 {
        format!("{digits}{}", "0".repeat(scale.unsigned_abs() as usize))
    } else {
        let scale = scale as usize;
        let padded = format!("{digits:0>width$}", width = scale + 1);
        let (i, f) = padded.split_at(padded.len() - scale);
        format!("{i}.{f}")
    };
    if negative {
        format!("-{body}")
    } else {
        body
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

    /// Each new type's bytes, written out by hand from HBase's `Bytes.toBytes` overloads.
    #[test]
    fn hbase_value_types_exact_bytes() {
        let enc = |ty: ValueType, text: &str| {
            let mut out = Vec::new();
            encode_value(ty, "f", text.as_bytes(), &mut out).map(|()| out)
        };
        assert_eq!(enc(ValueType::Int16, "-2").unwrap(), [0xFF, 0xFE]);
        assert_eq!(enc(ValueType::Int16, "32767").unwrap(), [0x7F, 0xFF]);
        assert!(enc(ValueType::Int16, "32768").is_err());
        assert_eq!(enc(ValueType::Int32, "42").unwrap(), [0, 0, 0, 0x2A]);
        assert_eq!(enc(ValueType::Int32, "-1").unwrap(), [0xFF; 4]);
        assert!(enc(ValueType::Int32, "2147483648").is_err());
        // 1.5f = 0x3FC00000; -2.0f = 0xC0000000; 0.1f = 0x3DCCCCCD.
        assert_eq!(enc(ValueType::Float32, "1.5").unwrap(), [0x3F, 0xC0, 0, 0]);
        assert_eq!(enc(ValueType::Float32, "-2").unwrap(), [0xC0, 0, 0, 0]);
        assert_eq!(
            enc(ValueType::Float32, "0.1").unwrap(),
            [0x3D, 0xCC, 0xCC, 0xCD]
        );
        assert_eq!(enc(ValueType::Boolean, "true").unwrap(), [0xFF]);
        assert_eq!(enc(ValueType::Boolean, "FALSE").unwrap(), [0x00]);
        assert_eq!(enc(ValueType::Boolean, "1").unwrap(), [0xFF]);
        assert!(enc(ValueType::Boolean, "yes").is_err());
        // new BigDecimal("123.45"): scale 2, unscaled 12345 = 0x3039.
        assert_eq!(
            enc(ValueType::BigDecimal, "123.45").unwrap(),
            [0, 0, 0, 2, 0x30, 0x39]
        );
        // -1: scale 0, BigInteger(-1).toByteArray() = [FF].
        assert_eq!(
            enc(ValueType::BigDecimal, "-1").unwrap(),
            [0, 0, 0, 0, 0xFF]
        );
        // 0.00: scale 2, [00]; 128: [00 80] (a sign byte); -128: [80]; -129: [FF 7F].
        assert_eq!(enc(ValueType::BigDecimal, "0.00").unwrap(), [0, 0, 0, 2, 0]);
        assert_eq!(
            enc(ValueType::BigDecimal, "128").unwrap(),
            [0, 0, 0, 0, 0, 0x80]
        );
        assert_eq!(
            enc(ValueType::BigDecimal, "-128").unwrap(),
            [0, 0, 0, 0, 0x80]
        );
        assert_eq!(
            enc(ValueType::BigDecimal, "-129").unwrap(),
            [0, 0, 0, 0, 0xFF, 0x7F]
        );
        // 1E+3: unscaled 1, scale -3 (FF FF FF FD); -0.5: unscaled -5, scale 1.
        assert_eq!(
            enc(ValueType::BigDecimal, "1E+3").unwrap(),
            [0xFF, 0xFF, 0xFF, 0xFD, 0x01]
        );
        assert_eq!(
            enc(ValueType::BigDecimal, "-.5").unwrap(),
            [0, 0, 0, 1, 0xFB]
        );
        // 2^64 = 18446744073709551616: unscaled bytes 01 then eight 00.
        let mut want = vec![0, 0, 0, 0, 0x01];
        want.extend([0; 8]);
        assert_eq!(
            enc(ValueType::BigDecimal, "18446744073709551616").unwrap(),
            want
        );
        assert!(enc(ValueType::BigDecimal, "1.2.3").is_err());
        assert!(enc(ValueType::BigDecimal, &"9".repeat(39)).is_err());
        assert_eq!(enc(ValueType::Hex, "0aFF").unwrap(), [0x0A, 0xFF]);
        assert!(enc(ValueType::Hex, "abc").is_err());
        assert_eq!(enc(ValueType::Base64, "AQI=").unwrap(), [1, 2]);
        assert_eq!(enc(ValueType::Base64, "aGJhc2U=").unwrap(), b"hbase");
        assert!(enc(ValueType::Base64, "AQI").is_err());
        let e = enc(ValueType::Boolean, "yes").unwrap_err().to_string();
        assert_eq!(e, "field 'f': 'yes' is not true, false, 1 or 0 (boolean)");
    }

    /// What each type writes reads back as text that writes the same bytes.
    #[test]
    fn decoded_values_encode_to_the_same_bytes() {
        let cases = [
            (ValueType::Int16, "-300"),
            (ValueType::Int32, "123456"),
            (ValueType::Float32, "0.1"),
            (ValueType::Boolean, "true"),
            (ValueType::Boolean, "0"),
            (ValueType::BigDecimal, "-123.4500"),
            (ValueType::BigDecimal, "1E+3"),
            (ValueType::BigDecimal, "0.001"),
            (ValueType::Hex, "00ff10"),
            (ValueType::Base64, "aGJhc2U="),
        ];
        for (ty, text) in cases {
            let mut bytes = Vec::new();
            encode_value(ty, "f", text.as_bytes(), &mut bytes).unwrap();
            let back = decode_value(ty, &bytes).unwrap();
            let mut again = Vec::new();
            encode_value(ty, "f", &back, &mut again).unwrap();
            // 1E+3 comes back as 1000 (scale 0): the same number, another scale.
            if text == "1E+3" {
                assert_eq!(back, b"1000");
                continue;
            }
            assert_eq!(again, bytes, "{ty:?} {text}");
        }
        assert_eq!(decode_value(ValueType::Int32, &[1, 2]), None);
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
