//! The filesystem operations a table commit performs, behind a trait so that tests can fail
//! any one of them (crash injection). Spec: `formats/table.md` §"Commit protocol".
//!
//! Every mutating operation is a *crash point*: [`FaultFs`] fails the N-th one and every one
//! after it, which is what a process killed at that instant leaves behind (nothing after the
//! failed step happens; everything before it happened).
//!
//! A table never holds a symbolic link (`formats/table.md` §"Attach"): [`Fs::link_or_copy`]
//! follows a link to its target and hard-links or copies the target's bytes.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Mutating filesystem operations used by table commits.
pub trait Fs: Send + Sync {
    /// Creates `path` with `bytes` and fsyncs it (the file, not its directory).
    fn write_file(&self, path: &Path, bytes: &[u8]) -> io::Result<()>;
    /// Fsyncs an existing file.
    fn sync_file(&self, path: &Path) -> io::Result<()>;
    /// Atomically renames `from` to `to` (replacing `to`).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Fsyncs a directory so that entries created or renamed in it are durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Hard-links `from` at `to`, or copies it when linking is not possible; the result is fsynced.
    /// A symbolic link `from` is followed: `to` is the target's file, never a link (a link that
    /// leads nowhere is an error naming it).
    fn link_or_copy(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Creates a directory and its parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
}

/// The real filesystem.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealFs;

impl Fs for RealFs {
    fn write_file(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut f = File::create(path)?;
        f.write_all(bytes)?;
        f.sync_all()
    }

    fn sync_file(&self, path: &Path) -> io::Result<()> {
        File::open(path)?.sync_all()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }

    fn link_or_copy(&self, from: &Path, to: &Path) -> io::Result<()> {
        // `link(2)` of a symbolic link links the link itself: follow it first.
        let src = follow_links(from)?;
        if !fs::metadata(&src)?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a regular file", from.display()),
            ));
        }
        if fs::hard_link(&src, to).is_err() {
            fs::copy(&src, to)?;
        }
        File::open(to)?.sync_all()
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
}

/// The file `path` names with symbolic links followed: `path` itself when it is not a link, else
/// its final target. Errors name `path`, and for a link that leads nowhere also the target.
pub fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    if !fs::symlink_metadata(path).map_err(named)?.is_symlink() {
        return Ok(path.to_path_buf());
    }
    fs::canonicalize(path).map_err(|e| {
        let target = fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".into());
        let why = if e.kind() == io::ErrorKind::NotFound {
            "which does not exist".to_string()
        } else {
            format!("which cannot be followed: {e}")
        };
        io::Error::new(
            e.kind(),
            format!("{} is a symbolic link to {target}, {why}", path.display()),
        )
    })
}

/// Why the store file at `path` does not belong in a table, if it is a symbolic link (put there
/// by hand: hfkit never stores one). `table check` reports it and restore refuses it.
pub fn store_file_link(path: &Path) -> Option<String> {
    let target = fs::read_link(path).ok()?;
    Some(format!(
        "a symbolic link to {}, not a regular file: the table breaks when the target moves; replace it \
         with a copy of the target",
        target.display()
    ))
}

/// A filesystem that fails at the N-th mutating operation and at every one after it.
#[derive(Debug)]
pub struct FaultFs {
    fail_at: u64,
    ops: AtomicU64,
}

impl FaultFs {
    /// Fails operation number `fail_at` (0-based) and all later ones.
    pub fn new(fail_at: u64) -> FaultFs {
        FaultFs {
            fail_at,
            ops: AtomicU64::new(0),
        }
    }

    /// Operations attempted so far.
    pub fn ops(&self) -> u64 {
        self.ops.load(Ordering::SeqCst)
    }

    fn step(&self, what: &str, path: &Path) -> io::Result<()> {
        let n = self.ops.fetch_add(1, Ordering::SeqCst);
        if n >= self.fail_at {
            return Err(io::Error::other(format!(
                "injected fault at operation {n} ({what} {})",
                path.display()
            )));
        }
        Ok(())
    }
}

impl Fs for FaultFs {
    fn write_file(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.step("write", path)?;
        RealFs.write_file(path, bytes)
    }
    fn sync_file(&self, path: &Path) -> io::Result<()> {
        self.step("fsync", path)?;
        RealFs.sync_file(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.step("rename", from)?;
        RealFs.rename(from, to)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.step("fsync dir", dir)?;
        RealFs.sync_dir(dir)
    }
    fn link_or_copy(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.step("link", to)?;
        RealFs.link_or_copy(from, to)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.step("mkdir", dir)?;
        RealFs.create_dir_all(dir)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.step("remove", path)?;
        RealFs.remove_file(path)
    }
}
