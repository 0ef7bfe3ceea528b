//! Offline major compaction of an HBase table's stores in place, as HBase's `CompactionTool`
//! does it: each store's files merged with HBase's major-compaction rules into one new HFile
//! (written under the region's `.tmp/`, then moved into the store), the old files moved to
//! `archive/` as `HFileArchiver` moves them. Refused when the layout says HBase may be using
//! the table, or when a store holds references. Spec: `formats/hbase-layout.md` §"Offline
//! compaction".

use std::io::BufWriter;
use std::path::{Path, PathBuf};

use prost::Message;
use serde::Serialize;

use super::descriptor::TRACKER_IMPL;
use super::manifest::{Manifest, RegionManifest, Source};
use super::names::{archive_table_dir, TMP_DIR};
use super::proto;
use super::store::{OpenedStoreFile, ResolvedFile};
use super::{HBaseError, Result};
use hfkit_format::fileinfo::{keys, PB_MAGIC};
use hfkit_format::writer::HFileWriter;
use hfkit_table::compact::major_compact_store;

/// The directory of region servers' write-ahead logs under the root.
pub const WALS_DIR: &str = "WALs";
/// Region subdirectories that only an open (or crashed) region leaves with content.
const REGION_BUSY_DIRS: [&str; 4] = [".tmp", "recovered.edits", ".splits", ".merges"];

/// What to compact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompactOptions {
    /// "Now" for TTL (epoch ms).
    pub now_ms: i64,
    /// Only this region (encoded name).
    pub region: Option<String>,
    /// Only this family.
    pub family: Option<String>,
}

/// One store compacted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StoreReport {
    pub region: String,
    pub family: String,
    /// Input file names, in HBase's order; now under `archive/`.
    pub inputs: Vec<String>,
    /// The new file's name; `None` when no cell survived.
    pub output: Option<String>,
    pub output_cells: u64,
    pub output_markers: u64,
}

/// What a compaction did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CompactReport {
    pub stores: Vec<StoreReport>,
}

/// A store to compact: its region, family, and opened files.
struct Plan<'m> {
    region: &'m RegionManifest,
    family: String,
    files: Vec<(ResolvedFile, OpenedStoreFile)>,
}

/// A written output, under the region's `.tmp/<family>/`.
struct Staged {
    tmp: PathBuf,
    name: String,
}

fn has_files(dir: &Path) -> Option<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.filter_map(|e| e.ok()) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                return Some(p);
            }
        }
    }
    None
}

/// The refusal rule: the table may be in use by HBase when a region server has write-ahead
/// logs under `WALs/` (running, or crashed with logs not yet split: a clean shutdown moves
/// them to `oldWALs/`), or when a region of the table holds files under `.tmp/`,
/// `recovered.edits/`, `.splits/` or `.merges/` (a flush, compaction, split or merge in
/// progress, or edits not yet replayed). HBase keeps whether a table is enabled only in
/// `hbase:meta`: stopping HBase (or disabling the table) first is the caller's part.
pub fn check_offline(m: &Manifest) -> Result<()> {
    let Source::Table { dir } = &m.source else {
        return Err(HBaseError::Invalid(
            "only a table's stores can be compacted in place, not a snapshot's".into(),
        ));
    };
    if let Some(f) = has_files(&m.root.join(WALS_DIR)) {
        return Err(HBaseError::corrupt(
            &f,
            "a region server's write-ahead log: HBase may be running (or crashed before its logs \
             were split); stop HBase cleanly before compacting offline",
        ));
    }
    for r in &m.regions {
        for d in REGION_BUSY_DIRS {
            if let Some(f) = has_files(&dir.join(r.info.encoded_name()).join(d)) {
                return Err(HBaseError::corrupt(
                    &f,
                    "the region is open, or was not closed cleanly (a flush, compaction, split, \
                     merge or log replay left this); refusing to compact offline",
                ));
            }
        }
    }
    Ok(())
}

/// Compacts every store (of the live regions, and the `region` / `family` asked for) holding
/// two files or more, or one not written by a major compaction. All stores are written and
/// verified first; only then are outputs moved in and inputs archived.
pub fn compact_in_place(m: &Manifest, opts: &CompactOptions) -> Result<CompactReport> {
    check_offline(m)?;
    let dir = m.dir();
    let mut plans = Vec::new();
    for r in m.live_regions() {
        let enc = r.info.encoded_name();
        if opts.region.as_ref().is_some_and(|x| *x != enc) {
            continue;
        }
        for ff in &r.families {
            let fd = m.family(r, &ff.family)?;
            let family = fd.name_str();
            if opts.family.as_ref().is_some_and(|f| *f != family) || ff.files.is_empty() {
                continue;
            }
            if m.descriptor.store_file_tracker(fd) == "FILE" {
                return Err(HBaseError::Invalid(format!(
                    "{}: the store uses the FILE store-file tracker ({TRACKER_IMPL}); \
                     compacting it in place is not supported",
                    dir.join(&enc).join(&family).display()
                )));
            }
            if let Some(f) = ff.files.iter().find(|f| f.reference.is_some()) {
                return Err(HBaseError::corrupt(
                    &dir.join(&enc).join(&family).join(&f.name),
                    "a reference (the store is a split daughter's): HBase compacts references \
                     away when it opens the region; refusing to compact offline",
                ));
            }
            let files = m.open_store(r, ff)?;
            let done = files.len() == 1
                && files[0]
                    .1
                    .reader
                    .file_info()
                    .get_bool(keys::MAJOR_COMPACTION_KEY)
                    .unwrap_or(false);
            if !done {
                plans.push(Plan {
                    region: r,
                    family,
                    files,
                });
            }
        }
    }
    let mut staged: Vec<Option<Staged>> = Vec::new();
    let mut reports = Vec::new();
    for p in &plans {
        match write_store(m, dir, p, opts.now_ms) {
            Ok((s, report)) => {
                staged.push(s);
                reports.push(report);
            }
            Err(e) => {
                for s in staged.iter().flatten() {
                    let _ = std::fs::remove_file(&s.tmp);
                }
                remove_empty_tmp_dirs(dir, &plans);
                return Err(e);
            }
        }
    }
    for (p, s) in plans.iter().zip(&staged) {
        commit_store(m, dir, p, s.as_ref(), opts.now_ms)?;
    }
    remove_empty_tmp_dirs(dir, &plans);
    Ok(CompactReport { stores: reports })
}

/// Writes the major compaction of one store to `<region>/.tmp/<family>/<name>`, verified.
fn write_store(
    m: &Manifest,
    dir: &Path,
    p: &Plan<'_>,
    now_ms: i64,
) -> Result<(Option<Staged>, StoreReport)> {
    let enc = p.region.info.encoded_name();
    let fd = m.family(p.region, p.family.as_bytes())?;
    let settings = fd.read_settings()?;
    let mut wopts = fd.family_entry()?.writer_options(now_ms)?;
    wopts.bulk_load = None;
    wopts.include_mvcc = true;
    wopts.include_tags = p.files.iter().any(|(_, o)| {
        o.reader
            .file_info()
            .get_i32(keys::MAX_TAGS_LEN)
            .map(|n| n > 0)
            .unwrap_or(o.reader.encoding_context().include_tags)
    });
    let tmp_dir = dir.join(&enc).join(TMP_DIR).join(&p.family);
    std::fs::create_dir_all(&tmp_dir).map_err(|e| HBaseError::io(&tmp_dir, e))?;
    let name = hfkit_table::directory::unique_hex();
    let tmp = tmp_dir.join(&name);
    let max_seq = p.files.iter().map(|(_, o)| o.seq_id).max().unwrap_or(0);
    let tracker = proto::CompactionEventTracker {
        compacted_store_file: p
            .files
            .iter()
            .map(|(r, _)| r.name.as_bytes().to_vec())
            .collect(),
    };
    let mut event = PB_MAGIC.to_vec();
    event.extend_from_slice(&tracker.encode_to_vec());
    let result = (|| -> Result<(u64, u64, u64)> {
        let file = std::fs::File::create(&tmp).map_err(|e| HBaseError::io(&tmp, e))?;
        let fmt = |source| HBaseError::Format {
            path: tmp.clone(),
            source,
        };
        let mut w =
            HFileWriter::new(BufWriter::with_capacity(1 << 20, file), wopts).map_err(fmt)?;
        w.append_file_info(
            keys::MAX_SEQ_ID_KEY,
            (max_seq as i64).to_be_bytes().to_vec(),
        )
        .map_err(fmt)?;
        w.append_file_info(keys::MAJOR_COMPACTION_KEY, vec![0xff])
            .map_err(fmt)?;
        w.append_file_info(keys::COMPACTION_EVENT_KEY, event)
            .map_err(fmt)?;
        let files: Vec<_> = p
            .files
            .iter()
            .map(|(_, o)| (o.reader.clone(), o.read_seq_id))
            .collect();
        let (cells, markers) =
            major_compact_store(p.family.as_bytes(), &settings, &files, now_ms, &mut w)?;
        let (buf, summary) = w.finish().map_err(fmt)?;
        let f = buf
            .into_inner()
            .map_err(|e| HBaseError::io(&tmp, e.into_error()))?;
        f.sync_all().map_err(|e| HBaseError::io(&tmp, e))?;
        Ok((cells, markers, summary.entry_count))
    })();
    let (cells, markers, entries) = match result {
        Ok(x) => x,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    let report = StoreReport {
        region: enc,
        family: p.family.clone(),
        inputs: p.files.iter().map(|(r, _)| r.name.clone()).collect(),
        output: (entries > 0).then(|| name.clone()),
        output_cells: cells,
        output_markers: markers,
    };
    if entries == 0 {
        let _ = std::fs::remove_file(&tmp);
        return Ok((None, report));
    }
    hfkit_table::directory::verify_store_file(&tmp, entries).map_err(|d| {
        let _ = std::fs::remove_file(&tmp);
        HBaseError::corrupt(&tmp, format!("compaction output failed verification: {d}"))
    })?;
    Ok((Some(Staged { tmp, name }), report))
}

/// Moves the output into the store, then each input to the archive (`HFileArchiver`: a file
/// already archived under the same name with the same size is first renamed
/// `<name>.<now>`; another size is an error).
fn commit_store(
    m: &Manifest,
    dir: &Path,
    p: &Plan<'_>,
    staged: Option<&Staged>,
    now_ms: i64,
) -> Result<()> {
    let enc = p.region.info.encoded_name();
    let store = dir.join(&enc).join(&p.family);
    if let Some(s) = staged {
        let to = store.join(&s.name);
        std::fs::rename(&s.tmp, &to).map_err(|e| HBaseError::io(&to, e))?;
        sync_dir(&store)?;
    }
    let archive = archive_table_dir(&m.root, m.table())
        .join(&enc)
        .join(&p.family);
    std::fs::create_dir_all(&archive).map_err(|e| HBaseError::io(&archive, e))?;
    for (r, _) in &p.files {
        let from = store.join(&r.name);
        let to = archive.join(&r.name);
        if let Ok(existing) = std::fs::metadata(&to) {
            let len = std::fs::metadata(&from)
                .map_err(|e| HBaseError::io(&from, e))?
                .len();
            if existing.len() != len {
                return Err(HBaseError::corrupt(
                    &to,
                    format!(
                        "already in the archive with another size than {}",
                        from.display()
                    ),
                ));
            }
            let backup = archive.join(format!("{}.{now_ms}", r.name));
            std::fs::rename(&to, &backup).map_err(|e| HBaseError::io(&backup, e))?;
        }
        std::fs::rename(&from, &to).map_err(|e| HBaseError::io(&to, e))?;
    }
    sync_dir(&archive)?;
    sync_dir(&store)
}

/// Removes the `.tmp/<family>` and `.tmp` directories compaction left empty.
fn remove_empty_tmp_dirs(dir: &Path, plans: &[Plan<'_>]) {
    for p in plans {
        let tmp = dir.join(p.region.info.encoded_name()).join(TMP_DIR);
        let _ = std::fs::remove_dir(tmp.join(&p.family));
        let _ = std::fs::remove_dir(&tmp);
    }
}

fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| HBaseError::io(dir, e))
}
