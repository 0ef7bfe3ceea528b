//! Reads of a table on object storage without downloading its files (`formats/table.md`
//! §"Reads of tables on object storage"): a *read mirror* is a local table directory holding
//! the live manifest (and snapshots' manifests) but no data files, and a file [`DATA_AT`]
//! naming the table's URL; [`Table::open`](crate::directory::Table::open) of such a directory
//! opens each store file as an object read by byte ranges ([`StoredObject`], an
//! [`hfkit_format::reader::RangeSource`]): its end (trailer, load-on-open section) at open,
//! then only the index, Bloom and data blocks a get or scan touches.
//!
//! The object's length is the one the manifest recorded when the file was attached, so no
//! request asks for it; an object that is shorter fails the first read past its end, naming
//! its URL.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use hfkit_format::reader::RangeSource;
use hfkit_storage::{store_for, Location, Store};

use crate::TableError;

/// The file of a read mirror naming the table on object storage whose `data/` holds the
/// store files (one line: the URL).
pub const DATA_AT: &str = "DATA_AT";

/// Ranged reads of store files made by this process, and the bytes they returned.
static FILE_REQUESTS: AtomicU64 = AtomicU64::new(0);
static FILE_BYTES: AtomicU64 = AtomicU64::new(0);

/// Ranged reads of store files on object storage this process has made: (requests, bytes).
pub fn file_reads() -> (u64, u64) {
    (
        FILE_REQUESTS.load(Ordering::Relaxed),
        FILE_BYTES.load(Ordering::Relaxed),
    )
}

/// Where the store files of a read mirror are: the table's root on object storage.
#[derive(Clone, Debug)]
pub struct RemoteData {
    store: Store,
    root: Location,
}

impl RemoteData {
    /// Marks the local table directory `dir` as a read mirror of the table at `root`.
    pub fn mark(dir: &Path, root: &Location) -> Result<(), TableError> {
        let p = dir.join(DATA_AT);
        std::fs::write(&p, format!("{root}\n")).map_err(|e| TableError::io(&p, e))
    }

    /// The table `dir` is a read mirror of, if it is one.
    pub fn of(dir: &Path) -> Result<Option<RemoteData>, TableError> {
        let p = dir.join(DATA_AT);
        let text = match std::fs::read_to_string(&p) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(TableError::io(&p, e)),
        };
        let bad = |detail: String| TableError::Corrupt {
            path: p.clone(),
            detail,
        };
        let root = Location::parse(text.trim()).map_err(|e| bad(e.to_string()))?;
        let store = store_for(&root).map_err(|e| bad(e.to_string()))?;
        Ok(Some(RemoteData { store, root }))
    }

    /// The object `data/<rel>` of `len` bytes, read by ranges.
    pub fn object(&self, rel: &str, len: u64) -> StoredObject {
        StoredObject {
            store: self.store.clone(),
            location: self
                .root
                .join(&format!("{}/{rel}", crate::manifest::DATA_DIR)),
            len,
        }
    }
}

/// A store file on object storage, read by byte ranges.
pub struct StoredObject {
    store: Store,
    location: Location,
    len: u64,
}

impl StoredObject {
    /// The object at `location`, of `len` bytes as a listing gave it: no request until a
    /// range is read (an HBase root's store files on object storage, `hbase::remote`).
    pub fn sized(
        location: &Location,
        len: u64,
    ) -> Result<StoredObject, hfkit_storage::StorageError> {
        Ok(StoredObject {
            store: store_for(location)?,
            location: location.clone(),
            len,
        })
    }

    /// The object at `location` (an HFile on its own: `hfkit hfile info s3://...`), its length
    /// asked of the store once; then read by ranges as a table's store files are.
    pub fn at(location: &Location) -> Result<StoredObject, hfkit_storage::StorageError> {
        let store = store_for(location)?;
        let len = store.size(location)?;
        Ok(StoredObject {
            store,
            location: location.clone(),
            len,
        })
    }
}

impl RangeSource for StoredObject {
    fn file_len(&self) -> u64 {
        self.len
    }

    fn read_range(&self, offset: u64, len: u64) -> std::io::Result<Vec<u8>> {
        let bytes = self
            .store
            .read_range(&self.location, offset..offset + len)
            .map_err(|e| {
                let kind = match e.is_not_found() {
                    true => std::io::ErrorKind::NotFound,
                    false => std::io::ErrorKind::Other,
                };
                std::io::Error::new(kind, e.to_string())
            })?;
        FILE_REQUESTS.fetch_add(1, Ordering::Relaxed);
        FILE_BYTES.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok(bytes.to_vec())
    }

    fn name(&self) -> String {
        self.location.to_string()
    }
}
