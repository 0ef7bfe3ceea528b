//! The table layer: a table is a directory holding its schema, its regions and its store
//! files, with a manifest naming the live files. Spec: `formats/table.md`.
//!
//! | module | owns |
//! |---|---|
//! | [`manifest`] | manifest versions and the atomic `CURRENT` pointer |
//! | [`fsops`] | the filesystem operations of a commit, with crash injection for tests |
//! | [`directory`] | create, open, attach, check and garbage-collect a table directory |

pub mod directory;
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
    /// The change is visible as manifest `version`, but making it durable failed.
    #[error("committed as manifest version {version}, but not known to be durable: {detail}")]
    NotDurable { version: u64, detail: String },
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
