//! The HFile writer: cells in, a complete HFile v3 out. Spec: `formats/hfile.md` §"File layout"
//! (its Bloom filters: `formats/bloom.md` §"Writing").
//!
//! It reproduces the sequencing of HBase's `HFileWriterImpl` + `StoreFileWriter` (+ the
//! bulk-load keys of `HFileOutputFormat2`) so that the same cells and options give the same
//! bytes:
//!
//! ```text
//! append(cell):  order check → Bloom adds → if key differs from the previous one and the block
//!                holds ≥ block_size bytes (encoded or unencoded): finish block, inline blocks,
//!                new block → encode cell → statistics
//! finish():      last data block, closing inline blocks (leaf index, Bloom chunks),
//!                intermediate + root data index, meta index, FILE_INFO, Bloom metas, trailer
//! ```
//!
//! REQUIRES: cells are appended in HBase order (equal keys are allowed, as in HBase). An
//! invalid or out-of-order cell is refused with an error and the file stays as it was; a
//! failed write (I/O, compression) leaves the writer unusable.
//! | module | owns |
//! |---|---|
//! | `options` | [`WriterOptions`], [`BulkLoadInfo`], [`WriteSummary`] |
//! | `append` | [`HFileWriter`]: appending cells (order checks, Bloom adds, statistics) |
//! | `key` | `KeyShape` (the last key's lengths and fixed fields) and the order of a row's cells |
//! | `stats` | `CellStats`: what the file info says of the cells written, added to cell by cell |
//! | `sink` | the block sink (offsets, the per-type chain), the data block's cell encoder |
//! | `block` | blocks out: cutting a data block and its index entry, the inline blocks |
//! | `close` | the file's end: last blocks, the load-on-open section (root index, meta index, FILE_INFO, Bloom metas) and the trailer |
//! | `records` | `append_records`: cells handed over in the file's own record layout, copied into the block as they are |
//! | `run` | `append_row`'s loop over a row's plain cells: checks, records and statistics in one pass, the file's tags and MVCC layout fixed per instantiation |
//! | this module | [`write_file_atomically`]: a file written under a temporary name, renamed when complete |
//! | this module | [`HFileWriter`]: appending cells (order checks, Bloom adds, statistics) |

mod append;
mod block;
mod close;
mod key;
mod options;
mod plain_scan;
mod records;
mod run;
mod sink;
mod stats;

use super::error::FormatError;

pub use append::HFileWriter;
pub use options::{BulkLoadInfo, WriteSummary, WriterOptions, DEFAULT_BLOCK_SIZE};

/// Why [`write_file_atomically`] failed: the file (named by its path), or `fill`.
#[derive(Debug, thiserror::Error)]
pub enum AtomicWriteError<E> {
    /// Creating, writing or syncing the temporary file.
    #[error("{}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// Renaming the complete file to its name.
    #[error("renaming to {}: {source}", path.display())]
    Rename {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// The writer refused the options or failed to finish the file at `path`.
    #[error("{}: {source}", path.display())]
    Format {
        path: std::path::PathBuf,
        source: FormatError,
    },
    /// `fill`'s error, as it was.
    #[error("{0}")]
    Fill(E),
}

/// Writes an HFile at `path` through `fill`, under a temporary name in the same directory that
/// is fsynced and renamed to `path` only when the file is complete. On any error the temporary
/// file is removed and `path` is untouched. `fill`'s error is returned as is.
pub fn write_file_atomically<F, E>(
    path: &std::path::Path,
    opts: WriterOptions,
    fill: F,
) -> std::result::Result<WriteSummary, AtomicWriteError<E>>
where
    F: FnOnce(&mut HFileWriter<std::io::BufWriter<std::fs::File>>) -> std::result::Result<(), E>,
{
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.hfkit-tmp", std::process::id()));
    let io = |source: std::io::Error| AtomicWriteError::Io {
        path: tmp.clone(),
        source,
    };
    let format = |source: FormatError| AtomicWriteError::Format {
        path: path.to_path_buf(),
        source,
    };
    let result = (|| {
        let file = std::fs::File::create(&tmp).map_err(io)?;
        let mut w = HFileWriter::new(std::io::BufWriter::with_capacity(1 << 20, file), opts)
            .map_err(format)?;
        fill(&mut w).map_err(AtomicWriteError::Fill)?;
        let (buf, summary) = w.finish().map_err(format)?;
        let file = buf.into_inner().map_err(|e| io(e.into_error()))?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&tmp, path).map_err(|source| AtomicWriteError::Rename {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(summary)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests;
