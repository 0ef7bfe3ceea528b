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
//! salt_letter(N, x...)   the same bucket (N <= 52) as one letter: A..Z then a..z
//! mod(x, N)              decimal i64 x mod N (non-negative), zero-padded to digits(N-1)
//! hash_prefix(K, x...)   first K lowercase hex chars of MD5(x)                K = 1..32
//! reverse(x)             the bytes of x in reverse order
//! reverse_domain(x)      dot-separated labels reversed: www.example.com -> com.example.www
//! reverse_ts(x[, dec|bin][, ms|s]) i64::MAX - x (in ms, or whole seconds, >= 0): 19 decimal
//!                        digits, or 8 bytes big-endian
//! bucket(x, hour|day|week|month)  UTC period start of time x: YYYYMMDDHH | YYYYMMDD |
//!                        YYYYMMDD of the ISO week's Monday | YYYYMM
//! bucket(x, <n>s|<n>m|<n>h|<n>d)  start of x's n-second/minute/hour/day span counted from the
//!                        epoch, UTC, to the span's precision: YYYYMMDD[HH[MM[SS]]]
//! (reverse_ts and bucket read x in the spec's timestamp format: epoch ms unless
//!  [`RowkeySpec::with_timestamp_format`] says otherwise; see crate::mapping::timestamp)
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
//!
//! Modules: `lex` (spec text to tokens), `parse` (tokens to the AST below, with argument
//! checks), `evaluate` (the AST over a record's fields to key bytes), `inverse` (key bytes back
//! to field values).

use crate::error::RowkeyError;
use crate::mapping::timestamp::TimestampFormat;

mod evaluate;
mod inverse;
mod lex;
mod parse;
use evaluate::{apply, encode_key, eval, REVERSE_TS_DIGITS};
pub use evaluate::{f64_ordered, i64_ordered};
pub use inverse::{
    format_f64, Deferred, KeyFields, KeyUse, Recovered, RowkeyInverse, VerifyScratch,
};
use lex::{tokenize, Kind};
use parse::{assign_slots, Parser};

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
    /// A span of `ms` milliseconds counted from the epoch (`5m`, `6h`), written with `digits`
    /// of `YYYYMMDDHHMMSS`: 8 (whole days), 10 (hours), 12 (minutes) or 14 (seconds).
    Span {
        ms: i64,
        digits: usize,
    },
}

/// The characters `salt_letter` writes its buckets with, in byte order.
pub const SALT_LETTERS: &[u8; 52] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Unit `reverse_ts` reverses in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TsUnit {
    Millis,
    /// Whole seconds (`Long.MAX_VALUE - seconds`).
    Seconds,
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
    /// `letters`: the bucket written as one character of [`SALT_LETTERS`] (`salt_letter`).
    Salt {
        buckets: u32,
        width: usize,
        letters: bool,
    },
    HashPrefix {
        chars: usize,
    },
    Reverse,
    ReverseDomain,
    ReverseTs(TsFormat, TsUnit),
    Mod {
        modulus: u64,
        width: usize,
    },
    Bucket(BucketUnit),
    Pad {
        width: usize,
    },
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
