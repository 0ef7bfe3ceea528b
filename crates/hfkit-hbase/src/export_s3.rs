//! An hfkit table exported as an HBase snapshot into an HBase root on object storage
//! (`hbase.rootdir` on S3), without renames: the export of [`super::export`] is made into a
//! local staging root, then its objects are written in an order that keeps HBase's view
//! whole. Spec: `formats/hbase-layout.md` §"Export into a root on object storage".
//!
//! ```text
//! .hbase-snapshot/.tmp/hfkit-export-<name>.<32 hex>   1. the record: host, pid, the keys to create
//! archive/data/<ns>/<table>/<region>/<family>/<file>  2. the store files not there yet
//! .hbase-snapshot/<name>/data.manifest                3. the manifest
//! .hbase-snapshot/<name>/.snapshotinfo                4. the description, create-only: visible
//! (the record deleted)                                5. done
//! ```
//!
//! HBase lists a snapshot by its `.snapshotinfo`, written last: until then no snapshot names
//! the new archive files (HBase's cleaner may remove them, as it removes what a failed
//! `ExportSnapshot` left). A failed export deletes what it created; a killed one leaves its
//! record, and the next export into the root deletes the keys the record lists, except those
//! a completed snapshot names, when the record's process is gone: on this host, when no
//! process has its pid; from another host, once the record is older than
//! [`super::owner::FOREIGN_RECORD_SECONDS`] by the store's clock.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hfkit_storage::{store_for, Location, PutCondition, StorageError, Store};
use hfkit_table::directory::Table;

use super::export::{export_snapshot, ExportOptions, ExportReport, STAGING_PREFIX};
use super::names::{is_hfile_name, ARCHIVE_DIR};
use super::owner::{owner_line, record_owner_gone, storage, store_clock};
use super::snapshot::{DATA_MANIFEST_FILE, SNAPSHOT_DIR, SNAPSHOT_INFO_FILE};
use super::{HBaseError, HBaseRoot, Result};

/// The test hook's variable ([`super::pause_for_tests`]; phase `uploaded`).
const EXPORT_PAUSE_VAR: &str = "HFKIT_TEST_EXPORT_PAUSE";

/// Exports `t` as snapshot `opts.name` into the root at `url`, staging locally in `scratch`
/// (an empty directory of the caller's). See the module's documentation.
pub fn export_snapshot_to(
    t: &Table,
    url: &Location,
    opts: &ExportOptions,
    scratch: &Path,
) -> Result<ExportReport> {
    let store = store_for(url).map_err(storage)?;
    let snap = url.join(&format!("{SNAPSHOT_DIR}/{}", opts.name));
    let exists = |store: &Store| -> Result<bool> {
        Ok(store
            .head(&snap.join(SNAPSHOT_INFO_FILE))
            .map_err(storage)?
            .is_some())
    };
    if exists(&store)? {
        return Err(HBaseError::Invalid(format!(
            "{url}: snapshot '{}' already exists",
            opts.name
        )));
    }
    recover_killed_exports(&store, url, scratch)?;
    // 0. The export, made locally.
    let local = scratch.join("root");
    let mut report = export_snapshot(t, &local, opts)?;
    let mut archive = Vec::new();
    let staged = Store::local()
        .list(&Location::Local(local.join(ARCHIVE_DIR)))
        .map_err(storage)?;
    for f in staged.iter().filter_map(|o| o.location.local_path()) {
        let f = f.to_path_buf();
        let rel = rel_key(&local, &f)?;
        let object = url.join(&rel);
        match store.head(&object).map_err(storage)? {
            Some(_) => {
                // An earlier export's copy: the same bytes, or the export fails.
                let there = store.read(&object).map_err(storage)?;
                let here = std::fs::read(&f).map_err(|e| HBaseError::io(&f, e))?;
                if there != here {
                    return Err(HBaseError::Invalid(format!(
                        "{object}: exists in the archive with other bytes than {}",
                        f.display()
                    )));
                }
            }
            None => archive.push((f, object)),
        }
    }
    report.files_present = report.files - archive.len();
    // 1. The record of what this export creates.
    let record = url.join(&format!(
        "{SNAPSHOT_DIR}/.tmp/{STAGING_PREFIX}{}.{}",
        opts.name,
        hfkit_table::directory::unique_hex()
    ));
    let snapshot_keys = [snap.join(DATA_MANIFEST_FILE), snap.join(SNAPSHOT_INFO_FILE)];
    let mut text = owner_line();
    for o in archive.iter().map(|(_, o)| o).chain(&snapshot_keys) {
        text.push_str(&format!("{}\n", o.relative_to(url).unwrap_or_default()));
    }
    store
        .put(&record, text.into_bytes(), PutCondition::CreateOnly)
        .map_err(storage)?;
    let mut created: Vec<Location> = Vec::new();
    let result = (|| -> Result<()> {
        // 2. The store files.
        hfkit_table::progress::phase(
            "uploading",
            hfkit_table::progress::Unit::Files,
            archive.len() as u64,
        );
        for (i, (f, object)) in archive.iter().enumerate() {
            hfkit_table::check_interrupt()?;
            let mut up = store.upload(object, 8 << 20).map_err(storage)?;
            let mut file = std::fs::File::open(f).map_err(|e| HBaseError::io(f, e))?;
            std::io::copy(&mut file, &mut up).map_err(|e| HBaseError::io(f, e))?;
            up.complete().map_err(storage)?;
            created.push(object.clone());
            hfkit_table::progress::done(1);
            super::pause_for_tests(EXPORT_PAUSE_VAR, "uploaded", i + 1);
        }
        // 3. The manifest, 4. the description: the snapshot appears (unless a stop was asked).
        hfkit_table::check_interrupt()?;
        let local_snap = local.join(SNAPSHOT_DIR).join(&opts.name);
        for (name, cond) in [
            (DATA_MANIFEST_FILE, PutCondition::Overwrite),
            (SNAPSHOT_INFO_FILE, PutCondition::CreateOnly),
        ] {
            let p = local_snap.join(name);
            let bytes = std::fs::read(&p).map_err(|e| HBaseError::io(&p, e))?;
            let object = snap.join(name);
            store.put(&object, bytes, cond).map_err(|e| match e {
                StorageError::AlreadyExists { .. } => HBaseError::Invalid(format!(
                    "{url}: snapshot '{}' was made meanwhile",
                    opts.name
                )),
                e => storage(e),
            })?;
            created.push(object);
        }
        Ok(())
    })();
    if let Err(e) = result {
        // Not visible: nothing this export created may stay (the manifest included, unless
        // another export's description now stands beside it).
        if !exists(&store).unwrap_or(true) {
            for o in &created {
                let _ = store.delete(o);
            }
        } else {
            for o in created
                .iter()
                .filter(|o| o.file_name() != DATA_MANIFEST_FILE)
            {
                let _ = store.delete(o);
            }
        }
        let _ = store.delete(&record);
        return Err(e);
    }
    // 5. Done.
    store.delete(&record).map_err(storage)?;
    report.snapshot_dir = PathBuf::from(snap.to_string());
    Ok(report)
}

/// `f`'s path below `base`, `/`-separated.
fn rel_key(base: &Path, f: &Path) -> Result<String> {
    f.strip_prefix(base)
        .map(|r| r.to_string_lossy().replace('\\', "/"))
        .map_err(|_| {
            HBaseError::Invalid(format!("{} is not under {}", f.display(), base.display()))
        })
}

/// Removes what killed exports into the root at `url` left: for each record whose process is
/// gone (see the module's documentation), the keys it lists that no completed snapshot names,
/// then the record. `scratch` holds a mirror of the root's small files to find the names.
/// Returns how many records it cleaned up.
pub fn recover_killed_exports(store: &Store, url: &Location, scratch: &Path) -> Result<usize> {
    let working = url.join(&format!("{SNAPSHOT_DIR}/.tmp"));
    let records: Vec<_> = store
        .list(&working)
        .map_err(storage)?
        .into_iter()
        .filter(|o| o.location.file_name().starts_with(STAGING_PREFIX))
        .collect();
    if records.is_empty() {
        return Ok(0);
    }
    let now = store_clock(store, &working)?;
    let mut dead = Vec::new();
    for r in records {
        let text = String::from_utf8_lossy(&store.read(&r.location).map_err(storage)?).into_owned();
        let gone = record_owner_gone(&text, r.last_modified, now);
        if gone {
            let keys: Vec<String> = text.lines().skip(1).map(str::to_string).collect();
            dead.push((r.location, keys));
        }
    }
    if dead.is_empty() {
        return Ok(0);
    }
    let named = named_by_snapshots(url, &scratch.join("names"))?;
    for (record, keys) in &dead {
        // Checked before anything is deleted: a record names keys of the archive or of a
        // snapshot's directory only.
        if let Some(k) = keys.iter().find(|k| !k.is_empty() && !deletable(k)) {
            return Err(HBaseError::Invalid(format!(
                "{record}: names '{k}', outside the archive and the snapshots' directories; \
                 nothing deleted"
            )));
        }
        for k in keys {
            if k.is_empty() || named.contains(k) {
                continue;
            }
            // A description left by a killed export is not its snapshot's unless it wrote
            // it: it is listed, and its manifest goes with it.
            store.delete(&url.join(k)).map_err(storage)?;
        }
        store.delete(record).map_err(storage)?;
    }
    Ok(dead.len())
}

/// Whether the key `k` (below the root) is one an export creates: under `archive/` or
/// `.hbase-snapshot/<name>/`, without empty, `.` or `..` parts.
fn deletable(k: &str) -> bool {
    let parts: Vec<&str> = k.split('/').collect();
    let plain = parts
        .iter()
        .all(|p| !p.is_empty() && *p != "." && *p != "..");
    let top = match parts.first() {
        Some(&ARCHIVE_DIR) => parts.len() > 1,
        Some(&SNAPSHOT_DIR) => parts.len() > 2 && parts[1] != ".tmp",
        _ => false,
    };
    plain && top
}

/// The keys (below `url`) of the archive files and snapshot files the completed snapshots of
/// the root name; `dir` an empty scratch directory for the root's mirror.
fn named_by_snapshots(url: &Location, dir: &Path) -> Result<BTreeSet<String>> {
    std::fs::create_dir_all(dir).map_err(|e| HBaseError::io(dir, e))?;
    super::remote::mirror_root(url, dir)?;
    let mut named = BTreeSet::new();
    if !dir.join(super::names::DATA_DIR).is_dir() && !dir.join(SNAPSHOT_DIR).is_dir() {
        return Ok(named);
    }
    let root = HBaseRoot::open(dir)?;
    for s in root.snapshots()? {
        for f in [DATA_MANIFEST_FILE, SNAPSHOT_INFO_FILE] {
            named.insert(format!("{SNAPSHOT_DIR}/{}/{f}", s.name));
        }
        let m = root.snapshot(&s.name)?;
        let archive = super::names::archive_table_dir(Path::new(""), m.table());
        for r in &m.regions {
            for ff in &r.families {
                let family = String::from_utf8_lossy(&ff.family);
                for f in ff.files.iter().filter(|f| is_hfile_name(&f.name)) {
                    let p = archive
                        .join(r.info.encoded_name())
                        .join(family.as_ref())
                        .join(&f.name);
                    named.insert(p.to_string_lossy().replace('\\', "/"));
                }
            }
        }
    }
    Ok(named)
}

#[cfg(test)]
mod tests {
    use super::deletable;

    /// A killed export's record is trusted for the keys an export creates only.
    #[test]
    fn a_record_deletes_archive_and_snapshot_keys_only() {
        for k in [
            "archive/data/default/t/0123/cf/abc_SeqId_1_",
            ".hbase-snapshot/s1/data.manifest",
            ".hbase-snapshot/s1/.snapshotinfo",
        ] {
            assert!(deletable(k), "{k}");
        }
        for k in [
            "data/default/t/0123/cf/abc",
            "hbase.version",
            "archive",
            "archive/../data/x",
            "archive//x",
            ".hbase-snapshot/s1",
            ".hbase-snapshot/.tmp/hfkit-export-s1.0123",
            "./archive/x",
        ] {
            assert!(!deletable(k), "{k}");
        }
    }
}
