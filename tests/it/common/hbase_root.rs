//! An HBase table of the layout fixtures as compaction tests see it: each store's cells (with
//! sequence ids), and the files a finished compaction leaves.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hfkit::format::text::cell_line;

use super::files_under;

/// An HBase table of the layout fixtures a kill test compacts.
pub struct HbaseTable {
    pub name: &'static str,
    pub dir: &'static str,
    pub families: &'static [&'static str],
}

/// Per store (region, family) of `table` in the HBase root `root`: its cells as the store reads
/// them (files a compaction event names left out), canonical lines with sequence ids, sorted.
pub fn hbase_store_states(
    root: &Path,
    table: &HbaseTable,
) -> BTreeMap<(String, String), Vec<String>> {
    let m = hfkit::hbase::HBaseRoot::open(root)
        .unwrap()
        .table(table.name)
        .unwrap();
    let mut out = BTreeMap::new();
    for r in m.live_regions() {
        for ff in &r.families {
            let mut lines = Vec::new();
            for (_, f) in m.open_store(r, ff).unwrap() {
                hfkit::hbase::store::for_each_cell(&f, &mut |c| lines.push(cell_line(c, true)))
                    .unwrap();
            }
            lines.sort();
            let family = String::from_utf8_lossy(&ff.family).into_owned();
            out.insert((r.info.encoded_name(), family), lines);
        }
    }
    out
}

/// Whether a killed compaction left anything for the next: a file under a region's `.tmp/`,
/// or a store file a compaction event names as compacted.
pub fn hbase_leftovers(root: &Path, table: &HbaseTable) -> bool {
    let m = hfkit::hbase::HBaseRoot::open(root)
        .unwrap()
        .table(table.name)
        .unwrap();
    !hbase_layout_after(root, table).2.is_empty()
        || m.live_regions().iter().any(|r| {
            r.families
                .iter()
                .any(|ff| !m.open_store_and_compacted(r, ff).unwrap().1.is_empty())
        })
}

/// What a finished compaction leaves of `table`'s files: per store the number of files, the names
/// under its archive directory, and every file under the regions' `.tmp/` (none).
pub fn hbase_layout_after(
    root: &Path,
    table: &HbaseTable,
) -> (Vec<usize>, Vec<String>, Vec<PathBuf>) {
    let t1 = root.join(table.dir);
    let archive = root.join("archive").join(table.dir);
    let mut counts = Vec::new();
    let mut archived = Vec::new();
    let mut tmp = Vec::new();
    let mut regions: Vec<PathBuf> = std::fs::read_dir(&t1)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join(".regioninfo").is_file())
        .collect();
    regions.sort();
    for r in regions {
        for family in table.families {
            counts.push(std::fs::read_dir(r.join(family)).unwrap().count());
            let a = archive.join(r.file_name().unwrap()).join(family);
            let mut names: Vec<String> = std::fs::read_dir(&a)
                .into_iter()
                .flatten()
                .map(|e| e.unwrap())
                .filter(|e| e.file_type().unwrap().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            archived.extend(names);
        }
        if r.join(".tmp").exists() {
            tmp.extend(files_under(&r.join(".tmp")));
            tmp.push(r.join(".tmp"));
        }
    }
    (counts, archived, tmp)
}
