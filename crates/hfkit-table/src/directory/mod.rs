//! A table on disk: create, open, attach bulk-load directories, check, collect garbage.
//! Spec: `formats/table.md`.
//!
//! ```text
//! TABLE/
//!   CURRENT                          pointer to the live manifest (name + CRC32C)
//!   manifests/manifest-<v>.json      manifest versions (immutable)
//!   data/<region>/<family>/<file>    store files; live only if the manifest names them
//!   .tmp/                            staging for attaches in progress
//!   .lock                            advisory lock: one writer at a time; readers never lock
//!   indexes/<qualifier>/             index tables an import wrote with this one: tables of
//!                                    their own, which nothing done to TABLE reads or removes
//! ```
//!
//! | module | owns | prose |
//! |---|---|---|
//! | `attach` | [`Table::attach`]: a bulk-load directory's files into the table in one commit | `table.md` §"Attach" |
//! | `garbage` | [`Table::collect_garbage`] and [`Table::check`]: what the table names, and what it does not | `table.md` §"Writers and garbage", §"Check" |
//! | `table` | [`Table`]: the layout's names, create, open, the writers' lock, store file paths | `table.md` §"Layout" |
//! | `written` | [`check_written`]: a file this process wrote, against what its writer recorded ([`WrittenFile`]) | `table.md` §"Checks before data is replaced, deleted or handed out" |
//! | this module | the verification of store files ([`verify_store_file`]) | `table.md` §"Checks before data is replaced, deleted or handed out" |

mod attach;
mod garbage;
mod table;
mod written;

use std::path::Path;

use crate::TableError;
use hfkit_format::error::FormatError;
use hfkit_format::reader::HFileReader;
use hfkit_format::verify::{verify, Problem};

pub use attach::{AttachOptions, AttachReport, MAX_FILES_PER_REGION_FAMILY};
pub use garbage::CheckReport;
pub use table::{Table, TableSetup, WriterLock, INDEX_DIR, LOCK_FILE, STAGING_DIR};
pub use written::{check_written, WrittenFile, WrittenFileError};

pub use crate::manifest::DATA_DIR;
pub use crate::staging::unique_hex;

/// Verifies the store file at `path` in full (`format::verify`: every block's checksum, the
/// index, the Bloom filter, the trailer and FileInfo against the cells) and that it holds
/// `cells` cells; the problem found, if any. What deletes or replaces data, or hands files out
/// (compaction outputs, snapshot restore, clone, export), calls this on the files it relies
/// on: `formats/table.md` §"Checks before data is replaced, deleted or handed out".
pub fn verify_store_file(path: &Path, cells: u64) -> Result<(), StoreFileCheckError> {
    let reader = HFileReader::open(path).map_err(StoreFileCheckError::Open)?;
    let mut v = verify(&reader);
    if !v.problems.is_empty() {
        return Err(StoreFileCheckError::Problem(v.problems.swap_remove(0)));
    }
    if v.cells != cells {
        return Err(StoreFileCheckError::CellCount {
            found: v.cells,
            expected: cells,
        });
    }
    Ok(())
}

/// Why [`verify_store_file`] refused a file.
#[derive(Debug, thiserror::Error)]
pub enum StoreFileCheckError {
    /// The file does not open as an HFile.
    #[error("{0}")]
    Open(FormatError),
    /// The first problem verification found (with its block's offset when it has one).
    #[error("{0}")]
    Problem(Problem),
    /// The file verifies but holds another number of cells.
    #[error("{found} cells, {expected} expected")]
    CellCount { found: u64, expected: u64 },
}

/// [`verify_store_file`] of the copy at `copy` of table file `source`, as an error naming the
/// source.
pub fn verify_copy(source: &Path, copy: &Path, cells: u64) -> Result<(), TableError> {
    verify_store_file(copy, cells).map_err(|detail| TableError::Corrupt {
        path: source.to_path_buf(),
        detail: format!("failed verification ({detail})"),
    })
}
