//! Table-level reads: Get and Scan over every region and family of a table directory.
//! Spec: `formats/read.md` §"Table-level reads".
//!
//! [`TableReader::open`] reads the manifest **once** and opens every live store file once
//! (memory-mapped, shared as `Arc<HFileReader>`). Every read through the reader therefore sees
//! that one manifest version, whatever attaches or compactions publish meanwhile; open a new
//! reader to see newer versions. Per region, the read path of [`hfkit_read`] does the work:
//!
//! * [`TableReader::get`] reads the one region holding the row;
//! * [`TableReader::scan`] visits the regions overlapping `[start_row, stop_row)` ∩ `prefix`
//!   in key order (descending for reverse scans), each clipped to the region's bounds, and
//!   carries the row `limit` across regions.
//!
//! If a file named by the manifest is gone when the reader opens it (a writer published a newer
//! version and collected the old files in between), the reader re-reads the manifest and tries
//! again, up to [`OPEN_ATTEMPTS`] times.
//!
//! A read mirror of a table on object storage ([`crate::remote_read`]) opens a region's files
//! when the region is first read instead (each open is a request): a get opens only the files
//! of the region holding its row, a short scan those of the regions it reaches.
//!
//! This module is the one place where the table layer uses the `read` layer (which itself knows
//! nothing of tables).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::directory::Table;
use super::manifest::{FamilyEntry, Manifest, RegionEntry, StoreFileEntry};
use super::split::to_string_binary;
use super::TableError;
use hfkit_format::block_cache::BlockCache;
use hfkit_format::cell::Cell;
use hfkit_format::reader::HFileReader;
use hfkit_read::scan::row_range;
use hfkit_read::{
    self as read, FamilyReadSettings, KeepDeletedCells, ReadError, ReadOptions, ReadStats, Row,
    RowRef, RowScanner, Store,
};

/// How many manifest versions [`TableReader::open`] tries before giving up when files vanish
/// under it.
pub const OPEN_ATTEMPTS: usize = 5;

/// One region and its stores (one per family that has files in the region, family order).
struct RegionStores {
    region: RegionEntry,
    /// Set at open, or (a read mirror) when the region is first read.
    stores: OnceLock<Vec<Store>>,
    /// A read mirror's files of the region, opened on first read.
    deferred: Vec<StoreFileEntry>,
}

/// A consistent, read-only view of one manifest version of a table.
pub struct TableReader {
    dir: PathBuf,
    manifest: Manifest,
    /// In key order.
    regions: Vec<RegionStores>,
    /// Opens the deferred files (a read mirror's table).
    table: Option<Table>,
    settings: HashMap<String, FamilyReadSettings>,
    /// The block cache files opened later read through.
    block_cache: OnceLock<Arc<BlockCache>>,
}

/// Adds `reader` (with sequence id `seq_id`) to the store of `family` in `stores`.
fn add_file(
    stores: &mut Vec<Store>,
    family: &str,
    settings: &FamilyReadSettings,
    reader: HFileReader,
    seq_id: u64,
) {
    let i = match stores.iter().position(|s| s.family == family.as_bytes()) {
        Some(i) => i,
        None => {
            stores.push(Store {
                family: family.as_bytes().to_vec(),
                settings: settings.clone(),
                files: Vec::new(),
            });
            stores.len() - 1
        }
    };
    stores[i].files.push((Arc::new(reader), seq_id));
}

/// The read settings of a family.
pub fn family_read_settings(f: &FamilyEntry) -> Result<FamilyReadSettings, TableError> {
    let keep_deleted_cells: KeepDeletedCells = f
        .keep_deleted_cells
        .to_ascii_uppercase()
        .parse()
        .map_err(|e| TableError::Invalid(format!("family {}: {e}", f.name)))?;
    if f.versions == 0 || f.min_versions > f.versions {
        return Err(TableError::Invalid(format!(
            "family {}: VERSIONS {} / MIN_VERSIONS {} (need 1 ≤ VERSIONS, MIN_VERSIONS ≤ VERSIONS)",
            f.name, f.versions, f.min_versions
        )));
    }
    Ok(FamilyReadSettings {
        versions: f.versions,
        min_versions: f.min_versions,
        ttl_seconds: f.ttl_seconds,
        keep_deleted_cells,
    })
}

/// Sum of two [`ReadStats`].
pub fn add_stats(a: &mut ReadStats, b: ReadStats) {
    a.files_considered += b.files_considered;
    a.files_read += b.files_read;
    a.skipped_time_range += b.skipped_time_range;
    a.skipped_ttl += b.skipped_ttl;
    a.skipped_key_range += b.skipped_key_range;
    a.skipped_bloom += b.skipped_bloom;
}

/// True for an error that means "the file is not there".
impl TableReader {
    /// Reads the live manifest of `table` once and opens every file it names. Retries with a
    /// newer manifest when a file has vanished (see the module documentation).
    pub fn open(table: &Table) -> Result<TableReader, TableError> {
        TableReader::open_retrying(table, || table.manifest())
    }

    /// [`TableReader::open`] with the manifest versions coming from `next_manifest`.
    fn open_retrying(
        table: &Table,
        mut next_manifest: impl FnMut() -> Result<Manifest, TableError>,
    ) -> Result<TableReader, TableError> {
        let mut last_missing = None;
        for _ in 0..OPEN_ATTEMPTS {
            let manifest = next_manifest()?;
            match TableReader::open_version(table, manifest)? {
                Ok(r) => return Ok(r),
                Err(missing) => last_missing = Some(missing),
            }
        }
        let missing = last_missing.unwrap_or_default();
        Err(TableError::Corrupt {
            path: missing.clone(),
            detail: format!(
                "named by the live manifest of {} but missing, {OPEN_ATTEMPTS} manifest versions in a row",
                table.dir().display()
            ),
        })
    }

    /// Opens the files of `manifest`; `Ok(Err(path))` when a file is missing.
    fn open_version(
        table: &Table,
        manifest: Manifest,
    ) -> Result<Result<TableReader, PathBuf>, TableError> {
        let dir = table.dir().to_path_buf();
        let mut settings = HashMap::new();
        for f in &manifest.families {
            settings.insert(f.name.clone(), family_read_settings(f)?);
        }
        let mut regions: Vec<RegionEntry> = manifest.regions.clone();
        regions.sort_by(|a, b| a.start_key.cmp(&b.start_key));
        let index: HashMap<String, usize> = regions
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id.clone(), i))
            .collect();
        let defer = table.reads_by_ranges();
        let mut stores: Vec<Vec<Store>> = regions.iter().map(|_| Vec::new()).collect();
        let mut deferred: Vec<Vec<StoreFileEntry>> = regions.iter().map(|_| Vec::new()).collect();
        for e in &manifest.files {
            let path = table.file_path(e);
            let (Some(&ri), Some(fs)) = (index.get(&e.region), settings.get(&e.family)) else {
                return Err(TableError::Corrupt {
                    path: dir.clone(),
                    detail: format!(
                        "manifest version {} names file {} of unknown region {} or family {}",
                        manifest.version, e.name, e.region, e.family
                    ),
                });
            };
            if defer {
                deferred[ri].push(e.clone());
                continue;
            }
            let reader = match table.open_store_file(e) {
                Ok(r) => r,
                Err(TableError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    return Ok(Err(path))
                }
                Err(err) => return Err(err),
            };
            add_file(&mut stores[ri], &e.family, fs, reader, e.seq_id);
        }
        let regions = regions
            .into_iter()
            .zip(stores.into_iter().zip(deferred))
            .map(|(region, (mut stores, deferred))| {
                stores.sort_by(|a, b| a.family.cmp(&b.family));
                let opened = match defer {
                    true => OnceLock::new(),
                    false => OnceLock::from(stores),
                };
                RegionStores {
                    region,
                    stores: opened,
                    deferred,
                }
            })
            .collect();
        Ok(Ok(TableReader {
            dir,
            manifest,
            regions,
            table: defer.then(|| table.clone()),
            settings,
            block_cache: OnceLock::new(),
        }))
    }

    /// The stores of region `i`, its files opened now if they were deferred.
    fn stores(&self, i: usize) -> Result<&[Store], TableError> {
        let rs = &self.regions[i];
        if let Some(s) = rs.stores.get() {
            return Ok(s);
        }
        let mut stores = Vec::new();
        if let Some(table) = &self.table {
            for e in &rs.deferred {
                let reader = table.open_store_file(e)?;
                if let Some(c) = self.block_cache.get() {
                    reader.set_block_cache(c.clone());
                }
                let fs = self
                    .settings
                    .get(&e.family)
                    .ok_or_else(|| TableError::Corrupt {
                        path: self.dir.clone(),
                        detail: format!("file {} of unknown family {}", e.name, e.family),
                    })?;
                add_file(&mut stores, &e.family, fs, reader, e.seq_id);
            }
        }
        stores.sort_by(|a, b| a.family.cmp(&b.family));
        Ok(rs.stores.get_or_init(|| stores))
    }

    /// A reader over stores opened elsewhere (HBase's own layout: [`hfkit_hbase`]): the
    /// table `table` with `families`, and its regions in key order, each with its stores. The
    /// regions must chain from the empty key to the empty key; `dir` names the table in
    /// messages.
    pub fn from_stores(
        dir: PathBuf,
        table: &str,
        families: Vec<FamilyEntry>,
        regions: Vec<(RegionEntry, Vec<Store>)>,
    ) -> Result<TableReader, TableError> {
        let entries = regions.iter().map(|(r, _)| r.clone()).collect();
        let manifest = Manifest::new(table, families, entries);
        manifest.check_regions()?;
        let regions = regions
            .into_iter()
            .map(|(region, stores)| RegionStores {
                region,
                stores: OnceLock::from(stores),
                deferred: Vec::new(),
            })
            .collect();
        Ok(TableReader {
            dir,
            manifest,
            regions,
            table: None,
            settings: HashMap::new(),
            block_cache: OnceLock::new(),
        })
    }

    /// Makes gets read data blocks through `cache` (HBase's block cache, see
    /// [`hfkit_format::block_cache`]): for a process that does many gets.
    pub fn set_block_cache(&self, cache: &Arc<BlockCache>) {
        let _ = self.block_cache.set(cache.clone());
        for r in &self.regions {
            for s in r.stores.get().into_iter().flatten() {
                for (f, _) in &s.files {
                    f.set_block_cache(cache.clone());
                }
            }
        }
    }

    /// The manifest version this reader reads.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The table directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Checks that every family named in `opts.columns` is a table family (HBase:
    /// `NoSuchColumnFamilyException`).
    fn check_columns(&self, opts: &ReadOptions) -> Result<(), TableError> {
        for (f, q) in &opts.columns {
            if !self
                .manifest
                .families
                .iter()
                .any(|e| e.name.as_bytes() == f.as_slice())
            {
                let col = match q {
                    Some(q) => format!("{}:{}", to_string_binary(f), to_string_binary(q)),
                    None => to_string_binary(f),
                };
                return Err(TableError::Invalid(format!(
                    "{}: column {col}: no such family (families: {})",
                    self.dir.display(),
                    self.manifest
                        .families
                        .iter()
                        .map(|f| f.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        Ok(())
    }

    fn read_error(&self, what: String, source: ReadError) -> TableError {
        TableError::Read {
            table: self.dir.clone(),
            what,
            source: Box::new(source),
        }
    }

    /// Reads one row (start/stop/prefix/limit/reverse are ignored) from the region holding it.
    /// Returns its cells (families in byte order) and which files were read or skipped.
    pub fn get(
        &self,
        row: &[u8],
        opts: &ReadOptions,
    ) -> Result<(Vec<Cell>, ReadStats), TableError> {
        self.check_columns(opts)?;
        // Keys compared by words, not `memcmp` calls (a third of an absent row's get went there).
        use hfkit_format::bytes::compare_bytes;
        use std::cmp::Ordering::{Greater, Less};
        let i = self
            .regions
            .partition_point(|r| compare_bytes(&r.region.start_key, row) != Greater);
        // The last region starting at or before `row` holds it unless `row` is past its end.
        let region = i.checked_sub(1).filter(|&i| {
            let end = &self.regions[i].region.end_key;
            end.is_empty() || compare_bytes(row, end) == Less
        });
        let Some(region) = region else {
            return Err(TableError::Corrupt {
                path: self.dir.clone(),
                detail: format!(
                    "manifest version {}: no region holds row {}",
                    self.manifest.version,
                    to_string_binary(row)
                ),
            });
        };
        read::get_with_stats(self.stores(region)?, row, opts)
            .map_err(|e| self.read_error(format!("get row {}", to_string_binary(row)), e))
    }

    /// Scans the rows of `[start_row, stop_row)` ∩ `prefix` across regions, in ascending order
    /// (descending when `reverse`), at most `limit` rows.
    pub fn scan(&self, opts: &ReadOptions) -> Result<TableScanner<'_>, TableError> {
        self.check_columns(opts)?;
        // Validate the options even when no region overlaps the range.
        opts.validate()
            .map_err(|e| self.read_error("scan".into(), e))?;
        let (start, stop) = row_range(opts);
        let empty = stop.as_ref().is_some_and(|s| *s <= start);
        let mut pending: Vec<usize> = if empty {
            Vec::new()
        } else {
            (0..self.regions.len())
                .filter(|&i| {
                    let r = &self.regions[i].region;
                    let ends_after_start =
                        r.end_key.is_empty() || r.end_key.as_slice() > start.as_slice();
                    let starts_before_stop =
                        stop.as_deref().is_none_or(|s| r.start_key.as_slice() < s);
                    ends_after_start && starts_before_stop
                })
                .collect()
        };
        // Popped from the end: ascending scans want the first region last in the vector.
        if !opts.reverse {
            pending.reverse();
        }
        Ok(TableScanner {
            reader: self,
            opts: opts.clone(),
            start,
            stop,
            pending,
            current: None,
            returned: 0,
            stats: ReadStats::default(),
            done: false,
        })
    }
}

/// Rows of a table scan, region after region; an [`Iterator`] of `Result<Row, TableError>`
/// that stops after the first error.
pub struct TableScanner<'r> {
    reader: &'r TableReader,
    opts: ReadOptions,
    start: Vec<u8>,
    stop: Option<Vec<u8>>,
    /// Regions still to visit (indices into `reader.regions`), next one last.
    pending: Vec<usize>,
    current: Option<(usize, RowScanner<'r>)>,
    returned: usize,
    /// Statistics of the regions already finished.
    stats: ReadStats,
    done: bool,
}

impl<'r> TableScanner<'r> {
    /// Files considered, read and skipped so far, over every region visited.
    pub fn stats(&self) -> ReadStats {
        let mut s = self.stats;
        if let Some((_, sc)) = &self.current {
            add_stats(&mut s, sc.stats());
        }
        s
    }

    /// Opens the scanner of region `i`, clipped to its bounds.
    fn open_region(&self, i: usize) -> Result<RowScanner<'r>, TableError> {
        let rs = &self.reader.regions[i];
        let mut opts = self.opts.clone();
        opts.prefix = None;
        opts.start_row = std::cmp::max(&self.start, &rs.region.start_key).clone();
        opts.stop_row = match (&self.stop, rs.region.end_key.is_empty()) {
            (None, true) => Vec::new(),
            (None, false) => rs.region.end_key.clone(),
            (Some(s), true) => s.clone(),
            (Some(s), false) => std::cmp::min(s, &rs.region.end_key).clone(),
        };
        opts.limit = self.opts.limit.map(|l| l.saturating_sub(self.returned));
        read::scan(self.reader.stores(i)?, &opts).map_err(|e| self.region_error(i, e))
    }

    fn region_error(&self, i: usize, e: ReadError) -> TableError {
        let r = &self.reader.regions[i].region;
        self.reader.read_error(
            format!(
                "scan of region {} [{}, {})",
                r.id,
                to_string_binary(&r.start_key),
                to_string_binary(&r.end_key)
            ),
            e,
        )
    }

    /// The next row as an owned [`Row`], or `None` at the end.
    pub fn next_row(&mut self) -> Result<Option<Row>, TableError> {
        Ok(self.next_row_ref()?.map(|r| r.to_row()))
    }

    /// The next row, its cells borrowed from the scanner (valid until the next call; no
    /// allocation per cell), or `None` at the end.
    pub fn next_row_ref(&mut self) -> Result<Option<RowRef<'_>>, TableError> {
        if !self.advance_row()? {
            return Ok(None);
        }
        Ok(self.current.as_ref().and_then(|(_, sc)| sc.current_row()))
    }

    /// Moves to the next row of the current region or of the next ones; false at the end.
    fn advance_row(&mut self) -> Result<bool, TableError> {
        loop {
            if self.done || self.opts.limit.is_some_and(|l| self.returned >= l) {
                self.done = true;
                return Ok(false);
            }
            if self.current.is_none() {
                let Some(i) = self.pending.pop() else {
                    self.done = true;
                    return Ok(false);
                };
                match self.open_region(i) {
                    Ok(sc) => self.current = Some((i, sc)),
                    Err(e) => {
                        self.done = true;
                        return Err(e);
                    }
                }
            }
            let Some((i, sc)) = self.current.as_mut() else {
                continue;
            };
            match sc.advance_row() {
                Ok(true) => {
                    self.returned += 1;
                    return Ok(true);
                }
                Ok(false) => {
                    let s = sc.stats();
                    add_stats(&mut self.stats, s);
                    self.current = None;
                }
                Err(e) => {
                    let i = *i;
                    self.done = true;
                    return Err(self.region_error(i, e));
                }
            }
        }
    }
}

impl Iterator for TableScanner<'_> {
    type Item = Result<Row, TableError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_row().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_from_family_entries() {
        let mut f = FamilyEntry::new("f");
        f.versions = 3;
        f.min_versions = 1;
        f.ttl_seconds = Some(60);
        f.keep_deleted_cells = "TTL".into();
        let s = family_read_settings(&f).unwrap();
        assert_eq!(s.versions, 3);
        assert_eq!(s.min_versions, 1);
        assert_eq!(s.ttl_seconds, Some(60));
        assert_eq!(s.keep_deleted_cells, KeepDeletedCells::Ttl);
        f.keep_deleted_cells = "MAYBE".into();
        assert!(family_read_settings(&f)
            .unwrap_err()
            .to_string()
            .contains("MAYBE"));
    }

    #[test]
    fn open_retries_with_a_newer_manifest_when_a_file_vanished() {
        let tmp = tempfile::tempdir().unwrap();
        let t = Table::create(
            &tmp.path().join("t"),
            "default:t",
            vec![FamilyEntry::new("f")],
            &[],
        )
        .unwrap();
        let good = t.manifest().unwrap();
        let mut gone = good.clone();
        gone.files.push(crate::manifest::StoreFileEntry {
            region: good.regions[0].id.clone(),
            family: "f".into(),
            name: "collected".into(),
            seq_id: 1,
            size: 0,
            entries: 0,
            first_row: Vec::new(),
            last_row: Vec::new(),
            min_ts: 0,
            max_ts: 0,
            compacted_under: None,
        });
        let mut calls = 0;
        let r = TableReader::open_retrying(&t, || {
            calls += 1;
            Ok(if calls < 3 {
                gone.clone()
            } else {
                good.clone()
            })
        })
        .unwrap();
        assert_eq!(calls, 3);
        assert_eq!(r.manifest(), &good);
        let err = TableReader::open_retrying(&t, || Ok(gone.clone()))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("collected") && err.contains("missing"),
            "{err}"
        );
    }

    #[test]
    fn prefix_range() {
        let opts = ReadOptions {
            start_row: b"a".to_vec(),
            stop_row: b"abz".to_vec(),
            prefix: Some(b"ab".to_vec()),
            ..Default::default()
        };
        assert_eq!(row_range(&opts), (b"ab".to_vec(), Some(b"abz".to_vec())));
    }
}
