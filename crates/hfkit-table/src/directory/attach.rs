//! Attach (`Table::attach`) makes every file of a bulk-load directory visible in one manifest
//! commit, or none of them: files are verified, split at region boundaries when they straddle
//! them, linked (or copied; a symbolic link is followed, never stored) into `data/` and
//! fsynced, and only then is a new manifest
//! published. A crash at any point leaves the previous manifest live; files it does not name
//! are invisible and are removed by the next writer. Spec: `formats/table.md` §"Attach".
//!
//! A file this process wrote itself ([`WrittenFile`], `import --table`) is checked against what
//! its writer recorded — size, cell count, CRC32C of its bytes, streamed — instead of decoded
//! again; every other file is verified in full (`formats/table.md` §"Attach of files this
//! process wrote").

use std::path::{Path, PathBuf};

use super::table::{Table, STAGING_DIR};
use super::written::{check_written, WrittenFile, WrittenFileError};
use crate::fsops::follow_links;
use crate::manifest::{Manifest, StoreFileEntry, DATA_DIR};
use crate::staging::unique_hex;
use crate::TableError;
use hfkit_format::cell::KeyView;
use hfkit_format::reader::HFileReader;
use hfkit_format::verify::verify;
use hfkit_format::writer::HFileWriter;

/// Most files one attach may add to one region and family (HBase's
/// `hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily`).
pub const MAX_FILES_PER_REGION_FAMILY: usize = 32;

/// What an attach did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachReport {
    /// Manifest version published.
    pub version: u64,
    /// Sequence id given to every attached file.
    pub seq_id: u64,
    pub files: Vec<StoreFileEntry>,
    /// Input files that straddled region boundaries and were split.
    pub split_inputs: usize,
    /// Input files skipped, with the reason (empty files).
    pub skipped: Vec<(PathBuf, String)>,
    /// Leftover files of earlier, interrupted writers that were removed first.
    pub garbage_removed: usize,
    /// Family directories the table does not have, skipped ([`AttachOptions`]): the
    /// directory and the files in it.
    pub ignored_families: Vec<(PathBuf, usize)>,
}

/// How an attach treats its input, as `completebulkload`'s options do (`formats/table.md`
/// §"Attach").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AttachOptions {
    /// Refuse a file that straddles region boundaries instead of splitting it.
    pub no_split: bool,
    /// Skip family directories the table does not have (counted) instead of failing.
    pub ignore_unknown_families: bool,
    /// The directory holds region directories, each a bulk-load directory:
    /// `DIR/<region>/<family>/<hfile>`.
    pub region_dirs: bool,
    /// Most files this attach may add to one region and family (HBase's
    /// `hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily`); `None`:
    /// [`MAX_FILES_PER_REGION_FAMILY`], HBase's default.
    pub max_files_per_region_family: Option<usize>,
}

/// One input file of an attach, verified: what the attach needs of it, not the file itself
/// (its reader, whose pages the verification read, is dropped once these are known, so an
/// attach holds one input's pages at a time however many it attaches).
struct Input {
    path: PathBuf,
    family: String,
    first_row: Vec<u8>,
    last_row: Vec<u8>,
    /// Its cells carry tags (kept when it is split).
    include_tags: bool,
    /// Which file it was when verified (a split opens it again and checks it is the same).
    identity: FileIdentity,
}

/// A file's device, inode, length and modification time: equal for the same unchanged file.
#[derive(Clone, Debug, PartialEq, Eq)]
struct FileIdentity {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileIdentity {
    fn of(path: &Path) -> Result<FileIdentity, TableError> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).map_err(|e| TableError::io(path, e))?;
        Ok(FileIdentity {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            modified: m.modified().ok(),
        })
    }
}

impl Table {
    /// Attaches the HFiles of a bulk-load directory (`DIR/<family>/<hfile>`, as written by
    /// `hfkit import --out` or HBase's `HFileOutputFormat2`). All or nothing.
    pub fn attach(&self, bulk_dir: &Path) -> Result<AttachReport, TableError> {
        self.attach_import(bulk_dir, &AttachOptions::default(), None)
    }

    /// [`Table::attach`] of an import's output, recording its identity `(id, force)` in the
    /// manifest: refused with [`TableError::AlreadyImported`] when the manifest already records
    /// `id`, unless `force` (`formats/import.md` §"Reruns").
    pub fn attach_import(
        &self,
        bulk_dir: &Path,
        opts: &AttachOptions,
        import: Option<(&str, bool)>,
    ) -> Result<AttachReport, TableError> {
        self.attach_import_all(&[bulk_dir], opts, import)
    }

    /// [`Table::attach_import`] of a directory this process has just written: a file listed in
    /// `written` is checked against what its writer recorded (its size, cell count and the
    /// CRC32C of its bytes on disk, read with a small buffer) instead of being decoded and
    /// verified again; a file not listed is verified in full, and a listed file that is not
    /// there is an error.
    pub fn attach_written(
        &self,
        bulk_dir: &Path,
        opts: &AttachOptions,
        import: Option<(&str, bool)>,
        written: &[WrittenFile],
    ) -> Result<AttachReport, TableError> {
        self.attach_dirs(&[bulk_dir], opts, import, written)
    }

    /// [`Table::attach`] of several bulk-load directories (the outputs of many tasks) in one
    /// commit: every file of every directory becomes visible at once, or none.
    pub fn attach_all(&self, bulk_dirs: &[&Path]) -> Result<AttachReport, TableError> {
        self.attach_import_all(bulk_dirs, &AttachOptions::default(), None)
    }

    /// [`Table::attach_import`] of several directories in one commit.
    pub fn attach_import_all(
        &self,
        bulk_dirs: &[&Path],
        opts: &AttachOptions,
        import: Option<(&str, bool)>,
    ) -> Result<AttachReport, TableError> {
        self.attach_dirs(bulk_dirs, opts, import, &[])
    }

    fn attach_dirs(
        &self,
        bulk_dirs: &[&Path],
        opts: &AttachOptions,
        import: Option<(&str, bool)>,
        written: &[WrittenFile],
    ) -> Result<AttachReport, TableError> {
        let lock = self.lock()?;
        let garbage_removed = self.collect_garbage(&lock)?;
        let m = self.manifest()?;
        if let Some((id, false)) = import {
            if let Some(r) = m.import_record(id) {
                return Err(TableError::AlreadyImported {
                    id: id.to_string(),
                    version: r.version,
                });
            }
        }
        let mut skipped = Vec::new();
        let mut ignored_families = Vec::new();
        let mut inputs = Vec::new();
        let mut roots = Vec::new();
        for bulk_dir in bulk_dirs {
            match opts.region_dirs {
                false => roots.push(bulk_dir.to_path_buf()),
                true => roots.extend(
                    bulk_entries(bulk_dir)?
                        .into_iter()
                        .filter(|(_, kind)| kind.is_dir())
                        .map(|(p, _)| p),
                ),
            }
        }
        // Progress: every file found is checked (verified in full, or against what the import
        // wrote), then placed.
        let mut found = 0u64;
        for root in &roots {
            for (fd, kind) in bulk_entries(root)? {
                if kind.is_dir() {
                    found += bulk_entries(&fd)?
                        .iter()
                        .filter(|(_, k)| k.is_file())
                        .count() as u64;
                }
            }
        }
        crate::progress::phase("checking", crate::progress::Unit::Files, found);
        for root in &roots {
            let ignored = opts
                .ignore_unknown_families
                .then_some(&mut ignored_families);
            inputs.extend(self.discover(root, &m, &mut skipped, ignored, written)?);
        }
        if let Some(w) = written
            .iter()
            .find(|w| !inputs.iter().any(|i| i.path == w.path))
        {
            return Err(TableError::Invalid(format!(
                "{}: written by this import but not found in the directory: nothing attached",
                w.path.display()
            )));
        }
        if opts.no_split {
            let straddles = |i: &&Input| m.region_of(&i.first_row) != m.region_of(&i.last_row);
            if let Some(i) = inputs.iter().find(straddles) {
                return Err(TableError::Invalid(format!(
                    "{}: its rows ('{}' to '{}') straddle a region boundary of the table, and \
                     --no-split refuses to split it: nothing attached",
                    i.path.display(),
                    crate::to_string_binary(&i.first_row),
                    crate::to_string_binary(&i.last_row)
                )));
            }
        }
        if inputs.is_empty() && skipped.is_empty() {
            let dirs: Vec<String> = bulk_dirs.iter().map(|d| d.display().to_string()).collect();
            return Err(TableError::Invalid(format!(
                "{}: no HFiles found (expected DIR/<family>/<hfile>)",
                dirs.join(", ")
            )));
        }
        let seq_id = m.next_seq_id;
        let staging = self
            .dir
            .join(STAGING_DIR)
            .join(format!("attach-{}", unique_hex()));
        let mut placed: Vec<PathBuf> = Vec::new();
        let max_files = opts
            .max_files_per_region_family
            .unwrap_or(MAX_FILES_PER_REGION_FAMILY);
        let result = self.place_all(&m, &inputs, seq_id, max_files, &staging, &mut placed);
        let (entries, split_inputs) = match result {
            Ok(x) => x,
            Err(e) => {
                for p in &placed {
                    let _ = std::fs::remove_file(p);
                }
                let _ = std::fs::remove_dir_all(&staging);
                return Err(e);
            }
        };
        let mut next = m.clone();
        next.version += 1;
        next.next_seq_id += 1;
        next.files.extend(entries.iter().cloned());
        if let Some((id, _)) = import {
            next.imports.push(crate::manifest::ImportRecord {
                id: id.to_string(),
                version: next.version,
                seq_id,
            });
        }
        let committed = self.commit(&next, &placed);
        let _ = std::fs::remove_dir_all(&staging);
        committed?;
        drop(lock);
        Ok(AttachReport {
            version: next.version,
            seq_id,
            files: entries,
            split_inputs,
            skipped,
            garbage_removed,
            ignored_families,
        })
    }

    /// Lists and verifies the input files.
    fn discover(
        &self,
        bulk_dir: &Path,
        m: &Manifest,
        skipped: &mut Vec<(PathBuf, String)>,
        mut ignore_unknown: Option<&mut Vec<(PathBuf, usize)>>,
        written: &[WrittenFile],
    ) -> Result<Vec<Input>, TableError> {
        let mut inputs = Vec::new();
        let mut unknown = Vec::new();
        for (fd, kind) in bulk_entries(bulk_dir)? {
            if !kind.is_dir() {
                continue;
            }
            let family = fd
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            if m.family(&family).is_none() {
                match ignore_unknown.as_deref_mut() {
                    Some(ignored) => {
                        let files = bulk_entries(&fd)?
                            .iter()
                            .filter(|(_, k)| k.is_file())
                            .count();
                        ignored.push((fd.clone(), files));
                    }
                    None => unknown.push(family),
                }
                continue;
            }
            for (path, kind) in bulk_entries(&fd)? {
                if !kind.is_file() {
                    continue;
                }
                let identity = FileIdentity::of(&path)?;
                let reader = match written.iter().find(|w| w.path == path) {
                    Some(w) => check_written_input(w)?,
                    None => verified(&path)?,
                };
                if FileIdentity::of(&path)? != identity {
                    return Err(changed_during_attach(&path));
                }
                crate::progress::done(1);
                if reader.is_empty() {
                    skipped.push((path, "empty file".into()));
                    continue;
                }
                let (first_row, first_family) = {
                    let mut s = reader.scanner()?;
                    let c = s.next()?.ok_or_else(|| {
                        TableError::Invalid(format!("{}: no first cell", path.display()))
                    })?;
                    (c.row.to_vec(), c.family.to_vec())
                };
                let last = reader.last_key().and_then(KeyView::parse).ok_or_else(|| {
                    TableError::Invalid(format!("{}: no valid LASTKEY", path.display()))
                })?;
                if first_family != family.as_bytes() || last.family != family.as_bytes() {
                    return Err(TableError::Invalid(format!(
                        "{}: holds cells of family '{}' but sits in directory '{family}'",
                        path.display(),
                        String::from_utf8_lossy(&first_family)
                    )));
                }
                let last_row = last.row.to_vec();
                inputs.push(Input {
                    path,
                    family: family.clone(),
                    first_row,
                    last_row,
                    include_tags: reader.encoding_context().include_tags,
                    identity,
                });
            }
        }
        if !unknown.is_empty() {
            return Err(TableError::Invalid(format!(
                "{}: families not in table {}: {}",
                bulk_dir.display(),
                m.table,
                unknown.join(", ")
            )));
        }
        Ok(inputs)
    }

    /// Places every input into `data/`, splitting straddling files. Returns the entries and how
    /// many inputs were split. Paths created are pushed to `placed` as they are made.
    fn place_all(
        &self,
        m: &Manifest,
        inputs: &[Input],
        seq_id: u64,
        max_files: usize,
        staging: &Path,
        placed: &mut Vec<PathBuf>,
    ) -> Result<(Vec<StoreFileEntry>, usize), TableError> {
        let mut entries = Vec::new();
        let mut split_inputs = 0;
        let mut per_store: std::collections::HashMap<(String, String), usize> = Default::default();
        crate::progress::phase("placing", crate::progress::Unit::Files, inputs.len() as u64);
        for input in inputs {
            crate::check_interrupt()?;
            let ri = m
                .region_of(&input.first_row)
                .ok_or_else(|| TableError::Invalid("regions do not cover the key space".into()))?;
            let rj = m
                .region_of(&input.last_row)
                .ok_or_else(|| TableError::Invalid("regions do not cover the key space".into()))?;
            let pieces: Vec<(usize, PathBuf, bool)> = if ri == rj {
                vec![(ri, input.path.clone(), false)]
            } else {
                split_inputs += 1;
                self.split_input(m, input, staging)?
                    .into_iter()
                    .map(|(r, p)| (r, p, true))
                    .collect()
            };
            for (region_idx, src, staged) in pieces {
                let region = &m.regions[region_idx];
                let n = per_store
                    .entry((region.id.clone(), input.family.clone()))
                    .or_default();
                *n += 1;
                if *n > max_files {
                    return Err(TableError::Invalid(format!(
                        "more than {max_files} files for region {} family {} in one attach \
                         (hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily)",
                        region.id, input.family
                    )));
                }
                let fam_dir = self.dir.join(DATA_DIR).join(&region.id).join(&input.family);
                self.fs
                    .create_dir_all(&fam_dir)
                    .map_err(|e| TableError::io(&fam_dir, e))?;
                let name = format!("{}_SeqId_{seq_id}_", unique_hex());
                let dest = fam_dir.join(&name);
                if staged {
                    self.fs
                        .rename(&src, &dest)
                        .map_err(|e| TableError::io(&dest, e))?;
                } else {
                    self.fs
                        .link_or_copy(&src, &dest)
                        .map_err(|e| TableError::io(&dest, e))?;
                }
                placed.push(dest.clone());
                self.fs
                    .sync_dir(&fam_dir)
                    .map_err(|e| TableError::io(&fam_dir, e))?;
                for d in [fam_dir.parent(), fam_dir.parent().and_then(Path::parent)]
                    .into_iter()
                    .flatten()
                {
                    self.fs.sync_dir(d).map_err(|e| TableError::io(d, e))?;
                }
                let reader = HFileReader::open(&dest)?;
                let size = std::fs::metadata(&dest)
                    .map_err(|e| TableError::io(&dest, e))?
                    .len();
                let first_row = {
                    let mut s = reader.scanner()?;
                    s.next()?.map(|c| c.row.to_vec()).unwrap_or_default()
                };
                let last_row = reader
                    .last_key()
                    .and_then(KeyView::parse)
                    .map(|k| k.row.to_vec())
                    .unwrap_or_default();
                let (min_ts, max_ts) = reader
                    .file_info()
                    .time_range()
                    .unwrap_or((i64::MIN, i64::MAX));
                entries.push(StoreFileEntry {
                    region: region.id.clone(),
                    family: input.family.clone(),
                    name,
                    seq_id,
                    size,
                    entries: reader.entry_count(),
                    first_row,
                    last_row,
                    min_ts,
                    max_ts,
                    compacted_under: None,
                });
            }
            crate::progress::done(1);
        }
        Ok((entries, split_inputs))
    }

    /// Rewrites a straddling input as one file per region it covers (family settings), in
    /// `staging`. Returns (region index, staged path) pairs.
    fn split_input(
        &self,
        m: &Manifest,
        input: &Input,
        staging: &Path,
    ) -> Result<Vec<(usize, PathBuf)>, TableError> {
        let family = m
            .family(&input.family)
            .ok_or_else(|| TableError::Invalid(format!("family {} vanished", input.family)))?;
        self.fs
            .create_dir_all(staging)
            .map_err(|e| TableError::io(staging, e))?;
        let now = hfkit_format::cell::now_ms();
        let mut opts = family.writer_options(now)?;
        opts.include_tags = input.include_tags || opts.include_tags;
        // The input again (its verified reader was dropped), checked to be the file verified.
        let reader = HFileReader::open(&input.path)?;
        if FileIdentity::of(&input.path)? != input.identity {
            return Err(changed_during_attach(&input.path));
        }
        let mut out = Vec::new();
        let mut scanner = reader.scanner()?;
        // Each piece is written straight to its staging file (the attach holds a write buffer,
        // not a piece) and fsynced when complete; staging is removed if the attach fails.
        type Piece = (
            usize,
            PathBuf,
            HFileWriter<std::io::BufWriter<std::fs::File>>,
        );
        let mut current: Option<Piece> = None;
        let finish =
            |cur: Option<Piece>, out: &mut Vec<(usize, PathBuf)>| -> Result<(), TableError> {
                if let Some((region, p, w)) = cur {
                    let (buf, _) = w.finish()?;
                    buf.into_inner()
                        .map_err(|e| TableError::io(&p, e.into_error()))?;
                    self.fs.sync_file(&p).map_err(|e| TableError::io(&p, e))?;
                    out.push((region, p));
                }
                Ok(())
            };
        while let Some(cell) = scanner.next()? {
            let region = m
                .region_of(cell.row)
                .ok_or_else(|| TableError::Invalid("regions do not cover the key space".into()))?;
            if current.as_ref().map(|(r, _, _)| *r) != Some(region) {
                finish(current.take(), &mut out)?;
                let p = staging.join(format!("{}.{region}", unique_hex()));
                let file = std::fs::File::create(&p).map_err(|e| TableError::io(&p, e))?;
                let w = HFileWriter::new(
                    std::io::BufWriter::with_capacity(1 << 20, file),
                    opts.clone(),
                )?;
                current = Some((region, p, w));
            }
            if let Some((_, _, w)) = current.as_mut() {
                w.append(&cell)?;
            }
        }
        finish(current.take(), &mut out)?;
        self.fs
            .sync_dir(staging)
            .map_err(|e| TableError::io(staging, e))?;
        Ok(out)
    }
}

/// The error for an input that is not the file verified any more.
fn changed_during_attach(path: &Path) -> TableError {
    TableError::Invalid(format!(
        "{}: changed while the attach was verifying it: nothing attached",
        path.display()
    ))
}

/// Opens a file from outside and verifies it in full (`format::verify`).
fn verified(path: &Path) -> Result<HFileReader, TableError> {
    let reader = HFileReader::open(path)
        .map_err(|e| TableError::Invalid(format!("{}: {e}", path.display())))?;
    let v = verify(&reader);
    if let Some(p) = v.problems.first() {
        return Err(TableError::Invalid(format!(
            "{}: failed verification: {p}{}",
            path.display(),
            if v.problems.len() > 1 {
                format!(" (and {} more problems)", v.problems.len() - 1)
            } else {
                String::new()
            }
        )));
    }
    Ok(reader)
}

/// [`check_written`] of an import's output, as an attach's error.
fn check_written_input(w: &WrittenFile) -> Result<HFileReader, TableError> {
    check_written(w).map_err(|e| match e {
        WrittenFileError::Table(e) => e,
        WrittenFileError::Changed(what) => TableError::Invalid(format!(
            "{}: changed after this import wrote it ({what}): nothing attached",
            w.path.display()
        )),
    })
}

/// The entries of a bulk-load directory or of one of its family directories that attach reads,
/// sorted, each with its type (of the target, for a link): names starting with `.` or `_` are left out,
/// symbolic links are followed, and one that leads nowhere is an error naming it (a family or a
/// file silently left out would be data missing from the table).
fn bulk_entries(dir: &Path) -> Result<Vec<(PathBuf, std::fs::FileType)>, TableError> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| TableError::io(dir, e))? {
        let p = e.map_err(|e| TableError::io(dir, e))?.path();
        if p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(['_', '.']))
        {
            continue;
        }
        let target = follow_links(&p).map_err(|e| TableError::Invalid(e.to_string()))?;
        let md = std::fs::metadata(&target).map_err(|e| TableError::io(&p, e))?;
        out.push((p, md.file_type()));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::FileIdentity;

    #[test]
    fn a_file_rewritten_or_replaced_has_another_identity() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"first").unwrap();
        let first = FileIdentity::of(&path).unwrap();
        assert_eq!(FileIdentity::of(&path).unwrap(), first, "unchanged");
        // Replaced by a rename (another inode), with the same length.
        let other = dir.path().join("g");
        std::fs::write(&other, b"other").unwrap();
        std::fs::rename(&other, &path).unwrap();
        let replaced = FileIdentity::of(&path).unwrap();
        assert_ne!(replaced, first, "replaced");
        // Rewritten in place: the same inode, a new length or modification time.
        std::fs::write(&path, b"longer bytes").unwrap();
        assert_ne!(FileIdentity::of(&path).unwrap(), replaced, "rewritten");
    }
}
