//! Object storage over TLS (`https://` endpoints, against moto serving a certificate signed by
//! an authority made for the test): hfkit's S3 client is rustls with the `ring` provider
//! (`hfkit-storage`'s Cargo.toml says why), so this is the one test of the whole HTTPS path:
//! the handshake, the check of the server's certificate against the roots `SSL_CERT_FILE`
//! names, and every kind of request a table makes. `formats/storage.md` §"Configuration".

use hfkit_testkit::s3::S3Server;

use crate::common::text;

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");

/// Runs hfkit against the server with `SSL_CERT_FILE` = `roots`.
fn run(server: &S3Server, roots: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(args)
        .args(["--s3-endpoint", &server.endpoint()])
        .env("SSL_CERT_FILE", roots)
        .env_remove("SSL_CERT_DIR")
        .output()
        .unwrap()
}

/// A seed imported into an `s3://` table over TLS reads back as the same import into a local
/// table, through a compaction and an export; a client that does not trust the server's
/// authority is refused at the handshake, by name, and writes nothing.
#[test]
fn s3_tables_over_tls_equal_local_and_untrusted_servers_are_refused() {
    let Some(server) = S3Server::start_tls("s3_tables_over_tls") else {
        return;
    };
    assert!(server.endpoint().starts_with("https://"));
    let ca = server.ca_file().unwrap();
    let t = tempfile::tempdir().unwrap();
    // Roots that do not hold the test's authority: an empty bundle would load no root at
    // all, so another authority's certificate stands in for the system's.
    let other = t.path().join("other.pem");
    let o = std::process::Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
        ])
        .args(["/CN=another authority", "-keyout"])
        .arg(t.path().join("other.key"))
        .arg("-out")
        .arg(&other)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));

    let schema = format!("{SEEDS}/users.toml");
    let input = format!("{SEEDS}/users.csv");
    let remote = server.url("tls/users");
    let untrusted = run(
        &server,
        &other,
        &[
            "import", "--schema", &schema, &input, "--table", &remote, "--quiet",
        ],
    );
    assert!(!untrusted.status.success(), "an untrusted server was used");
    let why = text(&untrusted.stderr);
    assert!(
        why.contains(&remote) && why.contains("invalid peer certificate"),
        "the refusal names the table and the certificate: {why}"
    );

    let local = t.path().join("users");
    let local = local.to_str().unwrap();
    for table in [local, remote.as_str()] {
        let o = run(
            &server,
            &ca,
            &[
                "import", "--schema", &schema, &input, "--table", table, "--quiet",
            ],
        );
        assert!(
            o.status.success(),
            "import into {table}: {}",
            text(&o.stderr)
        );
    }
    let read = |table: &str, args: &[&str]| {
        let mut all = args.to_vec();
        all.insert(1, table);
        let o = run(&server, &ca, &all);
        assert!(o.status.success(), "{all:?}: {}", text(&o.stderr));
        text(&o.stdout)
    };
    let scan = read(local, &["scan", "--format", "tsv"]);
    assert!(scan.lines().count() > 100, "{} cells", scan.lines().count());
    assert_eq!(read(&remote, &["scan", "--format", "tsv"]), scan);
    read(&remote, &["compact", "--major"]);
    assert_eq!(read(&remote, &["scan", "--format", "tsv"]), scan);
    let (a, b) = (t.path().join("a.csv"), t.path().join("b.csv"));
    read(
        local,
        &["export", "--format", "csv", "--to", a.to_str().unwrap()],
    );
    read(
        &remote,
        &["export", "--format", "csv", "--to", b.to_str().unwrap()],
    );
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let o = run(&server, &ca, &["table", "check", &remote]);
    assert!(o.status.success(), "check: {}", text(&o.stderr));
}
