//! MOB (medium object) cells resolved as HBase's `HMobStore.resolve` resolves them: a MOB
//! family's store files hold *reference cells* (the MOB_REFERENCE tag, type 5; a value of a
//! 4-byte length and the MOB file's name; the MOB_TABLE_NAME tag, type 6, naming the table
//! whose `mobdir/` holds the file, which a clone's references keep pointing at), and the cells
//! with their values live in the MOB files under `mobdir/data/<ns>/<table>/<MOB region>/
//! <family>/` (or `archive/` once archived). Reads of an HBase table or snapshot replace each
//! reference by the MOB file's cell of the same key: its value, tags and sequence id. Spec:
//! `formats/hbase-layout.md` §"MOB tables".

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::manifest::{FamilyFiles, Manifest, RegionManifest, Source, StoreFile};
use super::names::{HFileLink, DATA_DIR, MOB_DIR};
use super::region::RegionInfo;
use super::{HBaseError, Result};
use hfkit_format::cell::{Cell, CellRef};
use hfkit_format::reader::HFileReader;
use hfkit_storage::Location;
use hfkit_table::TableName;

/// `TagType.MOB_REFERENCE_TAG_TYPE`.
pub const MOB_REFERENCE_TAG: u8 = 5;
/// `TagType.MOB_TABLE_NAME_TAG_TYPE`.
pub const MOB_TABLE_NAME_TAG: u8 = 6;

/// The tags of a serialized tags area (each: u16 length of type and value, u8 type, value);
/// a malformed area ends the iteration.
pub fn tags(area: &[u8]) -> impl Iterator<Item = (u8, &[u8])> {
    let mut rest = area;
    std::iter::from_fn(move || {
        if rest.len() < 3 {
            return None;
        }
        let len = u16::from_be_bytes([rest[0], rest[1]]) as usize;
        if len == 0 || rest.len() < 2 + len {
            return None;
        }
        let (ty, value) = (rest[2], &rest[3..2 + len]);
        rest = &rest[2 + len..];
        Some((ty, value))
    })
}

/// Whether `cell` is a MOB reference cell with a valid value (`MobUtils.isMobReferenceCell`
/// and `hasValidMobRefCellValue`: the tag, and a value longer than its 4-byte length).
pub fn is_reference(cell: &CellRef<'_>) -> bool {
    cell.value.len() > 4 && tags(cell.tags).any(|(t, _)| t == MOB_REFERENCE_TAG)
}

/// Resolves the reference cells of one HBase table or snapshot (see the module's
/// documentation); MOB files opened once each.
pub struct MobResolver {
    root: PathBuf,
    remote: Option<Location>,
    table: TableName,
    families: BTreeSet<Vec<u8>>,
    open: Mutex<HashMap<PathBuf, Arc<HFileReader>>>,
    /// HBase's `empty.value.on.mobcell.miss` scan attribute: a reference that cannot be
    /// resolved reads as its own key with an empty value instead of failing.
    empty_on_miss: bool,
    /// The references read as empty values, and the first one's error.
    misses: Mutex<(u64, Option<String>)>,
}

impl MobResolver {
    /// The resolver of `m`'s MOB families (`IS_MOB => true`), `None` when it has none.
    pub fn of(m: &Manifest) -> Option<MobResolver> {
        let families: BTreeSet<Vec<u8>> = m
            .descriptor
            .families
            .iter()
            .filter(|f| {
                f.value("IS_MOB")
                    .is_some_and(|v| v.eq_ignore_ascii_case("true"))
            })
            .map(|f| f.name.clone())
            .collect();
        (!families.is_empty()).then(|| MobResolver {
            root: m.root.clone(),
            remote: m.remote.clone(),
            table: m.table().clone(),
            families,
            open: Mutex::new(HashMap::new()),
            empty_on_miss: false,
            misses: Mutex::new((0, None)),
        })
    }

    /// Resolves a reference whose MOB file is missing or damaged, or has no cell of its key,
    /// as HBase does under its `empty.value.on.mobcell.miss` scan attribute
    /// (`HMobStore.resolve`): the reference's key, type, tags and sequence id with an empty
    /// value. Counted ([`MobResolver::misses`]); never the default.
    pub fn empty_on_miss(mut self, yes: bool) -> MobResolver {
        self.empty_on_miss = yes;
        self
    }

    /// How many references were read as empty values, and the first one's error.
    pub fn misses(&self) -> (u64, Option<String>) {
        self.misses.lock().map(|m| m.clone()).unwrap_or((0, None))
    }

    /// Whether `family` is a MOB family.
    pub fn is_mob_family(&self, family: &[u8]) -> bool {
        self.families.contains(family)
    }

    /// The cell `cell` stands for: `None` when it is no reference cell of a MOB family (it is
    /// its own value), else the MOB file's cell of its key. A missing or unreadable MOB file,
    /// or one without the cell, is an error naming the reference and the file.
    pub fn resolve(&self, cell: &CellRef<'_>) -> Result<Option<Cell>> {
        if !self.families.contains(cell.family) || !is_reference(cell) {
            return Ok(None);
        }
        match self.resolve_reference(cell) {
            Err(e) if self.empty_on_miss => {
                if let Ok(mut m) = self.misses.lock() {
                    m.0 += 1;
                    m.1.get_or_insert_with(|| e.to_string());
                }
                let mut empty = cell.to_owned();
                empty.value.clear();
                Ok(Some(empty))
            }
            r => r.map(Some),
        }
    }

    /// The MOB file's cell of the reference `cell`'s key.
    fn resolve_reference(&self, cell: &CellRef<'_>) -> Result<Cell> {
        let what = || {
            format!(
                "MOB reference {}/{}:{}/{}",
                hfkit_table::to_string_binary(cell.row),
                String::from_utf8_lossy(cell.family),
                hfkit_table::to_string_binary(cell.qualifier),
                cell.timestamp
            )
        };
        let name = std::str::from_utf8(&cell.value[4..])
            .map_err(|_| HBaseError::Invalid(format!("{}: the file name is not text", what())))?;
        let table = match tags(cell.tags).find(|(t, _)| *t == MOB_TABLE_NAME_TAG) {
            Some((_, v)) => TableName::parse(&String::from_utf8_lossy(v))
                .map_err(|e| HBaseError::Invalid(format!("{}: {e}", what())))?,
            None => self.table.clone(),
        };
        let family = String::from_utf8_lossy(cell.family).into_owned();
        let link = HFileLink {
            table: table.clone(),
            region: RegionInfo::mob_region(&table).encoded_name(),
            hfile: name.to_string(),
        };
        let [_, archive, _, mob] = link.locations(&self.root, &family);
        let path = [&mob, &archive]
            .into_iter()
            .find(|p| p.is_file())
            .cloned()
            .ok_or_else(|| {
                HBaseError::corrupt(
                    &mob,
                    format!(
                        "{}: MOB file {name} missing (looked in {} and {})",
                        what(),
                        mob.display(),
                        archive.display()
                    ),
                )
            })?;
        let reader = self.reader(&path)?;
        let key = cell.key();
        let mut scanner = reader.scanner().map_err(|source| HBaseError::Format {
            path: path.clone(),
            source,
        })?;
        let found = scanner.seek(&key).map_err(|source| HBaseError::Format {
            path: path.clone(),
            source,
        })?;
        match found {
            Some(c) if c.key() == key => Ok(c.to_owned()),
            _ => Err(HBaseError::corrupt(
                &path,
                format!("{}: the MOB file has no cell of that key", what()),
            )),
        }
    }

    fn reader(&self, path: &PathBuf) -> Result<Arc<HFileReader>> {
        let mut open = self
            .open
            .lock()
            .map_err(|_| HBaseError::Invalid("the MOB file cache was poisoned".into()))?;
        if let Some(r) = open.get(path) {
            return Ok(r.clone());
        }
        let reader = match &self.remote {
            Some(url) => {
                let object = super::remote::object_of(url, &self.root, path)?;
                let len = std::fs::metadata(path)
                    .map_err(|e| HBaseError::io(path, e))?
                    .len();
                super::remote::open_object(&object, len, path)?
            }
            None => HFileReader::open(path).map_err(|source| HBaseError::Format {
                path: path.clone(),
                source,
            })?,
        };
        let reader = Arc::new(reader);
        open.insert(path.clone(), reader.clone());
        Ok(reader)
    }
}

/// A table's MOB region as a region of its manifest, as a snapshot lists it: for each MOB
/// family of `m` (a table), the files of `mobdir/data/<ns>/<table>/<MOB region>/<family>/`
/// (MOB files, or a clone's links to the original table's); never live. `None` for a snapshot
/// (its manifest lists its MOB region) or a table without MOB files.
pub fn table_mob_region(m: &Manifest) -> Result<Option<RegionManifest>> {
    if !matches!(m.source, Source::Table { .. }) {
        return Ok(None);
    }
    let Some(resolver) = MobResolver::of(m) else {
        return Ok(None);
    };
    let info = RegionInfo::mob_region(m.table());
    let region_dir = m
        .root
        .join(MOB_DIR)
        .join(DATA_DIR)
        .join(&m.table().namespace)
        .join(&m.table().qualifier)
        .join(info.encoded_name());
    let mut families = Vec::new();
    for family in &resolver.families {
        let dir = region_dir.join(String::from_utf8_lossy(family).as_ref());
        let mut files = Vec::new();
        match std::fs::read_dir(&dir) {
            Ok(entries) => {
                for e in entries {
                    let e = e.map_err(|err| HBaseError::io(&dir, err))?;
                    let name = e.file_name().to_string_lossy().into_owned();
                    if e.path().is_file() && !name.starts_with('.') {
                        files.push(StoreFile {
                            name,
                            reference: None,
                            file_size: None,
                        });
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(HBaseError::io(&dir, e)),
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        if !files.is_empty() {
            families.push(FamilyFiles {
                family: family.clone(),
                files,
            });
        }
    }
    Ok((!families.is_empty()).then_some(RegionManifest {
        info,
        families,
        live: false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_of_a_reference_cell() {
        // MOB_REFERENCE (empty), MOB_TABLE_NAME "m1", a user tag 65 "t".
        let area = [0, 1, 5, 0, 3, 6, b'm', b'1', 0, 2, 65, b't'];
        let v: Vec<(u8, &[u8])> = tags(&area).collect();
        assert_eq!(v, vec![(5, &b""[..]), (6, &b"m1"[..]), (65, &b"t"[..])]);
        // Cut short: the whole tags only.
        assert_eq!(tags(&area[..7]).count(), 1);
    }
}
