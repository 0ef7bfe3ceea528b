//! HBase root directories on object storage (`formats/hbase-layout.md` §"Roots on object
//! storage"), against moto on loopback: HBase's own root (`hbase-layout/root1`) and its three
//! damaged copies, uploaded to a bucket, give every reading command (`hbase ls`, `describe`,
//! `verify`, `get`, `scan`, `table clone-hbase`) the output and exit code of the local root,
//! the root named by its URL; of the store files, only the ranges a read needs are fetched;
//! no mirror is left behind.

use std::path::{Path, PathBuf};

use hfkit::storage::{Location, PutCondition, StorageConfig, Store};
use hfkit_testkit::s3::S3Server;

use crate::common::{self, hfkit, text};

/// The layout fixtures (`hbase-layout/`), or `None` (skip) when absent.
fn layout(test: &str) -> Option<PathBuf> {
    let dir = common::fixtures_root(test)?.join("hbase-layout");
    dir.join("root1").is_dir().then_some(dir)
}

/// Uploads every file under `dir` to `url`, at the same relative keys.
fn upload(server: &S3Server, dir: &Path, url: &str) {
    let base = Location::parse(url).unwrap();
    let store = Store::open(
        &base,
        &StorageConfig::with_endpoint(Some(server.endpoint())),
    )
    .unwrap();
    for f in common::files_under(dir) {
        let rel = f
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let bytes = std::fs::read(&f).unwrap();
        store
            .put(&base.join(&rel), bytes, PutCondition::Overwrite)
            .unwrap();
    }
}

/// (exit code, stdout, stderr) of hfkit with `args`, `ROOT` replaced by `root`.
fn run(server: &S3Server, args: &[&str], root: &str, tmp: &Path) -> (i32, String, String) {
    let endpoint = server.endpoint();
    let mut all: Vec<&str> = args
        .iter()
        .map(|a| if *a == "ROOT" { root } else { a })
        .collect();
    if root.starts_with("s3://") {
        all.extend(["--s3-endpoint", &endpoint]);
    }
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(&all)
        .env("TMPDIR", tmp)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        text(&o.stdout),
        text(&o.stderr),
    )
}

/// The numbers of a `--stats` note: (bytes in all, bytes by ranges of store files).
fn stats(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("object storage: "))
        .unwrap_or_else(|| panic!("no object storage note in {stderr}"));
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .map(|w| w.parse().unwrap())
        .collect();
    (n[1], n[3])
}

#[test]
fn hbase_roots_on_s3_read_as_local_ones() {
    let test = "hbase_roots_on_s3_read_as_local_ones";
    let Some(fixtures) = layout(test) else {
        return;
    };
    let Some(server) = S3Server::start(test) else {
        return;
    };
    let tmp = common::tmpdir();
    let mirrors = tmp.path().join("tmp");
    std::fs::create_dir(&mirrors).unwrap();
    let roots = [
        "root1",
        "corrupt/truncated_manifest",
        "corrupt/missing_archived_file",
        "corrupt/reference_missing_parent",
    ];
    let commands: &[&[&str]] = &[
        &["hbase", "ls", "ROOT"],
        &["hbase", "ls", "ROOT", "--json"],
        &["hbase", "describe", "ROOT", "t1"],
        &[
            "hbase",
            "describe",
            "ROOT",
            "--snapshot",
            "snap_t2",
            "--json",
        ],
        &["hbase", "verify", "ROOT", "t1"],
        &["hbase", "verify", "ROOT", "ns1:t2", "--json"],
        &["hbase", "verify", "ROOT", "t3"],
        &["hbase", "verify", "ROOT", "--snapshot", "snap_t1"],
        &["hbase", "verify", "ROOT", "--snapshot", "snap_t2"],
        &["hbase", "verify", "ROOT", "--snapshot", "snap_t2_daughters"],
        &["hbase", "get", "ROOT", "t1", "k"],
        &["hbase", "get", "ROOT", "ns1:t2", "r12", "--versions", "3"],
        &["hbase", "scan", "ROOT", "t3"],
        &["hbase", "scan", "ROOT", "--snapshot", "snap_t2"],
        &[
            "hbase", "scan", "ROOT", "ns1:t2", "--start", "r05", "--limit", "4",
        ],
    ];
    let mut failures = 0;
    for name in roots {
        let local = fixtures.join(name);
        let url = server.url(&format!("roots/{name}"));
        upload(&server, &local, &url);
        let local = local.to_str().unwrap();
        for args in commands {
            let want = run(&server, args, local, &mirrors);
            let got = run(&server, args, &url, &mirrors);
            let shown = |s: &str| s.replace(local, &url);
            assert_eq!(got.0, want.0, "{name} {args:?}: {}", got.2);
            assert_eq!(got.1, shown(&want.1), "{name} {args:?}");
            assert_eq!(got.2, shown(&want.2), "{name} {args:?}");
            failures += usize::from(want.0 != 0);
        }
    }
    // The damaged copies fail as locally (not only the sound root passing).
    assert!(failures >= 4, "{failures} failing commands");

    let url = server.url("roots/root1");
    let root1 = fixtures.join("root1");
    let store_bytes: u64 = common::files_under(&root1)
        .iter()
        .filter(|f| {
            hfkit::hbase::remote::is_placeholder(&f.strip_prefix(&root1).unwrap().to_string_lossy())
        })
        .map(|f| f.metadata().unwrap().len())
        .sum();
    assert!(store_bytes > 0);
    // A get reads the layout's small files whole and, of the store files, ranges of the
    // table's own only (those of t1's regions: none of ns1:t2's, of the archive's).
    let t1_bytes: u64 = common::files_under(&root1.join("data/default/t1"))
        .iter()
        .filter(|f| {
            hfkit::hbase::remote::is_placeholder(&f.strip_prefix(&root1).unwrap().to_string_lossy())
        })
        .map(|f| f.metadata().unwrap().len())
        .sum();
    assert!(t1_bytes < store_bytes);
    let get = ["hbase", "get", "ROOT", "t1", "k", "--stats"];
    let (code, _, err) = run(&server, &get, &url, &mirrors);
    assert_eq!(code, 0, "{err}");
    let (all, ranged) = stats(&err);
    assert!(
        ranged > 0 && ranged <= t1_bytes,
        "{ranged} of {t1_bytes}: {err}"
    );
    assert!(all - ranged < store_bytes / 4, "{all} bytes in all: {err}");

    // A clone from the root on object storage is the clone from the local root.
    for (i, view) in [&["t1"][..], &["--snapshot", "snap_t2"]].iter().enumerate() {
        let mut tables = Vec::new();
        for root in [root1.to_str().unwrap(), url.as_str()] {
            let dest = tmp.path().join(format!("clone{i}-{}", tables.len()));
            let dest_s = dest.to_str().unwrap();
            let args = [&["table", "clone-hbase", "ROOT"][..], view, &[dest_s]].concat();
            let (code, out, err) = run(&server, &args, root, &mirrors);
            assert_eq!(code, 0, "{args:?}: {err}");
            assert!(out.contains(dest_s), "{out}");
            let o = hfkit(&["table", "check", dest_s]);
            assert!(o.status.success(), "{}", text(&o.stderr));
            tables.push(text(&hfkit(&["scan", dest_s]).stdout));
        }
        assert!(!tables[0].is_empty());
        assert_eq!(tables[0], tables[1], "{view:?}");
    }
    // A snapshot copied from the root on object storage is the copy from the local root,
    // file for file (the files read by ranges, the snapshot's directory downloaded).
    let mut trees = Vec::new();
    for (i, root) in [root1.to_str().unwrap(), url.as_str()].iter().enumerate() {
        let dest = tmp.path().join(format!("copied{i}"));
        let dest_s = dest.to_str().unwrap();
        let args = [
            "hbase",
            "copy-snapshot",
            "ROOT",
            dest_s,
            "--snapshot",
            "snap_t1",
        ];
        let (code, _, err) = run(&server, &args, root, &mirrors);
        assert_eq!(code, 0, "{err}");
        let tree: Vec<(PathBuf, Vec<u8>)> = common::files_under(&dest)
            .into_iter()
            .map(|f| {
                (
                    f.strip_prefix(&dest).unwrap().to_path_buf(),
                    std::fs::read(&f).unwrap(),
                )
            })
            .collect();
        trees.push(tree);
    }
    assert!(trees[0].len() > 2);
    assert_eq!(trees[0], trees[1]);
    // Every mirror was removed.
    let left: Vec<_> = std::fs::read_dir(&mirrors).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Every object below `url`, by key relative to it.
fn objects(server: &S3Server, url: &str) -> Vec<String> {
    let base = Location::parse(url).unwrap();
    let store = Store::open(
        &base,
        &StorageConfig::with_endpoint(Some(server.endpoint())),
    )
    .unwrap();
    store
        .list(&base)
        .unwrap()
        .into_iter()
        .filter_map(|o| o.location.relative_to(&base))
        .collect()
}

/// Runs `hfkit hbase export-snapshot TABLE URL --name NAME` until it pauses at `pause` (the
/// test hook `HFKIT_TEST_EXPORT_PAUSE`), then SIGKILLs it.
fn kill_export_at(server: &S3Server, table: &Path, url: &str, name: &str, pause: &str) {
    let endpoint = server.endpoint();
    let table = table.to_str().unwrap();
    let args = [
        "hbase",
        "export-snapshot",
        table,
        url,
        "--name",
        name,
        "--s3-endpoint",
        &endpoint,
    ];
    common::kill_export_when_paused(&args, pause);
}

/// `hbase export-snapshot` into a root on object storage (formats/hbase-layout.md §"Export
/// into a root on object storage"): the snapshot verifies with the digests of the same
/// export into a local root; its name is not taken twice; SIGKILLed while writing the store
/// files or before the description, it leaves no snapshot, and the next export leaves no
/// object that no snapshot names.
#[test]
fn snapshot_exports_into_s3_roots_commit_last_and_recover_killed_runs() {
    let test = "snapshot_exports_into_s3_roots_commit_last_and_recover_killed_runs";
    let Some(fixtures) = layout(test) else {
        return;
    };
    let Some(server) = S3Server::start(test) else {
        return;
    };
    let tmp = common::tmpdir();
    let mirrors = tmp.path().join("tmp");
    std::fs::create_dir(&mirrors).unwrap();
    let table = tmp.path().join("t");
    let root1 = fixtures.join("root1");
    let table_s = table.to_str().unwrap();
    let (code, _, err) = run(
        &server,
        &[
            "table",
            "clone-hbase",
            "ROOT",
            "--snapshot",
            "snap_t1",
            table_s,
        ],
        root1.to_str().unwrap(),
        &mirrors,
    );
    assert_eq!(code, 0, "{err}");
    let local = tmp.path().join("hbase");
    let url = server.url("exported");
    for (root, name) in [(local.to_str().unwrap(), "s1"), (url.as_str(), "s1")] {
        let args = ["hbase", "export-snapshot", table_s, "ROOT", "--name", name];
        let (code, out, err) = run(&server, &args, root, &mirrors);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains(&format!("{root}/.hbase-snapshot/{name}")),
            "{out}"
        );
    }
    let verify = |root: &str| {
        let (code, out, err) = run(
            &server,
            &["hbase", "verify", "ROOT", "--snapshot", "s1"],
            root,
            &mirrors,
        );
        assert_eq!(code, 0, "{err}");
        // Region names hash the creation time: each store by its family, in region order.
        out.lines()
            .filter(|l| !l.starts_with("snapshot:"))
            .map(|l| l.split_once('/').map_or(l, |(_, store)| store).to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(verify(&url), verify(local.to_str().unwrap()));
    let again = ["hbase", "export-snapshot", table_s, "ROOT", "--name", "s1"];
    let (code, _, err) = run(&server, &again, &url, &mirrors);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("already exists"), "{err}");
    let before = objects(&server, &url);

    for (name, pause) in [("s2", "uploaded:3"), ("s3", "uploaded:10")] {
        kill_export_at(&server, &table, &url, name, pause);
        let (_, listed, _) = run(&server, &["hbase", "ls", "ROOT"], &url, &mirrors);
        assert!(
            !listed.contains(&format!("SNAPSHOT  {name} ")),
            "{pause}: {listed}"
        );
        // The next export (of another name) removes what the killed one left.
        let (code, _, err) = run(
            &server,
            &[
                "hbase",
                "export-snapshot",
                table_s,
                "ROOT",
                "--name",
                &format!("{name}b"),
            ],
            &url,
            &mirrors,
        );
        assert_eq!(code, 0, "{pause}: {err}");
        let (code, _, err) = run(
            &server,
            &["hbase", "verify", "ROOT", "--snapshot", &format!("{name}b")],
            &url,
            &mirrors,
        );
        assert_eq!(code, 0, "{pause}: {err}");
    }
    // What is there: s1's objects, and as many of s2b and of s3b (the store files, a
    // manifest and a description each); nothing in the working directory.
    let after = objects(&server, &url);
    assert!(before.iter().all(|k| after.contains(k)));
    assert!(before.iter().all(|k| !k.contains("/.tmp/")), "{before:#?}");
    let new: Vec<_> = after.iter().filter(|k| !before.contains(k)).collect();
    assert_eq!(new.len(), 2 * before.len(), "{new:#?}");
    assert!(new.iter().all(|k| !k.contains("/.tmp/")), "{new:#?}");
    let left: Vec<_> = std::fs::read_dir(&mirrors).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Downloads every object under `url` into the local directory `to`, at the same paths.
fn download(server: &S3Server, url: &str, to: &Path) {
    let base = Location::parse(url).unwrap();
    let store = Store::open(
        &base,
        &StorageConfig::with_endpoint(Some(server.endpoint())),
    )
    .unwrap();
    store.download_tree(&base, to).unwrap();
}

/// `hbase compact` of a root on object storage (formats/hbase-layout.md §"Offline compaction"
/// and §"Roots on object storage"): `t1`, `ns1:t2`'s split daughters and `t1` on the FILE
/// store-file tracker, compacted in a bucket, leave (downloaded) the cells and the archive of
/// the same compaction of a local copy, and no object under the regions' `.tmp/` nor the lock.
/// SIGKILLed at the test hook's pause points (outputs written, an output uploaded with its
/// inputs not archived, a FILE-tracker output uploaded but not listed yet, a store committed),
/// every store is as before or as after, and the next run on the root finishes the job; a
/// second run while one holds the table's lock is refused and changes nothing.
#[test]
fn hbase_compact_of_s3_roots_equals_local_and_recovers_killed_runs() {
    use crate::common::hbase_root::{hbase_layout_after, hbase_store_states, HbaseTable};
    let test = "hbase_compact_of_s3_roots_equals_local_and_recovers_killed_runs";
    let Some(fixtures) = layout(test) else {
        return;
    };
    let Some(server) = S3Server::start(test) else {
        return;
    };
    const NOW: &str = "1800000000000";
    let t1 = HbaseTable {
        name: "t1",
        dir: "data/default/t1",
        families: &["cf1", "cf2"],
    };
    let t2 = HbaseTable {
        name: "ns1:t2",
        dir: "data/ns1/t2",
        families: &["f"],
    };
    let tmp = common::tmpdir();
    let mirrors = tmp.path().join("tmp");
    std::fs::create_dir(&mirrors).unwrap();
    let root1 = fixtures.join("root1");
    let file_root = tmp.path().join("file-tracker");
    common::copy_dir(&root1, &file_root);
    common::use_file_tracker_listing(&file_root, t1.name);
    let cases: [(&Path, &HbaseTable, &[&str]); 3] = [
        (&root1, &t1, &["written:6", "moved:1", "committed:3"]),
        (&root1, &t2, &["moved:2"]),
        (&file_root, &t1, &["unlisted:1", "moved:2"]),
    ];
    let endpoint = server.endpoint();
    for (n, (base, table, points)) in cases.into_iter().enumerate() {
        let what = format!("{} of {}", table.name, base.display());
        let local = tmp.path().join(format!("local{n}"));
        common::copy_dir(base, &local);
        let before = hbase_store_states(base, table);
        let args = ["hbase", "compact", "ROOT", table.name, "--now", NOW];
        let (code, local_out, err) = run(&server, &args, local.to_str().unwrap(), &mirrors);
        assert_eq!(code, 0, "{what}: {err}");
        let after = hbase_store_states(&local, table);
        let after_layout = hbase_layout_after(&local, table);
        assert_ne!(after, before, "{what}: compacts nothing");
        // The state of the root at `url`, downloaded: each store before or after (`finished`:
        // after, and nothing left to finish).
        let check = |url: &str, finished: bool, label: &str| {
            let got = tmp.path().join(format!("got-{label}"));
            download(&server, url, &got);
            let now = hbase_store_states(&got, table);
            if finished {
                assert_eq!(now, after, "{what} {label}");
                assert_eq!(
                    hbase_layout_after(&got, table),
                    after_layout,
                    "{what} {label}"
                );
                let stray: Vec<String> = objects(&server, url)
                    .into_iter()
                    .filter(|k| k.contains("/.tmp/") || k.starts_with(".tmp/"))
                    .collect();
                assert!(stray.is_empty(), "{what} {label}: {stray:?}");
            } else {
                for (store, cells) in &now {
                    assert!(
                        Some(cells) == after.get(store) || Some(cells) == before.get(store),
                        "{what} {label}: store {store:?} neither before nor after"
                    );
                }
            }
            std::fs::remove_dir_all(&got).unwrap();
        };
        // Uninterrupted: the local run's result, the same report.
        let url = server.url(&format!("c{n}/whole"));
        upload(&server, base, &url);
        let (code, out, err) = run(&server, &args, &url, &mirrors);
        assert_eq!(code, 0, "{what}: {err}");
        let stores = |o: &str| -> Vec<String> {
            o.lines()
                .map(|l| l.split(" -> ").next().unwrap_or(l).to_string())
                .collect()
        };
        assert_eq!(stores(&out), stores(&local_out), "{what}");
        check(&url, true, &format!("c{n}-whole"));
        // Killed at each pause point, then run again.
        for (i, point) in points.iter().enumerate() {
            let url = server.url(&format!("c{n}/kill{i}"));
            upload(&server, base, &url);
            let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"));
            c.args(["hbase", "compact", &url, table.name, "--now", NOW])
                .args(["--s3-endpoint", &endpoint])
                .env("TMPDIR", &mirrors)
                .env("HFKIT_TEST_COMPACT_PAUSE", point)
                .stdout(std::process::Stdio::null());
            let mut child = common::spawn_until_paused(c, &format!("{what} {point}"));
            if i == 0 {
                // The lock keeps a second run out while the first holds it.
                let (code, _, err) = run(&server, &args, &url, &mirrors);
                assert_ne!(code, 0, "{what}: a second run beside a running one");
                assert!(
                    err.contains("another hfkit hbase compact is running"),
                    "{err}"
                );
            }
            child.kill().unwrap();
            child.wait().unwrap();
            check(&url, false, &format!("c{n}-kill{i}"));
            let (code, _, err) = run(&server, &args, &url, &mirrors);
            assert_eq!(code, 0, "{what} after {point}: {err}");
            check(&url, true, &format!("c{n}-next{i}"));
        }
    }
    assert!(
        common::files_under(&mirrors).is_empty(),
        "a mirror left behind"
    );
}
