//! Import failures: one test per error class. Each asserts the message (file, line, column,
//! reason) and that nothing was left behind.

use std::path::Path;
use std::process::Output;

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");
const HEADER: &str = "user_id,name,email,city,score,last_login\n";
const GOOD: &str = "1,ann,a@x,Oslo,5,1700000000000\n2,bob,b@x,Lagos,6,1700000000001\n";

use crate::common::hfkit;

/// Runs an import of `csv` with `schema` (default: the users seed schema) into a fresh
/// directory; asserts failure with every `expect` in the message and nothing left behind.
fn fails(csv: &str, schema: Option<&str>, expect: &[&str]) {
    fails_on("in.csv", csv.as_bytes(), schema, expect);
}

/// [`fails`] with an input file named `name` holding `bytes` (a directory when `bytes` is
/// empty and `name` ends in '/').
fn fails_on(name: &str, bytes: &[u8], schema: Option<&str>, expect: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join(name.trim_end_matches('/'));
    if name.ends_with('/') {
        std::fs::create_dir(&input).unwrap();
    } else {
        std::fs::write(&input, bytes).unwrap();
    }
    let schema_path = match schema {
        Some(text) => {
            let p = tmp.path().join("schema.toml");
            std::fs::write(&p, text).unwrap();
            p
        }
        None => Path::new(SEEDS).join("users.toml"),
    };
    let out = tmp.path().join("out");
    let o = hfkit(&[
        "import",
        "--schema",
        schema_path.to_str().unwrap(),
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--memory",
        "1MB",
    ]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{err}");
    for e in expect {
        assert!(err.contains(e), "expected '{e}' in: {err}");
    }
    assert!(
        !out.exists(),
        "output left behind: {:?}",
        std::fs::read_dir(&out).map(|d| d.count())
    );
    // Nor anything else (the users seed's index table goes inside the output).
    let mut left: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    left.sort();
    let input_name = name.trim_end_matches('/');
    assert!(
        left == [input_name] || left == [input_name, "schema.toml"],
        "left behind: {left:?}"
    );
}

fn users_schema_with(extra: &str) -> String {
    std::fs::read_to_string(Path::new(SEEDS).join("users.toml")).unwrap() + extra
}

#[test]
fn bad_quoting() {
    fails(
        &format!("{HEADER}{GOOD}3,\"unclosed,c@x,Oslo,7,1\n4,d,d@x,Oslo,8,1\n"),
        None,
        &["in.csv: line 4", "expected 6 fields"],
    );
}

#[test]
fn wrong_field_count() {
    fails(
        &format!("{HEADER}{GOOD}3,carl,c@x\n"),
        None,
        &["in.csv: line 4: expected 6 fields, found 3"],
    );
}

#[test]
fn duplicate_header_column() {
    // Which of the two a mapping means is unknowable: refused, naming both positions.
    fails(
        "user_id,name,email,city,score,last_login,name\n1,ann,a@x,Oslo,5,1700000000000,bo\n",
        None,
        &["in.csv: header: column 'name' appears twice, as columns 2 and 7"],
    );
}

#[test]
fn directory_as_input() {
    fails_on(
        "data/",
        b"",
        None,
        &["data: is a directory, not an input file; to read the files in it, give a glob such as"],
    );
}

#[test]
fn truncated_compressed_input_names_the_line_and_the_byte() {
    let mut text = String::from(HEADER);
    for i in 1..=2000 {
        text.push_str(&format!("{i},user {i},u{i}@x,Oslo,{i},1700000000000\n"));
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let zst = zstd::encode_all(text.as_bytes(), 3).unwrap();
    // Cut in the middle: the message names the line being read when the data ran out (the
    // lines before it decoded whole) and where the file ends.
    let cut = gz.len() / 2;
    let whole = {
        let mut d = flate2::read::MultiGzDecoder::new(&gz[..cut]);
        let mut out = Vec::new();
        let _ = std::io::Read::read_to_end(&mut d, &mut out);
        out.iter().filter(|&&b| b == b'\n').count()
    };
    assert!(whole > 100, "{whole}");
    fails_on(
        "in.csv.gz",
        &gz[..cut],
        None,
        &[&format!(
            "in.csv.gz: line {}: the gzip stream is truncated: the file ends at byte {cut} \
             before the stream does",
            whole + 1
        )],
    );
    // A zstd frame decodes block by block: nothing of a cut first block is read.
    fails_on(
        "in.csv.zst",
        &zst[..zst.len() - 10],
        None,
        &[&format!(
            "in.csv.zst: line 1: the zstd stream is truncated: the file ends at byte {}",
            zst.len() - 10
        )],
    );
}

#[test]
fn missing_column() {
    fails(
        "user_id,name,email,score,last_login\n1,a,b,2,3\n",
        None,
        &["in.csv", "missing column 'city'"],
    );
}

#[test]
fn unparsable_number() {
    fails(
        &format!("{HEADER}{GOOD}3,carl,c@x,Oslo,lots,1700000000002\n"),
        None,
        &["in.csv: line 4", "field 'score'", "'lots'"],
    );
}

#[test]
fn unparsable_timestamp() {
    fails(
        &format!("{HEADER}3,carl,c@x,Oslo,5,yesterday\n"),
        None,
        &[
            "in.csv: line 2",
            "timestamp field 'last_login'",
            "'yesterday'",
        ],
    );
}

#[test]
fn unparsable_formatted_timestamp() {
    // The login time kept as text, and read as the cell's timestamp in a format.
    let schema = users_schema_with("").replace(
        "type = \"int64\"\ntimestamp = \"last_login\"",
        "timestamp = \"last_login\"\ntimestamp_format = \"%Y-%m-%d %H:%M\"",
    );
    assert!(schema.contains("%Y-%m-%d %H:%M"));
    fails(
        &format!("{HEADER}1,ann,a@x,Oslo,5,2023-11-14 22:13\n2,bob,b@x,Oslo,6,2023-11-14 25:00\n"),
        Some(&schema),
        &[
            "in.csv: line 3: timestamp field 'last_login': '2023-11-14 25:00' does not match the format '%Y-%m-%d %H:%M': input is out of range",
        ],
    );
}

#[test]
fn empty_row_key() {
    fails(
        &format!("{HEADER}{GOOD},carl,c@x,Oslo,5,1700000000002\n"),
        None,
        &["in.csv: line 4", "row key"],
    );
}

#[test]
fn row_key_over_32767_bytes() {
    // The seed pads ids to 10 digits (a longer one is refused by pad): its key unpadded.
    let schema = users_schema_with("").replace("reverse(pad(user_id, 10))", "reverse(user_id)");
    let long = "7".repeat(40_000);
    fails(
        &format!("{HEADER}{long},carl,c@x,Oslo,5,1700000000002\n"),
        Some(&schema),
        &["in.csv: line 2", "32767"],
    );
}

#[test]
fn unknown_family() {
    fails(
        &format!("{HEADER}{GOOD}"),
        Some(&users_schema_with(
            "\n[[column]]\nsource = \"name\"\ncell = \"zz:n\"\n",
        )),
        &["zz"],
    );
}

#[test]
fn bad_schema() {
    fails(
        &format!("{HEADER}{GOOD}"),
        Some("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nVERSONS = 3\n"),
        &["schema.toml:5", "VERSONS"],
    );
    fails(
        &format!("{HEADER}{GOOD}"),
        Some("[table\nname = \"t\"\n"),
        &["schema.toml:1"],
    );
}

#[test]
fn bad_rows_file_collects_rejects_and_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.csv");
    std::fs::write(
        &input,
        // A score that is no number, and a cell timestamp HBase would refuse.
        format!(
            "{HEADER}{GOOD}3,carl,c@x,Oslo,lots,1\n4,dan,d@x,Oslo,9,1700000000003\n\
             5,eve,e@x,Oslo,7,-5\n"
        ),
    )
    .unwrap();
    let bad = tmp.path().join("bad.tsv");
    let out = tmp.path().join("out");
    let report = tmp.path().join("r.json");
    let (bad_s, out_s) = (bad.display().to_string(), out.display().to_string());
    let import = |extra: &[&str]| {
        let schema = format!("{SEEDS}/users.toml");
        let (input, report) = (input.display().to_string(), report.display().to_string());
        let mut args = vec!["import", "--schema", &schema, &input, "--out", &out_s];
        args.extend_from_slice(&["--report", &report]);
        args.extend_from_slice(extra);
        hfkit(&args)
    };
    let stderr = |o: &Output| String::from_utf8_lossy(&o.stderr).to_string();
    // A limit stops the import past it, writing nothing.
    let o = import(&["--bad-rows", &bad_s, "--max-bad-rows", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("2 rejected records, more than --max-bad-rows 1; last: "),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // --max-bad-rows means nothing without a file for the rejects: a usage error.
    let o = import(&["--max-bad-rows", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--bad-rows"), "{}", stderr(&o));
    assert!(!out.exists());
    // --bad-rows alone: as ImportTsv skipping bad lines, every reject is recorded, counted and
    // skipped (it used to stop at the first, under a hidden --max-bad-rows 0).
    let o = import(&["--bad-rows", &bad_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "warning: 2 rejected records were skipped; they are in {bad_s}"
        )),
        "{}",
        stderr(&o)
    );
    let rejected = std::fs::read_to_string(&bad).unwrap();
    assert_eq!(rejected.lines().count(), 2, "{rejected}");
    assert!(
        rejected.contains("line 4")
            && rejected.contains("'lots'")
            && rejected.contains(
                "in.csv: line 6\ttimestamp field 'last_login': '-5': timestamp -5 is negative"
            ),
        "{rejected}"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["rows_read"], 5);
    assert_eq!(r["rows_rejected"], 2);
    // None of a rejected record's cells, not even those of columns before the bad one.
    assert_eq!(r["cells"], 3 * 5);
}

#[test]
fn negative_timestamp() {
    // HBase refuses a cell timestamp below 0 (Put.addColumn: "Timestamp cannot be negative").
    fails(
        &format!("{HEADER}{GOOD}3,carl,c@x,Oslo,7,-5\n"),
        None,
        &[
            "in.csv: line 4: timestamp field 'last_login': '-5': timestamp -5 is negative",
            "before 1970-01-01",
        ],
    );
    // A date before 1970 read through a format is refused the same way.
    let schema = users_schema_with("").replace(
        "type = \"int64\"\ntimestamp = \"last_login\"",
        "timestamp = \"last_login\"\ntimestamp_format = \"%Y-%m-%d\"",
    );
    fails(
        &format!("{HEADER}1,ann,a@x,Oslo,5,2023-11-14\n2,bob,b@x,Oslo,6,1969-12-31\n"),
        Some(&schema),
        &["in.csv: line 3: timestamp field 'last_login': '1969-12-31': timestamp -86400000 is negative"],
    );
    // An index cell's timestamp, from a field the main table takes as a value.
    let schema = users_schema_with("").replace(
        "cell = \"r:k\"\ntimestamp = 1700000000000",
        "cell = \"r:k\"\ntimestamp = \"score\"",
    );
    assert!(schema.contains("timestamp = \"score\""));
    fails(
        &format!("{HEADER}{GOOD}3,carl,c@x,Oslo,-3,1700000000002\n"),
        Some(&schema),
        &["in.csv: line 4: index app:users_by_email: timestamp field 'score': '-3': timestamp -3 is negative"],
    );
}

#[test]
fn negative_parquet_timestamp_names_the_row() {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray, TimestampMillisecondArray};
    use arrow_schema::{DataType, Field, Schema, TimeUnit};

    let tmp = tempfile::tempdir().unwrap();
    let strings = |v: &[&str]| Arc::new(StringArray::from(v.to_vec())) as ArrayRef;
    let fields = ["user_id", "name", "email", "city"]
        .iter()
        .map(|n| Field::new(*n, DataType::Utf8, false))
        .chain([
            Field::new("score", DataType::Int64, false),
            // A login before 1970: a negative epoch.
            Field::new(
                "last_login",
                DataType::Timestamp(TimeUnit::Millisecond, None),
                false,
            ),
        ])
        .collect::<Vec<_>>();
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            strings(&["1", "2", "3"]),
            strings(&["ann", "bob", "carl"]),
            strings(&["a@x", "b@x", "c@x"]),
            strings(&["Oslo", "Lagos", "Lima"]),
            Arc::new(Int64Array::from(vec![5, 6, 7])),
            Arc::new(TimestampMillisecondArray::from(vec![
                1_700_000_000_000,
                1_700_000_000_001,
                -86_400_000,
            ])),
        ],
    )
    .unwrap();
    let input = tmp.path().join("in.parquet");
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&input).unwrap(), schema, None)
            .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let out = tmp.path().join("out");
    let o = hfkit(&[
        "import",
        "--schema",
        &format!("{SEEDS}/users.toml"),
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        // Row groups and rows within them count from 0 (formats/import.md §"Rejected records").
        err.contains("in.parquet: row group 0, row 2: timestamp field 'last_login': '-86400000': timestamp -86400000 is negative"),
        "{err}"
    );
    assert!(!out.exists());
}

/// `import --table T` with a schema whose families T lacks is refused before any input is
/// read, naming both tables and their families; T is left as it was (no `indexes/` made, no
/// staging directory named, no new version).
#[test]
fn schema_families_not_in_the_table_are_refused_first() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    let t = t.to_str().unwrap();
    let o = hfkit(&[
        "import",
        "--schema",
        &format!("{SEEDS}/orders.toml"),
        &format!("{SEEDS}/orders.csv"),
        "--table",
        t,
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = crate::common::files_under(Path::new(t));
    // The users schema (families i, h, s; an index table) into the orders table (family o);
    // an input that does not exist shows that nothing is read first.
    let o = hfkit(&[
        "import",
        "--schema",
        &format!("{SEEDS}/users.toml"),
        &format!("{SEEDS}/users.csv"),
        "--table",
        t,
    ]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{err}");
    for part in [
        t,
        "app:orders",
        "app:users",
        "the families o;",
        "are not a family",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
    assert!(!err.contains(&format!("{t}/.tmp")), "{err}");
    assert!(!err.contains("rows"), "read the input first: {err}");
    assert_eq!(crate::common::files_under(Path::new(t)), before);
    assert!(!Path::new(t).join("indexes").exists());
    assert!(crate::common::leftovers(Path::new(t)).is_empty());
}

/// A CSV file whose last line has no line end may have been cut short: its record is imported,
/// and a warning names the file and the line. A file that ends with a line end (LF or CRLF), or
/// whose unterminated last line is a comment-free header only, gets no such warning.
#[test]
fn last_line_without_line_end_is_imported_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let schema = format!("{SEEDS}/users.toml");
    let cut = format!("{HEADER}{}", GOOD.trim_end());
    for (name, bytes, warned) in [
        ("cut.csv", cut.clone().into_bytes(), Some(3)),
        ("whole.csv", format!("{HEADER}{GOOD}").into_bytes(), None),
        (
            "crlf.csv",
            format!("{HEADER}{GOOD}").replace('\n', "\r\n").into_bytes(),
            None,
        ),
        ("header.csv", HEADER.trim_end().as_bytes().to_vec(), None),
        ("cut.csv.gz", gzip(cut.as_bytes()), Some(3)),
    ] {
        let input = tmp.path().join(name);
        std::fs::write(&input, bytes).unwrap();
        let out = tmp.path().join(format!("out-{name}"));
        let o = hfkit(&[
            "import",
            "--schema",
            &schema,
            input.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let (stdout, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert!(o.status.success(), "{name}: {err}");
        let warning = format!(
            "{}: line 3, the last line, has no line end",
            input.display()
        );
        match warned {
            Some(_) => {
                assert!(err.contains(&warning), "{name}: {err}");
                assert!(stdout.contains("imported 2 rows"), "{name}: {stdout}");
            }
            None => assert!(!err.contains("has no line end"), "{name}: {err}"),
        }
    }
}

fn gzip(b: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}
