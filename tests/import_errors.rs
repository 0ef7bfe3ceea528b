//! Import failures: one test per error class. Each asserts the message (file, line, column,
//! reason) and that nothing was left behind.

use std::path::Path;
use std::process::{Command, Output};

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");
const HEADER: &str = "user_id,name,email,city,score,last_login\n";
const GOOD: &str = "1,ann,a@x,Oslo,5,1700000000000\n2,bob,b@x,Lagos,6,1700000000001\n";

fn hfkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs an import of `csv` with `schema` (default: the users seed schema) into a fresh
/// directory; asserts failure with every `expect` in the message and nothing left behind.
fn fails(csv: &str, schema: Option<&str>, expect: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.csv");
    std::fs::write(&input, csv).unwrap();
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
    assert!(
        left == ["in.csv"] || left == ["in.csv", "schema.toml"],
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
        format!("{HEADER}{GOOD}3,carl,c@x,Oslo,lots,1\n4,dan,d@x,Oslo,9,1700000000003\n"),
    )
    .unwrap();
    let bad = tmp.path().join("bad.tsv");
    let out = tmp.path().join("out");
    let report = tmp.path().join("r.json");
    let args = |max: &str| {
        vec![
            "import".to_string(),
            "--schema".into(),
            format!("{SEEDS}/users.toml"),
            input.display().to_string(),
            "--out".into(),
            out.display().to_string(),
            "--bad-rows".into(),
            bad.display().to_string(),
            "--max-bad-rows".into(),
            max.into(),
            "--report".into(),
            report.display().to_string(),
        ]
    };
    let o = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(args("0"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("more than --max-bad-rows 0"));
    assert!(!out.exists());
    let o = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(args("5"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rejected = std::fs::read_to_string(&bad).unwrap();
    assert!(
        rejected.contains("line 4") && rejected.contains("'lots'"),
        "{rejected}"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["rows_read"], 4);
    assert_eq!(r["rows_rejected"], 1);
    assert_eq!(r["cells"], 3 * 5);
}
