//! Bulk-load output on object storage (`hfkit import --out s3://bucket/dir`). The import writes
//! its output exactly as for a local directory, into a staging directory of its own on local
//! disk (removed whatever the outcome); [`publish`] then streams every file to its object by a
//! multipart upload (memory: a few parts, whatever the file's size), and only when every part of
//! every file is stored completes the uploads, one small request each. A failure before that
//! aborts every upload: no object appears, none is left half-written, no upload stays open. A
//! failure during the completions deletes the objects already completed. Spec:
//! `formats/import.md` §"Output on object storage", `formats/storage.md` §"Uploads".

use std::path::{Path, PathBuf};

use hfkit_storage::{store_for, Location, StorageError, Upload};

use crate::import::output::OutputError;

/// Part size of the uploads: three parts per upload are in memory at most.
pub const PART_SIZE: usize = 8 * 1024 * 1024;

/// What [`publish`] uploaded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PublishReport {
    pub files: usize,
    pub bytes: u64,
}

fn storage(e: StorageError) -> OutputError {
    OutputError::Invalid(e.to_string())
}

/// Refuses a destination that already holds output for `families`: an object directly in
/// `dest/<family>/` whose name does not start with `.` (as [`crate::import::output::BulkOutput::new`]
/// refuses a local directory holding files).
pub fn check_empty(dest: &Location, families: &[String]) -> Result<(), OutputError> {
    let store = store_for(dest).map_err(storage)?;
    for f in families {
        let fd = dest.join(f);
        let existing = store
            .list(&fd)
            .map_err(storage)?
            .iter()
            .filter(|i| {
                i.location
                    .relative_to(&fd)
                    .is_some_and(|r| !r.contains('/') && !r.starts_with('.'))
            })
            .count();
        if existing > 0 {
            return Err(OutputError::Invalid(format!(
                "{fd} already holds {existing} object(s); choose an empty output location"
            )));
        }
    }
    Ok(())
}

/// Every file below `dir`, with its `/`-separated path relative to `dir`, sorted.
fn files(dir: &Path) -> Result<Vec<(PathBuf, String)>, OutputError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|source| OutputError::Io {
            path: d.clone(),
            source,
        })?;
        for e in entries {
            let e = e.map_err(|source| OutputError::Io {
                path: d.clone(),
                source,
            })?;
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .map(|r| r.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default();
                out.push((p, rel));
            }
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

/// Uploads every file below each local directory to the same relative name below its
/// destination, all or nothing (see the module documentation).
pub fn publish(
    trees: &[(PathBuf, Location)],
    part_size: usize,
) -> Result<PublishReport, OutputError> {
    let mut uploads: Vec<Upload> = Vec::new();
    let mut report = PublishReport::default();
    // Dropping `uploads` on an early return aborts every one of them.
    for (local, dest) in trees {
        let store = store_for(dest).map_err(storage)?;
        for (path, rel) in files(local)? {
            let io = |source| OutputError::Io {
                path: path.clone(),
                source,
            };
            let mut up = store.upload(&dest.join(&rel), part_size).map_err(storage)?;
            let mut f = std::fs::File::open(&path).map_err(io)?;
            let n = std::io::copy(&mut f, &mut up).map_err(io)?;
            up.finish_data().map_err(storage)?;
            report.files += 1;
            report.bytes += n;
            uploads.push(up);
        }
    }
    let mut completed: Vec<Location> = Vec::new();
    let mut pending = uploads.into_iter();
    for up in pending.by_ref() {
        let loc = up.location().clone();
        if let Err(e) = up.complete() {
            drop(pending);
            for l in &completed {
                if let Ok(s) = store_for(l) {
                    let _ = s.delete(l);
                }
            }
            return Err(storage(e));
        }
        completed.push(loc);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publishes_a_local_tree_to_a_local_destination() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("src");
        std::fs::create_dir_all(src.join("f/.hidden")).unwrap();
        std::fs::write(src.join("f/a"), b"aa").unwrap();
        std::fs::write(src.join("f/.hidden/b"), b"b").unwrap();
        let dest = Location::Local(t.path().join("dest"));
        let r = publish(&[(src.clone(), dest.clone())], PART_SIZE).unwrap();
        assert_eq!(r, PublishReport { files: 2, bytes: 3 });
        assert_eq!(std::fs::read(t.path().join("dest/f/a")).unwrap(), b"aa");
        let e = check_empty(&dest, &["f".into()]).unwrap_err().to_string();
        assert!(e.contains("already holds 1 object(s)"), "{e}");
        assert!(check_empty(&dest, &["g".into()]).is_ok());
    }
}
