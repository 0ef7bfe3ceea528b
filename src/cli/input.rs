//! The input options and the schema loading that `hfkit import`, `hfkit plan` and `hfkit
//! table create --input` share (`formats/import.md` §"Sources").

use std::path::{Path, PathBuf};

use clap::Args;

use super::error::CliError;
use crate::pipeline::import::InputFormat;
use crate::pipeline::source::CsvOptions;
use crate::table::{ParsedSchema, TableSchema};

/// How to read the inputs (shared by `import` and `plan`).
#[derive(Clone, Debug, Args)]
pub struct InputArgs {
    /// Input format: csv, tsv or parquet (default: by extension). Also `--format`, its older
    /// spelling (elsewhere `--format` is what a command writes).
    #[arg(long = "input-format", alias = "format", value_name = "FORMAT")]
    pub(super) format: Option<String>,
    /// CSV field delimiter (one byte; `\t` for tab).
    #[arg(long)]
    pub(super) delimiter: Option<String>,
    /// CSV quote character.
    #[arg(long, default_value = "\"")]
    pub(super) quote: String,
    /// CSV escape character inside quotes (default: doubled quotes).
    #[arg(long)]
    pub(super) escape: Option<String>,
    /// Skip lines starting with this character.
    #[arg(long)]
    pub(super) comment: Option<String>,
    /// The input has no header line; name its columns with --columns.
    #[arg(long)]
    pub(super) no_header: bool,
    /// Column names, comma-separated (for files without a header, or to rename).
    #[arg(long, value_delimiter = ',')]
    pub(super) columns: Option<Vec<String>>,
}

impl InputArgs {
    /// The input format of `inputs` (by --input-format, else by extension) with its CSV dialect.
    pub fn format(&self, inputs: &[PathBuf]) -> Result<InputFormat, CliError> {
        let a = self;
        let parquet = match a.format.as_deref() {
            Some("parquet") => true,
            Some("csv") | Some("tsv") => false,
            Some(other) => {
                return Err(CliError::usage(format!(
                    "--input-format: '{other}' is not csv, tsv or parquet"
                )))
            }
            None => inputs
                .iter()
                .all(|p| p.extension().is_some_and(|e| e == "parquet")),
        };
        if a.no_header && a.columns.is_none() {
            return Err(CliError::usage("--no-header needs --columns"));
        }
        if parquet {
            return Ok(InputFormat::Parquet);
        }
        let tsv = a.format.as_deref() == Some("tsv")
            || inputs
                .first()
                .is_some_and(|p| p.to_string_lossy().contains(".tsv"));
        Ok(InputFormat::Csv(CsvOptions {
            delimiter: match &a.delimiter {
                Some(d) => one_byte("delimiter", d)?,
                None if tsv => b'\t',
                None => b',',
            },
            quote: one_byte("quote", &a.quote)?,
            escape: a
                .escape
                .as_deref()
                .map(|e| one_byte("escape", e))
                .transpose()?,
            comment: a
                .comment
                .as_deref()
                .map(|c| one_byte("comment", c))
                .transpose()?,
            has_header: !a.no_header,
            columns: a.columns.clone(),
        }))
    }
}

pub(super) fn load_schema(path: &Path) -> Result<ParsedSchema, CliError> {
    let parsed = TableSchema::from_file(path).map_err(|e| CliError::failure(e.to_string()))?;
    for w in &parsed.warnings {
        note!("hfkit: warning: {w}");
    }
    Ok(parsed)
}

fn one_byte(name: &str, s: &str) -> Result<u8, CliError> {
    let s = if s == "\\t" { "\t" } else { s };
    match s.as_bytes() {
        [b] => Ok(*b),
        _ => Err(CliError::usage(format!(
            "--{name}: '{s}' is not a single character"
        ))),
    }
}
