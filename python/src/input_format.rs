//! How the Python functions read their inputs (`formats/python.md` §"Bulk load of files"): the
//! `format` and `csv` arguments of `input_splits`, `import_split` and
//! `Schema.with_sampled_regions`, as `hfkit import`'s input options.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use hfkit_pipeline::import::InputFormat;
use hfkit_pipeline::source::CsvOptions;

/// How to read CSV inputs: `csv` holds `delimiter`, `quote`, `escape`, `comment` (one
/// character each), `has_header` and `columns`, as `hfkit import`'s options; `format` is `csv`,
/// `tsv` or `parquet` (default: by the files' extension, as the CLI decides).
pub(crate) fn input_format(
    format: Option<&str>,
    inputs: &[PathBuf],
    csv: Option<&Bound<'_, PyDict>>,
) -> PyResult<InputFormat> {
    let parquet = match format {
        Some("parquet") => true,
        Some("csv") | Some("tsv") => false,
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "format: '{other}' is not csv, tsv or parquet"
            )))
        }
        None => inputs
            .iter()
            .all(|p| p.extension().is_some_and(|e| e == "parquet")),
    };
    if parquet {
        return Ok(InputFormat::Parquet);
    }
    let tsv = format == Some("tsv")
        || inputs
            .first()
            .is_some_and(|p| p.to_string_lossy().contains(".tsv"));
    let mut o = CsvOptions {
        delimiter: if tsv { b'\t' } else { b',' },
        ..CsvOptions::default()
    };
    let one = |name: &str, v: Option<String>| -> PyResult<Option<u8>> {
        match v.as_deref() {
            None => Ok(None),
            Some("\\t") | Some("\t") => Ok(Some(b'\t')),
            Some(s) if s.len() == 1 => Ok(Some(s.as_bytes()[0])),
            Some(s) => Err(PyValueError::new_err(format!(
                "{name}: '{s}' is not a single character"
            ))),
        }
    };
    if let Some(d) = csv {
        let get = |k: &str| -> PyResult<Option<String>> {
            match d.get_item(k)? {
                Some(v) if !v.is_none() => Ok(Some(v.extract()?)),
                _ => Ok(None),
            }
        };
        if let Some(c) = one("delimiter", get("delimiter")?)? {
            o.delimiter = c;
        }
        if let Some(c) = one("quote", get("quote")?)? {
            o.quote = c;
        }
        o.escape = one("escape", get("escape")?)?;
        o.comment = one("comment", get("comment")?)?;
        if let Some(h) = d.get_item("has_header")? {
            o.has_header = h.extract()?;
        }
        if let Some(c) = d.get_item("columns")? {
            if !c.is_none() {
                o.columns = Some(c.extract()?);
            }
        }
    }
    if !o.has_header && o.columns.is_none() {
        return Err(PyValueError::new_err("has_header=False needs columns"));
    }
    Ok(InputFormat::Csv(o))
}
