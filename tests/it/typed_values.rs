//! Values as the table's schema typed them (issue 42 item 2; formats/table.md §"Typed
//! values"): a table created from a schema keeps its typed columns, and `get` and `scan` show
//! every value type of formats/schema.md decoded (text, TSV, JSON with numbers and booleans),
//! and so does a CSV cell export; the cells format and `--raw-values` as stored.

use crate::common::{self, hfkit, text};

/// (qualifier, type, the input's text = the decoded value, toStringBinary of the stored bytes)
const COLUMNS: &[(&str, &str, &str, &str)] = &[
    ("s", "string", "hello", "hello"),
    (
        "l",
        "int64",
        "-42",
        "\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xD6",
    ),
    ("d", "double", "1.5", "?\\xF8\\x00\\x00\\x00\\x00\\x00\\x00"),
    ("i16", "int16", "300", "\\x01,"),
    ("i32", "int32", "70000", "\\x00\\x01\\x11p"),
    ("f", "float32", "0.25", ">\\x80\\x00\\x00"),
    ("b", "boolean", "true", "\\xFF"),
    ("bd", "bigdecimal", "12.345", "\\x00\\x00\\x00\\x0309"),
    ("h", "hex", "00ff10", "\\x00\\xFF\\x10"),
    ("b64", "base64", "AQID", "\\x01\\x02\\x03"),
];

#[test]
fn get_and_scan_show_values_as_the_schema_typed_them() {
    let tmp = common::tmpdir();
    let mut schema = String::from(
        "[table]\nname = \"typed\"\n[[family]]\nname = \"v\"\n[rowkey]\nspec = \"id\"\n",
    );
    let mut header = String::from("id");
    let mut row = String::from("r1");
    for (q, ty, input, _) in COLUMNS {
        schema.push_str(&format!(
            "[[column]]\nsource = \"{q}\"\ncell = \"v:{q}\"\ntype = \"{ty}\"\n"
        ));
        header.push_str(&format!(",{q}"));
        row.push_str(&format!(",{input}"));
    }
    let s = tmp.path().join("s.toml");
    std::fs::write(&s, schema).unwrap();
    let input = tmp.path().join("in.csv");
    std::fs::write(&input, format!("{header}\n{row}\n")).unwrap();
    let t = tmp.path().join("t");
    let ts = t.to_str().unwrap();
    let o = common::import_with(&s, &input, "--table", &t, &["--timestamp", "1000"]);
    assert!(o.status.success(), "{}", text(&o.stderr));

    let run = |args: &[&str]| {
        let o = hfkit(args);
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
        text(&o.stdout)
    };
    // A text line of column v:q (get: ` v:q   timestamp=...`; scan: `column=v:q, ...`).
    let value_of = |out: &str, q: &str| -> String {
        let (get, scan) = (format!(" v:{q} "), format!("column=v:{q},"));
        let line = out
            .lines()
            .find(|l| l.contains(&get) || l.contains(&scan))
            .unwrap_or_else(|| panic!("no v:{q} in {out}"));
        line.rsplit_once(", value=").unwrap().1.to_string()
    };
    for (cmd, raw) in [
        ("get", false),
        ("scan", false),
        ("get", true),
        ("scan", true),
    ] {
        let mut args = vec![cmd, ts];
        if cmd == "get" {
            args.push("r1");
        }
        if raw {
            args.push("--raw-values");
        }
        // Text, as the HBase shell prints a cell.
        let out = run(&args);
        // TSV.
        let mut tsv_args = args.clone();
        tsv_args.extend(["--format", "tsv"]);
        let tsv = run(&tsv_args);
        // JSON.
        let mut json_args = args.clone();
        json_args.extend(["--format", "json"]);
        let json: serde_json::Value = serde_json::from_str(
            run(&json_args)
                .lines()
                .find(|l| l.starts_with('{'))
                .unwrap(),
        )
        .unwrap();
        for (q, ty, input, stored) in COLUMNS {
            let want = if raw { *stored } else { *input };
            assert_eq!(value_of(&out, q), want, "{args:?} {q}");
            let tsv_line = tsv
                .lines()
                .find(|l| l.contains(&format!("\tv:{q}\t")))
                .unwrap();
            assert_eq!(
                tsv_line.rsplit('\t').next().unwrap(),
                want,
                "{args:?} tsv {q}"
            );
            let cell = json["cells"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["qualifier"] == *q)
                .unwrap();
            let v = &cell["value"];
            match (raw, *ty) {
                (false, "int64" | "int16" | "int32") => {
                    assert_eq!(v.as_i64(), Some(input.parse().unwrap()), "{q}: {v}")
                }
                (false, "double" | "float32") => {
                    assert_eq!(v.as_f64(), Some(input.parse().unwrap()), "{q}: {v}")
                }
                (false, "boolean") => assert_eq!(v.as_bool(), Some(true), "{q}: {v}"),
                _ => assert_eq!(v.as_str(), Some(want), "{args:?} json {q}: {v}"),
            }
        }
    }
    // The cells format is the stored bytes in hex, typed or not.
    let cells = run(&["get", ts, "r1", "--format", "cells"]);
    assert!(
        cells
            .lines()
            .any(|l| l.contains(" 6c ") || l.contains("ffffffffffffffd6")),
        "{cells}"
    );
    // A CSV cell export: the value field decoded, or with --raw-values as stored (read back
    // with the csv crate, as a script would); Parquet's value column is the stored bytes.
    for raw in [false, true] {
        let csv = tmp.path().join(format!("cells-{raw}.csv"));
        let mut args = vec![
            "export",
            ts,
            "--format",
            "csv",
            "--to",
            csv.to_str().unwrap(),
        ];
        if raw {
            args.push("--raw-values");
        }
        run(&args);
        let mut r = csv::Reader::from_path(&csv).unwrap();
        let records: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(records.len(), COLUMNS.len());
        for (q, _, input, stored) in COLUMNS {
            let rec = records.iter().find(|r| &r[2] == *q).unwrap();
            assert_eq!(
                &rec[5],
                if raw { *stored } else { *input },
                "export raw={raw} {q}"
            );
        }
    }
    // With --rows the values are the schema's fields already: --raw-values is refused.
    let rows = tmp.path().join("rows.csv");
    let mut args = vec![
        "export",
        ts,
        "--format",
        "csv",
        "--to",
        rows.to_str().unwrap(),
    ];
    args.extend(["--rows", "--schema", s.to_str().unwrap()]);
    run(&args);
    args.push("--raw-values");
    assert_eq!(
        hfkit(&args).status.code(),
        Some(2),
        "--raw-values is the cell export's"
    );
    // The table says which columns are typed.
    let d = run(&["table", "describe", ts]);
    assert!(d.contains("v:l int64") && d.contains("v:b64 base64"), "{d}");
    assert!(!d.contains("v:s string"), "{d}");
    // --json: the typed columns, each key as hex and as text, each file's path (which `hfile
    // info` opens).
    let j: serde_json::Value =
        serde_json::from_str(&run(&["table", "describe", ts, "--json"])).unwrap();
    assert_eq!(j["columns"]["v:l"], "int64");
    let f = &j["files"][0];
    assert_eq!(
        (&f["first_row"], &f["first_row_text"]),
        (&"7231".into(), &"r1".into())
    );
    assert_eq!(j["regions"][0]["start_key_text"], "");
    let path = f["path"].as_str().unwrap();
    assert!(run(&["hfile", "info", path]).contains("entries"), "{path}");
}

/// Row keys through the rowkey spec's inverse (formats/rowkey.md §"Inverting a spec"): a table
/// created from a schema keeps its spec, and `get`/`scan --format json` give each row's
/// fields back (`row_fields`), for every seed design whose spec inverts from the key alone
/// (salted and reversed-timestamp keys included); `--raw-values` leaves them out.
#[test]
fn json_reads_give_row_keys_back_as_their_fields() {
    const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");
    let tmp = common::tmpdir();
    for (design, input, field) in [
        ("users", "users.csv", "user_id"),
        ("events", "events.csv", "event_id"),
        ("orders", "orders.csv", "order_id"),
        ("sensors", "sensors.tsv", "device"),
    ] {
        let t = tmp.path().join(design);
        let mut extra = vec!["--timestamp", "1000"];
        if input.ends_with(".tsv") {
            extra.extend(["--format", "tsv"]);
        }
        let o = common::import_with(
            std::path::Path::new(&format!("{SEEDS}/{design}.toml")),
            std::path::Path::new(&format!("{SEEDS}/{input}")),
            "--table",
            &t,
            &extra,
        );
        assert!(o.status.success(), "{design}: {}", text(&o.stderr));
        let ts = t.to_str().unwrap();
        let o = hfkit(&["scan", ts, "--limit", "3", "--format", "json"]);
        let rows: Vec<serde_json::Value> = text(&o.stdout)
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows.len(), 3, "{design}");
        for r in &rows {
            let fields = r["row_fields"]
                .as_object()
                .unwrap_or_else(|| panic!("{design}: {r}"));
            let value = fields[field].as_str().unwrap();
            assert!(!value.is_empty(), "{design}: {r}");
            // The row's key holds the field's text (padded, salted or reversed around it).
            let row = r["row"].as_str().unwrap();
            let digits = value.trim_start_matches('0');
            let reversed: String = digits.chars().rev().collect();
            assert!(
                row.contains(digits) || row.contains(&reversed),
                "{design}: {row} for {value}"
            );
        }
        let o = hfkit(&[
            "scan",
            ts,
            "--limit",
            "1",
            "--format",
            "json",
            "--raw-values",
        ]);
        assert!(!text(&o.stdout).contains("row_fields"), "{design}");
    }
    // users: reverse(pad(user_id, 10)); the get of user 77.
    let o = hfkit(&[
        "get",
        tmp.path().join("users").to_str().unwrap(),
        "7700000000",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).unwrap();
    assert_eq!(v["row_fields"]["user_id"], "77");
}
