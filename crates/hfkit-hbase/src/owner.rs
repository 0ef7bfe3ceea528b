//! Which process a record on object storage belongs to, and whether that process is gone.
//! Object storage has no locks that die with their process: a writer of an HBase root there
//! (an export's record, a compaction's lock) writes an object whose first line is
//! `<host>\t<pid>`, and a later writer takes the record for a killed run's when its process is
//! gone: on this host, when no process has its pid; from another host, once the record is
//! older than [`FOREIGN_RECORD_SECONDS`] by the store's clock. Spec: `formats/hbase-layout.md`
//! §"Export into a root on object storage".

use hfkit_storage::{Location, PutCondition, StorageError, Store};

use super::{HBaseError, Result};

/// Age after which a record written from another host is taken for a killed run's.
pub const FOREIGN_RECORD_SECONDS: i64 = 24 * 3600;

pub(crate) fn storage(e: StorageError) -> HBaseError {
    HBaseError::Invalid(e.to_string())
}

/// This machine's name (Linux: `/proc/sys/kernel/hostname`).
fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// True when a process of this host has `pid` and runs (Linux: `/proc/<pid>/stat`, whose
/// state after the command's name is not `Z`, a zombie's: killed, not yet reaped).
fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
    !state.is_some_and(|s| s.starts_with('Z') || s.starts_with('X'))
}

/// The first line of a record this process writes: `<host>\t<pid>\n`.
pub fn owner_line() -> String {
    format!("{}\t{}\n", host(), std::process::id())
}

/// The store's clock (seconds, as objects' `last_modified`): a probe object written into
/// `dir` now, read back and removed.
pub fn store_clock(store: &Store, dir: &Location) -> Result<i64> {
    let probe = dir.join(&format!(".probe-{}", hfkit_table::directory::unique_hex()));
    store
        .put(&probe, Vec::new(), PutCondition::Overwrite)
        .map_err(storage)?;
    let now = store
        .head(&probe)
        .map_err(storage)?
        .map_or(i64::MAX, |i| i.last_modified);
    store.delete(&probe).map_err(storage)?;
    Ok(now)
}

/// Whether the process that wrote a record starting with `text`, last modified at `modified`
/// (the store's clock `now`), is gone (see the module's documentation).
pub fn record_owner_gone(text: &str, modified: i64, now: i64) -> bool {
    let (h, pid) = text
        .lines()
        .next()
        .and_then(|l| l.split_once('\t'))
        .unwrap_or(("", ""));
    match (h == host(), pid.parse::<u32>()) {
        (true, Ok(pid)) => !alive(pid),
        _ => modified <= now - FOREIGN_RECORD_SECONDS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_owns_its_records_and_dead_or_old_ones_are_gone() {
        let mine = owner_line();
        assert!(!record_owner_gone(&mine, 0, 0));
        // No process has this pid (beyond Linux's pid_max).
        let dead = format!("{}\t{}\n", host(), 1u32 << 30);
        assert!(record_owner_gone(&dead, 0, 0));
        let foreign = "elsewhere.example\t1\n";
        assert!(!record_owner_gone(
            foreign,
            100,
            100 + FOREIGN_RECORD_SECONDS - 1
        ));
        assert!(record_owner_gone(
            foreign,
            100,
            100 + FOREIGN_RECORD_SECONDS
        ));
        assert!(record_owner_gone("", 0, FOREIGN_RECORD_SECONDS));
    }
}
