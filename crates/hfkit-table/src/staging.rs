//! Temporary directories owned by a live process, and the sweeping of those whose owner died.
//! Spec: `formats/table.md` §"Writers and garbage", `formats/import.md` §"Temporary files".
//!
//! ```text
//! <parent>/<prefix><32 hex>/     made by OwnedDir::create, flock(LOCK_EX) held on the directory
//!                                itself while the guard lives; removed with its contents on drop
//! ```
//!
//! An import writes temporary files outside any table lock (its sort runs, its bulk-load output
//! before the attach), possibly while other imports use the same directory. Each run therefore
//! works in a directory of its own and holds an exclusive `flock` on it. The guard removes the
//! directory on every exit path (success, error, unwinding). SIGKILL skips that, but the kernel
//! releases the lock with the process, so a directory whose lock can be taken has no live
//! owner, and a later writer removes it ([`remove_if_unowned`], [`sweep`]); one whose lock is
//! held belongs to a running process and is left alone.
//!
//! Creation races with such a sweep (the directory exists a moment before it is locked), so
//! [`OwnedDir::create`] checks after locking that the path still names the directory it
//! locked, and starts over under a new name if a sweeper removed it first.

use std::fs::{self, File, TryLockError};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use std::sync::atomic::{AtomicU32, Ordering};

/// Attempts at creating a directory before giving up (each lost race with a sweeper costs one).
const CREATE_ATTEMPTS: usize = 64;

/// A directory owned by this process: locked while the guard lives, removed when it is dropped.
#[derive(Debug)]
pub struct OwnedDir {
    path: PathBuf,
    /// The open directory holding the lock (released when dropped, after the removal).
    lock: Option<File>,
}

impl OwnedDir {
    /// Creates `parent/<prefix><32 hex>` (and `parent` if missing) and locks it.
    pub fn create(parent: &Path, prefix: &str) -> io::Result<OwnedDir> {
        fs::create_dir_all(parent)?;
        for _ in 0..CREATE_ATTEMPTS {
            let path = parent.join(format!("{prefix}{}", unique_hex()));
            match fs::create_dir(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
            let dir = match File::open(&path) {
                Ok(f) => f,
                // A sweeper removed it already.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            match dir.try_lock() {
                Ok(()) => {}
                // A sweeper holds it and is removing it.
                Err(TryLockError::WouldBlock) => continue,
                Err(TryLockError::Error(e)) => {
                    let _ = fs::remove_dir(&path);
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot lock {}: {e}", path.display()),
                    ));
                }
            }
            // A sweeper may have removed it between its creation and the lock.
            if is_at(&dir, &path) {
                return Ok(OwnedDir {
                    path,
                    lock: Some(dir),
                });
            }
        }
        Err(io::Error::other(format!(
            "{}: could not create a directory of its own in {CREATE_ATTEMPTS} attempts",
            parent.display()
        )))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for OwnedDir {
    /// Removes the directory and everything in it, then releases the lock.
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
        self.lock = None;
    }
}

/// A directory to build the directory `dest` in, to be renamed to `dest` once complete: a
/// sibling `.<name of dest>.hfkit-<32 hex>`. The ones that builders of the same `dest` killed
/// before their rename left are removed first, with what was being built beside those
/// (`..<name of dest>.hfkit-<hex>.hfkit-<hex>`: `import --table` stages a new table, and the
/// table's creation is itself built beside that staging).
pub fn beside(dest: &Path) -> io::Result<OwnedDir> {
    let name = dest.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not a directory name", dest.display()),
        )
    })?;
    let parent = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let prefix = format!(".{}.hfkit-", name.to_string_lossy());
    sweep(parent, &format!(".{prefix}"));
    sweep(parent, &prefix);
    OwnedDir::create(parent, &prefix)
}

/// Whether the open directory `dir` is still the one at `path`.
fn is_at(dir: &File, path: &Path) -> bool {
    match (dir.metadata(), fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether a live process holds the directory `dir` (its lock cannot be taken). Probing takes
/// the lock for a moment when it is free.
pub fn is_owned(dir: &Path) -> bool {
    File::open(dir).is_ok_and(|f| matches!(f.try_lock(), Err(TryLockError::WouldBlock)))
}

/// Removes the directory `dir` with its contents when no live process holds it. Returns
/// whether it was removed.
pub fn remove_if_unowned(dir: &Path) -> io::Result<bool> {
    let f = match File::open(dir) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    match f.try_lock() {
        // Removed while holding the lock, so that no creator can claim it meanwhile.
        Ok(()) => match fs::remove_dir_all(dir) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        },
        Err(TryLockError::WouldBlock) => Ok(false),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// Removes every directory `parent/<prefix>*` that no live process holds (what killed
/// processes left); returns how many. Other entries, and a missing `parent`, are left alone.
pub fn sweep(parent: &Path, prefix: &str) -> usize {
    let Ok(rd) = fs::read_dir(parent) else {
        return 0;
    };
    let mut removed = 0;
    for e in rd.flatten() {
        let ours = e
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(prefix));
        // A directory itself, not a symbolic link to one.
        if ours
            && e.file_type().is_ok_and(|t| t.is_dir())
            && remove_if_unowned(&e.path()).unwrap_or(false)
        {
            removed += 1;
        }
    }
    removed
}

/// 32 hex characters unique within this machine (time, process id, counter).
pub fn unique_hex() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    format!(
        "{nanos:016x}{:08x}{:08x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether another open file description can lock `dir` now (as a sweeper would).
    fn lockable(dir: &Path) -> bool {
        File::open(dir).unwrap().try_lock().is_ok()
    }

    #[test]
    fn owned_dirs_are_kept_while_held_and_removed_when_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let parent = tmp.path().join("spill");
        let a = OwnedDir::create(&parent, "run-").unwrap();
        let b = OwnedDir::create(&parent, "run-").unwrap();
        assert_ne!(a.path(), b.path());
        assert!(a
            .path()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("run-"));
        fs::write(a.path().join("x"), b"data").unwrap();
        fs::create_dir(a.path().join("sub")).unwrap();
        fs::write(a.path().join("sub").join("y"), b"data").unwrap();
        // Held: a sweeper leaves both alone.
        assert!(!lockable(a.path()) && is_owned(a.path()));
        assert_eq!(sweep(&parent, "run-"), 0);
        assert!(!remove_if_unowned(a.path()).unwrap());
        assert!(a.path().join("sub").join("y").is_file());
        let (pa, pb) = (a.path().to_path_buf(), b.path().to_path_buf());
        drop(a);
        assert!(!pa.exists());
        assert!(pb.is_dir());
        drop(b);
        assert_eq!(fs::read_dir(&parent).unwrap().count(), 0);
    }

    /// What a killed owner leaves (the directory, no lock) is swept; other names and plain files
    /// are not touched.
    #[test]
    fn sweep_removes_only_unheld_directories_with_the_prefix() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path();
        let dead = p.join("run-dead");
        fs::create_dir_all(dead.join("sub")).unwrap();
        fs::write(dead.join("sub").join("f"), b"x").unwrap();
        fs::create_dir(p.join("other")).unwrap();
        fs::write(p.join("run-file"), b"x").unwrap();
        let live = OwnedDir::create(p, "run-").unwrap();
        assert!(!is_owned(&dead));
        assert_eq!(sweep(p, "run-"), 1);
        assert!(!dead.exists());
        assert!(live.path().is_dir());
        assert!(p.join("other").is_dir() && p.join("run-file").is_file());
        assert_eq!(sweep(&p.join("missing"), "run-"), 0);
    }

    #[test]
    fn beside_makes_a_sibling_and_removes_those_of_killed_builders() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("t");
        let dead = tmp.path().join(".t.hfkit-0123");
        fs::create_dir_all(dead.join("data")).unwrap();
        let other = tmp.path().join(".u.hfkit-0123");
        fs::create_dir(&other).unwrap();
        // A killed builder of a staging of `t` (a new table created inside `import --table`'s
        // staging), and one of `u`'s.
        let nested = tmp.path().join("..t.hfkit-0123.hfkit-4567");
        fs::create_dir_all(nested.join("manifests")).unwrap();
        let other_nested = tmp.path().join("..u.hfkit-0123.hfkit-4567");
        fs::create_dir(&other_nested).unwrap();
        let b = beside(&dest).unwrap();
        assert!(!nested.exists() && other_nested.is_dir());
        assert_eq!(b.path().parent(), Some(tmp.path()));
        assert!(b
            .path()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with(".t.hfkit-"));
        assert!(!dead.exists() && other.is_dir());
        // Built, then renamed into place: dropping the guard leaves the result alone.
        fs::write(b.path().join("CURRENT"), b"x").unwrap();
        fs::rename(b.path(), &dest).unwrap();
        drop(b);
        assert!(dest.join("CURRENT").is_file());
        assert!(beside(Path::new("/")).is_err());
    }

    /// The check `create` makes after locking: a directory removed (and even re-made under the
    /// same name) after it was opened is not the one at the path any more.
    #[test]
    fn a_directory_removed_after_it_was_opened_is_not_the_one_at_its_path() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("d");
        fs::create_dir(&p).unwrap();
        let f = File::open(&p).unwrap();
        assert!(is_at(&f, &p));
        fs::remove_dir(&p).unwrap();
        assert!(!is_at(&f, &p));
        fs::create_dir(&p).unwrap();
        assert!(!is_at(&f, &p));
    }

    /// Directories created while another thread sweeps as fast as it can are never removed
    /// under their owner (a sweep that wins the race makes `create` start over).
    #[test]
    fn creation_survives_concurrent_sweeps() {
        let tmp = tempfile::tempdir().unwrap();
        let parent = tmp.path().to_path_buf();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let sweeper = {
            let (parent, stop) = (parent.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    n += sweep(&parent, "d-");
                }
                n
            })
        };
        for _ in 0..300 {
            let d = OwnedDir::create(&parent, "d-").unwrap();
            // Owned: it exists and stays while held, whatever the sweeper does.
            fs::write(d.path().join("f"), b"x").unwrap();
            assert!(d.path().join("f").is_file());
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        sweeper.join().unwrap();
        assert_eq!(fs::read_dir(&parent).unwrap().count(), 0);
    }
}
