//! Issue #6, "Round trip": import the seed designs into a table A, export one record per row
//! key to CSV and to Parquet, import each into new tables B and C with the same schema — full
//! scans of A, B and C are equal cell for cell. Also: the newest version is what is exported,
//! awkward bytes survive CSV quoting, mappings that cannot be inverted and rows that do not fit
//! their mapping are errors naming the term, row and field, and the command line.

use std::path::{Path, PathBuf};

use arrow_schema::DataType;
use hfkit::pipeline::export::cells::ExportFormat;
use hfkit::pipeline::export::{export_rows, RowExportReport};
use hfkit::pipeline::import::{run_import, ImportOptions, InputFormat};
use hfkit::pipeline::source::CsvOptions;
use hfkit::read::ReadOptions;
use hfkit::table::directory::Table;
use hfkit::table::manifest::FamilyEntry;
use hfkit::table::read::TableReader;
use hfkit::table::{ParsedSchema, TableSchema};

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");
/// "Now" for TTL: the seeds' timestamps start at 1_700_000_000_000; sensor readings and logins
/// expire after ten years.
const NOW: i64 = 1_700_000_000_000 + 100_000_000;

/// A scratch directory, on tmpfs when there is one.
fn tmpdir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().unwrap()
}

type Scan = Vec<(Vec<u8>, Vec<u8>, Vec<u8>, i64, Vec<u8>)>;

/// A full scan: every family, the newest version of each column, at NOW.
fn scan(t: &Table) -> Scan {
    let r = TableReader::open(t).unwrap();
    let opts = ReadOptions {
        now_ms: NOW,
        ..ReadOptions::default()
    };
    let mut s = r.scan(&opts).unwrap();
    let mut out = Vec::new();
    while let Some(row) = s.next_row().unwrap() {
        for c in row.cells {
            out.push((c.row, c.family, c.qualifier, c.timestamp, c.value));
        }
    }
    out
}

fn rows_of(s: &Scan) -> usize {
    let mut rows: Vec<&[u8]> = s.iter().map(|c| c.0.as_slice()).collect();
    rows.dedup();
    rows.len()
}

/// Asserts equal scans, showing the first difference.
fn same(a: &Scan, b: &Scan, what: &str) {
    if a != b {
        let i = a
            .iter()
            .zip(b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len()));
        panic!(
            "{what}: {} vs {} cells; first difference at {i}: {:?} vs {:?}",
            a.len(),
            b.len(),
            a.get(i),
            b.get(i)
        );
    }
}

fn schema(path: &Path) -> ParsedSchema {
    TableSchema::from_file(path).unwrap()
}

fn create(dir: &Path, s: &ParsedSchema) -> Table {
    let regions = s.table.splits.regions(None).unwrap();
    let families = s
        .table
        .families
        .iter()
        .map(FamilyEntry::from_schema)
        .collect();
    Table::create(dir, &s.table.full_name(), families, regions.split_keys()).unwrap()
}

/// Imports `input` with schema `s` and attaches the result to `t`.
fn import(t: &Table, s: &ParsedSchema, input: &Path, format: InputFormat) {
    let bulk = t.dir().with_extension(format!("bulk{}", rand_suffix()));
    let mut opts = ImportOptions::new(vec![input.to_path_buf()], format, bulk.clone());
    opts.import_time = 1_600_000_000_000;
    opts.memory_budget = 64 << 20;
    // Index tables (users.toml has one) are not what this file tests: written aside, removed.
    let index_dirs: Vec<PathBuf> = (0..s.mapping.indexes.len())
        .map(|i| bulk.with_extension(format!("index{i}")))
        .collect();
    opts.index_out = Some(index_dirs.clone());
    run_import(&s.table, &s.mapping, opts)
        .unwrap_or_else(|e| panic!("import of {}: {e}", input.display()));
    t.attach(&bulk).unwrap();
    std::fs::remove_dir_all(&bulk).unwrap();
    for d in index_dirs {
        let _ = std::fs::remove_dir_all(d);
    }
}

fn rand_suffix() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed).to_string()
}

fn csv_format(delimiter: u8) -> InputFormat {
    InputFormat::Csv(CsvOptions {
        delimiter,
        ..CsvOptions::default()
    })
}

/// Exports `a` as rows in both formats, imports each into a new table; returns the reports
/// after checking that both tables scan exactly as `a`.
fn round_trip(tmp: &Path, a: &Table, s: &ParsedSchema, name: &str) -> [RowExportReport; 2] {
    let want = scan(a);
    assert!(!want.is_empty(), "{name}: A is empty");
    let mut reports = Vec::new();
    for (format, ext, input) in [
        (ExportFormat::Csv, "csv", csv_format(b',')),
        (ExportFormat::Parquet, "parquet", InputFormat::Parquet),
    ] {
        let file = tmp.join(format!("{name}-rows.{ext}"));
        let r = export_rows(
            a,
            &s.mapping,
            format,
            &file,
            None,
            NOW,
            &Default::default(),
            3,
        )
        .unwrap_or_else(|e| panic!("{name} {ext}: {e}"));
        // The regions' parts are joined in region order: one thread writes the same file.
        let one = tmp.join(format!("{name}-rows-1.{ext}"));
        let r1 = export_rows(
            a,
            &s.mapping,
            format,
            &one,
            None,
            NOW,
            &Default::default(),
            1,
        )
        .unwrap_or_else(|e| panic!("{name} {ext}, one thread: {e}"));
        assert_eq!(r1.counts, r.counts, "{name} {ext}");
        assert!(
            std::fs::read(&one).unwrap() == std::fs::read(&file).unwrap(),
            "{name} {ext}: one thread wrote another file than three"
        );
        assert_eq!(r.counts.rows as usize, rows_of(&want), "{name} {ext}");
        assert_eq!(r.counts.cells as usize, want.len(), "{name} {ext}");
        assert_eq!(r.counts.unmapped_cells, 0);
        let b = create(&tmp.join(format!("{name}-{ext}")), s);
        import(&b, s, &file, input);
        same(
            &scan(&b),
            &want,
            &format!("{name}: A vs the import of its {ext} export"),
        );
        reports.push(r);
    }
    let [c, p]: [RowExportReport; 2] = reports.try_into().unwrap();
    [c, p]
}

/// Imports a seed design into a new table A.
fn seed(tmp: &Path, name: &str, input: &str) -> (Table, ParsedSchema) {
    let s = schema(&Path::new(SEEDS).join(format!("{name}.toml")));
    let a = create(&tmp.join(format!("{name}-a")), &s);
    let delimiter = if input.ends_with(".tsv") { b'\t' } else { b',' };
    import(&a, &s, &Path::new(SEEDS).join(input), csv_format(delimiter));
    (a, s)
}

fn parquet_types(path: &Path) -> Vec<(String, DataType)> {
    let f = std::fs::File::open(path).unwrap();
    let b = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    b.schema()
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect()
}

#[test]
fn seed_designs_round_trip_through_row_exports() {
    let tmp = tmpdir();
    let t = tmp.path();

    // users: reverse(pad(user_id, 10)); three families; int64 values; a field that is both a value and
    // its own column's timestamp (last_login); empty cities (no cell, an empty field).
    let (a, s) = seed(t, "users", "users.csv");
    let [csv, pq] = round_trip(t, &a, &s, "users");
    assert_eq!(csv.counts.rows, 1200);
    assert_eq!(csv.counts.untimed_cells, 0);
    let text = std::fs::read_to_string(&csv.path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("user_id,name,email,city,score,last_login")
    );
    assert!(text.contains("\n1,user 1,u1@example.com,,114,1700026855092\n"));
    assert_eq!(
        parquet_types(&pq.path),
        [
            ("user_id".to_string(), DataType::Utf8),
            ("name".into(), DataType::Utf8),
            ("email".into(), DataType::Utf8),
            ("city".into(), DataType::Utf8),
            ("score".into(), DataType::Int64),
            ("last_login".into(), DataType::Int64),
        ]
    );

    // orders: user_id + "_" + reverse_ts(order_ts) + "_" + pad(order_id, 10); order_ts is in
    // the key and the timestamp of both columns.
    let (a, s) = seed(t, "orders", "orders.csv");
    let [csv, pq] = round_trip(t, &a, &s, "orders");
    assert_eq!(csv.counts.rows, 2000);
    let text = std::fs::read_to_string(&csv.path).unwrap();
    assert_eq!(
        text.lines().next(),
        Some("user_id,order_ts,order_id,amount,status")
    );
    assert_eq!(
        parquet_types(&pq.path),
        [
            ("user_id".to_string(), DataType::Utf8),
            ("order_ts".into(), DataType::Int64),
            ("order_id".into(), DataType::Utf8),
            ("amount".into(), DataType::Int64),
            ("status".into(), DataType::Utf8),
        ]
    );

    // sensors (TSV in, CSV out): device + "_" + reverse_ts(ts); doubles; a TTL.
    let (a, s) = seed(t, "sensors", "sensors.tsv");
    let [_, pq] = round_trip(t, &a, &s, "sensors");
    assert_eq!(pq.counts.rows, 3000);
    assert_eq!(
        parquet_types(&pq.path)[2],
        ("temp".to_string(), DataType::Float64)
    );

    // events: salt(100, event_id) + "_" + pad(event_id, 8): the salt is checked, not inverted.
    let (a, s) = seed(t, "events", "events.csv");
    let [csv, _] = round_trip(t, &a, &s, "events");
    assert_eq!(csv.counts.rows, 4000);
    let text = std::fs::read_to_string(&csv.path).unwrap();
    assert_eq!(text.lines().next(), Some("event_id,kind,payload"));
}

#[test]
fn the_newest_version_is_exported() {
    let tmp = tmpdir();
    let t = tmp.path();
    let (a, s) = seed(t, "users", "users.csv");
    a.snapshot_create("before").unwrap();
    let before = scan(&a);
    // A later import of some users: new values at the same (fixed) timestamps win over the
    // old ones; a new login is a newer version of h:login, the old one stays as a version.
    let later = t.join("later.csv");
    std::fs::write(
        &later,
        "user_id,name,email,city,score,last_login\n\
         5,renamed,u5@example.org,Quito,999,1701500000000\n\
         77,user 77,u77@example.com,Oslo,-3,1701600000000\n",
    )
    .unwrap();
    import(&a, &s, &later, csv_format(b','));
    let latest = scan(&a);
    assert!(latest.contains(&(
        b"5000000000".to_vec(),
        b"i".to_vec(),
        b"name".to_vec(),
        1_700_000_000_000,
        b"renamed".to_vec()
    )));
    let [csv, _] = round_trip(t, &a, &s, "users-later");
    let text = std::fs::read_to_string(&csv.path).unwrap();
    assert!(text.contains("\n5,renamed,u5@example.org,Quito,999,1701500000000\n"));
    assert!(text.contains("\n77,user 77,u77@example.com,Oslo,-3,1701600000000\n"));

    // A snapshot exports as it was.
    let file = t.join("before.parquet");
    export_rows(
        &a,
        &s.mapping,
        ExportFormat::Parquet,
        &file,
        Some("before"),
        NOW,
        &Default::default(),
        2,
    )
    .unwrap();
    let b = create(&t.join("users-before"), &s);
    import(&b, &s, &file, InputFormat::Parquet);
    same(&scan(&b), &before, "the snapshot's export");
}

const NOTES: &str = r#"
[table]
name = "notes"

[[family]]
name = "d"

[rowkey]
spec = 'reverse_domain(host) + "/" + id'

[[column]]
source = "note"
cell = "d:note"
timestamp = "ts"

[[column]]
source = "weight"
cell = "d:w"
type = "double"
timestamp = "ts"
"#;

#[test]
fn awkward_bytes_survive_csv_quoting() {
    let tmp = tmpdir();
    let t = tmp.path();
    let s = TableSchema::from_toml_str(NOTES, "notes.toml", None).unwrap();
    let input = t.join("notes.csv");
    std::fs::write(
        &input,
        "host,id,note,weight,ts\n\
         www.example.com,1,\"comma, \"\"quote\"\" and\nnewline\",1e300,5\n\
         a..b.,2/3,é ü,-0,6\n\
         x.org,,tab\there,,7\n",
    )
    .unwrap();
    let a = create(&t.join("notes-a"), &s);
    import(&a, &s, &input, csv_format(b','));
    let [csv, pq] = round_trip(t, &a, &s, "notes");
    assert_eq!(csv.counts.rows, 3);
    assert_eq!(
        parquet_types(&pq.path),
        [
            ("host".to_string(), DataType::Utf8),
            ("id".into(), DataType::Utf8),
            ("note".into(), DataType::Utf8),
            ("ts".into(), DataType::Int64),
            ("weight".into(), DataType::Float64),
        ]
    );
}

#[test]
fn mappings_that_cannot_be_inverted_are_refused_before_writing() {
    let tmp = tmpdir();
    let t = tmp.path();
    let text = r#"
[table]
name = "daily"

[[family]]
name = "d"

[rowkey]
spec = 'bucket(ts, day) + "_" + id'

[[column]]
source = "v"
cell = "d:v"
timestamp = 1
"#;
    let s = TableSchema::from_toml_str(text, "daily.toml", None).unwrap();
    let a = create(&t.join("daily"), &s);
    let input = t.join("daily.csv");
    std::fs::write(&input, "ts,id,v\n1700000000000,a,1\n").unwrap();
    import(&a, &s, &input, csv_format(b','));
    let dest = t.join("daily.csv.out");
    let e = export_rows(
        &a,
        &s.mapping,
        ExportFormat::Csv,
        &dest,
        None,
        NOW,
        &Default::default(),
        2,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "rowkey spec: bucket(ts, day): cannot be inverted: field 'ts' appears nowhere else (in \
         no invertible part of the row key, and no [[column]] holds it), so it cannot be \
         recovered"
    );
    assert!(!dest.exists());

    // With ts as the column's timestamp, it is recovered from the cells and bucket is checked.
    let fixed = text.replace("timestamp = 1\n", "timestamp = \"ts\"\n");
    let s2 = TableSchema::from_toml_str(&fixed, "daily.toml", None).unwrap();
    let b = create(&t.join("daily2"), &s2);
    import(&b, &s2, &input, csv_format(b','));
    round_trip(t, &b, &s2, "daily");

    // Two variable-width fields with nothing between them.
    let adjacent = text.replace("bucket(ts, day) + \"_\" + id", "id + ts");
    let s3 = TableSchema::from_toml_str(&adjacent, "daily.toml", None).unwrap();
    let e = export_rows(
        &a,
        &s3.mapping,
        ExportFormat::Parquet,
        &dest,
        None,
        NOW,
        &Default::default(),
        2,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with(
            "rowkey spec: field 'id': cannot be inverted: its width varies and field 'ts' \
             follows it without a separator"
        ),
        "{e}"
    );
    // And a family the table does not have.
    let other = text
        .replace(
            "[[family]]\nname = \"d\"\n",
            "[[family]]\nname = \"d\"\n\n[[family]]\nname = \"x\"\n",
        )
        .replace("cell = \"d:v\"", "cell = \"x:v\"");
    let s4 = TableSchema::from_toml_str(&other, "daily.toml", None).unwrap();
    let e = export_rows(
        &a,
        &s4.mapping,
        ExportFormat::Csv,
        &dest,
        None,
        NOW,
        &Default::default(),
        2,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "column 'v' maps to family 'x', which the table does not have (families: d)"
    );
    assert!(!dest.exists());
}

#[test]
fn rows_that_do_not_fit_their_mapping_name_row_and_field() {
    let tmp = tmpdir();
    let t = tmp.path();
    let base = r#"
[table]
name = "kv"

[[family]]
name = "d"

[rowkey]
spec = 'id'

[[column]]
source = "SOURCE"
cell = "d:id"
timestamp = 10

[[column]]
source = "n"
cell = "d:n"
type = "int64"
timestamp = 10
"#;
    let s = TableSchema::from_toml_str(&base.replace("SOURCE", "id"), "kv.toml", None).unwrap();
    let a = create(&t.join("kv"), &s);
    let input = t.join("kv.csv");
    std::fs::write(&input, "id,n\nk1,1\nk2,2\n").unwrap();
    import(&a, &s, &input, csv_format(b','));
    round_trip(t, &a, &s, "kv");

    // Another load writes d:id of row k2 from a different field: the key says k2, the cell
    // says zz.
    let other = TableSchema::from_toml_str(&base.replace("SOURCE", "o"), "kv.toml", None).unwrap();
    let input = t.join("kv2.csv");
    std::fs::write(&input, "id,o,n\nk2,zz,2\n").unwrap();
    import(&a, &other, &input, csv_format(b','));
    let dest = t.join("kv.out.csv");
    let e = export_rows(
        &a,
        &s.mapping,
        ExportFormat::Csv,
        &dest,
        None,
        NOW,
        &Default::default(),
        2,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "row 'k2': row key: field 'id': the row's cells give 'zz', but the row key has 'k2' there"
    );
    assert!(!dest.exists(), "nothing is left behind");
    let leftovers: Vec<_> = std::fs::read_dir(t)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".hfkit-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // An int64 column holding something else than 8 bytes.
    let bad = base
        .replace("SOURCE", "id")
        .replace("type = \"int64\"\n", "");
    let s_text = TableSchema::from_toml_str(&bad, "kv.toml", None).unwrap();
    let c = create(&t.join("kv3"), &s_text);
    std::fs::write(&input, "id,n\nk3,abc\n").unwrap();
    import(&c, &s_text, &input, csv_format(b','));
    let e = export_rows(
        &c,
        &s.mapping,
        ExportFormat::Csv,
        &dest,
        None,
        NOW,
        &Default::default(),
        2,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "row 'k3': field 'n': cell d:n holds 3 bytes, not an int64 (8 bytes)"
    );
}

use crate::common::hfkit;

#[test]
fn command_line_round_trip() {
    let tmp = tmpdir();
    let p = |s: &str| -> PathBuf { tmp.path().join(s) };
    let s = |p: &PathBuf| p.display().to_string();
    let schema = format!("{SEEDS}/orders.toml");
    let now = NOW.to_string();
    let ok = |o: std::process::Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o
    };
    ok(hfkit(&[
        "import",
        "--schema",
        &schema,
        &format!("{SEEDS}/orders.csv"),
        "--table",
        &s(&p("a")),
        "--quiet",
    ]));
    let o = ok(hfkit(&[
        "export",
        &s(&p("a")),
        "--format",
        "parquet",
        "--rows",
        "--schema",
        &schema,
        "--to",
        &s(&p("a.parquet")),
        "--now-ms",
        &now,
        "--threads",
        "3",
        "--json",
    ]));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows"], 2000);
    assert_eq!(v["cells"], 4000);
    assert_eq!(v["fields"][1]["name"], "order_ts");
    assert_eq!(v["fields"][1]["parquet_type"], "int64");
    let o = ok(hfkit(&[
        "export",
        &s(&p("a")),
        "--format",
        "csv",
        "--rows",
        "--schema",
        &schema,
        "--to",
        &s(&p("a.csv")),
        "--now-ms",
        &now,
    ]));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(
            "2000 rows (4000 cells) with fields user_id, order_ts, order_id, amount, status"
        ),
        "{text}"
    );
    for f in ["a.parquet", "a.csv"] {
        let b = p(&format!("{f}.table"));
        ok(hfkit(&[
            "import",
            "--schema",
            &schema,
            &s(&p(f)),
            "--table",
            &s(&b),
            "--quiet",
        ]));
        same(
            &scan(&Table::open(&b).unwrap()),
            &scan(&Table::open(&p("a")).unwrap()),
            f,
        );
    }
    // --rows needs --schema and --format; --schema needs --rows.
    let usage = |args: &[&str]| hfkit(args).status.code();
    let a = s(&p("a"));
    assert_eq!(
        usage(&["export", &a, "--rows", "--to", "x", "--format", "csv"]),
        Some(2)
    );
    assert_eq!(
        usage(&["export", &a, "--rows", "--schema", &schema, "--to", "x"]),
        Some(2)
    );
    assert_eq!(
        usage(&["export", &a, "--schema", &schema, "--format", "csv", "--to", "x"]),
        Some(2)
    );
}

/// Timestamp fields written in the formats the schema reads them in: a strftime cell
/// timestamp and an epoch-seconds `reverse_ts` input come back as the same text.
#[test]
fn timestamp_formats_round_trip() {
    const EVENTS: &str = r#"
[table]
name = "t:visits"
[[family]]
name = "d"
[rowkey]
spec = 'site + "_" + reverse_ts(at)'
timestamp_format = "epoch_s"
[[column]]
source = "page"
cell = "d:page"
timestamp = "seen"
timestamp_format = "%Y-%m-%d %H:%M:%S%.3f"
[[column]]
source = "at"
cell = "d:at"
timestamp = 1
"#;
    let tmp = tmpdir();
    let t = tmp.path();
    let s = TableSchema::from_toml_str(EVENTS, "visits.toml", None).unwrap();
    let input = t.join("visits.csv");
    std::fs::write(
        &input,
        "site,at,page,seen\n\
         a,1700000000.250,/home,2023-11-14 22:13:20.500\n\
         b,1700000100.000,/cart,2023-11-14 22:15:00.000\n",
    )
    .unwrap();
    let a = create(&t.join("visits-a"), &s);
    import(&a, &s, &input, csv_format(b','));
    assert!(scan(&a).contains(&(
        format!("a_{}", i64::MAX - 1_700_000_000_250).into_bytes(),
        b"d".to_vec(),
        b"page".to_vec(),
        1_700_000_000_500,
        b"/home".to_vec()
    )));
    let [csv, pq] = round_trip(t, &a, &s, "visits");
    let text = std::fs::read_to_string(&csv.path).unwrap();
    assert!(
        text.contains("a,1700000000.250,/home,2023-11-14 22:13:20.500"),
        "{text}"
    );
    let types = parquet_types(&pq.path);
    assert!(
        types.contains(&("seen".to_string(), DataType::Utf8)),
        "{types:?}"
    );
}
