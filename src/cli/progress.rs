//! One live progress display for the long commands that are not imports (`table check`,
//! `hbase verify`, `hbase copy-snapshot`): on a terminal, a bar on standard error; otherwise a
//! plain line every 5 seconds (a scheduled job's log), the first after 5 seconds, so that a
//! short run prints nothing. Counts are bytes or files, updated from any thread.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Seconds between plain progress lines.
const LINE_EVERY: Duration = Duration::from_secs(5);

/// What a [`Progress`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Bytes,
    Files,
}

/// A command's progress: `add` as work is done, `finish` at the end.
pub struct Progress {
    label: String,
    unit: Unit,
    total: u64,
    done: AtomicU64,
    bar: Option<indicatif::ProgressBar>,
    last_line: Mutex<Instant>,
}

impl Progress {
    /// Progress of `label` over `total` units.
    pub fn new(label: &str, total: u64, unit: Unit) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let template = match unit {
                Unit::Bytes => "{msg} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
                Unit::Files => "{msg} [{elapsed_precise}] {wide_bar} {pos}/{len} files ETA {eta}",
            };
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar.set_message(label.to_string());
            bar
        });
        Progress {
            label: label.to_string(),
            unit,
            total,
            done: AtomicU64::new(0),
            bar,
            last_line: Mutex::new(Instant::now()),
        }
    }

    /// `n` more units done.
    pub fn add(&self, n: u64) {
        let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
        if let Some(bar) = &self.bar {
            bar.set_position(done);
            return;
        }
        let Ok(mut last) = self.last_line.lock() else {
            return;
        };
        if last.elapsed() >= LINE_EVERY {
            *last = Instant::now();
            let pct = if self.total == 0 {
                100.0
            } else {
                100.0 * done as f64 / self.total as f64
            };
            let amount = match self.unit {
                Unit::Bytes => format!(
                    "{:.1} of {:.1} MB",
                    done as f64 / 1e6,
                    self.total as f64 / 1e6
                ),
                Unit::Files => format!("{done} of {} files", self.total),
            };
            note!("hfkit: {}: {amount} ({pct:.0}%)", self.label);
        }
    }

    /// The work is done: the bar is cleared.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
