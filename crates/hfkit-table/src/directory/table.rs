//! An open table directory, [`Table`]: the names of its layout (staging, the writers' lock,
//! index tables), create, open, the live manifest, store file paths and their opening, and the
//! writers' lock. Spec: `formats/table.md` §"Layout".

use std::fs::File;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use crate::fsops::{Fs, RealFs};
use crate::manifest::{
    self, Attributes, FamilyEntry, Manifest, StoreFileEntry, DATA_DIR, MANIFEST_DIR,
};
use crate::remote_read::RemoteData;
use crate::TableError;
use hfkit_format::error::FormatError;
use hfkit_format::reader::HFileReader;

/// Staging directory for attaches in progress.
pub const STAGING_DIR: &str = ".tmp";
/// The writers' advisory lock file.
pub const LOCK_FILE: &str = ".lock";
/// Directory of the index tables imported with the table (`INDEX_DIR/<qualifier>/`, each a
/// table directory of its own). Garbage collection, check, compaction, snapshots and exports
/// of the table never look inside it.
pub const INDEX_DIR: &str = "indexes";

/// What a new table keeps from its schema besides its families and splits: the table
/// attributes, METADATA and CONFIGURATION, and the value types of its typed columns.
#[derive(Clone, Debug, Default)]
pub struct TableSetup {
    pub attributes: Attributes,
    pub columns: std::collections::BTreeMap<String, crate::ValueType>,
    /// The schema's `[rowkey] spec` ([`Manifest::rowkey`]).
    pub rowkey: Option<String>,
}

/// An open table directory.
#[derive(Clone)]
pub struct Table {
    pub(super) dir: PathBuf,
    pub(super) fs: Arc<dyn Fs>,
    /// For a read mirror of a table on object storage: where its store files are read from
    /// (`remote_read`).
    remote: Option<RemoteData>,
}

/// Held while a writer changes the table; released on drop.
pub struct WriterLock {
    _file: File,
}

impl Table {
    /// Creates a table at `dir` (which must not exist or be empty) with the given families and
    /// region split keys (sorted, unique, non-empty).
    pub fn create(
        dir: &Path,
        table: &str,
        families: Vec<FamilyEntry>,
        splits: &[Vec<u8>],
    ) -> Result<Table, TableError> {
        let setup = TableSetup::default();
        Table::create_with_attributes(dir, table, setup, families, splits)
    }

    /// [`Table::create`] with table attributes, METADATA and CONFIGURATION, and the schema's
    /// column types, kept in the manifest.
    pub fn create_with_attributes(
        dir: &Path,
        table: &str,
        setup: TableSetup,
        families: Vec<FamilyEntry>,
        splits: &[Vec<u8>],
    ) -> Result<Table, TableError> {
        if families.is_empty() {
            return Err(TableError::Invalid(
                "a table needs at least one family".into(),
            ));
        }
        for f in &families {
            f.writer_options(0)?;
        }
        if splits.iter().any(|s| s.is_empty()) || splits.windows(2).any(|w| w[0] >= w[1]) {
            return Err(TableError::Invalid(
                "split keys must be non-empty, sorted and unique".into(),
            ));
        }
        if dir.exists() {
            let mut it = std::fs::read_dir(dir).map_err(|e| TableError::io(dir, e))?;
            if it.next().is_some() {
                return Err(TableError::Invalid(format!(
                    "{} exists and is not empty",
                    dir.display()
                )));
            }
        }
        let mut m = Manifest::new(table, families, Manifest::regions_from_splits(splits));
        m.table_attributes = setup.attributes;
        m.columns = setup.columns;
        m.rowkey = setup.rowkey;
        m.check_regions()?;
        // Built beside `dir` and renamed into place when complete: a process killed half-way
        // leaves no half-made table, and its staging is removed by the next create.
        let staged = crate::staging::beside(dir).map_err(|e| TableError::io(dir, e))?;
        let s = staged.path();
        for d in [s.join(MANIFEST_DIR), s.join(DATA_DIR), s.join(STAGING_DIR)] {
            RealFs
                .create_dir_all(&d)
                .map_err(|e| TableError::io(&d, e))?;
        }
        manifest::publish(&RealFs, s, &m)?;
        RealFs.rename(s, dir).map_err(|e| TableError::io(dir, e))?;
        drop(staged);
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            let _ = RealFs.sync_dir(parent);
        }
        Ok(Table {
            dir: dir.to_path_buf(),
            fs: Arc::new(RealFs),
            remote: None,
        })
    }

    /// Opens the table at `dir`.
    pub fn open(dir: &Path) -> Result<Table, TableError> {
        let t = Table {
            dir: dir.to_path_buf(),
            fs: Arc::new(RealFs),
            remote: RemoteData::of(dir)?,
        };
        t.manifest()?;
        Ok(t)
    }

    /// The same table, with commits going through `fs` (tests inject faults this way).
    pub fn with_fs(mut self, fs: Arc<dyn Fs>) -> Table {
        self.fs = fs;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// True for a read mirror of a table on object storage, whose store files are objects
    /// read by byte ranges ([`crate::remote_read`]).
    pub fn reads_by_ranges(&self) -> bool {
        self.remote.is_some()
    }

    /// The filesystem commits go through.
    pub(crate) fn fs(&self) -> &dyn Fs {
        self.fs.as_ref()
    }

    /// The live manifest. A reader reads it once and uses that version for its whole read.
    pub fn manifest(&self) -> Result<Manifest, TableError> {
        manifest::read_current(&self.dir)
    }

    /// Path of a live store file.
    pub fn file_path(&self, e: &StoreFileEntry) -> PathBuf {
        self.dir
            .join(DATA_DIR)
            .join(&e.region)
            .join(&e.family)
            .join(&e.name)
    }

    /// Opens store file `e` and checks it against what the manifest recorded when the file was
    /// attached or written: its length and its trailer's entry count. (A full scan then checks
    /// the entry count against the cells it decodes, so a compaction, which scans every input
    /// to its end, never drops cells a damaged trailer hides: `formats/table.md` §"Checks
    /// before data is replaced, deleted or handed out".)
    /// A file that cannot be opened is [`TableError::Io`] (for a vanished file) or
    /// [`TableError::Corrupt`], both naming its path.
    /// In a read mirror of a table on object storage, the file is the object, read by ranges.
    pub fn open_store_file(&self, e: &StoreFileEntry) -> Result<HFileReader, TableError> {
        let path = self.file_path(e);
        let opened = match &self.remote {
            Some(r) => {
                let rel = format!("{}/{}/{}", e.region, e.family, e.name);
                HFileReader::from_source(Arc::new(r.object(&rel, e.size)))
            }
            None => HFileReader::open(&path),
        };
        let reader = match opened {
            Ok(r) => r,
            Err(FormatError::Io { source, .. }) => return Err(TableError::Io { path, source }),
            Err(err) => {
                return Err(TableError::Corrupt {
                    path,
                    detail: err.to_string(),
                })
            }
        };
        let len = reader.file_len();
        let detail = if len != e.size {
            format!("{len} bytes, the manifest says {}", e.size)
        } else if reader.entry_count() != e.entries {
            format!(
                "trailer entry_count is {}, the manifest says {} cells",
                reader.entry_count(),
                e.entries
            )
        } else {
            return Ok(reader);
        };
        Err(TableError::Corrupt { path, detail })
    }

    /// The index tables under [`INDEX_DIR`] (directories holding a `CURRENT`), sorted.
    pub fn index_tables(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(self.dir.join(INDEX_DIR))
            .into_iter()
            .flatten()
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| p.join(manifest::CURRENT).is_file())
            .collect();
        out.sort();
        out
    }

    /// Takes the writers' lock, waiting for another writer to finish.
    pub fn lock(&self) -> Result<WriterLock, TableError> {
        let path = self.dir.join(LOCK_FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| TableError::io(&path, e))?;
        file.lock().map_err(|e| TableError::io(&path, e))?;
        Ok(WriterLock { _file: file })
    }
}
