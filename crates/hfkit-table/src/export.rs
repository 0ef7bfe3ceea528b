//! Export: a table (live, or as of a snapshot) as a self-contained table directory, as a
//! bulk-load directory for `hbase completebulkload`, or as the rows a read returns handed to a
//! [`RowWriter`] (the CSV and Parquet writers live in `hfkit-pipeline`, which owns the file
//! formats). Spec: `formats/table.md` §"Export".
//!
//! ```text
//! --to DIR        DIR/ a table: files hard-linked (or copied), verified, manifest rewritten
//! --bulkload DIR  DIR/<family>/<hfile>: one file per region × family (several files of a
//!                 store are merged, the newest of equal keys kept, as HBase would load them
//!                 with one sequence id)
//! rows            Table::export_rows: the rows of a read (merge + matcher, the versions the
//!                 read asks for, TTL at its clock) to a RowWriter, into one file
//! ```
//!
//! Every export holds the writers' lock, so no compaction or restore removes files under it,
//! and is written under a temporary name and renamed into place when complete.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::compact::open_region_stores;
use super::directory::{unique_hex, verify_copy, verify_store_file, Table};
use super::manifest::Manifest;
use super::staging;
use super::TableError;
use hfkit_format::writer::HFileWriter;
use hfkit_read::{self as read, MergeScanner, ReadOptions};

/// What an export wrote.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExportReport {
    pub path: PathBuf,
    /// Manifest version exported.
    pub version: u64,
    pub snapshot: Option<String>,
    pub files: usize,
    pub cells: u64,
    pub bytes: u64,
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> TableError + '_ {
    move |e| TableError::io(path, e)
}

fn refuse_existing(dest: &Path) -> Result<(), TableError> {
    if dest.is_dir() {
        let mut it = std::fs::read_dir(dest).map_err(io_err(dest))?;
        if it.next().is_some() {
            return Err(TableError::Invalid(format!(
                "{} exists and is not empty",
                dest.display()
            )));
        }
    } else if dest.exists() {
        return Err(TableError::Invalid(format!("{} exists", dest.display())));
    }
    Ok(())
}

/// Writes `write`'s output to the file `dest` (which must not exist) atomically: in a
/// directory of this run's own beside it ([`staging::beside`], which first removes those that
/// killed exports to `dest` left), fsynced, renamed into place, the parent directory fsynced.
/// On failure nothing is left.
fn write_atomically<T, E: From<TableError>>(
    dest: &Path,
    write: impl FnOnce(File) -> Result<T, E>,
) -> Result<T, E> {
    refuse_existing(dest)?;
    let staging = staging::beside(dest).map_err(io_err(dest))?;
    let tmp = staging.path().join("export");
    let file = File::create(&tmp).map_err(io_err(&tmp))?;
    let out = write(file)?;
    File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(io_err(&tmp))?;
    std::fs::rename(&tmp, dest).map_err(io_err(dest))?;
    sync_parent(dest)?;
    Ok(out)
}

/// Fsyncs the directory holding `path`, so that a rename into it is durable.
fn sync_parent(path: &Path) -> Result<(), TableError> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    File::open(parent)
        .and_then(|d| d.sync_all())
        .map_err(io_err(parent))
}

/// Writes the rows of a read into an export file ([`Table::export_rows`]); row-per-key
/// exports through an import mapping (`pipeline::export`) are one.
pub trait RowWriter {
    /// What the writer reports when done.
    type Output;
    type Error: From<TableError>;
    /// One row: its key and cells (newest version of each column), in order, borrowed from
    /// the scan's row buffer (valid for this call).
    fn write_row(&mut self, row: read::RowRef<'_>) -> Result<(), Self::Error>;
    /// Writes everything still buffered into the file.
    fn finish(self) -> Result<Self::Output, Self::Error>;
}

impl Table {
    /// The manifest to export: the live one or a snapshot's.
    fn export_manifest(&self, snapshot: Option<&str>) -> Result<Manifest, TableError> {
        match snapshot {
            Some(s) => Ok(self.snapshot(s)?.manifest),
            None => self.manifest(),
        }
    }

    /// A self-contained, checked copy of the table (or of a snapshot) at `dest`.
    pub fn export_table(
        &self,
        snapshot: Option<&str>,
        dest: &Path,
    ) -> Result<ExportReport, TableError> {
        let _lock = self.lock()?;
        let m = self.export_manifest(snapshot)?;
        super::snapshot::materialize(self, &m, dest)?;
        Ok(ExportReport {
            path: dest.to_path_buf(),
            version: m.version,
            snapshot: snapshot.map(String::from),
            files: m.files.len(),
            cells: m.files.iter().map(|f| f.entries).sum(),
            bytes: m.files.iter().map(|f| f.size).sum(),
        })
    }

    /// A bulk-load directory `dest/<family>/<hfile>` for `hbase completebulkload`. A store with
    /// one file is linked (or copied); a store with several is merged into one file with the
    /// family's settings, keeping only the newest of cells with equal keys (HBase gives all files
    /// of one bulk load the same sequence id, so it could not tell them apart). Markers, masked
    /// and expired cells are kept: this is the table's raw contents.
    pub fn export_bulkload(
        &self,
        snapshot: Option<&str>,
        dest: &Path,
    ) -> Result<ExportReport, TableError> {
        let _lock = self.lock()?;
        let m = self.export_manifest(snapshot)?;
        refuse_existing(dest)?;
        // Held while it is built and removed if that fails; the next export to `dest` removes
        // one a killed process left.
        let staging = staging::beside(dest).map_err(io_err(dest))?;
        let (files, cells, bytes) = self.write_bulkload(&m, staging.path())?;
        std::fs::rename(staging.path(), dest).map_err(io_err(dest))?;
        sync_parent(dest)?;
        Ok(ExportReport {
            path: dest.to_path_buf(),
            version: m.version,
            snapshot: snapshot.map(String::from),
            files,
            cells,
            bytes,
        })
    }

    fn write_bulkload(&self, m: &Manifest, out: &Path) -> Result<(usize, u64, u64), TableError> {
        let fs = self.fs();
        let (mut files, mut cells, mut bytes) = (0, 0, 0);
        let now = hfkit_format::cell::now_ms();
        for fam in &m.families {
            let fam_dir = out.join(&fam.name);
            fs.create_dir_all(&fam_dir).map_err(io_err(&fam_dir))?;
            for region in &m.regions {
                let mut store: Vec<_> = m
                    .files
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e.region == region.id && e.family == fam.name)
                    .collect();
                store.sort_by_key(|(i, e)| (e.seq_id, *i));
                let name = unique_hex();
                let to = fam_dir.join(&name);
                match store.as_slice() {
                    [] => continue,
                    [(_, e)] => {
                        self.open_store_file(e)?;
                        fs.link_or_copy(&self.file_path(e), &to)
                            .map_err(io_err(&to))?;
                        verify_copy(&self.file_path(e), &to, e.entries)?;
                        cells += e.entries;
                        bytes += e.size;
                    }
                    several => {
                        let mut readers = Vec::new();
                        for (_, e) in several {
                            readers.push((self.open_store_file(e)?, e.seq_id));
                        }
                        let mut opts = fam.writer_options(now)?;
                        opts.include_tags = true;
                        let file = File::create(&to).map_err(io_err(&to))?;
                        let mut w =
                            HFileWriter::new(BufWriter::with_capacity(1 << 20, file), opts)?;
                        let rerr = |e: read::ReadError| TableError::Invalid(e.to_string());
                        let mut merge = MergeScanner::new(readers.iter().map(|(r, s)| (r, *s)))
                            .map_err(rerr)?;
                        merge.seek_to_first().map_err(rerr)?;
                        let (mut prev, mut key) = (Vec::new(), Vec::new());
                        let mut first = true;
                        while let Some(c) = merge.peek() {
                            key.clear();
                            c.write_key(&mut key);
                            if first || key != prev {
                                w.append(&c)?;
                                cells += 1;
                            }
                            first = false;
                            std::mem::swap(&mut prev, &mut key);
                            merge.advance().map_err(rerr)?;
                        }
                        let (buf, summary) = w.finish()?;
                        let f = buf
                            .into_inner()
                            .map_err(|e| TableError::io(&to, e.into_error()))?;
                        f.sync_all().map_err(io_err(&to))?;
                        verify_store_file(&to, summary.entry_count).map_err(|detail| {
                            TableError::Corrupt {
                                path: to.clone(),
                                detail: format!("merged store file failed verification: {detail}"),
                            }
                        })?;
                        bytes += summary.file_size;
                    }
                }
                files += 1;
            }
            fs.sync_dir(&fam_dir).map_err(io_err(&fam_dir))?;
        }
        fs.sync_dir(out).map_err(io_err(out))?;
        Ok((files, cells, bytes))
    }

    /// Every row a read with `opts` returns (its versions, time range and TTL clock; start,
    /// stop and limit are not used), region by region, rows in order, handed to the writer
    /// `open` makes of the file for `dest` (written under a temporary name, renamed into place
    /// when the writer has finished). Returns the manifest version exported and what the
    /// writer's `finish` returned. Row exports (newest version of each column) and cell exports
    /// (every version) of `pipeline::export` are written this way.
    pub fn export_rows<W: RowWriter>(
        &self,
        snapshot: Option<&str>,
        dest: &Path,
        opts: &ReadOptions,
        open: impl FnOnce(File) -> Result<W, W::Error>,
    ) -> Result<(u64, W::Output), W::Error> {
        let _lock = self.lock()?;
        let m = self.export_manifest(snapshot)?;
        let out = write_atomically(dest, |file| {
            let mut w = open(file)?;
            self.for_each_read_row(&m, opts, &mut |row| w.write_row(row))?;
            w.finish()
        })?;
        Ok((m.version, out))
    }

    /// Calls `f` with every row a read with `opts` returns, region by region.
    fn for_each_read_row<E: From<TableError>>(
        &self,
        m: &Manifest,
        opts: &ReadOptions,
        f: &mut dyn FnMut(read::RowRef<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        for region in &m.regions {
            let rerr = |e: read::ReadError| TableError::Read {
                table: self.dir().to_path_buf(),
                what: format!("region {}", region.id),
                source: Box::new(e),
            };
            let stores = open_region_stores(self, m, &region.id)?;
            let mut rows = read::scan(&stores, opts).map_err(rerr)?;
            while let Some(row) = rows.next_row_ref().map_err(rerr)? {
                f(row)?;
            }
        }
        Ok(())
    }
}
