//! Bulk-load output: sorted cells in, `DIR/<family>/<hfile>` out, one or more HFiles per
//! region and family, none crossing a region boundary. Spec: `formats/import.md` §"Output".
//!
//! Files are written under hidden temporary names (`.<name>.hfkit-tmp`, which `hbase
//! completebulkload` and `hfkit attach` skip) and renamed to their final 32-hex-digit names
//! only when every file of the run is complete and fsynced. A failed or dropped output removes
//! its temporary files: a failed run leaves nothing that looks like output.
//!
//! Cells arrive in one of two ways. [`BulkOutput::append`] takes the sorter's output: every
//! cell in order of (family index, row, qualifier, timestamp desc), one file open at a time.
//! [`BulkOutput::append_row_to_lane`] takes rows straight from the input while one store's
//! (region and family's) cells arrive in order: each such *lane* keeps its own file open. A lane whose
//! input turns out of order is taken back ([`BulkOutput::take_lane`]) and its cells go through
//! the sorter. The two never write the same store.

use std::cmp::Ordering;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use hfkit_format::bytes::{compare_bytes, equal_bytes};
use hfkit_format::cell::CellRef;
use hfkit_format::checksum::crc32c_append;
use hfkit_format::writer::{HFileWriter, WriterOptions};

use crate::import::retention::{ColumnVersions, HiddenCells, Retention};

/// HBase's `hbase.hregion.max.filesize` default: 10 GiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 10 * 1024 * 1024 * 1024;
/// Most files per region and family (HBase's bulk-load limit).
pub const MAX_FILES_PER_REGION_FAMILY: usize = 32;
/// Write buffer of a lane's file (many lanes are open at once).
const LANE_BUFFER: usize = 64 * 1024;
/// About what one open lane holds in memory (its write buffer, the open data block and its
/// compressed copy, the Bloom chunk and index entries being built, and the import's staging
/// The record layout lanes stage cells in: tags length and sequence id fields present (an
/// import's files have both).
pub(crate) const STAGED_LAYOUT: (bool, bool) = (true, true);
/// buffer of `route::STAGE_BYTES`): the import counts this against `--memory`.
pub const LANE_MEMORY: usize = 512 * 1024;

/// Errors of the output stage.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Format {
        path: PathBuf,
        #[source]
        source: hfkit_format::FormatError,
    },
    #[error("{0}")]
    Invalid(String),
}

/// One family of the output.
#[derive(Clone, Debug)]
pub struct OutputFamily {
    pub name: String,
    pub options: WriterOptions,
    /// The family's VERSIONS and TTL, to count the cells reads will not return
    /// ([`StoreStats::hidden`]); [`Retention::KEEP_ALL`] counts none.
    pub retention: Retention,
}

/// Per region and family totals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    pub cells: u64,
    pub bytes: u64,
    pub files: u32,
    /// Cells written that HBase will not return: past the TTL, or beyond VERSIONS.
    pub hidden: HiddenCells,
}

/// A finished output file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputFile {
    pub family: String,
    pub region: usize,
    pub path: PathBuf,
    pub cells: u64,
    pub bytes: u64,
    /// CRC32C of every byte of the file as it was written (Castagnoli, as HBase's block
    /// checksums): an attach in this process checks the bytes on disk against it instead of
    /// decoding the file again (`formats/table.md` §"Attach of files this process wrote").
    pub crc32c: u32,
}

/// What the output holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputReport {
    pub files: Vec<OutputFile>,
    /// `[region][family]` totals.
    pub stores: Vec<Vec<StoreStats>>,
}

struct OpenFile {
    family: usize,
    region: usize,
    /// Its entry in `BulkOutput::files`.
    entry: usize,
    tmp: PathBuf,
    writer: HFileWriter<BufWriter<WritebackFile>>,
    last_row: Vec<u8>,
    /// The column being written (files roll between rows, so a column is in one file).
    column: ColumnVersions,
}

impl OpenFile {
    fn append(&mut self, cell: &CellRef<'_>) -> Result<(), OutputError> {
        self.writer
            .append(cell)
            .map_err(|source| OutputError::Format {
                path: self.tmp.clone(),
                source,
            })
    }

    /// [`append`](Self::append) of one row's cells (the writer's row path).
    fn append_row(&mut self, cells: &[CellRef<'_>]) -> Result<(), OutputError> {
        self.writer
            .append_row(cells)
            .map_err(|source| OutputError::Format {
                path: self.tmp.clone(),
                source,
            })
    }

    /// After a row's `cells` were written: counts those reads will not return into `stats`
    /// and remembers the row as the last written (files roll only between rows).
    fn written_row(
        &mut self,
        cells: &[CellRef<'_>],
        retention: &Retention,
        stats: &mut StoreStats,
    ) {
        let Some(first) = cells.first() else {
            return;
        };
        let new_row = !equal_bytes(&self.last_row, first.row);
        self.column
            .offer(retention, new_row, cells, &mut stats.hidden);
        if new_row {
            self.last_row.clear();
            self.last_row.extend_from_slice(first.row);
        }
    }
}

/// Bytes written to a file between two requests to start writing them back.
const WRITEBACK_BYTES: u64 = 8 << 20;

/// An output file that asks the kernel to start writing its pages to disk every
/// [`WRITEBACK_BYTES`] (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`, which does not wait; as
/// RocksDB's `bytes_per_sync`). Without it a run's whole output sits dirty in the page cache
/// until the fsync of each file at the end, which then waits for all of it; with it the disk
/// writes while the import computes. Elsewhere than Linux it is a plain file.
///
/// It also keeps the CRC32C of every byte written ([`OutputFile::crc32c`]).
pub(crate) struct WritebackFile {
    file: File,
    written: u64,
    requested: u64,
    crc32c: u32,
}

impl WritebackFile {
    fn new(file: File) -> WritebackFile {
        WritebackFile {
            file,
            written: 0,
            requested: 0,
            crc32c: 0,
        }
    }

    #[cfg(target_os = "linux")]
    fn start_writeback(&mut self) {
        use std::os::fd::AsRawFd;
        let (from, len) = (self.requested, self.written - self.requested);
        // SAFETY: a valid open descriptor and plain integers; the call only schedules
        // writeback of the range and reports errors through its return value, which is
        // ignored (durability comes from the fsync when the file is closed).
        unsafe {
            libc::sync_file_range(
                self.file.as_raw_fd(),
                from as libc::off64_t,
                len as libc::off64_t,
                libc::SYNC_FILE_RANGE_WRITE,
            );
        }
        self.requested = self.written;
    }

    #[cfg(not(target_os = "linux"))]
    fn start_writeback(&mut self) {
        self.requested = self.written;
    }
}

impl std::io::Write for WritebackFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.crc32c = crc32c_append(self.crc32c, &buf[..n]);
        self.written += n as u64;
        if self.written - self.requested >= WRITEBACK_BYTES {
            self.start_writeback();
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// A file of the output: where it is written, where it is published, what it holds.
struct FileEntry {
    family: usize,
    region: usize,
    tmp: PathBuf,
    dest: PathBuf,
    cells: u64,
    bytes: u64,
    crc32c: u32,
    /// Taken back with its lane: removed at the end, never published.
    taken: bool,
}

/// Writes the bulk-load directory.
pub struct BulkOutput {
    dir: PathBuf,
    families: Vec<OutputFamily>,
    /// Region start keys after the first region (the table's split keys).
    splits: Vec<Vec<u8>>,
    max_file_size: u64,
    current: Option<OpenFile>,
    /// The open file of each lane, at `family * regions + region`.
    lanes: Vec<Option<OpenFile>>,
    /// Every file opened (entries are never removed: open files refer to them by index).
    files: Vec<FileEntry>,
    stores: Vec<Vec<StoreStats>>,
    /// The family directories this output created: removed again if they get no file.
    created_dirs: Vec<PathBuf>,
    finished: bool,
}

impl BulkOutput {
    /// An output in `dir` (created if missing; it must not already hold output for these
    /// families).
    pub fn new(
        dir: &Path,
        families: Vec<OutputFamily>,
        splits: Vec<Vec<u8>>,
        max_file_size: u64,
    ) -> Result<BulkOutput, OutputError> {
        if splits.windows(2).any(|w| w[0] >= w[1]) || splits.iter().any(|s| s.is_empty()) {
            return Err(OutputError::Invalid(
                "split keys must be non-empty, sorted and unique".into(),
            ));
        }
        let mut created_dirs = Vec::new();
        for f in &families {
            let fd = dir.join(&f.name);
            if !fd.exists() {
                created_dirs.push(fd.clone());
            }
            std::fs::create_dir_all(&fd).map_err(|source| OutputError::Io {
                path: fd.clone(),
                source,
            })?;
            let existing = std::fs::read_dir(&fd)
                .map_err(|source| OutputError::Io {
                    path: fd.clone(),
                    source,
                })?
                .filter_map(|e| e.ok())
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .count();
            if existing > 0 {
                return Err(OutputError::Invalid(format!(
                    "{} already holds {existing} file(s); choose an empty output directory",
                    fd.display()
                )));
            }
        }
        let mut output =
            BulkOutput::empty(dir.to_path_buf(), families, splits, max_file_size.max(1));
        output.created_dirs = created_dirs;
        Ok(output)
    }

    /// An output with no file yet (the directory checks done by the caller).
    fn empty(
        dir: PathBuf,
        families: Vec<OutputFamily>,
        splits: Vec<Vec<u8>>,
        max_file_size: u64,
    ) -> BulkOutput {
        let regions = splits.len() + 1;
        BulkOutput {
            dir,
            stores: vec![vec![StoreStats::default(); families.len()]; regions],
            lanes: (0..families.len() * regions).map(|_| None).collect(),
            families,
            splits,
            max_file_size,
            current: None,
            files: Vec::new(),
            created_dirs: Vec::new(),
            finished: false,
        }
    }

    /// An empty output with the same directory, families, regions and file size: lanes of
    /// one import can be written by several threads, each with its own, and gathered with
    /// [`BulkOutput::absorb`].
    pub fn sibling(&self) -> BulkOutput {
        BulkOutput::empty(
            self.dir.clone(),
            self.families.clone(),
            self.splits.clone(),
            self.max_file_size,
        )
    }

    /// Takes over a sibling's files, open lanes and totals (their stores must be distinct from
    /// this output's).
    pub fn absorb(&mut self, mut other: BulkOutput) -> Result<(), OutputError> {
        if other.dir != self.dir || other.lanes.len() != self.lanes.len() {
            return Err(OutputError::Invalid(
                "internal: absorbing an output of another table".into(),
            ));
        }
        other.close_current()?;
        let base = self.files.len();
        self.files.append(&mut other.files);
        for (mine, theirs) in self.lanes.iter_mut().zip(other.lanes.iter_mut()) {
            if let Some(mut c) = theirs.take() {
                if mine.is_some() {
                    return Err(OutputError::Invalid(
                        "internal: a lane written by two outputs".into(),
                    ));
                }
                c.entry += base;
                *mine = Some(c);
            }
        }
        for (mine, theirs) in self.stores.iter_mut().zip(&other.stores) {
            for (m, t) in mine.iter_mut().zip(theirs) {
                m.cells += t.cells;
                m.bytes += t.bytes;
                m.files += t.files;
                m.hidden.add(t.hidden);
            }
        }
        other.finished = true; // its files are ours now
        Ok(())
    }

    /// The region index of `row`.
    pub fn region_of(&self, row: &[u8]) -> usize {
        hfkit_table::region_of_row(&self.splits, row)
    }

    /// Regions of the table.
    pub fn regions(&self) -> usize {
        self.splits.len() + 1
    }

    /// The name of family `family` (an index into the families given at creation).
    pub fn family_name(&self, family: usize) -> Option<&str> {
        self.families.get(family).map(|f| f.name.as_str())
    }

    /// Appends the cells of one row (all with that row, in order) of family `family` to the
    /// lane of `region` (which must be `region_of(row)`). A lane's rows must come in order; the
    /// file rolls at the size limit on a row boundary, as [`BulkOutput::append`]'s do.
    pub fn append_row_to_lane(
        &mut self,
        family: usize,
        region: usize,
        cells: &[CellRef<'_>],
    ) -> Result<(), OutputError> {
        let Some(first) = cells.first() else {
            return Ok(());
        };
        let lane = family * self.regions() + region;
        if family >= self.families.len() || region >= self.regions() {
            return Err(OutputError::Invalid(format!(
                "lane of family {family} region {region} out of range"
            )));
        }
        let roll = match &self.lanes[lane] {
            None => true,
            Some(c) => {
                c.writer.bytes_written() >= self.max_file_size
                    && !equal_bytes(&c.last_row, first.row)
            }
        };
        if roll {
            if let Some(c) = self.lanes[lane].take() {
                self.close_file(c)?;
            }
            self.lanes[lane] = Some(self.open(family, region, LANE_BUFFER)?);
        }
        if let Some(c) = self.lanes[lane].as_mut() {
            debug_assert!(cells.iter().all(|c| c.row == first.row), "one row per call");
            c.append_row(cells)?;
            let stats = &mut self.stores[region][family];
            c.written_row(cells, &self.families[family].retention, stats);
            stats.cells += cells.len() as u64;
        }
        Ok(())
    }

    /// Appends `records`, whole rows of family `family` in the lane of `region` staged as the
    /// records of its files (`HFileWriter::append_records`; the tags length and sequence id
    /// fields present), all at once, when that writes what [`append_row_to_lane`] of each row
    /// would: the family's files have that record layout, no cell can be hidden (no TTL and,
    /// unless the family keeps every version, no column more than once: `repeated`), and no
    /// file can reach the size limit inside them (files roll between rows). Returns false,
    /// having written nothing, otherwise; the caller then appends row by row. `last_row`:
    /// the row of the last record.
    ///
    /// [`append_row_to_lane`]: BulkOutput::append_row_to_lane
    pub fn append_records_to_lane(
        &mut self,
        family: usize,
        region: usize,
        records: &[u8],
        last_row: &[u8],
        repeated: bool,
    ) -> Result<bool, OutputError> {
        let lane = family * self.regions() + region;
        let Some(fam) = self.families.get(family) else {
            return Ok(false);
        };
        let o = &fam.options;
        let r = &fam.retention;
        if region >= self.regions()
            || (o.include_tags, o.include_mvcc) != STAGED_LAYOUT
            || r.oldest_unexpired_ts != i64::MIN
            || (repeated && r.versions != u32::MAX)
        {
            return Ok(false);
        }
        // What the block in progress, the records (Snappy's worst case is under 1.2x), their
        // blocks' headers and checksums and the inline blocks could add to the file, with
        // room to spare: a file that could reach the limit inside them goes row by row.
        let bound = |written: u64| {
            written
                .saturating_add(4 * records.len() as u64)
                .saturating_add(4 * o.block_size as u64)
                .saturating_add(16 << 20)
        };
        let written = self.lanes[lane]
            .as_ref()
            .map_or(0, |c| c.writer.bytes_written());
        if bound(written) >= self.max_file_size {
            return Ok(false);
        }
        if self.lanes[lane].is_none() {
            self.lanes[lane] = Some(self.open(family, region, LANE_BUFFER)?);
        }
        if let Some(c) = self.lanes[lane].as_mut() {
            let before = c.writer.entry_count();
            c.writer
                .append_records(records)
                .map_err(|source| OutputError::Format {
                    path: c.tmp.clone(),
                    source,
                })?;
            // Nothing was hidden; the next rows are new rows of this file.
            c.column = ColumnVersions::default();
            c.last_row.clear();
            c.last_row.extend_from_slice(last_row);
            self.stores[region][family].cells += c.writer.entry_count() - before;
        }
        Ok(true)
    }

    /// Takes back everything written to the lane of (`family`, `region`): closes its open file
    /// and returns the temporary paths of its files, in order (their cells, concatenated, are
    /// the lane's cells in order). They are no longer part of the output: the caller reads them
    /// before [`BulkOutput::finish`], which removes them.
    pub fn take_lane(&mut self, family: usize, region: usize) -> Result<Vec<PathBuf>, OutputError> {
        let lane = family * self.regions() + region;
        if let Some(c) = self.lanes.get_mut(lane).and_then(Option::take) {
            self.close_file(c)?;
        }
        let mut taken = Vec::new();
        for e in &mut self.files {
            if e.family == family && e.region == region && !e.taken {
                e.taken = true;
                taken.push(e.tmp.clone());
            }
        }
        self.stores[region][family] = StoreStats::default();
        Ok(taken)
    }

    /// Appends a cell of family `family` (an index into the families given at creation).
    pub fn append(&mut self, family: usize, cell: &CellRef<'_>) -> Result<(), OutputError> {
        self.append_row(family, std::slice::from_ref(cell))
    }

    /// [`append`](Self::append) of consecutive cells of one row and family (at least one),
    /// through the writer's row path: the row's region, the file roll and the checks of the
    /// family are done once for the row.
    pub fn append_row(&mut self, family: usize, cells: &[CellRef<'_>]) -> Result<(), OutputError> {
        let Some(first) = cells.first() else {
            return Ok(());
        };
        debug_assert!(
            cells
                .iter()
                .all(|c| c.row == first.row && c.family == first.family),
            "one row and family per call"
        );
        let fam = self
            .families
            .get(family)
            .ok_or_else(|| OutputError::Invalid(format!("family index {family} out of range")))?;
        if first.family != fam.name.as_bytes() {
            return Err(OutputError::Invalid(format!(
                "cell family does not match output family {}",
                fam.name
            )));
        }
        let row = first.row;
        // Cells come sorted by row within a family: while the row is below the current
        // region's end it stays in that region (one comparison instead of a search).
        let region = match &self.current {
            Some(c)
                if c.family == family
                    && self
                        .splits
                        .get(c.region)
                        .is_none_or(|end| compare_bytes(row, end) == Ordering::Less)
                    && (c.region == 0
                        || compare_bytes(&self.splits[c.region - 1], row) != Ordering::Greater) =>
            {
                c.region
            }
            _ => self.region_of(row),
        };
        let roll = match &self.current {
            None => true,
            Some(c) => {
                c.family != family
                    || c.region != region
                    || (c.writer.bytes_written() >= self.max_file_size
                        && !equal_bytes(&c.last_row, row))
            }
        };
        if roll {
            self.close_current()?;
            self.current = Some(self.open(family, region, 1 << 20)?);
        }
        if let Some(c) = self.current.as_mut() {
            if let [cell] = cells {
                c.append(cell)?;
            } else {
                c.append_row(cells)?;
            }
            let stats = &mut self.stores[region][family];
            c.written_row(cells, &self.families[family].retention, stats);
            stats.cells += cells.len() as u64;
        }
        Ok(())
    }

    /// A new file of (`family`, `region`) under a temporary name, writing through a buffer of
    /// `buffer` bytes.
    fn open(
        &mut self,
        family: usize,
        region: usize,
        buffer: usize,
    ) -> Result<OpenFile, OutputError> {
        let stats = &mut self.stores[region][family];
        if stats.files as usize >= MAX_FILES_PER_REGION_FAMILY {
            return Err(OutputError::Invalid(format!(
                "region {region} family {} would need more than {MAX_FILES_PER_REGION_FAMILY} files; raise --max-file-size",
                self.families[family].name
            )));
        }
        stats.files += 1;
        let name = unique_name();
        let fd = self.dir.join(&self.families[family].name);
        let tmp = fd.join(format!(".{name}.hfkit-tmp"));
        let file = File::create(&tmp).map_err(|source| OutputError::Io {
            path: tmp.clone(),
            source,
        })?;
        let writer = HFileWriter::new(
            BufWriter::with_capacity(buffer, WritebackFile::new(file)),
            self.families[family].options.clone(),
        )
        .map_err(|source| OutputError::Format {
            path: tmp.clone(),
            source,
        })?;
        self.files.push(FileEntry {
            family,
            region,
            tmp: tmp.clone(),
            dest: fd.join(name),
            cells: 0,
            bytes: 0,
            crc32c: 0,
            taken: false,
        });
        Ok(OpenFile {
            family,
            region,
            entry: self.files.len() - 1,
            tmp,
            writer,
            last_row: Vec::new(),
            column: ColumnVersions::default(),
        })
    }

    fn close_current(&mut self) -> Result<(), OutputError> {
        match self.current.take() {
            Some(c) => self.close_file(c),
            None => Ok(()),
        }
    }

    /// Finishes and syncs a file and records its totals.
    fn close_file(&mut self, c: OpenFile) -> Result<(), OutputError> {
        let (buf, summary) = c.writer.finish().map_err(|source| OutputError::Format {
            path: c.tmp.clone(),
            source,
        })?;
        let file = buf.into_inner().map_err(|e| OutputError::Io {
            path: c.tmp.clone(),
            source: e.into_error(),
        })?;
        file.file.sync_all().map_err(|source| OutputError::Io {
            path: c.tmp.clone(),
            source,
        })?;
        self.stores[c.region][c.family].bytes += summary.file_size;
        if let Some(e) = self.files.get_mut(c.entry) {
            e.cells = summary.entry_count;
            e.bytes = summary.file_size;
            e.crc32c = file.crc32c;
        }
        Ok(())
    }

    /// Closes (finishes and syncs) the files being written, so that [`BulkOutput::finish`] has
    /// only renames left: an import writing several tables seals them all before publishing any.
    pub fn seal(&mut self) -> Result<(), OutputError> {
        self.close_current()?;
        for lane in 0..self.lanes.len() {
            if let Some(c) = self.lanes[lane].take() {
                self.close_file(c)?;
            }
        }
        Ok(())
    }

    /// Closes the last file and publishes every file under its final name.
    pub fn finish(mut self) -> Result<OutputReport, OutputError> {
        self.seal()?;
        for e in self.files.iter().filter(|e| e.taken) {
            let _ = std::fs::remove_file(&e.tmp);
        }
        self.files.retain(|e| !e.taken);
        // Lanes open files in input order: list them by store.
        self.files.sort_by_key(|e| (e.family, e.region));
        let mut files = Vec::new();
        for FileEntry {
            family,
            region,
            tmp,
            dest,
            cells,
            bytes,
            crc32c,
            ..
        } in &self.files
        {
            std::fs::rename(tmp, dest).map_err(|source| OutputError::Io {
                path: dest.clone(),
                source,
            })?;
            files.push(OutputFile {
                family: self.families[*family].name.clone(),
                region: *region,
                path: dest.clone(),
                cells: *cells,
                bytes: *bytes,
                crc32c: *crc32c,
            });
        }
        for f in &self.families {
            let fd = self.dir.join(&f.name);
            // No empty family directory: HBase's bulk-load output has none (its writers
            // create a family's directory with its first file).
            if !files.iter().any(|o| o.family == f.name) && self.created_dirs.contains(&fd) {
                let _ = std::fs::remove_dir(&fd);
            } else if let Ok(d) = File::open(&fd) {
                let _ = d.sync_all();
            }
        }
        self.finished = true;
        Ok(OutputReport {
            files,
            stores: std::mem::take(&mut self.stores),
        })
    }
}

impl Drop for BulkOutput {
    /// An output dropped without `finish` (an error, a panic) removes its temporary files.
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        self.current = None;
        self.lanes.clear();
        for e in &self.files {
            let _ = std::fs::remove_file(&e.tmp);
        }
    }
}

fn unique_name() -> String {
    hfkit_table::directory::unique_hex()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hfkit_format::cell::Cell;
    use hfkit_format::reader::HFileReader;

    fn families() -> Vec<OutputFamily> {
        ["a", "b"]
            .iter()
            .map(|n| OutputFamily {
                name: n.to_string(),
                options: WriterOptions {
                    block_size: 1024,
                    ..WriterOptions::default()
                },
                retention: Retention::KEEP_ALL,
            })
            .collect()
    }

    #[test]
    fn partitions_by_region_and_rolls_at_row_boundaries() {
        let dir = tempfile::tempdir().unwrap();
        let mut out = BulkOutput::new(dir.path(), families(), vec![b"m".to_vec()], 20_000).unwrap();
        for (fi, fam) in ["a", "b"].iter().enumerate() {
            for r in 0..2000u32 {
                let row = format!("{}{r:05}", if r < 1000 { 'c' } else { 'x' });
                for q in ["q1", "q2"] {
                    out.append(
                        fi,
                        &Cell::put(row.as_bytes(), fam.as_bytes(), q.as_bytes(), 1, b"value!")
                            .as_ref(),
                    )
                    .unwrap();
                }
            }
        }
        let report = out.finish().unwrap();
        assert!(report.files.len() > 4, "rolled: {}", report.files.len());
        let mut total = 0;
        for f in &report.files {
            let r = HFileReader::open(&f.path).unwrap();
            let mut s = r.scanner().unwrap();
            let mut rows = std::collections::BTreeSet::new();
            while let Some(c) = s.next().unwrap() {
                assert_eq!(c.family, f.family.as_bytes());
                let region = if c.row < b"m".as_slice() { 0 } else { 1 };
                assert_eq!(region, f.region, "no file crosses a region boundary");
                rows.insert(c.row.to_vec());
                total += 1;
            }
            assert_eq!(r.entry_count(), f.cells);
        }
        assert_eq!(total, 2 * 2000 * 2);
        // Rows never straddle files.
        let hidden = std::fs::read_dir(dir.path().join("a"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with('.')
            })
            .count();
        assert_eq!(hidden, 0);
    }

    #[test]
    fn dropped_output_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut out = BulkOutput::new(dir.path(), families(), vec![], 1 << 30).unwrap();
            out.append(0, &Cell::put(b"r", b"a", b"q", 1, b"v").as_ref())
                .unwrap();
            // dropped: simulates a failed run
        }
        for fam in ["a", "b"] {
            assert_eq!(std::fs::read_dir(dir.path().join(fam)).unwrap().count(), 0);
        }
        let mut out = BulkOutput::new(dir.path(), families(), vec![], 1 << 30).unwrap();
        assert!(
            out.append(0, &Cell::put(b"r", b"b", b"q", 1, b"v").as_ref())
                .is_err(),
            "family mismatch"
        );
    }

    #[test]
    fn a_family_without_files_gets_no_directory() {
        let dir = tempfile::tempdir().unwrap();
        // "b" existed before (the user's): it stays; "a" and "c" are the output's own.
        std::fs::create_dir(dir.path().join("b")).unwrap();
        let mut fams = families();
        fams.push(OutputFamily {
            name: "c".into(),
            options: fams[0].options.clone(),
            retention: Retention::KEEP_ALL,
        });
        let mut out = BulkOutput::new(dir.path(), fams.clone(), vec![], 1 << 30).unwrap();
        out.append(0, &Cell::put(b"r", b"a", b"q", 1, b"v").as_ref())
            .unwrap();
        let report = out.finish().unwrap();
        assert_eq!(report.files.len(), 1);
        assert!(dir.path().join("a").is_dir());
        assert!(dir.path().join("b").is_dir());
        assert!(!dir.path().join("c").exists());
        // Nothing at all: no family directory of its own.
        let empty = tempfile::tempdir().unwrap();
        let out = BulkOutput::new(empty.path(), fams, vec![], 1 << 30).unwrap();
        assert!(out.finish().unwrap().files.is_empty());
        assert_eq!(std::fs::read_dir(empty.path()).unwrap().count(), 0);
    }
}
