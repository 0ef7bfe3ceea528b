//! Stage 2 of a distributed import (`formats/python.md` §"Bulk load of files"): the *run
//! files* that stage 1 wrote for one region of one table (each split's cells of the region, a
//! file per family, in HBase order, from an import with [`ImportOptions::run_files`]) merged
//! into the region's final HFiles, as one import of every split in order would have written
//! them: the family's compression, encoding and Bloom filter, rolled at the file size limit,
//! and of cells with the same coordinates (row, family, qualifier, timestamp) the one from the
//! latest split kept, as an import keeps the last record read (`import.md` §"Sort and spill").
//!
//! The merge is the read path's k-way merge ([`hfkit_read::merge::MergeScanner`]), each run
//! given its split's position as sequence id, so that of equal cells the latest split's
//! comes first.

use std::path::{Path, PathBuf};

use hfkit_format::bytes::equal_bytes;
use hfkit_format::cell::{Cell, CellRef, CellTypeOwned};
use hfkit_format::reader::HFileReader;
use hfkit_read::merge::MergeScanner;
use hfkit_table::FamilySchema;

use super::outputs::output_family;
use super::ImportOptions;
use crate::error::ImportError;
use crate::output::{BulkOutput, OutputFamily, OutputReport};

/// One run file: a split's cells of one region and family.
#[derive(Clone, Debug)]
pub struct RunFile {
    pub path: PathBuf,
    pub family: String,
    /// The split's position in the input: a later split's cell wins.
    pub order: u64,
}

/// Merges `runs` (every run file of one region of a table whose families are `families` and
/// whose regions `split_keys` bound) into `out_dir` (`out_dir/<family>/<hfile>`, which must not
/// hold HFiles yet), with `opts`' import time, file size limit and flags. Returns what it
/// wrote; on an error nothing is left in `out_dir`.
pub fn merge_runs(
    families: &[FamilySchema],
    split_keys: Vec<Vec<u8>>,
    runs: &[RunFile],
    out_dir: &Path,
    opts: &ImportOptions,
) -> Result<OutputReport, ImportError> {
    let with_runs: Vec<&FamilySchema> = families
        .iter()
        .filter(|f| runs.iter().any(|r| r.family == f.name))
        .collect();
    if let Some(r) = runs
        .iter()
        .find(|r| !families.iter().any(|f| f.name == r.family))
    {
        return Err(ImportError::Invalid(format!(
            "{}: run file of family {}, which the table does not have",
            r.path.display(),
            r.family
        )));
    }
    let out_families: Vec<OutputFamily> = with_runs
        .iter()
        .map(|f| output_family(f, opts))
        .collect::<Result<_, _>>()?;
    let mut out = BulkOutput::new(out_dir, out_families, split_keys, opts.max_file_size)?;
    for (i, f) in with_runs.iter().enumerate() {
        let mut mine: Vec<&RunFile> = runs.iter().filter(|r| r.family == f.name).collect();
        mine.sort_by_key(|r| r.order);
        let readers = mine
            .iter()
            .map(|r| {
                HFileReader::open(&r.path)
                    .map_err(|e| ImportError::Invalid(format!("{}: {e}", r.path.display())))
            })
            .collect::<Result<Vec<_>, _>>()?;
        merge_family(&readers, &mine, i, &mut out)?;
    }
    Ok(out.finish()?)
}

/// The merge of one family's runs into output family `family`.
fn merge_family(
    readers: &[HFileReader],
    runs: &[&RunFile],
    family: usize,
    out: &mut BulkOutput,
) -> Result<(), ImportError> {
    let read_error = |e: hfkit_read::ReadError| ImportError::Invalid(e.to_string());
    let mut merge = MergeScanner::new(readers.iter().zip(runs).map(|(r, run)| (r, run.order + 1)))
        .map_err(read_error)?;
    merge.seek_to_first().map_err(read_error)?;
    // The cell of the current coordinates with the highest sequence id (latest split) so far.
    let mut held = Cell::default();
    let mut held_seq: Option<u64> = None;
    let mut batch = 0u32;
    while let Some(c) = merge.peek() {
        match held_seq {
            Some(seq) if same_coordinates(&held, &c) => {
                if c.seq_id > seq {
                    hold(&mut held, &c);
                    held_seq = Some(c.seq_id);
                }
            }
            Some(_) => {
                out.append(family, &held.as_ref())?;
                hold(&mut held, &c);
                held_seq = Some(c.seq_id);
            }
            None => {
                hold(&mut held, &c);
                held_seq = Some(c.seq_id);
            }
        }
        merge.advance().map_err(read_error)?;
        batch += 1;
        if batch == 1 << 16 {
            ImportError::check_interrupt()?;
            batch = 0;
        }
    }
    if held_seq.is_some() {
        out.append(family, &held.as_ref())?;
    }
    Ok(())
}

fn same_coordinates(a: &Cell, b: &CellRef<'_>) -> bool {
    a.timestamp == b.timestamp
        && equal_bytes(&a.row, b.row)
        && equal_bytes(&a.qualifier, b.qualifier)
        && equal_bytes(&a.family, b.family)
}

/// Copies `c` into `held`, reusing its buffers; sequence id 0, as bulk-loaded cells have.
fn hold(held: &mut Cell, c: &CellRef<'_>) {
    let copy = |to: &mut Vec<u8>, from: &[u8]| {
        to.clear();
        to.extend_from_slice(from);
    };
    copy(&mut held.row, c.row);
    copy(&mut held.family, c.family);
    copy(&mut held.qualifier, c.qualifier);
    copy(&mut held.value, c.value);
    copy(&mut held.tags, c.tags);
    held.timestamp = c.timestamp;
    held.cell_type = CellTypeOwned(c.cell_type);
    held.seq_id = 0;
}
