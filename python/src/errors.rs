//! hfkit's errors as Python exceptions, with the context the CLI prints as attributes: the
//! message is the CLI's, and `file`, `line`, `row_group`, `row`, `field`, `column` say where.
//!
//! ```text
//! HfkitError                 every error of the package
//!   SchemaError              a schema that does not parse or map (file, line, column)
//!   InputError               a record or input that cannot be imported (file, line or
//!                            row_group + row, field, reason)
//!   TableError               a table directory's error (attach, read)
//!   HFileError               an HFile that cannot be read
//! ```

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use hfkit_pipeline::error::{ImportError, RowkeyError};
use hfkit_pipeline::mapping::encode::{CellPart, Rejection};
use hfkit_pipeline::source::{RecordAt, RecordPosition, SourceError};

create_exception!(
    hfkit,
    HfkitError,
    PyException,
    "Every error of the hfkit package."
);
create_exception!(
    hfkit,
    SchemaError,
    HfkitError,
    "A schema that does not parse or does not fit: `file`, `line`, `column` say where."
);
create_exception!(
    hfkit,
    InputError,
    HfkitError,
    "Input that cannot be imported: `file`, `line` (CSV) or `row_group` and `row` (Parquet, \
     record batches), `field` and `reason` say where and why."
);
create_exception!(hfkit, TableError, HfkitError, "A table directory's error.");
create_exception!(
    hfkit,
    HFileError,
    HfkitError,
    "An HFile that cannot be read."
);

/// Where an error happened, as the exception's attributes (each `None` when unknown).
#[derive(Default)]
struct Context {
    file: Option<String>,
    line: Option<u64>,
    row_group: Option<usize>,
    row: Option<u64>,
    column: Option<u64>,
    field: Option<String>,
    reason: Option<String>,
}

impl Context {
    fn at(position: &RecordPosition) -> Context {
        let mut c = Context {
            file: position.file.as_ref().map(|f| f.display().to_string()),
            ..Context::default()
        };
        match position.at {
            Some(RecordAt::Line(l)) => c.line = Some(l),
            Some(RecordAt::Row { row_group, row }) => {
                c.row_group = Some(row_group);
                c.row = Some(row);
            }
            None => {}
        }
        c
    }

    /// `err` with these attributes set.
    fn on(self, err: PyErr) -> PyErr {
        Python::attach(|py| {
            let v = err.value(py);
            let _ = v.setattr("file", self.file);
            let _ = v.setattr("line", self.line);
            let _ = v.setattr("row_group", self.row_group);
            let _ = v.setattr("row", self.row);
            let _ = v.setattr("column", self.column);
            let _ = v.setattr("field", self.field);
            let _ = v.setattr("reason", self.reason);
        });
        err
    }
}

/// The input field a rejection names, when it names one.
fn field_of(reason: &Rejection) -> Option<String> {
    match reason {
        Rejection::MissingColumn { column } => Some(column.clone()),
        Rejection::Timestamp { field, .. } => Some(field.clone()),
        Rejection::Refused { part, .. } => match part {
            CellPart::Column(c) => Some(c.clone()),
            CellPart::TimestampField { field, .. } => Some(field.clone()),
            _ => None,
        },
        Rejection::Index { reason, .. } => field_of(reason),
        Rejection::Operation { field, .. } | Rejection::Ttl { field, .. } => Some(field.clone()),
        Rejection::Item { field, .. } => Some(field.clone()),
        Rejection::RowKey(e) | Rejection::Value(e) => match e {
            RowkeyError::MissingField { field } => Some(field.clone()),
            RowkeyError::NotANumber { what, .. }
            | RowkeyError::Timestamp { what, .. }
            | RowkeyError::OutOfRange { what, .. }
            | RowkeyError::TooWide { what, .. } => Some(field_name(what)),
            _ => None,
        },
        Rejection::RowKeyTooLong { .. } => None,
    }
}

/// The field in a rowkey error's `what` ("field 'x'", "pad(x, 8)", "x"): the quoted name, or
/// a function's first argument when it is a field's name.
fn field_name(what: &str) -> String {
    if let (Some(a), Some(b)) = (what.find('\''), what.rfind('\'')) {
        if b > a {
            return what[a + 1..b].to_string();
        }
    }
    if let Some((_, args)) = what.split_once('(') {
        let first = args.split([',', ')']).next().unwrap_or("").trim();
        if !first.is_empty()
            && first
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        {
            return first.to_string();
        }
    }
    what.to_string()
}

/// `file:line:column: ` at the start of a schema error's message.
fn schema_location(message: &str) -> Context {
    let mut c = Context::default();
    // The first ":<digits>:<digits>:" after the file name.
    let bytes = message.as_bytes();
    for (i, _) in message.match_indices(':') {
        let rest = &message[i + 1..];
        let mut parts = rest.splitn(3, ':');
        let (Some(l), Some(col), Some(_)) = (parts.next(), parts.next(), parts.next()) else {
            break;
        };
        if let (Ok(l), Ok(col)) = (l.parse::<u64>(), col.parse::<u64>()) {
            c.file = Some(String::from_utf8_lossy(&bytes[..i]).to_string());
            c.line = Some(l);
            c.column = Some(col);
            break;
        }
    }
    c
}

/// A schema error as [`SchemaError`].
pub fn schema_error(e: &dyn std::fmt::Display) -> PyErr {
    let message = e.to_string();
    schema_location(&message).on(SchemaError::new_err(message))
}

/// An import's error as the exception its kind calls for.
pub fn import_error(e: ImportError) -> PyErr {
    let message = e.to_string();
    match &e {
        ImportError::Record { position, reason }
        | ImportError::TooManyBadRows {
            last: position,
            reason,
            ..
        } => {
            let mut c = Context::at(position);
            c.field = field_of(reason);
            c.reason = Some(reason.to_string());
            c.on(InputError::new_err(message))
        }
        ImportError::Source(s) => {
            let c = match s {
                SourceError::Csv { path, line, detail } => Context {
                    file: Some(path.display().to_string()),
                    line: Some(*line),
                    reason: Some(detail.clone()),
                    ..Context::default()
                },
                SourceError::RowGroup {
                    path, row_group, ..
                } => Context {
                    file: Some(path.display().to_string()),
                    row_group: Some(*row_group),
                    ..Context::default()
                },
                SourceError::Io { path, .. } | SourceError::Parquet { path, .. } => Context {
                    file: Some(path.display().to_string()),
                    ..Context::default()
                },
                _ => Context::default(),
            };
            c.on(InputError::new_err(message))
        }
        ImportError::Schema(_) | ImportError::Rowkey { .. } => schema_error(&message),
        ImportError::Invalid(_) => Context::default().on(InputError::new_err(message)),
        _ => HfkitError::new_err(message),
    }
}

/// A table's error as [`TableError`].
pub fn table_error(e: impl std::fmt::Display) -> PyErr {
    TableError::new_err(e.to_string())
}

/// An HFile's error as [`HFileError`].
pub fn hfile_error(e: impl std::fmt::Display) -> PyErr {
    HFileError::new_err(e.to_string())
}
