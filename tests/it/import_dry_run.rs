//! `hfkit import --dry-run` (`formats/import.md` §"Dry run"): every record read and encoded,
//! what would be written per table, region and family, every bad record listed, and nothing
//! written.

use crate::common::{hfkit, text, tmpdir};

const SCHEMA: &str = r#"
[table]
name = "dry"

[[family]]
name = "d"

[[family]]
name = "m"

[splits]
keys = ["m"]

[rowkey]
spec = "id"

[[column]]
source = "name"
cell = "d:name"

[[column]]
source = "score"
cell = "m:score"
type = "int64"

[operation]
field = "op"
timestamp = 5

[[operation.delete]]
value = "D"
"#;

/// What the dry run of the records of both tests says of each store. Bytes are row + family +
/// qualifier + value. Region ['', 'm'): d:name of a and c (1 + 1 + 4 + 3 each), m:score of a
/// (1 + 1 + 5 + 8, an int64); c has no score. Region ['m', ''): z's cells (9 and 15 bytes) and
/// o's DeleteFamily in d and in m (1 + 1 bytes each).
const STORES: [&str; 4] = [
    "  region ['', 'm') family d: 2 cells (0 delete markers), 18 bytes",
    "  region ['', 'm') family m: 1 cells (0 delete markers), 15 bytes",
    "  region ['m', '') family d: 2 cells (1 delete markers), 11 bytes",
    "  region ['m', '') family m: 2 cells (1 delete markers), 17 bytes",
];

#[test]
fn a_dry_run_counts_every_store_lists_every_bad_record_and_writes_nothing() {
    let tmp = tmpdir();
    let schema = tmp.path().join("s.toml");
    std::fs::write(&schema, SCHEMA).unwrap();
    let input = tmp.path().join("in.csv");
    // Lines 3, 5 and 7 are bad: a score that is no number, an unknown operation, an empty key.
    std::fs::write(
        &input,
        "id,op,name,score\n\
         a,I,ann,1\n\
         b,I,bob,x\n\
         c,I,cid,\n\
         n,Q,nia,2\n\
         z,I,zoe,3\n\
         ,I,nobody,4\n\
         o,D,,\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let table = tmp.path().join("t");
    let report = tmp.path().join("r.json");
    for dest in [
        ["--out", out.to_str().unwrap()],
        ["--table", table.to_str().unwrap()],
    ] {
        let o = hfkit(&[
            "import",
            "--schema",
            schema.to_str().unwrap(),
            input.to_str().unwrap(),
            dest[0],
            dest[1],
            "--dry-run",
            "--report",
            report.to_str().unwrap(),
        ]);
        // Without --bad-rows the import would stop: exit code 1, but the whole input was read.
        assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
        let stdout = text(&o.stdout);
        let want_rejected = [
            format!("{}: line 3: field 'score': ", input.display()),
            format!(
                "{}: line 5: operation field 'op': 'Q' is none of the [operation] values (I, U, D)",
                input.display()
            ),
            format!("{}: line 7: row key: ", input.display()),
        ];
        let rejected: Vec<&str> = stdout
            .lines()
            .filter(|l| l.starts_with("rejected: "))
            .collect();
        assert_eq!(rejected.len(), 3, "{stdout}");
        for (line, want) in rejected.iter().zip(&want_rejected) {
            assert!(line.starts_with(&format!("rejected: {want}")), "{line}");
        }
        assert!(
            stdout.starts_with("dry run: 7 records read, 3 would be rejected; nothing written\n")
        );
        for line in STORES {
            assert!(stdout.contains(line), "{line}\n{stdout}");
        }
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(r["records_read"], 7);
        assert_eq!(r["records_rejected"], 3);
        assert_eq!(r["rejected"].as_array().unwrap().len(), 3);
        assert_eq!(
            r["tables"][0]["regions"][1]["families"][1]["delete_markers"],
            1
        );
        // Nothing written: no output directory, no table.
        assert!(!out.exists() && !table.exists());
    }
    // With --bad-rows (no limit) the import would go on: exit code 0, and still no file, not
    // even the bad-rows file.
    let bad = tmp.path().join("bad.txt");
    let o = hfkit(&[
        "import",
        "--schema",
        schema.to_str().unwrap(),
        input.to_str().unwrap(),
        "--dry-run",
        "--bad-rows",
        bad.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!bad.exists());
    let mut left: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["in.csv", "r.json", "s.toml"]);
}

/// The same records from a Parquet file (two row groups, read column by column as the import
/// reads them): the same counts, and each bad record named by its row group and row.
#[test]
fn a_parquet_dry_run_reports_what_the_csv_one_does() {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    let tmp = tmpdir();
    let schema = tmp.path().join("s.toml");
    std::fs::write(&schema, SCHEMA).unwrap();
    let column = |v: &[Option<&str>]| -> ArrayRef { Arc::new(StringArray::from(v.to_vec())) };
    let fields = ["id", "op", "name", "score"]
        .map(|n| Field::new(n, DataType::Utf8, true))
        .to_vec();
    let arrow_schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(
        arrow_schema.clone(),
        vec![
            column(&[
                Some("a"),
                Some("b"),
                Some("c"),
                Some("n"),
                Some("z"),
                Some(""),
                Some("o"),
            ]),
            column(&[
                Some("I"),
                Some("I"),
                Some("I"),
                Some("Q"),
                Some("I"),
                Some("I"),
                Some("D"),
            ]),
            column(&[
                Some("ann"),
                Some("bob"),
                Some("cid"),
                Some("nia"),
                Some("zoe"),
                Some("nobody"),
                None,
            ]),
            column(&[
                Some("1"),
                Some("x"),
                None,
                Some("2"),
                Some("3"),
                Some("4"),
                None,
            ]),
        ],
    )
    .unwrap();
    let input = tmp.path().join("in.parquet");
    // Row groups of 4 rows: rows 0-3 and 4-6.
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(4))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&input).unwrap(),
        arrow_schema,
        Some(props),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let o = hfkit(&[
        "import",
        "--schema",
        schema.to_str().unwrap(),
        input.to_str().unwrap(),
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    assert!(
        stdout.starts_with("dry run: 7 records read, 3 would be rejected; nothing written\n"),
        "{stdout}"
    );
    let rejected: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("rejected: "))
        .collect();
    let at =
        |g: usize, r: usize| format!("rejected: {}: row group {g}, row {r}: ", input.display());
    assert_eq!(rejected.len(), 3, "{stdout}");
    for (line, want) in rejected.iter().zip([at(0, 1), at(0, 3), at(1, 1)]) {
        assert!(line.starts_with(&want), "{line} (want {want})");
    }
    for line in STORES {
        assert!(stdout.contains(line), "{line}\n{stdout}");
    }
}
