//! Offline major compaction of an HBase table's stores in place, as HBase's `CompactionTool`
//! does it: each store's files merged with HBase's major-compaction rules into one new HFile
//! (written under the region's `.tmp/<family>/` as `hfkit-compact-<32 hex>`, then moved into
//! the store as `<32 hex>`), the old files moved to `archive/` as `HFileArchiver` moves them.
//! A split daughter's store compacts its references away as HBase's does: each reference is
//! read as its half of the parent's file, and archived as the other inputs are (the parent's
//! file stays, for HBase's CatalogJanitor). A FILE-tracker store commits by a new `.filelist`
//! track file naming the output instead of the inputs. Refused when the layout says HBase may
//! be using the table. What a killed run left is finished or removed by the next: its own outputs
//! under `.tmp/` (told from HBase's by their name) are removed; inputs its moved-in outputs
//! name as compacted are archived. A root on object storage is compacted through its mirror
//! (`super::remote`): outputs are written and verified locally, then uploaded to their store
//! (the upload, or the new `.filelist`, is the commit: no rename), inputs archived by
//! server-side copies, under a lock object. Spec: `formats/hbase-layout.md` §"Offline
//! compaction".

use std::io::BufWriter;
use std::path::{Path, PathBuf};

use prost::Message;
use serde::{Deserialize, Serialize};

use super::manifest::{Manifest, RegionManifest, Source};
use super::names::{archive_table_dir, TMP_DIR};
use super::proto;
use super::store::{OpenedStoreFile, ResolvedFile};
use super::{HBaseError, Result};
use hfkit_format::checksum::Crc32cWriter;
use hfkit_format::fileinfo::{keys, PB_MAGIC};
use hfkit_format::writer::HFileWriter;
use hfkit_table::compact::major_compact_store;
use hfkit_table::directory::{check_written, WrittenFile};

mod file_tracker;
mod target;

use file_tracker::{commit_filelist, undo_unlisted_moves, unlisted_inputs, write_intent};
pub use target::OUTPUT_PREFIX;
use target::{RemoteLock, Target};

/// The directory of region servers' write-ahead logs under the root.
pub const WALS_DIR: &str = "WALs";
/// The test hook's variable ([`super::pause_for_tests`]; phases `written`: outputs staged,
/// `unlisted`: a FILE-tracker store's output moved in, not listed yet, `moved`: an output
/// moved in (and listed), its inputs not archived yet, `committed`: stores done).
const COMPACT_PAUSE_VAR: &str = "HFKIT_TEST_COMPACT_PAUSE";
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Outputs a killed run left under the regions' `.tmp/`, removed.
    pub leftovers_removed: Vec<PathBuf>,
    /// Inputs (`<region>/<family>/<name>`) a killed run had compacted but not archived yet,
    /// archived now.
    pub compacted_archived: Vec<String>,
}

/// One store a compaction compacts, as a task on a cluster is given it: its region (encoded
/// name), family, and input files by name in HBase's order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorePlan {
    pub region: String,
    pub family: String,
    pub inputs: Vec<String>,
}

/// A store's output written under `<region>/.tmp/<family>/` by [`write_planned_store`]: its
/// name once moved into the store (`None`: every cell was dropped), and the store's report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StagedStore {
    pub store: StorePlan,
    pub output: Option<String>,
    pub report: StoreReport,
}

/// What [`prepare`] found and did under the compaction's lock: the stores to compact, and
/// what a killed run left (removed, or archived).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Prepared {
    pub stores: Vec<StorePlan>,
    pub leftovers_removed: Vec<PathBuf>,
    pub compacted_archived: Vec<String>,
}

/// The table held for a compaction ([`lock`]): an exclusive `flock` on a local table's
/// directory, or the lock object of a root on object storage; released when dropped.
pub struct CompactionLock {
    _local: Option<std::fs::File>,
    _remote: Option<RemoteLock>,
}

/// A store to compact: its region, family, and opened files.
struct Plan<'m> {
    region: &'m RegionManifest,
    family: String,
    files: Vec<(ResolvedFile, OpenedStoreFile)>,
    /// The store uses the FILE store-file tracker: its `.filelist` is replaced at the commit.
    file_tracker: bool,
}

impl Plan<'_> {
    fn store_plan(&self) -> StorePlan {
        StorePlan {
            region: self.region.info.encoded_name(),
            family: self.family.clone(),
            inputs: self.files.iter().map(|(r, _)| r.name.clone()).collect(),
        }
    }
}

/// A written output, under the region's `.tmp/<family>/`.
struct Staged {
    tmp: PathBuf,
    name: String,
}

/// Whether `name` is one of hfkit's staged outputs: [`OUTPUT_PREFIX`] and 32 lowercase hex.
pub fn is_own_output(name: &str) -> bool {
    name.strip_prefix(OUTPUT_PREFIX).is_some_and(|hex| {
        hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// The files under `dir` (recursively): hfkit's own staged outputs (`own`: directly in a
/// subdirectory of `dir`, named by [`is_own_output`]) apart from the others.
fn files_under(dir: &Path, own: bool) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut ours, mut others) = (Vec::new(), Vec::new());
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.filter_map(|e| e.ok()) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if own
                && p.parent().and_then(Path::parent) == Some(dir)
                && is_own_output(&e.file_name().to_string_lossy())
            {
                ours.push(p);
            } else {
                others.push(p);
            }
        }
    }
    ours.sort();
    others.sort();
    (ours, others)
}

/// The refusal rule: the table may be in use by HBase when a region server has write-ahead
/// logs under `WALs/` (running, or crashed with logs not yet split: a clean shutdown moves
/// them to `oldWALs/`), or when a region of the table holds files under `.tmp/`,
/// `recovered.edits/`, `.splits/` or `.merges/` (a flush, compaction, split or merge in
/// progress, or edits not yet replayed). HBase keeps whether a table is enabled only in
/// `hbase:meta`: stopping HBase (or disabling the table) first is the caller's part. Files
/// named by [`is_own_output`] in `<region>/.tmp/<family>/` are hfkit's, not HBase's: they do
/// not count, and are returned (what a killed `hbase compact` left, when none runs).
pub fn check_offline(m: &Manifest) -> Result<Vec<PathBuf>> {
    let Source::Table { dir } = &m.source else {
        return Err(HBaseError::Invalid(
            "only a table's stores can be compacted in place, not a snapshot's".into(),
        ));
    };
    if let Some(f) = files_under(&m.root.join(WALS_DIR), false).1.first() {
        return Err(HBaseError::corrupt(
            f,
            "a region server's write-ahead log: HBase may be running (or crashed before its logs \
             were split); stop HBase cleanly before compacting offline",
        ));
    }
    let mut own = Vec::new();
    for r in &m.regions {
        for d in REGION_BUSY_DIRS {
            let (ours, others) =
                files_under(&dir.join(r.info.encoded_name()).join(d), d == TMP_DIR);
            if let Some(f) = others.first() {
                return Err(HBaseError::corrupt(
                    f,
                    "the region is open, or was not closed cleanly (a flush, compaction, split, \
                     merge or log replay left this); refusing to compact offline",
                ));
            }
            own.extend(ours);
        }
    }
    Ok(own)
}

/// Takes an exclusive `flock` on the table directory for the compaction (HBase takes none):
/// so that the staged outputs of a running `hbase compact` are never taken for leftovers.
fn lock_table(dir: &Path) -> Result<std::fs::File> {
    let f = std::fs::File::open(dir).map_err(|e| HBaseError::io(dir, e))?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(std::fs::TryLockError::WouldBlock) => Err(HBaseError::Invalid(format!(
            "{}: another hfkit hbase compact is running on this table",
            dir.display()
        ))),
        Err(std::fs::TryLockError::Error(e)) => Err(HBaseError::io(dir, e)),
    }
}

/// Removes hfkit's own `leftovers` (see [`check_offline`]) and the empty directories of the
/// `.tmp/` they were in ([`prune_tmp`]).
fn remove_leftovers(target: &Target, leftovers: &[PathBuf]) -> Result<()> {
    for f in leftovers {
        target.remove(f)?;
    }
    for f in leftovers {
        if let Some(tmp) = f.parent().and_then(Path::parent) {
            prune_tmp(tmp);
        }
    }
    Ok(())
}

/// Takes the table of `m` for a compaction (see [`CompactionLock`]); refused while another
/// `hbase compact` holds it.
pub fn lock(m: &Manifest) -> Result<CompactionLock> {
    Ok(match Target::of(m)? {
        Target::Local => CompactionLock {
            _local: Some(lock_table(m.dir())?),
            _remote: None,
        },
        Target::Remote { store, url, .. } => CompactionLock {
            _local: None,
            _remote: Some(RemoteLock::take(&store, &url, m)?),
        },
    })
}

/// Under the compaction's lock: refuses when HBase may be using the table ([`check_offline`]),
/// removes what a killed run left, archives the inputs a killed run compacted, and plans the
/// stores to compact (of the live regions, and the `region` / `family` asked for: each
/// holding two files or more, or one not written by a major compaction).
pub fn prepare(m: &Manifest, opts: &CompactOptions, _lock: &CompactionLock) -> Result<Prepared> {
    let (plans, prepared) = prepare_plans(m, opts)?;
    Ok(Prepared {
        stores: plans.iter().map(Plan::store_plan).collect(),
        ..prepared
    })
}

/// [`prepare`], the stores with their opened files.
fn prepare_plans<'m>(m: &'m Manifest, opts: &CompactOptions) -> Result<(Vec<Plan<'m>>, Prepared)> {
    let dir = m.dir();
    let target = Target::of(m)?;
    let leftovers = check_offline(m)?;
    let mut plans = Vec::new();
    // Inputs of a killed run's moved-in outputs: (region, family, names).
    let mut unarchived = Vec::new();
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
            if fd
                .value("IS_MOB")
                .is_some_and(|v| v.eq_ignore_ascii_case("true"))
            {
                return Err(HBaseError::Invalid(format!(
                    "{}: family {family} is a MOB family (IS_MOB): its major compaction also \
                     rewrites MOB files (HBase's DefaultMobStoreCompactor), which hfkit does not \
                     do; nothing compacted (--family names the other families)",
                    dir.join(&enc).join(&family).display()
                )));
            }
            let file_tracker = m.descriptor.store_file_tracker(fd) == "FILE";
            let (files, compacted) = m.open_store_and_compacted(r, ff)?;
            let mut names: Vec<String> = compacted.into_iter().map(|c| c.name).collect();
            if file_tracker {
                // A killed run's inputs: no longer listed, still in the directory.
                names.extend(unlisted_inputs(&dir.join(&enc).join(&family), ff, &files)?);
            }
            if !names.is_empty() {
                unarchived.push((enc.clone(), family.clone(), names));
            }
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
                    file_tracker,
                });
            }
        }
    }
    undo_unlisted_moves(&target, &leftovers)?;
    remove_leftovers(&target, &leftovers)?;
    let mut compacted_archived = Vec::new();
    for (enc, family, names) in &unarchived {
        archive_files(&target, m, dir, enc, family, names, opts.now_ms)?;
        compacted_archived.extend(names.iter().map(|n| format!("{enc}/{family}/{n}")));
    }
    Ok((
        plans,
        Prepared {
            stores: Vec::new(),
            leftovers_removed: leftovers,
            compacted_archived,
        },
    ))
}

/// Compacts every store [`prepare`] plans. All stores are written and verified first; only
/// then are outputs moved in and inputs archived, store after store.
pub fn compact_in_place(m: &Manifest, opts: &CompactOptions) -> Result<CompactReport> {
    let dir = m.dir();
    let target = Target::of(m)?;
    let _lock = lock(m)?;
    let (plans, prepared) = prepare_plans(m, opts)?;
    let mut staged: Vec<Option<Staged>> = Vec::new();
    let mut reports = Vec::new();
    let cells_in =
        |p: &Plan<'_>| -> u64 { p.files.iter().map(|(_, o)| o.reader.entry_count()).sum() };
    hfkit_table::progress::phase(
        "compacting",
        hfkit_table::progress::Unit::Cells,
        plans.iter().map(cells_in).sum(),
    );
    for p in &plans {
        // A stop asked for while the outputs are written (none moved in yet): nothing changed.
        let written = hfkit_table::check_interrupt()
            .map_err(HBaseError::from)
            .and_then(|()| write_store(m, dir, p, opts.now_ms));
        match written {
            Ok((s, report)) => {
                staged.push(s);
                reports.push(report);
                hfkit_table::progress::done(cells_in(p));
                super::pause_for_tests(COMPACT_PAUSE_VAR, "written", staged.len());
            }
            Err(e) => {
                for s in staged.iter().flatten() {
                    let _ = std::fs::remove_file(&s.tmp);
                }
                remove_empty_tmp_dirs(m);
                return Err(e);
            }
        }
    }
    for (i, (p, s)) in plans.iter().zip(&staged).enumerate() {
        commit_store(&target, m, dir, p, s.as_ref(), opts.now_ms, i + 1)?;
        super::pause_for_tests(COMPACT_PAUSE_VAR, "committed", i + 1);
    }
    remove_empty_tmp_dirs(m);
    Ok(CompactReport {
        stores: reports,
        leftovers_removed: prepared.leftovers_removed,
        compacted_archived: prepared.compacted_archived,
    })
}

/// The store `store` plans, its files opened: an error when its files are no longer the
/// planned ones.
fn plan_of<'m>(m: &'m Manifest, store: &StorePlan) -> Result<Plan<'m>> {
    let changed = |what: &str| {
        HBaseError::Invalid(format!(
            "{}: store {}/{} {what} since the compaction was planned",
            m.dir().display(),
            store.region,
            store.family
        ))
    };
    let r = m
        .live_regions()
        .into_iter()
        .find(|r| r.info.encoded_name() == store.region)
        .ok_or_else(|| changed("is no live region's"))?;
    let ff = r
        .families
        .iter()
        .find(|ff| ff.family == store.family.as_bytes())
        .ok_or_else(|| changed("has no files"))?;
    let fd = m.family(r, &ff.family)?;
    let (files, _) = m.open_store_and_compacted(r, ff)?;
    let p = Plan {
        region: r,
        family: store.family.clone(),
        files,
        file_tracker: m.descriptor.store_file_tracker(fd) == "FILE",
    };
    if p.store_plan().inputs != store.inputs {
        return Err(changed("changed"));
    }
    Ok(p)
}

/// Writes the major compaction of the planned `store` under its region's `.tmp/<family>/`,
/// verified (a task's part on a cluster; [`commit_planned`] moves it in).
pub fn write_planned_store(m: &Manifest, store: &StorePlan, now_ms: i64) -> Result<StagedStore> {
    let p = plan_of(m, store)?;
    let (staged, report) = write_store(m, m.dir(), &p, now_ms)?;
    Ok(StagedStore {
        store: store.clone(),
        output: staged.map(|s| s.name),
        report,
    })
}

/// Commits the `staged` outputs store after store, as [`compact_in_place`] does, then removes
/// whatever else is under the regions' `.tmp/` (the outputs of failed or duplicate task
/// attempts: under the lock, every output there is this compaction's).
pub fn commit_planned(
    m: &Manifest,
    staged: &[StagedStore],
    now_ms: i64,
    held: &CompactionLock,
) -> Result<()> {
    let target = Target::of(m)?;
    for (i, s) in staged.iter().enumerate() {
        let p = plan_of(m, &s.store)?;
        let tmp_dir = m
            .dir()
            .join(&s.store.region)
            .join(TMP_DIR)
            .join(&s.store.family);
        let staged = s.output.as_ref().map(|name| Staged {
            tmp: tmp_dir.join(format!("{OUTPUT_PREFIX}{name}")),
            name: name.clone(),
        });
        if let Some(st) = &staged {
            if !st.tmp.is_file() {
                return Err(HBaseError::corrupt(&st.tmp, "a task's output is missing"));
            }
        }
        commit_store(&target, m, m.dir(), &p, staged.as_ref(), now_ms, i + 1)?;
    }
    discard_staged(m, held)
}

/// Removes every output staged under the regions' `.tmp/` (a failed compaction's; under the
/// lock they are all this compaction's) and the empty directories.
pub fn discard_staged(m: &Manifest, _lock: &CompactionLock) -> Result<()> {
    let leftovers = check_offline(m)?;
    let target = Target::of(m)?;
    undo_unlisted_moves(&target, &leftovers)?;
    remove_leftovers(&target, &leftovers)?;
    remove_empty_tmp_dirs(m);
    Ok(())
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
    let entry = fd.family_entry()?;
    let mut wopts = entry.writer_options(now_ms)?;
    wopts.bulk_load = None;
    // A compaction's file context takes the family's COMPRESS_TAGS (HBase's
    // StoreFileTrackerBase.createFileContext), unlike a bulk load's (HFileOutputFormat2).
    wopts.compress_tags = entry.compress_tags;
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
    let tmp = tmp_dir.join(format!("{OUTPUT_PREFIX}{name}"));
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
    let result = (|| -> Result<(u64, u64, WrittenFile)> {
        let file = std::fs::File::create(&tmp).map_err(|e| HBaseError::io(&tmp, e))?;
        let file = Crc32cWriter::new(file);
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
        // What the writer wrote, for the check below.
        let written = WrittenFile {
            path: tmp.clone(),
            size: f.written(),
            cells: summary.entry_count,
            crc32c: f.crc32c(),
        };
        f.into_inner()
            .sync_all()
            .map_err(|e| HBaseError::io(&tmp, e))?;
        Ok((cells, markers, written))
    })();
    let (cells, markers, written) = match result {
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
        output: (written.cells > 0).then(|| name.clone()),
        output_cells: cells,
        output_markers: markers,
    };
    if written.cells == 0 {
        let _ = std::fs::remove_file(&tmp);
        return Ok((None, report));
    }
    // Its bytes on disk are the ones written, and hold the cells written (`formats/table.md`
    // §"Checks before data is replaced, deleted or handed out").
    check_written(&written).map_err(|d| {
        let _ = std::fs::remove_file(&tmp);
        HBaseError::corrupt(&tmp, format!("compaction output failed its check: {d}"))
    })?;
    Ok((Some(Staged { tmp, name }), report))
}

/// Moves the output into the store, then each input to the archive ([`archive_files`]).
/// `nth`: the store's rank among those committed, for the test hook.
fn commit_store(
    target: &Target,
    m: &Manifest,
    dir: &Path,
    p: &Plan<'_>,
    staged: Option<&Staged>,
    now_ms: i64,
    nth: usize,
) -> Result<()> {
    let enc = p.region.info.encoded_name();
    let store = dir.join(&enc).join(&p.family);
    let tmp_dir = dir.join(&enc).join(TMP_DIR).join(&p.family);
    let mut output = None;
    let mut intent = None;
    if let Some(s) = staged {
        let to = store.join(&s.name);
        let size = std::fs::metadata(&s.tmp)
            .map_err(|e| HBaseError::io(&s.tmp, e))?
            .len();
        if p.file_tracker {
            // Moved in, the output is invisible until the list names it: a run killed before
            // the list leaves this record, by which the next run removes the output.
            intent = Some(write_intent(target, &tmp_dir, &s.name)?);
        }
        target.place(&s.tmp, &to)?;
        target.sync_dir(&store)?;
        output = Some((s.name.as_str(), size));
        if p.file_tracker {
            super::pause_for_tests(COMPACT_PAUSE_VAR, "unlisted", nth);
        }
    }
    let mut names: Vec<String> = p.files.iter().map(|(r, _)| r.name.clone()).collect();
    if p.file_tracker {
        // The commit: the list naming the output instead of the inputs.
        commit_filelist(target, &store, &tmp_dir, &names, output)?;
        if let Some(i) = intent {
            target.remove(&i)?;
        }
        // A reference the FILE tracker keeps only in its list has no file to archive.
        names.retain(|n| store.join(n).is_file());
    }
    if output.is_some() {
        super::pause_for_tests(COMPACT_PAUSE_VAR, "moved", nth);
    }
    archive_files(target, m, dir, &enc, &p.family, &names, now_ms)
}

/// Moves the files `names` of the store `<region>/<family>` to the archive (`HFileArchiver`:
/// a file already archived under the same name with the same size is first renamed
/// `<name>.<now>`; another size is an error).
fn archive_files(
    target: &Target,
    m: &Manifest,
    dir: &Path,
    region: &str,
    family: &str,
    names: &[String],
    now_ms: i64,
) -> Result<()> {
    let store = dir.join(region).join(family);
    let archive = archive_table_dir(&m.root, m.table())
        .join(region)
        .join(family);
    std::fs::create_dir_all(&archive).map_err(|e| HBaseError::io(&archive, e))?;
    for name in names {
        let from = store.join(name);
        let to = archive.join(name);
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
            let backup = archive.join(format!("{name}.{now_ms}"));
            target.relocate(&to, &backup)?;
        }
        target.relocate(&from, &to)?;
    }
    target.sync_dir(&archive)?;
    target.sync_dir(&store)
}

/// Removes the `.tmp/<family>` and `.tmp` directories this compaction or a killed one left
/// empty, in every region of `m` (whose `.tmp/` held nothing else, [`check_offline`]).
fn remove_empty_tmp_dirs(m: &Manifest) {
    for r in &m.regions {
        prune_tmp(&m.dir().join(r.info.encoded_name()).join(TMP_DIR));
    }
}

/// Removes the empty directories in a region's `.tmp/` (a killed run's `.tmp/<family>`, its
/// output moved out), then `.tmp/` itself if empty; a directory holding anything is kept.
fn prune_tmp(tmp: &Path) {
    if let Ok(rd) = std::fs::read_dir(tmp) {
        for e in rd.filter_map(|e| e.ok()) {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = std::fs::remove_dir(e.path());
            }
        }
    }
    let _ = std::fs::remove_dir(tmp);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_outputs_are_told_from_hbase_names() {
        assert!(is_own_output(
            "hfkit-compact-0123456789abcdef0123456789abcdef"
        ));
        assert!(!is_own_output("0123456789abcdef0123456789abcdef"));
        assert!(!is_own_output("hfkit-compact-0123"));
        assert!(!is_own_output(
            "hfkit-compact-0123456789ABCDEF0123456789abcdef"
        ));
        assert!(!crate::names::is_hfile_name(
            "hfkit-compact-0123456789abcdef0123456789abcdef"
        ));
    }
}
