//! Bulk-load output: sorted cells in, `DIR/<family>/<hfile>` out, one or more HFiles per
//! region and family, none crossing a region boundary. Spec: `formats/import.md` §"Output".
//!
//! Files are written under hidden temporary names (`.<name>.hfkit-tmp`, which `hbase
//! completebulkload` and `hfkit attach` skip) and renamed to their final 32-hex-digit names
//! only when every file of the run is complete and fsynced. A failed or dropped output removes
//! its temporary files: a failed run leaves nothing that looks like output.
//!
//! REQUIRES: cells arrive sorted by (family index, row, qualifier, timestamp desc).

use std::cmp::Ordering;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crate::format::bytes::{compare_bytes, equal_bytes};
use crate::format::cell::CellRef;
use crate::format::writer::{HFileWriter, WriterOptions};

/// HBase's `hbase.hregion.max.filesize` default: 10 GiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 10 * 1024 * 1024 * 1024;
/// Most files per region and family (HBase's bulk-load limit).
pub const MAX_FILES_PER_REGION_FAMILY: usize = 32;

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
        source: crate::format::FormatError,
    },
    #[error("{0}")]
    Invalid(String),
}

/// One family of the output.
#[derive(Clone, Debug)]
pub struct OutputFamily {
    pub name: String,
    pub options: WriterOptions,
}

/// Per region and family totals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    pub cells: u64,
    pub bytes: u64,
    pub files: u32,
}

/// A finished output file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputFile {
    pub family: String,
    pub region: usize,
    pub path: PathBuf,
    pub cells: u64,
    pub bytes: u64,
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
    tmp: PathBuf,
    writer: HFileWriter<BufWriter<File>>,
    last_row: Vec<u8>,
}

/// Writes the bulk-load directory.
pub struct BulkOutput {
    dir: PathBuf,
    families: Vec<OutputFamily>,
    /// Region start keys after the first region (the table's split keys).
    splits: Vec<Vec<u8>>,
    max_file_size: u64,
    current: Option<OpenFile>,
    /// (family, region, temporary path, final path, cells, bytes) of closed files.
    closed: Vec<(usize, usize, PathBuf, PathBuf, u64, u64)>,
    stores: Vec<Vec<StoreStats>>,
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
        for f in &families {
            let fd = dir.join(&f.name);
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
        let regions = splits.len() + 1;
        Ok(BulkOutput {
            dir: dir.to_path_buf(),
            stores: vec![vec![StoreStats::default(); families.len()]; regions],
            families,
            splits,
            max_file_size: max_file_size.max(1),
            current: None,
            closed: Vec::new(),
            finished: false,
        })
    }

    /// The region index of `row`.
    pub fn region_of(&self, row: &[u8]) -> usize {
        self.splits.partition_point(|s| s.as_slice() <= row)
    }

    /// Appends a cell of family `family` (an index into the families given at creation).
    pub fn append(&mut self, family: usize, cell: &CellRef<'_>) -> Result<(), OutputError> {
        let fam = self
            .families
            .get(family)
            .ok_or_else(|| OutputError::Invalid(format!("family index {family} out of range")))?;
        if cell.family != fam.name.as_bytes() {
            return Err(OutputError::Invalid(format!(
                "cell family does not match output family {}",
                fam.name
            )));
        }
        // Cells come sorted by row within a family: while the row is below the current
        // region's end it stays in that region (one comparison instead of a search).
        let region = match &self.current {
            Some(c)
                if c.family == family
                    && self
                        .splits
                        .get(c.region)
                        .is_none_or(|end| compare_bytes(cell.row, end) == Ordering::Less)
                    && (c.region == 0
                        || compare_bytes(&self.splits[c.region - 1], cell.row)
                            != Ordering::Greater) =>
            {
                c.region
            }
            _ => self.region_of(cell.row),
        };
        let roll = match &self.current {
            None => true,
            Some(c) => {
                c.family != family
                    || c.region != region
                    || (c.writer.bytes_written() >= self.max_file_size
                        && !equal_bytes(&c.last_row, cell.row))
            }
        };
        if roll {
            self.close_current()?;
            self.open(family, region)?;
        }
        if let Some(c) = self.current.as_mut() {
            c.writer
                .append(cell)
                .map_err(|source| OutputError::Format {
                    path: c.tmp.clone(),
                    source,
                })?;
            if !equal_bytes(&c.last_row, cell.row) {
                c.last_row.clear();
                c.last_row.extend_from_slice(cell.row);
            }
            self.stores[region][family].cells += 1;
        }
        Ok(())
    }

    fn open(&mut self, family: usize, region: usize) -> Result<(), OutputError> {
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
            BufWriter::with_capacity(1 << 20, file),
            self.families[family].options.clone(),
        )
        .map_err(|source| OutputError::Format {
            path: tmp.clone(),
            source,
        })?;
        self.closed
            .push((family, region, tmp.clone(), fd.join(name), 0, 0));
        self.current = Some(OpenFile {
            family,
            region,
            tmp,
            writer,
            last_row: Vec::new(),
        });
        Ok(())
    }

    fn close_current(&mut self) -> Result<(), OutputError> {
        let Some(c) = self.current.take() else {
            return Ok(());
        };
        let (buf, summary) = c.writer.finish().map_err(|source| OutputError::Format {
            path: c.tmp.clone(),
            source,
        })?;
        let file = buf.into_inner().map_err(|e| OutputError::Io {
            path: c.tmp.clone(),
            source: e.into_error(),
        })?;
        file.sync_all().map_err(|source| OutputError::Io {
            path: c.tmp.clone(),
            source,
        })?;
        self.stores[c.region][c.family].bytes += summary.file_size;
        if let Some(last) = self.closed.last_mut() {
            last.4 = summary.entry_count;
            last.5 = summary.file_size;
        }
        Ok(())
    }

    /// Closes (finishes and syncs) the file being written, so that [`BulkOutput::finish`] has
    /// only renames left: an import writing several tables seals them all before publishing any.
    pub fn seal(&mut self) -> Result<(), OutputError> {
        self.close_current()
    }

    /// Closes the last file and publishes every file under its final name.
    pub fn finish(mut self) -> Result<OutputReport, OutputError> {
        self.close_current()?;
        let mut files = Vec::new();
        for (family, region, tmp, dest, cells, bytes) in &self.closed {
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
            });
        }
        for f in &self.families {
            let fd = self.dir.join(&f.name);
            if let Ok(d) = File::open(&fd) {
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
        for (_, _, tmp, _, _, _) in &self.closed {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

fn unique_name() -> String {
    crate::table::directory::unique_hex()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::cell::Cell;
    use crate::format::reader::HFileReader;

    fn families() -> Vec<OutputFamily> {
        ["a", "b"]
            .iter()
            .map(|n| OutputFamily {
                name: n.to_string(),
                options: WriterOptions {
                    block_size: 1024,
                    ..WriterOptions::default()
                },
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
}
