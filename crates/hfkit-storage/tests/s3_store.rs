//! The storage operations against a real S3 API (moto on loopback, `hfkit-testkit::s3`), and
//! the same operations on the local filesystem.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};

use hfkit_storage::{Location, PutCondition, StorageConfig, StorageError, Store};
use hfkit_testkit::s3::S3Server;

fn store(server: &S3Server, url: &str) -> (Store, Location) {
    let loc = Location::parse(url).unwrap();
    let cfg = StorageConfig::with_endpoint(Some(server.endpoint()));
    (Store::open(&loc, &cfg).unwrap(), loc)
}

/// Put, read, ranged read, head, list and delete, on S3 and locally.
fn exercise(store: &Store, base: &Location) {
    let a = base.join("dir/a");
    store
        .put(&a, b"hello world".to_vec(), PutCondition::Overwrite)
        .unwrap();
    store
        .put(
            &base.join("dir/sub/b"),
            b"b".to_vec(),
            PutCondition::Overwrite,
        )
        .unwrap();
    assert_eq!(store.read(&a).unwrap(), b"hello world");
    assert_eq!(&store.read_range(&a, 6..11).unwrap()[..], b"world");
    assert_eq!(store.size(&a).unwrap(), 11);
    let mut s = String::new();
    store.reader(&a).unwrap().read_to_string(&mut s).unwrap();
    assert_eq!(s, "hello world");
    let names: Vec<String> = store
        .list(&base.join("dir"))
        .unwrap()
        .iter()
        .map(|i| i.location.relative_to(base).unwrap())
        .collect();
    assert_eq!(names, ["dir/a", "dir/sub/b"]);
    // Beyond the end: an error naming the object and the operation.
    let e = store.read_range(&a, 5..50).unwrap_err().to_string();
    assert!(
        e.contains(&a.to_string()) && e.contains("read range"),
        "{e}"
    );
    // Create-only loses on an existing object, wins on a new one.
    let e = store
        .put(&a, b"x".to_vec(), PutCondition::CreateOnly)
        .unwrap_err();
    assert!(matches!(e, StorageError::AlreadyExists { .. }), "{e}");
    assert_eq!(store.read(&a).unwrap(), b"hello world");
    store
        .put(&base.join("new"), b"n".to_vec(), PutCondition::CreateOnly)
        .unwrap();
    store.copy(&a, &base.join("copy")).unwrap();
    assert_eq!(store.read(&base.join("copy")).unwrap(), b"hello world");
    store.delete(&a).unwrap();
    store.delete(&a).unwrap();
    assert!(store.head(&a).unwrap().is_none());
    let e = store.read(&a).unwrap_err();
    assert!(
        e.is_not_found() && e.to_string().contains(&a.to_string()),
        "{e}"
    );
}

#[test]
fn s3_operations() {
    let Some(server) = S3Server::start("s3_operations") else {
        return;
    };
    let (store, base) = store(&server, &server.url("t"));
    exercise(&store, &base);
    assert!(store.stats().requests > 10);
}

#[test]
fn local_operations() {
    let dir = tempfile::tempdir().unwrap();
    let base = Location::Local(dir.path().to_path_buf());
    exercise(&Store::local(), &base);
}

#[test]
fn s3_if_match_takes_only_the_current_etag() {
    let Some(server) = S3Server::start("s3_if_match_takes_only_the_current_etag") else {
        return;
    };
    let (store, loc) = store(&server, &server.url("CURRENT"));
    let first = store
        .put(&loc, b"1".to_vec(), PutCondition::CreateOnly)
        .unwrap()
        .unwrap();
    let second = store
        .put(&loc, b"2".to_vec(), PutCondition::IfMatch(first.clone()))
        .unwrap()
        .unwrap();
    let e = store
        .put(&loc, b"3".to_vec(), PutCondition::IfMatch(first))
        .unwrap_err();
    assert!(e.is_conflict(), "{e}");
    assert_eq!(store.read(&loc).unwrap(), b"2");
    assert_eq!(store.head(&loc).unwrap().unwrap().e_tag, Some(second));
}

/// A multipart upload is invisible until completed; an aborted or dropped one leaves neither
/// an object nor an upload in progress.
#[test]
fn s3_multipart_upload_complete_and_abort() {
    let Some(server) = S3Server::start("s3_multipart_upload_complete_and_abort") else {
        return;
    };
    let (store, base) = store(&server, &server.url("up"));
    let data: Vec<u8> = (0..12 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    let big = base.join("big");
    let mut up = store.upload(&big, 5 * 1024 * 1024).unwrap();
    for chunk in data.chunks(100_000) {
        up.write_all(chunk).unwrap();
    }
    up.finish_data().unwrap();
    assert!(
        store.head(&big).unwrap().is_none(),
        "visible before completion"
    );
    assert_eq!(server.multipart_uploads(), ["up/big"]);
    up.complete().unwrap();
    assert_eq!(store.read(&big).unwrap(), data);
    assert_eq!(
        &store.read_range(&big, 7_000_000..7_000_010).unwrap()[..],
        &data[7_000_000..7_000_010]
    );

    let mut aborted = store.upload(&base.join("aborted"), 0).unwrap();
    aborted.write_all(&data[..6 * 1024 * 1024]).unwrap();
    aborted.abort().unwrap();
    let mut dropped = store.upload(&base.join("dropped"), 0).unwrap();
    dropped.write_all(b"x").unwrap();
    drop(dropped);
    let empty = store.upload(&base.join("empty"), 0).unwrap();
    empty.complete().unwrap();
    assert_eq!(store.read(&base.join("empty")).unwrap(), b"");
    let left: Vec<String> = store
        .list(&base)
        .unwrap()
        .iter()
        .map(|i| i.location.to_string())
        .collect();
    assert_eq!(
        left,
        [base.join("big").to_string(), base.join("empty").to_string()]
    );
    assert!(
        server.multipart_uploads().is_empty(),
        "{:?}",
        server.multipart_uploads()
    );
}

#[test]
fn s3_missing_bucket_and_bad_credentials_name_url_and_operation() {
    let Some(server) =
        S3Server::start("s3_missing_bucket_and_bad_credentials_name_url_and_operation")
    else {
        return;
    };
    let (store, loc) = store(&server, "s3://no-such-bucket/x");
    let e = store
        .put(&loc, b"x".to_vec(), PutCondition::Overwrite)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("s3://no-such-bucket/x") && e.contains("put"),
        "{e}"
    );
    let e = store.read(&loc).unwrap_err().to_string();
    assert!(
        e.contains("s3://no-such-bucket/x") && e.contains("read"),
        "{e}"
    );
    // Nothing listens here: retried with backoff, then an error naming the URL.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let cfg = StorageConfig {
        s3_endpoint: Some(format!("http://{dead}")),
        max_retries: 2,
        init_backoff: std::time::Duration::from_millis(10),
        ..StorageConfig::default()
    };
    let loc = Location::parse(&server.url("y")).unwrap();
    let e = Store::open(&loc, &cfg)
        .unwrap()
        .head(&loc)
        .unwrap_err()
        .to_string();
    assert!(e.contains(&server.url("y")) && e.contains("head"), "{e}");
    assert!(!e.contains("testing"), "an error shows a credential: {e}");
}

/// Uploads in progress are listed by prefix (a signed ListMultipartUploads) and aborted; an
/// upload already gone aborts without error; locally there are none.
#[test]
fn s3_pending_uploads_listed_and_aborted() {
    let Some(server) = S3Server::start("s3_pending_uploads_listed_and_aborted") else {
        return;
    };
    let (store, base) = store(&server, &server.url("p"));
    for name in ["a/x", "a/y", "b/z"] {
        let mut up = store.upload(&base.join(name), 5 << 20).unwrap();
        up.write_all(b"some bytes").unwrap();
        std::mem::forget(up); // as a killed writer: neither completed nor aborted
    }
    let pending = store.pending_uploads(&base.join("a")).unwrap();
    let keys: Vec<String> = pending
        .iter()
        .map(|u| u.location.relative_to(&base).unwrap())
        .collect();
    assert_eq!(keys, ["a/x", "a/y"]);
    for u in &pending {
        store.abort_pending(u).unwrap();
    }
    store.abort_pending(&pending[0]).unwrap();
    assert_eq!(server.multipart_uploads(), ["p/b/z"]);
    assert!(store.pending_uploads(&base.join("a")).unwrap().is_empty());
    let local = tempfile::tempdir().unwrap();
    let l = Location::Local(local.path().to_path_buf());
    assert!(Store::local().pending_uploads(&l).unwrap().is_empty());
}
