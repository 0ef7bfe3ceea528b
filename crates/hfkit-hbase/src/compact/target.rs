//! Where `hbase compact`'s moves happen (`super`), and what its outputs are named: a local
//! root, or a root on object storage through its mirror (`crate::remote`), each move made on
//! the objects first, then on the mirror's files; and the table's lock object there. Spec:
//! `formats/hbase-layout.md` §"Offline compaction" (On object storage).

use std::path::{Path, PathBuf};

use hfkit_storage::{store_for, Location, PutCondition, StorageError, Store};

use crate::manifest::Manifest;
use crate::names::TMP_DIR;
use crate::owner::storage;
use crate::{HBaseError, Result};

/// Where a compaction's moves happen: in a local root, or in a root on object storage through
/// its mirror (`super::remote`), each move made on the objects first, then on the mirror's
/// files, so that what the run reads back (sizes, lists, what is left) is the root's state.
pub(super) enum Target {
    Local,
    Remote {
        store: Store,
        url: Location,
        mirror: PathBuf,
    },
}

/// What hfkit's compaction outputs are named while under a region's `.tmp/<family>/`, before
/// 32 hex digits (HBase's own names there are 32 hex digits alone).
pub const OUTPUT_PREFIX: &str = "hfkit-compact-";

/// Files up to this size are put whole (create-only); larger ones by a multipart upload.
pub(super) const PUT_WHOLE: u64 = 8 << 20;

impl Target {
    pub(super) fn of(m: &Manifest) -> Result<Target> {
        Ok(match &m.remote {
            None => Target::Local,
            Some(url) => Target::Remote {
                store: store_for(url).map_err(storage)?,
                url: url.clone(),
                mirror: m.root.clone(),
            },
        })
    }

    /// Puts the file `from`, written by this run, at `to` in the root (`from` may be `to`: a
    /// mirror's file put as the root's): a rename, or an upload (create-only when whole) that is
    /// visible complete or not at all.
    pub(super) fn place(&self, from: &Path, to: &Path) -> Result<()> {
        if let Target::Remote { store, url, mirror } = self {
            let object = crate::remote::object_of(url, mirror, to)?;
            let len = std::fs::metadata(from)
                .map_err(|e| HBaseError::io(from, e))?
                .len();
            if len <= PUT_WHOLE {
                let bytes = std::fs::read(from).map_err(|e| HBaseError::io(from, e))?;
                store
                    .put(&object, bytes, PutCondition::CreateOnly)
                    .map_err(storage)?;
            } else {
                let mut up = store.upload(&object, PUT_WHOLE as usize).map_err(storage)?;
                let mut file = std::fs::File::open(from).map_err(|e| HBaseError::io(from, e))?;
                std::io::copy(&mut file, &mut up).map_err(|e| HBaseError::io(from, e))?;
                up.complete().map_err(storage)?;
            }
        }
        if from == to {
            return Ok(());
        }
        std::fs::rename(from, to).map_err(|e| HBaseError::io(to, e))
    }

    /// Moves the root's file `from` to `to`: a rename, or a server-side copy and a delete.
    pub(super) fn relocate(&self, from: &Path, to: &Path) -> Result<()> {
        if let Target::Remote { store, url, mirror } = self {
            let (src, dst) = (
                crate::remote::object_of(url, mirror, from)?,
                crate::remote::object_of(url, mirror, to)?,
            );
            store.copy(&src, &dst).map_err(storage)?;
            store.delete(&src).map_err(storage)?;
        }
        std::fs::rename(from, to).map_err(|e| HBaseError::io(to, e))
    }

    /// Removes the root's file `path`.
    pub(super) fn remove(&self, path: &Path) -> Result<()> {
        if let Target::Remote { store, url, mirror } = self {
            let object = crate::remote::object_of(url, mirror, path)?;
            store.delete(&object).map_err(storage)?;
        }
        std::fs::remove_file(path).map_err(|e| HBaseError::io(path, e))
    }

    /// Makes the directory's entries durable (object storage's writes are when acknowledged).
    pub(super) fn sync_dir(&self, dir: &Path) -> Result<()> {
        match self {
            Target::Local => sync_dir(dir),
            Target::Remote { .. } => Ok(()),
        }
    }
}

/// The table's compaction lock in a root on object storage: the object
/// `.tmp/hfkit-compact/<ns>/<table>.lock` at the root, created only if absent and holding
/// its owner ([`super::owner`]); a killed run's is taken over. Deleted when dropped.
pub(super) struct RemoteLock {
    store: Store,
    object: Location,
}

impl RemoteLock {
    pub(super) fn take(store: &Store, url: &Location, m: &Manifest) -> Result<RemoteLock> {
        use crate::owner::{owner_line, record_owner_gone, store_clock};
        let t = m.table();
        let object = url.join(&format!(
            "{TMP_DIR}/hfkit-compact/{}/{}.lock",
            t.namespace, t.qualifier
        ));
        for _ in 0..2 {
            match store.put(&object, owner_line().into_bytes(), PutCondition::CreateOnly) {
                Ok(_) => {
                    return Ok(RemoteLock {
                        store: store.clone(),
                        object,
                    })
                }
                Err(StorageError::AlreadyExists { .. }) => {}
                Err(e) => return Err(storage(e)),
            }
            let Some(info) = store.head(&object).map_err(storage)? else {
                continue; // released meanwhile
            };
            let text = String::from_utf8_lossy(&store.read(&object).map_err(storage)?).into_owned();
            let dir = url.join(TMP_DIR);
            if !record_owner_gone(&text, info.last_modified, store_clock(store, &dir)?) {
                return Err(HBaseError::Invalid(format!(
                    "{object}: another hfkit hbase compact is running on this table ({})",
                    text.trim().replace('\t', " pid ")
                )));
            }
            store.delete(&object).map_err(storage)?;
        }
        Err(HBaseError::Invalid(format!(
            "{object}: another hfkit hbase compact took this table's lock meanwhile"
        )))
    }
}

impl Drop for RemoteLock {
    fn drop(&mut self) {
        let _ = self.store.delete(&self.object);
    }
}

/// Makes a local directory's entries durable.
pub(super) fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| HBaseError::io(dir, e))
}
