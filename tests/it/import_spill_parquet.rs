//! Import equivalences: a run under a tiny memory budget (spilling many runs) writes exactly the
//! cells of an unconstrained run, and the same data from CSV and from Parquet gives the same
//! cells.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use hfkit::format::reader::HFileReader;
use hfkit::format::text::cell_line;

const SCHEMA: &str = r#"
[table]
name = "t"
[[family]]
name = "d"
COMPRESSION = "SNAPPY"
[[family]]
name = "m"
DATA_BLOCK_ENCODING = "FAST_DIFF"
[splits]
algorithm = "HexStringSplit"
regions = 4
[rowkey]
spec = 'hash_prefix(8, id) + "_" + pad(id, 8)'
[[column]]
source = "name"
cell = "d:name"
timestamp = 5
[[column]]
source = "qty"
cell = "d:qty"
type = "int64"
timestamp = "ts"
[[column]]
source = "note"
cell = "m:note"
timestamp = 5
"#;

fn rows(n: i64) -> Vec<(i64, String, i64, i64, String)> {
    (0..n)
        .map(|i| {
            // Every 7th id repeats an earlier one: a duplicate cell, the later record wins.
            let id = if i % 7 == 6 { i / 2 } else { i };
            (
                id,
                format!("name-{i}"),
                i % 1000,
                1_700_000_000_000 + (id % 3),
                if i % 5 == 0 {
                    String::new()
                } else {
                    format!("note {i}")
                },
            )
        })
        .collect()
}

/// Imports `input` with a memory budget and a thread count; its cells (sorted) and report.
/// With two threads merging and writing overlap, and a run that spills spills in the
/// background; with one both happen inline: the tests compare both paths.
fn import(
    dir: &Path,
    input: &Path,
    memory: &str,
    threads: &str,
) -> (Vec<String>, serde_json::Value) {
    let schema = dir.join("s.toml");
    std::fs::write(&schema, SCHEMA).unwrap();
    let out = dir.join(format!(
        "out-{}-{memory}-{threads}",
        input.extension().unwrap().to_string_lossy()
    ));
    let report = out.with_extension("json");
    let o = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args([
            "import",
            "--schema",
            schema.to_str().unwrap(),
            input.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--memory",
            memory,
            "--threads",
            threads,
            "--quiet",
            "--report",
            report.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut cells = Vec::new();
    for fam in ["d", "m"] {
        for e in std::fs::read_dir(out.join(fam)).unwrap() {
            let r = HFileReader::open(e.unwrap().path()).unwrap();
            let mut s = r.scanner().unwrap();
            while let Some(c) = s.next().unwrap() {
                cells.push(cell_line(&c, false));
            }
        }
    }
    cells.sort();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    (cells, report)
}

#[test]
fn spilling_and_parquet_give_the_same_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let data = rows(40_000);
    let csv = tmp.path().join("in.csv");
    let mut text = String::from("id,name,qty,ts,note\n");
    for (id, name, qty, ts, note) in &data {
        text.push_str(&format!("{id},{name},{qty},{ts},{note}\n"));
    }
    std::fs::write(&csv, text).unwrap();

    let (unconstrained, r1) = import(tmp.path(), &csv, "1GB", "2");
    let (spilled, r2) = import(tmp.path(), &csv, "256KB", "1");
    let (spilled_in_background, r3) = import(tmp.path(), &csv, "256KB", "2");
    assert_eq!(r1["spilled_runs"], 0);
    assert!(r2["spilled_runs"].as_u64().unwrap() > 10, "{r2}");
    assert!(r1["duplicate_cells"].as_u64().unwrap() > 0);
    assert!(r3["spilled_runs"].as_u64().unwrap() > 10, "{r3}");
    assert_eq!(r1["duplicate_cells"], r2["duplicate_cells"]);
    assert_eq!(r1["duplicate_cells"], r3["duplicate_cells"]);
    assert_eq!(unconstrained.len() as u64, r1["cells"].as_u64().unwrap());
    assert_eq!(
        spilled, unconstrained,
        "spilled run differs from the unconstrained run"
    );
    assert_eq!(
        spilled_in_background, unconstrained,
        "run spilled in the background differs from the unconstrained run"
    );

    // The same records as Parquet (nullable note: empty CSV fields are nulls here).
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, false),
        Field::new("qty", DataType::Int64, false),
        Field::new("ts", DataType::Int64, false),
        Field::new("note", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(
                data.iter().map(|r| r.0).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                data.iter().map(|r| r.1.clone()).collect::<Vec<_>>(),
            )),
            Arc::new(Int64Array::from(
                data.iter().map(|r| r.2).collect::<Vec<_>>(),
            )),
            Arc::new(Int64Array::from(
                data.iter().map(|r| r.3).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                data.iter()
                    .map(|r| (!r.4.is_empty()).then(|| r.4.clone()))
                    .collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap();
    let pq = tmp.path().join("in.parquet");
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(7_000))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&pq).unwrap(),
        schema,
        Some(props),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let (from_parquet, r4) = import(tmp.path(), &pq, "1GB", "2");
    assert_eq!(r4["rows_read"], 40_000);
    assert_eq!(
        from_parquet, unconstrained,
        "Parquet and CSV imports differ"
    );
}
