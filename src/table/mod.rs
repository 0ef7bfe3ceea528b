//! The table layer: a table is a directory holding its schema, its regions and its store
//! files, with a manifest naming the live files. Spec: `formats/table.md`.
//!
//! | module | owns |
//! |---|---|
//! | [`manifest`] | manifest versions and the atomic `CURRENT` pointer |
//! | [`fsops`] | the filesystem operations of a commit, with crash injection for tests |

pub mod fsops;
pub mod manifest;

use std::path::{Path, PathBuf};

/// Errors of the table layer.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: corrupt: {detail}", path.display())]
    Corrupt { path: PathBuf, detail: String },
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Format(#[from] crate::format::FormatError),
}

impl TableError {
    pub fn io(path: &Path, source: std::io::Error) -> TableError {
        TableError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
