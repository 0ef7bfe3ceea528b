//! The format layer's error for HFile bytes.
//!
//! Every decoder of HFile bytes returns [`FormatError`] (the cell text form has its own
//! `text::CellLineError`, and `writer::write_file_atomically` its `AtomicWriteError`). Variants carry the file offset (when one is
//! known) so that a user is told *where* a file is broken, and corruption is kept apart from I/O
//! failures and from invalid caller input.

use std::fmt;

/// Result alias for the format layer.
pub type Result<T, E = FormatError> = std::result::Result<T, E>;

/// Errors of the HFile format layer.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// Reading or writing the underlying file failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// A structure ended before all of its bytes were present.
    #[error("truncated {what} at offset {offset}: needed {needed} bytes, {available} available")]
    Truncated {
        what: &'static str,
        offset: u64,
        needed: u64,
        available: u64,
    },
    /// A block did not start with a known block magic.
    #[error("bad block magic at offset {offset}: found {found}")]
    BadMagic { offset: u64, found: Hex8 },
    /// A block's stored checksum does not match its bytes.
    #[error(
        "checksum mismatch in block at offset {offset} (chunk {chunk}, {kind}): stored {expected:08x}, computed {actual:08x}"
    )]
    ChecksumMismatch {
        offset: u64,
        chunk: usize,
        kind: &'static str,
        expected: u32,
        actual: u32,
    },
    /// Bytes that cannot be what the format says they are.
    #[error("corrupt {what} at offset {offset}: {detail}")]
    Corrupt {
        what: &'static str,
        offset: u64,
        detail: String,
    },
    /// A compression codec failed to compress or decompress a payload.
    #[error("{codec} codec: {detail}")]
    Codec { codec: &'static str, detail: String },
    /// The file does not end with an HFile trailer: not an HFile, or truncated.
    #[error("not an HFile: {0}")]
    NotAnHFile(String),
    /// A trailer field disagrees with what the rest of the file proves (the trailer is the one
    /// part of an HFile without a checksum, so it is never trusted alone).
    #[error("corrupt trailer: {0}")]
    TrailerMismatch(Box<TrailerMismatch>),
    /// A feature this implementation does not (yet) handle, such as an unknown codec id.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// Cells appended out of HBase order, or equal keys.
    #[error("cell {index} is out of order: {detail}")]
    OutOfOrder { index: u64, detail: String },
    /// Caller input that is not a valid cell or option (row too long, bad type, ...).
    #[error("invalid input: {0}")]
    Invalid(String),
}

impl FormatError {
    /// Wraps an I/O error with a human context such as the path being read.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        FormatError::Io {
            context: context.into(),
            source,
        }
    }

    /// Shorthand for [`FormatError::TrailerMismatch`].
    pub fn trailer_mismatch(field: &'static str, stated: impl Into<i128>, found: String) -> Self {
        FormatError::TrailerMismatch(Box::new(TrailerMismatch {
            field,
            stated: stated.into(),
            found,
        }))
    }

    /// Shorthand for [`FormatError::Corrupt`].
    pub fn corrupt(what: &'static str, offset: u64, detail: impl Into<String>) -> Self {
        FormatError::Corrupt {
            what,
            offset,
            detail: detail.into(),
        }
    }
}

/// A trailer field and what the file shows instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrailerMismatch {
    /// The field's name in `FileTrailerProto`.
    pub field: &'static str,
    /// Its value (−1 for an absent data block offset).
    pub stated: i128,
    /// What the rest of the file shows.
    pub found: String,
}

impl fmt::Display for TrailerMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "field {} is {}, but {}",
            self.field, self.stated, self.found
        )
    }
}

/// Eight bytes shown as hex and, where printable, ASCII (for block magics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hex8(pub [u8; 8]);

impl fmt::Display for Hex8 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        write!(f, " (\"")?;
        for b in self.0 {
            if b.is_ascii_graphic() {
                write!(f, "{}", b as char)?;
            } else {
                write!(f, ".")?;
            }
        }
        write!(f, "\")")
    }
}
