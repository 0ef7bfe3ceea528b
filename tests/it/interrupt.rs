//! SIGINT (Ctrl-C) and SIGTERM during an import and every other writer (issue 39 §5;
//! formats/table.md §"Stopping a writer"): the writer stops at a safe point, removes what it
//! staged, prints one line saying that nothing was changed, and exits 130 or 143: an import
//! into a new table (which is not left behind), into an existing table (unchanged), into a
//! bulk-load directory (not left behind), and into `s3://` tables (nothing committed, no
//! upload left in progress); a compaction, exports, a snapshot clone, an attach and an HBase
//! snapshot export (the table and the destination as they were).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hfkit_testkit::s3::S3Server;

use crate::common::{files_under, leftovers, text};

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");

/// A users CSV (the seed's columns) of `rows` rows: long enough that a signal sent soon after
/// the start finds the import reading.
fn big_users(path: &Path, rows: usize) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(w, "user_id,name,email,city,score,last_login").unwrap();
    for i in 0..rows {
        writeln!(
            w,
            "{i},name{i},u{i}@example.com,City{},{},{}",
            i % 97,
            i % 1000,
            1_700_000_000_000u64 + i as u64
        )
        .unwrap();
    }
}

/// Runs `hfkit ARGS`, sends `signal` once it has run `after`, and returns its exit code and
/// standard error.
fn interrupt(args: &[&str], signal: i32, after: Duration) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    std::thread::sleep(after);
    assert!(
        child.try_wait().unwrap().is_none(),
        "{args:?} ended within {:?}, before the signal: make the input larger",
        started.elapsed()
    );
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    let o = child.wait_with_output().unwrap();
    (o.status.code(), text(&o.stderr))
}

#[test]
fn sigint_and_sigterm_stop_an_import_changing_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("big.csv");
    big_users(&input, 1_000_000);
    let input = input.to_str().unwrap();
    let schema = format!("{SEEDS}/users.toml");
    let p = |n: &str| tmp.path().join(n).to_str().unwrap().to_string();
    let spill = p("spill");
    std::fs::create_dir(&spill).unwrap();
    let base = [
        "import",
        "--schema",
        &schema,
        input,
        "--threads",
        "1",
        "--temp-dir",
        &spill,
    ];
    let after = Duration::from_millis(600);
    // A new table: stopped, and not left behind.
    let new = p("new");
    let (code, err) = interrupt(
        &[&base[..], &["--table", &new]].concat(),
        libc::SIGINT,
        after,
    );
    assert_eq!(code, Some(130), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.contains("interrupted by SIGINT") && last.contains("nothing was changed"),
        "{err}"
    );
    assert!(!Path::new(&new).exists(), "the new table was left behind");
    // An existing table: unchanged.
    let existing = p("existing");
    let o = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args([
            "import",
            "--schema",
            &schema,
            &format!("{SEEDS}/users.csv"),
            "--table",
            &existing,
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let before = files_under(Path::new(&existing));
    let (code, err) = interrupt(
        &[&base[..], &["--table", &existing]].concat(),
        libc::SIGTERM,
        after,
    );
    assert_eq!(code, Some(143), "{err}");
    assert!(err.contains("interrupted by SIGTERM"), "{err}");
    assert_eq!(
        files_under(Path::new(&existing)),
        before,
        "the table changed"
    );
    assert!(leftovers(Path::new(&existing)).is_empty());
    // A bulk-load directory: not left behind.
    let out = p("out");
    let (code, err) = interrupt(&[&base[..], &["--out", &out]].concat(), libc::SIGINT, after);
    assert_eq!(code, Some(130), "{err}");
    assert!(
        !Path::new(&out).exists(),
        "the bulk-load directory was left behind"
    );
    assert!(
        files_under(Path::new(&spill)).is_empty(),
        "spill files left"
    );
    // Tables on object storage, one and several: nothing committed, nothing in progress, no
    // mirror left in $TMPDIR.
    let Some(server) = S3Server::start("sigint_and_sigterm_stop_an_import_changing_nothing") else {
        return;
    };
    let mirrors = p("tmpdir");
    std::fs::create_dir(&mirrors).unwrap();
    for (schema, table) in [
        (schema.clone(), server.url("users")),
        (format!("{SEEDS}/sale_lines.toml"), server.url("shop")),
    ] {
        let input = match schema.ends_with("users.toml") {
            true => input.to_string(),
            false => {
                let lines = p("lines.csv");
                let mut w = std::io::BufWriter::new(std::fs::File::create(&lines).unwrap());
                writeln!(w, "order_id,line,customer,sku,qty,order_ts").unwrap();
                for i in 0..400_000u64 {
                    let ts = 1_700_000_000_000u64 + i;
                    writeln!(
                        w,
                        "{},{},c{},S{},{},{ts}",
                        i / 3 + 1,
                        i % 3 + 1,
                        i % 50,
                        i % 20,
                        i % 9 + 1
                    )
                    .unwrap();
                }
                lines
            }
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_hfkit"))
            .args([
                "import",
                "--schema",
                &schema,
                &input,
                "--table",
                &table,
                "--threads",
                "1",
            ])
            .args(["--s3-endpoint", &server.endpoint()])
            .env("TMPDIR", &mirrors)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(after);
        assert!(
            child.try_wait().unwrap().is_none(),
            "{table}: ended before the signal"
        );
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(
            unsafe { libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGINT) },
            0
        );
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(130), "{table}: {}", text(&o.stderr));
        assert!(server.multipart_uploads().is_empty());
        let left: Vec<_> = std::fs::read_dir(&mirrors).unwrap().collect();
        assert!(left.is_empty(), "{table}: left in $TMPDIR: {left:?}");
        let scan = Command::new(env!("CARGO_BIN_EXE_hfkit"))
            .args([
                "scan",
                &format!("{table}/orders"),
                "--s3-endpoint",
                &server.endpoint(),
            ])
            .output()
            .unwrap();
        let scan_main = Command::new(env!("CARGO_BIN_EXE_hfkit"))
            .args(["scan", &table, "--s3-endpoint", &server.endpoint()])
            .output()
            .unwrap();
        for s in [scan, scan_main] {
            assert!(
                text(&s.stderr).contains("no table there"),
                "{table}: {}",
                text(&s.stderr)
            );
        }
    }
}

/// SIGINT and SIGTERM during the other writers (issue 39 §5): a compaction, an export as a
/// table, a row export, a snapshot clone, an attach and an HBase snapshot export each stop at
/// a safe point, remove what they staged, print one line saying nothing was changed, exit 130
/// or 143, and leave the table (and the destination) as they were.
#[test]
fn sigint_and_sigterm_stop_every_writer_changing_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n).to_str().unwrap().to_string();
    let input = p("big.csv");
    big_users(Path::new(&input), 120_000);
    let schema = format!("{SEEDS}/users.toml");
    let t = p("t");
    // Two loads: every store has two files for the compaction to merge.
    for ts in ["1700000000001", "1700000000002"] {
        let o = Command::new(env!("CARGO_BIN_EXE_hfkit"))
            .args(["import", "--schema", &schema, &input, "--table", &t])
            .args(["--timestamp", ts, "--quiet", "--force"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    let bulk = p("bulk");
    let o = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(["export", &t, "--bulkload", &bulk])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let snap = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(["snapshot", "create", &t, "s1"])
        .output()
        .unwrap();
    assert!(snap.status.success(), "{}", text(&snap.stderr));
    let before = files_under(Path::new(&t));
    let after = Duration::from_millis(250);
    let root = p("hbase");
    let (copy, rows, clone) = (p("copy"), p("rows.csv"), p("clone"));
    let cases: Vec<(Vec<&str>, i32, Option<&String>)> = vec![
        (vec!["compact", &t, "--major"], libc::SIGINT, None),
        (
            vec!["export", &t, "--to", &copy],
            libc::SIGTERM,
            Some(&copy),
        ),
        (
            vec!["export", &t, "--format", "csv", "--to", &rows],
            libc::SIGINT,
            Some(&rows),
        ),
        (
            vec!["snapshot", "clone", &t, "s1", &clone],
            libc::SIGINT,
            Some(&clone),
        ),
        (vec!["attach", &t, &bulk, "--force"], libc::SIGTERM, None),
        (
            vec!["hbase", "export-snapshot", &t, &root, "--name", "x"],
            libc::SIGINT,
            None,
        ),
    ];
    for (args, signal, dest) in cases {
        let (code, err) = interrupt(&args, signal, after);
        assert_eq!(code, Some(128 + signal), "{args:?}: {err}");
        let last = err.lines().last().unwrap_or_default();
        assert!(last.contains("nothing was changed"), "{args:?}: {err}");
        assert_eq!(
            files_under(Path::new(&t)),
            before,
            "{args:?}: the table changed"
        );
        assert!(leftovers(Path::new(&t)).is_empty(), "{args:?}");
        if let Some(d) = dest {
            assert!(!Path::new(d).exists(), "{args:?}: {d} was left");
        }
        let strays: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(strays.is_empty(), "{args:?}: {strays:?}");
    }
    // The HBase root: no snapshot, nothing staged, nothing archived.
    for d in [".hbase-snapshot", "archive"] {
        let d = Path::new(&root).join(d);
        let files = if d.exists() {
            files_under(&d)
        } else {
            Vec::new()
        };
        assert!(files.is_empty(), "{files:?}");
    }
}
