//! Reads of tables on object storage by byte ranges (`s3://`, against moto on loopback;
//! `formats/table.md` §"Reads of tables on object storage"): gets and scans read only the
//! blocks they need, give what the same read of a local copy gives, and `--stats` counts the
//! requests and bytes.

use std::path::Path;

use hfkit_testkit::s3::{Fault, FaultAnswer, S3Server};

use crate::common::{hfkit, text};

/// Runs hfkit with the server as endpoint; stdout, or a panic with stderr.
fn run(server: &S3Server, args: &[&str]) -> String {
    let endpoint = server.endpoint();
    let mut all = args.to_vec();
    all.extend(["--s3-endpoint", &endpoint]);
    let o = hfkit(&all);
    assert!(o.status.success(), "{all:?}: {}", text(&o.stderr));
    text(&o.stdout)
}

/// The numbers of an `--stats` note of a read of an `s3://` table: (requests, bytes) in all,
/// and of them by ranges of store files.
fn object_stats(stderr: &str) -> ((u64, u64), (u64, u64)) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("object storage: "))
        .unwrap_or_else(|| panic!("no object storage note in {stderr}"));
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .map(|w| w.parse().unwrap())
        .collect();
    assert!(line.contains("by ranges of store files"), "{line}");
    ((n[0], n[1]), (n[2], n[3]))
}

/// Reads of an `s3://` table fetch only what they need (`formats/table.md` §"Reads of tables
/// on object storage"): a get reads each file's end and the few blocks on its path, a short
/// scan little more, a full scan each byte of the files about once; each gives what the same
/// read of a local copy gives; `--stats` says how many requests and bytes it took.
#[test]
fn reads_of_s3_table_fetch_only_what_they_need() {
    let Some(server) = S3Server::start("reads_of_s3_table_fetch_only_what_they_need") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let (local, remote) = local_and_s3_table(&server, t.path(), "r", 60_000);
    let local = local.as_str();
    let table_bytes: u64 = crate::common::files_under(&Path::new(local).join("data"))
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    assert!(table_bytes > 3_000_000, "{table_bytes}");

    // Runs `args` on the remote table (TABLE) with --stats: stdout equal to the local
    // table's, and the numbers of the note.
    let read = |args: &[&str]| {
        let with = |table: &str| {
            let mut a: Vec<&str> = args
                .iter()
                .map(|x| if *x == "TABLE" { table } else { x })
                .collect();
            a.push("--stats");
            let endpoint = server.endpoint();
            a.extend(["--s3-endpoint", &endpoint]);
            let o = hfkit(&a);
            assert!(o.status.success(), "{a:?}: {}", text(&o.stderr));
            (text(&o.stdout), text(&o.stderr))
        };
        let (want, _) = with(local);
        let (got, stderr) = with(&remote);
        assert_eq!(got, want, "{args:?}");
        object_stats(&stderr)
    };

    // A get: the end of the one file of the region holding the row (one request: trailer
    // and load-on-open section), then at most its Bloom chunk, index block and data block.
    // The other regions' files are not opened.
    let ((requests, bytes), (file_requests, file_bytes)) =
        read(&["get", "TABLE", "row-012345", "--format", "tsv"]);
    eprintln!("get: {requests} requests, {bytes} bytes; store files {file_requests}, {file_bytes}");
    assert!(file_requests <= 1 + 3, "{file_requests} requests");
    assert!(file_bytes < 64 * 1024 + 3 * 70 * 1024, "{file_bytes} bytes");
    assert!(requests < file_requests + 12 && bytes < file_bytes + 64 * 1024);
    // An absent row the Bloom filter rules out reads no data block.
    let (_, (_, absent_bytes)) = read(&["get", "TABLE", "row-0123456", "--format", "tsv"]);
    assert!(absent_bytes < file_bytes, "{absent_bytes} vs {file_bytes}");

    // A short scan: the first region's file: its end and the first read-ahead.
    let (_, (_, short)) = read(&["scan", "TABLE", "--limit", "10", "--format", "tsv"]);
    assert!(short <= 64 * 1024 + 256 * 1024, "{short} bytes");

    // A full scan: every byte of the data sections about once, in few requests.
    let (_, (full_requests, full)) = read(&["scan", "TABLE", "--format", "tsv"]);
    eprintln!("full scan: {full_requests} requests, {full} bytes of {table_bytes}; short scan {short}; absent get {absent_bytes}");
    // (The files of the s3 import differ from the local one's by a few bytes of FileInfo.)
    assert!(
        full <= table_bytes + 1024 && full > table_bytes * 9 / 10,
        "{full} of {table_bytes}"
    );
    assert!(full_requests <= 5 * 6, "{full_requests} requests");
}

/// The same import of `rows` rows of random hex values (five regions, Snappy, ROW Bloom) into a
/// local table under `dir` and into the `s3://` table `tables/<name>`: their paths.
fn local_and_s3_table(server: &S3Server, dir: &Path, name: &str, rows: usize) -> (String, String) {
    let schema = dir.join("s.toml");
    std::fs::write(
        &schema,
        "[table]\nname = \"r\"\n[[family]]\nname = \"d\"\nCOMPRESSION = \"SNAPPY\"\n\
         BLOOMFILTER = \"ROW\"\n[splits]\nkeys = [\"row-01\", \"row-02\", \"row-03\", \"row-04\"]\n[rowkey]\nspec = \"id\"\n\
         [[column]]\nsource = \"v\"\ncell = \"d:v\"\ntimestamp = 1700000000000\n",
    )
    .unwrap();
    let mut csv = String::from("id,v\n");
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for i in 0..rows {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        csv.push_str(&format!(
            "row-{i:06},{x:016x}{:016x}{:016x}\n",
            !x,
            x.rotate_left(9)
        ));
    }
    let input = dir.join(format!("{name}.csv"));
    std::fs::write(&input, csv).unwrap();
    let local = dir.join(name).to_str().unwrap().to_string();
    let remote = server.url(&format!("tables/{name}"));
    for table in [local.as_str(), remote.as_str()] {
        let (s, i) = (schema.to_str().unwrap(), input.to_str().unwrap());
        run(
            server,
            &["import", "--schema", s, i, "--table", table, "--quiet"],
        );
    }
    (local, remote)
}

/// A ranged read of a store file whose answer is cut short in transfer is retried (every
/// second GET of a data object cut: the scan equals the local one); one cut every time fails
/// naming the object's URL.
#[test]
fn ranged_reads_cut_short_are_retried() {
    let Some(server) = S3Server::start("ranged_reads_cut_short_are_retried") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let (local, remote) = local_and_s3_table(&server, t.path(), "cut", 20_000);
    let scan = |endpoint: &str, table: &str| {
        hfkit(&["scan", table, "--format", "tsv", "--s3-endpoint", endpoint])
    };
    let want = scan(&server.endpoint(), &local);
    assert!(want.status.success());
    let cut = |every| {
        server.proxy(Fault {
            every,
            method: Some("GET"),
            path_contains: Some("/tables/cut/data/".into()),
            answer: FaultAnswer::Truncate,
        })
    };
    let proxy = cut(2);
    let got = scan(&proxy.endpoint(), &remote);
    assert!(got.status.success(), "{}", text(&got.stderr));
    assert_eq!(text(&got.stdout), text(&want.stdout));
    let cuts = proxy.failed.load(std::sync::atomic::Ordering::Relaxed);
    assert!(cuts > 0, "no answer was cut");

    let proxy = cut(1);
    let got = scan(&proxy.endpoint(), &remote);
    assert!(!got.status.success());
    let err = text(&got.stderr);
    assert!(err.contains(&format!("{remote}/data/")), "{err}");
    assert!(got.stdout.is_empty() || text(&got.stdout).lines().count() < 20_000);
}

/// A single HFile on object storage is read by the same ranged reads as a table's store
/// files: `hfile info|cells|verify|get` of an object print what they print of the same file
/// on local disk (less its name); an object that is not there fails naming it.
#[test]
fn single_hfiles_on_s3_read_as_local_ones() {
    let Some(server) = S3Server::start("single_hfiles_on_s3_read_as_local_ones") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let schema = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds/orders.toml");
    let input = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds/orders.csv");
    let local = dir.path().join("bulk");
    let local = local.to_str().unwrap();
    let remote = server.url("bulk");
    for out in [local, remote.as_str()] {
        let args = ["import", "--schema", schema, input, "--out", out];
        run(
            &server,
            &[&args[..], &["--timestamp", "1700000000000", "--quiet"]].concat(),
        );
    }
    // The same import twice: the same cells, in files of other names. Compare file by file
    // in name order (names sort by creation: the same order both times).
    let mut files = crate::common::files_under(&dir.path().join("bulk/o"));
    files.truncate(2);
    assert!(!files.is_empty());
    let store = hfkit::storage::Store::open(
        &hfkit::storage::Location::parse(&remote).unwrap(),
        &hfkit::storage::StorageConfig::with_endpoint(Some(server.endpoint())),
    )
    .unwrap();
    let mut objects: Vec<String> = store
        .list(&hfkit::storage::Location::parse(&format!("{remote}/o")).unwrap())
        .unwrap()
        .into_iter()
        .map(|o| o.location.to_string())
        .collect();
    objects.sort();
    for (file, object) in files.iter().zip(&objects) {
        let file = file.to_str().unwrap();
        let cells = run(&server, &["hfile", "cells", file]);
        assert_eq!(run(&server, &["hfile", "cells", object]), cells);
        let row = cells.split(' ').next().unwrap();
        assert_eq!(
            run(&server, &["hfile", "get", object, row, "--hex"]),
            run(&server, &["hfile", "get", file, row, "--hex"])
        );
        let info = |f: &str| {
            run(&server, &["hfile", "info", f, "--json"])
                .lines()
                .filter(|l| !l.contains("CREATE_TIME") && !l.contains("\"file\""))
                .map(String::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(info(object), info(file));
        let verified = run(&server, &["hfile", "verify", object]);
        assert!(verified.starts_with(&format!("{object}: OK")), "{verified}");
    }
    let missing = format!("{remote}/o/nope");
    let o = hfkit(&[
        "hfile",
        "info",
        &missing,
        "--s3-endpoint",
        &server.endpoint(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains(&missing), "{}", text(&o.stderr));
}
