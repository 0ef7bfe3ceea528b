//! Tables on object storage (`s3://bucket/prefix`): the commit protocol without rename or
//! lock file. Spec: `formats/table.md` §"Tables on object storage".
//!
//! The objects are the local layout's files: `P/data/<region>/<family>/<file>` and
//! `P/snapshots/<name>.json` (immutable, written before the commit that names them),
//! `P/manifests/manifest-<20 digits>.json` (immutable; creating the next version with
//! `If-None-Match: *` is the commit point: exactly one writer wins each version) and `P/CURRENT`
//! (a hint naming a recent version, moved forward with `If-Match`; a reader starts there and
//! HEADs the following versions until one is absent).
//!
//! Every operation works on a local *mirror* of the table: a table directory holding the live
//! manifest (and, for operations that read cells, the live files, downloaded), on which the
//! local code runs unchanged (attach, compaction, snapshots, reads). [`RemoteTable::commit`]
//! then uploads what the operation added (data files, snapshots), and creates its manifest
//! versions create-only. A writer that loses a version to another learns it from the 412,
//! deletes what it uploaded, and (for an attach) rebases: attaches its files again onto the new
//! latest version, with a fresh sequence id.
//!
//! A data file whose bytes are those of a bulk-load object on the same store ([`CopySource`]:
//! read and verified by the attach) is not uploaded but copied server-side, and the copy
//! checked (size, ETag) before any version names it (`formats/table.md` §"Attach from object
//! storage").

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hfkit_format::checksum::{crc32c, crc32c_append};
use hfkit_storage::{store_for, Location, PutCondition, StorageError, Store};

use super::directory::{AttachOptions, Table, DATA_DIR, STAGING_DIR};
use super::manifest::{manifest_file_name, Manifest, CURRENT, MANIFEST_DIR};
use super::TableError;

/// Snapshots' directory (as locally).
const SNAPSHOT_DIR: &str = "snapshots";
/// Most rebases of one attach before giving up (each means another writer committed first).
const MAX_REBASES: usize = 200;
/// The upload journals: `<journal_name(data file)>` for each data file being uploaded, written
/// before its multipart upload starts and deleted when it ends (`formats/table.md` §"Tables
/// on object storage").
const UPLOAD_JOURNALS: &str = ".tmp/uploads";

/// The journal's name of the data file `region/family/name` (relative to `data/`).
fn journal_name(rel: &str) -> String {
    rel.replace('/', ".")
}

/// Errors of a table on object storage.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Table(#[from] TableError),
    #[error("{table}: no table there (no manifests/manifest-*.json)")]
    NoTable { table: String },
    #[error("{table}: a table already exists there")]
    Exists { table: String },
    /// Another writer committed version `version` first.
    #[error("{table}: another writer committed version {version} first")]
    Conflict { table: String, version: u64 },
    #[error("{table}: {detail}")]
    Corrupt { table: String, detail: String },
    /// A snapshot of this name was created by another writer meanwhile.
    #[error("{table}: snapshot {name} was created by another writer first")]
    SnapshotExists { table: String, name: String },
}

/// A table on object storage.
#[derive(Clone, Debug)]
pub struct RemoteTable {
    store: Store,
    root: Location,
}

/// The latest manifest version of a remote table: number, bytes, parsed.
#[derive(Clone, Debug)]
pub struct Latest {
    pub version: u64,
    pub bytes: Vec<u8>,
    pub manifest: Manifest,
    /// The snapshots (`<name>.json`) a mirror found; empty otherwise.
    pub snapshots: Vec<String>,
}

/// What [`RemoteTable::commit`] uploaded and committed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Committed {
    /// The version now live (the mirror's).
    pub version: u64,
    pub files_uploaded: usize,
    pub bytes_uploaded: u64,
    /// Data files copied server-side from a [`CopySource`] instead of uploaded.
    pub files_copied: usize,
}

/// A bulk-load object on the table's store that an attach read (into a local file, which it
/// verified in full): a data file with the same bytes is copied from it server-side instead of
/// uploaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopySource {
    pub location: Location,
    /// Its ETag as listed before it was read.
    pub e_tag: Option<String>,
    /// The local file its bytes were read into.
    pub local: PathBuf,
    /// What the bytes read were.
    pub fingerprint: Fingerprint,
}

/// Downloads every object below `base` into the local directory `to` (for a local attach to
/// verify): what each object was, for a server-side copy of it by [`attach_all`].
pub fn download_sources(
    store: &Store,
    base: &Location,
    to: &Path,
) -> Result<Vec<CopySource>, RemoteError> {
    let mut sources = Vec::new();
    for (o, local) in store.download_tree(base, to)? {
        sources.push(CopySource {
            fingerprint: Fingerprint::of(&local)?,
            local,
            location: o.location,
            e_tag: o.e_tag,
        });
    }
    Ok(sources)
}

/// Size, CRC32C and MD5 of a local file's bytes: which [`CopySource`] a data file is, and
/// what the copy's ETag may be (S3 gives an object copied whole the MD5 of its bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    pub size: u64,
    pub crc32c: u32,
    /// Lower-case hex.
    pub md5: String,
}

impl Fingerprint {
    /// Of the file at `path`, read once with a small buffer.
    pub fn of(path: &Path) -> Result<Fingerprint, TableError> {
        use md5::Digest;
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(|e| TableError::io(path, e))?;
        let mut buf = vec![0u8; 256 * 1024];
        let (mut size, mut crc, mut md5) = (0u64, 0u32, md5::Md5::new());
        loop {
            let n = f.read(&mut buf).map_err(|e| TableError::io(path, e))?;
            if n == 0 {
                break;
            }
            size += n as u64;
            crc = crc32c_append(crc, &buf[..n]);
            md5.update(&buf[..n]);
        }
        let md5 = md5.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Ok(Fingerprint {
            size,
            crc32c: crc,
            md5,
        })
    }
}

impl RemoteTable {
    /// The table at `root` (which need not exist yet).
    pub fn at(root: &Location) -> Result<RemoteTable, RemoteError> {
        Ok(RemoteTable {
            store: store_for(root)?,
            root: root.clone(),
        })
    }

    pub fn root(&self) -> &Location {
        &self.root
    }

    fn manifest_loc(&self, version: u64) -> Location {
        self.root
            .join(MANIFEST_DIR)
            .join(&manifest_file_name(version))
    }

    /// The version the `CURRENT` hint names, and its ETag; `None` without a hint.
    fn hint(&self) -> Result<Option<(u64, Option<String>)>, RemoteError> {
        let loc = self.root.join(CURRENT);
        let Some(info) = self.store.head(&loc)? else {
            return Ok(None);
        };
        let text = match self.store.read(&loc) {
            Ok(t) => t,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let text = String::from_utf8_lossy(&text);
        let version = text
            .split_ascii_whitespace()
            .next()
            .and_then(|n| n.strip_prefix("manifest-"))
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| RemoteError::Corrupt {
                table: self.root.to_string(),
                detail: format!("CURRENT: expected '<manifest file> <crc32c>', found {text:?}"),
            })?;
        Ok(Some((version, info.e_tag)))
    }

    /// The newest version: from the hint forward (one HEAD per version committed since the
    /// hint moved, and one more that finds nothing); without a hint, by listing.
    pub fn latest(&self) -> Result<Latest, RemoteError> {
        let mut version = match self.hint()? {
            Some((v, _)) => v,
            None => {
                let listed = self.store.list(&self.root.join(MANIFEST_DIR))?;
                let newest = listed
                    .iter()
                    .filter_map(|i| {
                        i.location
                            .file_name()
                            .strip_prefix("manifest-")?
                            .strip_suffix(".json")?
                            .parse::<u64>()
                            .ok()
                    })
                    .max();
                newest.ok_or_else(|| RemoteError::NoTable {
                    table: self.root.to_string(),
                })?
            }
        };
        while self.store.head(&self.manifest_loc(version + 1))?.is_some() {
            version += 1;
        }
        let bytes = self.store.read(&self.manifest_loc(version))?;
        let manifest: Manifest =
            serde_json::from_slice(&bytes).map_err(|e| RemoteError::Corrupt {
                table: self.root.to_string(),
                detail: format!("{}: manifest JSON: {e}", manifest_file_name(version)),
            })?;
        Ok(Latest {
            version,
            bytes,
            manifest,
            snapshots: Vec::new(),
        })
    }

    /// True when a table exists here.
    pub fn exists(&self) -> Result<bool, RemoteError> {
        match self.latest() {
            Ok(_) => Ok(true),
            Err(RemoteError::NoTable { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Makes `dir` (which must not exist) a local table directory holding the latest version
    /// (and, with `files`, the live files and the snapshots with their files, downloaded).
    /// Returns that version; `None` (and nothing made) when there is no table here.
    ///
    /// A file gone while downloading (garbage-collected after a newer version replaced it)
    /// means a newer version is live: the mirror starts over from it (a few times).
    pub fn mirror(&self, dir: &Path, files: bool) -> Result<Option<Latest>, RemoteError> {
        let mut tries = 0;
        loop {
            match self.mirror_once(dir, files) {
                Err(RemoteError::Storage(e)) if e.is_not_found() && files && tries < 3 => {
                    tries += 1;
                    let _ = std::fs::remove_dir_all(dir);
                }
                r => return r,
            }
        }
    }

    /// A read mirror of the latest version in `dir` (which must not exist): its manifest and
    /// snapshots as [`RemoteTable::mirror`] makes them, no data file, and the mark that makes
    /// [`Table::open`] read each store file from this table by byte ranges
    /// ([`crate::remote_read`]). `None` (and nothing made) when there is no table here.
    pub fn read_mirror(&self, dir: &Path) -> Result<Option<Latest>, RemoteError> {
        let latest = self.mirror(dir, false)?;
        if latest.is_some() {
            crate::remote_read::RemoteData::mark(dir, &self.root)?;
        }
        Ok(latest)
    }

    fn mirror_once(&self, dir: &Path, files: bool) -> Result<Option<Latest>, RemoteError> {
        let latest = match self.latest() {
            Ok(l) => l,
            Err(RemoteError::NoTable { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let io = |p: &Path, e| TableError::io(p, e);
        for d in [MANIFEST_DIR, DATA_DIR, STAGING_DIR] {
            let p = dir.join(d);
            std::fs::create_dir_all(&p).map_err(|e| io(&p, e))?;
        }
        let name = manifest_file_name(latest.version);
        let mpath = dir.join(MANIFEST_DIR).join(&name);
        std::fs::write(&mpath, &latest.bytes).map_err(|e| io(&mpath, e))?;
        let cur = dir.join(CURRENT);
        let pointer = format!("{name} {:08x}\n", crc32c(&latest.bytes));
        std::fs::write(&cur, pointer).map_err(|e| io(&cur, e))?;
        let mut latest = latest;
        let mut wanted: Vec<(String, String, String)> = latest
            .manifest
            .files
            .iter()
            .map(|f| (f.region.clone(), f.family.clone(), f.name.clone()))
            .collect();
        // Snapshots always (small); the files they pin with the live ones.
        for s in self.store.list(&self.root.join(SNAPSHOT_DIR))? {
            let rel = s.location.file_name();
            let p = dir.join(SNAPSHOT_DIR).join(&rel);
            std::fs::create_dir_all(dir.join(SNAPSHOT_DIR))
                .map_err(|e| io(&dir.join(SNAPSHOT_DIR), e))?;
            self.store.download(&s.location, &p)?;
            latest.snapshots.push(rel);
            if let Ok(snap) =
                serde_json::from_slice::<SnapshotFiles>(&std::fs::read(&p).map_err(|e| io(&p, e))?)
            {
                wanted.extend(
                    snap.manifest
                        .files
                        .into_iter()
                        .map(|f| (f.region, f.family, f.name)),
                );
            }
        }
        if files {
            wanted.sort();
            wanted.dedup();
            for (region, family, name) in wanted {
                let rel = format!("{DATA_DIR}/{region}/{family}/{name}");
                let to = dir.join(&rel);
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
                }
                self.store.download(&self.root.join(&rel), &to)?;
            }
        }
        Ok(Some(latest))
    }

    /// Publishes what was done to the mirror `dir` since it was made at version `base`
    /// (`None`: the table did not exist, and the mirror was created locally): uploads the
    /// data files its live manifest names that `base` did not, and the snapshots not yet
    /// uploaded, then creates manifest versions `base + 1 ..= live` create-only, in order.
    /// When another writer created one of them first, deletes what it uploaded and returns
    /// [`RemoteError::Conflict`] (versions of this commit created before stay: each is a
    /// whole, valid version).
    pub fn commit(&self, dir: &Path, base: Option<&Latest>) -> Result<Committed, RemoteError> {
        self.commit_copying(dir, base, &[])
    }

    /// [`RemoteTable::commit`] where a new data file with the bytes of one of `sources` is
    /// copied from it server-side ([`RemoteTable::copy_checked`]) instead of uploaded.
    pub fn commit_copying(
        &self,
        dir: &Path,
        base: Option<&Latest>,
        sources: &[CopySource],
    ) -> Result<Committed, RemoteError> {
        let local = Table::open(dir)?;
        let m = local.manifest()?;
        let mut out = Committed {
            version: m.version,
            ..Committed::default()
        };
        let first = base.map_or(0, |b| b.version + 1);
        let unchanged = base.is_some_and(|b| b.version == m.version);
        let old: BTreeSet<(&str, &str, &str)> = base
            .map(|b| {
                b.manifest
                    .files
                    .iter()
                    .map(|f| (f.region.as_str(), f.family.as_str(), f.name.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        let mut uploaded: Vec<Location> = Vec::new();
        let mut journals: Vec<Location> = Vec::new();
        let result = (|| -> Result<(), RemoteError> {
            for f in &m.files {
                if old.contains(&(f.region.as_str(), f.family.as_str(), f.name.as_str())) {
                    continue;
                }
                let rel = format!("{DATA_DIR}/{}/{}/{}", f.region, f.family, f.name);
                let loc = self.root.join(&rel);
                let path = local.file_path(f);
                if let Some(src) = same_bytes(sources, &path)? {
                    if self.copy_checked(src, &loc, &mut uploaded)? {
                        out.files_copied += 1;
                        continue;
                    }
                }
                // The journal first: a writer killed during the upload leaves it, and the next
                // writer aborts the upload it names (`collect_garbage`).
                let journal = self.root.join(UPLOAD_JOURNALS).join(&journal_name(&format!(
                    "{}/{}/{}",
                    f.region, f.family, f.name
                )));
                self.store
                    .put(&journal, rel.clone().into_bytes(), PutCondition::Overwrite)?;
                journals.push(journal);
                let mut up = self.store.upload(&loc, 8 << 20)?;
                let mut file = std::fs::File::open(&path).map_err(|e| TableError::io(&path, e))?;
                out.bytes_uploaded +=
                    std::io::copy(&mut file, &mut up).map_err(|e| TableError::io(&path, e))?;
                up.complete()?;
                uploaded.push(loc);
                out.files_uploaded += 1;
                if let Some(j) = journals.pop() {
                    self.store.delete(&j)?; // the upload ended
                }
            }
            for (name, path) in local_snapshots(dir)? {
                if base.is_some_and(|b| b.snapshots.contains(&name)) {
                    continue;
                }
                let loc = self.root.join(SNAPSHOT_DIR).join(&name);
                let bytes = std::fs::read(&path).map_err(|e| TableError::io(&path, e))?;
                match self.store.put(&loc, bytes, PutCondition::CreateOnly) {
                    Ok(_) => uploaded.push(loc),
                    // Another writer created one of this name meanwhile: not ours to replace.
                    Err(e) if e.is_conflict() => {
                        return Err(RemoteError::Corrupt {
                            table: self.root.to_string(),
                            detail: format!(
                                "snapshot {name}: another writer created one of this name first"
                            ),
                        })
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            Ok(())
        })();
        // An upload that failed has ended too (aborted when dropped): its journal goes.
        for j in &journals {
            let _ = self.store.delete(j);
        }
        let undo = |uploaded: &[Location]| {
            for l in uploaded {
                let _ = self.store.delete(l);
            }
        };
        if let Err(e) = result {
            undo(&uploaded);
            return Err(e);
        }
        // Snapshots the mirror had and deleted.
        if let Some(b) = base {
            let kept: BTreeSet<String> =
                local_snapshots(dir)?.into_iter().map(|(n, _)| n).collect();
            for name in b.snapshots.iter().filter(|n| !kept.contains(*n)) {
                self.store
                    .delete(&self.root.join(SNAPSHOT_DIR).join(name))?;
            }
        }
        if unchanged {
            return Ok(out); // a snapshot, say: no new manifest version
        }
        for v in first..=m.version {
            let path = dir.join(MANIFEST_DIR).join(manifest_file_name(v));
            let bytes = std::fs::read(&path).map_err(|e| TableError::io(&path, e))?;
            match self
                .store
                .put(&self.manifest_loc(v), bytes, PutCondition::CreateOnly)
            {
                Ok(_) => {}
                Err(e) if e.is_conflict() => {
                    if v == first {
                        undo(&uploaded);
                    }
                    return Err(RemoteError::Conflict {
                        table: self.root.to_string(),
                        version: v,
                    });
                }
                // The create may have happened (its answer lost): the uploads stay, for the
                // version that may name them (garbage collection removes them otherwise).
                Err(e) => return Err(e.into()),
            }
        }
        self.advance_hint(m.version)?;
        Ok(out)
    }

    /// Copies `src` to `to` server-side, then checks the copy before any version may name it:
    /// its size is the size of the bytes verified, and its ETag the MD5 of those bytes (S3's
    /// ETag of an object copied whole) or the source's ETag as listed before it was read, the
    /// source still having that ETag (an unchanged source copied as it was). `to` is pushed to
    /// `made` once created. False (and the copy deleted) when the check fails: the caller
    /// uploads the verified bytes instead.
    pub fn copy_checked(
        &self,
        src: &CopySource,
        to: &Location,
        made: &mut Vec<Location>,
    ) -> Result<bool, RemoteError> {
        self.store.copy(&src.location, to)?;
        made.push(to.clone());
        let tag = |t: &Option<String>| t.as_deref().map(|t| t.trim_matches('"').to_string());
        let copy = self.store.head(to)?;
        let ok = match &copy {
            Some(c) if c.size == src.fingerprint.size => {
                let e_tag = tag(&c.e_tag);
                e_tag.as_deref() == Some(src.fingerprint.md5.as_str())
                    || (e_tag.is_some()
                        && e_tag == tag(&src.e_tag)
                        && self.store.head(&src.location)?.map(|i| tag(&i.e_tag)) == Some(e_tag))
            }
            _ => false,
        };
        if !ok {
            self.store.delete(to)?;
            made.pop();
        }
        Ok(ok)
    }

    /// Deletes the data files no live version or snapshot names and that are older than
    /// `grace_seconds` by the store's clock (the latest manifest's modification time stands
    /// for "now": a file a writer uploaded for a commit still in progress is younger), and
    /// aborts the multipart uploads in progress under `data/` started before that (a writer
    /// killed while uploading leaves one). Returns how many files it deleted and uploads it
    /// aborted.
    pub fn collect_garbage(&self, grace_seconds: i64) -> Result<usize, RemoteError> {
        let latest = self.latest()?;
        let now = self
            .store
            .head(&self.manifest_loc(latest.version))?
            .map_or(i64::MIN, |i| i.last_modified);
        let mut live: BTreeSet<String> = latest
            .manifest
            .files
            .iter()
            .map(|f| format!("{}/{}/{}", f.region, f.family, f.name))
            .collect();
        for s in self.store.list(&self.root.join(SNAPSHOT_DIR))? {
            let snap: SnapshotFiles = serde_json::from_slice(&self.store.read(&s.location)?)
                .map_err(|e| RemoteError::Corrupt {
                    table: self.root.to_string(),
                    detail: format!("{}: {e}", s.location),
                })?;
            live.extend(
                snap.manifest
                    .files
                    .iter()
                    .map(|f| format!("{}/{}/{}", f.region, f.family, f.name)),
            );
        }
        let data = self.root.join(DATA_DIR);
        let mut removed = 0;
        for o in self.store.list(&data)? {
            let Some(rel) = o.location.relative_to(&data) else {
                continue;
            };
            if !live.contains(&rel) && o.last_modified <= now - grace_seconds {
                self.store.delete(&o.location)?;
                removed += 1;
            }
        }
        // Uploads a dead writer left in progress: those whose journal is past the grace
        // period (the journal was written before the upload started).
        let journals = self.root.join(UPLOAD_JOURNALS);
        let old: Vec<_> = self
            .store
            .list(&journals)?
            .into_iter()
            .filter(|j| j.last_modified <= now - grace_seconds)
            .collect();
        if !old.is_empty() {
            let dead: BTreeSet<String> = old
                .iter()
                .filter_map(|j| j.location.relative_to(&journals))
                .collect();
            for u in self.store.pending_uploads(&data)? {
                if u.location
                    .relative_to(&data)
                    .is_some_and(|r| dead.contains(&journal_name(&r)))
                {
                    self.store.abort_pending(&u)?;
                    removed += 1;
                }
            }
            for j in &old {
                self.store.delete(&j.location)?;
            }
        }
        Ok(removed)
    }

    /// Moves the `CURRENT` hint forward to `version` (never back), with `If-Match` so that
    /// two writers moving it at once cannot move it backwards.
    fn advance_hint(&self, version: u64) -> Result<(), RemoteError> {
        let loc = self.root.join(CURRENT);
        for _ in 0..10 {
            let cond = match self.hint()? {
                Some((v, _)) if v >= version => return Ok(()),
                Some((_, Some(e_tag))) => PutCondition::IfMatch(e_tag),
                Some((_, None)) => PutCondition::Overwrite,
                None => PutCondition::CreateOnly,
            };
            let manifest = self.store.read(&self.manifest_loc(version))?;
            let pointer = format!(
                "{} {:08x}\n",
                manifest_file_name(version),
                crc32c(&manifest)
            );
            match self.store.put(&loc, pointer.into_bytes(), cond) {
                Ok(_) => return Ok(()),
                Err(e) if e.is_conflict() => continue,
                Err(e) => return Err(e.into()),
            }
        }
        // Others keep moving it: they move it at least as far. Readers HEAD forward anyway.
        Ok(())
    }
}

/// A snapshot object's file list (the fields a mirror needs).
#[derive(serde::Deserialize)]
struct SnapshotFiles {
    manifest: Manifest,
}

/// The source among `sources` holding the bytes of the local file `path`, if any: one whose
/// local copy is `path` itself (the attach placed it by a hard link), else one whose bytes
/// have `path`'s fingerprint.
fn same_bytes<'a>(
    sources: &'a [CopySource],
    path: &Path,
) -> Result<Option<&'a CopySource>, RemoteError> {
    let meta = std::fs::metadata(path).map_err(|e| TableError::io(path, e))?;
    let size = meta.len();
    if !sources.iter().any(|s| s.fingerprint.size == size) {
        return Ok(None);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let linked = sources.iter().find(|s| {
            std::fs::metadata(&s.local)
                .is_ok_and(|m| (m.dev(), m.ino()) == (meta.dev(), meta.ino()))
        });
        if linked.is_some() {
            return Ok(linked);
        }
    }
    let fp = Fingerprint::of(path)?;
    Ok(sources.iter().find(|s| s.fingerprint == fp))
}

/// `snapshots/<name>.json` files of a local mirror.
fn local_snapshots(dir: &Path) -> Result<Vec<(String, PathBuf)>, RemoteError> {
    let sd = dir.join(SNAPSHOT_DIR);
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(&sd) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(TableError::io(&sd, e).into()),
    };
    for e in entries {
        let e = e.map_err(|e| TableError::io(&sd, e))?;
        let name = e.file_name().to_string_lossy().to_string();
        if name.ends_with(".json") {
            out.push((name, e.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Attaches the bulk-load directory `bulk` (local) to the remote table: on a mirror of the
/// latest version with the local attach, committed (files with the bytes of one of `sources`
/// copied server-side); when another writer commits first, again onto the new latest version.
/// Returns the local attach's report of the winning try.
pub fn attach(
    table: &RemoteTable,
    bulk: &Path,
    scratch: &Path,
    sources: &[CopySource],
) -> Result<super::directory::AttachReport, RemoteError> {
    attach_all(table, &[bulk], &AttachOptions::default(), scratch, sources)
}

/// [`attach`] of several local bulk-load directories (many tasks' outputs) in one commit, with
/// `opts`; files with the bytes of one of `sources` are copied server-side.
pub fn attach_all(
    table: &RemoteTable,
    bulks: &[&Path],
    opts: &AttachOptions,
    scratch: &Path,
    sources: &[CopySource],
) -> Result<super::directory::AttachReport, RemoteError> {
    for attempt in 0..MAX_REBASES {
        let dir = scratch.join(format!("attach-{attempt}"));
        let base = table
            .mirror(&dir, false)?
            .ok_or_else(|| RemoteError::NoTable {
                table: table.root.to_string(),
            })?;
        let report = Table::open(&dir)?.attach_import_all(bulks, opts, None)?;
        let committed = table.commit_copying(&dir, Some(&base), sources);
        let _ = std::fs::remove_dir_all(&dir);
        match committed {
            Ok(_) => return Ok(report),
            Err(RemoteError::Conflict { .. }) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(RemoteError::Conflict {
        table: table.root.to_string(),
        version: 0,
    })
}

/// Rebases what the mirror `dir` attached since `base` onto the latest version: its new files
/// laid out as a bulk-load directory (hard links) and attached again by [`attach`].
pub fn rebase_attach(
    table: &RemoteTable,
    dir: &Path,
    base: Option<&Latest>,
    scratch: &Path,
    sources: &[CopySource],
) -> Result<super::directory::AttachReport, RemoteError> {
    let local = Table::open(dir)?;
    let m = local.manifest()?;
    let old: BTreeSet<&str> = base
        .map(|b| b.manifest.files.iter().map(|f| f.name.as_str()).collect())
        .unwrap_or_default();
    let bulk = scratch.join("rebase-bulk");
    for f in m.files.iter().filter(|f| !old.contains(f.name.as_str())) {
        let fd = bulk.join(&f.family);
        std::fs::create_dir_all(&fd).map_err(|e| TableError::io(&fd, e))?;
        let to = fd.join(&f.name);
        let from = local.file_path(f);
        std::fs::hard_link(&from, &to)
            .or_else(|_| std::fs::copy(&from, &to).map(|_| ()))
            .map_err(|e| TableError::io(&to, e))?;
    }
    let r = attach(table, &bulk, scratch, sources);
    let _ = std::fs::remove_dir_all(&bulk);
    r
}
