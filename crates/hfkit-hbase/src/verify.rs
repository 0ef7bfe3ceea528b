//! Verifying an HBase snapshot (or table) offline, as HBase's
//! `SnapshotReferenceUtil.verifySnapshot` does and more: every store file must resolve (links
//! through `data/` then `archive/`, references to their parent's file), have the size the
//! manifest recorded, pass the HFile checks of [`hfkit_format::verify`] and read to its end;
//! and a digest of each store's cells (SHA-256 over the canonical cell lines, with sequence
//! ids, files in name order) to compare with another copy or another tool. Spec:
//! `formats/hbase-layout.md` §"Verification".

use sha2::{Digest, Sha256};

use super::manifest::{Manifest, RegionManifest, StoreFile};
use super::store::{for_each_cell, open_store_file, ResolvedFile};
use hfkit_format::text::{hex, push_cell_line};

/// One store's files, cells and digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreDigest {
    /// Encoded region name.
    pub region: String,
    pub family: String,
    pub files: usize,
    pub cells: u64,
    /// Lowercase hex SHA-256 of the store's cell lines, each followed by `\n`.
    pub sha256: String,
}

/// What a verification found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Each problem names the file and what is wrong; empty when the snapshot is sound.
    pub problems: Vec<String>,
    /// Per store, regions in HBase's order (split parents included), families by name.
    pub stores: Vec<StoreDigest>,
    pub total_cells: u64,
    /// SHA-256 of every store's cell lines, in the order of `stores`.
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
/// are reported and left out of the digests; the others are still read.
pub fn verify(m: &Manifest) -> VerifyReport {
    let mut report = VerifyReport::default();
    let mut total = Sha256::new();
    let mut line = String::new();
    for region in regions_in_order(m) {
        let mut families: Vec<_> = region.families.iter().collect();
        families.sort_by(|a, b| a.family.cmp(&b.family));
        for ff in families {
            let family = String::from_utf8_lossy(&ff.family).into_owned();
            if let Err(e) = m.family(region, &ff.family) {
                report.problems.push(e.to_string());
                continue;
            }
            let mut files: Vec<_> = ff.files.iter().collect();
            files.sort_by(|a, b| a.name.cmp(&b.name));
            let mut digest = Sha256::new();
            let mut cells = 0;
            for f in &files {
                let resolved = match m.resolve(region, &family, f) {
                    Ok(r) => r,
                    Err(e) => {
                        report.problems.push(e.to_string());
                        continue;
                    }
                };
                if let Some(expected) = recorded_size(f, &resolved).filter(|&s| s != resolved.size)
                {
                    report.problems.push(format!(
                        "{}: {} bytes, the manifest says {expected} for {}",
                        resolved.path.display(),
                        resolved.size,
                        f.name
                    ));
                    continue;
                }
                let opened = match open_store_file(&resolved) {
                    Ok(o) => o,
                    Err(e) => {
                        report.problems.push(e.to_string());
                        continue;
                    }
                };
                let checked = hfkit_format::verify::verify(&opened.reader);
                if let Some(p) = checked.problems.first() {
                    report
                        .problems
                        .push(format!("{}: {p}", resolved.path.display()));
                    continue;
                }
                let read = for_each_cell(&opened, &mut |c| {
                    line.clear();
                    push_cell_line(&mut line, c, true);
                    line.push('\n');
                    digest.update(line.as_bytes());
                    total.update(line.as_bytes());
                });
                match read {
                    Ok(n) => cells += n,
                    Err(e) => report.problems.push(e.to_string()),
                }
            }
            report.total_cells += cells;
            report.stores.push(StoreDigest {
                region: region.info.encoded_name(),
                family,
                files: files.len(),
                cells,
                sha256: hex(&digest.finalize()),
            });
        }
    }
    report.total_sha256 = hex(&total.finalize());
    report
}
