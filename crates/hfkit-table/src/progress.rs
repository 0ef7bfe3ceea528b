//! The running command's progress, reported by the layer that does the work and shown by
//! whoever receives it (the command line's bar or periodic lines). A writer announces each
//! phase of its work with [`phase`] (what it does, in which unit, how much there is), then
//! reports work as it is done with [`done`]. Like the stop flag (`hfkit_storage::interrupt`),
//! it is the process's: no parameter runs through every signature, and without a receiver a
//! report costs one atomic load. Exports report the cells of the store files read (the rows a
//! read returns as they come, the rest of a region's stored cells when it ends), copies and
//! attaches the files handled.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

/// What a phase counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Files,
    Cells,
    Bytes,
}

/// Receives the reports ([`receive`]).
pub trait Receiver: Send + Sync {
    /// A phase begins: `what` it does, `total` units of `unit` to do.
    fn phase(&self, what: &str, unit: Unit, total: u64);
    /// `n` more units done in the current phase.
    fn done(&self, n: u64);
    /// The current phase is over, and nothing follows it here: its display is cleared.
    fn end(&self);
}

static RECEIVER: RwLock<Option<Arc<dyn Receiver>>> = RwLock::new(None);
static RECEIVING: AtomicBool = AtomicBool::new(false);
/// How many [`nested`] calls run: their reports are the caller's part of the work, not shown.
static NESTED: AtomicUsize = AtomicUsize::new(0);

/// While the returned guard lives, reports go to `r`.
pub fn receive(r: Arc<dyn Receiver>) -> Receiving {
    if let Ok(mut slot) = RECEIVER.write() {
        *slot = Some(r);
        RECEIVING.store(true, Ordering::Release);
    }
    Receiving(())
}

/// Reports go to the receiver until this is dropped.
pub struct Receiving(());

impl Drop for Receiving {
    fn drop(&mut self) {
        RECEIVING.store(false, Ordering::Release);
        if let Ok(mut slot) = RECEIVER.write() {
            *slot = None;
        }
    }
}

fn with(f: impl FnOnce(&dyn Receiver)) {
    if !RECEIVING.load(Ordering::Acquire) || NESTED.load(Ordering::Acquire) > 0 {
        return;
    }
    if let Ok(slot) = RECEIVER.read() {
        if let Some(r) = slot.as_deref() {
            f(r);
        }
    }
}

/// A phase of the work begins: `what` it does, `total` units of `unit`.
pub fn phase(what: &str, unit: Unit, total: u64) {
    with(|r| r.phase(what, unit, total));
}

/// `n` more units of the current phase done.
pub fn done(n: u64) {
    if n > 0 {
        with(|r| r.done(n));
    }
}

/// The current phase is over (a step before work that shows its own progress).
pub fn end() {
    with(|r| r.end());
}

/// Runs `f`, a step of a larger job that reports its own progress (a clone's attach): the
/// step's own reports are not shown.
pub fn nested<T>(f: impl FnOnce() -> T) -> T {
    struct Done;
    impl Drop for Done {
        fn drop(&mut self) {
            NESTED.fetch_sub(1, Ordering::AcqRel);
        }
    }
    NESTED.fetch_add(1, Ordering::AcqRel);
    let _done = Done;
    f()
}

/// Cells a read reports in one [`done`] at most (a report per row would cost a lock each).
pub const CELLS_PER_REPORT: u64 = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Log(Mutex<Vec<String>>);

    impl Receiver for Log {
        fn phase(&self, what: &str, unit: Unit, total: u64) {
            self.0
                .lock()
                .unwrap()
                .push(format!("{what} {unit:?} {total}"));
        }
        fn done(&self, n: u64) {
            self.0.lock().unwrap().push(format!("+{n}"));
        }
        fn end(&self) {
            self.0.lock().unwrap().push("end".into());
        }
    }

    #[test]
    fn reports_reach_the_receiver_while_it_receives() {
        done(1); // nobody receives: nothing happens
        let log = Arc::new(Log::default());
        {
            let _r = receive(log.clone());
            phase("copying", Unit::Files, 3);
            done(2);
            done(0);
            nested(|| {
                phase("inner", Unit::Cells, 9);
                done(9);
            });
            done(1);
            end();
        }
        done(5);
        assert_eq!(
            *log.0.lock().unwrap(),
            vec!["copying Files 3", "+2", "+1", "end"]
        );
    }
}
