//! Evaluating a parsed rowkey spec over one record's fields: each function's bytes
//! (`formats/rowkey.md` §"Functions"), and the key length checks.

use md5::{Digest, Md5};

use super::{BucketUnit, Func, Node, TsFormat, TsUnit};
use crate::error::{quote, RowkeyError};
use crate::mapping::timestamp::{civil_from_days, TimestampFormat};
use hfkit_format::bloom::hash::murmur;
use hfkit_format::cell::MAX_ROW_LEN;

/// Width of `reverse_ts` decimal output: digits of `i64::MAX`.
pub(super) const REVERSE_TS_DIGITS: usize = 19;
/// First millisecond of year 10000: `bucket` output has 4-digit years.
const BUCKET_MAX_MS: i64 = 253_402_300_800_000;
const MS_PER_HOUR: i64 = 3_600_000;
const MS_PER_DAY: i64 = 24 * MS_PER_HOUR;

pub(super) fn encode_key<'r>(
    nodes: &[Node],
    names: &[String],
    ts: &TimestampFormat,
    get: &dyn Fn(usize) -> Option<&'r [u8]>,
    out: &mut Vec<u8>,
    pool: &mut Vec<Vec<u8>>,
) -> Result<(), RowkeyError> {
    let start = out.len();
    eval(nodes, names, ts, get, out, pool, 0)?;
    let len = out.len() - start;
    if len == 0 {
        return Err(RowkeyError::EmptyKey);
    }
    if len > MAX_ROW_LEN {
        return Err(RowkeyError::KeyTooLong {
            len,
            max: MAX_ROW_LEN,
        });
    }
    Ok(())
}

pub(super) fn eval<'r>(
    nodes: &[Node],
    names: &[String],
    ts: &TimestampFormat,
    get: &dyn Fn(usize) -> Option<&'r [u8]>,
    out: &mut Vec<u8>,
    pool: &mut Vec<Vec<u8>>,
    depth: usize,
) -> Result<(), RowkeyError> {
    for node in nodes {
        match node {
            Node::Literal(b) => out.extend_from_slice(b),
            Node::Field { slot, .. } => out.extend_from_slice(field(names, get, *slot)?),
            Node::Call { func, input, what } => {
                if pool.len() <= depth {
                    pool.resize_with(depth + 1, Vec::new);
                }
                let mut buf = std::mem::take(&mut pool[depth]);
                let result = match input.as_slice() {
                    // A lone field is read in place, without a copy.
                    [Node::Field { slot, .. }] => field(names, get, *slot)
                        .and_then(|bytes| apply(*func, what, ts, bytes, out)),
                    _ => {
                        buf.clear();
                        eval(input, names, ts, get, &mut buf, pool, depth + 1)
                            .and_then(|()| apply(*func, what, ts, &buf, out))
                    }
                };
                pool[depth] = buf;
                result?;
            }
        }
    }
    Ok(())
}

fn field<'r>(
    names: &[String],
    get: &dyn Fn(usize) -> Option<&'r [u8]>,
    slot: usize,
) -> Result<&'r [u8], RowkeyError> {
    get(slot).ok_or_else(|| RowkeyError::MissingField {
        field: names[slot].clone(),
    })
}

pub(super) fn apply(
    func: Func,
    what: &str,
    ts: &TimestampFormat,
    x: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), RowkeyError> {
    match func {
        Func::Salt {
            buckets,
            width,
            letters,
        } => {
            let bucket = (murmur(x, 0) as u32) % buckets;
            if letters {
                // `buckets` is at most 52 for letters (checked when parsed).
                out.push(super::SALT_LETTERS[bucket as usize]);
            } else {
                push_padded(out, u64::from(bucket), width);
            }
        }
        Func::HashPrefix { chars } => {
            let digest = Md5::digest(x);
            const HEX: &[u8; 16] = b"0123456789abcdef";
            for i in 0..chars {
                let b = digest[i / 2];
                let nibble = if i % 2 == 0 { b >> 4 } else { b & 0x0F };
                out.push(HEX[usize::from(nibble)]);
            }
        }
        Func::Reverse => out.extend(x.iter().rev()),
        Func::ReverseDomain => {
            for (i, label) in x.rsplit(|&b| b == b'.').enumerate() {
                if i > 0 {
                    out.push(b'.');
                }
                out.extend_from_slice(label);
            }
        }
        Func::Mod { modulus, width } => {
            let v = parse_i64(what, x)?;
            // `modulus` is at most 1_000_000: fits i64.
            let m = v.rem_euclid(modulus as i64);
            push_padded(out, m as u64, width);
        }
        Func::ReverseTs(fmt, unit) => {
            let ms = parse_ts(what, ts, x)?;
            if ms < 0 {
                return Err(RowkeyError::OutOfRange {
                    what: what.to_string(),
                    value: ms.to_string(),
                    reason: "a timestamp must not be negative".into(),
                });
            }
            let reversed = i64::MAX
                - match unit {
                    TsUnit::Millis => ms,
                    TsUnit::Seconds => ms / 1000,
                };
            match fmt {
                TsFormat::Decimal => push_padded(out, reversed as u64, REVERSE_TS_DIGITS),
                TsFormat::Binary => out.extend_from_slice(&reversed.to_be_bytes()),
            }
        }
        Func::Bucket(unit) => {
            let ms = parse_ts(what, ts, x)?;
            if !(0..BUCKET_MAX_MS).contains(&ms) {
                return Err(RowkeyError::OutOfRange {
                    what: what.to_string(),
                    value: ms.to_string(),
                    reason: format!(
                        "bucket takes epoch milliseconds in 0..{BUCKET_MAX_MS} (years 1970-9999)"
                    ),
                });
            }
            push_bucket(out, ms, unit);
        }
        Func::Pad { width } => {
            if x.is_empty() || !x.iter().all(u8::is_ascii_digit) {
                return Err(RowkeyError::NotANumber {
                    what: what.to_string(),
                    value: quote(x),
                    expected: "a non-negative decimal integer (digits only)",
                });
            }
            if x.len() > width {
                return Err(RowkeyError::TooWide {
                    what: what.to_string(),
                    value: quote(x),
                    len: x.len(),
                    width,
                });
            }
            out.resize(out.len() + (width - x.len()), b'0');
            out.extend_from_slice(x);
        }
        Func::I64Be => out.extend_from_slice(&i64_ordered(parse_i64(what, x)?)),
        Func::F64Be => {
            let v = parse_f64(what, x)?;
            if v.is_nan() {
                return Err(RowkeyError::NotANumber {
                    what: what.to_string(),
                    value: quote(x),
                    expected: "a number (NaN has no place in an order)",
                });
            }
            out.extend_from_slice(&f64_ordered(v));
        }
    }
    Ok(())
}

/// `v` in decimal, left-padded with '0' to `width` digits.
fn push_padded(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut digits = [0u8; 20];
    let mut n = 0;
    let mut rest = v;
    loop {
        digits[n] = b'0' + (rest % 10) as u8;
        n += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.resize(out.len() + width.saturating_sub(n), b'0');
    out.extend(digits[..n].iter().rev());
}

fn parse_i64(what: &str, x: &[u8]) -> Result<i64, RowkeyError> {
    std::str::from_utf8(x)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| RowkeyError::NotANumber {
            what: what.to_string(),
            value: quote(x),
            expected: "a 64-bit decimal integer",
        })
}

/// A `reverse_ts` / `bucket` input: epoch milliseconds as read in the spec's timestamp format.
fn parse_ts(what: &str, ts: &TimestampFormat, x: &[u8]) -> Result<i64, RowkeyError> {
    ts.to_millis(x).map_err(|source| RowkeyError::Timestamp {
        what: what.to_string(),
        source,
    })
}

fn parse_f64(what: &str, x: &[u8]) -> Result<f64, RowkeyError> {
    std::str::from_utf8(x)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .ok_or_else(|| RowkeyError::NotANumber {
            what: what.to_string(),
            value: quote(x),
            expected: "a decimal floating-point number",
        })
}

/// `i64be`: big-endian with the sign bit flipped, so byte order is numeric order.
pub fn i64_ordered(v: i64) -> [u8; 8] {
    ((v as u64) ^ (1 << 63)).to_be_bytes()
}

/// `f64be`: IEEE bits, sign bit flipped for non-negative numbers and all bits flipped for
/// negative ones, so byte order is numeric order. -0.0 is encoded as 0.0. `v` must not be NaN.
pub fn f64_ordered(v: f64) -> [u8; 8] {
    let v = if v == 0.0 { 0.0 } else { v };
    let bits = v.to_bits();
    let ordered = if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    };
    ordered.to_be_bytes()
}

fn push_bucket(out: &mut Vec<u8>, ms: i64, unit: BucketUnit) {
    if let BucketUnit::Span { ms: span, digits } = unit {
        let start = ms - ms.rem_euclid(span);
        let (y, m, d) = civil_from_days(start.div_euclid(MS_PER_DAY));
        let in_day = start.rem_euclid(MS_PER_DAY) / 1000;
        let fields = [
            (y as u64, 4),
            (u64::from(m), 2),
            (u64::from(d), 2),
            ((in_day / 3600) as u64, 2),
            ((in_day / 60 % 60) as u64, 2),
            ((in_day % 60) as u64, 2),
        ];
        let mut written = 0;
        for (v, w) in fields {
            if written == digits {
                break;
            }
            push_padded(out, v, w);
            written += w;
        }
        return;
    }
    let days = ms.div_euclid(MS_PER_DAY);
    let days = match unit {
        // 1970-01-01 was a Thursday: (days + 3) mod 7 is 0 on Mondays.
        BucketUnit::Week => days - (days + 3).rem_euclid(7),
        _ => days,
    };
    let (y, m, d) = civil_from_days(days);
    push_padded(out, y as u64, 4);
    push_padded(out, u64::from(m), 2);
    if unit != BucketUnit::Month {
        push_padded(out, u64::from(d), 2);
    }
    if unit == BucketUnit::Hour {
        push_padded(out, (ms.rem_euclid(MS_PER_DAY) / MS_PER_HOUR) as u64, 2);
    }
}

#[cfg(test)]
mod tests {
    use super::super::RowkeySpec;
    use super::*;
    use proptest::prelude::*;

    fn enc(spec: &str, fields: &[(&str, &[u8])]) -> Result<Vec<u8>, RowkeyError> {
        let spec = RowkeySpec::parse(spec)?;
        let lookup = |name: &str| fields.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        let mut out = Vec::new();
        spec.encode(&lookup, &mut out)?;
        // The compiled path gives the same bytes.
        let names: Vec<&str> = fields.iter().map(|(n, _)| *n).collect();
        let values: Vec<&[u8]> = fields.iter().map(|(_, v)| *v).collect();
        let mut e = spec.compile(&names)?;
        let mut out2 = b"prefix".to_vec();
        e.encode(&values, &mut out2)?;
        assert_eq!(&out2[6..], &out[..]);
        Ok(out)
    }

    fn one(spec: &str, v: &[u8]) -> Result<Vec<u8>, RowkeyError> {
        enc(spec, &[("x", v)])
    }

    #[test]
    fn literals_fields_concat() {
        let k = enc(
            r#"a + "_" + `b c` + '\x00\xff\\\'\"\n\t\r\0'"#,
            &[("a", b"A"), ("b c", b"B")],
        );
        assert_eq!(k.unwrap(), b"A_B\x00\xff\\'\"\n\t\r\x00");
    }

    #[test]
    fn salt_bytes() {
        // murmur("user42", 0) as u32 mod 16, two digits.
        let h = murmur(b"user42", 0) as u32;
        assert_eq!(
            one("salt(16, x)", b"user42").unwrap(),
            format!("{:02}", h % 16).as_bytes()
        );
        // HBase's reference value: murmur("abc", 0) = 324500635; mod 16 = 11, mod 10 = 5,
        // mod 1000 = 635.
        assert_eq!(one("salt(16, x)", b"abc").unwrap(), b"11");
        assert_eq!(one("salt(10, x)", b"abc").unwrap(), b"5");
        assert_eq!(one("salt(1000, x)", b"abc").unwrap(), b"635");
        assert_eq!(one("salt(1, x)", b"abc").unwrap(), b"0");
        // Several fields are concatenated: salt(N, a, b) == salt(N, a + b).
        let f: &[(&str, &[u8])] = &[("a", b"ab"), ("b", b"c")];
        assert_eq!(enc("salt(16, a, b)", f).unwrap(), b"11");
        assert_eq!(enc("salt(16, a + b)", f).unwrap(), b"11");
        // murmur("row1", 0) = 155469074 is positive; a negative hash uses its u32 value:
        // murmur("a", 0) = -1838653602 -> 2456313694 mod 100 = 94.
        assert_eq!(one("salt(100, x)", b"a").unwrap(), b"94");
    }

    #[test]
    fn hash_prefix_bytes() {
        // MD5("abc") = 900150983cd24fb0d6963f7d28e17f72
        assert_eq!(one("hash_prefix(6, x)", b"abc").unwrap(), b"900150");
        assert_eq!(
            one("hash_prefix(32, x)", b"abc").unwrap(),
            b"900150983cd24fb0d6963f7d28e17f72"
        );
        assert_eq!(one("hash_prefix(1, x)", b"").unwrap(), b"d"); // d41d8cd9...
    }

    #[test]
    fn reverse_bytes() {
        assert_eq!(one("reverse(x)", b"12345").unwrap(), b"54321");
        assert_eq!(
            one("reverse_domain(x)", b"www.example.com").unwrap(),
            b"com.example.www"
        );
        assert_eq!(
            one("reverse_domain(x)", b"localhost").unwrap(),
            b"localhost"
        );
        assert_eq!(one("reverse_domain(x)", b"a..b.").unwrap(), b".b..a");
    }

    #[test]
    fn reverse_ts_bytes() {
        assert_eq!(one("reverse_ts(x)", b"0").unwrap(), b"9223372036854775807");
        assert_eq!(
            one("reverse_ts(x, dec)", b"1700000000000").unwrap(),
            b"9223370336854775807"
        );
        assert_eq!(
            one("reverse_ts(x, bin)", b"1").unwrap(),
            [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE]
        );
        assert_eq!(
            one("reverse_ts(x)", b"9223372036854775807").unwrap(),
            b"0000000000000000000"
        );
        let e = one("reverse_ts(x)", b"-1").unwrap_err().to_string();
        assert!(e.contains("reverse_ts(x)") && e.contains("negative"), "{e}");
    }

    #[test]
    fn bucket_bytes() {
        // 1700000000000 = 2023-11-14T22:13:20Z, a Tuesday.
        let ts = b"1700000000000";
        assert_eq!(one("bucket(x, hour)", ts).unwrap(), b"2023111422");
        assert_eq!(one("bucket(x, day)", ts).unwrap(), b"20231114");
        assert_eq!(one("bucket(x, week)", ts).unwrap(), b"20231113");
        assert_eq!(one("bucket(x, month)", ts).unwrap(), b"202311");
        assert_eq!(one("bucket(x, 'day')", b"0").unwrap(), b"19700101");
        // The first days of 1970 belong to the week starting Monday 1969-12-29.
        assert_eq!(one("bucket(x, week)", b"0").unwrap(), b"19691229");
        // Leap day and the last representable millisecond.
        assert_eq!(one("bucket(x, day)", b"951782400000").unwrap(), b"20000229");
        assert_eq!(
            one("bucket(x, hour)", b"253402300799999").unwrap(),
            b"9999123123"
        );
        assert!(one("bucket(x, day)", b"253402300800000").is_err());
        assert!(one("bucket(x, day)", b"-1").is_err());
    }

    /// `reverse_ts` and `bucket` read their input in the spec's timestamp format.
    #[test]
    fn timestamp_formats_in_specs() {
        let with = |spec: &str, format: &str, v: &[u8]| -> Result<Vec<u8>, RowkeyError> {
            let spec = RowkeySpec::parse(spec)?
                .with_timestamp_format(TimestampFormat::parse(format).unwrap());
            let mut e = spec.compile(&["x"])?;
            let mut out = Vec::new();
            e.encode(&vec![v], &mut out)?;
            Ok(out)
        };
        // 1700000000000 = 2023-11-14T22:13:20Z.
        let want = one("reverse_ts(x)", b"1700000000000").unwrap();
        assert_eq!(want, b"9223370336854775807");
        assert_eq!(
            with("reverse_ts(x)", "epoch_s", b"1700000000").unwrap(),
            want
        );
        assert_eq!(
            with("reverse_ts(x)", "%Y-%m-%d %H:%M:%S", b"2023-11-14 22:13:20").unwrap(),
            want
        );
        assert_eq!(
            with(
                "reverse_ts(x, bin)",
                "%Y-%m-%dT%H:%M:%S%z",
                b"2023-11-15T00:13:20+0200"
            )
            .unwrap(),
            (i64::MAX - 1_700_000_000_000).to_be_bytes()
        );
        assert_eq!(
            with("bucket(x, hour)", "%d.%m.%Y %H:%M", b"14.11.2023 22:59").unwrap(),
            b"2023111422"
        );
        assert_eq!(
            with("bucket(x, week)", "%Y-%m-%d", b"2023-11-14").unwrap(),
            b"20231113"
        );
        // Surrounding spaces are ignored, as for cell timestamps.
        assert_eq!(one("reverse_ts(x)", b" 1700000000000 ").unwrap(), want);
        let e = with("bucket(x, day)", "%Y-%m-%d", b"14/11/2023")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("bucket(x, day): '14/11/2023' does not match the format '%Y-%m-%d'"),
            "{e}"
        );
        let e = with("reverse_ts(x)", "epoch_s", b"soon")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "reverse_ts(x): 'soon' is not epoch seconds (decimal, optionally with a fraction)"
        );
        // Before 1970 is still refused, whatever the format.
        let e = with("reverse_ts(x)", "%Y-%m-%d", b"1969-12-31")
            .unwrap_err()
            .to_string();
        assert!(e.contains("negative"), "{e}");
        let e = one("reverse_ts(x)", b"12x").unwrap_err().to_string();
        assert_eq!(
            e,
            "reverse_ts(x): '12x' is not epoch milliseconds (a 64-bit decimal integer)"
        );
    }

    /// `salt_letter`: salt's bucket as a letter (murmur("abc") mod 16 = 11 -> 'L').
    #[test]
    fn salt_letter_bytes() {
        assert_eq!(one("salt_letter(16, x)", b"abc").unwrap(), b"L");
        // murmur("a") = 2456313694 unsigned; mod 52 = 42 -> 'q' (26 upper-case letters first).
        assert_eq!(2456313694u64 % 52, 42);
        assert_eq!(one("salt_letter(52, x)", b"a").unwrap(), b"q");
        assert_eq!(one("salt_letter(1, x)", b"a").unwrap(), b"A");
        let f: &[(&str, &[u8])] = &[("a", b"ab"), ("b", b"c")];
        assert_eq!(enc("salt_letter(16, a, b)", f).unwrap(), b"L");
    }

    /// `mod`, spans of `bucket` and `reverse_ts` in seconds, against values worked out by hand.
    #[test]
    fn mod_span_buckets_and_reverse_ts_seconds() {
        assert_eq!(one("mod(x, 16)", b"42").unwrap(), b"10");
        assert_eq!(one("mod(x, 10)", b"1234567").unwrap(), b"7");
        assert_eq!(one("mod(x, 1000)", b"5").unwrap(), b"005");
        assert_eq!(one("mod(x, 16)", b"-1").unwrap(), b"15", "non-negative");
        assert!(one("mod(x, 16)", b"4a").is_err());
        // 1700000000000 = 2023-11-14T22:13:20Z.
        let t = b"1700000000000";
        assert_eq!(one("bucket(x, 5m)", t).unwrap(), b"202311142210");
        assert_eq!(one("bucket(x, 15m)", t).unwrap(), b"202311142200");
        assert_eq!(one("bucket(x, '15m')", t).unwrap(), b"202311142200");
        assert_eq!(one("bucket(x, 6h)", t).unwrap(), b"2023111418");
        assert_eq!(
            one("bucket(x, 1h)", t).unwrap(),
            one("bucket(x, hour)", t).unwrap()
        );
        assert_eq!(
            one("bucket(x, 1d)", t).unwrap(),
            one("bucket(x, day)", t).unwrap()
        );
        assert_eq!(one("bucket(x, 30s)", t).unwrap(), b"20231114221300");
        assert_eq!(one("bucket(x, 90m)", t).unwrap(), b"202311142100");
        // 7d spans count from Thursday 1970-01-01: 19675 days / 7 = 2810 weeks + 5 days,
        // so the span began 2810 * 7 = 19670 days after the epoch: 2023-11-09.
        assert_eq!(one("bucket(x, 7d)", t).unwrap(), b"20231109");
        // Long.MAX_VALUE - 1700000000 = 9223372035154775807.
        assert_eq!(
            one("reverse_ts(x, dec, s)", t).unwrap(),
            b"9223372035154775807"
        );
        assert_eq!(one("reverse_ts(x, s)", t).unwrap(), b"9223372035154775807");
        assert_eq!(
            one("reverse_ts(x, bin, s)", t).unwrap(),
            (i64::MAX - 1_700_000_000).to_be_bytes()
        );
        assert_eq!(
            one("reverse_ts(x, ms)", t).unwrap(),
            one("reverse_ts(x)", t).unwrap()
        );
    }

    #[test]
    fn pad_bytes() {
        assert_eq!(one("pad(x, 10)", b"42").unwrap(), b"0000000042");
        assert_eq!(one("pad(x, 2)", b"42").unwrap(), b"42");
        let e = one("pad(x, 3)", b"12345").unwrap_err();
        assert_eq!(
            e,
            RowkeyError::TooWide {
                what: "pad(x, 3)".into(),
                value: "12345".into(),
                len: 5,
                width: 3
            }
        );
        let e = one("pad(x, 3)", b"-1").unwrap_err().to_string();
        assert!(
            e.contains("pad(x, 3): '-1' is not a non-negative decimal integer"),
            "{e}"
        );
        assert!(one("pad(x, 3)", b"").is_err());
    }

    #[test]
    fn i64be_bytes() {
        assert_eq!(one("i64be(x)", b"0").unwrap(), [0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(one("i64be(x)", b"1").unwrap(), [0x80, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(
            one("i64be(x)", b"-1").unwrap(),
            [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        );
        assert_eq!(one("i64be(x)", b"-9223372036854775808").unwrap(), [0; 8]);
        let e = one("i64be(x)", b"12x").unwrap_err().to_string();
        assert_eq!(e, "i64be(x): '12x' is not a 64-bit decimal integer");
        assert!(one("i64be(x)", b"9223372036854775808").is_err());
    }

    #[test]
    fn f64be_bytes() {
        // 1.0 = 0x3FF0000000000000 -> sign bit set.
        assert_eq!(
            one("f64be(x)", b"1").unwrap(),
            [0xBF, 0xF0, 0, 0, 0, 0, 0, 0]
        );
        // -1.0 = 0xBFF0000000000000 -> all bits flipped.
        assert_eq!(
            one("f64be(x)", b"-1.0").unwrap(),
            [0x40, 0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        );
        assert_eq!(one("f64be(x)", b"0").unwrap(), [0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(one("f64be(x)", b"-0").unwrap(), [0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            one("f64be(x)", b"-inf").unwrap(),
            [0x00, 0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        );
        let e = one("f64be(x)", b"NaN").unwrap_err().to_string();
        assert!(e.contains("f64be(x): 'NaN'"), "{e}");
        assert!(one("f64be(x)", b"1,5").is_err());
    }

    #[test]
    fn composed_example() {
        let spec = r#"salt(16, user_id) + "_" + reverse_ts(ts) + "_" + pad(order_id, 10)"#;
        let f: &[(&str, &[u8])] = &[
            ("user_id", b"abc"),
            ("ts", b"1700000000000"),
            ("order_id", b"77"),
        ];
        assert_eq!(enc(spec, f).unwrap(), b"11_9223370336854775807_0000000077");
        let parsed = RowkeySpec::parse(spec).unwrap();
        assert_eq!(parsed.fields(), ["user_id", "ts", "order_id"]);
        assert_eq!(parsed.to_string(), spec);
        // Nested calls.
        assert_eq!(
            enc("reverse(pad(order_id, 4)) + i64be(ts)", f).unwrap(),
            [b"7700".as_slice(), &i64_ordered(1_700_000_000_000)].concat()
        );
    }

    #[test]
    fn record_errors_name_the_field() {
        let spec = RowkeySpec::parse("a + b").unwrap();
        let mut e = spec.compile(&["a", "b"]).unwrap();
        let mut out = Vec::new();
        let row: Vec<&[u8]> = vec![b"x"];
        assert_eq!(
            e.encode(&row, &mut out),
            Err(RowkeyError::MissingField { field: "b".into() })
        );
        let row: Vec<&[u8]> = vec![b"", b""];
        assert_eq!(e.encode(&row, &mut out), Err(RowkeyError::EmptyKey));
        let big = vec![b'x'; 40_000];
        let row: Vec<&[u8]> = vec![&big, b""];
        assert_eq!(
            e.encode(&row, &mut Vec::new()),
            Err(RowkeyError::KeyTooLong {
                len: 40_000,
                max: 32767
            })
        );
        let e = spec.compile(&["a", "c"]).unwrap_err().to_string();
        assert_eq!(
            e,
            "rowkey spec uses field 'b', which the input does not have (fields: a, c)"
        );
    }

    fn decimal(v: u64, w: usize) -> Vec<u8> {
        format!("{v:0w$}").into_bytes()
    }

    proptest! {
        #[test]
        fn pad_preserves_order(a in 0u64..10_000_000_000, b in 0u64..10_000_000_000) {
            let (ka, kb) = (one("pad(x, 12)", a.to_string().as_bytes()).unwrap(), one("pad(x, 12)", b.to_string().as_bytes()).unwrap());
            prop_assert_eq!(a.cmp(&b), ka.cmp(&kb));
            prop_assert_eq!(ka, decimal(a, 12));
        }

        #[test]
        fn i64be_preserves_order(a in any::<i64>(), b in any::<i64>()) {
            let ka = one("i64be(x)", a.to_string().as_bytes()).unwrap();
            let kb = one("i64be(x)", b.to_string().as_bytes()).unwrap();
            prop_assert_eq!(a.cmp(&b), ka.cmp(&kb));
        }

        #[test]
        fn f64be_preserves_order(a in any::<f64>().prop_filter("not NaN", |v| !v.is_nan()),
                                 b in any::<f64>().prop_filter("not NaN", |v| !v.is_nan())) {
            let ka = one("f64be(x)", format!("{a:e}").as_bytes()).unwrap();
            let kb = one("f64be(x)", format!("{b:e}").as_bytes()).unwrap();
            prop_assert_eq!(a.partial_cmp(&b).unwrap(), ka.cmp(&kb));
        }

        #[test]
        fn reverse_ts_reverses_order(a in 0i64..=i64::MAX, b in 0i64..=i64::MAX) {
            for spec in ["reverse_ts(x)", "reverse_ts(x, bin)"] {
                let ka = one(spec, a.to_string().as_bytes()).unwrap();
                let kb = one(spec, b.to_string().as_bytes()).unwrap();
                prop_assert_eq!(a.cmp(&b), kb.cmp(&ka));
            }
        }

        #[test]
        fn bucket_preserves_order(a in 0i64..BUCKET_MAX_MS, b in 0i64..BUCKET_MAX_MS) {
            for unit in ["hour", "day", "week", "month"] {
                let spec = format!("bucket(x, {unit})");
                let ka = one(&spec, a.to_string().as_bytes()).unwrap();
                let kb = one(&spec, b.to_string().as_bytes()).unwrap();
                // Monotone: a <= b implies bucket(a) <= bucket(b).
                if a <= b { prop_assert!(ka <= kb, "{} {} {}", unit, a, b); }
                else { prop_assert!(ka >= kb, "{} {} {}", unit, a, b); }
            }
        }

        #[test]
        fn bucket_is_the_period_start(ms in 0i64..BUCKET_MAX_MS) {
            // Same day bucket as the day's first millisecond, and days differ across midnight.
            let day_start = ms - ms.rem_euclid(MS_PER_DAY);
            prop_assert_eq!(one("bucket(x, day)", ms.to_string().as_bytes()).unwrap(),
                            one("bucket(x, day)", day_start.to_string().as_bytes()).unwrap());
            if day_start > 0 {
                prop_assert_ne!(one("bucket(x, day)", (day_start - 1).to_string().as_bytes()).unwrap(),
                                one("bucket(x, day)", day_start.to_string().as_bytes()).unwrap());
            }
        }

    }
}
