//! The pipeline's errors shared by its stages: [`RowkeyError`], a rowkey spec that does not
//! parse or compile, or a record whose fields cannot be encoded (rowkey or cell value), its
//! messages naming the spec column, the function, or the field, and what was wrong; and
//! [`ImportError`], what stops an import or a plan, naming where it happened; and
//! [`Rejection`], why one record is rejected (with the [`CellPart`] a refused cell names). The
//! sources, the sorter and the output have their own enums, which [`ImportError`] wraps.

use std::path::PathBuf;

use crate::import::output::OutputError;
use crate::import::sort::SortError;
use crate::mapping::timestamp::TimestampError;
use crate::source::{RecordPosition, SourceError};
use hfkit_format::cell::CellLimit;
use hfkit_table::SchemaError;

pub(crate) use crate::quote::quote;

/// Everything that can go wrong turning a spec and a record into a row key or a cell value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RowkeyError {
    /// The spec text is not well-formed; `column` counts characters from 1.
    #[error("rowkey spec, column {column}: expected {expected}, found {found}")]
    Syntax {
        column: usize,
        expected: String,
        found: String,
    },

    /// A call to a function the language does not have.
    #[error("rowkey spec, column {column}: unknown function '{name}' (known: {known})")]
    UnknownFunction {
        column: usize,
        name: String,
        known: &'static str,
    },

    /// A function called with the wrong arguments.
    #[error("rowkey spec, column {column}: {function}: {message}")]
    BadArgument {
        column: usize,
        function: &'static str,
        message: String,
    },

    /// The spec names a field the input does not have.
    #[error(
        "rowkey spec uses field '{field}', which the input does not have (fields: {available})"
    )]
    UnknownField { field: String, available: String },

    /// A record lacks a field the spec needs.
    #[error("field '{field}' is missing")]
    MissingField { field: String },

    /// A value that must be a number is not (`what` is the field or the function and argument).
    #[error("{what}: '{value}' is not {expected}")]
    NotANumber {
        what: String,
        value: String,
        expected: &'static str,
    },

    /// A `reverse_ts` / `bucket` input that is not a timestamp in the spec's format.
    #[error("{what}: {source}")]
    Timestamp {
        what: String,
        #[source]
        source: crate::mapping::timestamp::TimestampError,
    },

    /// A number outside what the encoding accepts.
    #[error("{what}: {value} is out of range: {reason}")]
    OutOfRange {
        what: String,
        value: String,
        reason: String,
    },

    /// `pad` input longer than its width.
    #[error("{what}: '{value}' has {len} characters, more than the pad width {width}")]
    TooWide {
        what: String,
        value: String,
        len: usize,
        width: usize,
    },

    /// The encoded row key is empty (HBase has no empty row).
    #[error("the row key is empty")]
    EmptyKey,

    /// A part of a spec an export cannot undo (`RowkeySpec::inverse`).
    #[error("rowkey spec: {what}: cannot be inverted: {reason}")]
    NotInvertible { what: String, reason: String },

    /// A row key that does not have the shape its spec gives it (`what` names the term).
    #[error("{what}: {reason}")]
    KeyMismatch { what: String, reason: String },

    /// The encoded row key exceeds HBase's limit.
    #[error("the row key is {len} bytes, more than HBase's maximum of {max}")]
    KeyTooLong { len: usize, max: usize },
}

/// Errors of an import (and of a plan); each names where it happened.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Schema(#[from] SchemaError),
    #[error("{context}: {source}")]
    Rowkey {
        context: String,
        #[source]
        source: RowkeyError,
    },
    /// A record that cannot be imported.
    #[error("{position}: {reason}")]
    Record {
        position: RecordPosition,
        reason: Box<Rejection>,
    },
    /// One rejected record more than `--max-bad-rows` allows; the last one is named.
    #[error("{count} rejected records, more than --max-bad-rows {max}; last: {last}: {reason}")]
    TooManyBadRows {
        count: u64,
        max: u64,
        last: RecordPosition,
        reason: Box<Rejection>,
    },
    #[error(transparent)]
    Sort(#[from] SortError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
    /// A stop was asked for (`hfkit_storage::interrupt`): the import stopped between batches.
    #[error("interrupted by {}", hfkit_storage::interrupt::signal_name(*signal))]
    Interrupted { signal: i32 },
}

impl ImportError {
    /// `Err(Interrupted)` when a stop was asked for: checked between batches.
    pub fn check_interrupt() -> Result<(), ImportError> {
        match hfkit_storage::interrupt::requested() {
            Some(signal) => Err(ImportError::Interrupted { signal }),
            None => Ok(()),
        }
    }
}

/// Why a record is rejected (`formats/import.md` §"Rejected records").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// The row key cannot be encoded.
    #[error("row key: {0}")]
    RowKey(RowkeyError),
    /// The encoded row key is longer than HBase takes.
    #[error("row key is {len} bytes, more than HBase's maximum of {max}")]
    RowKeyTooLong { len: usize, max: usize },
    /// A mapped field the record does not have.
    #[error("column '{column}': missing")]
    MissingColumn { column: String },
    /// A `timestamp` field that does not read in its `timestamp_format`.
    #[error("timestamp field '{field}': {source}")]
    Timestamp {
        field: String,
        #[source]
        source: TimestampError,
    },
    /// A value that is not its `type`.
    #[error("{0}")]
    Value(RowkeyError),
    /// An `[operation]` field whose value is none of the schema's.
    #[error("operation field '{field}': '{value}' is none of the [operation] values ({known})")]
    Operation {
        field: String,
        value: String,
        known: String,
    },
    /// One item of an `[explode]` field could not be encoded: the whole record is rejected.
    #[error("item {item} of field '{field}': {reason}")]
    Item {
        field: String,
        item: usize,
        reason: Box<Rejection>,
    },
    /// A `ttl` field that is not milliseconds.
    #[error("ttl field '{field}': '{value}' is not a TTL in milliseconds (a non-negative 64-bit decimal integer)")]
    Ttl { field: String, value: String },
    /// A cell HBase's client would refuse, named by the part of it at fault.
    #[error("{part}: {limit}")]
    Refused { part: CellPart, limit: CellLimit },
    /// One of the above, for the cell of an `[[index]]`.
    #[error("index {index}: {reason}")]
    Index {
        index: String,
        reason: Box<Rejection>,
    },
}

/// The part of a refused cell a rejection names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CellPart {
    /// The row: the main row key, or an index cell's key.
    RowKey,
    /// The value of the mapped column reading this field.
    Column(String),
    /// An index cell's value (the main row key).
    Value,
    /// A fixed timestamp (`timestamp = N`, or the import time).
    Timestamp,
    /// A timestamp read from this field, with the field's text.
    TimestampField { field: String, text: String },
}

impl std::fmt::Display for CellPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CellPart::RowKey => f.write_str("row key"),
            CellPart::Column(c) => write!(f, "column '{c}'"),
            CellPart::Value => f.write_str("value"),
            CellPart::Timestamp => f.write_str("timestamp"),
            CellPart::TimestampField { field, text } => {
                write!(f, "timestamp field '{field}': '{text}'")
            }
        }
    }
}
