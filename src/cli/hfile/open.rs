//! Opening the one HFile an `hfkit hfile` command reads: a local file (mapped; a directory
//! refused by name) or an `s3://` object, read by byte ranges as a table's store files are
//! ([`open`]), and the error naming the file ([`fail`]). Spec: formats/storage.md §"Which
//! arguments take object storage" (`hfile info`, `cells`, `verify`, `get`: `FILE`).

use std::path::Path;

use crate::cli::error::CliError;
use crate::format::reader::HFileReader;
use crate::storage::Location;
use crate::table::remote_read::StoredObject;

pub(super) fn open(file: &Path) -> Result<HFileReader, CliError> {
    // On object storage: read by byte ranges, as a table's store files are.
    if let Ok(loc @ Location::S3 { .. }) = Location::from_path(file) {
        let object = StoredObject::at(&loc).map_err(|e| CliError::failure(e.to_string()))?;
        return HFileReader::from_source(std::sync::Arc::new(object)).map_err(|e| fail(file, e));
    }
    // Mapping a directory fails with "No such device": say what is wrong instead.
    if file.is_dir() {
        return Err(fail(file, "is a directory, expected an HFile"));
    }
    HFileReader::open(file).map_err(|e| fail(file, e))
}

pub(super) fn fail(file: &Path, e: impl std::fmt::Display) -> CliError {
    CliError::failure(format!("{}: {e}", file.display()))
}
