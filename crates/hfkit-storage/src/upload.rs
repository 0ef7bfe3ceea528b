//! [`Upload`]: a file written as a stream, invisible at its location until completed. On S3 a
//! multipart upload (parts of `part_size` bytes, at most [`PARTS_IN_FLIGHT`] sent at once, so
//! memory stays `part_size * (PARTS_IN_FLIGHT + 1)` whatever the object's size); locally a
//! hidden temporary file renamed into place. An upload dropped before [`Upload::complete`]
//! is aborted (the multipart upload and its parts are discarded, the temporary file removed).
//! Spec: `formats/storage.md` §"Uploads".

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use object_store::{MultipartUpload, ObjectStoreExt, PutPayload};

use super::store::{io_error, object_error, runtime, Counters, Store};
use super::{Location, StorageError};

/// S3's smallest part (but the last).
pub const MIN_PART_SIZE: usize = 5 * 1024 * 1024;
/// Parts uploading at once, per upload.
pub const PARTS_IN_FLIGHT: usize = 2;

enum Target {
    Local {
        tmp: PathBuf,
        dest: PathBuf,
        file: Option<std::io::BufWriter<std::fs::File>>,
    },
    S3 {
        upload: Box<dyn MultipartUpload>,
        in_flight: VecDeque<tokio::task::JoinHandle<object_store::Result<()>>>,
        parts: usize,
    },
}

/// A streaming upload; write with [`Write`], then [`Upload::finish_data`] and
/// [`Upload::complete`].
pub struct Upload {
    target: Target,
    location: Location,
    buf: Vec<u8>,
    part_size: usize,
    written: u64,
    done: bool,
    counters: Arc<Counters>,
}

impl Store {
    /// Starts a streaming upload to `loc` ([`Upload`]): nothing is visible at `loc` until it
    /// completes; an upload dropped or failed is aborted.
    pub fn upload(&self, loc: &Location, part_size: usize) -> Result<Upload, StorageError> {
        Upload::start(self, loc, part_size)
    }
}

impl Upload {
    fn start(store: &Store, loc: &Location, part_size: usize) -> Result<Upload, StorageError> {
        const OP: &str = "start upload";
        let target = match store.target(OP, loc)? {
            None => {
                let dest = loc
                    .local_path()
                    .unwrap_or(std::path::Path::new(""))
                    .to_path_buf();
                let dir = dest.parent().map(PathBuf::from).unwrap_or_default();
                if !dir.as_os_str().is_empty() {
                    std::fs::create_dir_all(&dir).map_err(|e| io_error(OP, loc, e))?;
                }
                let tmp = dir.join(format!(
                    ".{}.{}.hfkit-tmp",
                    loc.file_name(),
                    std::process::id()
                ));
                let f = std::fs::File::create(&tmp).map_err(|e| io_error(OP, loc, e))?;
                Target::Local {
                    tmp,
                    dest,
                    file: Some(std::io::BufWriter::with_capacity(256 * 1024, f)),
                }
            }
            Some((client, key)) => {
                let upload = runtime()
                    .block_on(client.put_multipart(&key))
                    .map_err(|e| object_error(OP, loc, e))?;
                store.counters.request(0, 0);
                Target::S3 {
                    upload,
                    in_flight: VecDeque::new(),
                    parts: 0,
                }
            }
        };
        Ok(Upload {
            target,
            location: loc.clone(),
            buf: Vec::new(),
            part_size: part_size.max(MIN_PART_SIZE),
            written: 0,
            done: false,
            counters: store.counters.clone(),
        })
    }

    /// Where the upload goes.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Sends the buffered bytes as one part, waiting for older parts while too many are out.
    fn send_part(&mut self) -> Result<(), StorageError> {
        let Target::S3 {
            upload,
            in_flight,
            parts,
        } = &mut self.target
        else {
            return Ok(());
        };
        while in_flight.len() >= PARTS_IN_FLIGHT {
            if let Some(h) = in_flight.pop_front() {
                wait_part(h, &self.location)?;
            }
        }
        let data = std::mem::take(&mut self.buf);
        self.counters.request(0, data.len() as u64);
        let fut = upload.put_part(PutPayload::from(data));
        in_flight.push_back(runtime().spawn(fut));
        *parts += 1;
        Ok(())
    }

    /// Sends everything written and waits until every part is stored: after this only
    /// [`Upload::complete`] (one small request) is left, so an output of many files can upload
    /// all their data first and make them visible together at the end.
    pub fn finish_data(&mut self) -> Result<(), StorageError> {
        const OP: &str = "upload";
        let loc = self.location.clone();
        let needs_part = match &self.target {
            Target::S3 { parts, .. } => !self.buf.is_empty() || *parts == 0,
            Target::Local { .. } => false,
        };
        if needs_part {
            self.send_part()?;
        }
        match &mut self.target {
            Target::Local { file, .. } => {
                if let Some(f) = file.as_mut() {
                    f.flush().map_err(|e| io_error(OP, &loc, e))?;
                    f.get_ref().sync_all().map_err(|e| io_error(OP, &loc, e))?;
                }
            }
            Target::S3 { in_flight, .. } => {
                while let Some(h) = in_flight.pop_front() {
                    wait_part(h, &loc)?;
                }
            }
        }
        Ok(())
    }

    /// Makes the object visible at its location, whole.
    pub fn complete(mut self) -> Result<(), StorageError> {
        const OP: &str = "complete upload";
        self.finish_data()?;
        let loc = self.location.clone();
        match &mut self.target {
            Target::Local { tmp, dest, file } => {
                drop(file.take());
                std::fs::rename(&*tmp, &*dest).map_err(|e| io_error(OP, &loc, e))?;
            }
            Target::S3 { upload, .. } => {
                runtime()
                    .block_on(upload.complete())
                    .map_err(|e| object_error(OP, &loc, e))?;
                self.counters.request(0, 0);
            }
        }
        self.done = true;
        Ok(())
    }

    /// Discards the upload: nothing appears at its location, no part is left stored.
    pub fn abort(mut self) -> Result<(), StorageError> {
        self.abort_now()
    }

    fn abort_now(&mut self) -> Result<(), StorageError> {
        const OP: &str = "abort upload";
        self.done = true;
        match &mut self.target {
            Target::Local { tmp, file, .. } => {
                drop(file.take());
                match std::fs::remove_file(&*tmp) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        Err(io_error(OP, &self.location, e))
                    }
                    _ => Ok(()),
                }
            }
            Target::S3 {
                upload, in_flight, ..
            } => {
                // Parts still in flight would be stored after the abort: wait for them.
                while let Some(h) = in_flight.pop_front() {
                    let _ = runtime().block_on(h);
                }
                self.counters.request(0, 0);
                runtime()
                    .block_on(upload.abort())
                    .map_err(|e| object_error(OP, &self.location, e))
            }
        }
    }
}

fn wait_part(
    h: tokio::task::JoinHandle<object_store::Result<()>>,
    loc: &Location,
) -> Result<(), StorageError> {
    match runtime().block_on(h) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(object_error("upload part", loc, e)),
        Err(e) => Err(StorageError::Io {
            op: "upload part",
            location: loc.to_string(),
            source: std::io::Error::other(e.to_string()),
        }),
    }
}

impl Write for Upload {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.written += data.len() as u64;
        if let Target::Local { file: Some(f), .. } = &mut self.target {
            return f.write_all(data).map(|()| data.len());
        }
        let mut rest = data;
        while !rest.is_empty() {
            let room = self.part_size - self.buf.len();
            let n = room.min(rest.len());
            if self.buf.capacity() == 0 {
                self.buf.reserve_exact(self.part_size);
            }
            self.buf.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            if self.buf.len() == self.part_size {
                self.send_part()
                    .map_err(|e| std::io::Error::other(e.to_string()))?;
            }
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.abort_now();
        }
    }
}
