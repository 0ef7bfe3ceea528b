//! Per-cell TTL (`formats/schema.md` §"Per-cell TTL"): a `ttl` field becomes HBase's TTL tag
//! (type 8, i64 ms big-endian); reads skip the cells it expires and a major compaction drops
//! them.

use crate::common::{hfkit, import_with, text, tmpdir};

const SCHEMA: &str = r#"
[table]
name = "sessions"

[[family]]
name = "s"

[rowkey]
spec = "id"

[[column]]
source = "v"
cell = "s:v"
timestamp = "ts"
ttl = "ttl"

[[column]]
source = "w"
cell = "s:w"
timestamp = "ts"
ttl = 3600000
"#;

const T0: i64 = 1_700_000_000_000;

#[test]
fn half_the_cells_expire_by_their_ttl_tag_and_compaction_drops_them() {
    let tmp = tmpdir();
    let schema = tmp.path().join("s.toml");
    std::fs::write(&schema, SCHEMA).unwrap();
    // Even rows live 1 s, odd rows a day; every cell is written at T0.
    let mut csv = String::from("id,ts,v,ttl,w\n");
    for i in 0..40 {
        let ttl = if i % 2 == 0 { 1000 } else { 86_400_000 };
        csv.push_str(&format!("r{i:02},{T0},v{i},{ttl},\n"));
    }
    let input = tmp.path().join("in.csv");
    std::fs::write(&input, &csv).unwrap();
    let table = tmp.path().join("t");
    let t = table.to_str().unwrap();
    let o = import_with(&schema, &input, "--table", &table, &["--quiet"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The tag's bytes, as HBase serializes them: u16 length 9, type 8, i64 ms.
    let o = hfkit(&["scan", t, "--raw", "--format", "cells", "--limit", "2"]);
    let cells = text(&o.stdout);
    let lines: Vec<&str> = cells.lines().collect();
    assert_eq!(lines.len(), 2, "{cells}");
    assert!(
        lines[0].ends_with(&format!("000908{:016x}", 1000i64)),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].ends_with(&format!("000908{:016x}", 86_400_000i64)),
        "{}",
        lines[1]
    );
    let scan = |now: i64| -> Vec<String> {
        let now = now.to_string();
        let o = hfkit(&["scan", t, "--now", &now, "--format", "tsv"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout).lines().map(str::to_string).collect()
    };
    let row = |i: i32| format!("r{i:02}\ts:v\t{T0}\tPut\tv{i}");
    let all: Vec<String> = (0..40).map(row).collect();
    let odd: Vec<String> = (0..40).filter(|i| i % 2 == 1).map(row).collect();
    assert_eq!(scan(T0 + 500), all, "nothing has expired yet");
    let later = T0 + 60_000;
    assert_eq!(scan(later), odd, "the 1 s cells have expired");
    let later_s = later.to_string();
    let o = hfkit(&["compact", t, "--major", "--now-ms", &later_s]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // A raw scan applies no TTL: what it shows is what the compaction kept.
    let o = hfkit(&["scan", t, "--raw", "--format", "tsv"]);
    let raw: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
    assert_eq!(raw, odd);
}

#[test]
fn a_ttl_that_is_not_milliseconds_rejects_its_record() {
    let tmp = tmpdir();
    let schema = tmp.path().join("s.toml");
    std::fs::write(&schema, SCHEMA).unwrap();
    let input = tmp.path().join("in.csv");
    std::fs::write(&input, format!("id,ts,v,ttl,w\na,{T0},x,soon,\n")).unwrap();
    let o = import_with(&schema, &input, "--out", &tmp.path().join("out"), &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("line 2: ttl field 'ttl': 'soon' is not a TTL in milliseconds"),
        "{err}"
    );
}
