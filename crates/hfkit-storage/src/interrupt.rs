//! A request to stop: SIGINT (Ctrl-C) or SIGTERM, recorded by the command line's signal
//! handler ([`flag`]), and checked by long-running writers at safe points ([`requested`]):
//! between batches of input, between batches of cells written, before a commit. A writer that
//! sees it stops with an error, so that everything it staged is removed as on any failure, and
//! nothing is committed; a commit already under way is finished. Lives here, the lowest layer
//! the writers share, so that the table and pipeline layers check the same flag.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The signal number asked to stop with (0: none yet).
fn cell() -> &'static Arc<AtomicUsize> {
    static REQUESTED: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    REQUESTED.get_or_init(|| Arc::new(AtomicUsize::new(0)))
}

/// The flag a signal handler sets to the signal's number (`signal_hook::flag::register_usize`).
pub fn flag() -> Arc<AtomicUsize> {
    cell().clone()
}

/// The signal a stop was asked with, if one was.
pub fn requested() -> Option<i32> {
    match cell().load(Ordering::Relaxed) {
        0 => None,
        n => i32::try_from(n).ok(),
    }
}

/// Asks to stop as signal `signal` would (tests, and callers stopping a run themselves).
pub fn request(signal: i32) {
    cell().store(usize::try_from(signal).unwrap_or(1), Ordering::Relaxed);
}

/// The signal's name: `SIGINT`, `SIGTERM`, else `signal N`.
pub fn signal_name(signal: i32) -> String {
    match signal {
        2 => "SIGINT".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}
