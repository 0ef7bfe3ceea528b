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

use std::cmp::Ordering;

use hfkit_format::bytes::equal_bytes;
use hfkit_format::cell::{Cell, CellRef, CellType, CellTypeOwned, KeyView};
use hfkit_format::reader::HFileReader;
use hfkit_read::merge::MergeScanner;
use hfkit_table::FamilySchema;

use super::options::ImportOptions;
use super::outputs::output_family;
use crate::error::ImportError;
use crate::import::output::{BulkOutput, OutputFamily, OutputReport};
use crate::import::retention::Retention;

/// One run file: a split's cells of one region and family.
#[derive(Clone, Debug)]
pub struct RunFile {
    pub path: PathBuf,
    pub family: String,
    /// The split's position in the input: a later split's cell wins.
    pub order: u64,
}

/// Bytes of records handed to the writer at once (as a lane's staging buffer).
const RECORD_BATCH: usize = 128 * 1024;

/// Merges `runs` (every run file of one region of a table whose families are `families` and
/// whose regions `split_keys` bound) into `out_dir` (`out_dir/<family>/<hfile>`, which must not
/// hold HFiles yet), with `opts`' import time, file size limit and flags. Returns what it
/// wrote; on an error nothing is left in `out_dir`.
pub fn merge_runs(
    families: &[FamilySchema],
    split_keys: Vec<Vec<u8>>,
    region: usize,
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
    if region > split_keys.len() {
        return Err(ImportError::Invalid(format!(
            "region {region}: the table has {} regions",
            split_keys.len() + 1
        )));
    }
    // Hidden cells are an import's warning, counted where the cells were read (stage 1):
    // the merge keeps every cell, and so writes through the lanes' record path.
    let out_families: Vec<OutputFamily> = with_runs
        .iter()
        .map(|f| {
            output_family(f, opts).map(|o| OutputFamily {
                retention: Retention::KEEP_ALL,
                ..o
            })
        })
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
        let mut store = StoreWriter::new(&mut out, i, region);
        match disjoint_order(&readers)? {
            Some(order) => concatenate(&readers, &order, &mut store)?,
            None => merge_family(&readers, &mine, &mut store)?,
        }
        store.flush()?;
    }
    Ok(out.finish()?)
}

/// When no two runs' cells share coordinates or interleave (each split's rows of the region
/// in a key range of their own: row keys that grow with the input, as lineitem's within a
/// salt bucket), the runs in key order; else `None`.
fn disjoint_order(readers: &[HFileReader]) -> Result<Option<Vec<usize>>, ImportError> {
    let fail = |r: &HFileReader, e: &dyn std::fmt::Display| {
        ImportError::Invalid(format!(
            "{}: {e}",
            r.path()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        ))
    };
    let mut bounds: Vec<(Cell, Vec<u8>, usize)> = Vec::new();
    for (i, r) in readers.iter().enumerate() {
        let mut s = r.scanner().map_err(|e| fail(r, &e))?;
        let Some(first) = s.next().map_err(|e| fail(r, &e))? else {
            continue;
        };
        let first = first.to_owned();
        let last = r.last_key().map(<[u8]>::to_vec).unwrap_or_default();
        bounds.push((first, last, i));
    }
    let mut ranges = Vec::new();
    for (first, last, _) in &bounds {
        match KeyView::parse(last) {
            Some(l) => ranges.push((KeyView::of(&first.as_ref()), l)),
            None => return Ok(None),
        }
    }
    Ok(disjoint(&mut ranges).map(|order| order.into_iter().map(|i| bounds[i].2).collect()))
}

/// When the key ranges `(first, last)` (of runs, or files) neither interleave nor share a
/// cell's coordinates at their ends, their positions in key order; else `None`.
pub fn disjoint(ranges: &mut [(KeyView<'_>, KeyView<'_>)]) -> Option<Vec<usize>> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by(|&a, &b| compare_coordinates(&ranges[a].0, &ranges[b].0));
    for w in order.windows(2) {
        if compare_coordinates(&ranges[w[0]].1, &ranges[w[1]].0) != Ordering::Less {
            return None;
        }
    }
    Some(order)
}

/// HBase's order of cells on their coordinates (row, family, qualifier, timestamp ↓), the
/// type left out: two cells equal here are one import's duplicates.
fn compare_coordinates(a: &KeyView<'_>, b: &KeyView<'_>) -> Ordering {
    a.row
        .cmp(b.row)
        .then_with(|| a.family.cmp(b.family))
        .then_with(|| a.qualifier.cmp(b.qualifier))
        .then_with(|| b.timestamp.cmp(&a.timestamp))
}

/// The runs' cells, run after run in `order`.
fn concatenate(
    readers: &[HFileReader],
    order: &[usize],
    store: &mut StoreWriter<'_>,
) -> Result<(), ImportError> {
    for &i in order {
        let r = &readers[i];
        let fail = |e: hfkit_format::FormatError| {
            ImportError::Invalid(format!(
                "{}: {e}",
                r.path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            ))
        };
        let mut s = r.scanner().map_err(fail)?;
        while let Some(c) = s.next().map_err(fail)? {
            store.push(&c)?;
        }
        ImportError::check_interrupt()?;
    }
    Ok(())
}

/// The merge of one family's runs, overlapping in key order.
fn merge_family(
    readers: &[HFileReader],
    runs: &[&RunFile],
    store: &mut StoreWriter<'_>,
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
                store.push(&held.as_ref())?;
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
        store.push(&held.as_ref())?;
    }
    Ok(())
}

/// One store's cells, in order, handed to the output a buffer of records at a time (the
/// lanes' path: `HFileWriter::append_records` copies plain records as they are), cell by cell
/// when the output cannot take the buffer whole (a file near its size limit).
struct StoreWriter<'o> {
    out: &'o mut BulkOutput,
    family: usize,
    region: usize,
    records: Vec<u8>,
    /// The row of the last record buffered.
    last_row: Vec<u8>,
}

impl<'o> StoreWriter<'o> {
    fn new(out: &'o mut BulkOutput, family: usize, region: usize) -> StoreWriter<'o> {
        StoreWriter {
            out,
            family,
            region,
            records: Vec::with_capacity(RECORD_BATCH + 4096),
            last_row: Vec::new(),
        }
    }

    /// Buffers `c` as a record of the files' layout (`u32 keyLength | u32 valueLength | key |
    /// value | u16 tagsLength | tags | sequence id 0`).
    fn push(&mut self, c: &CellRef<'_>) -> Result<(), ImportError> {
        let too_large = || ImportError::Invalid("cell too large for a record".into());
        let key_len = 2 + c.row.len() + 1 + c.family.len() + c.qualifier.len() + 9;
        let r = &mut self.records;
        r.extend_from_slice(
            &u32::try_from(key_len)
                .map_err(|_| too_large())?
                .to_be_bytes(),
        );
        r.extend_from_slice(
            &u32::try_from(c.value.len())
                .map_err(|_| too_large())?
                .to_be_bytes(),
        );
        r.extend_from_slice(
            &u16::try_from(c.row.len())
                .map_err(|_| too_large())?
                .to_be_bytes(),
        );
        r.extend_from_slice(c.row);
        r.push(u8::try_from(c.family.len()).map_err(|_| too_large())?);
        r.extend_from_slice(c.family);
        r.extend_from_slice(c.qualifier);
        r.extend_from_slice(&c.timestamp.to_be_bytes());
        r.push(c.cell_type.code());
        r.extend_from_slice(c.value);
        r.extend_from_slice(
            &u16::try_from(c.tags.len())
                .map_err(|_| too_large())?
                .to_be_bytes(),
        );
        r.extend_from_slice(c.tags);
        r.push(0);
        if !equal_bytes(&self.last_row, c.row) {
            self.last_row.clear();
            self.last_row.extend_from_slice(c.row);
        }
        if self.records.len() >= RECORD_BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ImportError> {
        if self.records.is_empty() {
            return Ok(());
        }
        let taken = self.out.append_records_to_lane(
            self.family,
            self.region,
            &self.records,
            &self.last_row,
            false,
        )?;
        if !taken {
            let mut at = 0;
            while at < self.records.len() {
                let (cell, next) = parse_record(&self.records, at)?;
                self.out.append_row_to_lane(
                    self.family,
                    self.region,
                    std::slice::from_ref(&cell),
                )?;
                at = next;
            }
        }
        self.records.clear();
        Ok(())
    }
}

/// The record [`StoreWriter::push`] wrote at `at`, and where the next one starts.
fn parse_record(b: &[u8], at: usize) -> Result<(CellRef<'_>, usize), ImportError> {
    let bad = || ImportError::Invalid("internal: a buffered record does not parse".into());
    let u32_at = |i: usize| -> Result<usize, ImportError> {
        let w = b.get(i..i + 4).ok_or_else(bad)?;
        Ok(u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as usize)
    };
    let (key_len, value_len) = (u32_at(at)?, u32_at(at + 4)?);
    let key_at = at + 8;
    let key = KeyView::parse(b.get(key_at..key_at + key_len).ok_or_else(bad)?).ok_or_else(bad)?;
    let value_at = key_at + key_len;
    let value = b.get(value_at..value_at + value_len).ok_or_else(bad)?;
    let tags_at = value_at + value_len;
    let t = b.get(tags_at..tags_at + 2).ok_or_else(bad)?;
    let tags_len = u16::from_be_bytes([t[0], t[1]]) as usize;
    let tags = b.get(tags_at + 2..tags_at + 2 + tags_len).ok_or_else(bad)?;
    let cell_type = CellType::from_code(key.type_code).ok_or_else(bad)?;
    Ok((
        CellRef {
            row: key.row,
            family: key.family,
            qualifier: key.qualifier,
            timestamp: key.timestamp,
            cell_type,
            value,
            tags,
            seq_id: 0,
        },
        tags_at + 2 + tags_len + 1,
    ))
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

#[cfg(test)]
mod tests {
    use super::*;
    use hfkit_format::writer::{HFileWriter, WriterOptions};

    fn cell(row: &str, q: &str, ts: i64, t: CellType, v: &str, tags: &[u8]) -> Cell {
        Cell {
            row: row.into(),
            family: b"f".to_vec(),
            qualifier: q.into(),
            timestamp: ts,
            cell_type: CellTypeOwned(t),
            value: v.into(),
            tags: tags.to_vec(),
            seq_id: 0,
        }
    }

    fn run_file(dir: &Path, name: &str, cells: &[Cell], order: u64) -> RunFile {
        let path = dir.join(name);
        let opts = WriterOptions {
            include_tags: true,
            include_mvcc: true,
            ..WriterOptions::default()
        };
        let mut w = HFileWriter::new(std::fs::File::create(&path).unwrap(), opts).unwrap();
        for c in cells {
            w.append(&c.as_ref()).unwrap();
        }
        w.finish().unwrap();
        RunFile {
            path,
            family: "f".into(),
            order,
        }
    }

    fn merged(runs: &[RunFile], dir: &Path) -> Vec<Cell> {
        let schema = hfkit_table::TableSchema::from_toml_str(
            "[table]\nname = \"t\"\n[[family]]\nname = \"f\"\nCOMPRESSION = \"SNAPPY\"\n",
            "t.toml",
            None,
        )
        .unwrap()
        .table;
        let out = dir.join("out");
        let opts = ImportOptions::new(
            Vec::new(),
            crate::source::input::InputFormat::Parquet,
            out.clone(),
        );
        let report = merge_runs(&schema.families, Vec::new(), 0, runs, &out, &opts).unwrap();
        let mut cells = Vec::new();
        for f in &report.files {
            let r = HFileReader::open(&f.path).unwrap();
            let mut s = r.scanner().unwrap();
            while let Some(c) = s.next().unwrap() {
                cells.push(c.to_owned());
            }
        }
        cells
    }

    /// Runs in key ranges of their own are concatenated; overlapping runs are merged, and of
    /// cells with equal coordinates (whatever their type) the latest split's is kept; deletes
    /// and tags survive both ways.
    #[test]
    fn runs_merge_as_one_import_writes() {
        let dir = tempfile::tempdir().unwrap();
        let tag = [0u8, 9, 8, 0, 0, 0, 0, 0, 0, 0, 1];
        let put = CellType::Put;
        let a = [
            cell("a", "q", 5, put, "1", &[]),
            cell("b", "q", 5, CellType::Delete, "", &[]),
        ];
        let b = [
            cell("c", "q", 5, put, "2", &tag),
            cell("d", "q", 5, put, "3", &[]),
        ];
        // Disjoint, given out of key order: concatenated in key order.
        let runs = [
            run_file(dir.path(), "b", &b, 1),
            run_file(dir.path(), "a", &a, 0),
        ];
        let got = merged(&runs, dir.path());
        assert_eq!(got, [a.to_vec(), b.to_vec()].concat());
        // Overlapping: "b"/"q"/5 in both, a Delete in split 0 and a Put in split 2, and "d"
        // in splits 1 and 2: split 2's win; the rest is kept in order.
        let dir2 = tempfile::tempdir().unwrap();
        let c = [
            cell("b", "q", 5, put, "late", &[]),
            cell("d", "q", 5, put, "late", &tag),
        ];
        let runs = [
            run_file(dir2.path(), "a", &a, 0),
            run_file(dir2.path(), "b", &b, 1),
            run_file(dir2.path(), "c", &c, 2),
        ];
        let got = merged(&runs, dir2.path());
        assert_eq!(
            got,
            vec![a[0].clone(), c[0].clone(), b[0].clone(), c[1].clone()]
        );
    }
}
