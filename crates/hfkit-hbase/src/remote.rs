//! An HBase root directory on object storage (`hbase.rootdir` on S3), read through a local
//! *root mirror*: the layout's small files (`hbase.version`, `.tableinfo.*`, `.regioninfo`,
//! references, `.filelist`, snapshot manifests) downloaded into a local directory at the same
//! relative paths, and each store file (an HFile in a family directory of `data/`, `archive/`,
//! `.tmp/` or `mobdir/`, and anything under `WALs/`, `oldWALs/`, `MasterData/`) a sparse
//! placeholder of the object's length, whose bytes are never downloaded: a store file of the
//! mirror is opened as the object, read by byte ranges ([`StoredObject`]) as a table's store
//! files on object storage are. The local readers of the layout then run unchanged on the
//! mirror. A placeholder read as a file holds zeros, which no HFile trailer accepts: a reader
//! that forgot the object fails loudly. Spec: `formats/hbase-layout.md` §"Roots on object
//! storage".
//!
//! Object storage has no directories: a directory of the mirror exists when an object lies
//! below it (or a directory marker, a key ending in `/`, names it), as S3A shows HBase's root.

use std::path::{Path, PathBuf};

use hfkit_format::reader::HFileReader;
use hfkit_storage::{store_for, Location};
use hfkit_table::remote_read::StoredObject;

use super::names::{is_hfile_name, DATA_DIR};
use super::{HBaseError, Result};

/// The file of a root mirror naming the root on object storage (one line: the URL).
pub const ROOT_AT: &str = ".hfkit-root-at";

/// Top-level directories of a root whose files are never read whole: region servers'
/// write-ahead logs and the master's local region (only their presence matters).
const NOT_READ: &[&str] = &["WALs", "oldWALs", "MasterData"];

/// Top-level directories holding store directories, with the depth of a store file below
/// them (`data/<ns>/<table>/<region>/<family>/<file>`: 5).
const STORE_TREES: &[(&str, usize)] = &[(DATA_DIR, 5), ("archive", 6), (".tmp", 6), ("mobdir", 6)];

/// True when the object at `rel` (relative to the root, `/`-separated) is left as a
/// placeholder: a store file, or a file that is never read.
pub fn is_placeholder(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let (Some(top), Some(name)) = (parts.first(), parts.last()) else {
        return false;
    };
    if NOT_READ.contains(top) {
        return true;
    }
    STORE_TREES.iter().any(|(dir, depth)| {
        top == dir
            && parts.len() == depth + 1
            && (is_hfile_name(name) || (*top == "mobdir" && !name.starts_with('.')))
    })
}

/// Mirrors the root at `url` into the empty local directory `dir` (see the module's
/// documentation); returns the number of objects listed.
pub fn mirror_root(url: &Location, dir: &Path) -> Result<usize> {
    let invalid = |e: hfkit_storage::StorageError| HBaseError::Invalid(e.to_string());
    let store = store_for(url).map_err(invalid)?;
    let objects = store.list(url).map_err(invalid)?;
    for o in &objects {
        let Some(rel) = o.location.relative_to(url) else {
            continue;
        };
        let rel = rel.trim_start_matches('/');
        if rel.is_empty() || rel.split('/').any(|p| p == ".." || p == ".") {
            continue;
        }
        let local = dir.join(rel.trim_end_matches('/'));
        if rel.ends_with('/') {
            std::fs::create_dir_all(&local).map_err(|e| HBaseError::io(&local, e))?;
            continue;
        }
        if let Some(parent) = local.parent() {
            std::fs::create_dir_all(parent).map_err(|e| HBaseError::io(parent, e))?;
        }
        if is_placeholder(rel) {
            let f = std::fs::File::create(&local).map_err(|e| HBaseError::io(&local, e))?;
            f.set_len(o.size).map_err(|e| HBaseError::io(&local, e))?;
        } else {
            store.download(&o.location, &local).map_err(invalid)?;
        }
    }
    let marker = dir.join(ROOT_AT);
    std::fs::write(&marker, format!("{url}\n")).map_err(|e| HBaseError::io(&marker, e))?;
    Ok(objects.len())
}

/// The root on object storage that the local directory `dir` mirrors, if it is a mirror.
pub fn mirrored_root(dir: &Path) -> Result<Option<Location>> {
    let p = dir.join(ROOT_AT);
    let text = match std::fs::read_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(HBaseError::io(&p, e)),
    };
    Location::parse(text.trim())
        .map(Some)
        .map_err(|e| HBaseError::corrupt(&p, e.to_string()))
}

/// The object that `path`, a file of the mirror `mirror` of the root at `url`, stands for.
pub fn object_of(url: &Location, mirror: &Path, path: &Path) -> Result<Location> {
    let rel = path.strip_prefix(mirror).map_err(|_| {
        HBaseError::Invalid(format!(
            "{}: not in the mirror {} of {url}",
            path.display(),
            mirror.display()
        ))
    })?;
    Ok(url.join(&rel.to_string_lossy().replace('\\', "/")))
}

/// Opens the store file `object` of `len` bytes, read by ranges; errors name `path`, the
/// mirror's file (shown as the object's URL by the command line).
pub fn open_object(object: &Location, len: u64, path: &Path) -> Result<HFileReader> {
    let source =
        StoredObject::sized(object, len).map_err(|e| HBaseError::Invalid(e.to_string()))?;
    HFileReader::from_source(std::sync::Arc::new(source)).map_err(|source| HBaseError::Format {
        path: PathBuf::from(path),
        source,
    })
}

/// Downloads the store file `object` into the local file `to` (a clone's copy).
pub fn download(object: &Location, to: &Path) -> Result<u64> {
    let store = store_for(object).map_err(|e| HBaseError::Invalid(e.to_string()))?;
    store
        .download(object, to)
        .map_err(|e| HBaseError::Invalid(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_files_and_logs_are_placeholders_the_layout_is_not() {
        let hfile = "0123456789abcdef0123456789abcdef";
        for rel in [
            format!("data/default/t1/{hfile}/cf/{hfile}"),
            format!("archive/data/ns/t/{hfile}/cf/{hfile}"),
            format!(".tmp/data/ns/t/{hfile}/cf/{hfile}"),
            format!("mobdir/data/default/t/{hfile}/cf/{hfile}20240101abc_x"),
            "WALs/rs1,16020,1/rs1%2C16020%2C1.1".to_string(),
            "MasterData/data/master/store/x/proc/abc".to_string(),
        ] {
            assert!(is_placeholder(&rel), "{rel}");
        }
        for rel in [
            "hbase.version".to_string(),
            "hbase.id".to_string(),
            "data/default/t1/.tabledesc/.tableinfo.0000000001.539".to_string(),
            format!("data/default/t1/{hfile}/.regioninfo"),
            format!("data/default/t1/{hfile}/cf/{hfile}.aaaabbbbccccddddeeeeffff00001111"),
            format!("data/default/t1/{hfile}/cf/.filelist/f1.1700000000000"),
            format!("data/default/t1/{hfile}/cf/t1={hfile}-{hfile}"),
            ".hbase-snapshot/s1/data.manifest".to_string(),
            ".hbase-snapshot/s1/.snapshotinfo".to_string(),
            format!("archive/data/ns/t/{hfile}/.regioninfo"),
        ] {
            assert!(!is_placeholder(&rel), "{rel}");
        }
    }
}
