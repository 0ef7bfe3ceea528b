//! The sources' errors: [`SourceError`], each naming the file (and line, or Parquet row group)
//! at fault, and where an input's [`ColumnNames`] come from. Spec: `formats/import.md`
//! §"Sources".

use std::path::PathBuf;

use crate::source::columns::RowGroupError;

/// Errors of the sources.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: line {line}: {detail}", path.display())]
    Csv {
        path: PathBuf,
        line: u64,
        detail: String,
    },
    #[error("{}: {detail}", path.display())]
    Parquet { path: PathBuf, detail: String },
    /// A Parquet row group whose records cannot be read.
    #[error("{}: row group {row_group}: {source}", path.display())]
    RowGroup {
        path: PathBuf,
        row_group: usize,
        #[source]
        source: RowGroupError,
    },
    /// Two columns with one name: which of them a mapping means is unknowable.
    #[error(
        "{}: {names}: column '{name}' appears twice, as columns {first} and {second}{}",
        path.display(),
        .names.hint()
    )]
    DuplicateColumn {
        path: PathBuf,
        names: ColumnNames,
        name: String,
        /// 1-based column numbers.
        first: usize,
        second: usize,
    },
    #[error("{0}")]
    Invalid(String),
}

/// Where an input's column names come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnNames {
    /// A CSV file's header line.
    Header,
    /// `--columns` ([`CsvOptions::columns`](super::CsvOptions::columns)).
    Given,
    /// A Parquet file's schema.
    ParquetSchema,
}

impl ColumnNames {
    /// How to fix a name given twice, for a message.
    fn hint(&self) -> &'static str {
        match self {
            ColumnNames::Header => " (name the columns with --columns instead)",
            _ => "",
        }
    }
}

impl std::fmt::Display for ColumnNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ColumnNames::Header => "header",
            ColumnNames::Given => "--columns",
            ColumnNames::ParquetSchema => "schema",
        })
    }
}
