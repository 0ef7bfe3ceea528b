//! Bad input and failing requests on object storage (`s3://`, moto on loopback, faults
//! injected by `hfkit-testkit::s3`'s proxy): wrong credentials (moto checking signatures), a
//! denied request (403), failing requests (500, retried with backoff), objects cut short in
//! transfer (a CSV input, an HFile of a bulk-load directory). Each gives a clear error naming
//! the URL and the operation, and leaves nothing half-committed. `formats/storage.md`.

use std::path::Path;

use hfkit::storage::{Location, Store};
use hfkit_testkit::s3::{Fault, FaultAnswer, S3Server};

use crate::common::{hfkit, text};

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");

/// A failed command's stderr, checked: no panic, and each of `wants` in it.
fn failed(o: &std::process::Output, wants: &[&str]) -> String {
    assert!(!o.status.success(), "succeeded: {}", text(&o.stdout));
    let e = text(&o.stderr);
    assert!(!e.contains("panicked"), "{e}");
    for w in wants {
        assert!(e.contains(w), "wanted {w:?} in: {e}");
    }
    e
}

/// Runs hfkit against `endpoint`.
fn at(endpoint: &str, args: &[&str]) -> std::process::Output {
    let mut all = args.to_vec();
    all.extend(["--s3-endpoint", endpoint]);
    hfkit(&all)
}

/// What a table on the server is made of: its manifests, data files and upload journals, and
/// the multipart uploads in progress under it.
fn table_objects(server: &S3Server, store: &Store, prefix: &str) -> (Vec<String>, usize) {
    let base = Location::parse(&server.url(prefix)).unwrap();
    let objects = store
        .list(&base)
        .unwrap()
        .into_iter()
        .map(|o| o.location.relative_to(&base).unwrap())
        .filter(|r| r != "CURRENT")
        .collect();
    let uploads = server
        .multipart_uploads()
        .iter()
        .filter(|k| k.starts_with(prefix))
        .count();
    (objects, uploads)
}

/// Wrong credentials (moto checking them: the key is unknown to it): every command fails at
/// its first request, naming the URL, the operation and the 403, and no error shows the
/// secret.
#[test]
fn wrong_credentials_are_refused_naming_url_and_operation() {
    let Some(server) = S3Server::start_checking_credentials(
        "wrong_credentials_are_refused_naming_url_and_operation",
    ) else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    let input = server.url("in/users.csv");
    let table = server.url("tables/t");
    let schema = format!("{SEEDS}/users.toml");
    let secret = "wrong-secret-5f0e9a";
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        let endpoint = server.endpoint();
        all.extend(["--s3-endpoint", &endpoint]);
        std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"))
            .args(&all)
            .env("AWS_ACCESS_KEY_ID", "AKIAWRONGKEY0000")
            .env("AWS_SECRET_ACCESS_KEY", secret)
            .output()
            .unwrap()
    };
    let o = run(&[
        "import",
        "--schema",
        &schema,
        &input,
        "--out",
        out.to_str().unwrap(),
    ]);
    let e = failed(&o, &[&input, "403"]);
    assert!(!e.contains(secret), "an error shows the secret: {e}");
    assert!(!out.exists(), "a failed import left its output");
    for args in [
        vec!["table", "create", &table, "--schema", &schema],
        vec!["scan", &table],
    ] {
        let e = failed(&run(&args), &[&table, "403"]);
        assert!(!e.contains(secret), "an error shows the secret: {e}");
    }
}

/// No credentials anywhere (no AWS variables, no ~/.aws files, the instance metadata service
/// pointed at a closed loopback port): the error says that no AWS credentials were found and
/// where they were looked for; an error answer of the store is shown as its code and message,
/// never as its raw XML.
#[test]
fn missing_credentials_and_error_answers_are_said_plainly() {
    let Some(server) = S3Server::start("missing_credentials_and_error_answers_are_said_plainly")
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port(); // the listener is dropped: nothing answers there
    let table = server.url("tables/none");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"));
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("AWS_")) {
        cmd.env_remove(k);
    }
    let o = cmd
        .args(["scan", &table, "--s3-endpoint", &server.endpoint()])
        .env("HOME", home.path())
        .env(
            "AWS_METADATA_ENDPOINT",
            format!("http://127.0.0.1:{closed}"),
        )
        .output()
        .unwrap();
    let e = failed(
        &o,
        &[
            &table,
            "no AWS credentials found",
            "AWS_ACCESS_KEY_ID",
            "~/.aws/credentials",
        ],
    );
    assert!(!e.contains("<?xml"), "{e}");
    // A bucket that does not exist: S3's NoSuchBucket answer, by code and message.
    let missing = "s3://no-such-bucket-here/t";
    let o = at(&server.endpoint(), &["scan", missing]);
    let e = failed(
        &o,
        &[
            missing,
            "404",
            "NoSuchBucket: The specified bucket does not exist",
        ],
    );
    assert!(!e.contains("<?xml") && !e.contains("<Error>"), "{e}");
}

/// An s3:// table with one load, the local bulk-load directory of a second load, and a store.
fn table_and_bulk(server: &S3Server, dir: &Path, table: &str) -> (String, String, Store) {
    let (schema, input, bulk) = crate::s3_table::orders_bulk(server, dir);
    let url = server.url(table);
    let o = at(
        &server.endpoint(),
        &[
            "import", "--schema", &schema, &input, "--table", &url, "--quiet",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    (url, bulk, crate::s3_io::store(server))
}

/// A denied request (403 AccessDenied on the commit point, the create of the next manifest
/// version): the attach fails at once (a 403 is not retried), naming the manifest's URL, the
/// operation and the answer; the table reads as before, with the version before. The files
/// the attach uploaded are garbage, which the next writer removes.
#[test]
fn denied_commit_leaves_s3_table_as_it_was() {
    let Some(server) = S3Server::start("denied_commit_leaves_s3_table_as_it_was") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let (url, bulk, store) = table_and_bulk(&server, t.path(), "tables/denied");
    let scan = || {
        let o = at(
            &server.endpoint(),
            &["scan", &url, "--format", "tsv", "--versions", "5"],
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let before = (
        scan(),
        table_objects(&server, &store, "tables/denied/manifests"),
    );
    let proxy = server.proxy(Fault {
        every: 1,
        method: Some("PUT"),
        path_contains: Some("/manifests/manifest-".into()),
        answer: FaultAnswer::Status(403, "AccessDenied"),
    });
    let o = at(&proxy.endpoint(), &["attach", &url, &bulk]);
    failed(
        &o,
        &[
            &format!("{url}/manifests/manifest-"),
            "put",
            "403",
            "AccessDenied",
        ],
    );
    assert_eq!(
        proxy.failed.load(std::sync::atomic::Ordering::Relaxed),
        1,
        "a 403 was retried"
    );
    let after = (
        scan(),
        table_objects(&server, &store, "tables/denied/manifests"),
    );
    assert!(after == before, "a denied attach changed the table");
    assert_eq!(
        table_objects(&server, &store, "tables/denied/").1,
        0,
        "uploads left"
    );
    // The next writer (past the grace period) removes what the denied one uploaded.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(["attach", &url, &bulk, "--s3-endpoint", &server.endpoint()])
        .env("HFKIT_S3_GC_GRACE_SECONDS", "0")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let d = at(&server.endpoint(), &["table", "describe", &url, "--json"]);
    let m: serde_json::Value = serde_json::from_slice(&d.stdout).unwrap();
    let (objects, _) = table_objects(&server, &store, "tables/denied/data");
    assert_eq!(
        objects.len(),
        m["files"].as_array().unwrap().len(),
        "garbage left"
    );
}

/// Failing requests (500 InternalError on every second write) are retried with backoff: the
/// attach succeeds and the table reads as a local one with the same loads.
#[test]
fn failing_requests_are_retried() {
    let Some(server) = S3Server::start("failing_requests_are_retried") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let (url, bulk, _) = table_and_bulk(&server, t.path(), "tables/flaky");
    let proxy = server.proxy(Fault {
        every: 2,
        method: Some("PUT"),
        path_contains: None,
        answer: FaultAnswer::Status(500, "InternalError"),
    });
    let o = at(&proxy.endpoint(), &["attach", &url, &bulk]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        proxy.failed.load(std::sync::atomic::Ordering::Relaxed) > 3,
        "nothing failed"
    );
    let local = t.path().join("local");
    let local = local.to_str().unwrap();
    let schema = format!("{SEEDS}/orders.toml");
    let input = format!("{SEEDS}/orders.csv");
    for args in [
        vec![
            "import", "--schema", &schema, &input, "--table", local, "--quiet",
        ],
        vec!["attach", local, &bulk],
    ] {
        assert!(hfkit(&args).status.success());
    }
    let scan = |table: &str| {
        let o = at(
            &server.endpoint(),
            &["scan", table, "--format", "tsv", "--versions", "5"],
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    assert!(
        scan(local) == scan(&url),
        "the retried attach reads differently"
    );
}

/// Objects cut short in transfer (the answer ends before its Content-Length, every time): a
/// CSV input of an import, and an HFile of a bulk-load directory attached to a table. Each
/// fails naming the object's URL and the read; the import leaves no output, the table is as
/// it was.
#[test]
fn objects_cut_short_fail_naming_url_and_leave_nothing() {
    let Some(server) = S3Server::start("objects_cut_short_fail_naming_url_and_leave_nothing")
    else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let csv = crate::s3_io::put(
        &server,
        "in/orders.csv",
        std::fs::read(format!("{SEEDS}/orders.csv")).unwrap(),
    );
    let cut = |path: &str| {
        server.proxy(Fault {
            every: 1,
            method: Some("GET"),
            path_contains: Some(path.into()),
            answer: FaultAnswer::Truncate,
        })
    };
    let proxy = cut("/in/orders.csv");
    let out = t.path().join("out");
    let schema = format!("{SEEDS}/orders.toml");
    let o = at(
        &proxy.endpoint(),
        &[
            "import",
            "--schema",
            &schema,
            &csv,
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ],
    );
    failed(&o, &[&csv, "read"]);
    assert!(!out.exists(), "a failed import left its output");

    let (url, bulk, store) = table_and_bulk(&server, t.path(), "tables/cut");
    let bulk_url = server.url("bulk/cut");
    let o = at(
        &server.endpoint(),
        &[
            "import", "--schema", &schema, &csv, "--out", &bulk_url, "--quiet",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    drop(bulk);
    let before = table_objects(&server, &store, "tables/cut/");
    let proxy = cut("/bulk/cut/");
    let o = at(&proxy.endpoint(), &["attach", &url, &bulk_url]);
    failed(&o, &[&bulk_url, "read"]);
    assert!(
        table_objects(&server, &store, "tables/cut/") == before,
        "a failed attach changed the table's objects"
    );
    // An HFile stored cut short: its verification fails, naming its URL.
    let bulk_base = Location::parse(&bulk_url).unwrap();
    let first = store.list(&bulk_base).unwrap().remove(0);
    let bytes = store.read(&first.location).unwrap();
    let short = crate::s3_io::put(
        &server,
        &format!(
            "bulk/short/{}",
            first.location.relative_to(&bulk_base).unwrap()
        ),
        bytes[..bytes.len() / 2].to_vec(),
    );
    let o = at(
        &server.endpoint(),
        &["attach", &url, &server.url("bulk/short")],
    );
    failed(&o, &[&short]);
    assert!(
        table_objects(&server, &store, "tables/cut/") == before,
        "a failed attach changed the table's objects"
    );
}
