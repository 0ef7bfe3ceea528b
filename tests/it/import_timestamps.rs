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

/// A family with a TTL of one day and VERSIONS 2, and one keeping a single version, fed the
/// same cells: per family, the cells already past the TTL and the versions beyond VERSIONS.
const RETENTION_SCHEMA: &str = r#"
[table]
name = "t"

[[family]]
name = "h"
VERSIONS = 2
TTL = 86400

[[family]]
name = "d"

[rowkey]
spec = 'id'

[[column]]
source = "v"
cell = "h:v"
timestamp = "ts"

[[column]]
source = "v"
cell = "d:v"
timestamp = "ts"
"#;

/// Row a: four versions (the oldest from 1970), row b: one. Against a clock in 2100 - 1 h
/// (the CLI uses the real one, which these timestamps put on the same side): h hides a's
/// 1970 version (TTL) and its third newest (VERSIONS 2); d keeps only a's newest.
const RETENTION_CSV: &str = "id,ts,v\n\
     a,1000,1\n\
     a,4102444700000,2\n\
     a,4102444710000,3\n\
     a,4102444720000,4\n\
     b,4102444700000,5\n";

fn family_counts(
    families: &[hfkit::pipeline::import::FamilyReport],
) -> Vec<(String, u64, u64, u64)> {
    families
        .iter()
        .map(|f| (f.name.clone(), f.cells, f.expired_by_ttl, f.beyond_versions))
        .collect()
}

#[test]
fn import_counts_cells_past_ttl_and_beyond_versions_per_family() {
    let parsed = TableSchema::from_toml_str(RETENTION_SCHEMA, "s.toml", None).unwrap();
    let want = vec![("h".to_string(), 5, 1, 1), ("d".to_string(), 5, 0, 3)];
    let mut lines: Vec<&str> = RETENTION_CSV.lines().collect();
    // In input order the versions of a arrive oldest first (its lanes are taken back and
    // sorted); reversed, newest first (written straight); and with every cell sorted.
    for (order, streaming) in [("as is", true), ("reversed", true), ("as is", false)] {
        if order == "reversed" {
            lines[1..].reverse();
        }
        let tmp = tempfile::tempdir().unwrap();
        let input = tmp.path().join("in.csv");
        std::fs::write(&input, lines.join("\n") + "\n").unwrap();
        let mut opts = ImportOptions::new(
            vec![input],
            InputFormat::Csv(CsvOptions::default()),
            tmp.path().join("out"),
        );
        opts.now_ms = 4_102_444_800_000 - 3_600_000;
        opts.streaming = streaming;
        let report = run_import(&parsed.table, &parsed.mapping, opts).unwrap();
        assert_eq!(
            family_counts(&report.families),
            want,
            "{order}, lanes {streaming}"
        );
        let w = report.warnings.join("\n");
        assert!(
            w.contains("family h: 1 of its 5 cells are already past the family's TTL (86400 s) at import time")
                && w.contains("family h: 1 of its 5 cells are versions beyond the family's VERSIONS (2)")
                && w.contains("family d: 3 of its 5 cells are versions beyond the family's VERSIONS (1)")
                && !w.contains("family d: 0"),
            "{w}"
        );
    }
}

/// On the command line, both with --out and --table: the warnings on stderr and the counts in
/// the --report JSON; what a scan of the table then returns is exactly what was not counted.
#[test]
fn cli_warns_about_hidden_cells_in_both_modes() {
    let tmp = tempfile::tempdir().unwrap();
    let schema = tmp.path().join("s.toml");
    std::fs::write(&schema, RETENTION_SCHEMA).unwrap();
    let input = tmp.path().join("in.csv");
    std::fs::write(&input, RETENTION_CSV).unwrap();
    for mode in ["--out", "--table"] {
        let dest = tmp.path().join(&mode[2..]);
        let report = tmp.path().join(format!("{}.json", &mode[2..]));
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"))
            .arg("import")
            .arg("--schema")
            .arg(&schema)
            .arg(&input)
            .arg(mode)
            .arg(&dest)
            .arg("--report")
            .arg(&report)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{stderr}");
        for line in [
            "hfkit: warning: family h: 1 of its 5 cells are already past the family's TTL (86400 s) at import time",
            "hfkit: warning: family h: 1 of its 5 cells are versions beyond the family's VERSIONS (2)",
            "hfkit: warning: family d: 3 of its 5 cells are versions beyond the family's VERSIONS (1)",
        ] {
            assert!(stderr.contains(line), "{mode}: {stderr}");
        }
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(
            r["families"],
            serde_json::json!([
                {"name": "h", "cells": 5, "expired_by_ttl": 1, "beyond_versions": 1},
                {"name": "d", "cells": 5, "expired_by_ttl": 0, "beyond_versions": 3}
            ]),
            "{mode}"
        );
        assert!(r["warnings"].as_array().unwrap().len() >= 3, "{mode}");
    }
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .arg("scan")
        .arg(tmp.path().join("table"))
        .args(["--versions", "10", "--format", "cells"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 10 - 5);
}
