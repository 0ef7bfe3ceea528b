//! `hfkit import --out s3://...` (and `--index-out s3://...`): the import writes into a local
//! staging directory of its own (under `--temp-dir`, else the system's), removed whatever the
//! outcome, and [`RemoteOut::publish`] uploads it when the import has succeeded
//! (`pipeline::import::remote_output`). Spec: `formats/import.md` §"Output on object storage".

use std::path::{Path, PathBuf};

use super::error::CliError;
use crate::pipeline::import::remote_output::{check_empty, publish, PublishReport, PART_SIZE};
use crate::storage::Location;
use crate::table::staging::OwnedDir;

/// Staging directory name prefix (swept like other staging directories of dead processes).
const PREFIX: &str = "hfkit-remote-out-";

/// The remote destinations of one import and their local stand-ins.
pub(super) struct RemoteOut {
    staged: OwnedDir,
    out: Option<Location>,
    index_root: Option<Location>,
}

fn remote(p: Option<&Path>) -> Result<Option<Location>, CliError> {
    match p {
        Some(p) if Location::is_remote_path(p) => Location::from_path(p)
            .map(Some)
            .map_err(|e| CliError::usage(e.to_string())),
        _ => Ok(None),
    }
}

impl RemoteOut {
    /// `None` when `--out` and `--index-out` are local. Refuses a destination already holding
    /// output for `families` before anything is imported.
    pub(super) fn prepare(
        out: Option<&Path>,
        index_out: Option<&Path>,
        temp_dir: Option<&Path>,
        families: &[String],
    ) -> Result<Option<RemoteOut>, CliError> {
        let (out, index_root) = (remote(out)?, remote(index_out)?);
        if out.is_none() && index_root.is_none() {
            return Ok(None);
        }
        if let Some(o) = &out {
            check_empty(o, families).map_err(|e| CliError::failure(e.to_string()))?;
        }
        let parent = temp_dir.map_or_else(std::env::temp_dir, Path::to_path_buf);
        crate::table::staging::sweep(&parent, PREFIX);
        let staged = OwnedDir::create(&parent, PREFIX)
            .map_err(|e| CliError::failure(format!("{}: {e}", parent.display())))?;
        Ok(Some(RemoteOut {
            staged,
            out,
            index_root,
        }))
    }

    /// Where the import writes what goes to `--out` (`given` when that is local).
    pub(super) fn local_out(&self, given: &Path) -> PathBuf {
        match &self.out {
            Some(_) => self.staged.path().join("out"),
            None => given.to_path_buf(),
        }
    }

    /// Where the import writes what goes to `--index-out` (`given` when that is local).
    pub(super) fn local_index_root(&self, given: &Path) -> PathBuf {
        match &self.index_root {
            Some(_) => self.staged.path().join("indexes"),
            None => given.to_path_buf(),
        }
    }

    /// Uploads the staged output, all or nothing; the staging directory goes either way.
    pub(super) fn publish(self) -> Result<PublishReport, CliError> {
        let mut trees = Vec::new();
        if let Some(o) = &self.out {
            trees.push((self.staged.path().join("out"), o.clone()));
        }
        if let Some(i) = &self.index_root {
            trees.push((self.staged.path().join("indexes"), i.clone()));
        }
        trees.retain(|(local, _)| local.exists());
        publish(&trees, PART_SIZE)
            .map_err(|e| CliError::failure(format!("publishing the output: {e}")))
    }
}
