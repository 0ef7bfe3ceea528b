//! Cell timestamps and rowkey time functions read from fields in each timestamp format
//! (`epoch_ms`, `epoch_s`, strftime with and without an offset), checked to the millisecond in
//! the written HFiles.

use hfkit::format::reader::HFileReader;
use hfkit::pipeline::import::{run_import, ImportOptions, InputFormat};
use hfkit::pipeline::source::CsvOptions;
use hfkit::table::TableSchema;

const SCHEMA: &str = r#"
[table]
name = "t"

[[family]]
name = "d"

[rowkey]
spec = 'pad(id, 3) + "_" + bucket(when, day) + "_" + reverse_ts(when)'
timestamp_format = "%Y-%m-%d %H:%M:%S"

[[column]]
source = "ms"
cell = "d:ms"
timestamp = "ms"

[[column]]
source = "secs"
cell = "d:s"
timestamp = "secs"
timestamp_format = "epoch_s"

[[column]]
source = "when"
cell = "d:w"
timestamp = "when"
timestamp_format = "%Y-%m-%d %H:%M:%S"

[[column]]
source = "zoned"
cell = "d:z"
timestamp = "zoned"
timestamp_format = "%Y-%m-%dT%H:%M:%S%.f%:z"

[[column]]
source = "day"
cell = "d:day"
timestamp = "day"
timestamp_format = "%d/%m/%Y"
"#;

/// (row, qualifier, timestamp) of every cell written.
fn import(csv: &str) -> Vec<(String, String, i64)> {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.csv");
    std::fs::write(&input, csv).unwrap();
    let parsed = TableSchema::from_toml_str(SCHEMA, "s.toml", None).unwrap();
    let opts = ImportOptions::new(
        vec![input],
        InputFormat::Csv(CsvOptions::default()),
        tmp.path().join("out"),
    );
    let report = run_import(&parsed.table, &parsed.mapping, opts).unwrap();
    let mut cells = Vec::new();
    for f in &report.output_files {
        let r = HFileReader::open(&f.path).unwrap();
        let mut s = r.scanner().unwrap();
        while let Some(c) = s.next().unwrap() {
            cells.push((
                String::from_utf8(c.row.to_vec()).unwrap(),
                String::from_utf8(c.qualifier.to_vec()).unwrap(),
                c.timestamp,
            ));
        }
    }
    cells
}

#[test]
fn every_format_gives_the_exact_millisecond() {
    let cells = import(
        "id,ms,secs,when,zoned,day\n\
         7,1700000000123,1700000000.5,2023-11-14 22:13:20,2023-11-15T00:13:20.250+02:00,14/11/2023\n\
         8,0,0,1970-01-01 00:00:00,1969-12-31T19:00:00-05:00,01/01/1970\n",
    );
    // 2023-11-14T22:13:20Z = 1700000000000 ms; its day bucket is 20231114.
    let row7 = format!("007_20231114_{:019}", i64::MAX - 1_700_000_000_000);
    let row8 = format!("008_19700101_{:019}", i64::MAX);
    let want = [
        (row7.clone(), "day", 1_699_920_000_000),
        (row7.clone(), "ms", 1_700_000_000_123),
        (row7.clone(), "s", 1_700_000_000_500),
        (row7.clone(), "w", 1_700_000_000_000),
        (row7.clone(), "z", 1_700_000_000_250),
        (row8.clone(), "day", 0),
        (row8.clone(), "ms", 0),
        (row8.clone(), "s", 0),
        (row8.clone(), "w", 0),
        (row8.clone(), "z", 0),
    ];
    let want: Vec<(String, String, i64)> = want
        .into_iter()
        .map(|(r, q, t)| (r, q.to_string(), t))
        .collect();
    assert_eq!(cells, want);
}

#[test]
fn bad_values_and_formats_are_errors_naming_where() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |schema: &str, csv: &str| -> String {
        let input = tmp.path().join("in.csv");
        std::fs::write(&input, csv).unwrap();
        let parsed = TableSchema::from_toml_str(schema, "s.toml", None).unwrap();
        let out = tmp.path().join("out");
        let opts = ImportOptions::new(
            vec![input],
            InputFormat::Csv(CsvOptions::default()),
            out.clone(),
        );
        let e = run_import(&parsed.table, &parsed.mapping, opts)
            .unwrap_err()
            .to_string();
        assert!(!out.exists(), "output left behind");
        e
    };
    let header = "id,ms,secs,when,zoned,day\n";
    let good = "1,1,1,2023-11-14 22:13:20,2023-11-14T22:13:20+00:00,14/11/2023\n";
    // A cell timestamp field: file, line, field and reason.
    let e = run(
        SCHEMA,
        &format!("{header}{good}2,1,1,2023-11-14 22:13:20,2023-11-14T22:13:20+00:00,31/02/2023\n"),
    );
    assert_eq!(
        e,
        format!(
            "{}: line 3: timestamp field 'day': '31/02/2023' does not match the format '%d/%m/%Y': input is out of range",
            tmp.path().join("in.csv").display()
        )
    );
    let e = run(
        SCHEMA,
        &format!(
            "{header}{good}2,1,1.5.1,2023-11-14 22:13:20,2023-11-14T22:13:20+00:00,14/11/2023\n"
        ),
    );
    assert!(
        e.ends_with(": line 3: timestamp field 'secs': '1.5.1' is not epoch seconds (decimal, optionally with a fraction)"),
        "{e}"
    );
    // The rowkey's time functions read with the [rowkey] format.
    let e = run(
        SCHEMA,
        &format!("{header}2,1,1,14.11.2023,2023-11-14T22:13:20+00:00,14/11/2023\n"),
    );
    assert!(
        e.contains(": line 2: row key: bucket(when, day): '14.11.2023' does not match the format '%Y-%m-%d %H:%M:%S'"),
        "{e}"
    );
    // A format that cannot work is refused before any record is read, naming the column.
    let bad = SCHEMA.replace("\"%d/%m/%Y\"", "\"%d/%m\"");
    let e = run(&bad, &format!("{header}{good}"));
    assert!(
        e.starts_with("s.toml:")
            && e.contains("column 'day': timestamp format '%d/%m': does not determine a date"),
        "{e}"
    );
    let bad = SCHEMA.replace(
        "timestamp_format = \"%Y-%m-%d %H:%M:%S\"\n\n[[column]]\nsource = \"ms\"",
        "timestamp_format = \"%Y-%m-%k%Q\"\n\n[[column]]\nsource = \"ms\"",
    );
    assert_ne!(bad, SCHEMA);
    let e = run(&bad, &format!("{header}{good}"));
    assert!(
        e.starts_with("s.toml:") && e.contains("[rowkey] timestamp format '%Y-%m-%k%Q'"),
        "{e}"
    );
}

#[test]
fn schema_checks_timestamp_format_placement() {
    let base = "[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[[column]]\nsource = \"a\"\ncell = \"d:a\"\n";
    let e = TableSchema::from_toml_str(
        &format!("{base}timestamp_format = \"epoch_s\"\n"),
        "s.toml",
        None,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "s.toml:8:20: column 'a': timestamp_format needs timestamp = \"field\" (the field it reads)"
    );
    let p = TableSchema::from_toml_str(
        &format!("{base}timestamp = \"t\"\ntimestamp_format = \"epoch_s\"\n[rowkey]\nspec = 'a'\ntimestamp_format = \"%Y\"\n"),
        "s.toml",
        None,
    )
    .unwrap();
    assert_eq!(
        p.mapping.columns[0].timestamp_format.as_deref(),
        Some("epoch_s")
    );
    let (f, at) = p.mapping.rowkey_timestamp_format.unwrap();
    assert_eq!(
        (f.as_str(), at.to_string().as_str()),
        ("%Y", "s.toml:12:20")
    );
}

#[test]
fn latest_timestamp_is_the_import_time_and_negative_ones_are_refused() {
    // HConstants.LATEST_TIMESTAMP means "now": HFileOutputFormat2 stamps such cells with the
    // writer's time, as a region server does a Put's. Schema-fixed ones too.
    let schema = "[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[rowkey]\nspec = \"id\"\n\
                  [[column]]\nsource = \"ms\"\ncell = \"d:ms\"\ntimestamp = \"ms\"\n\
                  [[column]]\nsource = \"id\"\ncell = \"d:id\"\ntimestamp = 9223372036854775807\n";
    let parsed = TableSchema::from_toml_str(schema, "s.toml", None).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.csv");
    std::fs::write(&input, "id,ms\na,9223372036854775807\nb,0\n").unwrap();
    let opts = |out: &str, import_time: i64| {
        let mut o = ImportOptions::new(
            vec![input.clone()],
            InputFormat::Csv(CsvOptions::default()),
            tmp.path().join(out),
        );
        o.import_time = import_time;
        o
    };
    let report = run_import(&parsed.table, &parsed.mapping, opts("out", 1_234)).unwrap();
    let mut cells = Vec::new();
    for f in &report.output_files {
        let r = HFileReader::open(&f.path).unwrap();
        let mut s = r.scanner().unwrap();
        while let Some(c) = s.next().unwrap() {
            cells.push((c.row.to_vec(), c.qualifier.to_vec(), c.timestamp));
        }
    }
    assert_eq!(
        cells,
        [
            (b"a".to_vec(), b"id".to_vec(), 1_234),
            (b"a".to_vec(), b"ms".to_vec(), 1_234),
            (b"b".to_vec(), b"id".to_vec(), 1_234),
            (b"b".to_vec(), b"ms".to_vec(), 0),
        ]
    );
    // An import time before 1970 would give every cell without a timestamp a negative one.
    let e = run_import(&parsed.table, &parsed.mapping, opts("out2", -1))
        .unwrap_err()
        .to_string();
    assert!(e.contains("import time: timestamp -1 is negative"), "{e}");
    assert!(!tmp.path().join("out2").exists());
}
