//! Tables made from schemas (`hfkit table create`, `hfkit import --table` into a new table):
//! sampled split points, every schema attribute kept in the manifest and shown by `table
//! describe`, and the whole schema checked before anything is created (`formats/schema.md`).

use crate::common;

use std::path::{Path, PathBuf};

use common::{hfkit, text};
use hfkit::table::directory::Table;
use hfkit::table::manifest::Manifest;
use hfkit::table::to_string_binary;

fn ok(args: &[&str]) -> String {
    let o = hfkit(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    text(&o.stdout)
}

/// Runs a command that must fail with exit code 1; returns its stderr.
fn fails(args: &[&str]) -> String {
    let o = hfkit(args);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o.stdout));
    text(&o.stderr)
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `hfkit import --schema S INPUT --table T --quiet`.
fn import_into<'a>(schema: &'a Path, input: &'a Path, table: &'a Path) -> [&'a str; 7] {
    [
        "import",
        "--schema",
        p(schema),
        p(input),
        "--table",
        p(table),
        "--quiet",
    ]
}

/// `hfkit import --schema S INPUT --out DIR/bulk/users --report ...`: the report (JSON).
fn import_out(dir: &Path, schema: &Path, input: &Path) -> serde_json::Value {
    let out = dir.join("bulk").join("users");
    let report = dir.join("report.json");
    ok(&[
        "import",
        "--schema",
        p(schema),
        p(input),
        "--out",
        p(&out),
        "--report",
        p(&report),
        "--quiet",
    ]);
    serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap()
}

fn manifest(dir: &Path) -> Manifest {
    Table::open(dir).unwrap().manifest().unwrap()
}

fn split_points(dir: &Path) -> Vec<String> {
    manifest(dir)
        .split_keys()
        .iter()
        .map(|k| to_string_binary(k))
        .collect()
}

/// Split points of a `--report` region list (every region's start key but the first).
fn report_split_points(regions: &serde_json::Value) -> Vec<String> {
    regions.as_array().unwrap()[1..]
        .iter()
        .map(|r| r["start_key"].as_str().unwrap().to_string())
        .collect()
}

/// Users with skewed, natural ids (far from uniform, so sampling decides the split points),
/// and an e-mail for an index.
fn write_input(dir: &Path) -> PathBuf {
    let mut csv = String::from("id,email,score\n");
    for i in 0..3000u64 {
        let id = if i % 3 == 0 { i * 7 } else { 100_000 + i * i };
        csv.push_str(&format!("{id},u{}@example.com,{}\n", i % 1000, i % 97));
    }
    let path = dir.join("users.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

const SAMPLED: &str = r#"
[table]
name = "app:users"

[[family]]
name = "d"

[splits]
sample = 6

[rowkey]
spec = 'pad(id, 12)'

[[column]]
source = "score"
cell = "d:score"
type = "int64"
timestamp = 1700000000000

[[index]]
name = "app:users_by_email"
rowkey = 'email + "_" + id'
cell = "r:k"
timestamp = 1700000000000

[index.splits]
sample = 3
"#;

#[test]
fn import_into_a_new_table_takes_the_split_points_an_out_import_samples() {
    let tmp = tempfile::tempdir().unwrap();
    let input = write_input(tmp.path());
    let schema = tmp.path().join("s.toml");
    std::fs::write(&schema, SAMPLED).unwrap();

    let r = import_out(tmp.path(), &schema, &input);
    let main_points = report_split_points(&r["regions"]);
    let index_points = report_split_points(&r["indexes"][0]["regions"]);
    assert_eq!(main_points.len(), 5, "{main_points:?}");
    assert_eq!(index_points.len(), 2, "{index_points:?}");

    let table = tmp.path().join("tables").join("users");
    ok(&import_into(&schema, &input, &table));
    assert_eq!(split_points(&table), main_points);
    let index = table.join("indexes").join("users_by_email");
    assert_eq!(split_points(&index), index_points);
    // Every record is there, each file within its region.
    for (dir, cells) in [(&table, 3000), (&index, 3000)] {
        let check = ok(&["table", "check", p(dir)]);
        assert!(check.contains(&format!("{cells} cells")), "{check}");
    }

    // The table exists now: its regions are fixed, and a sample is not taken again.
    let o = hfkit(&[&import_into(&schema, &input, &table)[..], &["--force"]].concat());
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("exists with 6 regions, which an import does not change: its [splits] sample = 6 is not used"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(split_points(&table), main_points);
}

#[test]
fn table_create_samples_its_input_or_says_how_to_split() {
    let tmp = tempfile::tempdir().unwrap();
    let input = write_input(tmp.path());
    let schema = tmp.path().join("s.toml");
    std::fs::write(&schema, SAMPLED).unwrap();

    let table = tmp.path().join("t");
    let e = fails(&["table", "create", p(&table), "--schema", p(&schema)]);
    assert!(
        e.contains("[splits] sample = 6")
            && e.contains("give --input FILE")
            && e.contains("hfkit import --table"),
        "{e}"
    );
    assert!(!table.exists());

    let r = import_out(tmp.path(), &schema, &input);
    let said = ok(&[
        "table",
        "create",
        p(&table),
        "--schema",
        p(&schema),
        "--input",
        p(&input),
    ]);
    assert!(said.contains("6 regions"), "{said}");
    assert_eq!(split_points(&table), report_split_points(&r["regions"]));
}

const ATTRIBUTES: &str = r#"
[table]
name = "ns:orders"
MAX_FILESIZE = "10GB"
DURABILITY = "ASYNC_WAL"

[table.METADATA]
owner = "payments"

[table.CONFIGURATION]
"hbase.hstore.blockingStoreFiles" = "20"

[[family]]
name = "d"
VERSIONS = 3
IN_MEMORY = true
BLOCKCACHE = false
BLOOMFILTER = "ROWPREFIX_FIXED_LENGTH"

[family.METADATA]
note = "hot"

[family.CONFIGURATION]
"RowPrefixBloomFilter.prefix_length" = "3"

[rowkey]
spec = 'pad(id, 12)'

[[column]]
source = "score"
cell = "d:score"
"#;

/// What `table describe` must show of [`ATTRIBUTES`] (before and after compaction and alter).
const SHOWN: &[&str] = &[
    "ns:orders, {TABLE_ATTRIBUTES => {DURABILITY => 'ASYNC_WAL', MAX_FILESIZE => '10737418240', METADATA => {'owner' => 'payments'}, CONFIGURATION => {'hbase.hstore.blockingStoreFiles' => '20'}}}",
    "IN_MEMORY => 'true'",
    "BLOCKCACHE => 'false'",
    "METADATA => {'note' => 'hot'}",
    "CONFIGURATION => {'RowPrefixBloomFilter.prefix_length' => '3'}}",
];

#[test]
fn schema_attributes_survive_create_describe_reload_compaction_and_alter() {
    let tmp = tempfile::tempdir().unwrap();
    let input = write_input(tmp.path());
    let schema = tmp.path().join("s.toml");
    std::fs::write(&schema, ATTRIBUTES).unwrap();
    let table = tmp.path().join("t");
    ok(&["table", "create", p(&table), "--schema", p(&schema)]);
    let shown = |what: &str| {
        let d = ok(&["table", "describe", p(&table)]);
        for s in SHOWN {
            assert!(d.contains(s), "{what}: {s} not in\n{d}");
        }
        d
    };
    shown("created");
    let created = manifest(&table);
    assert_eq!(
        created.table_attributes.attributes["MAX_FILESIZE"],
        "10737418240"
    );
    assert_eq!(created.families[0].other.metadata["note"], "hot");

    // Two imports (two files per store), a major compaction, an alter: a new manifest each
    // time, attributes unchanged.
    ok(&import_into(&schema, &input, &table));
    let again = import_into(&schema, &input, &table);
    ok(&[&again[..], &["--force"]].concat());
    ok(&["compact", p(&table), "--major"]);
    shown("compacted");
    let altered = ok(&[
        "table",
        "alter",
        p(&table),
        "--family",
        "d",
        "--versions",
        "5",
    ]);
    assert!(
        altered.contains("IN_MEMORY => 'true'") && altered.contains("VERSIONS => '5'"),
        "{altered}"
    );
    let d = shown("altered");
    assert!(d.contains("VERSIONS => '5'"), "{d}");
    let after = manifest(&table);
    assert!(after.version > created.version + 3, "{}", after.version);
    assert_eq!(after.table_attributes, created.table_attributes);
    let (mut f, g) = (after.families[0].clone(), &created.families[0]);
    assert_eq!(f.versions, 5);
    f.versions = g.versions;
    assert_eq!(&f, g);

    // The shell form keeps the same attributes.
    let shell = tmp.path().join("shell");
    ok(&[
        "table",
        "create",
        p(&shell),
        "--hbase-shell",
        "create 'ns:orders', {NAME => 'd', VERSIONS => 3, IN_MEMORY => true, BLOCKCACHE => false, \
         BLOOMFILTER => 'ROWPREFIX_FIXED_LENGTH', METADATA => {'note' => 'hot'}, \
         CONFIGURATION => {'RowPrefixBloomFilter.prefix_length' => '3'}}, \
         {MAX_FILESIZE => '10GB', DURABILITY => 'ASYNC_WAL', METADATA => {'owner' => 'payments'}, \
         CONFIGURATION => {'hbase.hstore.blockingStoreFiles' => '20'}}",
    ]);
    let s = manifest(&shell);
    assert_eq!(
        (&s.table_attributes, &s.families),
        (&created.table_attributes, &created.families)
    );
}

/// A schema with one bad line (line 11 of the file) and the message it must give.
fn bad_schemas() -> Vec<(&'static str, String, &'static str)> {
    let head = "[table]\nname = \"t\"\n\n[[family]]\nname = \"d\"\n\n";
    vec![
        (
            "malformed spec",
            format!("{head}[rowkey]\n\n\n\nspec = 'pad(id, 12'\n[[column]]\nsource = \"score\"\ncell = \"d:s\"\n"),
            "s.toml:11:8: [rowkey] spec: rowkey spec, column",
        ),
        (
            "unknown function",
            format!("{head}[rowkey]\n\n\n\nspec = 'sault(4, id)'\n[[column]]\nsource = \"score\"\ncell = \"d:s\"\n"),
            "s.toml:11:8: [rowkey] spec: rowkey spec, column 1: unknown function 'sault'",
        ),
        (
            "bad rowkey timestamp format",
            format!("{head}[rowkey]\nspec = 'bucket(id, day)'\n\n\ntimestamp_format = '%Q'\n[[column]]\nsource = \"score\"\ncell = \"d:s\"\n"),
            "s.toml:11:20: [rowkey] timestamp format '%Q'",
        ),
        (
            "bad column timestamp format",
            format!("{head}[rowkey]\nspec = 'id'\n[[column]]\nsource = \"score\"\ncell = \"d:s\"\ntimestamp = \"id\"\ntimestamp_format = \"%d/%m\"\n"),
            "s.toml:9:1: column 'score': timestamp format '%d/%m': does not determine a date",
        ),
        (
            "bad index rowkey",
            format!("{head}[rowkey]\nspec = 'id'\n[[column]]\nsource = \"score\"\ncell = \"d:s\"\n[[index]]\nname = \"ix\"\nrowkey = 'email +'\ncell = \"r:k\"\n"),
            "s.toml:14:10: index ix: rowkey: rowkey spec, column",
        ),
    ]
}

#[test]
fn table_create_checks_the_whole_schema_and_creates_nothing_for_a_bad_one() {
    let tmp = tempfile::tempdir().unwrap();
    let input = write_input(tmp.path());
    let schema = tmp.path().join("s.toml");
    for (what, toml, want) in bad_schemas() {
        std::fs::write(&schema, &toml).unwrap();
        let table = tmp.path().join("t");
        let e = fails(&["table", "create", p(&table), "--schema", p(&schema)]);
        assert!(e.contains(want), "{what}: {e}");
        assert!(!table.exists(), "{what}");
        // An import into a new table checks the same before creating it.
        let e = fails(&import_into(&schema, &input, &table));
        assert!(e.contains(want), "{what}: {e}");
        assert!(!table.exists(), "{what}");
    }
}

#[test]
fn fields_the_input_lacks_are_refused_before_a_table_is_made() {
    let tmp = tempfile::tempdir().unwrap();
    let input = write_input(tmp.path());
    let schema = tmp.path().join("s.toml");
    let head = "[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n";
    let (csv, s) = (input.display(), schema.display());
    for (what, toml, want) in [
        (
            "rowkey field",
            format!("{head}[rowkey]\nspec = 'pad(user_id, 9)'\n[[column]]\nsource = \"score\"\ncell = \"d:s\"\n"),
            format!(
                "{csv}: {s}:6:8: [rowkey] spec: rowkey spec uses field 'user_id', which the input \
                 does not have (fields: id, email, score)"
            ),
        ),
        (
            "column source",
            format!("{head}[rowkey]\nspec = 'id'\n[[column]]\nsource = \"points\"\ncell = \"d:s\"\n"),
            format!(
                "{csv}: missing column 'points' (the file has: id, email, score); {s}:7:1: \
                 column 'points' reads it"
            ),
        ),
        (
            "timestamp field",
            format!("{head}[rowkey]\nspec = 'id'\n[[column]]\nsource = \"score\"\ncell = \"d:s\"\ntimestamp = \"updated\"\n"),
            format!(
                "{csv}: missing column 'updated' (the file has: id, email, score); {s}:7:1: \
                 column 'score' reads it"
            ),
        ),
    ] {
        std::fs::write(&schema, &toml).unwrap();
        let table = tmp.path().join("t");
        // Without an input, the fields cannot be known: the table is made.
        ok(&["table", "create", p(&table), "--schema", p(&schema)]);
        std::fs::remove_dir_all(&table).unwrap();
        let e = fails(&["table", "create", p(&table), "--schema", p(&schema), "--input", p(&input)]);
        assert!(e.contains(&want), "{what}: {e}");
        assert!(!table.exists(), "{what}");
        let e = fails(&import_into(&schema, &input, &table));
        assert!(e.contains(&want), "{what}: {e}");
        assert!(!table.exists(), "{what}");
    }
}

#[test]
fn a_failed_import_into_a_new_table_leaves_no_table() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.csv");
    std::fs::write(&input, "id,score\n1,5\n1234,6\n").unwrap();
    let schema = tmp.path().join("s.toml");
    std::fs::write(
        &schema,
        "[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[rowkey]\nspec = 'pad(id, 3)'\n[[column]]\nsource = \"score\"\ncell = \"d:s\"\n",
    )
    .unwrap();
    let table = tmp.path().join("t");
    let e = fails(&import_into(&schema, &input, &table));
    assert!(e.contains("line 3") && e.contains("pad"), "{e}");
    assert!(!table.exists());
    // An empty directory given as the table stays an empty directory.
    std::fs::create_dir(&table).unwrap();
    fails(&import_into(&schema, &input, &table));
    assert_eq!(std::fs::read_dir(&table).unwrap().count(), 0);
}
