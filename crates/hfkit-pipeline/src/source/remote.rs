//! Inputs on object storage (`s3://...`): globs expanded by listing, CSV/TSV streamed (through
//! the same decompressors as local files), Parquet read by ranged requests: the footer, then
//! for each row group only the column chunks the import reads. Local paths never come here.
//! Spec: `formats/import.md` §"Sources", `formats/storage.md`.

use std::io::Read;
use std::path::{Path, PathBuf};

use bytes::{Buf, Bytes};
use hfkit_storage::{store_for, Location, StorageError, Store};
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};

use super::error::SourceError;

/// True when `path` names an object-store location.
pub(crate) fn is_remote(path: &Path) -> bool {
    Location::is_remote_path(path)
}

fn storage_error(path: &Path, e: StorageError) -> SourceError {
    SourceError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(strip_location(path, e)),
    }
}

/// The storage error's message without the location it starts with (the source error names
/// the path already).
fn strip_location(path: &Path, e: StorageError) -> String {
    let s = e.to_string();
    let prefix = format!("{}: ", path.display());
    s.strip_prefix(&prefix).map(String::from).unwrap_or(s)
}

fn open(path: &Path) -> Result<(Store, Location), SourceError> {
    let loc = Location::from_path(path).map_err(|e| SourceError::Invalid(e.to_string()))?;
    let store = store_for(&loc).map_err(|e| storage_error(path, e))?;
    Ok((store, loc))
}

/// A remote input streamed, and its size.
pub(crate) fn stream(path: &Path) -> Result<(Box<dyn Read + Send>, u64), SourceError> {
    let (store, loc) = open(path)?;
    let len = store.size(&loc).map_err(|e| storage_error(path, e))?;
    let r = store.reader(&loc).map_err(|e| storage_error(path, e))?;
    Ok((r, len))
}

/// A remote input streamed from byte `offset` to its end, and its size.
pub(crate) fn stream_from(
    path: &Path,
    offset: u64,
) -> Result<(Box<dyn Read + Send>, u64), SourceError> {
    let (store, loc) = open(path)?;
    let len = store.size(&loc).map_err(|e| storage_error(path, e))?;
    let r = store
        .reader_from(&loc, offset.min(len))
        .map_err(|e| storage_error(path, e))?;
    Ok((r, len))
}

/// The size of a remote input.
pub(crate) fn size(path: &Path) -> Result<u64, SourceError> {
    let (store, loc) = open(path)?;
    store.size(&loc).map_err(|e| storage_error(path, e))
}

/// The objects a remote pattern names: a glob (`*`, `?`, `[...]` in the key) matched against
/// the objects listed under its fixed prefix, sorted; a plain key must exist.
pub(crate) fn expand(pattern: &str) -> Result<Vec<PathBuf>, SourceError> {
    let path = Path::new(pattern);
    let (store, loc) = open(path)?;
    if !pattern.contains(['*', '?', '[']) {
        return match store.head(&loc).map_err(|e| storage_error(path, e))? {
            Some(_) => Ok(vec![PathBuf::from(loc.to_string())]),
            // A HEAD answers 404 for a missing bucket too: a LIST tells which.
            None => Err(match store.list(&loc) {
                Err(e) => storage_error(path, e),
                Ok(_) => SourceError::Io {
                    path: path.to_path_buf(),
                    source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such object"),
                },
            }),
        };
    }
    let url = loc.to_string();
    let fixed = &url[..url.find(['*', '?', '[']).unwrap_or(url.len())];
    let dir = &fixed[..fixed.rfind('/').unwrap_or(fixed.len())];
    let glob = glob::Pattern::new(&url)
        .map_err(|e| SourceError::Invalid(format!("bad glob '{pattern}': {e}")))?;
    let base = Location::parse(dir).map_err(|e| SourceError::Invalid(e.to_string()))?;
    let opts = glob::MatchOptions {
        require_literal_separator: true,
        ..glob::MatchOptions::new()
    };
    let matched: Vec<PathBuf> = store
        .list(&base)
        .map_err(|e| storage_error(path, e))?
        .into_iter()
        .map(|i| i.location.to_string())
        .filter(|u| glob.matches_with(u, opts))
        .map(PathBuf::from)
        .collect();
    if matched.is_empty() {
        return Err(SourceError::Invalid(format!(
            "'{pattern}' matches no object"
        )));
    }
    Ok(matched)
}

/// Bytes read when a Parquet page header is wanted at an offset no fetched chunk covers.
const HEADER_WINDOW: u64 = 64 * 1024;

/// A Parquet file on object storage, read by ranged requests. The column chunks a row group's
/// reader needs are fetched once, whole ([`RemoteParquet::prefetch`]), and served from memory.
pub(crate) struct RemoteParquet {
    store: Store,
    location: Location,
    len: u64,
    chunks: Vec<(u64, Bytes)>,
}

impl RemoteParquet {
    pub(crate) fn open(path: &Path) -> Result<RemoteParquet, SourceError> {
        let (store, location) = open(path)?;
        let len = store.size(&location).map_err(|e| storage_error(path, e))?;
        Ok(RemoteParquet {
            store,
            location,
            len,
            chunks: Vec::new(),
        })
    }

    /// Fetches the byte ranges (`(start, length)`) and keeps them in memory.
    pub(crate) fn prefetch(
        &mut self,
        path: &Path,
        ranges: &[(u64, u64)],
    ) -> Result<(), SourceError> {
        for &(start, len) in ranges {
            let b = self
                .store
                .read_range(&self.location, start..start + len)
                .map_err(|e| storage_error(path, e))?;
            self.chunks.push((start, b));
        }
        Ok(())
    }

    /// Bytes `start..start+len` from a fetched chunk, if one holds them all.
    fn cached(&self, start: u64, len: u64) -> Option<Bytes> {
        self.chunks.iter().find_map(|(s, b)| {
            let end = s + b.len() as u64;
            (start >= *s && start + len <= end)
                .then(|| b.slice((start - s) as usize..(start - s + len) as usize))
        })
    }

    fn fetch(&self, start: u64, len: u64) -> Result<Bytes, ParquetError> {
        if let Some(b) = self.cached(start, len) {
            return Ok(b);
        }
        self.store
            .read_range(&self.location, start..start + len)
            .map_err(|e| ParquetError::External(Box::new(e)))
    }
}

impl Length for RemoteParquet {
    fn len(&self) -> u64 {
        self.len
    }
}

impl ChunkReader for RemoteParquet {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> Result<Self::T, ParquetError> {
        if start > self.len {
            return Err(ParquetError::EOF(format!(
                "{}: offset {start} beyond the end ({})",
                self.location, self.len
            )));
        }
        // From a fetched chunk: the rest of it; else a window (a page header is small).
        let from_chunk = self.chunks.iter().find_map(|(s, b)| {
            let end = s + b.len() as u64;
            (start >= *s && start < end).then(|| b.slice((start - s) as usize..))
        });
        let b = match from_chunk {
            Some(b) => b,
            None => self.fetch(start, HEADER_WINDOW.min(self.len - start))?,
        };
        Ok(b.reader())
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes, ParquetError> {
        if start + length as u64 > self.len {
            return Err(ParquetError::EOF(format!(
                "{}: bytes {start}..{} beyond the end ({})",
                self.location,
                start + length as u64,
                self.len
            )));
        }
        self.fetch(start, length as u64)
    }
}

/// A Parquet input: a local file (read as before) or one on object storage.
pub(crate) enum ParquetFile {
    Local(std::fs::File),
    Remote(RemoteParquet),
}

impl ParquetFile {
    pub(crate) fn open(path: &Path) -> Result<ParquetFile, SourceError> {
        if is_remote(path) {
            return Ok(ParquetFile::Remote(RemoteParquet::open(path)?));
        }
        let f = std::fs::File::open(path).map_err(|source| SourceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(ParquetFile::Local(f))
    }

    /// Fetches the column chunks of row group `row_group` that `mask` reads (remote files;
    /// a local file reads its pages where they are).
    pub(crate) fn prefetch(
        &mut self,
        path: &Path,
        metadata: &parquet::file::metadata::ParquetMetaData,
        row_group: usize,
        mask: &parquet::arrow::ProjectionMask,
    ) -> Result<(), SourceError> {
        let ParquetFile::Remote(r) = self else {
            return Ok(());
        };
        let rg = metadata.row_group(row_group);
        let ranges: Vec<(u64, u64)> = rg
            .columns()
            .iter()
            .enumerate()
            .filter(|(i, _)| mask.leaf_included(*i))
            .map(|(_, c)| c.byte_range())
            .collect();
        r.prefetch(path, &ranges)
    }
}

impl Length for ParquetFile {
    fn len(&self) -> u64 {
        match self {
            ParquetFile::Local(f) => f.len(),
            ParquetFile::Remote(r) => r.len(),
        }
    }
}

impl ChunkReader for ParquetFile {
    type T = Box<dyn Read + Send>;

    fn get_read(&self, start: u64) -> Result<Self::T, ParquetError> {
        Ok(match self {
            ParquetFile::Local(f) => Box::new(f.get_read(start)?),
            ParquetFile::Remote(r) => Box::new(r.get_read(start)?),
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes, ParquetError> {
        match self {
            ParquetFile::Local(f) => f.get_bytes(start, length),
            ParquetFile::Remote(r) => r.get_bytes(start, length),
        }
    }
}
