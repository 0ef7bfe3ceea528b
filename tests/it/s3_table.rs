//! Tables on object storage (`s3://`, against moto on loopback): every seed design imported
//! into an `s3://` table reads back (scan, get, describe) exactly as the same import into a
//! local table, and compaction, snapshots and export give the same results; concurrent
//! attaches all land, each in its own version, and a reader never sees part of one.
//! `formats/table.md` §"Tables on object storage".

use std::collections::BTreeSet;

use hfkit_testkit::s3::S3Server;

use crate::common::{hfkit, text};

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");

/// Runs hfkit with the server as endpoint; stdout, or a panic with stderr.
fn run(server: &S3Server, args: &[&str]) -> String {
    let endpoint = server.endpoint();
    let mut all = args.to_vec();
    all.extend(["--s3-endpoint", &endpoint]);
    let o = hfkit(&all);
    assert!(o.status.success(), "{all:?}: {}", text(&o.stderr));
    text(&o.stdout)
}

/// Every seed design, imported into a local table and into an `s3://` table, gives the same
/// scan (every cell), gets, description, and after a major compaction, a snapshot and a CSV
/// export, the same again.
#[test]
fn seeds_as_s3_tables_equal_local() {
    let Some(server) = S3Server::start("seeds_as_s3_tables_equal_local") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    for (schema, input) in [
        ("users.toml", "users.csv"),
        ("orders.toml", "orders.csv"),
        ("events.toml", "events.csv"),
        ("sensors.toml", "sensors.tsv"),
    ] {
        let local = t.path().join(schema);
        let local = local.to_str().unwrap();
        let remote = server.url(&format!("tables/{schema}"));
        let schema = format!("{SEEDS}/{schema}");
        let input = format!("{SEEDS}/{input}");
        for table in [local, remote.as_str()] {
            run(
                &server,
                &[
                    "import", "--schema", &schema, &input, "--table", table, "--quiet",
                ],
            );
        }
        let same = |args: &[&str]| {
            let mut a = args.to_vec();
            let mut b = args.to_vec();
            let i = a.iter().position(|x| *x == "TABLE").unwrap();
            a[i] = local;
            b[i] = &remote;
            let (x, y) = (run(&server, &a), run(&server, &b));
            let y = without_grace(&y.replace(&remote, local));
            let (x, y) = (no_file_names(&x), no_file_names(&y));
            assert!(
                no_bytes(&x) == no_bytes(&y),
                "{args:?} differs:\n{x}\n---\n{y}"
            );
            x
        };
        let scan = same(&["scan", "TABLE", "--format", "tsv"]);
        assert!(
            scan.lines().count() > 100,
            "{schema}: {} cells",
            scan.lines().count()
        );
        let rows: BTreeSet<&str> = scan.lines().filter_map(|l| l.split('\t').next()).collect();
        for row in rows.iter().step_by(rows.len() / 2 + 1) {
            same(&["get", "TABLE", row, "--format", "tsv"]);
        }
        same(&["table", "describe", "TABLE"]);
        same(&["compact", "TABLE", "--major"]);
        same(&["snapshot", "create", "TABLE", "s1"]);
        let compacted = same(&["scan", "TABLE", "--format", "tsv"]);
        assert_eq!(
            compacted, scan,
            "{schema}: the major compaction changed what reads return"
        );
        // A cell export and a row export: the local table's on one thread, the S3 table's
        // regions read on three; the same files.
        for (what, extra) in [
            ("export", &[][..]),
            ("row export", &["--rows", "--schema", schema.as_str()][..]),
        ] {
            let (a, b) = (format!("{local}-a.csv"), format!("{local}-b.csv"));
            for (table, to, threads) in [(local, &a, "1"), (remote.as_str(), &b, "3")] {
                let mut args = vec!["export", table, "--format", "csv", "--to", to];
                args.extend_from_slice(extra);
                args.extend_from_slice(&["--threads", threads]);
                run(&server, &args);
            }
            assert_eq!(
                std::fs::read(&a).unwrap(),
                std::fs::read(&b).unwrap(),
                "{schema}: {what}"
            );
            std::fs::remove_file(&a).unwrap();
            std::fs::remove_file(&b).unwrap();
        }
        let listed = run(&server, &["snapshot", "list", &remote]);
        assert!(listed.starts_with("s1\tversion 2\t"), "{listed}");
    }
}

/// Four processes attach a load each to one `s3://` table at once while a reader scans in a
/// loop: every load lands in a version of its own (versions 1 to 4, distinct sequence ids: no
/// lost update), and every scan holds each load whole or not at all.
#[test]
fn concurrent_attaches_to_s3_table() {
    let Some(server) = S3Server::start("concurrent_attaches_to_s3_table") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let schema = format!("{SEEDS}/orders.toml");
    let data = std::fs::read_to_string(format!("{SEEDS}/orders.csv")).unwrap();
    let mut lines = data.lines();
    let header = lines.next().unwrap();
    let records: Vec<&str> = lines.collect();
    // Four loads of disjoint records: the rows of each.
    let mut loads = Vec::new();
    for (i, chunk) in records.chunks(records.len().div_ceil(4)).enumerate() {
        let csv = t.path().join(format!("part{i}.csv"));
        std::fs::write(&csv, format!("{header}\n{}\n", chunk.join("\n"))).unwrap();
        let bulk = t.path().join(format!("bulk{i}"));
        let table = t.path().join(format!("alone{i}"));
        run(
            &server,
            &[
                "import",
                "--schema",
                &schema,
                csv.to_str().unwrap(),
                "--out",
                bulk.to_str().unwrap(),
                "--quiet",
            ],
        );
        run(
            &server,
            &[
                "table",
                "create",
                table.to_str().unwrap(),
                "--schema",
                &schema,
            ],
        );
        run(
            &server,
            &["attach", table.to_str().unwrap(), bulk.to_str().unwrap()],
        );
        let rows = rows_of(&run(
            &server,
            &["scan", table.to_str().unwrap(), "--format", "tsv"],
        ));
        assert!(!rows.is_empty());
        loads.push((bulk, rows));
    }
    for (i, (_, a)) in loads.iter().enumerate() {
        for (_, b) in &loads[i + 1..] {
            assert!(a.is_disjoint(b), "loads share rows");
        }
    }
    let url = server.url("tables/concurrent");
    run(&server, &["table", "create", &url, "--schema", &schema]);
    let endpoint = server.endpoint();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let scans = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut seen = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let o = hfkit(&["scan", &url, "--format", "tsv", "--s3-endpoint", &endpoint]);
                assert!(o.status.success(), "scan: {}", text(&o.stderr));
                seen.push(rows_of(&text(&o.stdout)));
            }
            seen
        });
        let writers: Vec<_> = loads
            .iter()
            .map(|(bulk, _)| {
                std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"))
                    .args([
                        "attach",
                        &url,
                        bulk.to_str().unwrap(),
                        "--s3-endpoint",
                        &endpoint,
                    ])
                    .output_async()
            })
            .collect();
        for w in writers {
            let o = w.wait_with_output().unwrap();
            assert!(o.status.success(), "attach: {}", text(&o.stderr));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        reader.join().unwrap()
    });
    let all: BTreeSet<String> = loads.iter().flat_map(|(_, r)| r.iter().cloned()).collect();
    let end = rows_of(&run(&server, &["scan", &url, "--format", "tsv"]));
    assert!(
        end == all,
        "a load is missing at the end: {} rows of {}",
        end.len(),
        all.len()
    );
    assert!(!scans.is_empty());
    for seen in &scans {
        for (_, rows) in &loads {
            let present = rows.iter().filter(|r| seen.contains(*r)).count();
            assert!(
                present == 0 || present == rows.len(),
                "a scan saw part of a load"
            );
        }
        assert!(seen.iter().all(|r| all.contains(r)));
    }
    let d = run(&server, &["table", "describe", &url, "--json"]);
    let m: serde_json::Value = serde_json::from_str(&d).unwrap();
    assert_eq!(m["version"], 4, "four attaches, four versions");
    let seqs: BTreeSet<u64> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["seq_id"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs.len(), 4, "each attach its own sequence id: {seqs:?}");
}

/// `text` with byte counts (`N bytes`) blanked: file sizes differ between any two imports of
/// the same cells (the FileInfo holds the write time).
/// `text` with the names of store files (`table describe` lists each by its path: random
/// names, different in two imports of the same input) replaced by `FILE`.
fn no_file_names(text: &str) -> String {
    text.lines()
        .map(|l| match l.split_once(": ") {
            Some((path, rest)) if l.starts_with("  ") && path.contains("/data/") => {
                let dir = path.rsplit_once('/').map_or(path, |(d, _)| d);
                format!("{dir}/FILE: {rest}\n")
            }
            _ => format!("{l}\n"),
        })
        .collect()
}

fn no_bytes(text: &str) -> String {
    let words: Vec<&str> = text.split(' ').collect();
    let mut out = Vec::with_capacity(words.len());
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).copied().unwrap_or("");
        if next.starts_with("bytes") && w.chars().all(|c| c.is_ascii_digit()) {
            out.push("N");
        } else {
            out.push(w);
        }
    }
    out.join(" ")
}

/// A server for test `test`, a scratch directory, and [`orders_bulk`] in it; `None` when
/// the test is skipped.
fn orders_setup(test: &str) -> Option<(S3Server, tempfile::TempDir, String, String, String)> {
    let server = S3Server::start(test)?;
    let t = tempfile::tempdir().unwrap();
    let (schema, input, bulk) = orders_bulk(&server, t.path());
    Some((server, t, schema, input, bulk))
}

/// The orders seed's schema and input, and its bulk-load directory (imported into `dir/bulk`
/// with `--timestamp 5`).
pub fn orders_bulk(server: &S3Server, dir: &std::path::Path) -> (String, String, String) {
    let schema = format!("{SEEDS}/orders.toml");
    let input = format!("{SEEDS}/orders.csv");
    let bulk = dir.join("bulk").to_str().unwrap().to_string();
    run(
        server,
        &[
            "import",
            "--schema",
            &schema,
            &input,
            "--out",
            &bulk,
            "--quiet",
            "--timestamp",
            "5",
        ],
    );
    (schema, input, bulk)
}

/// The row keys of a `--format tsv` scan.
fn rows_of(tsv: &str) -> BTreeSet<String> {
    tsv.lines()
        .filter_map(|l| l.split('\t').next())
        .map(String::from)
        .collect()
}

trait OutputAsync {
    fn output_async(&mut self) -> std::process::Child;
}

impl OutputAsync for std::process::Command {
    fn output_async(&mut self) -> std::process::Child {
        self.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }
}

/// An attach of a bulk-load directory on the table's bucket copies its files server-side
/// (one CopyObject each): every bulk object is read once (for verification) and no data file
/// is uploaded; the copies are checked (HEAD) before the commit. A local directory attached
/// to the same table is uploaded. The table then reads as a local table given both loads.
#[test]
fn attach_of_s3_bulk_dir_copies_server_side() {
    let Some(server) = S3Server::start("attach_of_s3_bulk_dir_copies_server_side") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let (schema, input) = (
        format!("{SEEDS}/orders.toml"),
        format!("{SEEDS}/orders.csv"),
    );
    let bulk_s3 = server.url("bulk/orders");
    let bulk_local = t.path().join("bulk");
    let bulk_local = bulk_local.to_str().unwrap();
    for (out, ts) in [(bulk_s3.as_str(), "5"), (bulk_local, "6")] {
        run(
            &server,
            &[
                "import",
                "--schema",
                &schema,
                &input,
                "--out",
                out,
                "--quiet",
                "--timestamp",
                ts,
            ],
        );
    }
    let store = crate::s3_io::store(&server);
    let bulk_objects = store
        .list(&hfkit::storage::Location::parse(&bulk_s3).unwrap())
        .unwrap();
    let bulk_bytes: u64 = bulk_objects.iter().map(|o| o.size).sum();
    assert!(bulk_objects.len() >= 2, "{bulk_objects:?}");
    let remote = server.url("tables/copied");
    let local = t.path().join("orders");
    let local = local.to_str().unwrap();
    for table in [remote.as_str(), local] {
        run(&server, &["table", "create", table, "--schema", &schema]);
    }
    let proxy = server.proxy(hfkit_testkit::s3::Fault::none());
    let attach = |bulk: &str| {
        let o = hfkit(&["attach", &remote, bulk, "--s3-endpoint", &proxy.endpoint()]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let seen = proxy.requests();
        proxy.log.lock().unwrap().clear();
        seen
    };
    let data = format!("/{}/tables/copied/data/", hfkit_testkit::s3::BUCKET);
    let seen = attach(&bulk_s3);
    let copies = seen.iter().filter(|r| r.copy && r.status == 200).count();
    assert_eq!(copies, bulk_objects.len(), "one server-side copy per file");
    let uploads: Vec<_> = seen
        .iter()
        .filter(|r| r.path.starts_with(&data) && !r.copy && r.sent > 0)
        .collect();
    assert!(uploads.is_empty(), "data uploaded, not copied: {uploads:?}");
    let bulk_path = format!("/{}/bulk/orders/", hfkit_testkit::s3::BUCKET);
    let read: u64 = seen
        .iter()
        .filter(|r| r.method == "GET" && r.path.starts_with(&bulk_path))
        .map(|r| r.received)
        .sum();
    assert_eq!(
        read, bulk_bytes,
        "each bulk object read once, for verification"
    );
    let checked = seen
        .iter()
        .filter(|r| r.method == "HEAD" && r.path.starts_with(&data))
        .count();
    assert!(checked >= copies, "copies not checked: {checked} HEADs");
    // A local directory: uploaded (its bytes sent once).
    let seen = attach(bulk_local);
    assert!(
        !seen.iter().any(|r| r.copy),
        "a local file cannot be copied server-side"
    );
    let local_bytes: u64 = crate::common::files_under(std::path::Path::new(bulk_local))
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    let sent: u64 = seen
        .iter()
        .filter(|r| r.method == "PUT" && r.path.starts_with(&data))
        .map(|r| r.sent)
        .sum();
    assert_eq!(sent, local_bytes, "the local files uploaded");
    let bulk_copy = t.path().join("bulk-copy");
    crate::s3_io::download(&server, &bulk_s3, &bulk_copy);
    run(&server, &["attach", local, bulk_copy.to_str().unwrap()]);
    run(&server, &["attach", local, bulk_local]);
    let scan = |table: &str| {
        run(
            &server,
            &["scan", table, "--format", "tsv", "--versions", "5"],
        )
    };
    let (a, b) = (scan(local), scan(&remote));
    assert!(a.lines().count() > 100);
    assert!(
        a == b,
        "the s3:// table reads differently from the local one"
    );
}

/// The next writer removes data files no version names and aborts multipart uploads in
/// progress once they are older than the grace period (what a writer killed before its commit
/// leaves), and leaves younger ones (a commit may be in progress) and live ones.
#[test]
fn next_writer_removes_orphaned_files_of_s3_table() {
    let Some((server, _t, schema, _, bulk)) =
        orders_setup("next_writer_removes_orphaned_files_of_s3_table")
    else {
        return;
    };
    let bulk = bulk.as_str();
    let url = server.url("tables/gc");
    run(&server, &["table", "create", &url, "--schema", &schema]);
    run(&server, &["attach", &url, bulk]);
    let before = run(&server, &["scan", &url, "--format", "tsv"]);
    let orphan = crate::s3_io::put(
        &server,
        "tables/gc/data/r00000/o/0123456789abcdef0123456789abcdef_SeqId_9_",
        b"x".to_vec(),
    );
    let store = crate::s3_io::store(&server);
    let exists = |u: &str| {
        store
            .head(&hfkit::storage::Location::parse(u).unwrap())
            .unwrap()
            .is_some()
    };
    // A multipart upload a killed writer left in progress (never completed nor aborted), and
    // its journal (written before the upload started).
    crate::s3_io::put(
        &server,
        "tables/gc/.tmp/uploads/r00000.o.dead",
        b"data/r00000/o/dead".to_vec(),
    );
    let upload = store
        .upload(
            &hfkit::storage::Location::parse(&server.url("tables/gc/data/r00000/o/dead")).unwrap(),
            5 << 20,
        )
        .unwrap();
    std::mem::forget(upload);
    let pending = || {
        server
            .multipart_uploads()
            .into_iter()
            .filter(|k| k.starts_with("tables/gc/"))
            .count()
    };
    assert_eq!(pending(), 1);
    // Young: kept by the next writer.
    run(&server, &["attach", &url, bulk]);
    assert!(
        exists(&orphan),
        "a file younger than the grace period was removed"
    );
    assert_eq!(
        pending(),
        1,
        "an upload younger than the grace period was aborted"
    );
    // Past the grace period (0 here): removed by the next writer; the live files stay.
    let endpoint = server.endpoint();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(["attach", &url, bulk, "--s3-endpoint", &endpoint])
        .env("HFKIT_S3_GC_GRACE_SECONDS", "0")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!exists(&orphan), "the orphan is still there");
    assert_eq!(
        pending(),
        0,
        "the dead writer's multipart upload is still in progress"
    );
    let after = run(&server, &["scan", &url, "--format", "tsv"]);
    assert_eq!(rows_of(&after), rows_of(&before));
}

/// SIGKILL during `attach`, `import --table` and `compact --major` on an `s3://` table, at
/// least 50 kills (CI runs them all), each at a point spread over its kind of run (fractions
/// of a whole run's length taken by the golden ratio: before, during and after the uploads,
/// the commit and the hint): after each kill the table reads, and is the state before the run
/// or after it (one whole new version, or none). The next writer then removes what the dead
/// ones left: data files no version names, upload journals, and multipart uploads in progress.
#[test]
fn killed_writers_leave_s3_table_before_or_after() {
    let Some((server, t, schema, input, bulk)) =
        orders_setup("killed_writers_leave_s3_table_before_or_after")
    else {
        return;
    };
    let bulk = bulk.as_str();
    let url = server.url("tables/kill");
    run(&server, &["table", "create", &url, "--schema", &schema]);
    let endpoint = server.endpoint();
    let store = crate::s3_io::store(&server);
    let at = |rel: &str| hfkit::storage::Location::parse(&server.url(rel)).unwrap();
    // The live version, read directly: its number, its files, and each file's ETag (the
    // newest manifest listed is live: this test's writers never race). A read depends on
    // nothing else, so while these stay equal the table reads as before; the rows a scan
    // returns (the table reads) are compared whenever the version changes.
    let data = at("tables/kill/data");
    let state = || {
        let newest = store
            .list(&at("tables/kill/manifests"))
            .unwrap()
            .into_iter()
            .map(|o| o.location)
            .max_by_key(|l| l.to_string())
            .unwrap();
        let m: serde_json::Value = serde_json::from_slice(&store.read(&newest).unwrap()).unwrap();
        let objects: std::collections::BTreeMap<String, Option<String>> = store
            .list(&data)
            .unwrap()
            .into_iter()
            .map(|o| (o.location.relative_to(&data).unwrap(), o.e_tag))
            .collect();
        let files: Vec<(String, String, Option<String>)> = m["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let s = |k: &str| f[k].as_str().unwrap().to_string();
                let rel = format!("{}/{}/{}", s("region"), s("family"), s("name"));
                let e_tag = objects.get(&rel).unwrap_or_else(|| panic!("{rel}: gone"));
                (s("region"), s("family"), e_tag.clone())
            })
            .collect();
        (m["version"].as_u64().unwrap(), files)
    };
    // How many files version `v`'s manifest names.
    let files_in = |v: u64| {
        let name = hfkit::table::manifest::manifest_file_name(v);
        let m: serde_json::Value = serde_json::from_slice(
            &store
                .read(&at(&format!("tables/kill/manifests/{name}")))
                .unwrap(),
        )
        .unwrap();
        m["files"].as_array().unwrap().len()
    };
    let rows = || rows_of(&run(&server, &["scan", &url, "--format", "tsv"]));
    // The writers' mirrors go here, to see what killed ones leave.
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    const KINDS: [&str; 3] = ["attach", "import --table", "compact --major"];
    let writer = |kind: usize| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"));
        match kind {
            0 => c.args(["attach", &url, bulk]),
            1 => c.args([
                "import", "--schema", &schema, &input, "--table", &url, "--quiet", "--force",
            ]),
            _ => c.args(["compact", &url, "--major"]),
        };
        c.args(["--s3-endpoint", &endpoint])
            .env("TMPDIR", &tmp)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        c
    };
    // How long a whole run of each kind takes, to spread the kills over it.
    let timed = |kind: usize| {
        let start = std::time::Instant::now();
        assert!(writer(kind).status().unwrap().success(), "{}", KINDS[kind]);
        start.elapsed()
    };
    let mut full = [timed(0), timed(1), std::time::Duration::ZERO];
    let files_per_run = state().1.len() / 2;
    full[2] = timed(2);
    let mut before = state();
    let mut rows_before = rows();
    let (mut kills, mut runs, mut committed) = ([0; 3], 0, 0);
    while kills.iter().sum::<usize>() < 50 {
        assert!(
            runs < 150,
            "only {kills:?} of {runs} writers were killed before they finished"
        );
        let kind = runs % 3;
        let fraction = (runs as f64 * 0.618_034).fract() * 0.96 + 0.02;
        if kind == 2 && !has_something_to_compact(&before.1) {
            assert!(writer(0).status().unwrap().success());
            before = state();
        }
        let mut child = writer(kind).spawn().unwrap();
        std::thread::sleep(full[kind].mul_f64(fraction));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            kills[kind] += 1;
        }
        child.wait().unwrap();
        let now = state();
        let what = format!("run {runs} ({}, killed at {fraction:.2})", KINDS[kind]);
        if now.0 == before.0 {
            assert_eq!(now.1, before.1, "{what}: changed without a version");
        } else {
            // Each version since `before` is one whole writer's: a load (its files added) or a
            // compaction (fewer files). A request a killed writer sent before its kill may
            // reach the server after it (the server finishes what it was sent), so a version
            // is judged by what it holds, not by which run's writer made it.
            for v in before.0 + 1..=now.0 {
                let (prev, next) = (files_in(v - 1), files_in(v));
                assert!(
                    next == prev + files_per_run || next < prev,
                    "{what}: version {v} holds {next} files after {prev}: neither a whole load \
                     nor a compaction"
                );
            }
            let rows_now = rows();
            assert_eq!(rows_now, rows_before, "{what}: the rows changed");
            rows_before = rows_now;
            committed += now.0 - before.0;
        }
        before = now;
        runs += 1;
    }
    let journals = || store.list(&at("tables/kill/.tmp/uploads")).unwrap().len();
    let uploads = || {
        server
            .multipart_uploads()
            .iter()
            .filter(|k| k.starts_with("tables/kill/"))
            .count()
    };
    let orphans = store.list(&data).unwrap().len() - before.1.len();
    eprintln!(
        "s3 kills: {kills:?} (attach, import --table, compact) killed, {committed} of {runs} \
         committed; left: {orphans} orphaned file(s), {} upload journal(s), {} upload(s) in progress",
        journals(),
        uploads()
    );
    // The next writer, past the grace period, leaves only what versions and snapshots name.
    let o = writer(0)
        .env("HFKIT_S3_GC_GRACE_SECONDS", "0")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "staging left by killed writers: {left:?}");
    let objects = store.list(&data).unwrap().len();
    let (_, files) = state();
    assert_eq!(rows(), rows_before, "the rows changed");
    assert_eq!(
        objects,
        files.len(),
        "objects under data/ no version names are left"
    );
    assert_eq!(journals(), 0, "upload journals are left");
    assert_eq!(
        uploads(),
        0,
        "multipart uploads of killed writers are left in progress"
    );
}

/// A several-table import into an `s3://` root (issue 39), killed with SIGKILL at points
/// spread over its run (before, between and after its tables' commits): each table is, after
/// every kill, the state before or after (its versions since each whole loads: the files of
/// one run added), and reads the same rows; the next writer, past the grace period, leaves
/// nothing behind (no orphaned data file, upload journal, upload in progress or mirror).
#[test]
fn killed_several_table_imports_leave_each_table_before_or_after() {
    let Some(server) =
        S3Server::start("killed_several_table_imports_leave_each_table_before_or_after")
    else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let input = t.path().join("lines.csv");
    let mut csv = String::from("order_id,line,customer,sku,qty,order_ts\n");
    for i in 0..30_000u64 {
        let ts = 1_700_000_000_000u64 + i;
        csv.push_str(&format!(
            "{},{},c{},S{},{},{ts}\n",
            i / 3 + 1,
            i % 3 + 1,
            i % 50,
            i % 20,
            i % 9 + 1
        ));
    }
    std::fs::write(&input, csv).unwrap();
    let input = input.to_str().unwrap().to_string();
    let schema = format!("{SEEDS}/sale_lines.toml");
    let root = server.url("shop");
    let endpoint = server.endpoint();
    let store = crate::s3_io::store(&server);
    let at = |rel: &str| hfkit::storage::Location::parse(&server.url(rel)).unwrap();
    let tables = ["orders", "order_lines"];
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let writer = || {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"));
        c.args([
            "import", "--schema", &schema, &input, "--table", &root, "--quiet", "--force",
        ])
        .args(["--timestamp", "5", "--s3-endpoint", &endpoint])
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
        c
    };
    // A table's live version and how many files each of its versions names.
    let versions = |q: &str| -> Vec<usize> {
        let mut names: Vec<String> = store
            .list(&at(&format!("shop/{q}/manifests")))
            .unwrap()
            .into_iter()
            .map(|o| o.location.to_string())
            .collect();
        names.sort();
        names
            .iter()
            .map(|n| {
                let m: serde_json::Value = serde_json::from_slice(
                    &store
                        .read(&hfkit::storage::Location::parse(n).unwrap())
                        .unwrap(),
                )
                .unwrap();
                m["files"].as_array().unwrap().len()
            })
            .collect()
    };
    let rows = |q: &str| {
        rows_of(&run(
            &server,
            &["scan", &format!("{root}/{q}"), "--format", "tsv"],
        ))
    };
    let start = std::time::Instant::now();
    assert!(writer().status().unwrap().success());
    let full = start.elapsed();
    let per_run: Vec<usize> = tables
        .iter()
        .map(|q| versions(q).last().copied().unwrap())
        .collect();
    let rows_before: Vec<_> = tables.iter().map(|q| rows(q)).collect();
    let (mut kills, mut runs) = (0, 0);
    while kills < 12 {
        assert!(
            runs < 60,
            "only {kills} of {runs} imports were killed before they finished"
        );
        let fraction = (runs as f64 * 0.618_034).fract() * 0.96 + 0.02;
        let before: Vec<Vec<usize>> = tables.iter().map(|q| versions(q)).collect();
        let mut child = writer().spawn().unwrap();
        std::thread::sleep(full.mul_f64(fraction));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            kills += 1;
        }
        child.wait().unwrap();
        for (i, q) in tables.iter().enumerate() {
            let now = versions(q);
            let what = format!("run {runs} (killed at {fraction:.2}), table {q}");
            assert_eq!(
                now[..before[i].len()],
                before[i][..],
                "{what}: an old version changed"
            );
            for v in before[i].len()..now.len() {
                assert_eq!(
                    now[v],
                    now[v - 1] + per_run[i],
                    "{what}: version {v} is not one whole load"
                );
            }
            if now.len() != before[i].len() {
                assert_eq!(rows(q), rows_before[i], "{what}: the rows changed");
            }
        }
        runs += 1;
    }
    eprintln!("s3 several-table import kills: {kills} of {runs} runs");
    // The next writer, past the grace period, leaves only what versions name.
    let o = writer()
        .env("HFKIT_S3_GC_GRACE_SECONDS", "0")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "staging left by killed writers: {left:?}");
    for (i, q) in tables.iter().enumerate() {
        let files = *versions(q).last().unwrap();
        let objects = store.list(&at(&format!("shop/{q}/data"))).unwrap().len();
        assert_eq!(
            objects, files,
            "{q}: objects under data/ no version names are left"
        );
        assert!(store
            .list(&at(&format!("shop/{q}/.tmp/uploads")))
            .unwrap()
            .is_empty());
        assert_eq!(rows(q), rows_before[i]);
    }
    assert!(
        server.multipart_uploads().is_empty(),
        "uploads left in progress"
    );
}

/// True when some region and family of a manifest's `files` holds two files or more.
fn has_something_to_compact(files: &[(String, String, Option<String>)]) -> bool {
    let mut seen = BTreeSet::new();
    files.iter().any(|(r, f, _)| !seen.insert((r, f)))
}

/// Snapshot create, restore and delete, and alter, on an `s3://` table give what they give on
/// a local table.
#[test]
fn snapshots_and_alter_on_s3_table_equal_local() {
    let Some((server, t, schema, input, bulk)) =
        orders_setup("snapshots_and_alter_on_s3_table_equal_local")
    else {
        return;
    };
    let bulk = bulk.as_str();
    let local = t.path().join("orders");
    let local = local.to_str().unwrap();
    let remote = server.url("tables/snap");
    let both = |args: &[&str]| -> Vec<String> {
        [local, remote.as_str()]
            .iter()
            .map(|table| {
                let a: Vec<&str> = args
                    .iter()
                    .map(|x| if *x == "TABLE" { *table } else { *x })
                    .collect();
                no_bytes(&no_file_names(&without_grace(
                    &run(&server, &a).replace(&remote, local),
                )))
            })
            .collect()
    };
    let same = |args: &[&str]| {
        let v = both(args);
        assert!(v[0] == v[1], "{args:?} differs:\n{}\n---\n{}", v[0], v[1]);
        v[0].clone()
    };
    same(&[
        "import", "--schema", &schema, &input, "--table", "TABLE", "--quiet",
    ]);
    // The loads hold the same cells: the regions' file counts tell the versions apart.
    let regions = |d: String| -> Vec<String> {
        d.lines()
            .filter(|l| l.starts_with("region "))
            .map(String::from)
            .collect()
    };
    let scan = same(&["scan", "TABLE", "--format", "tsv"]);
    let first = regions(same(&["table", "describe", "TABLE"]));
    same(&["snapshot", "create", "TABLE", "s1"]);
    same(&["attach", "TABLE", bulk]);
    let second = regions(same(&["table", "describe", "TABLE"]));
    assert!(first != second, "the second load changed nothing");
    same(&["snapshot", "restore", "TABLE", "s1"]);
    assert!(
        regions(same(&["table", "describe", "TABLE"])) == first,
        "not restored"
    );
    assert!(
        same(&["scan", "TABLE", "--format", "tsv"]) == scan,
        "restored cells differ"
    );
    same(&[
        "table",
        "alter",
        "TABLE",
        "--family",
        "o",
        "--versions",
        "7",
    ]);
    same(&["table", "describe", "TABLE"]);
    same(&["snapshot", "delete", "TABLE", "s1"]);
    let listed = same(&["snapshot", "list", "TABLE"]);
    assert!(!listed.contains("s1"), "{listed}");
}

/// A report of a command on an `s3://` table in its local form: "N files removed" says there
/// when the replaced objects go (the garbage grace period), which the local report does not
/// (`readme::readme_object_storage_block_runs_against_moto` checks that it is said).
fn without_grace(report: &str) -> String {
    const GRACE: &str = " from the table (their objects stay for readers of older versions and \
                         are deleted by the first commit 3600 s or more after this one: \
                         HFKIT_S3_GC_GRACE_SECONDS)";
    report.replace(GRACE, "")
}
