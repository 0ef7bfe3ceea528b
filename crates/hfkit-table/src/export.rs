//! Export: a table (live, or as of a snapshot) as a self-contained table directory, as a
//! bulk-load directory for `hbase completebulkload`, or as the rows a read returns handed to
//! [`PartEncoder`]s (the CSV and Parquet writers live in `hfkit-pipeline`, which owns the file
//! formats). Spec: `formats/table.md` §"Export".
//!
//! ```text
//! --to DIR        DIR/ a table: files hard-linked (or copied), verified, manifest rewritten
//! --bulkload DIR  DIR/<family>/<hfile>: one file per region × family (several files of a
//!                 store are merged, the newest of equal keys kept, as HBase would load them
//!                 with one sequence id)
//! parts           Table::export_parts: the rows of a read (merge + matcher, the versions the
//!                 read asks for, TTL at its clock), regions encoded on several threads (each
//!                 region whole to one PartEncoder), the parts joined in region order by one
//!                 PartSink into one file: the same file for any number of threads
//! ```
//!
//! Every export holds the writers' lock, so no compaction or restore removes files under it,
//! and is written under a temporary name and renamed into place when complete.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Mutex;

use serde::Serialize;

use super::compact::open_region_stores;
use super::directory::{unique_hex, verify_copy, verify_store_file, Table};
use super::manifest::{Manifest, RegionEntry};
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

/// One worker of a parallel export ([`Table::export_parts`]): encodes the rows of the regions
/// it is handed, each region whole, into parts of the output that one [`PartSink`] joins in
/// region order.
pub trait PartEncoder: Send {
    /// A piece of the output: CSV lines, a Parquet row group's encoded column chunks.
    type Part: Send;
    type Error: From<TableError> + Send;
    /// One row (key and cells borrowed from the scan, valid for this call); a part when one is
    /// complete.
    fn write_row(&mut self, row: read::RowRef<'_>) -> Result<Option<Self::Part>, Self::Error>;
    /// The end of a region: its last rows as a part, if any (a part never holds rows of two
    /// regions, so the parts do not depend on which worker had which region).
    fn end_region(&mut self) -> Result<Option<Self::Part>, Self::Error>;
}

/// The file of a parallel export: the parts of every region, in region order.
pub trait PartSink {
    type Part;
    /// What the sink reports when done.
    type Output;
    type Error;
    fn write_part(&mut self, part: Self::Part) -> Result<(), Self::Error>;
    /// Writes everything still buffered into the file.
    fn finish(self) -> Result<Self::Output, Self::Error>;
}

/// What a worker of [`Table::export_parts`] sends for its region.
enum PartMsg<T, E> {
    Part(T),
    /// The region's rows are all in the parts sent.
    Done,
    Failed(E),
}

/// The part of an export one call writes, for an export cut into tasks (`hfkit.spark.export`,
/// `formats/python.md` §"Export on Spark"): some regions, read at the version the whole export
/// reads, under a lock another process holds. The default is the whole export, as one call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportScope {
    /// Only these regions (positions in the manifest's region order).
    pub regions: Option<std::ops::Range<usize>>,
    /// The manifest version to read: a table at another one is an error (it changed since the
    /// export began).
    pub version: Option<u64>,
    /// The writers' lock is held for the whole export by another process (the driver of a
    /// cluster job): this call reads without taking it.
    pub lock_held_elsewhere: bool,
}

impl ExportScope {
    /// `m` narrowed to the scope's regions, after its version is checked.
    fn narrow(&self, mut m: Manifest) -> Result<Manifest, TableError> {
        if let Some(v) = self.version.filter(|v| *v != m.version) {
            return Err(TableError::Invalid(format!(
                "the table changed since the export began (manifest version {}, exporting {v})",
                m.version
            )));
        }
        if let Some(r) = &self.regions {
            if r.end > m.regions.len() || r.start > r.end {
                return Err(TableError::Invalid(format!(
                    "regions {}..{}: the table has {}",
                    r.start,
                    r.end,
                    m.regions.len()
                )));
            }
            m.regions = m.regions[r.clone()].to_vec();
        }
        Ok(m)
    }
}

impl Table {
    /// The manifest version an export of the table (or of `snapshot`) reads, and its regions'
    /// count: what a cluster export plans its tasks from.
    pub fn export_outline(&self, snapshot: Option<&str>) -> Result<(u64, usize), TableError> {
        let m = self.export_manifest(snapshot)?;
        Ok((m.version, m.regions.len()))
    }

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
        crate::progress::phase(
            "writing",
            crate::progress::Unit::Files,
            m.files.len() as u64,
        );
        for fam in &m.families {
            let fam_dir = out.join(&fam.name);
            fs.create_dir_all(&fam_dir).map_err(io_err(&fam_dir))?;
            for region in &m.regions {
                crate::check_interrupt()?;
                let mut store: Vec<_> = m
                    .files
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e.region == region.id && e.family == fam.name)
                    .collect();
                let store_files = store.len() as u64;
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
                crate::progress::done(store_files);
            }
            fs.sync_dir(&fam_dir).map_err(io_err(&fam_dir))?;
        }
        fs.sync_dir(out).map_err(io_err(out))?;
        Ok((files, cells, bytes))
    }

    /// Every row a read with `opts` returns (its versions, time range and TTL clock; start,
    /// stop and limit are not used) of the regions in `scope` (default: all), encoded by
    /// `threads` encoders (at most one per region) on threads of their own, each region whole
    /// to one of them, and the parts written in region order by the sink `open` makes of the
    /// file for `dest` (written under a temporary name, renamed into place when the sink has
    /// finished). The encoders are
    /// made by `encoder` from the sink (the settings they share with it). Returns the manifest
    /// version exported, what the sink's `finish` returned, and the encoders (their counts).
    ///
    /// At most `parts_ahead` parts of each region being encoded wait for the sink, so memory is
    /// bounded by the threads, `parts_ahead` and the parts' size; a worker a whole region ahead
    /// waits when its region's parts exceed that (a table of few large regions gains less). On
    /// an error, the workers stop at their next part and nothing is left of the file.
    #[allow(clippy::too_many_arguments)]
    pub fn export_parts<S, P>(
        &self,
        snapshot: Option<&str>,
        dest: &Path,
        opts: &ReadOptions,
        scope: &ExportScope,
        threads: usize,
        parts_ahead: usize,
        open: impl FnOnce(File) -> Result<S, P::Error>,
        encoder: impl Fn(&S) -> Result<P, P::Error>,
    ) -> Result<(u64, S::Output, Vec<P>), P::Error>
    where
        P: PartEncoder,
        S: PartSink<Part = P::Part, Error = P::Error>,
    {
        let _lock = if scope.lock_held_elsewhere {
            None
        } else {
            Some(self.lock()?)
        };
        let m = scope.narrow(self.export_manifest(snapshot)?)?;
        crate::progress::phase(
            "reading",
            crate::progress::Unit::Cells,
            m.files.iter().map(|f| f.entries).sum(),
        );
        let (output, encoders) = write_atomically(dest, |file| -> Result<_, P::Error> {
            let mut sink = open(file)?;
            // No more workers than regions (a region is never split between two).
            let workers = threads.min(m.regions.len()).max(1);
            let encoders = (0..workers)
                .map(|_| encoder(&sink))
                .collect::<Result<Vec<P>, P::Error>>()?;
            let encoders = self.encode_regions(&m, opts, encoders, parts_ahead, &mut |part| {
                sink.write_part(part)
            })?;
            Ok((sink.finish()?, encoders))
        })?;
        Ok((m.version, output, encoders))
    }

    /// Runs each encoder on a thread of its own over the regions of `m` (a region to the next
    /// worker free, in region order) and hands their parts to `put` in region order. Each
    /// region's parts go through a channel of `parts_ahead` parts, where a worker ahead of
    /// `put` waits when it is full. Returns the encoders.
    fn encode_regions<P: PartEncoder>(
        &self,
        m: &Manifest,
        opts: &ReadOptions,
        encoders: Vec<P>,
        parts_ahead: usize,
        put: &mut dyn FnMut(P::Part) -> Result<(), P::Error>,
    ) -> Result<Vec<P>, P::Error> {
        let (senders, receivers): (Vec<_>, Vec<_>) = m
            .regions
            .iter()
            .map(|_| {
                let (tx, rx) = sync_channel::<PartMsg<P::Part, P::Error>>(parts_ahead.max(1));
                (Mutex::new(Some(tx)), rx)
            })
            .unzip();
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let workers: Vec<_> = encoders
                .into_iter()
                .map(|mut enc| {
                    let (senders, next, stop) = (&senders, &next, &stop);
                    scope.spawn(move || loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(slot) = senders.get(k) else {
                            return enc;
                        };
                        // Taken once: the region is this worker's. After a failure it is only
                        // closed (its receiver is never read).
                        let Some(tx) = slot.lock().ok().and_then(|mut s| s.take()) else {
                            continue;
                        };
                        if stop.load(Ordering::Relaxed) {
                            continue;
                        }
                        let msg = match self.encode_region(m, &m.regions[k], opts, &mut enc, &tx) {
                            Ok(true) => PartMsg::Done,
                            // The receiver is gone: the export stopped.
                            Ok(false) => continue,
                            Err(e) => {
                                stop.store(true, Ordering::Relaxed);
                                PartMsg::Failed(e)
                            }
                        };
                        let _ = tx.send(msg);
                    })
                })
                .collect();
            let mut result = Ok(());
            'regions: for (region, rx) in m.regions.iter().zip(receivers) {
                loop {
                    let failure = match rx.recv() {
                        Ok(PartMsg::Part(part)) => match put(part) {
                            Ok(()) => continue,
                            Err(e) => e,
                        },
                        Ok(PartMsg::Done) => continue 'regions,
                        Ok(PartMsg::Failed(e)) => e,
                        // The worker ended without a word (it panicked; see the join below).
                        Err(_) => TableError::Invalid(format!(
                            "internal: the export of region {} ended early",
                            region.id
                        ))
                        .into(),
                    };
                    result = Err(failure);
                    break 'regions;
                }
            }
            // On an error the receivers left were dropped with the loop: a worker waiting to
            // send is told so and stops.
            stop.store(true, Ordering::Relaxed);
            let mut encoders = Vec::new();
            for w in workers {
                match w.join() {
                    Ok(enc) => encoders.push(enc),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            result.map(|()| encoders)
        })
    }

    /// One region's rows through `enc`, its parts sent on `tx`. False when the receiver is gone
    /// (the export stopped).
    fn encode_region<P: PartEncoder>(
        &self,
        m: &Manifest,
        region: &RegionEntry,
        opts: &ReadOptions,
        enc: &mut P,
        tx: &SyncSender<PartMsg<P::Part, P::Error>>,
    ) -> Result<bool, P::Error> {
        let whole = self.read_region_rows(m, region, opts, &mut |row| -> Result<_, P::Error> {
            Ok(match enc.write_row(row)? {
                Some(part) => tx.send(PartMsg::Part(part)).is_ok(),
                None => true,
            })
        })?;
        if !whole {
            return Ok(false);
        }
        if let Some(part) = enc.end_region()? {
            if tx.send(PartMsg::Part(part)).is_err() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Calls `f` with every row of `region` a read with `opts` returns, until `f` returns false
    /// (then false: the region was not read to its end).
    fn read_region_rows<E: From<TableError>>(
        &self,
        m: &Manifest,
        region: &RegionEntry,
        opts: &ReadOptions,
        f: &mut dyn FnMut(read::RowRef<'_>) -> Result<bool, E>,
    ) -> Result<bool, E> {
        let rerr = |e: read::ReadError| TableError::Read {
            table: self.dir().to_path_buf(),
            what: format!("region {}", region.id),
            source: Box::new(e),
        };
        let stores = open_region_stores(self, m, &region.id)?;
        let mut rows = read::scan(&stores, opts).map_err(rerr)?;
        // Progress: the cells the rows return as they come, the rest of the region's stored
        // cells (masked, deleted, expired) when it ends.
        let stored: u64 = m
            .files
            .iter()
            .filter(|e| e.region == region.id)
            .map(|e| e.entries)
            .sum();
        let (mut reported, mut pending) = (0u64, 0u64);
        while let Some(row) = rows.next_row_ref().map_err(rerr)? {
            crate::check_interrupt()?;
            pending += row.len() as u64;
            if pending >= crate::progress::CELLS_PER_REPORT {
                let n = pending.min(stored.saturating_sub(reported));
                crate::progress::done(n);
                reported += n;
                pending = 0;
            }
            if !f(row)? {
                return Ok(false);
            }
        }
        crate::progress::done(stored.saturating_sub(reported));
        Ok(true)
    }
}
