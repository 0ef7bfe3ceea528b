//! Idempotent reruns (`formats/import.md` §"Reruns"): `import --table` records the import's
//! identity in the manifest; the same import again is refused (exit code 3) and leaves the
//! table exactly as it was, unless `--force`; `--job-id` names the import instead.

use std::path::Path;

use crate::common::{files_under, hfkit, import_with, text, tmpdir};

const SCHEMA: &str = r#"
[table]
name = "daily"

[[family]]
name = "d"

[rowkey]
spec = "id"

[[column]]
source = "v"
cell = "d:v"
"#;

/// Every file of a directory tree with its bytes, sorted (the table's exact state).
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_under(dir)
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            (rel, std::fs::read(&p).unwrap())
        })
        .collect()
}

fn import(schema: &Path, input: &Path, table: &Path, extra: &[&str]) -> std::process::Output {
    import_with(schema, input, "--table", table, extra)
}

#[test]
fn the_same_import_twice_is_refused_and_changes_nothing() {
    let tmp = tmpdir();
    let schema = tmp.path().join("s.toml");
    std::fs::write(&schema, SCHEMA).unwrap();
    let input = tmp.path().join("day1.csv");
    std::fs::write(&input, "id,v\na,1\nb,2\n").unwrap();
    let table = tmp.path().join("t");
    let report = tmp.path().join("r.json");
    let r = report.to_str().unwrap();
    let o = import(&schema, &input, &table, &["--report", r]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("import id sha256:"),
        "{}",
        text(&o.stdout)
    );
    let first: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let id = first["import_id"].as_str().unwrap().to_string();
    assert!(id.starts_with("sha256:"), "{id}");
    assert_eq!(first["rerun"], "new");
    let before = tree(&table);

    // The same import: refused, with the version it was attached as; the table is unchanged.
    let o = import(&schema, &input, &table, &["--report", r]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!(
            "this import (id {id}) was already attached as manifest version 1: nothing done (--force imports it again)"
        )),
        "{err}"
    );
    assert_eq!(tree(&table), before);
    let refused: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(
        refused,
        serde_json::json!({"import_id": id, "refused": {"attached_as_manifest_version": 1}})
    );
    // `--report -`: the same report on standard output, and only it there.
    let o = import(&schema, &input, &table, &["--report", "-"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let on_stdout: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(on_stdout, refused);
    assert!(!table.parent().unwrap().join("-").exists());

    // Another input (same name, other content) is another import.
    std::fs::write(&input, "id,v\na,1\nb,3\n").unwrap();
    let o = import(&schema, &input, &table, &["--quiet"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // Back to day 1's content, forced: attached again, and the report says it was forced.
    std::fs::write(&input, "id,v\na,1\nb,2\n").unwrap();
    let o = import(&schema, &input, &table, &["--force", "--report", r]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("--force: it was attached as manifest version 1 already"));
    // A successful import with `--report -`: the report alone on standard output, the
    // summary on standard error.
    std::fs::write(&input, "id,v\na,1\nb,4\n").unwrap();
    let o = import(&schema, &input, &table, &["--report", "-"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rerun"], "new");
    assert!(
        text(&o.stderr).contains("attached to"),
        "{}",
        text(&o.stderr)
    );
    let forced: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(forced["import_id"], id.as_str());
    assert_eq!(forced["rerun"]["forced"]["earlier_manifest_version"], 1);
    assert_eq!(forced["attached"]["manifest_version"], 3);
}

#[test]
fn a_job_id_names_the_import() {
    let tmp = tmpdir();
    let schema = tmp.path().join("s.toml");
    std::fs::write(&schema, SCHEMA).unwrap();
    let input = tmp.path().join("in.csv");
    std::fs::write(&input, "id,v\na,1\n").unwrap();
    let table = tmp.path().join("t");
    let job = ["--job-id", "orders-2026-12-04", "--quiet"];
    let o = import(&schema, &input, &table, &job);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let before = tree(&table);
    // Other content under the same job id: the same import as far as the table knows.
    std::fs::write(&input, "id,v\na,2\n").unwrap();
    let o = import(&schema, &input, &table, &job);
    assert_eq!(o.status.code(), Some(3));
    assert!(text(&o.stderr).contains("(id job:orders-2026-12-04) was already attached"));
    assert_eq!(tree(&table), before);
    // --force needs --table (an --out import is checked when it is attached).
    let o = import_with(
        &schema,
        &input,
        "--out",
        &tmp.path().join("o"),
        &["--force"],
    );
    assert_eq!(o.status.code(), Some(2));
}

/// `import --out DIR --job-id ID` leaves the identity with the files; `hfkit attach` records
/// it, refuses the same directory (or the same job imported with --table) again with exit
/// code 3 and the table unchanged, unless `--force`.
#[test]
fn attach_records_the_job_of_an_out_import() {
    let tmp = tmpdir();
    let schema = tmp.path().join("s.toml");
    std::fs::write(&schema, SCHEMA).unwrap();
    let input = tmp.path().join("in.csv");
    std::fs::write(&input, "id,v\na,1\n").unwrap();
    let out = tmp.path().join("bulk");
    let job = ["--job-id", "nightly-7", "--quiet"];
    let o = import_with(&schema, &input, "--out", &out, &job);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(out.join("_hfkit-import-id")).unwrap(),
        "job:nightly-7\n"
    );
    let table = tmp.path().join("t");
    let t = table.to_str().unwrap();
    let o = hfkit(&["table", "create", t, "--schema", schema.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = hfkit(&["attach", t, out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("import id job:nightly-7 recorded"));
    let before = tree(&table);
    let o = hfkit(&["attach", t, out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("(id job:nightly-7) was already attached as manifest version 1")
    );
    // The same job through import --table: refused too, before anything is read.
    let o = import(&schema, &input, &table, &job);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert_eq!(tree(&table), before);
    let o = hfkit(&["attach", t, out.to_str().unwrap(), "--force"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // Without --job-id an --out import leaves the files alone, as before.
    let plain = tmp.path().join("plain");
    let o = import_with(&schema, &input, "--out", &plain, &["--quiet"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!plain.join("_hfkit-import-id").exists());
}
