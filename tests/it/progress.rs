//! Live progress of the long commands other than the import (issue 42 item 1;
//! `src/cli/progress.rs`, `table::progress`): each command, off a terminal, prints plain
//! progress lines naming itself, its phase and its counts (the test shortens their interval to
//! zero through the debug builds' `HFKIT_TEST_PROGRESS_LINES_MS`), counts that never exceed
//! their total and reach it; under `--quiet` it prints nothing on standard error. The
//! commands: every export, `table check`, `snapshot clone`, `attach`, `compact`, `hbase
//! verify`, `hbase export-snapshot`, `table clone-hbase` and `hbase compact`; and the hashing
//! of the inputs that precedes a refused rerun of an import.

use std::path::Path;
use std::process::Command;

use crate::common;

const NOW: &str = "1800000000000";

/// (command label, arguments) of every long command, run in `dir` where `t` is a table of the
/// users seed (imported twice: two files per store) and `root` an HBase root holding its
/// snapshot `s`; `n` makes each run's outputs its own.
fn commands(dir: &Path, n: usize) -> Vec<(&'static str, Vec<String>)> {
    let p = |name: &str| {
        dir.join(format!("{name}{n}"))
            .to_string_lossy()
            .into_owned()
    };
    let t = dir.join("t").to_string_lossy().into_owned();
    let root = dir.join("root").to_string_lossy().into_owned();
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/seeds");
    let schema = seeds.join("users.toml").to_string_lossy().into_owned();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        (
            "export",
            s(&["export", &t, "--format", "csv", "--to", &p("c.csv")]),
        ),
        (
            "export",
            s(&["export", &t, "--format", "parquet", "--to", &p("c.parquet")]),
        ),
        (
            "export",
            s(&[
                "export",
                &t,
                "--rows",
                "--schema",
                &schema,
                "--format",
                "csv",
                "--to",
                &p("r.csv"),
            ]),
        ),
        ("export", s(&["export", &t, "--to", &p("copy")])),
        ("export", s(&["export", &t, "--bulkload", &p("bulk")])),
        ("table check", s(&["table", "check", &t])),
        (
            "snapshot clone",
            s(&["snapshot", "clone", &t, "s1", &p("clone")]),
        ),
        (
            "hbase verify",
            s(&["hbase", "verify", &root, "--snapshot", "s"]),
        ),
        (
            "hbase export-snapshot",
            s(&["hbase", "export-snapshot", &t, &p("root"), "--name", "x"]),
        ),
        (
            "table clone-hbase",
            s(&["table", "clone-hbase", &root, "--snapshot", "s", &p("back")]),
        ),
        (
            "compact",
            s(&["compact", &p("tc"), "--major", "--now-ms", NOW]),
        ),
        (
            "attach",
            s(&["attach", &p("tc"), &dir.join("bulk").to_string_lossy()]),
        ),
        (
            "hbase compact",
            s(&["hbase", "compact", &p("h"), "t1", "--now", NOW]),
        ),
    ]
}

#[test]
fn long_commands_show_progress_off_a_terminal_and_nothing_under_quiet() {
    let Some(fixtures) =
        common::fixtures_root("long_commands_show_progress_off_a_terminal_and_nothing_under_quiet")
    else {
        return;
    };
    let root1 = fixtures.join("hbase-layout");
    let tmp = common::tmpdir();
    let dir = tmp.path();
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/seeds");
    let t = dir.join("t");
    for _ in 0..2 {
        let o = common::import_with(
            &seeds.join("users.toml"),
            &seeds.join("users.csv"),
            "--table",
            &t,
            &["--force", "--quiet"],
        );
        assert!(o.status.success(), "{}", common::text(&o.stderr));
    }
    let ts = t.to_str().unwrap();
    let bulk = dir.join("bulk");
    let setup = [
        vec!["snapshot", "create", ts, "s1"],
        vec!["export", ts, "--bulkload", bulk.to_str().unwrap()],
    ];
    for args in setup {
        assert!(common::hfkit(&args).status.success(), "{args:?}");
    }
    let root = dir.join("root");
    let o = common::hfkit(&[
        "hbase",
        "export-snapshot",
        ts,
        root.to_str().unwrap(),
        "--name",
        "s",
    ]);
    assert!(o.status.success());
    for (n, quiet) in [(0, false), (1, true)] {
        // Tables a compaction and an attach change: a copy of t each run.
        let tc = dir.join(format!("tc{n}"));
        common::copy_dir(&t, &tc);
        // And an HBase table (HBase's root1) for `hbase compact`.
        common::copy_dir(&root1.join("root1"), &dir.join(format!("h{n}")));
        for (label, args) in commands(dir, n) {
            let mut c = Command::new(env!("CARGO_BIN_EXE_hfkit"));
            c.args(&args).env("HFKIT_TEST_PROGRESS_LINES_MS", "0");
            if quiet {
                c.arg("--quiet");
            }
            let o = c.output().unwrap();
            let err = common::text(&o.stderr);
            assert!(o.status.success(), "{args:?}: {err}");
            let prefix = format!("hfkit: {label}:");
            let lines: Vec<&str> = err.lines().filter(|l| l.starts_with(&prefix)).collect();
            if quiet {
                assert!(err.is_empty(), "{args:?} --quiet printed: {err}");
                continue;
            }
            assert!(!lines.is_empty(), "{args:?}: no progress in {err:?}");
            // "hfkit: LABEL:[ PHASE] DONE of TOTAL UNIT (P%)": never past the total, which
            // the last line of each phase reaches.
            let mut last = (0, 0);
            for l in &lines {
                let nums: Vec<f64> = l[prefix.len()..]
                    .split(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .filter(|w| !w.is_empty() && *w != ".")
                    .map(|w| w.parse().unwrap())
                    .collect();
                let (done, total) = (nums[0], nums[1]);
                assert!(done <= total, "{args:?}: {l}");
                last = (done as u64, total as u64);
            }
            assert_eq!(last.0, last.1, "{args:?}: ends at {lines:?}");
        }
    }
    // A refused rerun says what it read the whole input for.
    let o = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(["import", "--schema"])
        .args([seeds.join("users.toml"), seeds.join("users.csv")])
        .args(["--table", ts])
        .env("HFKIT_TEST_PROGRESS_LINES_MS", "0")
        .output()
        .unwrap();
    let err = common::text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "hfkit: import: hashing the inputs (the import's identity: a rerun is refused)"
        ),
        "{err}"
    );
}
