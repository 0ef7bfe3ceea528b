//! Spilling (`formats/import.md` §"Sort and spill"): a full buffer sorted and written as a run
//! file, here or on a spill thread of its own while the next buffer fills, and run files merged
//! into fewer when there are more than the merge takes at once.

use std::path::{Path, PathBuf};

use super::buffer::{sort_groups, Group, GroupCursor};
use super::error::SortError;
use super::merge::{Merge, RunSource};
use super::record::decode;
use super::run::{RunReader, RunWriter};

/// A full buffer, to be sorted and written as the run file `path`.
pub(super) struct SpillJob {
    pub(super) arena: Vec<u8>,
    pub(super) entries: Vec<Group>,
    pub(super) path: PathBuf,
}

/// A spill thread's answer: the buffers back (emptied, for reuse) and the run written.
pub(super) struct SpillDone {
    pub(super) arena: Vec<u8>,
    pub(super) entries: Vec<Group>,
    pub(super) path: PathBuf,
    /// Bytes of the run file and duplicates dropped.
    pub(super) written: Result<(u64, u64), SortError>,
}

/// The background spill thread and the job it is working on, if any.
pub(super) struct Spiller {
    pub(super) jobs: Option<std::sync::mpsc::SyncSender<SpillJob>>,
    done: std::sync::mpsc::Receiver<SpillDone>,
    thread: Option<std::thread::JoinHandle<()>>,
    pub(super) busy: bool,
}

impl Spiller {
    pub(super) fn start() -> Spiller {
        let (jobs, todo) = std::sync::mpsc::sync_channel::<SpillJob>(1);
        let (report, done) = std::sync::mpsc::channel::<SpillDone>();
        let thread = std::thread::spawn(move || {
            for mut job in todo {
                sort_groups(&job.arena, &mut job.entries, false);
                let written = write_run(&job.arena, &job.entries, &job.path);
                job.arena.clear();
                job.entries.clear();
                let answer = SpillDone {
                    arena: job.arena,
                    entries: job.entries,
                    path: job.path,
                    written,
                };
                if report.send(answer).is_err() {
                    return;
                }
            }
        });
        Spiller {
            jobs: Some(jobs),
            done,
            thread: Some(thread),
            busy: false,
        }
    }

    /// Waits for the job under way, if any.
    pub(super) fn wait(&mut self) -> Result<Option<SpillDone>, SortError> {
        if !self.busy {
            return Ok(None);
        }
        self.busy = false;
        self.done.recv().map(Some).map_err(|_| SortError::Io {
            path: PathBuf::from("(spill thread)"),
            source: std::io::Error::other("the spill thread stopped"),
        })
    }
}

impl Drop for Spiller {
    /// Ends the thread and waits for it, so that no run file is being written once the
    /// sorter is gone (its directory may be removed next).
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Writes a sorted buffer as the run file `path`; its bytes and the duplicates dropped.
pub(super) fn write_run(
    arena: &[u8],
    entries: &[Group],
    path: &Path,
) -> Result<(u64, u64), SortError> {
    let mut w = RunWriter::create(path)?;
    let mut cursor = GroupCursor::default();
    while let Some(off) = cursor.next(arena, entries) {
        let cell = decode(&arena[off..]).ok_or_else(|| SortError::Corrupt {
            path: PathBuf::from("(sort buffer)"),
            detail: format!("bad record at {off}"),
        })?;
        w.push(&cell)?;
    }
    Ok((w.finish()?, cursor.duplicates))
}

/// Merges the run files `runs` into one at `path`, every record kept (duplicates too); returns
/// the new file's size.
pub(super) fn merge_runs(runs: &[PathBuf], path: &Path) -> Result<u64, SortError> {
    let mut sources = Vec::with_capacity(runs.len());
    for p in runs {
        sources.push(RunSource::File(RunReader::open(p)?));
    }
    let mut merge = Merge::start(sources)?;
    let mut w = RunWriter::create(path)?;
    while let Some(cell) = merge.head() {
        w.push(&cell)?;
        merge.advance()?;
    }
    w.finish()
}
