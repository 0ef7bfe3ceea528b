//! The rowkey spec language: how a row key is built from an input record's fields.
//! Prose and examples: `formats/rowkey.md`.
//!
//! ```text
//! spec     := concat EOF
//! concat   := term ('+' term)*                         bytes of the terms, in order
//! term     := STRING | field | call
//! field    := IDENT | '`' any chars but '`' '`'        the field's bytes, as read
//! call     := IDENT '(' arg (',' arg)* ')'
//! arg      := INT | concat
//! IDENT    := [A-Za-z_][A-Za-z0-9_]*     INT := [0-9]+
//! STRING   := '"' ... '"' | '\'' ... '\''  escapes \xNN \\ \" \' \n \r \t \0
//!
//! salt(N, x...)          murmur(x, seed 0) as u32 mod N, decimal, zero-padded to digits(N-1)
//! hash_prefix(K, x...)   first K lowercase hex chars of MD5(x)                K = 1..32
//! reverse(x)             the bytes of x in reverse order
//! reverse_domain(x)      dot-separated labels reversed: www.example.com -> com.example.www
//! reverse_ts(x[, dec|bin]) i64::MAX - x (ms >= 0): 19 decimal digits, or 8 bytes big-endian
//! bucket(x, hour|day|week|month)  UTC period start of time x: YYYYMMDDHH | YYYYMMDD |
//!                        YYYYMMDD of the ISO week's Monday | YYYYMM
//! (reverse_ts and bucket read x in the spec's timestamp format: epoch ms unless
//!  [`RowkeySpec::with_timestamp_format`] says otherwise; see super::timestamp)
//! pad(x, W)              decimal digits left-padded with '0' to W characters
//! i64be(x)               decimal i64, 8 bytes big-endian with the sign bit flipped
//! f64be(x)               decimal f64 (not NaN), 8 bytes ordered like the numbers
//! (several x arguments are concatenated, as if joined with '+')
//! ```
//!
//! A spec is parsed once into an AST ([`RowkeySpec::parse`]), compiled against the input's
//! column names ([`RowkeySpec::compile`]), and the resulting [`RowkeyEncoder`] encodes each
//! record into a caller-owned buffer without allocating once its scratch buffers have grown.
//! [`RowkeySpec::inverse`] goes the other way, from a row key back to field values
//! (`rowkey/inverse.rs`).

use md5::{Digest, Md5};

use super::error::{quote, RowkeyError};
use super::timestamp::{civil_from_days, TimestampFormat};
use hfkit_format::bloom::hash::murmur;
use hfkit_format::cell::MAX_ROW_LEN;

mod inverse;
pub use inverse::{format_f64, Deferred, KeyFields, KeyUse, Recovered, RowkeyInverse};

/// Functions of the language, for messages.
const KNOWN_FUNCTIONS: &str =
    "salt, hash_prefix, reverse, reverse_domain, reverse_ts, bucket, pad, i64be, f64be";
/// Deepest nesting of calls a spec may have.
const MAX_DEPTH: usize = 32;
/// Largest `salt` bucket count.
const MAX_SALT_BUCKETS: u64 = 1_000_000;
/// MD5 as hex has 32 characters.
const MD5_HEX_LEN: u64 = 32;
/// Width of `reverse_ts` decimal output: digits of `i64::MAX`.
const REVERSE_TS_DIGITS: usize = 19;
/// First millisecond of year 10000: `bucket` output has 4-digit years.
const BUCKET_MAX_MS: i64 = 253_402_300_800_000;
const MS_PER_HOUR: i64 = 3_600_000;
const MS_PER_DAY: i64 = 24 * MS_PER_HOUR;

/// Output form of `reverse_ts`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TsFormat {
    /// 19 decimal digits, zero-padded (default).
    Decimal,
    /// 8 bytes, big-endian.
    Binary,
}

/// Period of `bucket`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BucketUnit {
    Hour,
    Day,
    Week,
    Month,
}

/// One term of a concatenation.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    Literal(Vec<u8>),
    /// `slot` indexes [`RowkeySpec::fields`].
    Field {
        slot: usize,
        name: String,
    },
    Call {
        func: Func,
        input: Vec<Node>,
        what: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Func {
    Salt { buckets: u32, width: usize },
    HashPrefix { chars: usize },
    Reverse,
    ReverseDomain,
    ReverseTs(TsFormat),
    Bucket(BucketUnit),
    Pad { width: usize },
    I64Be,
    F64Be,
}

/// A parsed rowkey spec. Field names are not yet bound to input columns.
#[derive(Clone, Debug, PartialEq)]
pub struct RowkeySpec {
    text: String,
    nodes: Vec<Node>,
    fields: Vec<String>,
    /// How `reverse_ts` and `bucket` read their input.
    ts_format: TimestampFormat,
}

/// Where an encoder reads a record's fields: by column index, `None` when absent.
pub trait FieldSource {
    fn field(&self, column: usize) -> Option<&[u8]>;
}

impl<T: AsRef<[u8]>> FieldSource for [T] {
    fn field(&self, column: usize) -> Option<&[u8]> {
        self.get(column).map(|v| v.as_ref())
    }
}

impl<T: AsRef<[u8]>> FieldSource for Vec<T> {
    fn field(&self, column: usize) -> Option<&[u8]> {
        self.get(column).map(|v| v.as_ref())
    }
}

/// A spec bound to the input's columns, with its own scratch buffers: one per thread.
#[derive(Clone, Debug)]
pub struct RowkeyEncoder {
    spec: RowkeySpec,
    /// Input column of each of `spec.fields`.
    columns: Vec<usize>,
    pool: Vec<Vec<u8>>,
}

impl RowkeySpec {
    /// Parses a spec. Errors name the column (in characters, from 1) and what was expected.
    pub fn parse(text: &str) -> Result<RowkeySpec, RowkeyError> {
        let toks = tokenize(text)?;
        let mut p = Parser {
            text,
            toks,
            pos: 0,
            depth: 0,
        };
        let mut nodes = p.concat()?;
        let t = p.peek();
        if t.kind != Kind::Eof {
            let expected = if t.kind == Kind::RParen {
                "'+' or the end"
            } else {
                "'+'"
            };
            return Err(p.unexpected(expected));
        }
        let mut fields = Vec::new();
        assign_slots(&mut nodes, &mut fields);
        Ok(RowkeySpec {
            text: text.to_string(),
            nodes,
            fields,
            ts_format: TimestampFormat::EpochMillis,
        })
    }

    /// The spec reading the inputs of `reverse_ts` and `bucket` in `format` (default: epoch
    /// milliseconds).
    pub fn with_timestamp_format(mut self, format: TimestampFormat) -> RowkeySpec {
        self.ts_format = format;
        self
    }

    /// How `reverse_ts` and `bucket` read their input.
    pub fn timestamp_format(&self) -> &TimestampFormat {
        &self.ts_format
    }

    /// The spec as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The field names the spec reads, each once, in order of first use.
    pub fn fields(&self) -> &[String] {
        &self.fields
    }

    /// Binds the spec's fields to input columns (`columns[i]` is the name of column `i`).
    pub fn compile(&self, columns: &[&str]) -> Result<RowkeyEncoder, RowkeyError> {
        let mut idx = Vec::with_capacity(self.fields.len());
        for f in &self.fields {
            match columns.iter().position(|c| c == f) {
                Some(i) => idx.push(i),
                None => {
                    return Err(RowkeyError::UnknownField {
                        field: f.clone(),
                        available: columns.join(", "),
                    })
                }
            }
        }
        Ok(RowkeyEncoder {
            spec: self.clone(),
            columns: idx,
            pool: Vec::new(),
        })
    }

    /// Encodes one record whose fields are looked up by name, appending the key to `out`.
    /// Convenient but allocating; for bulk use [`RowkeySpec::compile`].
    pub fn encode<'r>(
        &self,
        fields: &dyn Fn(&str) -> Option<&'r [u8]>,
        out: &mut Vec<u8>,
    ) -> Result<(), RowkeyError> {
        let get = |slot: usize| fields(&self.fields[slot]);
        let mut pool = Vec::new();
        encode_key(
            &self.nodes,
            &self.fields,
            &self.ts_format,
            &get,
            out,
            &mut pool,
        )
    }
}

impl std::fmt::Display for RowkeySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for RowkeySpec {
    type Err = RowkeyError;
    fn from_str(s: &str) -> Result<RowkeySpec, RowkeyError> {
        RowkeySpec::parse(s)
    }
}

impl RowkeyEncoder {
    /// The spec this encoder runs.
    pub fn spec(&self) -> &RowkeySpec {
        &self.spec
    }

    /// Encodes one record, appending its row key to `out`. Fails on a missing field, a value
    /// its function cannot take, an empty key or a key over 32767 bytes; `out` then holds a
    /// partial key past its original length, which the caller should discard.
    pub fn encode<S: FieldSource + ?Sized>(
        &mut self,
        row: &S,
        out: &mut Vec<u8>,
    ) -> Result<(), RowkeyError> {
        let columns = &self.columns;
        let get = |slot: usize| row.field(columns[slot]);
        encode_key(
            &self.spec.nodes,
            &self.spec.fields,
            &self.spec.ts_format,
            &get,
            out,
            &mut self.pool,
        )
    }
}

fn encode_key<'r>(
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

fn assign_slots(nodes: &mut [Node], fields: &mut Vec<String>) {
    for n in nodes {
        match n {
            Node::Literal(_) => {}
            Node::Field { slot, name } => {
                *slot = match fields.iter().position(|f| f == name) {
                    Some(i) => i,
                    None => {
                        fields.push(name.clone());
                        fields.len() - 1
                    }
                };
            }
            Node::Call { input, .. } => assign_slots(input, fields),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Evaluation

fn eval<'r>(
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

fn apply(
    func: Func,
    what: &str,
    ts: &TimestampFormat,
    x: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), RowkeyError> {
    match func {
        Func::Salt { buckets, width } => {
            let bucket = (murmur(x, 0) as u32) % buckets;
            push_padded(out, u64::from(bucket), width);
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
        Func::ReverseTs(fmt) => {
            let ms = parse_ts(what, ts, x)?;
            if ms < 0 {
                return Err(RowkeyError::OutOfRange {
                    what: what.to_string(),
                    value: ms.to_string(),
                    reason: "a timestamp must not be negative".into(),
                });
            }
            let reversed = i64::MAX - ms;
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

// ---------------------------------------------------------------------------------------------
// Tokenizer

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Ident(String),
    QuotedField(String),
    Str(Vec<u8>),
    Int(String),
    Plus,
    Comma,
    LParen,
    RParen,
    Eof,
}

#[derive(Clone, Debug)]
struct Tok {
    kind: Kind,
    /// 1-based character column of the first character.
    column: usize,
    /// Byte range in the spec text.
    start: usize,
    end: usize,
}

fn describe(kind: &Kind) -> String {
    match kind {
        Kind::Ident(s) => format!("'{s}'"),
        Kind::QuotedField(s) => format!("`{s}`"),
        Kind::Str(_) => "a string literal".into(),
        Kind::Int(s) => format!("the number {s}"),
        Kind::Plus => "'+'".into(),
        Kind::Comma => "','".into(),
        Kind::LParen => "'('".into(),
        Kind::RParen => "')'".into(),
        Kind::Eof => "the end of the spec".into(),
    }
}

fn tokenize(text: &str) -> Result<Vec<Tok>, RowkeyError> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let byte_at = |i: usize| chars.get(i).map_or(text.len(), |c| c.0);
    let syntax = |i: usize, expected: &str, found: String| RowkeyError::Syntax {
        column: i + 1,
        expected: expected.to_string(),
        found,
    };
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        let start = i;
        let kind = match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '+' => {
                i += 1;
                Kind::Plus
            }
            ',' => {
                i += 1;
                Kind::Comma
            }
            '(' => {
                i += 1;
                Kind::LParen
            }
            ')' => {
                i += 1;
                Kind::RParen
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                while i < chars.len() && (chars[i].1.is_ascii_alphanumeric() || chars[i].1 == '_') {
                    i += 1;
                }
                Kind::Ident(text[byte_at(start)..byte_at(i)].to_string())
            }
            c if c.is_ascii_digit() => {
                while i < chars.len() && chars[i].1.is_ascii_digit() {
                    i += 1;
                }
                Kind::Int(text[byte_at(start)..byte_at(i)].to_string())
            }
            '`' => {
                i += 1;
                let name_start = i;
                while i < chars.len() && chars[i].1 != '`' {
                    i += 1;
                }
                if i == chars.len() {
                    return Err(syntax(start, "a closing '`'", "the end of the spec".into()));
                }
                let name = text[byte_at(name_start)..byte_at(i)].to_string();
                if name.is_empty() {
                    return Err(syntax(start, "a field name between '`'", "``".into()));
                }
                i += 1;
                Kind::QuotedField(name)
            }
            '"' | '\'' => {
                let quote_char = c;
                i += 1;
                let mut bytes = Vec::new();
                loop {
                    let Some(&(_, c)) = chars.get(i) else {
                        return Err(syntax(
                            start,
                            &format!("a closing {quote_char}"),
                            "the end of the spec".into(),
                        ));
                    };
                    i += 1;
                    if c == quote_char {
                        break;
                    }
                    if c != '\\' {
                        let mut buf = [0u8; 4];
                        bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                        continue;
                    }
                    let Some(&(_, e)) = chars.get(i) else {
                        return Err(syntax(
                            i,
                            "an escape after '\\'",
                            "the end of the spec".into(),
                        ));
                    };
                    i += 1;
                    match e {
                        'x' => {
                            let hex: String = chars.iter().skip(i).take(2).map(|c| c.1).collect();
                            let v = if hex.len() == 2 && hex.chars().all(|c| c.is_ascii_hexdigit())
                            {
                                u8::from_str_radix(&hex, 16).ok()
                            } else {
                                None
                            };
                            let Some(v) = v else {
                                return Err(syntax(
                                    i - 2,
                                    "two hex digits after '\\x'",
                                    format!("'\\x{hex}'"),
                                ));
                            };
                            bytes.push(v);
                            i += 2;
                        }
                        '\\' | '"' | '\'' => bytes.push(e as u8),
                        'n' => bytes.push(b'\n'),
                        'r' => bytes.push(b'\r'),
                        't' => bytes.push(b'\t'),
                        '0' => bytes.push(0),
                        other => {
                            return Err(syntax(
                                i - 2,
                                "an escape (\\xNN \\\\ \\\" \\' \\n \\r \\t \\0)",
                                format!("'\\{other}'"),
                            ))
                        }
                    }
                }
                Kind::Str(bytes)
            }
            other => {
                return Err(syntax(
                    i,
                    "a field, a string literal, a function call, '+', ',', '(' or ')'",
                    format!("'{}'", other.escape_default()),
                ))
            }
        };
        toks.push(Tok {
            kind,
            column: start + 1,
            start: byte_at(start),
            end: byte_at(i),
        });
    }
    toks.push(Tok {
        kind: Kind::Eof,
        column: chars.len() + 1,
        start: text.len(),
        end: text.len(),
    });
    Ok(toks)
}

// ---------------------------------------------------------------------------------------------
// Parser

enum Arg {
    Int { value: String, column: usize },
    Expr { nodes: Vec<Node>, column: usize },
}

impl Arg {
    fn column(&self) -> usize {
        match self {
            Arg::Int { column, .. } | Arg::Expr { column, .. } => *column,
        }
    }

    /// A bare word or string used as an option (`day`, `"bin"`).
    fn word(&self) -> Option<String> {
        match self {
            Arg::Expr { nodes, .. } => match nodes.as_slice() {
                [Node::Field { name, .. }] => Some(name.clone()),
                [Node::Literal(b)] => String::from_utf8(b.clone()).ok(),
                _ => None,
            },
            Arg::Int { .. } => None,
        }
    }
}

struct Parser<'t> {
    text: &'t str,
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        // The token list always ends with Eof and `pos` never passes it.
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        if t.kind != Kind::Eof {
            self.pos += 1;
        }
        t
    }

    fn unexpected(&self, expected: &str) -> RowkeyError {
        let t = self.peek();
        RowkeyError::Syntax {
            column: t.column,
            expected: expected.to_string(),
            found: describe(&t.kind),
        }
    }

    fn concat(&mut self) -> Result<Vec<Node>, RowkeyError> {
        let mut nodes = vec![self.term()?];
        while self.peek().kind == Kind::Plus {
            self.next();
            nodes.push(self.term()?);
        }
        Ok(nodes)
    }

    fn term(&mut self) -> Result<Node, RowkeyError> {
        let t = self.peek().clone();
        match t.kind {
            Kind::Str(bytes) => {
                self.next();
                Ok(Node::Literal(bytes))
            }
            Kind::QuotedField(name) => {
                self.next();
                Ok(Node::Field { slot: 0, name })
            }
            Kind::Ident(name) => {
                self.next();
                if self.peek().kind == Kind::LParen {
                    self.call(name, t.column)
                } else {
                    Ok(Node::Field { slot: 0, name })
                }
            }
            _ => Err(self.unexpected("a field, a string literal or a function call")),
        }
    }

    fn call(&mut self, name: String, column: usize) -> Result<Node, RowkeyError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(RowkeyError::Syntax {
                column,
                expected: format!("at most {MAX_DEPTH} nested calls"),
                found: "deeper nesting".into(),
            });
        }
        let open = self.next(); // '('
        let mut args = Vec::new();
        if self.peek().kind == Kind::RParen {
            return Err(self.unexpected("an argument"));
        }
        loop {
            args.push(self.arg()?);
            match self.peek().kind {
                Kind::Comma => {
                    self.next();
                }
                Kind::RParen => break,
                _ => return Err(self.unexpected("',' or ')'")),
            }
        }
        let close = self.next(); // ')'
        self.depth -= 1;
        let what = format!("{name}{}", &self.text[open.start..close.end]);
        build_call(&name, column, args, what)
    }

    fn arg(&mut self) -> Result<Arg, RowkeyError> {
        let t = self.peek().clone();
        if let Kind::Int(value) = &t.kind {
            let after = self.toks.get(self.pos + 1).map(|t| &t.kind);
            if matches!(after, Some(Kind::Comma) | Some(Kind::RParen)) {
                self.next();
                return Ok(Arg::Int {
                    value: value.clone(),
                    column: t.column,
                });
            }
            return Err(self.unexpected("a field, a string literal or a function call"));
        }
        let nodes = self.concat()?;
        Ok(Arg::Expr {
            nodes,
            column: t.column,
        })
    }
}

fn bad(column: usize, function: &'static str, message: impl Into<String>) -> RowkeyError {
    RowkeyError::BadArgument {
        column,
        function,
        message: message.into(),
    }
}

/// The integer argument `arg`, within `range`.
fn int_arg(
    function: &'static str,
    arg: &Arg,
    what: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, RowkeyError> {
    let Arg::Int { value, column } = arg else {
        return Err(bad(
            arg.column(),
            function,
            format!("{what} must be a number"),
        ));
    };
    match value.parse::<u64>() {
        Ok(v) if range.contains(&v) => Ok(v),
        _ => Err(bad(
            *column,
            function,
            format!(
                "{what} must be in {}..={}, got {value}",
                range.start(),
                range.end()
            ),
        )),
    }
}

/// The concatenation of expression arguments.
fn expr_args(function: &'static str, args: Vec<Arg>) -> Result<Vec<Node>, RowkeyError> {
    let mut nodes = Vec::new();
    for a in args {
        match a {
            Arg::Expr { nodes: n, .. } => nodes.extend(n),
            Arg::Int { column, value } => {
                return Err(bad(
                    column,
                    function,
                    format!("expected a field or expression, found the number {value} (quote it for literal digits)"),
                ))
            }
        }
    }
    Ok(nodes)
}

fn arity(
    function: &'static str,
    column: usize,
    args: &[Arg],
    range: std::ops::RangeInclusive<usize>,
    usage: &str,
) -> Result<(), RowkeyError> {
    if range.contains(&args.len()) {
        Ok(())
    } else {
        Err(bad(
            column,
            function,
            format!("takes {usage}, got {} argument(s)", args.len()),
        ))
    }
}

fn build_call(
    name: &str,
    column: usize,
    mut args: Vec<Arg>,
    what: String,
) -> Result<Node, RowkeyError> {
    let call = |func: Func, input: Vec<Node>| {
        Ok(Node::Call {
            func,
            input,
            what: what.clone(),
        })
    };
    match name {
        "salt" => {
            const F: &str = "salt";
            arity(F, column, &args, 2..=usize::MAX, "(buckets, field, ...)")?;
            let n = int_arg(F, &args[0], "the bucket count", 1..=MAX_SALT_BUCKETS)?;
            let input = expr_args(F, args.split_off(1))?;
            let width = (n - 1).to_string().len();
            call(
                Func::Salt {
                    buckets: n as u32,
                    width,
                },
                input,
            )
        }
        "hash_prefix" => {
            const F: &str = "hash_prefix";
            arity(F, column, &args, 2..=usize::MAX, "(hex chars, field, ...)")?;
            let k = int_arg(F, &args[0], "the number of hex characters", 1..=MD5_HEX_LEN)?;
            let input = expr_args(F, args.split_off(1))?;
            call(Func::HashPrefix { chars: k as usize }, input)
        }
        "reverse" | "reverse_domain" | "i64be" | "f64be" => {
            let (f, func): (&'static str, Func) = match name {
                "reverse" => ("reverse", Func::Reverse),
                "reverse_domain" => ("reverse_domain", Func::ReverseDomain),
                "i64be" => ("i64be", Func::I64Be),
                _ => ("f64be", Func::F64Be),
            };
            arity(f, column, &args, 1..=1, "one argument")?;
            let input = expr_args(f, args)?;
            call(func, input)
        }
        "reverse_ts" => {
            const F: &str = "reverse_ts";
            arity(F, column, &args, 1..=2, "(field) or (field, dec|bin)")?;
            let fmt = match args.get(1) {
                None => TsFormat::Decimal,
                Some(a) => match a.word().as_deref() {
                    Some("dec") => TsFormat::Decimal,
                    Some("bin") => TsFormat::Binary,
                    _ => return Err(bad(a.column(), F, "the format must be dec or bin")),
                },
            };
            args.truncate(1);
            let input = expr_args(F, args)?;
            call(Func::ReverseTs(fmt), input)
        }
        "bucket" => {
            const F: &str = "bucket";
            arity(F, column, &args, 2..=2, "(field, hour|day|week|month)")?;
            let unit = match args[1].word().as_deref() {
                Some("hour") => BucketUnit::Hour,
                Some("day") => BucketUnit::Day,
                Some("week") => BucketUnit::Week,
                Some("month") => BucketUnit::Month,
                _ => {
                    return Err(bad(
                        args[1].column(),
                        F,
                        "the unit must be hour, day, week or month",
                    ))
                }
            };
            args.truncate(1);
            let input = expr_args(F, args)?;
            call(Func::Bucket(unit), input)
        }
        "pad" => {
            const F: &str = "pad";
            arity(F, column, &args, 2..=2, "(field, width)")?;
            let width = int_arg(F, &args[1], "the width", 1..=MAX_ROW_LEN as u64)?;
            args.truncate(1);
            let input = expr_args(F, args)?;
            call(
                Func::Pad {
                    width: width as usize,
                },
                input,
            )
        }
        _ => Err(RowkeyError::UnknownFunction {
            column,
            name: name.to_string(),
            known: KNOWN_FUNCTIONS,
        }),
    }
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn parse_errors_name_the_column() {
        let err = |s: &str| RowkeySpec::parse(s).unwrap_err().to_string();
        assert_eq!(err("a +"), "rowkey spec, column 4: expected a field, a string literal or a function call, found the end of the spec");
        assert_eq!(err("a b"), "rowkey spec, column 3: expected '+', found 'b'");
        assert_eq!(
            err("a)"),
            "rowkey spec, column 2: expected '+' or the end, found ')'"
        );
        assert!(err("sault(3, a)").starts_with("rowkey spec, column 1: unknown function 'sault'"));
        assert_eq!(
            err("salt(0, a)"),
            "rowkey spec, column 6: salt: the bucket count must be in 1..=1000000, got 0"
        );
        assert_eq!(
            err("salt(a)"),
            "rowkey spec, column 1: salt: takes (buckets, field, ...), got 1 argument(s)"
        );
        assert_eq!(
            err("salt(x, a)"),
            "rowkey spec, column 6: salt: the bucket count must be a number"
        );
        assert_eq!(
            err("pad(a, 99999)"),
            "rowkey spec, column 8: pad: the width must be in 1..=32767, got 99999"
        );
        assert_eq!(
            err("bucket(a, year)"),
            "rowkey spec, column 11: bucket: the unit must be hour, day, week or month"
        );
        assert_eq!(
            err("reverse_ts(a, hex)"),
            "rowkey spec, column 15: reverse_ts: the format must be dec or bin"
        );
        assert_eq!(
            err("reverse()"),
            "rowkey spec, column 9: expected an argument, found ')'"
        );
        assert_eq!(
            err("reverse(a b)"),
            "rowkey spec, column 11: expected ',' or ')', found 'b'"
        );
        assert_eq!(
            err("\"abc"),
            "rowkey spec, column 1: expected a closing \", found the end of the spec"
        );
        assert_eq!(err("'\\q'"), "rowkey spec, column 2: expected an escape (\\xNN \\\\ \\\" \\' \\n \\r \\t \\0), found '\\q'");
        assert_eq!(
            err("'\\xZ1'"),
            "rowkey spec, column 2: expected two hex digits after '\\x', found '\\xZ1'"
        );
        assert_eq!(err("é"), "rowkey spec, column 1: expected a field, a string literal, a function call, '+', ',', '(' or ')', found '\\u{e9}'");
        assert_eq!(err("reverse(12)"), "rowkey spec, column 9: reverse: expected a field or expression, found the number 12 (quote it for literal digits)");
        assert!(err(&("reverse(".repeat(40) + "a" + &")".repeat(40))).contains("nested"));
        assert_eq!(err(""), "rowkey spec, column 1: expected a field, a string literal or a function call, found the end of the spec");
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

        /// Fuzz: the parser never panics; whatever parses, encodes any record without panicking.
        #[test]
        fn parser_never_panics(s in ".{0,60}", value in proptest::collection::vec(any::<u8>(), 0..12)) {
            if let Ok(spec) = RowkeySpec::parse(&s) {
                let names: Vec<&str> = spec.fields().iter().map(String::as_str).collect();
                let row: Vec<&[u8]> = names.iter().map(|_| value.as_slice()).collect();
                let mut e = spec.compile(&names).unwrap();
                let _ = e.encode(&row, &mut Vec::new());
            }
        }

        #[test]
        fn parser_never_panics_on_spec_like_text(parts in proptest::collection::vec(prop_oneof![
            Just("salt"), Just("pad"), Just("bucket"), Just("reverse_ts"), Just("hash_prefix"),
            Just("f64be"), Just("("), Just(")"), Just(","), Just("+"), Just("a"), Just("'x'"),
            Just("16"), Just("day"), Just("bin"), Just("`q`"), Just("\"\\x"), Just(" "),
        ], 0..24), value in proptest::collection::vec(any::<u8>(), 0..12)) {
            let s: String = parts.concat();
            if let Ok(spec) = RowkeySpec::parse(&s) {
                let names: Vec<&str> = spec.fields().iter().map(String::as_str).collect();
                let row: Vec<&[u8]> = names.iter().map(|_| value.as_slice()).collect();
                let mut e = spec.compile(&names).unwrap();
                let _ = e.encode(&row, &mut Vec::new());
            }
        }
    }
}
