//! Imports from and to object storage (`s3://`, against moto on loopback: `hfkit-testkit::s3`)
//! give exactly the cells of the same import on local files: inputs (CSV, TSV, gzip, zstd,
//! Parquet by ranged reads, globs) and bulk-load outputs (streamed multipart uploads,
//! published at the end, nothing left by a failed import). `formats/storage.md`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hfkit::format::reader::HFileReader;
use hfkit::storage::{Location, PutCondition, StorageConfig, Store};
use hfkit_testkit::s3::S3Server;

use crate::common::{files_under, hfkit, text};

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");

/// The seed designs: schema and input.
const DESIGNS: [(&str, &str); 4] = [
    ("users.toml", "users.csv"),
    ("orders.toml", "orders.csv"),
    ("events.toml", "events.csv"),
    ("sensors.toml", "sensors.tsv"),
];

pub fn store(server: &S3Server) -> Store {
    let loc = Location::parse(&server.url("")).unwrap();
    Store::open(&loc, &StorageConfig::with_endpoint(Some(server.endpoint()))).unwrap()
}

pub fn put(server: &S3Server, key: &str, data: Vec<u8>) -> String {
    let url = server.url(key);
    store(server)
        .put(
            &Location::parse(&url).unwrap(),
            data,
            PutCondition::Overwrite,
        )
        .unwrap();
    url
}

/// Every cell of every HFile below `dir` (index tables' too), with the directory it sits in
/// (family, or `.indexes/<table>/<family>`), as text; file names left out (they are random).
pub fn bulk_cells(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for p in files_under(dir) {
        let rel = p
            .parent()
            .unwrap()
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let r = HFileReader::open(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let mut s = r.scanner().unwrap();
        while let Some(c) = s.next().unwrap() {
            out.insert(format!(
                "{rel} {:?}/{:?}:{:?}/{}/{:?} = {:?}",
                c.row, c.family, c.qualifier, c.timestamp, c.cell_type, c.value
            ));
        }
    }
    out
}

/// `hfkit import --schema SCHEMA INPUT... --out OUT` with the server as endpoint (SCHEMA a
/// seed's file name).
pub fn import_output(
    server: &S3Server,
    schema: &str,
    inputs: &[&str],
    out: &str,
) -> std::process::Output {
    let schema = format!("{SEEDS}/{schema}");
    let endpoint = server.endpoint();
    let mut args = vec!["import", "--s3-endpoint", &endpoint, "--schema", &schema];
    args.extend(inputs);
    args.extend(["--out", out, "--quiet"]);
    hfkit(&args)
}

/// [`import_output`], which must succeed (else a panic with its stderr).
pub fn import(server: &S3Server, schema: &str, inputs: &[&str], out: &str) {
    let o = import_output(server, schema, inputs, out);
    assert!(
        o.status.success(),
        "{schema} {inputs:?}: {}",
        text(&o.stderr)
    );
}

fn local_import(server: &S3Server, schema: &str, input: &Path) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("bulk");
    import(
        server,
        schema,
        &[input.to_str().unwrap()],
        out.to_str().unwrap(),
    );
    (t, out)
}

/// Each seed design imported from its local file: schema, input, its path, and the output
/// directory (in the temporary directory returned with it).
fn local_imports(
    server: &S3Server,
) -> Vec<(
    &'static str,
    &'static str,
    PathBuf,
    tempfile::TempDir,
    PathBuf,
)> {
    DESIGNS
        .iter()
        .map(|&(schema, input)| {
            let local = Path::new(SEEDS).join(input);
            let (t, out) = local_import(server, schema, &local);
            (schema, input, local, t, out)
        })
        .collect()
}

/// Every seed design imported from `s3://` (plain, gzip, zstd, and a glob) gives exactly the
/// cells of the same import from the local file.
#[test]
fn seeds_from_s3_import_exactly_like_local() {
    let Some(server) = S3Server::start("seeds_from_s3_import_exactly_like_local") else {
        return;
    };
    for (schema, input, local, _t, expected) in local_imports(&server) {
        let expected = bulk_cells(&expected);
        assert!(expected.len() > 100, "{schema}: {} cells", expected.len());
        let data = std::fs::read(&local).unwrap();
        let plain = put(&server, &format!("in/{input}"), data.clone());
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, &data).unwrap();
        let gz = put(&server, &format!("in/{input}.gz"), gz.finish().unwrap());
        let zst = put(
            &server,
            &format!("in/{input}.zst"),
            zstd::encode_all(&data[..], 3).unwrap(),
        );
        let glob = server.url(&format!("in/{}*.gz", &input[..3]));
        for url in [plain, gz, zst, glob] {
            let t = tempfile::tempdir().unwrap();
            let out = t.path().join("bulk");
            import(&server, schema, &[&url], out.to_str().unwrap());
            assert!(
                bulk_cells(&out) == expected,
                "{schema} from {url}: cells differ"
            );
        }
    }
}

/// A Parquet input of several row groups on `s3://` (read by ranged requests, row group by
/// row group, only the mapped columns) gives the cells of the local Parquet file and of the
/// CSV it was made from.
#[test]
fn parquet_from_s3_imports_exactly_like_local() {
    let Some(server) = S3Server::start("parquet_from_s3_imports_exactly_like_local") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let csv = Path::new(SEEDS).join("users.csv");
    let parquet = t.path().join("users.parquet");
    write_parquet(&csv, &parquet, 100);
    let (_a, from_csv) = local_import(&server, "users.toml", &csv);
    let (_b, from_parquet) = local_import(&server, "users.toml", &parquet);
    let expected = bulk_cells(&from_csv);
    assert!(
        bulk_cells(&from_parquet) == expected,
        "local parquet differs from csv"
    );
    let url = put(
        &server,
        "in/users.parquet",
        std::fs::read(&parquet).unwrap(),
    );
    let out = t.path().join("from-s3");
    import(&server, "users.toml", &[&url], out.to_str().unwrap());
    assert!(bulk_cells(&out) == expected, "parquet from s3 differs");
}

/// A CSV file as Parquet: every column a string, `rows_per_group` rows per row group.
fn write_parquet(csv: &Path, out: &Path, rows_per_group: usize) {
    use arrow_array::{ArrayRef, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;
    let mut r = csv::Reader::from_path(csv).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let mut cols: Vec<Vec<Option<String>>> = vec![Vec::new(); header.len()];
    for rec in r.records() {
        let rec = rec.unwrap();
        for (i, c) in cols.iter_mut().enumerate() {
            let v = rec.get(i).unwrap_or("");
            c.push((!v.is_empty()).then(|| v.to_string()));
        }
    }
    let schema = Arc::new(Schema::new(
        header
            .iter()
            .map(|h| Field::new(h, DataType::Utf8, true))
            .collect::<Vec<_>>(),
    ));
    let arrays: Vec<ArrayRef> = cols
        .into_iter()
        .map(|c| Arc::new(StringArray::from(c)) as ArrayRef)
        .collect();
    let batch = RecordBatch::try_new(schema.clone(), arrays).unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows_per_group))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(out).unwrap(),
        schema,
        Some(props),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// Downloads every object below `url` into `dir`, keeping the relative names.
pub fn download(server: &S3Server, url: &str, dir: &Path) -> usize {
    let store = store(server);
    let base = Location::parse(url).unwrap();
    let objects = store.list(&base).unwrap();
    for o in &objects {
        let rel = o.location.relative_to(&base).unwrap();
        let to = dir.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        store.download(&o.location, &to).unwrap();
    }
    objects.len()
}

/// Every seed design imported to `--out s3://...` (index tables included) gives exactly the
/// objects and cells of the same import to a local directory, and leaves neither a multipart
/// upload in progress nor a staging directory.
#[test]
fn seeds_to_s3_equal_local() {
    let Some(server) = S3Server::start("seeds_to_s3_equal_local") else {
        return;
    };
    for (schema, _, local, _t, expected_dir) in local_imports(&server) {
        let t = tempfile::tempdir().unwrap();
        let temp = t.path().join("temp");
        std::fs::create_dir(&temp).unwrap();
        let url = server.url(&format!("out/{schema}"));
        let args = [
            "--temp-dir",
            temp.to_str().unwrap(),
            local.to_str().unwrap(),
        ];
        import(&server, schema, &args, &url);
        let got = t.path().join("got");
        let n = download(&server, &url, &got);
        let expected_files = count_files(&expected_dir);
        assert_eq!(n, expected_files, "{schema}: objects vs local files");
        assert!(
            bulk_cells(&got) == bulk_cells(&expected_dir),
            "{schema}: cells differ"
        );
        assert!(
            server.multipart_uploads().is_empty(),
            "{:?}",
            server.multipart_uploads()
        );
        assert_eq!(
            std::fs::read_dir(&temp).unwrap().count(),
            0,
            "staging left in --temp-dir"
        );
        // The destination now holds output: a second import there is refused, before it runs.
        let o = import_output(&server, schema, &[local.to_str().unwrap()], &url);
        assert!(!o.status.success());
        assert!(
            text(&o.stderr).contains("already holds"),
            "{}",
            text(&o.stderr)
        );
    }
}

/// An import that fails leaves nothing under its destination: bad input (before any upload),
/// and a file that cannot be read half-way through publishing (uploads started are aborted:
/// no object, no multipart upload left).
#[test]
fn failed_import_to_s3_leaves_nothing() {
    let Some(server) = S3Server::start("failed_import_to_s3_leaves_nothing") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let bad = t.path().join("bad.csv");
    let mut data = std::fs::read_to_string(Path::new(SEEDS).join("users.csv")).unwrap();
    data.push_str("1,2\n");
    std::fs::write(&bad, data).unwrap();
    let url = server.url("out/bad");
    let o = import_output(&server, "users.toml", &[bad.to_str().unwrap()], &url);
    assert!(!o.status.success(), "the bad record was not refused");
    assert_eq!(download(&server, &url, &t.path().join("got")), 0);

    // Publishing: two files upload (multipart, not completed), the third cannot be opened.
    let src = t.path().join("src");
    std::fs::create_dir_all(src.join("f")).unwrap();
    std::fs::write(src.join("f/a"), vec![1u8; 6 << 20]).unwrap();
    std::fs::write(src.join("f/b"), b"b").unwrap();
    std::os::unix::fs::symlink(t.path().join("gone"), src.join("f/c")).unwrap();
    // In-process: this is the only test of the binary configuring the shared storage.
    hfkit::storage::configure(StorageConfig::with_endpoint(Some(server.endpoint())));
    let dest = Location::parse(&server.url("out/publish")).unwrap();
    let e = hfkit::pipeline::import::remote_output::publish(&[(src.clone(), dest)], 5 << 20)
        .unwrap_err()
        .to_string();
    assert!(e.contains("f/c"), "{e}");
    assert_eq!(
        download(&server, &server.url("out"), &t.path().join("got2")),
        0
    );
    assert!(
        server.multipart_uploads().is_empty(),
        "{:?}",
        server.multipart_uploads()
    );
    // Without the bad file the same publish completes.
    std::fs::remove_file(src.join("f/c")).unwrap();
    let dest = Location::parse(&server.url("out/publish")).unwrap();
    let r = hfkit::pipeline::import::remote_output::publish(&[(src, dest)], 5 << 20).unwrap();
    assert_eq!(r.files, 2);
    assert_eq!(
        download(&server, &server.url("out"), &t.path().join("got3")),
        2
    );
}

/// Files below `dir`, recursively.
fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { count_files(&p) } else { 1 })
        .sum()
}

/// Bad locations and damaged objects: a clear error naming the URL (and the operation), no
/// panic, nothing written.
#[test]
fn s3_errors_name_the_url() {
    let Some(server) = S3Server::start("s3_errors_name_the_url") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    let out = out.to_str().unwrap();
    let fails = |o: std::process::Output, wants: &[&str]| {
        assert!(!o.status.success());
        let e = text(&o.stderr);
        assert!(!e.contains("panicked"), "{e}");
        for w in wants {
            assert!(e.contains(w), "wanted {w:?} in: {e}");
        }
    };
    let missing = server.url("in/missing.csv");
    fails(
        import_output(&server, "users.toml", &[&missing], out),
        &[&missing],
    );
    fails(
        import_output(
            &server,
            "users.toml",
            &["s3://no-such-bucket-x/in.csv"],
            out,
        ),
        &["s3://no-such-bucket-x/in.csv", "list", "NoSuchBucket"],
    );
    // A Parquet object cut short: its footer is gone.
    let parquet = t.path().join("users.parquet");
    write_parquet(&Path::new(SEEDS).join("users.csv"), &parquet, 100);
    let bytes = std::fs::read(&parquet).unwrap();
    let cut = put(&server, "in/cut.parquet", bytes[..bytes.len() / 2].to_vec());
    fails(import_output(&server, "users.toml", &[&cut], out), &[&cut]);
    assert!(!Path::new(out).exists(), "a failed import left its output");
    // No table there.
    let endpoint = server.endpoint();
    let nothing = server.url("tables/none");
    fails(
        hfkit(&["scan", &nothing, "--s3-endpoint", &endpoint]),
        &[&nothing, "no table there"],
    );
    // A second create of one table.
    let schema = format!("{SEEDS}/users.toml");
    let table = server.url("tables/once");
    let create = || {
        hfkit(&[
            "table",
            "create",
            &table,
            "--schema",
            &schema,
            "--s3-endpoint",
            &endpoint,
        ])
    };
    assert!(create().status.success());
    fails(create(), &[&table, "already exists"]);
    // A destination on object storage where only local ones work yet: refused, not taken
    // for a local path.
    let to = server.url("exports/x.csv");
    fails(
        hfkit(&[
            "export",
            &table,
            "--format",
            "csv",
            "--to",
            &to,
            "--s3-endpoint",
            &endpoint,
        ]),
        &[&to, "takes a local path here"],
    );
    assert!(!Path::new("s3:").exists());
    // --stats says what the read cost in requests and bytes.
    let o = hfkit(&["scan", &table, "--stats", "--s3-endpoint", &endpoint]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("object storage: "),
        "{}",
        text(&o.stderr)
    );
}

/// Throttling (503 SlowDown on every third request) is retried with backoff: the import from
/// and to `s3://` succeeds with the cells of a local import. A store that throttles everything
/// makes the import fail, naming the URL and the operation, after its retries.
#[test]
fn throttled_requests_are_retried() {
    let Some(server) = S3Server::start("throttled_requests_are_retried") else {
        return;
    };
    let local = Path::new(SEEDS).join("orders.csv");
    let (_t, expected) = local_import(&server, "orders.toml", &local);
    let input = put(&server, "in/orders.csv", std::fs::read(&local).unwrap());
    let proxy = server.fault_proxy(3);
    let url = server.url("out/throttled");
    let schema = format!("{SEEDS}/orders.toml");
    let o = hfkit(&[
        "import",
        "--s3-endpoint",
        &proxy.endpoint(),
        "--schema",
        &schema,
        &input,
        "--out",
        &url,
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        proxy.failed.load(std::sync::atomic::Ordering::Relaxed) > 3,
        "no request was throttled"
    );
    let t = tempfile::tempdir().unwrap();
    download(&server, &url, t.path());
    assert!(
        bulk_cells(t.path()) == bulk_cells(&expected),
        "cells differ"
    );

    let down = server.fault_proxy(1);
    let o = hfkit(&[
        "import",
        "--s3-endpoint",
        &down.endpoint(),
        "--schema",
        &schema,
        &input,
        "--out",
        t.path().join("x").to_str().unwrap(),
        "--quiet",
    ]);
    assert!(!o.status.success());
    let e = text(&o.stderr);
    assert!(
        e.contains(&input) && e.contains("head") && e.contains("503"),
        "{e}"
    );
    assert!(
        down.failed.load(std::sync::atomic::Ordering::Relaxed) > 1,
        "not retried"
    );
}

/// An object's key is the name it was given, whatever its characters (`[`, `%`, `~`, space):
/// listed, it is named by the same URL, which reads and deletes it.
#[test]
fn object_keys_are_the_names_given() {
    let Some(server) = S3Server::start("object_keys_are_the_names_given") else {
        return;
    };
    let s = store(&server);
    let names = ["keys/t[1]/a b", "keys/100%/x~y", "keys/{q}#r|s"];
    for (i, name) in names.iter().enumerate() {
        put(&server, name, vec![i as u8; 3]);
    }
    let listed: Vec<String> = s
        .list(&Location::parse(&server.url("keys")).unwrap())
        .unwrap()
        .into_iter()
        .map(|o| o.location.to_string())
        .collect();
    let mut want: Vec<String> = names.iter().map(|n| server.url(n)).collect();
    want.sort();
    assert_eq!(listed, want);
    for (i, url) in names.iter().map(|n| server.url(n)).enumerate() {
        let loc = Location::parse(&url).unwrap();
        assert_eq!(s.read(&loc).unwrap(), vec![i as u8; 3], "{url}");
        s.delete(&loc).unwrap();
    }
    let left = s
        .list(&Location::parse(&server.url("keys")).unwrap())
        .unwrap();
    assert!(left.is_empty(), "{left:?}");
}
