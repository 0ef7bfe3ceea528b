//! Where tests find the files Apache HBase wrote (`../shared/fixtures`, beside the repository),
//! and what a test does when they are missing. One copy, a dev-dependency of every crate: the
//! crates' unit tests, the integration tests (`tests/it/common`) and the end-of-run report
//! (`crates/hfkit-testkit/tests/zz_fixture_skips.rs`) use it. `README.md` §"Run the tests" says
//! what a user sees.
//!
//! * The fixtures root is `$HFKIT_HBASE_FIXTURES`, else `../shared/fixtures` from the
//!   repository root (this crate is `crates/hfkit-testkit`);
//!   a test asks for one of its sub-directories (`hbase`, `hashes`, `splits`, ...).
//! * Missing, with `HFKIT_REQUIRE_FIXTURES=1` (`.ci/run` sets it): the test fails.
//! * Missing otherwise: the test prints `SKIP` on stderr (hidden by `cargo test` when it
//!   passes), records its name in the run's skip directory and passes. The run's last test
//!   binary, `zz_fixture_skips`, prints how many were skipped and which.
//!
//! Its own tests are in `tests/it/hbase_fixtures.rs` (here they would run in every binary that
//! includes the file).
//!
//! Cargo runs each test binary separately, one after the other, as children of the one `cargo`
//! process; the skip directory of a run is therefore named after that parent (its pid and start
//! time), under the target profile directory every test binary lives in
//! (`target/<profile>/hfkit-fixture-skips/<run>/<test name>`).

// Test support only: a helper that cannot set up (no loopback port, no server) fails the test
// that asked for it, which is what a panic here does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub mod s3;

/// Names the fixtures root.
pub const ROOT_ENV: &str = "HFKIT_HBASE_FIXTURES";
/// `1` (or `true`, `yes`): a missing fixture fails the test instead of skipping it.
pub const REQUIRE_ENV: &str = "HFKIT_REQUIRE_FIXTURES";
/// Under the target profile directory: one directory per `cargo test` run.
const SKIPS_DIR: &str = "hfkit-fixture-skips";

/// What a test gets when it asks for fixtures.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    Found(PathBuf),
    /// Not there: skip, with this reason.
    Skip(String),
    /// Not there, and required: fail, with this reason.
    Fail(String),
}

/// The decision, from the two variables' values: sub-directory `sub` of the fixtures root.
pub fn lookup(root: Option<OsString>, require: Option<OsString>, sub: &str) -> Lookup {
    let root = match root {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures"),
    };
    let dir = root.join(sub);
    if dir.is_dir() {
        return Lookup::Found(dir);
    }
    let why = format!(
        "HBase fixtures not found at {} (set {ROOT_ENV} to the directory holding hbase/)",
        dir.display()
    );
    if is_set(require) {
        Lookup::Fail(format!("{why}; {REQUIRE_ENV} is set, so this is a failure"))
    } else {
        Lookup::Skip(why)
    }
}

/// True when a `*_REQUIRE_*` variable says yes (`1`, `true`, `yes`).
pub(crate) fn is_set(v: Option<OsString>) -> bool {
    v.is_some_and(|v| {
        matches!(
            v.to_string_lossy().trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes"
        )
    })
}

/// Sub-directory `sub` of the fixtures root for test `test`; `None` (the test returns and
/// passes) when it is missing, recorded as a skip; a panic when fixtures are required.
pub fn dir(test: &str, sub: &str) -> Option<PathBuf> {
    match lookup(
        std::env::var_os(ROOT_ENV),
        std::env::var_os(REQUIRE_ENV),
        sub,
    ) {
        Lookup::Found(d) => Some(d),
        Lookup::Fail(why) => panic!("{test}: {why}"),
        Lookup::Skip(why) => {
            eprintln!("SKIP {test}: {why}");
            if let Some(run) = run_dir() {
                record_skip(&run, &test_name(test));
            }
            None
        }
    }
}

/// The running test's full name: its test binary (the executable's name without cargo's hash
/// suffix: the crate of a unit test, the file of an integration test), then the test's path
/// (libtest names each test's thread after it) or `test`.
pub(crate) fn test_name(test: &str) -> String {
    let name = match std::thread::current().name() {
        Some(n) if n != "main" => n.to_string(),
        _ => test.to_string(),
    };
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| match s.rsplit_once('-') {
            Some((stem, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => stem.to_string(),
            _ => s,
        })
        .unwrap_or_default();
    format!("{binary}::{name}")
}

/// Records that `test` was skipped in the run whose skip directory is `run`.
pub fn record_skip(run: &Path, test: &str) {
    let name: String = test
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '.'
            }
        })
        .collect();
    let _ = std::fs::create_dir_all(run);
    let _ = std::fs::write(run.join(name), test.as_bytes());
}

/// The tests recorded as skipped under `run`, sorted.
pub fn skipped(run: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(run)
        .into_iter()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .collect();
    names.sort();
    names
}

/// The object-storage tests recorded as skipped under `run` (no `moto_server`), sorted.
pub fn skipped_s3(run: &Path) -> Vec<String> {
    skipped(&run.join(s3::S3_SKIPS))
}

/// The end-of-run report for the object-storage tests `skipped` for want of `moto_server`.
pub fn report_s3(skipped: &[String]) -> String {
    if skipped.is_empty() {
        return "hfkit: no object-storage (S3) test was skipped in this run\n".into();
    }
    let mut s = format!(
        "\nhfkit: WARNING: {} object-storage (S3) test(s) SKIPPED, not run: moto_server not found \
         (pip install 'moto[server]', or set {}).\n\
         hfkit: this run does not show that s3:// inputs, outputs and tables work; \
         {}=1 (as .ci/run sets) makes them fail instead.\n",
        skipped.len(),
        s3::MOTO_ENV,
        s3::REQUIRE_S3_ENV,
    );
    for t in skipped {
        s.push_str(&format!("  skipped: {t}\n"));
    }
    s
}

/// The end-of-run report for the `skipped` tests.
pub fn report(skipped: &[String]) -> String {
    if skipped.is_empty() {
        return "hfkit: no HBase compatibility test was skipped in this run\n".into();
    }
    let why = match lookup(std::env::var_os(ROOT_ENV), None, "hbase") {
        Lookup::Skip(why) => why,
        _ => "HBase fixtures not found".into(),
    };
    let mut s = format!(
        "\nhfkit: WARNING: {} HBase compatibility test(s) SKIPPED, not run: {why}.\n\
         hfkit: this run does not show compatibility with files Apache HBase wrote; \
         {REQUIRE_ENV}=1 (as .ci/run sets) makes them fail instead.\n",
        skipped.len()
    );
    for t in skipped {
        s.push_str(&format!("  skipped: {t}\n"));
    }
    s
}

/// This run's skip directory: `target/<profile>/hfkit-fixture-skips/<run id>`, next to the
/// `deps/` directory test binaries run from.
pub fn run_dir() -> Option<PathBuf> {
    Some(skips_root()?.join(run_id()?))
}

/// `target/<profile>/hfkit-fixture-skips`.
pub fn skips_root() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.join(SKIPS_DIR))
}

/// The `cargo test` run: the parent process's pid and start time (pids are reused).
#[cfg(unix)]
fn run_id() -> Option<String> {
    let ppid = std::os::unix::process::parent_id();
    Some(format!("{ppid}-{}", start_time(ppid).unwrap_or_default()))
}

#[cfg(not(unix))]
fn run_id() -> Option<String> {
    None
}

/// Field 22 of `/proc/<pid>/stat` (clock ticks after boot); `None` off Linux or when gone.
fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name, in parentheses (which may hold spaces), field 3 comes first.
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(19).map(String::from)
}

/// Removes the skip directory `run` (reported), and those of runs whose `cargo` process is
/// gone (their report never ran: `cargo test --lib`, an interrupted run).
pub fn finish_run(run: &Path) {
    let _ = std::fs::remove_dir_all(run);
    let Some(root) = run.parent() else {
        return;
    };
    for e in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let alive = name
            .split_once('-')
            .and_then(|(pid, start)| {
                let pid: u32 = pid.parse().ok()?;
                Some(start_time(pid).is_some_and(|s| s == start))
            })
            .unwrap_or(false);
        if !alive {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}
