//! Nothing left behind (issue 19, point 5): every temporary file and directory an operation
//! makes is removed on every exit path but SIGKILL, and the next writer removes what a killed
//! one left, without touching what a running one still uses. `tests/kill.rs` kills real
//! processes; here the failures are real (a bad row, a write failing with EFBIG) and the
//! leftovers of killed writers are laid out as they leave them.

use crate::common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hfkit::pipeline::import::SPILL_DIR_PREFIX;
use hfkit::table::directory::Table;
use hfkit::table::staging::OwnedDir;

use crate::common::hfkit;

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn seed(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/seeds")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Entries of `dir` (none when it does not exist).
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// A CSV with the users seed's columns and `n` rows (8,000 spill about 50 runs under `--memory
/// 64KB`); with `bad_at`, that row's score is `many`.
fn users_csv(path: &Path, n: usize, bad_at: Option<usize>) {
    let mut text = String::from("user_id,name,email,city,score,last_login\n");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 1..=n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let score = if bad_at == Some(i) {
            "many".to_string()
        } else {
            (x % 1_000_000).to_string()
        };
        text.push_str(&format!(
            "{i},user {i},u{i}@example.com,c{},{score},{}\n",
            i % 50,
            1_700_000_000_000 + x % 1_000_000_000
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// `hfkit import --schema SCHEMA CSV EXTRA.. --quiet`.
fn import_args<'a>(schema: &'a Path, csv: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["import", "--schema", s(schema), s(csv)];
    a.extend_from_slice(extra);
    a.push("--quiet");
    a
}

/// `hfkit import` of `csv` into `root/bulk` spilling to `root/spill`, sorting every cell in
/// 64 KiB buffers on one thread; `limit_file_size` runs it with RLIMIT_FSIZE at that many bytes
/// (SIGXFSZ ignored), so that writing a larger file fails with EFBIG as on a full disk.
fn import_spilling(
    root: &Path,
    csv: &Path,
    limit_file_size: Option<u64>,
    extra: &[&str],
) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hfkit"));
    cmd.args([
        "import",
        "--schema",
        &seed("users.toml"),
        s(csv),
        "--out",
        s(&root.join("bulk")),
        "--temp-dir",
        s(&root.join("spill")),
        "--memory",
        "64KB",
        "--no-lanes",
        "--threads",
        "1",
        "--quiet",
        "--report",
        s(&root.join("report.json")),
    ]);
    cmd.args(extra);
    if let Some(limit) = limit_file_size {
        // SAFETY: between fork and exec only async-signal-safe calls (signal, setrlimit).
        unsafe {
            cmd.pre_exec(move || {
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                let r = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &r) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    cmd.output().unwrap()
}

/// The import of `csv` spills many runs: what the failures below would leave.
fn assert_spills_many_runs(root: &Path, csv: &Path) {
    ok(import_spilling(root, csv, None, &[]));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("report.json")).unwrap()).unwrap();
    assert!(report["spilled_runs"].as_u64().unwrap() > 30, "{report}");
    assert!(entries(&root.join("spill")).is_empty());
    // The index table's output is inside the main one's (bulk/.indexes/).
    std::fs::remove_dir_all(root.join("bulk")).unwrap();
    std::fs::remove_file(root.join("report.json")).unwrap();
}

/// The import failed with an error saying `expect`, and left nothing: no spill file or
/// directory in `--temp-dir`, no output.
fn assert_failed_leaving_nothing(root: &Path, o: Output, expect: &str) {
    let what = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{what}");
    assert!(what.contains(expect), "{what}");
    assert_eq!(
        entries(&root.join("spill")),
        Vec::<PathBuf>::new(),
        "{what}"
    );
    assert!(!root.join("bulk").exists(), "{what}");
    assert!(!root.join("report.json").exists(), "{what}");
}

/// The bad row is in the second batch of records (16,384 a batch), after the first one has
/// spilled about 100 runs; with and without a bad-rows file.
#[test]
fn an_import_failing_on_a_bad_row_leaves_its_temp_dir_empty() {
    let tmp = common::tmpdir();
    let root = tmp.path();
    let good = root.join("good.csv");
    users_csv(&good, 17_000, None);
    assert_spills_many_runs(root, &good);
    let bad = root.join("bad.csv");
    users_csv(&bad, 17_000, Some(17_000));
    let rejects = root.join("rejects.csv");
    for extra in [&[][..], &["--bad-rows", s(&rejects), "--max-bad-rows", "0"]] {
        let o = import_spilling(root, &bad, None, extra);
        assert_failed_leaving_nothing(root, o, "line 17001: field 'score': 'many'");
    }
}

#[test]
fn an_import_failing_to_write_leaves_its_temp_dir_empty() {
    let tmp = common::tmpdir();
    let root = tmp.path();
    let csv = root.join("users.csv");
    users_csv(&csv, 8000, None);
    assert_spills_many_runs(root, &csv);
    // A run holds at most 64 KiB of records (compressed, far less): every run fits in 100 KB,
    // but merging 16 of them into one (more than the 16-way fan-in were spilled) does not.
    let o = import_spilling(root, &csv, Some(100_000), &[]);
    assert_failed_leaving_nothing(root, o, "File too large");
}

/// A killed import's spill directory (no owner any more) is removed by the next import using
/// the same temporary directory; one a running import holds, and anything else, is not.
#[test]
fn the_next_import_removes_the_spill_directory_of_a_killed_one() {
    let tmp = common::tmpdir();
    let root = tmp.path();
    let spill = root.join("spill");
    let dead = spill.join(format!(
        "{SPILL_DIR_PREFIX}0123456789abcdef0123456789abcdef"
    ));
    std::fs::create_dir_all(&dead).unwrap();
    std::fs::write(dead.join("run-000000-1.spill"), vec![7u8; 4096]).unwrap();
    let running = OwnedDir::create(&spill, SPILL_DIR_PREFIX).unwrap();
    std::fs::write(running.path().join("run-000000-2.spill"), b"in use").unwrap();
    std::fs::write(spill.join("notes.txt"), b"the user's").unwrap();
    let csv = root.join("users.csv");
    users_csv(&csv, 500, None);
    ok(import_spilling(root, &csv, None, &[]));
    assert!(!dead.exists());
    assert!(running.path().join("run-000000-2.spill").is_file());
    assert!(spill.join("notes.txt").is_file());
    let held = running.path().to_path_buf();
    drop(running);
    assert!(!held.exists());
    assert_eq!(entries(&spill), vec![spill.join("notes.txt")]);
}

/// Lays out in table `t` what killed writers leave: compaction, attach and import staging
/// under `.tmp/` (empty or not), a stray temporary file, outputs placed under `data/` but never
/// committed, directories no manifest needs, an unpublished manifest, `CURRENT.tmp` and a
/// half-written snapshot. Returns the paths made.
fn plant_leftovers(t: &Path) -> Vec<PathBuf> {
    let hex = |n: u8| format!("{:032x}", 0xfeed_0000_u64 + n as u64);
    let tmp = t.join(".tmp");
    let m = Table::open(t).unwrap().manifest().unwrap();
    let import = tmp.join(format!("import-{}", hex(6)));
    // Compaction killed after renaming its outputs into data/: its staging directory is empty;
    // a region directory with an empty family directory: attach killed after its mkdir.
    let dirs = [
        tmp.join(format!("compact-{}", hex(1))),
        t.join("data/r00077/s"),
    ];
    let files = [
        // Compaction killed while writing an output.
        tmp.join(format!("compact-{}", hex(2)))
            .join(format!("{}_SeqId_3_", hex(3))),
        // Attach killed while splitting a straddling input.
        tmp.join(format!("attach-{}", hex(4)))
            .join(format!("{}.2", hex(5))),
        // Import killed while writing its output and spilling.
        import.join("i").join(format!(".{}.hfkit-tmp", hex(7))),
        import
            .join(format!("{SPILL_DIR_PREFIX}{}", hex(8)))
            .join("run-000000-1.spill"),
        tmp.join("stray.tmp"),
        // Outputs placed under data/ but never committed.
        t.join("data/r00003/i")
            .join(format!("{}_SeqId_99_", hex(9))),
        t.join("data/r00042/i")
            .join(format!("{}_SeqId_99_", hex(10))),
        t.join("manifests").join(format!(
            "{}.tmp",
            hfkit::table::manifest::manifest_file_name(m.version + 1)
        )),
        t.join("CURRENT.tmp"),
        t.join("snapshots/half.json.tmp"),
    ];
    for d in &dirs {
        std::fs::create_dir_all(d).unwrap();
    }
    for f in &files {
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, b"left behind").unwrap();
    }
    dirs.into_iter().chain(files).collect()
}

/// Every writer, run after killed writers left their files, removes all of them (and nothing a
/// running import still holds): afterwards the table directory holds only what the manifest
/// and the snapshots name.
#[test]
fn the_next_writer_removes_everything_killed_writers_left() {
    let tmp = common::tmpdir();
    let base = tmp.path().join("base");
    let t0 = base.join("users");
    ok(hfkit(&[
        "import",
        "--schema",
        &seed("users.toml"),
        &seed("users.csv"),
        "--table",
        s(&t0),
        "--timestamp",
        "1700000000000",
        "--quiet",
    ]));
    ok(hfkit(&["snapshot", "create", s(&t0), "s0"]));
    let bulk = tmp.path().join("bulk").join("users");
    ok(hfkit(&[
        "import",
        "--schema",
        &seed("users.toml"),
        &seed("users.csv"),
        "--out",
        s(&bulk),
        "--timestamp",
        "1700000000001",
        "--quiet",
    ]));
    assert_eq!(common::leftovers(&t0), Vec::<PathBuf>::new());
    let writers: Vec<(&str, Vec<String>)> = vec![
        ("attach", vec!["attach".into(), "T".into(), s(&bulk).into()]),
        ("minor compaction", vec!["compact".into(), "T".into()]),
        (
            "major compaction",
            vec!["compact".into(), "T".into(), "--major".into()],
        ),
        (
            "alter",
            vec![
                "table".into(),
                "alter".into(),
                "T".into(),
                "--family".into(),
                "s".into(),
                "--versions".into(),
                "2".into(),
            ],
        ),
        (
            "snapshot create",
            vec!["snapshot".into(), "create".into(), "T".into(), "s1".into()],
        ),
        (
            "snapshot restore",
            vec!["snapshot".into(), "restore".into(), "T".into(), "s0".into()],
        ),
        (
            "snapshot delete",
            vec!["snapshot".into(), "delete".into(), "T".into(), "s0".into()],
        ),
        (
            "import --table",
            vec![
                "import".into(),
                "--schema".into(),
                seed("users.toml"),
                seed("users.csv"),
                "--table".into(),
                "T".into(),
                "--quiet".into(),
            ],
        ),
    ];
    for (i, (what, args)) in writers.iter().enumerate() {
        let root = tmp.path().join(format!("w{i}"));
        std::fs::create_dir(&root).unwrap();
        let t = root.join("users");
        common::copy_dir(&base.join("users"), &root.join("users"));
        let planted = plant_leftovers(&t);
        let running = OwnedDir::create(&t.join(".tmp"), "import-").unwrap();
        std::fs::write(running.path().join("in-use"), b"x").unwrap();
        // `table check` lists the leftover files under data/ and staging entries under .tmp/,
        // not what a running writer holds.
        let check = Table::open(&t).unwrap().check().unwrap();
        assert!(check.is_ok(), "{what}: {check:?}");
        for p in &planted {
            let listed = check.orphans.iter().any(|o| p.starts_with(o));
            let orphan =
                p.starts_with(t.join(".tmp")) || p.starts_with(t.join("data")) && p.is_file();
            assert_eq!(listed, orphan, "{what}: {p:?} in {:?}", check.orphans);
        }
        assert!(!check.orphans.iter().any(|o| o == running.path()), "{what}");
        let args: Vec<&str> = args
            .iter()
            .map(|a| if a == "T" { s(&t) } else { a.as_str() })
            .collect();
        ok(hfkit(&args));
        assert_eq!(
            common::leftovers(&t),
            vec![running.path().to_path_buf()],
            "{what}"
        );
        assert!(running.path().join("in-use").is_file(), "{what}");
        drop(running);
        assert_eq!(common::leftovers(&t), Vec::<PathBuf>::new(), "{what}");
        assert_eq!(
            common::leftovers(&t.join("indexes/users_by_email")),
            Vec::<PathBuf>::new(),
            "{what}"
        );
        let check = Table::open(&t).unwrap().check().unwrap();
        assert!(
            check.is_ok() && check.orphans.is_empty(),
            "{what}: {check:?}"
        );
    }
}

/// A two-region, two-family table schema; `splits = false`: one region (its bulk files then
/// straddle the table's regions, and an attach splits them).
fn small_schema(path: &Path, splits: bool) {
    let mut text = String::from(
        "[table]\nname = \"t:small\"\n\n[[family]]\nname = \"a\"\nVERSIONS = 3\n\n\
         [[family]]\nname = \"b\"\nVERSIONS = 1\nCOMPRESSION = \"GZ\"\n\n",
    );
    if splits {
        text.push_str("[splits]\nkeys = [\"m\"]\n\n");
    }
    text.push_str(
        "[rowkey]\nspec = \"id\"\n\n[[column]]\nsource = \"x\"\ncell = \"a:x\"\n\n\
         [[column]]\nsource = \"y\"\ncell = \"b:y\"\n",
    );
    std::fs::write(path, text).unwrap();
}

/// Every table operation failing at each of its filesystem steps in turn (`FaultFs`: the step
/// and every later one fail) removes the temporary files it made before returning its error:
/// the table directory then holds only what the manifest and the snapshots name, without
/// waiting for the next writer.
#[test]
fn a_failing_table_operation_removes_its_temporary_files() {
    use hfkit::table::compact::{CompactOptions, FamilyChanges};
    use hfkit::table::fsops::FaultFs;
    use hfkit::table::TableError;
    use std::sync::Arc;

    let tmp = common::tmpdir();
    let root = tmp.path();
    let (schema, flat) = (root.join("small.toml"), root.join("flat.toml"));
    small_schema(&schema, true);
    small_schema(&flat, false);
    let csv = root.join("rows.csv");
    let mut text = String::from("id,x,y\n");
    for c in b'a'..=b'z' {
        text.push_str(&format!("{0}{0},x{0},y{0}\n", c as char));
    }
    std::fs::write(&csv, text).unwrap();
    let base = root.join("base");
    for ts in ["1", "2", "3"] {
        ok(hfkit(&import_args(
            &schema,
            &csv,
            &["--table", s(&base), "--timestamp", ts],
        )));
        if ts == "1" {
            Table::open(&base).unwrap().snapshot_create("s0").unwrap();
        }
    }
    let bulk = root.join("bulk");
    ok(hfkit(&import_args(
        &flat,
        &csv,
        &["--out", s(&bulk), "--timestamp", "4"],
    )));
    type Operation = Box<dyn Fn(&Table) -> Result<(), TableError>>;
    let ops: Vec<(&str, Operation)> = vec![
        ("attach", Box::new(move |t| t.attach(&bulk).map(drop))),
        (
            "major compaction",
            Box::new(|t| {
                t.compact(CompactOptions {
                    major: true,
                    now_ms: 10,
                    ..CompactOptions::default()
                })
                .map(drop)
            }),
        ),
        (
            "alter",
            Box::new(|t| {
                t.alter(
                    "a",
                    &FamilyChanges {
                        versions: Some(1),
                        ..FamilyChanges::default()
                    },
                )
                .map(drop)
            }),
        ),
        (
            "snapshot create",
            Box::new(|t| t.snapshot_create("s1").map(drop)),
        ),
        (
            "snapshot restore",
            Box::new(|t| t.snapshot_restore("s0").map(drop)),
        ),
        (
            "snapshot delete",
            Box::new(|t| t.snapshot_delete("s0").map(drop)),
        ),
    ];
    for (name, op) in &ops {
        let mut failures = 0;
        for fail_at in 0.. {
            let d = root.join(format!("{name}-{fail_at}"));
            common::copy_dir(&base, &d);
            let t = Table::open(&d).unwrap();
            let result = op(&t.clone().with_fs(Arc::new(FaultFs::new(fail_at))));
            // Committed, but not known to be durable: the files of the version before stay
            // until the next writer (a crash could still bring that version back).
            let committed = matches!(result, Err(TableError::NotDurable { .. }));
            let left: Vec<PathBuf> = common::leftovers(&d)
                .into_iter()
                .filter(|p| !(committed && base.join(p.strip_prefix(&d).unwrap()).is_file()))
                .collect();
            assert_eq!(
                left,
                Vec::<PathBuf>::new(),
                "{name} failing at step {fail_at}: {result:?}"
            );
            std::fs::remove_dir_all(&d).unwrap();
            if result.is_ok() {
                break;
            }
            failures += 1;
        }
        eprintln!("{name}: failed at each of {failures} steps");
        assert!(failures >= 2, "{name}: {failures} steps");
    }
}

/// An export killed before its rename leaves its staging directory `.<name>.hfkit-<id>` beside
/// the destination; the next export to that destination removes it (and leaves alone one a live
/// export holds), for every kind of export.
#[test]
fn the_next_export_removes_what_a_killed_one_left() {
    let tmp = common::tmpdir();
    let t = tmp.path().join("users");
    ok(hfkit(&[
        "import",
        "--schema",
        &seed("users.toml"),
        &seed("users.csv"),
        "--table",
        s(&t),
        "--quiet",
    ]));
    let out = tmp.path().join("out");
    let exports: [&[&str]; 4] = [
        &["--bulkload"],
        &["--to"],
        &["--format", "csv", "--to"],
        &["--format", "parquet", "--to"],
    ];
    for args in exports {
        // What a killed export left (its lock died with it), and a running one's.
        let dead = tmp
            .path()
            .join(".out.hfkit-0123456789abcdef0123456789abcdef");
        std::fs::create_dir_all(dead.join("f")).unwrap();
        std::fs::write(dead.join("f").join("half-written"), b"x").unwrap();
        let live = OwnedDir::create(tmp.path(), ".out.hfkit-").unwrap();
        let mut cmd = vec!["export", s(&t)];
        cmd.extend_from_slice(args);
        cmd.push(s(&out));
        ok(hfkit(&cmd));
        assert!(!dead.exists(), "{args:?} left {}", dead.display());
        assert!(
            live.path().is_dir(),
            "{args:?} removed a live export's directory"
        );
        drop(live);
        let mut names: Vec<String> = entries(tmp.path())
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["out", "users"], "{args:?}");
        if out.is_dir() {
            std::fs::remove_dir_all(&out).unwrap();
        } else {
            std::fs::remove_file(&out).unwrap();
        }
    }
}
