//! The sorter's errors: [`SortError`], of spill files and of cells too large to sort.
//! Spec: `formats/import.md` §"Sort and spill".

use std::path::PathBuf;

/// Errors of the sorter.
#[derive(Debug, thiserror::Error)]
pub enum SortError {
    #[error("spill file {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("corrupt spill file {}: {detail}", path.display())]
    Corrupt { path: PathBuf, detail: String },
    #[error("cell too large to sort: {0}")]
    TooLarge(String),
}
