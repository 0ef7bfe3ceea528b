//! [`Store`]: the operations the table and pipeline layers need, on a local filesystem or on
//! one S3 bucket. Blocking calls: the object-store side runs on one small tokio runtime shared
//! by every store of the process. Spec: `formats/storage.md` §"Operations".

use std::io::{Read, Write};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use futures::StreamExt;
use object_store::aws::AmazonS3;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};

use super::{Location, StorageConfig, StorageError};

/// What [`Store::head`] and [`Store::list`] tell about an object or file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectInfo {
    pub location: Location,
    pub size: u64,
    /// The object's ETag (S3); `None` for a local file.
    pub e_tag: Option<String>,
    /// Seconds since the epoch, by the store's clock.
    pub last_modified: i64,
}

/// How a [`Store::put`] may replace what is there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PutCondition {
    Overwrite,
    /// Only if nothing is there (`If-None-Match: *`).
    CreateOnly,
    /// Only if the object's ETag is still this (`If-Match`).
    IfMatch(String),
}

/// Requests and bytes a store has made and moved (reads and writes), for `--stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    pub requests: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    requests: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
}

impl Counters {
    pub(crate) fn request(&self, read: u64, written: u64) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes_read.fetch_add(read, Ordering::Relaxed);
        self.bytes_written.fetch_add(written, Ordering::Relaxed);
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Backend {
    Local,
    S3 {
        bucket: String,
        client: Arc<AmazonS3>,
    },
}

/// A local filesystem, or one S3 bucket.
#[derive(Clone, Debug)]
pub struct Store {
    pub(crate) backend: Backend,
    pub(crate) counters: Arc<Counters>,
}

/// The runtime every object-store request runs on.
// Building it fails only when the process cannot start threads at all; nothing else in hfkit
// would run then either, so this is a process-level invariant, not an input-dependent path.
#[allow(clippy::expect_used)]
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("hfkit-storage")
            .enable_all()
            .build()
            .expect("the storage runtime starts (threads and a timer)")
    })
}

impl Store {
    /// The store holding `loc`: the local filesystem, or `loc`'s bucket.
    pub fn open(loc: &Location, cfg: &StorageConfig) -> Result<Store, StorageError> {
        let backend = match loc {
            Location::Local(_) => Backend::Local,
            Location::S3 { bucket, .. } => {
                let client = cfg
                    .s3_builder(bucket)
                    .build()
                    .map_err(|e| StorageError::Object {
                        op: "configure S3",
                        location: format!("s3://{bucket}"),
                        source: Box::new(e),
                    })?;
                Backend::S3 {
                    bucket: bucket.clone(),
                    client: Arc::new(client),
                }
            }
        };
        Ok(Store {
            backend,
            counters: Arc::new(Counters::default()),
        })
    }

    /// The local filesystem.
    pub fn local() -> Store {
        Store {
            backend: Backend::Local,
            counters: Arc::new(Counters::default()),
        }
    }

    /// Requests made and bytes moved so far.
    pub fn stats(&self) -> StoreStats {
        StoreStats {
            requests: self.counters.requests.load(Ordering::Relaxed),
            bytes_read: self.counters.bytes_read.load(Ordering::Relaxed),
            bytes_written: self.counters.bytes_written.load(Ordering::Relaxed),
        }
    }

    /// The object-store client and key of `loc`; `None` for a local location. An error for
    /// a location in another bucket or a local one on an S3 store.
    pub(crate) fn target(
        &self,
        op: &'static str,
        loc: &Location,
    ) -> Result<Option<(&AmazonS3, ObjectPath)>, StorageError> {
        match (&self.backend, loc) {
            (Backend::Local, Location::Local(_)) => Ok(None),
            (Backend::S3 { bucket, client }, Location::S3 { bucket: b, key }) if b == bucket => {
                // The key as written (`parse`, not `from`, which percent-encodes characters
                // such as `[` and `%`): the object has the name the user gave, and a listed
                // object's URL names it again.
                let path = ObjectPath::parse(key.as_str()).map_err(|e| {
                    StorageError::Config(format!("{loc}: {op}: not an object key: {e}"))
                })?;
                Ok(Some((client.as_ref(), path)))
            }
            _ => Err(StorageError::Config(format!(
                "{loc}: {op}: not on this store ({})",
                match &self.backend {
                    Backend::Local => "the local filesystem".to_string(),
                    Backend::S3 { bucket, .. } => format!("s3://{bucket}"),
                }
            ))),
        }
    }

    /// The whole of a file or object.
    pub fn read(&self, loc: &Location) -> Result<Vec<u8>, StorageError> {
        const OP: &str = "read";
        match self.target(OP, loc)? {
            None => std::fs::read(local(loc)).map_err(|e| io_error(OP, loc, e)),
            Some((client, key)) => {
                let bytes = runtime()
                    .block_on(async { client.get(&key).await?.bytes().await })
                    .map_err(|e| object_error(OP, loc, e))?;
                self.counters.request(bytes.len() as u64, 0);
                Ok(bytes.to_vec())
            }
        }
    }

    /// Bytes `range` of a file or object; an error if it is shorter.
    pub fn read_range(&self, loc: &Location, range: Range<u64>) -> Result<Bytes, StorageError> {
        const OP: &str = "read range";
        match self.target(OP, loc)? {
            None => {
                use std::io::{Seek, SeekFrom};
                let mut f = std::fs::File::open(local(loc)).map_err(|e| io_error(OP, loc, e))?;
                f.seek(SeekFrom::Start(range.start))
                    .map_err(|e| io_error(OP, loc, e))?;
                let mut buf = vec![0; (range.end - range.start) as usize];
                f.read_exact(&mut buf).map_err(|e| io_error(OP, loc, e))?;
                Ok(Bytes::from(buf))
            }
            Some((client, key)) => {
                let want = range.end - range.start;
                let bytes = runtime()
                    .block_on(client.get_range(&key, range.clone()))
                    .map_err(|e| object_error(OP, loc, e))?;
                self.counters.request(bytes.len() as u64, 0);
                if bytes.len() as u64 != want {
                    return Err(StorageError::Io {
                        op: OP,
                        location: loc.to_string(),
                        source: std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            format!(
                                "bytes {}..{}: got {} bytes (object truncated?)",
                                range.start,
                                range.end,
                                bytes.len()
                            ),
                        ),
                    });
                }
                Ok(bytes)
            }
        }
    }

    /// A reader of the whole file or object, streamed (memory: one network chunk).
    /// A stream of the object's bytes from `offset` to its end (one GET on object storage,
    /// ranged past 0): a task reading its split of an input.
    pub fn reader_from(
        &self,
        loc: &Location,
        offset: u64,
    ) -> Result<Box<dyn Read + Send>, StorageError> {
        const OP: &str = "read";
        match self.target(OP, loc)? {
            None => {
                use std::io::{Seek, SeekFrom};
                let mut f = std::fs::File::open(local(loc)).map_err(|e| io_error(OP, loc, e))?;
                if offset > 0 {
                    f.seek(SeekFrom::Start(offset))
                        .map_err(|e| io_error(OP, loc, e))?;
                }
                Ok(Box::new(f))
            }
            Some((client, key)) => {
                let opts = object_store::GetOptions {
                    range: (offset > 0).then_some(object_store::GetRange::Offset(offset)),
                    ..Default::default()
                };
                let got = runtime()
                    .block_on(client.get_opts(&key, opts))
                    .map_err(|e| object_error(OP, loc, e))?;
                self.counters.request(0, 0);
                Ok(Box::new(StreamReader {
                    stream: got.into_stream(),
                    chunk: Bytes::new(),
                    location: loc.clone(),
                    counters: self.counters.clone(),
                }))
            }
        }
    }

    pub fn reader(&self, loc: &Location) -> Result<Box<dyn Read + Send>, StorageError> {
        self.reader_from(loc, 0)
    }

    /// Size, ETag and modification time; `None` when there is nothing there.
    pub fn head(&self, loc: &Location) -> Result<Option<ObjectInfo>, StorageError> {
        const OP: &str = "head";
        match self.target(OP, loc)? {
            None => match std::fs::metadata(local(loc)) {
                Ok(m) => Ok(Some(local_info(loc.clone(), &m))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(io_error(OP, loc, e)),
            },
            Some((client, key)) => {
                let got = runtime().block_on(client.head(&key));
                self.counters.request(0, 0);
                match got {
                    Ok(m) => Ok(Some(ObjectInfo {
                        location: loc.clone(),
                        size: m.size,
                        e_tag: m.e_tag,
                        last_modified: m.last_modified.timestamp(),
                    })),
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(object_error(OP, loc, e)),
                }
            }
        }
    }

    /// The size of a file or object; not found is an error.
    pub fn size(&self, loc: &Location) -> Result<u64, StorageError> {
        self.head(loc)?
            .map(|i| i.size)
            .ok_or_else(|| StorageError::NotFound {
                op: "size",
                location: loc.to_string(),
            })
    }

    /// Every file or object below `prefix` (recursively), sorted by location. Locally, files
    /// only (no directories).
    pub fn list(&self, prefix: &Location) -> Result<Vec<ObjectInfo>, StorageError> {
        const OP: &str = "list";
        let mut out = Vec::new();
        match self.target(OP, prefix)? {
            None => list_local(prefix, local(prefix), &mut out)?,
            Some((client, key)) => {
                let Location::S3 { bucket, .. } = prefix else {
                    unreachable!("target() returned an S3 client for an S3 location")
                };
                let key = if key.as_ref().is_empty() {
                    None
                } else {
                    Some(key)
                };
                let metas: Vec<_> = runtime()
                    .block_on(async { client.list(key.as_ref()).collect::<Vec<_>>().await });
                self.counters.request(0, 0);
                for m in metas {
                    let m = m.map_err(|e| object_error(OP, prefix, e))?;
                    out.push(ObjectInfo {
                        location: Location::S3 {
                            bucket: bucket.clone(),
                            key: m.location.to_string(),
                        },
                        size: m.size,
                        e_tag: m.e_tag,
                        last_modified: m.last_modified.timestamp(),
                    });
                }
            }
        }
        out.sort_by_cached_key(|i| i.location.to_string());
        Ok(out)
    }

    /// Writes the whole object at once, as `cond` allows. Returns the new ETag (S3). A lost
    /// condition is [`StorageError::AlreadyExists`] or [`StorageError::Precondition`].
    pub fn put(
        &self,
        loc: &Location,
        data: Vec<u8>,
        cond: PutCondition,
    ) -> Result<Option<String>, StorageError> {
        const OP: &str = "put";
        match self.target(OP, loc)? {
            None => {
                let path = local(loc);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| io_error(OP, loc, e))?;
                }
                match cond {
                    PutCondition::Overwrite => {
                        std::fs::write(path, &data).map_err(|e| io_error(OP, loc, e))?
                    }
                    PutCondition::CreateOnly => {
                        let mut f = std::fs::OpenOptions::new()
                            .write(true)
                            .create_new(true)
                            .open(path)
                            .map_err(|e| {
                                if e.kind() == std::io::ErrorKind::AlreadyExists {
                                    StorageError::AlreadyExists {
                                        op: OP,
                                        location: loc.to_string(),
                                    }
                                } else {
                                    io_error(OP, loc, e)
                                }
                            })?;
                        f.write_all(&data).map_err(|e| io_error(OP, loc, e))?;
                    }
                    PutCondition::IfMatch(_) => {
                        return Err(StorageError::Config(format!(
                            "{loc}: {OP}: if-match writes are for object stores (local tables use CURRENT and rename)"
                        )))
                    }
                }
                Ok(None)
            }
            Some((client, key)) => {
                let n = data.len() as u64;
                let mode = match cond {
                    PutCondition::Overwrite => PutMode::Overwrite,
                    PutCondition::CreateOnly => PutMode::Create,
                    PutCondition::IfMatch(e_tag) => PutMode::Update(UpdateVersion {
                        e_tag: Some(e_tag),
                        version: None,
                    }),
                };
                let opts = PutOptions {
                    mode,
                    ..PutOptions::default()
                };
                let got = runtime().block_on(client.put_opts(&key, PutPayload::from(data), opts));
                self.counters.request(0, n);
                match got {
                    Ok(r) => Ok(r.e_tag),
                    Err(object_store::Error::AlreadyExists { .. }) => {
                        Err(StorageError::AlreadyExists {
                            op: OP,
                            location: loc.to_string(),
                        })
                    }
                    Err(object_store::Error::Precondition { .. }) => {
                        Err(StorageError::Precondition {
                            op: OP,
                            location: loc.to_string(),
                        })
                    }
                    Err(e) => Err(object_error(OP, loc, e)),
                }
            }
        }
    }

    /// Removes a file or object; nothing there is not an error.
    pub fn delete(&self, loc: &Location) -> Result<(), StorageError> {
        const OP: &str = "delete";
        match self.target(OP, loc)? {
            None => match std::fs::remove_file(local(loc)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_error(OP, loc, e)),
                _ => Ok(()),
            },
            Some((client, key)) => {
                let got = runtime().block_on(client.delete(&key));
                self.counters.request(0, 0);
                match got {
                    Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                    Err(e) => Err(object_error(OP, loc, e)),
                }
            }
        }
    }

    /// Copies `from` to `to` within the store (server-side on S3: no byte passes through
    /// here).
    pub fn copy(&self, from: &Location, to: &Location) -> Result<(), StorageError> {
        const OP: &str = "copy";
        match (self.target(OP, from)?, self.target(OP, to)?) {
            (Some((client, src)), Some((_, dst))) => {
                let got = runtime().block_on(client.copy(&src, &dst));
                self.counters.request(0, 0);
                got.map_err(|e| object_error(OP, from, e))
            }
            _ => {
                let dst = local(to);
                if let Some(parent) = dst.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| io_error(OP, to, e))?;
                }
                std::fs::copy(local(from), dst)
                    .map(|_| ())
                    .map_err(|e| io_error(OP, from, e))
            }
        }
    }

    /// Downloads `from` (any store) into the local file `to`, streamed.
    pub fn download(&self, from: &Location, to: &std::path::Path) -> Result<u64, StorageError> {
        let mut r = self.reader(from)?;
        let dst = Location::Local(to.to_path_buf());
        let mut f = std::fs::File::create(to).map_err(|e| io_error("download", &dst, e))?;
        let n = std::io::copy(&mut r, &mut f).map_err(|e| io_error("download", from, e))?;
        Ok(n)
    }

    /// Downloads every object below `base` into the local directory `to`, at the same
    /// relative paths (directories created). Returns each object as it was listed (its ETag
    /// before it was read) with the local path its bytes went to.
    pub fn download_tree(
        &self,
        base: &Location,
        to: &std::path::Path,
    ) -> Result<Vec<(ObjectInfo, std::path::PathBuf)>, StorageError> {
        let mut out = Vec::new();
        for o in self.list(base)? {
            let Some(rel) = o.location.relative_to(base) else {
                continue;
            };
            let p = to.join(&rel);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| io_error("download", &Location::Local(parent.to_path_buf()), e))?;
            }
            self.download(&o.location, &p)?;
            out.push((o, p));
        }
        Ok(out)
    }
}

/// The path of a local location (only called after `target` said it is local).
fn local(loc: &Location) -> &std::path::Path {
    loc.local_path().unwrap_or(std::path::Path::new(""))
}

/// What a local file's metadata says, as an [`ObjectInfo`].
fn local_info(location: Location, m: &std::fs::Metadata) -> ObjectInfo {
    ObjectInfo {
        location,
        size: m.len(),
        e_tag: None,
        last_modified: m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs() as i64),
    }
}

fn list_local(
    base: &Location,
    dir: &std::path::Path,
    out: &mut Vec<ObjectInfo>,
) -> Result<(), StorageError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_error("list", base, e)),
    };
    for e in entries {
        let e = e.map_err(|e| io_error("list", base, e))?;
        let path = e.path();
        let meta = e.metadata().map_err(|e| io_error("list", base, e))?;
        if meta.is_dir() {
            list_local(base, &path, out)?;
        } else {
            out.push(local_info(Location::Local(path), &meta));
        }
    }
    Ok(())
}

pub(crate) fn io_error(op: &'static str, loc: &Location, e: std::io::Error) -> StorageError {
    if e.kind() == std::io::ErrorKind::NotFound {
        return StorageError::NotFound {
            op,
            location: loc.to_string(),
        };
    }
    StorageError::Io {
        op,
        location: loc.to_string(),
        source: e,
    }
}

pub(crate) fn object_error(
    op: &'static str,
    loc: &Location,
    e: object_store::Error,
) -> StorageError {
    match e {
        object_store::Error::NotFound { .. } => StorageError::NotFound {
            op,
            location: loc.to_string(),
        },
        e => StorageError::Object {
            op,
            location: loc.to_string(),
            source: Box::new(e),
        },
    }
}

/// A blocking [`Read`] over an object's byte stream.
struct StreamReader {
    stream: futures::stream::BoxStream<'static, object_store::Result<Bytes>>,
    chunk: Bytes,
    location: Location,
    counters: Arc<Counters>,
}

impl Read for StreamReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.chunk.is_empty() {
            match runtime().block_on(self.stream.next()) {
                None => return Ok(0),
                Some(Ok(b)) => {
                    self.counters
                        .bytes_read
                        .fetch_add(b.len() as u64, Ordering::Relaxed);
                    self.chunk = b;
                }
                Some(Err(e)) => {
                    return Err(std::io::Error::other(format!(
                        "{}: read: {e}",
                        self.location
                    )))
                }
            }
        }
        let n = buf.len().min(self.chunk.len());
        buf[..n].copy_from_slice(&self.chunk[..n]);
        self.chunk = self.chunk.slice(n..);
        Ok(n)
    }
}
