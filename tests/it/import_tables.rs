//! Several target tables from one input (`[[table]]` sections, `formats/schema.md` §"Several
//! tables from one input", `formats/import.md` §"Several tables"): the 1:N and M:N designs of
//! the seeds imported and checked row by row against expectations computed here from the CSV,
//! the `--out` layout, a failing second table, the rerun that finishes an interrupted run, and
//! the dry run per table.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hfkit::table::directory::Table;

use crate::common::{files_under, hfkit, import_with, text, tmpdir};

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");

/// (row, family, qualifier, timestamp, value): one cell, as bytes.
type CellBytes = (Vec<u8>, Vec<u8>, Vec<u8>, i64, Vec<u8>);

fn seed(name: &str) -> PathBuf {
    Path::new(SEEDS).join(name)
}

/// `hfkit import` of the seed `name` (`name.toml` over `name.csv`).
fn import_seed(name: &str, mode: &str, dest: &Path, extra: &[&str]) -> std::process::Output {
    let (schema, input) = (seed(&format!("{name}.toml")), seed(&format!("{name}.csv")));
    import_with(&schema, &input, mode, dest, extra)
}

/// Every cell of every live file of the table at `dir`.
fn table_cells(dir: &Path) -> BTreeSet<CellBytes> {
    let t = Table::open(dir).unwrap();
    let m = t.manifest().unwrap();
    let mut out = BTreeSet::new();
    for e in &m.files {
        let r = hfkit::format::reader::HFileReader::open(t.file_path(e)).unwrap();
        let mut s = r.scanner().unwrap();
        while let Some(c) = s.next().unwrap() {
            out.insert((
                c.row.to_vec(),
                c.family.to_vec(),
                c.qualifier.to_vec(),
                c.timestamp,
                c.value.to_vec(),
            ));
        }
    }
    out
}

/// The CSV's records as maps from header to field (the seeds have no quoting).
fn records(csv: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

fn cell(row: String, family: &str, qualifier: String, ts: i64, value: Vec<u8>) -> CellBytes {
    (
        row.into_bytes(),
        family.as_bytes().to_vec(),
        qualifier.into_bytes(),
        ts,
        value,
    )
}

/// The 1:N design: order lines as columns of the order's row, and as rows of their own.
fn expected_orders() -> (BTreeSet<CellBytes>, BTreeSet<CellBytes>) {
    let (mut orders, mut lines) = (BTreeSet::new(), BTreeSet::new());
    for r in records(&seed("sale_lines.csv")) {
        let order = format!("{:0>10}", r["order_id"]);
        let ts: i64 = r["order_ts"].parse().unwrap();
        let customer = r["customer"].as_bytes().to_vec();
        orders.insert(cell(order.clone(), "o", "customer".into(), ts, customer));
        let sku = r["sku"].as_bytes().to_vec();
        let line = format!("line_{}", r["line"]);
        orders.insert(cell(order.clone(), "o", line, ts, sku.clone()));
        let row = format!("{order}#{:0>3}", r["line"]);
        let qty = r["qty"].parse::<i32>().unwrap().to_be_bytes().to_vec();
        lines.insert(cell(row.clone(), "l", "sku".into(), ts, sku));
        lines.insert(cell(row, "l", "qty".into(), ts, qty));
    }
    (orders, lines)
}

#[test]
fn one_to_many_orders_and_order_lines_row_by_row() {
    let tmp = tmpdir();
    let root = tmp.path().join("shop");
    let o = import_seed("sale_lines", "--table", &root, &["--quiet"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (orders, lines) = expected_orders();
    assert_eq!(orders.len(), 3 + 6, "3 orders' customers and 6 lines");
    assert_eq!(table_cells(&root.join("orders")), orders);
    assert_eq!(table_cells(&root.join("order_lines")), lines);
    // Each table has its own splits: order_lines two regions, orders one.
    let regions = |dir: &Path| Table::open(dir).unwrap().manifest().unwrap().regions.len();
    assert_eq!(regions(&root.join("order_lines")), 2);
    assert_eq!(regions(&root.join("orders")), 1);
}

#[test]
fn many_to_many_enrollments_both_directions_row_by_row() {
    let tmp = tmpdir();
    let root = tmp.path().join("school");
    let o = import_seed("enrollments", "--table", &root, &["--quiet"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (mut by_student, mut by_course) = (BTreeSet::new(), BTreeSet::new());
    for r in records(&seed("enrollments.csv")) {
        let (s, c, g) = (&r["student_id"], &r["course_id"], r["grade"].as_bytes());
        let ts = 1_700_000_000_000;
        by_student.insert(cell(s.clone(), "c", c.clone(), ts, g.to_vec()));
        by_course.insert(cell(c.clone(), "s", s.clone(), ts, g.to_vec()));
    }
    assert_eq!(by_student.len(), 6);
    assert_eq!(table_cells(&root.join("student_courses")), by_student);
    assert_eq!(table_cells(&root.join("course_students")), by_course);
    // Read back as a user would: the courses of s3, the students of math.
    let get = |t: &str, row: &str| {
        let o = hfkit(&["get", root.join(t).to_str().unwrap(), row]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let s3 = get("student_courses", "student-003");
    for q in ["c:course-art", "c:course-math", "c:course-physics"] {
        assert!(s3.contains(q), "{s3}");
    }
    let math = get("course_students", "course-math");
    for q in ["s:student-001", "s:student-002", "s:student-003"] {
        assert!(math.contains(q), "{math}");
    }
}

#[test]
fn out_writes_a_bulk_load_directory_per_table() {
    let tmp = tmpdir();
    let out = tmp.path().join("bulk");
    let o = import_seed("sale_lines", "--out", &out, &["--quiet"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let families: BTreeSet<String> = files_under(&out)
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(&out).unwrap();
            let parts: Vec<_> = rel.iter().map(|c| c.to_string_lossy()).collect();
            assert_eq!(
                parts.len(),
                3,
                "<out>/<table>/<family>/<hfile>: {}",
                rel.display()
            );
            format!("{}/{}", parts[0], parts[1])
        })
        .collect();
    assert_eq!(
        families,
        BTreeSet::from(["order_lines/l".to_string(), "orders/o".to_string()])
    );
}

/// Every file of a directory tree with its bytes (a table's exact state).
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    if !dir.exists() {
        return Vec::new();
    }
    files_under(dir)
        .into_iter()
        .map(|p| {
            (
                p.strip_prefix(dir).unwrap().to_path_buf(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_bad_record_for_the_second_table_leaves_neither_table_changed() {
    let tmp = tmpdir();
    let root = tmp.path().join("shop");
    let input = tmp.path().join("lines.csv");
    // Line 4's qty is no int32: only app:order_lines maps qty, and app:orders comes first.
    let good = std::fs::read_to_string(seed("sale_lines.csv")).unwrap();
    std::fs::write(&input, good.replacen(",C3,5,", ",C3,five,", 1)).unwrap();
    let run = || {
        import_with(
            &seed("sale_lines.toml"),
            &input,
            "--table",
            &root,
            &["--quiet"],
        )
    };
    let o = run();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("table app:order_lines: bad records; no table was changed"),
        "{err}"
    );
    assert!(
        err.contains("line 4: field 'qty': 'five' is not a 32-bit decimal integer"),
        "{err}"
    );
    assert!(!root.exists(), "{:?}", files_under(&root));

    // Into existing tables: both byte for byte as they were.
    let o = import_seed("sale_lines", "--table", &root, &["--quiet"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let before = tree(&root);
    let o = run();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(tree(&root), before);
}

#[test]
fn a_run_stopped_between_two_commits_is_finished_by_the_same_import_again() {
    let tmp = tmpdir();
    let root = tmp.path().join("shop");
    std::fs::create_dir_all(&root).unwrap();
    // The second table cannot be written (its directory is taken by a file): the run stops
    // after the first commit, as a crash between the two would.
    std::fs::write(root.join("order_lines"), b"in the way").unwrap();
    let run = || import_seed("sale_lines", "--table", &root, &["--quiet"]);
    let o = run();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("table app:order_lines: "), "{err}");
    assert!(
        err.contains(
            "the tables before it (app:orders) hold this import; run the same import again"
        ),
        "{err}"
    );
    let orders_dir = root.join("orders");
    let first = tree(&orders_dir);
    assert!(!first.is_empty());
    std::fs::remove_file(root.join("order_lines")).unwrap();

    // The same import again: app:orders holds it and is skipped, byte for byte unchanged;
    // app:order_lines is imported.
    let o = run();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("table app:orders: ") && err.contains("skipped"),
        "{err}"
    );
    assert_eq!(tree(&orders_dir), first);
    let (orders, lines) = expected_orders();
    assert_eq!(table_cells(&orders_dir), orders);
    assert_eq!(table_cells(&root.join("order_lines")), lines);

    // A third time: every table holds it, refused as a one-table rerun is.
    let o = run();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(text(&o.stderr)
        .contains("every table (app:orders, app:order_lines) already holds this import"));
}

#[test]
fn a_dry_run_reports_each_table_and_writes_nothing() {
    let tmp = tmpdir();
    let root = tmp.path().join("school");
    let o = import_seed("enrollments", "--table", &root, &["--dry-run"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let a = out.find("table app:student_courses:").expect(&out);
    let b = out.find("table app:course_students:").expect(&out);
    assert!(a < b, "{out}");
    assert!(!root.exists(), "a dry run created {}", root.display());
}

#[test]
fn schema_md_shows_the_seed_schemas_as_they_are() {
    let doc = include_str!("../../formats/schema.md");
    for f in ["sale_lines.toml", "enrollments.toml"] {
        let text = std::fs::read_to_string(seed(f)).unwrap();
        assert!(doc.contains(&format!("```toml\n{text}```")), "{f}");
    }
}
