//! One live progress display for the long commands that are not imports: on a terminal, a bar
//! on standard error; otherwise a plain line every 5 seconds (a scheduled job's log), the first
//! after 5 seconds, so that a short run prints nothing; under `--quiet`, nothing. `table
//! check`, `hbase verify` and `hbase copy-snapshot` count their own work; every other writer
//! (exports, attaches, clones, snapshot exports) reports its phases and work through
//! `table::progress`, received by [`receive_for`] for the whole run. Counts are updated from
//! any thread.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use crate::table::progress::Unit;

/// Seconds between plain progress lines.
const LINE_EVERY: Duration = Duration::from_secs(5);
/// Debug builds only: the milliseconds between plain lines instead (tests).
const LINES_VAR: &str = "HFKIT_TEST_PROGRESS_LINES_MS";

static QUIET: AtomicBool = AtomicBool::new(false);

/// `--quiet`: no progress at all (and, in an import, no summary).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether the run was asked to be quiet.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

fn line_every() -> Duration {
    if cfg!(debug_assertions) {
        if let Some(ms) = std::env::var(LINES_VAR)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            return Duration::from_millis(ms);
        }
    }
    LINE_EVERY
}

/// The phase shown: what is done, in which unit, of how much.
struct Phase {
    what: String,
    unit: Unit,
    total: u64,
    bar: Option<indicatif::ProgressBar>,
}

/// A command's progress: `add` as work is done, `finish` at the end.
pub struct Progress {
    label: String,
    phase: Mutex<Phase>,
    done: AtomicU64,
    last_line: Mutex<Instant>,
    every: Duration,
}

fn bar(label: &str, what: &str, unit: Unit, total: u64) -> Option<indicatif::ProgressBar> {
    if quiet() || !std::io::stderr().is_terminal() {
        return None;
    }
    let template = match unit {
        Unit::Bytes => {
            "{msg} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}"
        }
        Unit::Files => "{msg} [{elapsed_precise}] {wide_bar} {pos}/{len} files ETA {eta}",
        Unit::Cells => {
            "{msg} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} cells ETA {eta}"
        }
    };
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message(match what {
        "" => label.to_string(),
        w => format!("{label}: {w}"),
    });
    Some(bar)
}

impl Progress {
    /// Progress of `label` over `total` units.
    pub fn new(label: &str, total: u64, unit: Unit) -> Progress {
        Progress {
            label: label.to_string(),
            phase: Mutex::new(Phase {
                what: String::new(),
                unit,
                total,
                bar: bar(label, "", unit, total),
            }),
            done: AtomicU64::new(0),
            last_line: Mutex::new(Instant::now()),
            every: line_every(),
        }
    }

    /// `n` more units done.
    pub fn add(&self, n: u64) {
        let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
        let Ok(phase) = self.phase.lock() else {
            return;
        };
        if let Some(bar) = &phase.bar {
            bar.set_position(done);
            return;
        }
        if quiet() {
            return;
        }
        let Ok(mut last) = self.last_line.lock() else {
            return;
        };
        if last.elapsed() >= self.every {
            *last = Instant::now();
            let pct = if phase.total == 0 {
                100.0
            } else {
                100.0 * done as f64 / phase.total as f64
            };
            let amount = match phase.unit {
                Unit::Bytes => format!(
                    "{:.1} of {:.1} MB",
                    done as f64 / 1e6,
                    phase.total as f64 / 1e6
                ),
                Unit::Files => format!("{done} of {} files", phase.total),
                Unit::Cells => format!("{done} of {} cells", phase.total),
            };
            let what = match phase.what.as_str() {
                "" => String::new(),
                w => format!(" {w}"),
            };
            note!("hfkit: {}:{what} {amount} ({pct:.0}%)", self.label);
        }
    }

    /// The work is done: the bar is cleared.
    pub fn finish(&self) {
        if let Ok(phase) = self.phase.lock() {
            if let Some(bar) = &phase.bar {
                bar.finish_and_clear();
            }
        }
    }
}

impl crate::table::progress::Receiver for Progress {
    fn phase(&self, what: &str, unit: Unit, total: u64) {
        if let Ok(mut phase) = self.phase.lock() {
            if let Some(old) = phase.bar.take() {
                old.finish_and_clear();
            }
            *phase = Phase {
                what: what.to_string(),
                unit,
                total,
                bar: bar(&self.label, what, unit, total),
            };
            self.done.store(0, Ordering::Relaxed);
        }
    }

    fn done(&self, n: u64) {
        self.add(n);
    }

    fn end(&self) {
        self.finish();
        if let Ok(mut phase) = self.phase.lock() {
            phase.bar = None;
        }
    }
}

/// For the whole run of the command `label` (`export`, `table clone-hbase`, ...): the phases
/// and work its layers report are shown, until the returned guard is dropped.
pub fn receive_for(label: &str) -> Receiving {
    // Nothing is shown until a layer announces a phase.
    let p = Arc::new(Progress {
        label: label.to_string(),
        phase: Mutex::new(Phase {
            what: String::new(),
            unit: Unit::Files,
            total: 0,
            bar: None,
        }),
        done: AtomicU64::new(0),
        last_line: Mutex::new(Instant::now()),
        every: line_every(),
    });
    let guard = crate::table::progress::receive(p.clone());
    Receiving { p, _guard: guard }
}

/// The display of a run's reports ([`receive_for`]); cleared when dropped.
pub struct Receiving {
    p: Arc<Progress>,
    _guard: crate::table::progress::Receiving,
}

impl Drop for Receiving {
    fn drop(&mut self) {
        self.p.finish();
    }
}
