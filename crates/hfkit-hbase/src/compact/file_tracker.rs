//! A FILE store-file-tracker store's commit in `hbase compact` (`super`): the intent record
//! naming an output moved in but not listed yet, the undoing of a killed run's unlisted
//! output, the inputs a killed run committed away, and the new `.filelist` track file as
//! HBase's `StoreFileListFile` writes it. Spec: `formats/hbase-layout.md` §"Offline
//! compaction".

use std::path::{Path, PathBuf};

use super::target::{Target, OUTPUT_PREFIX};
use crate::proto;
use crate::store::{OpenedStoreFile, ResolvedFile};
use crate::{HBaseError, Result};

/// What a FILE-tracker store's intent record starts with (then the output's name): an own
/// output's name under the region's `.tmp/<family>/`, holding text, not an HFile.
pub(super) const INTENT_MAGIC: &str = "hfkit-compact moving ";

/// Records, under `tmp_dir`, that the output `name` is being moved into its FILE-tracker store.
pub(super) fn write_intent(target: &Target, tmp_dir: &Path, name: &str) -> Result<PathBuf> {
    use std::io::Write;
    std::fs::create_dir_all(tmp_dir).map_err(|e| HBaseError::io(tmp_dir, e))?;
    let p = tmp_dir.join(format!(
        "{OUTPUT_PREFIX}{}",
        hfkit_table::directory::unique_hex()
    ));
    let mut f = std::fs::File::create(&p).map_err(|e| HBaseError::io(&p, e))?;
    f.write_all(format!("{INTENT_MAGIC}{name}\n").as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| HBaseError::io(&p, e))?;
    // On object storage, the mirror's record put as the root's.
    target.place(&p, &p)?;
    target.sync_dir(tmp_dir)?;
    Ok(p)
}

/// Before a killed run's leftovers go: each intent record among them whose output is in its
/// store directory but not in the store's list (the run died between the move and the list)
/// has that output removed; readers never saw it.
pub(super) fn undo_unlisted_moves(target: &Target, leftovers: &[PathBuf]) -> Result<()> {
    for f in leftovers {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue; // an HFile: a staged output
        };
        let Some(name) = text.strip_prefix(INTENT_MAGIC).map(str::trim) else {
            continue;
        };
        // The record is <region>/.tmp/<family>/<record>; the store <region>/<family>.
        let store = f.parent().and_then(|family_tmp| {
            let family = family_tmp.file_name()?;
            Some(family_tmp.parent()?.parent()?.join(family))
        });
        let Some(store) = store else {
            continue;
        };
        if !crate::names::is_hfile_name(name) {
            return Err(HBaseError::corrupt(
                f,
                format!("names no store file: '{name}'"),
            ));
        }
        let listed = crate::manifest::load_filelist(&store)?
            .is_some_and(|(_, l)| l.store_file.iter().any(|e| e.name == name));
        let output = store.join(name);
        if !listed && output.is_file() {
            target.remove(&output)?;
        }
    }
    Ok(())
}

/// The files of the FILE-tracker store at `store` that a listed file's compaction event names
/// and the list no longer does: inputs a killed compaction committed away but did not archive.
pub(super) fn unlisted_inputs(
    store: &Path,
    ff: &crate::manifest::FamilyFiles,
    files: &[(ResolvedFile, OpenedStoreFile)],
) -> Result<Vec<String>> {
    let named = crate::store::compacted_away(files.iter().map(|(r, o)| (r, &*o.reader)))?;
    let mut out = Vec::new();
    for name in named {
        if !ff.files.iter().any(|f| f.name == name) && store.join(&name).is_file() {
            out.push(name);
        }
    }
    Ok(out)
}

/// Replaces the FILE tracker's list of the store at `store` (HBase's `StoreFileListFile.update`
/// after a load): the current list without `inputs`, with `output` (name, size), as the new
/// track-file group `.filelist/f1.<seq>` (`seq` = the current clock, past the loaded group's),
/// `timestamp` past the loaded list's, version 2. Written whole under `tmp_dir` (as an output
/// of this compaction, so a killed run's is removed), fsynced and renamed in: a reader sees the
/// old list or the new one. The older groups are then deleted, as HBase's next load does.
pub(super) fn commit_filelist(
    target: &Target,
    store: &Path,
    tmp_dir: &Path,
    inputs: &[String],
    output: Option<(&str, u64)>,
) -> Result<()> {
    use crate::manifest::{filelist_file_bytes, load_filelist, FILELIST_DIR};
    let (seq, list) = load_filelist(store)?
        .ok_or_else(|| HBaseError::corrupt(store, "the FILE tracker's store has no list"))?;
    let mut entries: Vec<proto::StoreFileEntry> = list
        .store_file
        .into_iter()
        .filter(|e| !inputs.contains(&e.name))
        .collect();
    if let Some((name, size)) = output {
        entries.push(proto::StoreFileEntry {
            name: name.to_string(),
            size,
            reference: None,
        });
    }
    let clock = hfkit_format::cell::now_ms().max(0) as u64;
    let new_seq = clock.max(seq + 1);
    let next = proto::StoreFileList {
        timestamp: clock.max(list.timestamp + 1),
        store_file: entries,
        version: Some(2),
    };
    std::fs::create_dir_all(tmp_dir).map_err(|e| HBaseError::io(tmp_dir, e))?;
    let tmp = tmp_dir.join(format!(
        "{OUTPUT_PREFIX}{}",
        hfkit_table::directory::unique_hex()
    ));
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp).map_err(|e| HBaseError::io(&tmp, e))?;
        f.write_all(&filelist_file_bytes(&next))
            .and_then(|()| f.sync_all())
            .map_err(|e| HBaseError::io(&tmp, e))?;
    }
    let lists = store.join(FILELIST_DIR);
    let to = lists.join(format!("f1.{new_seq}"));
    target.place(&tmp, &to)?;
    target.sync_dir(&lists)?;
    for e in std::fs::read_dir(&lists).map_err(|e| HBaseError::io(&lists, e))? {
        let e = e.map_err(|err| HBaseError::io(&lists, err))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let older = name
            .split_once('.')
            .and_then(|(_, s)| s.parse::<u64>().ok())
            .is_none_or(|s| s < new_seq);
        if (name.starts_with("f1") || name.starts_with("f2")) && older {
            let _ = target.remove(&e.path());
        }
    }
    target.sync_dir(&lists)
}
