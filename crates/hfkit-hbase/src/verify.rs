//! Verifying an HBase snapshot (or table) offline, as HBase's
//! `SnapshotReferenceUtil.verifySnapshot` does and more: every store file must resolve (links
//! through `data/` then `archive/`, references to their parent's file), have the size the
//! manifest recorded, pass the HFile checks of [`hfkit_format::verify`] and read to its end;
//! and digests of the cells, to compare with another copy or another tool. A digest is a
//! function of the cells only: SHA-256 over canonical cell lines *without* sequence ids, in
//! HBase's cell order (equal keys by their line), so that the same cells in other files, other
//! regions or with other sequence ids (a clone, an export) give the same digest. Spec:
//! `formats/hbase-layout.md` §"Verification".

use sha2::{Digest, Sha256};

use std::path::Path;

use super::manifest::{FamilyFiles, Manifest, RegionManifest, StoreFile};
use super::store::{compacted_away, open_store_file, OpenedStoreFile, ResolvedFile};
use hfkit_format::cell::{compare_cells, Cell};
use hfkit_format::reader::Scanner;
use hfkit_format::text::{cell_line, hex};

/// One store's files, cells and digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreDigest {
    /// Encoded region name.
    pub region: String,
    pub family: String,
    pub files: usize,
    pub cells: u64,
    /// Lowercase hex SHA-256 of the store's cells: each cell's canonical line without its
    /// sequence id, followed by `\n`, in HBase's cell order (row, qualifier, timestamp
    /// descending, type), cells of equal keys by their line.
    pub sha256: String,
}

/// What a verification found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Each problem names the file and what is wrong; empty when the snapshot is sound.
    pub problems: Vec<String>,
    /// Per store, regions in HBase's order (split parents included), families by name.
    pub stores: Vec<StoreDigest>,
    /// Cells of the live regions (a split parent's are its daughters').
    pub total_cells: u64,
    /// SHA-256 of the live regions' cell lines, family after family (by name), each family's
    /// cells in HBase's cell order over the whole table: the same lines as the stores'
    /// digests, so a function of the cells whatever the regions' boundaries.
    pub total_sha256: String,
}

impl VerifyReport {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The regions of `m` in HBase's region order.
pub fn regions_in_order(m: &Manifest) -> Vec<&RegionManifest> {
    let mut v: Vec<&RegionManifest> = m.regions.iter().collect();
    v.sort_by(|a, b| a.info.compare(&b.info));
    v
}

/// The size recorded for `f` that its resolved file must have: `None` when nothing was
/// recorded, or when a reference or a link records 0, as HBase's FILE store-file tracker does
/// (its `.filelist` entries hold `StoreFileInfo.getSize()`, which only an HFile's own file
/// status sets).
fn recorded_size(f: &StoreFile, resolved: &ResolvedFile) -> Option<u64> {
    let indirect = resolved.link || resolved.reference.is_some();
    f.file_size.filter(|&s| s != 0 || !indirect)
}

/// Verifies every store file of `m` (see the module documentation). Store files that fail
/// are reported and left out of the digests; the others are still read. Stores are read
/// family after family, each family's regions in order, so that the live ones feed the total
/// in its order.
pub fn verify(m: &Manifest) -> VerifyReport {
    verify_with_progress(m, &|_| {})
}

/// The store files [`verify`] reads: every file of every region's families (a table's MOB
/// files included).
pub fn file_count(m: &Manifest) -> u64 {
    let mob = super::mob::table_mob_region(m).ok().flatten();
    m.regions
        .iter()
        .chain(&mob)
        .flat_map(|r| &r.families)
        .map(|ff| ff.files.len() as u64)
        .sum()
}

/// [`verify`], calling `progress` with 1 as each store file is done.
pub fn verify_with_progress(m: &Manifest, progress: &dyn Fn(u64)) -> VerifyReport {
    let mut report = VerifyReport::default();
    let mut total = Sha256::new();
    let mut regions = regions_in_order(m);
    // A table's MOB files, checked and digested as the store of its MOB region, as a
    // snapshot's manifest lists them (never live: not in the table's total).
    let mob = match super::mob::table_mob_region(m) {
        Ok(r) => r,
        Err(e) => {
            report.problems.push(e.to_string());
            None
        }
    };
    regions.extend(&mob);
    let mut families: Vec<&[u8]> = regions
        .iter()
        .flat_map(|r| r.families.iter().map(|ff| ff.family.as_slice()))
        .collect();
    families.sort();
    families.dedup();
    let mut stores = Vec::new();
    for family in families {
        for (order, region) in regions.iter().enumerate() {
            let Some(ff) = region.families.iter().find(|ff| ff.family == family) else {
                continue;
            };
            if let Err(e) = m.family(region, &ff.family) {
                report.problems.push(e.to_string());
                continue;
            }
            let live_total = region.live.then_some(&mut total);
            let store = verify_store(m, region, ff, &mut report.problems, live_total);
            progress(ff.files.len() as u64);
            if region.live {
                report.total_cells += store.cells;
            }
            stores.push((order, store));
        }
    }
    stores.sort_by(|a, b| (a.0, &a.1.family).cmp(&(b.0, &b.1.family)));
    report.stores = stores.into_iter().map(|(_, s)| s).collect();
    report.total_sha256 = hex(&total.finalize());
    report
}

/// Checks the files of one store (resolves, recorded size, HFile checks), then digests the
/// cells of those that passed; the cell lines also go to `total` when given.
fn verify_store(
    m: &Manifest,
    region: &RegionManifest,
    ff: &FamilyFiles,
    problems: &mut Vec<String>,
    total: Option<&mut Sha256>,
) -> StoreDigest {
    let family = String::from_utf8_lossy(&ff.family).into_owned();
    let mut files: Vec<_> = ff.files.iter().collect();
    files.sort_by(|a, b| a.name.cmp(&b.name));
    let mut opened = Vec::new();
    for f in &files {
        let resolved = match m.resolve(region, &family, f) {
            Ok(r) => r,
            Err(e) => {
                problems.push(e.to_string());
                continue;
            }
        };
        if let Some(expected) = recorded_size(f, &resolved).filter(|&s| s != resolved.size) {
            problems.push(format!(
                "{}: {} bytes, the manifest says {expected} for {}",
                resolved.path.display(),
                resolved.size,
                f.name
            ));
            continue;
        }
        let file = match open_store_file(&resolved) {
            Ok(o) => o,
            Err(e) => {
                problems.push(e.to_string());
                continue;
            }
        };
        let checked = hfkit_format::verify::verify(&file.reader);
        if let Some(p) = checked.problems.first() {
            problems.push(format!("{}: {p}", resolved.path.display()));
            continue;
        }
        opened.push((resolved, file));
    }
    // Files a compaction in this store was stopped before archiving are not the store's.
    match compacted_away(opened.iter().map(|(r, o)| (r, &*o.reader))) {
        Ok(gone) => opened.retain(|(r, _)| !gone.contains(&r.name)),
        Err(e) => problems.push(e.to_string()),
    }
    let (cells, sha256) = digest_cells(&opened, problems, total);
    StoreDigest {
        region: region.info.encoded_name(),
        family,
        files: files.len(),
        cells,
        sha256,
    }
}

/// One file's scanner and the path to name in its errors.
struct Cursor<'r> {
    path: &'r Path,
    scanner: Scanner<'r>,
}

impl Cursor<'_> {
    /// The next cell, owned; `None` at the end, or after an error (reported: the rest of the
    /// file is left out).
    fn next_cell(&mut self, problems: &mut Vec<String>) -> Option<Cell> {
        match self.scanner.next() {
            Ok(c) => c.map(|c| c.to_owned()),
            Err(e) => {
                problems.push(format!("{}: {e}", self.path.display()));
                None
            }
        }
    }
}

/// The cells of `files` (one store's), merged into HBase's cell order, cells of equal keys
/// (from any file) ordered by their line: each line hashed into the store's digest (and
/// `total`). Returns the cell count and the digest. Reads one cell ahead per file.
fn digest_cells(
    files: &[(ResolvedFile, OpenedStoreFile)],
    problems: &mut Vec<String>,
    mut total: Option<&mut Sha256>,
) -> (u64, String) {
    let mut cursors = Vec::new();
    for (r, f) in files {
        match f.reader.scanner() {
            Ok(scanner) => cursors.push(Cursor {
                path: &r.path,
                scanner,
            }),
            Err(e) => problems.push(format!("{}: {e}", r.path.display())),
        }
    }
    let mut heads: Vec<Option<Cell>> = cursors.iter_mut().map(|c| c.next_cell(problems)).collect();
    let mut digest = Sha256::new();
    let mut cells = 0;
    let mut group: Vec<String> = Vec::new();
    while let Some(least) = heads
        .iter()
        .flatten()
        .min_by(|a, b| compare_cells(&a.as_ref(), &b.as_ref()))
        .cloned()
    {
        group.clear();
        for (head, cursor) in heads.iter_mut().zip(cursors.iter_mut()) {
            while let Some(c) =
                head.take_if(|c| compare_cells(&c.as_ref(), &least.as_ref()).is_eq())
            {
                let mut line = cell_line(&c.as_ref(), false);
                line.push('\n');
                group.push(line);
                *head = cursor.next_cell(problems);
            }
        }
        group.sort();
        for line in &group {
            digest.update(line.as_bytes());
            if let Some(t) = total.as_deref_mut() {
                t.update(line.as_bytes());
            }
        }
        cells += group.len() as u64;
    }
    (cells, hex(&digest.finalize()))
}
