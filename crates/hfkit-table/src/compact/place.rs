//! The outputs of a compaction put in place: the staged files renamed into `data/` and fsynced,
//! and the manifest after the swap, every input replaced by its store's output, for the one
//! manifest commit. Spec: `formats/table.md` §"Compaction", §"Steps and crash safety".

use std::path::PathBuf;

use super::rewrite::Staged;
use super::select::Plan;
use crate::directory::{Table, DATA_DIR};
use crate::manifest::{Manifest, StoreFileEntry};
use crate::TableError;

impl Table {
    /// Renames staged outputs into `data/<region>/<family>/` and fsyncs the directories. On
    /// failure the outputs already placed are removed.
    pub(super) fn place(&self, staged: &[Staged]) -> Result<Vec<PathBuf>, TableError> {
        let mut placed = Vec::new();
        let result = self.place_into(staged, &mut placed);
        if result.is_err() {
            for p in &placed {
                let _ = std::fs::remove_file(p);
            }
        }
        result.map(|()| placed)
    }

    /// [`Table::place`]; paths are pushed to `placed` as they are made.
    fn place_into(&self, staged: &[Staged], placed: &mut Vec<PathBuf>) -> Result<(), TableError> {
        let fs = self.fs();
        let mut synced = std::collections::BTreeSet::new();
        for s in staged {
            let fam_dir = self
                .dir()
                .join(DATA_DIR)
                .join(&s.entry.region)
                .join(&s.entry.family);
            fs.create_dir_all(&fam_dir)
                .map_err(|e| TableError::io(&fam_dir, e))?;
            let dest = fam_dir.join(&s.entry.name);
            fs.rename(&s.path, &dest)
                .map_err(|e| TableError::io(&dest, e))?;
            placed.push(dest);
            synced.insert(fam_dir);
        }
        let mut parents = std::collections::BTreeSet::new();
        for d in &synced {
            fs.sync_dir(d).map_err(|e| TableError::io(d, e))?;
            if let Some(p) = d.parent() {
                parents.insert(p.to_path_buf());
            }
        }
        for d in parents {
            fs.sync_dir(&d).map_err(|e| TableError::io(&d, e))?;
        }
        let data = self.dir().join(DATA_DIR);
        if !staged.is_empty() {
            fs.sync_dir(&data).map_err(|e| TableError::io(&data, e))?;
        }
        Ok(())
    }
}

/// The manifest after the swap: each plan's inputs removed, its output (if any) at the place
/// of its oldest input, so that per store the files stay in sequence-id order.
pub(super) fn next_manifest(m: &Manifest, plans: &[Plan], staged: &[Staged]) -> Manifest {
    let mut next = m.clone();
    next.version += 1;
    let mut replace: std::collections::HashMap<usize, Option<StoreFileEntry>> =
        std::collections::HashMap::new();
    for (pi, plan) in plans.iter().enumerate() {
        let out = staged
            .iter()
            .find(|s| s.plan_index == pi)
            .map(|s| s.entry.clone());
        let first = plan.inputs.iter().copied().min();
        for &i in &plan.inputs {
            replace.insert(i, None);
        }
        if let Some(f) = first {
            replace.insert(f, out);
        }
    }
    next.files = m
        .files
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match replace.get(&i) {
            None => Some(e.clone()),
            Some(out) => out.clone(),
        })
        .collect();
    next
}
