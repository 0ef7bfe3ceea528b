//! End-to-end tests of the `hfkit` binary.

use crate::common;

use std::path::Path;
use std::process::Command;

use crate::common::hfkit;

use crate::common::text;

mod help;
mod hfile;
mod plan;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/users.cells.txt");

#[test]
fn attach_describe_check_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t");
    hfkit::table::directory::Table::create(
        &table,
        "default:users",
        vec![hfkit::table::manifest::FamilyEntry::new("d")],
        &[b"5".to_vec()],
    )
    .unwrap();
    let bulk = dir.path().join("bulk");
    std::fs::create_dir_all(bulk.join("d")).unwrap();
    let f = bulk.join("d").join("users.hfile");
    assert!(
        hfkit(&["hfile", "write", f.to_str().unwrap(), "--cells", SAMPLE])
            .status
            .success()
    );
    let o = hfkit(&[
        "attach",
        table.to_str().unwrap(),
        bulk.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["cells"], 1506);
    assert_eq!(v["split_inputs"], 1);
    let o = hfkit(&["table", "describe", table.to_str().unwrap()]);
    assert!(
        text(&o.stdout).contains("region r00001 [5, ''): 1 files"),
        "{}",
        text(&o.stdout)
    );
    // Each store file by its path, which `hfile info` takes.
    let described = text(&o.stdout);
    let path = described
        .lines()
        .find_map(|l| {
            l.strip_prefix("  d ")?
                .split_once(": ")
                .map(|(p, _)| p.to_string())
        })
        .unwrap();
    assert!(
        path.starts_with(table.join("data").to_str().unwrap()),
        "{path}"
    );
    assert!(hfkit(&["hfile", "info", &path]).status.success(), "{path}");
    let o = hfkit(&["table", "check", table.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("OK (manifest version 1, 2 files, 1506 cells)"),
        "{}",
        text(&o.stdout)
    );
    // --json, sound and then damaged: the report on standard output, exit 0 then 1.
    let check = || hfkit(&["table", "check", table.to_str().unwrap(), "--json"]);
    let o = check();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["ok"].clone(), v["files"].clone()),
        (true.into(), 2.into())
    );
    assert_eq!(v["cells"], 1506);
    let o = hfkit(&["hfile", "verify", f.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["ok"].clone(), v["cells"].clone()),
        (true.into(), 1506.into())
    );
    let live = common::files_under(&table.join("data"));
    let victim = live.first().unwrap();
    let bytes = std::fs::read(victim).unwrap();
    std::fs::write(victim, &bytes[..bytes.len() - 1]).unwrap();
    let o = check();
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert!(!v["problems"].as_array().unwrap().is_empty(), "{v}");
}

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");

/// Only a write to a closed output ends quietly: an error whose message merely says "Broken
/// pipe" (here a missing file of that name) is reported, with exit 1.
#[test]
fn only_a_closed_output_is_a_broken_pipe() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("Broken pipe.hfile");
    let o = hfkit(&["hfile", "info", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("Broken pipe.hfile"),
        "{}",
        text(&o.stderr)
    );
}

/// A line to stderr (a warning of `table create`, `hfile get`'s Bloom verdict) does not panic
/// when stderr cannot take it: closed (`2>&-`), a full device, or a pipe closed by its reader.
/// The command does its work and exits with its own code, not 101.
#[test]
fn a_stderr_that_cannot_be_written_is_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let quiet = |redirect: &str, args: &[&str]| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("\"$0\" \"$@\" {redirect}"))
            .arg(env!("CARGO_BIN_EXE_hfkit"))
            .args(args)
            .output()
            .unwrap()
    };
    for (i, redirect) in ["2>&-", "2>/dev/full"].into_iter().enumerate() {
        let dir = tmp.path().join(format!("t{i}"));
        let dir = dir.to_str().unwrap();
        // Warns that family 'f' is defined twice.
        let create = [
            "table",
            "create",
            dir,
            "--hbase-shell",
            "create 't', 'f', 'f'",
        ];
        let o = quiet(redirect, &create);
        assert_eq!(o.status.code(), Some(0), "{redirect}: {}", text(&o.stderr));
        assert!(text(&o.stdout).contains("created table t"), "{redirect}");
    }
    let file = tmp.path().join("s.hfile");
    let file = file.to_str().unwrap();
    let o = hfkit(&["hfile", "write", file, "--cells", SAMPLE, "--bloom", "row"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // A get of an absent row (exit 0, "0 cell(s)" on stderr): the same with stderr closed
    // or full.
    let get = ["hfile", "get", file, "00"];
    assert_eq!(hfkit(&get).status.code(), Some(0));
    for redirect in ["2>&-", "2>/dev/full"] {
        let o = quiet(redirect, &get);
        assert_eq!(o.status.code(), Some(0), "{redirect}: {}", text(&o.stderr));
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(get)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// A location a command cannot handle is refused by name before anything runs (issue 39 §3):
/// other schemes, typos and upper-case schemes everywhere, `s3://` where the command takes a
/// local path. Run from an empty directory, which stays empty (no `./s3:/...` or `./gs:/...`
/// folder); exit code 2.
#[test]
fn locations_a_command_cannot_handle_are_refused_by_name() {
    let cwd = common::tmpdir();
    let seeds = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");
    let (schema, input) = (format!("{seeds}/users.toml"), format!("{seeds}/users.csv"));
    // An import with `extra` arguments after its schema and input.
    let import = |extra: &[&str]| -> Vec<String> {
        let mut v = vec!["import", "--schema", &schema, &input];
        v.extend_from_slice(extra);
        v.into_iter().map(String::from).collect()
    };
    let other = |args: &[&str]| -> Vec<String> { args.iter().map(|a| a.to_string()).collect() };
    let lines: Vec<(Vec<String>, &str)> = vec![
        (import(&["--out", "gs://bucket/out"]), "--out"),
        (import(&["--out", "az://bucket/out"]), "--out"),
        (import(&["--out", "hdfs://nn/out"]), "--out"),
        (import(&["--out", "http://h/out"]), "--out"),
        (import(&["--out", "S3://bucket/out"]), "--out"),
        (import(&["--table", "s3:/bucket/x"]), "--table"),
        (
            import(&["--out", "o", "--report", "s3://bucket/r"]),
            "--report",
        ),
        (
            import(&["--out", "o", "--bad-rows", "s3://bucket/b"]),
            "--bad-rows",
        ),
        (
            other(&["table", "clone-hbase", "root", "t1", "s3://bucket/clone"]),
            "<DEST>",
        ),
        (
            other(&[
                "hbase",
                "export-snapshot",
                "s3://bucket/t",
                "root",
                "--name",
                "x",
            ]),
            "<TABLE>",
        ),
        (other(&["man", "--dir", "s3://bucket/man"]), "--dir"),
        (
            other(&["snapshot", "clone", "t", "s1", "s3://bucket/c"]),
            "<NEW_DIR>",
        ),
        (other(&["export", "t", "--to", "s3://bucket/copy"]), "--to"),
        (
            other(&["man", "--s3-endpoint", "http://127.0.0.1:9"]),
            "--s3-endpoint",
        ),
    ];
    for (args, named) in lines {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"))
            .args(&args)
            .current_dir(cwd.path())
            .output()
            .unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("hfkit: {named}")),
            "{args:?}: {err}"
        );
        let left: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
        assert!(left.is_empty(), "{args:?} wrote {left:?}");
    }
}

/// `--threads` beyond what helps is capped at four per core, with a note; the import runs.
#[test]
fn threads_beyond_four_per_core_are_capped_with_a_note() {
    let tmp = common::tmpdir();
    let seeds = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");
    let out = tmp.path().join("out");
    let o = hfkit(&[
        "import",
        "--schema",
        &format!("{seeds}/users.toml"),
        &format!("{seeds}/users.csv"),
        "--out",
        out.to_str().unwrap(),
        "--threads",
        "100000",
        "--quiet",
    ]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    let cores = std::thread::available_parallelism().unwrap().get();
    assert!(
        err.contains(&format!(
            "--threads 100000: using {} (4 per core",
            4 * cores
        )),
        "{err}"
    );
}

/// "Now" is spelled `--now` by the reads and `--now-ms` by compact and export: each command
/// takes both, with the same meaning.
#[test]
fn now_and_now_ms_are_one_option() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    let t = t.to_str().unwrap();
    let o = hfkit(&[
        "import",
        "--schema",
        &format!("{SEEDS}/users.toml"),
        &format!("{SEEDS}/users.csv"),
        "--table",
        t,
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let scan = |flag: &str| hfkit(&["scan", t, "--limit", "2", flag, "1800000000000"]).stdout;
    assert_eq!(scan("--now"), scan("--now-ms"));
    for flag in ["--now", "--now-ms"] {
        let o = hfkit(&["compact", t, flag, "1800000000000", "--json"]);
        assert!(o.status.success(), "compact {flag}: {}", text(&o.stderr));
        let f = tmp.path().join(format!("e{flag}.csv"));
        let o = hfkit(&[
            "export",
            t,
            "--format",
            "csv",
            "--to",
            f.to_str().unwrap(),
            flag,
            "1800000000000",
        ]);
        assert!(o.status.success(), "export {flag}: {}", text(&o.stderr));
    }
    let e = |flag: &str| std::fs::read(tmp.path().join(format!("e{flag}.csv"))).unwrap();
    assert_eq!(e("--now"), e("--now-ms"));
}

/// `table alter` reads sizes and durations as the schema and the HBase shell write them, with
/// the schema's ranges: `64KB`, `7 DAYS`; a block size HBase refuses is refused.
#[test]
fn table_alter_takes_the_schemas_sizes_and_durations() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    let t = t.to_str().unwrap();
    let o = hfkit(&[
        "table",
        "create",
        t,
        "--schema",
        &format!("{SEEDS}/users.toml"),
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["table"], "app:users");
    assert_eq!(v["regions"].as_array().unwrap().len(), 10);
    assert_eq!(v["regions"][1]["start_key"], "1");
    let alter = |args: &[&str]| {
        let mut a = vec!["table", "alter", t, "--family", "h"];
        a.extend_from_slice(args);
        hfkit(&a)
    };
    let o = alter(&["--ttl", "7 DAYS 12 HOURS", "--block-size", "32KB", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["family"]["ttl_seconds"], 7 * 86_400 + 12 * 3_600, "{v}");
    assert_eq!(v["family"]["block_size"], 32 * 1024, "{v}");
    let o = alter(&["--ttl", "FOREVER"]);
    assert!(
        text(&o.stdout).contains("TTL => 'FOREVER'"),
        "{}",
        text(&o.stdout)
    );
    for (args, why) in [
        (["--block-size", "3"], "between 1024"),
        (["--ttl", "soon"], "is not FOREVER"),
    ] {
        let o = alter(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(text(&o.stderr).contains(why), "{}", text(&o.stderr));
    }
}

/// Every snapshot command reports in JSON with `--json`.
#[test]
fn snapshot_commands_report_in_json() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    let t = t.to_str().unwrap();
    let o = hfkit(&[
        "import",
        "--schema",
        &format!("{SEEDS}/users.toml"),
        &format!("{SEEDS}/users.csv"),
        "--table",
        t,
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let json = |args: &[&str]| -> serde_json::Value {
        let mut a = vec!["snapshot"];
        a.extend_from_slice(args);
        a.push("--json");
        let o = hfkit(&a);
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    assert_eq!(json(&["create", t, "s1"])["name"], "s1");
    let clone = tmp.path().join("c");
    let v = json(&["clone", t, "s1", clone.to_str().unwrap()]);
    assert_eq!(
        (v["cloned"].clone(), v["files"].clone()),
        ("s1".into(), 30.into())
    );
    let v = json(&["restore", t, "s1"]);
    assert_eq!(
        (v["restored"].clone(), v["version"].clone()),
        ("s1".into(), 2.into())
    );
    let v = json(&["delete", t, "s1"]);
    assert_eq!(v["deleted"], "s1");
    assert_eq!(json(&["list", t]), serde_json::json!([]));
}

/// `--s3-endpoint` is offered (in `--help`, manual pages and completions) exactly by the
/// commands that take an `s3://` location, and refused by name elsewhere (issue 39 §3).
#[test]
fn s3_endpoint_is_offered_only_where_it_has_an_effect() {
    fn leaves(cmd: &clap::Command, path: &str, out: &mut Vec<(String, bool)>) {
        for sub in cmd.get_subcommands() {
            let p = match path {
                "" => sub.get_name().to_string(),
                p => format!("{p} {}", sub.get_name()),
            };
            let offered = sub
                .get_arguments()
                .any(|a| a.get_id() == "s3_endpoint" && !a.is_hide_set());
            out.push((p.clone(), offered));
            leaves(sub, &p, out);
        }
    }
    let mut all = Vec::new();
    leaves(&hfkit::cli::help_command(), "", &mut all);
    let takes = |p: &str| {
        [
            "import", "plan", "attach", "get", "scan", "compact", "export", "alter",
        ]
        .contains(&p)
            || (p.starts_with("table ")
                && ["create", "describe", "check", "alter", "clone-hbase"]
                    .contains(&p.trim_start_matches("table ")))
            || (p.starts_with("snapshot ") && p != "snapshot clone")
            || (p.starts_with("hfile ") && p != "hfile write")
            || p.starts_with("hbase ")
    };
    let mut checked = 0;
    for (p, offered) in &all {
        if p.split(' ').count() == 1
            && ["table", "snapshot", "hfile", "hbase"].contains(&p.as_str())
        {
            continue; // groups, not commands
        }
        assert_eq!(*offered, takes(p), "{p}");
        checked += 1;
    }
    assert!(checked >= 30, "{checked}");
    let help = |args: &[&str]| text(&hfkit(&[args, &["--help"]].concat()).stdout);
    assert!(help(&["scan"]).contains("--s3-endpoint"));
    assert!(!help(&["man"]).contains("--s3-endpoint"));
    assert!(!help(&[]).contains("--s3-endpoint"));
    let o = hfkit(&["man", "--s3-endpoint", "http://127.0.0.1:9"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).starts_with("hfkit: --s3-endpoint: `hfkit man`"));
}

/// One vocabulary (issue 42 item 3): the snapshot commands take `--snapshot NAME` as every
/// command that reads a snapshot does, and `snapshot clone` the new table's name as
/// `--table-name` (`--name` is a snapshot's name elsewhere); the older spellings (NAME after
/// TABLE, `--name`) still work, and mixing both forms is a usage error.
#[test]
fn snapshot_commands_take_snapshot_names_as_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    let schema = std::path::PathBuf::from(format!("{SEEDS}/users.toml"));
    let input = std::path::PathBuf::from(format!("{SEEDS}/users.csv"));
    assert!(common::import_with(&schema, &input, "--table", &t, &[])
        .status
        .success());
    let t = t.to_str().unwrap();
    let dir = |n: &str| tmp.path().join(n).to_str().unwrap().to_string();
    let ok = |args: &[&str]| {
        let o = hfkit(args);
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
        text(&o.stdout)
    };
    ok(&["snapshot", "create", t, "--snapshot", "new"]);
    ok(&["snapshot", "create", t, "old"]);
    let (a, b) = (dir("a"), dir("b"));
    let new = ok(&[
        "snapshot",
        "clone",
        t,
        &a,
        "--snapshot",
        "new",
        "--table-name",
        "x:a",
    ]);
    let old = ok(&["snapshot", "clone", t, "old", &b, "--name", "x:b"]);
    assert!(
        new.contains("table x:a") && old.contains("table x:b"),
        "{new}{old}"
    );
    assert!(ok(&["snapshot", "list", t]).contains("new\t"));
    ok(&["snapshot", "restore", t, "--snapshot", "new"]);
    ok(&["snapshot", "delete", t, "--snapshot", "new"]);
    ok(&["snapshot", "delete", t, "old"]);
    assert_eq!(ok(&["snapshot", "list", t]), "");
    for bad in [
        vec!["snapshot", "create", t],
        vec!["snapshot", "create", t, "x", "--snapshot", "y"],
        vec!["snapshot", "clone", t, &a],
        vec!["snapshot", "clone", t, "x", &a, "--snapshot", "y"],
    ] {
        assert_eq!(hfkit(&bad).status.code(), Some(2), "{bad:?}");
    }
}
