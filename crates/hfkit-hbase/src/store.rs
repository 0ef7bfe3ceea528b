//! Reading store files as HBase does (`StoreFileInfo`, `HFileLink`, `HStoreFile.open`):
//! resolving a manifest entry to the HFile holding its bytes (through links, and references
//! to their parent's file), opening it (a reference as a half reader), the sequence id its
//! cells carry, and a region's [`hfkit_read::Store`]s. Spec: `formats/hbase-layout.md`
//! §"Reading".

use std::path::{Path, PathBuf};
use std::sync::Arc;

use prost::Message;

use super::descriptor::FamilyDescriptor;
use super::manifest::{FamilyFiles, Manifest, RegionManifest, Source, StoreFile};
use super::names::{HFileLink, StoreFileName};
use super::proto;
use super::reference::Reference;
use super::{ContentError, HBaseError, Result};
use hfkit_format::fileinfo::keys;
use hfkit_format::reader::HFileReader;
use hfkit_read::{Store, CELL_SEQ_IDS};
use hfkit_table::manifest::{FamilyEntry, RegionEntry};
use hfkit_table::read::TableReader;

/// FileInfo key of bulk-loaded files whose cells keep their sequence ids (MOB compaction).
pub const SKIP_RESET_SEQ_ID: &str = "SKIP_RESET_SEQ_ID";

/// How a store file entry reaches its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedFile {
    /// The entry's name in its store.
    pub name: String,
    /// The HFile holding the bytes.
    pub path: PathBuf,
    /// Reached through an HFileLink (a link name, a snapshot entry, or a reference to one).
    pub link: bool,
    pub reference: Option<Reference>,
    /// Length of the HFile at `path`.
    pub size: u64,
    /// The object holding the bytes when `path` is in a mirror of a root on object storage
    /// ([`super::remote`]).
    pub object: Option<hfkit_storage::Location>,
}

impl ResolvedFile {
    /// `hfile`, `link`, `reference top|bottom` or `reference top|bottom via link`.
    pub fn kind(&self) -> String {
        let mut s = match &self.reference {
            Some(r) if r.is_top() => "reference top".to_string(),
            Some(_) => "reference bottom".to_string(),
            None if self.link => return "link".into(),
            None => return "hfile".into(),
        };
        if self.link {
            s.push_str(" via link");
        }
        s
    }
}

/// A store file resolved and opened.
pub type OpenedEntry = (ResolvedFile, OpenedStoreFile);

/// The first existing location of `link` (`data/`, `archive/`, `.tmp/`, `mobdir/`).
fn find_link(root: &Path, link: &HFileLink, family: &str) -> Option<PathBuf> {
    link.locations(root, family)
        .into_iter()
        .find(|p| p.is_file())
}

fn size_of(path: &Path) -> Result<u64> {
    Ok(std::fs::metadata(path)
        .map_err(|e| HBaseError::io(path, e))?
        .len())
}

impl Manifest {
    /// The store directory of `region`'s `family` for a table, the snapshot directory's
    /// region for a snapshot (where v1 snapshots keep reference files).
    fn store_dir(&self, region: &RegionManifest, family: &str) -> PathBuf {
        self.dir().join(region.info.encoded_name()).join(family)
    }

    /// Resolves `file` of `region`'s `family` to the HFile holding its bytes, as HBase does:
    /// a table's HFile is in its store directory; an HFileLink (and every plain name of a
    /// snapshot, as a link to the snapshot's table) is searched in `data/`, `archive/`,
    /// `.tmp/`, `mobdir/`; a reference reads the parent region's file (in a table: the
    /// parent's store directory, or the link it names; in a snapshot: through a link). An
    /// error names what is missing and where it was looked for.
    pub fn resolve(
        &self,
        region: &RegionManifest,
        family: &str,
        file: &StoreFile,
    ) -> Result<ResolvedFile> {
        let root = &self.root;
        let table = self.table();
        let region_name = region.info.encoded_name();
        if region.info.is_mob_region() {
            return self.resolve_mob(region, family, file);
        }
        let kind = StoreFileName::parse(&file.name).ok_or_else(|| {
            HBaseError::corrupt(
                &self.store_dir(region, family).join(&file.name),
                "not a store file name (HFile, HFileLink or reference)",
            )
        })?;
        let snapshot = matches!(self.source, Source::Snapshot { .. });
        let missing_link = |link: &HFileLink, what: &str| {
            let [data, archive, ..] = link.locations(root, family);
            HBaseError::corrupt(
                &data,
                format!(
                    "{what}: can't find hfile {} in the real ({}) or archive ({}) directory",
                    link.hfile,
                    data.display(),
                    archive.display()
                ),
            )
        };
        let (path, link, reference) = match kind {
            StoreFileName::HFile if !snapshot => {
                let p = self.store_dir(region, family).join(&file.name);
                if !p.is_file() {
                    return Err(HBaseError::corrupt(&p, "store file missing"));
                }
                (p, false, None)
            }
            StoreFileName::HFile => {
                let l = HFileLink {
                    table: table.clone(),
                    region: region_name.clone(),
                    hfile: file.name.clone(),
                };
                let p = find_link(root, &l, family)
                    .ok_or_else(|| missing_link(&l, &format!("snapshot file {}", file.name)))?;
                (p, true, None)
            }
            StoreFileName::Link(l) => {
                let p = find_link(root, &l, family)
                    .ok_or_else(|| missing_link(&l, &format!("link {}", file.name)))?;
                (p, true, None)
            }
            StoreFileName::Reference { referred, parent } => {
                let ref_path = self.store_dir(region, family).join(&file.name);
                let reference = match &file.reference {
                    Some(r) => r.clone(),
                    None => Reference::read_file(&ref_path)?,
                };
                self.check_split_key(region, &parent, &reference)
                    .map_err(|e| HBaseError::content(&ref_path, e))?;
                let link = HFileLink::parse(&referred).or_else(|| {
                    snapshot.then(|| HFileLink {
                        table: table.clone(),
                        region: parent.clone(),
                        hfile: referred.clone(),
                    })
                });
                let what = format!("missing parent hfile for reference {}", file.name);
                let (p, via_link) = match link {
                    Some(l) => (
                        find_link(root, &l, family).ok_or_else(|| missing_link(&l, &what))?,
                        true,
                    ),
                    None => {
                        // A table's reference to a plain HFile (a snapshot's always names a
                        // link, made above).
                        let p = self.dir().join(&parent).join(family).join(&referred);
                        if !p.is_file() {
                            return Err(HBaseError::corrupt(&p, what));
                        }
                        (p, false)
                    }
                };
                (p, via_link, Some(reference))
            }
        };
        let size = size_of(&path)?;
        let object = match &self.remote {
            Some(url) => Some(super::remote::object_of(url, root, &path)?),
            None => None,
        };
        Ok(ResolvedFile {
            name: file.name.clone(),
            path,
            link,
            reference,
            size,
            object,
        })
    }

    /// A file of a snapshot's MOB region: a MOB file by name, or a link to one, searched as an
    /// HFileLink is (in `mobdir/`, then `archive/`), as `SnapshotReferenceUtil` resolves it.
    fn resolve_mob(
        &self,
        region: &RegionManifest,
        family: &str,
        file: &StoreFile,
    ) -> Result<ResolvedFile> {
        let region_name = region.info.encoded_name();
        let link =
            super::names::mob_link(&file.name, self.table(), &region_name).ok_or_else(|| {
                HBaseError::corrupt(
                    &self.store_dir(region, family).join(&file.name),
                    "not a MOB file name, or a link to one, in the MOB region",
                )
            })?;
        let path = find_link(&self.root, &link, family).ok_or_else(|| {
            let [_, archive, _, mob] = link.locations(&self.root, family);
            HBaseError::corrupt(
                &mob,
                format!(
                    "MOB file {}: can't find it in the MOB ({}) or archive ({}) directory",
                    link.hfile,
                    mob.display(),
                    archive.display()
                ),
            )
        })?;
        let size = size_of(&path)?;
        let object = match &self.remote {
            Some(url) => Some(super::remote::object_of(url, &self.root, &path)?),
            None => None,
        };
        Ok(ResolvedFile {
            name: file.name.clone(),
            path,
            link: true,
            reference: None,
            size,
            object,
        })
    }

    /// Checks that `reference`, in `region` and referring to a file of region `parent`, splits
    /// where the region's bounds say: a bottom half at the region's end key; a top half at its
    /// start key (a split daughter), or at the parent's start key when the parent lies within
    /// the region (a merge: `HRegionFileSystem.mergeStoreFile` gives the merged region a top
    /// reference to each parent's files). A merge parent the manifest does not list (a
    /// snapshot lists split parents only) leaves the top half's split row to lie within the
    /// region. Otherwise the half would silently read other rows than the region's.
    fn check_split_key(
        &self,
        region: &RegionManifest,
        parent: &str,
        reference: &Reference,
    ) -> Result<(), ContentError> {
        let row = reference
            .split_row()
            .ok_or(ContentError::ReferenceSplitKey)?;
        let info = &region.info;
        let mismatch = |bound, expected: &[u8]| ContentError::ReferenceSplitMismatch {
            top: reference.is_top(),
            split_row: row.to_vec(),
            bound,
            expected: expected.to_vec(),
        };
        if !reference.is_top() {
            if row == info.end_key.as_slice() {
                return Ok(());
            }
            return Err(mismatch("region's end", &info.end_key));
        }
        if row == info.start_key.as_slice() {
            return Ok(());
        }
        let parent = self
            .regions
            .iter()
            .map(|r| &r.info)
            .find(|p| p.encoded_name() == parent);
        match parent {
            Some(p) if info.covers(p) && row == p.start_key.as_slice() => Ok(()),
            Some(p) if info.covers(p) => Err(mismatch("merged parent's start", &p.start_key)),
            None if info.contains(row) => Ok(()),
            _ => Err(mismatch("region's start", &info.start_key)),
        }
    }

    /// The files of `region`'s store `ff`, resolved and opened as HBase opens them, in
    /// HBase's order (`StoreFileComparators.SEQ_ID`), without the files compacted away (see
    /// [`Manifest::open_store_and_compacted`]).
    pub fn open_store(
        &self,
        region: &RegionManifest,
        ff: &FamilyFiles,
    ) -> Result<Vec<(ResolvedFile, OpenedStoreFile)>> {
        Ok(self.open_store_and_compacted(region, ff)?.0)
    }

    /// The files of `region`'s store `ff` as [`Manifest::open_store`] opens them, and apart
    /// the files another file of the store names as compacted into it (FileInfo
    /// `COMPACTION_EVENT_KEY`): a compaction that moved its output in but was stopped before
    /// archiving its inputs. HBase's `StoreEngine.openStoreFiles` leaves those out of the
    /// store (and archives them); so do reads here.
    pub fn open_store_and_compacted(
        &self,
        region: &RegionManifest,
        ff: &FamilyFiles,
    ) -> Result<(Vec<OpenedEntry>, Vec<ResolvedFile>)> {
        let family = self.family(region, &ff.family)?.name_str();
        let mut files = Vec::new();
        for f in &ff.files {
            let resolved = self.resolve(region, &family, f)?;
            let opened = open_store_file(&resolved)?;
            files.push((resolved, opened));
        }
        let compacted = compacted_away(files.iter().map(|(r, o)| (r, &*o.reader)))?;
        let (gone, mut files): (Vec<_>, Vec<_>) = files
            .into_iter()
            .partition(|(r, _)| compacted.contains(&r.name));
        files.sort_by(|a, b| a.1.order.cmp(&b.1.order));
        Ok((files, gone.into_iter().map(|(r, _)| r).collect()))
    }

    /// The read stores of a region (one per family with files, family order), files in
    /// HBase's order (`StoreFileComparators.SEQ_ID`), each opened as HBase opens it.
    pub fn stores(&self, region: &RegionManifest) -> Result<Vec<Store>> {
        let mut stores = Vec::new();
        for ff in &region.families {
            let fd = self.family(region, &ff.family)?;
            let settings = fd.read_settings()?;
            let files = self.open_store(region, ff)?;
            if files.is_empty() {
                continue;
            }
            stores.push(Store {
                family: ff.family.clone(),
                settings,
                files: files
                    .into_iter()
                    .map(|(_, f)| (f.reader, f.read_seq_id))
                    .collect(),
            });
        }
        stores.sort_by(|a, b| a.family.cmp(&b.family));
        Ok(stores)
    }

    /// The hfkit families of the descriptor (for reads, clones and exports).
    pub fn family_entries(&self) -> Result<Vec<FamilyEntry>> {
        self.descriptor
            .families
            .iter()
            .map(FamilyDescriptor::family_entry)
            .collect()
    }

    /// A reader over every live region, with the table layer's Get and Scan (and their
    /// options and output) on top.
    pub fn reader(&self) -> Result<TableReader> {
        let mut regions = Vec::new();
        for r in self.live_regions() {
            let entry = RegionEntry {
                id: r.info.encoded_name(),
                start_key: r.info.start_key.clone(),
                end_key: r.info.end_key.clone(),
            };
            regions.push((entry, self.stores(r)?));
        }
        Ok(TableReader::from_stores(
            self.dir().to_path_buf(),
            &self.table().full_name(),
            self.family_entries()?,
            regions,
        )?)
    }
}

/// The names the compaction events (FileInfo `COMPACTION_EVENT_KEY`: `PBUF` +
/// `CompactionEventTracker`) of `files` list as compacted into them; an event that does not
/// parse is an error naming the file.
pub fn compacted_away<'a>(
    files: impl Iterator<Item = (&'a ResolvedFile, &'a HFileReader)>,
) -> Result<std::collections::BTreeSet<String>> {
    let mut names = std::collections::BTreeSet::new();
    for (resolved, reader) in files {
        let Some(event) = reader.file_info().get(keys::COMPACTION_EVENT_KEY) else {
            continue;
        };
        let bad = |d: String| HBaseError::corrupt(&resolved.path, d);
        let body = super::pb_magic(&resolved.path, event)?;
        let tracker = proto::CompactionEventTracker::decode(body).map_err(|e| {
            bad(format!(
                "COMPACTION_EVENT_KEY is not a CompactionEventTracker: {e}"
            ))
        })?;
        for n in tracker.compacted_store_file {
            let n = String::from_utf8(n)
                .map_err(|_| bad("COMPACTION_EVENT_KEY names a file that is not UTF-8".into()))?;
            if n != resolved.name {
                names.insert(n);
            }
        }
    }
    Ok(names)
}

/// An opened store file, with what orders it among its store's files.
pub struct OpenedStoreFile {
    pub reader: Arc<HFileReader>,
    /// The sequence id HBase gives the file (`MAX_SEQ_ID_KEY`, or a bulk load's; +1 for a top
    /// reference).
    pub seq_id: u64,
    /// What [`read::Store`] gets: the file's sequence id for bulk loads, else
    /// [`CELL_SEQ_IDS`].
    pub read_seq_id: u64,
    order: (u64, std::cmp::Reverse<u64>, i64, String),
}

/// Opens a resolved store file as `HStoreFile.open` does: a reference as a half reader; the
/// file's sequence id from `MAX_SEQ_ID_KEY` (a bulk load's from its `_SeqId_<n>_` name), plus
/// one for a top reference; cells keep their own sequence ids unless the file is a bulk load
/// (name with `SeqId_`, or FileInfo `BULKLOAD_TIMESTAMP`) without `SKIP_RESET_SEQ_ID`.
pub fn open_store_file(f: &ResolvedFile) -> Result<OpenedStoreFile> {
    let fmt = |source| HBaseError::Format {
        path: f.path.clone(),
        source,
    };
    let mut reader = match &f.object {
        Some(object) => super::remote::open_object(object, f.size, &f.path)?,
        None => HFileReader::open(&f.path).map_err(fmt)?,
    };
    if let Some(r) = &f.reference {
        reader = reader
            .into_half(r.split_key.clone(), r.range)
            .map_err(fmt)?;
    }
    let fi = reader.file_info();
    let top = u64::from(f.reference.as_ref().is_some_and(Reference::is_top));
    let mut seq_id = fi
        .get_i64(keys::MAX_SEQ_ID_KEY)
        .map_or(0, |s| s.max(0) as u64);
    let bulk_time = fi.get_i64(keys::BULKLOAD_TIMESTAMP);
    let bulk = f.name.contains("SeqId_") || bulk_time.is_some();
    if bulk {
        if let Some(s) = super::names::bulkload_seq_id(&f.name) {
            seq_id = s;
        }
    }
    seq_id += top;
    let skip_reset = fi.get_bool(SKIP_RESET_SEQ_ID).unwrap_or(false);
    let read_seq_id = if bulk && !skip_reset {
        seq_id
    } else {
        CELL_SEQ_IDS
    };
    let order = (
        seq_id,
        std::cmp::Reverse(f.size),
        bulk_time.unwrap_or(0),
        f.name.clone(),
    );
    Ok(OpenedStoreFile {
        reader: Arc::new(reader),
        seq_id,
        read_seq_id,
        order,
    })
}

/// Reads every cell of one store file, in file order, as HBase's reader returns them (no
/// merging, no delete or version processing); `visit` gets each.
pub fn for_each_cell(
    f: &OpenedStoreFile,
    visit: &mut dyn FnMut(&hfkit_format::cell::CellRef<'_>),
) -> Result<u64> {
    let path = f.reader.path().map(Path::to_path_buf).unwrap_or_default();
    let mut scanner = f.reader.scanner().map_err(|source| HBaseError::Format {
        path: path.clone(),
        source,
    })?;
    let mut n = 0;
    while let Some(mut c) = scanner.next().map_err(|source| HBaseError::Format {
        path: path.clone(),
        source,
    })? {
        if f.read_seq_id != CELL_SEQ_IDS {
            c.seq_id = f.read_seq_id;
        }
        visit(&c);
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::TableDescriptor;
    use crate::region::RegionInfo;
    use hfkit_format::reader::HalfRange;
    use hfkit_table::TableName;

    fn region(start: &str, end: &str, id: u64) -> RegionManifest {
        RegionManifest {
            info: RegionInfo {
                table: TableName::parse("t").unwrap(),
                start_key: start.as_bytes().to_vec(),
                end_key: end.as_bytes().to_vec(),
                region_id: id,
                offline: false,
                split: false,
                replica_id: 0,
            },
            families: Vec::new(),
            live: true,
        }
    }

    /// Split daughters' references split at their bound; a merged region's top references at
    /// each (listed) parent's start key, or within the region when the parent is not listed.
    #[test]
    fn split_keys_are_checked_against_the_region_bounds() {
        let (a, b) = (region("a", "m", 1), region("m", "z", 1));
        let merged = region("a", "z", 2);
        let m = Manifest {
            root: PathBuf::from("/r"),
            remote: None,
            descriptor: TableDescriptor::from_families(TableName::parse("t").unwrap(), &[]),
            regions: vec![a.clone(), b.clone(), merged.clone()],
            source: Source::Table {
                dir: PathBuf::from("/r/data/default/t"),
            },
        };
        let check = |r: &RegionManifest, parent: &RegionManifest, row: &str, range| {
            let reference = Reference::at_row(row.as_bytes(), range);
            m.check_split_key(r, &parent.info.encoded_name(), &reference)
                .map_err(|e| e.to_string())
        };
        // b and a as daughters of `merged` (a split parent here).
        assert!(check(&b, &merged, "m", HalfRange::Top).is_ok());
        assert!(check(&a, &merged, "m", HalfRange::Bottom).is_ok());
        assert_eq!(
            check(&b, &merged, "n", HalfRange::Top).unwrap_err(),
            "top reference split at 'n', but the region's start key is 'm'"
        );
        assert_eq!(
            check(&a, &merged, "l", HalfRange::Bottom).unwrap_err(),
            "bottom reference split at 'l', but the region's end key is 'm'"
        );
        // `merged` as the merge of a and b.
        assert!(check(&merged, &a, "a", HalfRange::Top).is_ok());
        assert!(check(&merged, &b, "m", HalfRange::Top).is_ok());
        assert_eq!(
            check(&merged, &b, "n", HalfRange::Top).unwrap_err(),
            "top reference split at 'n', but the merged parent's start key is 'm'"
        );
        // A parent the manifest does not list: within the region.
        let unlisted = region("q", "z", 1);
        assert!(check(&merged, &unlisted, "q", HalfRange::Top).is_ok());
        assert!(check(&b, &unlisted, "zz", HalfRange::Top).is_err());
    }
}
